"""The app under gunicorn with the production settings: the app's own limits answer first and
in JSON on API paths, chunked bodies over the limit are 413, and the workers die with the
master, so a new master can take the port at once."""

from __future__ import annotations

import http.client
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ops import servers
from sota_casino import migrate

PASSWORD = "correct horse battery"


@pytest.fixture
def environment(tmp_path: Path) -> dict[str, str]:
    url = f"sqlite:///{tmp_path / 'casino.db'}"
    migrate.upgrade(url)
    # A home of its own: a control socket would appear under it (gunicorn's default path).
    env = servers.app_environment(url, tmp_path / "instance") | {"HOME": str(tmp_path)}
    env.pop("XDG_RUNTIME_DIR", None)
    return env


@pytest.fixture
def server(environment: dict[str, str], tmp_path: Path) -> Iterator[servers.Server]:
    running = servers.start(environment, tmp_path / "gunicorn.log")
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
