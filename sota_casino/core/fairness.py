"""The provably fair scheme of docs/fairness.md, to the byte.

Seeds and commitments, the HMAC-SHA256 stream of a round, rejection-sampled uniform integers,
the forward Fisher–Yates shuffle (its first ``k`` positions are final after ``k`` steps), the
canonical JSON of signed documents, and Ed25519 signing and verification.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import secrets
import struct
from collections.abc import Callable
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime

# CPython's C encoder, undeclared in typeshed (a private name; None without the C module).
from json.encoder import c_make_encoder  # type: ignore[attr-defined]
from json.encoder import encode_basestring
from typing import Any
from typing import Final
from typing import NamedTuple

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .cards import Card
from .cards import canonical_shoe
from .errors import InvalidInput
from .marks import N_

SEED_BYTES: Final = 32
WORD_BITS: Final = 32
WORD: Final = 2**WORD_BITS
CLIENT_SEED_MAX: Final = 64
#: The scheme's time form; the hour is 00 to 23 here, since ``fromisoformat`` reads ``24:00`` as
#: the next midnight from Python 3.14 on (the other fields it holds to their ranges itself).
_TIME_TEXT: Final = re.compile(r"\d{4}-\d\d-\d\dT(?:[01]\d|2[0-3]):\d\d:\d\d\.\d{6}Z", re.ASCII)
_HEX64: Final = re.compile(r"[0-9a-f]{64}")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")

_unpack_word: Final = struct.Struct(">I").unpack_from  # one big-endian 32-bit word
_SHA256_BLOCK_BYTES: Final = 64
_INNER_PAD: Final = bytes(b ^ 0x36 for b in range(256))  # translation tables of RFC 2104
_OUTER_PAD: Final = bytes(b ^ 0x5C for b in range(256))


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


def is_hex64(value: object) -> bool:
    """Tell whether ``value`` is 64 lower-case hex digits (a seed, a commitment, a key)."""
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


def check_client_seed(client_seed: object) -> str:
    """Return ``client_seed`` if it is a string of 1–64 Unicode code points, none of them NUL
    or a surrogate (which UTF-8 cannot encode). It is used as given: no trimming, no Unicode
    normalisation, so the stream's bytes are exactly its UTF-8.

    :raises InvalidInput: otherwise, saying why.
    """
    if not isinstance(client_seed, str) or not 1 <= len(client_seed) <= CLIENT_SEED_MAX:
        raise InvalidInput(
            N_("client_seed must be a string of 1 to %(max)s characters"),
            params={"max": CLIENT_SEED_MAX},
            field="client_seed",
        )
    if "\x00" in client_seed:
        raise InvalidInput(N_("client_seed must not contain a NUL character"), field="client_seed")
    if _SURROGATE.search(client_seed):
        raise InvalidInput(
            N_("client_seed must not contain a lone surrogate (U+D800 to U+DFFF)"),
            field="client_seed",
        )
    return client_seed


class Seeds(NamedTuple):
    """What fixes a round's stream: the secret server seed, the client seed and the nonce.

    An immutable named tuple rather than a frozen dataclass: one is made for every round, and
    a tuple is built several times faster.
    """

    server_seed: bytes
    client_seed: str
    nonce: int


# --- the stream ---------------------------------------------------------------------------


class Stream:
    """The byte stream ``block(0) ‖ block(1) ‖ …`` of one round, consumed from the front.

    ``block(k) = HMAC-SHA256(server_seed, UTF-8("{client_seed}:{nonce}:{k}"))``.
    """

    __slots__ = ("_mac", "_prefix", "_buffer", "_offset", "_next_block", "_discarded")

    def __init__(self, seeds: Seeds) -> None:
        self._mac = _keyed_hmac(seeds.server_seed)
        self._prefix = f"{seeds.client_seed}:{seeds.nonce}:".encode()
        # Every round draws from its stream, so block 0 is computed at once rather than
        # on the first draw, which then skips the refill.
        self._buffer = self.block(0)
        self._offset = 0  # unread bytes start here in ``_buffer``
        self._next_block = 1
        self._discarded = 0  # consumed bytes dropped from the front of ``_buffer``

    def block(self, k: int) -> bytes:
        """Return block ``k`` of this stream (without consuming anything)."""
        return self._mac.digest(b"%s%d" % (self._prefix, k))

    def read(self, n: int) -> bytes:
        """Consume and return the next ``n`` bytes."""
        if n < 0:
            raise ValueError(f"cannot read {n} bytes")
        start = self._offset
        end = start + n
        if end > len(self._buffer):
            self._refill(n)
            start, end = 0, n
        self._offset = end
        return self._buffer[start:end]

    def _refill(self, n: int) -> None:
        """Drop the consumed bytes and append blocks until ``n`` unread bytes are buffered."""
        buffer = self._buffer[self._offset :]
        self._discarded += self._offset
        while len(buffer) < n:
            buffer += self.block(self._next_block)
            self._next_block += 1
        self._buffer = buffer
        self._offset = 0

    def _next_word(self) -> int:
        """Consume the next 4 bytes as a big-endian unsigned integer."""
        # ``read(4)`` inlined: this is the innermost step of every shuffle.
        start = self._offset
        end = start + 4
        if end > len(self._buffer):
            self._refill(4)
            start, end = 0, 4
        self._offset = end
        word: int = _unpack_word(self._buffer, start)[0]
        return word

    def uniform(self, n: int) -> int:
        """Return a uniform integer in ``[0, n)`` by rejection sampling (no modulo bias).

        This is ``_uniform_from_words(self._next_word, n, 32)`` with ``_next_word`` written
        out, since every step of every shuffle calls it; a test holds the two equal.
        """
        if not 1 <= n <= WORD:
            raise ValueError(f"uniform bound must be in 1..2**{WORD_BITS}, got {n}")
        limit = WORD - WORD % n
        buffer, offset = self._buffer, self._offset
        while True:
            if offset + 4 > len(buffer):
                self._offset = offset
                self._refill(4)
                buffer, offset = self._buffer, 0
            x = _unpack_word(buffer, offset)[0]
            offset += 4
            if x < limit:
                self._offset = offset
                return int(x % n)

    @property
    def bytes_read(self) -> int:
        """How many bytes were consumed so far."""
        return self._discarded + self._offset

    @property
    def blocks_used(self) -> int:
        """How many HMAC blocks were computed so far."""
        return self._next_block


class _KeyedHmacSha256:
    """HMAC-SHA256 (RFC 2104) with its key absorbed once.

    ``hmac.digest`` pads and hashes the key again on every call; here each message costs two
    copies of the keyed hash states, two short hashes, and nothing else.
    """

    __slots__ = ("_inner", "_outer")

    def __init__(self, key: bytes) -> None:
        if len(key) > _SHA256_BLOCK_BYTES:
            key = hashlib.sha256(key).digest()
        key = key.ljust(_SHA256_BLOCK_BYTES, b"\0")
        self._inner = hashlib.sha256(key.translate(_INNER_PAD))
        self._outer = hashlib.sha256(key.translate(_OUTER_PAD))

    def digest(self, message: bytes) -> bytes:
        """Return ``HMAC-SHA256(key, message)``."""
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()


@functools.lru_cache(maxsize=256)
def _keyed_hmac(server_seed: bytes) -> _KeyedHmacSha256:
    """Return HMAC-SHA256 keyed with ``server_seed``, shared by every stream of that seed.

    A seed pair serves many rounds, one stream each, and most rounds need a single block: keying
    once per seed instead of once per stream halves the hashing of such a round. The keyed
    states are only ever copied, never updated, so streams in several threads may share them.
    """
    return _KeyedHmacSha256(server_seed)


def _uniform_from_words(next_word: Callable[[], int], n: int, word_bits: int) -> int:
    """Return a uniform integer in ``[0, n)`` from uniform ``word_bits``-bit words.

    Words at or above ``limit = 2**word_bits - 2**word_bits % n`` are discarded and the next one
    is read: below ``limit`` every residue mod ``n`` occurs equally often, so there is no modulo
    bias. The stream uses 32-bit words; the width is a parameter so that tests can check the
    claim exhaustively on narrow words.

    :param next_word: returns the next word, an integer in ``[0, 2**word_bits)``.
    :raises ValueError: if ``n`` is not in ``1..2**word_bits``.
    """
    size = 1 << word_bits
    if not 1 <= n <= size:
        raise ValueError(f"uniform bound must be in 1..2**{word_bits}, got {n}")
    limit = size - size % n
    while True:
        x = next_word()
        if x < limit:
            return x % n


# --- shuffling ----------------------------------------------------------------------------


class PartialShuffle:
    """A forward Fisher–Yates shuffle run lazily: positions ``0..k-1`` are final after ``k`` steps.

    Casino War needs at most 9 cards (``burn + 4``, ``burn`` at most 5) of a shoe of up to 416,
    so it takes only the steps it needs; the cards are the same as those of a full shuffle. Only
    the positions a step has touched are stored, so a short prefix costs a few steps, not a copy
    of the whole shoe.
    """

    __slots__ = ("_cards", "_stream", "_dealt", "_moved")

    def __init__(self, cards: Sequence[Card], stream: Stream) -> None:
        self._cards = cards if isinstance(cards, tuple) else tuple(cards)
        self._stream = stream
        self._dealt: list[Card] = []  # the final positions 0..len-1
        self._moved: dict[int, Card] = {}  # later positions whose card a swap has changed

    def prefix(self, k: int) -> tuple[Card, ...]:
        """Return the first ``k`` cards of the shuffled order, taking only the steps needed."""
        if k < 0:
            raise ValueError(f"cannot deal {k} cards")
        cards, dealt, moved = self._cards, self._dealt, self._moved
        n = len(cards)
        uniform = self._stream.uniform
        for i in range(len(dealt), min(k, n)):
            here = moved.pop(i, cards[i])
            j = i + uniform(n - i) if i < n - 1 else i
            if j == i:
                dealt.append(here)
            else:
                dealt.append(moved.get(j, cards[j]))
                moved[j] = here
        return tuple(dealt[:k])

    def full(self) -> tuple[Card, ...]:
        """Return the whole shuffled order."""
        return self.prefix(len(self._cards))


def shuffle(cards: Sequence[Card], stream: Stream) -> list[Card]:
    """Return ``cards`` shuffled by the forward Fisher–Yates shuffle drawing from ``stream``.

    The same steps as :class:`PartialShuffle`, in place on a list: faster when every position
    is needed.
    """
    shuffled = list(cards)
    n = len(shuffled)
    uniform = stream.uniform
    for i in range(n - 1):
        j = i + uniform(n - i)
        shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    return shuffled


def shuffled_shoe(
    seeds: Seeds, deck: str = "standard52", decks: int = 1, count: int | None = None
) -> tuple[Card, ...]:
    """Return the first ``count`` cards (all by default) of the round's shuffled shoe."""
    shoe, stream = canonical_shoe(deck, decks), Stream(seeds)
    if count is None:
        return tuple(shuffle(shoe, stream))
    return PartialShuffle(shoe, stream).prefix(count)


