"""Sota: whole games per second through the real stream and engine, one core.

Each game is played as the service plays it: a fresh stream (its own nonce), the deck shuffled
from it, the whole game with its trick log. Every rate is the best of several interleaved
repetitions over the same seeds, timed in process CPU time (the machine may be shared), and is
set beside two baselines measured in the same run: raw HMAC-SHA256 calls and the full 52-card
shuffle every game starts with, so the ratios carry over between machines better than the
absolute figures.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Final

from bench.timing import best_rates
from sota_casino.core.cards import canonical_deck
from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.core.fairness import shuffle
from sota_casino.core.sota import SotaRules
from sota_casino.core.sota import play_game

REPEATS: Final = 7
GAMES: Final = 400
HMACS: Final = 20_000
NORDIC_GOAL: Final = 2_000

SERVER_SEED: Final = bytes(range(32))
CLIENT_SEED: Final = "bench-sota"

Run = Callable[[int], None]


def stream(nonce: int) -> Stream:
    return Stream(Seeds(SERVER_SEED, CLIENT_SEED, nonce))


def raw_hmac(count: int) -> None:
    """Compute ``count`` HMAC-SHA256 blocks of the stream's form, nothing else."""
    digest = hmac.digest
    for nonce in range(count):
        digest(SERVER_SEED, b"bench-sota:%d:0" % nonce, "sha256")


def deck_shuffles(count: int) -> None:
    """Shuffle a 52-card deck ``count`` times, each from a fresh stream."""
    deck = canonical_deck("standard52")
    for nonce in range(count):
        shuffle(deck, stream(nonce))


def games(rules: SotaRules, *, log: bool = True) -> Run:
    """Return a run of ``count`` whole games under ``rules``, one nonce each."""

    def run(count: int) -> None:
        for nonce in range(count):
            play_game(rules, stream=stream(nonce), log=log)

    return run


def tricks_per_game(rules: SotaRules, count: int) -> float:
    """Return the mean length of the benchmark's games (the same seeds as the timed runs)."""
    return sum(len(play_game(rules, stream=stream(n)).tricks) for n in range(count)) / count


def main() -> None:
    """Print the Sota benchmark as Markdown."""
    nordic = SotaRules.from_preset("nordic")
    workloads = {
        "nordic": ("`nordic` (defaults), trick log kept", nordic),
        "english": ("`english` (one face down)", SotaRules.from_preset("english")),
        "three": ("3 seats, otherwise `nordic`", SotaRules(seats=3)),
        "shuffled": ("`nordic`, `gather: shuffled`", SotaRules(gather="shuffled")),
    }
    runs: dict[str, tuple[Run, int]] = {
        "hmac": (raw_hmac, HMACS),
        "shuffle": (deck_shuffles, GAMES * 4),
        "nordic_nolog": (games(nordic, log=False), GAMES),
    }
    runs |= {name: (games(rules), GAMES) for name, (_, rules) in workloads.items()}
    rates = best_rates(runs, REPEATS)
    shuffle_rate = rates["shuffle"]
    print("## Sota engine")
    print()
    print(f"Best of {REPEATS} interleaved runs of {GAMES} games each, one core, CPU time.")
    print()
    print("| measure | per second | µs each | tricks per game | tricks per second | vs shuffle |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| raw HMAC-SHA256 (baseline) | {rates['hmac']:,.0f} | {1e6 / rates['hmac']:.2f} "
        f"| | | {rates['hmac'] / shuffle_rate:.2f} |"
    )
    print(
        f"| 52-card shuffle from a fresh stream (baseline) | {shuffle_rate:,.0f} "
        f"| {1e6 / shuffle_rate:.1f} | | | 1.00 |"
    )
    rows = [(label, name, rules) for name, (label, rules) in workloads.items()]
    rows.insert(1, ("`nordic`, no trick log (as `flask simulate`)", "nordic_nolog", nordic))
    for label, name, rules in rows:
        rate, length = rates[name], tricks_per_game(rules, GAMES)
        print(
            f"| {label} | {rate:,.0f} | {1e6 / rate:.0f} | {length:.1f} | {rate * length:,.0f} "
            f"| {rate / shuffle_rate:.3f} |"
        )
    print()
    met = "met" if rates["nordic"] >= NORDIC_GOAL else "NOT met"
    print(f"- goal ≥ {NORDIC_GOAL:,} `nordic` games/s with the trick log: {met}")
