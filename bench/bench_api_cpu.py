"""CPU per request through the JSON API in one process (Flask's test client, no server), beside
the bare one-insert baseline of ``python -m bench load`` on the same database in the same run.

Where ``python -m bench load`` measures what clients see through gunicorn, this isolates the
app's own CPU per round, which is what its rates are made of on a CPU-bound machine, and it
holds on a busy one: process CPU time (``time.process_time``, user and system), batches of the
baseline and of the scenario taken in turn, the median of the batches. Casino War is one-chip
bets with every tie answered by war (a round's figure is its requests together), Sota is
``nordic`` games of one sweet, with a bearer token as ``bench/load.lua`` sends them.
``BENCH_API_CPU_REQUESTS`` sets the rounds per batch (default 100).
"""

from __future__ import annotations

import os
import secrets
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from sota_casino import background
from sota_casino.factory import create_app

from .baseline_app import create_app as create_baseline
from .baseline_app import metadata
from .timing import on_both_databases

ROUNDS = int(os.environ.get("BENCH_API_CPU_REQUESTS", "100"))
BATCHES = 9


def _cpu_us(action: Callable[[], Any], count: int) -> float:
    started = time.process_time()
    for _ in range(count):
        action()
    return (time.process_time() - started) / count * 1e6


def measure(url: str, workdir: Path) -> dict[str, float]:
    """Return the median CPU µs of a baseline request, a Casino War round and a Sota game."""
    engine = sa.create_engine(url)
    metadata.create_all(engine)
    try:
        return _measure(url, workdir)
    finally:
        metadata.drop_all(engine)  # the baseline's table is no part of the service's schema
        engine.dispose()


def _measure(url: str, workdir: Path) -> dict[str, float]:
    app = create_app(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": "bench",
            "SIGNING_KEY_FILE": str(workdir / "key.pem"),
            "CHECK_INTERVAL_SECONDS": 0,  # the standing checks are not a request's work
            "SIGNUP_CHIPS": 10**12,
            "SIGNUP_SWEETS": 10**9,
        }
    )
    client = app.test_client()
    credentials = {"username": f"cpu{secrets.token_hex(3)}", "password": "bench password 7"}
    assert client.post("/api/v1/auth/register", json=credentials).status_code == 201
    token = client.post("/api/v1/auth/token", json=credentials).get_json()["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    baseline_app = create_baseline(url)
    baseline = baseline_app.test_client()

    def insert() -> None:
        assert baseline.post("/insert", json={}).status_code == 201

    def war() -> None:
        answer = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=bearer)
        assert answer.status_code == 201, answer.data
        played = answer.get_json()
        if played["status"] == "awaiting_decision":
            path = f"/api/v1/casino-war/rounds/{played['id']}/decision"
            decided = client.post(path, json={"choice": "war"}, headers=bearer)
            assert decided.status_code == 200, decided.data

    def sota() -> None:
        body = {"stake": 1, "preset": "nordic"}
        answer = client.post("/api/v1/sota/games", json=body, headers=bearer)
        assert answer.status_code == 201, answer.data

    scenarios = {"baseline": insert, "casino_war": war, "sota": sota}
    for action in scenarios.values():
        _cpu_us(action, 20)  # warm up: caches, the signing key's registration
    batches: dict[str, list[float]] = {name: [] for name in scenarios}
    for _ in range(BATCHES):
        for name, action in scenarios.items():
            batches[name].append(_cpu_us(action, ROUNDS))
    # The audit integrator's loop (PostgreSQL) stops before its engine goes: a step caught
    # mid-way would keep a connection the disposed pool never closes.
    background.stop_integrator(app, 30)
    app.extensions["sota_casino.engine"].dispose()
    baseline_app.extensions["bench.engine"].dispose()
    return {name: statistics.median(values) for name, values in batches.items()}


def main() -> None:
    rows = on_both_databases(measure, "sota_bench_api_cpu")
    print("### CPU per request through the JSON API (one process, Flask's test client)\n")
    print(
        "| database | baseline µs | Casino War round µs | baseline / round "
        "| Sota game µs | baseline / game |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, cpu in rows:
        base, war, sota = cpu["baseline"], cpu["casino_war"], cpu["sota"]
        print(
            f"| {label} | {base:,.0f} | {war:,.0f} | {base / war:.0%} | {sota:,.0f} "
            f"| {base / sota:.0%} |"
        )


if __name__ == "__main__":
    main()
