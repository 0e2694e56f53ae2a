"""Outages on demand: a TCP relay to PostgreSQL that can be cut, frozen and restored, a server that
accepts connections and never answers, switches that make a SQLite database read-only or full
for the connections an engine hands out, and the lock a bet needs held by someone else."""

from __future__ import annotations

import socket
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy import event

from sota_casino.db import make_engine
from sota_casino.db import make_sessionmaker


class Relay:
    """Forward 127.0.0.1:<port> to ``target``; ``cut()`` drops every connection and refuses new
    ones (the database is down), ``restore()`` listens again on the same port. ``freeze()``
    forwards nothing more either way, new connections included, but keeps every socket open,
    its kernel acknowledging what is sent to it: a server frozen (SIGSTOP, a hung backend, a
    stalled VM) on a machine that still runs; ``thaw()`` forwards what it held and goes on."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._flowing = threading.Event()
        self.restore()

    def freeze(self) -> None:
        self._flowing.clear()

    def thaw(self) -> None:
        self._flowing.set()

    def restore(self) -> None:
        self._flowing.set()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() on Linux
            except OSError:
                pass
            listener.close()
        with self._lock:
            for sock in self._open:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
            self._open.clear()
        self._flowing.set()  # what a freeze held goes nowhere: its sockets are closed

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                self._flowing.wait()  # frozen: hold it, and read no more
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class SilentServer:
    """A server at 127.0.0.1:<port> that accepts connections and never says a word: a hung
    database, or one whose network path died beyond a proxy that still completes TCP. It hangs
    up on every connection after ``at_most`` seconds, so a wait without bound fails a test
    instead of hanging it. ``accepted``: the connections it took."""

    def __init__(self, at_most: float = 30.0) -> None:
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port: int = self._listener.getsockname()[1]
        self.accepted = 0
        self._held: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()
        self._timer = threading.Timer(at_most, self.close)
        self._timer.daemon = True
        self._timer.start()

    def __enter__(self) -> SilentServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.accepted += 1
                self._held.append(client)

    def close(self) -> None:
        self._timer.cancel()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() on Linux
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            for client in self._held:
                client.close()
            self._held.clear()


class SqliteFault:
    """Make every connection ``engine`` hands out read-only or full, until ``clear()``."""

    def __init__(self, engine: Engine) -> None:
        self.mode: str | None = None
        event.listen(engine, "checkout", self._apply)

    def _apply(self, dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA query_only = {int(self.mode == 'readonly')}")
        pages = cursor.execute("PRAGMA page_count").fetchone()[0]
        # A full disk: the file may not grow by a single page.
        limit = pages if self.mode == "full" else 1_073_741_823
        cursor.execute(f"PRAGMA max_page_count = {limit}")
        cursor.close()

    def clear(self) -> None:
        self.mode = None


#: The tables that money, rounds, the audit log and idempotency live in.
BOOKS = (
    "rounds",
    "transfers",
    "postings",
    "accounts",
    "audit_entries",
    "audit_pending",
    "idempotency_records",
)


def hold_lock(
    holder: str, db_url: str, user_id: int, *, at_most: float = 8.0
) -> Callable[[], None]:
    """Take the lock a bet of ``user_id`` needs, as ``holder``; return what lets it go. A
    timer lets go after ``at_most`` seconds too, so a wait without bound fails a test instead
    of hanging it; letting go twice is harmless.

    - ``row``: another PostgreSQL connection holds the player's row ``FOR UPDATE`` (psql's
      ``BEGIN; SELECT id FROM users WHERE id=... FOR UPDATE; SELECT pg_sleep(45);``).
    - ``gate``: another process of the service holds a SQLite write transaction, and with it
      the write gate (an engine of its own is another process, as far as the gate can tell).
    - ``shell``: a writer outside the service holds SQLite's write lock (the sqlite3 shell's
      ``BEGIN IMMEDIATE``); the gate does not see it.
    """
    release: Callable[[], None]
    if holder == "row":
        engine = sa.create_engine(db_url)
        connection = engine.connect()
        connection.execute(
            sa.text("SELECT id FROM users WHERE id = :id FOR UPDATE"), {"id": user_id}
        )

        def release() -> None:
            connection.rollback()
            connection.close()
            engine.dispose()

    elif holder == "gate":
        engine = make_engine(db_url)
        session = make_sessionmaker(engine, context=None)()
        session.begin()
        session.execute(sa.text("UPDATE audit_head SET seq = seq WHERE 0"))

        def release() -> None:
            session.rollback()
            session.close()
            engine.dispose()

    elif holder == "shell":
        path = sa.make_url(db_url).database or ""
        shell = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        shell.execute("BEGIN IMMEDIATE")

        def release() -> None:
            shell.rollback()
            shell.close()

    else:
        raise ValueError(holder)
    return _once(release, at_most)


def _once(release: Callable[[], None], at_most: float) -> Callable[[], None]:
    lock = threading.Lock()
    done: list[bool] = []

    def release_once() -> None:
        with lock:
            if not done:
                done.append(True)
                release()

    timer = threading.Timer(at_most, release_once)
    timer.daemon = True
    timer.start()
    return release_once


def books(db_url: str) -> dict[str, Any]:
    """Each table of :data:`BOOKS`, counted, and the balances: what must not move when a bet is
    refused."""
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as connection:
            # One statement, so one snapshot: the background integrator moves entries from
            # pending to the log at any moment, and counts read apart could miss one in flight.
            counts = connection.execute(
                sa.text("SELECT " + ", ".join(f"(SELECT count(*) FROM {t})" for t in BOOKS))
            ).one()
            found: dict[str, Any] = dict(zip(BOOKS, counts, strict=True))
            # An entry counts once, wherever it is.
            found["audit"] = found.pop("audit_entries") + found.pop("audit_pending")
            found["balances"] = connection.execute(
                sa.text("SELECT id, balance FROM accounts ORDER BY id")
            ).all()
    finally:
        engine.dispose()
    return found
