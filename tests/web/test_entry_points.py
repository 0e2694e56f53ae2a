"""The three ways to start the app: ``python app.py``, ``flask --app app run`` and
``gunicorn wsgi:app`` (the browser tests serve through gunicorn), each on its own database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import Message
from pathlib import Path

import pytest
from flask import Flask
from operator_support import add_user

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def _serving(command: list[str], port: int, tmp_path: Path, **extra_env: str) -> Iterator[str]:
    """Serve the app with ``command`` and yield its landing page, fetched once it answers."""
    env = {
        **os.environ,
        **extra_env,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'casino.db'}",
        "SIGNING_KEY_FILE": str(tmp_path / "key.pem"),
        "SECRET_KEY": "entry-point-test",
    }
    subprocess.run(
        [str(BIN / "flask"), "--app", "app", "db", "upgrade"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    with _answered(command, port, env) as (page, _headers):
        yield page


@contextmanager
def _answered(command: list[str], port: int, env: dict[str, str]) -> Iterator[tuple[str, Message]]:
    """Start ``command`` and yield its landing page and headers, fetched once it answers."""
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as answer:
                    page, headers = answer.read().decode(), answer.headers
                    break
            except OSError:
                assert server.poll() is None, "the server stopped"
                assert time.monotonic() < deadline, "the server did not answer in 30 s"
                time.sleep(0.2)
        yield page, headers
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.parametrize("how", ["flask", "gunicorn"])
def test_the_app_serves_its_landing_page(how: str, tmp_path: Path) -> None:
    port = _free_port()
    command = {
        "flask": [str(BIN / "flask"), "--app", "app", "run", "--port", str(port)],
        "gunicorn": [str(BIN / "gunicorn"), "wsgi:app", "--bind", f"127.0.0.1:{port}"],
    }[how]
    with _serving(command, port, tmp_path) as page:
        assert "provably fair" in page


def test_python_app_py_serves_on_its_port_for_this_computers_names_only(tmp_path: Path) -> None:
    port = _free_port()
    with _serving([sys.executable, "app.py"], port, tmp_path, PORT=str(port)) as page:
        assert "provably fair" in page
        # A page of another site whose name was made to point at 127.0.0.1 (DNS rebinding)
        # asks for that name: it is refused, and the server's own names are answered.
        for host, status in (("attacker.example", 400), ("localhost", 200)):
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/", headers={"Host": f"{host}:{port}"}
            )
            try:
                with urllib.request.urlopen(request, timeout=5) as answer:
                    assert answer.status == status, host
            except urllib.error.HTTPError as refused:
                assert refused.code == status, host


def test_long_log_commands_draw_a_progress_bar_on_a_terminal_only(
    app: Flask, tmp_path: Path
) -> None:
    """`flask audit verify`, `audit export` and `checks run --whole` draw their bar on a
    terminal's standard error; a script or cron reads only the result, on standard output."""
    import pty

    env = {
        **os.environ,
        "DATABASE_URL": app.config["DATABASE_URL"],
        "SIGNING_KEY_FILE": app.config["SIGNING_KEY_FILE"],
        "SECRET_KEY": "entry-point-test",
        "COLUMNS": "100",
    }
    flask = [str(BIN / "flask"), "--app", "app"]
    # A few entries in the log, on the test app's migrated database: made by `flask db upgrade`
    # and `flask create-operator`, they took two of the test's eight starts of the app.
    add_user(app, "olga", role="operator")
    for command, label, result in (
        (["audit", "verify"], "checking the log", "audit log ok"),
        (["audit", "export", str(tmp_path / "log.jsonl")], "exporting the log", "wrote "),
        (["checks", "run", "--whole"], "checking the log", "audit: ok"),
    ):
        terminal, side = pty.openpty()
        try:
            run = subprocess.run(
                [*flask, *command], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=side
            )
            os.close(side)
            drawn = b""
            while chunk := _read_terminal(terminal):
                drawn += chunk
        finally:
            os.close(terminal)
        assert run.returncode == 0 and result in run.stdout.decode()
        assert label in drawn.decode() and "100%" in drawn.decode()
        quiet = subprocess.run([*flask, *command], cwd=ROOT, env=env, capture_output=True)
        assert quiet.returncode == 0 and result in quiet.stdout.decode() and quiet.stderr == b""


def _read_terminal(terminal: int) -> bytes:
    """What a finished command wrote to its terminal, a piece at a time (b"" at the end)."""
    try:
        return os.read(terminal, 4096)
    except OSError:  # Linux: EIO once the other side is closed and drained
        return b""


def test_the_flask_command_says_an_outage_or_a_database_never_migrated_in_one_line(
    tmp_path: Path,
) -> None:
    """Through the installed ``flask``, not only the test runner: a database whose folder is
    gone (a disk not mounted) is one line on standard error, the service's own log line of the
    refusal left out, and exit 75 (try again later); a database that answers without the
    schema (never migrated) is no outage but an operator's step left out: one line naming it,
    exit 1."""
    env = {
        **os.environ,
        "SIGNING_KEY_FILE": str(tmp_path / "key.pem"),
        "SECRET_KEY": "entry-point-test",
    }
    flask = [str(BIN / "flask"), "--app", "app", "ledger", "check"]
    gone = {**env, "DATABASE_URL": f"sqlite:///{tmp_path / 'unmounted' / 'casino.db'}"}
    down = subprocess.run(flask, cwd=ROOT, env=gone, capture_output=True, text=True)
    assert (down.returncode, down.stdout) == (75, "")
    assert down.stderr == (
        "ledger check: the database is unavailable (OperationalError): nothing was done\n"
    )
    (tmp_path / "empty.db").touch()
    empty = {**env, "DATABASE_URL": f"sqlite:///{tmp_path / 'empty.db'}"}
    unmigrated = subprocess.run(flask, cwd=ROOT, env=empty, capture_output=True, text=True)
    assert (unmigrated.returncode, unmigrated.stdout) == (1, "")
    assert unmigrated.stderr == (
        "Error: the database lacks this version's schema (no such table: accounts): "
        "run `flask db upgrade`\n"
    )


