"""Sota tricks from hand-built deals: wars, pot order, short seats, multi-seat ties, variants."""

from __future__ import annotations

import pytest
from sota_support import deal
from sota_support import pile
from sota_support import places_after
from sota_support import play
from sota_support import stream

from sota_casino.core.fairness import shuffle
from sota_casino.core.sota import Places
from sota_casino.core.sota import SotaRules
from sota_casino.core.sota import StreamRequired
from sota_casino.core.sota import play_game

# --- a plain trick and the three gather orders -----------------------------------------------

PLAIN = deal("5H KD", "9C 2S")


def test_the_higher_card_takes_the_trick() -> None:
    first = play(PLAIN, max_tricks=1).tricks[0]
    assert first.laid == (("5H",), ("9C",))
    assert (first.winner, first.wars, first.counts) == (1, 0, (1, 3))


def test_winner_first_puts_the_winners_card_under_its_pile_first() -> None:
    assert places_after(PLAIN, 1).piles == (pile("KD"), pile("2S 9C 5H"))


def test_table_order_gathers_in_seat_order() -> None:
    assert places_after(PLAIN, 1, gather="table").piles == (pile("KD"), pile("2S 5H 9C"))


def test_shuffled_gather_shuffles_the_pot_in_seat_order_with_the_round_stream() -> None:
    expected = shuffle(["5H", "9C"], stream())
    after = places_after(PLAIN, 1, gather="shuffled", with_stream=True)
    assert after.piles == (pile("KD"), ("2S", *expected))


def test_an_in_game_shuffle_without_a_stream_is_refused_clearly() -> None:
    with pytest.raises(StreamRequired, match="stream"):
        play(PLAIN, gather="shuffled")


# --- wars --------------------------------------------------------------------------------------

WAR = deal("7H 2C 3C 4C KH", "7S 5D 6D 8D AS")


def test_a_tie_starts_a_war_of_three_down_and_one_up() -> None:
    result = play(WAR)
    trick = result.tricks[0]
    assert trick.laid == (pile("7H 2C 3C 4C KH"), pile("7S 5D 6D 8D AS"))
    assert (trick.wars, trick.winner, trick.counts) == (1, 1, (0, 10))
    assert trick.to_dict()["steps"] == [[1, 1], [4, 4]]
    assert (result.winner, result.ended_by, result.wars) == (1, "last_seat", 1)


def test_winner_first_gathers_each_step_winner_first_face_down_before_face_up() -> None:
    assert places_after(WAR, 1).piles[1] == pile("7S 7H 5D 6D 8D AS 2C 3C 4C KH")


def test_table_gathers_each_step_in_seat_order() -> None:
    after = places_after(WAR, 1, gather="table")
    assert after.piles[1] == pile("7H 7S 2C 3C 4C KH 5D 6D 8D AS")


def test_a_tie_in_the_war_repeats_it_and_the_pot_keeps_step_order() -> None:
    deck = deal("7H 2C 3C 4C KH 5C 6C 8C AH", "7S 5D 6D 8D KS 2D 3D 4D QS")
    result = play(deck)
    assert (result.tricks[0].wars, result.tricks[0].winner) == (2, 0)
    assert places_after(deck, 1).piles[0] == pile(
        "7H 7S 2C 3C 4C KH 5D 6D 8D KS 5C 6C 8C AH 2D 3D 4D QS"
    )


def test_english_wars_lay_one_down_and_one_up() -> None:
    result = play(deal("7H 2C KH", "7S 5D AS"), war_down=1)
    assert result.tricks[0].to_dict()["steps"] == [[1, 1], [2, 2]]
    assert result.winner == 1


# --- short of cards ----------------------------------------------------------------------------

SHORT = deal("2H 7H 2C 3C", "AS 7S 5D 6D")  # after trick 1 seat 0 ties with two cards left


def test_lose_a_short_seat_lays_all_it_has_and_the_last_seat_takes_the_pot() -> None:
    result = play(SHORT)
    trick = result.tricks[1]
    assert trick.laid == (pile("7H 2C 3C"), pile("7S"))  # the seat left lays no war cards
    assert (trick.wars, trick.winner, trick.counts) == (1, 1, (0, 8))
    assert (result.winner, result.ended_by) == (1, "last_seat")
    assert places_after(SHORT, 2).piles[1] == pile("5D 6D AS 2H 7S 7H 2C 3C")


def test_last_card_up_a_short_seat_turns_its_last_card_up_and_can_win() -> None:
    result = play(SHORT, short="last_card_up")
    trick = result.tricks[1]
    assert trick.laid == (pile("7H 2C 3C"), pile("7S 5D 6D AS 2H"))
    assert trick.to_dict()["steps"] == [[1, 1], [2, 4]]
    assert (trick.winner, result.winner) == (0, 0)
    after = places_after(SHORT, 2, short="last_card_up")
    assert after.piles[0] == pile("7H 7S 2C 3C 5D 6D AS 2H")


