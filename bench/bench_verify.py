"""Verifier: receipts verified per second, beside raw Ed25519 verifications in the same run.

A receipt's checks are dominated by its signature, so the baseline is the bare
``Ed25519PublicKey.verify`` of each receipt's canonical bytes (already encoded, key already
loaded): the verifier's rate as a share of it says how much all the rest costs (canonical JSON,
the stream, the replay, the comparisons). Run from the repository root (``python -m bench
verify``): the bundles are built with the tests' builder, from the real core.

On a shared machine other work slows some runs down, by up to a third, so every ratio comes from
runs paired back to back, in alternating order, many times over:

- one-core runs are timed in process CPU time (time spent waiting for the CPU does not count)
  with the process pinned to one CPU (a run that moves between CPUs starts on cold caches);
- each figure is the median of the pairs' ratios, with their middle half (lower to upper
  quartile) beside it: the best rates alone are no measure, since the best run and the best
  baseline may come from quieter and busier moments;
- the goal's verdict says whether the median reaches it, and whether the middle half does too;
- ``--jobs`` runs are timed in wall-clock time, the only fair measure of several processes, with
  every CPU allowed;
- the load average is printed before and after, to tell a quiet run from a busy one.
"""

from __future__ import annotations

import contextlib
import gc
import os
import statistics
import time
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from sota_casino.core.fairness import canonical_json
from sota_casino.core.fairness import verify_signature
from sota_casino.verify import PARALLEL_MIN_ROUNDS
from sota_casino.verify import verify_bundle
from tests.unit import bundles

PAIRS: Final = 41
SIDE_PAIRS: Final = 15  # for the figures beside the goal
PARALLEL_PAIRS: Final = 7
RECEIPTS: Final = 1_000
PARALLEL_RECEIPTS: Final = 8_000
SOTA_GAMES: Final = 40
SOTA_PAIRS: Final = 5
SHARE_GOAL: Final = 0.80

Bundle = dict[str, Any]
Run = Callable[[], int]
Clock = Callable[[], float]


def sota_bundle(games: int) -> Bundle:
    """Return a revealed bundle of whole Sota games under the default (nordic) rules."""
    return bundles.bundle(games, make_round=lambda pair, nonce: bundles.sota_receipt(pair, nonce))


def raw_verifications(bundle: Bundle) -> Run:
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


def document_signatures(bundle: Bundle) -> Run:
    """Return a run of signature checks of the receipts as documents (canonical JSON included)."""
    key, receipts = bundle["public_key_hex"], bundle["rounds"]

    def run() -> int:
        for receipt in receipts:
            verify_signature(key, receipt["document"], receipt["signature"])
        return len(receipts)

    return run


def verifications(bundle: Bundle, jobs: int = 1) -> Run:
    """Return a run of the verifier over the whole bundle."""

    def run() -> int:
        report = verify_bundle(bundle, jobs=jobs)
        assert report.ok, report.failures[:3]
        return len(report.rounds)

    return run


@dataclass
class Pairing:
    """Rates of a run and its baseline measured back to back, several times."""

    run_rates: list[float] = field(default_factory=list)
    baseline_rates: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)

    @property
    def best_run(self) -> float:
        return max(self.run_rates)

    @property
    def best_baseline(self) -> float:
        return max(self.baseline_rates)

    @property
    def median(self) -> float:
        return statistics.median(self.ratios)

    @property
    def middle_half(self) -> tuple[float, float]:
        """The lower and upper quartiles of the ratios."""
        lower, _, upper = statistics.quantiles(self.ratios, n=4)
        return lower, upper

    def summary(self) -> str:
        lower, upper = self.middle_half
        return f"{self.median:.3f} ({lower:.3f}–{upper:.3f})"


def paired(run: Run, baseline: Run, clock: Clock, pairs: int) -> Pairing:
    """Time ``run`` and ``baseline`` back to back ``pairs`` times, in alternating order.

    The ratio of two runs a fraction of a second apart cancels most of the load that other work
    puts on a shared machine; the median of the ratios is the figure to read. Each is run once
    untimed first (imports, caches, worker start-up code), and the garbage of one run is
    collected before the next is timed.
    """
    run()
    baseline()
    pairing = Pairing()
    for i in range(pairs):
        rates = {}
        for name, timed in (("run", run), ("base", baseline))[:: 1 if i % 2 else -1]:
            gc.collect()
            started = clock()
            count = timed()
            rates[name] = count / (clock() - started)
        pairing.run_rates.append(rates["run"])
        pairing.baseline_rates.append(rates["base"])
        pairing.ratios.append(rates["run"] / rates["base"])
    return pairing


