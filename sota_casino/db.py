"""The database in the app: engine setup for SQLite and PostgreSQL, a session per request.

The declarative base and column types are in :mod:`.database`, which imports no Flask.

SQLite runs in WAL mode with a busy timeout. A transaction that writes starts with ``BEGIN
IMMEDIATE``: ``SELECT ... FOR UPDATE`` renders nothing on SQLite, so the write lock taken at
``BEGIN`` is what serializes money moves there; every other transaction is a deferred ``BEGIN``
that reads a snapshot and never waits for the lock (see services/tx.py), and writers queue for
that lock at a file beside the database (:class:`WriteGate`). PostgreSQL takes row locks
instead.

The app's engine bounds every wait for the database well under gunicorn's ``timeout``
(``DB_LOCK_TIMEOUT_MS``, ``DB_STATEMENT_TIMEOUT_MS``): a request that waits longer is a 503,
never a worker killed mid-request. A statement is cut off on both databases (PostgreSQL's
``statement_timeout``; on SQLite a progress handler interrupts it), and on PostgreSQL a watchdog
thread cuts off the connection of a statement or COMMIT whose answer is overdue: a server frozen
while its machine runs on answers nothing, its own timeout included (:class:`_Watchdog`).
Sessions of work that is no request's (the commands, the standing checks) are
:data:`~.services.tx.UNHURRIED`: their statements are not cut off.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import math
import os
import socket
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import cast

from flask import Flask
from flask import current_app
from flask import g
from sqlalchemy import Engine
from sqlalchemy import create_engine
from sqlalchemy import event
from sqlalchemy import make_url
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session
from sqlalchemy.orm import sessionmaker

from .config import SettingsError
from .database import SQLITE_LOWER
from .database import dump_json
from .database import sqlite_lower
from .services.tx import ONE_READ
from .services.tx import READ_ONLY
from .services.tx import UNHURRIED
from .services.tx import NoAnswerInTime
from .services.tx import refuse_writes_in_read_only

#: The logger SQLAlchemy writes an engine's statements and rows to (an engine without a
#: ``logging_name``, as every engine here is).
ENGINE_LOGGER = "sqlalchemy.engine.Engine"

#: Seconds a SQLite writer waits for the write lock on an engine that sets no lock wait of its
#: own (the migrations, tools); the app's engine waits ``DB_LOCK_TIMEOUT_MS``.
BUSY_TIMEOUT = 30.0


class OneLine(logging.Filter):
    """Write a record on one line: psycopg warns of an error it ignored while ending a pipeline
    on a connection an outage cut, with the server's message on several lines, where the log
    says an outage in one line of its kind (docs/operations.md)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "\n" in message:
            lines = (line.strip() for line in message.splitlines())
            record.msg, record.args = " ".join(line for line in lines if line), None
        return True


#: The logger of PostgreSQL's driver.
DRIVER_LOGGER = "psycopg"
ONE_LINE = OneLine()


class HiddenRows(logging.Filter):
    """Write SQLAlchemy's rows as hidden, as ``hide_parameters`` writes the parameters.

    At DEBUG the engine's logger writes every row fetched: rows hold the server seeds still
    secret, password hashes and the digests of session tokens. The statements stay logged.
    """

    #: How SQLAlchemy logs a row fetched (``CursorResult``) at DEBUG.
    ROW = "Row %r"
    HIDDEN = "Row [hidden: rows may hold secrets]"

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == self.ROW:
            record.msg, record.args = self.HIDDEN, ()
        return True


