"""Server seeds for the tests' searches of a deal (a tie, a war, a move that fits twice)."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator

#: Each search of this process starts a sequence of its own.
_SEARCHES = itertools.count()


def candidate_seeds(label: str) -> Iterator[bytes]:
    """Yield server seeds to try, a new sequence at each call.

    The service commits a server seed to one seed pair only (a unique index): two searches for
    the same deal in one database (two players of a live server, a player's second pair) must
    not both find the first seed of one fixed sequence.
    """
    search = next(_SEARCHES)
    for i in itertools.count():
        yield hashlib.sha256(f"{label} {search} {i}".encode()).digest()
