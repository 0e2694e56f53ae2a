"""Seed pairs and signatures: commitments, nonces, rotation with a signed reveal, bundles."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Final
from typing import cast

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import Table
from sqlalchemy import bindparam
from sqlalchemy import event
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.orm import Session

from ..core import fairness
from ..core.errors import Conflict
from ..core.errors import NotFound
from ..core.errors import RoundOpen
from ..core.marks import N_
from ..core.marks import Nn_
from ..models import AuditEntry
from ..models import Round
from ..models import SeedPair
from ..models import SigningKey
from . import audit
from . import player_keys
from . import transparency
from .context import context_of
from .hourly_limits import refuse_past_limit
from .locks import lock_seed_pairs
from .results import ActiveSeedPair
from .results import Bundle
from .results import LoggedKeyChange
from .results import PublicKey
from .results import Receipt
from .results import RetiredKey
from .results import Rotation
from .results import SeedPairSummary
from .results import Signed
from .results import WaitingRound
from .text import storable
from .tx import in_transaction
from .tx import locked
from .tx import read_only
from .tx import transactional

#: ``session.info`` marker: this transaction registered the key; it holds once committed.
_REGISTERING: Final = "sota_casino.registering_key"


@in_transaction
def signed(
    session: Session, document: dict[str, Any], canonical: bytes | None = None
) -> dict[str, Any]:
    """Sign ``document`` with the service key (registering the key in the first transaction
    that signs: a rollback undoes the registration, and the next signature makes it again).
    ``canonical``: the document's canonical bytes, where the caller has them already."""
    _ensure_key_registered(session)
    return fairness.signed(context_of(session).signing_key, document, canonical)


def _ensure_key_registered(session: Session) -> None:
    """Register the service key in this transaction unless it is known to be registered; the
    process believes it only once the transaction commits."""
    if not context_of(session).public_key_registered and not session.info.get(_REGISTERING):
        _register_public_key(session)
        session.info[_REGISTERING] = True


@event.listens_for(Session, "after_commit")
def _key_registered(session: Session) -> None:
    if session.info.pop(_REGISTERING, False):
        context_of(session).public_key_registered = True


@event.listens_for(Session, "after_rollback")
def _key_registration_undone(session: Session) -> None:
    session.info.pop(_REGISTERING, None)


def _register_public_key(session: Session) -> None:
    """Record the service's public key; a new key retires the old ones, as an audited event."""
    public_hex = context_of(session).public_key_hex
    if session.scalar(select(SigningKey.id).where(SigningKey.public_key_hex == public_hex)):
        return
    retired = session.scalars(
        select(SigningKey.public_key_hex).where(SigningKey.retired_at.is_(None))
    ).all()
    _install_key(session, public_hex, datetime.now(UTC))
    audit.record(
        session,
        actor="system",
        action=fairness.KEY_CREATED,
        subject=f"key:{public_hex[:16]}",
        data={"public_key_hex": public_hex, "retired": list(retired)},
    )


@read_only
def key_retired_at(session: Session) -> datetime | None:
    """When ``flask keys rotate`` retired this process's key; None while it is the one in use
    (or before it signed anything)."""
    return session.scalar(
        select(SigningKey.retired_at).where(
            SigningKey.public_key_hex == context_of(session).public_key_hex
        )
    )


def _install_key(session: Session, public_hex: str, now: datetime) -> None:
    """Retire the keys in use and record ``public_hex`` as the one that signs from ``now``."""
    session.execute(
        update(SigningKey).where(SigningKey.retired_at.is_(None)).values(retired_at=now)
    )
    session.add(SigningKey(public_key_hex=public_hex, created_at=now))
    session.flush()


@in_transaction
def create_seed_pair(session: Session, user_id: int, status: str) -> SeedPair:
    """Create a seed pair with a fresh server seed and its signed commitment (audited)."""
    server_seed = fairness.new_server_seed()
    now = datetime.now(UTC)
    pair = SeedPair(
        user_id=user_id,
        status=status,
        server_seed=server_seed.hex(),
        commitment=fairness.commitment_of(server_seed),
        commitment_document={},
        commitment_signature="",
        created_at=now,
    )
    session.add(pair)
    session.flush()
    envelope = signed(
        session,
        fairness.commitment_document(
            seed_pair_id=pair.id,
            user_id=user_id,
            commitment=pair.commitment,
            created_at=fairness.format_time(now),
        ),
    )
    pair.commitment_document = envelope["document"]
    pair.commitment_signature = envelope["signature"]
    audit.record(
        session,
        actor=f"user:{user_id}",
        action="seed_pair.created",
        subject=f"seed_pair:{pair.id}",
        data={"commitment": pair.commitment, "status": status},
    )
    return pair


