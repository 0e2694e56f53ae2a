"""A command given what it cannot use (a folder that is not there, a password that is not text,
a key file it cannot write) says so in one line and exits 1, having changed nothing: no
traceback, and no half-done work for an operator to find later."""

from __future__ import annotations

import errno
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from app_support import app_config
from flask import Flask
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core.errors import InvalidInput
from sota_casino.factory import create_app
from sota_casino.models import AuditEntry
from sota_casino.models import User
from sota_casino.services import accounts
from sota_casino.services import fairness as fairness_service


def _cli(app: Flask, *args: str, input: str | bytes | None = None) -> Any:
    return app.test_cli_runner().invoke(args=list(args), input=input)


def _said_in_one_line(result: Any) -> str:
    """The command's one line of refusal (click's ``Error: ...``), after checking it is one."""
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    return str(result.output)


def _entries(session: Session) -> int:
    with session.begin():
        return int(session.scalar(select(func.count(AuditEntry.seq))) or 0)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_password_on_standard_input_that_is_not_utf8_is_refused_in_one_line(
    app: Flask, session: Session
) -> None:
    result = _cli(app, "create-operator", "olga", input=b"a long enough secret\xff\n")
    line = _said_in_one_line(result)
    assert "not UTF-8" in line
    with session.begin():
        assert session.scalar(select(func.count(User.id))) == 0


def test_a_password_with_a_lone_surrogate_is_refused_as_no_text() -> None:
    """On a terminal the prompt may hand on what the locale could not decode, as a lone
    surrogate: no text to hash, so refused as the password's own mistake."""
    with pytest.raises(InvalidInput, match="not valid Unicode"):
        accounts.check_password("a long enough secret\udcff")


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_an_export_into_a_folder_that_is_not_there_is_refused_in_one_line(
    app: Flask, tmp_path: Path
) -> None:
    target = tmp_path / "no-such-folder" / "audit.jsonl"
    line = _said_in_one_line(_cli(app, "audit", "export", str(target)))
    assert str(target) in line and "No such file or directory" in line
    assert not target.parent.exists()


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_key_change_whose_key_file_cannot_be_written_changes_nothing(
    app: Flask, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new private key is written beside the key file before the change is recorded: a
    disk that cannot hold it stops the command with the old key still the one in use (else the
    database would name a key whose private half was lost, and every later change be refused)."""
    key_file = Path(app.config["SIGNING_KEY_FILE"])
    in_use = fairness_service.public_key_info(session).public_key_hex  # the key file made
    before = (key_file.read_bytes(), in_use)
    entries = _entries(session)

    def disk_full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(tempfile, "mkstemp", disk_full)
        line = _said_in_one_line(_cli(app, "keys", "rotate"))
    assert "No space left on device" in line and "nothing was done" in line
    after = (key_file.read_bytes(), fairness_service.public_key_info(session).public_key_hex)
    assert after == before
    assert _entries(session) == entries
    assert sorted(p.name for p in key_file.parent.glob(f"*{key_file.name}*")) == [key_file.name]
    assert _cli(app, "keys", "rotate").exit_code == 0  # once the disk has room, it goes through


@pytest.mark.parametrize("command", [["ledger", "check"], ["audit", "verify"], ["checks", "run"]])
def test_a_database_never_migrated_is_said_in_one_line_naming_the_command_to_run(
    tmp_path: Path, command: list[str]
) -> None:
    """A database without the schema (a new file, or `flask db upgrade` forgotten) is no bug of
    the command, and no outage to wait out: exit 1, saying what to run."""
    empty = tmp_path / "empty.db"
    empty.touch()
    app = create_app(app_config(f"sqlite:///{empty}", tmp_path))
    try:
        line = _said_in_one_line(_cli(app, *command))
    finally:
        app.extensions["sota_casino.engine"].dispose()
    assert "no such table" in line and "run `flask db upgrade`" in line
    with sqlite3.connect(empty) as reading:  # nothing was made in it
        assert reading.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)


def test_a_sqlite_database_never_made_is_said_as_such_not_as_an_outage(tmp_path: Path) -> None:
    """The first step of a new casino, `flask create-operator` before `flask db upgrade`, said
    "the database is unavailable (OperationalError)" and exit 75, try again later: no wait
    would have helped. (Its folder gone is a disk not mounted, an outage: test_command_outages.)"""
    database = tmp_path / "casino.db"
    app = create_app(app_config(f"sqlite:///{database}", tmp_path))
    for command in (["create-operator", "olga"], ["ledger", "check"]):
        line = _said_in_one_line(_cli(app, *command, input="a long enough secret\n"))
        assert f"the database file {database} is not there: make it with `flask db " in line
    assert not database.exists()
    app.extensions["sota_casino.engine"].dispose()


def test_a_postgres_database_never_created_is_said_as_such_not_as_an_outage(
    tmp_path: Path, postgres_database: str
) -> None:
    url = postgres_database.rsplit("/", 1)[0] + "/sota_no_such_database"
    app = create_app(app_config(url, tmp_path))
    for command in (["db", "upgrade"], ["ledger", "check"]):
        line = _said_in_one_line(_cli(app, *command))
        assert "the database server has no database sota_no_such_database: create it" in line
    app.extensions["sota_casino.engine"].dispose()
