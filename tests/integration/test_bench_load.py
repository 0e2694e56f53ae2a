"""``python -m bench load`` in its short mode: the service and the baseline under gunicorn, a
second per figure, two clients (the full run's several client counts each run the same code),
on SQLite and PostgreSQL; every request answered, the books and the log checked afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from sota_casino import config

ROOT = Path(__file__).resolve().parents[2]


def _databases() -> list[str]:
    engine = sa.create_engine(config.test_postgres_url())
    try:
        with engine.connect():
            return ["sqlite", "postgres"]
    except sa.exc.OperationalError:
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            raise
        return ["sqlite"]
    finally:
        engine.dispose()


def test_the_short_load_run_answers_every_request_and_the_checks_pass(tmp_path: Path) -> None:
    """Each scenario is warmed for a second first, as the full run warms it: a worker's first
    bet, which compiles its statements, took past the one second measured on a busy machine
    (PostgreSQL's Casino War once settled no round in its figure)."""
    databases = _databases()
    figures = tmp_path / "load.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "load", "--seconds", "1", "--clients", "2"]
        + ["--warmup", "1", "--databases", ",".join(databases), "--json", str(figures)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    runs = json.loads(figures.read_text())["runs"]
    assert [run["database"] for run in runs] == databases
    for run in runs:
        assert run["checks_pass"], run
        assert run["ledger_check"].startswith("ledger ok") and "audit log ok" in run["audit_verify"]
        seen = {(f["scenario"], f["clients"]) for f in run["figures"]}
        assert seen == {(s, 2) for s in ("baseline", "casino_war", "sota")}
        for figure in run["figures"]:
            assert figure["errors"] == 0, figure
            assert figure["rounds"] > 0, figure
    assert "| sqlite | 2 |" in done.stdout
