"""The operator endpoints of the JSON API (``/api/v1/operator``).

Staff only, enforced once in :func:`staff_only` before any view: no credentials is a 401, a
player a 403, and an auditor may GET everything but gets a 403 on anything that changes state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import Final

from flask import Blueprint
from flask import g
from flask import jsonify
from flask import request
from flask.typing import ResponseReturnValue
from pydantic import BaseModel

from ..db import get_session
from ..services import accounts
from ..services import audit
from ..services import checks
from ..services import money
from ..services import reports
from ..services import settings
from ..services import staff
from . import inputs
from . import schemas as s
from .inputs import query_int
from .openapi import CHANGE_OF_ONE
from .openapi import DENIED
from .openapi import View
from .openapi import operation
from .operator import export_response
from .operator import player_cursors
from .security import SAFE_METHODS
from .security import api_user

bp = Blueprint("operator_api", __name__, url_prefix="/api/v1/operator")

TAG: Final = "operator"
#: A read that takes query parameters may also refuse them.
QUERY_ERRORS: Final = (*DENIED, 422)
ONE: Final = (*DENIED, 404)
PAGE_DEFAULT: Final = 50


@bp.before_request
def staff_only() -> None:
    """Let only staff in; auditors only read."""
    user = api_user()
    staff.require_staff(user.role, changes=request.method not in SAFE_METHODS)
    g.user = user


def _actor_id() -> int:
    return int(g.user.id)


def read(id: str, summary: str, ok: type[BaseModel] | None, **more: Any) -> Callable[[View], View]:
    """Declare a GET that staff may use, auditors included."""
    return operation(id, summary, TAG, ok, **{"errors": DENIED, **more})


def change(
    id: str, summary: str, ok: type[BaseModel], body: type[BaseModel]
) -> Callable[[View], View]:
    """Declare a change (by an operator, audited) of the thing named in the path."""
    return operation(id, summary, TAG, ok, errors=CHANGE_OF_ONE, body=body)


# --- audit --------------------------------------------------------------------------------------


@bp.get("/audit")
@read(
    "auditEntries", "A page of audit entries", s.AuditPage, errors=QUERY_ERRORS, query=s.AuditQuery
)
def audit_entries(query: s.AuditQuery) -> ResponseReturnValue:
    return jsonify(audit.entries(get_session(), **query.model_dump()))


@bp.get("/audit/verify")
@read("auditVerify", "The stored verdict of the whole audit check", s.AuditVerification)
def audit_verify() -> ResponseReturnValue:
    return jsonify(checks.audit_verdict(get_session()))


@bp.get("/audit/checkpoints")
@read(
    "auditCheckpoints",
    "A page of signed checkpoints",
    s.CheckpointList,
    errors=QUERY_ERRORS,
    query=s.CheckpointsQuery,
)
def audit_checkpoints(query: s.CheckpointsQuery) -> ResponseReturnValue:
    return jsonify(audit.checkpoints(get_session(), **query.model_dump()))


@bp.post("/audit/checkpoints")
@operation(
    "auditCheckpointNow",
    "Sign a checkpoint over the whole log now (operator)",
    TAG,
    s.Checkpoint,
    status=201,
    errors=(*DENIED, 409),
)
def audit_checkpoint_now() -> ResponseReturnValue:
    return jsonify(audit.checkpoint(get_session(), actor=f"user:{_actor_id()}")), 201


@bp.get("/audit/checkpoint-note")
@read("auditCheckpointNote", "The latest checkpoint as a C2SP signed note", s.CheckpointNote)
def audit_checkpoint_note() -> ResponseReturnValue:
    return jsonify({"note": reports.checkpoint_note(get_session())})


@bp.get("/audit/proof/<id:seq>")
@read(
    "auditProof",
    "Inclusion proof of one entry in the latest checkpoint",
    s.InclusionProof,
    errors=ONE,
)
def audit_proof(seq: int) -> ResponseReturnValue:
    return jsonify(audit.inclusion_proof(get_session(), seq))


@bp.get("/audit/consistency")
@read(
    "auditConsistency",
    "Consistency proof between two log sizes",
    s.ConsistencyProof,
    errors=QUERY_ERRORS,
    query=s.ConsistencyQuery,
    beyond_schema=("old_size above new_size, or new_size above the log's size",),
)
def audit_consistency(query: s.ConsistencyQuery) -> ResponseReturnValue:
    return jsonify(audit.consistency_proof(get_session(), query.old_size, query.new_size))


@bp.get("/audit/export")
@read(
    "auditExport",
    "The whole log as JSON Lines (every entry, then every signed checkpoint)",
    None,
    media="application/jsonl",
)
def audit_export() -> ResponseReturnValue:
    return export_response()


# --- ledger -------------------------------------------------------------------------------------


@bp.get("/ledger/summary")
@read("ledgerSummary", "Balances, house results and edges", s.LedgerSummary)
def ledger_summary() -> ResponseReturnValue:
    return jsonify(reports.house_summary(get_session()))


@bp.get("/ledger/check")
@read("ledgerCheck", "The stored verdict of the ledger check", s.LedgerCheck)
def ledger_check() -> ResponseReturnValue:
    return jsonify(checks.ledger_verdict(get_session()))


@bp.get("/ledger/math")
@read(
    "ledgerMath",
    "The house result against the math, per table version played",
    s.HouseMath,
    errors=QUERY_ERRORS,
    query=s.MathQuery,
    beyond_schema=("since after until",),
)
def ledger_math(query: s.MathQuery) -> ResponseReturnValue:
    return jsonify(reports.house_math(get_session(), **query.model_dump()))


# --- standing checks ----------------------------------------------------------------------------


@bp.get("/checks/<name>")
@read(
    "checkVerdict",
    "A standing check's stored verdict and progress",
    s.CheckVerdict,
    errors=QUERY_ERRORS,
    path=s.CheckPath,
)
def check_verdict(name: str) -> ResponseReturnValue:
    return jsonify(checks.verdict(get_session(), name))


@bp.post("/checks/<name>")
@operation(
    "requestWholeCheck",
    "Ask for a whole check in the background (operator; audited)",
    TAG,
    s.CheckVerdict,
    status=202,
    errors=(*DENIED, 422),
    path=s.CheckPath,
)
def request_whole_check(name: str) -> ResponseReturnValue:
    return jsonify(checks.request_whole(get_session(), name, actor=f"user:{_actor_id()}")), 202


# --- players ------------------------------------------------------------------------------------


@bp.get("/players")
@read(
    "findPlayers",
    "Users whose name contains q",
    s.UserList,
    errors=QUERY_ERRORS,
    query=s.PlayersQuery,
)
def players(query: s.PlayersQuery) -> ResponseReturnValue:
    return jsonify({"users": accounts.find_users(get_session(), query.q)})


@bp.get("/players/<id:user_id>")
@read(
    "playerOverview",
    "One user's balances, rounds, money moves, seed pairs and audit entries",
    s.PlayerOverview,
    errors=ONE,
)
def player(user_id: int) -> ResponseReturnValue:
    # Paging each list is for the console's links, so its parameters stay out of the document.
    limit = query_int("limit", low=1, high=audit.MAX_PAGE, default=PAGE_DEFAULT) or PAGE_DEFAULT
    overview = reports.player_overview(get_session(), user_id, limit=limit, **player_cursors())
    return jsonify(overview)


def _managed(user: accounts.UserView) -> ResponseReturnValue:
    """Answer a change to a user's account with the account as it now is."""
    return jsonify({"user": user.to_dict() | {"locked": user.locked}})


