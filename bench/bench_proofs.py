"""The audit log at 10,000 and 1,000,000 entries: proofs, standing checks, whole check, export.

On SQLite, one process, a checkpoint every 100 entries, the log built with
``python -m bench.large_log`` (entries chained and checkpoints signed as the service does it,
written in bulk). At each size:

- *tree*: storing the tree nodes over the whole log (``audit.extend_tree`` until caught up),
  which the background runner does as the log grows;
- *inclusion* / *consistency proof*: from the stored nodes (median of 25, random entries and
  sizes), ``/operator/audit/proof/<seq>`` and ``/operator/audit/consistency``;
- *standing step*: the standing audit check after 100 more entries, from its stored verdict;
- *page reads*: what ``/operator/audit`` reads (its stored verdict, a page of entries, the
  signed note), median of 25;
- *whole check* / *export*: the whole log read from scratch in chunks (``flask audit verify``,
  a whole check asked for from the console; the JSON Lines download), once.

The last line is the process's peak resident memory after the largest size.
"""

from __future__ import annotations

import random
import resource
from typing import Final

from sqlalchemy.orm import Session

from bench.large_log import fill
from bench.timing import median_ms
from bench.timing import scratch_session
from bench.timing import seconds
from bench.timing import timed
from sota_casino.services import audit
from sota_casino.services import checks
from sota_casino.services import reports

SIZES: Final = (10_000, 1_000_000)
RUNS: Final = 25


def _measure(session: Session, pick: random.Random, size: int) -> tuple[float, ...]:
    """Time the tree, the proofs, the page's reads, a standing step, a whole check, an export."""

    def catch_up() -> None:
        covered = -1
        while (reached := audit.extend_tree(session)) != covered:
            covered = reached

    tree_s = seconds(catch_up)
    first = checks.run(session, "audit", "bench")  # the first, whole, standing check
    assert first.verdict.ok, first
    covered = size - size % 100
    inclusion_ms = median_ms(lambda: audit.inclusion_proof(session, pick.randint(1, covered)), RUNS)

    def consistency() -> None:
        old = pick.randint(1, size)
        audit.consistency_proof(session, old, pick.randint(old, size))

    consistency_ms = median_ms(consistency, RUNS)

    def page() -> None:
        checks.audit_verdict(session)
        audit.entries(session, after_seq=size - 50, limit=50)
        reports.checkpoint_note(session)

    page_ms = median_ms(page, RUNS)
    fill(session, 100)
    step, step_s = timed(lambda: checks.run(session, "audit", "bench"))
    step_ms = step_s * 1000
    assert step.verdict.ok and not step.whole, step
    whole, whole_s = timed(lambda: audit.verify(session))
    assert whole.ok and whole.size == size + 100, whole
    export_s = seconds(lambda: sum(1 for _ in audit.iter_export(session)))
    return tree_s, inclusion_ms, consistency_ms, step_ms, page_ms, whole_s, export_s


def main() -> None:
    rows: list[tuple[float, ...]] = []
    pick = random.Random(6962)
    with scratch_session(CHECKPOINT_EVERY=100) as session:
        size = 0
        for target in SIZES:
            build_s = seconds(lambda: fill(session, target - size))  # noqa: B023
            size = target
            rows.append((target, build_s, *_measure(session, pick, size)))
            size += 100
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("## Audit proofs, standing checks and exports at scale\n")
    print(__doc__.split("\n\n", 1)[1].strip())
    print()
    print(
        "| entries | build (s) | tree (s) | inclusion proof (ms) | consistency proof (ms) "
        "| standing step (ms) | page reads (ms) | whole check (s) | export (s) |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for entries, build, tree, inclusion, consistency, step, page, whole, export in rows:
        print(
            f"| {entries:,.0f} | {build:.1f} | {tree:.1f} | {inclusion:.2f} | {consistency:.2f} "
            f"| {step:.1f} | {page:.1f} | {whole:.1f} | {export:.1f} |"
        )
    small, large = rows[0], rows[-1]
    print()
    print(
        f"- A hundred times the log: an inclusion proof costs {large[3] / small[3]:.2f}× as much "
        f"({large[3]:.2f} ms at {large[0]:,} entries), a standing step {large[5] / small[5]:.2f}×."
    )
    print(f"- Peak resident memory of the whole run: {peak_mb:.0f} MB.")


if __name__ == "__main__":
    main()
