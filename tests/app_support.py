"""The settings of every test app (the ``app`` fixture, the web tests' extra apps, the outage
runs): a database, a signing key of the test's own, no background work."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from flask import Flask


def app_config(url: str, tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    """Settings for a test app on ``url`` with its own signing key."""
    return {
        "TESTING": True,
        "DATABASE_URL": url,
        "SECRET_KEY": "test-secret-key",
        "SIGNING_KEY_FILE": str(tmp_path / "signing_key.pem"),
        "CHECKPOINT_EVERY": 0,
        "CHECK_INTERVAL_SECONDS": 0,  # tests run the standing checks' steps themselves
        "AUDIT_INTEGRATE_MS": 0,  # use cases integrate their own entries; tests of the loop set it
        "FOUR_EYES_TABLES": 0,  # changes apply at once; four-eyes tests turn it on
        **overrides,
    }


def assert_books_hold(app: Flask) -> None:
    """``flask ledger check`` and ``flask audit verify`` must pass after a test moved money."""
    runner = app.test_cli_runner()
    for command in (["ledger", "check"], ["audit", "verify"]):
        result = runner.invoke(args=command)
        assert result.exit_code == 0, f"flask {' '.join(command)} failed:\n{result.output}"


def copy_of_template(template: Path, tmp_path: Path) -> str:
    """The URL of a fresh copy of the migrated SQLite file ``template`` in ``tmp_path``."""
    database = tmp_path / "casino.db"
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{template}{suffix}")
        if source.exists():
            shutil.copy(source, f"{database}{suffix}")
    return f"sqlite:///{database}"
