"""Idempotency keys: a retried money-moving request returns its first answer and moves nothing.

The record is written in the same transaction as the postings it answers for.

Two copies of one keyed request may run at once (a client retrying before its first answer
came). Both find the key unused; then one waits for the other's locks, and what it finds
after the other committed decides how it ends:

- it would do the same work again: its record meets the other's on the unique key, the
  transaction is retried (:mod:`.tx`), and the retry replays the other's answer;
- it is refused for the state the other left (a round settled, a top-up taken, a balance
  spent): the refusal is not the answer, so the key is read again, in a transaction of its
  own after the first rolled back, and the answer found there is given instead.

The key is not locked first instead: that would cost every keyed request (every bet) a round
trip on PostgreSQL to spare a rare race one, and a lock taken before the snapshot would still
rely on the isolation level to show the record. The second read needs nothing of either: the
other's record commits with the state that refused the request, so whoever sees that state
sees the record.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from typing import Any
from typing import TypeVar
from typing import cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core import fairness
from ..core.errors import CasinoError
from ..core.errors import IdempotencyMismatch
from ..core.errors import InvalidInput
from ..core.errors import Unavailable
from ..core.marks import N_
from ..models import IdempotencyRecord
from . import results
from .tx import in_transaction
from .tx import own_transactions
from .tx import read_only
from .tx import transactional

R = TypeVar("R")

#: 1-64 visible ASCII characters other than a comma (the header the money-moving API calls
#: accept): HTTP servers join a header sent twice into one with commas, so a key with a comma
#: could not be told from two keys.
KEY_PATTERN = r"^[\x21-\x2b\x2d-\x7e]{1,64}$"
KEY = re.compile(KEY_PATTERN)


def check_key(key: object) -> str | None:
    """Return a valid key (1–64 visible ASCII characters other than a comma) or None when absent."""
    if key is None:
        return None
    if not isinstance(key, str) or not KEY.fullmatch(key):
        repeated = isinstance(key, str) and "," in key
        raise InvalidInput(
            N_(
                "Idempotency-Key is given more than once, or not one key of 1 to 64 visible "
                "ASCII characters other than a comma"
            )
            if repeated
            else N_(
                "Idempotency-Key is not one key of 1 to 64 visible ASCII characters other than "
                "a comma"
            ),
            field="Idempotency-Key",
        )
    return key


def request_hash(operation: str, body: Any) -> str:
    return hashlib.sha256(fairness.canonical_json([operation, body])).hexdigest()


@in_transaction
def replay(session: Session, user_id: int, key: str | None, digest: str) -> Any | None:
    """Return the stored answer for ``key``, or None if the key is new.

    :raises IdempotencyMismatch: if the key was used with another request.
    """
    if key is None:
        return None
    record = session.scalar(
        select(IdempotencyRecord).where(
            IdempotencyRecord.user_id == user_id, IdempotencyRecord.key == key
        )
    )
    if record is None:
        return None
    if record.request_hash != digest:
        raise IdempotencyMismatch(
            N_("this Idempotency-Key was already used with a different request")
        )
    return record.response


@read_only
def _replay_after_refusal(session: Session, user_id: int, key: str, digest: str) -> Any | None:
    """Return the answer stored for ``key`` by a copy of this request that committed while
    this one was refused, or None if there is none (the refusal stands).

    :raises IdempotencyMismatch: if the key was used with another request.
    """
    return replay(session, user_id, key, digest)


@in_transaction
def remember(session: Session, user_id: int, key: str | None, digest: str, response: Any) -> None:
    if key is not None:
        session.add(
            IdempotencyRecord(user_id=user_id, key=key, request_hash=digest, response=response)
        )
        session.flush()


#: Mends an answer stored before a field without a default was added to its result type
#: (``mend(session, user_id, stored)`` returns it in the present shape).
Mend = Callable[[Session, int, Any], Any]

#: Each idempotent use case's operation, its result type (None: JSON values) and its mend:
#: the answers stored, which must read back whatever version stored them
#: (tests/unit/test_results.py).
STORED: dict[str, tuple[Any, Mend | None]] = {}


def idempotent(
    operation: str, answer: type[Any] | None = None, mend: Mend | None = None
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Make a use case that must not run twice idempotent and transactional: one that moves
    money, or proposes or decides a change (four eyes).

    :param answer: the use case's result type (:mod:`.results`), stored as its JSON and read
        back as that type; None: the answer is JSON values already.
    :param mend: for a result type that gained a field with no default since answers were
        stored: fills it in an answer stored without it (a field with a default needs none).

    The wrapped ``fn(session, user_id, *args, key=..., **kwargs)`` gains the keyword arguments
    ``idempotency_key`` and ``request_body`` (what the client sent; by default the call's own
    arguments). A retry with the same key and body returns the first answer and moves nothing;
    the same key with another body raises :class:`IdempotencyMismatch`. The record is written
    in the same transaction as the postings. A copy sent while the first runs gets the first
    answer too, even where the state the first left would refuse it (the module's doc).
    """

    STORED[operation] = (answer, mend)

    def wrap(fn: Callable[..., R]) -> Callable[..., R]:
        def read_back(session: Session, user_id: int, stored: Any) -> R:
            # The answer stored by this same use case, perhaps by an older version.
            if answer is None:
                return cast(R, stored)
            if mend is not None:
                stored = mend(session, user_id, stored)
            return cast(R, results.from_json(answer, stored))

        @transactional
        def once(
            session: Session,
            user_id: int,
            key: str,
            digest: str,
            args: tuple[Any, ...],
            kwargs: dict[str, Any],
        ) -> R:
            stored = replay(session, user_id, key, digest)
            if stored is not None:
                return read_back(session, user_id, stored)
            found = fn(session, user_id, *args, key=key, **kwargs)
            remember(
                session, user_id, key, digest, found if answer is None else results.to_json(found)
            )
            return found

        unkeyed = transactional(fn)
        # A mend reads the database: in a transaction of its own after a refusal.
        _read_back_apart = read_only(read_back)

        @functools.wraps(fn)
        def run(
            session: Session,
            user_id: int,
            *args: Any,
            idempotency_key: str | None = None,
            request_body: Any = None,
            **kwargs: Any,
        ) -> R:
            key = check_key(idempotency_key)
            if key is None:
                return unkeyed(session, user_id, *args, key=None, **kwargs)
            body = [args, kwargs] if request_body is None else request_body
            digest = request_hash(operation, body)
            try:
                return once(session, user_id, key, digest, args, kwargs)
            except (IdempotencyMismatch, Unavailable):
                raise  # the key's own refusal, or no database to read it again from
            except CasinoError:
                # Refused, perhaps for what a copy of this request did meanwhile (module doc).
                stored = _replay_after_refusal(session, user_id, key, digest)
                if stored is None:
                    raise
                return _read_back_apart(session, user_id, stored)

        return cast(Callable[..., R], own_transactions(run))

    return wrap
