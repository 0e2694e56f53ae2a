"""Races that must end in a clean answer: rotations against bets and rotations, throttles hit by
many requests at once, two operators changing one table, one Idempotency-Key sent many times
at once, one public key registered by two accounts, one name signed up for twice, a new
signing key's first signatures. Real threads, each with its own session (its own database
connection), released together by a barrier."""

from __future__ import annotations

import functools
import itertools
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC
from datetime import datetime
from datetime import time
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
import sqlalchemy as sa
from bet_signing import bet_signature
from bet_signing import played_rules
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask import Flask
from service_support import PASSWORD
from service_support import assert_books_clean
from service_support import game_repeating_a_move
from service_support import moves_made
from service_support import prisoners_game_awaiting_a_move
from sqlalchemy import delete
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core import fairness as fairness_core
from sota_casino.core.errors import CasinoError
from sota_casino.core.errors import IdempotencyMismatch
from sota_casino.factory import create_app
from sota_casino.models import Alert
from sota_casino.models import Approval
from sota_casino.models import AuditCheckpoint
from sota_casino.models import AuditEntry
from sota_casino.models import CheckRun
from sota_casino.models import ClosedDayTotal
from sota_casino.models import PlayerKey
from sota_casino.models import Round
from sota_casino.models import SeedPair
from sota_casino.models import SigningKey
from sota_casino.models import Transfer
from sota_casino.models import User
from sota_casino.models import UserSession
from sota_casino.services import accounts
from sota_casino.services import alerts
from sota_casino.services import approvals
from sota_casino.services import audit
from sota_casino.services import day_totals
from sota_casino.services import fairness
from sota_casino.services import money
from sota_casino.services import player_keys
from sota_casino.services import reports
from sota_casino.services import rounds
from sota_casino.services import settings
from sota_casino.services import tx

Call = Callable[[Session], Any]


def answer_of(app: Flask, call: Call) -> tuple[str, Any]:
    """Run ``call`` in a session of its own; say how it ended: ``("ok", answer)``, or a
    refusal's code or ``crash:<exception>`` (what would have been a 500) with None."""
    with app.app_context():
        own = app.extensions["sota_casino.sessionmaker"]()
        try:
            return "ok", call(own)
        except CasinoError as refusal:
            return refusal.code, None
        except Exception as crash:  # noqa: BLE001 - the point is to see any of them
            return f"crash:{type(crash).__name__}: {crash}", None
        finally:
            own.close()


def race_answers(app: Flask, calls: list[Call]) -> list[tuple[str, Any]]:
    """Run ``calls`` at once, one thread and session each; say how each ended, as
    :func:`answer_of` does."""
    barrier = threading.Barrier(len(calls))

    def run(call: Call) -> tuple[str, Any]:
        def with_the_others(session: Session) -> Any:
            barrier.wait(timeout=30)
            return call(session)

        return answer_of(app, with_the_others)

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def race(app: Flask, calls: list[Call]) -> Counter[str]:
    """Run ``calls`` at once, as :func:`race_answers` does; count how each ended."""
    return Counter(how for how, _ in race_answers(app, calls))


def crashes(outcomes: Counter[str]) -> list[str]:
    return [outcome for outcome in outcomes if outcome.startswith("crash:")]


def finish_open_rounds(session: Session, user_id: int) -> None:
    with session.begin():
        waiting = session.scalars(
            select(Round.id).where(Round.user_id == user_id, Round.status != "settled")
        ).all()
    for round_id in waiting:
        rounds.decide_casino_war(session, user_id, round_id, "surrender")


def assert_one_active_and_one_next(session: Session, user_id: int) -> None:
    with session.begin():
        statuses = Counter(
            session.scalars(select(SeedPair.status).where(SeedPair.user_id == user_id))
        )
    assert statuses["active"] == 1 and statuses["next"] == 1, statuses


# --- rotations ----------------------------------------------------------------------------------


def test_two_rotations_at_once_both_succeed_one_after_the_other(
    app: Flask, session: Session, player: int
) -> None:
    for _ in range(8):
        outcomes = race(app, [lambda s: fairness.rotate(s, player)] * 2)
        assert not crashes(outcomes), outcomes
        assert outcomes == Counter(ok=2)
    assert_one_active_and_one_next(session, player)
    with session.begin():
        revealed = session.scalar(
            select(func.count(SeedPair.id)).where(
                SeedPair.user_id == player, SeedPair.status == "revealed"
            )
        )
    assert revealed == 16
    assert_books_clean(session)


