"""Verifier: documents verified per second, beside raw Ed25519 verifications in the same run.

A document's checks are dominated by its signature, so the baseline is the bare
``Ed25519PublicKey.verify`` of the same documents' canonical bytes (already encoded, key already
loaded): the verifier's rate as a share of it says how much all the rest costs (canonical JSON,
the stream, the replay, the comparisons). Rates count every signed document of a bundle, the
commitment and the reveal as well as the receipts, since the verifier checks them all. Run
from the repository root (``python -m bench verify``): the bundles are built with the tests'
builder, from the real core.

On a machine shared with other work, runs are slowed by up to a third at moments, and two
whole 1,000-receipt runs a quarter of a second apart still differ by ±5 %. So:

- the one-core figures come from ten bundles of 100 receipts (each its own seed pair), each
  timed beside its baseline back to back, in alternating order: a *pass* over the ten sums
  both sides, and its ratio is one sample (runs of a few milliseconds see the same load);
- every figure is the median of many passes, with their middle half (lower to upper quartile)
  beside it, and the goal's verdict says whether the median reaches it and whether the middle
  half does too;
- one-core runs are timed in process CPU time (waiting for the CPU does not count) with the
  process pinned to one CPU (a run that moves between CPUs starts on cold caches);
- ``--jobs`` runs are timed in wall-clock time, the only fair measure of several processes, with
  every CPU allowed, on one 8,000-receipt bundle;
- the load average is printed before and after, to tell a quiet run from a busy one.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import statistics
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
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

SHARDS: Final = 10
SHARD_RECEIPTS: Final = 100
PASSES: Final = 31
SIDE_PASSES: Final = 11  # for the figures beside the goal
PARALLEL_PASSES: Final = 7
PARALLEL_RECEIPTS: Final = 8_000
SOTA_GAMES: Final = 40
SOTA_PASSES: Final = 5
SHARE_GOAL: Final = 0.80

Bundle = dict[str, Any]
Run = Callable[[], int]  # does its work once, returns how many documents it verified
Clock = Callable[[], float]


def war_bundles(count: int, receipts: int) -> list[Bundle]:
    """Return ``count`` revealed Casino War bundles of ``receipts`` receipts, each its own pair."""
    return [
        bundles.bundle(
            receipts,
            pair=bundles.Pair(
                server_seed=hashlib.sha256(b"bench pair %d" % i).digest(), seed_pair_id=100 + i
            ),
        )
        for i in range(count)
    ]


def sota_bundle(games: int) -> Bundle:
    """Return a revealed bundle of whole Sota games under the default (nordic) rules."""
    return bundles.bundle(games, make_round=lambda pair, nonce: bundles.sota_receipt(pair, nonce))


def signed_documents(bundle: Bundle) -> list[dict[str, Any]]:
    """Return the bundle's signed envelopes: commitment, reveal (if any), receipts."""
    return [e for e in (bundle["commitment"], bundle["reveal"], *bundle["rounds"]) if e]


def raw_verifications(bundle: Bundle) -> Run:
    """Return a run of bare Ed25519 verifications of the bundle's signed documents."""
    key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(bundle["public_key_hex"]))
    signed = [
        (bytes.fromhex(e["signature"]), canonical_json(e["document"]))
        for e in signed_documents(bundle)
    ]

    def run() -> int:
        verify = key.verify
        for signature, message in signed:
            verify(signature, message)
        return len(signed)

    return run


def document_signatures(bundle: Bundle) -> Run:
    """Return a run of signature checks of the signed documents (canonical JSON included)."""
    key, envelopes = bundle["public_key_hex"], signed_documents(bundle)

    def run() -> int:
        for envelope in envelopes:
            verify_signature(key, envelope["document"], envelope["signature"])
        return len(envelopes)

    return run


