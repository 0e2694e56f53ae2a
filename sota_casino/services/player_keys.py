"""Players' own Ed25519 keys: registration (audited), replacement, and the signatures that every
bet, decision and move then carries (docs/fairness.md, "Decisions the player signs").

A key is registered by an audited ``player_key.registered`` entry; a player's newest key is the
one in use, and registering another retires it but keeps it, so the signatures it made stay
checkable. Registrations, bets and decisions take the player's row lock, so the log orders each
bet and decision after or before a registration exactly as the service saw them.
"""

from __future__ import annotations

import json
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Final
from typing import Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core import fairness
from ..core.errors import Conflict
from ..core.errors import InvalidInput
from ..core.errors import NotFound
from ..core.errors import SignatureInvalid
from ..core.errors import SignatureRequired
from ..core.marks import N_
from ..core.marks import Nn_
from ..models import AuditEntry
from ..models import PlayerKey
from ..models import User
from . import audit
from . import results
from . import transparency
from .hourly_limits import refuse_past_limit
from .locks import lock_seed_pairs
from .staff import require_player
from .tx import in_transaction
from .tx import read_only
from .tx import transactional

REGISTERED = fairness.PLAYER_KEY_REGISTERED


def _subject(user_id: int) -> str:
    return f"user:{user_id}"


def _keys_of(session: Session, user_id: int) -> list[PlayerKey]:
    return list(
        session.scalars(
            select(PlayerKey).where(PlayerKey.user_id == user_id).order_by(PlayerKey.id)
        )
    )


def _view(keys: list[PlayerKey]) -> results.PlayerKeys:
    """The player's keys, oldest first; each retired when the next one was registered."""
    shown = [
        results.PlayerKey(
            key_id=key.id,
            public_key_hex=key.public_key_hex,
            registered_at=key.created_at,
            retired_at=successor.created_at if successor else None,
            status="retired" if successor else "current",
        )
        for key, successor in zip(keys, [*keys[1:], None][: len(keys)], strict=True)
    ]
    return results.PlayerKeys(keys=shown, current_key_id=keys[-1].id if keys else None)


def _checked_public_key(public_key_hex: object) -> str:
    if not fairness.is_hex64(public_key_hex):
        raise InvalidInput(
            N_("public_key_hex must be the raw Ed25519 public key: 64 lower-case hex digits"),
            field="public_key_hex",
        )
    assert isinstance(public_key_hex, str)
    raw = bytes.fromhex(public_key_hex)
    try:
        Ed25519PublicKey.from_public_bytes(raw)
    except ValueError as exc:
        raise InvalidInput(
            N_("public_key_hex is not an Ed25519 public key: %(reason)s"),
            params={"reason": str(exc)},
            field="public_key_hex",
        ) from None
    if fairness.weak_key_problem(raw) is not None:
        # Anyone could sign the player's decisions under it: they would prove nothing.
        raise InvalidInput(
            N_(
                "public_key_hex is a weak Ed25519 key (of small order, or not canonically "
                "encoded): anyone could sign under it, so its signatures would prove nothing; "
                "make a new key"
            ),
            field="public_key_hex",
        )
    return public_key_hex


@transactional
def register_key(session: Session, user_id: int, public_key_hex: object) -> results.PlayerKeys:
    """Register the player's key for signing bets, decisions and moves; the key in use, if any, is
    retired (and kept). Registering the key in use again changes nothing.

    :raises Conflict: for a key retired before or registered by another account.
    :raises RateLimited: past ``KEY_REGISTRATIONS_PER_HOUR`` registrations of the account
        within the hour (the key in use sent again writes nothing, and is answered).
    """
    public_hex = _checked_public_key(public_key_hex)
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(N_("no such user"))
    require_player(user)
    # The player's row: orders this registration against the player's decisions.
    lock_seed_pairs(session, user_id)
    keys = _keys_of(session, user_id)
    if keys and keys[-1].public_key_hex == public_hex:
        return _view(keys)
    refuse_past_limit(
        session,
        "KEY_REGISTRATIONS_PER_HOUR",
        PlayerKey.created_at,
        PlayerKey.user_id == user_id,
        message=Nn_(
            "too many key registrations in the last hour; try again in %(num)s minute",
            "too many key registrations in the last hour; try again in %(num)s minutes",
        ),
    )
    # Another account registering it at once is not held off by this player's lock: the unique
    # key then stops the second insert, and its retry (tx.RETRYABLE_CONSTRAINTS) finds it here.
    if session.scalar(select(PlayerKey.id).where(PlayerKey.public_key_hex == public_hex)):
        raise Conflict(N_("this key was registered before; make a new key to replace a lost one"))
    now = datetime.now(UTC)
    key = PlayerKey(user_id=user_id, public_key_hex=public_hex, created_at=now)
    session.add(key)
    session.flush()
    audit.record(
        session,
        actor=f"user:{user_id}",
        action=REGISTERED,
        subject=_subject(user_id),
        data={
            "user_id": user_id,
            "key_id": key.id,
            "public_key_hex": public_hex,
            "retires": [keys[-1].id] if keys else [],
        },
        now=now,
    )
    return _view([*keys, key])


@read_only
def keys(session: Session, user_id: int) -> results.PlayerKeys:
    """Return the player's keys, oldest first, and which one is in use."""
    return _view(_keys_of(session, user_id))


