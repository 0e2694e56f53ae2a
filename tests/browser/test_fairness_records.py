"""The fairness page against a cheating casino, in Chromium: the key this browser pinned and
the player's own records (the commitment shown before play, the decisions and moves sent) catch
what signatures alone cannot, and real bundles of both games are replayed whole and verified.

Each forgery is built from a real bundle by ``forgeries.py`` and, except for the one signed with
another key, signed with the service's real key, so that nothing inside the bundle gives it away.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import forgeries
import pytest
from browser_support import DESKTOP
from browser_support import FORGET_WITNESS
from browser_support import deal_on_prisoners_of_war
from browser_support import lay_the_dealers_choices
from browser_support import open_tab
from browser_support import sign_up
from browser_support import wait_for_round
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from sota_casino.core import anchors
from sota_casino.core import fairness

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import bundles  # noqa: E402
from web_support import plant_server_seed  # noqa: E402

pytestmark = pytest.mark.browser

#: The fields of the records the page keeps, and of the file "My records" downloads.
RECORD_FIELDS = {
    "format",
    "v",
    "public_key_hex",
    "commitments",
    "actions",
    "rotations",
    "bets",
    "verified",
}
VERIFY = "async bundle => (await window.SotaVerify.verifyBundle(bundle)).problems.join(' | ')"
#: As VERIFY, in a browser that has verified no bundle before: each forgery below re-signs a
#: document of the one bundle, and the page would name it an equivocation with the documents it
#: verified before (test_a_bundle_re_signed_after_the_page_verified_another_fails_as_an_...).
VERIFY_FIRST = (
    "async bundle => { localStorage.removeItem(window.SotaRecords.stores.mine.verified);"
    " return (await window.SotaVerify.verifyBundle(bundle)).problems.join(' | '); }"
)
#: Trust only ``key`` from now on, in a browser that remembers nothing yet (what the page
#: remembers is kept only under the key it trusts).
TRUST_ONLY = (
    f"async key => {{ localStorage.clear(); await ({FORGET_WITNESS})();"
    " window.SotaRecords.acceptKey(key); }"
)
WITHOUT_RECORDS = (
    "async bundle => (await window.SotaVerify.verifyBundle(bundle, {records: null}))"
    ".problems.join(' | ')"
)
#: A bundle anchored into a log of the test's own carries checkpoints the service never signed:
#: the page's witness asks the service to prove them against the checkpoint it keeps, and is
#: refused (404), as it should be.
CONSISTENCY = "/api/v1/transparency/consistency"


def service_key(live_server: Any) -> Ed25519PrivateKey:
    return fairness.load_private_key(Path(live_server.app.config["SIGNING_KEY_FILE"]).read_bytes())


def play_a_war_and_a_plain_round(tab: Any) -> None:
    """Nonce 0 ties (planted) and goes to war through the table's form; nonce 1 does not tie."""
    tab.goto("/casino-war")
    tab.click("#deal")
    tab.click("#go-to-war")
    tab.wait_for_selector("[data-testid=result]")
    tab.click("#deal")
    # The war round's result stands until this one is drawn: wait for this round's own.
    wait_for_round(tab, 1)


def play_prisoners_of_war(tab: Any) -> int:
    """Play a short Prisoners of War game, every move sent by the page's move form."""
    deal_on_prisoners_of_war(tab, rule_max_tricks="40")
    moves = lay_the_dealers_choices(tab)
    tab.wait_for_selector("[data-testid=result]", state="attached")  # shown when the replay ends
    return moves


@pytest.fixture(scope="module")
def played(chromium: Any, live_server: Any) -> dict[str, Any]:
    """A player's revealed pair of three real rounds (a war, a plain round, Prisoners of War),
    played in a tab of its own: its bundle, where the page shows it, and the tab's storage
    (the session cookie, the records, the pinned key and what the log witness keeps) as the
    play left it. Played once for the module's tests, which only read the pair: each opens a
    tab of its own on that storage (:func:`tab`), so none sees another's verifications."""
    tabs = open_tab(chromium, live_server, viewport=DESKTOP)
    tab = next(tabs)
    username = sign_up(tab, "records")
    plant_server_seed(live_server.app, username, {0: True, 1: False})
    play_a_war_and_a_plain_round(tab)
    moves = play_prisoners_of_war(tab)
    assert moves >= 1
    tab.goto("/fairness")
    tab.click("#rotate")
    tab.wait_for_selector("[data-verify]")
    url = tab.locator("[data-verify]").first.get_attribute("data-bundle-url")
    bundle = tab.evaluate("async url => (await fetch(url)).json()", url)
    state = tab.context.storage_state(indexed_db=True)
    next(tabs, None)  # closes the tab, failing on any error it met
    return {"bundle": bundle, "url": url, "moves": moves, "state": state}