@in_transaction
def activate(session: Session, pair: SeedPair, client_seed: str | None) -> None:
    pair.status = "active"
    chosen = fairness.check_client_seed(client_seed or fairness.new_client_seed())
    pair.client_seed = storable(chosen, "client_seed")
    pair.activated_at = datetime.now(UTC)
    session.flush()
    audit.record(
        session,
        actor=f"user:{pair.user_id}",
        action="seed_pair.client_seed_set",
        subject=f"seed_pair:{pair.id}",
        data={"client_seed": pair.client_seed},
    )


@in_transaction
def open_seed_pairs(session: Session, user_id: int, client_seed: str | None = None) -> None:
    """Give a new player an active pair and the next one, both committed (caller's transaction)."""
    active = create_seed_pair(session, user_id, "next")
    activate(session, active, client_seed)
    create_seed_pair(session, user_id, "next")


@dataclass(frozen=True, slots=True)
class ActivePair:
    """What a round takes from the player's active seed pair."""

    id: int
    server_seed: str
    client_seed: str
    commitment: str


_PAIRS = cast(Table, SeedPair.__table__)
_TAKE_NONCE = (
    update(_PAIRS)
    .where(_PAIRS.c.user_id == bindparam("owner"), _PAIRS.c.status == "active")
    .values(next_nonce=_PAIRS.c.next_nonce + 1)
    .returning(
        _PAIRS.c.id,
        _PAIRS.c.server_seed,
        _PAIRS.c.client_seed,
        _PAIRS.c.commitment,
        _PAIRS.c.next_nonce,
    )
)


@in_transaction
def take_nonce(session: Session, user_id: int) -> tuple[ActivePair, int]:
    """Take the next nonce of the player's active pair (gap-free: the caller's transaction
    commits the round with it or rolls both back). The caller holds the player's row lock
    (:func:`lock_seed_pairs`, or a read of the row ``FOR UPDATE``): the update reads the
    active pair as committed after that lock was granted."""
    row = session.connection().execute(_TAKE_NONCE, {"owner": user_id}).one()
    return ActivePair(row.id, row.server_seed, row.client_seed, row.commitment), row.next_nonce - 1


def seeds_for(pair: SeedPair | ActivePair, nonce: int) -> fairness.Seeds:
    assert pair.client_seed is not None
    return fairness.Seeds(bytes.fromhex(pair.server_seed), pair.client_seed, nonce)


def _pair_view(pair: SeedPair, upcoming: SeedPair) -> ActiveSeedPair:
    assert pair.client_seed is not None  # an active pair has its client seed
    return ActiveSeedPair(
        seed_pair_id=pair.id,
        commitment=pair.commitment,
        client_seed=pair.client_seed,
        next_nonce=pair.next_nonce,
        commitment_document=pair.commitment_document,
        signature=pair.commitment_signature,
        next_commitment=upcoming.commitment,
        next_seed_pair_id=upcoming.id,
        next_commitment_document=upcoming.commitment_document,
        next_signature=upcoming.commitment_signature,
    )


def _pair(session: Session, user_id: int, status: str, *, lock: bool = False) -> SeedPair:
    query = select(SeedPair).where(SeedPair.user_id == user_id, SeedPair.status == status)
    return session.scalars(locked(query) if lock else query).one()


def _waiting_round(session: Session, pair: SeedPair) -> WaitingRound | None:
    """The first round of ``pair`` still waiting for the player, which a rotation must not
    leave behind, or None."""
    found = session.execute(
        select(Round.id, Round.game)
        .where(Round.seed_pair_id == pair.id, Round.status != "settled")
        .order_by(Round.id)
        .limit(1)
    ).first()
    return None if found is None else WaitingRound(id=found.id, game=found.game)


@read_only
def waiting_round(session: Session, user_id: int) -> WaitingRound | None:
    """The round that refuses a rotation of the player's active pair now, or None."""
    return _waiting_round(session, _pair(session, user_id, "active"))


@read_only
def active_seed_pair(session: Session, user_id: int) -> ActiveSeedPair:
    """Return the player's active pair (never its server seed) and the next pair's signed
    commitment."""
    return _pair_view(_pair(session, user_id, "active"), _pair(session, user_id, "next"))