def test_bets_racing_a_rotation_are_placed_or_refused_cleanly(
    app: Flask, session: Session, player: int
) -> None:
    seen: Counter[str] = Counter()
    for _ in range(6):
        calls: list[Call] = [lambda s: rounds.place_casino_war_bet(s, player, 100)] * 4
        calls.append(lambda s: fairness.rotate(s, player))
        outcomes = race(app, calls)
        assert not crashes(outcomes), outcomes
        # A bet that ties leaves its round open, and then a rotation must wait for it.
        assert set(outcomes) <= {"ok", "round_open"}, outcomes
        seen += outcomes
        finish_open_rounds(session, player)
    assert seen["ok"] >= 24  # every bet was placed
    assert_one_active_and_one_next(session, player)
    with session.begin():
        nonces = session.execute(
            select(Round.seed_pair_id, func.count(), func.max(Round.nonce))
            .where(Round.user_id == player)
            .group_by(Round.seed_pair_id)
        ).all()
    for _pair_id, count, highest in nonces:
        assert highest == count - 1  # each pair's nonces gap-free, none taken twice
    assert_books_clean(session)


# --- throttles ----------------------------------------------------------------------------------


@pytest.fixture
def throttled_app(app: Flask) -> Flask:
    app.config.update(SIGNUPS_PER_ADDRESS=5, LOGIN_ATTEMPTS=5)
    return app


def test_forty_sign_ups_at_once_from_one_address_open_exactly_five_accounts(
    throttled_app: Flask, session: Session
) -> None:
    calls: list[Call] = [
        (lambda s, n=n: accounts.register(s, f"racer{n}", PASSWORD, address="203.0.113.9"))
        for n in range(40)
    ]
    outcomes = race(throttled_app, calls)
    assert outcomes == Counter(ok=5, rate_limited=35), outcomes
    with session.begin():
        assert session.scalar(select(func.count(User.id))) == 5
    assert_books_clean(session)


def test_forty_wrong_passwords_at_once_are_checked_exactly_five_times(
    throttled_app: Flask, session: Session, player: int
) -> None:
    calls: list[Call] = [
        lambda s: accounts.authenticate(s, "alice", "wrong password!", address="198.51.100.7")
    ] * 40
    outcomes = race(throttled_app, calls)
    assert outcomes == Counter(unauthorized=5, rate_limited=35), outcomes
    with session.begin():
        failures = session.scalar(
            select(func.count(AuditEntry.seq)).where(AuditEntry.action == "user.login_failed")
        )
    assert failures == 5


def test_logins_with_a_password_changed_at_the_same_moment_keep_no_token(
    app: Flask, session: Session, player: int
) -> None:
    """Each login either ends before the change, which then ends its token, or is checked
    against a password replaced meanwhile and refused: the old password keeps nothing."""
    app.config.update(LOGIN_ATTEMPTS=100)  # the refused logins count as failures
    passwords = [PASSWORD + str(n or "") for n in range(5)]
    for round_number, (old, new) in enumerate(itertools.pairwise(passwords)):
        login = functools.partial(accounts.issue_api_token, username="alice", password=old)
        change = functools.partial(accounts.change_password, user_id=player, old=old, new=new)
        calls: list[Call] = [login] * 6 + [change]
        outcomes = race(app, calls)
        assert not crashes(outcomes) and set(outcomes) <= {"ok", "unauthorized"}, outcomes
        with session.begin():
            live = session.scalar(
                select(func.count(UserSession.id)).where(
                    UserSession.user_id == player,
                    UserSession.ended_at.is_(None),
                    UserSession.expires_at > datetime.now(UTC),
                )
            )
        assert live == 0, f"round {round_number}: {live} tokens of the old password live on"


def test_logins_at_once_keep_exactly_the_sessions_an_account_may_have(
    app: Flask, session: Session, player: int
) -> None:
    app.config.update(SESSIONS_PER_ACCOUNT=3)
    login = functools.partial(accounts.issue_api_token, username="alice", password=PASSWORD)
    outcomes = race(app, [login] * 5)  # as many password checks at once as the throttle takes
    assert outcomes == Counter(ok=5), outcomes
    with session.begin():
        kept = session.scalar(select(func.count(UserSession.id)))
    assert kept == 3


