"""``python -m bench load`` (``make bench-load``): the JSON API under gunicorn, beside a bare
one-insert baseline under the same settings, on SQLite and on PostgreSQL.

Per database: a fresh database (a SQLite file; a PostgreSQL database created for the run and
dropped after it) is migrated; the service starts under gunicorn with gunicorn.conf.py (2
workers unless WEB_CONCURRENCY says otherwise), and so does the baseline (bench/baseline_app.py,
one insert transaction per request). Players sign up and take tokens through the API; then, at
each client count, wrk (bench/load.lua: one connection and one player per wrk thread) drives the
baseline, Casino War rounds (one chip, naming the table's rules as its page does, every tie
answered by war) and Sota nordic games (one sweet) in turn, so each figure has its baseline
measured moments before it. Afterwards the
servers stop and ``flask ledger check`` and ``flask audit verify`` must pass.

Latency percentiles are per request (a tied round is two requests); rounds/s counts settled
rounds. wrk shares the machine's cores with gunicorn and the database, for the baseline as for
the service. Only the sign-up grants and the sign-up throttle are raised from the defaults, so
the players never run dry and the run can sign up its players from one address.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from sota_casino import migrate

from .__main__ import machine_info

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
POSTGRES = os.environ.get("TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
SCENARIOS = ("baseline", "casino_war", "sota")
PASSWORD = "load bench password 7"
DOCS_BEGIN = "<!-- bench load: begin -->"
DOCS_END = "<!-- bench load: end -->"
PLOT = ROOT / "docs" / "bench-load.svg"


@dataclass(frozen=True)
class Figure:
    """One wrk run: a scenario at a client count on a database."""

    database: str
    scenario: str
    clients: int
    seconds: float
    requests: int
    rounds: int
    ties: int
    errors: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float

    @property
    def rate(self) -> float:
        return self.rounds / self.seconds


@dataclass
class DatabaseRun:
    database: str
    figures: list[Figure]
    ledger_check: str
    audit_verify: str
    checks_pass: bool


# --- servers ------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_env(url: str, workdir: Path, port: int, workers: int | None = None) -> dict[str, str]:
    return os.environ | {
        "DATABASE_URL": url,
        "SECRET_KEY": "bench-load",
        "SIGNING_KEY_FILE": str(workdir / "signing_key.pem"),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_CONCURRENCY": str(workers or os.environ.get("WEB_CONCURRENCY", "2")),
        "LOG_LEVEL": "warning",
        "SIGNUP_CHIPS": str(10**12),
        "SIGNUP_SWEETS": str(10**9),
        "SIGNUPS_PER_ADDRESS": "1000",
    }


@contextmanager
def gunicorn(app: str, url: str, workdir: Path, workers: int | None = None) -> Iterator[int]:
    """Serve ``app`` under gunicorn.conf.py on a free port; yield the port.

    :param workers: its sync workers (default: ``WEB_CONCURRENCY``, else 2).
    """
    port = _free_port()
    log = open(workdir / f"{app.split(':')[0]}.log", "wb")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", app],
        cwd=ROOT,
        env=_server_env(url, workdir, port, workers),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_until_up(port, process)
        yield port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_until_up(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 180  # a worker boots slowly on a busy machine
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/")
            connection.getresponse().read()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not answer within 180 s")


def _call(port: int, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """POST ``body`` to ``path`` (GET it if there is none); return the answer."""
    method = "GET" if body is None else "POST"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request(method, path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    answer = json.loads(response.read())
    if response.status not in (200, 201):
        raise RuntimeError(f"{method} {path}: {response.status} {answer}")
    return answer  # type: ignore[no-any-return]


def sign_up_players(port: int, count: int) -> list[str]:
    """Register ``count`` players through the API; return a bearer token for each."""
    tokens = []
    for number in range(count):
        credentials = {"username": f"load{number}_{secrets.token_hex(3)}", "password": PASSWORD}
        _call(port, "/api/v1/auth/register", credentials)
        tokens.append(_call(port, "/api/v1/auth/token", credentials)["token"])
    return tokens


def players_env(port: int, tokens: Sequence[str], path: Path) -> dict[str, str]:
    """What load.lua reads of the players with ``tokens``: a file of them (written at ``path``),
    and the Casino War bet they send, naming the table's rules as the table's page does."""
    path.write_text("\n".join(tokens) + "\n")
    rules = _call(port, "/api/v1/tables/casino_war")["settings"]
    return {"BENCH_TOKENS": str(path), "BENCH_BET": json.dumps({"bet": 100, "rules": rules})}


# --- wrk ---------------------------------------------------------------------------------------


def wrk(
    port: int, scenario: str, clients: int, seconds: float, players: dict[str, str], database: str
) -> Figure:
    """Drive ``scenario`` with ``clients`` connections for ``seconds``; return what wrk saw.

    :param players: what load.lua reads of the players (:func:`players_env`).
    """
    result = subprocess.run(
        [
            "wrk",
            f"-t{clients}",
            f"-c{clients}",
            f"-d{max(1, round(seconds))}s",
            "--timeout",
            "30s",
            "-s",
            str(HERE / "load.lua"),
            f"http://127.0.0.1:{port}",
        ],
        env=os.environ | players | {"BENCH_SCENARIO": scenario},
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"^BENCH (\{.*\})$", result.stdout, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"wrk gave no figures:\n{result.stdout}\n{result.stderr}")
    raw = json.loads(found.group(1))
    if raw["failures"]:
        print(f"  {scenario} at {clients}: {raw['failures']} failed\n{result.stderr}")
    return Figure(
        database=database,
        scenario=scenario,
        clients=clients,
        seconds=raw["duration_us"] / 1e6,
        requests=raw["requests"],
        rounds=raw["rounds"],
        ties=raw["ties"],
        errors=raw["failures"] + raw["socket_errors"],
        p50_ms=raw["p50_us"] / 1000,
        p95_ms=raw["p95_us"] / 1000,
        p99_ms=raw["p99_us"] / 1000,
        max_ms=raw["max_us"] / 1000,
    )


# --- a database's run ---------------------------------------------------------------------------


@contextmanager
def fresh_database(database: str, workdir: Path) -> Iterator[str]:
    """A new, migrated database for one run, dropped (PostgreSQL) or left in ``workdir``."""
    if database == "sqlite":
        url = f"sqlite:///{workdir / 'load.db'}"
        migrate.upgrade(url)
        yield url
        return
    with migrate.scratch_postgres(POSTGRES, f"sota_bench_load_{os.getpid()}") as url:
        yield url


#: Run on the database once the load is over, in one process (the app loaded once for both):
#: the operator's ``flask ledger check`` and ``flask audit verify``, as their command line runs
#: them; prints, as JSON, whether each passed and the last line it said.
CHECKS = """
import json
from wsgi import app
said = []
for command in (["ledger", "check"], ["audit", "verify"]):
    done = app.test_cli_runner().invoke(args=command)
    lines = done.output.strip().splitlines() or [repr(done.exception)]
    said.append([done.exit_code == 0, lines[-1]])
