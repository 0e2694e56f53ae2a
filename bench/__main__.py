"""``python -m bench [FILTER ...]``: run each ``bench/bench_*.py`` in name order, or those matching.
``python -m bench load [OPTIONS]``: the JSON API under gunicorn (bench/load.py, ``--help``).
``python -m bench scaling [OPTIONS]``: one and two app servers on one PostgreSQL, lock waits
(bench/scaling.py).

Prints the machine first (CPUs, CPU model, Python, UTC date), then each benchmark's Markdown.
Figures are compared with baselines measured in the same run, because machines are noisy.
"""

from __future__ import annotations

import importlib
import os
import platform
import sys
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent


def cpu_model() -> str:
    """Return the CPU model named in /proc/cpuinfo, or what the platform module knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> str:
    """Return the machine's description as Markdown list items."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    date = datetime.now(UTC).strftime("%a %b %d %H:%M:%S UTC %Y")
    return "\n".join(
        [
            f"- nproc: {cpus}",
            f"- CPU: {cpu_model()}",
            f"- Python: {platform.python_implementation()} {platform.python_version()}",
            f"- date -u: {date}",
        ]
    )


def benchmark_names(filters: Sequence[str]) -> list[str]:
    """Return the benchmark modules in name order, those containing any filter if given."""
    names = sorted(path.stem for path in HERE.glob("bench_*.py"))
    return [name for name in names if not filters or any(f in name for f in filters)]


def main(argv: Sequence[str]) -> int:
    """Run the benchmarks; return 1 if the filters match none."""
    if argv[:1] == ["load"]:
        from .load import main as load

        return load(argv[1:])
    if argv[:1] == ["scaling"]:
        from .scaling import main as scaling

        return scaling(argv[1:])
    names = benchmark_names(argv)
    if not names:
        print(f"no benchmark matches {' '.join(argv)!r}", file=sys.stderr)
        return 1
    print(machine_info())
    for name in names:
        print()
        importlib.import_module(f"bench.{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
