"""Sign-ups per address: each new account is granted play money, so they are throttled.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 03:50:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "signups",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_signups")),
    )
    with op.batch_alter_table("signups", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_signups_address"), ["address"], unique=False)
        batch_op.create_index(batch_op.f("ix_signups_at"), ["at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("signups", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_signups_at"))
        batch_op.drop_index(batch_op.f("ix_signups_address"))
    op.drop_table("signups")
