"""Alembic is the schema's only path: empty to head, no drift, and back down again."""

from __future__ import annotations

import sqlalchemy as sa

from sota_casino import migrate


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