LAST_CARD_TIES = deal("2H 3H 7H", "4S 5S 7S")  # seat 0 ties in trick 3 with its last card


def test_lose_a_seat_whose_tied_card_was_its_last_is_out() -> None:
    result = play(LAST_CARD_TIES)
    assert result.tricks[2].laid == (pile("7H"), pile("7S"))
    assert (result.tricks[2].winner, result.winner) == (1, 1)


def test_last_card_up_a_seat_with_no_card_left_keeps_its_tied_card_for_the_war() -> None:
    result = play(LAST_CARD_TIES, short="last_card_up")
    trick = result.tricks[2]
    assert trick.laid == (pile("7H"), pile("7S 4S 2H 5S 3H"))  # 7H beats the 3H turned up
    assert (trick.winner, result.winner) == (0, 0)


def test_last_card_up_the_standing_card_ties_again_and_the_other_seat_lays_on() -> None:
    deck = deal("8C 2H 7H 3C 8H", "KS QS 7S 3D 4D")
    result = play(deck, short="last_card_up")
    trick = result.tricks[2]
    assert trick.laid == (pile("7H 3C 8H"), pile("7S 3D 4D KS 8C QS 2H"))
    assert trick.to_dict()["steps"] == [[1, 1], [2, 4], [0, 2]]
    assert (trick.wars, trick.winner, result.winner) == (2, 0, 0)
    after = places_after(deck, 3, short="last_card_up")
    assert after.piles[0] == pile("7H 7S 3C 8H 3D 4D KS 8C QS 2H")


def test_last_card_up_a_war_nobody_can_lay_on_puts_the_pot_out_of_play_and_draws() -> None:
    deck = deal("7H 2C 8H", "7S 3D 8S")
    result = play(deck, short="last_card_up")
    assert (result.tricks[0].winner, result.tricks[0].wars) == (None, 2)
    assert (result.winner, result.ended_by) == ("draw", "no_cards")
    assert sorted(places_after(deck, 1, short="last_card_up").out_of_play) == sorted(deck)


def test_lose_a_war_where_every_seat_is_short_puts_the_pot_out_of_play() -> None:
    result = play(deal("7H", "7S"))
    assert result.tricks[0].winner is None
    assert (result.winner, result.ended_by) == ("draw", "no_cards")


def test_an_undecided_war_leaves_the_game_to_the_seats_with_cards() -> None:
    deck = deal("7H 2C", "7S 3C", "2D 4D")
    result = play(deck, seats=3)
    assert result.tricks[0].winner is None
    assert (result.winner, result.ended_by) == (2, "last_seat")
    after = places_after(deck, 1, seats=3)
    assert sorted(after.out_of_play) == sorted(["7H", "7S", "2D", "2C", "3C"])
    assert after.piles == ((), (), pile("4D"))


# --- several seats -----------------------------------------------------------------------------


def test_three_seats_tied_at_the_top_all_go_to_war() -> None:
    deck = deal("9C 2C 3C 4C KC", "9D 2D 3D 4D AD", "9H 5H 6H 7H QH")
    result = play(deck, seats=3)
    assert result.tricks[0].laid == (
        pile("9C 2C 3C 4C KC"),
        pile("9D 2D 3D 4D AD"),
        pile("9H 5H 6H 7H QH"),
    )
    assert (result.tricks[0].winner, result.winner) == (1, 1)
    assert places_after(deck, 1, seats=3).piles[1] == pile(
        "9D 9C 9H 2D 3D 4D AD 2C 3C 4C KC 5H 6H 7H QH"
    )


def test_a_tie_below_the_top_is_no_war() -> None:
    result = play(deal("5C", "5D", "KH"), seats=3)
    assert (result.tricks[0].wars, result.tricks[0].winner, result.winner) == (0, 2, 2)


def test_three_seats_deal_one_card_aside_unseen() -> None:
    deck = deal("5C", "5D", "KH", aside="2S")
    assert places_after(deck, 1, seats=3).aside == ("2S",)


MULTI = deal("9C 2C 3C 4C KC", "9D 2D 3D 4D QD", "4H 5H 6H 7H AH")


def test_tied_only_the_lower_seats_card_stays_in_the_pot() -> None:
    result = play(MULTI, seats=3, max_tricks=1)
    assert result.tricks[0].laid[2] == ("4H",)
    assert (result.tricks[0].winner, result.tricks[0].counts) == (0, (11, 0, 4))
    after = places_after(MULTI, 1, seats=3)
    assert after.piles[0] == pile("9C 9D 4H 2C 3C 4C KC 2D 3D 4D QD")