@pytest.mark.parametrize(
    ("setting", "value", "said"),
    [
        ("DB_LOCK_TIMEOUT_MS", "abc", "DB_LOCK_TIMEOUT_MS must be a whole number of 0 or more"),
        ("DATABASE_URL", "oracle://casino:SECRET-PW@db/casino", "DATABASE_URL is no database URL"),
        ("DATABASE_URL", "postgresql://casino:SECRET-PW@db:port/x", "DATABASE_URL is no database"),
        ("SIGNING_KEY_FILE", "README.md", "holds no unencrypted Ed25519 private key in PEM"),
    ],
)
def test_a_setting_the_app_cannot_start_with_is_one_line_naming_it(
    setting: str, value: str, said: str, tmp_path: Path
) -> None:
    """`flask --app app ...`, `python app.py` and gunicorn end in one line and exit 1, never a
    traceback (which would also show a database URL's password). gunicorn printed a traceback
    for a whole-number setting, and for the others started workers that failed one after the
    other for as long as it ran, its port taken and nothing served."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'casino.db'}",
        "SIGNING_KEY_FILE": str(tmp_path / "key.pem"),
        "SECRET_KEY": "entry-point-test",
        setting: value,
    }
    for command in ([str(BIN / "flask"), "--app", "app", "routes"], [sys.executable, "app.py"]):
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 1, done.stderr
        assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("Error: ") and said in done.stderr
        assert "SECRET-PW" not in done.stderr
    gunicorn = [str(BIN / "gunicorn"), "wsgi:app", "--bind", f"127.0.0.1:{_free_port()}"]
    done = subprocess.run(gunicorn, cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1, done.stderr
    said_lines = [line for line in done.stderr.splitlines() if line and "[INFO]" not in line]
    assert len(said_lines) == 1 and said_lines[0].startswith("Error: "), done.stderr
    assert said in said_lines[0] and "SECRET-PW" not in done.stderr


#: ``flask`` with Flask's instance folder at ``sys.argv[1]`` (a fresh one, not the source
#: tree's ``instance/``), then the command's own arguments.
FLASK_IN_INSTANCE = (
    "import sys, flask, flask.cli; folder = sys.argv.pop(1); "
    "flask.Flask.auto_find_instance_path = lambda self: folder; "
    "sys.argv[0] = 'flask'; flask.cli.main()"
)


def _flask_in(instance: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "SIGNING_KEY_FILE")}
    env.pop("DATABASE_URL", None)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            FLASK_IN_INSTANCE,
            str(instance),
            "--app",
            "sota_casino.wsgi",
            *args,
        ],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
    )


@pytest.mark.slow
def test_a_command_that_only_prints_makes_no_file_and_the_keys_are_made_when_first_needed(
    tmp_path: Path,
) -> None:
    """On a fresh checkout (no secret, key or database set), `--help` and the commands that
    only print make nothing (they made the instance's secret and signing key); the keys are
    made when first needed: the signing key by a command that signs (or `keys show`, as the
    README says), both on the first request served."""
    instance = tmp_path / "instance"
    for args in (["--help"], ["odds"]):  # Flask's help, and a command of the app's
        done = _flask_in(instance, *args)
        assert done.returncode == 0, done.stderr
        assert not instance.exists(), f"{args} made {sorted(instance.iterdir())}"
    never = _flask_in(instance, "ledger", "check")  # before the first upgrade: said so
    assert never.returncode == 1 and "flask db upgrade" in never.stderr, never.stderr
    assert _flask_in(instance, "db", "upgrade").returncode == 0
    assert (instance / "sota_casino.db").exists() and _keys_in(instance) == []
    assert _flask_in(instance, "ledger", "check").returncode == 0
    assert _keys_in(instance) == []
    shown = _flask_in(instance, "keys", "show")
    assert shown.returncode == 0, shown.stderr
    assert _keys_in(instance) == ["signing_key.pem"]
    key = (instance / "signing_key.pem").read_bytes()
    assert (instance / "signing_key.pem").stat().st_mode & 0o777 == 0o600
    assert _flask_in(instance, "keys", "show").stdout == shown.stdout  # the same key, read

    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "SIGNING_KEY_FILE")}
    env.pop("DATABASE_URL", None)
    command = [sys.executable, "-c", FLASK_IN_INSTANCE, str(instance), "--app"]
    command += ["sota_casino.wsgi", "run", "--port", str(port)]
    with _answered(command, port, env) as (_page, headers):
        cookie = headers.get("Set-Cookie") or ""
    assert "session=" in cookie  # signed with the secret made for it
    assert _keys_in(instance) == ["secret_key", "signing_key.pem"]
    assert (instance / "secret_key").stat().st_mode & 0o777 == 0o600
    assert (instance / "signing_key.pem").read_bytes() == key


def _keys_in(instance: Path) -> list[str]:
    """The files of ``instance`` but the database's (its file, WAL and write gate)."""
    return sorted(p.name for p in instance.iterdir() if not p.name.startswith("sota_casino.db"))
