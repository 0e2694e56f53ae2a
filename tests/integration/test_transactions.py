"""A use case owns its transaction: called inside one already open it refuses at once, instead
of rolling back the caller's work. Helpers that run inside the caller's transaction are marked
``@in_transaction`` and refuse to run outside one."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from typing import Any

import pytest
from service_support import PASSWORD
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

import sota_casino.services as services
from sota_casino.core.errors import Conflict
from sota_casino.models import Account
from sota_casino.models import AuditEntry
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services import ledger
from sota_casino.services import money
from sota_casino.services import tx
from sota_casino.services.tx import NestedTransaction
from sota_casino.services.tx import OutsideTransaction

#: Takes the session only to read what it carries (the settings and the key), no database.
NO_DATABASE = {
    "sota_casino.services.context.context_of",
    "sota_casino.services.audit.sequenced_in_transaction",  # asks the session's dialect only
}


def session_functions() -> list[tuple[str, Callable[..., Any]]]:
    """Every public function of the services whose first parameter is the session."""
    found = []
    for module_info in pkgutil.iter_modules(services.__path__):
        module = importlib.import_module(f"{services.__name__}.{module_info.name}")
        for name, value in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(value):
                continue
            if value.__module__ != module.__name__:
                continue  # imported from elsewhere
            if list(inspect.signature(value).parameters)[:1] == ["session"]:
                found.append((f"{module.__name__}.{name}", value))
    return found


#: Every function of the services that opens transactions of its own.
OWNERS = [
    (name, fn) for name, fn in session_functions() if getattr(fn, "transaction", None) == tx.OWN
]


def _placeholders(fn: Callable[..., Any]) -> tuple[list[None], dict[str, None]]:
    """None for every required argument after the session: the refusal comes before any is read."""
    positional: list[None] = []
    keywords: dict[str, None] = {}
    for parameter in list(inspect.signature(fn).parameters.values())[1:]:
        if parameter.default is not inspect.Parameter.empty:
            continue
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            keywords[parameter.name] = None
        elif parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            positional.append(None)
    return positional, keywords


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


def test_a_unique_key_lost_to_another_write_is_a_conflict_and_keeps_nothing(
    session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    """A use case whose insert meets a unique key another transaction took (here the player's
    chips account, made again) is refused as a :class:`Conflict`, its work rolled back; the
    log names the key, not its value."""
    alice = accounts.register(session, "alice", PASSWORD).id

    @tx.transactional
    def open_account_again(session: Session) -> None:
        audit.record(session, actor="system", action="test.inner", subject=None, data={})
        session.add(Account(name=f"player:{alice}:chips", kind="player", currency="chips"))
        session.flush()

    with session.begin():
        before = session.scalar(select(func.count()).select_from(AuditEntry))
    with pytest.raises(Conflict, match="try again") as refused:
        open_account_again(session)
    assert refused.value.code == "conflict"
    with session.begin():
        assert session.scalar(select(func.count()).select_from(AuditEntry)) == before
    [lost] = [r.getMessage() for r in caplog.records if "lost a race" in r.getMessage()]
    assert "accounts" in lost and f"player:{alice}" not in caplog.text


def test_a_read_left_open_by_autobegin_is_not_a_transaction_of_the_caller(
    session: Session,
) -> None:
    alice = accounts.register(session, "alice", PASSWORD).id
    session.scalar(select(func.count()).select_from(AuditEntry))  # autobegins a read
    assert money.balances(session, alice).chips > 0


def test_every_public_function_taking_the_session_says_how_it_treats_transactions() -> None:
    kinds = {name: getattr(fn, "transaction", None) for name, fn in session_functions()}
    assert {tx.OWN, tx.CALLERS} <= set(kinds.values())
    unmarked = [n for n, kind in kinds.items() if kind is None and n not in NO_DATABASE]
    assert unmarked == []


def test_every_use_case_refuses_at_once_inside_an_open_transaction(session: Session) -> None:
    refused = []
    with session.begin():
        audit.record(session, actor="system", action="test.outer", subject=None, data={})
        for name, use_case in OWNERS:
            positional, keywords = _placeholders(use_case)
            with pytest.raises(NestedTransaction):
                use_case(session, *positional, **keywords)
            assert session.in_transaction(), f"{name} ended the caller's transaction"
            refused.append(name)
    with session.begin():
        assert session.scalar(select(func.count()).select_from(AuditEntry)) == 1
    assert len(refused) > 40  # every use case of every module, not a few


def test_a_step_of_the_callers_transaction_refuses_to_run_outside_one(session: Session) -> None:
    with pytest.raises(OutsideTransaction, match="record"):
        audit.record(session, actor="system", action="test.alone", subject=None, data={})
    with pytest.raises(OutsideTransaction, match="balance"):
        ledger.balance(session, "house:chips")
    with session.begin():
        assert session.scalar(select(func.count()).select_from(AuditEntry)) == 0
