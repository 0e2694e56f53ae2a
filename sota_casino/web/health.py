"""Health checks for load balancers and orchestrators: ``/healthz`` (the process is alive) and
``/readyz`` (it can serve: the database answers and its migrations are at head)."""

from __future__ import annotations

from flask import Blueprint
from flask import jsonify
from flask.typing import ResponseReturnValue

from ..db import get_session
from ..services import health
from ..services.results import to_json

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def alive() -> ResponseReturnValue:
    """Answer without touching the database: a restart would not fix an outage."""
    return jsonify({"status": "alive"})


@bp.get("/readyz")
def ready() -> ResponseReturnValue:
    report = health.readiness(get_session())
    status = 200 if report.ready else 503
    headers = {} if report.ready else {"Retry-After": "5"}
    return jsonify(to_json(report)), status, headers
