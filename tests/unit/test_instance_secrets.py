"""Secrets made on first start: created once, mode 0600, the same for racing workers."""

from __future__ import annotations

import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sota_casino.instance import read_or_create


def test_racing_workers_all_read_the_one_secret_that_won(tmp_path: Path) -> None:
    path = tmp_path / "instance" / "secret_key"
    counter = iter(range(1000))

    def make() -> bytes:
        return f"secret-{next(counter)}".encode()

    with ThreadPoolExecutor(16) as pool:
        seen = set(pool.map(lambda _: read_or_create(path, make), range(64)))
    assert len(seen) == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["secret_key"]


def test_an_existing_secret_is_read_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "signing_key.pem"
    path.write_bytes(b"kept")
    assert read_or_create(path, lambda: b"new") == b"kept"
