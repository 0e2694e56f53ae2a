"""The audit log's pending entries: on PostgreSQL a use case writes its entries here, and the
integrator gives them their sequence numbers and hashes (docs/scaling.md).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 17:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_pending",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("time", sa.String(length=27), nullable=False),
        sa.Column("actor", sa.String(length=64), nullable=True),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("subject", sa.String(length=64), nullable=True),
        sa.Column("data", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_pending")),
    )


def downgrade() -> None:
    # Committed events not sequenced yet would be lost with the table: refuse instead.
    waiting = op.get_bind().execute(sa.text("SELECT count(*) FROM audit_pending")).scalar()
    if waiting:
        raise RuntimeError(
            f"{waiting} audit entries wait for their sequence numbers; run "
            "`flask audit integrate` before downgrading"
        )
    op.drop_table("audit_pending")
