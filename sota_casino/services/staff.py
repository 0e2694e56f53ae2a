"""Who may change things: one check used by every service that acts for an operator."""

from __future__ import annotations

from sqlalchemy.orm import Session

from ..core.errors import Forbidden
from ..models import User


class StaffHaveNoPlayMoney(Forbidden):
    """Staff accounts have no play money: they cannot bet or top up."""

    code = "staff_no_play_money"


def require_player(user: User) -> None:
    """Refuse play money to staff: operators and auditors run the casino, they do not play it.

    :raises StaffHaveNoPlayMoney: for an operator or an auditor.
    """
    require_player_role(user.role)


def require_player_role(role: str) -> None:
    """:func:`require_player` for a role read without loading the user."""
    if role != "player":
        raise StaffHaveNoPlayMoney(
            f"{role}s have no play money: they cannot bet or top up; use a player account"
        )


def require_operator(session: Session, actor_id: int) -> User:
    """Return the acting operator.

    :raises Forbidden: if ``actor_id`` is not an operator (an auditor reads but never changes).
    """
    actor = session.get(User, actor_id)
    if actor is None or actor.role != "operator":
        raise Forbidden("only an operator may do this")
    return actor
