"""The whole check's hold of the settled rounds to the log (``audit.unlogged_round``): every
settled round's bet and settlement entries looked up, beside reading and rehashing every entry
of the same log (*read and rehash*, the least any check of the log does; see
``bench/bench_audit.py``) in the same run.

Settled rounds are written in bulk with their two entries each, chained as the service chains
them, on SQLite. Medians of 5 runs, wall-clock time.
"""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Final

from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy.orm import Session

from bench.bench_audit import read_and_rehash
from bench.timing import median_ms
from bench.timing import scratch_session
from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.models import AuditEntry
from sota_casino.models import Round
from sota_casino.models import SeedPair
from sota_casino.services import accounts
from sota_casino.services import audit

SIZES: Final = (10_000, 100_000, 300_000)
RUNS: Final = 5
BULK: Final = 20_000


def add_settled_rounds(session: Session, user: int, count: int) -> None:
    """Append ``count`` settled rounds of ``user``, each with its bet and settlement entry."""
    now = datetime.now(UTC)
    with session.begin():
        pair = session.scalars(select(SeedPair.id).where(SeedPair.user_id == user)).first()
        head = session.execute(
            select(AuditEntry.seq, AuditEntry.hash).order_by(AuditEntry.seq.desc()).limit(1)
        ).one()
        seq, prev = head.seq, head.hash
        first = (session.scalar(select(Round.id).order_by(Round.id.desc()).limit(1)) or 0) + 1
        for start in range(first, first + count, BULK):
            ids = range(start, min(first + count, start + BULK))
            session.execute(insert(Round), [_settled(i, user, pair, now) for i in ids])
            entries: list[dict[str, Any]] = []
            for round_id in ids:
                for action in (anchors.BET_ACTION, anchors.SETTLEMENT_ACTION):
                    seq += 1
                    entry = {
                        "seq": seq,
                        "time": "2026-12-05T00:00:00.000000Z",
                        "actor": f"user:{user}",
                        "action": action,
                        "subject": anchors.round_subject(round_id),
                        "data": {},
                    }
                    digest = audit_chain.entry_hash(prev, entry)
                    entries.append(entry | {"data": "{}", "prev_hash": prev, "hash": digest})
                    prev = digest
            session.execute(insert(AuditEntry), entries)


def _settled(round_id: int, user: int, pair: int | None, now: datetime) -> dict[str, Any]:
    return {
        "id": round_id,
        "user_id": user,
        "game": "casino_war",
        "table_name": "main",
        "status": "settled",
        "seed_pair_id": pair,
        "nonce": round_id,
        "currency": "chips",
        "rules": {},
        "stakes": {},
        "staked": 100,
        "payout": 0,
        "net": -100,
        "settled_at": now,
        "settled_on": now.date(),
    }


def main() -> None:
    rows = []
    with scratch_session() as session:
        user = accounts.register(session, "bench", "correct horse battery").id
        rounds = 0
        for target in SIZES:
            add_settled_rounds(session, user, target - rounds)
            rounds = target
            entries = read_and_rehash(session)
            base_ms = median_ms(lambda: read_and_rehash(session), RUNS)
            check_ms = median_ms(lambda: audit.unlogged_round(session), RUNS)
            assert audit.unlogged_round(session) is None
            rows.append((rounds, entries, base_ms, check_ms))
    print("## Settled rounds against the log\n")
    print(__doc__.strip())
    print()
    print(
        "| settled rounds | entries | read and rehash (ms) | rounds against the log (ms) "
        "| µs per round | vs read and rehash |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for rounds, entries, base_ms, check_ms in rows:
        print(
            f"| {rounds:,} | {entries:,} | {base_ms:.0f} | {check_ms:.0f} "
            f"| {check_ms * 1000 / rounds:.1f} | {check_ms / base_ms:.2f} |"
        )


if __name__ == "__main__":
    main()
