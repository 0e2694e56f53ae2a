"""A page of the audit log under a filter reads about a page of entries, wherever in the log the
filter's entries lie: the entries of an actor, an action or a subject that are all old are not
looked for entry by entry from the log's end. Shown by the plan's own count of the rows it read
(PostgreSQL's ``EXPLAIN ANALYZE``) and by the index SQLite's plan names, not by timing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from typing import Final

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from bench.large_log import Event
from bench.large_log import fill
from sota_casino.services import audit

ENTRIES: Final = 20_000
#: The first entries, all by one actor, of one action, about one subject: a tenth of the log.
OLD: Final = 2_000


def _events(first_seq: int) -> Iterator[Event]:
    for seq in range(first_seq, first_seq + ENTRIES + 1):
        if seq < first_seq + OLD:
            yield "user:old", "old.event", "round:old", {"n": seq}
        else:
            yield f"user:{seq % 300}", "bench.event", f"round:{seq}", {"n": seq}


@pytest.fixture
def log(session: Session) -> Session:
    fill(session, ENTRIES, checkpoint_every=0, events=_events(audit.current_size(session) + 1))
    # What autovacuum does to a table that only grows: its statistics, and on PostgreSQL the
    # visibility map that lets an index answer alone.
    engine = session.get_bind()
    with engine.connect() as connection:
        connection = connection.execution_options(isolation_level="AUTOCOMMIT")
        postgres = engine.dialect.name == "postgresql"
        connection.execute(sa.text("VACUUM ANALYZE audit_entries" if postgres else "ANALYZE"))
    return session


def _rows_read(plan: dict[str, Any]) -> int:
    """Rows every scan of the plan read: those it passed on and those its filter dropped."""
    read = 0
    if "Relation Name" in plan:
        loops = plan.get("Actual Loops", 1)
        read += (plan["Actual Rows"] + plan.get("Rows Removed by Filter", 0)) * loops
    return read + sum(_rows_read(child) for child in plan.get("Plans", ()))


def _statements_of(session: Session, filters: dict[str, str]) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []
    engine = session.get_bind()

    def note(_c: Any, _cur: Any, statement: str, parameters: Any, _x: Any, _m: bool) -> None:
        if "FROM audit_entries" in statement and statement.lstrip().startswith("SELECT"):
            seen.append((statement, parameters))

    sa.event.listen(engine, "before_cursor_execute", note)
    try:
        page = audit.entries(session, **filters)
    finally:
        sa.event.remove(engine, "before_cursor_execute", note)
    assert len(page.entries) == 50
    assert all(e["actor"] == "user:old" for e in page.entries)
    return seen


def _named(filters: dict[str, str]) -> str:
    return "&".join(f"{name}={value}" for name, value in filters.items())


FILTERS: Final = [
    {"actor": "user:old"},
    {"action": "old."},
    {"action": "old.event"},
    {"subject": "round:old"},
]


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
@pytest.mark.parametrize("filters", FILTERS, ids=_named)
def test_on_postgresql_a_page_of_old_entries_reads_about_a_page(
    log: Session, filters: dict[str, str]
) -> None:
    statements = _statements_of(log, filters)
    read = 0
    with log.get_bind().connect() as connection:
        for statement, parameters in statements:
            explained = connection.exec_driver_sql(
                "EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters
            ).scalar_one()
            plan = explained if isinstance(explained, list) else json.loads(explained)
            read += _rows_read(plan[0]["Plan"])
    # A page of 51 entries, found by index and read by sequence number, and the log's few
    # actions walked: before, the newest-first page read the 18,000 newer entries first.
    assert read < 500, read


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("filters", FILTERS, ids=_named)
def test_on_sqlite_a_filters_page_is_found_through_its_index_ending_in_seq(
    log: Session, filters: dict[str, str]
) -> None:
    (*_, (statement, parameters)) = _statements_of(log, filters)
    with log.get_bind().connect() as connection:
        plan = " / ".join(
            row[3]
            for row in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
        )
    assert "_seq" in plan and "TEMP B-TREE" not in plan, plan
