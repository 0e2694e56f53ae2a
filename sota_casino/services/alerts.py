"""Alert rules an operator sets, and the alerts they raise (each kept in the audit log).

Adjustments are weighed as they happen, in the adjustment's own transaction: the money moved
by hand (credits and debits alike) to one player, or by one operator, over the rule's period;
an alert is raised when an adjustment takes that total over the threshold. Large wins and
failed standing checks are found by the standing checks' runner (:func:`scan`), which reads
only what settled since it last looked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Annotated
from typing import Any
from typing import Final

from pydantic import Field
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core import fairness
from ..core.errors import InvalidInput
from ..core.errors import NotFound
from ..core.marks import N_
from ..core.money import CURRENCIES
from ..models import STANDING_CHECKS
from ..models import Alert
from ..models import AlertRule
from ..models import CheckRun
from ..models import Round
from ..models import User
from . import audit
from .results import MAX_PAGE
from .results import Count
from .results import Currency
from .results import Id
from .results import NextCursor
from .results import OneOf
from .results import Open
from .results import Person
from .results import Time
from .staff import require_operator
from .tx import in_transaction
from .tx import locked
from .tx import read_only
from .tx import transactional

LARGE_WIN: Final = "large_win"
PLAYER_ADJUSTMENTS: Final = "player_adjustments"
OPERATOR_ADJUSTMENTS: Final = "operator_adjustments"
CHECK_FAILED: Final = "check_failed"
KINDS: Final = (LARGE_WIN, PLAYER_ADJUSTMENTS, OPERATOR_ADJUSTMENTS, CHECK_FAILED)
MAX_PERIOD_HOURS: Final = 24 * 366
MAX_THRESHOLD: Final = 10**15
#: Rounds settled this long before the last scan are read again: a round that committed late
#: is not missed (an alert already raised for it is not raised twice).
OVERLAP: Final = timedelta(minutes=5)

# What an alert says, as message ids: the alert keeps the id and its params, and the web layer
# shows it in each reader's language. The params named in AMOUNTS are in minor units of the
# params' ``currency``, written in chips or sweets where shown; those named in COUNTS are
# numbers of the unit written after them ("24 h").
ADJUSTMENTS_TO: Final = N_(
    "adjustments to %(name)s reached %(total)s within %(hours)s h, over the threshold of "
    "%(threshold)s"
)
ADJUSTMENTS_BY: Final = N_(
    "adjustments by %(name)s reached %(total)s within %(hours)s h, over the threshold of "
    "%(threshold)s"
)
WON: Final = N_("%(name)s won %(net)s in %(game)s round %(round)s")
#: A failed check's message, by check; the reason is the check's own (English) finding, and
#: where the check keeps its findings as message ids (the ledger's problems, the audit check's
#: reason), the first of them as the param :data:`PROBLEM` too, for the console to word in the
#: operator's language.
CHECK_FAILED_BECAUSE: Final = {
    "audit": N_("the audit log check failed: %(reason)s"),
    "ledger": N_("the ledger check failed: %(reason)s"),
}
#: The same, for a verdict that gives no reason.
CHECK_FAILED_SEE_VERDICT: Final = {
    "audit": N_("the audit log check failed; see its verdict"),
    "ledger": N_("the ledger check failed; see its verdict"),
}
MESSAGES: Final = frozenset(
    {
        ADJUSTMENTS_TO,
        ADJUSTMENTS_BY,
        WON,
        *CHECK_FAILED_BECAUSE.values(),
        *CHECK_FAILED_SEE_VERDICT.values(),
    }
)
AMOUNTS: Final = ("total", "threshold", "net")
#: The param of a failed check's alert that gives its reason as the check found it: a message
#: id and its params (``{"message": ..., "params": ...}``, as the ledger check keeps each
#: problem and the audit check its reason).
PROBLEM: Final = "problem"
COUNTS: Final = ("hours", "period_hours")
#: How an alert names a game (the games' names are the same in every language).
GAME_NAMES: Final = {"casino_war": "Casino War", "sota": "Sota"}


@dataclass(frozen=True, slots=True)
class AlertRuleView:
    id: Id
    kind: Annotated[str, OneOf(KINDS)]
    currency: Annotated[Currency | None, Field(description="null for check_failed: no amount")]
    threshold: Count
    period_hours: Annotated[int, Field(ge=1)]
    enabled: bool
    description: Annotated[
        str,
        Field(
            description="the rule in words, in the language of Accept-Language (English if none)"
        ),
    ]
    created_by: Person
    created_at: Time


@dataclass(frozen=True, slots=True)
class AlertRuleList:
    rules: list[AlertRuleView]


#: What a field of an alert that its acknowledgement fills in says of its null.
UNSEEN: Final = "null until an operator acknowledges it"


@dataclass(frozen=True, slots=True)
class AlertView:
    """An alert. The service gives its message id (one of :data:`MESSAGES`) and ``params``;
    the console and the API show the message filled in, in the reader's language. An alert
    raised before messages were kept as ids has no params: its message is the stored text."""

    id: Id
    rule_id: Id
    subject: Annotated[
        str,
        Field(description="what it is about: user:7 (adjustments), round:12 (a win), check:audit"),
    ]
    message: Annotated[
        str,
        Field(description="what was found, in the language of Accept-Language (English if none)"),
    ]
    params: Annotated[
        Open | None,
        Field(
            description="the values the message names (amounts in minor units of its "
            "currency); null for an alert raised before they were kept"
        ),
    ]
    data: Open
    audit_seq: Annotated[
        Id | None,
        Field(
            description="the seq of its alert.raised entry; null while that entry waits to be "
            "sequenced (PostgreSQL)"
        ),
    ]
    raised_at: Time
    acknowledged_by: Annotated[Person | None, Field(description=UNSEEN)]
    acknowledged_at: Annotated[Time | None, Field(description=UNSEEN)]


@dataclass(frozen=True, slots=True)
class AlertPage:
    """A page of alerts, newest first; ``next_cursor`` continues it."""

    alerts: list[AlertView]
    next_cursor: NextCursor


def _now() -> datetime:
    return datetime.now(UTC)


def check_rule(kind: object, currency: object, threshold: object, period_hours: object) -> None:
    """:raises InvalidInput: naming what is not valid in a rule."""
    if kind not in KINDS:
        raise InvalidInput(
            N_("kind must be one of: %(kinds)s"), params={"kinds": ", ".join(KINDS)}, field="kind"
        )
    if kind != CHECK_FAILED:
        if currency not in CURRENCIES:
            raise InvalidInput(
                N_("currency must be one of: %(currencies)s"),
                params={"currencies": ", ".join(CURRENCIES)},
                field="currency",
            )
        if type(threshold) is not int or not 0 <= threshold <= MAX_THRESHOLD:
            raise InvalidInput(
                N_("threshold must be a whole number of minor units from 0 to %(max)s"),
                params={"max": MAX_THRESHOLD},
                field="threshold",
            )
    if type(period_hours) is not int or not 1 <= period_hours <= MAX_PERIOD_HOURS:
        raise InvalidInput(
            N_("period_hours must be from 1 to %(max)s"),
            params={"max": MAX_PERIOD_HOURS},
            field="period_hours",
        )


@transactional
def create_rule(
    session: Session,
    actor_id: int,
    kind: object,
    currency: object = None,
    threshold: object = 0,
    period_hours: object = 24,
) -> AlertRuleView:
    """Add an alert rule (audited); large wins are looked for from now on."""
    require_operator(session, actor_id)
    check_rule(kind, currency, threshold, period_hours)
    failed_check = kind == CHECK_FAILED
    row = AlertRule(
        kind=kind,
        currency=None if failed_check else currency,
        threshold=0 if failed_check else threshold,
        period_hours=period_hours,
        enabled=True,
        created_by=actor_id,
        created_at=_now(),
        scanned_at=_now(),
    )
    session.add(row)
    session.flush()
    audit.record(
        session,
        actor=f"user:{actor_id}",
        action="alert.rule_created",
        subject=f"alert_rule:{row.id}",
        data={k: getattr(row, k) for k in ("kind", "currency", "threshold", "period_hours")},
    )
    return rule_view(session, row)


@transactional
def set_enabled(session: Session, actor_id: int, rule_id: int, enabled: bool) -> AlertRuleView:
    """Turn a rule on or off (audited)."""
    require_operator(session, actor_id)
    row = session.get(AlertRule, rule_id, with_for_update=True)
    if row is None:
        raise NotFound(N_("no alert rule %(id)s"), params={"id": rule_id})
    row.enabled = enabled
    if enabled:
        row.scanned_at = _now()  # wins settled while it was off are not raised late
    audit.record(
        session,
        actor=f"user:{actor_id}",
        action="alert.rule_enabled" if enabled else "alert.rule_disabled",
        subject=f"alert_rule:{rule_id}",
    )
    return rule_view(session, row)


@transactional
def acknowledge(session: Session, actor_id: int, alert_id: int) -> AlertView:
    """Mark an alert as seen (audited); it stays in the list and the log."""
    require_operator(session, actor_id)
    row = session.get(Alert, alert_id, with_for_update=True)
    if row is None:
        raise NotFound(N_("no alert %(id)s"), params={"id": alert_id})
    if row.acknowledged_at is None:
        row.acknowledged_by, row.acknowledged_at = actor_id, _now()
        audit.record(
            session,
            actor=f"user:{actor_id}",
            action="alert.acknowledged",
            subject=f"alert:{alert_id}",
        )
    return alert_view(session, row)


#: A rule in words, by kind: message ids whose ``threshold`` is an amount of the rule's currency
#: and ``period_hours`` one of COUNTS (the web layer fills them in and translates them for each
#: reader).
RULE_WORDS: Final = {
    LARGE_WIN: N_("a player wins more than %(threshold)s in one round"),
    PLAYER_ADJUSTMENTS: N_(
        "adjustments of one player total more than %(threshold)s within %(period_hours)s h"
    ),
    OPERATOR_ADJUSTMENTS: N_(
        "adjustments of one operator total more than %(threshold)s within %(period_hours)s h"
    ),
    CHECK_FAILED: N_("a standing check (audit log or ledger) fails"),
}


def describe(kind: str, currency: str | None, threshold: int, period_hours: int) -> str:
    """A rule in English words, its threshold in minor units (hundredths of a chip, whole
    sweets); a reader's language words it from :data:`RULE_WORDS`."""
    amount = f"{threshold} {currency} (minor units)"
    return RULE_WORDS[kind] % {"threshold": amount, "period_hours": period_hours}


