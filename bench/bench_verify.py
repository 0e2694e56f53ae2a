"""Verifier: receipts verified per second, beside raw Ed25519 verifications in the same run.

A receipt's checks are dominated by its signature, so the baseline is the bare
``Ed25519PublicKey.verify`` of each receipt's canonical bytes (already encoded, key already
loaded): the verifier's rate as a share of it says how much all the rest costs (canonical JSON,
the stream, the replay, the comparisons). Every rate is the best of several interleaved
repetitions. One-core rates are timed in process CPU time, so that other work on a shared
machine does not tilt the ratio; ``--jobs`` rates are wall-clock time, the only fair measure of
several processes. Run from the repository root (``python -m bench verify``): the bundles are
built with the tests' builder, from the real core.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from sota_casino.core.fairness import canonical_json
from sota_casino.verify import PARALLEL_MIN_ROUNDS
from sota_casino.verify import verify_bundle
from tests.unit import bundles

REPEATS: Final = 5
RECEIPTS: Final = 2_000
PARALLEL_RECEIPTS: Final = 8_000
SOTA_GAMES: Final = 60
SHARE_GOAL: Final = 0.80

Bundle = dict[str, Any]


def sota_bundle(games: int) -> Bundle:
    """Return a revealed bundle of whole Sota games under the default (nordic) rules."""
    return bundles.bundle(games, make_round=lambda pair, nonce: bundles.sota_receipt(pair, nonce))


def raw_verifications(bundle: Bundle) -> Callable[[], int]:
    """Return a run of bare Ed25519 verifications of the bundle's receipts."""
    key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(bundle["public_key_hex"]))
    signed = [
        (bytes.fromhex(r["signature"]), canonical_json(r["document"])) for r in bundle["rounds"]
    ]

    def run() -> int:
        verify = key.verify
        for signature, message in signed:
            verify(signature, message)
        return len(signed)

    return run


def verifications(bundle: Bundle, jobs: int = 1) -> Callable[[], int]:
    """Return a run of the verifier over the whole bundle."""

    def run() -> int:
        report = verify_bundle(bundle, jobs=jobs)
        assert report.ok, report.failures[:3]
        return len(report.rounds)

    return run


Clock = Callable[[], float]


def best_rates(runs: dict[str, tuple[Callable[[], int], Clock]]) -> dict[str, float]:
    """Return each run's best rate (receipts per second) over interleaved repetitions."""
    best = dict.fromkeys(runs, 0.0)
    for _ in range(REPEATS):
        for name, (run, clock) in runs.items():
            started = clock()
            count = run()
            best[name] = max(best[name], count / (clock() - started))
    return best


def main() -> None:
    """Print the verifier benchmark as Markdown."""
    war = bundles.bundle(RECEIPTS)
    big = bundles.bundle(PARALLEL_RECEIPTS)
    games = sota_bundle(SOTA_GAMES)
    cpu, wall = time.process_time, time.perf_counter
    rates = best_rates(
        {
            "raw": (raw_verifications(war), cpu),
            "war": (verifications(war), cpu),
            "sota": (verifications(games), cpu),
            "raw_big": (raw_verifications(big), wall),
            "war_1": (verifications(big, jobs=1), wall),
            "war_2": (verifications(big, jobs=2), wall),
        }
    )
    raw, raw_big = rates["raw"], rates["raw_big"]
    share = rates["war"] / raw
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print("## Verifier")
    print()
    print(
        f"Best of {REPEATS} interleaved runs. Casino War bundles of {RECEIPTS:,} and "
        f"{PARALLEL_RECEIPTS:,} receipts (ties, wars and surrenders included), revealed, every "
        f"check made; the baseline is the bare Ed25519 verification of the same receipts."
    )
    print()
    print("| measure | receipts/s | µs each | vs raw Ed25519 |")
    print("| --- | ---: | ---: | ---: |")
    rows = [
        ("raw Ed25519 `verify` (baseline), CPU time", raw, raw),
        ("`verify_bundle`, Casino War, one core, CPU time", rates["war"], raw),
        (f"`verify_bundle`, Sota (nordic, {SOTA_GAMES} whole games), CPU time", rates["sota"], raw),
        ("raw Ed25519 `verify` (baseline), wall clock", raw_big, raw_big),
        ("`verify_bundle`, `--jobs 1`, wall clock", rates["war_1"], raw_big),
        ("`verify_bundle`, `--jobs 2`, wall clock", rates["war_2"], raw_big),
    ]
    for label, rate, baseline in rows:
        print(f"| {label} | {rate:,.0f} | {1e6 / rate:.1f} | {rate / baseline:.2f} |")
    print()
    verdict = "met" if share >= SHARE_GOAL else "NOT met"
    print(f"- goal ≥ {SHARE_GOAL:.0%} of the raw Ed25519 rate on one core: {share:.1%}, {verdict}")
    print(
        f"- `--jobs 2` over `--jobs 1` ({cpus} CPUs here; bundles of "
        f"{PARALLEL_MIN_ROUNDS}+ receipts): ×{rates['war_2'] / rates['war_1']:.2f}"
    )
    print(
        "- a Sota receipt replays a whole game (hundreds of tricks), so its signature no longer "
        "dominates"
    )


if __name__ == "__main__":
    main()
