"""The database: declarative base, engine setup for SQLite and PostgreSQL, session per request.

SQLite runs in WAL mode with a busy timeout, and every transaction starts with ``BEGIN
IMMEDIATE``: ``SELECT ... FOR UPDATE`` renders nothing on SQLite, so the write lock taken at
``BEGIN`` is what serializes money moves there. PostgreSQL takes row locks instead.
"""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any

from flask import Flask
from flask import current_app
from flask import g
from sqlalchemy import BigInteger
from sqlalchemy import DateTime
from sqlalchemy import Engine
from sqlalchemy import Integer
from sqlalchemy import MetaData
from sqlalchemy import create_engine
from sqlalchemy import event
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.orm import Session
from sqlalchemy.orm import sessionmaker
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

#: 64-bit integers everywhere; SQLite's INTEGER PRIMARY KEY needs the plain INTEGER variant.
BigInt = BigInteger().with_variant(Integer(), "sqlite")


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every database (SQLite drops the zone otherwise)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    """Base of every model, with the constraint naming convention Alembic relies on."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


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
        _sqlite_immediate_transactions(engine)
        return engine
    return create_engine(url, connect_args={"connect_timeout": 5}, **kwargs)


def _sqlite_immediate_transactions(engine: Engine) -> None:
    """Let SQLAlchemy, not pysqlite, emit BEGIN, and make it ``BEGIN IMMEDIATE``.

    This is SQLAlchemy's documented recipe for pysqlite; it also makes SAVEPOINT work.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


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
    return current_app.extensions["sota_casino.sessionmaker"]()  # type: ignore[no-any-return]


def get_engine() -> Engine:
    return current_app.extensions["sota_casino.engine"]  # type: ignore[no-any-return]


def get_session() -> Session:
    """Return this request's session, opening it on first use."""
    if "db_session" not in g:
        g.db_session = current_app.extensions["sota_casino.sessionmaker"]()
    return g.db_session  # type: ignore[no-any-return]


def close_session(exc: BaseException | None = None) -> None:
    session = g.pop("db_session", None)
    if session is not None:
        session.close()