#: One filter for every engine: the engines of a process share SQLAlchemy's logger.
HIDDEN_ROWS = HiddenRows()


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def make_engine(
    url: str,
    *,
    lock_timeout_ms: int | None = None,
    statement_timeout_ms: int | None = None,
    existing_only: bool = False,
    **kwargs: Any,
) -> Engine:
    """Create an engine for ``url`` with the settings each database needs.

    Statement parameters never appear in logs or error messages (``hide_parameters``): they
    carry server seeds that are still secret. Pooled connections are not pinged before use
    (a round trip on every checkout, two in each round): a connection that died with a
    database restart fails its first statement, which marks the whole pool stale, and the use
    case runs again on a fresh connection (services/tx.py), so a database back from a restart
    is used again without a restart of the app.

    :param lock_timeout_ms: the longest a statement waits for a lock: PostgreSQL's
        ``lock_timeout``; on SQLite the write gate and the busy timeout together. None: no
        bound on PostgreSQL, :data:`BUSY_TIMEOUT` on SQLite. A new PostgreSQL connection may
        take as long to be made (:func:`connect_timeout`).
    :param statement_timeout_ms: the longest a statement runs, except in an unhurried
        session's transactions: PostgreSQL's ``statement_timeout``, and a statement, COMMIT or
        ROLLBACK still unanswered :data:`ANSWER_GRACE` later has its connection cut off
        (:class:`_Watchdog`); on SQLite the statement is interrupted ("interrupted",
        SQLITE_INTERRUPT) once it has run that long, its rows fetched included. None: no
        bound.
    :param existing_only: on SQLite, open the database file only if it is there (the app's
        engine): SQLite would otherwise make an empty database in place of a file gone from
        its folder (deleted, moved, its disk not mounted), and every request would fail on
        its missing tables; now it cannot open it (SQLITE_CANTOPEN), an outage. The
        migrations make the file.
    """
    kwargs.setdefault("hide_parameters", True)
    kwargs.setdefault("json_serializer", dump_json)
    if is_sqlite(url):
        wait = BUSY_TIMEOUT if lock_timeout_ms is None else lock_timeout_ms / 1000
        engine = create_engine(url, connect_args={"timeout": wait}, **kwargs)
        if existing_only:
            _sqlite_existing_only(engine)
        else:
            _sqlite_made_private(engine)
        _sqlite_transactions(engine, wait)
        if statement_timeout_ms is not None:
            _sqlite_statement_bound(engine, statement_timeout_ms)
    else:
        arguments = _postgres_arguments(url, lock_timeout_ms, statement_timeout_ms)
        engine = create_engine(url, connect_args=arguments, **kwargs)
        _drop_connections_left_in_pipeline_mode(engine)
        logging.getLogger(DRIVER_LOGGER).addFilter(ONE_LINE)
        if statement_timeout_ms is not None:
            _postgres_statement_bound(engine, statement_timeout_ms)
    _guard_read_only(engine)
    _replace_read_only_connections(engine)
    # Statement parameters are hidden above; the rows fetched are hidden by the logger's filter.
    logging.getLogger(ENGINE_LOGGER).addFilter(HIDDEN_ROWS)
    return engine


#: Seconds a PostgreSQL connection of an engine that sets no lock wait (the migrations, tools)
#: may take to be made.
CONNECT_TIMEOUT = 5
#: How a PostgreSQL connection finds that its server's machine or the network path to it is
#: gone, where it would otherwise wait for an answer forever: after 5 s without a word from the
#: server the kernel sends a keepalive probe every 2 s, and (Linux) drops the connection once
#: 10 s have passed with no answer, or with data sent and not acknowledged. A request is then
#: refused after about 11 s, well inside gunicorn's 30. A live server's kernel answers the
#: probes at once, even while the server runs a long statement, so none is cut off by them.
KEEPALIVES: dict[str, int] = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
}
TCP_USER_TIMEOUT_MS = 10_000


def connect_timeout(lock_timeout_ms: int | None) -> int:
    """Return the seconds a new PostgreSQL connection may take to be made (psycopg's
    ``connect_timeout``: whole seconds, at least 2).

    It is the lock wait, not a setting of its own: a server that accepts the connection and
    never answers (hung, or overloaded) keeps a request waiting just as a lock held elsewhere
    does, and gunicorn's master already checks the lock wait against its ``timeout``.
    """
    if lock_timeout_ms is None:
        return CONNECT_TIMEOUT
    return max(2, math.ceil(lock_timeout_ms / 1000))


