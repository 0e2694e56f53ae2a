"""Playing at the tables without page loads, on phones and desktops: every deal, decision and
rebet goes through the JSON API from the page, and every control of a round stays on screen."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import LiveServer
from browser_support import open_tab
from browser_support import wait_for_round
from test_languages_in_the_browser import choose_language
from test_player import leave_chips
from test_player import sign_up

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
from web_support import plant_server_seed  # noqa: E402

pytestmark = pytest.mark.browser

PHONES = {"390x844": {"width": 390, "height": 844}, "360x740": {"width": 360, "height": 740}}


@pytest.fixture(params=sorted(PHONES))
def small_phone(request: Any, chromium: Any, live_server: LiveServer) -> Iterator[Any]:
    """A phone-sized touch tab, at each of the phone sizes the tables must fit."""
    yield from open_tab(
        chromium,
        live_server,
        viewport=PHONES[request.param],
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
    )


MARK_PAGE = "() => { window.__samePage = 'still here'; }"
SAME_PAGE = (
    "() => window.__samePage === 'still here'"
    " && performance.getEntriesByType('navigation').length === 1"
)


def in_viewport(page: Any, selector: str) -> bool:
    """Tell whether the element is wholly inside the visible viewport, without scrolling."""
    return bool(
        page.evaluate(
            """selector => {
                const node = document.querySelector(selector);
                if (!node) return false;
                const box = node.getBoundingClientRect();
                return box.width > 0 && box.height > 0 && box.top >= 0 && box.left >= 0 &&
                    box.bottom <= window.innerHeight && box.right <= window.innerWidth &&
                    window.scrollY === 0;
            }""",
            selector,
        )
    )


def api_chips(page: Any) -> int:
    me = page.evaluate("async () => (await fetch('/api/v1/me')).json()")
    return int(me["balances"]["chips"])


def shown_chips(page: Any, selector: str) -> int:
    return int(float(page.inner_text(selector).replace(",", "")) * 100)


def test_casino_war_rounds_on_a_phone_need_no_page_load_and_no_scrolling(
    small_phone: Any, live_server: LiveServer, shoot: Any
) -> None:
    page = small_phone
    size = "{width}x{height}".format(**page.viewport_size)
    username = sign_up(page, "thumb")
    # Ties at rounds 2 and 5 only.
    plant_server_seed(live_server.app, username, {n: n in (1, 4) for n in range(8)})
    page.goto("/casino-war")
    page.evaluate(MARK_PAGE)
    # The menu leaves the screen to the table (it once took 210 px of it).
    menu = page.evaluate("document.querySelector('header.top').getBoundingClientRect().height")
    assert menu < 140, menu
    for control in ("#deal", "#bet", "button.chip.c25", "#clear-bet"):
        assert in_viewport(page, control), control
    ties = 0
    for number in range(1, 9):
        page.tap("#deal")
        wait_for_round(page, number - 1)
        if page.locator("#decision").count():
            ties += 1
            for control in ("#go-to-war", "#surrender"):
                assert in_viewport(page, control), (number, control)
            if ties == 1:
                shoot(page, f"phone-{size}-casino-war-tie", full_page=False)
            page.tap("#go-to-war" if ties == 1 else "#surrender")
            page.wait_for_selector("[data-testid=result]")
        assert page.evaluate(SAME_PAGE), f"round {number} loaded a page"
        for control in ("#deal", "#bet", "button.chip.c25", "[data-testid=result]"):
            assert in_viewport(page, control), (number, control)
        # The balance in the header and in the result are the ledger's.
        held = api_chips(page)
        assert shown_chips(page, "[data-header-chips]") == held
        assert shown_chips(page, "[data-testid=new-balance]") == held
    assert ties == 2
    shoot(page, f"phone-{size}-casino-war-result", full_page=False)
    # History on the narrow screen: each round a card with its result and net in view.
    page.goto("/history")
    width = page.viewport_size["width"]
    rows = page.locator("[data-round]")
    assert rows.count() == 8
    for index in range(rows.count()):
        for cell in ("result", "net"):
            box = rows.nth(index).locator(f"[data-testid={cell}]").bounding_box()
            assert box and box["width"] > 0 and 0 <= box["x"] <= box["x"] + box["width"] <= width
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    first = rows.first
    for cell in ("result", "net"):
        assert first.locator(f"[data-testid={cell}]").inner_text().strip(), cell
        box = first.locator(f"[data-testid={cell}]").bounding_box()
        assert box["y"] + box["height"] <= page.viewport_size["height"], cell
    shoot(page, f"phone-{size}-history", full_page=False)


def test_a_tie_you_cannot_raise_is_warned_at_bet_time_and_defaults_to_surrender(
    tab: Any, live_server: LiveServer
) -> None:
    username = sign_up(tab, "broke")
    leave_chips(live_server.app, username, 99_500)
    plant_server_seed(live_server.app, username, {0: True})
    tab.goto("/casino-war")
    tab.fill("#bet", "500")
    warning = tab.inner_text("[data-testid=afford]")
    assert "you would have 495\u00a0chips left" in warning and "could not raise 500" in warning
    tab.fill("#bet", "400")
    assert tab.is_hidden("[data-testid=afford]")
    tab.fill("#bet", "501")  # over the table's limit: a bet that cannot be placed
    assert tab.is_hidden("[data-testid=afford]")
    tab.fill("#bet", "500")
    tab.click("#deal")
    tab.wait_for_selector("#decision")
    # The page focuses the default choice once the tie is drawn.
    tab.wait_for_function("() => document.activeElement?.id === 'surrender'")
    assert tab.is_disabled("#go-to-war")
    assert "Going to war needs a raise of 500\u00a0chips, and you have 495" in tab.inner_text(
        "[data-testid=cannot-raise]"
    )
    tab.keyboard.press("Enter")
    tab.wait_for_selector("[data-testid=result]")
    assert "You surrendered" in tab.inner_text("[data-testid=result]")


def test_a_tie_drawn_in_the_page_says_in_finnish_grammar_what_surrendering_gives_back(
    tab: Any, live_server: LiveServer
) -> None:
    """Finnish writes the object of "saat" as "1 pelimerkin", and the page's banner as the
    server's: it said "saat takaisin 1 pelimerkki"."""
    username = sign_up(tab, "takaisin")
    plant_server_seed(live_server.app, username, {0: True, 1: True})
    choose_language(tab, "fi")
    tab.goto("/casino-war")
    gives_back = ("saat 1\u00a0pelimerkin takaisin.", "saat 5\u00a0pelimerkkiä takaisin.")
    for nonce, (ante, said) in enumerate(zip(("2", "10"), gives_back, strict=True)):
        tab.fill("#bet", ante)
        tab.click("#deal")
        wait_for_round(tab, nonce)
        assert said in tab.inner_text("[data-testid=tie]")
        tab.click("#surrender")
        tab.wait_for_selector("[data-testid=result]")


