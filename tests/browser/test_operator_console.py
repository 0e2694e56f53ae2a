"""The operator console in a real browser: log in, filter the log, adjust a balance with its
confirmation step, and find the adjustment in the log. Saves screenshots of each page into
``docs/screenshots/operator-*.png``."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from werkzeug.serving import make_server

from sota_casino import migrate
from sota_casino.factory import create_app
from sota_casino.services import accounts
from sota_casino.services import rounds

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PASSWORD = "correct horse battery"


def _browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    return None if Path(CHROMIUM).exists() else f"no Chromium at {CHROMIUM}"


@pytest.fixture
def console_app(tmp_path: Path) -> Iterator[Flask]:
    """An app on a fresh migrated database with a player who has played a few rounds."""
    url = f"sqlite:///{tmp_path / 'casino.db'}"
    migrate.upgrade(url)
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": url,
            "SECRET_KEY": "browser-test-secret",
            "SIGNING_KEY_FILE": str(tmp_path / "signing_key.pem"),
            "CHECKPOINT_EVERY": 0,
        }
    )
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        alice = accounts.register(session, "alice", PASSWORD, address="127.0.0.1")
        for _ in range(12):
            round_ = rounds.place_casino_war_bet(session, alice.id, 500, 100)
            if round_["status"] == "awaiting_decision":
                rounds.decide_casino_war(session, alice.id, round_["id"], "war")
        rounds.play_sota(session, alice.id, 5, None, "nordic")
    finally:
        session.close()
    yield app
    app.extensions["sota_casino.engine"].dispose()


@pytest.fixture
def live_url(console_app: Flask) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, console_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(5)


@pytest.fixture
def page(live_url: str) -> Iterator[Any]:
    missing = _browser_missing()
    if missing:
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(f"REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=live_url)
        tab = context.new_page()
        errors: list[str] = []
        tab.on(
            "console",
            lambda m: (
                errors.append(m.text)
                if m.type == "error" and not m.text.startswith("Failed to load resource")
                else None
            ),
        )
        tab.on(
            "response",
            lambda r: (
                errors.append(f"{r.status} {r.url}")
                if r.status >= 400 and not r.url.endswith("/favicon.ico")
                else None
            ),
        )
        yield tab
        context.close()
        browser.close()
        assert errors == [], errors  # e.g. a CSP violation or a missing stylesheet


def shoot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"operator-{name}.png"), full_page=True)


def test_an_operator_filters_the_log_adjusts_a_balance_and_finds_it_in_the_log(
    console_app: Flask, page: Any
) -> None:
    created = console_app.test_cli_runner().invoke(
        args=["create-operator", "olga"], input=f"{PASSWORD}\n"
    )
    assert created.exit_code == 0, created.output

    page.goto("/auth/login")
    page.fill("input[name=username]", "olga")
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.click("header nav >> text=Console")
    assert page.locator("[data-testid=chain-status]").inner_text().startswith("intact")
    page.click("text=Make a checkpoint now")
    assert "Signed a checkpoint" in page.locator(".flash").inner_text()
    shoot(page, "audit")

    page.fill("#f-action", "round.settled")
    page.click("text=Filter")
    actions = page.locator("table.audit-entries tbody tr td:nth-child(4)").all_inner_texts()
    assert actions and set(actions) == {"round.settled"}
    page.locator("table.audit-entries details").first.click()
    shoot(page, "audit-filtered")

    page.click(".console-nav >> text=Ledger and house")
    assert "balanced" in page.locator("[data-testid=ledger-status]").inner_text()
    assert page.locator("svg.chart").count() == 3
    shoot(page, "ledger")

    page.click(".console-nav >> text=Players")
    page.fill("#q", "ali")
    page.click("text=Search")
    page.click("table.users-table >> text=alice")
    chips_before = page.locator("[data-testid=chips]").inner_text()
    page.select_option("#direction", "credit")
    page.select_option("#currency", "chips")
    page.fill("#amount", "12.50")
    page.fill("#reason", "goodwill for a dropped connection")
    page.click("text=Review adjustment")
    assert page.locator("[data-testid=adjust-change]").inner_text().startswith("+12.50 chips")
    assert page.locator("[data-testid=chips]").count() == 0  # still on the confirmation page
    shoot(page, "adjust-confirm")
    page.click("text=Apply adjustment")
    assert "Adjustment applied" in page.locator(".flash").inner_text()
    assert page.locator("[data-testid=chips]").inner_text() != chips_before
    assert page.locator("table.transfers-table tr[data-kind=adjust]").first.is_visible()
    shoot(page, "player")

    page.click(".console-nav >> text=Audit log")
    page.fill("#f-action", "money.adjust")
    page.click("text=Filter")
    rows = page.locator("table.audit-entries tbody tr")
    assert rows.count() == 1
    assert "goodwill for a dropped connection" in (rows.first.text_content() or "")

    page.click(".console-nav >> text=Tables")
    assert page.locator("#decks").input_value() == "6"
    shoot(page, "tables")
