"""Sota engine against RULES.md §2, clause by clause, from hand-built deals."""

from __future__ import annotations

from sota_support import deal
from sota_support import pile
from sota_support import places_after
from sota_support import play

# --- short: lose under single_pass --------------------------------------------------------------

# Trick 1: seats 0 and 2 tie with nines, seat 0 wins the war (11 cards on its won pile).
# Trick 2: seats 0 and 1 tie with sevens; seat 0 has no dealt card left, seat 1 has four.
OUT_WITH_WON_CARDS = deal("9C 2C 3C 4C KC 7C", "5D 7D 2D 3D 4D 6D", "9H 5H 6H 8H QH 2H")


def test_single_pass_a_seat_short_under_lose_gives_up_its_won_pile_and_is_out() -> None:
    # RULES.md §2.1 short lose: "loses at once; its cards join the pot", §2.2: "is out of the
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
