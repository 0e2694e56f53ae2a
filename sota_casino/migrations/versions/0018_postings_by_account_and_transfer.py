"""An account's postings are indexed in transfer order: a page of a player's money moves is read
from its end through the index, where an index on the account alone gave every posting of the
player to be sorted for each page (160,000 for a player of 80,000 rounds).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05 22:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Plain CREATE and DROP INDEX on both databases, as in 0017 (upgrade with the service stopped).
def upgrade() -> None:
    op.create_index(
        "ix_postings_account_id_transfer_id", "postings", ["account_id", "transfer_id"]
    )
    op.drop_index("ix_postings_account_id", table_name="postings")


def downgrade() -> None:
    op.create_index("ix_postings_account_id", "postings", ["account_id"])
    op.drop_index("ix_postings_account_id_transfer_id", table_name="postings")
