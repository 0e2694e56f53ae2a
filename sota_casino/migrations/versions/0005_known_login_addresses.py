"""Addresses each account logged in from: failures elsewhere cannot lock the owner out there.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 10:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "known_login_addresses",
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("username", "address", name=op.f("pk_known_login_addresses")),
    )
    with op.batch_alter_table("known_login_addresses", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_known_login_addresses_at"), ["at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("known_login_addresses", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_known_login_addresses_at"))
    op.drop_table("known_login_addresses")
