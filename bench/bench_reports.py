"""The house's report as rounds pile up: ``reports.house_summary`` at 10,000 and 100,000 settled
rounds, beside reading every round's stakes, outcome and rules and adding them up in Python (how
the report worked before settlement recorded its figures), on SQLite in the same run.

The rounds are written straight into the table (spread over 70 days, a tie bet on each) with
the figures settlement records; both sides must give the same totals. The report keeps the
totals of closed days (services/day_totals.py): its first run after the rounds are written
adds them all up and stores them (the first column), the runs after read them. Medians of 5
runs, wall-clock time.
"""

from __future__ import annotations

import time
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import Final

import sqlalchemy as sa
from sqlalchemy.orm import Session

from bench.timing import median_ms
from bench.timing import scratch_session
from sota_casino.models import ClosedDayTotal
from sota_casino.models import Round
from sota_casino.models import SeedPair
from sota_casino.services import accounts
from sota_casino.services import reports

SIZES: Final = (10_000, 100_000)
RUNS: Final = 5
RULES: Final = {"decks": 6, "min_bet": 100, "max_bet": 50_000, "tie_payout": 10, "burn": 3}
START: Final = datetime(2026, 1, 1, tzinfo=UTC)


def _round(user: int, pair: int, nonce: int) -> dict[str, Any]:
    won, tie_won = nonce % 2 == 0, nonce % 13 == 0
    settled = START + timedelta(minutes=nonce)
    net = (500 if won else -500) + (1_000 if tie_won else -100)
    return {
        "user_id": user,
        "game": "casino_war",
        "table_name": "casino_war",
        "status": "settled",
        "seed_pair_id": pair,
        "nonce": nonce,
        "currency": "chips",
        "rules": RULES | {"bonus": "none"},
        "stakes": {"bet": 500, "tie_bet": 100, "raise": 0},
        "staked": 600,
        "outcome": {"result": "win" if won else "lose", "tie_bet_won": tie_won, "net": net},
        "payout": 600 + net,
        "net": net,
        "created_at": settled,
        "settled_at": settled,
        "settled_on": settled.date(),
        "ante": 500,
        "tie_bet": 100,
        "tie_result": -1_000 if tie_won else 100,
    }


def _python_totals(session: Session) -> tuple[int, int]:
    """House result and tie result over every settled round, from each round's JSON."""
    house = tie = 0
    query = sa.select(Round.net, Round.stakes, Round.outcome, Round.rules).where(
        Round.status == "settled"
    )
    with session.begin():
        for net, stakes, outcome, rules in session.execute(query.execution_options(yield_per=2000)):
            house -= net
            tie_bet = stakes["tie_bet"]
            tie += -tie_bet * rules["tie_payout"] if outcome["tie_bet_won"] else tie_bet
    return house, tie


def main() -> None:
    rows = []
    with scratch_session() as session:
        user = accounts.register(session, "house_report", "a long enough password").id
        with session.begin():
            pair = session.scalars(
                sa.select(SeedPair.id).where(SeedPair.user_id == user, SeedPair.status == "active")
            )
            pair_id = pair.one()
        nonce = 0
        for size in SIZES:
            with session.begin():
                batch = [_round(user, pair_id, n) for n in range(nonce, size)]
                session.execute(sa.insert(Round), batch)
                # Written into days already closed, which play never does: what was stored of
                # them goes, and the next report stores them again.
                session.execute(sa.delete(ClosedDayTotal))
            nonce = size
            started = time.perf_counter()
            summary = reports.house_summary(session).games["casino_war"]
            first_ms = (time.perf_counter() - started) * 1000
            assert summary.rounds == size
            assert (summary.house_result, summary.tie_result) == _python_totals(session)
            report_ms = median_ms(lambda: reports.house_summary(session), RUNS)
            python_ms = median_ms(lambda: _python_totals(session), RUNS)
            rows.append((size, first_ms, report_ms, python_ms))
    print("## House report\n")
    print(__doc__.strip())
    print()
    print(
        "| settled rounds | first `house_summary`, storing the days (ms) | `house_summary` (ms) "
        "| each round's JSON in Python (ms) | ratio |"
    )
    print("| ---: | ---: | ---: | ---: | ---: |")
    for size, first_ms, report_ms, python_ms in rows:
        print(
            f"| {size:,} | {first_ms:.0f} | {report_ms:.0f} | {python_ms:.0f} "
            f"| {report_ms / python_ms:.3f} |"
        )


if __name__ == "__main__":
    main()
