"""Sota engine against docs/rules.md, clause by clause, from hand-built deals."""

from __future__ import annotations

import pytest
from sota_support import deal
from sota_support import pile
from sota_support import places_after
from sota_support import play
from sota_support import stream

from sota_casino.core.cards import canonical_deck
from sota_casino.core.fairness import shuffle
from sota_casino.core.sota import Places
from sota_casino.core.sota import SotaRules
from sota_casino.core.sota import play_game

# --- short: lose under single_pass --------------------------------------------------------------

# Trick 1: seats 0 and 2 tie with nines, seat 0 wins the war (11 cards on its won pile).
# Trick 2: seats 0 and 1 tie with sevens; seat 0 has no dealt card left, seat 1 has four.
OUT_WITH_WON_CARDS = deal("9C 2C 3C 4C KC 7C", "5D 7D 2D 3D 4D 6D", "9H 5H 6H 8H QH 2H")


def test_single_pass_a_seat_short_under_lose_gives_up_its_won_pile_and_is_out() -> None:
    # docs/rules.md short lose: "loses at once; its cards join the pot", §2.2: "is out of the
    # game", and "a seat's cards are its pile plus its won pile".
    options = {"seats": 3, "end": "single_pass"}
    result = play(OUT_WITH_WON_CARDS, **options)
    trick = result.tricks[1]
    assert trick.winner == 1
    assert trick.laid[0] == pile("7C 9C 5D 9H 2C 3C 4C KC 5H 6H 8H QH")
    assert trick.counts == (0, 18, 0)
    assert (result.winner, result.ended_by) == (1, "last_seat")
    after = places_after(OUT_WITH_WON_CARDS, 2, **options)
    assert after.won[0] == ()
    assert after.won[1] == pile("7D 7C 2H 9C 5D 9H 2C 3C 4C KC 5H 6H 8H QH")


# --- clauses confirmed as they stand ----------------------------------------------------------


def test_the_whole_deck_is_dealt_one_card_at_a_time_and_the_leftover_is_set_aside() -> None:
    deck = canonical_deck("standard52")  # 52 cards, 3 seats: card 51 (AS) is left over
    seen: list[Places] = []
    result = play_game(SotaRules(seats=3, max_tricks=1), deck_order=deck, observer=seen.append)
    trick = result.tricks[0]
    assert trick.laid == (("2C",), ("3C",), ("4C",))  # card i went to seat i mod 3, on top
    assert trick.winner == 2
    assert seen[0].piles[0] == deck[3:51:3]
    assert seen[0].piles[1] == deck[4:51:3]
    assert seen[0].piles[2] == (*deck[5:51:3], "4C", "2C", "3C")
    assert seen[0].aside == ("AS",)


@pytest.mark.parametrize(
    ("rank", "down"),
    [*((r, int(r)) for r in "23456789"), ("T", 10), ("J", 10), ("Q", 10), ("K", 10), ("A", 1)],
)
def test_by_rank_lays_the_tied_ranks_number_face_down(rank: str, down: int) -> None:
    high, low = ("KH", "2S") if rank == "A" else ("AH", "3S") if rank == "2" else ("AH", "2S")
    spare = [c for c in canonical_deck() if c[0] != rank and c not in (high, low)]
    piles = (
        " ".join([rank + "C", *spare[:down], high]),
        " ".join([rank + "D", *spare[down : 2 * down], low]),
    )
    trick = play(deal(*piles), war_down="by_rank", max_tricks=1).tricks[0]
    assert trick.to_dict()["steps"] == [[1, 1], [down + 1, down + 1]]
    assert trick.winner == 0


def test_won_piles_turned_over_at_a_first_flip_shuffle_in_seat_order_from_one_stream() -> None:
    used = stream()
    turned_0 = shuffle(["AS", "KS"], used)  # seat 0's won pile, top first
    turned_1 = shuffle(["3D", "2C"], used)  # then seat 1's, continuing the same stream
    result = play(deal("AS 2C", "KS 3D"), won_cards="won_pile", max_tricks=3, with_stream=True)
    assert result.tricks[2].laid == ((turned_0[0],), (turned_1[0],))
    assert result.bytes_used == used.bytes_read


def test_underdog_a_seat_out_under_lose_does_not_take_the_pot_with_its_jack() -> None:
    # Seat 0 ties with two cards left (a jack among them): it lays them and is out.
    result = play(deal("2H 7H JC 3C", "AS 7S 5D 6D"), underdog=True)
    assert result.tricks[1].laid[0] == pile("7H JC 3C")
    assert (result.tricks[1].winner, result.winner) == (1, 1)
