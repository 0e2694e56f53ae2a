"""Where the app's files are: templates, static files and migrations (read by the factory,
the migration runner and the CLI, so none of them imports another for a path)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
TEMPLATES: Final = ROOT / "templates"
STATIC: Final = ROOT / "sota_casino" / "static"
MIGRATIONS: Final = ROOT / "migrations"
