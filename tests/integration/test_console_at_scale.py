"""A console page reads about a page of rows however large the tables behind it: a page of the
audit log under a filter, wherever in the log the filter's entries lie (the entries of an actor,
an action or a subject that are all old are not looked for entry by entry from the log's end),
and a page of a player's money moves however many the player has. Shown by the plan's own count
of the rows it read (PostgreSQL's ``EXPLAIN ANALYZE``) and by the index SQLite's plan names, not
by timing."""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import Final

import pytest
import sqlalchemy as sa
from log_support import writable
from sqlalchemy.orm import Session

from bench.large_log import Event
from bench.large_log import fill
from sota_casino.models import Transfer
from sota_casino.models import User
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services import ledger
from sota_casino.services import lists
from sota_casino.services import rounds

ENTRIES: Final = 20_000
#: The first entries, all by one actor, of one action, about one subject: a tenth of the log.
OLD: Final = 2_000


def _events(first_seq: int) -> Iterator[Event]:
    for seq in range(first_seq, first_seq + ENTRIES + 1):
        if seq < first_seq + OLD:
            yield "user:old", "old.event", "round:old", {"n": seq}
        else:
            yield f"user:{seq % 300}", "bench.event", f"round:{seq}", {"n": seq}


def _vacuumed(session: Session) -> Session:
    """What autovacuum does to a table that only grows: its statistics, and on PostgreSQL the
    visibility map that lets an index answer alone."""
    engine = session.get_bind()
    with engine.connect() as connection:
        connection = connection.execution_options(isolation_level="AUTOCOMMIT")
        postgres = engine.dialect.name == "postgresql"
        connection.execute(sa.text("VACUUM ANALYZE" if postgres else "ANALYZE"))
    return session


@pytest.fixture
def log(session: Session) -> Session:
    fill(session, ENTRIES, checkpoint_every=0, events=_events(audit.current_size(session) + 1))
    return _vacuumed(session)


def _rows_read(plan: dict[str, Any]) -> int:
    """Rows every scan of the plan read: those it passed on and those its filter dropped."""
    read = 0
    if "Relation Name" in plan:
        loops = plan.get("Actual Loops", 1)
        read += (plan["Actual Rows"] + plan.get("Rows Removed by Filter", 0)) * loops
    return read + sum(_rows_read(child) for child in plan.get("Plans", ()))


def _statements_of(session: Session, read: Callable[[], Any], table: str) -> list[Any]:
    """The statements ``read`` sent that read ``table``, with their parameters."""
    seen: list[tuple[str, Any]] = []
    engine = session.get_bind()

    def note(_c: Any, _cur: Any, statement: str, parameters: Any, _x: Any, _m: bool) -> None:
        if f"FROM {table}" in statement and statement.lstrip().startswith("SELECT"):
            seen.append((statement, parameters))

    sa.event.listen(engine, "before_cursor_execute", note)
    try:
        read()
    finally:
        sa.event.remove(engine, "before_cursor_execute", note)
    return seen


def _read_by(session: Session, statements: list[tuple[str, Any]]) -> int:
    """Rows PostgreSQL's plans of ``statements`` read, run again."""
    read = 0
    with session.get_bind().connect() as connection:
        for statement, parameters in statements:
            explained = connection.exec_driver_sql(
                "EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters
            ).scalar_one()
            plan = explained if isinstance(explained, list) else json.loads(explained)
            read += _rows_read(plan[0]["Plan"])
    return read


def _old_page(session: Session, filters: dict[str, str]) -> list[Any]:
    def read() -> None:
        page = audit.entries(session, **filters)
        assert len(page.entries) == 50
        assert all(e["actor"] == "user:old" for e in page.entries)

    return _statements_of(session, read, "audit_entries")


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
    read = _read_by(log, _old_page(log, filters))
    # A page of 51 entries, found by index and read by sequence number, and the log's few
    # actions walked: before, the newest-first page read the 18,000 newer entries first.
    assert read < 500, read


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("filters", FILTERS, ids=_named)
def test_on_sqlite_a_filters_page_is_found_through_its_index_ending_in_seq(
    log: Session, filters: dict[str, str]
) -> None:
    (*_, (statement, parameters)) = _old_page(log, filters)
    with log.get_bind().connect() as connection:
        plan = " / ".join(
            row[3]
            for row in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
        )
    assert "_seq" in plan and "TEMP B-TREE" not in plan, plan


