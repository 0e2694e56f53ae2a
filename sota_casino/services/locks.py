"""The player's row lock, which orders every change to the player's seed pairs, decisions and
keys (a module of its own: the seed pairs and the player's keys both take it)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..models import User
from .tx import in_transaction


@in_transaction
def lock_seed_pairs(session: Session, user_id: int) -> None:
    """Take the lock that orders every change to the player's seed pairs: the player's row.

    Locking the active pair itself is not enough on PostgreSQL: a statement waiting for that
    lock while a rotation commits finds the row no longer active, and the newly active one is
    outside its snapshot, so it finds nothing. The player's row never goes away, and each
    statement after the wait reads the pairs as committed by then.
    """
    session.execute(select(User.id).where(User.id == user_id).with_for_update())
