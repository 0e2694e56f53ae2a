"""``python -m bench scaling``: one PostgreSQL behind one app server and behind two, and how
long rounds wait for locks.

A fresh PostgreSQL database; four gunicorn instances of the service (gunicorn.conf.py): two
with 2 workers each (or WEB_CONCURRENCY, made even) and two with half as many. At each client
count wrk drives Casino War rounds (bench/load.lua: one-chip bets, ties answered by war)
against one server of 2 workers, then the same number of clients split over two servers (two
wrk processes at once, each with its own half of the players): two of half the workers each,
the same workers and CPU as the one server, which shows whether a second server adds any
serial section; and two of 2 workers each, twice the workers on the same cores. Meanwhile a
sampler reads ``pg_stat_activity`` every few milliseconds and counts the app's backends waiting
for a lock, by statement: samples times the interval, over the rounds settled, is the lock wait
per round. Afterwards ``flask ledger check``
and ``flask audit verify`` must pass.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from .__main__ import machine_info
from .load import Figure
from .load import _checks
from .load import fresh_database
from .load import gunicorn
from .load import players_env
from .load import sign_up_players
from .load import wrk

#: The workers of one server (even, so that two servers of half as many match it).
WORKERS = 2 * max(1, int(os.environ.get("WEB_CONCURRENCY", "2")) // 2)
#: How often the sampler looks (seconds): each sample of a waiting backend stands for this long.
INTERVAL = 0.005
_BACKENDS = sa.text(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    "AND pid <> pg_backend_pid()"
)
_WAITING = sa.text(
    "SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 48) FROM pg_stat_activity "
    "WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
)


def cpu_seconds(pid: int, children: bool = False) -> float:
    """User and system CPU time of process ``pid`` (and of its children it waited for)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    used = sum(int(f) for f in fields[11 : 15 if children else 13])  # utime stime [cutime cstime]
    return used / os.sysconf("SC_CLK_TCK")


def server_cpu_seconds(port: int) -> float:
    """CPU time of the gunicorn listening on ``port``: its master (with the workers it reaped,
    restarted after ``max_requests``) and its live workers."""
    listing = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True)
    pids = sorted({int(pid) for pid in re.findall(r"pid=(\d+)", listing.stdout)})
    return sum(cpu_seconds(pid, children=pid == pids[0]) for pid in pids)


class LockSampler:
    """Counts, in a thread, the backends waiting for a lock, by the statement they run, and
    the CPU time the database's backends used."""

    def __init__(self, url: str) -> None:
        self.engine = sa.create_engine(url, pool_size=1)
        self.waits: collections.Counter[str] = collections.Counter()
        self.samples = 0
        self._start_cpu: dict[int, float] = {}
        self._cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with self.engine.connect() as connection:
            self._read_cpu(connection, self._start_cpu)
            while not self._stop.is_set():
                self.waits.update(connection.execute(_WAITING).scalars())
                connection.rollback()
                self.samples += 1
                if self.samples % 40 == 0:
                    self._read_cpu(connection, self._cpu)
                time.sleep(INTERVAL)
            self._read_cpu(connection, self._cpu)

    @staticmethod
    def _read_cpu(connection: sa.Connection, into: dict[int, float]) -> None:
        for pid in connection.execute(_BACKENDS).scalars():
            into[pid] = max(into.get(pid, 0.0), cpu_seconds(pid))
        connection.rollback()

    def database_cpu_seconds(self) -> float:
        """CPU time of the database's backends while sampling (those seen at least once)."""
        return sum(used - self._start_cpu.get(pid, 0.0) for pid, used in self._cpu.items())

    def __enter__(self) -> LockSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self.engine.dispose()

    def wait_ms_per_round(self, rounds: int) -> float:
        """Milliseconds spent waiting for locks, summed over backends, per round settled."""
        return 1000 * INTERVAL * sum(self.waits.values()) / max(1, rounds)


@dataclass(frozen=True)
class Step:
    servers: int
    workers: int  # of all the servers together
    clients: int
    rounds_per_s: float
    p99_ms: float  # the worse of the two servers' p99 when two serve
    errors: int
    lock_wait_ms: float
    top_waits: list[tuple[str, int]]
    app_cpu_ms: float  # per round, all app servers' processes
    db_cpu_ms: float  # per round, the database's backends


