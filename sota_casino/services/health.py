"""Is this instance worth sending traffic to: the database answers and its schema is current."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session

from ..migrate import alembic_config
from .tx import own_transactions


@functools.cache
def migrations_head() -> str:
    """The newest migration this code ships (read once per process, and Alembic imported only
    then: see :mod:`sota_casino.migrate`)."""
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()
    return ",".join(sorted(heads))


@dataclass(frozen=True, slots=True)
class Migrations:
    database: str | None  # None: the database holds no migration yet
    code: str


@dataclass(frozen=True, slots=True)
class Readiness:
    """Whether to send this instance traffic: ``ready`` once the database answers and is
    migrated to the head this code ships."""

    ready: bool
    database: Literal["ok", "unreachable"]
    migrations: Migrations | None  # None: the database did not answer


@own_transactions
def readiness(session: Session) -> Readiness:
    """Say whether the database answers and is migrated to this code's head.

    Never raises for a database that is down: that is the answer, ``ready`` false.
    """
    try:
        with session.begin():
            versions = session.execute(text("SELECT version_num FROM alembic_version")).scalars()
            schema = ",".join(sorted(versions))
    except (DBAPIError, PoolTimeout):  # no answer, or no pooled connection free in time
        return Readiness(False, "unreachable", None)
    head = migrations_head()
    return Readiness(schema == head, "ok", Migrations(schema or None, head))