@pytest.fixture
def tab(chromium: Any, live_server: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh desktop tab; for a test of the revealed pair (:func:`revealed`), with the
    storage of the tab that played it."""
    options = {}
    if "revealed" in request.fixturenames:
        options["storage_state"] = request.getfixturevalue("played")["state"]
    yield from open_tab(chromium, live_server, viewport=DESKTOP, **options)


@pytest.fixture
def revealed(tab: Any, played: dict[str, Any]) -> dict[str, Any]:
    """The revealed pair of :func:`played` (a copy of its own), shown on the fairness page in
    ``tab``, which holds the storage of the tab that played it."""
    tab.goto("/fairness")
    tab.wait_for_selector("[data-verify]")
    return copy.deepcopy({key: played[key] for key in ("bundle", "url", "moves")})


def verify_in_page(tab: Any) -> str:
    tab.locator("[data-verify]").first.click()
    summary = tab.locator(".revealed-pair [data-testid=verify-summary]").first
    summary.wait_for()
    return str(summary.inner_text())


def test_a_real_bundle_of_both_games_is_replayed_whole_and_matches_the_records(
    tab: Any, revealed: dict[str, Any]
) -> None:
    records = tab.evaluate("window.SotaRecords.exportDocument()")
    pair_id = revealed["bundle"]["commitment"]["document"]["seed_pair_id"]
    assert records["public_key_hex"] == revealed["bundle"]["public_key_hex"]
    assert revealed["bundle"]["commitment"] in records["commitments"]
    war = [a for a in records["actions"] if a["game"] == "casino_war"]
    moves = [a for a in records["actions"] if a["game"] == "sota"]
    assert [(a["action"], a["nonce"], a["seed_pair_id"]) for a in war] == [("war", 0, pair_id)]
    assert [a["move"] for a in moves] == list(range(revealed["moves"]))
    sota_receipt = next(
        r["document"] for r in revealed["bundle"]["rounds"] if r["document"]["game"] == "sota"
    )
    assert [a["cards"] for a in moves] == sota_receipt["actions"]
    # Each bet with the rules it was sent under: the table's as its page showed them, and the
    # Sota game's own rules as the table's form sent them.
    receipts = {r["document"]["round_id"]: r["document"] for r in revealed["bundle"]["rounds"]}
    assert sorted(b["round_id"] for b in records["bets"]) == sorted(receipts)
    for bet in records["bets"]:
        receipt = receipts[bet["round_id"]]
        assert (bet["seed_pair_id"], bet["nonce"], bet["game"]) == (
            pair_id,
            receipt["nonce"],
            receipt["game"],
        )
        agreed = (
            bet["rules"] if bet["game"] == "casino_war" else {**receipt["rules"], **bet["rules"]}
        )
        assert agreed == receipt["rules"]
        # And the amounts it sent, named as the receipt's stakes name them.
        sent = ("bet", "tie_bet") if bet["game"] == "casino_war" else ("stake",)
        assert {name: bet[name] for name in sent} == {
            name: receipt["stakes"][name] for name in sent
        }

    # The fairness page counts what this browser keeps, the bets too.
    summary = tab.locator("[data-records-summary]").inner_text()
    assert summary == (
        f"{len(records['commitments'])}\u00a0commitments · 3\u00a0bets · "
        f"{1 + revealed['moves']}\u00a0decisions or moves recorded in this browser."
    )
    verdict = verify_in_page(tab)
    assert verdict.startswith("✓ All 3\u00a0rounds verified.\n")
    assert "\nAll 3\u00a0rounds verified against the key pinned in this browser" in verdict
    assert "every trick, the winner, how the game ended and the payout" in verdict
    assert "the decisions and moves recorded here for 2\u00a0rounds equal the receipts" in verdict
    assert "The rules and stakes of 3\u00a0bets recorded here equal their receipts'." in verdict
    assert tab.locator("tr[data-ok='1']").count() == 3
    sota_row = tab.locator(f"tr[data-round='{sota_receipt['round_id']}']").inner_text()
    assert f"{len(sota_receipt['outcome']['tricks'])}\u00a0tricks · prisoners of war" in sota_row

    # "My records" downloads exactly the format the offline verifier reads.
    with tab.expect_download() as download:
        tab.click("#export-records")
    assert download.value.suggested_filename == "sota-casino-records.json"
    exported = json.loads(Path(download.value.path()).read_text())
    # Now with the digests of the documents the page verified: the pair's two (its commitment
    # also as the pair committed to its seed), and each receipt under its round and its nonce.
    assert records["verified"] == [] and len(exported["verified"]) == 3 + 2 * 3
    assert exported == {**records, "verified": exported["verified"]}
    assert set(exported) == RECORD_FIELDS
    assert (exported["format"], exported["v"]) == ("sota-casino-records", 1)


def test_every_forgery_of_a_real_bundle_is_caught_by_the_page(
    tab: Any, live_server: Any, revealed: dict[str, Any]
) -> None:
    bundle, key = revealed["bundle"], service_key(live_server)
    assert tab.evaluate(VERIFY_FIRST, bundle) == ""

    another_key = forgeries.sign_all(bundle, Ed25519PrivateKey.generate())
    caught = tab.evaluate(VERIFY_FIRST, another_key)
    assert "not the key this browser trusts" in caught
    assert "the commitment's signature is not valid" in caught

    recommitted = forgeries.recommitted(bundle, key)
    assert recommitted["commitment"]["document"] != bundle["commitment"]["document"]
    caught = tab.evaluate(VERIFY_FIRST, recommitted)
    pair_id = bundle["commitment"]["document"]["seed_pair_id"]
    assert f"seed pair #{pair_id} was re-committed: before play you were shown commitment" in caught
    assert "signature" not in caught  # every signature is the real key's: only the records tell
    # The same pair's id written as text in every document is not another pair: the records
    # of pair 12 still apply to it.
    renamed = copy.deepcopy(recommitted)
    for signed in [renamed["commitment"], renamed["reveal"], *renamed["rounds"]]:
        signed["document"]["seed_pair_id"] = str(pair_id)
    caught = tab.evaluate(VERIFY_FIRST, forgeries.sign_all(renamed, key))
    assert f"seed pair #{pair_id} was re-committed: before play you were shown commitment" in caught
    # Without the records too, as the offline verifier's pair check says: the id must be an
    # integer (the log contradicts this one too; logged so from the start, only this names it).
    caught = tab.evaluate(WITHOUT_RECORDS, forgeries.sign_all(renamed, key))
    assert f'the commitment document\'s seed_pair_id "{pair_id}" is not an integer' in caught
    assert "re-committed" not in caught
    user_id = bundle["commitment"]["document"]["user_id"]
    listed = copy.deepcopy(bundle)
    listed["commitment"]["document"]["user_id"] = [user_id]
    caught = tab.evaluate(WITHOUT_RECORDS, forgeries.sign_all(listed, key))
    assert f"the commitment document's user_id [{user_id}] is not an integer" in caught

    surrendered, war_round = forgeries.war_into_surrender(bundle, key)
    caught = tab.evaluate(VERIFY_FIRST, surrendered)
    records, logged = caught.split(" | ")  # the records, and the casino's own signed log
    assert records == f"round {war_round}: you chose war, the receipt says surrender"
    assert logged.startswith(f"round {war_round}: the log recorded another receipt")

    # The tie paid at 8 to 1, though the table's page showed (and the bet named) 10 to 1.
    worse, war_round = forgeries.worse_tie_payout(bundle, key)
    caught = tab.evaluate(VERIFY_FIRST, worse)
    records, logged = caught.split(" | ")
    assert records == f"round {war_round}: you bet under tie_payout 10, the receipt says 8"
    assert logged.startswith(f"round {war_round}: the log recorded another receipt")

    # Twice the ante or the stake the player sent, paid as the receipt says.
    for game in ("casino_war", "sota"):
        larger, staked_round, name = forgeries.larger_stake(bundle, key, game)
        sent = next(
            r["document"]["stakes"][name]
            for r in bundle["rounds"]
            if r["document"]["round_id"] == staked_round
        )
        records, logged = tab.evaluate(VERIFY_FIRST, larger).split(" | ")
        assert records == (
            f"round {staked_round}: you sent {name} {sent}, the receipt says {2 * sent}"
        )
        assert logged.startswith(f"round {staked_round}: the log recorded another receipt")

    # A round the player only bet in (no tie, so no decision) left out of the pair's bundle.
    left_out, hidden_round = forgeries.round_left_out(bundle, key)
    caught = tab.evaluate(VERIFY_FIRST, left_out)
    missing = f"round {hidden_round}, which you played on seed pair #{pair_id}, is missing"
    assert f"{missing} from the bundle" in caught.split(" | "), caught

    replaced, sota_round = forgeries.moves_replaced(bundle, key)
    caught = tab.evaluate(VERIFY_FIRST, replaced)
    assert re.match(
        rf"round {sota_round}: your move 1 laid \S\S( \S\S)*, the receipt says ", caught
    )
    assert "signature" not in caught and "outcome" not in caught

    tampered, tampered_round = forgeries.trick_log_tampered(bundle, key)
    # A counted message keeps each number beside its word with a no-break space.
    caught = tab.evaluate(VERIFY_FIRST, tampered).replace("\xa0", " ")
    replayed, logged = caught.split(" | ")
    assert re.fullmatch(
        rf"round {tampered_round} \(nonce 2\): "
        r"outcome failed \(trick \d+ differs from the replay .*\)",
        replayed,
    ), caught
    assert logged.startswith(f"round {tampered_round}: the log recorded another receipt")
    report = tab.evaluate("async b => (await window.SotaVerify.verifyBundle(b)).rounds", tampered)
    row = next(r for r in report if r["id"] == tampered_round)
    assert re.match(r"trick \d+\sdiffers from the replay", row["note"])
    assert not row["ok"] and not row["checks"]["outcome"] and row["checks"]["signature"]


def test_a_settlement_entry_that_names_nothing_anchors_no_receipt_in_the_page(
    tab: Any, live_server: Any, revealed: dict[str, Any]
) -> None:
    """A forger logging a rewrite again could leave the receipt's hash, game and payout out of
    the new settlement entry, so that it contradicts no receipt: such an entry anchors none."""
    tab.expected_failures.append(CONSISTENCY)
    bundle = revealed["bundle"]
    round_id = bundle["rounds"][0]["document"]["round_id"]

    def emptied(logged: list[tuple[dict[str, Any], dict[str, Any]]]) -> Any:
        target = anchors.settlement_of(round_id)
        return [(of, {**entry, "data": {}} if of == target else entry) for of, entry in logged]

    relogged = bundles.anchored(bundle, service_key(live_server), logged_as=emptied)
    assert tab.evaluate(VERIFY, bundles.anchored(bundle, service_key(live_server))) == ""
    assert tab.evaluate(VERIFY, relogged).startswith(
        f"round {round_id}: its settlement entry does not name the receipt's hash, game and "
        "payout (entry "
    )


def test_a_reveal_resigned_with_fewer_rounds_contradicts_the_log_in_the_page(
    tab: Any, live_server: Any, revealed: dict[str, Any]
) -> None:
    """Dropping the pair's last round needs only a reveal re-signed with one round fewer; the
    rotation's entry in the log still counts the round."""
    bundle = revealed["bundle"]
    assert any(anchor["of"]["kind"] == "reveal" for anchor in bundle["anchors"])
    dropped = bundle["rounds"][-1]["document"]["round_id"]
    reveal = {**bundle["reveal"]["document"], "rounds": len(bundle["rounds"]) - 1}
    forged = {
        **bundle,
        "rounds": bundle["rounds"][:-1],
        "reveal": {
            "document": reveal,
            "signature": fairness.sign(service_key(live_server), reveal),
        },
        "anchors": [a for a in bundle["anchors"] if a["of"].get("round_id") != dropped],
    }
    caught = tab.evaluate(VERIFY_FIRST, forged).replace("\xa0", " ")  # no-break spaces
    assert (
        "the log recorded 3 rounds when the pair was revealed, the reveal says 2 (entry " in caught
    )
    without = {**bundle, "anchors": [a for a in bundle["anchors"] if a["of"]["kind"] != "reveal"]}
    assert (
        tab.evaluate(VERIFY_FIRST, without)
        == "the bundle carries no anchor of the reveal in the log"
    )


def test_a_bundle_under_another_key_is_never_called_verified_until_the_user_trusts_it(
    tab: Any, revealed: dict[str, Any]
) -> None:
    forged = forgeries.sign_all(revealed["bundle"], Ed25519PrivateKey.generate())
    tab.route(revealed["url"], lambda route: route.fulfill(json=forged))
    verdict = verify_in_page(tab)
    assert verdict.startswith("✗ 0\u00a0of 3\u00a0rounds verified")
    assert "not the key this browser trusts" in verdict
    assert tab.locator("tr[data-ok='1']").count() == 0
    tab.unroute(revealed["url"])

    # The page itself now shows another key than the one this browser pinned: it says so loudly,
    # and verifies nothing against the new key until the user trusts it explicitly.
    real = revealed["bundle"]["public_key_hex"]
    earlier = forgeries.sign_all(revealed["bundle"], Ed25519PrivateKey.generate())["public_key_hex"]
    tab.evaluate(
        """key => localStorage.setItem("sota-casino.pinned-key.v1",
            JSON.stringify({public_key_hex: key, pinned_at: "2026-01-01T00:00:00Z",
                            replaced: []}))""",
        earlier,
    )
    tab.reload()
    alert = tab.locator("[data-testid=key-changed]")
    assert "The casino's signing key has changed" in alert.inner_text()
    assert earlier in alert.inner_text() and real in alert.inner_text()
    command = tab.locator("[data-testid=pair-verifier-command]").first.inner_text()
    assert f"--public-key {earlier} " in command  # the command keeps the key the user trusts
    verdict = verify_in_page(tab)
    assert (
        verdict.startswith("✗ 0\u00a0of 3\u00a0rounds verified")
        and "not the key this browser trusts" in verdict
    )

    alert.get_by_role("button", name="Trust the new key").click()
    assert tab.locator("[data-testid=key-changed]").count() == 0
    assert tab.evaluate("window.SotaRecords.pinnedKey()")["public_key_hex"] == real
    assert (
        tab.evaluate("window.SotaRecords.pinnedKey()")["replaced"][0]["public_key_hex"] == earlier
    )
    assert (
        f"--public-key {real} "
        in tab.locator("[data-testid=pair-verifier-command]").first.inner_text()
    )
    assert verify_in_page(tab).startswith("✓ All 3\u00a0rounds verified")


def test_records_keep_the_last_choice_of_each_decision_and_note_a_round_left_out(tab: Any) -> None:
    sign_up(tab, "choices")
    tab.goto("/")
    result = tab.evaluate(
        """() => {
            const R = window.SotaRecords;
            R.recordAction({round_id: 7, seed_pair_id: 3, nonce: 0, game: "casino_war",
                            action: "war"});
            // refused (say the raise was short), then the choice that counted
            R.recordAction({round_id: 7, seed_pair_id: 3, nonce: 0, game: "casino_war",
                            action: "surrender"});
            const first = R.recordAction({round_id: 8, game: "sota", cards: ["AS"]});
            const second = R.recordAction({round_id: 8, game: "sota", cards: ["KD", "2H"]});
            R.recordAction({round_id: 8, game: "sota", move: 1, cards: ["2H", "KD"]});
            let refused = null;
            try { R.recordAction({game: "casino_war", action: "war"}); }
            catch (error) { refused = error.message; }
            const bundle = {
                commitment: {document: {seed_pair_id: 3, commitment: "ab"}, signature: "00"},
                rounds: [{document: {round_id: 8, seed_pair_id: 3, nonce: 1, game: "sota",
                                     actions: [["AS"], ["2H", "KD"]]}}],
            };
            return {exported: R.exportDocument(), first: first.move, second: second.move,
                    refused, compared: R.compareBundle(bundle)};
        }"""
    )
    actions = result["exported"]["actions"]
    assert [(a["round_id"], a.get("action"), a.get("move")) for a in actions] == [
        (7, "surrender", None),
        (8, None, 0),
        (8, None, 1),
    ]
    assert actions[2]["cards"] == ["2H", "KD"] and actions[1]["seed_pair_id"] is None
    assert (result["first"], result["second"]) == (0, 1)
    assert result["refused"] == "a recorded action needs its round_id"
    compared = result["compared"]
    assert compared["commitment"] is None  # nothing was shown for pair 3 in this browser
    assert compared["rounds"] == {"8": {"ok": True, "recorded": 2, "bet": False}}
    assert compared["problems"] == [
        "round 7, which you played on seed pair #3, is missing from the bundle"
    ]


def test_a_bundle_without_its_anchors_fails_and_one_left_pending_is_not_called_verified(
    tab: Any, revealed: dict[str, Any]
) -> None:
    """An operator holding the key and the database could hand out a bundle stripped of the
    anchors that contradict it, or list every document as not yet anchored."""
    bundle = revealed["bundle"]
    assert bundle["anchors"] and not bundle["pending_anchors"]
    stripped = {k: v for k, v in bundle.items() if k not in ("anchors", "checkpoints")}
    caught = tab.evaluate(VERIFY, stripped)
    assert caught.startswith(
        "unanchored: the bundle proves none of its documents in the signed log"
    ), caught
    assert "the bundle carries no anchor of the commitment in the log" in caught
    tab.route(revealed["url"], lambda route: route.fulfill(json=stripped))
    verdict = verify_in_page(tab)
    assert verdict.startswith("✗ 0\u00a0of 3\u00a0rounds verified") and "unanchored" in verdict
    assert tab.locator("tr[data-ok='1']").count() == 0
    tab.unroute(revealed["url"])

    pending = [
        {"of": anchor["of"], "reason": "not in a signed checkpoint yet", "retry_after": 5}
        for anchor in bundle["anchors"]
    ]
    waiting = {**bundle, "anchors": [], "checkpoints": [], "pending_anchors": pending}
    assert tab.evaluate(VERIFY, waiting) == ""  # nothing contradicts it: it proves nothing yet
    tab.route(revealed["url"], lambda route: route.fulfill(json=waiting))
    tab.reload()
    verdict = verify_in_page(tab)
    assert verdict.startswith("… Not verified yet.\n"), verdict
    assert (
        "\nNot verified yet: 5\u00a0documents are not yet in a signed checkpoint of the casino's "
        "public log (the commitment, the reveal, round "
    ) in verdict, verdict
    assert "Verify again later" in verdict and "✓" not in verdict
    assert tab.locator("tr[data-ok='1']").count() == 0
    assert tab.locator(".revealed-pair .badge.open").count() == 3
    assert tab.locator("td[data-log='pending']").first.inner_text() == "not yet anchored"
    tab.unroute(revealed["url"])
    tab.reload()
    assert verify_in_page(tab).startswith("✓ All 3\u00a0rounds verified")


def test_documents_still_pending_in_a_bundle_fetched_past_the_bound_fail_in_the_page(
    tab: Any, revealed: dict[str, Any]
) -> None:
    """A casino that left a pair out of the log and signs no more checkpoints serves its
    documents as pending, with no checkpoint ever dated past their bound. The service signs a
    checkpoint over the whole log when a bundle is fetched, so the page, which fetches the
    bundle itself and knows when by its own clock, fails each document still pending past its
    signed time and the bound, instead of waiting for it for good."""
    bundle = revealed["bundle"]
    pending = [
        {"of": anchor["of"], "reason": "not in a signed checkpoint yet", "retry_after": 5}
        for anchor in bundle["anchors"]
    ]
    waiting = {**bundle, "anchors": [], "checkpoints": [], "pending_anchors": pending}
    tab.route(revealed["url"], lambda route: route.fulfill(json=waiting))
    revealed_at = fairness.parse_time(bundle["reveal"]["document"]["revealed_at"])
    tab.clock.set_fixed_time(revealed_at + anchors.ANCHOR_BOUND + timedelta(minutes=1))
    verdict = verify_in_page(tab)
    assert verdict.startswith("✗ 0\u00a0of 3\u00a0rounds verified."), verdict
    fetched = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"
    for named, said_at in [
        ("the commitment", f"created at {bundle['commitment']['document']['created_at']}"),
        ("the reveal", f"revealed at {bundle['reveal']['document']['revealed_at']}"),
        *(
            (f"round {r['document']['round_id']}", f"settled at {r['document']['settled_at']}")
            for r in bundle["rounds"]
        ),
    ]:
        assert re.search(
            rf"{named}: {re.escape(said_at)}, still pending in the bundle fetched at {fetched} "
            "by this computer's clock, past the bound of 1 hour",
            verdict.replace("\u00a0", " "),  # a number keeps its word
        ), (named, verdict)
    assert tab.locator("tr[data-ok='1']").count() == 0
    assert tab.locator("td[data-log='false']").count() == 3
    tab.unroute(revealed["url"])


def test_moves_reordered_or_one_logged_move_anchored_twice_fail_in_the_page(tab: Any) -> None:
    """As the offline verifier: the player's moves are the log's in the order it took them,
    whatever order the anchors' labels claim, and one logged move stands for one move only."""
    from test_verify_forged_log import KEY_HEX
    from test_verify_forged_log import reordered_moves
    from test_verify_forged_log import repeated_move

    sign_up(tab, "reordered")
    tab.goto("/fairness")
    check = (
        "async ([bundle, key]) => (await window.SotaVerify.verifyBundle(bundle, "
        "{trustedKey: key, records: null})).problems.join(' | ')"
    )
    reordered, round_id = reordered_moves()
    caught = tab.evaluate(check, [reordered, KEY_HEX])
    assert caught.startswith(f"round {round_id}: the log recorded the player's actions [["), caught
    repeated, doc, _ = repeated_move()
    caught = tab.evaluate(check, [repeated, KEY_HEX])
    assert caught.startswith(f"round {doc['round_id']}: the log recorded the player's actions"), (
        caught
    )
    assert "null" in caught


def test_a_bundle_re_signed_after_the_page_verified_another_fails_as_an_equivocation(
    tab: Any, tmp_path: Path
) -> None:
    """A casino holding the key can hand the player one bundle, and later a re-signed one whose
    log is written to match: each passes alone. The page keeps the digest of every document it
    found signed, so the second contradicts the first, and the exported records carry the
    digests to the offline verifier."""
    from test_verify_cli import GOOD
    from test_verify_cli import KEY_HEX
    from test_verify_cli import PAIR
    from test_verify_cli import _rewritten
    from test_verify_cli import _run

    from sota_casino.verify import verify_bundle
    from sota_casino.verify.runner import signed_documents

    tab.expected_failures.append(CONSISTENCY)
    sign_up(tab, "equivocation")
    tab.goto("/fairness")
    tab.evaluate(TRUST_ONLY, KEY_HEX)
    alone = (  # without this browser's records: nothing verified before is compared
        "async ([bundle, key]) => (await window.SotaVerify.verifyBundle(bundle, "
        "{trustedKey: key, records: null})).problems.join(' | ')"
    )
    # Fetched before the reveal, then after: they agree on all they both hold.
    unrevealed = bundles.bundle(4, pair=PAIR, revealed=False)
    assert tab.evaluate(VERIFY, unrevealed) == (
        "this seed pair is not revealed yet: rotate it first"
    )
    assert tab.evaluate(VERIFY, GOOD) == ""
    assert tab.evaluate(VERIFY, GOOD) == ""  # verified again: the same documents
    # The page's names and digests are the offline verifier's, one entry each.
    kept = tab.evaluate("window.SotaRecords.exportDocument().verified")
    expected = {
        (name, digest)
        for bundle in (unrevealed, GOOD)
        for name, digest, _, _ in signed_documents(bundle, verify_bundle(bundle, KEY_HEX))
    }
    assert sorted((e["name"], e["sha256"]) for e in kept) == sorted(expected)

    for what in ("receipt", "reveal", "commitment"):
        forged, text = _rewritten(what)
        assert tab.evaluate(alone, [forged, KEY_HEX]) == ""
        caught = tab.evaluate(VERIFY, forged).split(" | ")
        said = (
            rf"equivocation: {text} differs from the one this browser verified on .+ UTC, both "
            r"signed \(sha256 [0-9a-f]{16}… and [0-9a-f]{16}…\): one of them is a rewrite"
        )
        assert any(re.fullmatch(said, problem) for problem in caught), caught
        # A receipt is named once, not by its nonce too (the reveal's bundle holds the receipt
        # the one before rewrote, and says so too).
        assert sum(f"equivocation: {text} differs" in problem for problem in caught) == 1
        # Kept though it failed: the first bundle now contradicts it too.
        assert f"equivocation: {text} differs" in tab.evaluate(VERIFY, GOOD)

    # The exported records carry the digests to the offline verifier, which names them.
    records = tmp_path / "records.json"
    records.write_text(json.dumps(tab.evaluate("window.SotaRecords.exportDocument()")))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD))
    code, out, _ = _run("--records", str(records), "--public-key", KEY_HEX, str(good), "-q")
    assert (
        code == 1
        and f"the receipt of round 102 in {good} differs from the one in the records" in out
    )


