"""A date range (``since``/``until``) of the audit log and of a player's lists is read between
the ids its entries lie in: what it gives is what a plain time filter gives, entry for entry,
page for page, cursor for cursor, wherever the range lies, when it holds nothing, and when the
times run out of order (an entry written after another with an older time)."""

from __future__ import annotations

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

from bench import large_log
from bench.large_log import Event
from sota_casino.core import fairness
from sota_casino.core.errors import NotFound
from sota_casino.models import AuditEntry
from sota_casino.models import Transfer
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services import ledger
from sota_casino.services import lists

START: Final = datetime(2026, 3, 1, tzinfo=UTC)
#: Rows, a second apart but for those below.
ROWS: Final = 40
#: Rows written with a time older than the rows just before them, and newer than those after.
OLDER: Final = {10: 6.5, 25: 21.5}
NEWER: Final = {30: 34.5}
PAGE: Final = 3


def _time(n: int) -> datetime:
    return START + timedelta(seconds=OLDER.get(n, NEWER.get(n, n)))


def _text(moment: datetime) -> str:
    return fairness.format_time(moment)


#: Ranges whose ends fall at the ends of the table, on a row's time, between rows, among the
#: rows out of order, or where nothing is (before, after, between two rows, backwards).
ENDS: Final = [
    (None, None),
    (-5, None),
    (None, 50),
    (0, ROWS - 1),
    (0, 3),
    (ROWS - 4, ROWS + 5),
    (7, 12),
    (6.6, 9),
    (6.5, 6.5),
    (20.7, 26),
    (22, 31),
    (33, 36),
    (34.5, None),
    (None, 6.5),
    (12.2, 12.8),
    (-10, -5),
    (ROWS + 1, None),
    (9, 8),
]


def _bound(seconds: float | None) -> str | None:
    return None if seconds is None else _text(START + timedelta(seconds=seconds))


def _within(times: dict[int, str], start: str | None, end: str | None) -> list[int]:
    """A plain filter: the ids in order whose time is from ``start`` to ``end``, both included
    (``None``: no end on that side)."""
    return [
        id_
        for id_, time in sorted(times.items())
        if (start is None or time >= start) and (end is None or time <= end)
    ]


def _pages(ids: list[int], newest: bool) -> list[tuple[list[int], int | None]]:
    """A plain filter's pages: the ids in list order, ``PAGE`` a page, each with its cursor."""
    ordered = sorted(ids, reverse=newest)
    chunks = [ordered[at : at + PAGE] for at in range(0, len(ordered), PAGE)] or [[]]
    return [(chunk, chunk[-1] if at < len(chunks) - 1 else None) for at, chunk in enumerate(chunks)]


def _events() -> Iterator[Event]:
    for n in range(ROWS):
        yield "user:1", "range.event", f"round:{n}", {"n": n}


class _OutOfOrder:
    """The clock of :func:`bench.large_log.fill`, as this log is timed: its ``n``-th entry's
    time is ``_time(n)`` (fill times its entries in order)."""

    def __init__(self) -> None:
        self.written = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(fairness, name)

    def format_time(self, _moment: datetime) -> str:
        self.written += 1
        return _text(_time(self.written - 1))


@pytest.fixture
def log(session: Session, monkeypatch: pytest.MonkeyPatch) -> dict[int, str]:
    """The log's entries a second apart, some out of order, after those the app wrote as it
    started (newer than all of them): seq → time."""
    monkeypatch.setattr(large_log, "fairness", _OutOfOrder())
    large_log.fill(session, ROWS, checkpoint_every=0, events=_events())
    monkeypatch.undo()
    with session.begin():
        return dict(session.execute(sa.select(AuditEntry.seq, AuditEntry.time)).tuples().all())


def _audit_pages(session: Session, order: str, **range_: Any) -> list[tuple[list[int], int | None]]:
    pages, cursor = [], None
    while True:
        at = {} if cursor is None else {"after_seq" if order == "oldest" else "before_seq": cursor}
        page = audit.entries(session, order=order, limit=PAGE, **range_, **at)
        cursor = page.next_after_seq if order == "oldest" else page.next_before_seq
        pages.append(([e["seq"] for e in page.entries], cursor))
        if cursor is None:
            return pages


@pytest.mark.parametrize(("since", "until"), ENDS)
def test_a_range_of_the_log_is_what_a_plain_filter_gives(
    session: Session, log: dict[int, str], since: float | None, until: float | None
) -> None:
    start, end = _bound(since), _bound(until)
    wanted = _within(log, start, end)
    for order in ("newest", "oldest"):
        assert _audit_pages(session, order, since=start, until=end) == _pages(
            wanted, order == "newest"
        ), order
    assert [e["seq"] for e in audit.iter_entries(session, since=start, until=end)] == wanted
    if wanted:
        first, last, _ = audit.export_range(session, since=start, until=end)
        assert (first, last) == (wanted[0], wanted[-1])
    else:
        with pytest.raises(NotFound):
            audit.export_range(session, since=start, until=end)


@pytest.fixture
def moves(session: Session) -> tuple[int, dict[int, str]]:
    """A player's money moves between another's (each turn), some out of order: the player,
    and their transfers' ids and times."""
    player = accounts.register(session, "ranger", "a long passphrase", address="10.1.2.7").id
    other = accounts.register(session, "other", "a long passphrase", address="10.1.2.8").id
    grants = [
        ledger.TransferSpec(
            "grant",
            "chips",
            {
                ledger.player_account(each, "chips"): 1,
                ledger.system_account("issuance", "chips"): -1,
            },
            user_id=each,
        )
        for _ in range(ROWS)
        for each in (player, other)
    ]
    with session.begin():
        ledger.post_all(session, grants)
    with session.begin():
        mine = list(
            session.scalars(
                sa.select(Transfer.id).where(Transfer.user_id == player).order_by(Transfer.id)
            )
        )
        with writable(session, "transfers"):  # backdated, as moves spread over days are
            session.execute(sa.update(Transfer).values(created_at=START - timedelta(days=1)))
            for n, transfer in enumerate(mine):
                # The other player's move, after the player's, has the same time.
                session.execute(
                    sa.update(Transfer)
                    .where(Transfer.id.in_((transfer, transfer + 1)))
                    .values(created_at=_time(n))
                )
    page = lists.page(session, "transfers", lists.Paging(order="oldest", limit=500), user_id=player)
    return player, {t["id"]: t["time"] for t in page.transfers}


def _list_pages(
    session: Session, player: int, order: str, since: str | None, until: str | None
) -> list[tuple[list[int], int | None]]:
    pages, cursor = [], None
    while True:
        paging = lists.Paging(order=order, cursor=cursor, since=since, until=until, limit=PAGE)
        page = lists.page(session, "transfers", paging, user_id=player)
        cursor = page.next_cursor
        pages.append(([t["id"] for t in page.transfers], cursor))
        if cursor is None:
            return pages


@pytest.mark.parametrize(("since", "until"), ENDS)
def test_a_range_of_a_players_list_is_what_a_plain_filter_gives(
    session: Session, moves: tuple[int, dict[int, str]], since: float | None, until: float | None
) -> None:
    player, times = moves
    start, end = _bound(since), _bound(until)
    wanted = _within(times, start, end)
    for order in ("newest", "oldest"):
        assert _list_pages(session, player, order, start, end) == _pages(
            wanted, order == "newest"
        ), order
    paging = lists.Paging(since=start, until=end)
    exported = lists.iter_all(session, "transfers", paging, user_id=player)
    assert [t["id"] for t in exported] == wanted
