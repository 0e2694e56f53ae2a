"""Rounds of different players share no ledger row: each player has its own escrow and house
account. Players racing on both databases keep every invariant of docs/scaling.md; on
PostgreSQL, a round holding its ledger rows open stalls no other player's round."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa
from flask import Flask
from service_support import assert_books_clean
from service_support import one_round_goes_through_while_another_is_held
from service_support import play_casino_war_rounds
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino import migrate
from sota_casino.models import Account
from sota_casino.models import AuditEntry
from sota_casino.services import ledger
from sota_casino.services import rounds

PLAYERS = 6
ROUNDS_EACH = 12


def _play(app: Flask, user_id: int) -> list[tuple[str, int]]:
    """Play Casino War rounds (ties decided, war and surrender in turn) and a Sota game; return
    the log entries the calls must have written, in the order they were made."""
    with app.app_context():
        own = app.extensions["sota_casino.sessionmaker"]()
        expected = play_casino_war_rounds(own, user_id, ROUNDS_EACH)
        game = rounds.play_sota(own, user_id, 2, preset="nordic")
        expected += [("round.bet", game.id), ("round.settled", game.id)]
        own.close()
    return expected


def test_players_racing_keep_the_books_and_log_each_event_once_in_order(
    app: Flask, session: Session, register: Callable[..., int]
) -> None:
    players = [register() for _ in range(PLAYERS)]
    with ThreadPoolExecutor(PLAYERS) as pool:
        expected = dict(zip(players, pool.map(lambda p: _play(app, p), players), strict=True))
    assert_books_clean(session)  # balances equal postings, transfers sum to 0, escrow per player
    with session.begin():
        for user_id in players:
            logged = session.execute(
                select(AuditEntry.action, AuditEntry.subject)
                .where(AuditEntry.actor == f"user:{user_id}", AuditEntry.action.like("round.%"))
                .order_by(AuditEntry.seq)
            ).all()
            assert [(a, int(s.split(":")[1])) for a, s in logged] == expected[user_id]
            own = session.execute(
                select(Account.kind, Account.balance).where(Account.user_id == user_id)
            ).all()
            assert {kind for kind, _ in own} == {"player", "escrow", "house"}
            assert all(balance >= 0 for kind, balance in own if kind == "player")
            assert all(balance == 0 for kind, balance in own if kind == "escrow")
        shared = session.scalars(
            select(Account.name).where(
                Account.kind.in_(("escrow", "house")), Account.user_id.is_(None)
            )
        ).all()
        assert shared == []  # no round of these players touched a shared system account


def test_a_round_left_open_is_held_in_its_players_own_escrow(
    session: Session, player: int, rig: Callable[[int, list[str]], bytes]
) -> None:
    rig(player, ["tie"])
    opened = rounds.place_casino_war_bet(session, player, 300, 100)
    with session.begin():
        assert ledger.balance(session, ledger.escrow_account(player, "chips")) == 400
        assert ledger.balance(session, "escrow:chips") == 0
    rounds.decide_casino_war(session, player, opened.id, "war")
    with session.begin():
        assert ledger.balance(session, ledger.escrow_account(player, "chips")) == 0
    assert_books_clean(session)


def test_migrating_moves_open_stakes_from_the_shared_escrow_and_back(
    app: Flask, db_url: str, session: Session, player: int, rig: Callable[[int, list[str]], bytes]
) -> None:
    rig(player, ["tie"])
    opened = rounds.place_casino_war_bet(session, player, 500)
    session.close()
    app.extensions["sota_casino.engine"].dispose()
    migrate.downgrade(db_url, "0009")  # to before the escrow moved per player
    engine = sa.create_engine(db_url)
    names = sa.text("SELECT name, balance FROM accounts WHERE kind = 'escrow' ORDER BY name")
    with engine.connect() as connection:
        assert dict(connection.execute(names).tuples().all()) == {
            "escrow:chips": 500,
            ledger.escrow_account(player, "chips"): 0,
        }
    migrate.upgrade(db_url)
    with engine.connect() as connection:
        held = dict(connection.execute(names).tuples().all())
    engine.dispose()
    assert held == {"escrow:chips": 0, ledger.escrow_account(player, "chips"): 500}
    assert_books_clean(session)
    rounds.decide_casino_war(session, player, opened.id, "surrender")
    assert_books_clean(session)


# SQLite has one writer at a time: there every round waits for the one before.
@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_on_postgres_a_round_holding_its_ledger_rows_stalls_no_other_player(
    app: Flask, session: Session, register: Callable[..., int]
) -> None:
    first, second = register(), register()
    assert one_round_goes_through_while_another_is_held(
        app, session, first, second, after_append=False
    ), "the second player's round waited for the first's ledger rows"
    assert_books_clean(session)
    with session.begin():
        settled = session.scalars(
            select(AuditEntry.data).where(AuditEntry.action == "round.settled")
        ).all()
    assert sorted(json.loads(d)["game"] for d in settled) == ["sota"] * 4
