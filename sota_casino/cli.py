"""The ``flask`` commands: database, ledger, audit log, keys, staff accounts, odds, simulations.

Each is thin: it parses, calls one service, prints, and exits 1 when a check fails or a service
refuses, 2 on a bad usage (click's), and :data:`TRY_AGAIN_LATER` when the database cannot serve
it, with one line (:func:`init_app` makes every command do so).
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from flask import Flask
from flask import current_app
from flask.cli import ScriptInfo
from flask.cli import with_appcontext
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from . import background
from . import migrate
from .core.casino_war import BONUS_MODES
from .core.casino_war import RANGES
from .core.casino_war import TableRules
from .core.errors import CasinoError
from .core.fairness import format_time
from .db import new_session
from .instance import instance_database
from .services import tx

#: The exit status of a command the database could not serve: sysexits.h's EX_TEMPFAIL, "try
#: again later", so that cron or a script tells an outage from a failed check (1) and a bad
#: usage (2).
TRY_AGAIN_LATER = 75
#: What a command that met an outage before it changed anything says it did.
NOTHING_DONE = "nothing was done"


class PartlyDone(Exception):
    """A command stopped by an error after part of its work; ``done`` says what was done (and
    what was not), in words for its line."""

    def __init__(self, done: str) -> None:
        super().__init__(done)
        self.done = done


@click.group("db")
def db_group() -> None:
    """Create or change the schema (Alembic migrations only)."""


@contextmanager
def _alembic_refusals() -> Iterator[None]:
    """Say Alembic's refusal (a revision it does not know, a database behind the migrations,
    models that disagree with them) as the command's error, exit 1, not as a traceback."""
    from alembic.util import CommandError

    try:
        yield
    except CommandError as exc:
        raise click.ClickException(str(exc)) from exc


@db_group.command("upgrade")
@click.argument("revision", default="head")
@with_appcontext
def db_upgrade(revision: str) -> None:
    """Migrate the database up to REVISION (default: the newest)."""
    url = current_app.config["DATABASE_URL"]
    if url == f"sqlite:///{instance_database(current_app.instance_path)}":
        Path(current_app.instance_path).mkdir(parents=True, exist_ok=True)  # first made here
    with _alembic_refusals():
        migrate.upgrade(current_app.config["DATABASE_URL"], revision)
    click.echo(f"database at {revision}")


@db_group.command("downgrade")
@click.argument("revision")
@with_appcontext
def db_downgrade(revision: str) -> None:
    """Migrate the database down to REVISION (``base`` empties it)."""
    with _alembic_refusals():
        migrate.downgrade(current_app.config["DATABASE_URL"], revision)
    click.echo(f"database at {revision}")


@db_group.command("check")
@with_appcontext
def db_check() -> None:
    """Fail if the models and the migrations disagree (or the database is not at the newest
    revision)."""
    with _alembic_refusals():
        migrate.check(current_app.config["DATABASE_URL"])
    click.echo("models and migrations agree")


@click.group("ledger")
def ledger_group() -> None:
    """Inspect the double-entry ledger."""


@ledger_group.command("check")
@with_appcontext
def ledger_check() -> None:
    """Prove the books balance; exit 1 with a report otherwise."""
    from .services import ledger

    report = ledger.check(new_session())
    if report.ok:
        click.echo(f"ledger ok: {report.transfers} transfers over {report.accounts} accounts")
        return
    click.echo(f"ledger check FAILED ({len(report.problems)} problems):", err=True)
    for problem in report.problems:
        click.echo(f"  - {problem}", err=True)
    sys.exit(1)


@click.group("audit")
def audit_group() -> None:
    """Verify, integrate, checkpoint and export the audit log."""


@audit_group.command("verify")
@with_appcontext
def audit_verify() -> None:
    """Verify the hash chain, that no pair or round is logged twice nor two pairs committed to
    one server seed nor a pair's row rewritten since its commitment was logged nor a pair
    revealed with another server seed than it committed to, and the signed checkpoints; name
    the first bad entry. Then check that every settled round's bet and settlement is in the
    log."""
    from .services import audit

    session = new_session()
    with _log_progress(audit.current_size(session), "checking the log") as advance:
        result = audit.verify(session, progress=advance)
    if result.ok:
        checkpoint = result.checkpoint
        covered = f", latest checkpoint at {checkpoint['document']['size']}" if checkpoint else ""
        click.echo(f"audit log ok: {result.size} entries{covered}")
        return
    where = "" if result.first_bad_seq is None else f" at entry {result.first_bad_seq}"
    click.echo(f"audit log BROKEN{where}: {result.reason}", err=True)
    sys.exit(1)


@audit_group.command("integrate")
@with_appcontext
def audit_integrate() -> None:
    """Sequence the committed entries still waiting for the integrator (PostgreSQL)."""
    from .services import audit

    count = audit.flush(new_session())
    click.echo(f"integrated {count} pending entries")


