"""The throttles count an IPv6 address's /48 (its site) beside its /64: a site holds 65,536
networks of /64, each counted as one address, so sending each failed login or sign-up from
another of them multiplied an address's allowance by as many. Rows written before this have
no site; they leave the window within the hour.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06 01:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("login_attempts", "signups")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("site", sa.String(length=64), nullable=True))
            batch_op.create_index(batch_op.f(f"ix_{table}_site"), ["site"], unique=False)


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(batch_op.f(f"ix_{table}_site"))
            batch_op.drop_column("site")
