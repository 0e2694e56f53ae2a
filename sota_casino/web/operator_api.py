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
from ..services import alerts
from ..services import approvals
from ..services import audit
from ..services import checks
from ..services import lists
from ..services import money
from ..services import reports
from ..services import settings
from ..services import staff
from ..services.proposals import ApprovalView
from ..services.results import MAX_PAGE
from ..services.results import Account
from ..services.results import AdjustmentResult
from ..services.results import Checkpoint
from ..services.results import ManagedUser
from ..services.results import TableSettings
from ..services.results import TimeZoneView
from . import inputs
from . import schemas as s
from .inputs import query_int
from .openapi import CHANGE
from .openapi import CHANGE_OF_ONE
from .openapi import DENIED
from .openapi import View
from .openapi import answer
from .openapi import operation
from .operator import OWN_PREFERENCES
from .operator import entries_download
from .operator import export_response
from .operator import player_cursors
from .operator_controls import alert_in_words
from .operator_controls import alerts_in_words
from .operator_controls import rule_in_words
from .operator_controls import rules_in_words
from .operator_lists import list_download
from .operator_lists import paging_of
from .operator_lists import range_export_response
from .security import SAFE_METHODS
from .security import api_user

bp = Blueprint("operator_api", __name__, url_prefix="/api/v1/operator")

TAG: Final = "operator"
#: A read that takes query parameters may also refuse them.
QUERY_ERRORS: Final = (*DENIED, 422)
ONE: Final = (*DENIED, 404)
ONE_QUERY: Final = (*DENIED, 404, 422)
PAGE_DEFAULT: Final = 50
#: A list downloads as JSON Lines or CSV (``format``).
DOWNLOADS: Final = ("application/jsonl", "text/csv")


@bp.before_request
def staff_only() -> None:
    """Let only staff in; auditors only read."""
    user = api_user()
    changes = request.method not in SAFE_METHODS and request.endpoint not in OWN_PREFERENCES
    staff.require_staff(user.role, changes=changes)
    g.user = user


def _actor_id() -> int:
    return int(g.user.id)


def read(id: str, summary: str, ok: type[Any] | None, **more: Any) -> Callable[[View], View]:
    """Declare a GET that staff may use, auditors included."""
    return operation(id, summary, TAG, ok, **{"errors": DENIED, **more})


def change(
    id: str,
    summary: str,
    ok: type[Any],
    body: type[BaseModel],
    beyond_schema: tuple[str, ...] = (),
    idempotent: bool = False,
    description: str = "",
) -> Callable[[View], View]:
    """Declare a change (by an operator, audited) of the thing named in the path."""
    return operation(
        id,
        summary,
        TAG,
        ok,
        errors=CHANGE_OF_ONE,
        body=body,
        beyond_schema=beyond_schema,
        idempotent=idempotent,
        description=description,
    )


#: A settings body may hold either table's options (the path names the table), and its limits
#: are checked against the present settings it is merged over.
TABLE_RULES = (
    "only the options of the table the path names",
    "a minimum not above the maximum, once merged over the present settings",
)


# --- audit --------------------------------------------------------------------------------------


@bp.get("/audit")
@read(
    "auditEntries",
    "A page of audit entries",
    audit.AuditPage,
    errors=QUERY_ERRORS,
    query=s.AuditQuery,
)
def audit_entries(query: s.AuditQuery) -> ResponseReturnValue:
    return answer(audit.entries(get_session(), **query.model_dump()))


@bp.get("/audit/verify")
@read("auditVerify", "The stored verdict of the whole audit check", checks.AuditVerification)
def audit_verify() -> ResponseReturnValue:
    return answer(checks.audit_verdict(get_session()))


@bp.get("/audit/checkpoints")
@read(
    "auditCheckpoints",
    "A page of signed checkpoints",
    audit.CheckpointList,
    errors=QUERY_ERRORS,
    query=s.CheckpointsQuery,
)
def audit_checkpoints(query: s.CheckpointsQuery) -> ResponseReturnValue:
    return answer(audit.checkpoints(get_session(), **query.model_dump()))


@bp.post("/audit/checkpoints")
@operation(
    "auditCheckpointNow",
    "Sign a checkpoint over the whole log now (operator)",
    TAG,
    Checkpoint,
    status=201,
    errors=(*DENIED, 409),
)
def audit_checkpoint_now() -> ResponseReturnValue:
    return jsonify(audit.checkpoint(get_session(), actor=f"user:{_actor_id()}")), 201


