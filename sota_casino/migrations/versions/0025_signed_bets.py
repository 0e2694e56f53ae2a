"""The player's signed bet of each round: once a key is registered, a bet carries the player's
signature over its bet document (the seed pair and nonce it takes, the game, the stakes and
the rules), kept with the round until its receipt carries it.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06 12:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("rounds", sa.Column("signed_bet", sa.JSON(), nullable=True))


def downgrade() -> None:
    # In place (SQLite 3.35+): a batch copy would drop the table that transfers refer to.
    op.drop_column("rounds", "signed_bet")
