"""Casino War through the service layer: stakes, escrow, settlement, receipts, audit."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from service_support import adjust_chips
from service_support import assert_books_clean
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core import fairness
from sota_casino.core.errors import InsufficientFunds
from sota_casino.core.errors import InvalidBet
from sota_casino.core.errors import InvalidInput
from sota_casino.core.errors import NotFound
from sota_casino.core.errors import RoundOpen
from sota_casino.core.errors import RoundSettled
from sota_casino.models import AuditEntry
from sota_casino.models import Round
from sota_casino.services import fairness as fairness_service
from sota_casino.services import ledger
from sota_casino.services import money
from sota_casino.services import rounds
from sota_casino.services.results import Balances
from sota_casino.services.results import War

START = 100_000  # the sign-up grant: 1,000 chips


def test_signup_grants_chips_and_sweets_from_issuance(session: Session, player: int) -> None:
    assert money.balances(session, player) == Balances(chips=START, sweets=100)
    with session.begin():
        assert ledger.balance(session, "issuance:chips") == -START
    assert_books_clean(session)


def test_a_won_round_pays_even_money_and_signs_its_receipt(
    session: Session, player: int, rig: Callable
) -> None:
    rig(player, ["win"])
    round_ = rounds.place_casino_war_bet(session, player, 1_000)
    assert (round_.status, round_.outcome, round_.net) == ("settled", "win", 1_000)
    assert round_.balances.chips == START + 1_000
    receipt = rounds.receipt(session, player, round_.id)
    public = fairness_service.public_key_info(session).public_key_hex
    assert fairness.verify_signature(public, receipt["document"], receipt["signature"])
    assert receipt["document"]["cards"] == [round_.player_card, round_.dealer_card]
    assert receipt["document"]["nonce"] == 0 and receipt["document"]["payout"] == 2_000
    assert_books_clean(session)


def test_a_lost_round_moves_the_ante_to_the_house(
    session: Session, player: int, rig: Callable
) -> None:
    rig(player, ["lose"])
    round_ = rounds.place_casino_war_bet(session, player, 1_000, 500)
    assert (round_.outcome, round_.net) == ("lose", -1_500)
    with session.begin():
        assert ledger.balance(session, ledger.house_account(player, "chips")) == 1_500
        assert ledger.balance(session, ledger.escrow_account(player, "chips")) == 0
    assert_books_clean(session)


def test_a_tie_waits_then_surrender_returns_half_the_ante_and_pays_the_tie_bet(
    session: Session, player: int, rig: Callable
) -> None:
    rig(player, ["tie"])
    opened = rounds.place_casino_war_bet(session, player, 1_000, 200)
    assert opened.status == "awaiting_decision" and opened.payout is None
    assert opened.balances.chips == START - 1_200
    with session.begin():
        assert ledger.balance(session, ledger.escrow_account(player, "chips")) == 1_200
    assert_books_clean(session)  # escrow equals the open round's stakes
    settled = rounds.decide_casino_war(session, player, opened.id, "surrender")
    assert settled.outcome == "surrender"
    assert settled.net == -500 + 10 * 200
    assert settled.balances.chips == START - 500 + 2_000
    assert_books_clean(session)


def test_going_to_war_escrows_the_raise_and_deals_burn_and_war_cards(
    session: Session, player: int, rig: Callable
) -> None:
    seed = rig(player, ["tie"])
    opened = rounds.place_casino_war_bet(session, player, 1_000)
    settled = rounds.decide_casino_war(session, player, opened.id, "war")
    with session.begin():
        client_seed = session.get(Round, opened.id).receipt["client_seed"]
    cards = fairness.shuffled_shoe(fairness.Seeds(seed, client_seed, 0), "standard52", 6, 7)
    assert settled.war == War(burned=list(cards[2:5]), player_card=cards[5], dealer_card=cards[6])
    assert settled.raise_ == 1_000
    expected = {"war_win": 1_000, "war_tie": 1_000, "war_lose": -2_000}[settled.outcome]
    assert settled.net == expected
    assert settled.balances.chips == START + expected
    assert_books_clean(session)


def test_war_without_funds_for_the_raise_is_refused_and_changes_nothing(
    session: Session, player: int, rig: Callable
) -> None:
    rig(player, ["tie"])
    opened = rounds.place_casino_war_bet(session, player, 50_000)
    before = money.balances(session, player)
    with session.begin():
        audit_size = session.scalar(select(func.count(AuditEntry.seq)))
    # Spend the rest so the raise cannot be covered.
    adjust_chips(session, player, before.chips, 100)
    with pytest.raises(InsufficientFunds) as refused:
        rounds.decide_casino_war(session, player, opened.id, "war")
    # What the table says in chips, without asking the services again.
    assert refused.value.details == {"currency": "chips", "held": 100, "needed": 50_000}
    still = rounds.get_round(session, player, opened.id)
    assert still.status == "awaiting_decision"
    with session.begin():
        assert session.scalar(select(func.count(AuditEntry.seq))) == audit_size
    assert rounds.decide_casino_war(session, player, opened.id, "surrender").net == -25_000


def test_a_decision_on_a_settled_round_is_a_conflict(
    session: Session, player: int, rig: Callable
) -> None:
    rig(player, ["win"])
    round_ = rounds.place_casino_war_bet(session, player, 100)
    with pytest.raises(RoundSettled):
        rounds.decide_casino_war(session, player, round_.id, "war")


def test_another_players_round_is_not_found(
    session: Session, player: int, register: Callable, rig: Callable
) -> None:
    rig(player, ["tie"])
    round_ = rounds.place_casino_war_bet(session, player, 100)
    stranger = register("mallory")
    for call in (
        lambda: rounds.get_round(session, stranger, round_.id),
        lambda: rounds.decide_casino_war(session, stranger, round_.id, "war"),
        lambda: rounds.receipt(session, stranger, round_.id),
    ):
        with pytest.raises(NotFound):
            call()


@pytest.mark.parametrize("bet", [0, -100, 150, 10**20, 1.5, "100", True, None, 50_100], ids=repr)
def test_invalid_bets_are_refused_and_move_nothing(session: Session, player: int, bet) -> None:
    with pytest.raises(InvalidBet):
        rounds.place_casino_war_bet(session, player, bet)
    assert money.balances(session, player).chips == START
    with session.begin():
        assert session.scalar(select(func.count(Round.id))) == 0
    assert fairness_service.active_seed_pair(session, player).next_nonce == 0


def test_a_bet_larger_than_the_balance_is_refused_without_using_a_nonce(
    session: Session, player: int
) -> None:
    adjust_chips(session, player, START, 100)
    with pytest.raises(InsufficientFunds) as refused:
        rounds.place_casino_war_bet(session, player, 200)
    assert refused.value.details == {"currency": "chips", "held": 100, "needed": 200}
    assert fairness_service.active_seed_pair(session, player).next_nonce == 0
    assert_books_clean(session)


def test_a_bet_outside_the_limits_says_the_limits(session: Session, player: int) -> None:
    with pytest.raises(InvalidBet) as refused:
        rounds.place_casino_war_bet(session, player, 100, 60_000)
    assert refused.value.details == {
        "field": "tie_bet",
        "min_bet": 100,
        "max_bet": 50_000,
        "tie_payout": 10,
    }


def test_rotation_is_refused_while_a_round_is_open_then_reveals_the_seed(
    session: Session, player: int, rig: Callable
) -> None:
    seed = rig(player, ["tie"])
    opened = rounds.place_casino_war_bet(session, player, 100)
    with pytest.raises(RoundOpen):
        fairness_service.rotate(session, player)
    rounds.decide_casino_war(session, player, opened.id, "surrender")
    before = fairness_service.active_seed_pair(session, player)
    rotated = fairness_service.rotate(session, player, "my own seed")
    reveal = rotated.revealed["document"]
    assert reveal["server_seed"] == seed.hex() and reveal["rounds"] == 1
    assert rotated.active.commitment == before.next_commitment
    assert rotated.active.client_seed == "my own seed"
    assert rotated.active.next_nonce == 0
    bundle = fairness_service.bundle(session, player, before.seed_pair_id)
    assert [r["document"]["nonce"] for r in bundle["rounds"]] == [0]
    assert_books_clean(session)


def test_bad_client_seeds_are_refused(session: Session, player: int) -> None:
    for bad in ("", "x" * 65, 7):
        with pytest.raises(InvalidInput):
            fairness_service.rotate(session, player, bad)


def test_an_open_round_resumes_after_a_restart_with_its_original_cards(
    app, session: Session, player: int, rig: Callable
) -> None:
    from sota_casino.factory import create_app

    rig(player, ["tie"])
    opened = rounds.place_casino_war_bet(session, player, 100)
    session.close()
    app.extensions["sota_casino.engine"].dispose()
    restarted = create_app(dict(app.config))
    with restarted.app_context():
        fresh = restarted.extensions["sota_casino.sessionmaker"]()
        settled = rounds.decide_casino_war(fresh, player, opened.id, "war")
        assert (settled.player_card, settled.dealer_card) == (
            opened.player_card,
            opened.dealer_card,
        )
        assert_books_clean(fresh)
        fresh.close()
    restarted.extensions["sota_casino.engine"].dispose()