def test_twelve_rotations_at_once_rotate_exactly_the_hourly_limit(
    app: Flask, session: Session, player: int
) -> None:
    app.config.update(ROTATIONS_PER_HOUR=5)
    outcomes = race(app, [lambda s: fairness.rotate(s, player)] * 12)
    assert outcomes == Counter(ok=5, rate_limited=7), outcomes
    with session.begin():
        revealed = session.scalar(
            select(func.count(SeedPair.id)).where(
                SeedPair.user_id == player, SeedPair.status == "revealed"
            )
        )
        rotations = session.scalar(
            select(func.count(AuditEntry.seq)).where(AuditEntry.action == "seed_pair.rotated")
        )
    assert revealed == rotations == 5
    assert_one_active_and_one_next(session, player)


def test_twelve_key_registrations_at_once_register_exactly_the_hourly_limit(
    app: Flask, session: Session, player: int
) -> None:
    app.config.update(KEY_REGISTRATIONS_PER_HOUR=5)
    keys = [fairness_core.public_key_hex(Ed25519PrivateKey.generate()) for _ in range(12)]
    calls: list[Call] = [
        (lambda s, key=key: player_keys.register_key(s, player, key)) for key in keys
    ]
    outcomes = race(app, calls)
    assert outcomes == Counter(ok=5, rate_limited=7), outcomes
    with session.begin():
        assert session.scalar(select(func.count(PlayerKey.id))) == 5
        registered = session.scalar(
            select(func.count(AuditEntry.seq)).where(AuditEntry.action == player_keys.REGISTERED)
        )
    assert registered == 5


# --- table settings -----------------------------------------------------------------------------


@pytest.fixture
def operators(session: Session) -> tuple[int, int]:
    first = accounts.create_operator(session, "olga", PASSWORD).id
    second = accounts.create_operator(session, "oscar", PASSWORD).id
    return first, second


def test_two_first_changes_of_a_table_at_once_both_apply_in_turn(
    app: Flask, session: Session, operators: tuple[int, int]
) -> None:
    olga, oscar = operators
    outcomes = race(
        app,
        [
            lambda s: settings.update_table(s, olga, "casino_war", {"min_bet": 200}),
            lambda s: settings.update_table(s, oscar, "casino_war", {"max_bet": 90_000}),
        ],
    )
    assert outcomes == Counter(ok=2), outcomes
    now = settings.table_rules(session, "casino_war")
    assert (now["min_bet"], now["max_bet"]) == (200, 90_000)  # neither change lost
    assert_audited_in_sequence(session)


def test_changes_to_an_existing_table_at_once_lose_nothing(
    app: Flask, session: Session, operators: tuple[int, int]
) -> None:
    olga, oscar = operators
    settings.update_table(session, olga, "casino_war", {"min_bet": 100})
    for round_ in range(4):
        outcomes = race(
            app,
            [
                lambda s, r=round_: settings.update_table(
                    s, olga, "casino_war", {"min_bet": (3 + r) * 100}
                ),
                lambda s, r=round_: settings.update_table(
                    s, oscar, "casino_war", {"tie_payout": 8 + r}
                ),
            ],
        )
        assert outcomes == Counter(ok=2), outcomes
        now = settings.table_rules(session, "casino_war")
        assert (now["min_bet"], now["tie_payout"]) == ((3 + round_) * 100, 8 + round_)
    assert_audited_in_sequence(session)


def assert_audited_in_sequence(session: Session) -> None:
    """Each table change's ``before`` is exactly the previous change's ``after``."""
    import json

    with session.begin():
        changes = session.scalars(
            select(AuditEntry.data)
            .where(AuditEntry.action == "table.updated")
            .order_by(AuditEntry.seq)
        ).all()
    entries = [json.loads(data) for data in changes]
    for earlier, later in zip(entries, entries[1:], strict=False):
        assert later["before"] == earlier["after"]


# --- one Idempotency-Key sent at once -----------------------------------------------------------
# A client that retries before its first answer arrives sends one key and body twice at once:
# whichever copy waits for the other must be given the first answer, not the refusal it would
# get for the state the first one left (a success reported as a failure gets done twice).


