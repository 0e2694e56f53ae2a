"""The console's search of players by any part of a name (``LIKE '%text%'``) read every name:
no B-tree index serves a pattern that starts with a wildcard (85 to 130 ms over 100,000 names
on PostgreSQL, growing with them). On PostgreSQL a trigram index (``pg_trgm``) now finds the
names holding the text's trigrams, for a text of three characters or more. SQLite has no such
index; it serves the sizes where reading every name is quick.

``pg_trgm`` ships with PostgreSQL and is a trusted extension since PostgreSQL 13: the database's
owner, or any role allowed to create in it, may create it. The downgrade leaves the extension,
which other things may use.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_users_username_trigrams"


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    op.execute(f"CREATE INDEX {INDEX} ON users USING gin (lower(username) gin_trgm_ops)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP INDEX {INDEX}")
