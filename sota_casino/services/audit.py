"""The tamper-evident audit log: a gap-free hash chain with signed Merkle checkpoints.

:func:`record` appends inside the caller's transaction, so an entry exists exactly when the
change it records does. Appends lock the single ``audit_head`` row, which keeps sequence
numbers gap-free on PostgreSQL too (SQLite's write lock does it there already).
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import cast

from sqlalchemy import Row
from sqlalchemy import Table
from sqlalchemy import bindparam
from sqlalchemy import insert
from sqlalchemy import or_
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.orm import Session

from ..core import audit_chain
from ..core import fairness
from ..core import merkle
from ..core.errors import Conflict
from ..core.errors import InvalidInput
from ..core.errors import NotFound
from ..models import AuditCheckpoint
from ..models import AuditEntry
from ..models import AuditHead
from ..models import SigningKey
from .context import context_of
from .text import storable
from .tx import insert_ignoring_conflicts
from .tx import locked
from .tx import read_only
from .tx import transactional

MAX_PAGE = 500


# Built once (an append is on every money move's path) and run on the session's connection.
_HEAD = cast(Table, AuditHead.__table__)
_LOCK_HEAD = select(_HEAD.c.seq, _HEAD.c.hash).where(_HEAD.c.id == 1).with_for_update()
_NEW_ENTRY = insert(cast(Table, AuditEntry.__table__))
_MOVE_HEAD = (
    update(_HEAD)
    .where(_HEAD.c.id == 1)
    .values(seq=bindparam("next_seq"), hash=bindparam("next_hash"))
)


def record(
    session: Session,
    *,
    actor: str | None,
    action: str,
    subject: str | None = None,
    data: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> int:
    """Append one entry inside the caller's transaction; return its sequence number."""
    connection = session.connection()
    head = connection.execute(_LOCK_HEAD).first()
    if head is None:
        insert_ignoring_conflicts(
            session, AuditHead, {"id": 1, "seq": 0, "hash": audit_chain.GENESIS_HASH}
        )
        head = connection.execute(_LOCK_HEAD).one()
    prev_seq, prev_hash = head
    entry = {
        "seq": prev_seq + 1,
        "time": fairness.format_time(now or datetime.now(UTC)),
        "actor": actor,
        "action": action,
        "subject": subject,
        "data": data or {},
    }
    digest = audit_chain.entry_hash(prev_hash, entry)
    connection.execute(
        _NEW_ENTRY,
        entry
        | {
            "data": fairness.canonical_json(entry["data"]).decode(),
            "prev_hash": prev_hash,
            "hash": digest,
        },
    )
    connection.execute(_MOVE_HEAD, {"next_seq": entry["seq"], "next_hash": digest})
    every = context_of(session).setting("CHECKPOINT_EVERY")
    if every and entry["seq"] % every == 0:
        _sign_checkpoint(session, entry["seq"])
    return int(entry["seq"])


