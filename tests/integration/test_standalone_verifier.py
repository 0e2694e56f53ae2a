"""The downloadable verifier stands alone: ``verify.pyz``, copied into an empty folder outside
the repository and run by a fresh virtual environment that holds only ``cryptography``, checks
the service's real bundles (exit 0 with the pinned key) and refuses forged ones."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import subprocess
import sys
import venv
import zipfile
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import signed
from sota_casino.services import audit
from sota_casino.services import fairness as fairness_service
from sota_casino.services import rounds
from sota_casino.verify.build import build

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with nothing but ``cryptography`` (and what it needs)."""
    home = tmp_path_factory.mktemp("bare-venv")
    venv.create(home, with_pip=True, system_site_packages=False)
    python = home / "bin" / "python"
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"cryptography=={version('cryptography')}",
        ],
        check=True,
    )
    return python


def _run(python: Path, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "verify.pyz", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={"PATH": "/usr/bin:/bin", "HOME": str(folder)},
        check=False,
    )


def test_the_zipapp_verifies_real_bundles_in_an_empty_folder_with_only_cryptography(
    session: Session,
    player: int,
    rig: Callable[[int, list[str]], bytes],
    bare_python: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder = tmp_path_factory.mktemp("empty")
    assert not folder.resolve().is_relative_to(REPOSITORY)
    assert list(folder.iterdir()) == []
    (folder / "verify.pyz").write_bytes(build())
    bare = subprocess.run(
        [str(bare_python), "-c", "import sota_casino"], cwd=folder, capture_output=True
    )
    assert bare.returncode != 0  # nothing of the project is installed there
    rig(player, ["win", "lose", "win"])
    for _ in range(3):
        rounds.place_casino_war_bet(session, player, 200)
    rounds.play_sota(session, player, 2, preset="nordic")
    pair = fairness_service.active_seed_pair(session, player).seed_pair_id
    fairness_service.rotate(session, player)
    audit.sign_if_due(session)  # as the bundle's endpoints do: the zipapp checks the anchors too
    bundle = fairness_service.bundle(session, player, pair)
    assert bundle["anchors"] and not bundle["pending_anchors"]
    key = fairness_service.public_key_info(session).public_key_hex
    (folder / "bundle.json").write_text(json.dumps(bundle), encoding="utf-8")
    (folder / "forged.json").write_text(json.dumps(_signed_by_another_key(bundle, payout=1000)))
    (folder / "resigned.json").write_text(json.dumps(_signed_by_another_key(bundle, payout=0)))

    good = _run(bare_python, folder, "bundle.json", "--public-key", key)
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.splitlines()[-1].startswith("Result: OK: 1 bundle(s), 4 rounds")

    forged = _run(bare_python, folder, "forged.json", "--public-key", key)
    assert forged.returncode == 1, forged.stdout + forged.stderr
    assert "KEY CHANGED" in forged.stdout and "Result: FAILED" in forged.stdout

    # Signed by another key and naming it, the documents hold together; only a pin tells.
    unpinned = _run(bare_python, folder, "resigned.json")
    assert unpinned.returncode == 3 and "UNPINNED" in unpinned.stdout.splitlines()[-1]

    first = _run(bare_python, folder, "bundle.json", "--service", "casino.test")
    assert first.returncode == 0 and "FIRST USE" in first.stdout
    known = (folder / ".config" / "sota-casino" / "known_keys").read_text()
    assert f"casino.test {key}" in known.splitlines()
    again = _run(bare_python, folder, "forged.json", "--service", "casino.test")
    assert again.returncode == 1 and "KEY CHANGED" in again.stdout

    # The witness is in the zipapp too; with nothing listening it concludes nothing (exit 2).
    witness = _run(
        bare_python, folder, "monitor", "http://127.0.0.1:9", "--state", "w", "--public-key", key
    )
    assert witness.returncode == 2 and witness.stdout.startswith("UNUSABLE: cannot reach")


def _signed_by_another_key(bundle: dict[str, Any], *, payout: int) -> dict[str, Any]:
    """Every document and checkpoint re-signed by a key that is not the service's, the bundle
    naming it, and the last payout raised by ``payout``."""
    forged = copy.deepcopy(bundle)
    key = new_signing_key()
    forged["public_key_hex"] = public_key_hex(key)
    forged["commitment"] = signed(key, bundle["commitment"]["document"])
    forged["reveal"] = signed(key, bundle["reveal"]["document"])
    last = bundle["rounds"][-1]["document"]
    forged["rounds"] = [signed(key, r["document"]) for r in bundle["rounds"][:-1]] + [
        signed(key, last | {"payout": last["payout"] + payout})
    ]
    forged["checkpoints"] = [
        signed(key, c["document"]) | {"public_key_hex": forged["public_key_hex"]}
        for c in bundle["checkpoints"]
    ]
    return forged


def test_two_builds_are_byte_identical_and_hold_only_the_core_and_the_verifier() -> None:
    first, second = build(), build()
    assert first == second
    assert first.startswith(b"#!/usr/bin/env python3\n")
    names = zipfile.ZipFile(io.BytesIO(first)).namelist()
    assert names == sorted(names) and "__main__.py" in names
    assert {name.split("/")[1] for name in names if "/" in name} == {
        "__init__.py",
        "core",
        "verify",
    }
    assert "sota_casino/verify/build.py" not in names
    infos = zipfile.ZipFile(io.BytesIO(first)).infolist()
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}


def test_the_build_command_writes_the_archive_and_prints_its_digest(tmp_path: Path) -> None:
    out = tmp_path / "verify.pyz"
    result = subprocess.run(
        [sys.executable, "-m", "sota_casino.verify.build", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == f"{hashlib.sha256(out.read_bytes()).hexdigest()}  {out}\n"
    assert out.read_bytes() == build()
