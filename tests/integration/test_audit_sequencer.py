"""The audit log's sequencer on PostgreSQL: a use case writes its entries, unsequenced, into
``audit_pending`` in its own transaction; one integrator at a time (under an advisory lock)
gives them their sequence numbers and hashes. See docs/scaling.md for the invariants."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from app_support import app_config
from app_support import assert_books_hold
from flask import Flask
from service_support import one_round_goes_through_while_another_is_held
from service_support import play_casino_war_rounds
from sqlalchemy import func
from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino import background
from sota_casino import migrate
from sota_casino.core import fairness
from sota_casino.factory import create_app
from sota_casino.models import AuditCheckpoint
from sota_casino.models import AuditEntry
from sota_casino.models import AuditPending
from sota_casino.models import Round
from sota_casino.services import audit
from sota_casino.services import rounds
from sota_casino.services.context import context_of

WORKER = Path(__file__).with_name("bet_worker.py")
ROOT = Path(__file__).resolve().parents[2]

ON_POSTGRES = pytest.mark.parametrize("db_url", ["postgres"], indirect=True)


# SQLite has one writer at a time: there every round waits for the one before.
@ON_POSTGRES
def test_a_round_paused_after_writing_its_entries_stalls_no_other_player(
    app: Flask, session: Session, register: Callable[..., int]
) -> None:
    first, second = register(), register()
    assert one_round_goes_through_while_another_is_held(
        app, session, first, second, after_append=True
    ), "the second player's round waited for the first's log entries"


def _counts(session: Session) -> tuple[int, int]:
    """(entries sequenced, entries pending)."""
    with session.begin():
        return (
            session.scalar(select(func.count()).select_from(AuditEntry)) or 0,
            session.scalar(select(func.count()).select_from(AuditPending)) or 0,
        )


def _round_entries(session: Session, user_id: int) -> list[tuple[str, int]]:
    with session.begin():
        logged = session.execute(
            select(AuditEntry.action, AuditEntry.subject)
            .where(AuditEntry.actor == f"user:{user_id}", AuditEntry.action.like("round.%"))
            .order_by(AuditEntry.seq)
        ).all()
    return [(action, int(subject.split(":")[1])) for action, subject in logged]


def _assert_gap_free(session: Session) -> None:
    with session.begin():
        seqs = session.scalars(select(AuditEntry.seq).order_by(AuditEntry.seq)).all()
    assert seqs == list(range(1, len(seqs) + 1))


@ON_POSTGRES
def test_a_use_case_sees_its_entries_sequenced_once_it_returns(
    session: Session, player: int
) -> None:
    before, _ = _counts(session)
    played = rounds.place_casino_war_bet(session, player, 100)
    after, pending = _counts(session)
    assert pending == 0
    assert after > before
    assert ("round.bet", played.id) in _round_entries(session, player)


@ON_POSTGRES
def test_a_rolled_back_use_case_leaves_no_pending_entry(
    session: Session, player: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rounds.place_casino_war_bet(session, player, 100)
    before = _counts(session)
    append = audit.record_all

    def append_then_fail(*args: Any, **kwargs: Any) -> Any:
        append(*args, **kwargs)
        raise RuntimeError("the use case fails after writing its entries")

    monkeypatch.setattr(audit, "record_all", append_then_fail)
    with pytest.raises(RuntimeError):
        rounds.place_casino_war_bet(session, player, 100)
    monkeypatch.setattr(audit, "record_all", append)
    assert _counts(session) == before
    assert session.info.get("sota_casino.audit.wrote") is None
    rounds.place_casino_war_bet(session, player, 100)  # the next one is sequenced as ever
    assert _counts(session)[1] == 0
    _assert_gap_free(session)


def _hold_the_integrator_lock(app: Flask, ready: Path) -> subprocess.Popen[str]:
    """A process that takes the integrator's lock, says so in ``ready``, and hangs."""
    script = (
        "import sys, time, pathlib, sqlalchemy as sa\n"
        "engine = sa.create_engine(sys.argv[1])\n"
        "with engine.begin() as c:\n"
        f"    c.execute(sa.text('SELECT pg_advisory_xact_lock({audit.INTEGRATOR_LOCK})'))\n"
        "    pathlib.Path(sys.argv[2]).write_text('holding')\n"
        "    time.sleep(120)\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", script, app.config["DATABASE_URL"], str(ready)], text=True
    )


def _wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert process.poll() is None, "the process ended before it was ready"
        assert time.monotonic() < deadline
        time.sleep(0.02)


