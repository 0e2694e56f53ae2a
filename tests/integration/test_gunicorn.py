"""The app under gunicorn with the production settings: the app's own limits answer first and
in JSON on API paths, chunked bodies over the limit are 413, the workers die with the master,
so a new master can take the port at once, and a request behind a held database lock or sent to
a frozen database server is the API's 503 before gunicorn would kill its worker."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from outage_support import Relay
from outage_support import books
from outage_support import hold_lock
from sqlalchemy.engine import make_url

from ops import servers
from sota_casino import migrate
from sota_casino.db import ANSWER_GRACE
from sota_casino.web.protocol import SERVER_MAX_HEADER_FIELD
from sota_casino.web.protocol import SERVER_MAX_REQUEST_LINE

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A migrated database and a home for this module's servers (each test reads or adds rows of
    its own only, so they share them)."""
    home = tmp_path_factory.mktemp("gunicorn")
    url = f"sqlite:///{home / 'casino.db'}"
    migrate.upgrade(url)
    # A home of its own: a control socket would appear under it (gunicorn's default path).
    env = servers.app_environment(url, home / "instance") | {"HOME": str(home)}
    env.pop("XDG_RUNTIME_DIR", None)
    return env


@pytest.fixture(scope="module")
def server(environment: dict[str, str]) -> Iterator[servers.Server]:
    """One server for the tests that only send it requests: starting one takes seconds."""
    running = servers.start(environment, Path(environment["HOME"]) / "gunicorn.log")
    yield running
    running.stop()


def send(
    server: servers.Server, method: str, path: str, body: Any = None, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers, encode_chunked=True)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def error_code(body: bytes) -> str:
    return str(json.loads(body)["error"]["code"])


def test_the_apps_limits_answer_in_json_before_gunicorns(server: servers.Server) -> None:
    status, headers, body = send(server, "GET", "/api/v1/rounds?q=" + "x" * 5000)
    assert (status, error_code(body)) == (414, "uri_too_long")
    assert headers["Content-Type"] == "application/json"
    status, _, body = send(server, "GET", "/api/v1/me", **{"X-Padding": "y" * 9000})
    assert (status, error_code(body)) == (431, "header_fields_too_large")
    many = {f"X-Field-{n}": "z" for n in range(120)}
    status, _, body = send(server, "GET", "/api/v1/me", **many)
    assert (status, error_code(body)) == (431, "header_fields_too_large")


def test_past_gunicorns_own_limits_gunicorn_refuses_first_as_the_document_says(
    server: servers.Server,
) -> None:
    """What the document and docs/operations.md promise beyond the app's limits: the status
    stays, the body is the HTTP server's own page."""
    line = "/api/v1/rounds?q=" + "x" * SERVER_MAX_REQUEST_LINE
    status, headers, _ = send(server, "GET", line)
    assert status == 414 and "json" not in headers.get("Content-Type", "")
    field = {"X-Padding": "y" * SERVER_MAX_HEADER_FIELD}
    status, headers, _ = send(server, "GET", "/api/v1/me", **field)
    assert status == 431 and "json" not in headers.get("Content-Type", "")


#: Requests that are not valid HTTP/1.1, which gunicorn refuses before the app sees them.
NOT_HTTP = {
    "a raw byte outside ASCII in the request line": b"GET /api/v1/rounds?limit=\xff HTTP/1.1\r\n"
    b"Host: x\r\n\r\n",
    "a NUL in a header": b"GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Probe: a\x00b\r\n\r\n",
    "a Content-Length sent twice": b"POST /api/v1/auth/token HTTP/1.1\r\nHost: x\r\n"
    b"Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    "a broken chunk": b"POST /api/v1/auth/token HTTP/1.1\r\nHost: x\r\n"
    b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
}


def raw_status(server: servers.Server, request: bytes) -> tuple[int, bytes]:
    """Send ``request`` as bytes, as no HTTP client library would; return the status and the
    whole answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1]), answer


def test_a_request_that_is_not_valid_http_is_the_servers_html_400_as_the_document_says(
    server: servers.Server,
) -> None:
    """No operation lists a 400 in HTML, nor a 400 at all on a GET: the document says why, as it
    does for the limits past gunicorn's own."""
    for what, request in NOT_HTTP.items():
        status, answer = raw_status(server, request)
        assert status == 400 and b"application/json" not in answer, what
    status, _, body = send(server, "GET", "/api/v1/openapi.json")
    described = json.loads(body)["info"]["description"]
    assert "not valid HTTP" in described and "400 in HTML" in described


def test_a_chunked_body_over_the_limit_is_413_and_one_under_it_is_read_whole(
    server: servers.Server,
) -> None:
    big = json.dumps({"username": "chunky", "password": PASSWORD, "pad": "p" * 70_000}).encode()
    status, _, body = send(
        server,
        "POST",
        "/api/v1/auth/register",
        iter([big[:1000], big[1000:]]),
        **{"Content-Type": "application/json"},
    )
    assert (status, error_code(body)) == (413, "payload_too_large")
    small = json.dumps({"username": "chunky", "password": PASSWORD}).encode()
    status, _, body = send(
        server,
        "POST",
        "/api/v1/auth/register",
        iter([small[:10], small[10:]]),
        **{"Content-Type": "application/json"},
    )
    assert status == 201, body


