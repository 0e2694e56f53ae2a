"""A pair committed after the player's client seed was known, end to end with the real service
and its real key: the operator starts, instead of the committed next pair, one it made once the
seed arrived (with a server seed that makes the next rounds lose), and signs and logs it all.

Records kept the old way, with each commitment saved once its pair was active, i.e. after the
client seed was sent, pass it. Records kept by the recipe of docs/fairness.md, with the next
pair's signed commitment and the rotation saved BEFORE the seed is sent, catch it, before the
reveal and after.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from rotation_support import losing_seed
from rotation_support import rotate_onto_a_pair_made_now
from sqlalchemy.orm import Session

from sota_casino.core.fairness import signature_checker
from sota_casino.services import audit
from sota_casino.services import fairness as fairness_service
from sota_casino.services import rounds
from sota_casino.verify import main

Doc = dict[str, Any]
SEED = "my own seed"
ROUNDS = 5


def _verify(tmp_path: Path, bundle: Doc, records: Doc, key: str) -> tuple[int, str]:
    (tmp_path / "bundle.json").write_text(json.dumps(bundle), encoding="utf-8")
    (tmp_path / "records.json").write_text(json.dumps(records), encoding="utf-8")
    out = io.StringIO()
    code = main(
        [
            str(tmp_path / "bundle.json"),
            "--public-key",
            key,
            "--records",
            str(tmp_path / "records.json"),
        ],
        out,
        io.StringIO(),
    )
    return code, out.getvalue()


def _lines(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines()]


def _records(key: str, commitments: list[Doc], rotations: list[Doc] | None = None) -> Doc:
    records: Doc = {
        "format": "sota-casino-records",
        "v": 1,
        "public_key_hex": key,
        "commitments": commitments,
        "actions": [],
    }
    if rotations is not None:
        records["rotations"] = rotations
    return records


def _bundle(session: Session, player: int, seed_pair_id: int) -> Doc:
    audit.checkpoint(session)  # over every document of the pair, its reveal's entry included
    return dict(fairness_service.bundle(session, player, seed_pair_id))


def test_a_pair_made_once_the_client_seed_was_known_is_caught_only_by_records_kept_before(
    session: Session, player: int, tmp_path: Path
) -> None:
    key = fairness_service.public_key_info(session).public_key_hex
    before = fairness_service.active_seed_pair(session, player)
    # The recipe: the next pair's signed commitment, and the seed sent to start it, first.
    kept_before = {"document": before.next_commitment_document, "signature": before.next_signature}
    rotation = {"seed_pair_id": before.next_seed_pair_id, "client_seed": SEED}
    assert signature_checker(key)(kept_before["document"], kept_before["signature"])

    made = rotate_onto_a_pair_made_now(session, player, SEED, losing_seed(SEED, ROUNDS))
    active = fairness_service.active_seed_pair(session, player)
    assert active.seed_pair_id == made != before.next_seed_pair_id
    assert active.client_seed == SEED
    # Shown before its first round, but after the seed was sent: the old recipe's commitment.
    kept_after = {"document": active.commitment_document, "signature": active.signature}
    played = [rounds.place_casino_war_bet(session, player, 100, 0) for _ in range(ROUNDS)]
    assert [r.outcome for r in played] == ["lose"] * ROUNDS

    caught = (
        f"commitment document: records: seed pair {made} deals with the client seed you sent "
        f"to start seed pair {before.next_seed_pair_id} (whose commitment you recorded before "
        "play): a pair committed after your client seed was known"
    )
    recipe = _records(key, [kept_before, kept_after], [rotation])
    # Before the reveal, the receipts' client seed gives it away already.
    code, out = _verify(tmp_path, _bundle(session, player, made), recipe, key)
    assert code == 1 and caught in _lines(out), out

    fairness_service.rotate(session, player, "next seed")
    bundle = _bundle(session, player, made)
    code, out = _verify(tmp_path, bundle, _records(key, [kept_after]), key)
    assert code == 0, out  # what the old recipe kept cannot tell
    code, out = _verify(tmp_path, bundle, recipe, key)
    assert code == 1 and caught in _lines(out), out
    assert [line for line in _lines(out) if ": records: " in line] == [caught]


def test_an_honest_rotation_agrees_with_the_recorded_rotation_and_a_changed_seed_does_not(
    session: Session, player: int, tmp_path: Path
) -> None:
    key = fairness_service.public_key_info(session).public_key_hex
    before = fairness_service.active_seed_pair(session, player)
    kept = {"document": before.next_commitment_document, "signature": before.next_signature}
    rotation = {"seed_pair_id": before.next_seed_pair_id, "client_seed": SEED}
    rotated = fairness_service.rotate(session, player, SEED)
    assert rotated.active.seed_pair_id == before.next_seed_pair_id
    assert rotated.active.commitment_document == before.next_commitment_document
    played = rounds.place_casino_war_bet(session, player, 100, 0)
    if played.status == "awaiting_decision":  # a tie: the seed is the service's own
        rounds.decide_casino_war(session, player, played.id, "surrender")
    fairness_service.rotate(session, player, "next seed")
    bundle = _bundle(session, player, before.next_seed_pair_id)
    code, out = _verify(tmp_path, bundle, _records(key, [kept], [rotation]), key)
    assert code == 0, out
    # The committed pair started with a seed other than the one sent is caught as well.
    other = {**rotation, "client_seed": "what I typed"}
    code, out = _verify(tmp_path, bundle, _records(key, [kept], [other]), key)
    assert code == 1
    assert (
        f"commitment document: records: seed pair {before.next_seed_pair_id} deals with the "
        'client seed "my own seed", but you sent "what I typed" to start it (recorded)'
    ) in _lines(out), out
