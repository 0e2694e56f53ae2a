"""The consistency proof between any two checkpoints the service has shown is had at once,
while players' use cases sign checkpoints inside their own transactions: under gunicorn with
two workers, on SQLite and on PostgreSQL (where the integrator signs them)."""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path
from typing import Any

from ops import servers
from sota_casino.core import merkle
from sota_casino.factory import create_app

PASSWORD = "correct horse battery"
WRITERS = 3
ROTATIONS = 15
READERS = 3


def call(port: int, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    """Send a request; return its status and its JSON answer."""
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def rotate_often(port: int, name: str, failures: list[str]) -> None:
    """A player rotating its seed pair again and again: three entries each, so checkpoints
    fall due inside its transactions."""
    credentials = {"username": name, "password": PASSWORD}
    status, _ = call(port, "POST", "/api/v1/auth/register", credentials)
    if status != 201:
        failures.append(f"{name}: register answered {status}")
        return
    token = call(port, "POST", "/api/v1/auth/token", credentials)[1]["token"]
    for i in range(ROTATIONS):
        status, answer = call(
            port, "POST", "/api/v1/fairness/rotate", {"client_seed": f"{i}"}, token
        )
        if status != 200:
            failures.append(f"{name}: rotation {i} answered {status} {answer}")


def witness(port: int, done: threading.Event, failures: list[str], sizes: set[int]) -> None:
    """Read the latest checkpoint over and over, as a browser's witness does, and ask for the
    proof from the one read before; once more after the players are done."""
    kept: dict[str, Any] | None = None
    last_round = False
    while not last_round:
        last_round = done.is_set()
        status, shown = call(port, "GET", "/api/v1/transparency/checkpoint")
        if status == 404:
            continue  # nothing signed yet
        assert status == 200, shown
        sizes.add(shown["size"])
        if kept is not None and kept["size"] != shown["size"]:
            older, newer = sorted((kept, shown), key=lambda c: c["size"])
            query = f"old_size={older['size']}&new_size={newer['size']}"
            status, answer = call(port, "GET", f"/api/v1/transparency/consistency?{query}")
            if status != 200:
                failures.append(f"{query}: {status} {answer}")
            elif not merkle.verify_consistency(
                older["size"],
                newer["size"],
                bytes.fromhex(older["root"]),
                bytes.fromhex(newer["root"]),
                [bytes.fromhex(node) for node in answer["proof"]],
            ):
                failures.append(f"{query}: the proof does not join the two")
        if kept is None or shown["size"] > kept["size"]:
            kept = shown


def test_the_service_proves_every_checkpoint_it_showed_while_others_are_signed(
    db_url: str, tmp_path: Path
) -> None:
    settings = {
        "CHECKPOINT_EVERY": "2",
        "CHECKPOINT_MIN_SECONDS": "0",
        "SIGNUPS_PER_ADDRESS": "1000",
        "ROTATIONS_PER_HOUR": "1000",
    }
    env = servers.app_environment(db_url, tmp_path / "instance", **settings)
    # Made here first, so both workers load the same signing key instead of racing to create it.
    app = create_app({"DATABASE_URL": db_url, "SIGNING_KEY_FILE": env["SIGNING_KEY_FILE"]})
    app.extensions["sota_casino.engine"].dispose()
    server = servers.start(env, tmp_path / "gunicorn.log")
    failures: list[str] = []
    sizes: set[int] = set()
    done = threading.Event()
    try:
        writers = [
            threading.Thread(target=rotate_often, args=(server.port, f"signer{i}", failures))
            for i in range(WRITERS)
        ]
        readers = [
            threading.Thread(target=witness, args=(server.port, done, failures, sizes))
            for _ in range(READERS)
        ]
        for thread in writers + readers:
            thread.start()
        for thread in writers:
            thread.join()
        done.set()
        for thread in readers:
            thread.join()
        # And every size a reader was shown is proved a prefix of the latest, once all is done.
        latest = call(server.port, "GET", "/api/v1/transparency/checkpoint")[1]
        for size in sorted(sizes - {latest["size"]}):
            query = f"old_size={size}&new_size={latest['size']}"
            status, answer = call(server.port, "GET", f"/api/v1/transparency/consistency?{query}")
            if status != 200:
                failures.append(f"{query} at the end: {status} {answer}")
    finally:
        server.stop()
    assert failures == []
    assert len(sizes) > 1, sorted(sizes)  # the log grew under the readers
