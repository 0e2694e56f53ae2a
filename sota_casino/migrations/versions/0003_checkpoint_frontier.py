"""Checkpoints keep their tree's frontier, so the next one hashes only the entries after them.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 04:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Checkpoints signed before this have none; the next checkpoint hashes their entries once.
    with op.batch_alter_table("audit_checkpoints", schema=None) as batch_op:
        batch_op.add_column(sa.Column("frontier", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("audit_checkpoints", schema=None) as batch_op:
        batch_op.drop_column("frontier")