def sent_at_once(
    app: Flask, copies: int, use_case: Callable[..., Any], *args: Any, **kwargs: Any
) -> Any:
    """Call ``use_case(session, *args, **kwargs)`` ``copies`` times at once, and return the one
    answer all got: each copy must end ``ok``, all with the same answer."""
    outcomes = race_answers(app, [lambda s: use_case(s, *args, **kwargs)] * copies)
    assert Counter(how for how, _ in outcomes) == Counter(ok=copies), outcomes
    first = outcomes[0][1]
    assert all(answer == first for _, answer in outcomes), outcomes
    return first


def count_of(session: Session, statement: Any) -> int:
    with session.begin():
        return int(session.scalar(statement) or 0)


def operator_of_trial(session: Session, trial: int) -> int:
    """An operator of the trial's own: one operator adjusts at most the four-eyes limit alone a
    day, and each trial moves most of it."""
    return accounts.create_operator(session, f"trial-{trial}", PASSWORD).id


def test_one_top_up_sent_twice_at_once_tops_up_once_and_answers_both_alike(
    app: Flask, session: Session, register: Callable[..., int]
) -> None:
    for trial in range(3):
        player = register()
        operator = operator_of_trial(session, trial)
        money.adjust(session, operator, player, "chips", -95_000, "below the top-up threshold")
        answer = sent_at_once(
            app, 2, money.topup, player, "chips", idempotency_key=f"top-up-{trial}"
        )
        assert answer == money.balances(session, player)
        topups = select(func.count(Transfer.id)).where(
            Transfer.user_id == player, Transfer.kind == "topup"
        )
        assert count_of(session, topups) == 1
    assert_books_clean(session)


def test_one_decision_sent_at_once_settles_the_tie_once_and_answers_all_alike(
    app: Flask, session: Session, player: int, rig: Callable[[int, list[str]], bytes]
) -> None:
    for trial in range(3):
        rig(player, ["tie"])
        tied = rounds.place_casino_war_bet(session, player, 100)
        assert tied.status == "awaiting_decision"
        answer = sent_at_once(
            app,
            12,
            rounds.decide_casino_war,
            player,
            tied.id,
            "war",
            idempotency_key=f"war-{trial}",
        )
        assert answer.status == "settled"
        assert answer.balances == money.balances(session, player)
        fairness.rotate(session, player)  # the next trial rigs a pair of its own
    assert_books_clean(session)


def test_one_move_sent_at_once_is_made_once_and_answers_all_alike(
    app: Flask, session: Session, player: int
) -> None:
    for trial in range(3):
        game = prisoners_game_awaiting_a_move(session, player)
        pending = game.pending
        cards = sorted(pending.options)[: pending.count]
        answer = sent_at_once(
            app, 8, rounds.sota_move, player, game.id, cards, idempotency_key=f"move-{trial}"
        )
        assert moves_made(session, game.id) == 1
        assert answer.balances == money.balances(session, player)
        while answer.status == "awaiting_move":  # finish it, so the next game may start
            pending = answer.pending
            answer = rounds.sota_move(
                session, player, game.id, sorted(pending.options)[: pending.count]
            )
    assert_books_clean(session)


def test_one_numbered_move_sent_twice_at_once_without_a_key_is_laid_once(
    app: Flask, session: Session, player: int
) -> None:
    """Its cards fit the next choice too, so only the number tells the copy from a next move."""
    for _ in range(3):
        game, move = game_repeating_a_move(session, player)
        lay = functools.partial(rounds.sota_move, user_id=player, round_id=game.id, cards=move)
        outcomes = race_answers(app, [functools.partial(lay, move=0)] * 2)
        assert Counter(how for how, _ in outcomes) == Counter(ok=1, move_not_due=1), outcomes
        laid = next(answer for how, answer in outcomes if how == "ok")
        assert moves_made(session, game.id) == 1
        assert laid.pending.move == 1 and laid.balances == money.balances(session, player)
        while laid.status == "awaiting_move":  # finish it, so that the pair may be rotated
            pending = laid.pending
            laid = rounds.sota_move(
                session, player, game.id, pending.options[: pending.count], move=pending.move
            )
        fairness.rotate(session, player)  # the next trial plants a pair of its own
    assert_books_clean(session)


