"""Players' keys for signed decisions and moves, and the signed actions of each round.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 14:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: A key once registered stays, so that old signatures stay checkable; a new one retires it.
APPEND_ONLY = "player_keys"


def upgrade() -> None:
    op.create_table(
        "player_keys",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("public_key_hex", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_player_keys_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_player_keys")),
        sa.UniqueConstraint("public_key_hex", name=op.f("uq_player_keys_public_key_hex")),
    )
    op.create_index("ix_player_keys_user_id_id", "player_keys", ["user_id", "id"], unique=False)
    op.add_column("rounds", sa.Column("signed_actions", sa.JSON(), nullable=True))
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
    else:
        for event in ("update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS {APPEND_ONLY}_no_{event}")
    # In place (SQLite 3.35+): a batch copy would drop the table that transfers refer to.
    op.drop_column("rounds", "signed_actions")
    op.drop_index("ix_player_keys_user_id_id", table_name="player_keys")
    op.drop_table("player_keys")
