"""An operations lead's tasks in a real browser against gunicorn, with two operators: find
everything one player did, prove an entry is in a signed checkpoint, adjust with a second
operator's approval, change a table and see an open round keep its rules, and read the house
result with its interval (screenshots named ``operator-task-*``)."""

from __future__ import annotations

from typing import Any

import pytest
from browser_support import fresh_name
from browser_support import open_tab
from flask import Flask

from sota_casino.core import fairness
from sota_casino.core import merkle
from sota_casino.services import accounts
from sota_casino.services import approvals
from sota_casino.services import reports
from sota_casino.services import rounds
from sota_casino.services import settings
from sota_casino.web.operator_lists import PAGE_SIZE

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"


def _back_to_six_decks(app: Flask, proposer: int, approver: int) -> None:
    """Set Casino War back to six decks (two operators again), if the test left it otherwise."""
    session = _session(app)
    try:
        if settings.table_rules(session, "casino_war")["decks"] != 6:
            proposal = settings.propose_table_change(session, proposer, "casino_war", {"decks": 6})
            approvals.decide(session, approver, proposal.id, True)
    finally:
        session.close()


def _session(app: Flask) -> Any:
    return app.extensions["sota_casino.sessionmaker"]()


def seed_a_player_with_an_open_tie(app: Flask, prefix: str) -> tuple[str, int, int]:
    """A player who played until a Casino War tie waits for their decision: (name, id, round).

    Enough rounds settle first that the house's math of the table's rules has an interval
    whatever else ran on this server (:func:`settle_enough_for_an_interval`; an early tie is
    surrendered and play goes on), and the tie comes within the first page of the player's
    rounds (else another player plays)."""
    session = _session(app)
    try:
        settle_enough_for_an_interval(session, prefix)
        for _ in range(20):
            name = fresh_name(prefix)
            player = accounts.register(session, name, PASSWORD, address="127.0.0.1").id
            for played in range(PAGE_SIZE - 1):  # the first page is all the test reads
                round_ = rounds.place_casino_war_bet(session, player, 500, 100)
                if round_.status == "awaiting_decision":
                    if played >= 3:
                        return name, player, round_.id
                    rounds.decide_casino_war(session, player, round_.id, "surrender")
        raise AssertionError("twenty players and no tie on a first page")
    finally:
        session.close()


def settle_enough_for_an_interval(session: Any, prefix: str) -> None:
    """Settle Casino War rounds under the table's rules until the house's math of them has
    an interval (:data:`reports.INTERVAL_MIN_ROUNDS` rounds), whatever else ran on this
    server."""
    player = accounts.register(session, fresh_name(prefix), PASSWORD, address="127.0.0.1").id
    while True:
        round_ = rounds.place_casino_war_bet(session, player, 500, 0)
        if round_.status == "awaiting_decision":
            round_ = rounds.decide_casino_war(session, player, round_.id, "war")
        versions = reports.house_math(session).versions
        if next(v.rounds for v in versions if v.rules == round_.rules) >= (
            reports.INTERVAL_MIN_ROUNDS
        ):
            return


