"""Exact Casino War odds (the published figures) for every table setting, as fractions.

Model: ``d`` decks, ``N = 52d`` cards, ``k = 4d`` cards of each rank, a fresh shoe each round.
The first cards tie with probability ``(k-1)/(N-1)``. Given a tie, two cards of that rank are
gone, and the burned cards are unseen, so the war cards are two cards drawn from the other
``N-2``: burning changes nothing. Everything else follows from
the payout table of :mod:`.casino_war`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any
from typing import Final

from .casino_war import OUTCOMES
from .casino_war import SURRENDER
from .casino_war import WAR
from .casino_war import TableRules

RANKS_PER_DECK: Final = 13
SUITS_PER_RANK: Final = 4
DECK_RANGE: Final = range(1, 9)
STRATEGIES: Final = (WAR, SURRENDER)

#: The player's net per unit of ante for each outcome (:mod:`.casino_war`, ``bonus: none``).
ANTE_NET: Final[dict[str, Fraction]] = {
    "win": Fraction(1),
    "lose": Fraction(-1),
    "surrender": Fraction(-1, 2),
    "war_win": Fraction(1),
    "war_tie": Fraction(1),
    "war_lose": Fraction(-2),
}
#: ``bonus: ante`` pays an extra ante when the war cards tie again.
ANTE_BONUS_NET: Final[dict[str, Fraction]] = ANTE_NET | {"war_tie": Fraction(2)}


def ante_net(outcome: str, bonus: str = "none") -> Fraction:
    """Return the player's net result, in antes, of ``outcome`` under ``bonus``."""
    return (ANTE_BONUS_NET if bonus == "ante" else ANTE_NET)[outcome]


def tie_probability(decks: int) -> Fraction:
    """Return the probability that the first two cards of a ``decks``-deck shoe tie."""
    cards, per_rank = _shoe(decks)
    return Fraction(per_rank - 1, cards - 1)


def war_tie_probability(decks: int) -> Fraction:
    """Return the probability that the war cards tie, given that the first cards tied.

    Of the ``N-2`` cards left, the tied rank has ``k-2`` and each of the other twelve ranks ``k``.
    """
    cards, per_rank = _shoe(decks)
    left = cards - 2
    same_pairs = (per_rank - 2) * (per_rank - 3) + (RANKS_PER_DECK - 1) * per_rank * (per_rank - 1)
    return Fraction(same_pairs, left * (left - 1))


def outcome_probabilities(decks: int, strategy: str = WAR) -> dict[str, Fraction]:
    """Return the probability of each outcome of a round when every tie is met by ``strategy``.

    :raises ValueError: if ``strategy`` is neither ``"war"`` nor ``"surrender"``.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of: {', '.join(STRATEGIES)}")
    tie = tie_probability(decks)
    probabilities = dict.fromkeys(OUTCOMES, Fraction(0))
    probabilities["win"] = probabilities["lose"] = (1 - tie) / 2
    if strategy == SURRENDER:
        probabilities["surrender"] = tie
        return probabilities
    war_tie = war_tie_probability(decks)
    probabilities["war_tie"] = tie * war_tie
    probabilities["war_win"] = probabilities["war_lose"] = tie * (1 - war_tie) / 2
    return probabilities


def house_edge(decks: int, strategy: str = WAR, bonus: str = "none") -> Fraction:
    """Return the house edge per unit of ante when every tie is met by ``strategy``."""
    probabilities = outcome_probabilities(decks, strategy)
    return -sum((p * ante_net(o, bonus) for o, p in probabilities.items()), Fraction(0))


def tie_bet_house_edge(decks: int, tie_payout: int) -> Fraction:
    """Return the house edge of a tie bet paying ``tie_payout`` to 1."""
    return 1 - tie_probability(decks) * (tie_payout + 1)


def element_of_risk(decks: int, bonus: str = "none") -> Fraction:
    """Return the house edge of always going to war per unit actually wagered.

    Wizard of Odds' definition: the expected loss divided by the average total wager of a hand,
    the ante plus the raise on a tie, so ``house edge / (1 + P(tie))``.
    """
    return house_edge(decks, WAR, bonus) / (1 + tie_probability(decks))


def variance(decks: int, bonus: str = "none") -> Fraction:
    """Return the variance of the net result per hand, in antes squared, always going to war."""
    probabilities = outcome_probabilities(decks, WAR)
    mean = -house_edge(decks, WAR, bonus)
    square = sum((p * ante_net(o, bonus) ** 2 for o, p in probabilities.items()), Fraction(0))
    return square - mean**2


@dataclass(frozen=True, slots=True)
class CasinoWarOdds:
    """The exact figures of one table setting (per unit of ante)."""

    decks: int
    tie_payout: int
    bonus: str
    p_tie: Fraction
    p_war_tie: Fraction  # given that the first cards tied
    house_edge_war: Fraction
    house_edge_surrender: Fraction
    house_edge_tie_bet: Fraction | None  # None where the table offers no tie bet
    element_of_risk: Fraction  # always war
    variance: Fraction  # always war, antes squared

    @property
    def std_dev(self) -> float:
        """The standard deviation of the net result per hand, always going to war."""
        return math.sqrt(self.variance)

    def outcomes(self, strategy: str = WAR) -> dict[str, Fraction]:
        """Return the probability of each outcome when every tie is met by ``strategy``."""
        return outcome_probabilities(self.decks, strategy)

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON values: each figure as ``{"exact": "a/b", "value": float}``."""
        return {
            "decks": self.decks,
            "tie_payout": self.tie_payout,
            "bonus": self.bonus,
            "p_tie": figure(self.p_tie),
            "p_war_tie": figure(self.p_war_tie),
            "house_edge_war": figure(self.house_edge_war),
            "house_edge_surrender": figure(self.house_edge_surrender),
            "house_edge_tie_bet": (
                None if self.house_edge_tie_bet is None else figure(self.house_edge_tie_bet)
            ),
            "element_of_risk": figure(self.element_of_risk),
            "variance": figure(self.variance),
            "std_dev": self.std_dev,
            "outcomes": {
                strategy: {o: figure(p) for o, p in self.outcomes(strategy).items()}
                for strategy in STRATEGIES
            },
        }