def test_the_page_digests_a_document_as_the_offline_verifier_does(tab: Any) -> None:
    """sha256 of the canonical JSON, escapes and all: the records' digests are the verifier's."""
    from sota_casino.core.fairness import canonical_json

    sign_up(tab, "digests")
    tab.goto("/")
    doc = {
        "z": 'ä ☃ 🂡 \u2028 \x00\x1f\x7f "quoted" \\ </script>',
        "a": [1, -2, 0, None, True, False, {"é": "", "e": []}],
        "n": 9007199254740991,
    }
    kept = tab.evaluate(
        """async doc => {
            const names = [{name: "a document", label: "a document"}];
            await window.SotaRecords.compareVerified([{names, document: doc}]);
            return window.SotaRecords.exportDocument().verified;
        }""",
        doc,
    )
    assert [(e["name"], e["sha256"]) for e in kept] == [
        ("a document", hashlib.sha256(canonical_json(doc)).hexdigest())
    ]


def test_two_verifications_at_once_both_keep_the_documents_they_verified(tab: Any) -> None:
    """Two bundles verified at the same moment (two buttons, two tabs): each reads the kept list
    and writes it back, and neither may write over what the other just kept, or a rewrite of a
    document it verified would pass later unnoticed."""
    sign_up(tab, "at-once")
    tab.goto("/")
    kept = tab.evaluate(
        """async () => {
            localStorage.removeItem(window.SotaRecords.stores.mine.verified);
            const signed = name => [{names: [{name, label: name}], document: {name}}];
            await Promise.all(["one", "two", "three"].map(
                name => window.SotaRecords.compareVerified(signed(name))));
            return window.SotaRecords.exportDocument().verified.map(e => e.name);
        }"""
    )
    assert sorted(kept) == ["one", "three", "two"]