def log_in(page: Any, username: str) -> None:
    page.goto("/auth/login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(lambda url: "/auth/login" not in url)  # logged in: the cookie is set
    page.goto("/operator")


def test_two_operators_do_the_tasks_of_the_console(
    live_server: Any, chromium: Any, tab: Any, shoot: Any
) -> None:
    app = live_server.app
    name, player, tie = seed_a_player_with_an_open_tie(app, "tasha")
    session = _session(app)
    olga_name, otto_name = fresh_name("olga"), fresh_name("otto")
    try:
        olga_id = accounts.create_operator(session, olga_name, PASSWORD).id
        otto_id = accounts.create_operator(session, otto_name, PASSWORD).id
    finally:
        session.close()
    olga = tab
    log_in(olga, olga_name)

    # 1. Everything one player did: the lists whole, oldest first, and their downloads.
    olga.click(".console-nav >> text=Players")
    olga.fill("#q", name)
    olga.click("text=Search")
    olga.click(f"table.users-table >> text={name}")
    olga.click("[data-testid=player-lists] >> text=Rounds")
    olga.select_option("#l-order", "oldest")
    olga.click("form.list-jump >> text=Show")
    olga.wait_for_url("**order=oldest**")
    olga.locator("[data-testid=player-list] tbody tr").first.wait_for()
    keys = [
        int(k)
        for k in olga.locator("[data-testid=player-list] tbody tr").evaluate_all(
            "rows => rows.map(r => r.dataset.key)"
        )
    ]
    assert keys == sorted(keys) and tie in keys
    csv_link = olga.locator("[data-testid=export-csv]").get_attribute("href")
    download = olga.request.get(csv_link)
    assert download.ok and download.text().count("\n") == len(keys) + 1
    shoot(olga, "operator-task-player-rounds")

    # 2. One entry proven into a signed checkpoint, checked here with the public key alone.
    olga.click(".console-nav >> text=Audit log")
    olga.click("text=Make a checkpoint now")
    olga.fill("#f-subject", f"user:{player}")
    olga.click("text=Filter")
    entry = olga.locator("table.audit-entries tbody tr").first
    entry.locator("details").click()
    proof = olga.request.get(entry.locator("text=Inclusion proof (JSON)").get_attribute("href"))
    found = proof.json()
    checkpoint = found["checkpoint"]
    assert fairness.verify_signature(
        checkpoint["public_key_hex"], checkpoint["document"], checkpoint["signature"]
    )
    assert merkle.verify_inclusion(
        found["leaf_index"],
        checkpoint["document"]["size"],
        bytes.fromhex(found["entry"]["hash"]),
        [bytes.fromhex(h) for h in found["proof"]],
        bytes.fromhex(checkpoint["document"]["root"]),
    )
    shoot(olga, "operator-task-proof")

    # 3. A large adjustment: olga proposes, otto approves, and only then does it apply.
    olga.goto(f"/operator/players/{player}")
    chips_before = olga.locator("[data-testid=chips]").inner_text()
    olga.fill("#amount", "2500")
    olga.fill("#reason", "tournament prize")
    olga.click("text=Review adjustment")
    # A click returns once the next page starts; is_visible() would not wait for it to be drawn.
    olga.locator("[data-testid=needs-approval]").wait_for(state="visible")
    olga.click("text=Propose for approval")
    assert "Adjustment proposed" in olga.locator(".flash").inner_text()
    assert olga.locator("[data-testid=chips]").inner_text() == chips_before

    try:
        # 4. A table change: proposed by olga; the open tie keeps its six decks.
        olga.click(".console-nav >> text=Tables")
        olga.select_option("#decks", "4")
        olga.click("text=Save Casino War settings")
        assert "proposed" in olga.locator(".flash").inner_text()
        assert olga.locator("#decks").input_value() == "6"

        for otto in open_tab(chromium, live_server, viewport={"width": 1280, "height": 860}):
            log_in(otto, otto_name)
            otto.click(".console-nav >> [data-testid=nav-approvals]")
            shoot(otto, "operator-task-approvals")
            for kind in ("adjustment", "table"):
                row = otto.locator(f"tr[data-kind={kind}]").filter(has_text=olga_name).first
                row.locator("text=Approve").click()
                assert "approved and applied" in otto.locator(".flash").inner_text()
            otto.goto(f"/operator/players/{player}")
            assert otto.locator("[data-testid=chips]").inner_text() != chips_before
            otto.click(".console-nav >> text=Tables")
            assert otto.locator("#decks").input_value() == "4"
            history = otto.locator("table.table-history tbody tr").first.inner_text()
            assert olga_name in history and f"approved by {otto_name}" in history

        session = _session(app)
        try:
            settled = rounds.decide_casino_war(session, player, tie, "war")
            assert settled.rules["decks"] == 6  # the rules it started with
            versions = reports.house_math(session).versions
            six_decks = next(v.version for v in versions if v.rules == settled.rules)
            # A settled round under the new rules (a tie settles once it is decided).
            fresh = rounds.place_casino_war_bet(session, player, 500, 0)
            if fresh.status == "awaiting_decision":
                rounds.decide_casino_war(session, player, fresh.id, "war")
        finally:
            session.close()

        # 5. The house result against the math, per version played, with its interval.
        olga.click(".console-nav >> text=Ledger and house")
        versions = olga.locator("[data-testid=math-table] tbody tr[data-game=casino_war]")
        versions.first.wait_for()  # the page, not the one the click leaves
        labels = versions.evaluate_all("rows => rows.map(r => r.dataset.version)")
        assert any(label.startswith("6 decks") for label in labels)
        assert any(label.startswith("4 decks") for label in labels)
        six = olga.locator(f'[data-testid=math-table] tbody tr[data-version="{six_decks}"]')
        interval = six.locator("[data-testid=realized-interval]").inner_text()
        assert "[" in interval and "%" in interval
        shoot(olga, "operator-task-math")
    finally:
        _back_to_six_decks(app, otto_id, olga_id)  # the other tests on this server play six
