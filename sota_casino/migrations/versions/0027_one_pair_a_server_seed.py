"""One server seed serves one seed pair, in the database itself: a unique index on the pairs'
commitments (each the SHA-256 of its server seed). Revealed for one pair, a seed committed for
two would tell every shuffle of the other in advance.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-07 10:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "uq_seed_pairs_commitment"

#: The pairs committed to a server seed another pair is committed to, each group together.
REUSED = sa.text(
    "SELECT id FROM seed_pairs WHERE commitment IN "
    "(SELECT commitment FROM seed_pairs GROUP BY commitment HAVING count(*) > 1) "
    "ORDER BY commitment, id"
)


# A plain CREATE INDEX on both databases, as in 0014: no batch copy of ``seed_pairs`` (which
# every round refers to) is needed.
def upgrade() -> None:
    # Whatever the database let through before is the operator's to judge (a pair's rounds and
    # receipts stand on its seed): refuse, naming them all, rather than fail on the first.
    reused = op.get_bind().execute(REUSED).scalars().all()
    if reused:
        pairs = ", ".join(str(pair) for pair in reused)
        raise RuntimeError(
            f"seed pairs committed to one server seed with another: {pairs}; a server seed "
            "serves one pair (flask audit verify names them), settle this before upgrading"
        )
    op.create_index(INDEX, "seed_pairs", ["commitment"], unique=True)


def downgrade() -> None:
    op.drop_index(INDEX, table_name="seed_pairs")
