"""Transfers append-only, as their postings are: a transfer's kind, currency, player, round and
memo say what its postings moved and why, and no code changes them once written.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-06 16:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = "transfers"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        # refuse_change() is the function of 0001's append-only tables.
        op.execute(
            f"CREATE TRIGGER {APPEND_ONLY}_append_only BEFORE UPDATE OR DELETE ON {APPEND_ONLY} "
            "FOR EACH ROW EXECUTE FUNCTION refuse_change()"
        )
        return
    for event in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER {APPEND_ONLY}_no_{event.lower()} BEFORE {event} ON {APPEND_ONLY} "
            f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY} is append-only: {event} refused'); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP TRIGGER IF EXISTS {APPEND_ONLY}_append_only ON {APPEND_ONLY}")
        return
    for event in ("update", "delete"):
        op.execute(f"DROP TRIGGER IF EXISTS {APPEND_ONLY}_no_{event}")
