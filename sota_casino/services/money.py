"""Play money: the sign-up grant, top-ups when low, and operator adjustments, all from issuance."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core import fairness
from ..core.errors import ApprovalRequired
from ..core.errors import InsufficientFunds
from ..core.errors import InvalidInput
from ..core.errors import NotFound
from ..core.errors import TopupNotAllowed
from ..core.marks import N_
from ..core.money import CURRENCIES
from ..models import Transfer
from ..models import User
from . import alerts
from . import audit
from . import idempotency
from . import ledger
from . import proposals
from .context import context_of
from .results import Balances
from .staff import require_operator
from .staff import require_player
from .staff import target_player
from .text import storable
from .tx import in_transaction
from .tx import read_only
from .tx import serialize_on

MAX_ADJUSTMENT = 10**12
REASON_MAX = 500
#: How long after a top-up the next one waits.
TOPUP_EVERY = timedelta(days=1)
#: How far back an operator's own adjustments count toward what they may move alone.
ALONE_WINDOW = timedelta(hours=24)
#: The top-up refusals, one message id per currency: each language names a currency its own way.
TOPUP_ONLY_BELOW = {
    "chips": N_("a top-up is given only below %(low)s chips (minor units); you hold %(held)s"),
    "sweets": N_("a top-up is given only below %(low)s sweets (minor units); you hold %(held)s"),
}
TOPUP_ONCE_A_DAY = {
    "chips": N_("one top-up a day: the next chips top-up is possible after %(when)s UTC"),
    "sweets": N_("one top-up a day: the next sweets top-up is possible after %(when)s UTC"),
}


def check_currency(currency: object) -> str:
    if currency not in CURRENCIES:
        raise InvalidInput(
            N_("currency must be one of: %(currencies)s"),
            params={"currencies": ", ".join(CURRENCIES)},
            field="currency",
        )
    return str(currency)


def _issue(
    session: Session, kind: str, user_id: int, currency: str, amount: int, memo: str | None = None
) -> None:
    ledger.post(
        session,
        kind=kind,
        currency=currency,
        moves={
            ledger.system_account("issuance", currency): -amount,
            ledger.player_account(user_id, currency): amount,
        },
        user_id=user_id,
        memo=memo,
    )


@in_transaction
def grant_signup(session: Session, user_id: int) -> None:
    """Credit the sign-up grant inside the caller's transaction (audited)."""
    ctx = context_of(session)
    amounts = {"chips": ctx.setting("SIGNUP_CHIPS"), "sweets": ctx.setting("SIGNUP_SWEETS")}
    for currency, amount in amounts.items():
        if amount > 0:
            _issue(session, "grant", user_id, currency, amount)
    audit.record(
        session, actor="system", action="money.grant", subject=f"user:{user_id}", data=amounts
    )


@read_only
def balances(session: Session, user_id: int) -> Balances:
    """Return the player's balances in minor units."""
    return ledger.player_balances(session, user_id)


@read_only
def topup_status(session: Session, user_id: int, now: datetime | None = None) -> dict[str, bool]:
    """Tell, per currency, whether a top-up is allowed now."""
    now = now or datetime.now(UTC)
    user = session.get(User, user_id)
    if user is None or user.role != "player":
        return {c: False for c in CURRENCIES}
    return {c: _topup_refusal(session, user_id, c, now) is None for c in CURRENCIES}


def _topup_refusal(
    session: Session, user_id: int, currency: str, now: datetime
) -> TopupNotAllowed | None:
    ctx = context_of(session)
    low = ctx.setting(f"LOW_BALANCE_{currency.upper()}")
    held = ledger.balance(session, ledger.player_account(user_id, currency))
    if held >= low:
        return TopupNotAllowed(
            TOPUP_ONLY_BELOW[currency],
            params={"low": low, "held": held},
            low=low,
            held=held,
        )
    last = session.scalar(
        select(Transfer.created_at)
        .where(Transfer.user_id == user_id, Transfer.kind == "topup", Transfer.currency == currency)
        .order_by(Transfer.id.desc())
        .limit(1)
    )
    if last is not None and now - last < TOPUP_EVERY:
        again = last + TOPUP_EVERY
        return TopupNotAllowed(
            TOPUP_ONCE_A_DAY[currency],
            params={"when": f"{again:%Y-%m-%d %H:%M}"},
            next_at=again,
        )
    return None