def entry_dict(row: AuditEntry | Row[Any]) -> dict[str, Any]:
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
    if value is None or value == "":
        return None
    try:
        return fairness.format_time(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except (ValueError, OverflowError) as exc:  # in UTC, 9999-12-31T23:00-05:00 is past year 9999
        raise InvalidInput(f"{name} must be an ISO 8601 time", field=name) from exc


@read_only
def entries(
    session: Session,
    *,
    after_seq: int = 0,
    limit: int = 50,
    action: str | None = None,
    actor: str | None = None,
    subject: str | None = None,
    since: str | None = None,
    until: str | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    """Return a page of entries after ``after_seq`` that match every filter given."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be from 1 to {MAX_PAGE}", field="limit")
    query = select(AuditEntry).where(AuditEntry.seq > after_seq)
    for name, value in (("action", action), ("actor", actor), ("subject", subject), ("text", text)):
        if value:
            storable(value, name)
    if action:
        query = query.where(AuditEntry.action.startswith(action, autoescape=True))
    if actor:
        query = query.where(AuditEntry.actor == actor)
    if subject:
        query = query.where(AuditEntry.subject == subject)
    if start := _time_filter(since, "since"):
        query = query.where(AuditEntry.time >= start)
    if end := _time_filter(until, "until"):
        query = query.where(AuditEntry.time <= end)
    if text:
        needle = f"%{text.replace('%', '').replace('_', '')}%"
        query = query.where(
            or_(
                AuditEntry.data.like(needle),
                AuditEntry.action.like(needle),
                AuditEntry.subject.like(needle),
                AuditEntry.actor.like(needle),
            )
        )
    rows = session.scalars(query.order_by(AuditEntry.seq).limit(limit + 1)).all()
    page = [entry_dict(row) for row in rows[:limit]]
    return {"entries": page, "next_after_seq": page[-1]["seq"] if len(rows) > limit else None}


def _all_entries(session: Session, after_seq: int = 0) -> list[dict[str, Any]]:
    """Every entry after ``after_seq``, in order.

    Plain rows, not ORM objects: a whole log is read, and identity-mapping every entry was half
    the cost of verifying it.
    """
    table = AuditEntry.__table__
    query = select(table).where(table.c.seq > after_seq).order_by(table.c.seq)
    return [entry_dict(row) for row in session.execute(query)]


def _leaves(session: Session, size: int | None = None) -> list[bytes]:
    query = select(AuditEntry.hash).order_by(AuditEntry.seq)
    if size is not None:
        query = query.limit(size)
    return [bytes.fromhex(h) for h in session.scalars(query)]


def _checkpoint_dict(row: AuditCheckpoint) -> dict[str, Any]:
    document = audit_chain.checkpoint_document(row.size, row.root, row.time)
    return {"document": document, "signature": row.signature, "public_key_hex": row.public_key_hex}


def _latest_checkpoint(session: Session) -> AuditCheckpoint | None:
    return session.scalar(select(AuditCheckpoint).order_by(AuditCheckpoint.size.desc()).limit(1))


def _sign_checkpoint(session: Session, size: int) -> dict[str, Any]:
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
    frontier = merkle.Frontier.of(_leaves(session, checkpoint.size))
    if frontier.root().hex() != checkpoint.root:
        raise Conflict("the log's first entries no longer match the latest checkpoint; not signing")
    return frontier


@transactional
def checkpoint(session: Session, *, actor: str | None = "system") -> dict[str, Any]:
    """Sign a checkpoint over the whole log now (audited), and return it."""
    head = session.scalar(locked(select(AuditHead).where(AuditHead.id == 1)))
    size = head.seq if head else 0
    if size == 0:
        raise Conflict("the audit log is empty; nothing to checkpoint")
    signed = _sign_checkpoint(session, size)
    record(
        session,
        actor=actor,
        action="audit.checkpoint",
        subject=f"checkpoint:{size}",
        data={"size": size, "root": signed["document"]["root"]},
    )
    return signed


@read_only
def checkpoints(session: Session) -> list[dict[str, Any]]:
    """Return every signed checkpoint, oldest first."""
    rows = session.scalars(select(AuditCheckpoint).order_by(AuditCheckpoint.size))
    return [_checkpoint_dict(row) for row in rows]


@read_only
def verify(session: Session) -> dict[str, Any]:
    """Verify the whole chain and every checkpoint; name the first bad entry."""
    return _verify_whole(session, fairness.format_time(datetime.now(UTC)))


def _verify_whole(session: Session, checked_at: str) -> dict[str, Any]:
    # Checkpoints first: their entries were committed with them, so the entries read next
    # include them, and a checkpoint beyond the log means entries were cut off its end (read
    # the other way round, one signed in between would seem to say so).
    rows = session.scalars(select(AuditCheckpoint).order_by(AuditCheckpoint.size)).all()
    all_entries = _all_entries(session)
    report = audit_chain.verify_chain(all_entries)
    result = _result(report, len(all_entries), rows[-1] if rows else None)
    if report.ok:
        findings = audit_chain.verify_checkpoints(
            all_entries, [_checkpoint_dict(row) for row in rows], _service_keys(session)
        )
        if not findings.ok:
            result.update(ok=False, reason=findings.problems[0].message)
    engine = session.get_bind()
    if result["ok"]:
        _verified[engine] = _Verified(
            size=len(all_entries),
            head_hash=all_entries[-1]["hash"] if all_entries else audit_chain.GENESIS_HASH,
            frontier=merkle.Frontier.of(bytes.fromhex(e["hash"]) for e in all_entries),
            checkpoint=rows[-1].size if rows else 0,
            checkpoint_time=rows[-1].time if rows else None,
            whole_log_at=checked_at,
        )
    else:
        _verified.pop(engine, None)
    return result


def _result(
    report: audit_chain.ChainReport, size: int, latest: AuditCheckpoint | None
) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "size": size,
        "first_bad_seq": report.first_bad_seq,
        "reason": report.reason,
        "checkpoint": _checkpoint_dict(latest) if latest else None,
    }


@dataclass(frozen=True, slots=True)
class _Verified:
    """The first ``size`` entries as this process verified them, with the checkpoints over them."""

    size: int
    head_hash: str  # the hash of entry ``size``
    frontier: merkle.Frontier  # the Merkle tree of the ``size`` entries
    checkpoint: int  # the size of the latest checkpoint checked
    checkpoint_time: str | None
    whole_log_at: str  # when the whole log was last checked


#: Per app (its engine), what the audit page verified so far.
_verified: weakref.WeakKeyDictionary[Any, _Verified] = weakref.WeakKeyDictionary()


@read_only
def status(session: Session, *, whole: bool = False) -> dict[str, Any]:
    """Verify the log for the operator's page: the whole log the first time (and when
    ``whole``), then only the entries and checkpoints appended since.

    The whole log is read once per app, not on every page view: that grows with the log
    (0.65 s at 30,000 entries). Entries verified before are not read again, so an entry changed
    since behind the database's append-only triggers is found by ``whole``, ``flask audit
    verify`` or the API's verification, which read everything. The result says which: its
    ``whole_log_at`` is when the whole log was last checked, and ``new_entries`` how many were
    checked since (``None`` for a whole check).
    """
    known = _verified.get(session.get_bind())
    if whole or known is None or not _still_heads_the_chain(session, known):
        checked_at = fairness.format_time(datetime.now(UTC))
        return _verify_whole(session, checked_at) | {
            "whole_log_at": checked_at,
            "new_entries": None,
        }
    rows = session.scalars(  # before the entries, as in a whole check
        select(AuditCheckpoint)
        .where(AuditCheckpoint.size > known.checkpoint)
        .order_by(AuditCheckpoint.size)
    ).all()
    new = _all_entries(session, after_seq=known.size)
    size = known.size + len(new)
    report = audit_chain.verify_chain(new, start_seq=known.size + 1, prev_hash=known.head_hash)
    latest = rows[-1] if rows else _latest_checkpoint(session)
    result = _result(report, size, latest) | {
        "whole_log_at": known.whole_log_at,
        "new_entries": len(new),
    }
    if not report.ok:
        _verified.pop(session.get_bind(), None)
        return result
    leaves = [bytes.fromhex(e["hash"]) for e in new]
    frontier, time = known.frontier, known.checkpoint_time
    keys = _service_keys(session)
    for row in rows:
        if row.size > size:
            problem: str | None = (
                f"checkpoint over {row.size} entries: the log holds only {size}; entries were "
                "removed from its end"
            )
        else:
            frontier = frontier.extended(leaves[frontier.size - known.size : row.size - known.size])
            problem = _new_checkpoint_problem(row, frontier, time, keys)
        if problem is not None:
            _verified.pop(session.get_bind(), None)
            return result | {"ok": False, "reason": problem}
        time = row.time
    _verified[session.get_bind()] = _Verified(
        size=size,
        head_hash=new[-1]["hash"] if new else known.head_hash,
        frontier=frontier.extended(leaves[frontier.size - known.size :]),
        checkpoint=rows[-1].size if rows else known.checkpoint,
        checkpoint_time=time,
        whole_log_at=known.whole_log_at,
    )
    return result


def _still_heads_the_chain(session: Session, known: _Verified) -> bool:
    """Whether the last entry verified is still there, unchanged (a log rebuilt is not)."""
    if known.size == 0:
        return True
    stored = session.scalar(select(AuditEntry.hash).where(AuditEntry.seq == known.size))
    return stored == known.head_hash


def _new_checkpoint_problem(
    row: AuditCheckpoint, frontier: merkle.Frontier, previous_time: str | None, keys: list[str]
) -> str | None:
    """Say what is wrong with a checkpoint signed since the last check, or ``None``."""
    label = f"checkpoint over {row.size} entries"
    signed = _checkpoint_dict(row)
    if not any(fairness.verify_signature(k, signed["document"], row.signature) for k in keys):
        return f"{label}: the signature is not valid for this key"
    if frontier.root().hex() != row.root:
        return (
            f"{label}: root {row.root[:16]}… is not the Merkle root of the first {row.size} "
            "entries: entries it covers were changed, removed or added"
        )
    if previous_time is not None and fairness.parse_time(row.time) < fairness.parse_time(
        previous_time
    ):
        return f"{label}: dated before the checkpoint it follows"
    return None


def _service_keys(session: Session) -> list[str]:
    """The current public key and every key it replaced: old checkpoints keep their signer."""
    known = session.scalars(select(SigningKey.public_key_hex)).all()
    return [context_of(session).public_key_hex, *known]


@read_only
def inclusion_proof(session: Session, seq: int) -> dict[str, Any]:
    """Return the proof that entry ``seq`` is in the latest checkpoint's tree."""
    latest = _latest_checkpoint(session)
    if latest is None:
        raise NotFound("no checkpoint has been signed yet")
    if not 1 <= seq <= latest.size:
        raise NotFound(f"entry {seq} is not covered by the latest checkpoint (size {latest.size})")
    leaves = _leaves(session, latest.size)
    row = session.get(AuditEntry, seq)
    assert row is not None
    return {
        "seq": seq,
        "leaf_index": seq - 1,
        "entry": entry_dict(row),
        "checkpoint": _checkpoint_dict(latest),
        "proof": [h.hex() for h in merkle.inclusion_proof(seq - 1, leaves)],
    }


@read_only
def consistency_proof(session: Session, old_size: int, new_size: int) -> dict[str, Any]:
    """Return the proof that the tree of ``old_size`` entries is a prefix of ``new_size``'s."""
    leaves = _leaves(session, new_size)
    if not 1 <= old_size <= new_size == len(leaves):
        raise InvalidInput("need 1 <= old_size <= new_size <= the log's size")
    return {
        "old_size": old_size,
        "new_size": new_size,
        "old_root": merkle.root(leaves[:old_size]).hex(),
        "new_root": merkle.root(leaves).hex(),
        "proof": [h.hex() for h in merkle.consistency_proof(old_size, leaves)],
    }


@read_only
def export_lines(session: Session) -> list[str]:
    """Return the whole log as JSON Lines: every entry, then every checkpoint."""
    rows = session.scalars(select(AuditCheckpoint).order_by(AuditCheckpoint.size)).all()
    return list(
        audit_chain.export_lines(_all_entries(session), [_checkpoint_dict(r) for r in rows])
    )
