"""What the browser tests share besides fixtures."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import Flask

from sota_casino.core import fairness

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
from web_support import PASSWORD  # noqa: E402

#: Records Content-Security-Policy violations in the page, where Playwright can read them back.
CSP_WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""

#: Put ``value`` under ``name`` in what the page's log witness keeps (its IndexedDB store;
#: ``null`` removes it), as the witness itself writes: committed before the promise resolves.
WITNESS_KEEP = """([name, value]) => new Promise((resolve, reject) => {
  const open = indexedDB.open("sota-casino.log-witness", 1);
  open.onupgradeneeded = () => open.result.createObjectStore("kept");
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const tx = open.result.transaction("kept", "readwrite");
    const store = tx.objectStore("kept");
    if (name === null) store.clear();
    else if (value === null) store.delete(name);
    else store.put(value, name);
    tx.oncomplete = () => { open.result.close(); resolve(null); };
    tx.onabort = () => reject(tx.error);
  };
})"""
#: Forget all the log witness keeps, as clearing the site's data does besides localStorage.
FORGET_WITNESS = f"() => ({WITNESS_KEEP})([null, null])"
#: The witness's names for what it keeps.
KEPT_CHECKPOINT = "sota-casino.log-checkpoint.v1"
KEPT_ALARM = "sota-casino.log-alarm.v1"
KEPT_UNPROVEN = "sota-casino.log-unproven.v1"

#: The desktop tab's size (conftest's ``tab``).
DESKTOP = {"width": 1280, "height": 860}

_names = itertools.count(1)


def fresh_name(prefix: str) -> str:
    """A username no other test of this run takes (they share one server)."""
    return f"{prefix}{next(_names)}"


def sign_up(page: Any, prefix: str) -> str:
    """Register a new player in ``page`` (it lands in the lobby); return the username."""
    username = fresh_name(prefix)
    page.goto("/auth/register")
    page.fill("#username", username)
    page.fill("#password", PASSWORD)
    page.fill("#confirm", PASSWORD)
    page.click("main button[type=submit]")  # the header has forms of its own
    page.wait_for_url("**/lobby")
    return username


def deal_on_prisoners_of_war(page: Any, *rules: str, **fields: str) -> None:
    """Deal a Sota game in ``page`` on custom rules with Prisoners of War and the rules named
    (``"peace"``: the checkbox ``rule_peace``), the table form's ``fields`` filled (by id:
    ``stake="5"``), and wait for the game's page."""
    page.goto("/sota")
    page.click("#custom-rules summary")
    page.check("#preset-custom")
    for rule in ("prisoners_of_war", *rules):
        page.check(f"input[name=rule_{rule}]")
    for field, value in fields.items():
        page.fill(f"#{field}", value)
    page.click("#play")
    page.wait_for_url(re.compile(r".*/sota/games/\d+$"))


def lay_move(page: Any) -> None:
    """Send the Sota move form as it stands (the page picks the dealer's choice, a legal
    move) and wait until the page is done with it: the next move asked for, or the game over."""
    page.click("#submit-move")
    page.wait_for_function(
        "() => !document.getElementById('move-form')"
        " || !document.getElementById('submit-move').disabled"
    )


def lay_the_dealers_choices(page: Any) -> int:
    """Lay the move the page picks, in the page, until the game ends; return how many."""
    moves = 0
    while page.locator("#move-form").count() and moves < 400:
        lay_move(page)
        moves += 1
    return moves


def log_in(page: Any, username: str) -> None:
    """Log the player ``username`` in, in ``page`` (it lands in the lobby)."""
    page.goto("/auth/login")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url("**/lobby")


@dataclass(frozen=True)
class LiveServer:
    """The gunicorn server: its URL, an app on the same database for direct writes, and its
    master process."""

    url: str
    app: Flask
    master_pid: int

    def restart_workers(self) -> None:
        """Restart the service as an operator does after ``flask keys rotate``: gunicorn's HUP
        starts new workers, which load the app (and its signing key file) anew, and stops the
        old ones. Returns once the service answers with the key the file now holds."""
        key_file = Path(self.app.config["SIGNING_KEY_FILE"]).read_bytes()
        expected = fairness.public_key_hex(fairness.load_private_key(key_file))
        os.kill(self.master_pid, signal.SIGHUP)
        deadline = time.monotonic() + 60
        answered = 0
        while answered < 6:  # both workers, several times: no old worker is left answering
            try:
                with urllib.request.urlopen(
                    f"{self.url}/api/v1/fairness/public-key", timeout=5
                ) as r:
                    answered = answered + 1 if json.load(r)["public_key_hex"] == expected else 0
            except OSError:  # timed out while the new workers boot
                answered = 0
            assert time.monotonic() < deadline, "the restarted workers never showed the new key"
            time.sleep(0.1)


def open_tab(chromium: Any, live_server: LiveServer, **context_options: Any) -> Iterator[Any]:
    """Yield a fresh tab; a console error, a CSP violation or a failed request fails the test."""
    context = chromium.new_context(base_url=live_server.url, **context_options)
    context.add_init_script(CSP_WATCH)
    page = context.new_page()
    page.set_default_timeout(15_000)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    # A test that sends a form on purpose to see it refused lists the statuses it expects;
    # Chromium then also logs each one to the console, which is expected too.
    page.expected_refusals = []
    refused: list[int] = []
    # A test that answers or aborts a request itself, as a failing service would, lists a part
    # of its URL: whatever fails there is what the test made fail.
    page.expected_failures = []

    def made_to_fail(url: str) -> bool:
        return any(part in url for part in page.expected_failures)

    def check_response(response: Any) -> None:
        if response.status < 400 or response.url.endswith("/favicon.ico"):
            return
        if made_to_fail(response.url):
            return
        if response.status in page.expected_refusals and response.request.method == "POST":
            page.expected_refusals.remove(response.status)
            refused.append(response.status)
            return
        problems.append(f"{response.status} {response.url}")

    def check_console(message: Any) -> None:
        if message.type != "error":
            return
        url = message.location.get("url", "")
        if message.text.startswith("Failed to load resource") and (
            made_to_fail(url) or url.endswith("/favicon.ico")  # as the response check does
        ):
            return
        status = re.search(r"Failed to load resource: .* status of (\d{3})", message.text)
        if status and int(status.group(1)) in refused:
            refused.remove(int(status.group(1)))
            return
        problems.append(message.text)

    page.on("response", check_response)
    page.on("console", check_console)

    yield page
    # Chromium logs a violation to the console too; the page's own record is a second witness.
    problems.extend(page.evaluate("window.__cspViolations || []"))
    context.close()
    assert problems == [], problems  # e.g. a CSP violation, a script error, a missing file


def wait_until(page: Any, function: str, arg: Any = None, timeout: float = 15) -> Any:
    """Evaluate the JavaScript ``function`` (which may be async) in ``page`` until its answer is
    truthy, and return the answer. Playwright's ``wait_for_function`` takes the promise an async
    function returns for a truthy answer and returns at once, waiting for nothing."""
    deadline = time.monotonic() + timeout
    while not (answer := page.evaluate(function, arg)):
        assert time.monotonic() < deadline, f"still falsy after {timeout} s: {function}"
        page.wait_for_timeout(50)
    return answer


def wait_for_round(page: Any, nonce: int) -> None:
    """Wait until the table shows the round of ``nonce`` (its summary may be hidden on phones)."""
    page.wait_for_function(
        "nonce => document.getElementById('bet-summary').textContent.includes('nonce ' + nonce)",
        arg=nonce,
    )
