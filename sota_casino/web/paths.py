"""What the paths of a request say: which are API calls (answered in JSON), and which URLs the
app may send a browser to (its own paths only: no open redirects)."""

from __future__ import annotations

from flask import request

#: Where the JSON API lives.
API_PREFIX = "/api/"
#: Longer ``next`` targets are no page of this site.
MAX_PATH = 2048


def is_local_path(target: object) -> bool:
    r"""Tell whether ``target`` is a path on this site, safe to redirect to.

    Browsers drop tabs and newlines from URLs and read ``\`` as ``/``, so ``/<TAB>/evil.example``
    or ``/\evil.example`` would lead to another site: any control character, space or backslash
    is refused. So is any target starting with two slashes: a browser skips every slash after
    the first two (``///evil.example`` is another site), where Python's URL parser reads an
    empty host and a path.
    """
    if not isinstance(target, str) or not target.startswith("/") or len(target) > MAX_PATH:
        return False
    if any(ord(char) <= 0x20 or ord(char) == 0x7F or char == "\\" for char in target):
        return False
    return not target.startswith("//")  # one slash, then no scheme nor host can follow


def wants_json() -> bool:
    """Tell whether this request is an API call, answered in JSON."""
    return request.path.startswith(API_PREFIX)
