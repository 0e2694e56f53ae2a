"""Which URLs the app may send a browser to: its own paths only (no open redirects)."""

from __future__ import annotations

from urllib.parse import urlsplit

#: Longer ``next`` targets are no page of this site.
MAX_PATH = 2048


def is_local_path(target: object) -> bool:
    r"""Tell whether ``target`` is a path on this site, safe to redirect to.

    Browsers drop tabs and newlines from URLs and read ``\`` as ``/``, so ``/<TAB>/evil.example``
    or ``/\evil.example`` would lead to another site: any control character, space or backslash
    is refused outright, before the URL is parsed.
    """
    if not isinstance(target, str) or not target.startswith("/") or len(target) > MAX_PATH:
        return False
    if any(ord(char) <= 0x20 or ord(char) == 0x7F or char == "\\" for char in target):
        return False
    parts = urlsplit(target)
    return not parts.scheme and not parts.netloc and not parts.path.startswith("//")
