"""Play money: top-ups only when low and at most once a day; operator adjustments with a reason."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core.errors import Forbidden
from sota_casino.core.errors import IdempotencyMismatch
from sota_casino.core.errors import InsufficientFunds
from sota_casino.core.errors import InvalidInput
from sota_casino.core.errors import NotFound
from sota_casino.core.errors import TopupNotAllowed
from sota_casino.models import AuditEntry
from sota_casino.services import accounts
from sota_casino.services import money

PASSWORD = "a long enough secret"


def _drain(session: Session, operator: int, player: int, currency: str, leave: int) -> None:
    held = money.balances(session, player).of(currency)
    with session.begin():  # at once, however much: approval is not what these tests are about
        money.apply_adjustment(session, operator, player, currency, leave - held, "test: spend it")


@pytest.fixture
def operator(session: Session) -> int:
    return accounts.create_operator(session, "olga", PASSWORD).id


def test_a_topup_is_refused_while_the_balance_is_not_low(session: Session, player: int) -> None:
    with pytest.raises(TopupNotAllowed, match="only below"):
        money.topup(session, player, "chips")


def test_a_low_balance_tops_up_once_a_day(session: Session, player: int, operator: int) -> None:
    _drain(session, operator, player, "chips", 50)
    assert money.topup_status(session, player) == {"chips": True, "sweets": False}
    assert money.topup(session, player, "chips").chips == 50 + 100_000
    _drain(session, operator, player, "chips", 0)
    with pytest.raises(TopupNotAllowed, match="one top-up a day"):
        money.topup(session, player, "chips")
    tomorrow = datetime.now(UTC) + timedelta(days=1, minutes=1)
    assert money.topup(session, player, "chips", now=tomorrow).chips == 100_000
    _drain(session, operator, player, "sweets", 3)
    assert money.topup(session, player, "sweets").sweets == 103  # per currency


def test_adjustments_need_an_operator_a_reason_and_a_valid_amount(
    session: Session, player: int, operator: int
) -> None:
    assert money.adjust(session, operator, player, "sweets", 25, "birthday").sweets == 125
    with session.begin():
        entry = session.scalars(select(AuditEntry).where(AuditEntry.action == "money.adjust")).one()
        assert (entry.actor, entry.subject) == (f"user:{operator}", f"user:{player}")
        assert '"reason":"birthday"' in entry.data
    for amount, reason in (
        (0, "x"),
        (1.5, "x"),
        ("5", "x"),
        (True, "x"),
        (10**13, "x"),
        (5, ""),
        (5, "   "),
        (5, None),
    ):
        with pytest.raises(InvalidInput):
            money.adjust(session, operator, player, "sweets", amount, reason)
    with pytest.raises(InvalidInput):
        money.adjust(session, operator, player, "gold", 5, "x")
    with pytest.raises(Forbidden):
        money.adjust(session, player, player, "sweets", 5, "self-service")
    with pytest.raises(NotFound):
        money.adjust(session, operator, 999, "sweets", 5, "nobody")
    with pytest.raises(InsufficientFunds):
        money.adjust(session, operator, player, "sweets", -126, "more than held")
    assert money.balances(session, player).sweets == 125


def test_a_repeated_adjustment_key_applies_once(
    session: Session, player: int, operator: int
) -> None:
    for _ in range(3):
        after = money.adjust(
            session, operator, player, "sweets", 7, "double click", idempotency_key="confirm-1"
        )
        assert after.sweets == 107
    with pytest.raises(IdempotencyMismatch):
        money.adjust(session, operator, player, "sweets", 8, "other", idempotency_key="confirm-1")
    assert money.balances(session, player).sweets == 107


def test_a_retried_topup_key_returns_the_first_answer(
    session: Session, player: int, operator: int
) -> None:
    _drain(session, operator, player, "sweets", 0)
    first = money.topup(session, player, "sweets", idempotency_key="t-1")
    assert money.topup(session, player, "sweets", idempotency_key="t-1") == first
    with pytest.raises(TopupNotAllowed):
        money.topup(session, player, "sweets", idempotency_key="t-2")
    assert money.balances(session, player).sweets == 100


def test_only_an_operator_may_change_a_table(session: Session, player: int) -> None:
    from sota_casino.services import settings

    auditor = accounts.create_operator(session, "audrey", PASSWORD, role="auditor").id
    for actor in (player, auditor):
        with pytest.raises(Forbidden):
            settings.update_table(session, actor, "casino_war", {"decks": 1})
    assert settings.table_rules(session, "casino_war")["decks"] == 6