def test_options_and_wrong_methods_on_api_paths_answer_json(server: servers.Server) -> None:
    status, headers, body = send(server, "OPTIONS", "/api/v1/me")
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert "GET" in json.loads(body)["allow"]
    status, headers, body = send(server, "DELETE", "/api/v1/me")
    assert (status, error_code(body)) == (405, "method_not_allowed")
    assert "GET" in headers["Allow"]


def test_health_checks_answer_under_gunicorn(server: servers.Server) -> None:
    assert send(server, "GET", "/healthz")[0] == 200
    status, _, body = send(server, "GET", "/readyz")
    assert status == 200 and json.loads(body)["ready"] is True


def test_two_idempotency_keys_are_refused_under_gunicorn_and_bet_nothing(
    server: servers.Server,
) -> None:
    """gunicorn joins a header sent twice with a bare comma, into what would read as one key
    (``key-a,key-b``): the bet is refused naming the header, and moves nothing."""
    credentials = {"username": "twokeys", "password": PASSWORD}
    assert post_json(server, "/api/v1/auth/register", credentials)[0] == 201
    token = json.loads(post_json(server, "/api/v1/auth/token", credentials)[2])["token"]
    body = json.dumps({"bet": 100}).encode()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.putrequest("POST", "/api/v1/casino-war/rounds")
        for name, value in (
            ("Authorization", f"Bearer {token}"),
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
            ("Idempotency-Key", "key-a"),
            ("Idempotency-Key", "key-b"),
        ):
            connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        status, answer = response.status, json.loads(response.read())
    finally:
        connection.close()
    assert (status, answer["error"]["code"]) == (422, "invalid_input")
    assert "Idempotency-Key is given more than once" in answer["error"]["message"]
    auth = {"Authorization": f"Bearer {token}"}
    assert json.loads(send(server, "GET", "/api/v1/rounds", **auth)[2])["rounds"] == []


def hammer(port: int, stop: threading.Event) -> None:
    """Keep the workers busy: an idle sync worker notices its master is gone, a busy one not."""
    while not stop.is_set():
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/healthz")
            connection.getresponse().read()
            connection.close()
        except (OSError, http.client.HTTPException):
            # A worker killed mid-answer leaves a cut or empty status line: that is the point.
            time.sleep(0.01)


def test_workers_die_with_a_master_killed_under_load_and_a_new_master_takes_the_port(
    environment: dict[str, str], tmp_path: Path
) -> None:
    first = servers.start(environment, tmp_path / "first.log", workers=2)
    workers = first.workers
    assert len(workers) == 2
    stop = threading.Event()
    load = [threading.Thread(target=hammer, args=(first.port, stop)) for _ in range(4)]
    for thread in load:
        thread.start()
    try:
        time.sleep(1)
        os.kill(first.process.pid, signal.SIGKILL)
        first.process.wait()
        deadline = time.monotonic() + 20
        while any(servers.alive(pid) for pid in workers) or servers.port_open(first.port):
            assert time.monotonic() < deadline, "orphaned workers still hold the port"
            time.sleep(0.1)
    finally:
        stop.set()
        for thread in load:
            thread.join()
    second = servers.start(environment, tmp_path / "second.log", port=first.port)
    try:
        assert send(second, "GET", "/readyz")[0] == 200
    finally:
        second.stop()


def test_no_control_socket_is_shared_between_masters(
    server: servers.Server, environment: dict[str, str]
) -> None:
    assert send(server, "GET", "/healthz")[0] == 200
    assert not (Path(environment["HOME"]) / ".gunicorn").exists()


#: gunicorn's timeout in the lock tests: short, so a worker killed mid-wait shows in seconds
#: (not too short: a worker that takes longer to import the app is killed while it boots).
WORKER_TIMEOUT = 8
#: The waits they set (ms): at most half of it, as gunicorn.conf.py checks.
LOCK_WAIT_MS = 1000
STATEMENT_MS = 2000


