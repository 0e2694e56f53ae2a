"""Cards, ranks, deck kinds and their canonical order (docs/fairness.md).

A card is its two-character code: rank then suit (``"TD"`` is the ten of diamonds); jokers are
``"X1"`` and ``"X2"``. Suits never matter in either game, so comparisons use :func:`rank_value`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from .errors import InvalidRules
from .marks import N_

RANKS: Final = "23456789TJQKA"
SUITS: Final = "CDHS"
JOKERS: Final = ("X1", "X2")

#: Rank value used for comparisons: 2..14 for 2..A, 15 for a joker (above the ace).
RANK_VALUES: Final[dict[str, int]] = {r: i + 2 for i, r in enumerate(RANKS)} | {"X": 15}

#: The deck kinds and the ranks each holds, low to high.
DECK_RANKS: Final[dict[str, str]] = {
    "standard52": RANKS,
    "jokers54": RANKS,
    "pjanitsa36": RANKS[RANKS.index("6") :],
    "piquet32": RANKS[RANKS.index("7") :],
}
DECK_KINDS: Final = tuple(DECK_RANKS)

Card = str


def check_deck_kind(kind: str) -> str:
    """Return ``kind`` if it names a deck kind.

    :raises InvalidRules: naming the valid kinds otherwise.
    """
    if kind not in DECK_RANKS:
        raise InvalidRules(
            N_("unknown deck %(name)s; valid: %(valid)s"),
            params={"name": repr(kind), "valid": ", ".join(DECK_KINDS)},
            option="deck",
        )
    return kind


def canonical_deck(kind: str = "standard52") -> tuple[Card, ...]:
    """Return one deck in canonical order: suits C, D, H, S; ranks low to high; jokers last."""
    ranks = DECK_RANKS[check_deck_kind(kind)]
    cards = tuple(rank + suit for suit in SUITS for rank in ranks)
    return cards + JOKERS if kind == "jokers54" else cards


@lru_cache(maxsize=32)
def canonical_shoe(kind: str = "standard52", decks: int = 1) -> tuple[Card, ...]:
    """Return ``decks`` decks of ``kind`` in canonical order, deck by deck.

    Kept once made (a tuple, so no caller can change it): every deal and every check of one
    asks for its shoe, and building one of six decks took as long as dealing a Casino War
    round's two cards from it.
    """
    return canonical_deck(kind) * decks


def rank_value(card: Card) -> int:
    """Return the comparison value of ``card``: 2..14 for 2..A, 15 for a joker."""
    return RANK_VALUES[card[0]]
