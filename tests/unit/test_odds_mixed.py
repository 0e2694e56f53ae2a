"""The exact edge and variance of a player who goes to war on a share of ties."""

from __future__ import annotations

from fractions import Fraction

import pytest

from sota_casino.core import odds


@pytest.mark.parametrize("decks", [1, 6, 8])
@pytest.mark.parametrize("bonus", ["none", "ante"])
def test_the_pure_strategies_are_the_published_ones(decks: int, bonus: str) -> None:
    war_edge, war_variance = odds.mixed_edge_and_variance(decks, bonus, Fraction(1))
    assert war_edge == odds.house_edge(decks, "war", bonus)
    assert war_variance == odds.variance(decks, bonus)
    surrender_edge, _ = odds.mixed_edge_and_variance(decks, bonus, Fraction(0))
    assert surrender_edge == odds.house_edge(decks, "surrender", bonus)


def test_a_mixture_is_linear_in_the_edge_and_sums_to_one() -> None:
    share = Fraction(1, 3)
    edge, variance = odds.mixed_edge_and_variance(6, "none", share)
    assert edge == share * Fraction(142853, 4965115) + (1 - share) * Fraction(23, 622)
    assert sum(odds.mixed_outcome_probabilities(6, share).values()) == 1
    # Surrendering half the ante on a tie is less spread than risking two antes in a war.
    assert odds.mixed_edge_and_variance(6, "none", Fraction(0))[1] < variance < odds.variance(6)


def test_a_share_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="war_share"):
        odds.mixed_outcome_probabilities(6, Fraction(3, 2))
