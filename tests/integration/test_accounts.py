"""Registration refuses weak passwords with a reason; names are unique ignoring case."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from sota_casino.core.errors import InvalidInput
from sota_casino.services import accounts


@pytest.mark.parametrize(
    ("password", "reason"),
    [
        ("short", "10 to 128"),
        ("aaaaaaaaaaaa", "different characters"),
        ("Password123", "too common"),
        ("qwertyuiop", "too common"),
        ("my-carol-secret", "username"),
    ],
)
def test_weak_passwords_are_refused_with_the_reason(
    session: Session, password: str, reason: str
) -> None:
    with pytest.raises(InvalidInput, match=reason):
        accounts.register(session, "Carol", password)


def test_a_name_taken_in_another_case_is_refused(session: Session) -> None:
    accounts.register(session, "carol", "a long enough secret")
    with pytest.raises(accounts.UsernameTaken):
        accounts.register(session, "CAROL", "another long secret")