def casino_war_odds(rules: TableRules) -> CasinoWarOdds:
    """Return the exact odds of a table; its limits and ``burn`` change nothing."""
    decks, bonus = rules.decks, rules.bonus
    return CasinoWarOdds(
        decks=decks,
        tie_payout=rules.tie_payout,
        bonus=bonus,
        p_tie=tie_probability(decks),
        p_war_tie=war_tie_probability(decks),
        house_edge_war=house_edge(decks, WAR, bonus),
        house_edge_surrender=house_edge(decks, SURRENDER, bonus),
        house_edge_tie_bet=(
            tie_bet_house_edge(decks, rules.tie_payout) if rules.tie_payout else None
        ),
        element_of_risk=element_of_risk(decks, bonus),
        variance=variance(decks, bonus),
    )


def odds_table(decks: int = 6, tie_payout: int = 10, bonus: str = "none") -> dict[str, Any]:
    """Return the odds of one setting as plain JSON values (``GET /casino-war/odds``).

    :raises InvalidRules: if a setting is out of range.
    """
    return casino_war_odds(TableRules(decks=decks, tie_payout=tie_payout, bonus=bonus)).to_dict()


def odds_by_decks(tie_payout: int = 10, bonus: str = "none") -> list[CasinoWarOdds]:
    """Return the odds for 1 to 8 decks.

    :raises InvalidRules: if a setting is out of range.
    """
    return [
        casino_war_odds(TableRules(decks=decks, tie_payout=tie_payout, bonus=bonus))
        for decks in DECK_RANGE
    ]


def format_odds_by_decks(tie_payout: int = 10, bonus: str = "none") -> str:
    """Return the 1–8 decks table as Markdown, for the ``odds`` commands.

    :raises InvalidRules: if a setting is out of range.
    """
    tie_bet_terms = f"pays {tie_payout} to 1" if tie_payout else "not offered"
    lines = [
        f"Casino War, exact house edge per unit of ante (bonus: {bonus}; tie bet {tie_bet_terms})",
        "",
        "| decks | P(tie) | always war | always surrender | tie bet | element of risk | std dev |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for odds in odds_by_decks(tie_payout, bonus):
        tie_bet = "—" if odds.house_edge_tie_bet is None else percent(odds.house_edge_tie_bet)
        lines.append(
            f"| {odds.decks} | {odds.p_tie} | {percent(odds.house_edge_war)} "
            f"| {percent(odds.house_edge_surrender)} | {tie_bet} "
            f"| {percent(odds.element_of_risk)} | {odds.std_dev:.4f} |"
        )
    return "\n".join(lines)


def figure(value: Fraction) -> dict[str, Any]:
    """Return ``value`` as ``{"exact": "a/b", "value": float}`` (the float only for display)."""
    return {"exact": f"{value.numerator}/{value.denominator}", "value": float(value)}


def percent(value: Fraction, digits: int = 4) -> str:
    """Return ``value`` as a percentage with ``digits`` decimals, e.g. ``"2.8771 %"``."""
    return f"{float(value) * 100:.{digits}f} %"


def _shoe(decks: int) -> tuple[int, int]:
    """Return the number of cards and of cards per rank in a ``decks``-deck shoe."""
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise ValueError(f"decks must be a whole number of at least 1, got {decks!r}")
    return RANKS_PER_DECK * SUITS_PER_RANK * decks, SUITS_PER_RANK * decks


def mixed_outcome_probabilities(decks: int, war_share: Fraction) -> dict[str, Fraction]:
    """Return the probability of each outcome when ``war_share`` of the ties go to war.

    A decision is only made on a tie, so a player who goes to war on a share ``f`` of ties
    plays the mixture ``f × always war + (1 − f) × always surrender``, outcome by outcome.
    """
    if not 0 <= war_share <= 1:
        raise ValueError(f"war_share must be from 0 to 1, got {war_share}")
    war = outcome_probabilities(decks, WAR)
    surrender = outcome_probabilities(decks, SURRENDER)
    return {o: war_share * war[o] + (1 - war_share) * surrender[o] for o in OUTCOMES}


def mixed_edge_and_variance(
    decks: int, bonus: str, war_share: Fraction
) -> tuple[Fraction, Fraction]:
    """Return the exact house edge and variance (antes squared) of one round played with
    ``war_share`` of the ties going to war (see :func:`mixed_outcome_probabilities`)."""
    probabilities = mixed_outcome_probabilities(decks, war_share)
    mean = sum((p * ante_net(o, bonus) for o, p in probabilities.items()), Fraction(0))
    square = sum((p * ante_net(o, bonus) ** 2 for o, p in probabilities.items()), Fraction(0))
    return -mean, square - mean**2