def test_an_equivocation_names_the_document_in_the_language_of_the_page(tab: Any) -> None:
    """The records keep the verifier's English names (the offline verifier reads them); the
    page says which document differs in its own language."""
    from test_verify_cli import GOOD
    from test_verify_cli import KEY_HEX
    from test_verify_cli import _rewritten

    tab.expected_failures.append(CONSISTENCY)
    sign_up(tab, "kieli")
    tab.goto("/fairness")
    with tab.expect_navigation():
        tab.select_option("#language-choice", "fi")
    tab.wait_for_selector("html[lang=fi]")
    tab.evaluate(TRUST_ONLY, KEY_HEX)
    assert tab.evaluate(VERIFY, GOOD) == ""
    finnish = {
        "receipt": "pelikierroksen 102 kuitti",
        "reveal": "siemenparin 12 paljastusasiakirja",
        "commitment": "siemenparin 12 sitoumusasiakirja",
    }
    for what, words in finnish.items():
        forged, english = _rewritten(what)
        caught = tab.evaluate(VERIFY, forged)
        assert f"ristiriita: {words} eroaa siitä, jonka tämä selain tarkisti" in caught, caught
        names = tab.evaluate("window.SotaRecords.exportDocument().verified.map(e => e.name)")
        assert english in names and words not in names