@idempotency.idempotent("money.topup", Balances)
def topup(
    session: Session,
    user_id: int,
    currency: object,
    now: datetime | None = None,
    *,
    key: str | None = None,
) -> Balances:
    """Top the balance up when it is low, at most once a day (audited); a retried
    ``idempotency_key`` returns the first answer.

    :raises TopupNotAllowed: saying why not.
    """
    currency = check_currency(currency)
    # One top-up at a time per player; the row as locked, not as an earlier transaction read it.
    user = session.get(User, user_id, with_for_update=True, populate_existing=True)
    if user is None:
        raise NotFound(N_("no such user"))
    require_player(user)
    refusal = _topup_refusal(session, user_id, currency, now or datetime.now(UTC))
    if refusal:
        raise refusal
    amount = context_of(session).setting(f"TOPUP_{currency.upper()}")
    _issue(session, "topup", user_id, currency, amount)
    audit.record(
        session,
        actor=f"user:{user_id}",
        action="money.topup",
        subject=f"user:{user_id}",
        data={"currency": currency, "amount": amount},
    )
    return ledger.player_balances(session, user_id)


def check_adjustment(currency: object, amount: object, reason: object) -> tuple[str, int, str]:
    """Return ``(currency, amount, reason)`` of a valid adjustment (the reason stripped).

    Also used to preview an adjustment before it is applied.

    :raises InvalidInput: naming the field that is not valid.
    """
    currency = check_currency(currency)
    if type(amount) is not int or amount == 0 or abs(amount) > MAX_ADJUSTMENT:
        raise InvalidInput(
            N_("amount must be a nonzero integer in minor units, at most %(most)s"),
            params={"most": MAX_ADJUSTMENT},
            field="amount",
        )
    if not isinstance(reason, str) or not reason.strip() or len(reason) > REASON_MAX:
        raise InvalidInput(
            N_("a reason of 1 to %(most)s characters is required"),
            params={"most": REASON_MAX},
            field="reason",
        )
    return currency, amount, storable(reason.strip(), "reason")


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class OverAloneLimit:
    """Why an adjustment waits for a second operator: ``above`` is the most one operator
    adjusts alone within :data:`ALONE_WINDOW`, and ``total`` what they would have adjusted alone
    with it (``None`` where the amount alone is over)."""

    above: int
    total: int | None


@in_transaction
def needs_approval(
    session: Session, actor_id: int, currency: str, amount: int
) -> OverAloneLimit | None:
    """Why an adjustment of ``amount`` by ``actor_id`` waits for a second operator (four eyes),
    or ``None`` if its operator applies it alone: it, and what they adjusted alone in the last
    24 hours to any player, each counted in absolute value, stay within the limit (so splitting
    a large amount is no way around it)."""
    above = _four_eyes_above(session, currency)
    if not above:
        return None
    if abs(amount) > above:
        return OverAloneLimit(above, None)
    total = _adjusted_alone(session, actor_id, currency) + abs(amount)
    return OverAloneLimit(above, total) if total > above else None


def _four_eyes_above(session: Session, currency: str) -> int:
    """The most in ``currency`` one operator adjusts alone in :data:`ALONE_WINDOW` (0: any)."""
    return context_of(session).setting(f"FOUR_EYES_ABOVE_{currency.upper()}")


def _approval_refusal(
    session: Session, actor_id: int, currency: str, amount: int
) -> ApprovalRequired | None:
    """The refusal of an adjustment that waits for a second operator (:func:`needs_approval`)."""
    over = needs_approval(session, actor_id, currency, amount)
    if over is None:
        return None
    if over.total is None:
        return ApprovalRequired(
            N_(
                "an adjustment of more than %(above)s %(currency)s (minor units) needs a second "
                "operator's approval: propose it"
            ),
            params={"above": over.above, "currency": currency},
        )
    return ApprovalRequired(
        N_(
            "your adjustments without a second operator in the last 24 hours would add up to "
            "%(total)s %(currency)s (minor units), more than %(above)s: this one needs a "
            "second operator's approval: propose it"
        ),
        params={"total": over.total, "above": over.above, "currency": currency},
    )


def _one_at_a_time(session: Session, actor_id: int) -> None:
    """Make one operator's adjustments take turns: two at once would each count what the
    operator adjusted alone without the other."""
    serialize_on(session, f"adjustments-alone:{actor_id}")


def _adjusted_alone(session: Session, actor_id: int, currency: str) -> int:
    """What ``actor_id`` adjusted in ``currency`` without a second operator within
    :data:`ALONE_WINDOW`, to any player, in absolute value (an approved one had four eyes)."""
    since = fairness.format_time(_now() - ALONE_WINDOW)
    found = audit.data_of_recent(session, "money.adjust", since, actor=f"user:{actor_id}")
    moved = [json.loads(data) for data in found]
    return sum(
        abs(int(m["amount"])) for m in moved if m["currency"] == currency and "approval" not in m
    )


@idempotency.idempotent("money.adjust", Balances)
def adjust(
    session: Session,
    actor_id: int,
    user_id: int,
    currency: object,
    amount: object,
    reason: object,
    *,
    key: str | None = None,
) -> Balances:
    """Credit (or, with a negative amount, debit) a player by hand, with a reason (audited).

    A repeated ``idempotency_key`` (a double click on the confirmation) applies it once.

    :raises ApprovalRequired: for an amount that needs a second operator
        (:func:`propose_adjustment`).
    :raises InsufficientFunds: if a debit would take the balance below zero.
    """
    return _adjust(session, actor_id, user_id, currency, amount, reason)