def _postgres_arguments(
    url: str, lock_timeout_ms: int | None, statement_timeout_ms: int | None
) -> dict[str, Any]:
    """psycopg's arguments: the bounds of a connection attempt and of a dead peer (each one the
    URL sets is kept), and the timeouts in the connection's startup packet (``options``), so
    they cost no round trip; options already in the URL are kept."""
    given_in_url = make_url(url).query
    bounds: dict[str, int] = {"connect_timeout": connect_timeout(lock_timeout_ms), **KEEPALIVES}
    if sys.platform == "linux":  # libpq has no tcp_user_timeout elsewhere
        bounds["tcp_user_timeout"] = TCP_USER_TIMEOUT_MS
    arguments: dict[str, Any] = {
        name: value for name, value in bounds.items() if name not in given_in_url
    }
    settings = [
        f"-c {name}={value}"
        for name, value in (
            ("lock_timeout", lock_timeout_ms),
            ("statement_timeout", statement_timeout_ms),
        )
        if value is not None
    ]
    if settings:
        given = given_in_url.get("options")
        arguments["options"] = " ".join([*([str(given)] if given else []), *settings])
    return arguments


def _statements_bounded(connection: Any) -> bool:
    """Tell whether the transaction ``connection`` begins has its statements cut off: every
    one but an unhurried session's (a command, the standing checks), which may rightly read the
    whole of a large table in one statement. A one-statement read keeps the bound: it has no
    transaction to lift it for."""
    options = connection.get_execution_options()
    return not options.get(UNHURRIED) or bool(options.get(ONE_READ))


#: Seconds a PostgreSQL statement, COMMIT or ROLLBACK of a bounded transaction may wait for its
#: answer beyond ``statement_timeout`` before the watchdog cuts its connection off. The server's
#: own timeout answers cleanly and keeps the connection, so it should fire first; the watchdog
#: is for a server that cannot answer at all.
ANSWER_GRACE = 2.0

#: ``connection.info`` key: the PostgreSQL connection's :class:`_AnswerWatch`.
_WATCH = "sota_casino_answer_watch"

log = logging.getLogger(__name__)


class _AnswerWatch:
    """How long one PostgreSQL connection may wait for the answer it awaits, and until when."""

    __slots__ = ("allowed", "cut_off", "deadline", "driver_connection")

    def __init__(self, driver_connection: Any) -> None:
        self.driver_connection = driver_connection  # psycopg's
        self.allowed = math.inf  # seconds this transaction's answers may take (inf: no bound)
        self.deadline = math.inf
        self.cut_off = False  # the watchdog shut the connection down


class _Watchdog:
    """One thread per process that cuts off the PostgreSQL connections whose answer is overdue.

    A server frozen while its machine runs on (SIGSTOP, a hung backend, a stalled VM) never
    answers, and nothing else ends the wait: its kernel answers the keepalives and acknowledges
    what is sent, and its own ``statement_timeout`` cannot fire. So each statement, COMMIT and
    ROLLBACK of a bounded transaction is awaited (a deadline and a set insert; the thread looks
    at the set ten times a second), and the watchdog shuts the socket of one whose deadline
    has passed: psycopg's wait ends with a lost connection, which SQLAlchemy invalidates and the
    use case answers as a wait that ran out (:class:`~.services.tx.NoAnswerInTime`). A cancel
    request would not help: it goes to the same frozen server.

    A forked process (a gunicorn worker) has none of its parent's threads: it starts a watchdog
    of its own at its first awaited answer.
    """

    #: Seconds between two looks at the deadlines.
    LOOK_EVERY = 0.1

    def __init__(self) -> None:
        self._awaited: set[_AnswerWatch] = set()
        self._running = False
        self._starting = threading.Lock()
        os.register_at_fork(after_in_child=self._forked)

    def await_answer(self, watch: _AnswerWatch) -> None:
        watch.deadline = time.monotonic() + watch.allowed
        if not self._running:
            self._start()
        self._awaited.add(watch)

    def answered(self, watch: _AnswerWatch) -> None:
        self._awaited.discard(watch)

    def _start(self) -> None:
        with self._starting:
            if not self._running:
                threading.Thread(target=self._watch, name="database watchdog", daemon=True).start()
                self._running = True

    def _forked(self) -> None:
        self._awaited = set()  # the parent's connections: this process awaits none of them
        self._running = False
        self._starting = threading.Lock()  # a thread of the parent may have held it

    def _watch(self) -> None:
        while True:
            time.sleep(self.LOOK_EVERY)
            now = time.monotonic()
            for watch in self._awaited.copy():  # a copy: request threads add and remove
                if watch.deadline < now:
                    self._cut_off(watch)

    def _cut_off(self, watch: _AnswerWatch) -> None:
        self._awaited.discard(watch)
        connection = watch.driver_connection
        try:
            duplicate = socket.socket(fileno=os.dup(connection.fileno()))
        except Exception:  # closed meanwhile (psycopg's error, or the socket's): nothing to cut
            return
        with duplicate:
            watch.cut_off = True  # before the waiting thread wakes up to it
            try:
                duplicate.shutdown(socket.SHUT_RDWR)  # the connection's own socket, too
            except OSError:  # no longer connected: its wait has ended already
                watch.cut_off = False
                return
        log.warning("no answer from the database in %.1f s: connection cut off", watch.allowed)