@bp.put("/players/<id:user_id>/role")
@change("setRole", "Make a user player, auditor or operator (audited)", s.ManagedUser, s.RoleChange)
def player_role(user_id: int, body: s.RoleChange) -> ResponseReturnValue:
    return _managed(accounts.set_role(get_session(), _actor_id(), user_id, body.role))


@bp.put("/players/<id:user_id>/locked")
@change("setLocked", "Lock or unlock an account (audited)", s.ManagedUser, s.LockChange)
def player_locked(user_id: int, body: s.LockChange) -> ResponseReturnValue:
    return _managed(accounts.set_locked(get_session(), _actor_id(), user_id, body.locked))


@bp.post("/adjustments")
@operation(
    "adjust",
    "Credit or debit a player, with a reason (audited)",
    TAG,
    s.AdjustmentResult,
    status=201,
    errors=CHANGE_OF_ONE,
    body=s.AdjustmentRequest,
    idempotent=True,
)
def adjustment(body: s.AdjustmentRequest) -> ResponseReturnValue:
    balances = money.adjust(
        get_session(),
        _actor_id(),
        body.user_id,
        body.currency,
        body.amount,
        body.reason,
        idempotency_key=inputs.idempotency_key(),
    )
    return jsonify({"user_id": body.user_id, "balances": balances}), 201


# --- tables -------------------------------------------------------------------------------------


@bp.get("/tables/<name>")
@read("tableSettings", "A table's settings", s.TableSettings, errors=ONE)
def table(name: str) -> ResponseReturnValue:
    return jsonify({"name": name, "settings": settings.table_rules(get_session(), name)})


@bp.put("/tables/<name>")
@change(
    "updateTable",
    "Change a table's settings (audited; new rounds only)",
    s.TableSettings,
    s.TableSettingsChange,
)
def update_table(name: str, body: s.TableSettingsChange) -> ResponseReturnValue:
    updated = settings.update_table(get_session(), _actor_id(), name, body.root)
    return jsonify({"name": name, "settings": updated})