# --- signed documents ---------------------------------------------------------------------


def _canonical_encoder() -> Callable[[Any], str]:
    """Return a function giving the canonical JSON text of a document.

    The text is ``json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    allow_nan=False)``: the canonical bytes, defined without Python in
    ``docs/fairness.md``.
    Where the ``json`` module has its C encoder, it is built once and called directly:
    ``JSONEncoder.encode`` builds a new one for every document, and its circular-reference
    bookkeeping cannot find anything in a document that came from JSON. Together that is a
    sixth of the cost of encoding a round receipt, which a verifier does for every receipt.
    """
    python_encoder = json.JSONEncoder(
        sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    if c_make_encoder is None:  # an interpreter without the C accelerator
        return python_encoder.encode
    encode_chunks = c_make_encoder(
        None,  # no circular-reference markers
        python_encoder.default,  # raises TypeError for what JSON cannot hold
        encode_basestring,
        None,  # no indent
        ":",
        ",",
        True,  # sort_keys
        False,  # skipkeys
        False,  # allow_nan: NaN and infinities are not JSON; refuse them
    )
    join = "".join

    def encode(doc: Any) -> str:
        return join(encode_chunks(doc, 0))

    return encode


_canonical_text: Final = _canonical_encoder()


def strict_json(text: str) -> Any:
    """Parse JSON text, refusing ``NaN`` and ``Infinity``, which JSON has not (Python's reader
    takes them) and which no canonical bytes can hold.

    One decoder serves every call: ``json.loads`` with an argument builds a new one each time,
    which cost as much as parsing a line of an audit export. A text that starts with a
    byte-order mark still goes through ``json.loads``, for its refusal and message.

    :raises ValueError: for text that is not JSON (``json.JSONDecodeError``) or holds one.
    """
    if text.startswith("\ufeff"):
        return json.loads(text, parse_constant=_not_json)
    return _strict_decoder.decode(text)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


_strict_decoder: Final = json.JSONDecoder(parse_constant=_not_json)


#: The largest integer a browser reads exactly (``Number.MAX_SAFE_INTEGER``): no document of
#: the casino holds a larger one, and the fairness page could not check a signature over it.
MAX_EXACT_INTEGER: Final = 2**53 - 1

#: JSON's tokens but ``:``, ``true``, ``false`` and ``null``, in a text known to be JSON: what
#: :func:`_first_refusal` needs to follow where a number or a member is.
#: static/js/casino_json.js's twin.
_JSON_TOKEN: Final = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|[{}\[\],]'
)
_PLAIN_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class WrittenOtherwise(ValueError):
    """JSON written otherwise than the casino writes it, which the two verifiers (or a verifier
    in another language) would read apart: both refuse it, naming where it is."""


