"""What awaiting PostgreSQL's answers costs (db.py's watchdog), beside the same work unwatched.

Two engines on the same PostgreSQL database: the app's (``make_engine`` with its bounds: every
statement, COMMIT and ROLLBACK of a bounded transaction awaited by the watchdog), and the app's
engine as it was before the watchdog (the same ``statement_timeout`` on the server, set in the
URL, and the ``begin`` listener that lifts it for unhurried sessions; no watch). In 61 pairs of
short runs side by side (each side first in turn), so that both runs of a pair see the same noise
of a shared machine: the median of this process's CPU time (the watch's cost is all on the
client), and of the pairs' ratios, in CPU and in wall-clock rate, of:

- *statement*: ``SELECT 1`` on a connection inside one transaction (one round trip each);
- *transaction*: ``BEGIN``, ``SELECT 1``, ``COMMIT`` and the connection's trip to the pool;
- *Casino War round*: ``rounds.place_casino_war_bet`` through the service layer (about 20
  statements and a COMMIT), the app's sessions on either engine.

And the watch's own work without a database or SQLAlchemy: a statement's two calls
(``await_answer``, ``answered``), timed in a loop.
"""

from __future__ import annotations

import secrets
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import Final

import sqlalchemy as sa
from sqlalchemy import Engine

from sota_casino import db
from sota_casino import migrate
from sota_casino.config import test_postgres_url
from sota_casino.factory import create_app
from sota_casino.services import accounts
from sota_casino.services import rounds

#: Pairs of runs, watched and unwatched side by side: each pair's ratio is taken.
PAIRS: Final = 61
STATEMENTS: Final = 300
TRANSACTIONS: Final = 100
ROUNDS: Final = 20
CALLS: Final = 200_000
STATEMENT_TIMEOUT_MS: Final = 10_000


def _run(count: int, action: Callable[[], Any]) -> tuple[float, float]:
    """Run ``action`` ``count`` times: (per second, µs of this process's CPU each)."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        action()
    return count / (time.perf_counter() - wall), (time.process_time() - cpu) / count * 1e6


def unwatched_engine(url: str) -> Engine:
    """The app's engine as it was before the watchdog: the server's statement_timeout, lifted
    for unhurried sessions, and nothing awaited."""
    bound = sa.make_url(url).update_query_dict(
        {"options": f"-c statement_timeout={STATEMENT_TIMEOUT_MS}"}
    )
    engine = db.make_engine(bound.render_as_string(False), lock_timeout_ms=5_000)

    @sa.event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        if not db._statements_bounded(connection):
            connection.exec_driver_sql("SET LOCAL statement_timeout = 0")

    return engine


def _measures(engine: Engine, play: Callable[[], None]) -> dict[str, Callable[[], Any]]:
    def statements() -> tuple[float, float]:
        with engine.begin() as connection:
            return _run(STATEMENTS, lambda: connection.exec_driver_sql("SELECT 1"))

    def one_transaction() -> None:
        with engine.begin() as connection:
            connection.exec_driver_sql("SELECT 1")

    return {
        "statement": statements,
        "transaction": lambda: _run(TRANSACTIONS, one_transaction),
        "Casino War round": lambda: _run(ROUNDS, play),
    }


def _compare(sides: dict[str, dict[str, Callable[[], Any]]], label: str) -> dict[str, float]:
    """Run ``label`` on both sides in :data:`PAIRS` pairs: the medians of each side's CPU µs,
    and of the pairs' ratios (rate and CPU, watched over unwatched)."""
    samples: dict[str, list[tuple[float, float]]] = {"watched": [], "unwatched": []}
    for pair in range(PAIRS):
        for side in ("watched", "unwatched") if pair % 2 else ("unwatched", "watched"):
            samples[side].append(sides[side][label]())
    watched, unwatched = samples["watched"], samples["unwatched"]
    pairs = list(zip(watched, unwatched, strict=True))
    return {
        "cpu": statistics.median(cpu for _, cpu in watched),
        "bare cpu": statistics.median(cpu for _, cpu in unwatched),
        "cpu ratio": statistics.median(w[1] / u[1] for w, u in pairs),
        "rate ratio": statistics.median(w[0] / u[0] for w, u in pairs),
    }


def measure(url: str, workdir: Path) -> list[tuple[str, dict[str, float]]]:
    """Return each measure's comparison (:func:`_compare`) on the database at ``url``."""
    app = create_app(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": "bench",
            "SIGNING_KEY_FILE": str(workdir / "key.pem"),
            "CHECKPOINT_EVERY": 0,
            "CHECK_INTERVAL_SECONDS": 0,
            "AUDIT_INTEGRATE_MS": 0,  # no thread beside the rounds: each integrates its entries
            "SIGNUP_CHIPS": 10**12,
            "DB_STATEMENT_TIMEOUT_MS": STATEMENT_TIMEOUT_MS,
        }
    )
    watched = app.extensions["sota_casino.engine"]
    unwatched = unwatched_engine(url)
    context = app.extensions["sota_casino.context"]
    sides: dict[str, dict[str, Callable[[], Any]]] = {}
    try:
        with app.app_context():
            for side, engine in (("watched", watched), ("unwatched", unwatched)):
                session = db.make_sessionmaker(engine, context)()
                user = accounts.register(session, f"b{secrets.token_hex(3)}", "bench password 1").id

                def play(session: Any = session, user: int = user) -> None:
                    played = rounds.place_casino_war_bet(session, user, 100)
                    if played.status != "settled":
                        rounds.decide_casino_war(session, user, played.id, "war")

                play()  # warm up: the signing key is registered on first use
                sides[side] = _measures(engine, play)
            return [(label, _compare(sides, label)) for label in sides["watched"]]
    finally:
        unwatched.dispose()
        watched.dispose()


def watch_calls_us() -> float:
    """Microseconds of a statement's two calls to the watchdog, without SQLAlchemy."""
    watch = db._AnswerWatch(driver_connection=None)
    watch.allowed = STATEMENT_TIMEOUT_MS / 1000 + db.ANSWER_GRACE
    watchdog = db._WATCHDOG

    def statement() -> None:
        watchdog.await_answer(watch)
        watchdog.answered(watch)

    return min(1e6 / _run(CALLS, statement)[0] for _ in range(7))


def main() -> None:
    try:
        with tempfile.TemporaryDirectory() as tmp:
            with migrate.scratch_postgres(test_postgres_url(), "sota_bench_watch") as url:
                rows = measure(url, Path(tmp))
    except sa.exc.OperationalError as exc:
        print(f"(PostgreSQL skipped: {exc.orig})")
        return
    print("### PostgreSQL's answers awaited by the watchdog, beside the same work unwatched\n")
    print("| measure | client CPU µs, watched / unwatched | CPU ratio | rate ratio |")
    print("| --- | ---: | ---: | ---: |")
    for label, found in rows:
        print(
            f"| {label} | {found['cpu']:,.1f} / {found['bare cpu']:,.1f} "
            f"| {found['cpu ratio']:.3f} | {found['rate ratio']:.3f} |"
        )
    own = watch_calls_us()
    print(f"\n- The watch's own two calls a statement, without SQLAlchemy: {own:.2f} µs.")


if __name__ == "__main__":
    main()
