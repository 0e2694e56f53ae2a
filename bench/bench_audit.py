"""The audit log as it grows: what appending and checking cost at 1,000 to 40,000 entries.

On SQLite, one process, a checkpoint every 100 entries (the default). At each size:

- *append*: 100 entries in one transaction, crossing one checkpoint; the baseline is the same
  at the smallest size, so a ratio near 1 means checkpointing does not grow with the log;
- *whole check*: ``audit.verify``, the chain and every checkpoint read from scratch (``flask
  audit verify``, the API); its baseline is *read and rehash*, the least any check of the log
  must do, written here apart from the code measured so that it stays the same yardstick:
  every entry read in one query and its SHA-256 over the previous hash and its canonical JSON
  compared with the hash it carries;
- *standing step*: the standing audit check (``checks.run``) after 100 more entries, as the
  background runner extends its stored verdict; its baseline is the whole check at the same
  size.

Each figure is the median of 5 runs, in wall-clock time (the database is part of the cost).
"""

from __future__ import annotations

import hashlib
import json
import statistics
from typing import Final

from sqlalchemy import text
from sqlalchemy.orm import Session

from bench.timing import median_ms
from bench.timing import scratch_session
from bench.timing import timed
from sota_casino.core import fairness
from sota_casino.services import audit
from sota_casino.services import checks

SIZES: Final = (1_000, 10_000, 40_000)
BLOCK: Final = 100
RUNS: Final = 5


def read_and_rehash(session: Session) -> int:
    """The baseline: each entry read and its hash recomputed from the one before."""
    prev = bytes(32)
    rows = session.execute(
        text("SELECT seq, time, actor, action, subject, data, hash FROM audit_entries ORDER BY seq")
    )
    count = 0
    for seq, time, actor, action, subject, data, stored in rows:
        fields = {
            "seq": seq,
            "time": time,
            "actor": actor,
            "action": action,
            "subject": subject,
            "data": json.loads(data),
        }
        prev = hashlib.sha256(prev + fairness.canonical_json(fields)).digest()
        assert prev.hex() == stored, seq
        count += 1
    session.rollback()
    return count


def main() -> None:
    rows = []
    with scratch_session(CHECKPOINT_EVERY=BLOCK) as session:

        def append() -> None:
            with session.begin():
                for _ in range(BLOCK):
                    audit.record(session, actor="system", action="bench.event", data={"n": 1})

        size = 0
        for target in SIZES:
            while size < target:
                append()
                size += BLOCK
            append_ms = median_ms(append, RUNS)
            size += BLOCK * RUNS
            base_ms = median_ms(lambda: read_and_rehash(session), RUNS)
            whole_ms = median_ms(lambda: audit.verify(session), RUNS)
            checked = size
            checks.run(session, "audit", "bench")  # the first step reads the whole log
            page_runs = []
            for _ in range(RUNS):
                append()
                step, took = timed(lambda: checks.run(session, "audit", "bench"))
                page_runs.append(took)
                assert step.verdict.ok and not step.whole, step
            size = step.verdict.size
            page_ms = statistics.median(page_runs) * 1000
            rows.append((checked, append_ms, base_ms, whole_ms, page_ms))
    print("## Audit log\n")
    print(__doc__.split("\n\n", 1)[1].strip())
    print()
    print(
        "| entries | append 100 (ms) | vs smallest log | read and rehash (ms) "
        "| whole check (ms) | vs read and rehash | µs per entry | standing step (ms) "
        "| vs whole check |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    first_append = rows[0][1]
    for size, append_ms, base_ms, whole_ms, page_ms in rows:
        print(
            f"| {size:,} | {append_ms:.1f} | {append_ms / first_append:.2f} | {base_ms:.0f} "
            f"| {whole_ms:.0f} | {whole_ms / base_ms:.2f} | {whole_ms * 1000 / size:.1f} "
            f"| {page_ms:.1f} | {page_ms / whole_ms:.3f} |"
        )
    largest = rows[-1]
    print()
    print(
        f"- Appending with checkpoints does not grow with the log: 100 entries cost "
        f"{largest[1] / first_append:.2f}× as much at {largest[0]:,} entries as at "
        f"{rows[0][0]:,}."
    )
    print(
        f"- The standing check of 100 new entries at {largest[0]:,} entries: "
        f"{largest[4]:.1f} ms, {largest[4] / largest[3]:.1%} of reading the whole log."
    )
    print(
        f"- The whole check at {largest[0]:,} entries: {largest[3] / largest[2]:.2f}× reading "
        "and rehashing every entry in one query."
    )


if __name__ == "__main__":
    main()