class NumberWritten(WrittenOtherwise):
    """A number written otherwise than the casino writes one: with a fraction or an exponent,
    zero with a minus sign, or an integer beyond :data:`MAX_EXACT_INTEGER`. Canonical JSON
    writes none of them, and the two verifiers would read some apart (a browser reads ``0.0``
    as ``0`` and rounds larger integers; Python keeps both as written), so both refuse each,
    naming where it is."""


class MemberTwice(WrittenOtherwise):
    """An object that gives one member twice (``"payout"`` twice, however its name is escaped).
    Canonical JSON gives each once; Python's reader and the browser's keep the last value, and
    readers of other languages the first, so a document signed over one value and served with
    another beside it would pass one verifier and be read as the other by the next: both
    refuse it, naming where it is."""


#: Why a member given twice is refused, after its place.
MEMBER_TWICE: Final = (
    "the casino writes each member of an object once, and readers differ in which they keep"
)


def _number_refusal(written: str) -> str | None:
    """Why a number written so is none the casino writes, or ``None``."""
    if any(mark in written for mark in ".eE"):
        return "the casino writes whole numbers only"
    if written == "-0":
        return "the casino writes zero without a minus sign"
    digits = written.lstrip("-")
    if len(digits) > len(str(MAX_EXACT_INTEGER)) or int(digits) > MAX_EXACT_INTEGER:
        return "the casino writes none beyond 2^53 - 1, past which a browser reads them inexactly"
    return None


