"""Streamed downloads of tables: CSV or JSON Lines, a row at a time."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Final
from typing import TypeVar

from flask import Response
from flask import stream_with_context

from ..core.errors import InvalidInput
from ..core.marks import N_

KINDS: Final = ("csv", "jsonl")

T = TypeVar("T")


#: How a text cell starts that a spreadsheet would run as a formula (OWASP "CSV injection").
FORMULA_START: Final = re.compile(r"[=+\-@\t\r]")
#: A plain number is no formula, even a negative one.
NUMBER: Final = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def csv_cell(value: Any) -> Any:
    """Return ``value`` for a CSV cell: nested values as JSON, and text that a spreadsheet
    would run as a formula (a player's client seed, say) behind an apostrophe, which shows it
    as text."""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if isinstance(value, str) and FORMULA_START.match(value) and not NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_lines(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Iterator[str]:
    """Yield a header line, then one CSV line per row (see :func:`csv_cell`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")

    def line(values: Iterable[Any]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(values)
        return buffer.getvalue()

    yield line(columns)
    for row in rows:
        yield line(csv_cell(row.get(c)) for c in columns)


def jsonl_lines(rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """Yield one compact JSON object per line."""
    for row in rows:
        yield json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


def read_ahead(items: Iterable[T]) -> Iterator[T]:
    """Return ``items`` with their first one read now, in the view: a database that cannot
    serve that first read is then the request's 503 with Retry-After. Read once the answer is
    on its way, it could only break it (before its first byte, gunicorn sent its own HTML 500);
    a later chunk that fails still cuts the download off, which its client sees as incomplete."""
    iterator = iter(items)
    first = list(itertools.islice(iterator, 1))

    def all_of_them() -> Iterator[T]:
        yield from first
        yield from iterator

    return all_of_them()


def download(lines: Iterable[str], mimetype: str, filename: str) -> Response:
    """Stream ``lines`` as the download ``filename``, its first line read before it starts
    (:func:`read_ahead`)."""
    return Response(
        stream_with_context(read_ahead(lines)),
        mimetype=mimetype,
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


def table_download(
    rows: Iterable[Mapping[str, Any]], columns: Sequence[str], kind: str | None, name: str
) -> Response:
    """Stream ``rows`` as CSV (``kind`` "csv") or JSON Lines ("jsonl") for download, the first
    row read before it starts (:func:`read_ahead`: a CSV's header line reads nothing).

    :raises InvalidInput: for any other ``kind``, before anything is read.
    """
    if kind not in KINDS:
        raise InvalidInput(N_('format must be "csv" or "jsonl"'), field="format")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    rows = read_ahead(rows)
    lines = csv_lines(rows, columns) if kind == "csv" else jsonl_lines(rows)
    return download(
        lines, "text/csv" if kind == "csv" else "application/jsonl", f"{name}-{stamp}.{kind}"
    )
