"""Schema changes go through Alembic only; this module runs it without an ``alembic.ini``."""

from __future__ import annotations

from alembic import command
from alembic.config import Config

from .locations import MIGRATIONS


def alembic_config(url: str) -> Config:
    """Return an Alembic config for the database at ``url``."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)


def check(url: str) -> None:
    """Raise if the models and the migrations disagree (``alembic check``)."""
    command.check(alembic_config(url))