def test_one_debit_sent_at_once_is_applied_once_and_answers_all_alike(
    app: Flask, session: Session, register: Callable[..., int]
) -> None:
    for trial in range(3):
        player = register()
        debit = (operator_of_trial(session, trial), player, "chips", -60_000, "chargeback")
        answer = sent_at_once(app, 12, money.adjust, *debit, idempotency_key=f"debit-{trial}")
        assert answer.chips == 40_000 == money.balances(session, player).chips
    assert_books_clean(session)


def test_one_operators_adjustments_sent_at_once_count_each_other_toward_the_limit(
    app: Flask, session: Session, operators: tuple[int, int], register: Callable[..., int]
) -> None:
    olga, _ = operators
    players = [register() for _ in range(4)]
    calls: list[Call] = [
        (lambda s, p=p: money.adjust(s, olga, p, "sweets", 600, "goodwill")) for p in players
    ]
    # 600 alone is within the limit of 1,000 sweets; a second would take olga's day over it.
    assert race(app, calls) == Counter(ok=1, approval_required=3)
    assert sum(money.balances(session, p).sweets for p in players) == 4 * 100 + 600
    assert_books_clean(session)


def test_one_proposal_and_one_approval_sent_at_once_each_happen_once(
    app: Flask, session: Session, operators: tuple[int, int], player: int
) -> None:
    olga, oscar = operators
    change = (olga, player, "chips", 250_000, "jackpot refund")
    proposal = sent_at_once(app, 8, money.propose_adjustment, *change, idempotency_key="propose-1")
    assert count_of(session, select(func.count(Approval.id))) == 1
    approval = (oscar, proposal.id, True, "seen the ticket")
    decided = sent_at_once(app, 8, approvals.decide, *approval, idempotency_key="approve-1")
    assert decided.status == "approved"
    assert money.balances(session, player).chips == 350_000  # credited once
    # Later retries: the same body is answered alike, another is refused; nothing moves.
    assert approvals.decide(session, *approval, idempotency_key="approve-1") == decided
    with pytest.raises(IdempotencyMismatch):
        approvals.decide(session, oscar, proposal.id, False, "no", idempotency_key="approve-1")
    assert money.balances(session, player).chips == 350_000
    assert_books_clean(session)


def test_two_operators_proposing_one_promotion_at_once_make_one_proposal(
    app: Flask, session: Session, operators: tuple[int, int], register: Callable[..., int]
) -> None:
    for _trial in range(3):
        player = register()
        outcomes = race(
            app,
            [
                lambda s, who=who, user=player: accounts.propose_operator(s, who, user)
                for who in operators
            ],
        )
        assert outcomes == Counter(ok=1, proposal_pending=1), outcomes
        made = select(func.count(Approval.id)).where(Approval.subject == f"user:{player}")
        assert count_of(session, made) == 1
    assert_audited_in_sequence(session)


def test_two_operators_proposing_one_table_change_at_once_make_one_proposal(
    app: Flask, session: Session, operators: tuple[int, int]
) -> None:
    for decks in (2, 3, 4):
        change = {"decks": decks}
        outcomes = race(
            app,
            [
                lambda s, who=who, change=change: settings.propose_table_change(
                    s, who, "casino_war", change
                )
                for who in operators
            ],
        )
        assert outcomes == Counter(ok=1, proposal_pending=1), outcomes
    assert count_of(session, select(func.count(Approval.id))) == 3


# --- player keys --------------------------------------------------------------------------------


def test_two_accounts_registering_one_key_at_once_get_it_and_a_conflict(
    app: Flask, session: Session, register: Callable[..., int]
) -> None:
    for _ in range(6):
        first, second = register(), register()
        public = fairness_core.public_key_hex(Ed25519PrivateKey.generate())
        outcomes = race(
            app,
            [lambda s, u=u, k=public: player_keys.register_key(s, u, k) for u in (first, second)],
        )
        assert outcomes == Counter(ok=1, conflict=1), outcomes
    with session.begin():
        assert session.scalar(select(func.count(PlayerKey.id))) == 6
    assert_books_clean(session)


