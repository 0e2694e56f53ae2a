"""Rounds keep their settlement day, ante and tie-bet result, so reports add up in the database.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 04:20:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 1000

#: The columns read and written, as this revision knows them (the models may change later).
ROUNDS = sa.table(
    "rounds",
    sa.column("id", sa.BigInteger),
    sa.column("game", sa.String),
    sa.column("status", sa.String),
    sa.column("rules", sa.JSON),
    sa.column("stakes", sa.JSON),
    sa.column("staked", sa.BigInteger),
    sa.column("outcome", sa.JSON),
    sa.column("settled_at", sa.DateTime(timezone=True)),
    sa.column("settled_on", sa.Date),
    sa.column("ante", sa.BigInteger),
    sa.column("tie_bet", sa.BigInteger),
    sa.column("tie_result", sa.BigInteger),
)


def upgrade() -> None:
    with op.batch_alter_table("rounds", schema=None, recreate="never") as batch_op:
        batch_op.add_column(sa.Column("settled_on", sa.Date(), nullable=True))
        batch_op.add_column(sa.Column("ante", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("tie_bet", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("tie_result", sa.BigInteger(), nullable=True))
        batch_op.create_index(batch_op.f("ix_rounds_settled_on"), ["settled_on"], unique=False)
    _fill_settled_rounds()


def _fill_settled_rounds() -> None:
    """Give the rounds settled before this revision the figures settlement now records."""
    bind = op.get_bind()
    last_id = 0
    while True:
        rows = bind.execute(
            sa.select(ROUNDS)
            .where(ROUNDS.c.status == "settled", ROUNDS.c.id > last_id)
            .order_by(ROUNDS.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        bind.execute(
            ROUNDS.update()
            .where(ROUNDS.c.id == sa.bindparam("round_id"))
            .values(
                settled_on=sa.bindparam("day"),
                ante=sa.bindparam("ante_value"),
                tie_bet=sa.bindparam("tie_bet_value"),
                tie_result=sa.bindparam("tie_result_value"),
            ),
            [_figures(row) for row in rows],
        )
        last_id = rows[-1].id


def _figures(row: Any) -> dict[str, Any]:
    settled_at = row.settled_at
    if settled_at.tzinfo is None:  # SQLite hands back the stored UTC time without its zone
        settled_at = settled_at.replace(tzinfo=UTC)
    ante, tie_bet, tie_result = row.staked, 0, 0
    if row.game == "casino_war":
        ante, tie_bet = row.stakes["bet"], row.stakes["tie_bet"]
        won = (row.outcome or {}).get("tie_bet_won")
        tie_result = -tie_bet * row.rules["tie_payout"] if won else tie_bet
    return {
        "round_id": row.id,
        "day": settled_at.astimezone(UTC).date(),
        "ante_value": ante,
        "tie_bet_value": tie_bet,
        "tie_result_value": tie_result,
    }


def downgrade() -> None:
    # ALTER TABLE in place: rebuilding ``rounds`` (SQLite's batch copy) would drop a table that
    # postings and transfers refer to.
    with op.batch_alter_table("rounds", schema=None, recreate="never") as batch_op:
        batch_op.drop_index(batch_op.f("ix_rounds_settled_on"))
        batch_op.drop_column("tie_result")
        batch_op.drop_column("tie_bet")
        batch_op.drop_column("ante")
        batch_op.drop_column("settled_on")
