"""The database in the app: engine setup for SQLite and PostgreSQL, a session per request.

The declarative base and column types are in :mod:`.database`, which imports no Flask.

SQLite runs in WAL mode with a busy timeout. A transaction that writes starts with ``BEGIN
IMMEDIATE``: ``SELECT ... FOR UPDATE`` renders nothing on SQLite, so the write lock taken at
``BEGIN`` is what serializes money moves there; every other transaction is a deferred ``BEGIN``
that reads a snapshot and never waits for the lock (see services/tx.py). PostgreSQL takes row
locks instead.
"""

from __future__ import annotations

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

from .services.tx import READ_ONLY
from .services.tx import refuse_writes_in_read_only


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def make_engine(url: str, **kwargs: Any) -> Engine:
    """Create an engine for ``url`` with the settings each database needs.

    Statement parameters never appear in logs or error messages (``hide_parameters``): they
    carry server seeds that are still secret. Pooled connections are pinged before use, so a
    database back from a restart is used again without a restart of the app.
    """
    kwargs.setdefault("hide_parameters", True)
    kwargs.setdefault("pool_pre_ping", True)
    if is_sqlite(url):
        engine = create_engine(url, connect_args={"timeout": 30}, **kwargs)
        _sqlite_transactions(engine)
    else:
        engine = create_engine(url, connect_args={"connect_timeout": 5}, **kwargs)
    _guard_read_only(engine)
    return engine


def _guard_read_only(engine: Engine) -> None:
    @event.listens_for(engine, "before_cursor_execute")
    def _before_execute(connection: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        refuse_writes_in_read_only(connection, statement)


def _sqlite_transactions(engine: Engine) -> None:
    """Let SQLAlchemy, not pysqlite, emit BEGIN: a plain deferred ``BEGIN`` for read-only use
    cases, ``BEGIN IMMEDIATE`` for every other transaction. A deferred transaction that writes
    after another writer committed fails at once with "database is locked" (WAL gives it no
    way to wait), so only transactions declared read-only may begin deferred.

    This is SQLAlchemy's documented recipe for pysqlite; it also makes SAVEPOINT work.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        # FULL: each commit reaches the disk before the answer. With NORMAL, WAL commits wait in
        # the page cache for a checkpoint; a disk that turns read-only (an ext4 error) or a
        # power cut then loses rounds the service had already acknowledged (the read-only fault
        # run lost 34 of 142 so).
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        reads_only = connection.get_execution_options().get(READ_ONLY, False)
        connection.exec_driver_sql("BEGIN" if reads_only else "BEGIN IMMEDIATE")


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