def _checked_adjustment(
    session: Session, actor_id: int, user_id: int, currency: object, amount: object, reason: object
) -> tuple[str, int, str]:
    """The adjustment's currency, amount and reason, checked, by an operator, for a player."""
    checked = check_adjustment(currency, amount, reason)
    require_operator(session, actor_id)
    target_player(session, user_id)
    return checked


def _adjust(
    session: Session, actor_id: int, user_id: int, currency: object, amount: object, reason: object
) -> Balances:
    currency, amount, reason = _checked_adjustment(
        session, actor_id, user_id, currency, amount, reason
    )
    _one_at_a_time(session, actor_id)
    # A debit the balance does not cover is refused first: asked to propose it, the operator
    # would only be refused again (a proposal is checked the same way).
    refuse_overdraft(ledger.player_balances(session, user_id).of(currency), currency, amount)
    refusal = _approval_refusal(session, actor_id, currency, amount)
    if refusal:
        raise refusal
    return apply_adjustment(session, actor_id, user_id, currency, amount, reason)


@in_transaction
def apply_adjustment(
    session: Session,
    actor_id: int,
    user_id: int,
    currency: str,
    amount: int,
    reason: str,
    *,
    approval: dict[str, Any] | None = None,
) -> Balances:
    """Move an adjustment checked already, inside the caller's transaction (audited, and
    evaluated against the alert rules); ``approval`` names who approved it, if someone did.

    Checked here again because a proposal is approved later: the user may have been made staff
    since (staff hold no play money) or the balance may have fallen (a debit the balance does
    not cover is refused in the operator's words, what the player holds).

    :raises NotFound: if the user is no longer a player.
    :raises InsufficientFunds: if a debit would take the balance below zero.
    """
    target_player(session, user_id)
    refuse_overdraft(ledger.player_balances(session, user_id).of(currency), currency, amount)
    _issue(session, "adjust", user_id, currency, amount, memo=reason)
    data = {"currency": currency, "amount": amount, "reason": reason}
    proposals.record_applied(session, actor_id, "money.adjust", f"user:{user_id}", data, approval)
    alerts.after_adjustment(session, actor_id, user_id, currency, amount)
    return ledger.player_balances(session, user_id)


@idempotency.idempotent("money.propose_adjustment", proposals.ApprovalView)
def propose_adjustment(
    session: Session,
    actor_id: int,
    user_id: int,
    currency: object,
    amount: object,
    reason: object,
    *,
    key: str | None = None,
) -> proposals.ApprovalView:
    """Propose an adjustment for a second operator to approve (audited); nothing moves yet.

    Checked as :func:`adjust` checks it, so a proposal that could never apply is refused now.
    """
    return _propose_adjustment(session, actor_id, user_id, currency, amount, reason)


def _propose_adjustment(
    session: Session, actor_id: int, user_id: int, currency: object, amount: object, reason: object
) -> proposals.ApprovalView:
    currency, amount, reason = _checked_adjustment(
        session, actor_id, user_id, currency, amount, reason
    )
    refuse_overdraft(ledger.player_balances(session, user_id).of(currency), currency, amount)
    change = {"user_id": user_id, "currency": currency, "amount": amount, "reason": reason}
    return proposals.propose(session, actor_id, "adjustment", f"user:{user_id}", change)


@idempotency.idempotent("money.request_adjustment", proposals.Requested[Balances])
def request_adjustment(
    session: Session,
    actor_id: int,
    user_id: int,
    currency: object,
    amount: object,
    reason: object,
    *,
    key: str | None = None,
) -> proposals.Requested[Balances]:
    """Apply an adjustment, or propose it if it needs a second operator (the console's one
    button)."""
    checked_currency, checked_amount, _ = check_adjustment(currency, amount, reason)
    _one_at_a_time(session, actor_id)
    if needs_approval(session, actor_id, checked_currency, checked_amount):
        approval = _propose_adjustment(session, actor_id, user_id, currency, amount, reason)
        return proposals.Requested(None, approval)
    return proposals.Requested(_adjust(session, actor_id, user_id, currency, amount, reason), None)


def refuse_overdraft(held: int, currency: str, amount: int) -> None:
    """Refuse an adjustment of ``amount`` that would take a balance of ``held`` below zero.

    :raises InsufficientFunds: naming the balance and the debit.
    """
    if held + amount < 0:
        raise InsufficientFunds(
            N_(
                "the player holds %(held)s %(currency)s (minor units); "
                "a debit of %(debit)s would make it negative"
            ),
            params={"held": held, "currency": currency, "debit": -amount},
            held=held,
            currency=currency,
            debit=-amount,
        )
