"""Every ``flask`` command that meets a database that cannot serve it (SQLite's folder gone, as
a disk not mounted; PostgreSQL refusing connections) ends with one line on standard error,
``COMMAND: the database is unavailable (ErrorClass): nothing was done``, exits 75 (try again
later: apart from a failed check's 1 and a bad usage's 2), and writes nothing, neither a row
nor a file. A bug keeps its traceback. The commands are read from the app's own group, so a
new one is covered as soon as it is registered."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
import sqlalchemy as sa
from app_support import app_config
from app_support import assert_books_hold
from cut_support import fail_statements
from flask import Flask
from outage_support import Relay

from sota_casino import cli
from sota_casino.factory import create_app
from sota_casino.services import accounts
from sota_casino.services import checks
from sota_casino.services import ledger

PASSWORD = "correct horse battery"
#: The password in the PostgreSQL URL the commands are given: never in what they print.
URL_SECRET = "a-password-never-printed"


def _commands(group: click.Group, parent: str = "") -> Iterator[str]:
    for name, command in group.commands.items():
        path = f"{parent} {name}".lstrip()
        if isinstance(command, click.Group):
            yield from _commands(command, path)
        else:
            yield path


_probe = Flask(__name__)
cli.init_app(_probe)
#: Every command the app registers, as its words after ``flask``.
COMMANDS = sorted(_commands(_probe.cli))
#: What each command needs after its name ({files}: a folder of the test's own).
ARGUMENTS = {
    "db downgrade": ["base"],
    "audit export": ["{files}/log.jsonl"],
    "create-operator": ["olga"],
    "simulate casino-war": ["--rounds", "2"],
    "simulate sota": ["--games", "2", "--plot", "{files}/plot.svg"],
}
#: The commands that never read the database: they work as well during an outage.
WITHOUT_DATABASE = {"odds", "simulate casino-war", "simulate sota"}
#: On SQLite each use case sequences its own entries: there is nothing to integrate.
WITHOUT_DATABASE_ON_SQLITE = {"audit integrate"}


def test_the_arguments_name_only_commands_that_exist() -> None:
    assert set(ARGUMENTS) | WITHOUT_DATABASE | WITHOUT_DATABASE_ON_SQLITE <= set(COMMANDS)
    assert {"ledger check", "audit export", "keys rotate", "db upgrade"} <= set(COMMANDS)


@dataclass
class Outage:
    """An app whose database is up until :meth:`begin` and back after :meth:`end`."""

    app: Flask
    #: The database itself, to count its rows once it is back.
    url: str
    #: The folder of the app's files (its signing key) and of what commands write.
    files: Path
    begin: Callable[[], None]
    end: Callable[[], None]


@pytest.fixture
def outage(db_url: str, tmp_path: Path) -> Iterator[Outage]:
    """SQLite: the database's folder moved away, as a disk not mounted. PostgreSQL: a relay in
    front of it cut, and a password in the app's URL."""
    files = tmp_path / "files"
    files.mkdir()
    if db_url.startswith("sqlite"):
        disk, unmounted = tmp_path / "disk", tmp_path / "unmounted"
        disk.mkdir()
        for file in tmp_path.glob("casino.db*"):
            file.rename(disk / file.name)
        url = f"sqlite:///{disk / 'casino.db'}"
        app = create_app(app_config(url, files))
        relay = None
        begin, end = (lambda: disk.rename(unmounted)), (lambda: unmounted.rename(disk))
    else:
        server = sa.make_url(db_url)
        relay = Relay((server.host or "127.0.0.1", server.port or 5432))
        url = db_url
        relayed = server.set(port=relay.port, password=URL_SECRET)
        app = create_app(app_config(relayed.render_as_string(hide_password=False), files))
        begin, end = relay.cut, lambda: None
    with app.app_context():  # some rows to keep: an operator, and the entry of their creation
        session = app.extensions["sota_casino.sessionmaker"]()
        accounts.create_operator(session, "ada", PASSWORD)
        session.close()
    app.extensions["sota_casino.engine"].dispose()
    try:
        yield Outage(app, url, files, begin, end)
    finally:
        if relay is not None:
            relay.cut()
        app.extensions["sota_casino.engine"].dispose()


