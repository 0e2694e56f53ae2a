"""The tamper-evident audit log: a gap-free hash chain with signed Merkle checkpoints.

An entry exists exactly when the change it records does: :func:`record` writes it inside the
caller's transaction. Sequence numbers and hashes are given under the single ``audit_head``
row's lock, and where that happens depends on the database (:func:`sequenced_in_transaction`):

- On SQLite, in the caller's transaction, as the entry is written.
- On PostgreSQL, the entry is written unsequenced into ``audit_pending``, so a use case locks no
  row that other players' use cases lock too. The *integrator* (:func:`integrate`: one at a
  time, under a transaction-scoped advisory lock that a dead holder's session gives up) moves
  committed pending entries into ``audit_entries`` in batches, in the order they were written
  (a player's use cases commit one after another under the player's row lock, so that is the
  player's order), with the same hashes and checkpoints (every ``CHECKPOINT_EVERY`` entries)
  as on SQLite, one transaction per batch. It runs right after each use case that wrote
  entries commits (a try of the lock that never waits) and in each process's background loop
  (background.py), which picks up what a commit landing during another's batch, or a crash
  before the try, left behind.

Everything that reads the log reads ``audit_entries``, so what a check or a proof proves is the
same on both; what needs every committed entry (the whole check, exports, checkpoints signed
on demand) integrates first (:func:`flush`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import time as clock
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Annotated
from typing import Any
from typing import Final
from typing import TypeVar
from typing import cast

from pydantic import Field
from sqlalchemy import Connection
from sqlalchemy import Row
from sqlalchemy import Select
from sqlalchemy import String
from sqlalchemy import Table
from sqlalchemy import bindparam
from sqlalchemy import cast as sql_cast
from sqlalchemy import delete
from sqlalchemy import event
from sqlalchemy import func
from sqlalchemy import insert
from sqlalchemy import literal
from sqlalchemy import or_
from sqlalchemy import select
from sqlalchemy import tuple_
from sqlalchemy import union_all
from sqlalchemy import update
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session
from sqlalchemy.orm import SessionTransaction

from ..core import anchors
from ..core import audit_chain
from ..core import fairness
from ..core import merkle
from ..core.errors import Conflict
from ..core.errors import InvalidInput
from ..core.errors import NotFound
from ..core.marks import N_
from ..core.marks import Problem
from ..database import contains_ignoring_case
from ..models import AuditCheckpoint
from ..models import AuditEntry
from ..models import AuditHead
from ..models import AuditPending
from ..models import AuditTreeNode
from ..models import Round
from ..models import SeedPair
from ..models import SigningKey
from . import ranges
from . import results
from .context import context_of
from .results import LAST_PAGE
from .results import NEWEST
from .results import OLDEST
from .results import Checkpoint
from .results import Count
from .results import Hex64
from .results import Id
from .results import NextCursor
from .results import Order
from .results import check_page
from .text import storable
from .tx import in_transaction
from .tx import insert_ignoring_conflicts
from .tx import locked
from .tx import log_failure
from .tx import own_transactions
from .tx import read_only
from .tx import transactional

log = logging.getLogger(__name__)

# Built once (an append is on every money move's path) and run on the session's connection.
_HEAD = cast(Table, AuditHead.__table__)
_LOCK_HEAD = select(_HEAD.c.seq, _HEAD.c.hash).where(_HEAD.c.id == 1).with_for_update()
_NEW_ENTRY = insert(cast(Table, AuditEntry.__table__))
_MOVE_HEAD = (
    update(_HEAD)
    .where(_HEAD.c.id == 1)
    .values(seq=bindparam("next_seq"), hash=bindparam("next_hash"))
)
_PENDING = cast(Table, AuditPending.__table__)
_NEW_PENDING = insert(_PENDING).returning(_PENDING.c.id)
#: The integrator's first statement: try its lock, and if it got it, lock and read the head.
#: One row (the lock got) or none (another integrator holds it; or no head yet). The lock is
#: tried before the head's row is locked, so a busy integrator is never waited for.
_TRY_LOCK_AND_HEAD = (
    select(_HEAD.c.seq, _HEAD.c.hash)
    .where(_HEAD.c.id == 1, func.pg_try_advisory_xact_lock(bindparam("key")))
    .with_for_update()
)
_ANY_PENDING = select(_PENDING.c.id).limit(1)

#: Pending entries the integrator sequences per transaction.
BATCH = 500
#: The integrator's advisory lock: one key for the whole database.
INTEGRATOR_LOCK = int.from_bytes(
    hashlib.sha256(b"sota_casino.audit.integrator").digest()[:8], "big", signed=True
)
#: How a use case that just committed and met another integrator holding the lock looks again
#: (seconds between looks); past them the background loop takes its entries.
AFTER_COMMIT_LOOKS = (0.002, 0.004, 0.008, 0.016)
#: ``session.info`` keys: the last pending id written in the open transaction, and once that
#: transaction has committed.
_WROTE = "sota_casino.audit.wrote"
_COMMITTED = "sota_casino.audit.committed"


@dataclass(frozen=True, slots=True)
class EntrySpec:
    """One entry to append: who did what to what, with its data."""

    actor: str | None
    action: str
    subject: str | None = None
    data: dict[str, Any] | None = None


def sequenced_in_transaction(session: Session) -> bool:
    """Whether entries are sequenced in the use case's own transaction (SQLite).

    SQLite has one writer at a time: a use case's ``BEGIN IMMEDIATE`` already holds every other
    off, so taking the head there adds no wait, while a separate integration would add a
    write transaction per use case. On PostgreSQL the head would be the one row every round
    locks until its commit; there the integrator sequences.
    """
    return session.get_bind().dialect.name != "postgresql"


@in_transaction
def record(
    session: Session,
    *,
    actor: str | None,
    action: str,
    subject: str | None = None,
    data: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> int | None:
    """Write one entry inside the caller's transaction; return its sequence number, or
    ``None`` where the integrator gives it one after the commit (PostgreSQL)."""
    seqs = record_all(session, [EntrySpec(actor, action, subject, data)], now=now)
    return None if seqs is None else seqs[-1]


@in_transaction
def record_all(
    session: Session, specs: Sequence[EntrySpec], *, now: datetime | None = None
) -> list[int] | None:
    """Write entries, in order, inside the caller's transaction; return their sequence numbers
    (``None`` where the integrator sequences them after the commit).

    On PostgreSQL one statement however many (into ``audit_pending``); on SQLite three: lock
    the head, insert the entries, move the head. A use case writes its entries last, so on
    SQLite the head's lock is held only until its commit.
    """
    written = [
        {
            "time": fairness.format_time(now or datetime.now(UTC)),
            "actor": spec.actor,
            "action": spec.action,
            "subject": spec.subject,
            "data": spec.data or {},
        }
        for spec in specs
    ]
    if sequenced_in_transaction(session):
        return _append(session, written)
    pending = [row | {"data": fairness.canonical_json(row["data"]).decode()} for row in written]
    ids = session.connection().execute(_NEW_PENDING, pending).scalars().all()
    session.info[_WROTE] = max(ids)
    return None


@in_transaction
def _locked_head(session: Session) -> tuple[int, str]:
    """Lock the head's row and return its sequence number and hash (created on first use)."""
    connection = session.connection()
    head = connection.execute(_LOCK_HEAD).first()
    if head is None:
        insert_ignoring_conflicts(
            session, AuditHead, {"id": 1, "seq": 0, "hash": audit_chain.GENESIS_HASH}
        )
        head = connection.execute(_LOCK_HEAD).one()
    return head.seq, head.hash


@in_transaction
def _append(
    session: Session, written: Sequence[dict[str, Any]], head: tuple[int, str] | None = None
) -> list[int]:
    """Give entries (``data`` a dict) the next sequence numbers and their hashes, insert them,
    move the head and sign the checkpoints due; the one place the chain grows. ``head`` is the
    head as the caller already locked it (else it is locked here)."""
    connection = session.connection()
    seq, prev_hash = head or _locked_head(session)
    rows = []
    for entry in written:
        seq += 1
        digest = audit_chain.entry_hash(prev_hash, {"seq": seq, **entry})
        rows.append(
            entry
            | {
                "seq": seq,
                "data": fairness.canonical_json(entry["data"]).decode(),
                "prev_hash": prev_hash,
                "hash": digest,
            }
        )
        prev_hash = digest
    connection.execute(_NEW_ENTRY, rows)
    connection.execute(_MOVE_HEAD, {"next_seq": seq, "next_hash": prev_hash})
    every = context_of(session).setting("CHECKPOINT_EVERY")
    due = [row["seq"] for row in rows if every and row["seq"] % every == 0]
    if due and not _behind(session):
        for size in due:
            _sign_checkpoint(session, size)
    return [row["seq"] for row in rows]


