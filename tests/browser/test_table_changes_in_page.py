"""A Casino War page drawn before an operator changed the table: its bet is refused (the player
agreed to other rules), and one action shows the new rules to bet under, in every language and
on a narrow phone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from browser_support import LiveServer
from browser_support import fresh_name
from browser_support import open_tab
from browser_support import sign_up
from browser_support import wait_for_round
from test_languages_in_the_browser import choose_language
from test_languages_in_the_browser import words
from test_operator_console import PASSWORD

from sota_casino.services import accounts
from sota_casino.services import approvals
from sota_casino.services import settings

pytestmark = pytest.mark.browser

REFUSAL = (
    "The table's rules changed since this page was shown, so your bet was not placed: "
    "look at the new rules before you bet."
)
SHOW_NEW_RULES = "Show the new rules"

#: Each language once: English on a desktop, the others on a 360 px phone.
TABS = {
    "en": {"viewport": {"width": 1280, "height": 860}},
    **{
        language: {
            "viewport": {"width": 360, "height": 740},
            "is_mobile": True,
            "has_touch": True,
            "device_scale_factor": 2,
        }
        for language in ("fi", "nb", "pt")
    },
}


@pytest.fixture(params=sorted(TABS))
def language_tab(request: Any, chromium: Any, live_server: LiveServer) -> Iterator[Any]:
    """A player's tab in the language of the parameter, signed up and on the Casino War page."""
    for page in open_tab(chromium, live_server, **TABS[request.param]):
        sign_up(page, "stale")
        if request.param != "en":
            choose_language(page, request.param)
        page.goto("/casino-war")
        yield page


@contextmanager
def tie_payout_changed(live_server: LiveServer) -> Iterator[int]:
    """Change Casino War's tie payout as two operators do (one proposes, one approves); yield
    the new payout, and put the old one back for the other tests of the shared server."""
    session = live_server.app.extensions["sota_casino.sessionmaker"]()
    proposer, approver = (
        accounts.create_operator(session, fresh_name(name), PASSWORD).id
        for name in ("olga", "otto")
    )

    def pay_ties(payout: int) -> None:
        change = {"tie_payout": payout}
        proposal = settings.propose_table_change(session, proposer, "casino_war", change)
        approvals.decide(session, approver, proposal.id, True)

    old = settings.table_rules(session, "casino_war")["tie_payout"]
    new = old - 2 if old > 2 else old + 2
    try:
        pay_ties(new)
        yield new
    finally:
        pay_ties(old)
        session.close()


def shown_rules(page: Any) -> dict[str, Any]:
    """The rules the page shows and sends with a bet."""
    return dict(json.loads(page.get_attribute("#bet-form input[name=rules]", "value")))


def chips_held(page: Any) -> int:
    me = page.evaluate("async () => (await fetch('/api/v1/me')).json()")
    return int(me["balances"]["chips"])


#: Whether the element is wholly on the screen, and how wide the page is.
ON_SCREEN = """selector => {
    const box = document.querySelector(selector).getBoundingClientRect();
    return { inside: box.top >= 0 && box.left >= 0 && box.bottom <= innerHeight
               && box.right <= innerWidth,
             wide: document.scrollingElement.scrollWidth };
}"""


def test_a_bet_refused_for_changed_rules_leads_to_the_new_rules_in_one_action(
    language_tab: Any, live_server: LiveServer
) -> None:
    page = language_tab
    language = page.get_attribute("html", "lang")
    catalogue = words(language)
    payout_words = catalogue.gettext("tie pays %(payout)s to 1")
    old = shown_rules(page)["tie_payout"]
    assert payout_words % {"payout": old} in page.inner_text("[data-testid=limits]")
    held = chips_held(page)

    with tie_payout_changed(live_server) as new:
        page.expected_refusals += [409]
        page.click("#deal")
        page.wait_for_selector("#form-error")
        refusal = page.inner_text("#form-error")
        # The one way on is in the refusal, with the focus: the keyboard's next Enter takes it.
        assert page.evaluate("document.activeElement.id") == "new-rules", refusal
        assert refusal.startswith(catalogue.gettext(REFUSAL)), refusal
        assert language == "en" or not refusal.startswith(REFUSAL), "not translated"
        assert page.inner_text("#new-rules") == catalogue.gettext(SHOW_NEW_RULES)
        shown = page.evaluate(ON_SCREEN, "#new-rules")
        assert shown["inside"] and shown["wide"] <= page.viewport_size["width"], shown
        assert chips_held(page) == held  # nothing was bet

        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert shown_rules(page)["tie_payout"] == new
        assert payout_words % {"payout": new} in page.inner_text("[data-testid=limits]")
        with page.expect_response(lambda answer: answer.request.method == "POST") as dealt:
            page.click("#deal")
        assert dealt.value.status == 201, dealt.value.text()
        assert dealt.value.json()["rules"]["tie_payout"] == new
        wait_for_round(page, 0)