@contextlib.contextmanager
def one_cpu() -> Iterator[None]:
    """Pin this process to one CPU for the block, where the system allows it."""
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {max(allowed)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def verdict(pairing: Pairing, goal: float) -> str:
    """Say whether the median ratio reaches ``goal``, and how surely."""
    lower, upper = pairing.middle_half
    figures = (
        f"median {pairing.median:.1%} of {len(pairing.ratios)} paired runs, middle half "
        f"{lower:.1%}–{upper:.1%}"
    )
    if pairing.median < goal:
        return f"**NOT met**: {figures}"
    if lower < goal:
        return f"**met, narrowly** (a quarter of the pairs or more fell short): {figures}"
    return f"**met**: {figures}"


def load() -> str:
    """Return the 1-minute load average, or a dash where the system has none."""
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "–"


def main() -> None:
    """Print the verifier benchmark as Markdown."""
    war = bundles.bundle(RECEIPTS)
    big = bundles.bundle(PARALLEL_RECEIPTS)
    games = sota_bundle(SOTA_GAMES)
    cpu, wall = time.process_time, time.perf_counter
    load_before = load()
    raw = raw_verifications(war)
    with one_cpu():
        one_core = paired(verifications(war), raw, cpu, PAIRS)
        documents = paired(document_signatures(war), raw, cpu, SIDE_PAIRS)
        sota_games = paired(verifications(games), raw, cpu, SOTA_PAIRS)
    jobs = paired(verifications(big, jobs=2), verifications(big, jobs=1), wall, PARALLEL_PAIRS)
    jobs_vs_raw = paired(verifications(big, jobs=2), raw_verifications(big), wall, PARALLEL_PAIRS)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print("## Verifier")
    print()
    print(
        f"`python -m bench verify` (`bench/bench_verify.py`): revealed Casino War bundles of "
        f"{RECEIPTS:,} and {PARALLEL_RECEIPTS:,} receipts (ties, wars and surrenders included), "
        "every check made, beside the bare Ed25519 verification of the same receipts' canonical "
        "bytes (key loaded, bytes encoded). Each ratio is the median of runs paired back to back, "
        "with the middle half of the pairs in brackets; one-core figures in process CPU time on "
        "one pinned CPU, `--jobs` in wall-clock time."
    )
    print()
    print("| measure | best receipts/s | µs each | median ratio (middle half) | against |")
    print("| --- | ---: | ---: | ---: | --- |")
    rows = [
        ("raw Ed25519 `verify`, one core", one_core.best_baseline, None, ""),
        (
            "`fairness.verify_signature` (canonical JSON + verify)",
            documents.best_run,
            documents,
            "raw",
        ),
        ("`verify_bundle`, Casino War, one core", one_core.best_run, one_core, "raw"),
        (
            f"`verify_bundle`, Sota (`nordic`, {SOTA_GAMES} whole games)",
            sota_games.best_run,
            sota_games,
            "raw",
        ),
        (
            f"`verify_bundle`, `--jobs 1`, {PARALLEL_RECEIPTS:,} receipts",
            jobs.best_baseline,
            None,
            "",
        ),
        (
            f"`verify_bundle`, `--jobs 2`, {PARALLEL_RECEIPTS:,} receipts",
            jobs.best_run,
            jobs,
            "`--jobs 1`",
        ),
        (
            f"`verify_bundle`, `--jobs 2`, {PARALLEL_RECEIPTS:,} receipts",
            jobs_vs_raw.best_run,
            jobs_vs_raw,
            "raw, one core",
        ),
    ]
    for label, rate, pairing, against in rows:
        ratio = pairing.summary() if pairing else ""
        print(f"| {label} | {rate:,.0f} | {1e6 / rate:.1f} | {ratio} | {against} |")
    print()
    print(
        f"- Goal ≥ {SHARE_GOAL:.0%} of the raw Ed25519 rate on one core: "
        f"{verdict(one_core, SHARE_GOAL)}."
    )
    print(
        f"- `--jobs 2` over `--jobs 1` on {cpus} CPUs (bundles of {PARALLEL_MIN_ROUNDS}+ "
        f"receipts): ×{jobs.median:.2f} (middle half ×{jobs.middle_half[0]:.2f}–"
        f"×{jobs.middle_half[1]:.2f})."
    )
    print(f"- Load average (1 minute) before and after: {load_before}, {load()}.")


if __name__ == "__main__":
    main()
