"""A time range read by id: the audit log's and the operator's lists' ``since``/``until``.

Times and ids grow together, but not strictly (two writers each take an id and a time, in
either order), so no index gives a time range in id order: read in id order with a time filter,
a range in the middle of a table is found by walking past every row on one side of it. But every
row timed in the range has an id between the smallest and the largest id of those rows, and both
are read from the index of times, within the range: the range's rows are then read in id order
between those ids, the time filter kept, so a page or an export of it is what it was (the same
rows, in the same order, with the same cursors) for about the rows in the range.
"""

from __future__ import annotations

from typing import Any
from typing import TypeVar

from sqlalchemy import ColumnElement
from sqlalchemy import Connection
from sqlalchemy import false
from sqlalchemy import func
from sqlalchemy import null
from sqlalchemy import select
from sqlalchemy.sql.elements import SQLCoreOperations

T = TypeVar("T")


def timed(time: SQLCoreOperations[T], start: T | None, end: T | None) -> list[ColumnElement[bool]]:
    """The rows timed in ``[start, end]`` (either end open if None)."""
    return [
        *([] if start is None else [time >= start]),
        *([] if end is None else [time <= end]),
    ]


def id_span(
    connection: Connection,
    key: SQLCoreOperations[int],
    in_range: list[ColumnElement[bool]],
    *,
    first: bool = True,
    last: bool = True,
) -> tuple[int | None, int | None] | None:
    """The smallest (if ``first``) and largest (if ``last``) ``key`` of the rows ``in_range``;
    None if there is none. Both are read from the index of times, within the range: the ``+ 0``
    keeps the database from walking the key's own index from one end to the first row in range
    (it takes those rows to be spread evenly; they are all in one place)."""
    read = key + 0 if in_range else key  # no range: the key's own index, one probe an end
    low, high = connection.execute(
        select(func.min(read) if first else null(), func.max(read) if last else null()).where(
            *in_range
        )
    ).one()
    return None if low is None and high is None else (low, high)


def within(
    connection: Connection,
    key: SQLCoreOperations[int],
    time: SQLCoreOperations[T],
    start: T | None,
    end: T | None,
    *,
    oldest: bool,
    read_by: SQLCoreOperations[int] | None = None,
) -> list[ColumnElement[bool]]:
    """The clauses that keep a query read in key order (``oldest`` first or newest) to the rows
    timed in ``[start, end]``: the time filter, and the ids the range's rows lie between (on
    ``read_by``, a column equal to ``key`` by a join, if the query is read in its order). None
    for no range; one that matches nothing for a range with no rows.

    A range open at one end is bounded only where the read starts: its other id would be
    looked for among every row on its open side, and the read stops at a page anyway."""
    in_range = timed(time, start, end)
    closed = start is not None and end is not None
    first = closed or (start is not None and oldest)
    last = closed or (end is not None and not oldest)
    if not first and not last:
        return in_range
    span = id_span(connection, key, in_range, first=first, last=last)
    if span is None:
        return [false()]
    column: Any = key if read_by is None else read_by
    low, high = span
    return [
        *in_range,
        *([] if low is None else [column >= low]),
        *([] if high is None else [column <= high]),
    ]