def test_two_bets_signed_for_one_nonce_at_once_deal_one_and_refuse_the_other_as_a_conflict(
    app: Flask, session: Session, player: int, register: Callable[..., int]
) -> None:
    """Two tabs sign a bet each for the active pair's next nonce and send them at once: one is
    dealt on it, the other names a nonce taken since (409 nonce_not_next) and changes nothing;
    a bet racing the player's key registration is dealt before it or refused unsigned."""
    key = Ed25519PrivateKey.generate()
    key_id = player_keys.register_key(session, player, fairness_core.public_key_hex(key))
    assert key_id.current_key_id is not None
    for _ in range(4):
        pair = fairness.active_seed_pair(session, player)
        shown = {
            "seed_pair_id": pair.seed_pair_id,
            "next_nonce": pair.next_nonce,
            "commitment_document": pair.commitment_document,
        }
        signed = [
            bet_signature(
                key,
                key_id.current_key_id,
                shown,
                "sota",
                {"stake": stake},
                played_rules("sota", preset="nordic"),
            )
            for stake in (1, 2)
        ]
        outcomes = race(
            app,
            [
                lambda s, stake=stake, sig=sig: rounds.play_sota(
                    s, player, stake, None, "nordic", **sig
                )
                for stake, sig in zip((1, 2), signed, strict=True)
            ],
        )
        assert outcomes == Counter(ok=1, nonce_not_next=1), outcomes
        assert fairness.active_seed_pair(session, player).next_nonce == pair.next_nonce + 1
    other = register()
    outcomes = race(
        app,
        [
            lambda s: rounds.play_sota(s, other, 1, None, "nordic"),
            lambda s: player_keys.register_key(
                s, other, fairness_core.public_key_hex(Ed25519PrivateKey.generate())
            ),
        ],
    )
    assert not crashes(outcomes) and outcomes["ok"] >= 1, outcomes
    assert set(outcomes) <= {"ok", "signature_required"}, outcomes
    assert_books_clean(session)


# --- usernames ----------------------------------------------------------------------------------


def test_two_sign_ups_of_one_name_at_once_open_one_account_and_refuse_the_other(
    app: Flask, session: Session
) -> None:
    for trial in range(6):
        # The same name, or the same name in other letter case (names are unique ignoring case).
        names = (f"twin{trial}", f"twin{trial}" if trial % 2 else f"TWIN{trial}")
        outcomes = race(
            app, [lambda s, name=name: accounts.register(s, name, PASSWORD) for name in names]
        )
        assert outcomes == Counter(ok=1, username_taken=1), outcomes
    with session.begin():
        assert session.scalar(select(func.count(User.id))) == 6
    assert_books_clean(session)


# --- the service's signing key ------------------------------------------------------------------


def test_the_first_signatures_of_a_new_key_at_once_register_it_once(
    app: Flask, session: Session
) -> None:
    # A fresh database here; in production, every worker's first requests after a new key is
    # deployed: each registers the key in the transaction of the first thing it signs.
    outcomes = race(
        app, [lambda s, n=n: accounts.register(s, f"first{n}", PASSWORD) for n in range(8)]
    )
    assert outcomes == Counter(ok=8), outcomes
    with session.begin():
        assert session.scalar(select(func.count(SigningKey.id))) == 1
        created = select(func.count(AuditEntry.seq)).where(AuditEntry.action == "key.created")
        assert session.scalar(created) == 1
    assert_books_clean(session)


def test_workers_started_at_once_with_a_new_key_sign_its_first_checkpoint_once(
    app: Flask, session: Session
) -> None:
    # After `flask keys rotate` and a restart, every worker's first ask for a proof finds the
    # latest checkpoint signed by the retired key, with nothing logged since.
    accounts.register(session, "alice", PASSWORD)
    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    old = audit.sign_if_due(session)  # the process not yet restarted: the old key's
    assert old is not None
    renewed = create_app(dict(app.config))
    try:
        outcomes = race(renewed, [audit.sign_if_due for _ in range(8)])
        new_key = renewed.extensions["sota_casino.context"].public_key_hex
    finally:
        renewed.extensions["sota_casino.engine"].dispose()
    assert outcomes == Counter(ok=8), outcomes
    with session.begin():
        signers = session.scalars(
            select(AuditCheckpoint.public_key_hex).order_by(AuditCheckpoint.size)
        ).all()
        taking_over = select(func.count(AuditEntry.seq)).where(AuditEntry.action == "key.in_use")
        assert session.scalar(taking_over) == 1
    assert signers == [old["public_key_hex"], new_key]
    assert_books_clean(session)


