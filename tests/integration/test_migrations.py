"""Alembic is the schema's only path: empty to head, no drift, and back down again."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import sqlalchemy as sa

from sota_casino import migrate
from sota_casino import models  # noqa: F401  (registers every table on Base.metadata)
from sota_casino.database import Base
from sota_casino.db import make_engine


def test_migrations_upgrade_match_the_models_and_downgrade_to_empty(db_url: str) -> None:
    migrate.check(db_url)  # raises if models and migrations disagree
    migrate.downgrade(db_url, "base")
    engine = sa.create_engine(db_url)
    tables = set(sa.inspect(engine).get_table_names()) - {"alembic_version"}
    assert tables == set()
    migrate.upgrade(db_url)
    assert {"accounts", "postings", "audit_entries", "rounds"} <= set(
        sa.inspect(engine).get_table_names()
    )
    migrate.check(db_url)
    engine.dispose()


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_on_sqlite_the_indexes_on_expressions_are_as_the_models_declare(db_url: str) -> None:
    # SQLite cannot reflect them, so the check above skips them there (PostgreSQL compares).
    # The models' own DDL on SQLite, as create_all writes it: without the indexes declared for
    # PostgreSQL alone (the trigrams of names).
    on_expressions = {
        index.name
        for table in Base.metadata.tables.values()
        for index in table.indexes
        if any(not isinstance(part, sa.Column) for part in index.expressions)
    }
    declared = {
        name: sql for name, sql in _indexes(_created("sqlite://")).items() if name in on_expressions
    }
    assert "uq_users_username_lower" in declared
    assert "ix_users_username_trigrams" in on_expressions - set(declared)
    found = _indexes(sa.create_engine(db_url))
    assert {name: found.get(name) for name in declared} == declared


def _created(url: str) -> sa.Engine:
    engine = sa.create_engine(url)
    Base.metadata.create_all(engine)
    return engine


def _indexes(engine: sa.Engine) -> dict[str, str]:
    with engine.connect() as connection:
        query = sa.text("SELECT name, sql FROM sqlite_master WHERE type = 'index'")
        found = dict(connection.execute(query).tuples().all())
    engine.dispose()
    return found


def test_a_new_sqlite_database_and_its_wal_are_readable_by_the_owner_alone(tmp_path: Path) -> None:
    # It holds the server seeds not revealed yet and the password hashes: under the usual
    # umask (022) SQLite would make it, and its WAL after it, readable by every local user.
    path = tmp_path / "casino.db"
    old_umask = os.umask(0o022)
    try:
        migrate.upgrade(f"sqlite:///{path}")
        engine = make_engine(f"sqlite:///{path}", existing_only=True)
        with engine.connect() as connection:  # the app's engine opens the WAL and its index
            connection.execute(sa.text("SELECT count(*) FROM users"))
            made = sorted(p for p in tmp_path.iterdir() if p.name.startswith("casino.db"))
            modes = {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in made}
        engine.dispose()
    finally:
        os.umask(old_umask)
    assert {"casino.db", "casino.db-wal", "casino.db-shm"} <= set(modes)
    assert set(modes.values()) == {"0o600"}, modes
