"""The built wheel runs outside the checkout: installed into a fresh virtual environment, it
migrates a SQLite database and serves its pages and static files from the package data."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

from ops import servers

ROOT = Path(__file__).resolve().parents[2]
#: What building the wheel reads: the package, its metadata and its readme.
SOURCES = ("sota_casino", "pyproject.toml", "README.md")


def _build_wheel(into: Path) -> Path:
    """Build the wheel from a copy of the sources, so the build leaves nothing in the checkout."""
    source = into / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(into), str(source)],
        check=True,
        capture_output=True,
    )
    return next(into.glob("sota_casino-*.whl"))


def _fresh_venv(path: Path) -> Path:
    """A new virtual environment whose dependencies are this one's, the project itself not:
    this environment holds the checkout as an editable install, which a plain path entry for
    its site-packages does not bring along (only a site directory's .pth files run)."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    python = path / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_the_installed_wheel_migrates_and_serves_pages_and_static_files(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    python = _fresh_venv(tmp_path / "venv")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = servers.app_environment(f"sqlite:///{outside / 'casino.db'}", outside / "instance")
    env.pop("PYTHONPATH", None)
    flask = [str(python), "-m", "flask", "--app", "sota_casino.wsgi"]
    where = subprocess.run(
        [str(python), "-c", "import sota_casino; print(sota_casino.__file__)"],
        cwd=outside,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert where.startswith(str(tmp_path / "venv")), where  # the wheel's copy, not the checkout
    subprocess.run([*flask, "db", "upgrade"], cwd=outside, env=env, check=True, capture_output=True)

    port = servers.free_port()
    with (tmp_path / "server.log").open("wb") as log:
        server = subprocess.Popen(
            [*flask, "run", "--port", str(port)], cwd=outside, env=env, stdout=log, stderr=log
        )
    try:
        deadline = time.monotonic() + 30
        while not servers.port_open(port):
            assert server.poll() is None, (tmp_path / "server.log").read_text()
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        for path, shows in (("/", b"Casino War"), ("/static/casino.css", b"{")):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
                assert answer.status == 200, path
                assert shows in answer.read(), path
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert os.path.exists(outside / "casino.db")
