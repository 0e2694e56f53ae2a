"""An alert keeps its message as a message id with its params, so each operator reads it in
their own language; the alerts raised before keep their English text, with no params.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: The params that are amounts in minor units of the params' currency (as services.alerts
#: had them when this revision was written).
AMOUNTS = ("total", "threshold", "net")


# Plain ALTER TABLE on both databases.
def upgrade() -> None:
    op.add_column("alerts", sa.Column("params", sa.JSON(), nullable=True))


def _english(message: str, params: dict[str, Any]) -> str:
    """The message as the revisions before this one stored it: English, amounts in minor units."""
    currency = params.get("currency", "")
    filled = {
        name: f"{value} {currency} (minor units)" if name in AMOUNTS else value
        for name, value in params.items()
    }
    try:
        return message % filled if filled else message
    except (KeyError, ValueError, TypeError):
        return message


def downgrade() -> None:
    # The revisions before show the stored message as it is: write each one out in English
    # first, or their console would show the ids with their placeholders.
    bind = op.get_bind()
    alerts = sa.table(
        "alerts",
        sa.column("id", sa.BigInteger()),
        sa.column("message", sa.Text()),
        sa.column("params", sa.JSON()),
    )
    rows = bind.execute(
        sa.select(alerts.c.id, alerts.c.message, alerts.c.params).where(
            alerts.c.params.is_not(None)
        )
    ).all()
    for id_, message, params in rows:
        if isinstance(params, dict):
            english = _english(message, params)
            bind.execute(alerts.update().where(alerts.c.id == id_).values(message=english))
    # Plain ALTER TABLE on both databases (SQLite 3.35+ drops a column in place).
    op.drop_column("alerts", "params")
