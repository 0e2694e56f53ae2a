"""The four languages in a real browser: the header's picker switches the page, and a Casino
War round, a Sota replay and the rules pages read in each language, the scripts' texts too.

What a page should say is read from the compiled catalogues themselves, so the checks hold for
every language as its catalogue is written (English: the message ids).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from babel.numbers import format_decimal
from babel.support import NullTranslations
from browser_support import LiveServer
from browser_support import open_tab
from browser_support import sign_up
from flask import g
from test_page_and_offline_verifiers_agree import PAGE_REPORT_WITH_RECORDS
from test_page_and_offline_verifiers_agree import RECORDS
from web_support import plant_sota_winner

from sota_casino.core import sota
from sota_casino.web import i18n
from sota_casino.web.format import chips_text
from sota_casino.web.format import decimal
from sota_casino.web.format import sweets_text
from sota_casino.web.format import when
from sota_casino.web.i18n import LANGUAGES
from sota_casino.web.i18n import ngettext
from sota_casino.web.i18n import sentence

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_verify_cli import GOOD  # noqa: E402
from test_verify_cli import KEY_HEX  # noqa: E402

pytestmark = pytest.mark.browser


def words(language: str) -> NullTranslations:
    """The catalogue the server reads for ``language``, as it reads it (its ranges kept on one
    line)."""
    return i18n.catalogue(language)


def open_the_menu(tab: Any) -> None:
    """Open the header's menu where it is folded behind its button (on a phone)."""
    if not tab.locator("#language-choice").is_visible():
        tab.click("header details.menu > summary")
        tab.locator("#language-choice").wait_for()


def choose_language(tab: Any, language: str) -> None:
    """Pick ``language`` in the header, as a player does; the page comes back in it."""
    open_the_menu(tab)
    with tab.expect_navigation():
        tab.select_option("#language-choice", language)
    tab.wait_for_selector(f"html[lang={language}]")


def test_the_header_picker_switches_the_page_and_remembers_it(tab: Any) -> None:
    tab.goto("/")
    assert tab.get_attribute("html", "lang") == "en"
    for language in ("fi", "pt", "nb", "en"):
        choose_language(tab, language)
        expected = words(language).gettext("Casino War and Sota, provably fair")
        assert tab.inner_text("h1") == expected
        assert tab.url.endswith("/")  # back on the page the picker was on
    choose_language(tab, "fi")
    tab.goto("/auth/login")  # the choice stays for the next pages
    assert tab.get_attribute("html", "lang") == "fi"
    assert tab.inner_text("h1") == "Tervetuloa takaisin"


def test_the_picker_keeps_the_player_on_the_sota_game_dealt_again_in_the_page(tab: Any) -> None:
    sign_up(tab, "pickergame")
    tab.goto("/sota")
    tab.check("input[name=preset][value=nordic]")
    tab.fill("#stake", "2")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    first = tab.evaluate("JSON.parse(document.getElementById('game-data').textContent).id")
    tab.click("#deal-again")  # shown in place: the page was loaded at /sota
    tab.wait_for_function(
        "id => JSON.parse(document.getElementById('game-data').textContent).id !== id",
        arg=first,
    )
    second = tab.evaluate("JSON.parse(document.getElementById('game-data').textContent).id")
    choose_language(tab, "pt")
    assert tab.url.endswith(f"/sota/games/{second}")
    title = words("pt").gettext("Sota game #%(id)s") % {"id": second}
    assert tab.inner_text("#game-title") == title


def test_the_rules_pages_read_in_each_language(tab: Any) -> None:
    for language in sorted(LANGUAGES):
        the_rules_read_in(tab, language)


