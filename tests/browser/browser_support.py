"""What the browser tests share besides fixtures."""

from __future__ import annotations

#: Records Content-Security-Policy violations in the page, where Playwright can read them back.
CSP_WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""
