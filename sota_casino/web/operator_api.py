"""The operator endpoints of the JSON API (``/api/v1/operator``, API.md).

Staff only, enforced once in :func:`staff_only` before any view: no credentials is a 401, a
player a 403, and an auditor may GET everything but gets a 403 on anything that changes state.
"""

from __future__ import annotations

from typing import Final

from flask import Blueprint
from flask import g
from flask import jsonify
from flask import request
from flask.typing import ResponseReturnValue

from ..core.errors import Forbidden
from ..core.errors import InvalidInput
from ..db import get_session
from ..services import accounts
from ..services import audit
from ..services import checks
from ..services import money
from ..services import reports
from ..services import settings
from . import inputs
from .inputs import json_body
from .inputs import json_object
from .inputs import query_int
from .inputs import query_text
from .inputs import string
from .operator import AUDIT_FILTERS
from .operator import STAFF
from .operator import export_response
from .operator import player_cursors
from .security import SAFE_METHODS
from .security import api_user

bp = Blueprint("operator_api", __name__, url_prefix="/api/v1/operator")

PAGE_DEFAULT: Final = 50
PAGE_MAX: Final = audit.MAX_PAGE
FILTER_MAX: Final = 200
ADJUSTMENT_UNIT: Final = "minor units (hundredths of a chip, or whole sweets); negative debits"


@bp.before_request
def staff_only() -> None:
    """Let only staff in; auditors only read."""
    user = api_user()
    if user.role not in STAFF:
        raise Forbidden("operator endpoints are for operators and auditors")
    if request.method not in SAFE_METHODS and user.role != "operator":
        raise Forbidden("auditors may read but not change anything")
    g.user = user


def _actor_id() -> int:
    return int(g.user.id)


# --- audit --------------------------------------------------------------------------------------


@bp.get("/audit")
def audit_entries() -> ResponseReturnValue:
    filters = {name: query_text(name, max_length=FILTER_MAX) for name in AUDIT_FILTERS}
    page = audit.entries(
        get_session(),
        after_seq=query_int("after_seq", default=None),
        before_seq=query_int("before_seq", default=None),
        from_seq=query_int("from_seq", default=None),
        order=query_text("order", max_length=8),
        limit=query_int("limit", low=1, high=PAGE_MAX, default=PAGE_DEFAULT) or PAGE_DEFAULT,
        **filters,
    )
    return jsonify(page)


@bp.get("/audit/verify")
def audit_verify() -> ResponseReturnValue:
    return jsonify(checks.audit_verdict(get_session()))


@bp.get("/audit/checkpoints")
def audit_checkpoints() -> ResponseReturnValue:
    page = audit.checkpoints(
        get_session(),
        order=query_text("order", max_length=8) or audit.NEWEST,
        cursor=query_int("cursor", default=None),
        limit=query_int("limit", low=1, high=PAGE_MAX, default=PAGE_DEFAULT) or PAGE_DEFAULT,
    )
    return jsonify(page)


@bp.post("/audit/checkpoints")
def audit_checkpoint_now() -> ResponseReturnValue:
    return jsonify(audit.checkpoint(get_session(), actor=f"user:{_actor_id()}")), 201


@bp.get("/audit/checkpoint-note")
def audit_checkpoint_note() -> ResponseReturnValue:
    return jsonify({"note": reports.checkpoint_note(get_session())})


@bp.get("/audit/proof/<id:seq>")
def audit_proof(seq: int) -> ResponseReturnValue:
    return jsonify(audit.inclusion_proof(get_session(), seq))


@bp.get("/audit/consistency")
def audit_consistency() -> ResponseReturnValue:
    old_size = query_int("old_size", low=1)
    new_size = query_int("new_size", low=1)
    if old_size is None or new_size is None:
        raise InvalidInput("old_size and new_size are required", field="old_size")
    return jsonify(audit.consistency_proof(get_session(), old_size, new_size))


@bp.get("/audit/export")
def audit_export() -> ResponseReturnValue:
    return export_response()


# --- ledger -------------------------------------------------------------------------------------


@bp.get("/ledger/summary")
def ledger_summary() -> ResponseReturnValue:
    return jsonify(reports.house_summary(get_session()))


@bp.get("/ledger/check")
def ledger_check() -> ResponseReturnValue:
    return jsonify(checks.ledger_verdict(get_session()))


@bp.get("/ledger/math")
def ledger_math() -> ResponseReturnValue:
    since, until = query_text("since", max_length=10), query_text("until", max_length=10)
    return jsonify(reports.house_math(get_session(), since=since, until=until))


@bp.get("/checks/<name>")
def check_verdict(name: str) -> ResponseReturnValue:
    return jsonify(checks.verdict(get_session(), name))


@bp.post("/checks/<name>")
def request_whole_check(name: str) -> ResponseReturnValue:
    return jsonify(checks.request_whole(get_session(), name, actor=f"user:{_actor_id()}")), 202


# --- players ------------------------------------------------------------------------------------


@bp.get("/players")
def players() -> ResponseReturnValue:
    query = query_text("q", max_length=64) or ""
    return jsonify({"users": accounts.find_users(get_session(), query)})


@bp.get("/players/<id:user_id>")
def player(user_id: int) -> ResponseReturnValue:
    limit = query_int("limit", low=1, high=PAGE_MAX, default=PAGE_DEFAULT) or PAGE_DEFAULT
    overview = reports.player_overview(get_session(), user_id, limit=limit, **player_cursors())
    return jsonify(overview)


def _managed(user: accounts.UserView) -> ResponseReturnValue:
    """Answer a change to a user's account with the account as it now is."""
    return jsonify({"user": user.to_dict() | {"locked": user.locked}})


@bp.put("/players/<id:user_id>/role")
def player_role(user_id: int) -> ResponseReturnValue:
    role = json_object("role").get("role")
    return _managed(accounts.set_role(get_session(), _actor_id(), user_id, role))


@bp.put("/players/<id:user_id>/locked")
def player_locked(user_id: int) -> ResponseReturnValue:
    locked = inputs.flag(json_object("locked"), "locked")
    return _managed(accounts.set_locked(get_session(), _actor_id(), user_id, locked))


@bp.post("/adjustments")
def adjustment() -> ResponseReturnValue:
    body = json_object("user_id", "currency", "amount", "reason")
    user_id = inputs.identifier(body, "user_id")
    amount = inputs.amount(body, "amount", unit=ADJUSTMENT_UNIT, signed=True)
    reason = string(body, "reason", max_length=money.REASON_MAX)
    balances = money.adjust(
        get_session(),
        _actor_id(),
        user_id,
        body.get("currency"),
        amount,
        reason,
        idempotency_key=inputs.idempotency_key(),
    )
    return jsonify({"user_id": user_id, "balances": balances}), 201


# --- tables -------------------------------------------------------------------------------------


@bp.get("/tables/<name>")
def table(name: str) -> ResponseReturnValue:
    return jsonify({"name": name, "settings": settings.table_rules(get_session(), name)})


@bp.put("/tables/<name>")
def update_table(name: str) -> ResponseReturnValue:
    body = json_body()
    updated = settings.update_table(get_session(), _actor_id(), name, body)
    return jsonify({"name": name, "settings": updated})
