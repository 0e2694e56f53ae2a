"""Sota through the service layer: stakes in sweets, presets and custom rules, Prisoners of War
moves across requests, receipts that replay."""

from __future__ import annotations

from dataclasses import replace

import pytest
from service_support import assert_books_clean
from service_support import game_repeating_a_move
from service_support import moves_made
from service_support import prisoners_game_awaiting_a_move
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core import sota
from sota_casino.core.errors import InvalidAction
from sota_casino.core.errors import InvalidBet
from sota_casino.core.errors import InvalidInput
from sota_casino.core.errors import InvalidRules
from sota_casino.core.errors import MoveNotDue
from sota_casino.core.errors import RoundOpen
from sota_casino.core.errors import RoundSettled
from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.models import AuditEntry
from sota_casino.services import audit
from sota_casino.services import fairness as fairness_service
from sota_casino.services import money
from sota_casino.services import rounds
from sota_casino.services import settings

SWEETS = 100


@pytest.mark.parametrize("preset", ["nordic", "english", "syrian", "kids_15_min"])
def test_a_preset_game_settles_at_once_and_pays_by_the_winner(
    session: Session, player: int, preset: str
) -> None:
    game = rounds.play_sota(session, player, 10, preset=preset)
    assert game.status == "settled" and game.tricks
    rules = sota.SotaRules.from_preset(preset)
    assert game.rules == rules.to_dict()
    assert game.payout == sota.payout(rules, game.winner, 10)
    assert game.balances.sweets == SWEETS - 10 + game.payout
    assert_books_clean(session)


def test_custom_rules_with_three_seats_pay_twice_the_stake_on_a_win(
    session: Session, player: int
) -> None:
    game = rounds.play_sota(session, player, 5, rules={"seats": 3, "gather": "shuffled"})
    assert game.seats == 3 and len(game.tricks[0]["laid"]) == 3
    assert game.net == {0: 10}.get(game.winner, 0 if game.winner == "draw" else -5)


def test_the_receipt_replays_from_the_revealed_seed(session: Session, player: int) -> None:
    game = rounds.play_sota(session, player, 3, rules={"won_cards": "won_pile"})
    document = rounds.receipt(session, player, game.id)["document"]
    revealed = fairness_service.rotate(session, player).revealed["document"]
    seeds = Seeds(bytes.fromhex(revealed["server_seed"]), document["client_seed"], 0)
    replay = sota.play_game(sota.SotaRules.from_dict(document["rules"]), stream=Stream(seeds))
    assert list(replay.deck) == document["cards"]
    assert replay.receipt_outcome() == document["outcome"]


@pytest.mark.parametrize(
    ("rules", "preset"),
    [
        ({"seats": 5}, None),
        ({"deck": "tarot"}, None),
        ({"colour": "red"}, None),
        (None, "blitz"),
        ({"seats": 2}, "nordic"),
        ("nordic", None),
    ],
)
def test_unknown_rules_are_refused_and_move_nothing(
    session: Session, player: int, rules: object, preset: object
) -> None:
    with pytest.raises(InvalidRules):
        rounds.play_sota(session, player, 5, rules=rules, preset=preset)
    assert money.balances(session, player).sweets == SWEETS
    assert fairness_service.active_seed_pair(session, player).next_nonce == 0


@pytest.mark.parametrize("stake", [0, -1, 101, 2.5, "5", True, None])
def test_stakes_outside_the_table_limits_are_refused(
    session: Session, player: int, stake: object
) -> None:
    with pytest.raises(InvalidBet):
        rounds.play_sota(session, player, stake, preset="nordic")
    assert money.balances(session, player).sweets == SWEETS


def test_a_table_limited_to_presets_refuses_custom_rules(
    session: Session, player: int, register
) -> None:
    from sota_casino.services import accounts

    operator = accounts.create_operator(session, "olga", "a long enough secret").id
    settings.update_table(
        session, operator, "sota", {"custom_rules": False, "presets": ["english"]}
    )
    with pytest.raises(InvalidRules):
        rounds.play_sota(session, player, 5, rules={"seats": 2})
    with pytest.raises(InvalidRules):
        rounds.play_sota(session, player, 5, preset="nordic")
    assert rounds.play_sota(session, player, 5).rules["war_down"] == 1