#: How long ago the oldest entry still waiting for the integrator may have been written for a
#: checkpoint to be signed. One dated now without an entry that has waited long would put its
#: round past the scheme's bound (``core.anchors.ANCHOR_BOUND``, an hour) as if it had been left
#: out of the log: an integrator this far behind (stopped, then catching up) signs none until
#: it has caught up, and the players' rounds stay "not yet anchored" meanwhile.
BEHIND: Final = timedelta(minutes=10)
_OLDEST_PENDING = select(_PENDING.c.time).order_by(_PENDING.c.id).limit(1)


@in_transaction
def _behind(session: Session) -> bool:
    """Whether an entry written over :data:`BEHIND` ago still waits for the integrator."""
    oldest = session.scalar(_OLDEST_PENDING)
    return oldest is not None and fairness.parse_time(oldest) < datetime.now(UTC) - BEHIND


# --- the integrator (PostgreSQL) -------------------------------------------------------------


@transactional
def _integrate_batch(session: Session, wait: bool) -> int | None:
    """Sequence up to :data:`BATCH` committed pending entries, oldest written first; return how
    many (``None``: another integrator holds the lock and ``wait`` is false)."""
    connection = session.connection()
    head: tuple[int, str] | None = None
    if wait:
        connection.execute(select(func.pg_advisory_xact_lock(INTEGRATOR_LOCK)))
    else:
        found = connection.execute(_TRY_LOCK_AND_HEAD, {"key": INTEGRATOR_LOCK}).first()
        if found is not None:
            head = found.seq, found.hash
        elif not connection.scalar(select(func.pg_try_advisory_xact_lock(INTEGRATOR_LOCK))):
            return None  # another integrator holds the lock (else: no head row yet)
    return _take_batch(session, head)


#: What :func:`_take_if_pending` says when the entry looked for has been sequenced meanwhile.
_GONE = -1


@transactional
def _take_if_pending(session: Session, pending_id: int) -> int | None:
    """If entry ``pending_id`` still waits, try the lock and, got, sequence a batch; return
    how many (``None``: the lock is taken; :data:`_GONE`: the entry has been sequenced). One
    statement when another integrator is at it."""
    look = select(func.pg_try_advisory_xact_lock(INTEGRATOR_LOCK)).where(
        _PENDING.c.id == pending_id
    )
    got = session.connection().execute(look).first()
    if got is None:
        return _GONE
    return _take_batch(session, None) if got[0] else None


@in_transaction
def _take_batch(session: Session, head: tuple[int, str] | None) -> int:
    """Under the integrator's lock: take up to :data:`BATCH` committed pending entries, oldest
    written first, and append them; return how many."""
    connection = session.connection()
    # Taken and read in one statement; the lock keeps any other integrator from them, and a
    # failure later in the batch rolls the delete back with the rest.
    oldest = select(_PENDING.c.id).order_by(_PENDING.c.id).limit(BATCH).scalar_subquery()
    taken = connection.execute(
        delete(_PENDING).where(_PENDING.c.id.in_(oldest)).returning(*_PENDING.c)
    ).all()
    if not taken:
        return 0
    _append(
        session,
        [
            {
                "time": row.time,
                "actor": row.actor,
                "action": row.action,
                "subject": row.subject,
                "data": json.loads(row.data),
            }
            for row in sorted(taken, key=lambda row: row.id)
        ],
        head,
    )
    return len(taken)


def _integrate(session: Session, *, wait: bool) -> tuple[int, bool]:
    """Sequence batches until none is left; return how many, and whether this call found the
    pending table empty (``False``: it met another integrator holding the lock)."""
    total = 0
    while True:
        done = _integrate_batch(session, wait)
        if done is None:
            return total, False
        total += done
        if done < BATCH:
            return total, True


@own_transactions
def integrate(session: Session) -> int:
    """Sequence the committed pending entries now, unless another integrator is at it (this
    never waits for it); return how many this call sequenced. Nothing to do on SQLite."""
    if sequenced_in_transaction(session):
        return 0
    return _integrate(session, wait=False)[0]


@own_transactions
def flush(session: Session) -> int:
    """Sequence every entry committed before this call, waiting for another integrator if
    one is at it: what a reader that needs the whole log calls first."""
    if sequenced_in_transaction(session):
        return 0
    return _integrate(session, wait=True)[0]


@read_only
def has_pending(session: Session, after: int = 0) -> bool:
    """Whether a committed entry waits for the integrator (with an id above ``after``)."""
    return session.execute(_ANY_PENDING.where(_PENDING.c.id > after)).first() is not None


def _integrate_after_commit(committed: Session, last_id: int) -> None:
    """Sequence what a use case just committed, on a session of its own (the use case's
    connection is back in the pool). If another integrator holds the lock it may have read its
    batch before this commit landed: look again a few times, shortly, and leave the rest to the
    background loop. Never raises: the entries are committed, and wait if need be."""
    worker = Session(
        bind=committed.get_bind(),
        info={"context": context_of(committed)},
        expire_on_commit=False,
    )
    try:
        if _integrate(worker, wait=False)[1]:
            return
        for pause in AFTER_COMMIT_LOOKS:
            clock.sleep(pause)
            done = _take_if_pending(worker, last_id)
            if done is None:
                continue  # still waiting, and another integrator is at it
            if done == BATCH:
                _integrate(worker, wait=False)  # more may wait behind a full batch
            return
    except Exception as exc:  # the entries stay pending; the background loop takes them
        log_failure(log, "audit: integrating after a commit failed; the background loop will", exc)
    finally:
        worker.close()


@event.listens_for(Session, "after_commit")
def _note_commit(session: Session) -> None:
    if session.get_nested_transaction() is None and _WROTE in session.info:
        session.info[_COMMITTED] = session.info.pop(_WROTE)


