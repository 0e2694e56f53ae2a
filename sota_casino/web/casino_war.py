"""The Casino War table (pages): bet, see the cards, decide a tie.

With JavaScript the page plays through the JSON API without reloading (static/js/casino_war.js);
these views are the same table for browsers without it.
"""

from __future__ import annotations

import json
import secrets
from typing import Any
from typing import Final

from flask import Blueprint
from flask import current_app
from flask import g
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for
from flask.typing import ResponseReturnValue

from ..core import odds
from ..core.casino_war import CHOICES
from ..core.casino_war import TableRules
from ..core.errors import CasinoError
from ..core.errors import InsufficientFunds
from ..core.errors import InvalidBet
from ..core.errors import InvalidInput
from ..core.errors import RulesChanged
from ..core.marks import N_
from ..db import get_session
from ..services import money
from ..services import rounds
from ..services import settings
from ..services.results import CasinoWarRound
from .errors import drawn_in_an_outage
from .errors import handle_casino_error
from .errors import invalid_fields
from .errors import refusal_headers
from .errors import status_of
from .format import chips
from .format import chips_text
from .format import plural
from .format import written_now
from .i18n import error_message
from .i18n import gettext
from .i18n import gettext_counting
from .i18n import shown_at
from .inputs import choice
from .inputs import form_chips
from .inputs import form_key
from .inputs import is_digits
from .security import login_required
from .security import player_page

bp = Blueprint("casino_war", __name__, url_prefix="/casino-war")

TABLE = "casino_war"
#: Chip denominations offered on the table, in whole chips.
CHIP_VALUES = (1, 5, 25, 100, 500)
#: The ante offered to a player who has not bet yet, in table minimums.
FIRST_ANTE_MINIMUMS = 5