@bp.get("/audit/checkpoint-note")
@read("auditCheckpointNote", "The latest checkpoint as a C2SP signed note", reports.CheckpointNote)
def audit_checkpoint_note() -> ResponseReturnValue:
    return answer(reports.checkpoint_note(get_session()))


@bp.get("/audit/proof/<id:seq>")
@read(
    "auditProof",
    "Inclusion proof of one entry in the latest checkpoint",
    audit.InclusionProof,
    errors=ONE,
)
def audit_proof(seq: int) -> ResponseReturnValue:
    return answer(audit.inclusion_proof(get_session(), seq))


@bp.get("/audit/consistency")
@read(
    "auditConsistency",
    "Consistency proof between two log sizes",
    audit.ConsistencyProof,
    errors=QUERY_ERRORS,
    query=s.ConsistencyQuery,
    beyond_schema=("old_size above new_size, or new_size above the log's size",),
)
def audit_consistency(query: s.ConsistencyQuery) -> ResponseReturnValue:
    return answer(audit.consistency_proof(get_session(), query.old_size, query.new_size))


@bp.get("/audit/export")
@read(
    "auditExport",
    "The whole log as JSON Lines (every entry, then every signed checkpoint)",
    None,
    media="application/jsonl",
)
def audit_export() -> ResponseReturnValue:
    return export_response()


@bp.get("/audit/range-export")
@read(
    "auditRangeExport",
    "A range of the log as JSON Lines that verifies offline on its own (its entries, the "
    "checkpoint covering them and an inclusion proof)",
    None,
    errors=(*QUERY_ERRORS, 404),
    query=s.RangeExportQuery,
    media="application/jsonl",
    beyond_schema=(
        "a kept size above the log's size, or above its latest checkpoint's",
        "from_seq after to_seq",
    ),
)
def audit_range_export(query: s.RangeExportQuery) -> ResponseReturnValue:
    return range_export_response(**query.model_dump())


@bp.get("/audit/entries/export")
@read(
    "exportAuditEntries",
    "The entries the filters match (as auditEntries filters them), as CSV or JSON Lines "
    "(oldest first)",
    None,
    errors=QUERY_ERRORS,
    query=s.AuditExportQuery,
    media=DOWNLOADS,
)
def audit_entries_export(query: s.AuditExportQuery) -> ResponseReturnValue:
    return entries_download(query.format, **query.model_dump(exclude={"format"}))


# --- ledger -------------------------------------------------------------------------------------


@bp.get("/ledger/summary")
@read("ledgerSummary", "Balances, house results and edges", reports.LedgerSummary)
def ledger_summary() -> ResponseReturnValue:
    return answer(reports.house_summary(get_session()))


@bp.get("/ledger/check")
@read("ledgerCheck", "The stored verdict of the ledger check", checks.LedgerCheck)
def ledger_check() -> ResponseReturnValue:
    return answer(checks.ledger_verdict(get_session()))


@bp.get("/ledger/math")
@read(
    "ledgerMath",
    "The house result against the math, per table version played",
    reports.HouseMath,
    errors=QUERY_ERRORS,
    query=s.MathQuery,
    beyond_schema=("since after until",),
)
def ledger_math(query: s.MathQuery) -> ResponseReturnValue:
    return answer(reports.house_math(get_session(), **query.model_dump()))


# --- standing checks ----------------------------------------------------------------------------


@bp.get("/checks/<name>")
@read(
    "checkVerdict",
    "A standing check's stored verdict and progress",
    checks.CheckVerdict,
    errors=QUERY_ERRORS,
    path=s.CheckPath,
)
def check_verdict(name: str) -> ResponseReturnValue:
    return answer(checks.verdict(get_session(), name))


@bp.post("/checks/<name>")
@operation(
    "requestWholeCheck",
    "Ask for a whole check in the background (operator; audited)",
    TAG,
    checks.CheckVerdict,
    status=202,
    errors=(*DENIED, 422),
    path=s.CheckPath,
)
def request_whole_check(name: str) -> ResponseReturnValue:
    return answer(checks.request_whole(get_session(), name, actor=f"user:{_actor_id()}"), 202)