def test_a_bundle_checked_against_a_key_given_leaves_the_browsers_memory_alone(tab: Any) -> None:
    """What the page remembers is kept under the key it trusts only: a bundle checked against
    another key, given by hand, may hold anything that key signed. Kept, its checkpoint raised a
    false fork alarm against the casino, and its documents false equivocations later."""
    from test_log_witness import WITNESS
    from test_log_witness import play_a_round
    from test_log_witness import proof_of
    from test_verify_cli import GOOD
    from test_verify_cli import KEY_HEX

    sign_up(tab, "given-key")
    proof_of(tab, play_a_round(tab))  # a checkpoint for the page's witness to keep
    tab.goto("/fairness")
    tab.wait_for_selector(f"{WITNESS}.ok")
    memory = (
        "async () => [localStorage.getItem(window.SotaRecords.stores.mine.verified),"
        " await window.SotaLog.kept(), await window.SotaLog.alarm()]"
    )
    before = tab.evaluate(memory)
    assert before[1] is not None and before[2] is None  # the casino's own checkpoint, no alarm
    check = (
        "async ([bundle, key]) => (await window.SotaVerify.verifyBundle(bundle, "
        "{trustedKey: key})).problems.join(' | ')"
    )
    assert tab.evaluate(check, [GOOD, KEY_HEX]) == ""
    assert tab.evaluate(memory) == before
    assert tab.locator(f"{WITNESS}.ok").count() == 1


