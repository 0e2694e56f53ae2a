"""Fault runs against gunicorn under load: ``python -m ops.faults MODE [--seconds N]``.

Modes:

- ``kill-worker``: kill -9 one worker in the middle of the load;
- ``kill-master``: kill -9 the master; its workers must die too, then a new master starts on
  the same port and the load goes on;
- ``pg-restart``: restart PostgreSQL under load (``--how restart`` runs ``pg_ctlcluster``;
  ``--how terminate`` ends the app's connections only, as CI does);
- ``full``: the SQLite database's file system fills up, then gets room again (a tmpfs of
  its own, so it needs root);
- ``read-only``: the SQLite database's file system turns read-only under load, as ext4 does
  after a disk error (``errors=remount-ro``); then it is checked, mounted again and a new
  service starts on it. The file system is ext4 on a loop device of its own (root).
  ``mount -o remount,ro`` cannot do it: Linux refuses while a file is open for writing
  (EBUSY), and ``blockdev --setro`` on the loop device only warns; ext4's ``abort`` option
  aborts the journal, which makes the file system read-only at once, open files and all.

Players bet through the API with an ``Idempotency-Key`` each. Afterwards: every acknowledged
(201) round is in the database, every open round is decided through the API, ``ledger check``
and ``audit verify`` pass, no answer was a 500, and every 503 was ``unavailable`` with a
``Retry-After``. Prints the figures as JSON.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import secrets
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from . import servers

PASSWORD = "fault run passphrase"
PLAYERS = 6
BET = 100


@dataclass
class Load:
    """Players betting in threads; what each request got back."""

    port: int
    tokens: list[str]
    statuses: Counter[str] = field(default_factory=Counter)
    #: (round id, seed pair, nonce) of every 201: an id alone could be a later round that took
    #: the number of one that was lost
    acknowledged: set[tuple[int, int, int]] = field(default_factory=set)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> None:
        self.threads = [threading.Thread(target=self._bet, args=(t,)) for t in self.tokens]
        for thread in self.threads:
            thread.start()

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()

    def _bet(self, token: str) -> None:
        while not self.stop.is_set():
            headers = {
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Idempotency-Key": secrets.token_hex(16),
            }
            answer: dict[str, str] = {}
            try:
                status, body = request(
                    self.port, "POST", "/api/v1/casino-war/rounds", {"bet": BET}, headers, answer
                )
            except OSError:
                self._count("connection error")
                time.sleep(0.05)
                continue
            self._count(
                str(status) if status != 503 or clean_outage(body, answer) else "503 unclean"
            )
            if status == 201:
                with self.lock:
                    self.acknowledged.add(
                        (int(body["id"]), int(body["seed_pair_id"]), int(body["nonce"]))
                    )
            elif status == 503:
                time.sleep(0.05)

    def _count(self, outcome: str) -> None:
        with self.lock:
            self.statuses[outcome] += 1


def clean_outage(body: Any, headers: dict[str, str]) -> bool:
    """A 503 as the API documents it: ``unavailable``, with a ``Retry-After``."""
    code = body.get("error", {}).get("code") if isinstance(body, dict) else None
    return code == "unavailable" and headers.get("retry-after", "").isdigit()


def request(
    port: int,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    answer: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """Send one request; its answer's headers go into ``answer`` (lower-case names).

    :raises ConnectionError: also for an answer cut off mid-way (a worker killed while it wrote
        it: ``IncompleteRead``), which is a lost connection like any other.
    """
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(
            method, path, body=None if body is None else json.dumps(body), headers=headers or {}
        )
        response = connection.getresponse()
        try:
            raw = response.read()
        except http.client.IncompleteRead as cut:
            raise ConnectionError(f"the answer was cut off: {cut!r}") from cut
        if answer is not None:
            answer.update((name.lower(), value) for name, value in response.getheaders())
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, raw.decode(errors="replace")
    finally:
        connection.close()


def sign_up_players(port: int, count: int) -> list[str]:
    tokens = []
    for n in range(count):
        name = f"fault{n}_{secrets.token_hex(3)}"
        credentials = {"username": name, "password": PASSWORD}
        json_headers = {"Content-Type": "application/json"}
        status, _ = request(port, "POST", "/api/v1/auth/register", credentials, json_headers)
        assert status == 201, status
        status, body = request(port, "POST", "/api/v1/auth/token", credentials, json_headers)
        assert status == 200, status
        tokens.append(body["token"])
    return tokens


def decide_open_rounds(port: int, tokens: list[str]) -> int:
    """Decide every open round of the players through the API; return how many there were."""
    decided = 0
    for token in tokens:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        status, page = request(port, "GET", "/api/v1/rounds?limit=100", headers=headers)
        assert status == 200, (status, page)
        for round_ in page["rounds"]:
            if round_["status"] == "awaiting_decision":
                path = f"/api/v1/casino-war/rounds/{round_['id']}/decision"
                status, body = request(port, "POST", path, {"choice": "surrender"}, headers)
                assert status == 200, (status, body)
                decided += 1
    return decided


def check_books(
    database_url: str, instance: Path, acknowledged: set[tuple[int, int, int]]
) -> dict[str, Any]:
    """Every acknowledged round present as it was acknowledged, no half round: the ledger and
    the audit chain."""
    from sota_casino.factory import create_app
    from sota_casino.models import Round
    from sota_casino.services import audit
    from sota_casino.services import ledger

    env = servers.app_environment(database_url, instance)
    app = create_app(
        {
            "DATABASE_URL": database_url,
            "SECRET_KEY": env["SECRET_KEY"],
            "SIGNING_KEY_FILE": env["SIGNING_KEY_FILE"],
            "AUDIT_INTEGRATE_MS": 0,  # a check: verify integrates what is pending first
        }
    )
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        with session.begin():
            stored = {
                (row.id, row.seed_pair_id, row.nonce)
                for row in session.execute(select(Round.id, Round.seed_pair_id, Round.nonce))
            }
        ledger_report = ledger.check(session)
        audit_report = audit.verify(session)
        session.close()
    app.extensions["sota_casino.engine"].dispose()
    return {
        "rounds_stored": len(stored),
        "acknowledged_lost": len(acknowledged - stored),
        "ledger_check": "ok" if ledger_report.ok else ledger_report.problems,
        "audit_verify": "ok" if audit_report.ok else audit_report.reason,
    }


@dataclass
class Run:
    """One fault run: a database, a server, the load, and the fault in the middle."""

    mode: str
    database_url: str
    work: Path
    seconds: float
    workers: int = 4
    events: dict[str, Any] = field(default_factory=dict)

    def execute(self, fault: Callable[[Run, servers.Server, Load], servers.Server]) -> dict:
        from sota_casino import migrate

        migrate.upgrade(self.database_url)
        env = self.environment()
        server = servers.start(env, self.work / "gunicorn.log", workers=self.workers)
        try:
            load = Load(server.port, sign_up_players(server.port, PLAYERS))
            load.start()
            time.sleep(self.seconds / 3)
            server = fault(self, server, load)
            time.sleep(self.seconds / 3)
            load.finish()
            resumed = decide_open_rounds(server.port, load.tokens)
        finally:
            server.stop()
        figures = {
            "mode": self.mode,
            "database": self.database_url.split(":", 1)[0],
            "seconds": self.seconds,
            "requests": sum(load.statuses.values()),
            "statuses": dict(load.statuses),
            "acknowledged": len(load.acknowledged),
            "server_errors": sum(
                n for s, n in load.statuses.items() if s.startswith("5") and s != "503"
            ),
            "open_rounds_resumed": resumed,
            **self.events,
            **check_books(self.database_url, self.work / "instance", load.acknowledged),
        }
        figures["passed"] = (
            figures["server_errors"] == 0
            and figures["acknowledged_lost"] == 0
            and figures["ledger_check"] == "ok"
            and figures["audit_verify"] == "ok"
            and figures.get("recovered", True)
            and figures.get("read_errors", 0) == 0
        )
        return figures

    def environment(self) -> dict[str, str]:
        env = servers.app_environment(self.database_url, self.work / "instance")
        return env | {"SIGNUPS_PER_ADDRESS": "1000", "CHECKPOINT_EVERY": "50"}


def recovered_within(server: servers.Server, load: Load, limit: float) -> float | None:
    """Seconds until a bet is acknowledged again after a fault, or None past ``limit``."""
    started, before = time.monotonic(), len(load.acknowledged)
    while time.monotonic() - started < limit:
        if len(load.acknowledged) > before:
            return round(time.monotonic() - started, 2)
        time.sleep(0.05)
    return None


def kill_worker(run: Run, server: servers.Server, load: Load) -> servers.Server:
    victim = server.workers[0]
    os.kill(victim, signal.SIGKILL)
    waited = recovered_within(server, load, 30)
    run.events.update(killed_worker=victim, recovered=waited is not None, recovery_s=waited)
    return server


def kill_master(run: Run, server: servers.Server, load: Load) -> servers.Server:
    workers = server.workers
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()
    started = time.monotonic()
    while any(servers.alive(pid) for pid in workers) or servers.port_open(server.port):
        if time.monotonic() - started > 30:
            run.events.update(orphans_gone_s=None, recovered=False)
            return server
        time.sleep(0.05)
    gone = round(time.monotonic() - started, 2)
    restarted = servers.start(
        run.environment(), run.work / "gunicorn.log", workers=run.workers, port=server.port
    )
    waited = recovered_within(restarted, load, 30)
    run.events.update(
        orphans_gone_s=gone,
        restarted=True,
        recovered=waited is not None,
        recovery_s=waited,
    )
    return restarted


def end_connections(database_url: str) -> int:
    """End every connection to the database of ``database_url`` (from the server's side, as a
    restart would); return how many were ended."""
    from sqlalchemy import create_engine
    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    url = make_url(database_url)
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            ended = connection.execute(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": url.database},
            ).scalar_one()
    finally:
        admin.dispose()
    return int(ended)


def pg_restart(how: str) -> Callable[[Run, servers.Server, Load], servers.Server]:
    def fault(run: Run, server: servers.Server, load: Load) -> servers.Server:
        started = time.monotonic()
        if how == "restart":
            subprocess.run(["pg_ctlcluster", "15", "main", "restart"], check=True)
        else:
            end_connections(run.database_url)
        down = round(time.monotonic() - started, 2)
        waited = recovered_within(server, load, 60)
        run.events.update(pg=how, pg_down_s=down, recovered=waited is not None, recovery_s=waited)
        return server

    return fault


def disk_fault(
    breaking: Callable[[], object], mending: Callable[[], object]
) -> Callable[[Run, servers.Server, Load], servers.Server]:
    """Break the file system holding the database for a third of the run, then mend it."""

    def fault(run: Run, server: servers.Server, load: Load) -> servers.Server:
        breaking()
        before = Counter(load.statuses)
        time.sleep(run.seconds / 3)
        during = load.statuses - before
        mending()
        waited = recovered_within(server, load, 30)
        run.events.update(
            fault_statuses=dict(during), recovered=waited is not None, recovery_s=waited
        )
        return server

    return fault


def disk_full(mount: Path) -> Callable[[Run, servers.Server, Load], servers.Server]:
    """Fill the file system holding the database, then make room again."""
    filler = mount / "filler"
    fill = ["dd", "if=/dev/zero", f"of={filler}", "bs=64k"]
    return disk_fault(
        lambda: subprocess.run(fill, stderr=subprocess.DEVNULL, check=False), filler.unlink
    )


def disk_read_only(
    mount: Path, device: str
) -> Callable[[Run, servers.Server, Load], servers.Server]:
    """Turn the database's file system read-only under load, read through it while it is, then
    check it, mount it again and start a new service on it (an aborted ext4 stays read-only
    until it is unmounted)."""

    def fault(run: Run, server: servers.Server, load: Load) -> servers.Server:
        subprocess.run(["mount", "-o", "remount,abort", str(mount)], check=True)
        before = Counter(load.statuses)
        reads = Reads(server.port, load.tokens[0])
        reads.start()
        time.sleep(run.seconds / 3)
        reads.finish()
        during = load.statuses - before
        stopping = time.monotonic()
        server.stop()
        stopped = round(time.monotonic() - stopping, 2)
        subprocess.run(["umount", str(mount)], check=True)
        # e2fsck: 0 nothing to fix, 1 fixed (the journal replayed), anything else a failure
        checked = subprocess.run(["e2fsck", "-fy", device], capture_output=True, check=False)
        mount_ext4(device, mount)
        restarted = servers.start(
            run.environment(), run.work / "gunicorn.log", workers=run.workers, port=server.port
        )
        waited = recovered_within(restarted, load, 30)
        run.events.update(
            fault_statuses=dict(during),
            reads_during=dict(reads.statuses),
            # a 5xx other than a clean 503 (a 500, or a 503 without ``unavailable``)
            read_errors=sum(
                n
                for outcome, n in reads.statuses.items()
                if " 5" in outcome and not outcome.endswith(" 503")
            ),
            stop_s=stopped,
            fsck_exit=checked.returncode,
            recovered=waited is not None and checked.returncode in (0, 1),
            recovery_s=waited,
        )
        return restarted

    return fault


@dataclass
class Reads:
    """One player reading while the disk is broken: the history, the account, readiness, and
    the receipt of the player's latest settled round (the latest may be a tie left waiting
    for its decision when the disk broke, which has no receipt)."""

    port: int
    token: str
    statuses: Counter[str] = field(default_factory=Counter)
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._read)
        self.thread.start()

    def finish(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()

    def _read(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        while not self.stop.is_set():
            paths = ["/api/v1/rounds?limit=5", "/api/v1/me", "/readyz"]
            for path in paths:
                answer: dict[str, str] = {}
                try:
                    status, body = request(self.port, "GET", path, None, headers, answer)
                except OSError:
                    self.statuses[f"{path.split('?')[0]} connection error"] += 1
                    continue
                unclean = status == 503 and not clean_outage(body, answer)
                name = re.sub(r"/\d+/", "/{id}/", path.split("?")[0])
                self.statuses[f"{name} {'503 unclean' if unclean else status}"] += 1
                if status == 200 and path.startswith("/api/v1/rounds?"):
                    settled = [r["id"] for r in body["rounds"] if r["status"] == "settled"]
                    if settled:
                        paths.append(f"/api/v1/rounds/{settled[0]}/receipt")
            time.sleep(0.05)


def sqlite_on_loop(work: Path, megabytes: int) -> tuple[Path, str]:
    """An ext4 file system of its own on a loop device, mounted; its mount point and device."""
    image, mount = work / "disk.img", work / "fs"
    mount.mkdir()
    subprocess.run(["truncate", "-s", f"{megabytes}M", str(image)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True)
    device = subprocess.run(
        ["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True
    ).stdout.strip()
    try:
        # A loop device keeps a read-only flag someone once set on it, across detaching.
        subprocess.run(["blockdev", "--setrw", device], check=True)
        mount_ext4(device, mount)
    except BaseException:
        subprocess.run(["losetup", "-d", device], check=False)
        raise
    return mount, device


def mount_ext4(device: str, mount: Path) -> None:
    subprocess.run(["mount", "-o", "errors=remount-ro", device, str(mount)], check=True)


def loop_devices_work() -> bool:
    """Whether this machine lets us make a loop device and mount it (root, a loop driver)."""
    from shutil import which

    tools = ("losetup", "mkfs.ext4", "e2fsck", "blockdev", "mount")
    return os.geteuid() == 0 and Path("/dev/loop-control").exists() and all(map(which, tools))


DISK_FAULTS: dict[str, Callable[[Path], Callable[[Run, servers.Server, Load], servers.Server]]] = {
    "full": disk_full,
}


def sqlite_on_tmpfs(work: Path, size: str) -> Path:
    mount = work / "fs"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], check=True)
    return mount


def run_mode(mode: str, seconds: float, database_url: str | None, how: str = "restart") -> dict:
    """Run one fault run in a scratch directory and return its figures."""
    if mode == "pg-restart" and database_url is None:
        from sota_casino import migrate
        from sota_casino.config import test_postgres_url

        with migrate.scratch_postgres(test_postgres_url(), "sota_faults") as url:
            return run_mode(mode, seconds, url, how)
    with tempfile.TemporaryDirectory(prefix="sota-faults-") as scratch:
        work = Path(scratch)
        mount = device = None
        try:
            if mode == "read-only":
                mount, device = sqlite_on_loop(work, 64)
                url = f"sqlite:///{mount / 'casino.db'}"
            elif mode in DISK_FAULTS:
                mount = sqlite_on_tmpfs(work, "8m")
                url = f"sqlite:///{mount / 'casino.db'}"
            else:
                url = database_url or f"sqlite:///{work / 'casino.db'}"
            if mode == "pg-restart" and not url.startswith("postgresql"):
                raise SystemExit("pg-restart needs --database postgresql+psycopg://...")
            faults: dict[str, Callable[[Run, servers.Server, Load], servers.Server]] = {
                "kill-worker": kill_worker,
                "kill-master": kill_master,
                "pg-restart": pg_restart(how),
            }
            if device is not None and mount is not None:
                faults[mode] = disk_read_only(mount, device)
            elif mount is not None:
                faults[mode] = DISK_FAULTS[mode](mount)
            return Run(mode, url, work, seconds).execute(faults[mode])
        finally:
            if mount is not None and os.path.ismount(mount):
                subprocess.run(["umount", "-l", str(mount)], check=False)
            if device is not None:
                subprocess.run(["losetup", "-d", device], check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    modes = ("kill-worker", "kill-master", "pg-restart", *DISK_FAULTS, "read-only")
    parser.add_argument("mode", choices=modes)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--database", help="a database URL (default: a scratch SQLite file)")
    parser.add_argument("--how", choices=("restart", "terminate"), default="restart")
    args = parser.parse_args()
    figures = run_mode(args.mode, args.seconds, args.database, args.how)
    print(json.dumps(figures, indent=2))
    return 0 if figures["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
