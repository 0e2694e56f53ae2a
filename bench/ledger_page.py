"""Time the operator's ledger page and its API counterparts on a large database:
``python -m bench.ledger_page DATABASE_URL``.

Build the database as ``docs/scaling.md`` says (``bench.console_pages``' seed, then
``bench/large_players.sql``). Each URL is requested :data:`RUNS` times through Flask's test
client as the seed's operator, beside the baseline measured in the same run: the two queries
the page ran before closed days were kept (every settled round added up by day and game, and
by game and rules cast to text). With ``--first`` the stored closed days are deleted first, so
the first request also stores them (what the first read after the upgrade pays).
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable
from typing import Final

import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient

from sota_casino.factory import create_app
from sota_casino.services import accounts

from .__main__ import machine_info
from .console_pages import _client
from .timing import runs_table

RUNS: Final = 3
URLS: Final = (
    "/operator/ledger",
    "/api/v1/operator/ledger/summary",
    "/api/v1/operator/ledger/math",
)
#: What the ledger page read before: every settled round, twice.
BASELINE: Final = {
    "by day and game (before)": (
        "SELECT settled_on, game, count(id), sum(staked), sum(-net), sum(ante), sum(tie_bet), "
        "sum(tie_result) FROM rounds WHERE status = 'settled' GROUP BY settled_on, game"
    ),
    "by game and rules (before)": (
        "SELECT game, CAST(rules AS TEXT), count(id), sum(ante), sum(-net - tie_result), "
        "sum((-net - tie_result) * (-net - tie_result)), sum((-net - tie_result) * ante), "
        "sum(ante * ante), sum(tie_bet), sum(tie_result), "
        "sum(CASE WHEN outcome ->> 'result' IN ('surrender', 'war_win', 'war_tie', 'war_lose') "
        "THEN 1 ELSE 0 END), sum(CASE WHEN outcome ->> 'result' = 'surrender' THEN 1 ELSE 0 END), "
        "sum(CASE WHEN outcome ->> 'result' IN ('surrender', 'war_win', 'war_tie', 'war_lose') "
        "THEN ante ELSE 0 END), "
        "sum(CASE WHEN outcome ->> 'result' = 'surrender' THEN ante ELSE 0 END), "
        "min(settled_on), max(settled_on) FROM rounds WHERE status = 'settled' "
        "GROUP BY game, CAST(rules AS TEXT)"
    ),
    # Read by the summary before and after: every account's balance, by currency and kind.
    "balances by currency and kind (both)": (
        "SELECT currency, kind, sum(balance) FROM accounts GROUP BY currency, kind"
    ),
}


def _ms(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def _get(client: FlaskClient, url: str) -> Callable[[], object]:
    def request() -> None:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)

    return request


def _read(engine: sa.Engine, query: str) -> Callable[[], object]:
    def read() -> None:
        with engine.connect() as connection:
            connection.execute(sa.text(query)).all()

    return read


def _stored_and_live(app: Flask) -> Callable[[], object]:
    """The one statement a report reads its rounds' figures with, closed days kept."""
    from sota_casino.services import day_totals  # not in the code before

    def read() -> None:
        session = app.extensions["sota_casino.sessionmaker"]()
        try:
            with session.begin():
                day_totals.totals(session)
        finally:
            session.close()

    return read


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit(__doc__)
    url = argv[0]
    app = create_app({"DATABASE_URL": url, "CHECK_INTERVAL_SECONDS": 0, "CHECKPOINT_EVERY": 0})
    engine = sa.create_engine(url)
    with engine.connect() as connection:
        rounds = connection.execute(sa.text("SELECT count(*) FROM rounds")).scalar_one()
        table = sa.inspect(connection).has_table("closed_day_totals")
    # Whether the code run keeps closed days (the same database serves the code before).
    kept = importlib.util.find_spec("sota_casino.services.day_totals") is not None
    if "--first" in argv and table:
        with engine.begin() as connection:
            connection.execute(sa.text("DELETE FROM closed_day_totals"))
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        operator = accounts.find_users(session, "benchop")[0].id
        session.close()
        client = _client(app, operator)
        times: dict[str, list[float]] = {}
        for _ in range(RUNS):
            for name, query in BASELINE.items():
                times.setdefault(name, []).append(_ms(_read(engine, query)))
            if kept:
                times.setdefault("stored days and the rounds since (after)", []).append(
                    _ms(_stored_and_live(app))
                )
            for page in URLS:
                times.setdefault(f"`{page}`", []).append(_ms(_get(client, page)))
    engine.dispose()
    print(machine_info())
    print(f"\n{rounds:,} rounds; closed days kept: {'yes' if kept else 'no (before)'}\n")
    print(runs_table("read (ms)", times))


if __name__ == "__main__":
    main(sys.argv[1:])
