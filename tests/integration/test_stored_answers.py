"""An answer stored for an Idempotency-Key is read back as its result type when the request is
sent again: one stored before a field was added to that type must still read back, as the
answer it was."""

from __future__ import annotations

from typing import Any

from service_support import prisoners_game_awaiting_a_move
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.models import IdempotencyRecord
from sota_casino.services import results
from sota_casino.services import rounds


def _store_as_before(session: Session, key: str, change: Any) -> None:
    """Rewrite the answer stored for ``key`` by ``change``, as an older version stored it."""
    with session.begin():
        record = session.scalars(
            select(IdempotencyRecord).where(IdempotencyRecord.key == key)
        ).one()
        stored = dict(record.response)
        change(stored)
        record.response = stored


def _without_pending_move(stored: dict[str, Any]) -> None:
    stored["pending"] = {k: v for k, v in stored["pending"].items() if k != "move"}


def test_a_game_answer_stored_before_pending_move_was_added_replays_as_it_was(
    session: Session, player: int
) -> None:
    """``pending.move`` (the number of the choice a move answers) was added to the game's
    answer after answers were stored without it: a retry of such a deal or move failed to read
    its stored answer back (an error, the API's 500). It replays the answer as it was, with the
    number the choice had."""
    for _ in range(20):  # a game whose first move leaves it waiting for a second
        game = prisoners_game_awaiting_a_move(session, player)
        pending = game.pending
        assert pending is not None
        cards = sorted(pending.options)[: pending.count]
        moved = rounds.sota_move(session, player, game.id, cards, idempotency_key=f"m{game.id}")
        if moved.pending is not None:
            break
    assert moved.pending is not None and moved.pending.move == 1
    _store_as_before(session, f"m{game.id}", _without_pending_move)
    again = rounds.sota_move(session, player, game.id, cards, idempotency_key=f"m{game.id}")
    assert results.to_json(again) == results.to_json(moved)

    # The deal's stored answer: a game waiting for its first move.
    for attempt in range(40):
        key = f"deal{attempt}"
        first = rounds.play_sota(
            session, player, 1, rules={"prisoners_of_war": True}, idempotency_key=key
        )
        if first.pending is not None:
            break
    assert first.pending is not None and first.pending.move == 0
    _store_as_before(session, key, _without_pending_move)
    again = rounds.play_sota(
        session, player, 1, rules={"prisoners_of_war": True}, idempotency_key=key
    )
    assert results.to_json(again) == results.to_json(first)
