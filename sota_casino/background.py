"""The standing checks' runner: one daemon thread per serving process.

It starts with the first request each process serves (a worker forked by gunicorn starts its
own, since threads do not survive a fork), so ``make run`` needs no extra step. Every
``CHECK_INTERVAL_SECONDS`` it runs a step of each check; the checks' leases let one process
at a time do the work, and the others find the stored verdict.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid

from flask import Flask
from sqlalchemy.orm import Session
from sqlalchemy.orm import sessionmaker

from .services import checks

log = logging.getLogger(__name__)

_started: dict[int, int] = {}  # id(app) -> the pid that started its runner
_lock = threading.Lock()


def init_app(app: Flask) -> None:
    interval = int(app.config.get("CHECK_INTERVAL_SECONDS") or 0)
    if interval <= 0:
        return

    @app.before_request
    def _start_checks() -> None:
        start(app, interval)


def start(app: Flask, interval: int) -> None:
    """Start this process's runner for ``app`` once."""
    with _lock:
        if _started.get(id(app)) == os.getpid():
            return
        _started[id(app)] = os.getpid()
    make_session: sessionmaker[Session] = app.extensions["sota_casino.sessionmaker"]
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    stop = threading.Event()
    app.extensions["sota_casino.checks_stop"] = stop
    thread = threading.Thread(
        target=_loop,
        args=(make_session, owner, interval, stop),
        name="standing-checks",
        daemon=True,
    )
    thread.start()


def _loop(
    make_session: sessionmaker[Session], owner: str, interval: int, stop: threading.Event
) -> None:
    while not stop.is_set():
        session = make_session()
        try:
            checks.run_all(session, owner)
        except Exception:  # a check that fails to run must not end the runner
            log.exception("standing checks: a step failed; trying again later")
        finally:
            session.close()
        stop.wait(interval)
