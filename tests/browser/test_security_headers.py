"""The headers as Chromium obeys them. The Content-Security-Policy: inline code is blocked and
reported, so the ``tab`` fixture's check (no console error, no recorded violation) would catch
any page that needed it. And the static files' ``Cache-Control``: kept, not asked for again."""

from __future__ import annotations

from typing import Any

import pytest
from browser_support import CSP_WATCH

pytestmark = pytest.mark.browser


def test_chromium_blocks_and_reports_inline_scripts_and_styles(
    chromium: Any, live_server: Any
) -> None:
    context = chromium.new_context(base_url=live_server.url)
    context.add_init_script(CSP_WATCH)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    response = page.goto("/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert "strict-transport-security" not in response.headers  # plain HTTP: no HSTS
    page.evaluate(
        """() => {
            const script = document.createElement("script");
            script.textContent = "window.inlineRan = true";
            document.body.append(script);
            document.body.setAttribute("style", "background: rgb(255, 0, 0)");
        }"""
    )
    assert page.evaluate("window.inlineRan === undefined")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") != "rgb(255, 0, 0)"
    page.wait_for_function("window.__cspViolations.length >= 2")
    violations = page.evaluate("window.__cspViolations")
    assert any(v.startswith("script-src") for v in violations), violations
    assert any(v.startswith("style-src") for v in violations), violations
    assert any("Content Security Policy" in e for e in errors), errors
    context.close()


#: The page's stylesheet and scripts, each with the bytes its fetch took over the network: 0 for
#: one the browser had kept, a response's headers at least for one it asked for again (a 304).
STATIC_TRANSFERS = """() => performance.getEntriesByType("resource")
    .filter(entry => new URL(entry.name).pathname.startsWith("/static/"))
    .map(entry => [new URL(entry.name).pathname, entry.transferSize])"""


def test_the_next_page_asks_for_no_stylesheet_or_script_again(tab: Any) -> None:
    """Every page asked again for the stylesheet and each script (a round trip each, on a
    phone's network too): named by their content, they are kept, and the next page that uses
    them asks only for itself."""
    tab.goto("/fairness")  # the page with the most scripts
    first = tab.evaluate(STATIC_TRANSFERS)
    assert len(first) >= 5 and all(size > 0 for _, size in first), first
    tab.goto("/")
    tab.goto("/fairness")
    again = tab.evaluate(STATIC_TRANSFERS)
    assert sorted(again) == sorted([path, 0] for path, _ in first)