_WATCHDOG = _Watchdog()


def _postgres_statement_bound(engine: Engine, statement_timeout_ms: int) -> None:
    """Lift ``statement_timeout`` for the transactions whose statements are not bounded, and
    have the watchdog await every answer of the others: a statement's, a COMMIT's or a
    ROLLBACK's, for ``statement_timeout`` and :data:`ANSWER_GRACE` more (:class:`_Watchdog`).

    An answer is awaited from the moment its statement is sent (or its COMMIT or ROLLBACK)
    until the statement returns (its rows come with it: no cursor is kept on the server) or
    fails, or until the connection goes back to the pool, which the sessions do right after
    their COMMIT or ROLLBACK."""
    allowed = statement_timeout_ms / 1000 + ANSWER_GRACE

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, record: Any) -> None:
        record.info[_WATCH] = _AnswerWatch(dbapi_connection)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        if _statements_bounded(connection):
            connection.info[_WATCH].allowed = allowed
        else:
            connection.info[_WATCH].allowed = math.inf
            connection.exec_driver_sql("SET LOCAL statement_timeout = 0")

    @event.listens_for(engine, "before_cursor_execute")
    def _before_execute(connection: Any, *_args: Any) -> None:
        _WATCHDOG.await_answer(connection.info[_WATCH])

    def _before_end(connection: Any) -> None:
        if not connection.invalidated:  # else nothing is sent: the connection is gone
            _WATCHDOG.await_answer(connection.info[_WATCH])

    event.listen(engine, "commit", _before_end)
    event.listen(engine, "rollback", _before_end)

    @event.listens_for(engine, "after_cursor_execute")
    def _after_execute(connection: Any, *_args: Any) -> None:
        _WATCHDOG.answered(connection.info[_WATCH])

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
        watch = record.info.get(_WATCH)
        if watch is not None:
            _WATCHDOG.answered(watch)

    @event.listens_for(engine, "handle_error")
    def _on_error(context: ExceptionContext) -> BaseException | None:
        connection = context.connection
        if connection is None or connection.closed or connection.invalidated:
            return None  # no connection made, or none that sent anything
        watch = connection.info.get(_WATCH)
        if watch is None:
            return None
        _WATCHDOG.answered(watch)
        if not watch.cut_off:
            return None
        context.is_disconnect = True
        return NoAnswerInTime(
            context.statement,
            context.parameters,
            context.original_exception,
            hide_parameters=True,
            connection_invalidated=True,
        )


#: VM instructions between two looks at the clock of a running SQLite statement. A look costs
#: about 0.3 us (a call into Python), an instruction about 0.03 us: one look in 10,000 adds
#: about 0.1 % to a long statement and none to a short one (a statement of fewer instructions
#: never calls it), and a statement is cut off within a third of a millisecond of its time.
SQLITE_STEPS_PER_LOOK = 10_000

#: ``connection.info`` key: the SQLite connection's :class:`_StatementClock`.
_CLOCK = "sota_casino_statement_clock"


class _StatementClock:
    """The time the running statement of one SQLite connection may take, and when it is up."""

    __slots__ = ("allowed", "deadline")

    def __init__(self, allowed: float) -> None:
        self.allowed = allowed  # seconds a statement of this transaction may run (inf: no bound)
        self.deadline = math.inf

    def start(self) -> None:
        self.deadline = time.monotonic() + self.allowed

    def overrun(self) -> bool:
        """SQLite's progress handler: true interrupts the running statement."""
        return time.monotonic() > self.deadline