print(json.dumps(said))
"""


def _checks(url: str, workdir: Path) -> list[tuple[bool, str]]:
    """Whether the ledger check and the audit log's verification pass, and what each said."""
    done = subprocess.run(
        [sys.executable, "-c", CHECKS],
        cwd=ROOT,
        env=_server_env(url, workdir, 0),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the checks did not run:\n{done.stdout}\n{done.stderr}")
    said = json.loads(done.stdout.strip().splitlines()[-1])
    return [(bool(ok), str(line)) for ok, line in said]


def run_database(
    database: str, clients: Sequence[int], seconds: float, warmup: float
) -> DatabaseRun:
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-load-{database}-"))
    try:
        with fresh_database(database, workdir) as url:
            from .baseline_app import metadata

            engine = sa.create_engine(url)
            metadata.create_all(engine)
            engine.dispose()
            figures = []
            with (
                gunicorn("wsgi:app", url, workdir) as service,
                gunicorn("bench.baseline_app:create_app()", url, workdir) as baseline,
            ):
                tokens = sign_up_players(service, max(clients))
                players = players_env(service, tokens, workdir / "tokens.txt")
                ports = {"baseline": baseline, "casino_war": service, "sota": service}
                if warmup:
                    for scenario in SCENARIOS:
                        wrk(ports[scenario], scenario, 2, warmup, players, database)
                for count in clients:
                    for scenario in SCENARIOS:
                        figure = wrk(ports[scenario], scenario, count, seconds, players, database)
                        print(
                            f"  {database} {scenario} at {count}: {figure.rate:,.0f}/s, "
                            f"p99 {figure.p99_ms:.1f} ms, {figure.errors} errors",
                            flush=True,
                        )
                        figures.append(figure)
            (ledger_ok, ledger_says), (audit_ok, audit_says) = _checks(url, workdir)
            return DatabaseRun(database, figures, ledger_says, audit_says, ledger_ok and audit_ok)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run(
    databases: Sequence[str], clients: Sequence[int], seconds: float, warmup: float = 0
) -> list[DatabaseRun]:
    """Run the load benchmark; return each database's figures and checks."""
    if shutil.which("wrk") is None:
        raise RuntimeError("wrk is not installed (apt-get install wrk)")
    return [run_database(database, clients, seconds, warmup) for database in databases]


# --- report -------------------------------------------------------------------------------------


def _by(runs: Sequence[DatabaseRun]) -> dict[tuple[str, str, int], Figure]:
    return {(f.database, f.scenario, f.clients): f for run in runs for f in run.figures}


def markdown(runs: Sequence[DatabaseRun], seconds: float) -> str:
    figures = _by(runs)
    lines = [
        f"{seconds:g} s per figure; rates are settled rounds (games) per second, the baseline's "
        "one-insert requests per second; latencies are per request (a tied round is two).",
        "",
        "| database | clients | baseline req/s | Casino War rounds/s | ratio | p50 / p95 / p99 ms "
        "| ties | Sota games/s | ratio | p99 ms | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for run in runs:
        for count in sorted({f.clients for f in run.figures}):
            base = figures[(run.database, "baseline", count)]
            war = figures[(run.database, "casino_war", count)]
            sota = figures[(run.database, "sota", count)]
            errors = base.errors + war.errors + sota.errors
            lines.append(
                f"| {run.database} | {count} | {base.rate:,.0f} | {war.rate:,.0f} "
                f"| {war.rate / base.rate:.0%} | {war.p50_ms:.1f} / {war.p95_ms:.1f} / "
                f"{war.p99_ms:.1f} | {war.ties} | {sota.rate:,.0f} | {sota.rate / base.rate:.0%} "
                f"| {sota.p99_ms:.1f} | {errors} |"
            )
    lines.append("")
    for run in runs:
        verdict = "pass" if run.checks_pass else "FAIL"
        lines.append(
            f"- {run.database}: checks {verdict}: `{run.ledger_check}`; `{run.audit_verify}`"
        )
    return "\n".join(lines)


def svg(runs: Sequence[DatabaseRun]) -> str:
    """Two panels, rounds/s and p99 against clients (log scales), per database and scenario."""
    figures = _by(runs)
    clients = sorted({f.clients for f in figures.values()})
    colors = {"sqlite": "#1f77b4", "postgres": "#d62728"}
    dashes = {"baseline": "2,3", "casino_war": "", "sota": "8,4"}
    width, height, pad = 360, 260, 50

    def panel(x0: int, title: str, value: str, unit: str) -> list[str]:
        values = [getattr(f, value) if value != "rate" else f.rate for f in figures.values()]
        values = [v for v in values if v > 0] or [1.0]
        low = 10 ** math.floor(math.log10(min(values)))
        high = 10 ** math.ceil(math.log10(max(values)))

        def x(count: int) -> float:
            span = max(1, len(clients) - 1)
            return x0 + pad + (width - pad - 10) * clients.index(count) / span

        def y(v: float) -> float:
            fraction = (math.log10(max(v, low)) - math.log10(low)) / (
                math.log10(high) - math.log10(low) or 1
            )
            return height - pad + 10 - (height - pad - 20) * fraction

        out = [
            f'<text x="{x0 + width / 2}" y="18" text-anchor="middle" font-weight="bold">'
            f"{title}</text>",
            f'<line x1="{x0 + pad}" y1="{height - pad + 10}" x2="{x0 + width - 10}" '
            f'y2="{height - pad + 10}" stroke="black"/>',
            f'<line x1="{x0 + pad}" y1="30" x2="{x0 + pad}" y2="{height - pad + 10}" '
            'stroke="black"/>',
            f'<text x="{x0 + width / 2}" y="{height - 8}" text-anchor="middle">clients</text>',
        ]
        for count in clients:
            out.append(
                f'<text x="{x(count)}" y="{height - pad + 26}" text-anchor="middle">{count}</text>'
            )
        tick = low
        while tick <= high:
            out.append(
                f'<text x="{x0 + pad - 4}" y="{y(tick) + 4}" text-anchor="end">{tick:g}</text>'
                f'<line x1="{x0 + pad}" y1="{y(tick)}" x2="{x0 + width - 10}" y2="{y(tick)}" '
                'stroke="#ddd"/>'
            )
            tick *= 10
        out.append(
            f'<text x="{x0 + 12}" y="{height / 2}" transform="rotate(-90 {x0 + 12} {height / 2})" '
            f'text-anchor="middle">{unit}</text>'
        )
        for run in runs:
            for scenario in SCENARIOS:
                points = [
                    figures[(run.database, scenario, c)]
                    for c in clients
                    if (run.database, scenario, c) in figures
                ]
                path = " ".join(
                    f"{x(f.clients):.1f},{y(f.rate if value == 'rate' else getattr(f, value)):.1f}"
                    for f in points
                )
                out.append(
                    f'<polyline points="{path}" fill="none" stroke="{colors[run.database]}" '
                    f'stroke-width="2" stroke-dasharray="{dashes[scenario]}"/>'
                )
        return out

    body = panel(0, "rounds (requests) per second", "rate", "per second, log")
    body += panel(width + 20, "p99 latency", "p99_ms", "ms, log")
    legend_y = height + 14
    x = 10
    for run in runs:
        for scenario in SCENARIOS:
            label = f"{run.database} {scenario.replace('_', ' ')}"
            body.append(
                f'<line x1="{x}" y1="{legend_y}" x2="{x + 24}" y2="{legend_y}" '
                f'stroke="{colors[run.database]}" stroke-width="2" '
                f'stroke-dasharray="{dashes[scenario]}"/>'
                f'<text x="{x + 28}" y="{legend_y + 4}">{label}</text>'
            )
            x += 28 + 7 * len(label) + 12
    total_width = max(2 * width + 20, x)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_width}" height="{height + 30}" '
        f'font-family="sans-serif" font-size="11">\n'
        f'<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n"
    )