@ON_POSTGRES
def test_an_integrator_killed_holding_the_lock_is_taken_over_and_nothing_is_lost(
    app: Flask, session: Session, player: int, tmp_path: Path
) -> None:
    rounds.place_casino_war_bet(session, player, 100)
    before, _ = _counts(session)
    holder = _hold_the_integrator_lock(app, tmp_path / "holding")
    try:
        _wait_for(tmp_path / "holding", holder)
        played = [rounds.place_casino_war_bet(session, player, 100).id for _ in range(3)]
        assert audit.integrate(session) == 0  # the lock is held: nobody else sequences
        sequenced, pending = _counts(session)
        assert sequenced == before and pending >= 3  # committed, waiting, not lost
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(30)
    # The dead holder's session ended, and its lock with it: the next integrator takes over.
    deadline = time.monotonic() + 30
    while audit.integrate(session) == 0:
        assert time.monotonic() < deadline, "the dead holder's lock was never released"
        time.sleep(0.05)
    assert _counts(session)[1] == 0
    logged = _round_entries(session, player)
    assert [r for a, r in logged if a == "round.bet"][-3:] == played
    _assert_gap_free(session)
    assert_books_hold(app)


@ON_POSTGRES
def test_a_process_killed_between_commit_and_sequencing_loses_nothing(
    app: Flask, session: Session, player: int, tmp_path: Path
) -> None:
    rounds.place_casino_war_bet(session, player, 100)
    before, _ = _counts(session)
    hang = tmp_path / "committed"
    config = {
        "app": {k: app.config[k] for k in ("DATABASE_URL", "SECRET_KEY", "SIGNING_KEY_FILE")}
        | {"CHECKPOINT_EVERY": 0, "AUDIT_INTEGRATE_MS": 0},
        "user_id": player,
        "bets": 1,
        "bet": 100,
        "hang_after_commit_file": str(hang),
    }
    worker = subprocess.Popen(
        [sys.executable, str(WORKER), json.dumps(config)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    _wait_for(hang, worker)
    os.kill(worker.pid, signal.SIGKILL)
    worker.communicate(timeout=30)
    with session.begin():
        committed = session.scalars(select(Round.id).order_by(Round.id.desc()).limit(1)).one()
    sequenced, pending = _counts(session)
    assert sequenced == before and pending > 0  # the round committed; its entries wait
    assert ("round.bet", committed) not in _round_entries(session, player)
    assert audit.integrate(session) == pending  # a new integrator takes them
    assert ("round.bet", committed) in _round_entries(session, player)
    _assert_gap_free(session)
    assert_books_hold(app)


@pytest.fixture
def integrating_app(db_url: str, tmp_path: Path) -> Iterator[Flask]:
    """A second app on the same database (its own engine and sessions) whose background
    integrator runs every 10 ms: another app server."""
    other = create_app(app_config(db_url, tmp_path, AUDIT_INTEGRATE_MS=10))
    yield other
    background.stop_integrator(other, 30)
    other.extensions["sota_casino.engine"].dispose()


@ON_POSTGRES
def test_the_background_integrator_takes_what_no_use_case_integrated(
    integrating_app: Flask,
    session: Session,
    player: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(audit, "_integrate_after_commit", lambda *_: None)
    played = rounds.place_casino_war_bet(session, player, 100)
    deadline = time.monotonic() + 10
    while _counts(session)[1]:
        assert time.monotonic() < deadline, "the background integrator took nothing"
        time.sleep(0.02)
    assert ("round.bet", played.id) in _round_entries(session, player)
    _assert_gap_free(session)


def _play(app: Flask, user_id: int, count: int) -> list[tuple[str, int]]:
    with app.app_context():
        own = app.extensions["sota_casino.sessionmaker"]()
        expected = play_casino_war_rounds(own, user_id, count)
        own.close()
    return expected


@ON_POSTGRES
def test_two_app_servers_integrating_at_once_never_fork_or_repeat_the_chain(
    app: Flask, integrating_app: Flask, session: Session, register: Callable[..., int]
) -> None:
    players = [register() for _ in range(8)]
    for server in (app, integrating_app):  # checkpoints signed in the integrators' batches
        server.config["CHECKPOINT_EVERY"] = 7
    stop = threading.Event()

    def integrate_hard(on: Flask) -> int:
        rounds_ = 0
        with on.app_context():
            own = on.extensions["sota_casino.sessionmaker"]()
            while not stop.is_set():
                audit.integrate(own)
                rounds_ += 1
            audit.flush(own)
            own.close()
        return rounds_

    with ThreadPoolExecutor(12) as pool:
        hammers = [pool.submit(integrate_hard, on) for on in (app, integrating_app, app)]
        servers = [app, integrating_app] * 4
        try:
            plays = [pool.submit(_play, on, p, 10) for on, p in zip(servers, players, strict=True)]
            expected = {p: f.result(timeout=300) for p, f in zip(players, plays, strict=True)}
        finally:  # a failed play must stop the integrators too, or the pool waits for ever
            stop.set()
        assert all(h.result() > 0 for h in hammers)
    assert _counts(session)[1] == 0
    for user_id in players:  # each event once, in the player's order
        assert _round_entries(session, user_id) == expected[user_id]
    _assert_gap_free(session)
    assert_books_hold(app)


@ON_POSTGRES
def test_migrating_down_refuses_to_drop_entries_waiting_for_the_integrator(
    app: Flask, db_url: str, session: Session, player: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit, "_integrate_after_commit", lambda *_: None)
    rounds.place_casino_war_bet(session, player, 100)
    session.close()
    app.extensions["sota_casino.engine"].dispose()
    waiting = _counts(session)[1]
    assert waiting > 0
    with pytest.raises(RuntimeError, match="wait for their sequence numbers"):
        migrate.downgrade(db_url, "0011")
    assert _counts(session)[1] == waiting  # nothing dropped
    assert app.test_cli_runner().invoke(args=["audit", "integrate"]).exit_code == 0
    migrate.downgrade(db_url, "0011")
    engine = sa.create_engine(db_url)
    assert "audit_pending" not in sa.inspect(engine).get_table_names()
    engine.dispose()
    migrate.upgrade(db_url)
    monkeypatch.undo()
    rounds.place_casino_war_bet(session, player, 100)
    assert _counts(session)[1] == 0
    _assert_gap_free(session)


@ON_POSTGRES
def test_an_entry_written_first_and_committed_later_is_dated_before_the_one_it_follows(
    app: Flask, session: Session
) -> None:
    """Why the checks hold entry times to no order: an entry is dated when its use case writes
    it and sequenced after that commits, so an honest log can date an entry before the one it
    follows."""
    with app.app_context():
        slower = app.extensions["sota_casino.sessionmaker"]()
        with slower.begin():
            audit.record(slower, actor="system", action="test.written_first")
            with session.begin():
                audit.record(session, actor="system", action="test.written_second")
            audit.integrate(session)  # sequenced while the first still waits for its commit
        audit.flush(slower)
        slower.close()
    with session.begin():
        logged = session.execute(
            select(AuditEntry.action, AuditEntry.time).order_by(AuditEntry.seq)
        )
        (second, second_time), (first, first_time) = logged.all()[-2:]
    assert (second, first) == ("test.written_second", "test.written_first")
    assert first_time < second_time
    assert audit.verify(session).ok


@ON_POSTGRES
def test_an_integrator_far_behind_signs_no_checkpoint_until_it_has_caught_up(
    app: Flask, session: Session, player: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint dated now without entries that have waited long (an integrator stopped,
    then catching up) would put their rounds past the scheme's bound, as if the casino had left
    them out of the log: none is signed, on demand or every ``CHECKPOINT_EVERY`` entries,
    until the integrator has caught up."""
    rounds.place_casino_war_bet(session, player, 100)
    waited = fairness.format_time(datetime.now(UTC) - 2 * audit.BEHIND)
    backlog = [
        {"time": waited, "actor": "system", "action": "test.waited", "subject": None, "data": "{}"}
    ] * (2 * audit.BATCH + 100)  # the last batch crosses a hundred
    with session.begin():
        session.execute(insert(AuditPending), backlog)
        signed_before = session.scalar(select(func.count()).select_from(AuditCheckpoint))
    engine = sa.create_engine(app.config["DATABASE_URL"])
    with engine.connect() as other_integrator:  # catching up: it holds the lock
        other_integrator.execute(select(func.pg_advisory_xact_lock(audit.INTEGRATOR_LOCK)))
        assert audit.sign_if_due(session) is None
        other_integrator.rollback()
    engine.dispose()
    monkeypatch.setitem(context_of(session).settings, "CHECKPOINT_EVERY", 100)
    size = _counts(session)[0]
    assert audit.integrate(session) == len(backlog)
    with session.begin():
        signed = session.scalars(select(AuditCheckpoint.size).order_by(AuditCheckpoint.size)).all()[
            signed_before:
        ]
    # Only the last batch, which leaves nothing waiting, signs the checkpoints due in it.
    last_batch = size + 2 * audit.BATCH
    assert signed and all(checkpoint > last_batch for checkpoint in signed), signed
    assert signed == [n for n in range(last_batch + 1, size + len(backlog) + 1) if n % 100 == 0]