def _first_refusal(text: str) -> WrittenOtherwise | None:
    """The refusal of the first number the casino does not write, or the first member given a
    second time in its object, in the order the JSON ``text`` is written, naming its place as
    ``rounds[0].document.nonce``; ``None`` if there is none."""
    # [index] in an array; [key, awaiting a key, the keys given so far] in an object
    steps: list[list[Any]] = []
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first in "{[":
            steps.append([None, True, set()] if first == "{" else [0])
        elif first in "}]":
            steps.pop()
        elif first == ",":
            top = steps[-1]
            if len(top) == 1:
                top[0] += 1
            else:
                top[1] = True
        elif first == '"':
            if steps and len(steps[-1]) == 3 and steps[-1][1]:
                top = steps[-1]
                key = json.loads(token)
                top[0], top[1] = key, False
                if key in top[2]:
                    return MemberTwice(
                        f"a member is written twice at {_place(steps)}: {MEMBER_TWICE}"
                    )
                top[2].add(key)
        elif (why := _number_refusal(token)) is not None:
            return NumberWritten(f"a number is written {token} at {_place(steps)}: {why}")
    return None


def _place(steps: Sequence[Sequence[Any]]) -> str:
    parts: list[str] = []
    for step in steps:
        if len(step) == 1:
            parts.append(f"[{step[0]}]")
        elif _PLAIN_KEY.fullmatch(step[0]):
            parts.append(f".{step[0]}" if parts else step[0])
        else:
            parts.append(f"[{json.dumps(step[0], ensure_ascii=False)}]")
    return "".join(parts) or "$"


