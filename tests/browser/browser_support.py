"""What the browser tests share besides fixtures."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
from web_support import PASSWORD  # noqa: E402

#: Records Content-Security-Policy violations in the page, where Playwright can read them back.
CSP_WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""

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
    page.click("button[type=submit]")
    page.wait_for_url("**/lobby")
    return username