def test_the_tie_bet_result_shows_at_the_tie_and_the_bet_is_kept_for_a_rebet(
    tab: Any, live_server: LiveServer
) -> None:
    username = sign_up(tab, "rebet")
    plant_server_seed(live_server.app, username, {0: True, 1: False})
    tab.goto("/casino-war")
    tab.fill("#bet", "10")
    tab.fill("#tie_bet", "1")
    tab.click("h1")  # out of the field: keys play the table
    tab.keyboard.press("d")
    tab.wait_for_selector("#decision")
    assert "Your tie bet of 1 won 10\u00a0chips" in tab.inner_text("[data-testid=tie-bet-result]")
    tab.locator("body").press("w")
    tab.wait_for_selector("[data-testid=result]")
    assert tab.input_value("#bet") == "10" and tab.input_value("#tie_bet") == "1"
    assert tab.is_visible("#rebet")
    tab.fill("#bet", "3")  # changed, but the rebet key deals the last bet again
    tab.click("h1")
    tab.keyboard.press("r")
    wait_for_round(tab, 1)
    summary = tab.inner_text("#bet-summary")
    assert "Ante 10" in summary and "Tie bet 1" in summary
    # A page load keeps both amounts too.
    tab.goto("/casino-war")
    assert tab.input_value("#bet") == "10" and tab.input_value("#tie_bet") == "1"


def test_chips_start_a_new_bet_instead_of_adding_to_the_suggestion(tab: Any) -> None:
    sign_up(tab, "chips")
    tab.goto("/casino-war")
    assert tab.input_value("#bet") == "5"
    tab.click("button.chip.c25")
    assert tab.input_value("#bet") == "25"
    tab.locator("body").press("3")
    assert tab.input_value("#bet") == "50"
    tab.fill("#bet", "7")
    tab.click("button.chip.c1")
    assert tab.input_value("#bet") == "8"
    tab.click("#chips-to-tie")
    tab.click("button.chip.c5")
    tab.click("button.chip.c5")
    assert tab.input_value("#tie_bet") == "10"


