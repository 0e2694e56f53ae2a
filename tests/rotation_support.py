"""A dishonest rotation: what an operator holding the signing key and the database can do once
a player's client seed arrives, signed and logged exactly as the service signs and logs.

The honest service activates the pair it committed to (and signed) before the client seed was
sent. This one reveals the active pair as usual, then makes a NEW pair whose server seed it
chose knowing the client seed (say, one whose next rounds lose), and activates that one
instead; the committed pair stays next. Every document is signed with the real key and every
event is in the log, in order: only what the player kept before sending the seed tells.
"""

from __future__ import annotations

import itertools
from unittest import mock

from seed_support import candidate_seeds
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core import fairness
from sota_casino.core.cards import rank_value
from sota_casino.models import SeedPair
from sota_casino.services import fairness as fairness_service


def losing_seed(client_seed: str, rounds: int, start_nonce: int = 0) -> bytes:
    """Return a server seed whose next ``rounds`` Casino War rounds (six decks) deal the
    player a lower card than the dealer: what a cheat tries seeds for once the client seed
    is known."""
    for seed in itertools.islice(candidate_seeds("chosen after the client seed"), 100_000):
        if all(_player_loses(seed, client_seed, start_nonce + k) for k in range(rounds)):
            return seed
    raise AssertionError(f"no seed loses {rounds} rounds")


def _player_loses(seed: bytes, client_seed: str, nonce: int) -> bool:
    cards = fairness.shuffled_shoe(fairness.Seeds(seed, client_seed, nonce), "standard52", 6, 2)
    return rank_value(cards[0]) < rank_value(cards[1])


def rotate_onto_a_pair_made_now(
    session: Session, user_id: int, client_seed: str, server_seed: bytes
) -> int:
    """Reveal the player's active pair, and activate with ``client_seed`` a pair made now with
    ``server_seed`` (committed, signed and logged now) instead of the committed next pair.

    :returns: the id of the pair made now.
    """
    with session.begin():
        current = session.scalars(
            select(SeedPair).where(SeedPair.user_id == user_id, SeedPair.status == "active")
        ).one()
        fairness_service.reveal_pair(session, current)
        with mock.patch.object(fairness, "new_server_seed", return_value=server_seed):
            # Made active at once: the committed pair keeps its place as the only next one.
            made = fairness_service.create_seed_pair(session, user_id, "active")
        fairness_service.activate(session, made, client_seed)
        return made.id