def test_tied_only_return_the_lower_seat_takes_its_card_back_under_its_pile() -> None:
    result = play(MULTI, seats=3, multi_tie="tied_only_return", max_tricks=1)
    trick = result.tricks[0]
    assert trick.laid[2] == ("4H",)
    assert trick.to_dict()["returned"] == [[], [], ["4H"]]
    assert trick.counts == (10, 0, 5)
    after = places_after(MULTI, 1, seats=3, multi_tie="tied_only_return")
    assert after.piles[2] == pile("5H 6H 7H AH 4H")
    assert after.piles[0] == pile("9C 9D 2C 3C 4C KC 2D 3D 4D QD")


# Seat 2 wins trick 3 and lays its last dealt card, 5H, in trick 4, where seats 0 and 1 tie.
RETURN_TO_EMPTY = deal("KC 2C 3C 9C", "2D AD 3D 9D", "3H 4H KH 5H")
RETURN_OPTIONS = {"seats": 3, "war_down": 1, "multi_tie": "tied_only_return"}


def test_tied_only_return_a_card_back_on_an_empty_draw_pile_comes_before_the_won_pile() -> None:
    """docs/rules.md 7: with a won pile, the card taken back is the next one the seat lays."""
    options = {**RETURN_OPTIONS, "won_cards": "won_pile"}
    result = play(RETURN_TO_EMPTY, with_stream=True, **options)
    assert result.tricks[3].to_dict()["returned"] == [[], [], ["5H"]]
    after = places_after(RETURN_TO_EMPTY, 4, with_stream=True, **options)
    assert (after.piles[2], after.won[2]) == (pile("5H"), pile("KH 3C 3D"))
    assert result.tricks[4].laid[2] == ("5H",)


def test_tied_only_return_under_prisoners_of_war_the_card_back_is_laid_before_any_choice() -> None:
    """docs/rules.md 7: under Prisoners of War too; the seat's best won card, KH, waits."""
    rules = SotaRules.from_dict({**RETURN_OPTIONS, "prisoners_of_war": True})
    seen: list[Places] = []
    result = play_game(rules, deck_order=RETURN_TO_EMPTY, autoplay=True, observer=seen.append)
    assert result.tricks[3].to_dict()["returned"] == [[], [], ["5H"]]
    assert (seen[3].piles[2], seen[3].won[2]) == (pile("5H"), pile("KH 3C 3D"))
    assert result.tricks[4].laid[2] == ("5H",)


def test_all_every_seat_goes_to_war_and_the_lower_one_can_win_it() -> None:
    result = play(MULTI, seats=3, multi_tie="all")
    assert result.tricks[0].to_dict()["steps"] == [[1, 1, 1], [4, 4, 4]]
    assert (result.tricks[0].winner, result.winner) == (2, 2)
    assert places_after(MULTI, 1, seats=3, multi_tie="all").piles[2] == pile(
        "4H 9C 9D 5H 6H 7H AH 2C 3C 4C KC 2D 3D 4D QD"
    )


# --- variants ----------------------------------------------------------------------------------


def test_peace_the_lowest_card_wins() -> None:
    assert play(deal("3C", "KD"), peace=True).tricks[0].winner == 0


def test_peace_ties_still_go_to_war_and_the_lowest_face_up_card_wins_it() -> None:
    result = play(deal("7H 2C 3C 4C 9H", "7S 5D 6D 8D 5S"), peace=True)
    assert (result.tricks[0].wars, result.tricks[0].winner) == (1, 1)


@pytest.mark.parametrize(
    ("piles", "winner"),
    [
        (("6C", "AD"), 0),  # the six beats the ace
        (("6C", "KD"), 1),  # and nothing else changes
        (("6C", "AD", "KH"), 0),  # with an ace in the step the six is on top
    ],
)
def test_pjanitsa_a_six_beats_an_ace_that_lies_face_up_beside_it(
    piles: tuple[str, ...], winner: int
) -> None:
    result = play(deal(*piles), deck="pjanitsa36", seats=len(piles))
    assert result.tricks[0].winner == winner


def test_pjanitsa_an_ace_of_an_earlier_step_does_not_lift_a_six() -> None:
    result = play(deal("AC 7C 6C", "AD 8D KD"), deck="pjanitsa36", war_down=1)
    assert (result.tricks[0].wars, result.tricks[0].winner) == (1, 1)


def test_pjanitsa_the_six_over_an_ace_is_reversed_in_peace() -> None:
    assert play(deal("6C", "AD"), deck="pjanitsa36", peace=True).tricks[0].winner == 1


def test_a_joker_beats_an_ace() -> None:
    assert play(deal("X1", "AS"), deck="jokers54").tricks[0].winner == 0