def the_rules_read_in(tab: Any, language: str) -> None:
    tab.goto("/rules/casino-war")
    choose_language(tab, language)
    catalogue = words(language)
    assert tab.inner_text("h1") == catalogue.gettext("How to play Casino War")
    king = catalogue.gettext("%(rank)s of %(suit)s") % {
        "rank": catalogue.gettext("king"),
        "suit": catalogue.gettext("diamonds"),
    }
    assert tab.locator(f"[data-testid=war-example] .card[aria-label='{king}']").is_visible()
    tab.goto("/rules/sota")
    assert tab.get_attribute("html", "lang") == language
    assert tab.inner_text("h1") == catalogue.gettext("How to play Sota")
    assert catalogue.gettext("Prisoners of war") in tab.inner_text("#opt-prisoners_of_war")


def test_a_casino_war_round_and_a_sota_replay_in_each_language(tab: Any) -> None:
    sign_up(tab, "languages")
    for language in sorted(LANGUAGES):
        a_round_and_a_replay_in(tab, language)


def a_round_and_a_replay_in(tab: Any, language: str) -> None:
    catalogue = words(language)
    tab.goto("/lobby")
    choose_language(tab, language)
    # Casino War, dealt in the page: the result, the summary and the cards come from the script.
    tab.goto("/casino-war")
    tab.click("#deal")
    tab.wait_for_selector("#bet-summary span")
    if tab.locator("#decision").count():
        tie = catalogue.gettext("A tie!")
        assert tab.inner_text("[data-testid=tie] .headline") == tie
        tab.click("#decision button[value=surrender]")
    tab.wait_for_selector("[data-testid=result]")
    outcomes = {
        catalogue.gettext(label)
        for label in (
            "You win",
            "Dealer wins",
            "You surrendered",
            "You won the war",
            "War tied: you win",
            "Dealer won the war",
        )
    }
    assert tab.inner_text("[data-testid=result] .headline") in outcomes
    ante = catalogue.gettext("Ante %(amount)s").split("%(amount)s")[0]
    assert tab.inner_text("#bet-summary span >> nth=0").startswith(ante)
    assert catalogue.gettext("receipt") in tab.inner_text("[data-testid=result]")
    # Sota, dealt and replayed in the page: the narration is the script's, in the language.
    tab.goto("/sota")
    tab.check("input[name=preset][value=nordic]")
    tab.fill("#stake", "2")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    tab.wait_for_selector("#play-pause")
    assert tab.get_attribute("html", "lang") == language
    tab.click("#step")
    first = catalogue.gettext("Trick %(num)s:") % {"num": 1}
    tab.wait_for_function(
        "first => document.getElementById('trick-what').textContent.startsWith(first)", arg=first
    )
    tab.click("#to-end")
    tab.wait_for_selector("[data-testid=summary-winner]")
    assert tab.inner_text("[data-testid=summary] h2") == catalogue.gettext("The game in numbers")


#: The dealer's win in each language, its article too: composed as "%(name)s wins" from the
#: seat's label "Dealer", Norwegian read "Dealer vinner" and Portuguese "Crupiê vence".
DEALER_WINS = {"nb": "Dealeren vinner", "pt": "O crupiê vence"}