@transactional
def rotate(session: Session, user_id: int, client_seed: str | None = None) -> Rotation:
    """Retire the active pair, reveal its server seed (signed), and activate the next pair.

    :raises RoundOpen: while a round of the active pair waits for the player.
    :raises RateLimited: past ``ROTATIONS_PER_HOUR`` rotations of the account within the hour.
    """
    if client_seed is not None:
        storable(fairness.check_client_seed(client_seed), "client_seed")
    lock_seed_pairs(session, user_id)
    # Each rotation signs a reveal and logs it for good: a revealed pair is a rotation.
    refuse_past_limit(
        session,
        "ROTATIONS_PER_HOUR",
        SeedPair.revealed_at,
        SeedPair.user_id == user_id,
        message=Nn_(
            "too many seed rotations in the last hour; try again in %(num)s minute",
            "too many seed rotations in the last hour; try again in %(num)s minutes",
        ),
    )
    current = _pair(session, user_id, "active", lock=True)
    open_round = _waiting_round(session, current)
    if open_round is not None:
        raise RoundOpen(
            N_("round %(round)s is still open; finish it before rotating"),
            params={"round": open_round.id},
        )
    revealed = reveal_pair(session, current)
    upcoming = _pair(session, user_id, "next", lock=True)
    activate(session, upcoming, client_seed)
    following = create_seed_pair(session, user_id, "next")
    return Rotation(revealed=revealed, active=_pair_view(upcoming, following))


@in_transaction
def reveal_pair(session: Session, pair: SeedPair) -> Signed:
    """Retire the active ``pair``: sign its reveal and log the rotation that anchors it (in the
    caller's transaction, which holds the player's seed pairs)."""
    now = datetime.now(UTC)
    envelope = signed(
        session,
        fairness.reveal_document(
            seed_pair_id=pair.id,
            user_id=pair.user_id,
            server_seed=bytes.fromhex(pair.server_seed),
            client_seed=pair.client_seed or "",
            rounds=pair.next_nonce,
            revealed_at=fairness.format_time(now),
        ),
    )
    pair.status = "revealed"
    pair.revealed_at = now
    pair.reveal_document = envelope["document"]
    pair.reveal_signature = envelope["signature"]
    session.flush()
    audit.record(
        session,
        actor=f"user:{pair.user_id}",
        action="seed_pair.rotated",
        subject=f"seed_pair:{pair.id}",
        data={"server_seed": pair.server_seed, "rounds": pair.next_nonce},
    )
    return Signed(document=envelope["document"], signature=envelope["signature"])


def pair_summary(pair: SeedPair) -> SeedPairSummary:
    """A seed pair in a list; its server seed only once revealed, with the signed reveal."""
    revealed = pair.status == "revealed"
    return {
        "seed_pair_id": pair.id,
        "status": pair.status,
        "commitment": pair.commitment,
        "client_seed": pair.client_seed,
        "rounds": pair.next_nonce,
        "created_at": fairness.format_time(pair.created_at),
        "revealed_at": fairness.format_time(pair.revealed_at) if pair.revealed_at else None,
        "server_seed": pair.server_seed if revealed else None,
        "reveal": _reveal(pair),
    }


def _reveal(pair: SeedPair) -> Signed | None:
    """The pair's signed reveal, once it is revealed (stored as it was signed)."""
    if pair.status != "revealed":
        return None
    return cast(Signed, {"document": pair.reveal_document, "signature": pair.reveal_signature})


@in_transaction
def pairs_of(session: Session, user_id: int) -> list[SeedPairSummary]:
    """The player's pairs, newest first (inside the caller's transaction)."""
    pairs = session.scalars(
        select(SeedPair).where(SeedPair.user_id == user_id).order_by(SeedPair.id.desc())
    )
    return [pair_summary(pair) for pair in pairs]


@read_only
def seed_pairs(session: Session, user_id: int) -> list[SeedPairSummary]:
    """Return the player's pairs, newest first; revealed ones carry their signed reveal."""
    return pairs_of(session, user_id)


