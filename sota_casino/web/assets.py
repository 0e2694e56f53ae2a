"""The stylesheet and scripts under URLs that name their content, kept by browsers for a year.

Pages ask for each static file as ``/static/casino.css?v=<first 12 hex digits of its
SHA-256>``. A release that changes a file changes its URL, so a browser may keep what it has for
as long as it likes and asks for nothing again on the next page; without this, every page made a
phone ask again for the stylesheet and each script, a round trip each. A URL without the
version, or with another one (a page drawn before a release), is served as before: the browser
asks again each time whether it changed.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path
from typing import Any
from typing import Final

from flask import Flask
from flask import Response
from flask import request

VERSION_ARG: Final = "v"
#: A year: "immutable" tells the browser not to ask again even when the user reloads.
KEPT: Final = "public, max-age=31536000, immutable"


def init_app(app: Flask) -> None:
    """Version every ``url_for('static', ...)`` and let browsers keep what a version names."""
    folder = Path(str(app.static_folder))

    def add_version(endpoint: str, values: dict[str, Any]) -> None:
        if endpoint == "static" and VERSION_ARG not in values:
            version = _version_of(folder / str(values["filename"]))
            if version is not None:
                values[VERSION_ARG] = version

    def keep_named_versions(response: Response) -> Response:
        if request.endpoint != "static" or response.status_code not in (200, 304):
            return response  # every other answer, the API's among them, at the cost of a compare
        asked = request.args.get(VERSION_ARG)
        found = _version_of(folder / str((request.view_args or {}).get("filename", "")))
        if asked and asked == found:
            response.headers["Cache-Control"] = KEPT
        return response

    app.url_defaults(add_version)
    app.after_request(keep_named_versions)


def _version_of(path: Path) -> str | None:
    """The version of the file at ``path`` as it is now, or None if there is none."""
    try:
        stat = path.stat()
    except OSError:
        return None
    # Keyed by the file's change time and size too: a file edited while the service runs (as
    # under `flask run` in development) gets a new version.
    return _hashed(os.path.realpath(path), stat.st_mtime_ns, stat.st_size)


@cache
def _hashed(path: str, mtime_ns: int, size: int) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
    except OSError:
        return None