# --- the standing checks' alerts ----------------------------------------------------------------
# Every process runs the standing checks' loop, and each step ends with a scan of the alert
# rules: the scans of several workers meet.


def test_scans_at_once_raise_each_alert_once(
    app: Flask,
    session: Session,
    operators: tuple[int, int],
    player: int,
    rig: Callable[[int, list[str]], bytes],
) -> None:
    olga, _ = operators
    alerts.create_rule(session, olga, "large_win", "chips", 50, 24)
    alerts.create_rule(session, olga, "check_failed", None, 0, 24)
    for trial in range(3):
        rig(player, ["win"])
        won = rounds.place_casino_war_bet(session, player, 100)
        with session.begin():
            session.merge(
                CheckRun(name="ledger", size=0, ok=False, checked_at=datetime.now(UTC))
            )  # a failed verdict, found anew at each trial
        outcomes = race(app, [alerts.scan] * 6)
        assert outcomes == Counter(ok=6), outcomes
        with session.begin():
            raised = Counter(session.scalars(select(Alert.subject)))
            logged = select(func.count(AuditEntry.seq)).where(AuditEntry.action == "alert.raised")
            entries = session.scalar(logged)
        assert raised[f"round:{won.id}"] == 1, raised
        assert raised["check:ledger"] == trial + 1, raised
        assert entries == raised.total(), (entries, raised)
        fairness.rotate(session, player)  # the next trial rigs a pair of its own
    assert_books_clean(session)


# --- the house's reports --------------------------------------------------------------------------


