"""Hourly limits on an account's actions that write records kept for good (a seed rotation, a
key registration: each adds rows and audit entries no one may delete), so a script cannot grow
the log without end. A limit is set well above what a player ever does.

The count is read from those records themselves, in the database, so every worker and server
shares it; the caller holds the account's row lock (:func:`.locks.lock_seed_pairs`), so actions
sent at once are counted one after the other, exactly.
"""

from __future__ import annotations

import math
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Final

from sqlalchemy import ColumnElement
from sqlalchemy import select
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.orm import Session

from ..core.errors import RateLimited
from .context import context_of
from .tx import in_transaction

HOUR: Final = timedelta(hours=1)


@in_transaction
def refuse_past_limit(
    session: Session,
    setting: str,
    done_at: InstrumentedAttribute[datetime] | InstrumentedAttribute[datetime | None],
    *mine: ColumnElement[bool],
    message: tuple[str, str],
) -> None:
    """Refuse an action once ``setting`` of them (0: no limit) were done within the hour.

    :param done_at: when each past action was done, in the records it left.
    :param mine: what picks the account's own records.
    :param message: the refusal (``Nn_``), told the whole minutes to wait as ``%(num)s``.
    :raises RateLimited: with ``Retry-After`` the seconds until the oldest action counted
        leaves the hour.
    """
    limit = context_of(session).setting(setting)
    if limit <= 0:
        return
    now = datetime.now(UTC)
    filling = session.scalar(
        select(done_at)
        .where(*mine, done_at > now - HOUR)
        .order_by(done_at.desc())
        .offset(limit - 1)
        .limit(1)
    )
    if filling is None:
        return
    wait = max(1, math.ceil((filling + HOUR - now).total_seconds()))
    raise RateLimited(message, params={"num": math.ceil(wait / 60)}, retry_after=wait)
