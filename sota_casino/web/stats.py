"""The player's own statistics page: results against the odds, and the balance over time."""

from __future__ import annotations

from fractions import Fraction
from functools import partial
from typing import Final

from flask import Blueprint
from flask import g
from flask import render_template
from flask.typing import ResponseReturnValue
from markupsafe import Markup

from ..core.marks import N_
from ..core.money import CURRENCIES
from ..db import get_session
from ..services import stats
from .charts import Series
from .charts import both_sizes
from .charts import line_chart
from .format import whole_number
from .i18n import gettext
from .security import player_page

bp = Blueprint("stats", __name__, url_prefix="/stats")

#: Balances are drawn in whole units of each currency (chips are kept in hundredths).
MINOR_UNITS: Final = {"chips": 100, "sweets": 1}
CHART_TITLES: Final = {
    "chips": N_("Your chips balance over time"),
    "sweets": N_("Your sweets balance over time"),
}
SERIES_NAMES: Final = {"chips": N_("chips balance"), "sweets": N_("sweets balance")}


def _point_labels(points: list[stats.BalancePoint]) -> list[str]:
    """Label each money move by its UTC time: to the second within one day, else day and
    minute. Moves in the same second (or minute) share the label: the chart draws each as a
    point of its own and labels the first."""
    one_day = points[0].time[:10] == points[-1].time[:10]
    return [p.time[11:19] if one_day else f"{p.time[5:10]} {p.time[11:16]}" for p in points]


def balance_chart(points: list[stats.BalancePoint], currency: str) -> Markup | None:
    """The SVG chart of one currency's balance after each money move (None without moves)."""
    if not points:
        return None
    unit = MINOR_UNITS[currency]
    values = [Fraction(point.balance, unit) for point in points]
    name = gettext(SERIES_NAMES[currency])
    series = Series(name, tuple(zip(_point_labels(points), values, strict=True)))
    title = gettext(CHART_TITLES[currency])
    return both_sizes(partial(line_chart, [series], title=title, value_format=whole_number))


@bp.get("")
@player_page
def index() -> ResponseReturnValue:
    figures = stats.player_stats(get_session(), g.user.id)
    history = figures.balance_history
    charts = {
        currency: balance_chart(getattr(history, currency), currency) for currency in CURRENCIES
    }
    return render_template("stats/index.html", stats=figures, charts=charts)