def _sqlite_statement_bound(engine: Engine, statement_timeout_ms: int) -> None:
    """Interrupt a SQLite statement that has run ``statement_timeout_ms``, as PostgreSQL's
    ``statement_timeout`` does, except in the transactions whose statements are not bounded.

    The statement fails with SQLITE_INTERRUPT; an interrupted write rolls its transaction back,
    and every other is rolled back by the use case that ran it, so nothing of it is kept. The
    clock starts as the statement is sent and runs while its rows are fetched."""
    allowed = statement_timeout_ms / 1000

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, record: Any) -> None:
        clock = record.info[_CLOCK] = _StatementClock(allowed)
        dbapi_connection.set_progress_handler(clock.overrun, SQLITE_STEPS_PER_LOOK)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.info[_CLOCK].allowed = allowed if _statements_bounded(connection) else math.inf

    @event.listens_for(engine, "before_cursor_execute")
    def _before_execute(connection: Any, *_args: Any) -> None:
        connection.info[_CLOCK].start()


def _drop_connections_left_in_pipeline_mode(engine: Engine) -> None:
    """Treat a connection that an error left in psycopg's pipeline mode as a lost one.

    psycopg sends an ``executemany`` as a pipeline and leaves pipeline mode as it ends, an
    error or not, unless the connection is busy with results that never came: a backend
    terminated (``pg_terminate_backend``, a restart) whose fatal error psycopg read before the
    connection's end, which it then did not mark broken (``cannot exit pipeline mode while
    busy``). Such a connection cannot even roll back (``PQsendQuery not allowed in pipeline
    mode``): kept, it went back to the pool, whose reset failed and logged tracebacks. Dropped
    here, the pool is replaced and the use case tried again, as for any lost connection.
    """
    from psycopg.pq import PipelineStatus  # PostgreSQL's driver, needed on PostgreSQL only

    @event.listens_for(engine, "handle_error")
    def _on_error(context: ExceptionContext) -> None:
        connection = context.connection
        if connection is None or connection.closed or connection.invalidated:
            return
        pgconn = getattr(connection.connection.dbapi_connection, "pgconn", None)
        if pgconn is not None and pgconn.pipeline_status != PipelineStatus.OFF:
            context.is_disconnect = True


#: PostgreSQL's read_only_sql_transaction; SQLite's SQLITE_READONLY (its primary code).
READ_ONLY_SQLSTATE = "25006"
SQLITE_READONLY = 8


def _replace_read_only_connections(engine: Engine) -> None:
    """Treat a write refused as read-only like a lost connection: the pool is replaced, and the
    use case tried again on a new connection (services/tx.py).

    A connection keeps the state it was made in: a PostgreSQL session its database's
    ``default_transaction_read_only`` (or a standby's recovery), a SQLite connection a file it
    could not open for writing. Kept in the pool, such connections refused every write after
    the database was writable again, until a restart. While the database is still read-only,
    the new connection is refused too, and the request is the same 503.
    """

    @event.listens_for(engine, "handle_error")
    def _on_error(context: ExceptionContext) -> None:
        refused = context.original_exception
        sqlite_code = getattr(refused, "sqlite_errorcode", None)
        if getattr(refused, "sqlstate", None) == READ_ONLY_SQLSTATE or (
            sqlite_code is not None and sqlite_code & 0xFF == SQLITE_READONLY
        ):
            context.is_disconnect = True


