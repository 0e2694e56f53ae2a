"""The fairness records on a shared computer: each player's are kept apart in the browser, so
the next player to log in neither sees nor downloads them and the page's verifier does not read
them, and the player's own survive logging out and in again. Records an earlier version kept in
one store for everyone are split by the player each names.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import forgeries
import pytest
from browser_support import sign_up
from test_fairness_records import VERIFY_FIRST
from test_fairness_records import play_a_war_and_a_plain_round
from test_fairness_records import service_key
from test_fairness_records import verify_in_page

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_verify_cli import _run  # noqa: E402
from web_support import PASSWORD  # noqa: E402
from web_support import plant_server_seed  # noqa: E402

pytestmark = pytest.mark.browser

MINE = "window.SotaRecords.exportDocument()"
PLAYER_ID = "() => Number(document.querySelector('meta[name=sota-player]').content)"


def log_out(tab: Any) -> None:
    with tab.expect_navigation():
        tab.click("header button:has-text('Log out')")
    assert tab.locator("meta[name=sota-player]").count() == 0


def log_in(tab: Any, username: str) -> None:
    tab.goto("/auth/login")
    tab.fill("#username", username)
    tab.fill("#password", PASSWORD)
    with tab.expect_navigation():
        tab.click("main button[type=submit]")
    assert tab.locator("meta[name=sota-player]").count() == 1


def download(tab: Any, button: str) -> Any:
    with tab.expect_download() as done:
        tab.click(button)
    return json.loads(Path(done.value.path()).read_text())


def deal_a_round(tab: Any) -> None:
    """One Casino War round, to its end, and the fairness page (which records the next pair)."""
    tab.goto("/casino-war")
    tab.click("#deal")
    tab.wait_for_selector("[data-testid=result], #go-to-war")
    if tab.locator("#go-to-war").count():
        tab.click("#go-to-war")
        tab.wait_for_selector("[data-testid=result]")
    tab.goto("/fairness")


def test_the_next_player_in_the_browser_neither_sees_nor_exports_the_records_of_the_last(
    tab: Any, live_server: Any, tmp_path: Path
) -> None:
    """Log in as A, play, log out, log in as B: "My records" held A's bets, client seeds and
    decisions, and the page's verifier read them. Now B's hold none of them; A's come back
    when A logs in again, and still catch a rewrite in the page and offline."""
    alice = sign_up(tab, "alice")
    plant_server_seed(live_server.app, alice, {0: True, 1: False})
    play_a_war_and_a_plain_round(tab)
    tab.goto("/fairness")
    tab.fill("#client_seed", "alice's own seed")
    tab.click("#rotate")
    tab.wait_for_selector("[data-verify]")
    url = tab.locator("[data-verify]").first.get_attribute("data-bundle-url")
    bundle = tab.evaluate("async url => (await fetch(url)).json()", url)
    hers = tab.evaluate(MINE)
    assert len(hers["bets"]) == 2 and [a["action"] for a in hers["actions"]] == ["war"]
    assert [r["client_seed"] for r in hers["rotations"]] == ["alice's own seed"]
    log_out(tab)

    sign_up(tab, "bob")
    bob_id = tab.evaluate(PLAYER_ID)
    tab.goto("/fairness")
    summary = tab.locator("[data-records-summary]").inner_text()
    assert "0\u00a0bets · 0\u00a0decisions or moves" in summary, summary
    exported = download(tab, "#export-records")
    assert (exported["actions"], exported["bets"], exported["rotations"]) == ([], [], [])
    assert exported["commitments"] and all(
        c["document"]["user_id"] == bob_id for c in exported["commitments"]
    )
    assert not any(c in exported["commitments"] for c in hers["commitments"])
    # The page's verifier compares her bundle with nothing of hers.
    compared = tab.evaluate("b => window.SotaRecords.compareBundle(b)", bundle)
    assert (compared["commitment"], compared["rounds"], compared["problems"]) == (None, {}, [])
    assert tab.locator("[data-unplaced-records]").is_hidden()
    log_out(tab)

    log_in(tab, alice)
    tab.goto("/fairness")
    assert tab.evaluate(MINE) == hers
    verdict = verify_in_page(tab)
    assert verdict.startswith("✓ All 2\u00a0rounds verified"), verdict
    assert "the decisions and moves recorded here for 1\u00a0round equal the receipts" in verdict
    surrendered, war_round = forgeries.war_into_surrender(bundle, service_key(live_server))

    # "My records" is still the file the offline verifier reads, and catches the rewrite.
    records = tmp_path / "records.json"
    records.write_text(json.dumps(download(tab, "#export-records")))
    key = bundle["public_key_hex"]
    for name, checked in (("honest.json", bundle), ("forged.json", surrendered)):
        (tmp_path / name).write_text(json.dumps(checked))
    code, out, _ = _run(
        "--records", str(records), "--public-key", key, str(tmp_path / "honest.json")
    )
    assert code == 0, out
    code, out, _ = _run(
        "--records", str(records), "--public-key", key, str(tmp_path / "forged.json")
    )
    assert code == 1 and 'but the player sent "war" (recorded)' in out, out
    # And so does the page's verifier (which keeps what it found signed: last).
    caught = tab.evaluate(VERIFY_FIRST, surrendered).split(" | ")
    assert f"round {war_round}: you chose war, the receipt says surrender" in caught, caught


#: Put ``records``, ``verified`` and ``warnings`` where an earlier version kept every player's
#: records together, leaving the key pinned, and forget ``forget`` (the names of a player's
#: stores), as if that player had not logged in since.
KEEP_UNSCOPED = """([records, verified, warnings, forget]) => {
    localStorage.setItem("sota-casino.records.v1", JSON.stringify(records));
    localStorage.setItem("sota-casino.verified.v1", JSON.stringify(verified));
    localStorage.setItem("sota-casino.rotation-warnings.v1", JSON.stringify(warnings));
    Object.values(forget).forEach(name => localStorage.removeItem(name));
}"""
UNSCOPED_LEFT = """() => ["sota-casino.records.v1", "sota-casino.verified.v1",
    "sota-casino.rotation-warnings.v1"].filter(name => localStorage.getItem(name) !== null)"""


def test_records_an_earlier_version_kept_for_everyone_are_split_by_the_player_each_names(
    tab: Any, live_server: Any
) -> None:
    alice = sign_up(tab, "alice")
    plant_server_seed(
        live_server.app, alice, {0: False}
    )  # no tie: the round's only record is its bet
    deal_a_round(tab)
    hers = tab.evaluate(MINE)
    her_stores = tab.evaluate("window.SotaRecords.stores.mine")
    her_pair = hers["bets"][0]["seed_pair_id"]
    her_next = next(
        c["document"]["seed_pair_id"]
        for c in hers["commitments"]
        if c["document"]["seed_pair_id"] != her_pair
    )
    log_out(tab)
    bob = sign_up(tab, "bob")
    plant_server_seed(live_server.app, bob, {0: False})
    deal_a_round(tab)
    his = tab.evaluate(MINE)
    his_round = his["bets"][0]["round_id"]

    # A decision kept with no pair is placed by its round, which his bet names; one of a round
    # no record places, a rotation of a pair no commitment names, and a document named by
    # nothing of either, are no one's.
    his_unpaired = {"round_id": his_round, "seed_pair_id": None, "nonce": 0}
    his_unpaired |= {"game": "casino_war", "action": "surrender"}
    nobodys = {"round_id": 987654, "seed_pair_id": None, "nonce": None}
    nobodys |= {"game": "casino_war", "action": "war"}
    her_rotation = {"seed_pair_id": her_next, "client_seed": "alice's seed"}
    nobodys_rotation = {"seed_pair_id": 987654, "client_seed": "whose?"}
    seen = {"sha256": "ab" * 32, "seen_at": "2026-01-01T00:00:00.000Z"}
    her_document = {"name": f"the commitment document of seed pair {her_pair}", **seen}
    his_receipt = {"name": f"the receipt of round {his_round}", **seen}
    nobodys_document = {"name": "a document", **seen}
    warning = {"at": "2026-01-02T00:00:00.000Z", "client_seed": "alice's seed"}
    warning |= {"seed_pair_id": her_next, "differences": ["something else started"]}
    everyone = {
        "commitments": hers["commitments"] + his["commitments"],
        "actions": hers["actions"] + his["actions"] + [his_unpaired, nobodys],
        "rotations": [her_rotation, nobodys_rotation],
        "bets": hers["bets"] + his["bets"],
    }
    verified = [her_document, his_receipt, nobodys_document]
    # His own store keeps what he recorded since: merged with the old, nothing twice.
    tab.evaluate(KEEP_UNSCOPED, [everyone, verified, [warning], her_stores])
    tab.goto("/fairness")

    assert tab.evaluate(UNSCOPED_LEFT) == []
    mine = tab.evaluate(MINE)
    assert mine["commitments"] == his["commitments"]
    assert mine["actions"] == his["actions"] + [his_unpaired]
    assert (mine["bets"], mine["rotations"]) == (his["bets"], [])
    assert mine["verified"] == [his_receipt]
    assert download(tab, "#export-records") == mine
    assert tab.locator("[data-testid=rotation-mismatch]").count() == 0
    # What names no player is offered apart, for an explicit download only.
    offer = tab.locator("[data-unplaced-records]")
    assert offer.is_visible()
    unplaced = download(tab, "#export-unplaced-records")
    assert (unplaced["format"], unplaced["v"]) == ("sota-casino-records", 1)
    assert (unplaced["commitments"], unplaced["bets"]) == ([], [])
    assert unplaced["actions"] == [nobodys] and unplaced["rotations"] == [nobodys_rotation]
    assert unplaced["verified"] == [nobodys_document]
    log_out(tab)

    log_in(tab, alice)
    tab.goto("/fairness")
    mine = tab.evaluate(MINE)
    assert {name: mine[name] for name in ("commitments", "actions", "bets")} == {
        name: hers[name] for name in ("commitments", "actions", "bets")
    }
    assert mine["rotations"] == [her_rotation] and mine["verified"] == [her_document]
    assert "alice's seed" in tab.locator("[data-testid=rotation-mismatch]").inner_text()


def test_a_store_kept_for_everyone_waits_while_no_player_is_logged_in(tab: Any) -> None:
    """Logged out, the page knows no player to place the records with: it leaves them, and
    keeps nothing of its own."""
    tab.goto("/fairness")
    old = {"commitments": [], "actions": [], "rotations": [], "bets": []}
    tab.evaluate(KEEP_UNSCOPED, [old, [], [], {}])
    tab.reload()
    assert len(tab.evaluate(UNSCOPED_LEFT)) == 3
    kept = tab.evaluate(
        """() => { window.SotaRecords.recordAction({round_id: 7, seed_pair_id: 3, nonce: 0,
            game: "casino_war", action: "war"}); return window.SotaRecords.exportDocument(); }"""
    )
    assert kept["actions"] == []
    assert tab.evaluate("JSON.parse(localStorage.getItem('sota-casino.records.v1'))") == old


#: The answer of a rotation that never got through.
LOST_PAGE = '<link rel="icon" href="data:,"><p>lost</p>'


def test_a_rotation_one_player_left_pending_in_a_tab_warns_no_other_player(tab: Any) -> None:
    """A rotation whose answer never came waits in the tab (sessionStorage) for the page that
    shows the pair it started. The next player to log in there was shown the warning it
    raised against their own pair, with the client seed the player before had sent."""
    sign_up(tab, "alice")
    tab.goto("/fairness")
    tab.fill("#client_seed", "alice's secret seed")
    tab.route(
        "**/fairness/rotate",
        # An icon of its own, as the service's pages have: without one, Chromium asks for
        # /favicon.ico when it gets round to it, a 404 that fails the test at random.
        lambda route: route.fulfill(status=200, content_type="text/html", body=LOST_PAGE),
    )
    with tab.expect_navigation():
        tab.click("#rotate")
    tab.unroute("**/fairness/rotate")
    assert "alice's secret seed" in tab.evaluate(
        "() => sessionStorage.getItem('sota-casino.pending-rotation.v1')"
    )
    tab.goto("/lobby")
    log_out(tab)

    sign_up(tab, "bob")
    tab.goto("/fairness")
    assert tab.locator("[data-testid=rotation-mismatch]").count() == 0
    assert tab.evaluate("() => sessionStorage.getItem('sota-casino.pending-rotation.v1')") is None
