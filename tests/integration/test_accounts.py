"""Registration refuses weak passwords with a reason; names are unique ignoring case, in the
database itself too, and no other letter passes for an ASCII one; an API token is revoked alone,
once."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from flask import Flask
from name_support import name_check_missed_once
from service_support import PASSWORD
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sota_casino import migrate
from sota_casino.core.errors import InvalidInput
from sota_casino.core.errors import Unauthorized
from sota_casino.models import User
from sota_casino.services import accounts

#: The unique index on lower(username), as both databases name it in a refusal.
UNIQUE_LOWER_NAME = "uq_users_username_lower"


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


def test_a_new_password_holding_the_username_is_refused_as_at_sign_up(session: Session) -> None:
    carol = accounts.register(session, "Carol", "a long enough secret")
    with pytest.raises(InvalidInput, match="username"):
        accounts.change_password(session, carol.id, "a long enough secret", "my-CAROL-secret")
    assert accounts.authenticate(session, "carol", "a long enough secret").user.id == carol.id


def test_a_name_taken_in_another_case_is_refused(session: Session) -> None:
    accounts.register(session, "carol", "a long enough secret")
    with pytest.raises(accounts.UsernameTaken):
        accounts.register(session, "CAROL", "another long secret")


def test_a_name_with_a_letter_that_lowers_to_ascii_is_no_players_name(session: Session) -> None:
    # U+212A KELVIN SIGN lowers to "k" in Python, never in either database.
    accounts.register(session, "kim", PASSWORD)
    assert accounts.authenticate(session, "KIM", PASSWORD).user.username == "kim"
    with pytest.raises(Unauthorized, match="wrong username or password"):
        accounts.authenticate(session, "\u212aim", PASSWORD)
    assert [user.username for user in accounts.find_users(session, "KI")] == ["kim"]
    assert accounts.find_users(session, "\u212ai") == []


def test_a_name_search_reads_underscore_and_percent_as_themselves(session: Session) -> None:
    # Names may hold "_"; in LIKE it is any one character, and "%" any run of them.
    for name in ("ann_b", "annxb", "ann.b"):
        accounts.register(session, name, PASSWORD)
    assert [user.username for user in accounts.find_users(session, "N_B")] == ["ann_b"]
    assert [user.username for user in accounts.find_users(session, "nn_")] == ["ann_b"]
    assert accounts.find_users(session, "n%b") == []
    assert accounts.find_users(session, "/") == []


def test_the_database_refuses_two_names_differing_only_in_case(session: Session) -> None:
    # Straight through the session, past the service's check: the unique index refuses it.
    with session.begin():
        session.add(User(username="Alice", password_hash="not a hash", role="operator"))
    with pytest.raises(IntegrityError, match=UNIQUE_LOWER_NAME), session.begin():
        session.add(User(username="alice", password_hash="not a hash", role="operator"))
    with session.begin():
        names = session.scalars(select(User.username)).all()
    assert names == ["Alice"]


def test_a_sign_up_that_missed_the_name_check_is_refused_as_taken(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    accounts.register(session, "carol", "a long enough secret")
    checks = name_check_missed_once(monkeypatch)
    with pytest.raises(accounts.UsernameTaken, match="'CAROL' is taken"):
        accounts.register(session, "CAROL", "another long secret")
    assert checks == ["missed", "checked"]  # the index refused the first try, the retry saw why
    with session.begin():
        assert session.scalars(select(User.username)).all() == ["carol"]


def test_the_migration_indexes_the_names_of_a_database_holding_players(
    app: Flask, db_url: str, session: Session
) -> None:
    ids = [accounts.register(session, name, PASSWORD).id for name in ("Dora", "eve", "Frank")]
    session.close()
    app.extensions["sota_casino.engine"].dispose()
    migrate.downgrade(db_url, "0013")  # to before names were unique ignoring case
    assert _lower_name_index(db_url) is None
    migrate.upgrade(db_url)
    assert _lower_name_index(db_url) in LOWER_NAME_INDEX
    assert accounts.authenticate(session, "dora", PASSWORD).user.id == ids[0]  # the players stay
    with pytest.raises(IntegrityError, match=UNIQUE_LOWER_NAME), session.begin():
        session.add(User(username="EVE", password_hash="not a hash"))
    with pytest.raises(accounts.UsernameTaken):
        accounts.register(session, "FRANK", PASSWORD)


def test_the_migration_refuses_names_that_already_differ_only_in_case(
    app: Flask, db_url: str, session: Session
) -> None:
    accounts.register(session, "gina", PASSWORD)
    session.close()
    app.extensions["sota_casino.engine"].dispose()
    migrate.downgrade(db_url, "0013")
    engine = sa.create_engine(db_url)
    with Session(engine) as direct, direct.begin():
        direct.add(User(username="GINA", password_hash="not a hash"))
    with pytest.raises(RuntimeError, match="'GINA', 'gina'"):
        migrate.upgrade(db_url)
    with engine.connect() as connection:
        version = connection.execute(sa.text("SELECT version_num FROM alembic_version"))
        assert version.scalar() == "0013"  # nothing applied
    with engine.begin() as connection:
        connection.execute(sa.text("DELETE FROM users WHERE username = 'GINA'"))
    engine.dispose()
    migrate.upgrade(db_url)
    assert _lower_name_index(db_url) in LOWER_NAME_INDEX


def _lower_name_index(db_url: str) -> str | None:
    """The definition of the unique index on lower(username), as the database reports it."""
    engine = sa.create_engine(db_url)
    query = (
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = :name"
        if engine.dialect.name == "sqlite"
        else "SELECT indexdef FROM pg_indexes WHERE indexname = :name"
    )
    with engine.connect() as connection:
        found = connection.execute(sa.text(query), {"name": UNIQUE_LOWER_NAME}).scalar()
    engine.dispose()
    return found


#: That definition on SQLite and on PostgreSQL.
LOWER_NAME_INDEX = {
    "CREATE UNIQUE INDEX uq_users_username_lower ON users (lower(username))",
    "CREATE UNIQUE INDEX uq_users_username_lower ON public.users USING btree "
    "(lower((username)::text))",
}


def test_a_revoked_token_alone_ends_and_a_second_revocation_is_refused(session: Session) -> None:
    player = accounts.register(session, "dora", PASSWORD)
    leaked, kept = (accounts.issue_api_token(session, "dora", PASSWORD).token for _ in range(2))
    accounts.revoke_api_token(session, leaked)
    assert accounts.session_user(session, leaked, kind="api") is None
    found = accounts.session_user(session, kept, kind="api")
    assert found is not None and found.id == player.id
    with pytest.raises(Unauthorized):
        accounts.revoke_api_token(session, leaked)  # ended already: nothing to end