@audit_group.command("checkpoint")
@with_appcontext
def audit_checkpoint() -> None:
    """Sign a checkpoint over the whole log now."""
    from .services import audit

    signed = audit.checkpoint(new_session())
    document = signed["document"]
    click.echo(f"checkpoint over {document['size']} entries, root {document['root']}")


@audit_group.command("export")
@click.argument("path", type=click.Path(dir_okay=False, writable=True))
@with_appcontext
def audit_export(path: str) -> None:
    """Write the log as JSON Lines (entries, then checkpoints), verifiable offline.

    The lines go to a hidden file beside PATH that takes its name once the last is written: an
    export that fails midway leaves no file at PATH (nor changes one there).
    """
    from .services import audit

    session = new_session()
    target = Path(path)
    partial = target.with_name(f".{target.name}.partial")
    count = 0
    try:
        with open(partial, "w", encoding="utf-8") as handle:
            # As the download does, once there is a file to write into: signed by the key in
            # use right after a key change.
            audit.sign_after_a_key_change(session)
            with _log_progress(audit.current_size(session), "exporting the log") as advance:
                for line in audit.iter_export(session):  # streamed: memory stays flat
                    handle.write(line)
                    count += 1
                    if count % PROGRESS_STEP == 0:
                        advance(count)  # entries come first: the bar is full once written
                advance(count)
        partial.replace(target)
    except OSError as exc:  # the file system's refusal (no such folder, a full disk): no bug
        raise click.ClickException(f"{path} not written: {exc.strerror or exc}") from exc
    except Exception as exc:
        if count:
            raise PartlyDone(f"{path} not written (stopped after {count} lines)") from exc
        raise
    finally:
        partial.unlink(missing_ok=True)  # a file cut short never looks like an export
    click.echo(f"wrote {count} lines to {path}")


#: Lines of an export between two updates of its progress bar.
PROGRESS_STEP = 2000


@contextmanager
def _log_progress(entries: int, label: str) -> Iterator[Callable[[int], None]]:
    """A progress bar over the log's ``entries`` on a terminal's standard error (nothing in a
    script's or cron's output, nor for an empty log); yields what to call with the entries
    reached so far."""
    hidden = entries == 0 or not sys.stderr.isatty()
    with click.progressbar(
        length=max(entries, 1), label=label, file=sys.stderr, hidden=hidden
    ) as bar:
        yield lambda reached: bar.update(min(reached, entries) - bar.pos)


@click.group("checks")
def checks_group() -> None:
    """The standing audit and ledger checks whose verdicts the console shows."""


@checks_group.command("run")
@click.option("--whole", is_flag=True, help="Check everything again from the start.")
@with_appcontext
def checks_run(whole: bool) -> None:
    """Run one step of each standing check now and store its verdict (the server does this
    in the background every CHECK_INTERVAL_SECONDS)."""
    import os

    from .services import audit
    from .services import checks

    session = new_session()
    failed = False
    for done, name in enumerate(checks.NAMES):
        try:
            # Only the audit check reads the log a chunk at a time; the ledger's is one query.
            entries = audit.current_size(session) if name == "audit" else 0
            with _log_progress(entries, "checking the log") as advance:
                step = checks.run(
                    session, name, f"cli:{os.getpid()}", whole=whole, progress=advance
                )
        except Exception as exc:
            if done:
                checked, left = checks.NAMES[:done], checks.NAMES[done:]
                raise PartlyDone(f"{', '.join(checked)} checked; {', '.join(left)} not") from exc
            raise
        found = step.verdict
        if not step.ran:
            click.echo(f"{name}: another runner holds it; stored verdict shown")
        word = {True: "ok", False: "FAILED", None: "not checked yet"}[found.ok]
        click.echo(
            f"{name}: {word} at size {found.size}" + (f": {found.reason}" if found.reason else "")
        )
        failed = failed or found.ok is False
    if failed:
        sys.exit(1)


@click.group("keys")
def keys_group() -> None:
    """The service's Ed25519 signing key."""


@keys_group.command("show")
@with_appcontext
def keys_show() -> None:
    """Print the public key (hex and PEM) and the retired ones."""
    from .services import fairness

    info = fairness.public_key_info(new_session())
    click.echo(f"Ed25519 public key: {info.public_key_hex}")
    click.echo(info.public_key_pem.rstrip())
    for old in info.retired:
        click.echo(f"retired {format_time(old.retired_at)}: {old.public_key_hex}")
    for change in info.key_changes:
        doc = change["document"]
        click.echo(
            f"key change {doc['changed_at']}: {doc['old_public_key_hex']} -> "
            f"{doc['new_public_key_hex']} (signed by the old key)"
        )


