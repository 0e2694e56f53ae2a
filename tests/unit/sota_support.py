"""Hand-built Sota deals for the engine's tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.core.sota import GameResult
from sota_casino.core.sota import Places
from sota_casino.core.sota import SotaRules
from sota_casino.core.sota import play_game

SEEDS = Seeds(bytes(range(32)), "sota-tests", 0)


def deal(*piles: str, aside: str = "") -> list[str]:
    """Return the deal order giving each seat its pile (top card first), cards set aside last."""
    cards = [pile.split() for pile in piles]
    size = len(cards[0])
    assert all(len(pile) == size for pile in cards), "every seat is dealt as many cards"
    return [cards[i % len(cards)][i // len(cards)] for i in range(size * len(cards))] + (
        aside.split()
    )


def stream() -> Stream:
    """Return a fresh copy of the tests' round stream."""
    return Stream(SEEDS)


def play(
    cards: Sequence[str],
    /,
    *,
    choices: Sequence[Sequence[str]] = (),
    with_stream: bool = False,
    **options: Any,
) -> GameResult:
    """Play the deal under the default rules changed by ``options``."""
    return play_game(
        SotaRules.from_dict(options),
        deck_order=cards,
        stream=stream() if with_stream else None,
        choices=choices,
    )


def places_after(
    cards: Sequence[str], trick: int, /, *, with_stream: bool = False, **options: Any
) -> Places:
    """Return where every card is after trick number ``trick`` (1 = the first) of the deal."""
    seen: list[Places] = []
    play_game(
        SotaRules.from_dict(options),
        deck_order=cards,
        stream=stream() if with_stream else None,
        observer=seen.append,
    )
    return seen[trick - 1]


def pile(text: str) -> tuple[str, ...]:
    """Return a pile written as space-separated cards, top first."""
    return tuple(text.split())