def test_a_recorded_decision_without_its_pair_or_nonce_is_compared_on_what_it_has(
    tab: Any,
) -> None:
    """As the offline verifier reads records: a pair or nonce left out is not known, as null
    is (the page said "you played it on seed pair #undefined")."""
    sign_up(tab, "no-pair")
    tab.goto("/")
    compared = tab.evaluate(
        """() => {
            localStorage.setItem(window.SotaRecords.stores.mine.records, JSON.stringify({
                commitments: [], actions: [{round_id: 7, game: "casino_war", action: "war"}],
                rotations: []}));
            return window.SotaRecords.compareBundle({
                commitment: {document: {seed_pair_id: 3, commitment: "ab"}, signature: "00"},
                rounds: [{document: {round_id: 7, seed_pair_id: 3, nonce: 0,
                                     game: "casino_war", actions: ["war"]}}],
            });
        }"""
    )
    assert compared["problems"] == []
    assert compared["rounds"] == {"7": {"ok": True, "recorded": 1, "bet": False}}


#: What the other tab writes: the records as it read them before this tab kept its own (two
#: tabs read, then both write: localStorage has no transactions).
STALE_WRITE = """() => {
    localStorage.setItem(window.SotaRecords.stores.mine.records,
        JSON.stringify({commitments: [], actions: [], rotations: []}));
    localStorage.setItem(window.SotaRecords.stores.mine.verified, "[]");
}"""
KEPT = """() => {
    const records = window.SotaRecords.exportDocument();
    return {actions: records.actions.map(a => a.round_id), rotations:
        records.rotations.map(r => r.seed_pair_id), verified: records.verified.map(e => e.name)};
}"""