@read_only
def bundle(session: Session, user_id: int, seed_pair_id: int) -> Bundle:
    """Return the verifier's input for one of the player's pairs (the API's Bundle).

    :raises NotFound: for another player's pair or one not yet shown (``next``).
    """
    pair = session.get(SeedPair, seed_pair_id)
    if pair is None or pair.user_id != user_id or pair.status == "next":
        raise NotFound(N_("no seed pair %(id)s of yours"), params={"id": seed_pair_id})
    rounds = session.scalars(
        select(Round)
        .where(Round.seed_pair_id == pair.id, Round.status == "settled")
        .order_by(Round.nonce)
    ).all()
    return {
        "public_key_hex": context_of(session).public_key_hex,
        "commitment": {
            "document": pair.commitment_document,
            "signature": pair.commitment_signature,
        },
        "reveal": _reveal(pair),
        "rounds": [
            cast(Receipt, {"document": r.receipt, "signature": r.receipt_signature}) for r in rounds
        ],
        "key_changes": logged_key_changes(session),
        "player_keys": player_keys.registrations(session, user_id),
        **transparency.pair_anchors(session, pair, rounds),
    }


@read_only
def public_key_info(session: Session) -> PublicKey:
    """Return the service's public key (hex and PEM) and the retired ones."""
    ctx = context_of(session)
    retired = session.scalars(
        select(SigningKey).where(SigningKey.retired_at.is_not(None)).order_by(SigningKey.id)
    ).all()
    return PublicKey(
        algorithm="Ed25519",
        public_key_hex=ctx.public_key_hex,
        public_key_pem=fairness.public_key_pem(ctx.signing_key),
        key_changes=cast(list[Signed], key_changes(session)),  # as change_key signed them
        retired=[
            RetiredKey(k.public_key_hex, k.created_at, k.retired_at)
            for k in retired
            if k.retired_at is not None  # as selected
        ],
    )


KEY_CHANGED = fairness.KEY_CHANGED


@transactional
def change_key(session: Session, new_key: Ed25519PrivateKey) -> dict[str, Any]:
    """Retire the service's key for ``new_key``: sign a key-change document naming the new key
    with the OLD key, audit it, and register the new key (the old one is retired).

    A verifier that trusts the old key may then trust the new one, and only so: without this
    document a changed key is refused. The caller swaps the key file afterwards (and restarts
    the service); until then the old key goes on signing, which verifiers accept as before.

    :returns: the signed key-change document.
    """
    ctx = context_of(session)
    old_hex, new_hex = ctx.public_key_hex, fairness.public_key_hex(new_key)
    if new_hex == old_hex:
        raise Conflict("the new key is the key in use")
    _ensure_key_registered(session)
    if not audit.signs_with_the_key_in_use(session):
        # The log's key changes form one chain (core.anchors): each from the key in use.
        raise Conflict("this process signs with a retired key; run it with the key file in use")
    now = datetime.now(UTC)
    envelope = fairness.signed(
        ctx.signing_key,
        fairness.key_change_document(
            old_public_key_hex=old_hex,
            new_public_key_hex=new_hex,
            changed_at=fairness.format_time(now),
        ),
    )
    _install_key(session, new_hex, now)
    audit.record(
        session,
        actor="system",
        action=KEY_CHANGED,
        subject=f"key:{new_hex[:16]}",
        data={"key_change": envelope},
        now=now,
    )
    return envelope


@in_transaction
def key_changes(session: Session) -> list[dict[str, Any]]:
    """Return every signed key-change document, oldest first (from the audit log, where each
    was recorded when it was signed)."""
    rows = session.scalars(
        select(AuditEntry.data).where(AuditEntry.action == KEY_CHANGED).order_by(AuditEntry.seq)
    )
    return [json.loads(data)["key_change"] for data in rows]


@in_transaction
def logged_key_changes(session: Session) -> list[LoggedKeyChange]:
    """Return every signed key change, oldest first, as a bundle carries it: with the audit
    entry that recorded it and, once a signed checkpoint covers that entry, its inclusion proof
    and the checkpoint. A verifier that trusts only the new key learns the old one from them:
    from the new key's own signed log, not from the old key's word alone."""
    rows = session.scalars(
        select(AuditEntry).where(AuditEntry.action == KEY_CHANGED).order_by(AuditEntry.seq)
    ).all()
    changes = []
    taken: Counter[str] = Counter()  # entries of each subject so far: the stable key's occurrence
    for row in rows:
        entry = audit.entry_dict(row)
        signed = entry["data"]["key_change"]
        change = LoggedKeyChange(
            document=signed["document"], signature=signed["signature"], entry=entry
        )
        subject = str(row.subject)  # change_key names the key it installs
        proved = transparency.entry_proof(session, KEY_CHANGED, subject, taken[subject])
        taken[subject] += 1
        if proved is not None:
            change["anchor"], change["checkpoint"] = proved
        changes.append(change)
    return changes
