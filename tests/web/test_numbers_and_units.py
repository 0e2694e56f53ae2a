"""A number and its unit stay on one line: wherever a page writes a duration, a period, a
percentage or an amount ("24 h", "4 min", "15 minutes", "2.88 %", "1250 hundredths"), in every
language, a no-break space joins
them, as it joins a count and its word ("12 chips"); a narrow phone never ends a line between
them."""

from __future__ import annotations

import html
import re

import pytest
from flask import Flask
from operator_support import add_user
from operator_support import client_as
from operator_support import db
from operator_support import run_checks

from sota_casino.services import alerts
from sota_casino.services import money
from sota_casino.services import rounds
from sota_casino.web.i18n import LANGUAGES

#: The units the pages write after a number, in any of the four languages: time (hours, minutes,
#: seconds, days, as words and as abbreviations), sizes and percentages.
UNITS = (
    "h|t|min|s|ms|KiB|MiB|kB|MB|"
    "hours?|horas?|timer|timene|tunnin|tuntia|tunti|døgn|"
    "minutes?|minutos?|minutter|minutt|minuutin|minuuttia|"
    "seconds?|segundos?|sekunder|sekunnin|sekuntia|"
    "days?|dias?|dager|døgnet|päivää|päivän|"
    "chips?|fichas?|sjetonger|pelimerkkiä|hundredths|centésimos|hundredeler|sadasosaa"
)
#: A number, the whitespace a line may break at, and a unit.
APART = re.compile(rf"\d[ \t\r\n]+(?:%|(?:{UNITS})(?![\w-]))")
HIDDEN = re.compile(r"<(script|style)\b.*?</\1>", re.S)


def apart(page: str) -> list[str]:
    """Each number on the page whose unit a line may break from, with what stands around it."""
    text = html.unescape(re.sub(r"<[^>]+>", "", HIDDEN.sub("", page)))
    return [text[max(0, m.start() - 30) : m.end() + 10] for m in APART.finditer(text)]


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_no_page_puts_a_line_break_between_a_number_and_its_unit(app: Flask, language: str) -> None:
    operator = add_user(app, "olli", "operator")
    player = add_user(app, "pat", "player")
    app.config["LOW_BALANCE_CHIPS"] = app.config["LOW_BALANCE_SWEETS"] = 10**9
    with db(app) as session:
        money.topup(session, player, "chips")  # the lobby says when the next one comes
        rounds.place_casino_war_bet(session, player, 500)
        rounds.play_sota(session, player, 5, None, "kids_15_min")
        # A rule over a period in hours, and the alert it raises.
        alerts.create_rule(session, operator, "player_adjustments", "sweets", 20, 24)
        for _ in range(3):
            money.adjust(session, operator, player, "sweets", 10, "bonus")
    run_checks(app)  # the console says how long ago each standing check ran
    pages = {
        player: ["/lobby", "/casino-war", "/sota", "/rules/sota", "/rules/casino-war", "/stats"],
        operator: [
            "/operator/alerts",
            "/operator/audit",
            "/operator/ledger",
            "/operator/tables",
            f"/operator/players/{player}",
        ],
    }
    found = {}
    for user, paths in pages.items():
        browser = client_as(app, user)
        browser.set_cookie("lang", language)
        for path in paths:
            # A tie leaves the round open, and the table then shows it at its own address.
            response = browser.get(path, follow_redirects=True)
            assert response.status_code == 200, path
            found[path] = apart(response.get_data(as_text=True))
    assert {path: shown for path, shown in found.items() if shown} == {}


@pytest.mark.parametrize(
    ("language", "written"), [("en", "12,345"), ("fi", "12\xa0345"), ("pt", "12.345")]
)
def test_a_count_is_grouped_in_thousands_as_the_language_writes_numbers(
    app: Flask, language: str, written: str
) -> None:
    """Counts went into plural messages as Python writes them ("12345 tricks") in every
    language, beside amounts grouped as each language groups them: a count is written as the
    page's other numbers, in templates and in the messages of the code alike."""
    template = '{{ ngettext("%(num)s trick", "%(num)s tricks", 12345) }}'
    with app.test_request_context(headers={"Accept-Language": language}):
        from flask import render_template_string

        from sota_casino.web.i18n import ngettext

        shown = [
            render_template_string(template),
            ngettext("%(num)s trick", "%(num)s tricks", 12345),
        ]
    assert all(text.startswith(written) for text in shown), shown
