"""Secrets made on first start in ``instance/``, safely when several workers start at once."""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def instance_database(instance_path: str) -> Path:
    """The SQLite file of the instance folder, the database when ``DATABASE_URL`` is unset."""
    return Path(instance_path) / "sota_casino.db"


def read_or_create(path: Path, make: Callable[[], bytes]) -> bytes:
    """Return the bytes of ``path``, creating it (mode 0600) with ``make()`` if it is missing.

    The new file is written aside and linked into place, which fails if another process got
    there first: every process ends up reading the one complete file that won.
    """
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, draft = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(make())
            os.chmod(draft, 0o600)
            try:
                os.link(draft, path)
            except FileExistsError:
                pass  # another worker created it first; use theirs
        finally:
            os.unlink(draft)
    return path.read_bytes()


def replace_file(path: Path, data: bytes, *, suffix: str) -> Path:
    """Write ``data`` to ``path`` (mode 0600) atomically; keep the old file as ``path`` +
    ``suffix`` + its time of replacement. Return where the old file went."""
    return swap_in(path, write_beside(path, data), suffix=suffix)


def write_beside(path: Path, data: bytes) -> Path:
    """Write ``data`` to a new hidden file (mode 0600) in ``path``'s folder, for
    :func:`swap_in`; return it. Nothing is written at ``path`` itself."""
    fd, draft = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(draft, 0o600)
    except BaseException:
        os.unlink(draft)
        raise
    return Path(draft)


def swap_in(path: Path, draft: Path, *, suffix: str) -> Path:
    """Put ``draft`` (from :func:`write_beside`) at ``path`` atomically; keep the old file as
    ``path`` + ``suffix`` + its time of replacement (numbered if one was kept that second).
    Return where the old file went."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for number in itertools.count():
        kept = path.with_name(f"{path.name}{suffix}-{stamp}" + (f".{number}" if number else ""))
        try:
            os.link(path, kept)
            break
        except FileExistsError:
            continue
    os.replace(draft, path)
    return kept
