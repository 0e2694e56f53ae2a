"""The pure core stays free of Flask, SQLAlchemy, ``random`` and the clock.

``random`` is checked in the source only: the standard library's ``secrets`` imports it itself.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "sota_casino" / "core"
FORBIDDEN = re.compile(r"^\s*(from|import) (flask|sqlalchemy|random)\b", re.M)


def test_core_sources_import_no_flask_sqlalchemy_or_random() -> None:
    offenders = [p.name for p in CORE.glob("*.py") if FORBIDDEN.search(p.read_text())]
    assert offenders == []


def test_core_reads_no_clock() -> None:
    clock = re.compile(r"\b(datetime\.now|datetime\.utcnow|time\.time|date\.today)\(")
    assert [p.name for p in CORE.glob("*.py") if clock.search(p.read_text())] == []


def test_importing_the_core_loads_neither_flask_nor_sqlalchemy() -> None:
    code = (
        "import sys, sota_casino, sota_casino.core.fairness, sota_casino.core.casino_war, "
        "sota_casino.core.cards\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('flask', 'sqlalchemy')]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
