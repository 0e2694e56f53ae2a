"""The operator console in a real browser against gunicorn: log in, filter the log, adjust a
balance with its confirmation step, and find the adjustment in the log (screenshots named
``operator-*``)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from flask import Flask

from sota_casino.services import accounts
from sota_casino.services import rounds

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"


def seed_a_player(app: Flask, name: str) -> None:
    """A player who has played a few rounds, so the console has something to show."""
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        player = accounts.register(session, name, PASSWORD, address="127.0.0.1")
        for _ in range(12):
            round_ = rounds.place_casino_war_bet(session, player.id, 500, 100)
            if round_.status == "awaiting_decision":
                rounds.decide_casino_war(session, player.id, round_.id, "war")
        rounds.play_sota(session, player.id, 5, None, "nordic")
    finally:
        session.close()


def _wait_for_verdict(page: Any, testid: str, word: str) -> None:
    """Reload until the standing check, run by the served workers, has a verdict."""
    deadline = time.monotonic() + 20
    while "not checked yet" in page.locator(f"[data-testid={testid}]").inner_text():
        assert time.monotonic() < deadline, "the standing check gave no verdict"
        page.wait_for_timeout(500)
        page.reload()
    assert word in page.locator(f"[data-testid={testid}]").inner_text()


def test_an_operator_filters_the_log_adjusts_a_balance_and_finds_it_in_the_log(
    live_server: Any, tab: Any, shoot: Any
) -> None:
    page = tab
    seed_a_player(live_server.app, "alicia")
    created = live_server.app.test_cli_runner().invoke(
        args=["create-operator", "olga"], input=f"{PASSWORD}\n"
    )
    assert created.exit_code == 0, created.output

    page.goto("/auth/login")
    page.fill("input[name=username]", "olga")
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.click("header nav >> text=Console")
    _wait_for_verdict(page, "chain-status", "intact")
    page.click("text=Make a checkpoint now")
    assert "Signed a checkpoint" in page.locator(".flash").inner_text()
    shoot(page, "operator-audit")

    page.fill("#f-action", "round.settled")
    with page.expect_navigation():  # read the filtered page, not the one it replaces
        page.click("text=Filter")
    actions = page.locator("table.audit-entries tbody tr td:nth-child(4)").all_inner_texts()
    assert actions and set(actions) == {"round.settled"}
    page.locator("table.audit-entries details").first.click()
    shoot(page, "operator-audit-filtered")

    page.click(".console-nav >> text=Ledger and house")
    _wait_for_verdict(page, "ledger-status", "balanced")
    assert page.locator("svg.chart:visible").count() == 3  # each drawn wide and narrow, one shown
    shoot(page, "operator-ledger")

    page.click(".console-nav >> text=Players")
    page.fill("#q", "alic")
    page.click("text=Search")
    page.click("table.users-table >> text=alicia")
    chips_before = page.locator("[data-testid=chips]").inner_text()
    page.select_option("#direction", "credit")
    page.select_option("#currency", "chips")
    page.fill("#amount", "12.50")
    page.fill("#reason", "goodwill for a dropped connection")
    page.click("text=Review adjustment")
    assert page.locator("[data-testid=adjust-change]").inner_text().startswith("+12.50\u00a0chips")
    assert page.locator("[data-testid=chips]").count() == 0  # still on the confirmation page
    shoot(page, "operator-adjust-confirm")
    page.click("text=Apply adjustment")
    assert "Adjustment applied" in page.locator(".flash").inner_text()
    assert page.locator("[data-testid=chips]").inner_text() != chips_before
    page.locator("table.transfers-table tr[data-kind=adjust]").first.wait_for(state="visible")
    shoot(page, "operator-player")

    page.click(".console-nav >> text=Audit log")
    page.fill("#f-action", "money.adjust")
    # Other tests on the shared server adjust balances too: this one's reason finds it.
    page.fill("#f-text", "goodwill for a dropped connection")
    with page.expect_navigation():  # count the filtered page's rows, not the unfiltered one's
        page.click("text=Filter")
    rows = page.locator("table.audit-entries tbody tr")
    assert rows.count() == 1
    assert "goodwill for a dropped connection" in (rows.first.text_content() or "")

    page.click(".console-nav >> text=Tables")
    assert page.locator("#decks").input_value() == "6"
    shoot(page, "operator-tables")
