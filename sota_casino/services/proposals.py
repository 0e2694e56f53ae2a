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

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core import fairness
from ..core.errors import ProposalPending
from ..core.marks import N_
from ..models import Approval
from ..models import User
from . import audit
from .results import Id
from .results import OneOf
from .results import Open
from .results import Person
from .results import Time
from .tx import in_transaction
from .tx import serialize_on

KINDS: Final = ("adjustment", "table", "role")
STATUSES: Final = ("pending", "approved", "rejected")
#: The kinds whose change, proposed again while it waits, is refused: a second proposal to make
#: the same user an operator, or to make the same table change, would only be decided twice. An
#: adjustment may be proposed again on purpose (two corrections of one amount are two; a retry
#: is recognised by its Idempotency-Key instead).
ONE_AT_A_TIME: Final = ("role", "table")


#: What a field of a proposal that its decision fills in says of its null.
PENDING: Final = "null while it is pending"


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
    decided_by: Annotated[Person | None, Field(description=PENDING)]
    decided_at: Annotated[Time | None, Field(description=PENDING)]
    note: Annotated[
        str | None, Field(description=f"the decider's; {PENDING}, or decided without one")
    ]


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
    """Store a proposal inside the caller's transaction (audited); return it as it reads.

    :raises ProposalPending: if the same change of a kind in :data:`ONE_AT_A_TIME` waits
        already.
    """
    assert kind in KINDS
    if kind in ONE_AT_A_TIME:
        _refuse_pending_twin(session, kind, subject, change)
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


def _refuse_pending_twin(session: Session, kind: str, subject: str, change: dict[str, Any]) -> None:
    """Refuse a change that waits already, proposed by anyone.

    Two operators proposing it at once take turns on a lock of the subject's proposals (no row
    covers a proposal not yet made), so the second reads the first's once it is committed.
    """
    serialize_on(session, f"proposals:{kind}:{subject}")
    pending = session.scalars(
        select(Approval)
        .where(Approval.kind == kind, Approval.subject == subject, Approval.status == "pending")
        .order_by(Approval.id)
        .execution_options(populate_existing=True)
    )
    twin = next((row for row in pending if row.change == change), None)
    if twin is not None:
        raise ProposalPending(
            N_("this change is proposed already (#%(id)s) and waits for a second operator"),
            params={"id": twin.id},
            approval_id=twin.id,
        )


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
        proposed_by=Person(row.proposed_by, names[row.proposed_by]),
        proposed_at=fairness.format_time(row.proposed_at),
        decided_by=None
        if row.decided_by is None
        else Person(row.decided_by, names[row.decided_by]),
        decided_at=fairness.format_time(row.decided_at) if row.decided_at else None,
        note=row.note,
    )
