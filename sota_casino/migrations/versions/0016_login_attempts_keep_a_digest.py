"""A failed login keeps a keyed digest of the name typed, never the text: a player who typed
the password into the name field left it in the table for the throttle's window. The failures
recorded before are forgotten (they could not be counted against the digests anyway), so every
account and address starts its window afresh.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03 23:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Plain ALTER TABLE on both databases (SQLite 3.25+ renames a column in place).
def upgrade() -> None:
    op.execute(sa.text("DELETE FROM login_attempts"))
    op.drop_index("ix_login_attempts_username", table_name="login_attempts")
    op.alter_column("login_attempts", "username", new_column_name="name_digest")
    op.create_index("ix_login_attempts_name_digest", "login_attempts", ["name_digest"])


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM login_attempts"))
    op.drop_index("ix_login_attempts_name_digest", table_name="login_attempts")
    op.alter_column("login_attempts", "name_digest", new_column_name="username")
    op.create_index("ix_login_attempts_username", "login_attempts", ["username"])
