"""A process's start: what every ``flask`` command, gunicorn worker and restart pays first.

Each figure is the CPU time (user + system, which a busy machine disturbs less than the wall
clock) of a fresh Python process, the median of interleaved runs:

- *bare Python*: ``python -c pass``, the floor;
- *the libraries*: importing Flask, SQLAlchemy with both drivers' dialects, pydantic, argon2,
  cryptography and Babel, what the app stands on;
- *the app*: ``import wsgi``, what a gunicorn worker does before its first request (the app
  built on a scratch SQLite file: its settings read, its signing key loaded, its routes made).

The app's own share is the difference from the libraries.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 15
NO_COMPILED_CODE = "PYTHONDONTWRITEBYTECODE"
LIBRARIES = (
    "import flask, sqlalchemy, sqlalchemy.dialects.postgresql, sqlalchemy.dialects.sqlite, "
    "pydantic, argon2, cryptography.hazmat.primitives.asymmetric.ed25519, babel.support"
)
STARTS = {
    "bare Python": "pass",
    "the libraries": LIBRARIES,
    "the app (import wsgi)": "import wsgi",
}


def _cpu_ms(code: str, env: dict[str, str]) -> float:
    """The CPU milliseconds of one fresh process running ``code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # Each run reads the compiled code, as a server does, whatever this shell says.
        env = {name: value for name, value in os.environ.items() if name != NO_COMPILED_CODE}
        env |= {
            "DATABASE_URL": f"sqlite:///{Path(tmp) / 'start.db'}",
            "SIGNING_KEY_FILE": str(Path(tmp) / "key.pem"),
            "SECRET_KEY": "bench-startup",
        }
        runs: dict[str, list[float]] = {name: [] for name in STARTS}
        for code in STARTS.values():  # compiled once before any run is counted
            _cpu_ms(code, env)
        for _ in range(RUNS):
            for name, code in STARTS.items():
                runs[name].append(_cpu_ms(code, env))
    medians = {name: statistics.median(values) for name, values in runs.items()}
    floor = medians["the libraries"]
    print("## A process's start\n")
    print(f"CPU time of a fresh process, median of {RUNS} interleaved runs.\n")
    print("| start | CPU ms | beside the libraries |")
    print("| --- | ---: | ---: |")
    for name, value in medians.items():
        print(f"| {name} | {value:.0f} | {value / floor:.2f}x |")
    print(f"\nThe app's own share: {medians['the app (import wsgi)'] - floor:.0f} ms.")
