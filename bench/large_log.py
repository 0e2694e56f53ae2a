"""Build a large audit log quickly: ``python -m bench.large_log ENTRIES [DATABASE_URL]``.

The entries are chained and the checkpoints signed exactly as the service does it (the same
hash, Merkle tree and signature code), but written in bulk, tens of thousands of rows per
statement, instead of one transaction per entry: a million entries with a checkpoint every
100 take about a minute on SQLite instead of hours. Without a URL it fills the instance's
database (``instance/sota_casino.db``, as ``make run`` uses it) after migrating it.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import Final

from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.orm import Session

from sota_casino.core import audit_chain
from sota_casino.core import fairness
from sota_casino.core import merkle
from sota_casino.models import AuditCheckpoint
from sota_casino.models import AuditEntry
from sota_casino.models import AuditHead
from sota_casino.services.context import context_of

BATCH: Final = 20_000


#: What an entry says: ``(actor, action, subject, data)``.
Event = tuple[str | None, str, str | None, dict[str, Any]]


def bench_events(first_seq: int) -> Iterator[Event]:
    """One ``bench.event`` per entry, each of a subject of its own (``round:{seq}``)."""
    for seq in itertools.count(first_seq):
        yield f"user:{seq % 300 + 1}", "bench.event", f"round:{seq}", {"n": seq}


def fill(
    session: Session,
    count: int,
    *,
    checkpoint_every: int = 100,
    events: Iterator[Event] | None = None,
    step: timedelta = timedelta(milliseconds=1),
) -> int:
    """Append ``count`` entries after whatever the log holds, with a checkpoint every
    ``checkpoint_every`` entries (none for 0); return the log's size.

    :param events: what the entries say, in order (by default :func:`bench_events`).
    :param step: the time between two entries (a log spread over days has days to filter by).
    """
    ctx = context_of(session)
    with session.begin():
        head = session.get(AuditHead, 1)
        size, prev = (head.seq, head.hash) if head else (0, audit_chain.GENESIS_HASH)
        frontier = _frontier(session, size)
        last = session.scalar(select(AuditEntry.time).where(AuditEntry.seq == size))
    # Entries ``step`` apart, ending about now and never before the log's last entry.
    start = datetime.now(UTC) - step * count
    if last is not None:
        start = max(start, fairness.parse_time(last))
    target, first = size + count, size
    events = events or bench_events(size + 1)
    while size < target:
        entries: list[dict[str, Any]] = []
        signed: list[dict[str, Any]] = []
        for _ in range(min(BATCH, target - size)):
            size += 1
            time = fairness.format_time(start + step * (size - first))
            actor, action, subject, data = next(events)
            fields = {
                "seq": size,
                "time": time,
                "actor": actor,
                "action": action,
                "subject": subject,
                "data": data,
            }
            digest = audit_chain.entry_hash(prev, fields)
            entries.append(
                fields
                | {
                    "data": fairness.canonical_json(fields["data"]).decode(),
                    "prev_hash": prev,
                    "hash": digest,
                }
            )
            prev = digest
            frontier = frontier.extended([bytes.fromhex(digest)])
            if checkpoint_every and size % checkpoint_every == 0:
                document = audit_chain.checkpoint_document(size, frontier.root().hex(), time)
                signed.append(
                    {
                        "size": size,
                        "root": document["root"],
                        "time": time,
                        "signature": fairness.sign(ctx.signing_key, document),
                        "public_key_hex": ctx.public_key_hex,
                        "frontier": frontier.to_hex(),
                    }
                )
        with session.begin():
            session.execute(insert(AuditEntry), entries)
            if signed:
                session.execute(insert(AuditCheckpoint), signed)
            if session.get(AuditHead, 1) is None:
                session.add(AuditHead(id=1, seq=size, hash=prev))
            else:
                session.execute(
                    update(AuditHead).where(AuditHead.id == 1).values(seq=size, hash=prev)
                )
    return size


def _frontier(session: Session, size: int) -> merkle.Frontier:
    """The Merkle tree of the log's first ``size`` entries: kept by a checkpoint over all of
    them, else hashed from their stored hashes."""
    latest = session.scalar(select(AuditCheckpoint).order_by(AuditCheckpoint.size.desc()).limit(1))
    if latest is not None and latest.size == size and latest.frontier is not None:
        return merkle.Frontier.from_hex(size, latest.frontier)
    hashes = session.scalars(select(AuditEntry.hash).order_by(AuditEntry.seq))
    return merkle.Frontier.of(bytes.fromhex(h) for h in hashes)


def main(argv: list[str]) -> None:
    from sota_casino import migrate
    from sota_casino.factory import create_app

    if not argv or not argv[0].isdigit():
        raise SystemExit(__doc__)
    app = create_app() if len(argv) < 2 else create_app({"DATABASE_URL": argv[1]})
    migrate.upgrade(app.config["DATABASE_URL"])
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        size = fill(session, int(argv[0]), checkpoint_every=app.config["CHECKPOINT_EVERY"] or 100)
        session.close()
    print(f"the audit log holds {size:,} entries")


if __name__ == "__main__":
    main(sys.argv[1:])
