"""Standing checks: the whole audit check and the ledger check, kept up with the books.

Each check's verdict lives in one ``check_runs`` row, shared by every worker and server and
kept across restarts: whether it passed, how far it reached (entries, or postings), when, and
the state a later step resumes from. A step reads only what was added since; a whole check
(asked for from the console, or when nothing was checked yet, or when the last entry checked
is gone) starts again from nothing and stores its progress as it goes. Whoever runs a step
first takes the row's lease, so one runs at a time however many processes try.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import fields
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Annotated
from typing import Any
from typing import Final

from pydantic import Field
from sqlalchemy import or_
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.orm import Session

from ..core import fairness
from ..core.errors import InvalidInput
from ..core.marks import N_
from ..models import STANDING_CHECKS
from ..models import CheckRun
from . import alerts
from . import audit
from . import ledger
from .results import Count
from .results import Id
from .results import LatestCheckpoint
from .results import OneOf
from .results import Open
from .results import Time
from .tx import in_transaction
from .tx import insert_ignoring_conflicts
from .tx import own_transactions
from .tx import read_only
from .tx import transactional

NAMES: Final = STANDING_CHECKS
CheckName = Annotated[str, OneOf(NAMES)]
#: How long a runner may hold a check before another may take it over (it renews as it goes).
LEASE: Final = timedelta(minutes=2)


def _now() -> datetime:
    return datetime.now(UTC)


def _name(name: str) -> str:
    if name not in NAMES:
        raise InvalidInput(
            N_("no check called %(name)s; there are %(names)s"),
            params={"name": repr(name), "names": ", ".join(NAMES)},
            field="name",
        )
    return name


@transactional
def _row(session: Session, name: str) -> CheckRun:
    insert_ignoring_conflicts(session, CheckRun, {"name": name, "size": 0})
    row = session.get(CheckRun, name, populate_existing=True)
    assert row is not None
    session.expunge(row)  # a snapshot: the verdict as read, not a live object
    return row


@transactional
def _take_lease(session: Session, name: str, owner: str) -> bool:
    """Take (or renew) the lease on a check; ``False`` if another runner holds it."""
    insert_ignoring_conflicts(session, CheckRun, {"name": name, "size": 0})
    now = _now()
    taken = session.execute(
        update(CheckRun)
        .where(
            CheckRun.name == name,
            or_(
                CheckRun.lease_owner.is_(None),
                CheckRun.lease_owner == owner,
                CheckRun.lease_until < now,
            ),
        )
        .values(lease_owner=owner, lease_until=now + LEASE)
        .execution_options(synchronize_session=False)
    )
    return bool(taken.rowcount)  # type: ignore[attr-defined]  # an UPDATE answers a CursorResult


@in_transaction
def _update(session: Session, name: str, owner: str, values: dict[str, Any]) -> bool:
    """Store ``values`` of a check while ``owner`` holds it; ``False`` if another took it over."""
    stored = session.execute(
        update(CheckRun)
        .where(CheckRun.name == name, CheckRun.lease_owner == owner)
        .values({"lease_until": _now() + LEASE} | values)
        .execution_options(synchronize_session=False)
    )
    return bool(stored.rowcount)  # type: ignore[attr-defined]  # an UPDATE answers a CursorResult


@transactional
def _store(session: Session, /, name: str, owner: str, **values: Any) -> None:
    _update(session, name, owner, values)


@transactional
def _store_ledger(
    session: Session, owner: str, report: ledger.LedgerReport, whole: bool, values: dict[str, Any]
) -> None:
    """Store a ledger verdict and, if it passed, the sums of postings its state stands on, in
    one transaction: a state never stands on sums of another."""
    if _update(session, "ledger", owner, values) and report.ok:
        ledger.keep_sums(session, report, whole=whole)


@dataclass(frozen=True, slots=True)
class Step:
    """What one run of a check did: whether it ran (it may be another's turn) and its verdict."""

    ran: bool
    whole: bool
    verdict: CheckVerdict


#: What a field of a verdict that the first check fills in says of its null.
UNCHECKED: Final = "null until the first check ends"
#: What a field of a verdict that a whole audit check's progress fills in says of its null.
WHOLE_AUDIT: Final = "null unless a whole audit check runs"


@dataclass(frozen=True, slots=True)
class CheckVerdict:
    """A standing check's stored verdict (the background runner keeps it up to date)."""

    name: CheckName
    ok: Annotated[bool | None, Field(description=UNCHECKED)]
    size: Annotated[Count, Field(description="entries (audit) or the last posting id (ledger)")]
    reason: Annotated[
        str | None, Field(description="why the last check failed; null unless it failed")
    ]
    findings: Annotated[Open | None, Field(description=UNCHECKED)]
    checked_at: Annotated[Time | None, Field(description=f"when the last check ended; {UNCHECKED}")]
    age_seconds: Annotated[
        Annotated[float, Field(ge=0)] | None, Field(description=f"since checked_at; {UNCHECKED}")
    ]
    whole_at: Annotated[
        Time | None, Field(description="when a whole check last ended; null until one ends")
    ]
    running: bool
    requested: Annotated[bool, Field(description="a whole check was asked for, not started")]
    requested_by: Annotated[
        str | None,
        Field(description="who last asked for a whole check (user:7); null until someone asks"),
    ]
    progress: Annotated[Count | None, Field(description=f"entries read; {WHOLE_AUDIT}")]
    progress_total: Annotated[Count | None, Field(description=f"entries to read; {WHOLE_AUDIT}")]


@dataclass(frozen=True, slots=True)
class AuditVerification(CheckVerdict):
    first_bad_seq: Annotated[
        Id | None,
        Field(
            description="the first entry the last check found bad; null unless it failed at an "
            "entry (not at a checkpoint, nor at a round the log lacks)"
        ),
    ]
    checkpoint: LatestCheckpoint


@dataclass(frozen=True, slots=True)
class LedgerCheck(CheckVerdict):
    problems: Annotated[list[str], Field(description="the first 100")]
    problem_count: Count
    transfers: Count
    accounts: Count


@own_transactions
def run(
    session: Session,
    name: str,
    owner: str,
    *,
    whole: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Step:
    """Run one step of a check if no other runner holds it: whole if asked (here or from the
    console) or if nothing to resume from, else only what was added since the last step.

    :param progress: called with the log's entries read so far, as the audit check reads them.
    """
    _name(name)
    if not _take_lease(session, name, owner):
        return Step(False, False, verdict(session, name))
    try:
        row = _row(session, name)
        whole = whole or row.whole_requested_at is not None
        if row.ok is False and not whole:
            # A failed verdict stands until someone asks for a whole check again: repeating
            # one in the background would read the whole log or ledger every time.
            return Step(False, False, verdict(session, name))
        if name == "audit":
            whole = _run_audit(session, row, owner, whole, progress)
        else:
            whole = _run_ledger(session, row, owner, whole)
    finally:
        # A step stopped midway leaves no progress of a check no one runs.
        _store(
            session,
            name,
            owner,
            lease_owner=None,
            lease_until=None,
            progress=None,
            progress_total=None,
        )
    return Step(True, whole, verdict(session, name))


def _run_audit(
    session: Session,
    row: CheckRun,
    owner: str,
    whole: bool,
    report: Callable[[int], None] | None = None,
) -> bool:
    audit.integrate(session)  # what waits for the integrator, unless another is at it
    state = None if whole else audit.ChainState.from_json(row.state)
    if state is not None and not _heads(session, state):
        state = None  # the last entry checked is gone or changed: start again
    whole = state is None
    if whole:
        _store(session, "audit", owner, progress=0, progress_total=_audit_size(session))

    def progress(size: int) -> None:
        if whole:
            _store(session, "audit", owner, progress=size)
        if report is not None:
            report(size)

    started = _now()
    found = audit.check_chain(session, state, progress=progress)
    ok, reason, stored = found.ok, found.reason, found.state.to_json() if found.state else None
    problem = found.found
    if ok:
        # The rounds settled since the last step looked (all of them in a whole check): each
        # one's bet and settlement must be in the log.
        since = None if whole else _rounds_since(row.state)
        if (unlogged := audit.unlogged_round(session, settled_since=since)) is not None:
            problem = unlogged[1]
            ok, reason, stored = False, problem.text(), None
        elif stored is not None:
            stored["rounds_since"] = fairness.format_time(started - audit.ROUNDS_OVERLAP)
    now = _now()
    values: dict[str, Any] = {
        "ok": ok,
        "size": found.size,
        "reason": reason,
        "findings": {
            "first_bad_seq": found.first_bad_seq,
            "checked": found.checked,
            # The reason as a message id and params, for the console's words (as the ledger
            # check keeps its problems).
            "found": [problem.to_json()] if problem is not None else [],
        },
        "state": stored,
        "checked_at": now,
        "progress": None,
        "progress_total": None,
    }
    if whole:
        # Only a whole check that ended answers the request: one stopped midway is asked again.
        values["whole_at"], values["whole_requested_at"] = now, None
    _store(session, "audit", owner, **values)
    covered = -1
    while ok and (reached := audit.extend_tree(session)) != covered:
        covered = reached
        _store(session, "audit", owner)  # renew the lease while the tree catches up
    return whole


def _rounds_since(stored: Any) -> datetime | None:
    """From when the last step's state asks the next to look at settled rounds (``None``: all,
    for a state stored before it said)."""
    since = stored.get("rounds_since") if isinstance(stored, dict) else None
    try:
        return fairness.parse_time(str(since))
    except ValueError:
        return None


@read_only
def _heads(session: Session, state: audit.ChainState) -> bool:
    return audit.still_heads_the_chain(session, state)


@read_only
def _audit_size(session: Session) -> int:
    return audit.log_size(session)


def _run_ledger(session: Session, row: CheckRun, owner: str, whole: bool) -> bool:
    since = None if whole else ledger.LedgerState.from_json(row.state)
    if since is None:
        whole = True
    report = ledger.check(session, since)
    if not report.ok and not whole:
        # A posting committed late under a lower id looks like a problem to a step: only a
        # whole check may say the books are wrong.
        whole = True
        report = ledger.check(session)
    now = _now()
    values: dict[str, Any] = {
        "ok": report.ok,
        "size": report.state.posting_id if report.state else 0,
        "reason": report.problems[0] if report.problems else None,
        "findings": {
            "problems": report.problems[:100],
            # The same problems as message ids and params, for the console's words.
            "found": [problem.to_json() for problem in report.found[:100]],
            "problem_count": len(report.problems),
            "transfers": report.transfers,
            "accounts": report.accounts,
        },
        "state": report.state.to_json() if report.ok and report.state else None,
        "checked_at": now,
    }
    if whole:
        values["whole_at"], values["whole_requested_at"] = now, None
    _store_ledger(session, owner, report, whole, values)
    return whole


@own_transactions
def run_all(session: Session, owner: str) -> None:
    """Run one step of every check, then the alert rules that watch the checks and the rounds
    (the background runner's loop body)."""
    for name in NAMES:
        run(session, name, owner)
    alerts.scan(session)


@transactional
def request_whole(session: Session, name: str, *, actor: str) -> CheckVerdict:
    """Ask the background runner for a whole check (audited); return the verdict as it is."""
    _name(name)
    insert_ignoring_conflicts(session, CheckRun, {"name": name, "size": 0})
    session.execute(
        update(CheckRun)
        .where(CheckRun.name == name)
        .values(whole_requested_at=_now(), whole_requested_by=actor)
        .execution_options(synchronize_session=False)
    )
    audit.record(session, actor=actor, action="check.requested", subject=f"check:{name}")
    return _verdict(session, name)


@read_only
def verdict(session: Session, name: str) -> CheckVerdict:
    """Return the stored verdict of a check, with its age and any whole check under way."""
    return _verdict(session, _name(name))


def _verdict(session: Session, name: str) -> CheckVerdict:
    row = session.scalar(
        select(CheckRun).where(CheckRun.name == name).execution_options(populate_existing=True)
    )
    now = _now()
    if row is None:  # never run: a row as the first step would leave it
        row = CheckRun(name=name, size=0)
    running = row.lease_owner is not None and row.lease_until is not None and row.lease_until > now
    return CheckVerdict(
        name=name,
        ok=row.ok,
        size=row.size,
        reason=row.reason,
        findings=row.findings,
        checked_at=_iso(row.checked_at),
        age_seconds=None if row.checked_at is None else (now - row.checked_at).total_seconds(),
        whole_at=_iso(row.whole_at),
        running=running,
        requested=row.whole_requested_at is not None,
        requested_by=row.whole_requested_by,
        progress=row.progress,
        progress_total=row.progress_total,
    )


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else fairness.format_time(moment)


@read_only
def audit_verdict(session: Session) -> AuditVerification:
    """The stored audit verdict as the console and the API show it, with the latest checkpoint."""
    found = _verdict(session, "audit")
    return AuditVerification(
        **_fields(found),
        first_bad_seq=(found.findings or {}).get("first_bad_seq"),
        checkpoint=audit.latest_checkpoint(session),
    )


@read_only
def ledger_verdict(session: Session) -> LedgerCheck:
    """The stored ledger verdict as the console and the API show it."""
    found = _verdict(session, "ledger")
    findings = found.findings or {}
    return LedgerCheck(
        **_fields(found),
        problems=findings.get("problems", []),
        problem_count=findings.get("problem_count", 0),
        transfers=findings.get("transfers", 0),
        accounts=findings.get("accounts", 0),
    )


def _fields(found: CheckVerdict) -> dict[str, Any]:
    """A verdict's fields, for the verdict of one check that adds its own (shallow: the
    findings stay the stored mapping)."""
    return {field.name: getattr(found, field.name) for field in fields(CheckVerdict)}
