"""Where the app's files are: templates, static files, translations and migrations (read by the
factory, the migration runner and the CLI, so none of them imports another for a path)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

PACKAGE: Final = Path(__file__).resolve().parent
TEMPLATES: Final = PACKAGE / "templates"
STATIC: Final = PACKAGE / "static"
MIGRATIONS: Final = PACKAGE / "migrations"
TRANSLATIONS: Final = PACKAGE / "translations"