# --- players ------------------------------------------------------------------------------------


@bp.get("/players")
@read(
    "findPlayers",
    "Users whose name contains q",
    lists.UserList,
    errors=QUERY_ERRORS,
    query=s.PlayersQuery,
)
def players(query: s.PlayersQuery) -> ResponseReturnValue:
    return answer(lists.page(get_session(), "users", paging_of(query), q=query.q))


@bp.get("/players/export")
@read(
    "exportPlayers",
    "Every user whose name contains q, in a date range, as CSV or JSON Lines (oldest first)",
    None,
    errors=QUERY_ERRORS,
    query=s.PlayersExportQuery,
    media=DOWNLOADS,
)
def players_export(query: s.PlayersExportQuery) -> ResponseReturnValue:
    return list_download("users", query, q=query.q)


def _player_list(name: str, user_id: int, query: s.ListQuery) -> ResponseReturnValue:
    return answer(lists.page(get_session(), name, paging_of(query), user_id=user_id))


@bp.get("/players/<id:user_id>/rounds")
@read(
    "playerRounds",
    "A page of one player's rounds",
    lists.RoundPage,
    errors=ONE_QUERY,
    query=s.ListQuery,
)
def player_rounds(user_id: int, query: s.ListQuery) -> ResponseReturnValue:
    return _player_list("rounds", user_id, query)


@bp.get("/players/<id:user_id>/transfers")
@read(
    "playerTransfers",
    "A page of one player's money moves",
    lists.TransferPage,
    errors=ONE_QUERY,
    query=s.ListQuery,
)
def player_transfers(user_id: int, query: s.ListQuery) -> ResponseReturnValue:
    return _player_list("transfers", user_id, query)


@bp.get("/players/<id:user_id>/seed-pairs")
@read(
    "playerSeedPairs",
    "A page of one player's seed pairs",
    lists.SeedPairPage,
    errors=ONE_QUERY,
    query=s.ListQuery,
)
def player_seed_pairs(user_id: int, query: s.ListQuery) -> ResponseReturnValue:
    return _player_list("seed_pairs", user_id, query)


def _player_export(name: str, user_id: int, query: s.ExportQuery) -> ResponseReturnValue:
    return list_download(name, query, user_id=user_id)


@bp.get("/players/<id:user_id>/rounds/export")
@read(
    "exportPlayerRounds",
    "One player's rounds in a date range, as CSV or JSON Lines (oldest first)",
    None,
    errors=ONE_QUERY,
    query=s.ExportQuery,
    media=DOWNLOADS,
)
def player_rounds_export(user_id: int, query: s.ExportQuery) -> ResponseReturnValue:
    return _player_export("rounds", user_id, query)


@bp.get("/players/<id:user_id>/transfers/export")
@read(
    "exportPlayerTransfers",
    "One player's money moves in a date range, as CSV or JSON Lines (oldest first)",
    None,
    errors=ONE_QUERY,
    query=s.ExportQuery,
    media=DOWNLOADS,
)
def player_transfers_export(user_id: int, query: s.ExportQuery) -> ResponseReturnValue:
    return _player_export("transfers", user_id, query)


@bp.get("/players/<id:user_id>/seed-pairs/export")
@read(
    "exportPlayerSeedPairs",
    "One player's seed pairs in a date range, as CSV or JSON Lines (oldest first)",
    None,
    errors=ONE_QUERY,
    query=s.ExportQuery,
    media=DOWNLOADS,
)
def player_seed_pairs_export(user_id: int, query: s.ExportQuery) -> ResponseReturnValue:
    return _player_export("seed_pairs", user_id, query)


@bp.get("/players/<id:user_id>")
@read(
    "playerOverview",
    "One user's balances, rounds, money moves, seed pairs and audit entries",
    reports.PlayerOverview,
    errors=ONE,
)
def player(user_id: int) -> ResponseReturnValue:
    # Paging each list is for the console's links, so its parameters stay out of the document.
    limit = query_int("limit", low=1, high=MAX_PAGE, default=PAGE_DEFAULT) or PAGE_DEFAULT
    overview = reports.player_overview(get_session(), user_id, limit=limit, **player_cursors())
    return answer(overview)


def _managed(user: accounts.UserView) -> ResponseReturnValue:
    """Answer a change to a user's account with the account as it now is."""
    account = Account(id=user.id, username=user.username, role=user.role, locked=user.locked)
    return answer(ManagedUser(account))


