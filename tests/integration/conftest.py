"""Fixtures for service tests: players, and a rig that makes the next rounds deal what a test
needs (see ``service_support``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from service_support import PASSWORD
from service_support import install_seed
from service_support import seed_dealing
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.models import SeedPair
from sota_casino.services import accounts


@pytest.fixture
def register(session: Session) -> Callable[..., int]:
    counter = iter(range(1, 10_000))

    def make(name: str | None = None) -> int:
        return accounts.register(session, name or f"player{next(counter)}", PASSWORD).id

    return make


@pytest.fixture
def player(register: Callable[..., int]) -> int:
    return register("alice")


@pytest.fixture
def rig(session: Session) -> Callable[[int, list[str]], bytes]:
    """``rig(user_id, ["tie", "win"])``: the player's next rounds deal those outcomes."""

    def install(user_id: int, want: list[str]) -> bytes:
        with session.begin():
            pair = session.scalars(
                select(SeedPair).where(SeedPair.user_id == user_id, SeedPair.status == "active")
            ).one()
            client_seed, nonce = pair.client_seed, pair.next_nonce
        seed = seed_dealing(want, client_seed, nonce)
        install_seed(session, user_id, seed)
        return seed

    return install
