"""How to play and the player's statistics in a real browser: the rules pages draw their
examples with cards, the rule picker's links land on each option, and after a few rounds the
statistics page equals the sums of the player's own rounds (as the API lists them), its chart's
labels readable."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

import pytest
from browser_support import LiveServer
from browser_support import sign_up
from browser_support import wait_for_round
from test_layout import operator_in
from test_narrow_phones import a_player_with_rounds
from test_narrow_phones import chart_text_problems

from sota_casino.core import sota

pytestmark = pytest.mark.browser


def test_the_casino_war_rules_draw_a_war_with_cards(tab: Any, shoot: Any) -> None:
    tab.goto("/rules/casino-war")
    example = tab.locator("[data-testid=war-example]")
    assert example.locator(".card").count() == 7  # the tie, three burned cards, the war
    assert example.locator(".card.mini").count() == 3
    assert example.locator(".card[aria-label='king of diamonds']").is_visible()
    box = example.locator(".card >> nth=0").bounding_box()
    assert box["width"] > 40 and box["height"] > box["width"]  # drawn as a card, not text
    assert "a net win of +10\u00a0chips" in tab.inner_text("[data-testid=example-result]")
    assert tab.inner_text("[data-testid=house-edge] [data-field=war]") == "2.8771\u00a0%"
    shoot(tab, "player-rules-casino-war")


def test_the_sota_rules_draw_a_war_and_the_picker_links_to_each_option(
    tab: Any, shoot: Any
) -> None:
    tab.goto("/rules/sota")
    example = tab.locator("[data-testid=war-example]")
    assert example.locator(".card").count() == 10
    assert example.locator(".card.face-down-shown").count() == 6
    for option in fields(sota.SotaRules):
        assert tab.locator(f"#opt-{option.name}").count() == 1, option.name
    shoot(tab, "player-rules-sota")
    sign_up(tab, "rules")
    tab.goto("/sota")
    tab.click("#custom-rules summary")
    tab.click("[data-option-link=gather]")
    tab.wait_for_url("**/rules/sota#opt-gather")
    target = tab.locator("#opt-gather")
    assert target.is_visible()
    top = target.bounding_box()["y"]
    assert -1 < top < tab.viewport_size["height"] / 2  # scrolled to the option


def amount(text: str) -> int:
    """Read ``+1,234.50 chips`` or ``−3 sweets`` as minor units."""
    found = re.match(r"([+−]?)([\d,]+)(?:\.(\d\d))?\u00a0(chips|sweets)", text.strip())
    assert found, text
    sign, whole, cents, currency = found.groups()
    value = int(whole.replace(",", "")) * (100 if currency == "chips" else 1) + int(cents or 0)
    return -value if sign == "−" else value


def test_the_statistics_after_a_few_rounds_equal_the_players_own_rounds(
    tab: Any, shoot: Any
) -> None:
    sign_up(tab, "stats")
    tab.goto("/casino-war")
    for nonce in range(3):  # played in the page: wait for each round, not for a page load
        tab.click("#deal")
        wait_for_round(tab, nonce)
        if tab.locator("#decision").count():
            tab.click("#go-to-war")
            tab.wait_for_selector("[data-testid=result]")
    for _ in range(2):
        tab.goto("/sota")
        tab.click("#play")
        tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    tab.click("nav[aria-label=main] >> text=Statistics")
    tab.wait_for_url("**/stats")
    listed = tab.evaluate(
        "fetch('/api/v1/rounds?limit=100').then(r => r.json()).then(page => page.rounds)"
    )
    for game in ("casino_war", "sota"):
        own = [r for r in listed if r["game"] == game and r["status"] == "settled"]
        row = tab.locator(f"[data-testid=totals] tr[data-game={game}]")
        assert int(row.locator("[data-field=rounds]").inner_text()) == len(own)
        assert amount(row.locator("[data-field=handle]").inner_text()) == sum(
            r["staked"] for r in own
        )
        assert amount(row.locator("[data-field=net]").inner_text()) == sum(r["net"] for r in own)
    assert tab.locator("[data-testid=balance-chips] svg.chart.wide").is_visible()
    assert tab.locator("[data-testid=balance-sweets] svg.chart.wide").is_visible()
    assert "%" in tab.inner_text("[data-testid=war-edge] [data-field=expected]")
    assert tab.locator("[data-testid=luck]").is_visible()
    wins = sum(
        int(w) for w in tab.locator("[data-testid=sota-seats] [data-field=wins]").all_inner_texts()
    )
    sota_rounds = [r for r in listed if r["game"] == "sota"]
    assert wins == sum(1 for r in sota_rounds if r["net"] > 0)
    shoot(tab, "player-statistics")


def test_chart_labels_on_a_laptop_are_readable_and_not_oversized(
    tab: Any, live_server: LiveServer
) -> None:
    """The wide drawing where a chart has room, the narrow one in half a panel (the console's
    result charts): either way a label is 11 to 24 px high and whole."""
    a_player_with_rounds(tab, live_server, "en")
    problems = chart_text_problems(tab, "/stats", 11, 24)
    tab.context.clear_cookies()
    operator_in(tab, live_server, "en")
    problems += chart_text_problems(tab, "/operator/ledger", 11, 24)
    assert problems == [], problems
