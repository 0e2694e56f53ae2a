"""Reads never block play: a read-only use case, a login's password check and the whole audit
check and export run beside bets without holding SQLite's write lock (PostgreSQL reads take no
row locks), and a use case that only reads cannot write."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from flask import Flask
from sqlalchemy import update
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from bench.large_log import fill
from sota_casino.core import audit_chain
from sota_casino.core.errors import Unauthorized
from sota_casino.models import AuditHead
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services import checks
from sota_casino.services import rounds
from sota_casino.services.tx import WriteInReadOnly
from sota_casino.services.tx import read_only

ROOT = Path(__file__).resolve().parents[2]
#: Long enough that a bet queued behind the blocked step shows, short enough for a failing run.
HOLD_SECONDS = 10


def _new_session(app: Flask) -> Session:
    return app.extensions["sota_casino.sessionmaker"]()  # type: ignore[no-any-return]


def _bet(app: Flask, user_id: int) -> None:
    """One settled Casino War round (a tie is answered by war)."""
    with app.app_context():
        session = _new_session(app)
        played = rounds.place_casino_war_bet(session, user_id, 100)
        if played.status != "settled":
            rounds.decide_casino_war(session, user_id, played.id, "war")
        session.close()


def _bet_while_blocked(
    app: Flask,
    user_id: int,
    monkeypatch: pytest.MonkeyPatch,
    target: Any,
    name: str,
    blocked_step: Callable[[], object],
) -> bool:
    """Hold ``target.name`` (called inside ``blocked_step``) until a bet made meanwhile is
    done; return whether the bet got through while the step was held."""
    inside, bet_done = threading.Event(), threading.Event()
    released_by_bet: list[bool] = []
    real = getattr(target, name)

    def held(*args: Any, **kwargs: Any) -> Any:
        inside.set()
        released_by_bet.append(bet_done.wait(HOLD_SECONDS))
        return real(*args, **kwargs)

    monkeypatch.setattr(target, name, held)

    def run_step() -> None:
        with app.app_context():
            try:
                blocked_step()
            except Unauthorized:
                pass  # the failed login the test means

    step = threading.Thread(target=run_step)
    step.start()
    assert inside.wait(HOLD_SECONDS), "the step never reached the held call"
    monkeypatch.setattr(target, name, real)  # the bet's own calls are not held
    _bet(app, user_id)
    bet_done.set()
    step.join()
    return released_by_bet == [True]


def test_a_bet_goes_through_while_a_long_read_is_open(
    app: Flask, session: Session, register: Callable[..., int], monkeypatch: pytest.MonkeyPatch
) -> None:
    player = register()
    _bet(app, player)  # the log has entries to verify

    def verify() -> object:
        return audit.verify(_new_session(app))

    assert _bet_while_blocked(app, player, monkeypatch, audit_chain, "verify_chain", verify)


def test_a_bet_goes_through_while_a_failed_login_checks_its_password(
    app: Flask, session: Session, register: Callable[..., int], monkeypatch: pytest.MonkeyPatch
) -> None:
    player = register("bettor")
    register("victim")

    def failed_login() -> object:
        return accounts.authenticate(_new_session(app), "victim", "not the password at all")

    assert _bet_while_blocked(app, player, monkeypatch, PasswordHasher, "verify", failed_login)
    assert audit.entries(session, action="user.login_failed").entries, "the failure counts"


def test_a_read_only_use_case_cannot_write(session: Session, register: Callable[..., int]) -> None:
    player = register()

    @read_only
    def lock_the_player(db: Session, user_id: int) -> None:
        db.execute(update(AuditHead).values(seq=AuditHead.seq))
        raise AssertionError(f"wrote for {user_id}")

    with pytest.raises(WriteInReadOnly):
        lock_the_player(session, player)


# --- a bet loop beside the whole audit check and export of a large log --------------------------

FILLER_ENTRIES = 20_000
#: Bets that must finish inside the check's run: one held up by a lock the check took would
#: finish only after the check did (SQLite's write lock is the whole database's).
BETS_INSIDE = 5


def _bets_until(app: Flask, user_id: int, done: Callable[[], bool]) -> list[float]:
    """Bet until ``done()``; return when each bet finished (wall-clock seconds)."""
    finished = []
    while not done():
        _bet(app, user_id)
        finished.append(time.time())
    return finished


def test_bets_go_through_while_the_whole_log_is_checked_and_exported(
    app: Flask, session: Session, register: Callable[..., int], tmp_path: Path
) -> None:
    """Not a timing: bets must *finish* between the start and the end of the whole check and
    of the export, which run in a process of their own as `flask audit verify` and `flask audit
    export` do. A check that held a lock bets need would let none finish inside it."""
    player = register()
    fill(session, FILLER_ENTRIES, checkpoint_every=0)  # a log of entries alone, as played
    environment = os.environ | {
        "DATABASE_URL": app.config["DATABASE_URL"],
        "SECRET_KEY": "reads-never-block",
        "SIGNING_KEY_FILE": app.config["SIGNING_KEY_FILE"],
    }
    # Niced, so on two cores the bets come first for the CPU the check's hashing takes.
    script = (
        "import json, os, sys, time\n"
        "os.nice(10)\n"
        "from sota_casino.factory import create_app\n"
        "from sota_casino.services import audit\n"
        "app = create_app()\n"
        "with app.app_context():\n"
        "    session = app.extensions['sota_casino.sessionmaker']()\n"
        "    print('ready', flush=True); sys.stdin.readline()\n"
        "    started = time.time()\n"
        "    verdict = audit.verify(session)\n"
        "    checked = time.time()\n"
        "    lines = sum(1 for _ in audit.iter_export(session))\n"
        "    print(json.dumps({'ok': verdict.ok, 'size': verdict.size, 'lines': lines,\n"
        "                      'started': started, 'checked': checked, 'ended': time.time()}))\n"
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert reader.stdin is not None and reader.stdout is not None
    assert reader.stdout.readline().strip() == "ready"
    reader.stdin.write("go\n")
    reader.stdin.flush()
    finished = _bets_until(app, player, lambda: reader.poll() is not None)
    out, _ = reader.communicate()
    report = json.loads(out)
    assert report["ok"] and report["size"] > FILLER_ENTRIES and report["lines"] > FILLER_ENTRIES
    during_check = [t for t in finished if report["started"] < t < report["checked"]]
    during_export = [t for t in finished if report["checked"] < t < report["ended"]]
    took = report["ended"] - report["started"]
    assert len(during_check) >= BETS_INSIDE, (
        f"{len(during_check)} bets inside the check ({took:.1f} s)"
    )
    assert len(during_export) >= BETS_INSIDE, f"{len(during_export)} bets inside the export"


@contextlib.contextmanager
def a_writer_holding_the_lock(app: Flask) -> Iterator[None]:
    """Hold SQLite's write lock from a connection of another program (a shell, a command)."""
    writer = sqlite3.connect(make_url(app.config["DATABASE_URL"]).database, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        writer.rollback()
        writer.close()


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_logs_long_reads_wait_for_no_writer(
    app: Flask, session: Session, register: Callable[..., int]
) -> None:
    """Each chunk of a long read of the log (the whole check, the settled rounds held to it,
    the exports) is a read of its own: on SQLite it begins deferred, so a writer holding the
    write lock (a bet mid-way, or a command) holds none of them up. A chunk that began
    ``IMMEDIATE`` waited for that lock, and ran out."""
    player = register()
    _bet(app, player)
    audit.checkpoint(session)
    size = audit.current_size(session)
    with a_writer_holding_the_lock(app):
        assert audit.check_chain(session).ok
        assert audit.unlogged_round(session) is None
        assert len(list(audit.iter_entries(session))) == size
        assert len(list(audit.iter_export(session))) == size + 1  # and the checkpoint
        first, last, _ = audit.export_range(session, from_seq=1, to_seq=size)
        assert sum(1 for _ in audit.iter_range_export(session, first, last, None)) >= size


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_stored_verdicts_are_read_while_a_writer_holds_the_lock(
    app: Flask, session: Session, register: Callable[..., int]
) -> None:
    """The console and ``GET /operator/audit/verify`` answer the stored verdicts at once: each
    is a read of its own. As a writing use case each began ``IMMEDIATE`` and waited for a
    writer's lock until it ran out (a 503)."""
    _bet(app, register())
    with a_writer_holding_the_lock(app):
        assert checks.verdict(session, "audit").name == "audit"
        assert checks.audit_verdict(session).name == "audit"
        assert checks.ledger_verdict(session).name == "ledger"


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_checks_step_reads_where_it_stands_while_a_writer_holds_the_lock(
    app: Flask, session: Session, register: Callable[..., int]
) -> None:
    """Before a step of the audit check reads the new entries it asks whether the last entry it
    reached still heads the chain, and a whole check how long the log is: reads of their own.
    As writing use cases each began ``IMMEDIATE`` and waited for a writer's lock until it ran
    out."""
    _bet(app, register())
    reached = audit.check_chain(session).state
    assert reached is not None and reached.size > 0
    with a_writer_holding_the_lock(app):
        assert checks._heads(session, reached)
        assert checks._audit_size(session) == reached.size
