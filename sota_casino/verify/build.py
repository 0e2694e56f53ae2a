"""Build ``verify.pyz``: the verifier and the pure core in one file (a PEP 441 zipapp) that runs
with nothing but Python 3.11+ and ``cryptography``.

The build is reproducible: the same sources give the same bytes, whoever builds them and
whenever (files in sorted order, every timestamp 1980-01-01, fixed permissions, no compiled
files), so anyone can rebuild it from the source and compare its SHA-256 with the one the
fairness page shows.

``python -m sota_casino.verify.build [OUT]`` (or ``make verifier``) writes it, ``verify.pyz`` by
default, and prints its SHA-256.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import io
import sys
import zipapp
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

PACKAGE_ROOT: Final = Path(__file__).resolve().parents[1]  # the sota_casino directory
#: What goes in: the package marker, the pure core and the verifier, but not this builder.
INCLUDED: Final = ("__init__.py", "core/*.py", "verify/*.py")
EXCLUDED: Final = frozenset(("verify/build.py",))
INTERPRETER: Final = "/usr/bin/env python3"
ENTRY_POINT: Final = (
    '"""The standalone Sota Casino verifier: python verify.pyz --help."""\n\n'
    "import sys\n\n"
    "from sota_casino.verify.cli import main\n\n"
    "sys.exit(main())\n"
)
_EPOCH: Final = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip file can hold
_FILE_MODE: Final = 0o100644  # a regular file, rw-r--r--


@dataclass(frozen=True, slots=True)
class Archive:
    """The built zipapp and its SHA-256 (hex)."""

    data: bytes
    sha256: str


def sources(root: Path = PACKAGE_ROOT) -> list[tuple[str, bytes]]:
    """Return the archive's files as ``(name in the archive, bytes)``, sorted by name."""
    found = {
        f"sota_casino/{path.relative_to(root).as_posix()}": path.read_bytes()
        for pattern in INCLUDED
        for path in root.glob(pattern)
        if path.relative_to(root).as_posix() not in EXCLUDED
    }
    found["__main__.py"] = ENTRY_POINT.encode()
    return sorted(found.items())


def build(root: Path = PACKAGE_ROOT) -> bytes:
    """Return the bytes of ``verify.pyz`` built from the sources under ``root``."""
    plain = io.BytesIO()
    with zipfile.ZipFile(plain, "w") as archive:
        for name, data in sources(root):
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, whatever builds it: the permissions below mean that
            info.external_attr = _FILE_MODE << 16
            archive.writestr(info, data, compresslevel=9)
    # zipapp copies an existing archive behind the interpreter line (PEP 441's format).
    target = io.BytesIO()
    zipapp.create_archive(io.BytesIO(plain.getvalue()), target, interpreter=INTERPRETER)
    return target.getvalue()


@functools.lru_cache(maxsize=1)
def verifier_archive() -> Archive:
    """Return the zipapp of the installed sources, built on first use and then kept."""
    data = build()
    return Archive(data, hashlib.sha256(data).hexdigest())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sota_casino.verify.build",
        description="Build the standalone verifier verify.pyz reproducibly; print its SHA-256.",
    )
    parser.add_argument("out", nargs="?", default="verify.pyz", help="where to write it")
    args = parser.parse_args(argv)
    data = build()
    Path(args.out).write_bytes(data)
    print(f"{hashlib.sha256(data).hexdigest()}  {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
