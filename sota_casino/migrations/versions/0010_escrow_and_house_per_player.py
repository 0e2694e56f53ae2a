"""Escrow and the house's result are kept per player: the stakes of rounds still open move from
the shared escrow of their currency to their player's own.

Each move is a transfer of kind ``escrow`` for its round, so the round's escrow postings still
sum to its stakes, and every balance still equals its postings. The shared house accounts keep
what the house made before; reports add up every house account.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 14:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

accounts = sa.table(
    "accounts",
    sa.column("id", sa.BigInteger),
    sa.column("name", sa.String),
    sa.column("user_id", sa.BigInteger),
    sa.column("kind", sa.String),
    sa.column("currency", sa.String),
    sa.column("balance", sa.BigInteger),
)
transfers = sa.table(
    "transfers",
    sa.column("id", sa.BigInteger),
    sa.column("kind", sa.String),
    sa.column("currency", sa.String),
    sa.column("user_id", sa.BigInteger),
    sa.column("round_id", sa.BigInteger),
    sa.column("memo", sa.Text),
    sa.column("created_at", sa.DateTime(timezone=True)),
)
postings = sa.table(
    "postings",
    sa.column("transfer_id", sa.BigInteger),
    sa.column("account_id", sa.BigInteger),
    sa.column("amount", sa.BigInteger),
)
rounds = sa.table(
    "rounds",
    sa.column("id", sa.BigInteger),
    sa.column("user_id", sa.BigInteger),
    sa.column("currency", sa.String),
    sa.column("staked", sa.BigInteger),
    sa.column("status", sa.String),
)


def _account_id(bind: sa.Connection, name: str, user_id: int | None, currency: str) -> int:
    found = bind.scalar(sa.select(accounts.c.id).where(accounts.c.name == name))
    if found is not None:
        return int(found)
    kind = name.split(":")[0]
    row = {"name": name, "user_id": user_id, "kind": kind, "currency": currency, "balance": 0}
    bind.execute(accounts.insert().values(**row))
    return int(bind.scalar(sa.select(accounts.c.id).where(accounts.c.name == name)))


def _move(
    bind: sa.Connection, round_id: int, currency: str, amount: int, src: int, dst: int
) -> None:
    now = datetime.now(UTC)
    owner = bind.scalar(sa.select(rounds.c.user_id).where(rounds.c.id == round_id))
    bind.execute(
        transfers.insert().values(
            kind="escrow",
            currency=currency,
            user_id=owner,
            round_id=round_id,
            memo="escrow kept per player",
            created_at=now,
        )
    )
    transfer_id = bind.scalar(
        sa.select(sa.func.max(transfers.c.id)).where(transfers.c.round_id == round_id)
    )
    bind.execute(
        postings.insert(),
        [
            {"transfer_id": transfer_id, "account_id": src, "amount": -amount},
            {"transfer_id": transfer_id, "account_id": dst, "amount": amount},
        ],
    )
    for account_id, change in ((src, -amount), (dst, amount)):
        bind.execute(
            accounts.update()
            .where(accounts.c.id == account_id)
            .values(balance=accounts.c.balance + change)
        )


def upgrade() -> None:
    bind = op.get_bind()
    open_rounds = bind.execute(
        sa.select(rounds.c.id, rounds.c.user_id, rounds.c.currency, rounds.c.staked)
        .where(rounds.c.status != "settled")
        .order_by(rounds.c.id)
    ).all()
    for round_id, user_id, currency, staked in open_rounds:
        shared = _account_id(bind, f"escrow:{currency}", None, currency)
        own = _account_id(bind, f"escrow:{currency}:{user_id}", user_id, currency)
        _move(bind, round_id, currency, int(staked), shared, own)


def downgrade() -> None:
    bind = op.get_bind()
    open_rounds = bind.execute(
        sa.select(rounds.c.id, rounds.c.user_id, rounds.c.currency, rounds.c.staked)
        .where(rounds.c.status != "settled")
        .order_by(rounds.c.id)
    ).all()
    for round_id, user_id, currency, staked in open_rounds:
        shared = _account_id(bind, f"escrow:{currency}", None, currency)
        own = _account_id(bind, f"escrow:{currency}:{user_id}", user_id, currency)
        _move(bind, round_id, currency, int(staked), own, shared)
