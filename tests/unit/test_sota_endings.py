"""How Sota games end: last seat, single pass, lead, max_tricks, draws, teams, payouts."""

from __future__ import annotations

import pytest
from sota_support import deal
from sota_support import pile
from sota_support import places_after
from sota_support import play

from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.core.sota import Places
from sota_casino.core.sota import SotaRules
from sota_casino.core.sota import payout
from sota_casino.core.sota import play_game


def test_the_last_seat_with_cards_wins() -> None:
    result = play(deal("AC KC", "2D 3D"))
    assert (result.winner, result.ended_by, len(result.tricks)) == (0, "last_seat", 2)
    assert result.status == "settled" and result.pending is None


SINGLE = deal("AC KC 7C", "8D 9D QD")


def test_single_pass_ends_when_a_dealt_pile_is_empty_and_most_won_cards_win() -> None:
    result = play(SINGLE, end="single_pass")
    assert (result.winner, result.ended_by, len(result.tricks)) == (0, "single_pass", 3)
    assert result.tricks[-1].counts == (4, 2)


def test_single_pass_never_turns_the_won_pile_over() -> None:
    after = places_after(SINGLE, 3, end="single_pass")
    assert after.piles == ((), ())
    assert after.won == (pile("KC 9D AC 8D"), pile("QD 7C"))


def test_single_pass_equal_won_cards_draw() -> None:
    result = play(deal("AC 7C", "8D QD"), end="single_pass")
    assert (result.winner, result.ended_by) == ("draw", "single_pass")


def test_single_pass_won_cards_do_not_count_for_a_war() -> None:
    # Seat 0 holds two won cards but only one dealt card: both seats are short, so under
    # `lose` both are out and their cards, won pile included, go out of play: a draw.
    result = play(deal("AC 7C 2C", "8D 7D 3D"), end="single_pass")
    assert result.tricks[1].winner is None
    assert result.tricks[1].laid[0] == pile("7C 2C AC 8D")
    assert (result.winner, result.ended_by) == ("draw", "no_cards")


LEAD = deal("AC AD 2C", "KC KD 3D")


def test_lead_ends_the_game_when_the_leader_is_n_cards_ahead() -> None:
    result = play(LEAD, lead=2)
    assert (result.winner, result.ended_by, len(result.tricks)) == (0, "lead", 1)
    assert play(LEAD, lead=4).ended_by == "lead"
    assert len(play(LEAD, lead=4).tricks) == 2


def test_lead_is_checked_before_max_tricks() -> None:
    assert play(LEAD, lead=2, max_tricks=1).ended_by == "lead"


def test_max_tricks_gives_the_game_to_the_seat_with_most_cards() -> None:
    result = play(deal("5C 9C", "9D 5D"), max_tricks=1)
    assert (result.winner, result.ended_by) == (1, "max_tricks")


def test_max_tricks_with_equal_counts_is_a_draw() -> None:
    result = play(deal("5C 9C", "9D 5D"), max_tricks=2)
    assert result.tricks[-1].counts == (2, 2)
    assert (result.winner, result.ended_by) == ("draw", "max_tricks")


def test_max_tricks_with_equal_top_counts_among_three_seats_is_a_draw() -> None:
    result = play(deal("AC 2C", "3D AD", "4H 5H"), seats=3, max_tricks=2)
    assert result.tricks[-1].counts == (3, 3, 0)
    assert result.winner == "draw"


def test_a_game_that_cycles_is_bounded_by_max_tricks() -> None:
    # With seat-order gathering these piles come back to the same order every two tricks.
    result = play(deal("AC 9D", "9C QC"), gather="table", max_tricks=50)
    assert (len(result.tricks), result.ended_by) == (50, "max_tricks")


def test_teams_a_team_wins_when_the_other_team_has_no_cards() -> None:
    result = play(deal("AS 5S", "2C 3C", "KD 6D", "4H 5H"), seats=4, teams=True)
    assert result.tricks[-1].counts[0] > 0 and result.tricks[-1].counts[2] > 0
    assert (result.winner, result.ended_by) == ("team_0", "last_seat")


def test_teams_the_other_team_can_win_too() -> None:
    assert play(deal("2S", "AC", "3D", "4H"), seats=4, teams=True).winner == "team_1"


def test_teams_counts_are_summed_per_team_for_the_end_options() -> None:
    result = play(deal("AS 5S", "2C 3C", "KD 6D", "4H 5H"), seats=4, teams=True, max_tricks=1)
    assert result.tricks[0].counts == (5, 1, 1, 1)
    assert (result.winner, result.ended_by) == ("team_0", "max_tricks")


@pytest.mark.parametrize(
    ("options", "winner", "credited"),
    [
        ({}, 0, 20),
        ({}, 1, 0),
        ({}, "draw", 10),
        ({"seats": 3}, 0, 30),
        ({"seats": 4}, 0, 40),
        ({"seats": 4}, 2, 0),
        ({"seats": 4, "teams": True}, "team_0", 20),
        ({"seats": 4, "teams": True}, "team_1", 0),
        ({"seats": 4, "teams": True}, "draw", 10),
    ],
)
def test_payout_credits_the_stake_and_the_winnings(
    options: dict[str, object], winner: int | str, credited: int
) -> None:
    assert payout(SotaRules.from_dict(options), winner, 10) == credited


@pytest.mark.parametrize(
    ("nonce", "tricks", "dealt", "won"),
    [
        (0, 13, [0, 4, 0], [17, 21, 9]),  # seats 0 and 2 played out their dealt piles in wars
        (5, 11, [6, 2, 0], [37, 6, 0]),  # seat 2 went out, short in a war
    ],
)
def test_single_pass_with_three_seats_ends_once_any_dealt_pile_is_empty_though_others_are_not(
    nonce: int, tricks: int, dealt: list[int], won: list[int]
) -> None:
    """docs/rules.md 25: "any seat's dealt pile" reads every seat, one gone out included, so
    the seats still holding dealt cards do not play them."""
    rules = SotaRules.from_dict({"seats": 3, "end": "single_pass"})
    seen: list[Places] = []
    result = play_game(
        rules, stream=Stream(Seeds(bytes(range(32)), "single-pass", nonce)), observer=seen.append
    )
    assert (result.ended_by, len(result.tricks)) == ("single_pass", tricks)
    assert [len(cards) for cards in seen[-1].piles] == dealt
    assert [len(cards) for cards in seen[-1].won] == won
    assert result.winner == won.index(max(won))
