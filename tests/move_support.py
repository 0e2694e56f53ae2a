"""Seeds whose Prisoners of War game waits for a move that a copy sent again would lay again.

A move's cards are laid again when they are a valid answer to the next choice too (the player
wins them back, say): that a copy of such a move is refused is what the tests check.
"""

from __future__ import annotations

import itertools
from typing import Any

from seed_support import candidate_seeds

from sota_casino.core import fairness
from sota_casino.core import sota

#: The rules of the games the seeds are found for (the defaults, with Prisoners of War).
PRISONERS: dict[str, Any] = {"prisoners_of_war": True}


def seed_repeating_a_move(client_seed: str, nonce: int = 0) -> tuple[bytes, list[str]]:
    """Return a server seed (:func:`~seed_support.candidate_seeds`) whose Prisoners of War game
    (:data:`PRISONERS`) waits for a move whose cards are a valid answer to the next choice too,
    and that move: the same cards sent twice would be laid twice."""
    rules = sota.SotaRules.from_dict(PRISONERS)
    for seed in itertools.islice(candidate_seeds("repeat-move"), 10_000):

        def played(moves: list[list[str]], seed: bytes = seed) -> sota.GameResult:
            stream = fairness.Stream(fairness.Seeds(seed, client_seed, nonce))
            return sota.play_game(rules, stream=stream, choices=moves)

        first = played([]).pending
        if first is None:
            continue
        move = list(first["options"][: first["count"]])
        after = played([move]).pending
        if after is not None and after["count"] == len(move) and set(move) <= set(after["options"]):
            return seed, move
    raise AssertionError("no seed repeats a move")