def test_a_tab_puts_back_what_another_tabs_stale_write_dropped(tab: Any) -> None:
    """Two tabs record at once: the one that writes last writes back the list it read before
    the other kept its decision, rotation and verified documents. The tab that kept them sees
    the write and puts them back, so a later rewrite of a verified document still fails."""
    sign_up(tab, "two-tabs")
    tab.goto("/")
    other = tab.context.new_page()
    other.goto(tab.url)
    tab.evaluate(
        """async () => {
            window.SotaRecords.recordAction({round_id: 7, seed_pair_id: 3, nonce: 0,
                game: "casino_war", action: "war"});
            window.SotaRecords.recordRotation({seed_pair_id: 4, client_seed: "mine"});
            await window.SotaRecords.compareVerified(
                [{names: [{name: "the receipt of round 7", label: "x"}], document: {n: 7}}]);
        }"""
    )
    other.evaluate(STALE_WRITE)
    expected = {"actions": [7], "rotations": [4], "verified": ["the receipt of round 7"]}
    other.wait_for_function(
        f"expected => JSON.stringify(({KEPT})()) === JSON.stringify(expected)",
        arg=expected,
        timeout=5000,
    )
    assert other.evaluate(KEPT) == expected and tab.evaluate(KEPT) == expected
    other.close()