def test_two_jokers_tie_and_go_to_war() -> None:
    result = play(deal("X1 7C 8C 9C TC", "X2 7D 8D 9D JD"), deck="jokers54")
    assert (result.tricks[0].wars, result.tricks[0].winner) == (1, 1)


@pytest.mark.parametrize(
    ("piles", "deck", "down"),
    [
        (("3C 4C 5C 6C KC", "3D 4D 5D 6D QD"), "standard52", 3),
        (
            ("KC 2C 3C 4C 5C 6C 7C 8C 9C TC JC AC", "KD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD"),
            "standard52",
            10,
        ),
        (("AC 2C KC", "AD 2D QD"), "standard52", 1),
        (("X1 2C KC", "X2 2D QD"), "jokers54", 1),
    ],
)
def test_by_rank_lays_as_many_face_down_as_the_tied_rank_is_worth(
    piles: tuple[str, str], deck: str, down: int
) -> None:
    result = play(deal(*piles), deck=deck, war_down="by_rank")
    assert result.tricks[0].to_dict()["steps"] == [[1, 1], [down + 1, down + 1]]
    assert result.tricks[0].winner == 0


TWO = deal("2C 3C 4C 5C KC", "KD 6D 7D 8D QD")


def test_auto_war_twos_a_two_face_up_starts_a_war_tied_or_not() -> None:
    assert play(TWO).tricks[0].winner == 1
    war = play(TWO, auto_war_twos=True).tricks[0]
    assert (war.wars, war.winner) == (1, 0)


def test_auto_war_twos_with_by_rank_the_highest_face_up_card_sets_the_width() -> None:
    deck = deal("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC AC", "KD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD")
    trick = play(deck, auto_war_twos=True, war_down="by_rank").tricks[0]
    assert trick.to_dict()["steps"] == [[1, 1], [11, 11]]  # a king: ten face down
    assert trick.winner == 0


def test_auto_war_twos_brings_every_seat_of_the_step_into_the_war() -> None:
    deck = deal("2C 3C 4C 5C 6C", "KD 3D 4D 5D 7D", "5H 6H 7H 8H AH")
    trick = play(deck, seats=3, auto_war_twos=True).tricks[0]
    assert trick.to_dict()["steps"] == [[1, 1, 1], [4, 4, 4]]
    assert trick.winner == 2


def test_underdog_a_war_loser_with_a_jack_face_down_takes_the_pot() -> None:
    deck = deal("7H JC 3C 4C 5C", "7S 5D 6D 8D AS")
    assert play(deck).tricks[0].winner == 1
    assert play(deck, underdog=True).tricks[0].winner == 0


def test_underdog_a_jack_face_up_does_not_count() -> None:
    deck = deal("7H 2C 3C 4C JC", "7S 5D 6D 8D AS")
    assert play(deck, underdog=True).tricks[0].winner == 1


def test_underdog_several_losers_with_jacks_the_first_in_seat_order_takes_it() -> None:
    deck = deal("7H JC 3C 4C 5C", "7S JD 6D 8D 6S", "7D 2H 3H 4H AH")
    assert play(deck, seats=3, underdog=True).tricks[0].winner == 0


# --- won pile ----------------------------------------------------------------------------------


def test_won_pile_keeps_won_cards_apart_first_gathered_on_top() -> None:
    after = places_after(deal("AS 2C", "KS 3D"), 1, won_cards="won_pile", with_stream=True)
    assert after.piles == (pile("2C"), pile("3D"))
    assert after.won == (pile("AS KS"), ())


TURN_OVER = deal("AS AH 7H 2C 3C 4C", "KS KH 7S 3D 4D 5D")


def test_a_won_pile_is_shuffled_and_turned_over_in_the_middle_of_a_war() -> None:
    options = {"won_cards": "won_pile", "short": "last_card_up", "with_stream": True}
    used = stream()
    turned = shuffle(["AH", "KH", "AS", "KS"], used)  # the won pile, top to bottom
    result = play(TURN_OVER, **options)
    trick = result.tricks[2]
    assert trick.laid == (("7H", "2C", "3C", "4C", turned[0]), pile("7S 3D 4D 5D"))
    assert (trick.winner, result.winner) == (0, 0)
    assert result.bytes_used == used.bytes_read
    after = places_after(TURN_OVER, 3, **options)
    assert after.piles[0] == tuple(turned[1:])
    assert after.won[0] == ("7H", "7S", "2C", "3C", "4C", turned[0], "3D", "4D", "5D")


def test_a_won_pile_turn_over_without_a_stream_is_refused() -> None:
    with pytest.raises(StreamRequired):
        play(TURN_OVER, won_cards="won_pile", short="last_card_up")