@keys_group.command("rotate")
@with_appcontext
def keys_rotate() -> None:
    """Replace the signing key: the old key signs a key change naming the new one (audited),
    then the key file is swapped; the old file is kept beside it. Restart the service after."""
    from .core import fairness as core_fairness
    from .instance import swap_in
    from .instance import write_beside
    from .services import fairness

    # The key in use, made now if it never was (it signs the change).
    current_app.extensions["sota_casino.context"].signing_key  # noqa: B018
    new_key = core_fairness.new_signing_key()
    path = Path(current_app.config["SIGNING_KEY_FILE"])
    # The new key is on disk before the change naming it is recorded: were it written after,
    # a failed write would leave the database naming a key whose private half is lost.
    try:
        draft = write_beside(path, core_fairness.private_key_pem(new_key))
    except OSError as exc:
        raise click.ClickException(
            f"cannot write the new key beside {path}: {exc.strerror or exc}: {NOTHING_DONE}"
        ) from exc
    try:
        change = fairness.change_key(new_session(), new_key)["document"]
    except BaseException:
        draft.unlink()
        raise
    try:
        kept = swap_in(path, draft, suffix=".retired")
    except OSError as exc:
        raise click.ClickException(
            f"the key change is recorded, but {path} could not be replaced "
            f"({exc.strerror or exc}): the new key is in {draft}; move it to {path} and "
            "restart the service"
        ) from exc
    click.echo(f"old key {change['old_public_key_hex']} (file kept as {kept})")
    click.echo(f"new key {change['new_public_key_hex']}, signed over by the old key")
    click.echo(
        f"copy {path} to every other server of the service, then restart them all to sign with "
        "the new key (one not restarted goes on signing with the retired key)"
    )


@click.command("create-operator")
@click.argument("username")
@click.option("--role", type=click.Choice(["operator", "auditor"]), default="operator")
@with_appcontext
def create_operator(username: str, role: str) -> None:
    """Create a staff account; the password is prompted twice on a terminal, else read as one
    line from standard input."""
    from .services import accounts

    if sys.stdin.isatty():
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    else:
        password = _line_of_stdin("the password")
    user = accounts.create_operator(new_session(), username, password, role)
    click.echo(f"created {user.role} {user.username} (id {user.id})")


def _line_of_stdin(what: str) -> str:
    """One line of standard input as UTF-8 text, without its line end (decoded here, as the
    locale's decoding may fail, or hand on a byte it could not read as a lone surrogate).

    :raises click.ClickException: if the line is not UTF-8.
    """
    line = sys.stdin.buffer.readline()
    try:
        return line.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        raise click.ClickException(f"{what} on standard input is not UTF-8 text") from None


@click.command("odds")
@click.option(
    "--tie-payout",
    type=click.IntRange(*RANGES["tie_payout"]),
    default=TableRules().tie_payout,
    show_default=True,
)
@click.option(
    "--bonus", type=click.Choice(BONUS_MODES), default=TableRules().bonus, show_default=True
)
def odds_command(tie_payout: int, bonus: str) -> None:
    """Print the exact Casino War house edge for 1 to 8 decks (no simulation)."""
    from .core.odds import format_odds_by_decks

    click.echo(format_odds_by_decks(tie_payout, bonus))


@click.group("simulate")
def simulate() -> None:
    """Play many games through the real stream and engines, and report the statistics."""


def init_app(app: Flask) -> None:
    """Register every command on ``app``, each saying an outage in one line."""
    from .sim import register

    register(simulate)
    for command in (
        db_group,
        ledger_group,
        audit_group,
        checks_group,
        keys_group,
        create_operator,
        odds_command,
        simulate,
    ):
        _report_outages(command)
        app.cli.add_command(command)


#: The callbacks :func:`_report_outages` made: every app of a process registers the same
#: command objects, and each is wrapped once.
_reporting: set[Callable[..., Any]] = set()


def _report_outages(command: click.Command, parent: str = "") -> None:
    """Make ``command``, and every command under it, end on an outage with one line on standard
    error, ``NAME: the database is unavailable (ErrorClass): WHAT WAS DONE``, and the exit status
    :data:`TRY_AGAIN_LATER`, and on a service's refusal, or a database without this version's
    schema, with click's ``Error: MESSAGE`` and exit 1, in place of a traceback. Any other error
    goes on as it was: a check's own message, a bug's traceback."""
    name = f"{parent} {command.name}".lstrip()
    if isinstance(command, click.Group):
        for subcommand in command.commands.values():
            _report_outages(subcommand, name)
    elif command.callback is not None and command.callback not in _reporting:
        command.callback = _outage_in_one_line(name, command.callback)
        _reporting.add(command.callback)