#: A player's money moves in chips, beside a few in sweets (a player account each), and as many
#: of another player's after them.
MOVES: Final = 3_000


def _grants(player: int) -> list[ledger.TransferSpec]:
    return [
        ledger.TransferSpec(
            "grant",
            currency,
            {
                ledger.player_account(player, currency): 1,
                ledger.system_account("issuance", currency): -1,
            },
            user_id=player,
        )
        for n in range(MOVES)
        for currency in (("chips", "sweets") if n % 500 == 0 else ("chips",))
    ]


@pytest.fixture
def mover(session: Session) -> int:
    player = accounts.register(session, "mover", "a long passphrase", address="10.1.2.3").id
    other = accounts.register(session, "another", "a long passphrase", address="10.1.2.4").id
    for each in (player, other):
        with session.begin():
            ledger.post_all(session, _grants(each))
    _vacuumed(session)
    return player


def _moves_page(session: Session, player: int, paging: lists.Paging) -> list[Any]:
    def read() -> None:
        page = lists.page(session, "transfers", paging, user_id=player)
        assert len(page.transfers) == 50
        assert [t["id"] for t in page.transfers] == sorted(
            (t["id"] for t in page.transfers), reverse=paging.order == "newest"
        )

    return _statements_of(session, read, "transfers")


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
@pytest.mark.parametrize("order", ["newest", "oldest"])
def test_on_postgresql_a_page_of_a_players_money_moves_reads_about_a_page(
    session: Session, mover: int, order: str
) -> None:
    read = _read_by(session, _moves_page(session, mover, lists.Paging(order=order)))
    # Before, every posting of the player's (3,006) was read and sorted for each page, or the
    # other player's newer transfers read one by one.
    assert read < 500, read


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_on_sqlite_a_page_of_money_moves_is_read_through_the_accounts_postings_in_order(
    session: Session, mover: int
) -> None:
    statements = _moves_page(session, mover, lists.Paging())
    with session.get_bind().connect() as connection:
        for statement, parameters in statements:
            plan = " / ".join(
                row[3]
                for row in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
            )
            assert "ix_postings_account_id_transfer_id" in plan and "TEMP B-TREE" not in plan, plan


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_on_postgresql_the_ledger_check_scans_each_table_once_whatever_its_memory(
    session: Session, mover: int
) -> None:
    statements = _statements_of(session, lambda: ledger.check(session), "")
    # The least memory PostgreSQL allows a sort or hash: the postings' 6,000 transfer ids do not
    # fit, as two million do not fit the default 4 MB.
    with session.get_bind().connect() as connection:
        connection.exec_driver_sql("SET work_mem = '64kB'")
        plans = [
            "\n".join(
                row[0] for row in connection.exec_driver_sql("EXPLAIN " + statement, parameters)
            )
            for statement, parameters in statements
        ]
    # A subplan run again for every row of the outer table ("NOT (SubPlan 1)", not hashed) read
    # every posting once per transfer.
    assert not [plan for plan in plans if "(SubPlan" in plan], plans


@pytest.mark.tampers
def test_the_ledger_check_still_names_a_transfer_without_postings(session: Session) -> None:
    with session.begin():
        empty = session.scalar(
            sa.insert(Transfer).values(kind="grant", currency="chips").returning(Transfer.id)
        )
    accounts.register(session, "later", "a long passphrase", address="10.1.2.5")  # posts after
    assert f"transfer {empty} has no postings" in ledger.check(session).problems


#: Rounds played and settled before a standing step of the ledger check.
SETTLED: Final = 200


@pytest.fixture
def played(session: Session) -> Session:
    player = accounts.register(session, "player", "a long passphrase", address="10.1.2.6").id
    for _ in range(SETTLED):
        round_ = rounds.place_casino_war_bet(session, player, 100, 0)
        if round_.status != "settled":
            rounds.decide_casino_war(session, player, round_.id, "war")
    return _vacuumed(session)


def _plans(session: Session, statements: list[Any], explain: str) -> list[str]:
    with session.get_bind().connect() as connection:
        return [
            " / ".join(
                str(row[-1]) for row in connection.exec_driver_sql(explain + statement, parameters)
            )
            for statement, parameters in statements
        ]


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_on_postgresql_a_standing_step_of_the_ledger_check_reads_the_open_rounds_alone(
    played: Session,
) -> None:
    state = ledger.check(played).state
    step = _statements_of(played, lambda: ledger.check(played, state), "rounds")
    plans = _plans(played, step, "EXPLAIN ")
    # Before, each of these statements scanned every round for the few not settled.
    assert len(plans) >= 3
    scanned = [plan for plan in plans if "Seq Scan on rounds" in plan]
    assert not scanned, "\n".join(scanned)


