"""Casino War rounds per second through the service layer (no HTTP), on SQLite and PostgreSQL,
beside a one-row insert transaction on the same database in the same run.

A round is one transaction that takes the nonce, deals, posts the bet and the settlement,
signs the receipt (Ed25519) and appends two audit entries; the ratio says how many one-row
transactions' worth of work that is.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

from sota_casino import migrate
from sota_casino.factory import create_app
from sota_casino.services import accounts
from sota_casino.services import money
from sota_casino.services import rounds

ROUNDS = int(os.environ.get("BENCH_SERVICE_ROUNDS", "600"))
POSTGRES = os.environ.get("TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def _rate(count: int, action) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(count):
        action()
    return count / (time.perf_counter() - start)


def measure(url: str, workdir: Path) -> tuple[float, float]:
    """Return (rounds/s, one-row insert transactions/s) on the database at ``url``."""
    migrate.upgrade(url)
    app = create_app(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": "bench",
            "SIGNING_KEY_FILE": str(workdir / "key.pem"),
            "CHECKPOINT_EVERY": 0,
            "SIGNUP_CHIPS": 10**12,
        }
    )
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        user = accounts.register(session, f"bench{secrets.token_hex(3)}", "bench password 1").id

        def play() -> None:
            played = rounds.place_casino_war_bet(session, user, 100)
            if played.status != "settled":
                rounds.decide_casino_war(session, user, played.id, "war")

        play()  # warm up: the signing key is registered on first use
        round_rate = _rate(ROUNDS, play)
        assert money.balances(session, user).chips > 0
        engine = app.extensions["sota_casino.engine"]
        with engine.begin() as connection:
            connection.execute(
                sa.text("CREATE TABLE IF NOT EXISTS bench_rows (id INTEGER, v TEXT)")
            )

        def insert_one() -> None:
            with engine.begin() as connection:
                connection.execute(sa.text("INSERT INTO bench_rows VALUES (1, 'x')"))

        insert_rate = _rate(ROUNDS * 2, insert_one)
        with engine.begin() as connection:
            connection.execute(sa.text("DROP TABLE bench_rows"))
        session.close()
    engine.dispose()
    return round_rate, insert_rate


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        rows.append(("SQLite (WAL)", *measure(f"sqlite:///{workdir / 'bench.db'}", workdir)))
        try:
            with migrate.scratch_postgres(POSTGRES, "sota_bench") as url:
                rows.append(("PostgreSQL", *measure(url, workdir)))
        except sa.exc.OperationalError as exc:
            print(f"(PostgreSQL skipped: {exc.orig})")
    print("### Casino War rounds through the service layer (one process, no HTTP)\n")
    print("| database | rounds/s | one-row insert transactions/s | round cost in inserts |")
    print("| --- | ---: | ---: | ---: |")
    for label, round_rate, insert_rate in rows:
        print(
            f"| {label} | {round_rate:,.0f} | {insert_rate:,.0f} | {insert_rate / round_rate:.1f} |"
        )


if __name__ == "__main__":
    main()
