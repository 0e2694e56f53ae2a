"""A forger holding the key and the database logs its rewrite: the entries it hands out must
still say what the documents say, field by field, or they anchor nothing."""

from __future__ import annotations

from typing import Any

import bundles

from sota_casino.core import anchors
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

    def emptied(of: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
        return {**entry, "data": {}} if of == anchors.settlement_of(round_id) else entry

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

    def without_hash(of: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
        if of != anchors.settlement_of(round_id):
            return entry
        return {**entry, "data": {k: v for k, v in entry["data"].items() if k != "receipt"}}

    report = verify_bundle(bundles.anchored(forged, PAIR.key, logged_as=without_hash), KEY_HEX)

    assert not report.ok
    assert any(
        "names no receipt: it does not anchor this receipt" in f.text() for f in report.failures
    )
