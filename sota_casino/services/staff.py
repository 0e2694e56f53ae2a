"""Who may do what: the staff gate of the operator's side (pages and API) and the check of every
service that acts for an operator."""

from __future__ import annotations

from sqlalchemy.orm import Session

from ..core.errors import Forbidden
from ..core.errors import NotFound
from ..core.marks import N_
from ..models import User
from .tx import in_transaction

#: The roles that may use the operator's side; only an operator changes anything there.
STAFF = ("operator", "auditor")


def require_staff(role: str, *, changes: bool) -> None:
    """Let staff onto the operator's side: an auditor reads everything and changes nothing.

    :param changes: the request would change state (any method but GET, HEAD, OPTIONS).
    :raises Forbidden: for a player, or for an auditor's change.
    """
    if role not in STAFF:
        raise Forbidden(N_("the operator's side is for operators and auditors"))
    if changes and role != "operator":
        raise Forbidden(N_("auditors may read everything but change nothing"))


class StaffHaveNoPlayMoney(Forbidden):
    """Staff accounts do not play: they cannot bet, top up or register a player's key."""

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
            f"{role}s do not play: they cannot bet, top up or register a player's key; use a "
            "player account"
        )


@in_transaction
def require_operator(session: Session, actor_id: int) -> User:
    """Return the acting operator, whose row stays share-locked until the caller's transaction
    ends: a change of that operator's role or lock waits for it, or is seen by it. Read without
    the lock, two operators making each other auditors at once both went through on PostgreSQL,
    each acting after the other had taken away the right to.

    :raises Forbidden: if ``actor_id`` is not an operator (an auditor reads but never changes).
    """
    actor = session.get(User, actor_id, with_for_update={"read": True}, populate_existing=True)
    if actor is None or actor.role != "operator":
        raise Forbidden(N_("only an operator may do this"))
    return actor


@in_transaction
def target_player(session: Session, user_id: int) -> User:
    """Return the player an operator acts on (an adjustment, its preview).

    :raises NotFound: if ``user_id`` is no player (staff hold no play money).
    """
    target = session.get(User, user_id)
    if target is None or target.role != "player":
        raise NotFound(N_("no player %(id)s"), params={"id": user_id})
    return target