@in_transaction
def registrations(session: Session, user_id: int) -> list[results.KeyRegistration]:
    """Return the audit entries that registered the player's keys, oldest first (inside the
    caller's transaction), as the bundle carries them: each with its anchor (its leaf index and
    inclusion proof) and the signed checkpoint it proves into, once a checkpoint covers it."""
    rows = session.scalars(
        select(AuditEntry)
        .where(AuditEntry.action == REGISTERED, AuditEntry.subject == _subject(user_id))
        .order_by(AuditEntry.seq)
    )
    shown = []
    for occurrence, entry in enumerate(map(audit.entry_dict, rows)):
        item = results.KeyRegistration(entry=entry)
        proved = transparency.entry_proof(session, REGISTERED, _subject(user_id), occurrence)
        if proved is not None:  # else the verifier says it is not anchored yet
            item["anchor"], item["checkpoint"] = proved
        shown.append(item)
    return shown


class ActionTarget(Protocol):
    """What an action's document names of its round (a round row or its record)."""

    @property
    def id(self) -> int: ...
    @property
    def user_id(self) -> int: ...
    @property
    def game(self) -> str: ...
    @property
    def seed_pair_id(self) -> int: ...
    @property
    def nonce(self) -> int: ...
    @property
    def actions(self) -> list[Any]: ...


@in_transaction
def signed_action(
    session: Session,
    round_: ActionTarget,
    choice: Any,
    signature: object,
    key_id: object,
) -> dict[str, Any] | None:
    """Check the player's signature of the next action of ``round_`` (inside the caller's
    transaction, before anything changes) and return it as the receipt holds it, or ``None``
    for an action sent unsigned by a player without a key.

    :raises SignatureRequired: if the player has a key and the action is unsigned.
    :raises SignatureInvalid: for another key, or a signature that is not the key's over the
        action's document.
    """
    lock_seed_pairs(session, round_.user_id)  # a bet's caller holds it already
    document = fairness.action_document(
        game=round_.game,
        round_id=round_.id,
        seed_pair_id=round_.seed_pair_id,
        nonce=round_.nonce,
        index=len(round_.actions),
        choice=choice,
    )
    return _signed(session, round_.user_id, document, signature, key_id)


@in_transaction
def signed_bet(
    session: Session, document: dict[str, Any], signature: object, key_id: object
) -> dict[str, Any] | None:
    """Check the player's signature of a bet's ``document`` (:func:`fairness.bet_document`, as
    the service is about to deal it: inside the caller's transaction, which holds the player's
    lock and has taken the nonce) and return it as the receipt holds it, or ``None`` for a bet
    sent unsigned by a player without a key.

    :raises SignatureRequired: if the player has a key and the bet is unsigned.
    :raises SignatureInvalid: for another key, or a signature that is not the key's over the
        bet's document.
    """
    return _signed(session, document["user_id"], document, signature, key_id)


#: A document sent unsigned by a player with a key, by the document's type.
_UNSIGNED: Final = {
    fairness.ACTION_TYPE: N_(
        "you registered key %(key)s: sign this action with it "
        "(signature and key_id; docs/fairness.md shows the document)"
    ),
    fairness.BET_TYPE: N_(
        "you registered key %(key)s: sign this bet with it (signature and key_id, with the "
        "seed_pair_id and nonce it takes; docs/fairness.md shows the document)"
    ),
}
#: A signature that is not the key's over the document, by the document's type.
_NOT_ITS_SIGNATURE: Final = {
    fairness.ACTION_TYPE: N_(
        "the signature is not key %(key)s's over this action's document %(document)s"
    ),
    fairness.BET_TYPE: N_(
        "the signature is not key %(key)s's over this bet's document %(document)s"
    ),
}


def _signed(
    session: Session,
    user_id: int,
    document: dict[str, Any],
    signature: object,
    key_id: object,
) -> dict[str, Any] | None:
    """Check the player's signature of ``document`` (a bet's or an action's) against the key in
    use, under the player's lock (which orders it after or before a registration); return
    ``{document, signature, key_id}``, or ``None`` when the player has no key and sent none."""
    current = session.scalars(
        select(PlayerKey).where(PlayerKey.user_id == user_id).order_by(PlayerKey.id.desc()).limit(1)
    ).first()
    if signature is None and key_id is None:
        if current is None:
            return None
        raise SignatureRequired(
            _UNSIGNED[document["type"]], params={"key": current.id}, field="signature"
        )
    if current is None:
        raise SignatureInvalid(
            N_(
                "you have no registered key: register one (POST /api/v1/me/keys) "
                "or send no signature"
            ),
            field="key_id",
        )
    if key_id != current.id:
        raise SignatureInvalid(
            N_("key_id must be your registered key %(key)s, not %(given)s"),
            params={"key": current.id, "given": json.dumps(key_id)},
            field="key_id",
        )
    if not isinstance(signature, str) or not fairness.verify_signature(
        current.public_key_hex, document, signature
    ):
        raise SignatureInvalid(
            _NOT_ITS_SIGNATURE[document["type"]],
            params={"key": current.id, "document": fairness.canonical_json(document).decode()},
            field="signature",
        )
    return {"document": document, "signature": signature, "key_id": current.id}


def with_signed(
    signed_actions: list[Any] | None, count: int, signed: dict[str, Any] | None
) -> list[Any] | None:
    """Return a round's signed actions with the next one appended (``count`` actions before);
    ``None`` while none is signed, so unsigned rounds keep their receipts as they were."""
    if signed is None and signed_actions is None:
        return None
    return [*(signed_actions or [None] * count), signed]
