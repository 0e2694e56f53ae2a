"""A Hypothesis state machine drives the money services in random orders; the books must hold
after every step: transfers balance, balances equal postings, no player below zero, escrow
equals the open rounds' stakes."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import initialize
from hypothesis.stateful import invariant
from hypothesis.stateful import precondition
from hypothesis.stateful import rule
from hypothesis.stateful import run_state_machine_as_test
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core.errors import ApprovalRequired
from sota_casino.core.errors import CasinoError
from sota_casino.core.errors import InsufficientFunds
from sota_casino.models import Account
from sota_casino.services import accounts
from sota_casino.services import fairness as fairness_service
from sota_casino.services import ledger
from sota_casino.services import money
from sota_casino.services import rounds

PASSWORD = "correct horse battery"
names = itertools.count()


def test_the_books_hold_after_every_step_of_random_play(session: Session) -> None:
    class Casino(RuleBasedStateMachine):
        @initialize()
        def staff(self) -> None:
            self.operator = accounts.create_operator(session, f"operator{next(names)}", PASSWORD).id
            self.players: list[int] = []
            self.open_rounds: dict[int, int] = {}  # round id -> player

        @rule()
        def register(self) -> None:
            self.players.append(accounts.register(session, f"player{next(names)}", PASSWORD).id)

        @precondition(lambda self: self.players)
        @rule(data=st.data(), chips=st.integers(1, 500), tie=st.sampled_from([0, 0, 100, 500]))
        def bet(self, data: st.DataObject, chips: int, tie: int) -> None:
            user = data.draw(st.sampled_from(self.players))
            try:
                played = rounds.place_casino_war_bet(session, user, chips * 100, tie)
            except InsufficientFunds:
                return
            if played.status == "awaiting_decision":
                self.open_rounds[played.id] = user

        @precondition(lambda self: self.open_rounds)
        @rule(data=st.data(), choice=st.sampled_from(["war", "surrender"]))
        def decide(self, data: st.DataObject, choice: str) -> None:
            round_id = data.draw(st.sampled_from(sorted(self.open_rounds)))
            try:
                rounds.decide_casino_war(session, self.open_rounds[round_id], round_id, choice)
            except InsufficientFunds:
                return
            del self.open_rounds[round_id]

        @precondition(lambda self: self.players)
        @rule(data=st.data(), stake=st.integers(1, 100))
        def sota_game(self, data: st.DataObject, stake: int) -> None:
            user = data.draw(st.sampled_from(self.players))
            try:
                rounds.play_sota(session, user, stake, preset="kids_15_min")
            except InsufficientFunds:
                return

        @precondition(lambda self: self.players)
        @rule(
            data=st.data(),
            amount=st.integers(-200_000, 200_000).filter(bool),
            currency=st.sampled_from(["chips", "sweets"]),
        )
        def adjust(self, data: st.DataObject, amount: int, currency: str) -> None:
            user = data.draw(st.sampled_from(self.players))
            try:
                money.adjust(session, self.operator, user, currency, amount, "stateful test")
            except (InsufficientFunds, ApprovalRequired):  # refused, nothing moved
                return

        @precondition(lambda self: self.players)
        @rule(data=st.data(), currency=st.sampled_from(["chips", "sweets"]))
        def topup(self, data: st.DataObject, currency: str) -> None:
            try:
                money.topup(session, data.draw(st.sampled_from(self.players)), currency)
            except CasinoError:
                return

        @precondition(lambda self: self.players)
        @rule(data=st.data())
        def rotate(self, data: st.DataObject) -> None:
            user = data.draw(st.sampled_from(self.players))
            try:
                fairness_service.rotate(session, user)
            except CasinoError:
                assert user in self.open_rounds.values()

        @invariant()
        def books_balance(self) -> None:
            report = ledger.check(session)
            assert report.ok, report.problems
            with session.begin():
                totals = session.execute(
                    select(Account.currency, func.sum(Account.balance)).group_by(Account.currency)
                ).all()
                assert all(total == 0 for _, total in totals)
                lowest = session.scalar(
                    select(func.min(Account.balance)).where(Account.kind == "player")
                )
                assert lowest is None or lowest >= 0

    run_state_machine_as_test(
        Casino,
        settings=settings(
            max_examples=6,
            stateful_step_count=20,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )
