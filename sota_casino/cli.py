"""The ``flask`` commands: database, odds, simulations (more join as the services land)."""

from __future__ import annotations

import click
from flask import Flask
from flask import current_app
from flask.cli import with_appcontext

from . import migrate


@click.group("db")
def db_group() -> None:
    """Create or change the schema (Alembic migrations only)."""


@db_group.command("upgrade")
@click.argument("revision", default="head")
@with_appcontext
def db_upgrade(revision: str) -> None:
    """Migrate the database up to REVISION (default: the newest)."""
    migrate.upgrade(current_app.config["DATABASE_URL"], revision)
    click.echo(f"database at {revision}")


@db_group.command("downgrade")
@click.argument("revision")
@with_appcontext
def db_downgrade(revision: str) -> None:
    """Migrate the database down to REVISION (``base`` empties it)."""
    migrate.downgrade(current_app.config["DATABASE_URL"], revision)
    click.echo(f"database at {revision}")


@db_group.command("check")
@with_appcontext
def db_check() -> None:
    """Fail if the models and the migrations disagree."""
    migrate.check(current_app.config["DATABASE_URL"])
    click.echo("models and migrations agree")


@click.group("simulate")
def simulate() -> None:
    """Play many games through the real stream and engines, and report the statistics."""


def init_app(app: Flask) -> None:
    """Register every command on ``app``."""
    from .sim import register

    register(simulate)
    app.cli.add_command(simulate)
    app.cli.add_command(db_group)
