"""A sign-up whose check for a taken name misses, as a write past the service's check would:
the database's unique index on lower(username) alone stands in the way then."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from sota_casino.services import accounts


def name_check_missed_once(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the next sign-up's name check pass whatever the name; the checks after it run.

    :returns: the checks made, in order ("missed", then "checked" for each real one).
    """
    made: list[str] = []
    check = accounts.refuse_taken_name

    def missing_once(session: Session, username: str) -> None:
        if not made:
            made.append("missed")
            return
        made.append("checked")
        check(session, username)

    monkeypatch.setattr(accounts, "refuse_taken_name", missing_once)
    return made
