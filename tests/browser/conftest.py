"""The real app under gunicorn (2 workers, a migrated temp SQLite file) and headless Chromium,
in desktop (``tab``, 1280 px) and phone (``phone``, 390 px) tabs that fail the test on any
console error, Content-Security-Policy violation or failed request.

Without Chromium or Playwright the browser tests skip with a clear message, unless
``REQUIRE_BROWSER=1`` (CI), where they fail instead. Screenshots go to a temporary folder, or
into ``docs/screenshots/`` with ``SAVE_SCREENSHOTS=1`` (``make screenshots``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from browser_support import DESKTOP
from browser_support import LiveServer
from browser_support import open_tab

from sota_casino import migrate
from sota_casino.factory import create_app

ROOT = Path(__file__).resolve().parents[2]
#: Debian's headless build of Chromium, the one Playwright itself runs headless: the same Blink
#: without the full browser's window layers, so each page costs it about 40 % less CPU (the two
#: largest files: 148 s with the full browser, 92 s with it). The full browser serves where it
#: is the only one installed.
HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
CHROMIUM = str(HEADLESS_SHELL if HEADLESS_SHELL.exists() else Path("/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SECRET_KEY = "browser-tests-secret-key"


def browser_missing() -> str | None:
    """Say why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[dev]')"
    if not Path(CHROMIUM).exists():
        return f"Chromium is not installed at {CHROMIUM} (apt-get install chromium-headless-shell)"
    return None


def require_browser() -> None:
    """Skip the test (or fail it when REQUIRE_BROWSER=1) if no browser can run."""
    missing = browser_missing()
    if missing is None:
        return
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {missing}")
    pytest.skip(f"browser tests skipped: {missing} (set REQUIRE_BROWSER=1 to fail instead)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The one server the browser tests of this process share."""
    require_browser()
    with serve(tmp_path_factory.mktemp("live")) as server:
        yield server


@pytest.fixture
def forked_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of the test's own, for a test that rewrites the log as a cheating operator
    would: on the shared server, the standing check would then rightly find every later test's
    log broken."""
    require_browser()
    with serve(tmp_path_factory.mktemp("forked")) as server:
        yield server


@contextmanager
def serve(home: Path) -> Iterator[LiveServer]:
    """Serve the app under gunicorn (2 workers) on a fresh SQLite database in ``home``."""
    database = f"sqlite:///{home / 'casino.db'}"
    migrate.upgrade(database)
    settings = {
        "DATABASE_URL": database,
        "SECRET_KEY": SECRET_KEY,
        "SIGNING_KEY_FILE": str(home / "signing_key.pem"),
        # Every test's browser signs up from 127.0.0.1, on one server for the whole run.
        "SIGNUPS_PER_ADDRESS": "1000",
        # The standing checks run in the served workers, often enough for a test to watch. A
        # step reads the whole ledger, which grows with every test: each second, it took a tenth
        # of a core from the rest of the run once a thousand players had signed up.
        "CHECK_INTERVAL_SECONDS": "5",
        # A bundle or a proof asked for gets its newest rounds into a signed checkpoint at once.
        "CHECKPOINT_MIN_SECONDS": "0",
        # And only then: a test plants a known server seed by rewriting the pair's logged
        # commitment, which it may do only while no checkpoint covers it (log_support's
        # relog_commitment). Signed every 100 entries besides, a checkpoint over a player's
        # pair now and then came between the sign-up and the plant, and the plant took back
        # a checkpoint the test's page had kept: the witness said FORK on the next page.
        "CHECKPOINT_EVERY": "0",
    }
    # Made here first, so both workers load the same signing key instead of racing to create it.
    app = create_app({**settings, "CHECKPOINT_EVERY": 0, "AUDIT_INTEGRATE_MS": 0})
    port = free_port()
    log = (home / "gunicorn.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "wsgi:app",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--access-logfile",
            "-",
            "--error-logfile",
            "-",
        ],
        cwd=ROOT,
        env={**os.environ, **settings},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/v1/fairness/public-key", timeout=2):
                    break
            except OSError:  # refused, reset or timed out while the workers boot
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(f"gunicorn did not start: {(home / 'gunicorn.log').read_text()}")
                time.sleep(0.2)
        yield LiveServer(url, app, server.pid)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
        app.extensions["sota_casino.engine"].dispose()


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


PHONE = {"width": 390, "height": 844}


@pytest.fixture
def tab(chromium: Any, live_server: LiveServer) -> Iterator[Any]:
    """A fresh desktop tab (1280 px wide) on the live server."""
    yield from open_tab(chromium, live_server, viewport=DESKTOP)


@pytest.fixture
def forked_tab(chromium: Any, forked_server: LiveServer) -> Iterator[Any]:
    """A fresh desktop tab on the test's own server (:func:`forked_server`)."""
    yield from open_tab(chromium, forked_server, viewport=DESKTOP)


@pytest.fixture
def phone(chromium: Any, live_server: LiveServer) -> Iterator[Any]:
    """A fresh phone-sized tab (390 px wide, touch) on the live server."""
    yield from open_tab(
        chromium,
        live_server,
        viewport=PHONE,
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
    )


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("SAVE_SCREENSHOTS") == "1":
        folder = ROOT / "docs" / "screenshots"
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def shoot(screenshot_dir: Path) -> Callable[..., None]:
    """``shoot(page, "player-lobby")`` saves a screenshot of the page."""

    def save(page: Any, name: str, full_page: bool = True) -> None:
        page.screenshot(
            path=str(screenshot_dir / f"{name}.png"), full_page=full_page, animations="disabled"
        )

    return save
