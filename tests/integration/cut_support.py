"""A database that fails in the middle of a download: every statement a request sends once its
answer has begun fails as in an outage (SQLite's statement cut off, PostgreSQL's connection
killed by ``pg_terminate_backend``). A request asks for it with the header
:data:`FAIL_HEADER`; the others, and the app's background loops, are left alone.

Used in-process (:func:`failing_midway` wraps an app) and by gunicorn's workers
(``gunicorn_failing.conf.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from typing import Any

import psycopg
from flask import Flask
from sqlalchemy import Engine
from sqlalchemy import event

from sota_casino import db

FAIL_HEADER = "X-Test-Fail-Midway"
#: Rows per read of a list in the failing server: a download reads its first rows before its
#: answer begins, so the test's few players need reads of a few rows for one to come after.
LIST_CHUNK = 2
#: What the app logs, in one line, for a download cut short.
CUT_LINE = "cut after"


def failing_midway(app: Flask) -> Callable[..., Iterable[bytes]]:
    """Return ``app`` as a WSGI app whose database fails once a marked answer has begun."""
    failing = fail_statements(app.extensions["sota_casino.engine"])

    def answer(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        body = app(environ, start_response)
        marked = f"HTTP_{FAIL_HEADER.upper().replace('-', '_')}" in environ
        return _failing_after_first(body, failing) if marked else body

    return answer


def fail_statements(engine: Engine) -> set[int]:
    """Return the set of threads whose statements on ``engine`` fail, as in an outage."""
    failing: set[int] = set()

    @event.listens_for(engine, "before_cursor_execute")
    def fail(connection: Any, *_args: Any) -> None:
        if threading.get_ident() not in failing:
            return
        raw = connection.connection.dbapi_connection
        if engine.dialect.name == "sqlite":
            raw.set_progress_handler(lambda: 1, 1)  # interrupted, as the statement bound does
        else:
            admin = engine.url.set(drivername="postgresql").render_as_string(False)
            with psycopg.connect(admin, autocommit=True) as killer:
                killer.execute("SELECT pg_terminate_backend(%s)", (raw.info.backend_pid,))

    @event.listens_for(engine, "handle_error")
    def heal(context: Any) -> None:
        """Give a SQLite connection its own bound back, so its rollback is not cut off too."""
        connection = context.connection
        if engine.dialect.name == "sqlite" and connection is not None:
            clock = connection.info[db._CLOCK]
            raw = connection.connection.dbapi_connection
            raw.set_progress_handler(clock.overrun, db.SQLITE_STEPS_PER_LOOK)

    return failing


def _failing_after_first(body: Iterable[bytes], failing: set[int]) -> Iterator[bytes]:
    me = threading.get_ident()
    try:
        for chunk in body:
            yield chunk  # back here only once the server sent it: the answer has begun
            failing.add(me)
    finally:
        failing.discard(me)
        close = getattr(body, "close", None)
        if close is not None:
            close()
