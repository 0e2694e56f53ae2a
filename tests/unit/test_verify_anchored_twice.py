"""The service logs a pair's commitment and reveal once, and a round's bet and settlement once:
a bundle whose anchors prove two different entries for one of them is the casino's own proof
that it committed, revealed, bet or settled it twice (a round settled again with another
payout, say), whichever of the two the rest of the bundle agrees with. Both fail it, naming
both leaves (docs/fairness.md, "What the verifier checks", check 9)."""

from __future__ import annotations

from typing import Any
from typing import Final

import bundles
import pytest

from sota_casino.core import anchors
from sota_casino.core.fairness import public_key_hex
from sota_casino.verify import FAIL
from sota_casino.verify import verify_bundle

PAIR = bundles.Pair()
KEY_HEX = public_key_hex(PAIR.key)
#: The round logged twice: the one of nonce 2.
NONCE: Final = 2
ROUND_ID: Final = 100 + NONCE
#: What the entry logged first says otherwise than the one the bundle's documents agree with.
OTHERWISE: Final = {
    "commitment": {"commitment": "ab" * 32},
    "reveal": {"rounds": 3},
    "bet": {"stakes": {"bet": 100, "tie_bet": 0}},
    "settlement": {"payout": 1_000_000},
}
#: What a second entry of each kind means, as both verifiers say it.
MEANING: Final = {
    "commitment": "the pair was committed twice",
    "reveal": "the pair was revealed twice",
    "bet": "the round was bet twice",
    "settlement": "the round was settled twice",
}


def of_kind(kind: str) -> dict[str, Any]:
    return {
        "commitment": anchors.commitment_of(PAIR.seed_pair_id),
        "reveal": anchors.reveal_of(PAIR.seed_pair_id),
        "bet": anchors.bet_of(ROUND_ID),
        "settlement": anchors.settlement_of(ROUND_ID),
    }[kind]


def logged_twice(kind: str) -> tuple[dict[str, Any], int]:
    """A four-round bundle whose log holds the document of ``kind`` twice, another entry of it
    logged just before the one the documents agree with, each anchored (the one agreeing listed
    last); and the leaf of the first."""
    of = of_kind(kind)

    def twice(logged: bundles.Logged) -> bundles.Logged:
        at = next(i for i, (named, _) in enumerate(logged) if named == of)
        entry = logged[at][1]
        other = {**entry, "data": {**entry["data"], **OTHERWISE[kind]}}
        return [*logged[:at], (of, other), *logged[at:]]

    made = bundles.anchored(bundles.bundle(4, pair=PAIR), PAIR.key, logged_as=twice)
    first, second = (a["leaf_index"] for a in made["anchors"] if a["of"] == of)
    assert second == first + 1
    return made, first


def twice_message(kind: str, first: int) -> str:
    return (
        f"two {kind} entries are anchored, at leaf {first} and at leaf {first + 1}: the service "
        f"logs one, so {MEANING[kind]}"
    )


@pytest.mark.parametrize("kind", ["settlement", "bet"])
def test_a_round_settled_or_bet_twice_fails_naming_both_leaves(kind: str) -> None:
    made, first = logged_twice(kind)
    report = verify_bundle(made, KEY_HEX)
    assert not report.ok
    row = next(row for row in report.rounds if row.round_id == ROUND_ID)
    assert row.statuses["log"] == FAIL
    texts = [f.message for f in report.failures if f.round_id == ROUND_ID and f.check == "log"]
    assert twice_message(kind, first) in texts, texts


@pytest.mark.parametrize("kind", ["commitment", "reveal"])
def test_a_pair_committed_or_revealed_twice_fails_naming_both_leaves(kind: str) -> None:
    made, first = logged_twice(kind)
    report = verify_bundle(made, KEY_HEX)
    assert not report.ok
    texts = [f.message for f in report.failures if f.where == kind and f.check == "log"]
    assert twice_message(kind, first) in texts, [f.text() for f in report.failures]


def test_one_anchor_listed_twice_is_no_second_entry() -> None:
    """The same anchor listed twice proves one entry: nothing was logged twice. (A decision's
    anchor listed twice stands for two of the player's actions, which fails on its own.)"""
    good = bundles.bundle(4, pair=PAIR)
    again = [a for a in good["anchors"] if a["of"]["kind"] != "decision"]
    listed = [*good["anchors"], *again]
    assert verify_bundle({**good, "anchors": listed}, KEY_HEX).ok
