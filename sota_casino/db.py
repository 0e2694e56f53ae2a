"""The database in the app: engine setup for SQLite and PostgreSQL, a session per request.

The declarative base and column types are in :mod:`.database`, which imports no Flask.

SQLite runs in WAL mode with a busy timeout. A transaction that writes starts with ``BEGIN
IMMEDIATE``: ``SELECT ... FOR UPDATE`` renders nothing on SQLite, so the write lock taken at
``BEGIN`` is what serializes money moves there; every other transaction is a deferred ``BEGIN``
that reads a snapshot and never waits for the lock (see services/tx.py), and writers queue for
that lock at a file beside the database (:class:`WriteGate`). PostgreSQL takes row locks
instead.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from typing import Any
from typing import cast

from flask import Flask
from flask import current_app
from flask import g
from sqlalchemy import Engine
from sqlalchemy import create_engine
from sqlalchemy import event
from sqlalchemy.orm import Session
from sqlalchemy.orm import sessionmaker

from .database import dump_json
from .services.tx import ONE_READ
from .services.tx import READ_ONLY
from .services.tx import refuse_writes_in_read_only

#: Seconds a SQLite writer waits for the write lock before it is refused.
BUSY_TIMEOUT = 30.0


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def make_engine(url: str, **kwargs: Any) -> Engine:
    """Create an engine for ``url`` with the settings each database needs.

    Statement parameters never appear in logs or error messages (``hide_parameters``): they
    carry server seeds that are still secret. Pooled connections are not pinged before use
    (a round trip on every checkout, two in each round): a connection that died with a
    database restart fails its first statement, which marks the whole pool stale, and the use
    case runs again on a fresh connection (services/tx.py), so a database back from a restart
    is used again without a restart of the app.
    """
    kwargs.setdefault("hide_parameters", True)
    kwargs.setdefault("json_serializer", dump_json)
    if is_sqlite(url):
        engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT}, **kwargs)
        _sqlite_transactions(engine)
    else:
        engine = create_engine(url, connect_args={"connect_timeout": 5}, **kwargs)
    _guard_read_only(engine)
    return engine


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
    behind it (the sqlite3 shell) is safe, and one that waits longer than the busy timeout
    goes on to SQLite's lock, which refuses it as before.
    """

    #: Seconds between two looks at a gate another writer holds.
    LOOK_EVERY = 0.0002

    def __init__(self, path: str, timeout: float) -> None:
        self._path = path
        self._timeout = timeout
        self._threads = threading.Lock()  # one thread of this process at the file lock
        self._fd: int | None = None
        self._pid = 0

    def _file(self) -> int:
        if self._fd is None or self._pid != os.getpid():  # a forked worker opens its own
            self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            self._pid = os.getpid()
        return self._fd

    def enter(self, connection: Any) -> None:
        """Wait for the gate before ``connection`` begins a writing transaction."""
        info = connection.info  # the pooled connection's own, kept until it is checked in
        if info.get(_IN_GATE):
            return
        deadline = time.monotonic() + self._timeout
        if not self._threads.acquire(timeout=self._timeout):
            return
        fd = self._file()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    self._threads.release()
                    return
                time.sleep(self.LOOK_EVERY)
        info[_IN_GATE] = True

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


def _sqlite_transactions(engine: Engine) -> None:
    """Let SQLAlchemy, not pysqlite, emit BEGIN: a plain deferred ``BEGIN`` for read-only use
    cases, ``BEGIN IMMEDIATE`` for every other transaction. A deferred transaction that writes
    after another writer committed fails at once with "database is locked" (WAL gives it no
    way to wait), so only transactions declared read-only may begin deferred.

    This is SQLAlchemy's documented recipe for pysqlite; it also makes SAVEPOINT work.
    """

    database = engine.url.database
    gate = (
        WriteGate(f"{database}-writers", BUSY_TIMEOUT)
        if database not in (None, "", ":memory:")
        else None
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        # FULL: each commit reaches the disk before the answer. With NORMAL, WAL commits wait in
        # the page cache for a checkpoint; a disk that turns read-only (an ext4 error) or a
        # power cut then loses rounds the service had already acknowledged (the read-only fault
        # run lost 34 of 142 so).
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        options = connection.get_execution_options()
        if options.get(ONE_READ):
            return  # one statement, its own snapshot
        if options.get(READ_ONLY):
            connection.exec_driver_sql("BEGIN")
            return
        if gate is not None:
            gate.enter(connection)
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    if gate is not None:
        event.listen(engine, "checkin", gate.leave)
        event.listen(engine, "engine_disposed", gate.close)


def make_sessionmaker(engine: Engine, context: object) -> sessionmaker[Session]:
    """Sessions that carry the service context (settings, signing key) in ``session.info``."""
    return sessionmaker(bind=engine, expire_on_commit=False, info={"context": context})


def init_app(app: Flask) -> None:
    """Create the app's engine and session factory, and close the session after each request."""
    from .services.context import ServiceContext
    from .services.context import load_or_create_signing_key

    engine = make_engine(app.config["DATABASE_URL"])
    context = ServiceContext(
        signing_key=load_or_create_signing_key(app.config["SIGNING_KEY_FILE"]),
        settings=app.config,
    )
    app.extensions["sota_casino.engine"] = engine
    app.extensions["sota_casino.context"] = context
    app.extensions["sota_casino.sessionmaker"] = make_sessionmaker(engine, context)
    app.teardown_appcontext(close_session)


def new_session() -> Session:
    """Return a new session of the current app (for commands and background work)."""
    return cast(Session, current_app.extensions["sota_casino.sessionmaker"]())


def get_session() -> Session:
    """Return this request's session, opening it on first use."""
    if "db_session" not in g:
        g.db_session = current_app.extensions["sota_casino.sessionmaker"]()
    return cast(Session, g.db_session)


def close_session(exc: BaseException | None = None) -> None:
    session = g.pop("db_session", None)
    if session is not None:
        session.close()
