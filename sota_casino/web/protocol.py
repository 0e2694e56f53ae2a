"""The app's own HTTP limits, answered in the request's format (JSON under ``/api/``).

gunicorn's limits are set above these (gunicorn.conf.py), so the app, not the server, answers
a request line or a header that is too long (414, 431; only past gunicorn's own, below, does
gunicorn answer first, in HTML), and a body over ``MAX_CONTENT_LENGTH``
is a 413 whether it has a ``Content-Length`` or comes chunked (Werkzeug would otherwise cut a
chunked body at the limit without a word). ``OPTIONS`` on an API path answers JSON too.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any
from typing import Final

from flask import Flask
from flask import jsonify
from flask import request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.exceptions import RequestHeaderFieldsTooLarge
from werkzeug.exceptions import RequestURITooLarge
from werkzeug.wrappers import Response

from .paths import wants_json

#: The longest request line (method, target, protocol) the app accepts, in bytes.
MAX_REQUEST_LINE: Final = 4094
#: The longest header field ("Name: value"), and the most fields.
MAX_HEADER_FIELD: Final = 8190
MAX_HEADER_FIELDS: Final = 100
#: gunicorn's limits (gunicorn.conf.py), above the app's. 8190 is the longest request line it
#: takes short of 0, unlimited, which would read a line of any length into memory.
SERVER_MAX_REQUEST_LINE: Final = 8190
SERVER_MAX_HEADER_FIELD: Final = 16380
SERVER_MAX_HEADER_FIELDS: Final = 200
TOO_LARGE_KEY: Final = "sota_casino.body_too_large"


class ChunkedBodyLimit:
    """WSGI middleware: read a body without ``Content-Length`` (chunked) up to one byte past
    the limit; if it is longer, give the app an empty body and a mark to refuse it (413),
    else give it the body with its length."""

    def __init__(self, app: Any, max_body: int | None) -> None:
        self.app = app
        self.max_body = max_body

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        chunked = environ.get("CONTENT_LENGTH") in (None, "") and environ.get(
            "wsgi.input_terminated"
        )
        if chunked and self.max_body is not None:
            body = environ["wsgi.input"].read(self.max_body + 1)
            if len(body) > self.max_body:
                environ[TOO_LARGE_KEY] = True
                body = b""
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)  # type: ignore[no-any-return]  # any WSGI app


def request_line_length() -> int:
    environ = request.environ
    target = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if not target:
        query = environ.get("QUERY_STRING", "")
        target = environ.get("PATH_INFO", "") + (f"?{query}" if query else "")
    return len(request.method) + len(target) + len(environ.get("SERVER_PROTOCOL", "")) + 2


def check_limits() -> None:
    """Refuse a request over the app's limits before anything reads it."""
    if request.environ.get(TOO_LARGE_KEY):
        raise RequestEntityTooLarge()
    if request_line_length() > MAX_REQUEST_LINE:
        raise RequestURITooLarge()
    fields = list(request.headers.items())
    if len(fields) > MAX_HEADER_FIELDS or any(
        len(name) + len(value) + 2 > MAX_HEADER_FIELD for name, value in fields
    ):
        raise RequestHeaderFieldsTooLarge()


def options_as_json(response: Response) -> Response:
    """Answer ``OPTIONS`` on an API path with the allowed methods in JSON, not an empty page.

    The body is replaced in the answer itself, which keeps the headers added to it already
    (the security headers: hooks added earlier run later).
    """
    if request.method == "OPTIONS" and wants_json() and response.mimetype != "application/json":
        allowed = sorted(m.strip() for m in response.headers.get("Allow", "").split(",") if m)
        response.set_data(jsonify({"allow": allowed}).get_data())
        response.mimetype = "application/json"
        response.headers["Allow"] = ", ".join(allowed)
    return response


def init_app(app: Flask) -> None:
    """Install the limits (first of the request hooks) and the JSON ``OPTIONS``."""
    app.wsgi_app = ChunkedBodyLimit(  # type: ignore[method-assign]  # Flask's way to wrap it
        app.wsgi_app, app.config.get("MAX_CONTENT_LENGTH")
    )
    app.before_request_funcs.setdefault(None, []).insert(0, check_limits)
    app.after_request(options_as_json)