def _measure(
    url: str,
    ports: list[int],
    players: list[dict[str, str]],
    clients: int,
    seconds: float,
    workers: int,
) -> Step:
    shares = [clients // len(ports) + (i < clients % len(ports)) for i in range(len(ports))]
    app_cpu = sum(server_cpu_seconds(port) for port in ports)
    with LockSampler(url) as sampler, ThreadPoolExecutor(len(ports)) as pool:
        figures: list[Figure] = list(
            pool.map(
                lambda i: wrk(ports[i], "casino_war", shares[i], seconds, players[i], "postgres"),
                [i for i in range(len(ports)) if shares[i]],
            )
        )
    app_cpu = sum(server_cpu_seconds(port) for port in ports) - app_cpu
    rounds = sum(f.rounds for f in figures)
    return Step(
        servers=len([s for s in shares if s]),
        workers=workers,
        clients=clients,
        rounds_per_s=sum(f.rate for f in figures),
        p99_ms=max(f.p99_ms for f in figures),
        errors=sum(f.errors for f in figures),
        lock_wait_ms=sampler.wait_ms_per_round(rounds),
        top_waits=sampler.waits.most_common(3),
        app_cpu_ms=1000 * app_cpu / max(1, rounds),
        db_cpu_ms=1000 * sampler.database_cpu_seconds() / max(1, rounds),
    )


def run(clients: Sequence[int], seconds: float) -> tuple[list[Step], bool, str]:
    workdir = Path(tempfile.mkdtemp(prefix="bench-scaling-"))
    steps = []
    try:
        with fresh_database("postgres", workdir) as url:
            with (
                gunicorn("wsgi:app", url, workdir, workers=WORKERS) as first,
                gunicorn("wsgi:app", url, workdir, workers=WORKERS) as second,
                gunicorn("wsgi:app", url, workdir, workers=WORKERS // 2) as half_first,
                gunicorn("wsgi:app", url, workdir, workers=WORKERS // 2) as half_second,
            ):
                tokens = sign_up_players(first, 2 * max(clients))
                halves = [
                    players_env(first, tokens[i::2], workdir / f"tokens{i}.txt") for i in range(2)
                ]
                everyone = players_env(first, tokens, workdir / "tokens.txt")
                #: (servers, their players, the workers of all of them)
                setups = [
                    ([first], [everyone], WORKERS),
                    ([half_first, half_second], halves, WORKERS),
                    ([first, second], halves, 2 * WORKERS),
                ]
                for ports, players, workers in setups:
                    _measure(url, ports, players, 4, 2, workers)  # warm up every server
                for count in clients:
                    for ports, players, workers in setups[: 1 if count < 2 else 3]:
                        step = _measure(url, ports, players, count, seconds, workers)
                        print(
                            f"  {step.servers} server(s), {step.workers} workers, "
                            f"{count} clients: "
                            f"{step.rounds_per_s:,.0f} rounds/s, p99 {step.p99_ms:.1f} ms, "
                            f"lock wait {step.lock_wait_ms:.2f} ms/round {step.top_waits}, "
                            f"CPU ms/round app {step.app_cpu_ms:.2f} db {step.db_cpu_ms:.2f}",
                            flush=True,
                        )
                        steps.append(step)
            (ledger_ok, ledger_says), (audit_ok, audit_says) = _checks(url, workdir)
        return steps, ledger_ok and audit_ok, f"`{ledger_says}`; `{audit_says}`"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def markdown(steps: Sequence[Step], seconds: float, checks: str) -> str:
    lines = [
        f"{seconds:g} s per figure, Casino War rounds through the JSON API on PostgreSQL.",
        "",
        "| clients | app servers | workers | rounds/s | p99 ms | errors | app CPU ms/round "
        "| PostgreSQL CPU ms/round | lock wait per round | waiting most in |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for step in steps:
        waits = "; ".join(f"`{q}…` ({n})" for q, n in step.top_waits) or "none seen"
        lines.append(
            f"| {step.clients} | {step.servers} | {step.workers} | {step.rounds_per_s:,.0f} "
            f"| {step.p99_ms:.1f} "
            f"| {step.errors} | {step.app_cpu_ms:.2f} | {step.db_cpu_ms:.2f} "
            f"| {step.lock_wait_ms:.2f} ms | {waits} |"
        )
    lines += ["", f"Checks afterwards: {checks}"]
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench scaling", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--seconds", type=float, default=10, help="per figure (default 10)")
    parser.add_argument("--clients", default="1,8,32", help="client counts (default 1,8,32)")
    options = parser.parse_args(argv)
    print(machine_info())
    seconds = options.seconds
    steps, checks_pass, checks = run([int(c) for c in options.clients.split(",")], seconds)
    print(markdown(steps, seconds, checks))
    return 0 if checks_pass and not any(step.errors for step in steps) else 1
