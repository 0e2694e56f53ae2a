"""Free text a service stores or searches with: a NUL character is refused the same way on
SQLite and PostgreSQL (which cannot store one), never a database error."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from sota_casino.core.errors import InvalidInput
from sota_casino.core.errors import Unauthorized
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services import fairness as fairness_service
from sota_casino.services import money

NUL = "bad\x00text"


def test_nul_characters_are_refused_before_they_reach_the_database(
    session: Session, player: int
) -> None:
    operator = accounts.create_operator(session, "olga", "a long enough secret").id
    refusals = [
        lambda: fairness_service.rotate(session, player, NUL),
        lambda: money.adjust(session, operator, player, "sweets", 5, NUL),
        lambda: audit.entries(session, text=NUL),
        lambda: audit.entries(session, actor=NUL),
        lambda: accounts.find_users(session, NUL),
        lambda: accounts.authenticate(session, NUL, "whatever password"),
    ]
    for refuse in refusals:
        with pytest.raises(InvalidInput, match="NUL"):
            refuse()
    assert money.balances(session, player).sweets == 100
    assert fairness_service.active_seed_pair(session, player).next_nonce == 0
    with pytest.raises(Unauthorized):  # ordinary text still goes through
        accounts.authenticate(session, "nobody-here", "whatever password")
