"""Test helpers that write the audit log directly, as the service would have written it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import delete
from sqlalchemy import select
from sqlalchemy import text
from sqlalchemy.orm import Session

from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.core import fairness
from sota_casino.models import AuditCheckpoint
from sota_casino.models import AuditEntry
from sota_casino.models import AuditHead
from sota_casino.models import AuditTreeNode
from sota_casino.models import SeedPair
from sota_casino.services import audit


def relog_commitment(session: Session, pair: SeedPair) -> None:
    """Make the log say ``pair`` was created with its present commitment (inside the caller's
    transaction): for tests that plant a known server seed before play, so the pair's anchor
    still holds. The entries after it are linked again.

    Only while no signed checkpoint covers the pair's creation: the service never takes back a
    checkpoint it signed, and a browser that kept one (the pages carry the latest) takes the
    next page's older one, whose consistency proof to it is then refused with a 404, for a
    fork. The browser tests' server signs checkpoints only when asked (conftest.py), so a test
    plants its seed before anything it does asks for one over the pair.

    :raises AssertionError: if a signed checkpoint covers the pair's creation.
    """
    entry = session.scalars(
        select(AuditEntry)
        .where(
            AuditEntry.action == anchors.COMMITMENT_ACTION,
            AuditEntry.subject == anchors.pair_subject(pair.id),
        )
        .order_by(AuditEntry.seq)
    ).first()
    assert entry is not None, "the pair's creation is not in the log"
    covering = session.scalar(
        select(AuditCheckpoint.size).where(AuditCheckpoint.size >= entry.seq).limit(1)
    )
    assert covering is None, (
        f"the checkpoint over {covering} entries covers seed pair {pair.id}'s creation "
        f"(entry {entry.seq}): planting its seed now would take back a signed checkpoint"
    )
    data = json.loads(entry.data) | {"commitment": pair.commitment}
    with entries_writable(session):
        _rewrite_from(session, entry, data)


@contextmanager
def entries_writable(session: Session) -> Iterator[None]:
    """Lift the log's append-only guard for this transaction only (:func:`writable`)."""
    with writable(session, "audit_entries"):
        yield


@contextmanager
def writable(session: Session, table: str) -> Iterator[None]:
    """Lift an append-only table's guard for this transaction only (DDL is transactional on
    both databases): the triggers are made again, as the migrations make them, before it ends."""
    postgres = session.get_bind().dialect.name == "postgresql"
    if postgres:
        session.execute(text(f"DROP TRIGGER {table}_append_only ON {table}"))
    else:
        for event in ("update", "delete"):
            session.execute(text(f"DROP TRIGGER {table}_no_{event}"))
    yield
    session.flush()
    if postgres:
        session.execute(
            text(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION refuse_change()"
            )
        )
    else:
        for event in ("UPDATE", "DELETE"):
            session.execute(
                text(
                    f"CREATE TRIGGER {table}_no_{event.lower()} BEFORE {event} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: {event} refused'); END"
                )
            )


def _rewrite_from(session: Session, entry: AuditEntry, data: dict[str, object]) -> None:
    entry.data = fairness.canonical_json(data).decode()
    session.execute(delete(AuditCheckpoint).where(AuditCheckpoint.size >= entry.seq))
    session.execute(delete(AuditTreeNode))  # rebuilt from the entries on the next extension
    previous = entry.prev_hash
    for row in session.scalars(
        select(AuditEntry).where(AuditEntry.seq >= entry.seq).order_by(AuditEntry.seq)
    ):
        row.prev_hash = previous
        row.hash = previous = audit_chain.entry_hash(previous, audit.entry_dict(row))
    head = session.get(AuditHead, 1)
    assert head is not None
    head.hash = previous
    session.flush()


def fork_log(session: Session, seq: int, size: int, actor: str = "user:0") -> dict[str, object]:
    """As an operator with the key and the database: change entry ``seq`` (its actor, to
    ``actor``; its own actor again leads back to the log as it was), link the entries after it
    again, drop the checkpoints and the stored tree, and sign a checkpoint over the first
    ``size`` entries of the rewritten log, which contradicts any kept before. Runs its own
    transaction; returns the new signed checkpoint."""
    with session.begin():
        entry = session.get(AuditEntry, seq)
        assert entry is not None
        data = json.loads(entry.data)
        with entries_writable(session):
            entry.actor = actor
            _rewrite_from(session, entry, data)
        session.execute(delete(AuditCheckpoint))
        return audit._sign_checkpoint(session, size)  # the operator's own tool, not an API


def sign_backdated(session: Session, time: str) -> dict[str, object]:
    """As an operator with the key and the database: sign a checkpoint over the whole log (the
    latest again, if nothing is new), dated ``time`` instead of now. Runs its own transaction;
    returns the signed checkpoint."""
    with session.begin():
        size = audit.log_size(session)
        audit._sign_checkpoint(session, size)  # the operator's own tool, not an API
        row = session.scalar(select(AuditCheckpoint).where(AuditCheckpoint.size == size))
        assert row is not None
        document = audit_chain.checkpoint_document(size, row.root, time)
        row.time = time
        row.signature = fairness.sign(session.info["context"].signing_key, document)
        session.flush()
        return {"document": document, "signature": row.signature}


def take_out(session: Session, seqs: list[int]) -> None:
    """As an operator with the database, before any checkpoint covers them: take entries
    ``seqs`` out of the log, number the entries after them again without a gap and link them
    again, so the chain holds (checkpoints from the first of them on, and the stored tree, are
    dropped). Runs its own transaction."""
    audit.flush(session)
    with session.begin(), entries_writable(session):
        first = min(seqs)
        session.execute(delete(AuditCheckpoint).where(AuditCheckpoint.size >= first))
        session.execute(delete(AuditEntry).where(AuditEntry.seq.in_(seqs)))
        later = session.scalars(
            select(AuditEntry.seq).where(AuditEntry.seq > first).order_by(AuditEntry.seq)
        ).all()
        for new, old in enumerate(later, start=first):
            session.execute(
                text("UPDATE audit_entries SET seq = :new WHERE seq = :old"),
                {"new": new, "old": old},
            )
        session.expire_all()
        entry = session.get(AuditEntry, first)
        head = session.get(AuditHead, 1)
        assert head is not None
        if entry is None:  # nothing after them: the head moves back
            previous = session.get(AuditEntry, first - 1)
            head.seq = first - 1
            head.hash = previous.hash if previous else audit_chain.GENESIS_HASH
            session.execute(delete(AuditTreeNode))
            session.flush()
            return
        head.seq = first - 1 + len(later)
        _rewrite_from(session, entry, json.loads(entry.data))


def add_forged_checkpoint(session: Session, size: int) -> None:
    """Store a checkpoint over the first ``size`` entries that no key signed, its root and
    signature zeros, as an operator writing the table directly would."""
    with session.begin():
        session.add(
            AuditCheckpoint(
                size=size,
                root="00" * 32,
                time="2099-01-01T00:00:00.000000Z",
                signature="00" * 64,
                public_key_hex="00" * 32,
            )
        )