def _names(session: Session, ids: set[int | None]) -> dict[int, str]:
    wanted = {i for i in ids if i is not None}
    found = session.execute(select(User.id, User.username).where(User.id.in_(wanted))).tuples()
    return dict(found.all())


@in_transaction
def rule_view(session: Session, row: AlertRule) -> AlertRuleView:
    return AlertRuleView(
        id=row.id,
        kind=row.kind,
        currency=row.currency,
        threshold=row.threshold,
        period_hours=row.period_hours,
        enabled=row.enabled,
        description=describe(row.kind, row.currency, row.threshold, row.period_hours),
        created_by=Person(row.created_by, _names(session, {row.created_by})[row.created_by]),
        created_at=fairness.format_time(row.created_at),
    )


@in_transaction
def alert_view(session: Session, row: Alert) -> AlertView:
    by = row.acknowledged_by
    raised_at = fairness.format_time(row.raised_at)
    assert row.subject is not None  # every rule raises its alerts about a subject
    return AlertView(
        id=row.id,
        rule_id=row.rule_id,
        subject=row.subject,
        message=row.message,
        params=row.params,
        data=row.data,
        audit_seq=row.audit_seq
        if row.audit_seq is not None
        else audit.seq_of(session, "alert.raised", row.subject, raised_at),
        raised_at=raised_at,
        acknowledged_by=None if by is None else Person(by, _names(session, {by})[by]),
        acknowledged_at=fairness.format_time(row.acknowledged_at) if row.acknowledged_at else None,
    )


