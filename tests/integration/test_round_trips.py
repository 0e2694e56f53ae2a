"""What the hot path saves, each tested where it could go wrong.

- The token read of every request is one statement outside any transaction (no BEGIN, no
  COMMIT to wait for), and still refuses to write.
- Pooled connections are not pinged before use: one killed under the pool is found dead by
  its first statement and the use case runs again on a fresh one.
- A process whose background integrator runs leaves its audit entries to it.
- SQLite writers queue at a file lock beside the database instead of sleeping in SQLite's
  busy handler; the gate opens on commit and on rollback, and reads never wait at it; the wait
  at the gate is taken off the wait at SQLite's lock.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from app_support import app_config
from app_support import copy_of_template
from flask import Flask
from service_support import PASSWORD
from sqlalchemy import event
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from ops.faults import end_connections
from sota_casino import background
from sota_casino.db import WriteGate
from sota_casino.db import make_engine
from sota_casino.db import make_sessionmaker
from sota_casino.factory import create_app
from sota_casino.models import AuditPending
from sota_casino.services import accounts
from sota_casino.services import rounds
from sota_casino.services import tx

ON_POSTGRES = pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
ON_SQLITE = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


def _in_a_transaction(dbapi_connection: Any) -> bool:
    if hasattr(dbapi_connection, "in_transaction"):
        return bool(dbapi_connection.in_transaction)  # sqlite3
    return not dbapi_connection.autocommit  # psycopg: a statement outside autocommit begins one


def test_the_token_read_is_one_statement_outside_any_transaction(
    app: Flask, session: Session
) -> None:
    accounts.register(session, "alice", PASSWORD)
    token = accounts.issue_api_token(session, "alice", PASSWORD).token
    seen: list[tuple[str, bool]] = []
    engine = app.extensions["sota_casino.engine"]

    def note(connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append((statement.split()[0].upper(), _in_a_transaction(connection.connection)))

    event.listen(engine, "before_cursor_execute", note)
    try:
        user = accounts.session_user(session, token, kind="api")
    finally:
        event.remove(engine, "before_cursor_execute", note)
    assert user is not None and user.username == "alice"
    assert seen == [("SELECT", False)]


def test_a_one_read_use_case_still_refuses_to_write(session: Session) -> None:
    @tx.one_read
    def sneaky(session: Session) -> None:
        session.execute(text("DELETE FROM users"))

    with pytest.raises(tx.WriteInReadOnly):
        sneaky(session)


@ON_POSTGRES
def test_a_pooled_connection_killed_under_the_pool_costs_a_retry_not_an_error(
    app: Flask, session: Session, player: int
) -> None:
    rounds.place_casino_war_bet(session, player, 100)  # a pooled connection to kill
    killed = end_connections(app.config["DATABASE_URL"])
    assert killed >= 1
    played = rounds.place_casino_war_bet(session, player, 100)
    assert played.id > 0


@ON_POSTGRES
def test_a_process_whose_integrator_runs_leaves_its_entries_to_it(
    db_url: str, tmp_path: Path
) -> None:
    # The loop waits a minute before its first look: whatever is sequenced meanwhile was
    # sequenced by the use case itself.
    served = create_app(app_config(db_url, tmp_path, AUDIT_INTEGRATE_MS=60_000))
    try:
        with served.app_context():
            session = served.extensions["sota_casino.sessionmaker"]()
            alice = accounts.register(session, "alice", PASSWORD).id
            with session.begin():
                before = session.scalar(select(func.count()).select_from(AuditPending))
            rounds.place_casino_war_bet(session, alice, 100)
            with session.begin():
                after = session.scalar(select(func.count()).select_from(AuditPending))
            assert after > before  # the bet's entries wait for the loop
            session.close()
    finally:
        background.stop_integrator(served, 30)
        served.extensions["sota_casino.engine"].dispose()


@pytest.fixture
def sqlite_file(migrated_template: Path, tmp_path: Path) -> str:
    return copy_of_template(migrated_template, tmp_path)


def _writer(url: str) -> tuple[Any, Session]:
    """An engine of its own (another process's, as far as the gate can tell) and a session."""
    engine = make_engine(url)
    return engine, make_sessionmaker(engine, context=None)()


def test_a_sqlite_writer_waits_at_the_gate_and_goes_in_when_the_holder_commits(
    sqlite_file: str,
) -> None:
    first_engine, first = _writer(sqlite_file)
    second_engine, second = _writer(sqlite_file)
    order: list[str] = []
    try:
        first.begin()
        first.execute(text("UPDATE audit_head SET seq = seq WHERE 0"))
        order.append("first holds the lock")

        def write_second() -> None:
            with second.begin():
                second.execute(text("UPDATE audit_head SET seq = seq WHERE 0"))
                order.append("second wrote")

        sent: list[str] = []
        event.listen(second_engine, "before_cursor_execute", lambda *args: sent.append(args[2]))
        thread = threading.Thread(target=write_second)
        thread.start()
        thread.join(0.3)
        assert thread.is_alive()
        assert "BEGIN IMMEDIATE" not in sent  # waiting at the gate, not in SQLite's busy loop
        order.append("first commits")
        first.commit()
        thread.join(10)
        assert not thread.is_alive()
        assert order == ["first holds the lock", "first commits", "second wrote"]
    finally:
        first.close()
        second.close()
        first_engine.dispose()
        second_engine.dispose()


def test_the_sqlite_gate_opens_on_rollback_and_reads_never_wait_at_it(sqlite_file: str) -> None:
    first_engine, first = _writer(sqlite_file)
    second_engine, second = _writer(sqlite_file)
    try:
        first.begin()
        first.execute(text("UPDATE audit_head SET seq = seq WHERE 0"))
        reader = second.connection(execution_options={tx.READ_ONLY: True})
        assert reader.execute(text("SELECT count(*) FROM users")).scalar() == 0
        second.rollback()
        first.rollback()  # a use case that failed: the gate opens all the same
        with second.begin():
            second.execute(text("UPDATE audit_head SET seq = seq WHERE 0"))
    finally:
        first.close()
        second.close()
        first_engine.dispose()
        second_engine.dispose()


def test_a_writer_whose_wait_runs_out_at_the_gate_goes_on_to_sqlite_with_none_left(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "gate")
    holder, waiter = WriteGate(path, timeout=5), WriteGate(path, timeout=0.05)
    held: dict[str, Any] = {}
    assert holder.enter(_Connection(held)) > 4  # in at once: nearly all of the wait is left
    waited: dict[str, Any] = {}
    assert waiter.enter(_Connection(waited)) == 0  # gave up after 50 ms: SQLite's lock decides
    assert held and not waited
    holder.leave(None, _Connection(held))
    assert 0 < waiter.enter(_Connection(waited)) <= 0.05
    assert waited
    waiter.leave(None, _Connection(waited))
    holder.close()
    waiter.close()


def test_the_wait_at_the_gate_and_at_sqlites_lock_are_one_wait(sqlite_file: str) -> None:
    """A writer behind another waits the lock wait in all, not once at the gate and again at
    SQLite's lock; the next writer on its connection waits in full again."""
    first_engine = make_engine(sqlite_file, lock_timeout_ms=1000)
    second_engine = make_engine(sqlite_file, lock_timeout_ms=1000)
    first = make_sessionmaker(first_engine, context=None)()
    second = make_sessionmaker(second_engine, context=None)()
    try:
        first.begin()
        first.execute(text("UPDATE audit_head SET seq = seq WHERE 0"))
        started = time.monotonic()
        with pytest.raises(OperationalError, match="locked"):
            with second.begin():
                second.execute(text("UPDATE audit_head SET seq = seq WHERE 0"))
        waited = time.monotonic() - started
        assert 0.9 <= waited < 1.6, waited  # two waits would be 2 s
        first.rollback()
        with second.begin():
            second.execute(text("UPDATE audit_head SET seq = seq WHERE 0"))
            # The whole wait less the moment it took at the gate (a millisecond or more on a
            # busy machine), not the nothing the refused writer had left.
            assert 900 <= second.execute(text("PRAGMA busy_timeout")).scalar() <= 1000
    finally:
        first.close()
        second.close()
        first_engine.dispose()
        second_engine.dispose()


class _Connection:
    """Stands for a pooled connection: the gate only reads and writes its ``info``."""

    def __init__(self, info: dict[str, Any]) -> None:
        self.info = info
