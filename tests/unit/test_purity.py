"""The pure core stays free of Flask, SQLAlchemy, ``random`` and the clock; the services and
the models stay free of Flask.

``random`` is checked in the source only: the standard library's ``secrets`` imports it itself.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "sota_casino"
CORE = PACKAGE / "core"
FLASK = re.compile(r"^\s*(from|import) (flask|werkzeug)\b|^\s*from \.+(web|db|factory)\b", re.M)
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


def test_services_and_models_import_no_flask_nor_the_web_layer() -> None:
    sources = [*PACKAGE.glob("services/*.py"), PACKAGE / "models.py", PACKAGE / "database.py"]
    assert [p.name for p in sources if FLASK.search(p.read_text())] == []


def test_importing_the_services_and_models_loads_no_flask() -> None:
    services = sorted(p.stem for p in PACKAGE.glob("services/*.py") if p.stem != "__init__")
    code = (
        "import sys, sota_casino.models\n"
        + "".join(f"import sota_casino.services.{name}\n" for name in services)
        + "print(','.join(m for m in sys.modules if m.split('.')[0] in ('flask', 'werkzeug')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_no_error_kind_carries_an_http_status() -> None:
    from sota_casino.core import errors

    kinds = [k for k in vars(errors).values() if isinstance(k, type) and issubclass(k, Exception)]
    assert [k.__name__ for k in kinds if "status" in vars(k)] == []