def _outage_in_one_line(name: str, callback: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        loggers = [logging.getLogger(name) for name in _OUTAGE_LOGGERS]
        for logger in loggers:
            logger.addFilter(_no_outage_line)  # the line below says it; once is enough
        quiet = True
        try:
            return callback(*args, **kwargs)
        except Exception as exc:
            app = click.get_current_context().ensure_object(ScriptInfo).load_app()
            url = app.config["DATABASE_URL"]
            if (absent := _database_absent(exc, url, Path(app.instance_path))) is not None:
                raise click.ClickException(absent) from exc
            outage = _outage_behind(exc)
            if outage is None:
                if isinstance(exc, CasinoError):
                    raise click.ClickException(exc.message) from exc
                if (missing := _schema_missing_behind(exc)) is not None:
                    raise click.ClickException(
                        f"the database lacks this version's schema ({missing}): "
                        "run `flask db upgrade`"
                    ) from exc
                raise
            done = exc.done if isinstance(exc, PartlyDone) else NOTHING_DONE
            click.echo(f"{name}: {outage}: {done}", err=True)
            # The command ends here, and its process's integrator with it: stopped first, its
            # next step cannot say the same outage again once the filter is gone.
            quiet = background.stop_integrator(app, INTEGRATOR_STOP_SECONDS)
            sys.exit(TRY_AGAIN_LATER)
        finally:
            if quiet:  # else a step still waits on the database: the process ends anyway
                for logger in loggers:
                    logger.removeFilter(_no_outage_line)

    return run


#: How long a command that met an outage waits for its integrator's step to end.
INTEGRATOR_STOP_SECONDS = 5.0


#: The loggers of the outage lines a command's own line stands for: the services' refusals,
#: and the background work a command's process runs too (on PostgreSQL, the audit integrator's
#: loop; the integration after a commit).
_OUTAGE_LOGGERS = (tx.__name__, "sota_casino.background", "sota_casino.services.audit")


def _no_outage_line(record: logging.LogRecord) -> bool:
    return record.msg is not tx.REFUSAL_LOG and record.msg is not tx.OUTAGE_LOG


#: PostgreSQL's undefined_table and undefined_column; SQLite says so in words only.
_SCHEMA_MISSING_SQLSTATES = frozenset({"42P01", "42703"})
_SCHEMA_MISSING_SQLITE = ("no such table", "no such column")


def _schema_missing_behind(exc: BaseException) -> str | None:
    """The database's words for a table or column ``exc`` (or what it was raised from) did not
    find, as a database never migrated or behind the migrations says; ``None`` otherwise."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, DBAPIError):
            words = str(cause.orig).splitlines()[0] if str(cause.orig) else ""
            sqlstate = getattr(cause.orig, "sqlstate", None)
            if sqlstate in _SCHEMA_MISSING_SQLSTATES or words.startswith(_SCHEMA_MISSING_SQLITE):
                return words
        cause = cause.__cause__
    return None


#: PostgreSQL's invalid_catalog_name: the server has no database of that name. A connection it
#: refuses carries no SQLSTATE in psycopg, only the server's words (in English unless the
#: server's lc_messages says otherwise).
_NO_SUCH_DATABASE = "3D000"


def _database_absent(exc: BaseException, url: str, instance: Path) -> str | None:
    """Say that the database ``url`` names is not there, if the database error behind ``exc``
    comes of that: a SQLite file never made (or moved away) in a folder that is there, a
    PostgreSQL database never created (or misspelt). It is a setting or a step to mend, not an
    outage to wait out (so is the instance folder, made by the first ``flask db upgrade``, not
    there yet); ``None`` otherwise."""
    errors = []
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, DBAPIError):
            errors.append(cause)
        cause = cause.__cause__
    if not errors:
        return None
    target = make_url(url)
    if target.get_backend_name() == "sqlite":
        path = Path(target.database or ":memory:")
        # A folder gone is a disk not mounted, an outage (docs/operations.md); a file missing
        # from its folder is one never made, or moved away.
        if str(path) == ":memory:" or path.exists():
            return None
        if not path.parent.is_dir() and path.parent != instance:
            return None
        return (
            f"the database file {path} is not there: make it with `flask db upgrade` (or put "
            "back the file, if it was moved)"
        )
    words = f'database "{target.database}" does not exist'
    if any(
        getattr(error.orig, "sqlstate", None) == _NO_SUCH_DATABASE or words in str(error.orig)
        for error in errors
    ):
        return (
            f"the database server has no database {target.database}: create it, or mend the "
            "name in DATABASE_URL; then run `flask db upgrade`"
        )
    return None


def _outage_behind(exc: BaseException) -> str | None:
    """The outage ``exc`` is, or that it was raised from (a command's own error, such as a
    refusal turned into click's, over the service's), in words; ``None`` if none."""
    cause: BaseException | None = exc
    while cause is not None:
        if (outage := tx.outage_of(cause)) is not None:
            return outage
        cause = cause.__cause__
    return None
