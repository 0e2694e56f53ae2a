"""Schema changes go through Alembic only; this module runs it without an ``alembic.ini``.

Alembic is imported when a migration runs, not with this module: the app imports it for its
commands, and Alembic with its templates and their highlighter was about a tenth of the start
of every command and worker that migrates nothing.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import sqlalchemy as sa

from .locations import MIGRATIONS

if TYPE_CHECKING:
    from alembic.config import Config


def alembic_config(url: str) -> Config:
    """Return an Alembic config for the database at ``url``."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    from alembic import command

    command.downgrade(alembic_config(url), revision)


def check(url: str) -> None:
    """Raise if the models and the migrations disagree (``alembic check``)."""
    from alembic import command

    command.check(alembic_config(url))


@contextlib.contextmanager
def scratch_postgres(server_url: str, prefix: str) -> Iterator[str]:
    """Create a new, migrated PostgreSQL database on ``server_url``'s server; yield its URL and
    drop it afterwards (retrying a while: the server may be coming back from a restart).

    :raises sqlalchemy.exc.OperationalError: if the server does not answer.
    """
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    name = f"{prefix}_{secrets.token_hex(4)}"
    try:
        with admin.connect() as connection:
            connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
        url = admin.url.set(database=name).render_as_string(hide_password=False)
        try:
            upgrade(url)
            yield url
        finally:
            _drop(admin, name)
    finally:
        admin.dispose()


def _drop(admin: sa.Engine, name: str, tries: int = 30) -> None:
    for attempt in range(tries):
        try:
            with admin.connect() as connection:
                connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            return
        except sa.exc.OperationalError:
            if attempt == tries - 1:
                raise
            time.sleep(1)
