"""Transactions: one per use case, retried on serialization failures and deadlocks.

A use case that writes runs under :func:`transactional`; one that only reads runs under
:func:`read_only`. The difference matters on SQLite, where a writing transaction takes the
database's single write lock at ``BEGIN IMMEDIATE`` (``SELECT ... FOR UPDATE`` renders nothing
there, so that lock is what serializes money moves), while a read is a plain deferred ``BEGIN``
on a WAL snapshot that never waits for a writer nor makes one wait. PostgreSQL reads take no
row locks either way. A read of one statement may run under :func:`one_read`, outside any
transaction (what every request reads first, its caller's token).

A database that cannot be reached (down, restarting, read-only, full), or a wait for it that ran
out (a lock held elsewhere, a statement cut off: see db.py), is a clean :class:`Unavailable`.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import sys
import time
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any
from typing import Concatenate
from typing import Final
from typing import ParamSpec
from typing import TypeVar
from typing import cast

from sqlalchemy import Select
from sqlalchemy import func
from sqlalchemy import insert
from sqlalchemy import inspect
from sqlalchemy import select
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.exc import InterfaceError
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session
from sqlalchemy.orm import SessionTransactionOrigin

from ..core.errors import Conflict
from ..core.errors import Unavailable
from ..core.marks import N_

P = ParamSpec("P")
R = TypeVar("R")

ATTEMPTS = 8
#: PostgreSQL's serialization_failure and deadlock_detected.
RETRYABLE_SQLSTATES = {"40001", "40P01"}
#: Unique keys that two transactions may both check as free and then insert: the loser's retry
#: sees the winner's row and answers as if they had not overlapped. Each is named as PostgreSQL
#: and as SQLite report it.
RETRYABLE_CONSTRAINTS = (
    # A concurrent first use of one idempotency key: the retry replays the winner's answer.
    "uq_idempotency_records_user_key",
    "idempotency_records.user_id",
    # One public key registered by two accounts at once (each locks only its own row): the
    # retry finds it registered and refuses with a conflict.
    "uq_player_keys_public_key_hex",
    "player_keys.public_key_hex",
    # The service's key, registered by the first thing each process signs: after a new key is
    # deployed every worker's first requests do so at once; the retry finds it registered.
    "uq_signing_keys_public_key_hex",
    "signing_keys.public_key_hex",
    # A name taken, in any letter case, after the sign-up found it free: the retry refuses it
    # as taken (SQLite names an index on an expression as PostgreSQL does).
    "uq_users_username_lower",
    # A new pair's server seed drawn again (one chance in 2**256, unless the generator broke):
    # the retry draws a fresh one; a generator that keeps drawing taken seeds ends in a conflict.
    "uq_seed_pairs_commitment",
    "seed_pairs.commitment",
)
#: Connection option of a use case's writing transaction; on SQLite it begins ``IMMEDIATE``, as
#: every transaction not declared read-only does (see db.py).
WRITES = "sota_casino_writes"
#: Connection option of a read-only transaction: it begins deferred, and a write in it is
#: refused before it is sent.
READ_ONLY = "sota_casino_read_only"
#: Connection option of a use case that reads with one statement, outside any transaction.
ONE_READ = "sota_casino_one_read"
#: ``session.info`` key and connection option: the session's work is no request's (a command,
#: the standing checks), so its statements are not cut off (db.py lifts PostgreSQL's
#: ``statement_timeout`` for its transactions, and SQLite's progress handler lets them run).
#: Its lock waits stay bounded.
UNHURRIED = "sota_casino_unhurried"
#: The connection's options for each kind of use case.
_OPTIONS: dict[str, dict[str, Any]] = {
    WRITES: {WRITES: True},
    READ_ONLY: {READ_ONLY: True},
    # AUTOCOMMIT: the statement is its own snapshot, with no BEGIN or COMMIT to wait for.
    ONE_READ: {READ_ONLY: True, ONE_READ: True, "isolation_level": "AUTOCOMMIT"},
}
_UNHURRIED_OPTIONS = {mode: {**options, UNHURRIED: True} for mode, options in _OPTIONS.items()}
#: SQLite's: db.py sends no BEGIN for a one-statement read already, and switching the isolation
#: level costs a PRAGMA when the connection goes back to the pool (a fifth of the token's read).
_SQLITE_ONE_READ: dict[str, Any] = {READ_ONLY: True, ONE_READ: True}


def _options(session: Session, mode: str) -> dict[str, Any]:
    if mode == ONE_READ and session.get_bind().dialect.name == "sqlite":
        return _SQLITE_ONE_READ
    return (_UNHURRIED_OPTIONS if session.info.get(UNHURRIED) else _OPTIONS)[mode]


class NestedTransaction(RuntimeError):
    """A use case was called inside a transaction someone else opened: a bug of the caller.

    Helpers that run inside the caller's transaction take the session and open none; a use case
    (``@transactional``) owns its transaction, and rolling back the caller's would lose its work.
    """


#: Tries of a transaction whose connection failed before it committed: the pool pings and
#: replaces dead connections, so a database back from a restart is found again at once.
OUTAGE_ATTEMPTS = 3
#: What a client is told to wait before trying again (seconds).
RETRY_AFTER = 2
#: PostgreSQL's connection errors (08), insufficient resources such as a full disk (53),
#: operator intervention such as a shutdown or a statement_timeout (57), system errors (58), a
#: read-only transaction forced on the server (25006), and a lock_timeout (55P03).
OUTAGE_SQLSTATE_CLASSES = ("08", "53", "57", "58")
OUTAGE_SQLSTATES = {"25006", "55P03"}
#: SQLite's busy, locked, read-only, interrupted (a statement cut off: see db.py), I/O error,
#: full and cannot-open (primary result codes).
OUTAGE_SQLITE_CODES = {5, 6, 8, 9, 10, 13, 14}
#: The waits that ran out: PostgreSQL's lock_not_available (``lock_timeout``) and
#: query_canceled (``statement_timeout``), SQLite's busy and locked (its busy timeout) and
#: interrupted (its statement bound).
TIMEOUT_SQLSTATES = {"55P03", "57014"}
TIMEOUT_SQLITE_CODES = {5, 6, 9}


class NoAnswerInTime(OperationalError):
    """PostgreSQL did not answer a statement, COMMIT or ROLLBACK by its deadline, and its
    connection was cut off (db.py's watchdog: a server frozen while its machine runs on). A wait
    that ran out, like a statement_timeout: trying again at once would wait as long again."""


log = logging.getLogger(__name__)


def is_outage(exc: DBAPIError) -> bool:
    """Tell whether ``exc`` says the database cannot serve now, rather than that a statement
    is wrong: a lost or refused connection, a shutdown, a read-only or full database."""
    if exc.connection_invalidated:
        return True
    orig = exc.orig
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate is not None:
        return sqlstate in OUTAGE_SQLSTATES or sqlstate[:2] in OUTAGE_SQLSTATE_CLASSES
    sqlite_code = getattr(orig, "sqlite_errorcode", None)
    if sqlite_code is not None:
        return sqlite_code & 0xFF in OUTAGE_SQLITE_CODES
    # No code at all: psycopg could not even connect.
    return isinstance(exc, OperationalError | InterfaceError)


def waited_too_long(exc: DBAPIError) -> bool:
    """Tell whether ``exc`` ends a wait that ran out (a lock held elsewhere, a statement cut
    off, a connection the server did not complete in time): trying again at once would only
    wait as long again."""
    if isinstance(exc, NoAnswerInTime):
        return True
    orig = exc.orig
    if _connection_timed_out(orig):
        return True
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate is not None:
        return sqlstate in TIMEOUT_SQLSTATES
    sqlite_code = getattr(orig, "sqlite_errorcode", None)
    return sqlite_code is not None and sqlite_code & 0xFF in TIMEOUT_SQLITE_CODES


def _connection_timed_out(orig: BaseException | None) -> bool:
    """Tell whether ``orig`` is psycopg's ``connect_timeout`` running out. Only a PostgreSQL
    engine imports psycopg, and until one has, no error can be psycopg's."""
    psycopg = sys.modules.get("psycopg")
    return psycopg is not None and isinstance(orig, psycopg.errors.ConnectionTimeout)


#: How :func:`unavailable` logs a refusal; a command that says the outage in its own line
#: leaves this one out (cli.py).
REFUSAL_LOG: Final = "database unavailable: %s"


def unavailable(exc: DBAPIError | PoolTimeout) -> Unavailable:
    """The refusal for an outage (or no pooled connection free in time), logged without the
    statement's parameters."""
    orig = getattr(exc, "orig", None)
    log.warning(REFUSAL_LOG, type(orig).__name__ if orig else exc)
    return Unavailable(
        N_("the casino cannot reach its records right now; try again in a moment"),
        retry_after=RETRY_AFTER,
    )


def outage_of(exc: BaseException) -> str | None:
    """Say which outage ``exc`` is, in words for a log line (the driver's error class, never
    its message: it may hold the database's address); ``None`` if it is none (a bug)."""
    if isinstance(exc, Unavailable) and isinstance(exc.__cause__, DBAPIError):
        exc = exc.__cause__  # the refusal names the driver's error it was raised from
    if isinstance(exc, DBAPIError) and is_outage(exc):
        return f"the database is unavailable ({type(exc.orig).__name__})"
    if isinstance(exc, Unavailable):
        return "the database is unavailable"
    return None


#: How :func:`log_failure` logs an outage: what failed, then the outage in words.
OUTAGE_LOG: Final = "%s: %s"


def log_failure(logger: logging.Logger, message: str, exc: BaseException) -> None:
    """Log the failure of work that is tried again later or cut short: an outage in one line,
    by its kind (expected, and a traceback at every attempt buried the log during one),
    anything else with its traceback (a bug)."""
    outage = outage_of(exc)
    if outage is not None:
        logger.warning(OUTAGE_LOG, message, outage)
    else:
        logger.error(message, exc_info=exc)


#: A unique key broken: PostgreSQL's unique_violation; SQLite's UNIQUE and PRIMARY KEY
#: constraint codes (extended result codes).
UNIQUE_SQLSTATE = "23505"
UNIQUE_SQLITE_CODES = {2067, 1555}
#: What a request whose write lost a race on a unique key hears (a 409: trying again sees the
#: other write, and is refused or done as the service decides).
LOST_RACE: Final = N_("another request changed this at the same moment; try again")


def _broke_a_unique_key(exc: DBAPIError) -> bool:
    orig = exc.orig
    return (
        getattr(orig, "sqlstate", None) == UNIQUE_SQLSTATE
        or getattr(orig, "sqlite_errorcode", None) in UNIQUE_SQLITE_CODES
    )


def _lost_race(exc: DBAPIError) -> Conflict:
    """The conflict of a write that met a unique key another transaction took first, where no
    service check turned it into a refusal of its own (every known race has one: this keeps a
    new one from answering 500). Logged by the key's name only: its values may be a player's."""
    orig = exc.orig
    diagnostics = getattr(orig, "diag", None)
    key = getattr(diagnostics, "constraint_name", None) or str(orig).partition(":")[2].strip()
    log.warning("a write lost a race on the unique key %s", key or "(unnamed)")
    return Conflict(LOST_RACE)


#: What a request hears whose transaction deadlocked or failed to serialize at every try (a
#: 503 with ``Retry-After``, as an outage: nothing was done, and a later try finds the records
#: free once the requests that held them are done).
STILL_CONTENDED: Final = N_(
    "other requests are changing the same records right now; try again in a moment"
)


def _contended(exc: DBAPIError) -> bool:
    return getattr(exc.orig, "sqlstate", None) in RETRYABLE_SQLSTATES


def _still_contended(exc: DBAPIError) -> Unavailable:
    """The refusal of a transaction that deadlocked or failed to serialize at each of its
    :data:`ATTEMPTS` tries: a race, no bug, so never a 500. Logged by the database's code
    only."""
    log.warning(
        "a transaction met other requests' locks at each of its %d tries (%s)",
        ATTEMPTS,
        getattr(exc.orig, "sqlstate", None),
    )
    return Unavailable(STILL_CONTENDED, retry_after=RETRY_AFTER)


def _retryable(exc: DBAPIError) -> bool:
    if _contended(exc):
        return True
    if isinstance(exc, IntegrityError):
        return any(name in str(exc.orig) for name in RETRYABLE_CONSTRAINTS)
    return False


def _run_in_transaction(
    fn: Callable[Concatenate[Session, P], R],
    mode: str,
) -> Callable[Concatenate[Session, P], R]:
    """Run ``fn(session, ...)`` in its own transaction, committed when it returns.

    A domain error rolls everything back; serialization failures and deadlocks are retried a
    bounded number of times with a short backoff. A connection that failed before the commit
    is retried a few times too (on a fresh connection); then, or if the commit itself failed
    (whether it took effect is unknown, so it is never repeated), :class:`Unavailable`. A wait
    that ran out (a lock, a statement, or the pool's wait for a free connection) is
    :class:`Unavailable` at once: a retry would wait as long again, and the request must
    answer well before gunicorn's timeout. A unique key another transaction took first, once
    no retry helps, is :class:`~sota_casino.core.errors.Conflict`; a deadlock or a failure to
    serialize at every try is :class:`Unavailable` (a 503 that says when to try again).

    :raises NestedTransaction: at once if the caller has a transaction of its own open.
    """

    @functools.wraps(fn)
    def run(session: Session, *args: P.args, **kwargs: P.kwargs) -> R:
        if _refuse_nesting(session, fn):
            session.rollback()  # a read left open by autobegin; our own work starts clean
        for attempt in range(ATTEMPTS):
            committing = False
            try:
                with session.begin():
                    # The option reaches the connection before its BEGIN is emitted; the
                    # cast: SQLAlchemy types the options as a TypedDict of its own keys.
                    session.connection(execution_options=cast(Any, _options(session, mode)))
                    result = fn(session, *args, **kwargs)
                    committing = True
                return result
            except PoolTimeout as exc:
                raise unavailable(exc) from exc  # every pooled connection busy: a wait ran out
            except DBAPIError as exc:
                if is_outage(exc):
                    if committing or waited_too_long(exc) or attempt >= OUTAGE_ATTEMPTS - 1:
                        raise unavailable(exc) from exc
                    time.sleep(0.05 * 2**attempt)
                    continue
                if attempt == ATTEMPTS - 1 or not _retryable(exc):
                    if _broke_a_unique_key(exc):
                        raise _lost_race(exc) from exc
                    if _contended(exc):
                        raise _still_contended(exc) from exc
                    raise
                time.sleep(0.005 * 2**attempt)
        raise AssertionError("unreachable")

    return cast(Callable[Concatenate[Session, P], R], _marked(run, OWN))


def _refuse_nesting(session: Session, fn: Callable[..., Any]) -> bool:
    """Refuse to start ``fn``'s own transactions inside one the caller opened.

    :returns: whether a read left open by autobegin is in the way (not the caller's work).
    :raises NestedTransaction: if the caller has a transaction of its own open.
    """
    open_now = session.get_transaction()
    if open_now is None:
        return False
    if open_now.origin is not SessionTransactionOrigin.AUTOBEGIN:
        raise NestedTransaction(f"{fn.__name__} opens its own transaction; call it outside")
    return True


#: How a function of the services treats transactions (its ``transaction`` attribute).
OWN = "own"  # opens and commits its own: @transactional, @read_only, @own_transactions
CALLERS = "caller's"  # runs inside the caller's: @in_transaction


def _marked(fn: Callable[..., Any], kind: str) -> Any:
    fn.transaction = kind  # type: ignore[attr-defined]  # read by the services' tests
    return fn  # typed Any: functools.wraps hides the signature, the caller casts it back


class OutsideTransaction(RuntimeError):
    """A helper that runs inside its caller's transaction was called with none open: its work
    would sit in a transaction that autobegins and that nobody commits (a bug of the caller)."""


def in_transaction(
    fn: Callable[Concatenate[Session, P], R],
) -> Callable[Concatenate[Session, P], R]:
    """Mark ``fn(session, ...)`` as a step of its caller's transaction: it opens, commits and
    rolls back nothing, so its work is committed or undone with the caller's.

    :raises OutsideTransaction: at once if no transaction is open.
    """

    @functools.wraps(fn)
    def step(session: Session, *args: P.args, **kwargs: P.kwargs) -> R:
        if not session.in_transaction():
            raise OutsideTransaction(f"{fn.__name__} runs inside the caller's transaction")
        return fn(session, *args, **kwargs)

    return cast(Callable[Concatenate[Session, P], R], _marked(step, CALLERS))


def own_transactions(
    fn: Callable[Concatenate[Session, P], R],
) -> Callable[Concatenate[Session, P], R]:
    """Mark ``fn(session, ...)`` as one that opens transactions of its own, without the retries
    of :func:`transactional`: it calls several use cases, or reads in short reads of its own.

    :raises NestedTransaction: at once if the caller has a transaction open.
    """

    @functools.wraps(fn)
    def run(session: Session, *args: P.args, **kwargs: P.kwargs) -> R:
        _refuse_nesting(session, fn)
        return fn(session, *args, **kwargs)

    return cast(Callable[Concatenate[Session, P], R], _marked(run, OWN))


def transactional(
    fn: Callable[Concatenate[Session, P], R],
) -> Callable[Concatenate[Session, P], R]:
    """Run ``fn(session, ...)`` in its own writing transaction, committed when it returns.

    A domain error rolls everything back; serialization failures and deadlocks are retried a
    bounded number of times with a short backoff, then refused as :class:`Unavailable`.
    """
    return _run_in_transaction(fn, WRITES)


def read_only(
    fn: Callable[Concatenate[Session, P], R],
) -> Callable[Concatenate[Session, P], R]:
    """Run ``fn(session, ...)`` in its own transaction that only reads: one consistent snapshot
    that takes no write lock on SQLite and no row lock on PostgreSQL, so a long report or check
    never delays play. A statement that would write is refused (:class:`WriteInReadOnly`)."""
    return _run_in_transaction(fn, READ_ONLY)


def one_read(
    fn: Callable[Concatenate[Session, P], R],
) -> Callable[Concatenate[Session, P], R]:
    """Run ``fn(session, ...)``, which reads with a single statement, outside any transaction:
    the statement's own snapshot is all it needs, and it saves the round trips of a BEGIN and
    a COMMIT. For what every request reads first (its caller's token). Writes are refused as
    under :func:`read_only`."""
    return _run_in_transaction(fn, ONE_READ)


class WriteInReadOnly(RuntimeError):
    """A read-only use case tried to write: a programming error, never the caller's."""


#: How statements that only read begin (a read-only transaction refuses every other). ``SET
#: LOCAL`` changes a setting of the transaction (an unhurried one's statement_timeout).
_READING = (
    "select",
    "with",
    "begin",
    "commit",
    "rollback",
    "savepoint",
    "release",
    "pragma",
    "set local",
)


def refuse_writes_in_read_only(connection: Any, statement: str) -> None:
    """Raise if ``statement`` would write on a read-only transaction's ``connection``."""
    if connection.get_execution_options().get(READ_ONLY) and not (
        statement.lstrip()[:9].lower().startswith(_READING)
    ):
        raise WriteInReadOnly(f"a read-only use case tried to write: {statement[:60]!r}")


@in_transaction
def insert_ignoring_conflicts(session: Session, table: type, values: dict[str, object]) -> None:
    """Insert a row unless one with the same unique key exists (both databases)."""
    session.execute(_insert_ignoring_conflicts(session, table).values(**values))


@in_transaction
def insert_all_ignoring_conflicts(
    session: Session, table: type, rows: Sequence[dict[str, object]]
) -> int:
    """Insert each row unless one with the same unique key exists (both databases); return how
    many were inserted, counted as the rows the statements return (the row count of such an
    ``INSERT`` came back as -1 from PostgreSQL's driver). A few hundred rows a statement, under
    either database's limit of bound parameters."""
    statement = _insert_ignoring_conflicts(session, table).returning(*inspect(table).primary_key)
    inserted = 0
    for start in range(0, len(rows), _ROWS_A_STATEMENT):
        chunk = rows[start : start + _ROWS_A_STATEMENT]
        inserted += len(session.execute(statement.values(chunk)).all())
    return inserted


#: Rows of one multi-row ``INSERT``: SQLite binds at most 32,766 parameters, PostgreSQL 65,535.
_ROWS_A_STATEMENT: Final = 500


def _insert_ignoring_conflicts(session: Session, table: type) -> Any:
    dialect = session.get_bind().dialect.name
    return (
        postgresql.insert(table).on_conflict_do_nothing()
        if dialect == "postgresql"
        else sqlite.insert(table).on_conflict_do_nothing()
        if dialect == "sqlite"
        else insert(table)
    )


SelectT = TypeVar("SelectT", bound=Select[Any])


def locked(statement: SelectT) -> SelectT:
    """Return ``statement`` as ``SELECT ... FOR UPDATE`` that refreshes what the session holds.

    Sessions keep their objects across transactions (``expire_on_commit=False``), and a query
    does not overwrite an object the session already holds: without ``populate_existing`` a row
    locked now would be read as an earlier transaction saw it (a stale nonce, a round's old
    status).
    """
    return statement.with_for_update().execution_options(populate_existing=True)


@in_transaction
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
