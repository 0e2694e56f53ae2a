"""The provably fair scheme of FAIRNESS.md, to the byte.

Seeds and commitments, the HMAC-SHA256 stream of a round, rejection-sampled uniform integers,
the forward Fisher–Yates shuffle (its first ``k`` positions are final after ``k`` steps), the
canonical JSON of signed documents, and Ed25519 signing and verification.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .cards import Card
from .cards import canonical_shoe
from .errors import InvalidInput

SEED_BYTES: Final = 32
WORD: Final = 2**32
CLIENT_SEED_MAX: Final = 64
TIME_FORMAT: Final = "%Y-%m-%dT%H:%M:%S.%fZ"


# --- seeds --------------------------------------------------------------------------------


def new_server_seed() -> bytes:
    """Return 32 fresh bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


def new_client_seed() -> str:
    """Return a random default client seed (the player may choose any other)."""
    return secrets.token_hex(8)


def commitment_of(server_seed: bytes) -> str:
    """Return the commitment to ``server_seed``: its SHA-256, lower-case hex."""
    return hashlib.sha256(server_seed).hexdigest()


def check_client_seed(client_seed: object) -> str:
    """Return ``client_seed`` if it is a string of 1–64 characters.

    :raises InvalidInput: otherwise, saying why.
    """
    if not isinstance(client_seed, str) or not 1 <= len(client_seed) <= CLIENT_SEED_MAX:
        raise InvalidInput(
            f"client_seed must be a string of 1 to {CLIENT_SEED_MAX} characters",
            field="client_seed",
        )
    return client_seed


@dataclass(frozen=True, slots=True)
class Seeds:
    """What fixes a round's stream: the secret server seed, the client seed and the nonce."""

    server_seed: bytes
    client_seed: str
    nonce: int


# --- the stream ---------------------------------------------------------------------------


class Stream:
    """The byte stream ``block(0) ‖ block(1) ‖ …`` of one round, consumed from the front.

    ``block(k) = HMAC-SHA256(server_seed, UTF-8("{client_seed}:{nonce}:{k}"))``.
    """

    __slots__ = ("_buffer", "_offset", "_key", "_prefix", "_next_block", "bytes_read")

    def __init__(self, seeds: Seeds) -> None:
        self._key = seeds.server_seed
        self._prefix = f"{seeds.client_seed}:{seeds.nonce}:"
        self._buffer = b""
        self._offset = 0
        self._next_block = 0
        self.bytes_read = 0

    def block(self, k: int) -> bytes:
        """Return block ``k`` of this stream (without consuming anything)."""
        return hmac.digest(self._key, f"{self._prefix}{k}".encode(), "sha256")

    def read(self, n: int) -> bytes:
        """Consume and return the next ``n`` bytes."""
        while len(self._buffer) - self._offset < n:
            self._buffer = self._buffer[self._offset :] + self.block(self._next_block)
            self._offset = 0
            self._next_block += 1
        out = self._buffer[self._offset : self._offset + n]
        self._offset += n
        self.bytes_read += n
        return out

    def uniform(self, n: int) -> int:
        """Return a uniform integer in ``[0, n)`` by rejection sampling (no modulo bias)."""
        if not 1 <= n <= WORD:
            raise ValueError(f"uniform bound must be in 1..2**32, got {n}")
        limit = WORD - WORD % n
        while True:
            x = int.from_bytes(self.read(4), "big")
            if x < limit:
                return x % n

    @property
    def blocks_used(self) -> int:
        """How many HMAC blocks were computed so far."""
        return self._next_block


# --- shuffling ----------------------------------------------------------------------------


class PartialShuffle:
    """A forward Fisher–Yates shuffle run lazily: positions ``0..k-1`` are final after ``k`` steps.

    Casino War needs at most 7 cards of a 312-card shoe, so it takes only the steps it needs;
    the cards are the same as those of a full shuffle.
    """

    __slots__ = ("_cards", "_stream", "_done")

    def __init__(self, cards: Sequence[Card], stream: Stream) -> None:
        self._cards = list(cards)
        self._stream = stream
        self._done = 0  # positions 0.._done-1 are final

    def prefix(self, k: int) -> tuple[Card, ...]:
        """Return the first ``k`` cards of the shuffled order, taking only the steps needed."""
        cards, n = self._cards, len(self._cards)
        k = min(k, n)
        uniform = self._stream.uniform
        for i in range(self._done, min(k, n - 1)):
            j = i + uniform(n - i)
            cards[i], cards[j] = cards[j], cards[i]
        self._done = max(self._done, k)
        return tuple(cards[:k])

    def full(self) -> tuple[Card, ...]:
        """Return the whole shuffled order."""
        return self.prefix(len(self._cards))


