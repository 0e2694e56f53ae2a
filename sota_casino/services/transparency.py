"""The log's public face: signed checkpoints and consistency proofs for anyone (hashes only,
never an entry), and anchors for a document's owner: its audit entry, proved into a signed
checkpoint (:mod:`sota_casino.core.anchors`).

Entries are found by their stable key (action, subject, occurrence), never by a sequence
number remembered from the transaction that wrote them: an entry the log has not taken yet,
or that no checkpoint covers yet, is a retryable :class:`NotYetAnchored` (409 with
``Retry-After`` and the latest signed checkpoint, by which a player holds it to the scheme's
bound, ``core.anchors.ANCHOR_BOUND``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated
from typing import Any
from typing import Final
from typing import cast

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core import anchors
from ..core import audit_chain
from ..core.errors import InvalidInput
from ..core.errors import NotFound
from ..core.errors import NotYetAnchored
from ..core.marks import N_
from ..core.marks import Nn_
from ..models import AuditEntry
from ..models import Round
from ..models import SeedPair
from . import audit
from .audit import ConsistencyProof
from .context import context_of
from .results import Anchor
from .results import AnchorOf
from .results import Checkpoint
from .results import Hex64
from .results import Id
from .results import KeyAnchor
from .results import PairAnchors
from .results import PendingAnchor
from .results import Time
from .tx import in_transaction
from .tx import read_only

#: The origin line of the C2SP signed-note form of checkpoints (also the note key's name).
NOTE_ORIGIN: Final = "sota-casino/audit-log"
#: What a client waits for an entry the log has not taken yet (seconds).
NOT_LOGGED_RETRY: Final = 1
#: Why an anchor is pending: its entry is not in the log yet, or no signed checkpoint covers it.
NOT_LOGGED: Final = N_("the log holds no %(action)s entry of %(subject)s yet; ask again shortly")
NOT_COVERED: Final = Nn_(
    "entry %(seq)s is not in a signed checkpoint yet (the latest covers %(num)s entry); ask "
    "again in %(wait)s s",
    "entry %(seq)s is not in a signed checkpoint yet (the latest covers %(num)s entries); ask "
    "again in %(wait)s s",
)

#: A wanted anchor: what it anchors, and its entry's action, subject and occurrence (``None``:
#: every entry of that action and subject, the ``index``-th anchoring ``of | {"index": i}``).
Wanted = tuple[Mapping[str, Any], str, str, int | None]


# --- public: checkpoints and consistency --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PublicCheckpoint:
    """A signed checkpoint as the public sees it (hashes only, never an entry)."""

    size: Id
    root: Hex64
    time: Time
    checkpoint: Checkpoint
    note: Annotated[
        str | None, Field(description="the same size and root as a C2SP tlog-checkpoint note")
    ]
    origin: Annotated[str, Field(description="the note's origin line and key name")]


@dataclass(frozen=True, slots=True)
class RoundProof:
    """The anchors of a settled round (its pair's commitment, its bet, its decisions or moves and
    its settlement)."""

    round_id: Id
    seed_pair_id: Id
    checkpoint: Checkpoint
    anchors: list[Anchor]


@lru_cache(maxsize=256)
def signed_note(key: Ed25519PrivateKey, size: int, root: str) -> str:
    """Return the checkpoint over ``size`` entries with ``root`` as a C2SP signed note."""
    # Ed25519 signatures are deterministic: signing the same note again gives the same text,
    # so a public endpoint asked for it endlessly signs each note once.
    return audit_chain.checkpoint_note(key, NOTE_ORIGIN, size, root)


@in_transaction
def public_checkpoint(session: Session, signed: Checkpoint) -> PublicCheckpoint:
    """A signed checkpoint as the public sees it: size, root, time, the JSON document with its
    signature, and the same size and root as a C2SP tlog-checkpoint signed note."""
    document = signed["document"]
    ctx = context_of(session)
    note = None
    if signed["public_key_hex"] == ctx.public_key_hex:  # a retired key signs no more notes
        note = signed_note(ctx.signing_key, document["size"], document["root"])
    return PublicCheckpoint(
        document["size"], document["root"], document["time"], signed, note, NOTE_ORIGIN
    )


@read_only
def latest(session: Session) -> PublicCheckpoint:
    """Return the latest signed checkpoint.

    :raises NotFound: before the first one is signed.
    """
    signed = audit.latest_checkpoint(session)
    if signed is None:
        raise NotFound(N_("no checkpoint has been signed yet"))
    return public_checkpoint(session, signed)


@read_only
def latest_signed(session: Session) -> Checkpoint | None:
    """Return the latest signed checkpoint ``{document, signature, public_key_hex}``, or
    ``None`` before the first (for the pages, whose browser witnesses it)."""
    return audit.latest_checkpoint(session)


@read_only
def checkpoint(session: Session, size: int) -> PublicCheckpoint:
    """Return the signed checkpoint over exactly ``size`` entries.

    :raises NotFound: if none was signed at that size.
    """
    signed = audit.checkpoint_at(session, size)
    if signed is None:
        raise NotFound(
            Nn_(
                "no checkpoint was signed over %(num)s entry",
                "no checkpoint was signed over %(num)s entries",
            ),
            params={"num": size},
        )
    return public_checkpoint(session, signed)


@read_only
def consistency(session: Session, old_size: int, new_size: int) -> ConsistencyProof:
    """Return the RFC 6962 proof that the checkpoint over ``old_size`` entries is a prefix of
    the one over ``new_size``. Both must be sizes of signed checkpoints: the public sees the
    tree only where the service signed it.

    :raises InvalidInput: if ``old_size`` exceeds ``new_size`` (checked first: no checkpoint
        could make such a request valid).
    :raises NotFound: if either is not a signed checkpoint's size.
    """
    if old_size > new_size:
        raise InvalidInput(N_("old_size must not exceed new_size"), field="old_size")
    for name, size in (("old_size", old_size), ("new_size", new_size)):
        if audit.checkpoint_at(session, size) is None:
            raise NotFound(
                Nn_(
                    "no checkpoint was signed over %(num)s entry (%(name)s)",
                    "no checkpoint was signed over %(num)s entries (%(name)s)",
                ),
                params={"num": size, "name": name},
            )
    return audit.consistency_between(session, old_size, new_size)


# --- anchors ------------------------------------------------------------------------------------


@in_transaction
def anchor_of(
    session: Session, action: str, subject: str, *, occurrence: int = 0
) -> dict[str, Any]:
    """Return the anchor of one entry, found by its stable key, in the latest checkpoint:
    ``{"entry", "leaf_index", "checkpoint_size", "proof", "checkpoint"}``.

    Runs inside the caller's transaction (which may be read-only); to have a checkpoint signed
    over recent entries, call :func:`audit.sign_if_due` before it.

    :param occurrence: which of the entries of this action and subject, oldest (0) first.
    :raises NotYetAnchored: if the log has not taken the entry yet, or no signed checkpoint
        covers it yet (``retry_after`` says when to ask again).
    """
    key = {"action": action, "subject": subject, "occurrence": occurrence}
    found, pending, signed = _anchor_set(session, [(key, action, subject, occurrence)])
    if pending:
        raise _not_yet(pending[0])
    return found[0] | {"checkpoint": signed}


@in_transaction
def entry_proof(
    session: Session, action: str, subject: str, occurrence: int
) -> tuple[KeyAnchor, Checkpoint] | None:
    """Return the inclusion proof of an audit entry, found by its stable key, and the signed
    checkpoint it proves into, as a bundle carries them beside the entry (a key registration,
    a key change), inside the caller's transaction; ``None`` while no signed checkpoint covers
    the entry."""
    try:
        anchor = anchor_of(session, action, subject, occurrence=occurrence)
    except NotYetAnchored:
        return None
    proof = KeyAnchor(
        leaf_index=anchor["leaf_index"],
        checkpoint_size=anchor["checkpoint_size"],
        proof=anchor["proof"],
    )
    return proof, anchor["checkpoint"]


def _entries_by_key(
    session: Session, wanted: Sequence[Wanted]
) -> dict[tuple[str, str], list[AuditEntry]]:
    """The entries of each wanted (action, subject), oldest first, in a few indexed reads."""
    actions = sorted({action for _, action, _, _ in wanted})
    subjects = sorted({subject for _, _, subject, _ in wanted})
    found: dict[tuple[str, str], list[AuditEntry]] = defaultdict(list)
    for i in range(0, len(subjects), 200):  # a bounded number of parameters per query
        query = (
            select(AuditEntry)
            .where(AuditEntry.subject.in_(subjects[i : i + 200]), AuditEntry.action.in_(actions))
            .order_by(AuditEntry.seq)
        )
        for row in session.scalars(query):
            assert row.subject is not None  # the query asked for these subjects
            found[(row.action, row.subject)].append(row)
    return found


def _anchor_set(
    session: Session, wanted: Sequence[Wanted]
) -> tuple[list[Anchor], list[Pending], Checkpoint | None]:
    """Return the anchors of the wanted entries in the latest checkpoint, what is pending (not
    logged, or not yet covered: ``{"of", "reason", "retry_after"}`` and why, as a message id
    with its params), and that checkpoint."""
    signed = audit.latest_checkpoint(session)
    size = signed["document"]["size"] if signed else 0
    by_key = _entries_by_key(session, wanted)
    located: list[tuple[Mapping[str, Any], AuditEntry]] = []
    pending: list[Pending] = []
    wait = max(1, math.ceil(audit.checkpoint_wait(session)))
    for of, action, subject, occurrence in wanted:
        rows = by_key.get((action, subject), [])
        if occurrence is None:
            located += [({**of, "index": i}, row) for i, row in enumerate(rows)]
        elif occurrence < len(rows):
            located.append((of, rows[occurrence]))
        else:
            missing: dict[str, object] = {"action": action, "subject": subject}
            pending.append(_pending(of, (NOT_LOGGED, missing), NOT_LOGGED_RETRY))
    covered = [(of, row) for of, row in located if row.seq <= size]
    for of, row in located:
        if row.seq > size:
            uncovered: dict[str, object] = {"seq": row.seq, "num": size, "wait": wait}
            pending.append(_pending(of, (NOT_COVERED, uncovered), wait))
    seqs = {row.seq for _, row in covered}
    proofs = audit.inclusion_proofs(session, seqs, size) if seqs else {}
    found = [
        Anchor(
            of=_of(of),
            entry=audit.entry_dict(row),
            leaf_index=row.seq - 1,
            checkpoint_size=size,
            proof=proofs[row.seq],
        )
        for of, row in covered
    ]
    return found, pending, signed


#: A pending anchor as the API lists it, and why, as a message id and its params.
#: Why an anchor is pending: a message id (or a plural's pair of them, counting ``num``) and
#: its params.
Why = tuple[str | tuple[str, str], dict[str, object]]
Pending = tuple[PendingAnchor, Why]


def _pending(of: Mapping[str, Any], why: Why, wait: int) -> Pending:
    message, params = why
    if isinstance(message, tuple):
        message = message[1] if params.get("num") != 1 else message[0]
    return PendingAnchor(of=_of(of), reason=message % params, retry_after=wait), why


def _not_yet(pending: Pending, signed: Checkpoint | None = None) -> NotYetAnchored:
    """The refusal of a proof that is pending: why (translated by its id), when to ask, and
    the latest signed checkpoint, which a player holds to the bound (docs/fairness.md)."""
    anchor, (message, params) = pending
    return NotYetAnchored(
        message, params=params, retry_after=anchor["retry_after"], checkpoint=signed
    )


def _of(of: Mapping[str, Any]) -> AnchorOf:
    """What ``core.anchors`` names an anchored document by, as its own mapping."""
    return cast(AnchorOf, dict(of))


def _round_wanted(round_: Round) -> list[Wanted]:
    wanted: list[Wanted] = [
        (of, *anchors.key_of(of))
        for of in (anchors.bet_of(round_.id), anchors.settlement_of(round_.id))
    ]
    decision = anchors.DECISION_ACTIONS.get(round_.game)
    if decision is not None:
        of = {"kind": "decision", "round_id": round_.id}
        wanted.append((of, decision, anchors.round_subject(round_.id), None))
    return wanted


def _commitment_wanted(seed_pair_id: int) -> Wanted:
    of = anchors.commitment_of(seed_pair_id)
    return (of, *anchors.key_of(of))


@read_only
def round_proof(session: Session, user_id: int, round_id: int) -> RoundProof:
    """Return the anchors of one of the caller's settled rounds: its bet and settlement
    entries, each decision's entry and its seed pair's commitment entry, in one signed
    checkpoint.

    :raises NotFound: for another player's round, or one not settled.
    :raises NotYetAnchored: while an entry is not in the log or in a checkpoint yet.
    """
    round_ = session.get(Round, round_id)
    if round_ is None or round_.user_id != user_id or round_.status != "settled":
        raise NotFound(N_("no settled round %(round)s of yours"), params={"round": round_id})
    wanted = [_commitment_wanted(round_.seed_pair_id), *_round_wanted(round_)]
    found, pending, signed = _anchor_set(session, wanted)
    if pending:
        raise _not_yet(pending[0], signed)
    assert signed is not None  # nothing pending: a checkpoint covers every anchor
    return RoundProof(round_.id, round_.seed_pair_id, signed, found)


@in_transaction
def pair_anchors(session: Session, pair: SeedPair, rounds: Sequence[Round]) -> PairAnchors:
    """The bundle's part of the log (inside the caller's transaction): the anchors of the
    pair's commitment, of each round's bet, settlement and decisions and, once revealed, of its
    reveal, the latest signed checkpoint (which they prove into), and what is still pending."""
    wanted = [_commitment_wanted(pair.id)]
    for round_ in rounds:
        wanted += _round_wanted(round_)
    if pair.status == "revealed":
        revealed = anchors.reveal_of(pair.id)
        wanted.append((revealed, *anchors.key_of(revealed)))
    found, pending, signed = _anchor_set(session, wanted)
    # The latest checkpoint, anchors or not: a verifier holds what is pending to the bound by it.
    return PairAnchors(
        anchors=found,
        checkpoints=[signed] if signed else [],
        pending_anchors=[anchor for anchor, _why in pending],
    )