@pytest.mark.parametrize("language", sorted(DEALER_WINS))
def test_a_sota_game_the_dealer_wins_is_said_with_the_dealers_article(
    tab: Any, live_server: LiveServer, language: str
) -> None:
    """A game the dealer wins, in the page: its result, a trick the dealer takes in the replay
    and the game in numbers; then the fairness page's verification of it."""
    catalogue = words(language)
    username = sign_up(tab, "dealerwins")
    plant_sota_winner(live_server.app, username, sota.SotaRules.from_dict({}), 1)
    tab.goto("/sota")
    choose_language(tab, language)
    tab.check("input[name=preset][value=nordic]")
    tab.fill("#stake", "2")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    tab.wait_for_selector("#play-pause")
    game = tab.evaluate("JSON.parse(document.getElementById('game-data').textContent)")
    assert game["winner"] == 1
    taken = next(t for t, trick in enumerate(game["tricks"]) if trick["winner"] == 1)
    wars = game["tricks"][taken]["wars"]
    # The slider at the trick's end, as the player drags it there.
    tab.evaluate(
        "trick => { const scrub = document.getElementById('scrub'); scrub.value = String(trick);"
        " scrub.dispatchEvent(new Event('input')); }",
        taken + 1,
    )
    said = (
        catalogue.ngettext(
            "The dealer takes the pot after %(num)s war.",
            "The dealer takes the pot after %(num)s wars.",
            wars,
        ).replace("%(num)s ", f"{wars}\u00a0")
        if wars
        else catalogue.gettext("The dealer takes the pot.")
    )
    assert tab.inner_text("#trick-what").endswith(said), tab.inner_text("#trick-what")
    tab.click("#to-end")
    assert tab.inner_text("#game-result .headline") == DEALER_WINS[language]
    assert tab.inner_text("[data-testid=summary-winner]") == DEALER_WINS[language]
    tab.goto("/fairness")
    tab.click("#rotate")
    pair = tab.locator(".revealed-pair").first
    pair.locator("[data-verify]").click()
    pair.locator("[data-testid=verify-summary]").wait_for()
    result = pair.locator(f"tr[data-round='{game['id']}'] td").nth(5).inner_text()
    assert result.startswith(DEALER_WINS[language] + " · "), result


#: 2 January 2026, 03:04 UTC as each language writes the date (the pages' ``when``).
PIN_DATES = {"en": "Jan 2, 2026", "fi": "2.1.2026", "nb": "2. jan. 2026", "pt": "2 de jan. de 2026"}
PIN_SET = """([key, at]) => localStorage.setItem("sota-casino.pinned-key.v1",
    JSON.stringify({public_key_hex: key, pinned_at: at, replaced: []}))"""


def test_the_fairness_page_says_since_when_a_key_is_pinned_as_the_language_writes_times(
    tab: Any,
) -> None:
    pinned_at = "2026-01-02T03:04:05.678Z"
    for language in sorted(LANGUAGES):
        tab.goto("/fairness")
        choose_language(tab, language)
        shown = tab.get_attribute("[data-service-public-key]", "data-service-public-key")
        tab.evaluate(PIN_SET, [shown, pinned_at])
        tab.reload()
        pin = tab.locator("[data-testid=key-pin]")
        expected = words(language).gettext("pinned since %(when)s").split("%(when)s")[0]
        tab.wait_for_function(
            "start => document.querySelector('[data-pinned-at]').textContent.startsWith(start)",
            arg=expected,
        )
        assert PIN_DATES[language] in pin.inner_text() and "T03:04" not in pin.inner_text()
        # A key other than the pinned one: the warning says when that one was pinned, so too.
        tab.evaluate(PIN_SET, ["ab" * 32, pinned_at])
        tab.reload()
        warning = tab.locator("[data-testid=key-changed]").inner_text()
        assert PIN_DATES[language] in warning and "T03:04" not in warning
        tab.evaluate("() => localStorage.clear()")


def test_the_page_verifier_says_a_receipt_holds_no_decision_in_each_language(tab: Any) -> None:
    """A choice the player's records hold for a round whose receipt holds none (round 102 had
    no tie): the difference names the choice and the missing decision in the page's words."""
    decided = {"round_id": 102, "seed_pair_id": 12, "nonce": 2, "game": "casino_war"}
    sign_up(tab, "no-decision")
    for language in sorted(LANGUAGES):
        tab.goto("/fairness")
        choose_language(tab, language)
        catalogue = words(language)
        for choice in ("war", "surrender"):
            records = RECORDS | {"actions": [*RECORDS["actions"], decided | {"action": choice}]}
            difference = catalogue.gettext("you chose %(yours)s, the receipt says %(signed)s") % {
                "yours": catalogue.gettext(choice),
                "signed": catalogue.gettext("no decision"),
            }
            expected = catalogue.gettext("round %(round)s: %(problem)s") % {
                "round": 102,
                "problem": difference,
            }
            report = tab.evaluate(PAGE_REPORT_WITH_RECORDS, [records, GOOD, KEY_HEX])
            assert expected in report["problems"], (language, report["problems"])
            if language != "en":  # the catalogue has its words, the choice's too
                assert "no decision" not in expected and choice not in expected, language


