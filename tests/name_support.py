"""A sign-up whose check for a taken name misses, as a write past the service's check would:
the database's unique index on lower(username) alone stands in the way then."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from sota_casino.services import accounts


def name_check_missed_once(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the next sign-up's name checks pass whatever the name (its look before hashing the
    password, then its check in the transaction), as if another sign-up took the name just
    after them; the checks after it run.

    :returns: the checks made in the transaction, in order ("missed", then "checked" for each
        real one).
    """
    made: list[str] = []
    check, look = accounts.refuse_taken_name, accounts.name_taken
    looked: list[str] = []

    def unseen_once(session: Session, username: str) -> bool:
        if not looked:
            looked.append(username)
            return False
        return look(session, username)

    monkeypatch.setattr(accounts, "name_taken", unseen_once)

    def missing_once(session: Session, username: str) -> None:
        if not made:
            made.append("missed")
            return
        made.append("checked")
        check(session, username)

    monkeypatch.setattr(accounts, "refuse_taken_name", missing_once)
    return made
