"""Outages on demand: a TCP relay to PostgreSQL that can be cut and restored, and switches that
make a SQLite database read-only or full for the connections an engine hands out."""

from __future__ import annotations

import socket
import threading
from typing import Any

from sqlalchemy import Engine
from sqlalchemy import event


class Relay:
    """Forward 127.0.0.1:<port> to ``target``; ``cut()`` drops every connection and refuses new
    ones (the database is down), ``restore()`` listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self.restore()

    def restore(self) -> None:
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

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


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