def test_reports_storing_the_same_closed_day_at_once_store_it_once(
    app: Flask,
    session: Session,
    player: int,
    rig: Callable[[int, list[str]], bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rig(player, ["tie", "win", "lose"])
    for bet, tie_bet in ((500, 100), (300, 0), (200, 100)):
        opened = rounds.place_casino_war_bet(session, player, bet, tie_bet)
        if opened.status == "awaiting_decision":
            rounds.decide_casino_war(session, player, opened.id, "war")
    rounds.play_sota(session, player, 5)
    tomorrow = datetime.combine(datetime.now(UTC).date() + timedelta(days=1), time(2), UTC)
    monkeypatch.setattr(reports, "_now", lambda: tomorrow)
    expected = reports.house_summary(session)  # stores today's two rows (one per game)
    for _ in range(3):
        with session.begin():
            session.execute(delete(ClosedDayTotal))
        answers = race_answers(
            app,
            [lambda s: day_totals.store_closed_days(s, tomorrow)] * 3 + [reports.house_summary] * 3,
        )
        assert [how for how, _ in answers] == ["ok"] * 6, answers
        stored = [answer for answer in answers[:3] if isinstance(answer[1], int)]
        assert sum(count for _, count in stored) <= 2
        assert all(summary == expected for _, summary in answers[3:])
        assert count_of(session, select(func.count()).select_from(ClosedDayTotal)) == 2
        assert reports.house_summary(session) == expected
    with session.begin():
        session.execute(delete(ClosedDayTotal))
    answers = race_answers(app, [lambda s: day_totals.store_closed_days(s, tomorrow)] * 6)
    assert [how for how, _ in answers] == ["ok"] * 6, answers
    assert sum(stored for _, stored in answers) == 2  # each row inserted by one of them
    assert_books_clean(session)


# --- contention that outlasts every retry ---------------------------------------------------------


class Deadlocked(Exception):
    """A driver's error as PostgreSQL reports a deadlock (or, with ``40001``, a failure to
    serialize): what the transaction runner retries."""

    def __init__(self, sqlstate: str) -> None:
        super().__init__(f"the database says {sqlstate}")
        self.sqlstate = sqlstate


@pytest.mark.parametrize("sqlstate", ["40P01", "40001"])
def test_a_bet_that_deadlocks_at_every_try_is_a_503_with_retry_after_and_moves_nothing(
    app: Flask, session: Session, player: int, sqlstate: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each try's first write fails as a deadlock (or a failure to serialize) would. Once the
    retries run out, the race is no bug: the API answers 503 with ``Retry-After`` and the page
    its "closed for a moment" 503, never a 500, and nothing was written. The waits between the
    tries are noted, not slept (1.3 s a test)."""
    waits: list[float] = []
    monkeypatch.setattr(tx, "time", SimpleNamespace(sleep=waits.append))
    token, _ = accounts.start_session(session, player, kind="api")
    web_token, _ = accounts.start_session(session, player)
    held = money.balances(session, player)
    client = app.test_client()
    with client.session_transaction() as cookie:
        cookie["sid"], cookie["csrf"] = web_token, "known-token"
    engine = app.extensions["sota_casino.engine"]
    tries = 0

    def deadlock(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        nonlocal tries
        if statement.lstrip().upper().startswith("INSERT INTO ROUNDS"):
            tries += 1
            raise sa.exc.OperationalError(statement, None, Deadlocked(sqlstate))

    sa.event.listen(engine, "before_cursor_execute", deadlock)
    try:
        answer = client.post(
            "/api/v1/casino-war/rounds",
            json={"bet": 100},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert answer.status_code == 503, answer.get_data(as_text=True)[:300]
        assert answer.get_json()["error"]["code"] == "unavailable"
        assert "try again" in answer.get_json()["error"]["message"]
        assert int(answer.headers["Retry-After"]) > 0
        assert tries == tx.ATTEMPTS
        # Each wait twice the one before, from 5 ms.
        assert waits == [0.005 * 2**attempt for attempt in range(tx.ATTEMPTS - 1)]
        page = client.post("/casino-war/rounds", data={"csrf_token": "known-token", "bet": "1"})
        assert page.status_code == 503, page.get_data(as_text=True)[:300]
        assert int(page.headers["Retry-After"]) > 0
        assert tries == 2 * tx.ATTEMPTS
    finally:
        sa.event.remove(engine, "before_cursor_execute", deadlock)
    assert money.balances(session, player) == held
    with session.begin():
        assert session.scalar(select(func.count()).select_from(Round)) == 0
    assert_books_clean(session)


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_two_operators_demoting_each_other_at_once_leave_one_of_them_an_operator(
    app: Flask, session: Session, operators: tuple[int, int]
) -> None:
    """Olga makes Oscar an auditor while Oscar makes Olga one. Each change checked that its
    operator was one, then wrote the other's row: on PostgreSQL both went through (neither
    read the other's write), so each had acted after the other had taken away the right to,
    and no operator was left. An operator's right to act is now read under a share lock, which
    the other's change of that row waits for: one of the two is refused. (SQLite lets one
    writer in at a time, so there the second change always saw the first.)

    Deterministic: Olga's change stops once it has checked her, before it locks Oscar's row,
    until Oscar's change has either ended or waits for a lock."""
    olga, oscar = operators
    engine = app.extensions["sota_casino.engine"]
    olgas_thread: list[int] = []
    olga_held, oscar_done_or_waiting = threading.Event(), threading.Event()

    @sa.event.listens_for(engine, "before_cursor_execute")
    def hold_olga_before_the_target(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if threading.get_ident() in olgas_thread and statement.rstrip().endswith("FOR UPDATE"):
            olgas_thread.clear()
            olga_held.set()
            assert oscar_done_or_waiting.wait(timeout=60)

    def olgas_change() -> tuple[str, Any]:
        olgas_thread.append(threading.get_ident())
        return answer_of(app, lambda own: accounts.set_role(own, olga, oscar, "auditor"))

    def oscars_change() -> tuple[str, Any]:
        try:
            return answer_of(app, lambda own: accounts.set_role(own, oscar, olga, "auditor"))
        finally:
            oscar_done_or_waiting.set()

    with ThreadPoolExecutor(2) as pool:
        olgas = pool.submit(olgas_change)
        assert olga_held.wait(timeout=60)
        oscars = pool.submit(oscars_change)
        while not oscars.done() and not waiting_for_a_lock(session):
            threading.Event().wait(0.01)
        oscar_done_or_waiting.set()
        outcomes = sorted(how for how, _ in (olgas.result(), oscars.result()))
    sa.event.remove(engine, "before_cursor_execute", hold_olga_before_the_target)
    assert outcomes == ["forbidden", "ok"]
    with session.begin():
        roles = session.scalars(select(User.role).where(User.id.in_(operators))).all()
    assert sorted(roles) == ["auditor", "operator"]


def waiting_for_a_lock(session: Session) -> bool:
    """Whether a connection to this PostgreSQL database waits for a lock now."""
    with session.begin():
        waiting = session.scalar(
            sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            )
        )
    return bool(waiting)
