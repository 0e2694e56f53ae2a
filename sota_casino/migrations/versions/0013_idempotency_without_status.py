"""An idempotency record keeps the first answer, not its HTTP status: the status of a money
move's answer is the view's (every such call answers one status), and nothing read it.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 18:50:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Plain ALTER TABLE on both databases (SQLite 3.35+ drops a column in place).
def upgrade() -> None:
    op.drop_column("idempotency_records", "status")


def downgrade() -> None:
    # Every record written before this revision said 201, the status of each money move.
    op.add_column(
        "idempotency_records",
        sa.Column("status", sa.Integer(), nullable=False, server_default="201"),
    )
