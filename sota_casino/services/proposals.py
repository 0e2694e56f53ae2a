"""Four eyes: a change one operator proposes waits until a second, different operator decides.

This module keeps the proposals (``approvals`` rows) and says how they read; the use cases
that propose a change live with the change (:mod:`.money`, :mod:`.settings`), and deciding
one lives in :mod:`.approvals`.
"""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Final

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core import fairness
from ..models import Approval
from ..models import User
from . import audit
from .tx import in_transaction

KINDS: Final = ("adjustment", "table")
STATUSES: Final = ("pending", "approved", "rejected")


@in_transaction
def propose(
    session: Session, actor_id: int, kind: str, subject: str, change: dict[str, Any]
) -> dict[str, Any]:
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
    return as_dict(session, row)


@in_transaction
def as_dict(session: Session, row: Approval) -> dict[str, Any]:
    """A proposal as the console and the API show it, people by name."""
    ids = {i for i in (row.proposed_by, row.decided_by) if i is not None}
    names = dict(
        session.execute(select(User.id, User.username).where(User.id.in_(ids))).tuples().all()
    )
    return {
        "id": row.id,
        "kind": row.kind,
        "subject": row.subject,
        "change": row.change,
        "status": row.status,
        "proposed_by": {"id": row.proposed_by, "name": names.get(row.proposed_by)},
        "proposed_at": fairness.format_time(row.proposed_at),
        "decided_by": (
            None
            if row.decided_by is None
            else {"id": row.decided_by, "name": names.get(row.decided_by)}
        ),
        "decided_at": fairness.format_time(row.decided_at) if row.decided_at else None,
        "note": row.note,
    }
