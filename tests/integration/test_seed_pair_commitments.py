"""One server seed serves one seed pair: the database refuses a second pair committed to it, and
a seed drawn again is drawn anew (revealed for one pair, a seed would tell every shuffle of the
other in advance). The whole check's finding of a pair committed to another's seed, in a
database without the refusal: test_audit_and_commands.py."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from sota_casino.core import fairness
from sota_casino.core.errors import Conflict
from sota_casino.models import SeedPair
from sota_casino.services import fairness as fairness_service


def _pairs(session: Session, user_id: int) -> list[SeedPair]:
    with session.begin():
        found = session.scalars(
            sa.select(SeedPair).where(SeedPair.user_id == user_id).order_by(SeedPair.id)
        ).all()
        session.expunge_all()
    return list(found)


def test_the_database_refuses_a_second_pair_committed_to_one_server_seed(
    session: Session, register: Callable[..., int]
) -> None:
    first = _pairs(session, register("ann"))[0]
    other = register("bob")
    twin = SeedPair(
        user_id=other,
        status="revealed",
        server_seed=first.server_seed,
        commitment=first.commitment,
        commitment_document={},
        commitment_signature="",
    )
    with pytest.raises(sa.exc.IntegrityError, match="commitment"), session.begin():
        session.add(twin)


def _drawing(seeds: list[bytes]) -> Callable[[], bytes]:
    """A generator that draws ``seeds`` again first, then fresh ones."""
    drawn: Iterator[bytes] = iter(seeds)
    fresh = fairness.new_server_seed  # as it is before the test replaces it
    return lambda: next(drawn, None) or fresh()


def test_a_server_seed_drawn_again_is_drawn_anew_for_the_new_pair(
    session: Session, register: Callable[..., int], monkeypatch: pytest.MonkeyPatch
) -> None:
    player = register("ann")
    taken = bytes.fromhex(_pairs(session, player)[0].server_seed)
    monkeypatch.setattr(fairness, "new_server_seed", _drawing([taken]))

    fairness_service.rotate(session, player)

    commitments = [pair.commitment for pair in _pairs(session, player)]
    assert len(commitments) == 3 and len(set(commitments)) == 3


def test_a_generator_that_draws_one_seed_every_time_is_refused_with_a_conflict(
    session: Session, register: Callable[..., int], monkeypatch: pytest.MonkeyPatch
) -> None:
    player = register("ann")
    taken = bytes.fromhex(_pairs(session, player)[0].server_seed)
    monkeypatch.setattr(fairness, "new_server_seed", lambda: taken)

    with pytest.raises(Conflict):
        fairness_service.rotate(session, player)
    with pytest.raises(Conflict):
        register("bob")  # its two pairs would take one seed

    assert len(_pairs(session, player)) == 2  # the rotation left nothing behind
