"""A use case owns its transaction: called inside one already open it refuses at once, instead
of rolling back the caller's work. Helpers that join the caller's transaction say so by name."""

from __future__ import annotations

import pytest
from service_support import PASSWORD
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.models import AuditEntry
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services import money
from sota_casino.services.tx import NestedTransaction


def test_a_use_case_inside_an_open_transaction_refuses_and_keeps_the_callers_work(
    session: Session,
) -> None:
    alice = accounts.register(session, "alice", PASSWORD).id
    with session.begin():
        before = session.scalar(select(func.count()).select_from(AuditEntry))
    with session.begin():
        audit.record(session, actor="system", action="test.outer", subject=None, data={})
        with pytest.raises(NestedTransaction, match="balances"):
            money.balances(session, alice)
    with session.begin():
        after = session.scalar(select(func.count()).select_from(AuditEntry))
    assert after == before + 1  # the outer entry was committed, not thrown away


def test_a_read_left_open_by_autobegin_is_not_a_transaction_of_the_caller(
    session: Session,
) -> None:
    alice = accounts.register(session, "alice", PASSWORD).id
    session.scalar(select(func.count()).select_from(AuditEntry))  # autobegins a read
    assert money.balances(session, alice)["chips"] > 0