#: Numbers the scripts show, with their decimals: ties (rounded to the even digit, as the
#: server does), a negative one that rounds to nought (no sign), thousands.
DECIMALS = [(-7.125, 2), (0.625, 2), (2.5, 0), (-3.5, 0), (-0.004, 2), (-1234567.5, 1), (0, 0)]
#: Amounts in chips (hundredths) and sweets, with their sign asked for or not.
CHIPS = [(-500, True), (-12345, True), (150, False), (120_000, True), (0, True), (-5, False)]
SWEETS = [(-3, True), (-1, False), (1_200, True), (0, True)]
#: Counts of cards, as a Sota deal says them ("The deck is dealt: 26 cards each").
CARDS = [1, 2, 26]
#: Moments, as a pinned key's time says them (a morning's and an evening's: AM and PM).
TIMES = ["2026-12-01T08:31:13.842Z", "2026-12-01T19:50:05Z"]
PAGE_NUMBERS = """([decimals, chips, sweets, cards, times]) => [
    decimals.map(([value, digits]) => window.SotaI18n.number(value, digits)),
    chips.map(([amount, signed]) => window.SotaI18n.chipsText(amount, signed)),
    sweets.map(([amount, signed]) => window.SotaI18n.sweetsText(amount, signed)),
    cards.map((num) => window.SotaI18n.ngettext("%(num)s card", "%(num)s cards", num)),
    times.map((iso) => window.SotaI18n.time(iso)),
]"""


def test_the_scripts_write_numbers_as_the_server_does_in_each_language(
    tab: Any, live_server: LiveServer
) -> None:
    """The page's numbers (a round's net, a game's, a receipt's payout) are the server's: the
    minus sign U+2212, ties rounded to even, the language's grouping and plural, and the
    no-break space between a count and its word. So are its times: in English the script put a
    plain space before PM where the server puts a narrow no-break one, and a 320 px phone broke
    "9:15" from "PM" in the fairness page's pinned key."""
    for language in sorted(LANGUAGES):
        tab.goto("/")
        choose_language(tab, language)
        with live_server.app.test_request_context():
            g.locale = language
            server = [
                [decimal(value, digits) for value, digits in DECIMALS],
                [chips_text(amount, signed) for amount, signed in CHIPS],
                [sweets_text(amount, signed) for amount, signed in SWEETS],
                [ngettext("%(num)s card", "%(num)s cards", num) for num in CARDS],
                [when(iso) for iso in TIMES],
            ]
        page = tab.evaluate(PAGE_NUMBERS, [DECIMALS, CHIPS, SWEETS, CARDS, TIMES])
        assert page == server, language
        assert page[1][0].startswith("−5") and "-" not in "".join(page[1] + page[2])
        # A number and its word never part at a line's end: a no-break space joins them.
        for text in page[1] + page[2] + page[3]:
            assert "\u00a0" in text and " " not in text, (language, text)


#: What the browser says of a field's value by its own checks, and whether the value passes.
OWN_CHECK = """selector => {
  const field = document.querySelector(selector);
  return [field.validationMessage, field.validity.valid];
}"""


