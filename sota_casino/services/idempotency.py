"""Idempotency keys: a retried money-moving request returns its first answer and moves nothing.

The record is written in the same transaction as the postings it answers for.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core import fairness
from ..core.errors import IdempotencyMismatch
from ..core.errors import InvalidInput
from ..models import IdempotencyRecord

KEY = re.compile(r"[\x21-\x7e]{1,64}")


def check_key(key: object) -> str | None:
    """Return a valid key (1–64 visible ASCII characters) or None when absent."""
    if key is None:
        return None
    if not isinstance(key, str) or not KEY.fullmatch(key):
        raise InvalidInput(
            "Idempotency-Key must be 1 to 64 visible ASCII characters", field="Idempotency-Key"
        )
    return key


def request_hash(operation: str, body: Any) -> str:
    return hashlib.sha256(fairness.canonical_json([operation, body])).hexdigest()


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
        raise IdempotencyMismatch("this Idempotency-Key was already used with a different request")
    return record.response


def remember(
    session: Session, user_id: int, key: str | None, digest: str, response: Any, status: int = 201
) -> None:
    if key is not None:
        session.add(
            IdempotencyRecord(
                user_id=user_id, key=key, request_hash=digest, status=status, response=response
            )
        )
        session.flush()