def verifications(bundle: Bundle, jobs: int = 1) -> Run:
    """Return a run of the verifier over the whole bundle."""
    documents = len(signed_documents(bundle))

    def run() -> int:
        report = verify_bundle(bundle, jobs=jobs)
        assert report.ok, report.failures[:3]
        return documents

    return run


@dataclass
class Pairing:
    """Rates of runs and their baselines measured back to back, pass after pass."""

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


def paired(runs: Sequence[Run], baselines: Sequence[Run], clock: Clock, passes: int) -> Pairing:
    """Time each run back to back with its baseline, in alternating order, ``passes`` times over.

    A pass sums both sides over all the pairs, and its ratio is one sample: two runs a few
    milliseconds apart see the same load from other work, so the ratio cancels most of it. Each
    run is made once untimed first (imports, caches, worker start-up code), and the garbage of
    a pass is collected before the next.
    """
    for run, baseline in zip(runs, baselines, strict=True):
        run()
        baseline()
    pairing = Pairing()
    for i in range(passes):
        gc.collect()
        done = {"run": 0, "base": 0}
        spent = {"run": 0.0, "base": 0.0}
        for k, (run, baseline) in enumerate(zip(runs, baselines, strict=True)):
            for name, timed in (("run", run), ("base", baseline))[:: 1 if (i + k) % 2 else -1]:
                started = clock()
                done[name] += timed()
                spent[name] += clock() - started
        rate, base = done["run"] / spent["run"], done["base"] / spent["base"]
        pairing.run_rates.append(rate)
        pairing.baseline_rates.append(base)
        pairing.ratios.append(rate / base)
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
        f"median {pairing.median:.1%} over {len(pairing.ratios)} passes, middle half "
        f"{lower:.1%}–{upper:.1%}"
    )
    if pairing.median < goal:
        return f"**NOT met**: {figures}"
    if lower < goal:
        return f"**met, narrowly** (a quarter of the passes or more fell short): {figures}"
    return f"**met**: {figures}"


def load() -> str:
    """Return the 1-minute load average, or a dash where the system has none."""
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "–"


def main() -> None:
    """Print the verifier benchmark as Markdown."""
    shards = war_bundles(SHARDS, SHARD_RECEIPTS)
    big = bundles.bundle(PARALLEL_RECEIPTS)
    games = sota_bundle(SOTA_GAMES)
    cpu, wall = time.process_time, time.perf_counter
    load_before = load()
    raw = [raw_verifications(shard) for shard in shards]
    with one_cpu():
        one_core = paired([verifications(shard) for shard in shards], raw, cpu, PASSES)
        documents = paired([document_signatures(shard) for shard in shards], raw, cpu, SIDE_PASSES)
        sota_games = paired([verifications(games)], [raw_verifications(games)], cpu, SOTA_PASSES)
    one_job, two_jobs = verifications(big, jobs=1), verifications(big, jobs=2)
    jobs = paired([two_jobs], [one_job], wall, PARALLEL_PASSES)
    jobs_vs_raw = paired([two_jobs], [raw_verifications(big)], wall, PARALLEL_PASSES)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print("## Verifier")
    print()
    print(
        f"`python -m bench verify` (`bench/bench_verify.py`): revealed Casino War bundles (ties, "
        "wars and surrenders included), every check made, beside the bare Ed25519 verification "
        "of the same signed documents' canonical bytes (key loaded, bytes encoded); rates count "
        "every signed document (commitment, reveal, receipts). One-core figures: "
        f"{SHARDS} bundles of {SHARD_RECEIPTS} receipts, each timed beside its baseline, in "
        f"process CPU time on one pinned CPU; the ratio is the median of {PASSES} passes over "
        f"the {SHARDS}, with the middle half of the passes in brackets. `--jobs` figures: one "
        f"bundle of {PARALLEL_RECEIPTS:,} receipts, in wall-clock time."
    )
    print()
    print("| measure | best documents/s | µs each | median ratio (middle half) | against |")
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