def raise_warning(held: int, ante: int, tie_bet: int, rules: dict[str, Any]) -> str | None:
    """Say, before the bet is placed, that a tie could not be met with war (amounts in hundredths).

    After the ante and tie bet are taken, war needs another ante; without it a tie leaves only
    surrender. None when the balance covers the raise, or not even the bet itself, and for a bet
    outside the table's limits: that bet cannot be placed, and its refusal says why.
    """
    low, high = rules["min_bet"], rules["max_bet"]
    if not low <= ante <= high or not (tie_bet == 0 or low <= tie_bet <= high):
        return None
    left = held - ante - tie_bet
    if left < 0 or left >= ante:
        return None
    return gettext(
        "After this bet you would have %(left)s left: on a tie you could not raise %(raise)s "
        "to go to war, only surrender and get %(back)s back.",
        left=plural(left, "chip"),
        **{"raise": chips(ante)},
        back=chips(ante // 2),
    )


def _typed(round_: CasinoWarRound | None, rules: dict[str, Any]) -> dict[str, str]:
    """Return what the bet fields show: what was typed (a refused bet), else the last round's."""
    if request.method == "POST":
        return {
            "bet": request.form.get("bet", "")[:16],
            "tie_bet": request.form.get("tie_bet", "")[:16],
        }
    if round_ is None:
        latest = rounds.list_rounds(get_session(), g.user.id, game=TABLE, limit=1).rounds
        found = rounds.get_round(get_session(), g.user.id, latest[0].id) if latest else None
        round_ = found if isinstance(found, CasinoWarRound) else None
    if round_ is None:
        return {"bet": str(rules["min_bet"] // 100 * FIRST_ANTE_MINIMUMS), "tie_bet": "0"}
    return {"bet": str(round_.bet // 100), "tie_bet": str(round_.tie_bet // 100)}


def _render_table(round_: CasinoWarRound | None, error: CasinoError | None = None) -> str:
    db = get_session()
    rules = settings.table_rules(db, TABLE)
    balances = money.balances(db, g.user.id)
    typed = _typed(round_, rules)
    ante = int(typed["bet"]) * 100 if is_digits(typed["bet"]) else 0
    tie_bet = int(typed["tie_bet"]) * 100 if is_digits(typed["tie_bet"]) else 0
    return render_template(
        "casino_war/table.html",
        rules=rules,
        edge=odds.casino_war_odds(TableRules.from_dict(rules)),
        round=round_,
        balances=balances,
        chip_values=[c for c in CHIP_VALUES if c * 100 <= rules["max_bet"]],
        form_key=secrets.token_hex(16),
        typed=typed,
        afford_note=raise_warning(balances.chips, ante, tie_bet, rules),
        error=error_message(error) if error else None,
        invalid=invalid_fields(error) if error else None,
        low_balance=current_app.config["LOW_BALANCE_CHIPS"],
        limits=limit_words(rules),
    )


@bp.errorhandler(CasinoError)
@drawn_in_an_outage
def refused(error: CasinoError) -> ResponseReturnValue:
    """Show a refused bet on the table with its reason, the amounts kept as typed."""
    status = status_of(error)
    if request.endpoint != "casino_war.bet" or status == 404 or status >= 500:
        return handle_casino_error(error)  # nothing to show on the table, or no table to show
    shown_at(url_for("casino_war.table"))
    return _render_table(None, error), status, refusal_headers(error)


@bp.get("")
@player_page
def table() -> ResponseReturnValue:
    latest = rounds.list_rounds(get_session(), g.user.id, game=TABLE, limit=1).rounds
    if latest and latest[0].status == "awaiting_decision":
        # A tie waits for the player's decision: the table is that round until it is settled.
        return redirect(url_for("casino_war.round_page", round_id=latest[0].id))
    return _render_table(None)


@bp.get("/odds")
@login_required
def odds_page() -> ResponseReturnValue:
    rules = settings.table_rules(get_session(), TABLE)
    table_rules = TableRules.from_dict(rules)
    return render_template(
        "casino_war/odds.html",
        rules=rules,
        edge=odds.casino_war_odds(table_rules),
        by_decks=odds.odds_by_decks(tie_payout=table_rules.tie_payout, bonus=table_rules.bonus),
    )


@bp.get("/rounds/<id:round_id>")
@login_required
def round_page(round_id: int) -> ResponseReturnValue:
    round_ = rounds.get_round(get_session(), g.user.id, round_id)
    if not isinstance(round_, CasinoWarRound):
        return redirect(url_for("sota.game", round_id=round_id))
    return _render_table(round_)


#: What a player short of chips is told, for a bet and for the raise of a war.
RULES_CHANGED: Final = N_(
    "The table's rules changed since this page was shown, so your bet was not placed: look at "
    "the new rules before you bet."
)
SHORT_FOR_BET: Final = N_(
    "You have %(held)s, not enough for this bet of %(needed)s. Bet less, or top up in the "
    "lobby once you are below %(low)s."
)
SHORT_FOR_RAISE: Final = N_(
    "You have %(held)s, not enough for the raise of %(needed)s. Surrender instead, or top up "
    "in the lobby once you are below %(low)s."
)


def _shown_rules() -> object:
    """Return the rules the bet form's page showed (the service refuses a bet if the table's
    differ); None from a page drawn before the form sent them: the table's present rules.

    :raises InvalidInput: for a field that is not JSON (only a request made by hand sends one).
    """
    text = request.form.get("rules")
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise InvalidInput(
            N_("rules must be the rules the table page shows"), field="rules"
        ) from None


def _short_of_chips(error: InsufficientFunds, message: str) -> InsufficientFunds:
    """Say, in chips, that the balance does not cover the amount and what the player can do."""
    held, needed = error.details["held"], error.details["needed"]
    assert isinstance(held, int) and isinstance(needed, int)  # as ledger.post refuses
    low = current_app.config["LOW_BALANCE_CHIPS"]
    amounts = {"held": {"chips": held}, "needed": {"chips": needed}, "low": {"chips": low}}
    return InsufficientFunds(message, params=written_now(amounts), amounts=amounts)


#: What refuses an ante or a tie bet outside the table's limits, by field: a range, or the one
#: amount of a table whose limits are equal (never "from 1 to 1 whole chips").
LIMIT_REFUSALS: Final = {
    "bet": (
        N_("The ante must be from %(low)s to %(high)s whole chips."),
        N_("The ante must be %(amount)s."),
    ),
    "tie_bet": (
        N_("The tie bet must be 0 or from %(low)s to %(high)s whole chips."),
        N_("The tie bet must be 0 or %(amount)s."),
    ),
}


def _limit_refusal(field: str, low: int, high: int) -> tuple[str, dict[str, dict[str, int]]]:
    """The refusal of a ``field`` outside the limits (hundredths of a chip), and its params as
    amounts (:func:`written_now`)."""
    in_range, one_amount = LIMIT_REFUSALS[field]
    if low == high:
        return one_amount, {"amount": {"chips": low}}
    return in_range, {"low": {"chips_number": low}, "high": {"chips_number": high}}


def limit_words(rules: dict[str, Any]) -> dict[str, str]:
    """What the table says of its ante limits, in the page's language: its header, the ante's
    help, and the refusals of an ante or a tie bet outside them. A table whose limits are
    equal names its one amount ("Bet: 1 chip"), not a range of it ("Bets 1–1 chips")."""
    low, high = rules["min_bet"], rules["max_bet"]
    words = {}
    for field in LIMIT_REFUSALS:
        message, amounts = _limit_refusal(field, low, high)
        words[field] = gettext(message, **written_now(amounts))
    if low == high:
        amount = chips_text(low)
        words["header"] = gettext("Bet: %(amount)s", amount=amount)
        words["help"] = gettext("The ante is %(amount)s at this table.", amount=amount)
    else:
        words["header"] = gettext_counting(
            N_("Bets %(low)s–%(high)s chips"), ("high",), low=chips(low), high=chips(high)
        )
        words["help"] = gettext(
            "Whole chips from %(low)s to %(high)s.", low=chips(low), high=chips(high)
        )
    return words


def _outside_limits(error: InvalidBet) -> InvalidBet:
    """Say the table's limits in chips (the services count in hundredths)."""
    low, high = error.details.get("min_bet"), error.details.get("max_bet")
    if not isinstance(low, int) or not isinstance(high, int):
        return error  # not about the limits: its own words stand
    field = "tie_bet" if error.details.get("field") == "tie_bet" else "bet"
    if field == "tie_bet" and not error.details["tie_payout"]:
        return InvalidBet(N_("This table offers no tie bet; leave it at 0."), field="tie_bet")
    message, amounts = _limit_refusal(field, low, high)
    return InvalidBet(message, params=written_now(amounts), amounts=amounts, field=field)


@bp.post("/rounds")
@login_required
def bet() -> ResponseReturnValue:
    body = {
        "bet": form_chips("bet", label=N_("ante")),
        "tie_bet": form_chips("tie_bet", label=N_("tie bet"), required=False),
        "rules": _shown_rules(),
    }
    try:
        round_ = rounds.place_casino_war_bet(
            get_session(),
            g.user.id,
            body["bet"],
            body["tie_bet"],
            rules=body["rules"],
            idempotency_key=form_key(),
            request_body=body,
        )
    except RulesChanged as error:
        # Back to the table page, which shows the new rules (the service's words name them by
        # their codes, for scripts).
        raise RulesChanged(RULES_CHANGED) from error
    except InvalidBet as error:
        raise _outside_limits(error) from error
    except InsufficientFunds as error:
        raise _short_of_chips(error, SHORT_FOR_BET) from error
    return redirect(url_for("casino_war.round_page", round_id=round_.id), code=303)


@bp.post("/rounds/<id:round_id>/decision")
@login_required
def decision(round_id: int) -> ResponseReturnValue:
    picked = choice(request.form, "choice", CHOICES)
    try:
        rounds.decide_casino_war(
            get_session(),
            g.user.id,
            round_id,
            picked,
            idempotency_key=form_key(),
            request_body={"choice": picked},
        )
    except InsufficientFunds as error:
        raise _short_of_chips(error, SHORT_FOR_RAISE) from error
    return redirect(url_for("casino_war.round_page", round_id=round_id), code=303)
