"""Alembic is the schema's only path: empty to head, no drift, and back down again."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from sota_casino import migrate
from sota_casino import models  # noqa: F401  (registers every table on Base.metadata)
from sota_casino.database import Base


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
