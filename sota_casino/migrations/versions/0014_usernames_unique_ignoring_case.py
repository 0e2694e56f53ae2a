"""Usernames are unique ignoring case in the database itself, whatever path writes one: a unique
index on lower(username).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01 19:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


#: The names that differ from another only in letter case, each group together.
CLASHES = sa.text(
    "SELECT username FROM users WHERE lower(username) IN "
    "(SELECT lower(username) FROM users GROUP BY lower(username) HAVING count(*) > 1) "
    "ORDER BY lower(username), username"
)


# A plain CREATE INDEX on both databases: no batch copy of ``users`` (which every account and
# session refers to) is needed.
def upgrade() -> None:
    # Names written past the sign-up's check could clash already. Which account keeps a name is
    # the operator's call: refuse, naming them all, rather than fail on the index's first clash.
    clashes = op.get_bind().execute(CLASHES).scalars().all()
    if clashes:
        names = ", ".join(repr(name) for name in clashes)
        raise RuntimeError(
            f"usernames that differ only in letter case: {names}; rename all but one of each "
            "before upgrading"
        )
    op.create_index("uq_users_username_lower", "users", [sa.text("lower(username)")], unique=True)


def downgrade() -> None:
    op.drop_index("uq_users_username_lower", table_name="users")
