"""The audit log's filters by actor, action and subject are indexed together with the sequence
number: a page of a filter is its newest (or oldest) entries, which such an index hands over in
order, where an index on the column alone left the database to walk the log by sequence number
looking for them (600,000 entries read for a page of an actor whose entries are all old, at a
million entries).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 21:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("actor", "action", "subject")


# Plain CREATE and DROP INDEX on both databases. On PostgreSQL each index is built under a lock
# that lets readers read but holds writers back (a few seconds at a million entries): upgrade with
# the service stopped, as for any migration.
def upgrade() -> None:
    for column in COLUMNS:
        op.create_index(f"ix_audit_entries_{column}_seq", "audit_entries", [column, "seq"])
        op.drop_index(f"ix_audit_entries_{column}", table_name="audit_entries")


def downgrade() -> None:
    for column in COLUMNS:
        op.create_index(f"ix_audit_entries_{column}", "audit_entries", [column])
        op.drop_index(f"ix_audit_entries_{column}_seq", table_name="audit_entries")
