"""The ``flask`` commands: database, odds, simulations (more join as the services land)."""

from __future__ import annotations

import click
from flask import Flask


@click.group("simulate")
def simulate() -> None:
    """Play many games through the real stream and engines, and report the statistics."""


def init_app(app: Flask) -> None:
    """Register every command on ``app``."""
    from .sim import register

    register(simulate)
    app.cli.add_command(simulate)
