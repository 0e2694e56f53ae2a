"""The Content-Security-Policy as Chromium enforces it: inline code is blocked and reported, so
the ``tab`` fixture's check (no console error, no recorded violation) would catch any page
that needed it."""

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