def write_docs(runs: Sequence[DatabaseRun], seconds: float, machine: str) -> None:
    """Put the figures between the markers of docs/benchmarks.md and the plot beside it."""
    PLOT.write_text(svg(runs))
    doc = ROOT / "docs" / "benchmarks.md"
    text = doc.read_text()
    section = (
        f"{DOCS_BEGIN}\n{machine}\n\n{markdown(runs, seconds)}\n\n"
        f"![rounds per second and p99 against clients](bench-load.svg)\n{DOCS_END}"
    )
    if DOCS_BEGIN in text:
        start, end = text.index(DOCS_BEGIN), text.index(DOCS_END) + len(DOCS_END)
        text = text[:start] + section + text[end:]
    else:
        text = text.rstrip() + "\n\n## Load: the JSON API under gunicorn\n\n" + section + "\n"
    doc.write_text(text)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench load", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--seconds", type=float, default=10, help="per figure (default 10)")
    parser.add_argument("--clients", default="1,8,32", help="client counts (default 1,8,32)")
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--warmup", type=float, default=2, help="seconds per scenario first")
    parser.add_argument("--write-docs", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--from-json", type=Path, help="report a run saved by --json instead")
    options = parser.parse_args(argv)
    clients = [int(c) for c in options.clients.split(",")]
    if options.from_json:
        saved = json.loads(options.from_json.read_text())
        machine, seconds = saved["machine"], saved["seconds"]
        runs = [
            DatabaseRun(**(r | {"figures": [Figure(**f) for f in r["figures"]]}))
            for r in saved["runs"]
        ]
    else:
        machine, seconds = machine_info(), options.seconds
        print(machine)
        runs = run(options.databases.split(","), clients, seconds, options.warmup)
    print(markdown(runs, seconds))
    if options.json:
        saved = {"machine": machine, "seconds": seconds, "runs": [asdict(r) for r in runs]}
        options.json.write_text(json.dumps(saved, indent=1))
    if options.write_docs:
        write_docs(runs, seconds, machine)
    failed = any(not r.checks_pass or any(f.errors for f in r.figures) for r in runs)
    return 1 if failed else 0
