"""Prisoners of War: the player's moves, the dealer's policy, resuming by replay, bad moves."""

from __future__ import annotations

from typing import Any

import pytest
from sota_support import deal
from sota_support import places_after
from sota_support import play
from sota_support import stream

from sota_casino.core.errors import InvalidAction
from sota_casino.core.errors import InvalidInput
from sota_casino.core.fairness import shuffle
from sota_casino.core.sota import GameResult

# Seat 0 wins the first two tricks and loses the next three: both dealt piles are then empty.
DECK = deal("AC KC 2C 3C 4C", "2D 3D AD 5D 6D")
PRISONERS: dict[str, Any] = {"prisoners_of_war": True, "war_down": 1}


def test_the_game_waits_for_the_player_once_its_dealt_pile_is_empty() -> None:
    result = play(DECK, **PRISONERS)
    assert result.status == "awaiting_move"
    assert (result.winner, result.ended_by) == (None, None)
    assert len(result.tricks) == 5
    assert result.pending == {
        "seat": 0,
        "count": 1,
        "options": ["KC", "3D", "AC", "2D"],  # the won pile, top first
        "table": [[], []],
    }
    assert result.to_dict()["status"] == "awaiting_move"
    assert result.to_dict()["pending"] == result.pending


def test_the_dealer_lays_its_highest_card_face_up_and_a_war_asks_the_player_again() -> None:
    result = play(DECK, choices=[["AC"]], **PRISONERS)  # the dealer answers with its ace
    assert result.pending == {
        "seat": 0,
        "count": 2,  # one face down, then one face up
        "options": ["KC", "3D", "2D"],
        "table": [["AC"], ["AD"]],
    }


def test_the_table_shows_per_seat_the_cards_laid_so_far_with_the_face_down_ones_as_null() -> None:
    # Seat 0 wins two tricks and loses one; at the tie of 5s it lays its last two dealt cards
    # face down, then waits for the two it owes from its won pile (one down, one up).
    deck = deal("AC KC 2C 5C 6C 7C", "2D 3D AD 5D 8D 9D")
    result = play(deck, prisoners_of_war=True)
    assert result.pending == {
        "seat": 0,
        "count": 2,
        "options": ["KC", "3D", "AC", "2D"],
        "table": [["5C", None, None], ["5D"]],  # the dealer lays after the player
    }


def test_a_shuffled_gather_shuffles_the_pot_before_it_goes_on_the_face_up_won_pile() -> None:
    # The won pile is never shuffled, but gather: shuffled still shuffles each pot won.
    deck = deal("5C 2C 3C 4C KC 6C", "5D 2D 3D 4D QD 7D")  # a war at once, won by seat 0
    pot = ["5C", "5D", "2C", "3C", "4C", "KC", "2D", "3D", "4D", "QD"]  # seat order, step by step
    shuffled = shuffle(pot, stream())
    assert shuffled != pot
    after = places_after(deck, 1, with_stream=True, prisoners_of_war=True, gather="shuffled")
    assert after.won[0] == tuple(shuffled)


def test_the_dealer_lays_its_lowest_cards_face_down() -> None:
    result = play(DECK, choices=[["AC"], ["2D", "KC"]], **PRISONERS)
    war = result.tricks[5]
    assert war.laid == (("AC", "2D", "KC"), ("AD", "2C", "6D"))
    assert (war.wars, war.winner) == (1, 0)
    assert result.status == "awaiting_move"


def test_a_single_won_card_is_laid_without_asking() -> None:
    # The player lays KS and loses it; its one won card left, AS, is then laid for it.
    result = play(deal("AS 2C 3C", "KS AD AH"), prisoners_of_war=True, choices=[["KS"]])
    assert [trick.laid[0] for trick in result.tricks[3:]] == [("KS",), ("AS",)]
    assert (result.status, result.winner) == ("settled", 1)


def play_out(cards: list[str], **options: Any) -> tuple[GameResult, list[list[str]]]:
    """Play the game to its end, the player always laying the first cards offered."""
    moves: list[list[str]] = []
    result = play(cards, **options)
    while result.status == "awaiting_move":
        assert result.pending is not None
        moves.append(result.pending["options"][: result.pending["count"]])
        result = play(cards, choices=moves, **options)
    return result, moves


def test_replaying_with_one_more_move_each_time_plays_the_game_to_its_end() -> None:
    result, moves = play_out(DECK, max_tricks=60, **PRISONERS)
    assert result.status == "settled" and result.winner is not None
    assert len(moves) >= 2
    again = play(DECK, choices=moves, max_tricks=60, **PRISONERS)
    assert again == result
    assert again.to_dict() == result.to_dict()


def test_moves_after_the_game_ended_are_refused() -> None:
    _, moves = play_out(DECK, max_tricks=60, **PRISONERS)
    with pytest.raises(InvalidAction, match="game ended"):
        play(DECK, choices=[*moves, ["AC"]], max_tricks=60, **PRISONERS)


@pytest.mark.parametrize(("max_tricks", "ended"), [(6, "1 move"), (7, "2 moves")])
def test_moves_after_the_game_ended_are_refused_counting_the_moves_made(
    max_tricks: int, ended: str
) -> None:
    """The refusal counts the moves made with their plural form, the count its ``num``."""
    _, moves = play_out(DECK, max_tricks=max_tricks, **PRISONERS)
    with pytest.raises(InvalidAction) as refused:
        play(DECK, choices=[*moves, ["AC"]], max_tricks=max_tricks, **PRISONERS)
    assert str(refused.value) == f"the game ended after {ended}; moves sent: {len(moves) + 1}"
    assert refused.value.plural and refused.value.params["num"] == len(moves)


@pytest.mark.parametrize(
    ("move", "message"),
    [
        (["QS"], '"QS" is not among your won cards: KC, 3D, AC, 2D'),
        (["AD"], "not among your won cards"),
        (["AC", "KC"], "must lay exactly 1 card \\(got 2\\)"),
        ([], "must lay exactly 1 card \\(got 0\\)"),
        ("AC", "must be a list of cards"),
        ([5], "5 is not among your won cards"),
    ],
)
def test_an_invalid_move_is_refused_clearly(move: Any, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        play(DECK, choices=[move], **PRISONERS)


def test_the_same_card_twice_is_refused() -> None:
    with pytest.raises(InvalidInput, match="same card twice"):
        play(DECK, choices=[["AC"], ["KC", "KC"]], **PRISONERS)


def test_moves_are_refused_when_the_variant_is_off() -> None:
    with pytest.raises(InvalidAction, match="prisoners_of_war"):
        play(DECK, choices=[["AC"]])
