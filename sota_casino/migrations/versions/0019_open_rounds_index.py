"""The rounds still open have an index of their own (a partial index, of the few rounds not
settled), by player and currency: the ledger check reads them, and adds up their stakes by
player, at every standing step, which was a scan of every round (0.3 s a statement at 400,000
rounds, four statements a step).

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05 21:50:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OPEN = sa.text("status != 'settled'")


# A plain CREATE INDEX on both databases, as in 0017 (upgrade with the service stopped).
def upgrade() -> None:
    op.create_index(
        "ix_rounds_open",
        "rounds",
        ["user_id", "currency"],
        sqlite_where=OPEN,
        postgresql_where=OPEN,
    )


def downgrade() -> None:
    op.drop_index("ix_rounds_open", table_name="rounds")
