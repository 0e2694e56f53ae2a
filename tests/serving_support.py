"""A test's HTTP server on a thread of its own, for code under test that speaks HTTP."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from socketserver import BaseServer
from typing import TypeVar

S = TypeVar("S", bound=BaseServer)
#: How often the serving thread looks whether it is asked to stop: the default half second was
#: the longest step of each test that served.
POLL_SECONDS = 0.01


@contextmanager
def serving(server: S) -> Iterator[S]:
    """Serve ``server`` until the block ends, then stop and close it."""
    thread = threading.Thread(target=server.serve_forever, args=(POLL_SECONDS,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