def _rows(url: str) -> dict[str, Any]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            tables = sa.inspect(connection).get_table_names()
            found: dict[str, Any] = {
                table: connection.scalar(sa.text(f'SELECT count(*) FROM "{table}"'))
                for table in tables
            }
            found["revision"] = connection.scalar(
                sa.text("SELECT version_num FROM alembic_version")
            )
    finally:
        engine.dispose()
    return found


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_says_an_outage_in_one_line_exits_75_and_writes_nothing(
    outage: Outage, command: str
) -> None:
    args = [*command.split(), *(a.format(files=outage.files) for a in ARGUMENTS.get(command, []))]
    rows, files = _rows(outage.url), _files(outage.files)
    outage.begin()
    try:
        result = outage.app.test_cli_runner().invoke(args=args, input=f"{PASSWORD}\n")
        files_after = _files(outage.files)
    finally:
        outage.end()
    sqlite = outage.url.startswith("sqlite")
    if command in WITHOUT_DATABASE or (sqlite and command in WITHOUT_DATABASE_ON_SQLITE):
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == cli.TRY_AGAIN_LATER, (result.output, result.exception)
    assert result.stderr == (
        f"{command}: the database is unavailable (OperationalError): nothing was done\n"
    )
    assert result.stdout == ""
    assert URL_SECRET not in result.output
    assert _rows(outage.url) == rows
    assert files_after == files


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_bug_in_a_command_keeps_its_traceback(
    outage: Outage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not an outage: the exception itself goes on to Flask's CLI, which prints its traceback
    (exit 1)."""

    def broken(_session: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(ledger, "check", broken)
    runner = outage.app.test_cli_runner()
    result = runner.invoke(args=["ledger", "check"])
    assert result.exit_code == 1 and isinstance(result.exception, KeyError)
    with pytest.raises(KeyError, match="a bug"):
        runner.invoke(args=["ledger", "check"], catch_exceptions=False)


def test_a_check_run_that_meets_an_outage_after_its_first_check_says_which_was_done(
    outage: Outage, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = fail_statements(outage.app.extensions["sota_casino.engine"])
    run = checks.run

    def failing_after_the_first(*args: Any, **kwargs: Any) -> checks.Step:
        step = run(*args, **kwargs)
        failing.add(threading.get_ident())
        return step

    monkeypatch.setattr(checks, "run", failing_after_the_first)
    try:
        result = outage.app.test_cli_runner().invoke(args=["checks", "run"])
    finally:
        failing.clear()
    first, second = checks.NAMES
    assert result.exit_code == cli.TRY_AGAIN_LATER, (result.output, result.exception)
    assert result.stdout.startswith(f"{first}: ok at size ")
    assert re.fullmatch(
        rf"checks run: the database is unavailable \(\w+\): {first} checked; {second} not\n",
        result.stderr,
    )
    assert_books_hold(outage.app)


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_a_command_meeting_an_outage_says_it_in_one_line_though_its_integrator_met_it_too(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL every process, a command's too, runs the audit integrator's loop. A
    command that meets an outage says it in its one line: the loop's own warning of the same
    outage was a second line on standard error."""
    server = sa.make_url(db_url)
    relay = Relay((server.host or "127.0.0.1", server.port or 5432))
    relayed = server.set(port=relay.port).render_as_string(hide_password=False)
    app = create_app(app_config(relayed, tmp_path, AUDIT_INTEGRATE_MS=10))
    check = ledger.check

    def check_after_the_loop_met_the_outage(session: Any) -> Any:
        relay.cut()
        time.sleep(0.5)  # the loop steps every 10 ms, and warns of its first failure
        return check(session)

    monkeypatch.setattr(ledger, "check", check_after_the_loop_met_the_outage)
    # As outside pytest, whose handlers keep records off standard error: logging's last resort.
    monkeypatch.setattr(logging.root, "handlers", [])
    try:
        result = app.test_cli_runner().invoke(args=["ledger", "check"])
        # Stopped before the command let the outage lines through again: a step after that
        # said the outage a second time (once in a CI run, under load).
        integrator_ran_on = app.extensions["sota_casino.integrator"][0].is_alive()
    finally:
        relay.cut()
        app.extensions["sota_casino.engine"].dispose()
    assert result.exit_code == cli.TRY_AGAIN_LATER, (result.output, result.exception)
    assert not integrator_ran_on
    assert result.stderr == (
        "ledger check: the database is unavailable (OperationalError): nothing was done\n"
    )
