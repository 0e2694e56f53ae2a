"""Each serving process's background work, on daemon threads.

- The audit integrator (PostgreSQL): every ``AUDIT_INTEGRATE_MS`` it sequences audit entries
  that committed use cases left pending (their own try after the commit met another
  integrator, or the process died first). Started by the app factory, and again in a process
  forked from it (gunicorn's workers; threads do not survive a fork) at its first request.
- The standing checks' runner: it starts with the first request each process serves. Every
  ``CHECK_INTERVAL_SECONDS`` it runs a step of each check; the checks' leases let one process
  at a time do the work, and the others find the stored verdict.

So ``make run`` and gunicorn need no extra step. Several processes and servers at once are
safe: the integrator's advisory lock and the checks' leases let one at a time work.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable

from flask import Flask
from sqlalchemy import event
from sqlalchemy.exc import ProgrammingError
from sqlalchemy.orm import Session
from sqlalchemy.orm import sessionmaker

from .db import is_sqlite
from .services import audit
from .services import checks
from .services.context import ServiceContext
from .services.tx import UNHURRIED
from .services.tx import log_failure

log = logging.getLogger(__name__)

_started: dict[tuple[str, int], int] = {}  # (what, id(app)) -> the pid that started it
_lock = threading.Lock()
#: PostgreSQL's undefined_table.
UNDEFINED_TABLE = "42P01"
#: Seconds between two log lines of a background step that keeps failing.
QUIET_SECONDS = 60.0


def init_app(app: Flask) -> None:
    interval = int(app.config.get("CHECK_INTERVAL_SECONDS") or 0)
    integrate_ms = int(app.config.get("AUDIT_INTEGRATE_MS") or 0)
    if is_sqlite(app.config["DATABASE_URL"]):
        integrate_ms = 0  # entries are sequenced in each use case's transaction there
    if integrate_ms > 0:
        start_integrator(app, integrate_ms / 1000)
    if interval <= 0 and integrate_ms <= 0:
        return

    @app.before_request
    def _start_background() -> None:
        if integrate_ms > 0:
            start_integrator(app, integrate_ms / 1000)
        if interval > 0:
            start(app, interval)


def _first_in_process(app: Flask, what: str) -> bool:
    with _lock:
        key = (what, id(app))
        if _started.get(key) == os.getpid():
            return False
        _started[key] = os.getpid()
        return True


def start_integrator(app: Flask, interval: float) -> None:
    """Start this process's audit integrator for ``app`` once."""
    if not _first_in_process(app, "integrator"):
        return
    make_session: sessionmaker[Session] = app.extensions["sota_casino.sessionmaker"]
    context: ServiceContext = app.extensions["sota_casino.context"]
    stop = threading.Event()

    def stop_integrating(_engine: object) -> None:
        stop.set()
        context.integrator_pid = None  # use cases integrate their own entries again

    # An app whose engine is disposed (a command done, a test's app) stops its integrator.
    event.listen(app.extensions["sota_casino.engine"], "engine_disposed", stop_integrating)

    def step(session: Session) -> None:
        try:
            if audit.has_pending(session):  # a read: an idle service takes no lock
                audit.integrate(session)
        except ProgrammingError as exc:
            if getattr(exc.orig, "sqlstate", None) != UNDEFINED_TABLE:
                raise
            # A database not migrated yet (`flask db upgrade` starts an app too): nothing to do.

    thread = threading.Thread(
        target=_loop,
        args=(make_session, step, interval, stop, "audit integrator", True),
        name="audit-integrator",
        daemon=True,
    )
    app.extensions["sota_casino.integrator"] = (thread, stop)
    thread.start()
    # From now on this process's use cases leave their entries to the loop: one batch every
    # interval instead of a transaction of its own after each commit.
    context.integrator_pid = os.getpid()


def stop_integrator(app: Flask, wait: float) -> bool:
    """Stop this process's audit integrator for ``app``, if it runs; whether it has ended within
    ``wait`` seconds (a step waiting on an unreachable database may take longer)."""
    integrator = app.extensions.get("sota_casino.integrator")
    if integrator is None:
        return True
    thread, stop = integrator
    stop.set()
    thread.join(wait)
    return not thread.is_alive()


def start(app: Flask, interval: int) -> None:
    """Start this process's standing checks' runner for ``app`` once. Its sessions are
    unhurried: a check may read a whole large table in one statement, which no request's
    statement timeout may cut off."""
    if not _first_in_process(app, "checks"):
        return
    make_session = functools.partial(
        app.extensions["sota_casino.sessionmaker"], info={UNHURRIED: True}
    )
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    stop = threading.Event()
    app.extensions["sota_casino.checks_stop"] = stop
    thread = threading.Thread(
        target=_loop,
        args=(make_session, lambda s: checks.run_all(s, owner), interval, stop, "standing checks"),
        name="standing-checks",
        daemon=True,
    )
    thread.start()


def _loop(
    make_session: Callable[[], Session],
    step: Callable[[Session], object],
    interval: float,
    stop: threading.Event,
    name: str,
    wait_first: bool = False,
) -> None:
    quiet_until = 0.0
    if wait_first:  # a command that ends at once (`flask ...`) never gets to a step
        stop.wait(interval)
    while not stop.is_set():
        session = make_session()
        try:
            step(session)
        except Exception as exc:  # a step that fails must not end the loop
            if time.monotonic() >= quiet_until:
                log_failure(log, f"{name}: a step failed; trying again later", exc)
                quiet_until = time.monotonic() + QUIET_SECONDS
        finally:
            session.close()
        stop.wait(interval)