def test_prisoners_of_war_waits_for_the_players_moves_and_then_settles(
    session: Session, player: int
) -> None:
    game = prisoners_game_awaiting_a_move(session, player)
    assert game.payout is None and game.pending.seat == 0
    with pytest.raises(RoundOpen):
        fairness_service.rotate(session, player)
    with pytest.raises(InvalidInput):
        rounds.sota_move(session, player, game.id, "AS")
    with pytest.raises((InvalidInput, InvalidAction)):
        rounds.sota_move(session, player, game.id, ["ZZ"])
    assert_books_clean(session)
    moves = 0
    while game.status == "awaiting_move":
        pending = game.pending
        game = rounds.sota_move(session, player, game.id, sorted(pending.options)[: pending.count])
        moves += 1
    assert game.status == "settled" and moves >= 1
    with pytest.raises(RoundSettled):
        rounds.sota_move(session, player, game.id, ["AS"])
    document = rounds.receipt(session, player, game.id)["document"]
    assert len(document["actions"]) == moves
    assert_books_clean(session)


def _moves_logged(session: Session, game_id: int) -> int:
    audit.flush(session)  # PostgreSQL sequences the entries after the commit
    with session.begin():
        return int(
            session.scalar(
                select(func.count())
                .select_from(AuditEntry)
                .where(AuditEntry.action == "round.move", AuditEntry.subject == f"round:{game_id}")
            )
            or 0
        )


def test_a_move_sent_again_without_its_number_is_taken_as_the_next_move(
    session: Session, player: int
) -> None:
    """A request that names no move cannot be told from the next move: when the same cards
    answer the next choice too, a retry lays them again (send ``move`` to prevent it)."""
    game, move = game_repeating_a_move(session, player)
    rounds.sota_move(session, player, game.id, move)
    again = rounds.sota_move(session, player, game.id, move)
    assert moves_made(session, game.id) == 2
    assert _moves_logged(session, game.id) == 2
    assert again.pending is None or again.pending.move == 2
    assert_books_clean(session)


def test_a_move_sent_twice_with_its_number_is_laid_once_and_the_copy_changes_nothing(
    session: Session, player: int
) -> None:
    game, move = game_repeating_a_move(session, player)
    assert game.pending.move == 0
    laid = rounds.sota_move(session, player, game.id, move, move=0)
    # the same cards are a valid answer to the choice the game now waits for
    assert laid.pending.move == 1 and set(move) <= set(laid.pending.options)
    balances = money.balances(session, player)
    with pytest.raises(MoveNotDue) as refused:
        rounds.sota_move(session, player, game.id, move, move=0)
    assert refused.value.message == f"game {game.id} waits for move 1, not move 0"
    assert moves_made(session, game.id) == 1
    assert _moves_logged(session, game.id) == 1
    assert money.balances(session, player) == balances
    assert rounds.get_round(session, player, game.id) == replace(laid, balances=balances)
    assert rounds.sota_move(session, player, game.id, move, move=1).id == game.id
    assert moves_made(session, game.id) == 2
    assert_books_clean(session)


@pytest.mark.parametrize("number", ["0", True, -1, 0.0, [0]])
def test_a_move_number_that_is_no_whole_number_from_0_is_refused(
    session: Session, player: int, number: object
) -> None:
    game, move = game_repeating_a_move(session, player)
    with pytest.raises(InvalidInput) as refused:
        rounds.sota_move(session, player, game.id, move, move=number)
    assert refused.value.details["field"] == "move"
    assert moves_made(session, game.id) == 0


def test_a_numbered_move_to_a_game_that_is_over_is_refused_as_over(
    session: Session, player: int
) -> None:
    game, _ = game_repeating_a_move(session, player)
    while game.status == "awaiting_move":
        pending = game.pending
        game = rounds.sota_move(
            session, player, game.id, pending.options[: pending.count], move=pending.move
        )
    with pytest.raises(RoundSettled):
        rounds.sota_move(session, player, game.id, ["AS"], move=0)
