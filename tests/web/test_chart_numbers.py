"""Numbers as the charts and the ledger show them, in every language: negative ones with the
minus sign (U+2212), intervals that a decimal comma cannot make ambiguous."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from typing import Any

import pytest
from flask import Flask
from flask import render_template_string
from operator_support import add_user
from operator_support import client_as

from sota_casino.services import reports
from sota_casino.services import rounds
from sota_casino.web.charts import NARROW
from sota_casino.web.charts import WIDE
from sota_casino.web.charts import Reference
from sota_casino.web.charts import Series
from sota_casino.web.charts import bar_chart
from sota_casino.web.charts import line_chart
from sota_casino.web.format import decimal
from sota_casino.web.format import fraction
from sota_casino.web.format import percent
from sota_casino.web.format import whole_number
from sota_casino.web.i18n import LANGUAGES

SVG = "{http://www.w3.org/2000/svg}"
#: A hyphen-minus written as a number's sign (a day such as "05-01" has one between digits).
HYPHEN_SIGN = re.compile(r"(?<!\d)-\d")


def _shown_words(svg: str) -> list[str]:
    """Every text a chart's drawings show or give as a tooltip."""
    root = ET.fromstring(f"<drawings>{svg}</drawings>")
    return [
        element.text or ""
        for element in root.iter()
        if element.tag in (f"{SVG}text", f"{SVG}title")
    ]


@pytest.mark.parametrize("language", LANGUAGES)
def test_negative_numbers_take_the_minus_sign_in_every_language(app: Flask, language: str) -> None:
    """Babel wrote "-10,00 %" with a hyphen-minus; the casino writes its minus sign (U+2212), as
    typography and each of its languages do."""
    with app.test_request_context("/", headers={"Cookie": f"lang={language}"}):
        assert percent(Fraction(-1, 10)).startswith("−10")
        assert whole_number(-1234).startswith("−1")
        assert decimal(Fraction(-712, 100)).startswith("−7")
        assert decimal(Fraction(-1, 1000)) == decimal(0)  # rounded to nought, it has no sign
        edges = Series("Casino War", (("05-01", Fraction(-1, 10)), ("05-02", Fraction(3, 100))))
        theory = Reference("theory", Fraction(-288, 10000), "Casino War")
        bars = [("05-01", -1500), ("05-02", 300)]
        both = (WIDE, NARROW)
        line = line_chart(
            [edges], title="t", references=[theory], value_format=percent, frames=both
        )
        shown = _shown_words(str(line)) + _shown_words(
            str(bar_chart(bars, title="t", value_format=whole_number, frames=both))
        )
        assert [words for words in shown if HYPHEN_SIGN.search(words)] == []
        assert [words for words in shown if "−" in words], shown


#: An edge as the statistics and the ledger show it, with its exact fraction as the tooltip.
EDGE = '{% from "operator/_console.html" import edge %}{{ edge(figure) }}'


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_exact_fraction_is_written_as_the_language_writes_numbers(
    app: Flask, language: str
) -> None:
    """The tooltip of an edge wrote the API's fraction as it is, "exactly -26/43" and
    "652901/19860460", beside "−60.47 %" and "19,860,460": its sign is the minus sign and its
    digits are grouped as every other number of the page."""
    with app.test_request_context("/", headers={"Cookie": f"lang={language}"}):
        assert fraction(Fraction(-26, 43)) == "−26/43"
        assert fraction("652901/19860460") == f"{decimal(652901, 0)}/{decimal(19860460, 0)}"
        shown = render_template_string(EDGE, figure={"exact": "-26/43", "value": -26 / 43})
        title = html.unescape(re.search(r'title="([^"]*)"', shown).group(1))
        assert "−26/43" in title and not HYPHEN_SIGN.search(title), title
        rules = app.test_client()  # the default table: 6 decks, no bonus
        rules.set_cookie("lang", language)
        page = html.unescape(rules.get("/rules/casino-war").get_data(as_text=True))
        tooltips = re.findall(r'data-field="war" title="([^"]*)"', page)
        assert tooltips and f"{decimal(142853, 0)}/{decimal(4965115, 0)}" in tooltips[0], tooltips


def _rounds_enough_for_an_interval(app: Flask) -> int:
    """Play as many Casino War rounds as the house's interval wants
    (:data:`reports.INTERVAL_MIN_ROUNDS`) as a new player, going to war at each tie; the
    player's id."""
    player = add_user(app, "alice", "player")
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        for _ in range(reports.INTERVAL_MIN_ROUNDS):
            round_ = rounds.place_casino_war_bet(session, player, 500, 100)
            if round_.status == "awaiting_decision":
                rounds.decide_casino_war(session, player, round_.id, "war")
    finally:
        session.close()
    return player


NUMBER = r"−?\d+[.,]\d\d"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_ledger_writes_an_interval_no_decimal_comma_can_blur(app: Flask, language: str) -> None:
    """ "[-7,12, 33,12]" read as four numbers in Finnish, Norwegian and Portuguese: the ends
    stand apart by an ellipsis, which is neither a decimal mark, a list's comma nor a minus."""
    _rounds_enough_for_an_interval(app)
    console: Any = client_as(app, add_user(app, "olga", "operator"))
    console.set_cookie("lang", language)
    page = console.get("/operator/ledger").get_data(as_text=True)
    cells = re.findall(r'data-testid="realized-interval"[^>]*>(.*?)</td>', page, re.S)
    assert cells
    for cell in cells:
        words = html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
        assert re.fullmatch(rf"{NUMBER}\u00a0% \[{NUMBER} … {NUMBER}\]", words), words
        assert not HYPHEN_SIGN.search(words), words


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_statistics_write_their_interval_as_the_ledger_does(app: Flask, language: str) -> None:
    """Finnish wrote "−3,00 % – −1,00 %": a dash beside a minus sign reads as another minus.
    Every language writes the ends apart by the ledger's ellipsis."""
    player: Any = client_as(app, _rounds_enough_for_an_interval(app))
    player.set_cookie("lang", language)
    page = player.get("/stats").get_data(as_text=True)
    cell = re.search(r'<dd data-field="interval">(.*?)</dd>', page, re.S)
    assert cell is not None
    words = html.unescape(cell.group(1)).strip()
    assert re.fullmatch(rf"{NUMBER}\u00a0% … {NUMBER}\u00a0%", words), words
