"""Transactions: one per use case, retried on serialization failures and deadlocks."""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable
from typing import Concatenate
from typing import ParamSpec
from typing import TypeVar

from sqlalchemy import Select
from sqlalchemy import func
from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

P = ParamSpec("P")
R = TypeVar("R")

ATTEMPTS = 8
#: PostgreSQL's serialization_failure and deadlock_detected.
RETRYABLE_SQLSTATES = {"40001", "40P01"}
#: A concurrent first use of one idempotency key: the retry finds and replays the winner's answer.
RETRYABLE_CONSTRAINTS = ("uq_idempotency_records_user_key", "idempotency_records.user_id")


def _retryable(exc: DBAPIError) -> bool:
    sqlstate = getattr(exc.orig, "sqlstate", None)
    if sqlstate in RETRYABLE_SQLSTATES:
        return True
    if isinstance(exc, IntegrityError):
        return any(name in str(exc.orig) for name in RETRYABLE_CONSTRAINTS)
    return False


def transactional(
    fn: Callable[Concatenate[Session, P], R],
) -> Callable[Concatenate[Session, P], R]:
    """Run ``fn(session, ...)`` in its own transaction, committed when it returns.

    A domain error rolls everything back; serialization failures and deadlocks are retried a
    bounded number of times with a short backoff.
    """

    @functools.wraps(fn)
    def run(session: Session, *args: P.args, **kwargs: P.kwargs) -> R:
        if session.in_transaction():
            session.rollback()  # a read left open by autobegin; our own work starts clean
        for attempt in range(ATTEMPTS):
            try:
                with session.begin():
                    return fn(session, *args, **kwargs)
            except DBAPIError as exc:
                if attempt == ATTEMPTS - 1 or not _retryable(exc):
                    raise
                time.sleep(0.005 * 2**attempt)
        raise AssertionError("unreachable")

    return run


def insert_ignoring_conflicts(session: Session, table: type, values: dict[str, object]) -> None:
    """Insert a row unless one with the same unique key exists (both databases)."""
    dialect = session.get_bind().dialect.name
    statement = (
        postgresql.insert(table).on_conflict_do_nothing()
        if dialect == "postgresql"
        else sqlite.insert(table).on_conflict_do_nothing()
        if dialect == "sqlite"
        else insert(table)
    )
    session.execute(statement.values(**values))


SelectT = TypeVar("SelectT", bound=Select)  # type: ignore[type-arg]


def locked(statement: SelectT) -> SelectT:
    """Return ``statement`` as ``SELECT ... FOR UPDATE`` that refreshes what the session holds.

    Sessions keep their objects across transactions (``expire_on_commit=False``), and a query
    does not overwrite an object the session already holds: without ``populate_existing`` a row
    locked now would be read as an earlier transaction saw it (a stale nonce, a round's old
    status).
    """
    return statement.with_for_update().execution_options(populate_existing=True)


def serialize_on(session: Session, name: str) -> None:
    """Hold a lock named ``name`` until the transaction ends, on every worker and server.

    For a read-then-write that no row lock covers (count the attempts, then add one): on
    PostgreSQL a transaction-scoped advisory lock, keyed by a hash of the name; on SQLite the
    write lock that ``BEGIN IMMEDIATE`` took already holds every other writer off.
    """
    if session.get_bind().dialect.name != "postgresql":
        return
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    session.execute(select(func.pg_advisory_xact_lock(key)))
