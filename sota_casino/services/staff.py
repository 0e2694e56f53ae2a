"""Who may change things: one check used by every service that acts for an operator."""

from __future__ import annotations

from sqlalchemy.orm import Session

from ..core.errors import Forbidden
from ..models import User


def require_operator(session: Session, actor_id: int) -> User:
    """Return the acting operator.

    :raises Forbidden: if ``actor_id`` is not an operator (an auditor reads but never changes).
    """
    actor = session.get(User, actor_id)
    if actor is None or actor.role != "operator":
        raise Forbidden("only an operator may do this")
    return actor
