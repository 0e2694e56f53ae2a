"""Simulations behind ``flask simulate``: the real stream, the real engines, fresh seeds."""

from __future__ import annotations

import click

from .casino_war import casino_war_command
from .sota import sota_command


def register(group: click.Group) -> None:
    """Add each game's simulation command to ``group``."""
    group.add_command(casino_war_command)
    group.add_command(sota_command)
