"""Helpers shared by the benchmarks: timing, a scratch app on a SQLite file of its own, and a
measure taken on both databases."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.orm import Session

from sota_casino import migrate
from sota_casino.config import test_postgres_url
from sota_casino.factory import create_app

R = TypeVar("R")


def timed(action: Callable[[], R]) -> tuple[R, float]:
    """Run ``action`` once; return what it returned and the wall-clock seconds it took."""
    started = time.perf_counter()
    result = action()
    return result, time.perf_counter() - started


def seconds(action: Callable[[], Any]) -> float:
    """Run ``action`` once; return the wall-clock seconds it took."""
    return timed(action)[1]


def median_ms(action: Callable[[], Any], runs: int) -> float:
    """Run ``action`` ``runs`` times; return the median wall-clock time in milliseconds."""
    return statistics.median(seconds(action) for _ in range(runs)) * 1000


def best_rates(
    runs: Mapping[str, tuple[Callable[[int], object], int]], repeats: int
) -> dict[str, float]:
    """Return each run's best rate (calls per CPU second) over ``repeats`` interleaved
    repetitions; a run is called with its count of calls."""
    best = dict.fromkeys(runs, 0.0)
    for _ in range(repeats):
        for name, (run, count) in runs.items():
            started = time.process_time()
            run(count)
            best[name] = max(best[name], count / (time.process_time() - started))
    return best


def runs_table(first_column: str, runs: dict[str, list[float]]) -> str:
    """Return Markdown rows of each figure's runs and their median (whole numbers)."""
    lines = [f"| {first_column} | each run | median |", "| --- | --- | ---: |"]
    for name, values in runs.items():
        each = ", ".join(f"{value:.0f}" for value in values)
        lines.append(f"| {name} | {each} | {statistics.median(values):.0f} |")
    return "\n".join(lines)


@contextmanager
def scratch_session(**settings: Any) -> Iterator[Session]:
    """A session of an app on a fresh, migrated SQLite file, removed afterwards.

    :param settings: the app's settings over a benchmark's own (no background checks).
    """
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        migrate.upgrade(url)
        app = create_app(
            {
                "DATABASE_URL": url,
                "SECRET_KEY": "bench",
                "SIGNING_KEY_FILE": str(Path(tmp) / "key.pem"),
                "CHECK_INTERVAL_SECONDS": 0,
                **settings,
            }
        )
        try:
            with app.app_context():
                session = app.extensions["sota_casino.sessionmaker"]()
                try:
                    yield session
                finally:
                    session.close()
        finally:
            app.extensions["sota_casino.engine"].dispose()


def on_both_databases(measure: Callable[[str, Path], R], database: str) -> list[tuple[str, R]]:
    """Run ``measure(url, workdir)`` on a fresh, migrated SQLite file, then on a scratch
    PostgreSQL database named ``database`` (said skipped when PostgreSQL cannot be reached);
    return each result beside its database's name."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        url = f"sqlite:///{workdir / 'bench.db'}"
        migrate.upgrade(url)
        results.append(("SQLite", measure(url, workdir)))
        try:
            with migrate.scratch_postgres(test_postgres_url(), database) as url:
                results.append(("PostgreSQL", measure(url, workdir)))
        except sa.exc.OperationalError as exc:
            print(f"(PostgreSQL skipped: {exc.orig})")
    return results
