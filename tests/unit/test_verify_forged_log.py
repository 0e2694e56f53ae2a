"""A forger holding the key and the database logs its rewrite: the entries it hands out must
still say what the documents say, field by field, or they anchor nothing."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any
from typing import Final

import bundles
import pytest

from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.core import sota
from sota_casino.core.fairness import public_key_hex
from sota_casino.verify import FAIL
from sota_casino.verify import verify_bundle

PAIR = bundles.Pair()
KEY_HEX = public_key_hex(PAIR.key)


def _rewritten(nonce: int) -> tuple[dict[str, Any], int]:
    """A bundle whose receipt of ``nonce`` was re-signed with another settlement time."""
    good = bundles.bundle(4, pair=PAIR)
    rounds = list(good["rounds"])
    rounds[nonce] = bundles.resign(PAIR, rounds[nonce], settled_at="2025-04-01T11:30:00.000000Z")
    return {**good, "rounds": rounds}, rounds[nonce]["document"]["round_id"]


def test_a_settlement_entry_naming_nothing_anchors_no_receipt() -> None:
    """An entry with empty data contradicts no receipt, so a rewritten receipt would pass if
    the verifier took silence for agreement."""
    forged, round_id = _rewritten(2)

    def emptied(logged: bundles.Logged) -> bundles.Logged:
        target = anchors.settlement_of(round_id)
        return [(of, {**entry, "data": {}} if of == target else entry) for of, entry in logged]

    report = verify_bundle(bundles.anchored(forged, PAIR.key, logged_as=emptied), KEY_HEX)

    assert not report.ok
    row = next(row for row in report.rounds if row.round_id == round_id)
    assert row.statuses["log"] == FAIL
    texts = [f.text() for f in report.failures]
    assert any(
        "names no receipt and no game and no payout: it does not anchor this receipt" in text
        for text in texts
    ), texts
    others = [row.statuses["log"] for row in report.rounds if row.round_id != round_id]
    assert others == ["pass"] * 3


def test_a_settlement_entry_leaving_out_one_field_anchors_no_receipt() -> None:
    """Each field is required on its own: the game and payout alone do not name the receipt."""
    forged, round_id = _rewritten(1)

    def without_hash(logged: bundles.Logged) -> bundles.Logged:
        def cut(entry: dict[str, Any]) -> dict[str, Any]:
            return {**entry, "data": {k: v for k, v in entry["data"].items() if k != "receipt"}}

        target = anchors.settlement_of(round_id)
        return [(of, cut(entry) if of == target else entry) for of, entry in logged]

    report = verify_bundle(bundles.anchored(forged, PAIR.key, logged_as=without_hash), KEY_HEX)

    assert not report.ok
    assert any(
        "names no receipt: it does not anchor this receipt" in f.text() for f in report.failures
    )


def test_a_reveal_resigned_with_fewer_rounds_contradicts_its_rotation_entry() -> None:
    """Dropping the last round needs only a reveal re-signed with one round fewer: every
    receipt left is genuine, and the nonces still run without a gap."""
    good = bundles.bundle(4, pair=PAIR)
    dropped = good["rounds"][-1]["document"]["round_id"]
    forged = {
        **good,
        "rounds": good["rounds"][:-1],
        "reveal": bundles.resign(PAIR, good["reveal"], rounds=3),
        "anchors": [a for a in good["anchors"] if a["of"].get("round_id") != dropped],
    }

    report = verify_bundle(forged, KEY_HEX)

    assert not report.ok
    reveal_row = next(row for row in report.documents if row.where == "reveal")
    assert reveal_row.statuses["log"] == FAIL
    assert any(
        "the log recorded rounds 4 when the pair was revealed, the reveal says 3" in f.text()
        for f in report.failures
    ), [f.text() for f in report.failures]
    assert [row.statuses["nonces"] for row in report.rounds] == ["pass"] * 3


def test_a_reveal_without_its_anchor_is_not_proven() -> None:
    good = bundles.bundle(3, pair=PAIR)
    forged = {**good, "anchors": [a for a in good["anchors"] if a["of"]["kind"] != "reveal"]}

    report = verify_bundle(forged, KEY_HEX)

    assert not report.ok
    assert [f.text() for f in report.failures] == [
        "reveal document: log: the bundle carries no anchor of it in the audit log"
    ]


def test_a_reveal_logged_before_a_round_of_its_pair_fails() -> None:
    """The rotation ends the pair: a round logged after it was dealt from a revealed seed."""

    def reveal_first(logged: bundles.Logged) -> bundles.Logged:
        return [logged[0], logged[-1], *logged[1:-1]]

    forged = bundles.anchored(bundles.bundle(3, pair=PAIR), PAIR.key, logged_as=reveal_first)

    report = verify_bundle(forged, KEY_HEX)

    assert not report.ok
    assert any(
        "the pair's reveal was logged at leaf 1, before round" in f.text() for f in report.failures
    ), [f.text() for f in report.failures]


@pytest.mark.parametrize(
    "odd", ["\ud800", float("nan"), float("inf")], ids=["surrogate", "nan", "inf"]
)
def test_a_receipt_that_has_no_canonical_bytes_fails_its_round_not_the_verifier(odd: Any) -> None:
    """A lone surrogate or a NaN (which Python's JSON reader takes) has no canonical JSON, so
    the receipt hashes to nothing its settlement entry could name: its round fails, and the
    other rounds are still checked."""
    good = bundles.bundle(3, pair=PAIR)
    forged = copy.deepcopy(good)
    forged["rounds"][1]["document"]["client_seed"] = odd

    report = verify_bundle(forged, KEY_HEX)

    assert not report.ok
    row = report.rounds[1]
    assert row.statuses["log"] == FAIL and row.statuses["signature"] == FAIL
    assert any(
        "the receipt has no canonical JSON" in f.text() and f.round_id == row.round_id
        for f in report.failures
    ), [f.text() for f in report.failures]
    assert [r.ok for r in report.rounds] == [True, False, True]


PRISONERS = sota.SotaRules.from_dict({"prisoners_of_war": True})


def _prisoners_bundle() -> dict[str, Any]:
    """Three Prisoners of War games; the last lays the same card in two moves running."""
    return bundles.bundle(
        3, pair=PAIR, make_round=lambda pair, n: bundles.sota_moves_receipt(pair, n, PRISONERS)
    )


def _moves(logged: bundles.Logged, round_id: int) -> list[int]:
    """Where the log holds the round's moves, by their index in the receipt."""
    at = {
        of["index"]: k
        for k, (of, _) in enumerate(logged)
        if of.get("kind") == "decision" and of["round_id"] == round_id
    }
    return [at[i] for i in sorted(at)]


def reordered_moves() -> tuple[dict[str, Any], int]:
    """A bundle whose first game's first two moves the log took the other way round, anchored
    with labels that follow the receipt; and that game's round id."""
    good = _prisoners_bundle()
    round_id = good["rounds"][0]["document"]["round_id"]

    def swapped(logged: bundles.Logged) -> bundles.Logged:
        first, second = _moves(logged, round_id)[:2]
        logged = list(logged)
        (of_1, entry_1), (of_2, entry_2) = logged[first], logged[second]
        logged[first], logged[second] = (of_2, entry_2), (of_1, entry_1)
        return logged

    return bundles.anchored(good, PAIR.key, logged_as=swapped), round_id


def repeated_move() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A bundle whose last game lays one card in two moves running, the second standing on the
    first one's entry while the log holds another card for it; the game's receipt, and the
    anchor that stands in."""
    good = _prisoners_bundle()
    doc = good["rounds"][2]["document"]
    actions = doc["actions"]
    repeated = next(i for i in range(len(actions) - 1) if actions[i] == actions[i + 1])

    def player_moved_otherwise(logged: bundles.Logged) -> bundles.Logged:
        at = _moves(logged, doc["round_id"])[repeated + 1]
        of, entry = logged[at]
        return [*logged[:at], (of, {**entry, "data": {"cards": ["2C"]}}), *logged[at + 1 :]]

    logged = bundles.anchored(good, PAIR.key, logged_as=player_moved_otherwise)
    stand_in = next(
        a for a in logged["anchors"] if a["of"] == anchors.decision_of(doc["round_id"], repeated)
    )
    replaced = anchors.decision_of(doc["round_id"], repeated + 1)
    forged = {
        **logged,
        "anchors": [
            {**stand_in, "of": a["of"]} if a["of"] == replaced else a for a in logged["anchors"]
        ],
    }
    return forged, doc, stand_in


def test_moves_anchored_in_another_order_than_the_log_took_them_fail() -> None:
    """The log took the player's second move before the first; anchors labelled to follow the
    receipt instead of the log do not reorder what the player did."""
    forged, round_id = reordered_moves()

    report = verify_bundle(forged, KEY_HEX)

    assert not report.ok
    failures = [f.text() for f in report.failures]
    assert len(failures) == 1, failures
    assert failures[0].startswith(f"round {round_id} (nonce 0): log: the log recorded the player's")
    assert "the round was rewritten" in failures[0]


def test_one_move_entry_anchored_for_two_moves_fails() -> None:
    """A receipt laying one card in two moves running can stand on one logged move twice: the
    log's other move, the one the player made, is then left out of the bundle."""
    forged, doc, stand_in = repeated_move()

    report = verify_bundle(forged, KEY_HEX)

    assert not report.ok
    assert [f.text() for f in report.failures] == [
        f"round {doc['round_id']} (nonce 2): log: one decision entry is anchored as two of the "
        "player's actions: a move repeated in the receipt stands for one the log holds "
        f"({_cited(stand_in, forged)})"
    ]


def _cited(anchor: dict[str, Any], bundle: dict[str, Any]) -> str:
    checkpoint = bundle["checkpoints"][0]["document"]
    return (
        f"entry {anchor['entry']['seq']} of the log, in the checkpoint over {checkpoint['size']} "
        f"entries (root {checkpoint['root'][:16]}…, {checkpoint['time']}) signed by {KEY_HEX[:16]}…"
    )


def logged_again(nonce: int) -> tuple[dict[str, Any], int, int]:
    """A bundle whose receipt of ``nonce`` was re-signed under a new round id, as a forger logs
    a rewritten round again: no key is taken twice and its settlement names the new receipt."""
    good = bundles.bundle(4, pair=PAIR)
    rounds = list(good["rounds"])
    old_id = rounds[nonce]["document"]["round_id"]
    rounds[nonce] = bundles.resign(PAIR, rounds[nonce], round_id=NEW_ROUND)
    return {**good, "rounds": rounds}, old_id, NEW_ROUND


NEW_ROUND = 50_000


def bet_on_another_pair(logged: bundles.Logged) -> bundles.Logged:
    """The new round bet on a pair of the forger's own, at its nonce 0: no nonce taken twice."""
    target = anchors.bet_of(NEW_ROUND)
    moved = {"seed_pair_id": 999, "nonce": 0}
    return [
        (of, {**entry, "data": {**entry["data"], **moved}} if of == target else entry)
        for of, entry in logged
    ]


def without_bet(logged: bundles.Logged) -> bundles.Logged:
    return [(of, entry) for of, entry in logged if of != anchors.bet_of(NEW_ROUND)]


def bet_last(logged: bundles.Logged) -> bundles.Logged:
    bet = next(item for item in logged if item[0] == anchors.bet_of(NEW_ROUND))
    return [item for item in logged if item is not bet] + [bet]


#: Each way of logging the new round, and what the bundle's check says of it.
RELOGGED: Final = (
    (
        bet_on_another_pair,
        "the log recorded the bet with seed_pair_id 999, the receipt says "
        f"{PAIR.seed_pair_id}: the round was logged again",
    ),
    (without_bet, "the bundle carries no anchor of its bet in the audit log"),
    (bet_last, "the bet was logged after the round was played"),
)


@pytest.mark.parametrize(
    ("logged_as", "failure"), RELOGGED, ids=lambda v: getattr(v, "__name__", "")
)
def test_a_round_logged_again_under_a_new_id_fails_by_its_bet_entry(
    logged_as: Callable[[bundles.Logged], bundles.Logged], failure: str
) -> None:
    forged, _, new_id = logged_again(2)
    report = verify_bundle(bundles.anchored(forged, PAIR.key, logged_as=logged_as), KEY_HEX)
    assert not report.ok
    row = next(row for row in report.rounds if row.round_id == new_id)
    assert row.statuses["log"] == FAIL
    texts = [f.text() for f in report.failures if f.round_id == new_id]
    assert any(failure in text for text in texts), texts
    others = {row.nonce: row.statuses["log"] for row in report.rounds if row.round_id != new_id}
    # Its bet logged last, after nonce 3's: that round was dealt out of order too.
    assert others == {0: "pass", 1: "pass", 3: "fail" if logged_as is bet_last else "pass"}


def test_a_round_logged_again_on_its_own_pair_and_nonce_is_named_by_the_whole_log() -> None:
    """The bet that agrees with the receipt takes the pair's nonce a second time: the bundle
    alone cannot see the first, the whole log names it."""
    forged, old_id, new_id = logged_again(2)
    honest = bundles.logged_entries(bundles.bundle(4, pair=PAIR))
    again = [
        (of, entry) for of, entry in bundles.logged_entries(forged) if of.get("round_id") == new_id
    ]
    # Appended while the pair was still in play, before its reveal.
    log = audit_chain.link_entries(
        {"seq": seq, **entry}
        for seq, (_, entry) in enumerate([*honest[:-1], *again, honest[-1]], start=1)
    )
    assert verify_bundle(bundles.anchored(forged, PAIR.key), KEY_HEX).ok
    assert anchors.first_key_problem(log) == (
        len(honest),
        f"entry {len(honest)}: round.bet of round:{new_id} takes nonce 2 of "
        f"seed_pair:{PAIR.seed_pair_id}, whose next nonce is 4: a pair's nonces are taken in "
        "order, each once, a rewrite",
    ), old_id


def dealt_out_of_order(nonce: int) -> bundles.Logged:
    """A six-round bundle's log with the entries of the round of ``nonce`` + 1 (bet, decisions,
    settlement) taken before those of ``nonce``: the later bet dealt the earlier nonce's cards
    and the earlier bet the later's, as a casino that knows the server seed would choose."""
    good = bundles.bundle(6, pair=PAIR)
    first, then = (good["rounds"][n]["document"]["round_id"] for n in (nonce, nonce + 1))

    def swapped(logged: bundles.Logged) -> bundles.Logged:
        of_first = [item for item in logged if item[0].get("round_id") == first]
        of_then = [item for item in logged if item[0].get("round_id") == then]
        start = logged.index(of_first[0])
        rest = [item for item in logged if item not in of_first and item not in of_then]
        return [*rest[:start], *of_then, *of_first, *rest[start:]]

    return bundles.anchored(good, PAIR.key, logged_as=swapped)


#: :func:`dealt_out_of_order` of nonces 2 and 3, and where the log took their bets.
OUT_OF_ORDER: Final = dealt_out_of_order(2)
OUT_OF_ORDER_BETS: Final = {
    anchor["of"]["round_id"]: anchor["leaf_index"]
    for anchor in OUT_OF_ORDER["anchors"]
    if anchor["of"]["kind"] == "bet"
}


def test_a_bet_logged_before_the_bet_of_a_lower_nonce_fails() -> None:
    """The log takes a pair's nonces in order, each with its bet: a round of nonce 3 whose bet
    the log took before nonce 2's was dealt out of order, every entry of both still saying what
    its receipt says. It fails, naming both bets."""
    report = verify_bundle(OUT_OF_ORDER, KEY_HEX)
    assert not report.ok
    two, three = (OUT_OF_ORDER["rounds"][n]["document"]["round_id"] for n in (2, 3))
    failing = {(f.round_id, f.check) for f in report.failures}
    assert failing == {(three, "log")}, report.failures
    (finding,) = report.failures
    assert finding.message.startswith(
        f"the bet was logged at leaf {OUT_OF_ORDER_BETS[three]}, before the bet of round {two} "
        f"(nonce 2) at leaf {OUT_OF_ORDER_BETS[two]}: a pair's nonces are taken in order, each "
        "with its bet logged, so the nonces were dealt out of order (entry "
    ), finding.message
    assert verify_bundle(bundles.anchored(bundles.bundle(6, pair=PAIR), PAIR.key), KEY_HEX).ok
