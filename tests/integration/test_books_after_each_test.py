"""The check the ``app`` fixture makes after every test (``assert_books_hold``: the checks of
``flask ledger check`` and ``flask audit verify``, called directly) fails on books that do not
hold, as the two commands do (tests/integration/test_audit_and_commands.py)."""

from __future__ import annotations

import pytest
from app_support import assert_books_hold
from flask import Flask
from log_support import entries_writable
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.orm import Session

from sota_casino.models import Account
from sota_casino.models import AuditEntry
from sota_casino.services import accounts


@pytest.fixture
def player(session: Session) -> int:
    return accounts.register(session, "player", "a long passphrase", address="10.1.2.3").id


@pytest.mark.tampers
def test_a_balance_off_its_postings_fails_the_check_after_the_test(
    app: Flask, session: Session, player: int
) -> None:
    assert_books_hold(app)
    with session.begin():
        session.execute(
            update(Account).where(Account.user_id == player).values(balance=Account.balance + 1)
        )
    with pytest.raises(AssertionError, match="flask ledger check failed"):
        assert_books_hold(app)


@pytest.mark.tampers
def test_a_changed_log_entry_fails_the_check_after_the_test(
    app: Flask, session: Session, player: int
) -> None:
    assert_books_hold(app)
    with session.begin(), entries_writable(session):
        first = session.scalar(select(AuditEntry.seq).order_by(AuditEntry.seq).limit(1))
        session.execute(update(AuditEntry).where(AuditEntry.seq == first).values(actor="other"))
    with pytest.raises(AssertionError, match=f"flask audit verify failed at entry {first}"):
        assert_books_hold(app)