class _Refused(Exception):
    """Raised by the reader's hooks at a number the casino does not write, or an object that
    gives a member twice."""


def _refuse_fraction(written: str) -> Any:
    raise _Refused


def _whole(written: str) -> int:
    # A short number is one the casino writes, but -0: most skip the refusal's checks.
    short = len(written) < len(str(MAX_EXACT_INTEGER)) and written != "-0"
    if short or _number_refusal(written) is None:
        return int(written)
    raise _Refused


def _each_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise _Refused
    return members


_whole_number_decoder: Final = json.JSONDecoder(
    parse_float=_refuse_fraction,
    parse_int=_whole,
    parse_constant=_not_json,
    object_pairs_hook=_each_once,
)


def whole_number_json(text: str) -> Any:
    """Parse a document of the casino (a bundle, an answer of its API, a checkpoint) or the
    player's records as both verifiers read it: as :func:`strict_json`, and refusing a number
    written with a fraction or an exponent (``0.0``, ``1e0``), zero with a minus sign (``-0``)
    or an integer beyond :data:`MAX_EXACT_INTEGER`, which the casino never writes and a browser
    reads otherwise, and an object that gives a member twice (:class:`MemberTwice`).

    The hooks find such a number or object as the text is parsed (each number of the text,
    also one a repeated key replaces); only then is the text read again to name the first of
    them in the order it is written, and its place.

    :raises WrittenOtherwise: naming the first such number (:class:`NumberWritten`) or member
        given twice (:class:`MemberTwice`), and where it is.
    :raises ValueError: for text that is not JSON, or holds ``NaN`` or an infinity.
    """
    if text.startswith("\ufeff"):
        return json.loads(text, parse_constant=_not_json)  # refused, with its message
    try:
        return _whole_number_decoder.decode(text)
    except _Refused:
        pass
    json.loads(text, parse_float=str, parse_int=str, parse_constant=_not_json)  # is it JSON?
    refusal = _first_refusal(text)
    assert refusal is not None, "a hook refused what the scan passes"
    raise refusal


def canonical_json(doc: Any) -> bytes:
    """Return the canonical bytes of a document: sorted keys, no spaces, UTF-8."""
    return _canonical_text(doc).encode()