def post_json(
    server: servers.Server, path: str, body: Any, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    return send(
        server,
        "POST",
        path,
        json.dumps(body).encode(),
        **{"Content-Type": "application/json", **headers},
    )


@pytest.mark.parametrize(
    ("db_url", "holder"),
    [("sqlite", "gate"), ("sqlite", "shell"), ("postgres", "row")],
    indirect=["db_url"],
)
def test_a_bet_behind_a_held_lock_is_a_json_503_before_the_worker_timeout(
    db_url: str, holder: str, tmp_path: Path
) -> None:
    """Under gunicorn, a bet behind a lock held longer than the worker may live is the API's
    503 with Retry-After once the lock wait is over: not gunicorn's HTML 500 of a worker it
    killed. It stores nothing, and the retry with its key bets once."""
    environment = servers.app_environment(
        db_url,
        tmp_path / "instance",
        DB_LOCK_TIMEOUT_MS=str(LOCK_WAIT_MS),
        DB_STATEMENT_TIMEOUT_MS=str(STATEMENT_MS),
        GUNICORN_CMD_ARGS=f"--timeout {WORKER_TIMEOUT}",
        HOME=str(tmp_path),
    )
    server = servers.start(environment, tmp_path / "gunicorn.log")
    try:
        credentials = {"username": "held", "password": PASSWORD}
        assert post_json(server, "/api/v1/auth/register", credentials)[0] == 201
        status, _, body = post_json(server, "/api/v1/auth/token", credentials)
        assert status == 200, body
        auth = {"Authorization": f"Bearer {json.loads(body)['token']}"}
        status, _, body = send(server, "GET", "/api/v1/me", **auth)
        user_id = json.loads(body)["user"]["id"]
        before = books(db_url)
        bet = {**auth, "Idempotency-Key": "held-1"}
        release = hold_lock(holder, db_url, user_id, at_most=WORKER_TIMEOUT * 2.5)
        try:
            started = time.monotonic()
            status, headers, body = post_json(
                server, "/api/v1/casino-war/rounds", {"bet": 100}, **bet
            )
            waited = time.monotonic() - started
        finally:
            release()
        assert status == 503, (status, body[:200])
        assert headers["Content-Type"] == "application/json"
        assert error_code(body) == "unavailable" and int(headers["Retry-After"]) > 0
        assert LOCK_WAIT_MS / 1000 * 0.8 <= waited < LOCK_WAIT_MS / 1000 + 3, waited
        assert books(db_url) == before
        status, _, body = post_json(server, "/api/v1/casino-war/rounds", {"bet": 100}, **bet)
        assert status == 201, body
        assert books(db_url)["rounds"] == before["rounds"] + 1
    finally:
        server.stop()


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_a_bet_on_a_frozen_postgres_server_is_a_json_503_before_the_worker_timeout(
    db_url: str, tmp_path: Path
) -> None:
    """Under gunicorn, a bet sent to a PostgreSQL server frozen while its machine runs on (its
    kernel answers for it, it never does) is the API's 503 with Retry-After once its statement
    is overdue: the forked worker's own watchdog cut it off, before gunicorn would have killed
    the worker. Nothing moved, and once the server thaws the retry with its key bets once."""
    url = make_url(db_url)
    relay = Relay((url.host or "127.0.0.1", url.port or 5432))
    environment = servers.app_environment(
        url.set(port=relay.port).render_as_string(False),
        tmp_path / "instance",
        DB_LOCK_TIMEOUT_MS=str(LOCK_WAIT_MS),
        DB_STATEMENT_TIMEOUT_MS=str(STATEMENT_MS),
        GUNICORN_CMD_ARGS=f"--timeout {WORKER_TIMEOUT}",
        HOME=str(tmp_path),
    )
    # One worker: the bet finds the connection the sign-up left in its pool (a worker that had
    # to connect to the frozen server would give up after the connect timeout instead).
    server = servers.start(environment, tmp_path / "gunicorn.log", workers=1)
    try:
        credentials = {"username": "frozen", "password": PASSWORD}
        assert post_json(server, "/api/v1/auth/register", credentials)[0] == 201
        status, _, body = post_json(server, "/api/v1/auth/token", credentials)
        assert status == 200, body
        bet = {"Authorization": f"Bearer {json.loads(body)['token']}", "Idempotency-Key": "f-1"}
        before = books(db_url)
        relay.freeze()
        started = time.monotonic()
        status, headers, body = post_json(server, "/api/v1/casino-war/rounds", {"bet": 100}, **bet)
        waited = time.monotonic() - started
        assert status == 503, (status, body[:200])
        assert headers["Content-Type"] == "application/json"
        assert error_code(body) == "unavailable" and int(headers["Retry-After"]) > 0
        overdue = STATEMENT_MS / 1000 + ANSWER_GRACE
        assert overdue <= waited < overdue + 1.5, waited
        assert books(db_url) == before
        relay.thaw()
        status, _, body = post_json(server, "/api/v1/casino-war/rounds", {"bet": 100}, **bet)
        assert status == 201, body
        assert books(db_url)["rounds"] == before["rounds"] + 1
    finally:
        server.stop()
        relay.cut()


def test_gunicorn_refuses_to_start_with_a_database_wait_as_long_as_a_worker_may_live(
    environment: dict[str, str], tmp_path: Path
) -> None:
    log = tmp_path / "refused.log"
    with pytest.raises(RuntimeError, match="gunicorn exited"):
        servers.start(environment | {"DB_STATEMENT_TIMEOUT_MS": "20000"}, log)
    assert "DB_STATEMENT_TIMEOUT_MS=20000 is more than half of the worker timeout (30 s)" in (
        log.read_text()
    )
