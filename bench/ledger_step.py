"""Time a standing step of the ledger check and the read of its verdict on a large PostgreSQL
database, with the bytes of its stored state and the WAL each step writes:
``python -m bench.ledger_step DATABASE_URL``.

Build the database as ``docs/scaling.md`` says (``bench.console_pages``' seed, then
``bench/large_players.sql``). The bulk rounds' rows disagree with their postings, so a whole
check fails on them and would leave no state to step from: the state of a whole read is stored
as a passing one first (with the sums of postings where the code keeps them in their table).
A step then reads only the rounds touched since, as in service. Beside each step, in the same
run, the baseline: every account's balance beside its postings since, read into Python, as a
step read them before its comparisons moved into the database.
"""

from __future__ import annotations

import sys
import time
from typing import Final

import sqlalchemy as sa

from sota_casino.factory import create_app
from sota_casino.models import CheckRun
from sota_casino.services import checks
from sota_casino.services import ledger

from .__main__ import machine_info
from .timing import runs_table

STEPS: Final = 4
#: What a step read before: every account's balance beside its postings since (none here),
#: every row fetched.
BASELINE: Final = (
    "SELECT a.id, a.name, a.kind, a.balance, coalesce(sum(p.amount), 0), max(p.id) "
    "FROM accounts a LEFT JOIN postings p ON p.account_id = a.id AND p.id > :since "
    "GROUP BY a.id, a.name, a.kind, a.balance ORDER BY a.id"
)


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit(__doc__)
    settings = {"DATABASE_URL": argv[0], "CHECK_INTERVAL_SECONDS": 0, "CHECKPOINT_EVERY": 0}
    app = create_app(settings | {"AUDIT_INTEGRATE_MS": 0})
    engine = app.extensions["sota_casino.engine"]

    def scalar(query: str, **params: object) -> object:
        with engine.connect() as connection:
            return connection.execute(sa.text(query), params).scalar()

    # Whether the code run keeps the sums in their table (the same database serves the code
    # before, which kept them in the state).
    kept = hasattr(ledger, "keep_sums")
    session = app.extensions["sota_casino.sessionmaker"]()
    report = ledger.check(session)
    assert report.state is not None
    checks.run(session, "ledger", "bench")  # makes the row
    with session.begin():
        session.execute(
            sa.update(CheckRun)
            .where(CheckRun.name == "ledger")
            .values(ok=True, state=report.state.to_json(), lease_owner=None, lease_until=None)
        )
        if kept:
            ledger.keep_sums(session, report, whole=True)
    rows: dict[str, list[float]] = {}
    for _ in range(STEPS):
        started = time.perf_counter()
        with engine.connect() as connection:
            connection.execute(sa.text(BASELINE), {"since": report.state.posting_id}).all()
        rows.setdefault("baseline: the balances and postings read (ms)", []).append(
            (time.perf_counter() - started) * 1000
        )
        wal = scalar("SELECT pg_current_wal_lsn()")
        started = time.perf_counter()
        step = checks.run(session, "ledger", "bench")
        rows.setdefault("a step (ms)", []).append((time.perf_counter() - started) * 1000)
        assert step.ran and not step.whole and step.verdict.ok, step
        written = scalar("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), :wal)", wal=wal)
        # The whole server's WAL: another database's writes meanwhile count too.
        rows.setdefault("WAL written during the step (kB)", []).append(float(str(written)) / 1000)
        started = time.perf_counter()
        checks.ledger_verdict(session)
        rows.setdefault("the verdict read (ms)", []).append((time.perf_counter() - started) * 1000)
    session.close()
    state = scalar("SELECT length(CAST(state AS TEXT)) FROM check_runs WHERE name = 'ledger'")
    accounts = scalar("SELECT count(*) FROM accounts")
    engine.dispose()
    print(machine_info())
    print(
        f"\n{accounts:,} accounts; sums kept in their table: {'yes' if kept else 'no (before)'}; "
        f"stored state {state:,} characters\n"
    )
    print(runs_table("figure, each step", rows))


if __name__ == "__main__":
    main(sys.argv[1:])
