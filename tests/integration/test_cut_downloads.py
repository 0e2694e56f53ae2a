"""A download whose database fails once its answer has begun is cut, never passed off as whole:
the server closes the connection without the chunked message's last chunk (an HTTP client
raises ``IncompleteRead``, curl exits 18), and the app logs it in one line, no traceback. The
same under gunicorn and Werkzeug's server. ``flask audit export`` failing midway exits 75 (try
again later) with one line and leaves no file that looks like an export."""

from __future__ import annotations

import http.client
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from app_support import app_config
from cut_support import CUT_LINE
from cut_support import FAIL_HEADER
from cut_support import fail_statements
from cut_support import failing_midway
from flask import Flask
from serving_support import serving
from werkzeug.serving import make_server

from ops import servers
from sota_casino import cli
from sota_casino.factory import create_app
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services import lists
from sota_casino.services import tx

PASSWORD = "correct horse battery"
#: More entries than one read of a download: the second read comes after the answer began.
ENTRIES = audit.CHUNK + 100
#: More players than the failing server reads in one (cut_support.LIST_CHUNK).
PLAYERS = 5
#: Each kind of streamed download: its path, and the lines of the whole of it.
DOWNLOADS = {
    "players as CSV": "/api/v1/operator/players/export?format=csv",
    "the whole audit log": "/api/v1/operator/audit/export",
    "a range of the audit log": "/api/v1/operator/audit/range-export?from_seq=1",
}


@tx.transactional
def _fill_log(session: sa.orm.Session, count: int) -> None:
    specs = [audit.EntrySpec("system", "test.filler", f"n:{n}") for n in range(count)]
    audit.record_all(session, specs)


def operator_with_rows(app: Flask) -> str:
    """Fill the app's database with players and a log longer than one read; return an
    operator's API token."""
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        operator = accounts.create_operator(session, "olga", PASSWORD)
        token, _ = accounts.start_session(session, operator.id, kind="api")
        for n in range(PLAYERS):
            accounts.register(session, f"player{n}", PASSWORD)
        _fill_log(session, ENTRIES)
        audit.flush(session)
        session.close()
    assert ENTRIES > lists.CHUNK
    return token