@event.listens_for(Session, "after_transaction_end")
def _integrate_committed(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is not None:
        return  # a savepoint: its entries commit or not with the whole transaction
    session.info.pop(_WROTE, None)  # written in a transaction that rolled back: gone with it
    last_id = session.info.pop(_COMMITTED, None)
    if last_id is not None and context_of(session).integrator_pid != os.getpid():
        _integrate_after_commit(session, last_id)


@in_transaction
def data_of_recent(
    session: Session,
    action: str,
    since: str,
    *,
    actor: str | None = None,
    subject: str | None = None,
) -> list[str]:
    """The data (canonical JSON) of every entry of ``action`` written at or after ``since``,
    sequenced or still pending (the caller's own included), by actor or subject: one statement,
    so one snapshot, which counts an entry the integrator is moving exactly once."""
    parts = []
    for table in (_ENTRIES, _PENDING):
        part = select(table.c.data).where(table.c.action == action, table.c.time >= since)
        if actor is not None:
            part = part.where(table.c.actor == actor)
        if subject is not None:
            part = part.where(table.c.subject == subject)
        parts.append(part)
    return list(session.scalars(select(union_all(*parts).subquery().c.data)))


@in_transaction
def seq_of(session: Session, action: str, subject: str | None, time: str) -> int | None:
    """The sequence number of the entry of ``action`` and ``subject`` written at ``time``, once
    the integrator has given it one (``None`` before)."""
    query = select(AuditEntry.seq).where(
        AuditEntry.time == time, AuditEntry.action == action, AuditEntry.subject == subject
    )
    return session.scalar(query.order_by(AuditEntry.seq).limit(1))


def entry_dict(row: AuditEntry | Row[Any]) -> results.AuditEntry:
    """Return an entry (an ORM object or a plain row) as the export and the API show it."""
    return {
        "seq": row.seq,
        "time": row.time,
        "actor": row.actor,
        "action": row.action,
        "subject": row.subject,
        "data": json.loads(row.data),
        "prev_hash": row.prev_hash,
        "hash": row.hash,
    }


def _time_filter(value: str | None, name: str) -> str | None:
    """A time bound as the log writes its times (text, so compared as text)."""
    moment = results.filter_time(value, name)
    return None if moment is None else fairness.format_time(moment)


@dataclass(frozen=True, slots=True)
class AuditPage:
    """A page of the log; ``next_after_seq`` (oldest first) or ``next_before_seq`` continues it."""

    entries: list[results.AuditEntry]
    order: Order
    next_after_seq: Annotated[
        Id | None, Field(description=f"null when the page runs newest first, and {LAST_PAGE}")
    ]
    next_before_seq: Annotated[
        Id | None, Field(description=f"null when the page runs oldest first, and {LAST_PAGE}")
    ]


@read_only
def entries(
    session: Session,
    *,
    after_seq: int | None = None,
    before_seq: int | None = None,
    from_seq: int | None = None,
    order: str | None = None,
    limit: int = 50,
    action: str | None = None,
    actor: str | None = None,
    subject: str | None = None,
    since: str | None = None,
    until: str | None = None,
    text: str | None = None,
) -> AuditPage:
    """Return a page of the entries that match every filter given, newest first by default.

    Paging is by sequence number (a keyset, so any page costs the same however deep): newest
    first continues with ``before_seq``, oldest first (``order="oldest"``, or any
    ``after_seq``) with ``after_seq``; ``from_seq`` jumps to an entry (included), and
    ``since``/``until`` to a time. The page says where the next one starts.
    """
    order = order or (OLDEST if after_seq is not None else NEWEST)
    check_page(order, limit)
    # The page's sequence numbers are found first, from the indexes alone ((actor, seq),
    # (subject, seq), (action, seq), the primary key): a filter whose entries all lie far from
    # the end read from would otherwise be looked for entry by entry along the whole log.
    query = _filtered(
        session.connection(),
        select(AuditEntry.seq),
        order == OLDEST,
        action=action,
        actor=actor,
        subject=subject,
        since=since,
        until=until,
        text=text,
    )
    # Free text matches no index: it is searched a window of entries at a time, so a rare word
    # costs the same bounded scan per page however long the log (the page says where the
    # search goes on).
    window = TEXT_WINDOW if text else None
    if order == OLDEST:
        low = max(after_seq or 0, (from_seq or 1) - 1)
        query = query.where(AuditEntry.seq > low)
        if window:
            # No further than the largest id: a cursor near it would overflow the database's
            # integer.
            query = query.where(AuditEntry.seq <= min(low + window, results.MAX_ID))
        query = query.order_by(AuditEntry.seq)
    else:
        given = [
            b for b in (None if before_seq is None else before_seq - 1, from_seq) if b is not None
        ]
        high = min(given) if given else None
        if high is not None:
            query = query.where(AuditEntry.seq <= high)
        if window:
            # From the log's end at most: a cursor past it would read empty windows down to it.
            size = log_size(session)
            high = size if high is None else min(high, size)
            query = query.where(AuditEntry.seq > high - window)
        query = query.order_by(AuditEntry.seq.desc())
    found = query.limit(limit + 1).scalar_subquery()
    ordered = AuditEntry.seq if order == OLDEST else AuditEntry.seq.desc()
    paged = select(AuditEntry).where(AuditEntry.seq.in_(found)).order_by(ordered)
    rows = session.scalars(paged).all()
    page = [entry_dict(row) for row in rows[:limit]]
    more = len(rows) > limit
    next_after = page[-1]["seq"] if more and order == OLDEST else None
    next_before = page[-1]["seq"] if more and order == NEWEST else None
    if window and not more:
        if order == OLDEST and low + window < log_size(session):
            next_after = low + window
        elif order == NEWEST and high is not None and high - window > 0:
            next_before = high - window + 1
    return AuditPage(page, order, next_after, next_before)


#: Entries a free-text search reads per page.
TEXT_WINDOW = 100_000


def _filtered(
    connection: Connection,
    query: Any,
    oldest: bool,
    /,
    *,
    action: str | None = None,
    actor: str | None = None,
    subject: str | None = None,
    since: str | None = None,
    until: str | None = None,
    text: str | None = None,
) -> Any:
    """Narrow an entries query, read ``oldest`` first or newest, to the filters given (each
    checked, a clear 422 if bad)."""
    for name, value in (("action", action), ("actor", actor), ("subject", subject), ("text", text)):
        if value:
            storable(value, name)
    if action:
        query = query.where(AuditEntry.action.in_(_actions_starting(connection, action)))
    if actor:
        query = query.where(AuditEntry.actor == actor)
    if subject:
        query = query.where(AuditEntry.subject == subject)
    query = query.where(
        *ranges.within(
            connection,
            AuditEntry.seq,
            AuditEntry.time,
            _time_filter(since, "since"),
            _time_filter(until, "until"),
            oldest=oldest,
        )
    )
    if text:
        # As typed, letter case aside (as a search box finds words): the log's own words hold
        # underscores (client_seed, seed_pair.rotated), which a bare LIKE would read as any
        # character, and dropping them would find nothing.
        columns = (AuditEntry.data, AuditEntry.action, AuditEntry.subject, AuditEntry.actor)
        dialect = connection.dialect.name
        query = query.where(or_(*(contains_ignoring_case(c, text, dialect) for c in columns)))
    return query


def _actions_starting(connection: Connection, prefix: str) -> list[str]:
    """The log's actions that begin with ``prefix``: a prefix's ``LIKE`` matches no index (on
    PostgreSQL under any collation but "C"), the actions themselves do. The distinct actions are
    walked one index probe each (a few dozen), in the database's own order and ``LIKE``."""
    walked = select(func.min(AuditEntry.action).label("action")).cte("actions", recursive=True)
    after = (
        select(AuditEntry.action)
        .where(AuditEntry.action > walked.c.action)
        .order_by(AuditEntry.action)
        .limit(1)
        .scalar_subquery()
    )
    walked = walked.union_all(select(after).where(walked.c.action.is_not(None)))
    found = select(walked.c.action).where(walked.c.action.startswith(prefix, autoescape=True))
    return list(connection.scalars(found))


@own_transactions
def iter_entries(session: Session, /, **filters: str | None) -> Iterator[results.AuditEntry]:
    """Return every entry matching the filters, oldest first, read a chunk per short read
    (exports). The filters are checked at once: a download cannot refuse one once it started.

    :raises InvalidInput: for a bad filter, before any entry is read.
    """
    filtered = _read_chunk(
        session, lambda connection: _filtered(connection, select(_ENTRIES), True, **filters)
    )
    flush(session)
    return _entries_of(session, filtered)


def _entries_of(session: Session, filtered: Select[Any]) -> Iterator[results.AuditEntry]:
    after = 0
    while True:
        query = filtered.where(_ENTRIES.c.seq > after).order_by(_ENTRIES.c.seq).limit(CHUNK)
        rows = _read_chunk(session, functools.partial(_all_rows, query))
        yield from (entry_dict(row) for row in rows)
        if len(rows) < CHUNK:
            return
        after = rows[-1].seq


#: Entries read at a time by whatever reads the whole log: memory stays flat in the log's size.
CHUNK = 2000
#: Tree nodes are stored from this height up: a proof hashes at most a block of 2**6 leaves.
TREE_MIN_HEIGHT = 6

_ENTRIES = cast(Table, AuditEntry.__table__)
_CHECKPOINTS = cast(Table, AuditCheckpoint.__table__)


T = TypeVar("T")


@read_only
def _read_chunk(session: Session, read: Callable[[Connection], T]) -> T:
    """Read one chunk of a long read (the whole check, an export) as a read-only use case of
    its own: a short transaction that waits for no writer (on SQLite a deferred ``BEGIN``, not
    the write lock), tried again on a fresh connection when the database dropped the one it
    had. ``read`` reads plain rows from the transaction's connection: nothing of a long read
    stays in the session."""
    return read(session.connection())


def _all_rows(query: Select[Any], connection: Connection) -> list[Row[Any]]:
    return list(connection.execute(query).all())


def _checkpoint_rows(
    connection: Connection, *, above: int = 0, upto: int | None = None, limit: int | None = None
) -> list[Row[Any]]:
    """The checkpoints over more than ``above`` entries (up to ``upto``), smallest first.

    Plain rows, like entries: nothing of a long read stays in a session.
    """
    query = select(_CHECKPOINTS).where(_CHECKPOINTS.c.size > above)
    if upto is not None:
        query = query.where(_CHECKPOINTS.c.size <= upto)
    query = query.order_by(_CHECKPOINTS.c.size)
    return list(connection.execute(query if limit is None else query.limit(limit)))


def _leaves(session: Session, start: int, end: int) -> list[bytes]:
    """The leaf data (entry hashes) of leaves ``[start, end)``: entries ``start + 1 .. end``."""
    query = (
        select(AuditEntry.hash)
        .where(AuditEntry.seq > start, AuditEntry.seq <= end)
        .order_by(AuditEntry.seq)
    )
    return [bytes.fromhex(h) for h in session.scalars(query)]


@in_transaction
def log_size(session: Session) -> int:
    return session.scalar(select(func.max(AuditEntry.seq))) or 0


@read_only
def current_size(session: Session) -> int:
    """How many entries the log holds now (a progress bar's length)."""
    return log_size(session)


def _checkpoint_dict(row: AuditCheckpoint | Row[Any]) -> Checkpoint:
    document = audit_chain.checkpoint_document(row.size, row.root, row.time)
    return {"document": document, "signature": row.signature, "public_key_hex": row.public_key_hex}


@in_transaction
def latest_checkpoint(session: Session) -> Checkpoint | None:
    """Return the latest signed checkpoint (inside any transaction), or ``None``."""
    row = _latest_checkpoint(session)
    return _checkpoint_dict(row) if row else None


@read_only
def checkpoint_size(session: Session) -> int:
    """Return how many entries the latest signed checkpoint covers (0 before the first): only
    these have an inclusion proof yet."""
    size = session.scalar(select(func.max(AuditCheckpoint.size)))
    return int(size or 0)


def _latest_checkpoint(session: Session) -> AuditCheckpoint | None:
    return session.scalar(select(AuditCheckpoint).order_by(AuditCheckpoint.size.desc()).limit(1))


def _sign_checkpoint(session: Session, size: int) -> Checkpoint:
    """Sign a checkpoint over the first ``size`` entries, extending the latest checkpoint's tree.

    The latest checkpoint keeps its tree's frontier, so only the entries after it are hashed:
    the new tree extends the old one by construction, which is what consistency asks. (Entries
    under an earlier checkpoint are append-only in the database; ``flask audit verify`` checks
    the whole log and every checkpoint from scratch.)
    """
    latest = _latest_checkpoint(session)
    if latest is not None and latest.size == size:
        return _checkpoint_dict(latest)
    if latest is not None and latest.size > size:
        raise Conflict(f"the log already has a checkpoint over {latest.size} entries")
    start = _frontier_of(session, latest)
    hashes = session.scalars(
        select(AuditEntry.hash)
        .where(AuditEntry.seq > start.size, AuditEntry.seq <= size)
        .order_by(AuditEntry.seq)
    ).all()
    if start.size + len(hashes) != size:
        raise Conflict(f"the log holds {start.size + len(hashes)} entries, not {size}")
    frontier = start.extended(bytes.fromhex(h) for h in hashes)
    ctx = context_of(session)
    time = fairness.format_time(datetime.now(UTC))
    document = audit_chain.checkpoint_document(size, frontier.root().hex(), time)
    row = AuditCheckpoint(
        size=size,
        root=document["root"],
        time=time,
        signature=fairness.sign(ctx.signing_key, document),
        public_key_hex=ctx.public_key_hex,
        frontier=frontier.to_hex(),
    )
    session.add(row)
    session.flush()
    return _checkpoint_dict(row)


def _frontier_of(session: Session, checkpoint: AuditCheckpoint | None) -> merkle.Frontier:
    """Return the tree a checkpoint signed, as a frontier to extend (empty for none)."""
    if checkpoint is None:
        return merkle.Frontier(0, ())
    if checkpoint.frontier is not None:
        try:
            frontier = merkle.Frontier.from_hex(checkpoint.size, checkpoint.frontier)
        except ValueError:
            frontier = None
        if frontier is not None and frontier.root().hex() == checkpoint.root:
            return frontier
        raise Conflict("the latest checkpoint's stored tree does not match its root; not signing")
    # A checkpoint signed before frontiers were kept: hash its entries once.
    frontier = merkle.Frontier.of(_leaves(session, 0, checkpoint.size))
    if frontier.root().hex() != checkpoint.root:
        raise Conflict("the log's first entries no longer match the latest checkpoint; not signing")
    return frontier


@own_transactions
def checkpoint(session: Session, *, actor: str | None = "system") -> Checkpoint:
    """Sign a checkpoint over the whole log now (audited), and return it: every entry
    committed before the call is sequenced first, so the checkpoint covers it."""
    flush(session)
    return _checkpoint_now(session, actor)


@transactional
def _checkpoint_now(session: Session, actor: str | None) -> Checkpoint:
    head = session.scalar(locked(select(AuditHead).where(AuditHead.id == 1)))
    size = head.seq if head else 0
    if size == 0:
        raise Conflict(N_("the audit log is empty; nothing to checkpoint"))
    signed = _sign_checkpoint(session, size)
    record(
        session,
        actor=actor,
        action="audit.checkpoint",
        subject=f"checkpoint:{size}",
        data={"size": size, "root": signed["document"]["root"]},
    )
    return signed


@dataclass(frozen=True, slots=True)
class CheckpointList:
    checkpoints: list[Checkpoint]
    order: Order
    next_cursor: NextCursor


@read_only
def checkpoints(
    session: Session, *, order: str = NEWEST, cursor: int | None = None, limit: int = 50
) -> CheckpointList:
    """Return a page of signed checkpoints, newest first by default; ``cursor`` is the size
    the next page continues from (exclusive), ``next_cursor`` says where that is."""
    check_page(order, limit)
    query = select(_CHECKPOINTS)
    if order == OLDEST:
        query = query.where(_CHECKPOINTS.c.size > (cursor or 0)).order_by(_CHECKPOINTS.c.size)
    else:
        if cursor is not None:
            query = query.where(_CHECKPOINTS.c.size < cursor)
        query = query.order_by(_CHECKPOINTS.c.size.desc())
    rows = session.execute(query.limit(limit + 1)).all()
    return CheckpointList(
        checkpoints=[_checkpoint_dict(row) for row in rows[:limit]],
        order=order,
        next_cursor=rows[limit - 1].size if len(rows) > limit else None,
    )


# --- checkpoints on demand: every entry gets one signed after it soon, and no more often -------


@in_transaction
def checkpoint_at(session: Session, size: int) -> Checkpoint | None:
    """Return the signed checkpoint over exactly ``size`` entries, or ``None``."""
    row = session.scalar(select(AuditCheckpoint).where(AuditCheckpoint.size == size))
    return _checkpoint_dict(row) if row else None


@in_transaction
def checkpoint_wait(session: Session) -> float:
    """Return how many seconds until a checkpoint may be signed on demand (0: now).

    On-demand signing is bounded for the whole service, whoever asks: at most one checkpoint
    per ``CHECKPOINT_MIN_SECONDS``, and only over entries no checkpoint covers yet.
    """
    latest = _latest_checkpoint(session)
    if latest is None:
        return 0.0
    age = (datetime.now(UTC) - fairness.parse_time(latest.time)).total_seconds()
    return max(0.0, context_of(session).setting("CHECKPOINT_MIN_SECONDS") - age)


@read_only
def _checkpoint_due(session: Session) -> bool:
    latest = _latest_checkpoint(session)
    size = latest.size if latest else 0
    return log_size(session) > size and checkpoint_wait(session) == 0 and not _behind(session)


@transactional
def _sign_due(session: Session) -> Checkpoint | None:
    head = session.scalar(locked(select(AuditHead).where(AuditHead.id == 1)))
    latest = _latest_checkpoint(session)
    size = head.seq if head else 0
    if size <= (latest.size if latest else 0) or checkpoint_wait(session) > 0:
        return None  # another request signed it meanwhile
    return _sign_checkpoint(session, size)


@own_transactions
def sign_if_due(session: Session) -> Checkpoint | None:
    """Sign a checkpoint over the whole log if entries wait for one and the latest checkpoint
    is at least ``CHECKPOINT_MIN_SECONDS`` old, or at once if the latest was signed by a key
    this process no longer signs with (:func:`_sign_with_key_in_use`); return it (``None`` if
    none was due).

    Asked for by a player wanting proofs; the check is a read, so a request that finds nothing
    due takes no write lock. Not audited: it adds no entry, so asking never grows the log
    (but for the one entry a key's first checkpoint may need).
    """
    integrate(session)  # the asker's newest entries, if no other integrator is at them
    if _signed_by_a_replaced_key(session):
        return sign_after_a_key_change(session)
    return _sign_due(session) if _checkpoint_due(session) else None


@own_transactions
def sign_after_a_key_change(session: Session) -> Checkpoint | None:
    """Sign a checkpoint over the whole log with the key in use, if the latest was signed by a
    key this process no longer signs with (right after ``flask keys rotate`` and a restart);
    return it (``None``: none was needed). An export of the log asks first, so that it
    verifies pinned to the key the service shows at once."""
    if not _signed_by_a_replaced_key(session):
        return None
    flush(session)  # the key change, if the command that made it left it pending
    return _sign_with_key_in_use(session)


@read_only
def _signed_by_a_replaced_key(session: Session) -> bool:
    """Whether the latest checkpoint was signed by another key than this process's, which is
    the key in use (registered, not retired): a process not yet restarted after a key change
    signs with the retired key, and must not take the log back to it."""
    latest = _latest_checkpoint(session)
    return (
        latest is not None
        and latest.public_key_hex != context_of(session).public_key_hex
        and signs_with_the_key_in_use(session)
    )


@in_transaction
def signs_with_the_key_in_use(session: Session) -> bool:
    """Whether this process's key is registered and not retired."""
    in_use = select(SigningKey.id).where(
        SigningKey.public_key_hex == context_of(session).public_key_hex,
        SigningKey.retired_at.is_(None),
    )
    return session.scalar(in_use) is not None


@transactional
def _sign_with_key_in_use(session: Session) -> Checkpoint | None:
    """Sign a checkpoint over the whole log with the key in use, at once, whatever
    ``CHECKPOINT_MIN_SECONDS`` says (once per key change: then the latest is this key's).

    Everything is proved into the latest checkpoint, and a verifier that trusts only the new
    key accepts the old key's documents only through a checkpoint of the new key over the key
    change: until one is signed, every bundle fails for it. When nothing was logged since the
    latest checkpoint, the key's taking over is logged (``key.in_use``), so that there is
    something to sign over. Under the head's lock: several processes started with the new key
    at once sign one checkpoint, and log at most one entry.
    """
    head = session.scalar(locked(select(AuditHead).where(AuditHead.id == 1)))
    latest = _latest_checkpoint(session)
    key = context_of(session).public_key_hex
    if head is None or latest is None or latest.public_key_hex == key:
        return None  # another process signed it meanwhile
    if not signs_with_the_key_in_use(session):
        return None  # changed meanwhile: its key.in_use would follow the key.changed
    size = head.seq
    if size == latest.size:
        taking_over = {
            "time": fairness.format_time(datetime.now(UTC)),
            "actor": "system",
            "action": fairness.KEY_IN_USE,
            "subject": f"key:{key[:16]}",
            "data": {"public_key_hex": key},
        }
        # Appended here, under the head's lock this transaction holds (on PostgreSQL too,
        # where the integrator appends under the same lock), so the checkpoint covers it.
        (size,) = _append(session, [taking_over], (head.seq, head.hash))
    return _sign_checkpoint(session, size)


@in_transaction
def inclusion_proofs(session: Session, seqs: Collection[int], size: int) -> dict[int, list[str]]:
    """Return the inclusion proof of each entry of ``seqs`` in the checkpoint over ``size``.

    One read of the stored tree for all of them (the nodes they share are read once); each
    proof is checked against the signed root before it is handed out.

    :raises Conflict: if the log or its stored tree no longer proves into the checkpoint.
    """
    row = session.scalar(select(AuditCheckpoint).where(AuditCheckpoint.size == size))
    wanted = sorted(seqs)
    if row is None or any(not 1 <= seq <= size for seq in wanted):
        raise NotFound(f"no checkpoint over {size} entries covering entries {wanted}")
    ranges = [merkle.inclusion_ranges(seq - 1, size) for seq in wanted]
    roots = _stored_tree(session).roots([r for group in ranges for r in group])
    hashes: dict[int, str] = {}
    for i in range(0, len(wanted), 200):  # a bounded number of parameters per query
        query = select(AuditEntry.seq, AuditEntry.hash).where(
            AuditEntry.seq.in_(wanted[i : i + 200])
        )
        hashes.update((seq, digest) for seq, digest in session.execute(query))
    proofs: dict[int, list[str]] = {}
    at = 0
    for seq, group in zip(wanted, ranges, strict=True):
        proof, at = roots[at : at + len(group)], at + len(group)
        leaf = hashes.get(seq)
        if leaf is None or not merkle.verify_inclusion(
            seq - 1, size, bytes.fromhex(leaf), proof, bytes.fromhex(row.root)
        ):
            raise Conflict(
                f"entry {seq} does not prove into the checkpoint over {size} entries: the log "
                "or its stored tree was changed; run a whole check"
            )
        proofs[seq] = [node.hex() for node in proof]
    return proofs


# --- checking the log: whole, or from where the last check stopped ----------------------------


@dataclass(frozen=True, slots=True)
class ChainState:
    """The first ``size`` entries as a check found them: all a later check resumes from."""

    size: int
    head_hash: str  # the hash of entry ``size``
    frontier: merkle.Frontier  # the Merkle tree of the ``size`` entries
    checkpoint: int  # the size of the latest checkpoint checked (0 for none)
    checkpoint_time: str | None
    # The pairs committed and not yet revealed, with their rounds: a reveal must count them
    # and follow their settlements, which may lie any number of chunks before it.
    pairs: anchors.PairsInPlay

    @classmethod
    def empty(cls) -> ChainState:
        return cls(
            0, audit_chain.GENESIS_HASH, merkle.Frontier(0, ()), 0, None, anchors.PairsInPlay()
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "head_hash": self.head_hash,
            "frontier": self.frontier.to_hex(),
            "checkpoint": self.checkpoint,
            "checkpoint_time": self.checkpoint_time,
            "pairs": self.pairs.to_json(),
        }

    @classmethod
    def from_json(cls, stored: Any) -> ChainState | None:
        """Read a stored state back; ``None`` for one that is missing or malformed (or stored
        before the pairs in play were kept: the whole log is then read again)."""
        try:
            return cls(
                int(stored["size"]),
                str(stored["head_hash"]),
                merkle.Frontier.from_hex(int(stored["size"]), str(stored["frontier"])),
                int(stored["checkpoint"]),
                stored["checkpoint_time"],
                anchors.PairsInPlay.from_json(stored["pairs"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


@dataclass(frozen=True, slots=True)
class ChainCheck:
    """What one check found: ``state`` is where the next one resumes (``None`` if it failed);
    ``found`` is its ``reason`` as a message id and params, where it has one."""

    ok: bool
    size: int
    first_bad_seq: int | None
    reason: str | None
    checked: int  # entries read by this check
    state: ChainState | None
    found: Problem | None = None


@in_transaction
def still_heads_the_chain(session: Session, state: ChainState) -> bool:
    """Whether the last entry a check reached is still there, unchanged (a log rebuilt is not)."""
    if state.size == 0:
        return True
    stored = session.scalar(select(AuditEntry.hash).where(AuditEntry.seq == state.size))
    return stored == state.head_hash


@own_transactions
def check_chain(
    session: Session,
    state: ChainState | None = None,
    *,
    progress: Callable[[int], None] | None = None,
) -> ChainCheck:
    """Check the entries and checkpoints after ``state`` (the whole log for ``None``).

    Reads a chunk of entries at a time, each in its own short read, and keeps only the tree's
    frontier: time grows with what is read, memory does not. Every checkpoint reached must
    be signed by a service key, carry the root of the entries so far (so each extends the one
    before, which is what consistency asks), and not be dated before the one it follows; a
    checkpoint beyond the log's last entry means entries were cut off its end. No entry may
    take a key an earlier one took (:func:`anchors.key_problem`: a pair or a round logged
    again); the earlier entries of a chunk's subjects are looked up, not kept. No pair may be
    committed to another pair's server seed (:func:`anchors.seed_reused`), nor its row hold
    another commitment or server seed than its commitment entry logged
    (:func:`_row_rewritten`), nor its reveal another server seed
    (:func:`anchors.other_seed_revealed`); the pairs committed to a chunk's commitments, the
    rows of the pairs it commits and the commitment entries of the pairs it reveals are looked
    up too. Only the pairs still open are kept, with their rounds, for their reveals to count
    them and follow their settlements.

    :param progress: called with the size reached after each chunk.
    """
    start = state or ChainState.empty()
    keys = _service_keys(session)
    state = start
    while True:
        rows, entries, taken, committed, held, commitments = _read_chunk(
            session, functools.partial(_chain_chunk, state)
        )
        end = state.size + len(entries)
        report = audit_chain.verify_chain(
            entries, start_seq=state.size + 1, prev_hash=state.head_hash
        )
        if not report.ok:
            checked = end - start.size
            return ChainCheck(
                False, end, report.first_bad_seq, report.reason, checked, None, report.found
            )
        pairs = state.pairs.copy()
        found = anchors.first_found(
            anchors.first_key_found(entries, taken, pairs),
            anchors.seed_reused(entries, committed),
            _row_rewritten(entries, held),
            anchors.other_seed_revealed(entries, commitments),
        )
        if found is not None:
            seq, contradiction = found
            checked = end - start.size
            return ChainCheck(False, end, seq, contradiction.text(), checked, None, contradiction)
        leaves = [bytes.fromhex(e["hash"]) for e in entries]
        frontier, time, covered = state.frontier, state.checkpoint_time, state.checkpoint
        for row in rows:
            if row.size > end:
                if len(entries) == CHUNK:
                    break  # the next chunk reaches it
                problem: Problem | None = audit_chain.next_checkpoint_beyond(row.size, end)
            else:
                frontier = frontier.extended(
                    leaves[frontier.size - state.size : row.size - state.size]
                )
                problem = audit_chain.next_checkpoint_problem(
                    _checkpoint_dict(row)["document"],
                    row.signature,
                    keys,
                    frontier.root().hex(),
                    None if time is None else {"size": covered, "time": time},
                )
            if problem is not None:
                return ChainCheck(False, end, None, problem.text(), end - start.size, None, problem)
            time, covered = row.time, row.size
        state = ChainState(
            end,
            entries[-1]["hash"] if entries else state.head_hash,
            frontier.extended(leaves[frontier.size - state.size :]),
            covered,
            time,
            pairs,
        )
        if progress is not None:
            progress(end)
        if len(entries) < CHUNK:
            return ChainCheck(True, end, None, None, end - start.size, state)


def _chain_chunk(
    state: ChainState, connection: Connection
) -> tuple[
    list[Row[Any]],
    list[results.AuditEntry],
    list[tuple[str, str, int]],
    anchors.Committed,
    Held,
    anchors.Commitments,
]:
    """The checkpoints and entries after ``state``, the keys earlier entries took, the pairs
    committed to the server seeds the entries commit to, what the database holds of the pairs
    they commit, and the commitment entries of the pairs they reveal: all in one read, so the
    rows are those of the entries read."""
    # Checkpoints first: their entries were committed with them, so the entries read next
    # include them (read the other way round, one signed in between would seem to be over
    # entries the log lacks).
    rows = _checkpoint_rows(connection, above=state.checkpoint, limit=CHUNK)
    entries = _entry_chunk(connection, state.size)
    taken = _keys_taken(connection, state.size, entries)
    committed = _pairs_committed_to(connection, entries)
    held = _rows_of_pairs(connection, entries)
    return rows, entries, taken, committed, held, _commitments_revealed(connection, entries)


@read_only
def _service_keys(session: Session) -> list[str]:
    """The current public key and every key it replaced: old checkpoints keep their signer."""
    known = session.scalars(select(SigningKey.public_key_hex)).all()
    return [context_of(session).public_key_hex, *known]


def _entry_chunk(connection: Connection, after_seq: int) -> list[results.AuditEntry]:
    query = select(_ENTRIES).where(_ENTRIES.c.seq > after_seq).order_by(_ENTRIES.c.seq)
    return [entry_dict(row) for row in connection.execute(query.limit(CHUNK))]


_FIRST_OF = (
    select(_ENTRIES.c.subject, _ENTRIES.c.action, func.min(_ENTRIES.c.seq))
    .where(_ENTRIES.c.seq <= bindparam("before"))
    .group_by(_ENTRIES.c.subject, _ENTRIES.c.action)
)
#: On PostgreSQL the subjects are one array parameter, the same statement for every chunk: a
#: list of a parameter per subject took three times as long to run (7 ms against 2 ms for the
#: 850 subjects of a chunk, at a million entries).
_FIRST_OF_ANY = _FIRST_OF.where(
    _ENTRIES.c.subject == func.any(bindparam("subjects", type_=postgresql.ARRAY(String)))
)
_FIRST_OF_IN = _FIRST_OF.where(_ENTRIES.c.subject.in_(bindparam("subjects", expanding=True)))
#: Subjects per statement elsewhere: under SQLite's oldest limit of 999 parameters.
_SUBJECTS_PER_QUERY = 500


def _keys_taken(
    connection: Connection, before: int, entries: Sequence[results.AuditEntry]
) -> list[tuple[str, str, int]]:
    """The keys that entries up to ``before`` took under the subjects of ``entries`` (the
    chunk after them): ``(subject, action, first seq)``, a few rows per subject, found by the
    index on subject, so a check's memory does not grow with the log. The subjects are given
    as values, not selected from the chunk by a subquery: given that, PostgreSQL hashed the
    whole table for each chunk instead of probing the index (measured at 100,000 and 300,000
    entries; at a million it probed)."""
    if before == 0:
        return []  # the first chunk: nothing before it
    subjects = sorted({subject for e in entries for subject in anchors.keyed_subjects(e)})
    query, step = _FIRST_OF_IN, _SUBJECTS_PER_QUERY
    if connection.dialect.name == "postgresql":
        query, step = _FIRST_OF_ANY, len(subjects) or 1
    batches = [subjects[i : i + step] for i in range(0, len(subjects), step)]
    return [
        (subject, action, seq)
        for batch in batches
        for subject, action, seq in connection.execute(query, {"before": before, "subjects": batch})
    ]


# --- one server seed a pair, as its commitment entry says ------------------------------------

_PAIRS = cast(Table, SeedPair.__table__)
_PAIR_SUBJECT = literal("seed_pair:", String) + sql_cast(_PAIRS.c.id, String)
#: The pairs committed to each commitment asked for (found by the unique index on the pairs'
#: commitments), each with the seq of its first commitment entry (``None``: the log holds none).
_COMMITTED_TO = select(
    _PAIRS.c.commitment,
    _PAIRS.c.id,
    select(func.min(_ENTRIES.c.seq))
    .where(_ENTRIES.c.subject == _PAIR_SUBJECT, _ENTRIES.c.action == anchors.COMMITMENT_ACTION)
    .scalar_subquery(),
).where(_PAIRS.c.commitment.in_(bindparam("commitments", expanding=True)))
#: The rows of the pairs asked for (by primary key): their commitment and server seed.
_ROWS_OF = select(_PAIRS.c.id, _PAIRS.c.commitment, _PAIRS.c.server_seed).where(
    _PAIRS.c.id.in_(bindparam("ids", expanding=True))
)
#: By subject, what the database holds of a pair: its commitment, and the commitment to its
#: server seed.
Held = dict[str, tuple[str, str]]
#: What the checks say of a pair whose row holds another commitment than its entry logged.
PAIR_REWRITTEN: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s commits to %(logged)s, but the database holds "
    "commitment %(held)s for the pair: the pair's row was rewritten after its commitment was "
    "logged"
)
#: What they say of a pair whose row holds a server seed its logged commitment is not to.
SEED_REWRITTEN: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s commits to %(logged)s, but the server seed the "
    "database holds for the pair hashes to %(held)s: the pair's server seed was rewritten after "
    "its commitment was logged"
)


def _pairs_committed_to(
    connection: Connection, entries: Sequence[results.AuditEntry]
) -> anchors.Committed:
    """The pairs the database holds committed to each commitment ``entries`` commit to: a
    lookup by the unique index, so a check's memory does not grow with the pairs."""
    commitments = sorted({c for e in entries if (c := anchors.commitment_in(e)) is not None})
    committed: anchors.Committed = {}
    for i in range(0, len(commitments), _SUBJECTS_PER_QUERY):
        batch = {"commitments": commitments[i : i + _SUBJECTS_PER_QUERY]}
        for commitment, pair_id, logged_at in connection.execute(_COMMITTED_TO, batch):
            committed.setdefault(commitment, []).append((anchors.pair_subject(pair_id), logged_at))
    return committed


def _rows_of_pairs(connection: Connection, entries: Sequence[results.AuditEntry]) -> Held:
    """What the database holds of each pair whose commitment ``entries`` log, found by primary
    key: as many rows as the chunk holds commitment entries."""
    ids = sorted(
        {
            int(said)
            for e in entries
            if anchors.commitment_in(e) is not None
            and (said := str(e["subject"]).removeprefix("seed_pair:")).isdigit()
        }
    )
    held: Held = {}
    for i in range(0, len(ids), _SUBJECTS_PER_QUERY):
        batch = {"ids": ids[i : i + _SUBJECTS_PER_QUERY]}
        for pair_id, commitment, server_seed in connection.execute(_ROWS_OF, batch):
            held[anchors.pair_subject(pair_id)] = (commitment, anchors.seed_commitment(server_seed))
    return held


#: The commitment entries of the pairs asked for (by subject, found by the index on it), up to
#: the last entry the check reads: one after the reveals asked for is none of theirs.
_COMMITMENTS_OF = (
    select(_ENTRIES)
    .where(
        _ENTRIES.c.action == anchors.COMMITMENT_ACTION,
        _ENTRIES.c.subject.in_(bindparam("subjects", expanding=True)),
        _ENTRIES.c.seq <= bindparam("through"),
    )
    .order_by(_ENTRIES.c.seq)
)


def _commitments_revealed(
    connection: Connection, entries: Sequence[results.AuditEntry]
) -> anchors.Commitments:
    """The first commitment entry of each pair ``entries`` reveal, however long before: a
    lookup by subject, a row or so a reveal, so a check's memory does not grow with the pairs
    (the pairs in play, saved from step to step, keep no commitment)."""
    subjects = sorted(
        {
            str(e["subject"])
            for e in entries
            if e["action"] == anchors.REVEAL_ACTION and e["subject"] is not None
        }
    )
    commitments: anchors.Commitments = {}
    for i in range(0, len(subjects), _SUBJECTS_PER_QUERY):
        batch = {"subjects": subjects[i : i + _SUBJECTS_PER_QUERY], "through": entries[-1]["seq"]}
        found = [entry_dict(row) for row in connection.execute(_COMMITMENTS_OF, batch)]
        commitments.update(anchors.commitments_in(found))
    return commitments


def _row_rewritten(entries: Sequence[results.AuditEntry], held: Held) -> tuple[int, Problem] | None:
    """Return the seq of the first of ``entries`` that commits a pair to another server seed
    than the database holds for it, and why, or ``None``.

    A pair's row is written in the transaction that logs its commitment, so its commitment,
    and the server seed it commits to, are the entry's: a row rewritten since (another seed,
    the commitment rewritten to match it and its documents signed anew) contradicts its entry,
    which the checkpoints over it hold. A pair the database does not hold is not compared here
    (:func:`anchors.seed_reused` names one logged to another pair's seed).

    :param held: what the database holds of each pair ``entries`` commit (:func:`_rows_of_pairs`).
    """
    for entry in entries:
        logged = anchors.commitment_in(entry)
        row = held.get(str(entry["subject"]))
        if logged is None or row is None:
            continue
        commitment, seed_commitment = row
        if commitment != logged:
            message, other = PAIR_REWRITTEN, commitment
        elif seed_commitment != logged:
            message, other = SEED_REWRITTEN, seed_commitment
        else:
            continue
        said = {"seq": entry["seq"], "action": entry["action"], "subject": entry["subject"]}
        shown = {"logged": f"{logged[:16]}…", "held": f"{other[:16]}…"}
        return entry["seq"], Problem(message, said | shown)
    return None


# --- settled rounds against the log ----------------------------------------------------------

_ROUNDS = cast(Table, Round.__table__)
_ROUND_SUBJECT = literal("round:", String) + sql_cast(_ROUNDS.c.id, String)


def _unlogged(action: str) -> Any:
    """Whether the log holds no ``action`` entry of the round: neither sequenced nor waiting
    for the integrator (one statement reads both at once, so an entry moved from one to the
    other meanwhile is in one of them)."""
    logged = select(_ENTRIES.c.seq).where(
        _ENTRIES.c.subject == _ROUND_SUBJECT, _ENTRIES.c.action == action
    )
    waiting = select(_PENDING.c.id).where(
        _PENDING.c.subject == _ROUND_SUBJECT, _PENDING.c.action == action
    )
    return ~logged.exists() & ~waiting.exists()


_SETTLED_IDS = (
    select(_ROUNDS.c.id)
    .where(_ROUNDS.c.status == "settled", _ROUNDS.c.id > bindparam("after"))
    .order_by(_ROUNDS.c.id)
    .limit(CHUNK)
)
_UNLOGGED_OF = (
    select(
        _ROUNDS.c.id,
        _unlogged(anchors.BET_ACTION).label("unbet"),
        _unlogged(anchors.SETTLEMENT_ACTION).label("unsettled"),
    )
    .where(_ROUNDS.c.id.in_(bindparam("ids", expanding=True)))
    .order_by(_ROUNDS.c.id)
)
#: What the checks say of a settled round whose bet or settlement the log does not hold.
UNLOGGED_ROUND: Final = N_(
    "%(subject)s is settled, but the log holds no %(action)s entry of it: an entry of a "
    "settled round was lost or taken out of the log"
)
#: How long before a standing check's step a round settled that the next step still looks at:
#: a round is dated as it settles and seen once its transaction commits, which a request does
#: well within gunicorn's timeout (30 s), and the servers' clocks may differ a little. A round
#: committed later than this after its settlement time is left to the next whole check.
ROUNDS_OVERLAP = timedelta(minutes=10)


@own_transactions
def unlogged_round(
    session: Session, *, settled_since: datetime | None = None
) -> tuple[int, Problem] | None:
    """Return the first settled round (by id) whose bet or settlement the log does not hold,
    and why, or ``None``: a settled round's entries are written in its own transaction, so one
    missing was lost or taken out of the log (before a checkpoint covered it, nothing else
    shows it). Reads a chunk of rounds at a time, each in its own short read.

    :param settled_since: only the rounds settled since then (a standing check's step).
    """
    query = _SETTLED_IDS
    if settled_since is not None:
        query = query.where(
            _ROUNDS.c.settled_on >= settled_since.date(),
            _ROUNDS.c.settled_at >= settled_since,
        )
    after = 0
    while True:
        ids, unlogged = _read_chunk(session, functools.partial(_unlogged_of, query, after))
        if unlogged is not None:
            round_id, unbet = unlogged
            action = anchors.BET_ACTION if unbet else anchors.SETTLEMENT_ACTION
            return round_id, Problem(
                UNLOGGED_ROUND, {"subject": anchors.round_subject(round_id), "action": action}
            )
        if not ids:
            return None
        after = ids[-1]


def _unlogged_of(
    query: Select[Any], after: int, connection: Connection
) -> tuple[list[int], tuple[int, bool] | None]:
    """A chunk of settled rounds' ids after ``after``, and its first round the log lacks an
    entry of, with whether that entry is its bet."""
    ids = list(connection.execute(query, {"after": after}).scalars())
    for round_id, unbet, unsettled in connection.execute(_UNLOGGED_OF, {"ids": ids}) if ids else ():
        if unbet or unsettled:
            return ids, (round_id, bool(unbet))
    return ids, None


@dataclass(frozen=True, slots=True)
class WholeCheck:
    """The whole check's verdict, with the latest checkpoint it reached (None before the first)."""

    ok: bool
    size: int
    first_bad_seq: int | None
    reason: str | None
    checkpoint: Checkpoint | None


@own_transactions
def verify(session: Session, *, progress: Callable[[int], None] | None = None) -> WholeCheck:
    """Verify the whole chain, its keys and every checkpoint; name the first bad entry. Then
    hold the settled rounds to the log: each one's bet and settlement must be in it.

    :param progress: called with the size reached after each chunk (:func:`check_chain`).
    """
    flush(session)
    found = check_chain(session, progress=progress)
    checkpoint = _reached_checkpoint(session, found)
    if found.ok and (unlogged := unlogged_round(session)) is not None:
        return WholeCheck(False, found.size, None, unlogged[1].text(), checkpoint)
    return WholeCheck(found.ok, found.size, found.first_bad_seq, found.reason, checkpoint)


@read_only
def _reached_checkpoint(session: Session, found: ChainCheck) -> Checkpoint | None:
    covered = found.state.checkpoint if found.state else 0
    row = session.scalar(select(AuditCheckpoint).where(AuditCheckpoint.size == covered))
    latest = row or _latest_checkpoint(session)
    return _checkpoint_dict(latest) if latest else None


# --- the stored tree: proofs in O(log n) ----------------------------------------------------

_NODES = cast(Table, AuditTreeNode.__table__)
#: Leaves added to the stored tree per transaction, a whole number of blocks.
TREE_STEP = 64 * 1024


def _stored_tree(session: Session) -> merkle.StoredTree:
    def nodes(wanted: Collection[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        found: dict[tuple[int, int], bytes] = {}
        pairs = sorted(wanted)
        for i in range(0, len(pairs), 200):  # a bounded number of parameters per query
            query = select(_NODES).where(
                tuple_(_NODES.c.height, _NODES.c.idx).in_(pairs[i : i + 200])
            )
            found.update({(r.height, r.idx): bytes.fromhex(r.hash) for r in session.execute(query)})
        return found

    return merkle.StoredTree(
        TREE_MIN_HEIGHT, nodes, lambda start, end: _leaves(session, start, end)
    )


@in_transaction
def tree_size(session: Session) -> int:
    """How many leaves the stored tree nodes cover (a whole number of blocks)."""
    top = session.scalar(select(func.max(_NODES.c.idx)).where(_NODES.c.height == TREE_MIN_HEIGHT))
    return 0 if top is None else (top + 1) << TREE_MIN_HEIGHT


@transactional
def extend_tree(session: Session) -> int:
    """Store the tree nodes over up to :data:`TREE_STEP` more entries; return the size covered.

    The nodes are the entries' hashes as stored: a proof built from them is checked against
    the signed checkpoint before it is handed out, so a node that went wrong is refused, never
    believed.
    """
    covered = tree_size(session)
    ready = (log_size(session) - covered) >> TREE_MIN_HEIGHT << TREE_MIN_HEIGHT
    end = covered + min(ready, TREE_STEP)
    if end == covered:
        return covered
    pieces = merkle.perfect_pieces(0, covered)
    roots = _stored_tree(session).roots([(i << h, (i + 1) << h) for h, i in pieces])
    start = merkle.Frontier(covered, tuple(roots))
    _, nodes = start.extended_collecting(_leaves(session, covered, end), TREE_MIN_HEIGHT)
    session.execute(
        insert(_NODES), [{"height": n.height, "idx": n.index, "hash": n.hash.hex()} for n in nodes]
    )
    return end


@dataclass(frozen=True, slots=True)
class InclusionProof:
    """That entry ``seq`` is in the tree of a signed checkpoint (RFC 6962)."""

    seq: Id
    leaf_index: Count
    entry: results.AuditEntry
    checkpoint: Checkpoint
    proof: list[Hex64]


@dataclass(frozen=True, slots=True)
class ConsistencyProof:
    """That the tree of ``old_size`` entries is a prefix of ``new_size``'s (RFC 6962)."""

    old_size: Id
    new_size: Id
    old_root: Hex64
    new_root: Hex64
    proof: list[Hex64]


@read_only
def inclusion_proof(session: Session, seq: int) -> InclusionProof:
    """Return the proof that entry ``seq`` is in the latest checkpoint's tree.

    Built from the stored tree nodes (O(log n) of them and a block of entries), and checked
    against the signed root before it is returned.
    """
    latest = _latest_checkpoint(session)
    if latest is None:
        raise NotFound(N_("no checkpoint has been signed yet"))
    if not 1 <= seq <= latest.size:
        raise NotFound(
            N_("entry %(seq)s is not covered by the latest checkpoint (size %(size)s)"),
            params={"seq": seq, "size": latest.size},
        )
    row = session.get(AuditEntry, seq)
    if row is None:
        raise Conflict(f"entry {seq} is missing from the log; run a whole check")
    proof = _stored_tree(session).roots(merkle.inclusion_ranges(seq - 1, latest.size))
    if not merkle.verify_inclusion(
        seq - 1, latest.size, bytes.fromhex(row.hash), proof, bytes.fromhex(latest.root)
    ):
        raise Conflict(
            f"entry {seq} does not prove into the checkpoint over {latest.size} entries: the "
            "log or its stored tree was changed; run a whole check"
        )
    return InclusionProof(
        seq=seq,
        leaf_index=seq - 1,
        entry=entry_dict(row),
        checkpoint=_checkpoint_dict(latest),
        proof=[h.hex() for h in proof],
    )


@read_only
def consistency_proof(session: Session, old_size: int, new_size: int) -> ConsistencyProof:
    """Return the proof that the tree of ``old_size`` entries is a prefix of ``new_size``'s."""
    return consistency_between(session, old_size, new_size)


@in_transaction
def consistency_between(session: Session, old_size: int, new_size: int) -> ConsistencyProof:
    """:func:`consistency_proof` inside the caller's transaction."""
    if not 1 <= old_size <= new_size <= log_size(session):
        raise InvalidInput(N_("need 1 <= old_size <= new_size <= the log's size"))
    return _consistency_in(_stored_tree(session), old_size, new_size)


def _consistency_in(tree: merkle.StoredTree, old_size: int, new_size: int) -> ConsistencyProof:
    """The consistency proof between two sizes of the stored ``tree``, checked before it is
    returned (a tree shared by several proofs reads each node and block of entries once)."""
    old_root, new_root = tree.roots([(0, old_size), (0, new_size)])
    proof = tree.roots(merkle.consistency_ranges(old_size, new_size))
    if not merkle.verify_consistency(old_size, new_size, old_root, new_root, proof):
        raise Conflict("the stored tree does not prove its own consistency; run a whole check")
    return ConsistencyProof(
        old_size, new_size, old_root.hex(), new_root.hex(), [h.hex() for h in proof]
    )


# --- export ---------------------------------------------------------------------------------


def _entry_lines(session: Session, first: int, last: int) -> Iterator[str]:
    """Entries ``first..last`` as JSON Lines, a chunk per short read."""
    after = first - 1
    while after < last:
        query = select(_ENTRIES).where(_ENTRIES.c.seq > after, _ENTRIES.c.seq <= last)
        query = query.order_by(_ENTRIES.c.seq).limit(CHUNK)
        rows = _read_chunk(session, functools.partial(_all_rows, query))
        if not rows:
            return
        yield from audit_chain.export_lines((entry_dict(row) for row in rows), ())
        after = rows[-1].seq


@own_transactions
def iter_export(session: Session) -> Iterator[str]:
    """Return the whole log as JSON Lines, every entry then every checkpoint, a chunk at a time.

    Each chunk is its own short read, so a download holds no lock and no more than a chunk in
    memory. The export stops at the log's size when it began: a checkpoint signed later over
    entries it does not hold is left out. The waiting entries are sequenced and that size is
    read before this returns, so a download the database cannot begin fails before its answer
    starts (a 503, not a 200 cut off).
    """
    flush(session)
    size = _read_chunk(session, lambda c: c.scalar(select(func.max(_ENTRIES.c.seq)))) or 0
    return _export_lines(session, size)


def _export_lines(session: Session, size: int) -> Iterator[str]:
    """The first ``size`` entries, then the checkpoints over no more of them, as JSON Lines."""
    yield from _entry_lines(session, 1, size)
    above = 0
    while True:
        rows = _read_chunk(
            session, functools.partial(_checkpoint_rows, above=above, upto=size, limit=CHUNK)
        )
        yield from audit_chain.export_lines((), (_checkpoint_dict(row) for row in rows))
        if len(rows) < CHUNK:
            return
        above = rows[-1].size


# --- the export of a range: verifiable on its own ---------------------------------------------


@read_only
def export_range(
    session: Session,
    *,
    from_seq: int | None = None,
    to_seq: int | None = None,
    since: str | None = None,
    until: str | None = None,
    kept: Collection[int] = (),
) -> tuple[int, int, dict[str, Any] | None]:
    """Resolve a range of entries (by seq and/or time) and what vouches for it.

    Returns ``(first, last, proof)``: the range's first and last seq, and the inclusion proof
    of its last covered entry in the smallest checkpoint that covers the range and every
    ``kept`` size (or in the latest one, if none covers it all), as ``{"seq", "size", "proof",
    "checkpoint"}``; ``None`` if no checkpoint reaches into the range yet. With ``kept`` (sizes
    of checkpoints an auditor kept) it also holds ``"consistency"``: for each size, ascending,
    ``{"old_size", "new_size", "proof"}``, the consistency proof from that size to the vouching
    checkpoint's.

    :raises InvalidInput: for a bad bound (or ``from_seq`` past ``to_seq``), or a kept size
        under 1 or past the latest checkpoint (no checkpoint of this log is that large);
    :raises NotFound: for a range with no entries.
    """
    for name, value in (("from_seq", from_seq), ("to_seq", to_seq)):
        if value is not None and value < 1:
            raise InvalidInput(
                N_("%(option)s must be 1 or more"), params={"option": name}, field=name
            )
    if from_seq is not None and to_seq is not None and from_seq > to_seq:
        raise InvalidInput(
            N_("from_seq %(first)s is after to_seq %(last)s: give the range's first entry first"),
            params={"first": from_seq, "last": to_seq},
            field="from_seq",
        )
    sizes = sorted(set(kept))
    _check_kept_sizes(session, sizes)
    in_range = ranges.timed(
        AuditEntry.time, _time_filter(since, "since"), _time_filter(until, "until")
    )
    low, high = ranges.id_span(session.connection(), AuditEntry.seq, in_range) or (0, 0)
    first = max(from_seq or 1, low or 0)
    last = min(to_seq or log_size(session), high or 0)
    if first < 1 or last < first:
        raise NotFound(N_("no entries in that range"))
    covering = session.scalar(
        select(AuditCheckpoint)
        .where(AuditCheckpoint.size >= max([last, *sizes]))
        .order_by(AuditCheckpoint.size)
        .limit(1)
    ) or _latest_checkpoint(session)
    if covering is None or covering.size < first:
        return first, last, None
    seq = min(last, covering.size)
    tree = _stored_tree(session)
    proof = tree.roots(merkle.inclusion_ranges(seq - 1, covering.size))
    row = session.get(AuditEntry, seq)
    if row is None or not merkle.verify_inclusion(
        seq - 1, covering.size, bytes.fromhex(row.hash), proof, bytes.fromhex(covering.root)
    ):
        raise Conflict(
            f"entry {seq} does not prove into the checkpoint over {covering.size} entries: the "
            "log or its stored tree was changed; run a whole check"
        )
    vouching: dict[str, Any] = {
        "seq": seq,
        "size": covering.size,
        "proof": [h.hex() for h in proof],
        "checkpoint": _checkpoint_dict(covering),
    }
    if sizes:
        steps = [_consistency_in(tree, size, covering.size) for size in sizes]
        vouching["consistency"] = [
            {"old_size": step.old_size, "new_size": step.new_size, "proof": step.proof}
            for step in steps
        ]
    return first, last, vouching


def _check_kept_sizes(session: Session, sizes: Sequence[int]) -> None:
    """Refuse kept checkpoint sizes no checkpoint of this log can have (ascending ``sizes``).

    :raises InvalidInput: naming ``kept``: under 1, more entries than the log holds, or more
        than its latest checkpoint covers.
    """
    if not sizes:
        return
    if sizes[0] < 1:
        raise InvalidInput(
            N_("%(option)s must be 1 or more"), params={"option": "kept"}, field="kept"
        )
    count = log_size(session)
    if sizes[-1] > count:
        raise InvalidInput(
            N_("kept size %(size)s is past the log's size (%(count)s)"),
            params={"size": sizes[-1], "count": count},
            field="kept",
        )
    latest = session.scalar(select(func.max(AuditCheckpoint.size))) or 0
    if sizes[-1] > latest:
        raise InvalidInput(
            N_(
                "kept size %(size)s is past the latest checkpoint's size (%(covered)s): no "
                "checkpoint of this log is that large"
            ),
            params={"size": sizes[-1], "covered": latest},
            field="kept",
        )


@own_transactions
def iter_range_export(
    session: Session, /, first: int, last: int, proof: dict[str, Any] | None
) -> Iterator[str]:
    """Yield entries ``first..last`` as JSON Lines, then the checkpoint and the proof that
    vouch for them and the consistency proofs from the kept sizes (see :func:`export_range`),
    a chunk of entries per short read."""
    yield from _entry_lines(session, first, last)
    if proof is not None:
        consistency = proof.get("consistency", ())
        yield from audit_chain.export_lines((), (proof["checkpoint"],), (proof,), consistency)