def format_time(moment: datetime) -> str:
    """Return ``moment`` as ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC.

    ``isoformat`` rather than ``strftime``, whose ``%Y`` writes a year before 1000 in fewer
    than four digits on some C libraries (``999``), which :func:`parse_time` refuses.
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC).replace(tzinfo=None)
    return f"{utc.isoformat(timespec='microseconds')}Z"


def time_or_none(value: object) -> datetime | None:
    """Return :func:`parse_time` of ``value``, or ``None`` if it is not such a time."""
    if not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def parse_time(text: str) -> datetime:
    """Parse a time written by :func:`format_time`: exactly ``YYYY-MM-DDTHH:MM:SS.ffffffZ``.

    A pattern and ``datetime.fromisoformat`` rather than ``strptime``, which is ten times
    slower (the audit log parses one time per entry) and also takes one-digit fields. The
    ``Z`` is read by ``fromisoformat`` as UTC: ``.replace(tzinfo=UTC)`` cost twice the rest.

    :raises ValueError: if ``text`` is not such a time.
    """
    if not isinstance(text, str) or _TIME_TEXT.fullmatch(text) is None:
        raise ValueError(f"{text!r} is not a YYYY-MM-DDTHH:MM:SS.ffffffZ time")
    return datetime.fromisoformat(text)


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


def sign(key: Ed25519PrivateKey, doc: Any, canonical: bytes | None = None) -> str:
    """Sign the canonical bytes of ``doc`` (``canonical``, where the caller has them already);
    return the signature as hex."""
    return key.sign(canonical_json(doc) if canonical is None else canonical).hex()


def signed(
    key: Ed25519PrivateKey, doc: dict[str, Any], canonical: bytes | None = None
) -> dict[str, Any]:
    """Return the signed envelope ``{"document", "signature"}`` the API answers with."""
    return {"document": doc, "signature": sign(key, doc, canonical)}


def verify_signature(public_hex: str, doc: Any, signature_hex: str) -> bool:
    """Tell whether ``signature_hex`` is a valid signature of ``doc`` by ``public_hex``."""
    return signature_checker(public_hex)(doc, signature_hex)


#: The encodings of the curve's points of small order (the cofactor is 8), sign bit cleared:
#: under such a key, signatures made with no private key verify (libsodium's blocklist,
#: ``ge25519_has_small_order``, lists these and two of the encodings refused as non-canonical).
_SMALL_ORDER_KEYS: Final = frozenset(
    bytes.fromhex(encoding)
    for encoding in (
        "0000000000000000000000000000000000000000000000000000000000000000",  # order 4
        "0100000000000000000000000000000000000000000000000000000000000000",  # the identity
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # order 2 (y = p - 1)
    )
)
_FIELD_PRIME: Final = 2**255 - 19
_ED25519_KEY_BYTES: Final = 32


def weak_key_problem(raw: bytes) -> str | None:
    """Say why the raw public key ``raw`` must not be trusted to sign anything, or ``None``.

    A key of small order lets anyone sign: under the identity (``01`` and 31 zero bytes) the
    64-byte signature ``01`` and 63 zero bytes verifies for every message, in OpenSSL and in
    WebCrypto alike. A y coordinate of ``p = 2**255 - 19`` or more writes a point a second way,
    which RFC 8032 refuses and other libraries take. No honest key is either (a random key is of
    small order with a chance of about 2**-252), so every place that takes a key refuses both,
    and a key change to one: whoever made it handed the trust in the service to everyone.
    """
    if len(raw) != _ED25519_KEY_BYTES:
        return f"not {_ED25519_KEY_BYTES} bytes"
    y = int.from_bytes(raw, "little") & ~(1 << 255)  # the top bit is the sign of x
    if y >= _FIELD_PRIME:
        return "not canonically encoded (its y coordinate is 2^255 - 19 or more)"
    if y.to_bytes(_ED25519_KEY_BYTES, "little") in _SMALL_ORDER_KEYS:
        return "of small order: signatures anyone makes without a private key verify under it"
    return None


def _signs_nothing(doc: Any, signature_hex: str) -> bool:
    return False


@functools.lru_cache(maxsize=8)
def signature_checker(public_hex: str) -> Callable[[Any, str], bool]:
    """Return a function telling whether a hex signature signs a document's canonical bytes by
    ``public_hex``; a text that is not a key, or a weak key (:func:`weak_key_problem`), signs
    nothing.

    The key is loaded once, not for every document: a verifier checks thousands with one key,
    and loading it is about 2 % of a receipt's check.
    """
    try:
        raw = bytes.fromhex(public_hex)
        verify = Ed25519PublicKey.from_public_bytes(raw).verify
    except (ValueError, TypeError):
        return _signs_nothing
    if weak_key_problem(raw) is not None:
        return _signs_nothing

    def valid(doc: Any, signature_hex: str) -> bool:
        try:
            verify(bytes.fromhex(signature_hex), canonical_json(doc))
        except (InvalidSignature, ValueError, TypeError):
            return False
        return True

    return valid


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
    signed_actions: list[Any] | None = None,
    signed_bet: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the round receipt, signed when the round settles.

    ``signed_actions``, given when the player signed any of its actions, holds for each entry
    of ``actions`` the player's signed action document (:func:`action_document`) with its
    ``key_id``, or ``None`` for an action sent unsigned. ``signed_bet``, given when the player
    signed the bet, is its signed bet document (:func:`bet_document`) with its ``key_id``.
    Receipts without them stay as they were.
    """
    receipt = {
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
    if signed_actions is not None:
        receipt["signed_actions"] = signed_actions
    if signed_bet is not None:
        receipt["signed_bet"] = signed_bet
    return receipt


BET_TYPE: Final = "bet"


def bet_stakes(game: str, stakes: dict[str, int]) -> dict[str, int]:
    """Return what a bet sends of a round's ``stakes``: Casino War's ante and tie bet (its
    raise comes with a decision, later), Sota's stake."""
    names = ("bet", "tie_bet") if game == "casino_war" else ("stake",)
    return {name: stakes[name] for name in names if name in stakes}


def bet_document(
    *,
    user_id: int,
    game: str,
    seed_pair_id: int,
    nonce: int,
    stakes: dict[str, int],
    rules: dict[str, Any],
) -> dict[str, Any]:
    """Return the document a player signs for a bet: whose it is, the seed pair and the nonce
    it takes, the game, what it stakes and every rule it is played by. The pair and the nonce
    pin it to one deal, so no signature can be carried to another nonce or pair."""
    return {
        "type": BET_TYPE,
        "v": 1,
        "user_id": user_id,
        "game": game,
        "seed_pair_id": seed_pair_id,
        "nonce": nonce,
        "stakes": stakes,
        "rules": rules,
    }


ACTION_TYPE: Final = "action"


def action_document(
    *, game: str, round_id: int, seed_pair_id: int, nonce: int, index: int, choice: Any
) -> dict[str, Any]:
    """Return the document a player signs for one decision or move: what it chose, at which
    position of which round's ``actions``. The round, seed pair and nonce pin it to one deal,
    the index to one move of it, so no signature can be carried to another."""
    return {
        "type": ACTION_TYPE,
        "v": 1,
        "game": game,
        "round_id": round_id,
        "seed_pair_id": seed_pair_id,
        "nonce": nonce,
        "index": index,
        "choice": choice,
    }


#: The audit action of a player's key registration (its data: user_id, key_id,
#: public_key_hex, and the key ids it retires).
PLAYER_KEY_REGISTERED: Final = "player_key.registered"


KEY_CHANGE_TYPE: Final = "key_change"
#: The audit action of the service's key registered on its first signature, where no key change
#: named it (its data: ``public_key_hex``, and the keys it retired).
KEY_CREATED: Final = "key.created"
#: The audit action of a key change (its data: ``key_change``, the signed document).
KEY_CHANGED: Final = "key.changed"
#: The audit action of a new key taking over, logged so that its first checkpoint has an entry
#: to cover when nothing else was logged since the old key's (its data: ``public_key_hex``).
KEY_IN_USE: Final = "key.in_use"


def key_change_document(
    *, old_public_key_hex: str, new_public_key_hex: str, changed_at: str
) -> dict[str, Any]:
    """Return the key-change document: signed by the old key, it names the key that succeeds it,
    so that a verifier which trusts the old key may trust the new one."""
    return {
        "type": KEY_CHANGE_TYPE,
        "v": 1,
        "old_public_key_hex": old_public_key_hex,
        "new_public_key_hex": new_public_key_hex,
        "changed_at": changed_at,
    }