def shuffle(cards: Sequence[Card], stream: Stream) -> list[Card]:
    """Return ``cards`` shuffled by the forward Fisher–Yates shuffle drawing from ``stream``."""
    return list(PartialShuffle(cards, stream).full())


def shuffled_shoe(
    seeds: Seeds, deck: str = "standard52", decks: int = 1, count: int | None = None
) -> tuple[Card, ...]:
    """Return the first ``count`` cards (all by default) of the round's shuffled shoe."""
    shuffler = PartialShuffle(canonical_shoe(deck, decks), Stream(seeds))
    return shuffler.full() if count is None else shuffler.prefix(count)


# --- signed documents ---------------------------------------------------------------------


def canonical_json(doc: Any) -> bytes:
    """Return the canonical bytes of a document: sorted keys, no spaces, UTF-8."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def format_time(moment: datetime) -> str:
    """Return ``moment`` as ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(TIME_FORMAT)


def parse_time(text: str) -> datetime:
    """Parse a time written by :func:`format_time`."""
    return datetime.strptime(text, TIME_FORMAT).replace(tzinfo=UTC)


def new_signing_key() -> Ed25519PrivateKey:
    """Return a fresh Ed25519 private key."""
    return Ed25519PrivateKey.generate()


def private_key_pem(key: Ed25519PrivateKey) -> bytes:
    """Return ``key`` as unencrypted PKCS#8 PEM."""
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def load_private_key(pem: bytes) -> Ed25519PrivateKey:
    """Load an Ed25519 private key from PEM."""
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("the signing key is not an Ed25519 key")
    return key


def public_key_hex(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """Return the raw 32-byte public key as hex."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def public_key_pem(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """Return the public key as SubjectPublicKeyInfo PEM."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def sign(key: Ed25519PrivateKey, doc: Any) -> str:
    """Sign the canonical bytes of ``doc``; return the signature as hex."""
    return key.sign(canonical_json(doc)).hex()


def signed(key: Ed25519PrivateKey, doc: dict[str, Any]) -> dict[str, Any]:
    """Return the ``SIGNED`` envelope ``{"document", "signature"}`` of API.md."""
    return {"document": doc, "signature": sign(key, doc)}


def verify_signature(public_hex: str, doc: Any, signature_hex: str) -> bool:
    """Tell whether ``signature_hex`` is a valid signature of ``doc`` by ``public_hex``."""
    try:
        public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex))
        public.verify(bytes.fromhex(signature_hex), canonical_json(doc))
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def commitment_document(
    *, seed_pair_id: int, user_id: int, commitment: str, created_at: str
) -> dict[str, Any]:
    """Return the commitment document, signed when a seed pair is created."""
    return {
        "type": "commitment",
        "v": 1,
        "seed_pair_id": seed_pair_id,
        "user_id": user_id,
        "commitment": commitment,
        "created_at": created_at,
    }


def reveal_document(
    *,
    seed_pair_id: int,
    user_id: int,
    server_seed: bytes,
    client_seed: str,
    rounds: int,
    revealed_at: str,
) -> dict[str, Any]:
    """Return the reveal document, signed when a seed pair is rotated out."""
    return {
        "type": "reveal",
        "v": 1,
        "seed_pair_id": seed_pair_id,
        "user_id": user_id,
        "commitment": commitment_of(server_seed),
        "server_seed": server_seed.hex(),
        "client_seed": client_seed,
        "rounds": rounds,
        "revealed_at": revealed_at,
    }


def round_document(
    *,
    round_id: int,
    game: str,
    seed_pair_id: int,
    commitment: str,
    client_seed: str,
    nonce: int,
    rules: dict[str, Any],
    actions: list[Any],
    cards: list[Card],
    outcome: dict[str, Any],
    stakes: dict[str, int],
    payout: int,
    settled_at: str,
) -> dict[str, Any]:
    """Return the round receipt, signed when the round settles."""
    return {
        "type": "round",
        "v": 1,
        "round_id": round_id,
        "game": game,
        "seed_pair_id": seed_pair_id,
        "commitment": commitment,
        "client_seed": client_seed,
        "nonce": nonce,
        "rules": rules,
        "actions": actions,
        "cards": cards,
        "outcome": outcome,
        "stakes": stakes,
        "payout": payout,
        "settled_at": settled_at,
    }
