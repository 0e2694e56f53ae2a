"""Start and stop the app under gunicorn with the production settings (gunicorn.conf.py)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_open(port: int) -> bool:
    """Tell whether something accepts connections on 127.0.0.1:``port``."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (Linux /proc)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def workers(self) -> list[int]:
        return children(self.process.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def app_environment(database_url: str, instance: Path, **extra: str) -> dict[str, str]:
    """The environment of an app instance on ``database_url`` with its keys in ``instance``."""
    instance.mkdir(parents=True, exist_ok=True)
    key_file = instance / "secret_key"
    if not key_file.exists():
        key_file.write_text(os.urandom(16).hex())
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "SECRET_KEY": key_file.read_text(),
        "SIGNING_KEY_FILE": str(instance / "signing_key.pem"),
        "LOG_LEVEL": "warning",
        **extra,
    }


def start(
    env: dict[str, str],
    log: Path,
    *,
    workers: int = 2,
    port: int | None = None,
    config: Path = ROOT / "gunicorn.conf.py",
) -> Server:
    """Start gunicorn (``workers`` workers, settings from ``config``) and wait until /healthz
    answers."""
    port = port or free_port()
    with log.open("ab") as out:  # the child keeps its own copy
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(config), "wsgi:app"],
            cwd=ROOT,
            env=env | {"PORT": str(port), "HOST": "127.0.0.1", "WEB_CONCURRENCY": str(workers)},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = Server(process, port, log)
    wait_until_healthy(server)
    return server


def wait_until_healthy(server: Server, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"gunicorn exited; see {server.log}:\n{server.log.read_text()}")
        try:
            with urllib.request.urlopen(f"{server.url}/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"gunicorn did not become healthy; see {server.log}")
