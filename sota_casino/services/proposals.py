"""Four eyes: a change one operator proposes waits until a second, different operator decides.

This module keeps the proposals (``approvals`` rows) and says how they read; the use cases
that propose a change live with the change (:mod:`.money`, :mod:`.settings`, :mod:`.accounts`),
and deciding one lives in :mod:`.approvals`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Annotated
from typing import Any
from typing import Final
from typing import Generic
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core import fairness
from ..models import Approval
from ..models import User
from . import audit
from .results import Id
from .results import OneOf
from .results import Open
from .results import Person
from .results import Time
from .tx import in_transaction

KINDS: Final = ("adjustment", "table", "role")
STATUSES: Final = ("pending", "approved", "rejected")


@dataclass(frozen=True, slots=True)
class ApprovalView:
    """A proposal as the console and the API show it, people by name."""

    id: Id
    kind: Annotated[str, OneOf(KINDS)]
    subject: str
    change: Open
    status: Annotated[str, OneOf(STATUSES)]
    proposed_by: Person
    proposed_at: Time
    decided_by: Person | None
    decided_at: Time | None
    note: str | None


#: What applying a change returns (a table's settings, a player's balances, a user's account).
Done = TypeVar("Done")


@dataclass(frozen=True, slots=True)
class Requested(Generic[Done]):
    """What a console's one button did: applied the change at once (``done``: what applying
    returns), or proposed it for a second operator (``approval``)."""

    done: Done | None
    approval: ApprovalView | None


@in_transaction
def propose(
    session: Session, actor_id: int, kind: str, subject: str, change: dict[str, Any]
) -> ApprovalView:
    """Store a proposal inside the caller's transaction (audited); return it as it reads."""
    assert kind in KINDS
    row = Approval(
        kind=kind,
        subject=subject,
        change=change,
        status="pending",
        proposed_by=actor_id,
        proposed_at=datetime.now(UTC),
    )
    session.add(row)
    session.flush()
    audit.record(
        session,
        actor=f"user:{actor_id}",
        action="approval.proposed",
        subject=subject,
        data={"approval_id": row.id, "kind": kind, "change": change},
    )
    return shown(session, row)


@in_transaction
def record_applied(
    session: Session,
    actor_id: int,
    action: str,
    subject: str,
    data: dict[str, Any],
    approval: dict[str, Any] | None,
) -> None:
    """Audit a change as it applies, naming the proposal and its approver when it came through
    four eyes (``approval``)."""
    audit.record(
        session,
        actor=f"user:{actor_id}",
        action=action,
        subject=subject,
        data=data if approval is None else {**data, "approval": approval},
    )


@in_transaction
def shown(session: Session, row: Approval) -> ApprovalView:
    """A proposal as the console and the API show it, people by name."""
    ids = {i for i in (row.proposed_by, row.decided_by) if i is not None}
    names = dict(
        session.execute(select(User.id, User.username).where(User.id.in_(ids))).tuples().all()
    )
    return ApprovalView(
        id=row.id,
        kind=row.kind,
        subject=row.subject,
        change=row.change,
        status=row.status,
        proposed_by=Person(row.proposed_by, names.get(row.proposed_by)),
        proposed_at=fairness.format_time(row.proposed_at),
        decided_by=None
        if row.decided_by is None
        else Person(row.decided_by, names.get(row.decided_by)),
        decided_at=fairness.format_time(row.decided_at) if row.decided_at else None,
        note=row.note,
    )
