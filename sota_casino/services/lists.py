"""The operator's lists, paged by cursor and exported whole: players, and each player's rounds,
money moves and seed pairs.

Every list pages the same way (a keyset on its id, so any page costs the same however deep):
newest first by default, oldest first on request, a jump to an id (``from_id``, included) or a
time (``since``/``until``, which also bound a date range); a page says where the next one
starts (``next_cursor``). An export is the same list and range read oldest first, a chunk per
short read-only transaction, so memory stays flat and no lock is held while it downloads.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import fields
from dataclasses import is_dataclass
from datetime import datetime
from typing import Any
from typing import Final

from sqlalchemy import Row
from sqlalchemy import Select
from sqlalchemy import select
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import SQLCoreOperations

from ..core import fairness
from ..core.errors import NotFound
from ..core.marks import N_
from ..models import Account
from ..models import Posting
from ..models import Round
from ..models import SeedPair
from ..models import Transfer
from ..models import User
from . import ranges
from . import results
from . import rounds
from .accounts import names_containing
from .fairness import pair_summary
from .results import NEWEST
from .results import OLDEST
from .results import AccountSince
from .results import NextCursor
from .results import Order
from .results import RoundRow
from .results import SeedPairSummary
from .results import check_page
from .results import filter_time
from .text import storable
from .tx import in_transaction
from .tx import own_transactions
from .tx import read_only

#: Rows read per transaction by an export.
CHUNK: Final = 2000


@dataclass(frozen=True, slots=True)
class UserList:
    users: list[AccountSince]
    order: Order
    next_cursor: NextCursor


@dataclass(frozen=True, slots=True)
class RoundPage:
    rounds: list[RoundRow]
    order: Order
    next_cursor: NextCursor


@dataclass(frozen=True, slots=True)
class TransferPage:
    transfers: list[results.Transfer]
    order: Order
    next_cursor: NextCursor


@dataclass(frozen=True, slots=True)
class SeedPairPage:
    seed_pairs: list[SeedPairSummary]
    order: Order
    next_cursor: NextCursor


@dataclass(frozen=True, slots=True)
class Paging:
    """Where a page starts and which way it runs (see the module's docstring)."""

    order: str = NEWEST
    cursor: int | None = None
    from_id: int | None = None
    since: str | None = None
    until: str | None = None
    limit: int = 50

    def checked(self) -> Paging:
        """Return this paging if it is valid.

        :raises InvalidInput: naming the bad parameter.
        """
        check_page(self.order, self.limit)
        filter_time(self.since, "since")
        filter_time(self.until, "until")
        return self


@dataclass(frozen=True, slots=True)
class ListSpec:
    """One list: its rows' queries (``parts``: the list is their rows, none in two, each read
    in key order through an index of its own), the id it pages on, the time it jumps to, how a
    row reads (a typed result, written as JSON in an export), and the page it comes in."""

    name: str
    key: InstrumentedAttribute[int]
    time: InstrumentedAttribute[datetime]
    columns: tuple[str, ...]
    parts: Callable[[Session, dict[str, Any]], list[Select[Any]]]
    row: Callable[[Row[Any]], Any]
    page: Callable[[list[Any], str, int | None], Any]
    key_field: str = "id"
    #: The column the parts are bounded and read in the order of, if not ``key``: one equal
    #: to it by a join, in an index the database reads in order where the key's is not.
    read_by: SQLCoreOperations[int] | None = None

    @property
    def order(self) -> SQLCoreOperations[int]:
        return self.key if self.read_by is None else self.read_by


def _players_query(session: Session, args: dict[str, Any]) -> list[Select[Any]]:
    return [select(User).where(names_containing(storable(str(args.get("q") or ""), "q")))]


def _player_row(row: Row[Any]) -> AccountSince:
    user = row[0]
    return {
        "id": user.id,
        "username": user.username,
        "role": user.role,
        "locked": user.locked,
        "created_at": fairness.format_time(user.created_at),
    }


def _a_user(session: Session, args: dict[str, Any]) -> int:
    user_id = int(args["user_id"])
    if session.get(User, user_id) is None:
        raise NotFound(N_("no user %(id)s"), params={"id": user_id})
    return user_id


def _rounds_query(session: Session, args: dict[str, Any]) -> list[Select[Any]]:
    return [select(Round).where(Round.user_id == _a_user(session, args))]


@in_transaction
def transfers_of(session: Session, user_id: int) -> list[Select[Any]]:
    """A player's money moves, each with what it did to their balance (its player posting): a
    query per player account (one per currency; a transfer moves one currency). Each is read in
    transfer order through the postings' (account, transfer) index, where the accounts together
    were every posting of the player's read and sorted for any page. Each posting's transfer is
    then looked up by id: the ``+ 0`` keeps PostgreSQL from merging the postings with every
    transfer from the newest down, which reads all the newer transfers of other players."""
    accounts = select(Account.id).where(Account.user_id == user_id, Account.kind == "player")
    return [
        select(Transfer, Posting.amount)
        .join(Posting, Transfer.id == Posting.transfer_id + 0)
        .where(Posting.account_id == account)
        for account in session.scalars(accounts.order_by(Account.id))
    ]


def _transfers_query(session: Session, args: dict[str, Any]) -> list[Select[Any]]:
    return transfers_of(session, _a_user(session, args))


def transfer_row(row: Row[Any]) -> results.Transfer:
    """A money move of a player as the lists show it: the transfer and the player's side."""
    transfer, amount = row
    return {
        "id": transfer.id,
        "time": fairness.format_time(transfer.created_at),
        "kind": transfer.kind,
        "currency": transfer.currency,
        "amount": int(amount),
        "round_id": transfer.round_id,
        "memo": transfer.memo,
    }


def _seed_pairs_query(session: Session, args: dict[str, Any]) -> list[Select[Any]]:
    return [
        select(SeedPair).where(
            SeedPair.user_id == _a_user(session, args), SeedPair.status != "next"
        )
    ]


def _columns(row: Any, *, leaving: str = "") -> tuple[str, ...]:
    """An export's columns: the fields of its rows, in order (less a nested one a CSV cell
    cannot hold)."""
    names = [f.name for f in fields(row)] if is_dataclass(row) else list(row.__annotations__)
    return tuple(name for name in names if name != leaving)


LISTS: Final = {
    spec.name: spec
    for spec in (
        ListSpec(
            "users",
            User.id,
            User.created_at,
            _columns(AccountSince),
            _players_query,
            _player_row,
            UserList,
        ),
        ListSpec(
            "rounds",
            Round.id,
            Round.created_at,
            _columns(RoundRow),
            _rounds_query,
            lambda row: rounds.row(row[0]),
            RoundPage,
        ),
        ListSpec(
            "transfers",
            Transfer.id,
            Transfer.created_at,
            _columns(results.Transfer),
            _transfers_query,
            transfer_row,
            TransferPage,
            read_by=Posting.transfer_id,
        ),
        ListSpec(
            "seed_pairs",
            SeedPair.id,
            SeedPair.created_at,
            _columns(SeedPairSummary, leaving="reveal"),
            _seed_pairs_query,
            lambda row: pair_summary(row[0]),
            SeedPairPage,
            key_field="seed_pair_id",
        ),
    )
}


def spec_of(name: str) -> ListSpec:
    if name not in LISTS:
        raise NotFound(
            N_("no list %(name)s; lists: %(lists)s"),
            params={"name": repr(name), "lists": ", ".join(LISTS)},
        )
    return LISTS[name]


@in_transaction
def _in_range(session: Session, spec: ListSpec, paging: Paging, *, oldest: bool) -> list[Any]:
    """The paging's date range as clauses, its ids bounded (see :mod:`.ranges`)."""
    return ranges.within(
        session.connection(),
        spec.key,
        spec.time,
        filter_time(paging.since, "since"),
        filter_time(paging.until, "until"),
        oldest=oldest,
        read_by=spec.read_by,
    )


@read_only
def page(session: Session, /, name: str, paging: Paging, **args: Any) -> Any:
    """Return one page of list ``name`` (``users``, ``rounds``, ``transfers``, ``seed_pairs``).

    :param args: what the list is of: ``user_id`` for a player's lists, ``q`` for players.
    :raises InvalidInput: for bad paging; :raises NotFound: for an unknown user.
    """
    return page_within(session, name, paging, **args)


@in_transaction
def page_within(session: Session, /, name: str, paging: Paging, **args: Any) -> Any:
    """:func:`page`, inside the caller's transaction (a page read beside others)."""
    spec, paging = spec_of(name), paging.checked()
    oldest = paging.order == OLDEST
    key, bounds = spec.order, []
    if paging.cursor is not None:
        bounds.append(key > paging.cursor if oldest else key < paging.cursor)
    if paging.from_id is not None:
        bounds.append(key >= paging.from_id if oldest else key <= paging.from_id)
    bounds.extend(_in_range(session, spec, paging, oldest=oldest))
    rows = _first_rows(session, spec, args, bounds, oldest, paging.limit + 1)
    more = len(rows) > paging.limit
    last = getattr(rows[paging.limit - 1][0], spec.key.key) if more else None
    return spec.page([spec.row(row) for row in rows[: paging.limit]], paging.order, last)


def _first_rows(
    session: Session,
    spec: ListSpec,
    args: dict[str, Any],
    bounds: list[Any],
    oldest: bool,
    limit: int,
) -> list[Row[Any]]:
    """The list's first ``limit`` rows within ``bounds``, in key order: as many from each part,
    in order, merged."""
    ordered = spec.order if oldest else spec.order.desc()
    rows = [
        row
        for part in spec.parts(session, args)
        for row in session.execute(part.where(*bounds).order_by(ordered).limit(limit))
    ]
    rows.sort(key=lambda row: getattr(row[0], spec.key.key), reverse=not oldest)
    return rows[:limit]


@read_only
def _chunk(
    session: Session, spec: ListSpec, in_range: list[Any], after: int, args: dict[str, Any]
) -> list[dict[str, Any]]:
    rows = _first_rows(session, spec, args, [*in_range, spec.order > after], True, CHUNK)
    return [results.to_json(spec.row(row)) for row in rows]


@read_only
def _range_of(session: Session, spec: ListSpec, paging: Paging) -> list[Any]:
    return _in_range(session, spec, paging, oldest=True)


@own_transactions
def check_export(session: Session, /, name: str, paging: Paging, **args: Any) -> ListSpec:
    """Check an export's list, range and subject before anything is streamed.

    :raises InvalidInput, NotFound: as :func:`page` does.
    """
    page(session, name, Paging(since=paging.since, until=paging.until, limit=1), **args)
    return spec_of(name)


@own_transactions
def iter_all(
    session: Session, /, name: str, paging: Paging, **args: Any
) -> Iterator[dict[str, Any]]:
    """Yield every row of list ``name`` in the paging's date range, oldest first, a chunk per
    short read-only transaction (exports: memory flat in the list's length)."""
    spec = spec_of(name)
    # The range's ids are looked up once, as the export starts: each chunk reads on from them.
    in_range, after = _range_of(session, spec, paging), 0
    while True:
        rows = _chunk(session, spec, in_range, after, args)
        yield from rows
        if len(rows) < CHUNK:
            return
        after = rows[-1][spec.key_field]
