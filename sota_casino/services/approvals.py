"""Deciding a proposed change: a second operator approves (the change applies now, in the same
transaction) or rejects it (nothing changes); either way it is audited, and the operator who
proposed it may do neither."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Final

from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core.errors import Conflict
from ..core.errors import InvalidInput
from ..core.errors import NotFound
from ..core.errors import OwnApproval
from ..core.errors import ProposerNotOperator
from ..core.marks import N_
from ..models import Approval
from ..models import User
from . import accounts
from . import audit
from . import idempotency
from . import money
from . import proposals
from . import settings
from .proposals import ApprovalView
from .results import MAX_PAGE
from .results import NextCursor
from .staff import require_operator
from .text import storable
from .tx import read_only

NOTE_MAX: Final = 500


@dataclass(frozen=True, slots=True)
class ApprovalPage:
    """A page of proposals, newest first; ``next_cursor`` continues it."""

    approvals: list[ApprovalView]
    next_cursor: NextCursor


@idempotency.idempotent("approvals.decide", ApprovalView)
def decide(
    session: Session,
    actor_id: int,
    approval_id: int,
    approve: bool,
    note: object = None,
    *,
    key: str | None = None,
) -> ApprovalView:
    """Approve (and apply) or reject a pending proposal, as a second operator (audited); a
    retried ``idempotency_key`` returns the first answer.

    :raises OwnApproval: if ``actor_id`` proposed it.
    :raises Conflict: if it was decided already.
    :raises ProposerNotOperator: on approval, if its proposer is no operator now (made an
        auditor or a player, or locked): nothing is kept, it still waits.
    """
    require_operator(session, actor_id)
    if note is not None and (not isinstance(note, str) or len(note) > NOTE_MAX):
        raise InvalidInput(
            N_("a note is at most %(max)s characters"), params={"max": NOTE_MAX}, field="note"
        )
    row = session.get(Approval, approval_id, with_for_update=True, populate_existing=True)
    if row is None:
        raise NotFound(N_("no proposal %(id)s"), params={"id": approval_id})
    if row.status != "pending":
        raise Conflict(
            N_("proposal %(id)s was %(status)s already"),
            params={"id": approval_id, "status": row.status},
            words=("status",),  # "approved", said in the reader's language
        )
    if row.proposed_by == actor_id:
        raise OwnApproval(N_("a second operator must decide a change you proposed"))
    if approve:
        _require_operator_proposer(session, row)
    row.status = "approved" if approve else "rejected"
    row.decided_by, row.decided_at = actor_id, datetime.now(UTC)
    row.note = storable(note.strip(), "note") if isinstance(note, str) and note.strip() else None
    audit.record(
        session,
        actor=f"user:{actor_id}",
        action=f"approval.{row.status}",
        subject=row.subject,
        data={"approval_id": row.id, "kind": row.kind, "note": row.note},
    )
    if approve:
        _apply(session, row)
    return proposals.shown(session, row)


def _require_operator_proposer(session: Session, row: Approval) -> None:
    """Refuse to approve a change whose proposer is no operator now: four eyes are two
    operators', and one made an auditor or a player, or locked out, since proposing it no
    longer vouches for it. Their row is locked, so a demotion at the same moment waits for the
    decision or is seen by it. The proposal is left waiting rather than rejected on their
    behalf: the approving operator rejects it with a note, or it applies once its proposer is an
    operator again.

    :raises ProposerNotOperator: naming the proposer.
    """
    proposer = session.get(User, row.proposed_by, with_for_update=True, populate_existing=True)
    if proposer is None or proposer.role != "operator" or proposer.locked:
        name = proposer.username if proposer is not None else f"user:{row.proposed_by}"
        raise ProposerNotOperator(
            N_(
                "%(name)s, who proposed this change, is no operator now: it cannot be "
                "approved; reject it, or wait until %(name)s is an operator again"
            ),
            params={"name": name},
            proposed_by=row.proposed_by,
        )


def _apply(session: Session, row: Approval) -> None:
    """Apply an approved change, as done by its proposer and approved by its decider."""
    approval = {"id": row.id, "approved_by": f"user:{row.decided_by}"}
    change = row.change
    if row.kind == "adjustment":
        money.apply_adjustment(
            session,
            row.proposed_by,
            change["user_id"],
            change["currency"],
            change["amount"],
            change["reason"],
            approval=approval,
        )
    elif row.kind == "role":
        accounts.apply_role_change(
            session, row.proposed_by, change["user_id"], change["role"], approval=approval
        )
    else:
        settings.apply_table_change(
            session, row.proposed_by, change["table"], change["changes"], approval=approval
        )


@read_only
def listing(
    session: Session, *, status: str | None = "pending", cursor: int | None = None, limit: int = 50
) -> ApprovalPage:
    """Return a page of proposals (``status`` ones, or all for ``None``), newest first."""
    if status is not None and status not in proposals.STATUSES:
        raise InvalidInput(
            N_("status must be one of: %(statuses)s"),
            params={"statuses": ", ".join(proposals.STATUSES)},
            field="status",
        )
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(
            N_("limit must be from 1 to %(max)s"), params={"max": MAX_PAGE}, field="limit"
        )
    query = select(Approval)
    if status is not None:
        query = query.where(Approval.status == status)
    if cursor is not None:
        query = query.where(Approval.id < cursor)
    rows = session.scalars(query.order_by(Approval.id.desc()).limit(limit + 1)).all()
    items = [proposals.shown(session, row) for row in rows[:limit]]
    return ApprovalPage(items, items[-1].id if len(rows) > limit else None)


@read_only
def one(session: Session, approval_id: int) -> ApprovalView:
    row = session.get(Approval, approval_id)
    if row is None:
        raise NotFound(N_("no proposal %(id)s"), params={"id": approval_id})
    return proposals.shown(session, row)


@read_only
def pending_count(session: Session) -> int:
    return session.scalar(select(func.count(Approval.id)).where(Approval.status == "pending")) or 0
