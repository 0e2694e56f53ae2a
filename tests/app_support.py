"""The settings of every test app (the ``app`` fixture, the web tests' extra apps, the outage
runs): a database, a signing key of the test's own, no background work."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from flask import Flask

from sota_casino.db import new_session
from sota_casino.services import audit
from sota_casino.services import ledger


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
    """The books must hold after a test moved money: the checks of ``flask ledger check`` and
    ``flask audit verify``, called in one session rather than through the commands (a third of
    the time; the commands themselves are tested in tests/integration/test_audit_and_commands.py
    and test_command_outages.py)."""
    with app.app_context():
        session = new_session()
        try:
            report = ledger.check(session)
            assert report.ok, "flask ledger check failed:\n" + "\n".join(report.problems)
            log = audit.verify(session)
            assert log.ok, f"flask audit verify failed at entry {log.first_bad_seq}: {log.reason}"
        finally:
            session.close()


def copy_of_template(template: Path, tmp_path: Path) -> str:
    """The URL of a fresh copy of the migrated SQLite file ``template`` in ``tmp_path``."""
    database = tmp_path / "casino.db"
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{template}{suffix}")
        if source.exists():
            shutil.copy(source, f"{database}{suffix}")
    return f"sqlite:///{database}"