#: A day's worth of entries in the middle of the log (the log's entries are a second apart),
#: with most of the log newer than it.
DAY: Final = slice(6_000, 7_000)


def _range_page(session: Session, order: str) -> list[Any]:
    times = list(session.scalars(sa.select(audit.AuditEntry.time).order_by(audit.AuditEntry.seq)))
    since, until = times[DAY.start], times[DAY.stop - 1]

    def read() -> None:
        page = audit.entries(session, since=since, until=until, order=order)
        assert len(page.entries) == 50
        assert all(since <= e["time"] <= until for e in page.entries)

    return _statements_of(session, read, "audit_entries")


@pytest.fixture
def spread_log(session: Session) -> Session:
    first = audit.current_size(session) + 1
    fill(session, ENTRIES, checkpoint_every=0, events=_events(first), step=timedelta(seconds=1))
    return _vacuumed(session)


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
@pytest.mark.parametrize("order", ["newest", "oldest"])
def test_on_postgresql_a_date_range_in_the_middle_of_the_log_reads_about_the_range(
    spread_log: Session, order: str
) -> None:
    read = _read_by(spread_log, _range_page(spread_log, order))
    # The range's 1,000 entries read once through the index of times (their first and last
    # ids), then a page: before, newest first read the 13,000 newer entries, oldest first the
    # 6,000 older ones.
    assert read < 1_500, read


def _moves_in_range(session: Session, player: int, order: str) -> list[Any]:
    ids = lists.page(session, "transfers", lists.Paging(order="oldest", limit=500), user_id=player)
    since, until = ids.transfers[300]["time"], ids.transfers[399]["time"]

    def read() -> None:
        paging = lists.Paging(order=order, since=since, until=until)
        page = lists.page(session, "transfers", paging, user_id=player)
        assert [t["time"] for t in page.transfers] and all(
            since <= t["time"] <= until for t in page.transfers
        )

    return _statements_of(session, read, "transfers")


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
@pytest.mark.parametrize("order", ["newest", "oldest"])
def test_on_postgresql_a_date_range_of_a_players_money_moves_reads_about_the_range(
    session: Session, mover: int, order: str
) -> None:
    # A second between two transfers, as a day's money moves are spread.
    with session.begin(), writable(session, "transfers"):
        session.execute(
            sa.text("UPDATE transfers SET created_at = :start + id * interval '1 second'"),
            {"start": datetime(2026, 1, 1, tzinfo=UTC)},
        )
    read = _read_by(_vacuumed(session), _moves_in_range(session, mover, order))
    # The range's 100 transfers and a page of the player's: before, 9,000 rows read newest first
    # (the player's newer money moves), about 6,000 oldest first.
    assert read < 1_000, read


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_on_sqlite_a_date_range_is_bounded_through_the_index_of_times(
    spread_log: Session,
) -> None:
    statements = _range_page(spread_log, "newest")
    plans = _plans(spread_log, statements, "EXPLAIN QUERY PLAN ")
    bounding = [
        plan for statement, plan in zip(statements, plans, strict=True) if "min(" in statement[0]
    ]
    assert bounding and "ix_audit_entries_time" in bounding[0], plans


@pytest.fixture
def many_players(session: Session) -> Session:
    """20,000 players and one whose name holds the word searched for."""
    session.execute(
        sa.insert(User),
        [
            {"username": f"player{n:05}", "password_hash": "-", "role": "player"}
            for n in range(20_000)
        ],
    )
    session.commit()
    accounts.register(session, "The_Rare_One", "a long passphrase", address="10.1.2.3")
    return _vacuumed(session)


def _search(session: Session, text: str) -> list[Any]:
    def read() -> None:
        page = lists.page(session, "users", lists.Paging(), q=text)
        assert [user["username"] for user in page.users] == ["The_Rare_One"]

    return _statements_of(session, read, "users")


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
@pytest.mark.parametrize("text", ["rare", "E_RARE_O", "rare_one"])
def test_on_postgresql_a_players_search_reads_the_names_it_finds(
    many_players: Session, text: str
) -> None:
    read = _read_by(many_players, _search(many_players, text))
    # Before, every name was read and matched (20,001), whatever the search found.
    assert read < 500, read
