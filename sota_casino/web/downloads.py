"""Streamed downloads: tables as CSV or JSON Lines, and the audit log's exports, a row at a time.

A download's status and headers go out with its first line, so an error after that (the
database lost, a statement cut off) can no longer be a 503: the download is cut instead. Its
connection is closed without the end of the HTTP/1.1 chunked message, so a client sees a cut
message and not a whole file (curl exits 18, a browser marks the download failed), and the
app logs one line (docs/operations.md, "Downloads cut short").
"""

from __future__ import annotations

import csv
import errno
import io
import itertools
import json
import logging
import re
import tempfile
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from typing import IO
from typing import Any
from typing import Final

from flask import Response
from flask import request
from flask import stream_with_context
from werkzeug.wsgi import wrap_file

from ..core.errors import InvalidInput
from ..core.marks import N_
from ..services.tx import log_failure

KINDS: Final = ("csv", "jsonl")

log = logging.getLogger(__name__)


#: How a text cell starts that a spreadsheet would run as a formula (OWASP "CSV injection").
FORMULA_START: Final = re.compile(r"[=+\-@\t\r]")
#: A plain number is no formula, even a negative one.
NUMBER: Final = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def csv_cell(value: Any) -> Any:
    """Return ``value`` for a CSV cell: nested values and booleans as JSON (``true``, as the
    same download in JSON Lines says it, not Python's ``True``), and text that a spreadsheet
    would run as a formula (a player's client seed, say) behind an apostrophe, which shows it
    as text."""
    if isinstance(value, (dict, list, bool)):
        return json.dumps(value)
    if isinstance(value, str) and FORMULA_START.match(value) and not NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_lines(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Iterator[str]:
    """Yield a header line, then one CSV line per row (see :func:`csv_cell`).

    The first row is read before the header is yielded: a download's first line is read before
    its answer starts (:func:`attachment`), so a database that cannot serve the rows is that
    request's 503, not a failure once the answer is on its way.
    """
    rows = iter(rows)
    first = list(itertools.islice(rows, 1))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")

    def line(values: Iterable[Any]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(values)
        return buffer.getvalue()

    yield line(columns)
    for row in itertools.chain(first, rows):
        yield line(csv_cell(row.get(c)) for c in columns)


def jsonl_lines(rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """Yield one compact JSON object per line."""
    for row in rows:
        yield json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


class DownloadCut(ConnectionResetError):
    """Ends a download whose lines stopped on an error, after its answer began.

    Raised from the body, it asks the server to drop the connection as it does for a client
    gone: gunicorn and Werkzeug's server close it without the chunked message's last chunk and
    log nothing of their own, where any other error got a traceback from each. Hence a
    connection reset, with its errno: that is the error they both treat so.
    """

    def __init__(self) -> None:
        super().__init__(errno.ECONNRESET, "the download was cut: its lines stopped on an error")


def attachment(lines: Iterable[str], mimetype: str, filename: str) -> Response:
    """Stream ``lines`` as a download named ``filename``.

    The first line is read now, so a failure before anything is sent is answered as any
    request's (a 503 for an outage); one after it cuts the download (:class:`DownloadCut`),
    logged in one line. HTTP/1.0 has no chunks to cut: its answer ends when the connection
    closes, whole or not, so it gets the download read whole first, with its length
    (:func:`_spooled`), and any failure is answered as any request's.
    """
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    if request.environ.get("SERVER_PROTOCOL") == "HTTP/1.0":
        whole, size = _spooled(lines)
        headers["Content-Length"] = str(size)
        blocks = wrap_file(request.environ, whole)  # the server's file wrapper: it closes it
        return Response(blocks, mimetype=mimetype, headers=headers, direct_passthrough=True)
    rest = iter(lines)
    first = next(rest, None)
    return Response(
        stream_with_context(_cut_on_failure(first, rest, request.path)),
        mimetype=mimetype,
        headers=headers,
    )


#: A download read whole is kept in memory up to this size, then in a temporary file.
SPOOL_IN_MEMORY: Final = 1 << 20


def _spooled(lines: Iterable[str]) -> tuple[IO[bytes], int]:
    """Write ``lines`` out whole; return the file, read from its start, and its size."""
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)
    try:
        for line in lines:
            spool.write(line.encode())
    except BaseException:
        spool.close()
        raise
    size = spool.tell()
    spool.seek(0)
    return spool, size


def _cut_on_failure(first: str | None, rest: Iterator[str], path: str) -> Iterator[str]:
    """Yield ``first``, then ``rest``; an error in ``rest`` is logged, then cuts the download."""
    if first is None:
        return
    sent = 1
    try:
        yield first
        for line in rest:
            yield line
            sent += 1
    except Exception as exc:
        message = f"download {path} cut after {sent} lines, its connection closed unfinished"
        log_failure(log, message, exc)
        raise DownloadCut() from exc


def table_download(
    rows: Iterable[Mapping[str, Any]], columns: Sequence[str], kind: str | None, name: str
) -> Response:
    """Stream ``rows`` as CSV (``kind`` "csv") or JSON Lines ("jsonl") for download.

    :raises InvalidInput: for any other ``kind``, before anything is read.
    """
    if kind not in KINDS:
        raise InvalidInput(N_('format must be "csv" or "jsonl"'), field="format")
    lines = csv_lines(rows, columns) if kind == "csv" else jsonl_lines(rows)
    mimetype = "text/csv" if kind == "csv" else "application/jsonl"
    return attachment(lines, mimetype, f"{name}-{stamp()}.{kind}")


def stamp() -> str:
    """The time now in a download's file name."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
