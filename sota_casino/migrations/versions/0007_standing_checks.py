"""Standing checks keep their verdict, the audit tree keeps its nodes, settled rounds are fixed.

Revision ID: 0007
Revises: 0005
Create Date: 2026-12-01 10:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0007"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SETTLED_ONLY = "rounds are fixed once settled"


def upgrade() -> None:
    op.create_table(
        "audit_tree_nodes",
        sa.Column("height", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("idx", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("height", "idx", name=op.f("pk_audit_tree_nodes")),
    )
    op.create_table(
        "check_runs",
        sa.Column("name", sa.String(length=16), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=True),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("findings", sa.JSON(), nullable=True),
        sa.Column("state", sa.JSON(), nullable=True),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("whole_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("whole_requested_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("whole_requested_by", sa.String(length=64), nullable=True),
        sa.Column("progress", sa.BigInteger(), nullable=True),
        sa.Column("progress_total", sa.BigInteger(), nullable=True),
        sa.Column("lease_owner", sa.String(length=64), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_check_runs")),
    )
    _create_settled_round_triggers()


def _create_settled_round_triggers() -> None:
    # Like postings: the house's reports add up these rows, so a settled one never changes.
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"""
            CREATE FUNCTION refuse_settled_round_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF OLD.status = 'settled' THEN
                    RAISE EXCEPTION '{SETTLED_ONLY}: % refused', TG_OP
                        USING ERRCODE = 'restrict_violation';
                END IF;
                RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
            END $$
            """
        )
        op.execute(
            "CREATE TRIGGER rounds_settled_fixed BEFORE UPDATE OR DELETE ON rounds "
            "FOR EACH ROW EXECUTE FUNCTION refuse_settled_round_change()"
        )
        return
    for event in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER rounds_settled_no_{event.lower()} BEFORE {event} ON rounds "
            f"WHEN OLD.status = 'settled' "
            f"BEGIN SELECT RAISE(ABORT, '{SETTLED_ONLY}: {event} refused'); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS rounds_settled_fixed ON rounds")
        op.execute("DROP FUNCTION IF EXISTS refuse_settled_round_change()")
    else:
        for event in ("update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS rounds_settled_no_{event}")
    op.drop_table("check_runs")
    op.drop_table("audit_tree_nodes")
