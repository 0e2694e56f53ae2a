"""Alembic environment: the URL comes from the caller (``sota_casino.migrate``), never a file."""

from __future__ import annotations

import warnings

from alembic import context
from sqlalchemy import pool

from sota_casino import models  # noqa: F401  (registers every table on Base.metadata)
from sota_casino.database import Base
from sota_casino.db import make_engine

config = context.config
target_metadata = Base.metadata


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    url = config.get_main_option("sqlalchemy.url")
    assert url, "sota_casino.migrate sets sqlalchemy.url"
    engine = make_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
        )
        with context.begin_transaction(), warnings.catch_warnings():
            if connection.dialect.name == "sqlite":
                # SQLite's indexes on an expression (lower(username)) cannot be reflected, so
                # autogenerate skips them there, warning each time; PostgreSQL compares them,
                # and tests/integration/test_migrations.py compares their DDL on SQLite.
                warnings.filterwarnings("ignore", "(?s).*expression-based index")
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