def test_a_refused_bet_keeps_what_was_typed(tab: Any, live_server: LiveServer) -> None:
    username = sign_up(tab, "keep")
    leave_chips(live_server.app, username, 1_200)
    tab.goto("/casino-war")
    tab.evaluate(MARK_PAGE)
    tab.expected_refusals += [409]
    tab.click("button.chip.c25")
    tab.click("#deal")
    tab.wait_for_selector("#form-error")
    assert tab.inner_text("#form-error") == (
        "You have 12\u00a0chips, not enough for this bet of 25\u00a0chips. Bet less, or top up in "
        "the lobby once you are below 100\u00a0chips."
    )
    assert tab.input_value("#bet") == "25"
    assert tab.evaluate(SAME_PAGE)


def test_without_javascript_the_table_still_deals_and_keeps_the_bet(
    chromium: Any, live_server: LiveServer
) -> None:
    pages = open_tab(
        chromium, live_server, viewport={"width": 1280, "height": 860}, java_script_enabled=False
    )
    page = next(pages)
    sign_up(page, "nojs")
    page.goto("/casino-war")
    page.fill("#bet", "7")
    page.click("#deal")
    page.wait_for_url("**/casino-war/rounds/*")
    if page.locator("#decision").count():
        page.click("#surrender")
    assert page.locator("[data-testid=result]").count() == 1
    assert page.input_value("#bet") == "7"
    with pytest.raises(StopIteration):
        next(pages)


def test_the_header_shows_the_balance_on_every_page(tab: Any) -> None:
    sign_up(tab, "header")
    for url in ("/lobby", "/casino-war", "/sota", "/history", "/fairness", "/auth/password"):
        tab.goto(url)
        assert tab.inner_text("[data-testid=header-balance]").split() == [
            "1,000",
            "chips",
            "100",
            "sweets",
        ], url


def test_the_exact_figures_are_a_readable_page_and_the_json_stays_in_the_api(tab: Any) -> None:
    sign_up(tab, "figures")
    tab.goto("/casino-war")
    tab.click("[data-testid=house-edge] a:has-text('exact figures')")
    tab.wait_for_url("**/casino-war/odds")
    assert tab.evaluate("document.contentType") == "text/html"
    assert tab.locator("h1").inner_text() == "Casino War: the exact odds"
    assert tab.locator("main table.data tr").count() > 2
    assert "{" not in tab.inner_text("main")
    figures = tab.evaluate("async () => (await fetch('/api/v1/casino-war/odds')).json()")
    assert isinstance(figures, dict) and figures


def test_the_sota_tables_deal_button_is_in_reach_on_a_phone(
    small_phone: Any, live_server: LiveServer
) -> None:
    """The Sota table's options run longer than a phone's screen: Deal stays at its bottom edge."""
    sign_up(small_phone, "sotaphone")
    small_phone.goto(f"{live_server.url}/sota")
    assert in_viewport(small_phone, "#play")


@pytest.mark.parametrize(
    ("language", "one", "more"), [("en", "chip", "chips"), ("fi", "pelimerkki", "pelimerkkiä")]
)
def test_the_chips_shown_after_a_round_take_the_plural_form_of_their_amount(
    tab: Any, live_server: LiveServer, language: str, one: str, more: str
) -> None:
    """After a round dealt in the page, the header and the bet panel's pill rewrote their
    numbers only: 1 chip and an ante of 1 left "0 chip" or "2 chip" ("2 pelimerkki")."""
    username = sign_up(tab, "chipunits")
    leave_chips(live_server.app, username, 100)
    plant_server_seed(live_server.app, username, {0: False})  # no tie: the round settles
    tab.goto("/casino-war")
    if language != "en":
        choose_language(tab, language)
    header = "[data-testid=header-balance]"
    assert tab.inner_text(header).split()[:2] == ["1", one]
    assert tab.inner_text("[data-testid=chips-balance]").split() == ["1", one]
    tab.fill("#bet", "1")
    tab.click("#deal")
    wait_for_round(tab, 0)
    tab.wait_for_selector("[data-testid=result]")
    left = str(api_chips(tab) // 100)
    assert left in ("0", "2")
    assert tab.inner_text(header).split()[:2] == [left, more]
    assert tab.inner_text("[data-testid=chips-balance]").split() == [left, more]
