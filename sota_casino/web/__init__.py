"""The web layer: blueprints that parse, call one service, and render."""

from __future__ import annotations

from flask import Flask


def init_app(app: Flask) -> None:
    """Register every blueprint and the error handlers."""
    from . import lobby

    app.register_blueprint(lobby.bp)