@bp.put("/players/<id:user_id>/role")
@operation(
    "setRole",
    "Make a user player, auditor or operator (audited)",
    TAG,
    ManagedUser,
    errors=CHANGE_OF_ONE,
    body=s.RoleChange,
    description="Making a user an operator needs a second operator's approval (a 409, "
    "approval_required: propose it with proposeOperator) unless FOUR_EYES_OPERATORS is 0; "
    "other role changes apply at once.",
)
def player_role(user_id: int, body: s.RoleChange) -> ResponseReturnValue:
    return _managed(accounts.set_role(get_session(), _actor_id(), user_id, body.role))


@bp.put("/players/<id:user_id>/locked")
@change("setLocked", "Lock or unlock an account (audited)", ManagedUser, s.LockChange)
def player_locked(user_id: int, body: s.LockChange) -> ResponseReturnValue:
    return _managed(accounts.set_locked(get_session(), _actor_id(), user_id, body.locked))


@bp.post("/adjustments")
@operation(
    "adjust",
    "Credit or debit a player, with a reason (audited)",
    TAG,
    AdjustmentResult,
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
    return answer(AdjustmentResult(body.user_id, balances), 201)


# --- tables -------------------------------------------------------------------------------------


@bp.get("/tables/<name>")
@read("tableSettings", "A table's settings", TableSettings, errors=ONE)
def table(name: str) -> ResponseReturnValue:
    return answer(TableSettings.of(name, settings.table_rules(get_session(), name)))


@bp.put("/tables/<name>")
@change(
    "updateTable",
    "Change a table's settings (audited; new rounds only)",
    TableSettings,
    s.TableSettingsChange,
    beyond_schema=TABLE_RULES,
)
def update_table(name: str, body: s.TableSettingsChange) -> ResponseReturnValue:
    updated = settings.update_table(get_session(), _actor_id(), name, body.root)
    return answer(TableSettings.of(name, updated))


# --- four eyes ----------------------------------------------------------------------------------


@bp.get("/approvals")
@read(
    "approvals",
    "A page of proposed changes (pending by default), newest first",
    approvals.ApprovalPage,
    errors=QUERY_ERRORS,
    query=s.ApprovalsQuery,
)
def approval_list(query: s.ApprovalsQuery) -> ResponseReturnValue:
    status = query.status or "pending"
    return answer(
        approvals.listing(get_session(), status=status, cursor=query.cursor, limit=query.limit)
    )


@bp.post("/approvals/adjustments")
@operation(
    "proposeAdjustment",
    "Propose an adjustment for a second operator to approve (audited; nothing moves yet)",
    TAG,
    ApprovalView,
    status=201,
    errors=CHANGE_OF_ONE,
    body=s.AdjustmentProposal,
    idempotent=True,
)
def propose_adjustment(body: s.AdjustmentProposal) -> ResponseReturnValue:
    proposal = money.propose_adjustment(
        get_session(),
        _actor_id(),
        body.user_id,
        body.currency,
        body.amount,
        body.reason,
        idempotency_key=inputs.idempotency_key(),
    )
    return answer(proposal, 201)


@bp.post("/approvals/tables/<name>")
@operation(
    "proposeTableChange",
    "Propose a table change for a second operator to approve (audited; nothing changes yet)",
    TAG,
    ApprovalView,
    status=201,
    errors=CHANGE_OF_ONE,
    body=s.TableSettingsChange,
    beyond_schema=TABLE_RULES,
    idempotent=True,
    description="The same change of the table pending already is a 409, proposal_pending.",
)
def propose_table_change(name: str, body: s.TableSettingsChange) -> ResponseReturnValue:
    proposal = settings.propose_table_change(
        get_session(), _actor_id(), name, body.root, idempotency_key=inputs.idempotency_key()
    )
    return answer(proposal, 201)


@bp.post("/approvals/operators/<id:user_id>")
@operation(
    "proposeOperator",
    "Propose making a user an operator, for a second operator to approve (audited; nothing "
    "changes yet)",
    TAG,
    ApprovalView,
    status=201,
    errors=CHANGE_OF_ONE,
    idempotent=True,
    description="A user who is an operator already is a 409, conflict; one whose promotion "
    "is pending already, a 409, proposal_pending.",
)
def propose_operator(user_id: int) -> ResponseReturnValue:
    proposal = accounts.propose_operator(
        get_session(), _actor_id(), user_id, idempotency_key=inputs.idempotency_key()
    )
    return answer(proposal, 201)


def _decide(approval_id: int, approve: bool, body: s.Decision) -> ResponseReturnValue:
    decided = approvals.decide(
        get_session(),
        _actor_id(),
        approval_id,
        approve,
        body.note,
        idempotency_key=inputs.idempotency_key(),
    )
    return answer(decided)


# Both decisions take the key, though only an approval moves money: a retried decision is
# answered as the first one was, not with a 409 saying it was decided already.
@bp.post("/approvals/<id:approval_id>/approve")
@change(
    "approve",
    "Approve another operator's proposal: it applies now (audited)",
    ApprovalView,
    s.Decision,
    idempotent=True,
    description="The proposal is checked again as it applies: one whose proposer is no operator "
    "now (made an auditor or a player, or locked) is a 409, proposer_not_operator, and still "
    "waits; so does one that would adjust staff (404) or overdraw the player (409, "
    "insufficient_funds).",
)
def approve(approval_id: int, body: s.Decision) -> ResponseReturnValue:
    return _decide(approval_id, True, body)


@bp.post("/approvals/<id:approval_id>/reject")
@change(
    "reject",
    "Reject another operator's proposal: nothing changes (audited)",
    ApprovalView,
    s.Decision,
    idempotent=True,
)
def reject(approval_id: int, body: s.Decision) -> ResponseReturnValue:
    return _decide(approval_id, False, body)


# --- alerts -------------------------------------------------------------------------------------


@bp.get("/alerts")
@read(
    "alerts",
    "A page of alerts raised, newest first",
    alerts.AlertPage,
    errors=QUERY_ERRORS,
    query=s.AlertsQuery,
)
def alert_list(query: s.AlertsQuery) -> ResponseReturnValue:
    found = alerts.listing(
        get_session(), open_only=bool(query.open), cursor=query.cursor, limit=query.limit
    )
    return answer(alerts_in_words(found))


@bp.get("/alerts/rules")
@read("alertRules", "The alert rules", alerts.AlertRuleList)
def alert_rules() -> ResponseReturnValue:
    return answer(rules_in_words(alerts.rules(get_session())))


@bp.post("/alerts/rules")
@operation(
    "createAlertRule",
    "Add an alert rule (audited)",
    TAG,
    alerts.AlertRuleView,
    status=201,
    errors=CHANGE,
    body=s.AlertRuleRequest,
)
def create_alert_rule(body: s.AlertRuleRequest) -> ResponseReturnValue:
    rule = alerts.create_rule(
        get_session(), _actor_id(), body.kind, body.currency, body.threshold, body.period_hours
    )
    return answer(rule_in_words(rule), 201)


@bp.put("/alerts/rules/<id:rule_id>/enabled")
@change(
    "setAlertRuleEnabled",
    "Turn an alert rule on or off (audited)",
    alerts.AlertRuleView,
    s.RuleEnabled,
)
def alert_rule_enabled(rule_id: int, body: s.RuleEnabled) -> ResponseReturnValue:
    rule = alerts.set_enabled(get_session(), _actor_id(), rule_id, body.enabled)
    return answer(rule_in_words(rule))


@bp.post("/alerts/<id:alert_id>/acknowledge")
@operation(
    "acknowledgeAlert",
    "Mark an alert as seen (audited)",
    TAG,
    alerts.AlertView,
    errors=CHANGE_OF_ONE,
)
def acknowledge_alert(alert_id: int) -> ResponseReturnValue:
    return answer(alert_in_words(alerts.acknowledge(get_session(), _actor_id(), alert_id)))


@bp.put("/me/time-zone")
@operation(
    "setTimeZone",
    "Choose the zone the console shows your times in (UTC stays beside them; audited)",
    TAG,
    TimeZoneView,
    errors=CHANGE,
    body=s.TimeZoneChange,
)
def time_zone(body: s.TimeZoneChange) -> ResponseReturnValue:
    user = accounts.set_time_zone(get_session(), _actor_id(), body.time_zone)
    return answer(TimeZoneView(user.time_zone or "UTC"))