class SmallWindow(http.client.HTTPConnection):
    """A client that takes the answer in small bites, as a slow one does."""

    def connect(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.settimeout(self.timeout)
        self.sock.connect((self.host, self.port))


class OldClient(SmallWindow):
    """An HTTP/1.0 client: an answer without a length ends when its connection closes."""

    _http_vsn = 10
    _http_vsn_str = "HTTP/1.0"


def download(
    port: int, path: str, token: str, *, fail: bool, client: type[SmallWindow] = SmallWindow
) -> tuple[int, bytes, bool]:
    """GET ``path``; return the status, the body read, and whether the message was whole."""
    connection = client("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {token}"} | ({FAIL_HEADER: "1"} if fail else {})
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        try:
            return response.status, response.read(), True
        except http.client.IncompleteRead as cut:
            return response.status, cut.partial, False
    finally:
        connection.close()


def assert_cut_and_logged(port: int, path: str, token: str, log: str) -> None:
    status, whole, complete = download(port, path, token, fail=False)
    assert (status, complete) == (200, True)
    assert whole.endswith(b"\n") and CUT_LINE not in log
    status, body, complete = download(port, path, token, fail=True)
    assert status == 200  # the status went out with the first line
    assert not complete, f"a cut download passed for a whole one ({len(body)} bytes)"
    assert body.count(b"\n") < whole.count(b"\n")
    # HTTP/1.0 gets it read whole, with its length: the database failing only once the answer
    # began fails nothing (one failing before is a 503: see the test below).
    status, body, complete = download(port, path, token, fail=True, client=OldClient)
    assert (status, complete, body.count(b"\n")) == (200, True, whole.count(b"\n"))


def assert_one_line(log: str, path: str) -> None:
    cut = [line for line in log.splitlines() if CUT_LINE in line]
    assert len(cut) == 1, log[-3000:]
    assert path.split("?")[0] in cut[0] and "the database is unavailable" in cut[0], cut[0]
    assert "Traceback" not in log and "Error handling request" not in log, log[-3000:]


@pytest.fixture
def served(db_url: str, tmp_path: Path) -> Iterator[tuple[servers.Server, str]]:
    """gunicorn on a database with rows, its workers' database failing where a request asks."""
    instance = tmp_path / "instance"
    environment = servers.app_environment(db_url, instance, HOME=str(tmp_path))
    app = create_app(app_config(db_url, tmp_path, SIGNING_KEY_FILE=environment["SIGNING_KEY_FILE"]))
    try:
        token = operator_with_rows(app)
    finally:
        app.extensions["sota_casino.engine"].dispose()
    config = Path(__file__).parent / "gunicorn_failing.conf.py"
    server = servers.start(environment, tmp_path / "gunicorn.log", workers=1, config=config)
    yield server, token
    server.stop()


@pytest.mark.parametrize("kind", DOWNLOADS)
@pytest.mark.parametrize("db_url", ["sqlite", "postgres"], indirect=True)
def test_a_download_whose_database_fails_midway_is_cut_under_gunicorn_and_logged_in_one_line(
    served: tuple[servers.Server, str], kind: str
) -> None:
    server, token = served
    path = DOWNLOADS[kind]
    assert_cut_and_logged(server.port, path, token, server.log.read_text())
    assert_one_line(server.log.read_text(), path)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_download_cut_midway_under_werkzeugs_server_is_cut_and_logged_in_one_line(
    db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``flask run``'s server: the same cut, and not its "Error on request" traceback."""
    app = create_app(app_config(db_url, tmp_path))
    token = operator_with_rows(app)
    path = DOWNLOADS["the whole audit log"]
    try:
        with serving(make_server("127.0.0.1", 0, failing_midway(app), threaded=True)) as server:
            assert_cut_and_logged(server.port, path, token, caplog.text)
    finally:
        app.extensions["sota_casino.engine"].dispose()
    assert_one_line(caplog.text, path)
    assert "Error on request" not in caplog.text


@pytest.mark.parametrize("db_url", ["sqlite", "postgres"], indirect=True)
def test_an_audit_export_command_failing_midway_exits_75_in_one_line_and_leaves_no_file(
    app: Flask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file at PATH is the whole export or nothing: an earlier one there stays as it was."""
    operator_with_rows(app)
    target = tmp_path / "log.jsonl"
    target.write_text("an earlier export\n")
    runner = app.test_cli_runner()
    assert runner.invoke(args=["audit", "export", str(target)]).exit_code == 0
    whole = target.read_text()
    assert whole.count("\n") > ENTRIES
    target.write_text("an earlier export\n")

    failing = fail_statements(app.extensions["sota_casino.engine"])
    entry_lines = audit._entry_lines

    def failing_after_a_read(bind: sa.Engine, first: int, last: int) -> Iterator[str]:
        lines = entry_lines(bind, first, last)
        for _ in range(audit.CHUNK):  # the first read's lines are written
            yield next(lines)
        failing.add(threading.get_ident())
        yield from lines

    monkeypatch.setattr(audit, "_entry_lines", failing_after_a_read)
    try:
        result = runner.invoke(args=["audit", "export", str(target)])
    finally:
        failing.clear()
    assert result.exit_code == cli.TRY_AGAIN_LATER, result.output
    assert re.fullmatch(
        r"audit export: the database is unavailable \(\w+\): "
        rf"{re.escape(str(target))} not written \(stopped after {audit.CHUNK} lines\)\n",
        result.stderr,
    ), result.stderr
    assert target.read_text() == "an earlier export\n"
    assert sorted(p.name for p in tmp_path.glob("*log.jsonl*")) == ["log.jsonl"]


class Counting:
    """Fail the statements of this thread once ``after`` statements have read ``table``."""

    def __init__(self, engine: sa.Engine, table: str, after: int) -> None:
        self.failing = fail_statements(engine)
        self.table, self.after, self.seen, self.armed = table, after, 0, False
        sa.event.listen(engine, "before_cursor_execute", self.count)

    def count(self, _connection: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if self.armed and self.table in statement:
            self.seen += 1
            if self.seen == self.after:
                self.failing.add(threading.get_ident())

    def arm(self) -> None:
        self.seen, self.armed = 0, True
        self.failing.clear()


@pytest.mark.parametrize("db_url", ["sqlite", "postgres"], indirect=True)
def test_an_http_1_0_download_comes_whole_with_its_length_or_is_a_503(
    db_url: str, tmp_path: Path
) -> None:
    """HTTP/1.0 has no chunks: its answer ends when the connection closes, whole or cut, so a
    download to it is read whole before it is sent, with its Content-Length (nginx speaks 1.0 to
    the server it proxies unless told otherwise); the database failing past the first rows is
    then the 503 of any outage, never a shorter file passed off as whole."""
    app = create_app(app_config(db_url, tmp_path))
    token = operator_with_rows(app)
    headers = {"Authorization": f"Bearer {token}"}
    old = {"SERVER_PROTOCOL": "HTTP/1.0"}
    client = app.test_client()
    try:
        for path in DOWNLOADS.values():
            with client.get(path, headers=headers) as streamed:
                lines = streamed.get_data().count(b"\n")
            with client.get(path, headers=headers, environ_overrides=old) as whole:
                assert whole.status_code == 200, path
                assert whole.content_length == len(whole.get_data()) > 0, path
                assert whole.get_data().count(b"\n") == lines, path
        # The whole log is read in chunks: the second read fails.
        reads = Counting(app.extensions["sota_casino.engine"], "audit_entries", after=2)
        path = DOWNLOADS["the whole audit log"]
        reads.arm()
        with pytest.raises(ConnectionResetError):  # HTTP/1.1: the stream is cut (see above)
            client.get(path, headers=headers).get_data()
        reads.arm()
        refused = client.get(path, headers=headers, environ_overrides=old)
        assert reads.seen >= 2
        assert refused.status_code == 503, refused.get_data(as_text=True)[:300]
        assert refused.headers["Retry-After"] and refused.get_json()["error"]["code"]
        reads.armed = False
        reads.failing.clear()
        with client.get(path, headers=headers, environ_overrides=old) as again:
            assert again.status_code == 200
    finally:
        app.extensions["sota_casino.engine"].dispose()
