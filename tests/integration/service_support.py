"""Helpers for service tests: seed pairs whose next round deals what a test needs.

Tests may write the database directly where a real attacker or operator could not: choosing a
server seed is how a test makes a tie come at a known nonce (the commitment is re-signed, so
the pair stays verifiable).
"""

from __future__ import annotations

import hashlib

from log_support import relog_commitment
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core import casino_war
from sota_casino.core import fairness
from sota_casino.core.cards import rank_value
from sota_casino.models import SeedPair
from sota_casino.services import fairness as fairness_service
from sota_casino.services import ledger

PASSWORD = "correct horse battery"


def first_cards(server_seed: bytes, client_seed: str, nonce: int, decks: int = 6) -> tuple:
    return fairness.shuffled_shoe(
        fairness.Seeds(server_seed, client_seed, nonce), "standard52", decks, 7
    )


def classify(cards: tuple) -> str:
    player, dealer = rank_value(cards[0]), rank_value(cards[1])
    return "tie" if player == dealer else "win" if player > dealer else "lose"


def seed_dealing(want: list[str], client_seed: str, start_nonce: int = 0) -> bytes:
    """Return the first deterministic server seed whose next rounds deal ``want`` in order."""
    for i in range(100_000):
        seed = hashlib.sha256(f"test-seed-{i}".encode()).digest()
        deals = [
            classify(first_cards(seed, client_seed, start_nonce + k)) for k in range(len(want))
        ]
        if deals == want:
            return seed
    raise AssertionError(f"no seed deals {want}")


def install_seed(session: Session, user_id: int, server_seed: bytes) -> SeedPair:
    """Give the player's active pair ``server_seed``, re-signing its commitment."""
    with session.begin():
        pair = session.scalars(
            select(SeedPair).where(SeedPair.user_id == user_id, SeedPair.status == "active")
        ).one()
        pair.server_seed = server_seed.hex()
        pair.commitment = fairness.commitment_of(server_seed)
        envelope = fairness_service.signed(
            session, dict(pair.commitment_document, commitment=pair.commitment)
        )
        pair.commitment_document = envelope["document"]
        pair.commitment_signature = envelope["signature"]
        relog_commitment(session, pair)
    return pair


def assert_books_clean(session: Session) -> None:
    from sota_casino.services import audit

    report = ledger.check(session)
    assert report.ok, report.problems
    verdict = audit.verify(session)
    assert verdict["ok"], verdict


TABLE = casino_war.TableRules()