def test_a_tab_leaves_cleared_storage_and_another_tabs_later_choice_alone(tab: Any) -> None:
    """Putting back is for lost writes only: a later decision for the same round recorded in
    another tab stands, and storage the player cleared stays cleared."""
    sign_up(tab, "cleared")
    tab.goto("/")
    other = tab.context.new_page()
    other.goto(tab.url)
    tab.evaluate(
        """() => window.SotaRecords.recordAction({round_id: 7, seed_pair_id: 3, nonce: 0,
            game: "casino_war", action: "war"})"""
    )
    other.evaluate(
        """() => window.SotaRecords.recordAction({round_id: 7, seed_pair_id: 3, nonce: 0,
            game: "casino_war", action: "surrender"})"""
    )
    other.evaluate("() => localStorage.setItem('sota-casino.probe', '1')")  # after any answer
    tab.wait_for_function("() => localStorage.getItem('sota-casino.probe') === '1'")
    assert [a["action"] for a in other.evaluate("window.SotaRecords.exportDocument().actions")] == [
        "surrender"
    ]
    other.evaluate("() => localStorage.clear()")
    other.evaluate("() => localStorage.setItem('sota-casino.probe', '2')")
    tab.wait_for_function("() => localStorage.getItem('sota-casino.probe') === '2'")
    assert other.evaluate("window.SotaRecords.exportDocument().actions") == []
    other.close()


#: Fill this origin's localStorage to the last few characters.
FILL_STORAGE = """() => {
    for (let size = 1 << 20, i = 0; size >= 16; size >>= 1) {
        try { for (;;) localStorage.setItem("filler." + i++, "x".repeat(size)); }
        catch (full) { /* the next, smaller size */ }
    }
}"""


def test_a_full_storage_is_said_and_fails_nothing(tab: Any) -> None:
    """The digests of what the page verified are kept to catch a later rewrite; when the
    browser cannot keep them, the page says so instead of implying it will catch one. The
    bundle's verdict is the same."""
    from test_verify_cli import GOOD
    from test_verify_cli import KEY_HEX

    # The bundle's checkpoint is none the live server signed: the page's witness asks it to join
    # the two, and is refused (404) once the answer comes before the test ends.
    tab.expected_failures.append(CONSISTENCY)
    sign_up(tab, "full")
    tab.goto("/fairness")
    tab.evaluate(TRUST_ONLY, KEY_HEX)
    tab.evaluate(FILL_STORAGE)
    report = tab.evaluate(
        "async bundle => { const r = await window.SotaVerify.verifyBundle(bundle);"
        " return {problems: r.problems, notices: r.notices,"
        " kept: window.SotaRecords.exportDocument().verified.length}; }",
        GOOD,
    )
    assert report["problems"] == [] and report["kept"] == 0
    assert len(report["notices"]) == 1 and "could not keep what it verified" in report["notices"][0]
    tab.evaluate(
        "() => Object.keys(localStorage).filter(k => k.startsWith('filler.'))"
        ".forEach(k => localStorage.removeItem(k))"
    )
    report = tab.evaluate(
        "async bundle => (await window.SotaVerify.verifyBundle(bundle)).notices", GOOD
    )
    assert report == []


def test_the_full_storage_notice_stands_under_a_passing_verdict_on_a_phone(
    phone: Any, shoot: Any
) -> None:
    """The notice as a player sees it: a real pair verified from the fairness page's button,
    in a browser whose storage is full."""
    sign_up(phone, "fullstore")
    phone.goto("/casino-war")
    phone.click("#deal")
    phone.wait_for_selector("[data-testid=result], #go-to-war")
    if phone.locator("#go-to-war").count():
        phone.click("#go-to-war")
        phone.wait_for_selector("[data-testid=result]")
    phone.goto("/fairness")
    phone.click("#rotate")
    phone.wait_for_selector("[data-verify]")
    phone.evaluate(FILL_STORAGE)
    pair = phone.locator(".revealed-pair").first
    pair.locator("[data-verify]").click()
    pair.locator("[data-testid=verify-summary]").wait_for()
    assert (
        pair.locator("[data-testid=verify-summary]").inner_text().startswith("✓ All 1\u00a0round")
    )
    notice = pair.locator("[data-testid=verify-notice]")
    assert notice.is_visible() and "could not keep what it verified" in notice.inner_text()
    notice.evaluate("node => node.scrollIntoView({block: 'center'})")
    shoot(phone, "phone-fairness-storage-full", full_page=False)