def test_a_number_field_s_own_check_speaks_the_page_s_language(
    chromium: Any, live_server: LiveServer
) -> None:
    """The bet, stake and rule fields' own checks (their least, most and whole steps, and
    "required") were said by the browser in its own language: on a page in Finnish, an English
    browser refused an ante of 501 with "Value must be less than or equal to 500." Each says
    what the server says of the same value, in the page's language; a valid bet still deals."""
    tabs = open_tab(chromium, live_server, viewport={"width": 1280, "height": 860}, locale="en-US")
    tab = next(tabs)
    sign_up(tab, "ownchecks")
    choose_language(tab, "fi")
    catalogue = words("fi")

    def said(selector: str, typed: str, submit: str) -> list[Any]:
        tab.fill(selector, typed)
        tab.click(submit)
        return [typed, *tab.evaluate(OWN_CHECK, selector)]

    def number(value: str | None) -> str:
        return format_decimal(int(str(value)), "#,##0", locale="fi")

    def field_words(message: str, label: str, unit: str = "", example: str = "") -> str:
        """``message`` as the server says it of a form's field, a sentence."""
        params = {
            "label": catalogue.gettext(label),
            "unit": catalogue.gettext(unit) if unit else "",
            "example": catalogue.gettext(example) if example else "",
        }
        return sentence(catalogue.gettext(message) % params)

    tab.goto("/casino-war")
    low, high = (int(str(tab.get_attribute("#bet", limit))) for limit in ("min", "max"))
    limits = {"low": number(str(low)), "high": number(str(high))}
    ante_limits = catalogue.gettext("The ante must be from %(low)s to %(high)s whole chips.")
    tie_limits = catalogue.gettext("The tie bet must be 0 or from %(low)s to %(high)s whole chips.")
    whole = "The %(label)s must be a whole number of %(unit)s, like %(example)s."
    negative = "The %(label)s cannot be negative: enter %(example)s."
    shown = [
        said("#bet", str(high + 1), "#deal"),
        said("#bet", str(low - 1), "#deal"),
        said("#bet", "-3", "#deal"),
        said("#bet", "2.5", "#deal"),
        said("#bet", str(high + 1), "#deal"),
    ]
    tab.click("#clear-bet")  # emptied by the page's script, not typed: no input event
    tab.click("#deal")
    shown.append(["", *tab.evaluate(OWN_CHECK, "#bet")])
    tab.click("button[data-chips='5']")
    shown += [said("#tie_bet", str(high + 1), "#deal"), said("#tie_bet", "-1", "#deal")]
    expected = [
        [str(high + 1), ante_limits % limits, False],
        [str(low - 1), ante_limits % limits, False],
        ["-3", field_words(negative, "ante", example="5 or 25"), False],
        ["2.5", field_words(whole, "ante", "chips", "5 or 25"), False],
        [str(high + 1), ante_limits % limits, False],
        ["", field_words("Please enter the %(label)s in chips.", "ante"), False],
        [str(high + 1), tie_limits % limits, False],
        ["-1", field_words(negative, "tie bet", example="5 or 25"), False],
    ]
    tab.fill("#tie_bet", "0")
    valid = tab.evaluate(OWN_CHECK, "#bet")
    tab.click("#deal")  # the words gone with the wrong values, the bet is dealt
    tab.wait_for_selector("#outcome [role=status]")

    tab.goto("/sota")
    low, high = (int(str(tab.get_attribute("#stake", limit))) for limit in ("min", "max"))
    stake_limits = "stake must be a whole number of sweets from %(low)s to %(high)s"
    shown += [said("#stake", str(high + 1), "#play"), said("#stake", "1.5", "#play")]
    expected += [
        [
            str(high + 1),
            sentence(catalogue.gettext(stake_limits) % {"low": low, "high": high}),
            False,
        ],
        ["1.5", field_words(whole, "stake", "sweets", "5 or 10"), False],
    ]
    tab.fill("#stake", str(low))
    tab.click("#custom-rules summary")
    rule = tab.locator("#custom-rules input[type=number]").first
    rule_id = f"#{rule.get_attribute('id')}"
    label = tab.inner_text(f"label[for={rule_id[1:]}]")
    rule_most = rule.get_attribute("max")
    shown.append(said(rule_id, str(int(str(rule_most)) + 1), "#play"))
    rule_words = catalogue.gettext("“%(label)s” must be a whole number from %(low)s to %(high)s.")
    expected.append(
        [
            str(int(str(rule_most)) + 1),
            rule_words
            % {"label": label, "low": number(rule.get_attribute("min")), "high": number(rule_most)},
            False,
        ]
    )
    next(tabs, None)
    assert shown == expected
    assert valid == ["", True]
