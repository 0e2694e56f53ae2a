"""Core: Casino War rounds through the real stream and engine, full shuffles, exact odds.

Every rate is the best of several interleaved repetitions in process CPU time (other work on a
shared machine then slows it less), and is set beside raw HMAC-SHA256 calls measured in the
same run (a round needs at least one HMAC block): the ratios carry over between machines
better than the absolute figures.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Final

from bench.timing import best_rates
from sota_casino.core import casino_war
from sota_casino.core.cards import canonical_shoe
from sota_casino.core.casino_war import TableRules
from sota_casino.core.fairness import PartialShuffle
from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.core.fairness import new_server_seed
from sota_casino.core.fairness import shuffle
from sota_casino.core.odds import odds_by_decks

REPEATS: Final = 15
ROUNDS: Final = 20_000
SHUFFLES: Final = 300
ROUNDS_GOAL: Final = 100_000
HMAC_SHARE_GOAL: Final = 0.25

SERVER_SEED: Final = new_server_seed()
CLIENT_SEED: Final = "bench-client-seed"


def raw_hmac(count: int) -> None:
    """Compute ``count`` HMAC-SHA256 blocks of the stream's form, nothing else."""
    digest = hmac.digest
    for nonce in range(count):
        digest(SERVER_SEED, b"bench-client-seed:%d:0" % nonce, "sha256")


def casino_war_rounds(count: int) -> None:
    """Play ``count`` one-chip rounds at the default table, each on a fresh stream (nonce) and
    its shoe asked for as the service asks for it, every round."""
    rules = TableRules()
    play = casino_war.play
    for nonce in range(count):
        stream = Stream(Seeds(SERVER_SEED, CLIENT_SEED, nonce))
        play(rules, PartialShuffle(canonical_shoe("standard52", rules.decks), stream).prefix, 100)


def full_shuffles(decks: int) -> Callable[[int], None]:
    """Return a run of ``count`` full shuffles of a ``decks``-deck shoe, fresh stream each."""
    shoe = canonical_shoe("standard52", decks)

    def run(count: int) -> None:
        for nonce in range(count):
            shuffle(shoe, Stream(Seeds(SERVER_SEED, CLIENT_SEED, nonce)))

    return run


def exact_odds(count: int) -> None:
    """Compute the exact odds of 1 to 8 decks, both bonus modes, ``count`` times."""
    for _ in range(count):
        odds_by_decks(bonus="none")
        odds_by_decks(bonus="ante")


def blocks_per_round(count: int) -> float:
    """Return the mean number of HMAC blocks a round computes."""
    rules, shoe, blocks = TableRules(), canonical_shoe("standard52", 6), 0
    for nonce in range(count):
        stream = Stream(Seeds(SERVER_SEED, CLIENT_SEED, nonce))
        casino_war.play(rules, PartialShuffle(shoe, stream).prefix, 100)
        blocks += stream.blocks_used
    return blocks / count


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def main() -> None:
    """Print the core benchmark as Markdown."""
    rates = best_rates(
        {
            "hmac": (raw_hmac, ROUNDS),
            "rounds": (casino_war_rounds, ROUNDS),
            "shuffle_312": (full_shuffles(6), SHUFFLES),
            "shuffle_52": (full_shuffles(1), SHUFFLES * 6),
            "odds": (exact_odds, 5),
        },
        REPEATS,
    )
    hmac_rate, rounds_rate = rates["hmac"], rates["rounds"]
    share = rounds_rate / hmac_rate
    print("## Core: Casino War, shuffles, odds")
    print()
    print(f"Best of {REPEATS} interleaved runs in process CPU time, one core.")
    print()
    print("| measure | per second | µs each | vs raw HMAC |")
    print("| --- | ---: | ---: | ---: |")
    rows = [
        ("raw HMAC-SHA256 (`hmac.digest`, baseline)", hmac_rate),
        ("Casino War round (fresh stream, prefix, `play`)", rounds_rate),
        ("full shuffle, 312 cards (6 decks)", rates["shuffle_312"]),
        ("full shuffle, 52 cards", rates["shuffle_52"]),
    ]
    for label, rate in rows:
        print(f"| {label} | {rate:,.0f} | {1e6 / rate:.2f} | {rate / hmac_rate:.3f} |")
    print()
    print(f"- HMAC blocks per round: {blocks_per_round(ROUNDS):.3f}")
    print(f"- exact odds, 1–8 decks, both bonus modes (16 settings): {1000 / rates['odds']:.2f} ms")
    print(f"- goal ≥ {ROUNDS_GOAL:,} rounds/s: {verdict(rounds_rate >= ROUNDS_GOAL)}")
    print(
        f"- goal ≥ {HMAC_SHARE_GOAL:.0%} of the raw HMAC rate: {share:.1%}, "
        f"{verdict(share >= HMAC_SHARE_GOAL)}"
    )
