"""The landing page and the lobby."""

from __future__ import annotations

from flask import Blueprint
from flask import render_template
from flask.typing import ResponseReturnValue

bp = Blueprint("lobby", __name__)


@bp.get("/")
def index() -> ResponseReturnValue:
    return render_template("lobby/index.html")
