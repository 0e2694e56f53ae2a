"""Simulations behind ``flask simulate``: the real stream, the real engines, fresh seeds."""

from __future__ import annotations

import click


def register(group: click.Group) -> None:
    """Add each game's simulation command to ``group``."""