def _guard_read_only(engine: Engine) -> None:
    @event.listens_for(engine, "before_cursor_execute")
    def _before_execute(connection: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        refuse_writes_in_read_only(connection, statement)


#: ``connection.info`` key: this pooled connection holds the write gate.
_IN_GATE = "sota_casino_write_gate"


class WriteGate:
    """SQLite's writers one at a time, each let in the moment the last one leaves.

    Writers that meet at SQLite's write lock wait in its busy handler, which sleeps 1, 2, 5,
    10 ... 100 ms between looks: under load the lock stands free while they sleep, and a round
    waits tens of milliseconds for nothing. So a writer first takes an exclusive ``flock`` on
    a file beside the database, looking again every fraction of a millisecond, and leaves it
    when its connection goes back to the pool; ``BEGIN IMMEDIATE`` then finds the lock free.
    The gate only orders writers: SQLite's own lock still decides, so a writer that is not
    behind it (the sqlite3 shell) is safe. The wait at the gate and the wait at SQLite's lock
    are one wait of ``timeout`` in all: a writer still at the gate when it is over goes on to
    SQLite's lock without waiting there, which refuses it unless the holder has just left.
    A gate whose file cannot be opened (a read-only folder or disk) sends its writers on to
    SQLite's lock for the whole wait, which refuses them if the database is read-only too.
    """

    #: Seconds between two looks at a gate another writer holds.
    LOOK_EVERY = 0.0002

    def __init__(self, path: str, timeout: float) -> None:
        self._path = path
        self._timeout = timeout
        self._threads = threading.Lock()  # one thread of this process at the file lock
        self._fd: int | None = None
        self._pid = 0
        self._unopened = False  # the file could not be opened last time (said once in the log)

    def _file(self) -> int:
        if self._fd is None or self._pid != os.getpid():  # a forked worker opens its own
            self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            self._pid = os.getpid()
        return self._fd

    def enter(self, connection: Any) -> float:
        """Wait for the gate before ``connection`` begins a writing transaction.

        :returns: the seconds left of the wait, for SQLite's lock (0: the wait is over).
        """
        info = connection.info  # the pooled connection's own, kept until it is checked in
        if info.get(_IN_GATE):
            return self._timeout
        deadline = time.monotonic() + self._timeout
        if not self._threads.acquire(timeout=self._timeout):
            return 0.0
        try:
            fd = self._file()
        except OSError as exc:
            # Its folder or disk read-only, a file this user may not write: SQLite's own lock
            # decides (a read-only database refuses the write there, an outage), and the next
            # writer tries the file again.
            self._threads.release()
            if not self._unopened:
                log.warning("the SQLite writers' gate cannot be opened: %s", type(exc).__name__)
            self._unopened = True
            return max(0.0, deadline - time.monotonic())
        self._unopened = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    self._threads.release()
                    return 0.0
                time.sleep(self.LOOK_EVERY)
        info[_IN_GATE] = True
        return max(0.0, deadline - time.monotonic())

    def close(self, _engine: object = None) -> None:
        """Close the gate's file (the engine is disposed: nothing of it waits at the gate)."""
        if self._fd is not None and self._pid == os.getpid():
            os.close(self._fd)
        self._fd = None

    def leave(self, _dbapi_connection: Any, record: Any) -> None:
        """Open the gate once a connection that holds it is back in the pool."""
        if record.info.pop(_IN_GATE, False):
            fcntl.flock(self._file(), fcntl.LOCK_UN)
            self._threads.release()


def _sqlite_file(engine: Engine) -> str | None:
    """The path of ``engine``'s SQLite file (None: in memory, or named by a ``file:`` URI)."""
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return database


def _sqlite_existing_only(engine: Engine) -> None:
    """Open ``engine``'s SQLite file read-write but never make it (an in-memory database
    aside): the file by its URI, with ``mode=rw``."""
    database = _sqlite_file(engine)
    if database is None:
        return
    uri = f"{Path(database).absolute().as_uri()}?mode=rw"

    @event.listens_for(engine, "do_connect")
    def _open_existing(_dialect: Any, _record: Any, cargs: list[Any], cparams: Any) -> None:
        cargs[:1] = [uri]
        cparams["uri"] = True


def _sqlite_made_private(engine: Engine) -> None:
    """Make ``engine``'s SQLite file, if it is missing, readable by its owner alone (0600)
    before SQLite opens it: it holds the server seeds not revealed yet and the password hashes,
    and SQLite would make it, and its WAL and index after it, with the umask's mode (0644)."""
    database = _sqlite_file(engine)
    if database is None:
        return

    @event.listens_for(engine, "do_connect")
    def _make_private(_dialect: Any, _record: Any, _cargs: Any, _cparams: Any) -> None:
        # There already, or not to be made here (no such folder): SQLite opens it or says why.
        with contextlib.suppress(OSError):
            os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


#: ``connection.info`` key: the busy timeout (ms) set on this connection, if not the engine's.
_BUSY_MS = "sota_casino_busy_ms"


def _sqlite_transactions(engine: Engine, wait: float) -> None:
    """Let SQLAlchemy, not pysqlite, emit BEGIN: a plain deferred ``BEGIN`` for read-only use
    cases, ``BEGIN IMMEDIATE`` for every other transaction. A deferred transaction that writes
    after another writer committed fails at once with "database is locked" (WAL gives it no
    way to wait), so only transactions declared read-only may begin deferred.

    A writer waits ``wait`` seconds in all for the write lock: what it spent at the gate is
    taken off SQLite's busy timeout for its ``BEGIN IMMEDIATE``.

    This is SQLAlchemy's documented recipe for pysqlite; it also makes SAVEPOINT work.
    """

    database = engine.url.database
    gate = (
        WriteGate(f"{database}-writers", wait) if database not in (None, "", ":memory:") else None
    )
    busy_ms = int(wait * 1000)

    def busy_timeout(connection: Any, ms: int) -> None:
        """Set the connection's busy timeout to ``ms`` unless it is that already (a PRAGMA on
        the driver's connection: a few microseconds, no I/O)."""
        if connection.info.get(_BUSY_MS, busy_ms) != ms:
            connection.connection.driver_connection.execute(f"PRAGMA busy_timeout={ms}")
            connection.info[_BUSY_MS] = ms

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
        cursor.execute("PRAGMA foreign_keys=ON")
        # FULL: each commit reaches the disk before the answer. With NORMAL, WAL commits wait in
        # the page cache for a checkpoint; a disk that turns read-only (an ext4 error) or a
        # power cut then loses rounds the service had already acknowledged (the read-only fault
        # run lost 34 of 142 so).
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.close()
        # Every letter lower-cased as PostgreSQL's lower() does (SQLite's knows only ASCII's).
        dbapi_connection.create_function(SQLITE_LOWER, 1, sqlite_lower, deterministic=True)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        options = connection.get_execution_options()
        if options.get(ONE_READ):
            return  # one statement, its own snapshot
        if options.get(READ_ONLY):
            connection.exec_driver_sql("BEGIN")
            return
        if gate is not None:
            left = gate.enter(connection)
            busy_timeout(connection, min(busy_ms, math.ceil(left * 1000)))
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    if gate is not None:
        event.listen(engine, "checkin", gate.leave)
        event.listen(engine, "engine_disposed", gate.close)


def make_sessionmaker(engine: Engine, context: object) -> sessionmaker[Session]:
    """Sessions that carry the service context (settings, signing key) in ``session.info``."""
    return sessionmaker(bind=engine, expire_on_commit=False, info={"context": context})


def app_engine(settings: Mapping[str, Any]) -> Engine:
    """The engine of the app's requests on ``DATABASE_URL`` (nothing connected yet).

    :raises SettingsError: for a URL no database driver here reads (never quoting it: it may
        hold a password).
    """
    try:
        return make_engine(
            settings["DATABASE_URL"],
            lock_timeout_ms=settings["DB_LOCK_TIMEOUT_MS"],
            statement_timeout_ms=settings["DB_STATEMENT_TIMEOUT_MS"],
            existing_only=True,
        )
    except (ArgumentError, ValueError, ImportError):  # its words may quote the URL's password
        raise SettingsError(
            "DATABASE_URL is no database URL this service can use: sqlite:///PATH or "
            "postgresql+psycopg://USER@HOST:PORT/NAME"
        ) from None


def init_app(app: Flask) -> None:
    """Create the app's engine and session factory, and close the session after each request."""
    from .services.context import ServiceContext

    engine = app_engine(app.config)
    context = ServiceContext(
        signing_key_file=Path(app.config["SIGNING_KEY_FILE"]), settings=app.config
    )
    if context.signing_key_file.exists():
        context.signing_key  # noqa: B018 - a file holding no key stops the start, not a request
    app.extensions["sota_casino.engine"] = engine
    app.extensions["sota_casino.context"] = context
    app.extensions["sota_casino.sessionmaker"] = make_sessionmaker(engine, context)
    app.teardown_appcontext(close_session)


def new_session() -> Session:
    """Return a new unhurried session of the current app, for commands and background work:
    its statements are not cut off (its lock waits are bounded as a request's are)."""
    return cast(Session, current_app.extensions["sota_casino.sessionmaker"](info={UNHURRIED: True}))


def get_session() -> Session:
    """Return this request's session, opening it on first use."""
    if "db_session" not in g:
        g.db_session = current_app.extensions["sota_casino.sessionmaker"]()
    return cast(Session, g.db_session)


def close_session(exc: BaseException | None = None) -> None:
    session = g.pop("db_session", None)
    if session is not None:
        session.close()
