"""Money under concurrency: threads and processes racing for one balance, one idempotency key,
and a process killed in the middle of a round's transaction."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from seed_support import candidate_seeds
from service_support import adjust_chips
from service_support import assert_books_clean
from service_support import classify
from service_support import first_cards
from service_support import install_seed
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core.errors import IdempotencyMismatch
from sota_casino.core.errors import InsufficientFunds
from sota_casino.core.errors import RoundSettled
from sota_casino.models import Round
from sota_casino.models import SeedPair
from sota_casino.services import money
from sota_casino.services import rounds

BET = 100
ATTEMPTS = 200
WANT_ACCEPTED = 50
WORKER = Path(__file__).with_name("bet_worker.py")
ROOT = Path(__file__).resolve().parents[2]


def accepted_in_order(seed: bytes, client_seed: str, balance: int, attempts: int) -> int:
    """How many bets in a row a balance covers: each accepted bet takes the next nonce, so the
    balance path is fixed by the seeds whatever order the racing requests arrive in."""
    accepted = 0
    for _ in range(attempts):
        if balance < BET:
            break
        outcome = classify(first_cards(seed, client_seed, accepted))
        balance += {"win": BET, "lose": -BET, "tie": -BET}[outcome]  # a tie stays open
        accepted += 1
    return accepted


def prepare_exact_balance(session: Session, user_id: int) -> None:
    """Choose a seed and a balance that cover exactly 50 of the 200 bets.

    With the running total of the first ``k`` bets' effects ``P_k``, the 51st bet is the first
    refused exactly when ``P_50`` is a new low below every earlier ``P_k``; the balance
    ``BET - min(P_0..P_49)`` then covers exactly 50.
    """
    with session.begin():
        client_seed = session.scalars(
            select(SeedPair.client_seed).where(
                SeedPair.user_id == user_id, SeedPair.status == "active"
            )
        ).one()
    effect = {"win": BET, "lose": -BET, "tie": -BET}  # a tie stays open, its ante escrowed
    for seed in itertools.islice(candidate_seeds("race"), 10_000):
        totals = [0]
        for nonce in range(WANT_ACCEPTED):
            totals.append(totals[-1] + effect[classify(first_cards(seed, client_seed, nonce))])
        if totals[-1] < min(totals[:-1]):
            balance = BET - min(totals[:-1])
            assert accepted_in_order(seed, client_seed, balance, ATTEMPTS) == WANT_ACCEPTED
            install_seed(session, user_id, seed)
            held = money.balances(session, user_id).chips
            adjust_chips(session, user_id, held, balance)
            return
    raise AssertionError("no seed makes exactly 50 bets affordable")


def assert_exactly_fifty(session: Session, user_id: int, accepted: int, refused: int) -> None:
    assert (accepted, refused) == (WANT_ACCEPTED, ATTEMPTS - WANT_ACCEPTED)
    with session.begin():
        nonces = session.scalars(
            select(Round.nonce).where(Round.user_id == user_id).order_by(Round.nonce)
        ).all()
    assert nonces == list(range(WANT_ACCEPTED))  # unique and gap-free
    assert money.balances(session, user_id).chips >= 0
    assert_books_clean(session)


def test_two_hundred_bets_from_twenty_threads_accept_exactly_fifty(
    app: Flask, session: Session, player: int
) -> None:
    prepare_exact_balance(session, player)
    make_session = app.extensions["sota_casino.sessionmaker"]

    def bettor(_: int) -> tuple[int, int]:
        accepted = refused = 0
        with app.app_context():
            own = make_session()
            for _ in range(ATTEMPTS // 20):
                try:
                    rounds.place_casino_war_bet(own, player, BET)
                    accepted += 1
                except InsufficientFunds:
                    refused += 1
            own.close()
        return accepted, refused

    with ThreadPoolExecutor(20) as pool:
        results = list(pool.map(bettor, range(20)))
    assert_exactly_fifty(session, player, sum(a for a, _ in results), sum(r for _, r in results))


def _worker(app: Flask, user_id: int, bets: int, **extra: object) -> subprocess.Popen[str]:
    config = {
        "app": {k: app.config[k] for k in ("DATABASE_URL", "SECRET_KEY", "SIGNING_KEY_FILE")}
        | {"CHECKPOINT_EVERY": 0},
        "user_id": user_id,
        "bets": bets,
        "bet": BET,
        **extra,
    }
    return subprocess.Popen(
        [sys.executable, str(WORKER), json.dumps(config)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def test_two_hundred_bets_from_separate_processes_accept_exactly_fifty(
    app: Flask, session: Session, player: int
) -> None:
    prepare_exact_balance(session, player)
    workers = [_worker(app, player, ATTEMPTS // 4) for _ in range(4)]
    counts = [json.loads(w.communicate(timeout=300)[0]) for w in workers]
    assert all(w.returncode == 0 for w in workers)
    assert_exactly_fifty(
        session, player, sum(c["accepted"] for c in counts), sum(c["refused"] for c in counts)
    )


def test_one_idempotency_key_sent_concurrently_places_one_bet(
    app: Flask, session: Session, player: int
) -> None:
    make_session = app.extensions["sota_casino.sessionmaker"]
    body = {"bet": 500}

    def send(_: int) -> dict:
        with app.app_context():
            own = make_session()
            try:
                return rounds.place_casino_war_bet(
                    own, player, 500, idempotency_key="same-key", request_body=body
                )
            finally:
                own.close()

    with ThreadPoolExecutor(10) as pool:
        answers = list(pool.map(send, range(10)))
    assert len({a.id for a in answers}) == 1
    assert all(a == answers[0] for a in answers)
    with session.begin():
        assert session.scalar(select(func.count(Round.id))) == 1
    with pytest.raises(IdempotencyMismatch):
        rounds.place_casino_war_bet(
            session, player, 600, idempotency_key="same-key", request_body={"bet": 600}
        )
    assert_books_clean(session)


def test_a_process_killed_inside_a_rounds_transaction_leaves_nothing_half_written(
    app: Flask, session: Session, player: int, tmp_path: Path
) -> None:
    before = money.balances(session, player)
    hang_file = tmp_path / "hanging"
    worker = _worker(app, player, 1, hang_file=str(hang_file))
    deadline = time.monotonic() + 60
    while not hang_file.exists():
        assert worker.poll() is None, "the worker ended before reaching its transaction"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(worker.pid, signal.SIGKILL)
    worker.communicate(timeout=30)  # reaps it and closes its pipe
    with session.begin():
        assert session.scalar(select(func.count(Round.id))) == 0
    assert money.balances(session, player) == before
    assert_books_clean(session)
    # The service goes on: the same nonce is used by the next bet.
    played = rounds.place_casino_war_bet(session, player, BET)
    assert played.nonce == 0


# --- sessions that outlive a transaction --------------------------------------------------------


def test_a_session_holding_an_earlier_round_takes_the_nonce_as_locked_now(
    app: Flask, session: Session, player: int
) -> None:
    rounds.place_casino_war_bet(session, player, 100)
    with session.begin():
        held = session.scalars(select(Round).where(Round.user_id == player)).one()
        assert held.seed_pair.next_nonce == 1  # the session now remembers the pair at nonce 1
    other = app.extensions["sota_casino.sessionmaker"]()
    try:
        assert rounds.place_casino_war_bet(other, player, 100).nonce == 1
    finally:
        other.close()
    assert rounds.place_casino_war_bet(session, player, 100).nonce == 2
    assert_books_clean(session)


def test_a_session_holding_an_open_round_sees_it_settled_by_another(
    app: Flask, session: Session, player: int, rig: Any
) -> None:
    rig(player, ["tie"])
    opened = rounds.place_casino_war_bet(session, player, 100)
    with session.begin():
        held = session.get(Round, opened.id)
        assert held is not None and held.status == "awaiting_decision"
    other = app.extensions["sota_casino.sessionmaker"]()
    try:
        rounds.decide_casino_war(other, player, opened.id, "surrender")
    finally:
        other.close()
    with pytest.raises(RoundSettled):
        rounds.decide_casino_war(session, player, opened.id, "war")
    assert_books_clean(session)