@read_only
def rules(session: Session) -> AlertRuleList:
    rows = session.scalars(select(AlertRule).order_by(AlertRule.id)).all()
    return AlertRuleList([rule_view(session, row) for row in rows])


@read_only
def listing(
    session: Session, *, open_only: bool = False, cursor: int | None = None, limit: int = 50
) -> AlertPage:
    """A page of alerts, newest first (``open_only``: those not acknowledged)."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(
            N_("limit must be from 1 to %(max)s"), params={"max": MAX_PAGE}, field="limit"
        )
    query = select(Alert)
    if open_only:
        query = query.where(Alert.acknowledged_at.is_(None))
    if cursor is not None:
        query = query.where(Alert.id < cursor)
    rows = session.scalars(query.order_by(Alert.id.desc()).limit(limit + 1)).all()
    items = [alert_view(session, row) for row in rows[:limit]]
    return AlertPage(items, items[-1].id if len(rows) > limit else None)


@read_only
def open_count(session: Session) -> int:
    query = select(func.count(Alert.id)).where(Alert.acknowledged_at.is_(None))
    return session.scalar(query) or 0


def _raise(
    session: Session,
    rule: AlertRule,
    subject: str,
    message: str,
    params: dict[str, Any],
    data: dict[str, Any],
) -> None:
    """Raise an alert inside the caller's transaction, and keep it in the audit log.

    :param message: one of :data:`MESSAGES`, kept as the id with its ``params`` (in no
        language: each reader sees it in their own).
    """
    assert message in MESSAGES
    raised_at = _now()
    # The entry's seq where it is sequenced at once (SQLite); on PostgreSQL the integrator gives
    # it one after the commit, and alert_view finds it by its time (the alert's raised_at).
    seq = audit.record(
        session,
        actor="system",
        action="alert.raised",
        subject=subject,
        data={"rule_id": rule.id, "kind": rule.kind, "message": message, "params": params, **data},
        now=raised_at,
    )
    session.add(
        Alert(
            rule_id=rule.id,
            subject=subject,
            message=message,
            params=params,
            data=data,
            audit_seq=seq,
            raised_at=raised_at,
        )
    )


def _first_found(run: CheckRun) -> dict[str, Any] | None:
    """The check's first finding as a message id and params (its reason, said in English), if
    the check keeps its findings so (``findings["found"]``, as the ledger and audit checks do)."""
    found = run.findings.get("found") if isinstance(run.findings, dict) else None
    first = found[0] if isinstance(found, list) and found else None
    if not isinstance(first, dict) or not isinstance(first.get("message"), str):
        return None
    plural = {"plural": first["plural"]} if isinstance(first.get("plural"), str) else {}
    return {"message": first["message"], "params": dict(first.get("params") or {}), **plural}


def _enabled(session: Session, *kinds: str, lock: bool = False) -> list[AlertRule]:
    """The enabled rules of ``kinds``, oldest first; ``lock``: each locked until the
    transaction ends, and read as locked."""
    query = select(AlertRule).where(AlertRule.enabled.is_(True), AlertRule.kind.in_(kinds))
    query = query.order_by(AlertRule.id)
    return list(session.scalars(locked(query) if lock else query))


@in_transaction
def after_adjustment(
    session: Session, actor_id: int, user_id: int, currency: str, amount: int
) -> None:
    """Weigh an adjustment just recorded against the adjustment rules (caller's transaction).

    A rule raises an alert when the total of its period is over its threshold, at most once a
    period for one player (or operator): the adjustments before the rule was made count too,
    so a rule made after the total went over speaks at the next adjustment.
    """
    for rule in _enabled(session, PLAYER_ADJUSTMENTS, OPERATOR_ADJUSTMENTS):
        if rule.currency != currency:
            continue
        start = _now() - timedelta(hours=rule.period_hours)
        since = fairness.format_time(start)
        # Sequenced or not yet: this adjustment's own entry is still pending on PostgreSQL.
        if rule.kind == PLAYER_ADJUSTMENTS:
            subject = f"user:{user_id}"
            found = audit.data_of_recent(session, "money.adjust", since, subject=subject)
        else:
            subject = f"user:{actor_id}"
            found = audit.data_of_recent(session, "money.adjust", since, actor=subject)
        moved = [m for m in map(json.loads, found) if m.get("currency") == currency]
        total = sum(abs(int(m["amount"])) for m in moved)
        if total > rule.threshold and not _raised_since(session, rule, subject, start):
            name = _names(session, {int(subject[5:])}).get(int(subject[5:]), subject)
            _raise(
                session,
                rule,
                subject,
                ADJUSTMENTS_TO if rule.kind == PLAYER_ADJUSTMENTS else ADJUSTMENTS_BY,
                {
                    "name": name,
                    "total": total,
                    "currency": currency,
                    "hours": rule.period_hours,
                    "threshold": rule.threshold,
                },
                {"total": total, "currency": currency, "adjustments": len(moved)},
            )


def _raised_since(session: Session, rule: AlertRule, subject: str, since: datetime) -> bool:
    """Whether ``rule`` raised an alert about ``subject`` since ``since``."""
    query = select(Alert.id).where(
        Alert.rule_id == rule.id, Alert.subject == subject, Alert.raised_at >= since
    )
    return session.scalar(query.limit(1)) is not None


@transactional
def scan(session: Session) -> int:
    """Look for large wins settled since the last scan and for failed standing checks; return
    how many alerts were raised (the standing checks' runner calls this every step)."""
    raised = 0
    # Every process's standing checks scan: one scan at a time holds the rules, and the next
    # finds what it raised (the rule's new scanned_at, its alerts) instead of raising it again.
    watching = _enabled(session, LARGE_WIN, CHECK_FAILED, lock=True)
    now = _now()
    for rule in (rule for rule in watching if rule.kind == LARGE_WIN):
        # Back over the last scan's edge (a round settled just before it may have committed just
        # after), but never to before the rule was made.
        start = max((rule.scanned_at or rule.created_at) - OVERLAP, rule.created_at)
        wins = session.execute(
            select(Round.id, Round.user_id, Round.net, Round.game)
            .where(
                Round.status == "settled",
                Round.settled_on >= start.date(),
                Round.settled_at >= start,
                Round.currency == rule.currency,
                Round.net > rule.threshold,
            )
            .order_by(Round.id)
        ).all()
        seen = set(
            session.scalars(
                select(Alert.subject).where(
                    Alert.rule_id == rule.id, Alert.subject.in_([f"round:{w.id}" for w in wins])
                )
            )
        )
        names = _names(session, {w.user_id for w in wins})
        for win in wins:
            if f"round:{win.id}" in seen:
                continue
            _raise(
                session,
                rule,
                f"round:{win.id}",
                WON,
                {
                    "name": names.get(win.user_id, f"user:{win.user_id}"),
                    "net": win.net,
                    "currency": rule.currency,
                    "game": GAME_NAMES.get(win.game, win.game),
                    "round": win.id,
                },
                {"user_id": win.user_id, "net": win.net, "currency": rule.currency},
            )
            raised += 1
        rule.scanned_at = now
    for rule in (rule for rule in watching if rule.kind == CHECK_FAILED):
        for run in session.scalars(select(CheckRun).where(CheckRun.name.in_(STANDING_CHECKS))):
            if run.ok is not False or run.checked_at is None:
                continue
            checked_at = fairness.format_time(run.checked_at)
            last = session.scalar(
                select(Alert)
                .where(Alert.rule_id == rule.id, Alert.subject == f"check:{run.name}")
                .order_by(Alert.id.desc())
                .limit(1)
            )
            if last is not None and last.data.get("checked_at") == checked_at:
                continue
            params: dict[str, Any]
            if run.reason:
                message, params = CHECK_FAILED_BECAUSE[run.name], {"reason": run.reason}
                found = _first_found(run)
                if found is not None:
                    params[PROBLEM] = found
            else:
                message, params = CHECK_FAILED_SEE_VERDICT[run.name], {}
            _raise(
                session,
                rule,
                f"check:{run.name}",
                message,
                params,
                {"checked_at": checked_at, "reason": run.reason},
            )
            raised += 1
    return raised
