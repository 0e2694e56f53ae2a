"""An index of the audit log by actor, action and time: before an operator adjusts a balance
alone, what they adjusted alone in the last 24 hours is read as one range of it, not from every
entry of theirs or of the day.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 12:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_audit_entries_actor_action_time", "audit_entries", ["actor", "action", "time"]
    )


def downgrade() -> None:
    op.drop_index("ix_audit_entries_actor_action_time", table_name="audit_entries")
