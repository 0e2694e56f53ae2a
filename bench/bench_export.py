"""The offline audit export check (``verify.pyz audit``), beside a plain hash-chain pass.

An export of 100,000 entries with a checkpoint every 50 (2,000, signed), made in memory with
the core's own chaining, Merkle tree and signing. The baseline is the least any check of the
export must do: each entry's SHA-256 over the previous hash and its canonical JSON, compared
with the hash it carries. It is written here, apart from the code measured, so that it stays
the same yardstick whatever that code becomes. Beside it, timed back to back in alternating
order, in process CPU time on one pinned CPU:

- *parse*: the export's text read into entries and checkpoints (``parse_export_text``);
- *chain*: ``verify_chain``, the hash chain with every entry's shape and links;
- *whole check*: ``verify_audit_export``, the chain, the entries' keys, the Merkle tree and
  every checkpoint's signature, root and consistency;
- *forged, with its report*: the same over the export of a log rewritten from its first entry
  (each checkpoint fails its root, and its consistency with the first), then its text and JSON
  report.

Each figure is the median of 7 passes, with the middle half of the passes in brackets.
"""

from __future__ import annotations

import hashlib
import io
import os
import time
from collections.abc import Callable
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import Final

from bench.bench_verify import Pairing
from bench.bench_verify import load
from bench.bench_verify import one_cpu
from bench.bench_verify import paired
from sota_casino.core import audit_chain
from sota_casino.core import fairness
from sota_casino.core import merkle
from sota_casino.verify.audit import render_audit
from sota_casino.verify.audit import verify_audit_export
from sota_casino.verify.report import Symbols

ENTRIES: Final = 100_000
CHECKPOINT_EVERY: Final = 50
PASSES: Final = 7

Run = Callable[[], int]  # does its work once, returns how many entries it went through


def made_up_entries(count: int, first_actor: str = "user:1") -> list[dict[str, Any]]:
    """``count`` chained entries a millisecond apart, each a round's event of its own."""
    start = datetime(2025, 4, 1, tzinfo=UTC)
    return audit_chain.link_entries(
        {
            "seq": seq,
            "time": fairness.format_time(start + timedelta(milliseconds=seq)),
            "actor": first_actor if seq == 1 else f"user:{seq % 300 + 1}",
            "action": "bench.event",
            "subject": f"round:{seq}",
            "data": {"n": seq},
        }
        for seq in range(1, count + 1)
    )


def signed_checkpoints(key: Any, entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A signed checkpoint every :data:`CHECKPOINT_EVERY` entries, dated with its last entry."""
    tree = merkle.MerkleTree([bytes.fromhex(entry["hash"]) for entry in entries])
    return [
        fairness.signed(
            key,
            audit_chain.checkpoint_document(size, tree.root(size).hex(), entries[size - 1]["time"]),
        )
        for size in range(CHECKPOINT_EVERY, len(entries) + 1, CHECKPOINT_EVERY)
    ]


def export_text(entries: Sequence[dict[str, Any]], checkpoints: Sequence[dict[str, Any]]) -> str:
    return "".join(audit_chain.export_lines(entries, checkpoints))


def plain_chain_pass(entries: Sequence[dict[str, Any]]) -> Run:
    """The baseline: each entry's hash recomputed from the one before and compared."""

    def run() -> int:
        prev = bytes(32)
        for entry in entries:
            fields = {key: entry[key] for key in audit_chain.ENTRY_KEYS}
            digest = hashlib.sha256(prev + fairness.canonical_json(fields)).digest()
            assert digest.hex() == entry["hash"]
            prev = digest
        return len(entries)

    return run


def parse(text: str) -> Run:
    def run() -> int:
        return len(audit_chain.parse_export_text(text).entries)

    return run


def chain(entries: Sequence[dict[str, Any]]) -> Run:
    def run() -> int:
        assert audit_chain.verify_chain(entries).ok
        return len(entries)

    return run


def whole_check(export: audit_chain.AuditExport, public_key_hex: str) -> Run:
    def run() -> int:
        assert verify_audit_export(export, public_key_hex).ok
        return len(export.entries)

    return run


def forged_check_and_report(export: audit_chain.AuditExport, public_key_hex: str) -> Run:
    symbols = Symbols(io.StringIO())

    def run() -> int:
        report = verify_audit_export(export, public_key_hex)
        assert not report.ok
        render_audit(report, symbols)
        report.to_dict()
        return len(export.entries)

    return run


def times_baseline(pairing: Pairing) -> str:
    """The run's time as a multiple of the baseline's: median (middle half) over the passes."""
    lower, upper = pairing.middle_half  # of baseline time / run time, so they swap
    return f"{1 / pairing.median:.2f} ({1 / upper:.2f}–{1 / lower:.2f})"


def main() -> None:
    """Print the export check benchmark as Markdown."""
    key = fairness.new_signing_key()
    public = fairness.public_key_hex(key)
    entries = made_up_entries(ENTRIES)
    checkpoints = signed_checkpoints(key, entries)
    text = export_text(entries, checkpoints)
    honest = audit_chain.parse_export_text(text)
    forged = audit_chain.parse_export_text(
        export_text(made_up_entries(ENTRIES, first_actor="system"), checkpoints)
    )
    baseline = plain_chain_pass(honest.entries)
    measures = [
        ("parse the export's text", parse(text)),
        ("`verify_chain`", chain(honest.entries)),
        ("whole check (`verify_audit_export`)", whole_check(honest, public)),
        ("forged: whole check, text and JSON report", forged_check_and_report(forged, public)),
    ]
    load_before = load()
    with one_cpu():
        pairings = [
            (label, paired([run], [baseline], time.process_time, PASSES)) for label, run in measures
        ]
    print("## Audit export check")
    print()
    print(__doc__.split("\n\n", 1)[1].strip())
    print()
    print("| measure | best ms | × plain chain pass, median (middle half) |")
    print("| --- | ---: | ---: |")
    best_base = max(max(p.baseline_rates) for _, p in pairings)
    print(f"| plain chain pass (baseline) | {ENTRIES / best_base * 1000:.0f} | 1 |")
    for label, pairing in pairings:
        print(f"| {label} | {ENTRIES / pairing.best_run * 1000:.0f} | {times_baseline(pairing)} |")
    print()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"- {ENTRIES:,} entries, {len(checkpoints):,} checkpoints, {len(text) / 1e6:.1f} MB of "
        f"JSON Lines; {cpus} CPUs, one used."
    )
    print(f"- Load average (1 minute) before and after: {load_before}, {load()}.")


if __name__ == "__main__":
    main()
