"""Verify Sota Casino's receipts and audit log offline, with the published public key.

``python -m sota_casino.verify BUNDLE.json [BUNDLE2.json ...]`` makes every check of
FAIRNESS.md ("What a verifier checks") on the bundles of ``GET /fairness/seed-pairs/{id}/bundle``
(a file may also hold a JSON list of bundles):

1. ``signature``: every document is signed by the public key (pin it with ``--public-key``);
2. ``commitment``: ``sha256(server_seed)`` is the commitment, in all three kinds of document;
3. ``pair``: each receipt belongs to the pair: its seed pair, commitment and client seed, settled
   after the commitment was signed and before the seed was revealed; the reveal is the pair's;
4. ``nonces``: the nonces are ``0 .. rounds−1``, each once;
5. ``cards``: replaying the stream gives each receipt's cards;
6. ``outcome``: replaying the game with the receipt's rules and actions gives its outcome,
   stakes and payout.

Before the reveal, the checks that need the server seed are *pending*, not failed; the outcome
is then replayed on the receipt's own cards. ``python -m sota_casino.verify audit EXPORT.jsonl
--public-key HEX`` checks an audit log export: the hash chain, each checkpoint's signature and
Merkle root, and the consistency between checkpoints.

Exit codes: 0 when everything checkable holds, 1 when anything fails, 2 on unusable input.
This module needs only the standard library, ``cryptography`` and :mod:`sota_casino.core`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any
from typing import Final
from typing import NamedTuple
from typing import TextIO
from typing import TypeVar

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from sota_casino.core import audit_chain
from sota_casino.core import casino_war
from sota_casino.core import sota
from sota_casino.core.cards import Card
from sota_casino.core.cards import canonical_shoe
from sota_casino.core.errors import CasinoError
from sota_casino.core.errors import InvalidRules
from sota_casino.core.fairness import PartialShuffle
from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.core.fairness import canonical_json
from sota_casino.core.fairness import round_document

PASS: Final = "pass"
FAIL: Final = "fail"
PENDING: Final = "pending"
SKIP: Final = "skip"  # does not apply, or could not run because a check before it failed

#: The checks of FAIRNESS.md, in its order.
CHECKS: Final = ("signature", "commitment", "pair", "nonces", "cards", "outcome")
DOCUMENT_CHECKS: Final[dict[str, tuple[str, ...]]] = {
    "commitment": ("signature", "commitment", "pair"),
    "reveal": ("signature", "commitment", "pair", "nonces"),
    "round": CHECKS,
}
NOT_REVEALED: Final = "pending (not revealed)"

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_UNUSABLE: Final = 2

#: The fields of a round receipt (FAIRNESS.md), besides ``type`` and ``v``.
RECEIPT_FIELDS: Final = frozenset(
    (
        "round_id",
        "game",
        "seed_pair_id",
        "commitment",
        "client_seed",
        "nonce",
        "rules",
        "actions",
        "cards",
        "outcome",
        "stakes",
        "payout",
        "settled_at",
    )
)
WAR_STAKES: Final = frozenset(("bet", "tie_bet", "raise"))

#: Below this many rounds a bundle is checked in one process whatever ``--jobs`` says.
PARALLEL_MIN_ROUNDS: Final = 512
#: Receipts whose signatures are checked together before their other checks.
SIGNATURE_BATCH: Final = 1024

_NONE_SKIPPED: Final[frozenset[str]] = frozenset()
_HEX64 = re.compile(r"[0-9a-f]{64}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


class BundleError(ValueError):
    """The input is not a bundle at all (exit code 2)."""


# --- findings and reports -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    """A failed or pending check, and where: the bundle, a document or a round."""

    where: str  # "bundle", "commitment", "reveal" or "round"
    check: str
    status: str  # FAIL or PENDING
    message: str
    index: int | None = None  # the receipt's position in the bundle
    round_id: Any = None
    nonce: Any = None

    @property
    def place(self) -> str:
        if self.where == "round":
            if self.round_id is None:
                return f"receipt #{(self.index or 0) + 1}"
            return f"round {self.round_id} (nonce {self.nonce})"
        if self.where == "bundle":
            return "bundle"
        return f"{self.where} document"

    def text(self) -> str:
        """Return the finding as one line: place, check, message."""
        return f"{self.place}: {self.check}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "round_id": self.round_id,
            "nonce": self.nonce,
            "check": self.check,
            "status": self.status,
            "message": self.message,
            "text": self.text(),
        }


class Row(NamedTuple):
    """The checks of one signed document of the bundle: the commitment, the reveal or a round.

    An immutable named tuple rather than a frozen dataclass: the verifier builds one for every
    receipt, and a tuple is built three times faster.
    """

    where: str
    index: int | None  # type: ignore[assignment]  # shadows tuple.index, which rows never use
    round_id: Any
    game: Any
    nonce: Any
    client_seed: Any
    findings: tuple[Finding, ...]
    skipped: frozenset[str]

    @property
    def statuses(self) -> dict[str, str]:
        """Return each check's status: fail, pending, skip (n/a) or pass."""
        applicable = DOCUMENT_CHECKS[self.where]
        failed = {f.check for f in self.findings if f.status == FAIL}
        pending = {f.check for f in self.findings if f.status == PENDING}
        statuses: dict[str, str] = {}
        for check in CHECKS:
            if check in failed:
                statuses[check] = FAIL
            elif check in pending:
                statuses[check] = PENDING
            elif check not in applicable or check in self.skipped:
                statuses[check] = SKIP
            else:
                statuses[check] = PASS
        return statuses

    @property
    def ok(self) -> bool:
        return all(f.status != FAIL for f in self.findings)

    def __reduce__(self) -> tuple[type[Row], tuple[Any, ...]]:
        # Rows come back from worker processes by the thousand: a plain constructor call
        # pickles twice as fast as a named tuple's default protocol.
        return Row, tuple(self)

    def with_findings(self, extra: Sequence[Finding]) -> Row:
        return self._replace(findings=self.findings + tuple(extra)) if extra else self


@dataclass(frozen=True, slots=True)
class Report:
    """Everything found in one bundle."""

    source: str
    public_key_hex: str
    seed_pair_id: Any
    user_id: Any
    revealed: bool
    documents: tuple[Row, ...]
    rounds: tuple[Row, ...]
    bundle_findings: tuple[Finding, ...]

    @property
    def findings(self) -> list[Finding]:
        found = list(self.bundle_findings)
        for row in (*self.documents, *self.rounds):
            found.extend(row.findings)
        return found

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.status == FAIL]

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def pending(self) -> bool:
        return any(f.status == PENDING for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        """Return the report as plain JSON (the shape of ``--json``)."""
        failed_rounds = sum(1 for row in self.rounds if not row.ok)
        return {
            "source": self.source,
            "seed_pair_id": self.seed_pair_id,
            "user_id": self.user_id,
            "public_key_hex": self.public_key_hex,
            "revealed": self.revealed,
            "ok": self.ok,
            "pending": self.pending,
            "documents": [
                {"document": row.where, "checks": row.statuses} for row in self.documents
            ],
            "rounds": [
                {
                    "round_id": row.round_id,
                    "game": row.game,
                    "nonce": row.nonce,
                    "ok": row.ok,
                    "checks": row.statuses,
                }
                for row in self.rounds
            ],
            "findings": [f.to_dict() for f in self.findings],
            "summary": {
                "rounds": len(self.rounds),
                "passed": len(self.rounds) - failed_rounds,
                "failed": failed_rounds,
                "pending_checks": sum(1 for f in self.findings if f.status == PENDING),
            },
        }


class _Collector:
    """Gathers the findings of one row."""

    __slots__ = ("where", "index", "round_id", "nonce", "findings", "skipped")

    def __init__(
        self, where: str, index: int | None = None, round_id: Any = None, nonce: Any = None
    ):
        self.where, self.index, self.round_id, self.nonce = where, index, round_id, nonce
        self.findings: list[Finding] = []
        self.skipped = _NONE_SKIPPED  # a new set only for the few rows that skip a check

    def _add(self, check: str, status: str, message: str) -> None:
        self.findings.append(
            Finding(self.where, check, status, message, self.index, self.round_id, self.nonce)
        )

    def fail(self, check: str, message: str) -> None:
        self._add(check, FAIL, message)

    def pending(self, check: str, message: str = NOT_REVEALED) -> None:
        self._add(check, PENDING, message)

    def skip(self, *checks: str) -> None:
        self.skipped = self.skipped.union(checks)

    def row(self, game: Any = None, client_seed: Any = None) -> Row:
        return Row(
            self.where,
            self.index,
            self.round_id,
            game,
            self.nonce,
            client_seed,
            tuple(self.findings),
            self.skipped,
        )


# --- small validators -----------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return type(value) is int  # JSON integers are exactly int; bool is not a number here


def _same(a: object, b: object) -> bool:
    """Tell whether two JSON values are equal, types included (in Python ``true == 1``)."""
    return type(a) is type(b) and a == b


def _is_hex64(value: object) -> bool:
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


def _time(value: object) -> datetime | None:
    """Parse a ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` time, or return ``None`` if it is not one."""
    if not isinstance(value, str) or _TIME.fullmatch(value) is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _short(hex_text: str) -> str:
    return f"{hex_text[:16]}…"


def _envelope(value: object) -> tuple[Mapping[str, Any], str] | None:
    """Return ``(document, signature)`` of a ``SIGNED`` envelope, or ``None``."""
    if not isinstance(value, dict):
        return None
    doc, signature = value.get("document"), value.get("signature")
    if not isinstance(doc, dict) or not isinstance(signature, str):
        return None
    return doc, signature


def _check_signature(
    found: _Collector,
    public_key_hex: str,
    doc: Mapping[str, Any],
    signature: str,
    kind: str,
    valid: bool | None = None,
) -> None:
    """Check the document's type and its signature (unless ``valid`` says already)."""
    if doc.get("type") != kind or not _same(doc.get("v"), 1):
        found.fail(
            "signature",
            f"the signed document is of type {doc.get('type')!r} v {doc.get('v')!r}, "
            f"not {kind!r} v 1",
        )
    elif kind == "round" and not RECEIPT_FIELDS <= doc.keys():
        missing = ", ".join(sorted(RECEIPT_FIELDS - doc.keys()))
        found.fail("signature", f"the signed receipt is not a whole receipt: it lacks {missing}")
    elif kind == "round" and not _is_int(doc["round_id"]):
        found.fail("signature", f"the receipt's round_id {doc['round_id']!r} is not a number")
    if valid is None:
        valid = signature_valid(public_key_hex, doc, signature)
    if not valid:
        found.fail("signature", "the signature is not valid for the public key")


@lru_cache(maxsize=8)
def _signature_check(public_key_hex: str) -> Callable[[Mapping[str, Any], str], bool]:
    """Return a function telling whether a hex signature signs a document's canonical JSON.

    As :func:`sota_casino.core.fairness.verify_signature`, but the key is loaded once, not for
    every receipt: that alone is about 2 % of a receipt's check.
    """
    try:
        verify = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex)).verify
    except ValueError:  # not a key: nothing is signed by it
        return lambda doc, signature_hex: False

    def valid(doc: Mapping[str, Any], signature_hex: str) -> bool:
        try:
            verify(bytes.fromhex(signature_hex), canonical_json(doc))
        except (InvalidSignature, ValueError, TypeError):
            return False
        return True

    return valid


def signature_valid(public_key_hex: str, doc: Mapping[str, Any], signature_hex: str) -> bool:
    """Tell whether ``signature_hex`` signs the canonical JSON of ``doc`` by the key."""
    return _signature_check(public_key_hex)(doc, signature_hex)


@lru_cache(maxsize=8)
def _sha256_hex(seed: bytes) -> str:
    return hashlib.sha256(seed).hexdigest()


def _check_commits_to_seed(
    found: _Collector, commitment: object, seed: bytes | None, what: str
) -> None:
    if seed is not None and commitment == _sha256_hex(seed):
        return
    if not _is_hex64(commitment):
        found.fail("commitment", f"the {what} has no valid commitment (64 lower-case hex digits)")
    elif seed is None:
        found.pending("commitment")
    elif _sha256_hex(seed) != commitment:
        found.fail(
            "commitment",
            f"the {what} commits to {_short(str(commitment))}, but sha256 of the revealed "
            f"server seed is {_short(_sha256_hex(seed))}",
        )


# --- the pair: commitment and reveal --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairContext:
    """What every receipt of the bundle is checked against."""

    public_key_hex: str
    seed_pair_id: Any
    commitment: str | None
    created_at: datetime | None
    server_seed: bytes | None  # only once revealed
    client_seed: str | None  # the reveal's
    revealed_at: datetime | None
    rounds: int | None  # the reveal's count of nonces used
    fully_known: bool = field(init=False)  # revealed, and every part of the pair usable

    def __post_init__(self) -> None:
        parts = (self.commitment, self.created_at, self.server_seed, self.client_seed)
        known = None not in (*parts, self.revealed_at, self.rounds)
        object.__setattr__(self, "fully_known", known)


def check_commitment(
    envelope: Mapping[str, Any], public_key_hex: str, server_seed: bytes | None
) -> Row:
    """Check the commitment document: signature, sha256 of the seed, its fields."""
    doc, signature = _envelope(envelope) or ({}, "")
    found = _Collector("commitment")
    _check_signature(found, public_key_hex, doc, signature, "commitment")
    _check_commits_to_seed(found, doc.get("commitment"), server_seed, "commitment document")
    for name in ("seed_pair_id", "user_id"):
        if name not in doc:
            found.fail("pair", f"the commitment document has no {name}")
    if _time(doc.get("created_at")) is None:
        found.fail("pair", "created_at is not a YYYY-MM-DDTHH:MM:SS.ffffffZ time")
    return found.row()


def check_reveal(
    envelope: Mapping[str, Any], public_key_hex: str, commitment_doc: Mapping[str, Any]
) -> Row:
    """Check the reveal: signature, sha256 of its seed, that it is this pair's, its count."""
    doc, signature = _envelope(envelope) or ({}, "")
    found = _Collector("reveal")
    _check_signature(found, public_key_hex, doc, signature, "reveal")
    seed = _revealed_seed(doc)
    if seed is None:
        found.fail("commitment", "server_seed is not 64 lower-case hex digits (32 bytes)")
    _check_commits_to_seed(found, doc.get("commitment"), seed, "reveal")
    for name in ("seed_pair_id", "user_id", "commitment"):
        if not _same(doc.get(name), commitment_doc.get(name)):
            found.fail(
                "pair",
                f"the reveal is of another pair: its {name} is {doc.get(name)!r}, the "
                f"commitment document's is {commitment_doc.get(name)!r}",
            )
    client_seed = doc.get("client_seed")
    if not isinstance(client_seed, str) or not 1 <= len(client_seed) <= 64:
        found.fail("pair", "client_seed is not a string of 1 to 64 characters")
    revealed_at, created_at = _time(doc.get("revealed_at")), _time(commitment_doc.get("created_at"))
    if revealed_at is None:
        found.fail("pair", "revealed_at is not a YYYY-MM-DDTHH:MM:SS.ffffffZ time")
    elif created_at is not None and revealed_at <= created_at:
        found.fail(
            "pair",
            f"revealed at {doc['revealed_at']}, not after the commitment was signed "
            f"({commitment_doc['created_at']})",
        )
    rounds = doc.get("rounds")
    if not _is_int(rounds) or rounds < 0:
        found.fail("nonces", "rounds is not a whole number")
    return found.row()


def _revealed_seed(doc: Mapping[str, Any]) -> bytes | None:
    seed = doc.get("server_seed")
    return bytes.fromhex(seed) if _is_hex64(seed) else None


# --- one round ------------------------------------------------------------------------------


def check_round(
    context: PairContext, index: int, envelope: object, signature_ok: bool | None = None
) -> Row:
    """Make every check of one receipt that does not need the other receipts.

    :param signature_ok: whether its signature is valid, if already checked.
    """
    return _check_opened_round(context, index, _envelope(envelope), signature_ok)


def _check_opened_round(
    context: PairContext,
    index: int,
    opened: tuple[Mapping[str, Any], str] | None,
    signature_ok: bool | None,
) -> Row:
    """:func:`check_round` on ``(document, signature)``, or ``None`` if it is not signed."""
    if signature_ok and opened is not None:
        passed = _passing_war_row(context, index, opened[0])
        if passed is not None:
            return passed
    doc, signature = opened or ({}, "")
    round_id, nonce = doc.get("round_id"), doc.get("nonce")
    found = _Collector("round", index, round_id, nonce)
    if opened is None:
        found.fail("signature", "the receipt is not a signed document {document, signature}")
        found.skip(*CHECKS[1:])
        return found.row()
    _check_signature(found, context.public_key_hex, doc, signature, "round", signature_ok)
    _check_commits_to_seed(found, doc.get("commitment"), context.server_seed, "receipt")
    _check_belongs_to_pair(found, context, doc)
    if not _is_int(nonce) or nonce < 0:
        found.fail("nonces", f"nonce {nonce!r} is not a whole number")
    elif context.rounds is not None and nonce >= context.rounds:
        found.fail(
            "nonces",
            f"nonce {nonce} is beyond the {context.rounds} rounds the reveal declares "
            f"(nonces 0..{context.rounds - 1})",
        )
    seeds = None
    if context.server_seed is not None and context.client_seed is not None and _is_int(nonce):
        seeds = Seeds(context.server_seed, context.client_seed, nonce)
    game = doc.get("game")
    try:
        if game == casino_war.GAME:
            _check_casino_war(found, doc, seeds)
        elif game == sota.GAME:
            _check_sota(found, doc, seeds)
        else:
            found.fail("outcome", f"unknown game {game!r}; expected casino_war or sota")
            found.skip("cards")
    except Exception as exc:  # a hostile receipt must fail its round, never stop the verifier
        found.fail("outcome", f"the round cannot be replayed: {type(exc).__name__}: {exc}")
    return found.row(game, doc.get("client_seed"))


def _passing_war_row(context: PairContext, index: int, doc: Mapping[str, Any]) -> Row | None:
    """Return the row of a Casino War receipt of a revealed pair that passes every check of its
    own, or ``None`` if it may not: then the checks one by one say what fails.

    Such a receipt is exactly the document the service signs for the round replayed from the
    revealed seeds and the receipt's rules, stakes and actions, so one comparison with that
    document stands for the field-by-field checks, which cost more than the replay itself;
    nearly every receipt passes. Python's ``==`` takes ``1``, ``1.0`` and ``true`` for equal,
    so the JSON types of the numbers are checked apart.
    """
    if not context.fully_known:
        return None
    try:
        rules = _war_rules(_frozen_rules(doc["rules"]))  # type: ignore[arg-type]
        nonce = doc["nonce"]
        if not (_is_int(nonce) and 0 <= nonce < context.rounds):  # type: ignore[operator]
            return None
        seeds = Seeds(context.server_seed, context.client_seed, nonce)  # type: ignore[arg-type]
        shoe = PartialShuffle(_shoe("standard52", rules.decks), Stream(seeds))
        played = casino_war.replay(rules, shoe.prefix, doc["stakes"], doc["actions"])
        expected = round_document(
            round_id=doc["round_id"],
            game=casino_war.GAME,
            seed_pair_id=context.seed_pair_id,
            commitment=_sha256_hex(seeds.server_seed),
            client_seed=seeds.client_seed,
            nonce=nonce,
            rules=doc["rules"],
            actions=list(played.actions),
            cards=list(played.cards),
            outcome=played.receipt_outcome(),
            stakes=played.stakes,
            payout=played.payout,
            settled_at=doc["settled_at"],
        )
        if doc != expected:
            return None
        outcome = doc["outcome"]
        numbers_exact = (
            type(doc["v"]) is type(doc["round_id"]) is type(doc["payout"]) is int
            and type(doc["stakes"]["raise"]) is type(outcome["net"]) is int
            and type(outcome["tie_bet_won"]) is bool
            and type(doc["seed_pair_id"]) is type(context.seed_pair_id)
        )
        settled, created, revealed = (
            _time(doc["settled_at"]),
            context.created_at,
            context.revealed_at,
        )
        in_time = settled is not None and created < settled <= revealed  # type: ignore[operator]
    except Exception:  # whatever is wrong, the checks one by one name it
        return None
    if not (numbers_exact and in_time and context.commitment == expected["commitment"]):
        return None
    return Row(
        "round",
        index,
        doc["round_id"],
        casino_war.GAME,
        nonce,
        seeds.client_seed,
        (),
        _NONE_SKIPPED,
    )


def _check_belongs_to_pair(found: _Collector, context: PairContext, doc: Mapping[str, Any]) -> None:
    if not _same(doc.get("seed_pair_id"), context.seed_pair_id):
        found.fail(
            "pair",
            f"the receipt is of seed pair {doc.get('seed_pair_id')!r}, "
            f"not {context.seed_pair_id!r}",
        )
    commitment = doc.get("commitment")
    # The pair's commitment is valid hex: an equal one needs no pattern match.
    if (
        context.commitment is not None
        and commitment != context.commitment
        and _is_hex64(commitment)
    ):
        found.fail(
            "pair",
            f"the receipt's commitment {_short(commitment)} is not the pair's "
            f"{_short(context.commitment)}",
        )
    client_seed = doc.get("client_seed")
    if not isinstance(client_seed, str):
        found.fail("pair", "the receipt has no client seed")
    elif context.client_seed is not None and client_seed != context.client_seed:
        found.fail(
            "pair",
            f"client seed {client_seed!r} is not the pair's client seed {context.client_seed!r}",
        )
    settled = _time(doc.get("settled_at"))
    if settled is None:
        found.fail("pair", "settled_at is not a YYYY-MM-DDTHH:MM:SS.ffffffZ time")
        return
    if context.created_at is not None and settled <= context.created_at:
        found.fail(
            "pair",
            f"settled at {doc['settled_at']}, before the commitment was signed "
            f"({context.created_at.strftime('%Y-%m-%dT%H:%M:%S.%fZ')})",
        )
    if context.revealed_at is not None and settled > context.revealed_at:
        found.fail(
            "pair",
            f"settled at {doc['settled_at']}, after the server seed was revealed "
            f"({context.revealed_at.strftime('%Y-%m-%dT%H:%M:%S.%fZ')})",
        )


def _card_list(value: object) -> list[Card] | None:
    if isinstance(value, list) and all(type(card) is str for card in value):
        return value
    return None


def _compare_cards(found: _Collector, shown: Sequence[Card], replayed: Sequence[Card]) -> None:
    """Fail ``cards`` at the first position where the receipt and the replay differ."""
    if tuple(shown[: len(replayed)]) == tuple(replayed):
        return
    differ = [i for i, (a, b) in enumerate(zip(shown, replayed, strict=False)) if a != b]
    if differ:
        first = differ[0]
        more = f" ({len(differ)} of {len(shown)} cards differ)" if len(differ) > 1 else ""
        found.fail(
            "cards",
            f"receipt has {shown[first]} at position {first}, replay gives {replayed[first]}{more}",
        )


class _ShortReceipt(Exception):
    """The round needs more cards than the receipt shows (replaying on the receipt's cards)."""

    def __init__(self, needed: int) -> None:
        super().__init__(f"needs {needed} cards")
        self.needed = needed


def _receipt_draw(cards: Sequence[Card]) -> Callable[[int], Sequence[Card]]:
    def draw(k: int) -> Sequence[Card]:
        if k > len(cards):
            raise _ShortReceipt(k)
        return cards[:k]

    return draw


@lru_cache(maxsize=16)
def _shoe(deck: str, decks: int) -> tuple[Card, ...]:
    return canonical_shoe(deck, decks)


#: The rules' names, the type of each value, and the values.
RulesKey = tuple[tuple[str, ...], tuple[type, ...], tuple[Any, ...]]
GameRules = TypeVar("GameRules", casino_war.TableRules, sota.SotaRules)


def _frozen_rules(rules: object) -> RulesKey | None:
    """Return the rules as a hashable key for the cache, or ``None`` if not flat JSON.

    The key holds each value's type: ``true == 1`` in Python, but ``true`` is not a valid
    number of decks, so the two must not share a cache entry.
    """
    if not isinstance(rules, dict):
        return None
    key = (tuple(rules), tuple(map(type, rules.values())), tuple(rules.values()))
    try:
        hash(key)
    except TypeError:  # a list or an object among the values: not plain options
        return None
    return key


def _parse_rules(kind: type[GameRules], key: RulesKey) -> GameRules:
    """Return the rules of ``key``.

    :raises InvalidRules: if they are not valid, or leave an option out (a receipt lists them
        all, defaults included).
    """
    names, _, values = key
    rules = kind.from_dict(dict(zip(names, values, strict=True)))
    missing = sorted(set(rules.to_dict()) - set(names))
    if missing:
        raise InvalidRules(
            f"every option must be listed, defaults included; missing: {', '.join(missing)}"
        )
    return rules


# Parsed once per distinct rules: the receipts of a table all repeat the same ones.
@lru_cache(maxsize=64)
def _war_rules(key: RulesKey) -> casino_war.TableRules:
    return _parse_rules(casino_war.TableRules, key)


@lru_cache(maxsize=64)
def _sota_rules(key: RulesKey) -> sota.SotaRules:
    return _parse_rules(sota.SotaRules, key)


def _receipt_rules(
    found: _Collector, doc: Mapping[str, Any], parse: Callable[[RulesKey], GameRules], game: str
) -> GameRules | None:
    """Return the receipt's rules; if they are not valid, fail its outcome and return ``None``."""
    key = _frozen_rules(doc.get("rules"))
    try:
        if key is None:
            raise InvalidRules("the rules must be an object of plain options")
        return parse(key)
    except CasinoError as exc:
        found.fail("outcome", f"the rules are not valid {game} rules: {exc.message}")
        found.skip("cards")
        return None


def _check_casino_war(found: _Collector, doc: Mapping[str, Any], seeds: Seeds | None) -> None:
    rules = _receipt_rules(found, doc, _war_rules, "Casino War")
    if rules is None:
        return
    cards = _card_list(doc.get("cards"))
    if cards is None:
        found.fail("cards", "cards is not a list of card codes")
        cards = []
    if seeds is None:
        found.pending("cards")
        draw = _receipt_draw(cards)
    else:
        shoe = PartialShuffle(_shoe("standard52", rules.decks), Stream(seeds))
        _compare_cards(found, cards, shoe.prefix(min(len(cards), rules.cards_for_war)))
        draw = shoe.prefix
    stakes, actions = doc.get("stakes"), doc.get("actions")
    if not (
        isinstance(stakes, dict)
        and stakes.keys() == WAR_STAKES
        and all(type(v) is int for v in stakes.values())
    ):
        found.fail("outcome", "stakes must be {bet, tie_bet, raise}, whole numbers in minor units")
        return
    if not isinstance(actions, list):
        found.fail("outcome", "actions is not a list")
        return
    try:
        played = casino_war.replay(rules, draw, stakes, actions)
    except _ShortReceipt as short:
        found.fail(
            "cards",
            f"receipt shows {len(cards)} cards, the round with actions {actions} "
            f"needs {short.needed}",
        )
        found.skip("outcome")
        return
    except CasinoError as exc:
        found.fail("outcome", f"the round cannot be replayed with these actions: {exc.message}")
        return
    if len(played.cards) != len(cards):
        found.fail(
            "cards",
            f"receipt shows {len(cards)} cards, the round with actions {actions} deals "
            f"{len(played.cards)}",
        )
    _compare_war_result(found, doc, stakes, played)


def _compare_war_result(
    found: _Collector,
    doc: Mapping[str, Any],
    stakes: Mapping[str, int],
    played: casino_war.WarRound,
) -> None:
    if stakes["raise"] != played.raise_amount:
        went = "went to war" if played.actions == (casino_war.WAR,) else "did not go to war"
        found.fail(
            "outcome",
            f"stakes say raise {stakes['raise']}, replay gives {played.raise_amount} "
            f"(the player {went}; the raise equals the bet only in a war)",
        )
    _compare_outcome(found, doc.get("outcome"), played.receipt_outcome())
    _compare_payout(found, doc.get("payout"), played.payout)


def _compare_outcome(found: _Collector, shown: object, replayed: Mapping[str, Any]) -> None:
    if shown == replayed and all(type(shown[k]) is type(v) for k, v in replayed.items()):
        return
    if not isinstance(shown, dict):
        found.fail("outcome", "outcome is not an object")
        return
    for key in sorted(set(shown) | set(replayed)):
        if not _same(shown.get(key), replayed.get(key)):
            found.fail(
                "outcome",
                f"outcome {key} is {_brief(shown.get(key))}, "
                f"replay gives {_brief(replayed.get(key))}",
            )


def _brief(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else f"{text[:57]}…"


def _compare_payout(found: _Collector, shown: object, replayed: int) -> None:
    if shown != replayed or not _is_int(shown):
        found.fail("outcome", f"payout is {shown!r}, replay gives {replayed}")


def _check_sota(found: _Collector, doc: Mapping[str, Any], seeds: Seeds | None) -> None:
    rules = _receipt_rules(found, doc, _sota_rules, "Sota")
    if rules is None:
        return
    whole_deck = _shoe(rules.deck, 1)
    cards = _card_list(doc.get("cards"))
    if cards is None or sorted(cards) != sorted(whole_deck):
        found.fail("cards", f"the receipt's cards are not one whole {rules.deck} deck")
        cards = None
    if seeds is None:
        found.pending("cards")
    elif cards is not None:
        _compare_cards(found, cards, PartialShuffle(whole_deck, Stream(seeds)).full())
    stakes, actions = doc.get("stakes"), doc.get("actions")
    if not (
        isinstance(stakes, dict)
        and set(stakes) == {"stake"}
        and _is_int(stakes["stake"])
        and stakes["stake"] > 0
    ):
        found.fail("outcome", "stakes must be {stake}, a positive whole number of sweets")
        return
    if not (isinstance(actions, list) and all(_card_list(move) is not None for move in actions)):
        found.fail("outcome", "actions must be a list of moves, each a list of card codes")
        return
    if seeds is None and cards is None:
        found.skip("outcome")
        return
    try:
        if seeds is None:
            result = sota.play_game(rules, deck_order=cards, choices=actions)
        else:
            result = sota.play_game(rules, stream=Stream(seeds), choices=actions)
    except sota.StreamRequired:
        found.pending("outcome", f"{NOT_REVEALED}: the game shuffles cards during play")
        return
    except CasinoError as exc:
        found.fail("outcome", f"the game cannot be replayed with these moves: {exc.message}")
        return
    if result.status != sota.SETTLED:
        found.fail(
            "outcome",
            f"the game is not over after the {len(actions)} recorded moves: it awaits another",
        )
        return
    outcome = doc.get("outcome")
    if not isinstance(outcome, dict):
        found.fail("outcome", "outcome is not an object")
    else:
        replayed = result.receipt_outcome()
        # Plain equality for the long trick log; the winner, which the payout follows, must
        # also have the same JSON type (in Python ``false == 0``, and seat 0 is the player).
        if outcome != replayed:
            found.fail("outcome", f"outcome {sota.first_difference(outcome, replayed)}")
        elif not _same(outcome.get("winner"), replayed["winner"]):
            found.fail(
                "outcome",
                f"outcome winner is {_brief(outcome.get('winner'))}, "
                f"replay gives {_brief(replayed['winner'])}",
            )
    _compare_payout(found, doc.get("payout"), sota.payout(rules, result.winner, stakes["stake"]))


# A worker process receives the pair and the receipts once, when it starts (under ``fork`` without
# even copying them), then only index ranges: sending each chunk's receipts would cost about as
# much pickling as the checks save.
_WORKER_BUNDLE: dict[str, Any] = {}


def _start_worker(context: PairContext, envelopes: Sequence[object]) -> None:
    _WORKER_BUNDLE.update(context=context, envelopes=envelopes)


def _check_range(start: int, stop: int) -> list[Row]:
    """Check receipts ``start`` to ``stop - 1`` of the worker's bundle."""
    context, envelopes = _WORKER_BUNDLE["context"], _WORKER_BUNDLE["envelopes"]
    rows = []
    for first in range(start, stop, SIGNATURE_BATCH):
        rows += check_batch(context, first, envelopes[first : min(first + SIGNATURE_BATCH, stop)])
    return rows


def check_batch(context: PairContext, start: int, envelopes: Sequence[object]) -> list[Row]:
    """Check a run of receipts, the first at position ``start``: all signatures, then the rest.

    The phases are kept apart because OpenSSL's signature check and the Python replay evict
    each other's working set from the CPU caches: alternating them receipt by receipt was
    measured about 8 % slower.
    """
    signature_ok = _signature_check(context.public_key_hex)
    opened = [_envelope(envelope) for envelope in envelopes]
    valid = [None if signed is None else signature_ok(*signed) for signed in opened]
    return [
        _check_opened_round(context, start + i, signed, ok)
        for i, (signed, ok) in enumerate(zip(opened, valid, strict=True))
    ]


# --- across the rounds ------------------------------------------------------------------------


def _missing(below: int, present: Collection[int], limit: int = 10) -> str:
    """List the numbers ``0 .. below - 1`` not in ``present``: the first ``limit``, then how
    many more; ``""`` if none is missing.

    They are counted rather than enumerated: a hostile reveal or receipt may claim a nonce of
    10**30, and a set of every number below it would exhaust the memory.
    """
    count = below - sum(1 for n in present if 0 <= n < below)
    if count <= 0:
        return ""
    first = islice((n for n in range(below) if n not in present), limit)
    text = ", ".join(map(str, first))
    return text + (f" and {count - limit} more" if count > limit else "")


def check_across_rounds(
    context: PairContext, rounds: Sequence[Row]
) -> tuple[list[Row], list[Finding]]:
    """Check what involves several receipts: nonces each used once and none skipped, and one
    client seed for the pair before the reveal names it.

    :returns: the rows with their new findings, and the findings that concern the bundle.
    """
    extra: dict[int, list[Finding]] = defaultdict(list)
    by_nonce: dict[int, list[int]] = defaultdict(list)
    for position, row in enumerate(rounds):
        if _is_int(row.nonce) and row.nonce >= 0:
            by_nonce[row.nonce].append(position)
    for nonce, positions in by_nonce.items():
        if len(positions) > 1:
            ids = ", ".join(str(rounds[p].round_id) for p in positions)
            for p in positions:
                extra[p].append(
                    _round_finding(
                        rounds[p],
                        "nonces",
                        f"nonce {nonce} is used by {len(positions)} receipts (rounds {ids})",
                    )
                )
    bundle: list[Finding] = []
    if context.rounds is not None:
        missing = _missing(context.rounds, by_nonce)
        if missing:
            bundle.append(
                Finding(
                    "bundle",
                    "nonces",
                    FAIL,
                    f"no receipt for nonce {missing}: the reveal says {context.rounds} "
                    f"rounds were played (nonces 0..{context.rounds - 1})",
                )
            )
    elif by_nonce:
        missing = _missing(max(by_nonce), by_nonce)
        if missing:
            bundle.append(
                Finding(
                    "bundle",
                    "nonces",
                    PENDING,
                    f"{NOT_REVEALED}: no receipt yet for nonce {missing} "
                    "(a round still open?); checked again once the seed pair is rotated",
                )
            )
    if context.client_seed is None:
        seeds = Counter(row.client_seed for row in rounds if isinstance(row.client_seed, str))
        if len(seeds) > 1:
            common = seeds.most_common(1)[0][0]
            for p, row in enumerate(rounds):
                if isinstance(row.client_seed, str) and row.client_seed != common:
                    extra[p].append(
                        _round_finding(
                            row,
                            "pair",
                            f"client seed {row.client_seed!r} is not the pair's client seed "
                            f"{common!r} (the one of its other receipts)",
                        )
                    )
    if not extra:  # the usual case: every row stands as it is
        return list(rounds), bundle
    return [row.with_findings(extra.get(p, ())) for p, row in enumerate(rounds)], bundle


def _round_finding(row: Row, check: str, message: str) -> Finding:
    return Finding("round", check, FAIL, message, row.index, row.round_id, row.nonce)


# --- a whole bundle -----------------------------------------------------------------------------

Progress = Callable[[int, int], None]


def _bundle_parts(bundle: object) -> tuple[str, Mapping[str, Any], object, list[Any]]:
    """Return the key, commitment, reveal and rounds of a bundle.

    :raises BundleError: if the bundle lacks one of them or it has the wrong shape.
    """
    if not isinstance(bundle, dict):
        raise BundleError("a bundle is a JSON object {public_key_hex, commitment, reveal, rounds}")
    missing = [k for k in ("public_key_hex", "commitment", "reveal", "rounds") if k not in bundle]
    if missing:
        raise BundleError(f"the bundle lacks {', '.join(missing)}")
    key, commitment = bundle["public_key_hex"], bundle["commitment"]
    reveal, rounds = bundle["reveal"], bundle["rounds"]
    if not _is_hex64(key):
        raise BundleError("public_key_hex is not 64 lower-case hex digits")
    if _envelope(commitment) is None:
        raise BundleError("commitment is not a signed document {document, signature}")
    if reveal is not None and _envelope(reveal) is None:
        raise BundleError("reveal is neither null nor a signed document {document, signature}")
    if not isinstance(rounds, list):
        raise BundleError("rounds is not a list")
    return key, commitment, reveal, rounds


def verify_bundle(
    bundle: object,
    public_key_hex: str | None = None,
    *,
    source: str = "bundle",
    jobs: int = 1,
    progress: Progress | None = None,
) -> Report:
    """Make every check of FAIRNESS.md on one bundle and report what fails, and where.

    :param public_key_hex: the published key; every signature is checked against it, and the
        bundle fails if it names another key. Without it, the bundle's own key is used.
    :param jobs: worker processes for large bundles (:data:`PARALLEL_MIN_ROUNDS` and up).
    :param progress: called with ``(rounds checked, rounds)`` as the check goes.
    :raises BundleError: if the input is not a bundle.
    """
    bundle_key, commitment_envelope, reveal_envelope, envelopes = _bundle_parts(bundle)
    key = public_key_hex or bundle_key
    findings: list[Finding] = []
    if public_key_hex is not None and public_key_hex != bundle_key:
        findings.append(
            Finding(
                "bundle",
                "signature",
                FAIL,
                f"the bundle names public key {_short(bundle_key)}, not the published key "
                f"{_short(public_key_hex)}; signatures are checked against the published key",
            )
        )
    commitment_doc, _ = _envelope(commitment_envelope) or ({}, "")
    reveal_doc = (
        (_envelope(reveal_envelope) or ({}, ""))[0] if reveal_envelope is not None else None
    )
    seed = _revealed_seed(reveal_doc) if reveal_doc is not None else None
    documents = [check_commitment(commitment_envelope, key, seed)]
    if reveal_envelope is not None:
        documents.append(check_reveal(reveal_envelope, key, commitment_doc))
    context = _pair_context(key, commitment_doc, reveal_doc, seed)
    rows = _check_rounds(context, envelopes, jobs, progress)
    rows, across = check_across_rounds(context, rows)
    findings.extend(across)
    return Report(
        source=source,
        public_key_hex=key,
        seed_pair_id=commitment_doc.get("seed_pair_id"),
        user_id=commitment_doc.get("user_id"),
        revealed=reveal_doc is not None,
        documents=tuple(documents),
        rounds=tuple(rows),
        bundle_findings=tuple(findings),
    )


def _pair_context(
    key: str,
    commitment_doc: Mapping[str, Any],
    reveal_doc: Mapping[str, Any] | None,
    seed: bytes | None,
) -> PairContext:
    commitment = commitment_doc.get("commitment")
    reveal = reveal_doc or {}
    client_seed, rounds = reveal.get("client_seed"), reveal.get("rounds")
    return PairContext(
        public_key_hex=key,
        seed_pair_id=commitment_doc.get("seed_pair_id"),
        commitment=commitment if _is_hex64(commitment) else None,
        created_at=_time(commitment_doc.get("created_at")),
        server_seed=seed,
        client_seed=client_seed if isinstance(client_seed, str) else None,
        revealed_at=_time(reveal.get("revealed_at")),
        rounds=rounds if _is_int(rounds) and rounds >= 0 else None,
    )


def _check_rounds(
    context: PairContext, envelopes: Sequence[object], jobs: int, progress: Progress | None
) -> list[Row]:
    total = len(envelopes)
    if jobs <= 1 or total < PARALLEL_MIN_ROUNDS:
        rows: list[Row] = []
        for start in range(0, total, SIGNATURE_BATCH):
            rows += check_batch(context, start, envelopes[start : start + SIGNATURE_BATCH])
            if progress is not None:
                progress(len(rows), total)
        if progress is not None and not total:
            progress(0, 0)
        return rows
    # Enough chunks per worker that one slow chunk does not leave the others idle at the end.
    size = max(64, -(-total // (jobs * 8)))
    starts = range(0, total, size)
    stops = [min(start + size, total) for start in starts]
    rows = []
    with ProcessPoolExecutor(
        jobs, initializer=_start_worker, initargs=(context, envelopes)
    ) as pool:
        for chunk_rows in pool.map(_check_range, starts, stops):
            rows.extend(chunk_rows)
            if progress is not None:
                progress(len(rows), total)
    return rows


# --- the audit log export ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The result of checking an audit log export."""

    source: str
    chain: audit_chain.ChainReport
    checkpoints: tuple[Mapping[str, Any], ...]
    checkpoint_report: audit_chain.CheckpointReport

    @property
    def ok(self) -> bool:
        return self.chain.ok and self.checkpoint_report.ok

    @property
    def uncovered(self) -> int:
        """How many entries no checkpoint covers yet (after the largest good checkpoint)."""
        sizes = [
            cp["document"]["size"]
            for i, cp in enumerate(self.checkpoints)
            if not any(p.index == i for p in self.checkpoint_report.problems)
        ]
        return max(0, self.chain.size - max(sizes, default=0))

    def failures(self) -> list[str]:
        """Return every failure as one line."""
        lines = [] if self.chain.ok else [f"chain: {self.chain.reason}"]
        lines.extend(f"checkpoints: {p.message}" for p in self.checkpoint_report.problems)
        return lines

    def checkpoint_statuses(self, index: int) -> dict[str, str]:
        failed = {p.check for p in self.checkpoint_report.problems if p.index == index}
        if "format" in failed:
            return {check: FAIL for check in ("signature", "root", "consistency")}
        return {c: FAIL if c in failed else PASS for c in ("signature", "root", "consistency")}

    def to_dict(self) -> dict[str, Any]:
        chain = self.chain
        return {
            "source": self.source,
            "ok": self.ok,
            "chain": {
                "ok": chain.ok,
                "size": chain.size,
                "first_bad_seq": chain.first_bad_seq,
                "reason": chain.reason,
                "head_hash": chain.head_hash,
            },
            "checkpoints": [
                {
                    "index": i + 1,
                    "size": _doc_field(cp, "size"),
                    "root": _doc_field(cp, "root"),
                    "time": _doc_field(cp, "time"),
                    "checks": self.checkpoint_statuses(i),
                }
                for i, cp in enumerate(self.checkpoints)
            ],
            "uncovered_entries": self.uncovered,
            "findings": [
                {"check": p.check, "checkpoint": p.index + 1, "message": p.message}
                for p in self.checkpoint_report.problems
            ]
            + (
                []
                if chain.ok
                else [{"check": "chain", "seq": chain.first_bad_seq, "message": chain.reason}]
            ),
        }


def _doc_field(envelope: Mapping[str, Any], name: str) -> Any:
    doc = envelope.get("document") if isinstance(envelope, dict) else None
    return doc.get(name) if isinstance(doc, dict) else None


def verify_audit_export(
    export: audit_chain.AuditExport, public_key_hex: str, *, source: str = "export"
) -> AuditReport:
    """Check the hash chain of the entries and every checkpoint of an export."""
    chain = audit_chain.verify_chain(export.entries)
    checkpoints = audit_chain.verify_checkpoints(export.entries, export.checkpoints, public_key_hex)
    return AuditReport(source, chain, export.checkpoints, checkpoints)


# --- the command line -------------------------------------------------------------------------


class _Symbols:
    """Check marks, or plain words where the terminal cannot show them."""

    def __init__(self, stream: TextIO) -> None:
        try:
            "✓✗…–".encode(getattr(stream, "encoding", None) or "utf-8")
            fancy = True
        except (UnicodeEncodeError, LookupError):
            fancy = False
        self.marks = (
            {PASS: "✓", FAIL: "✗", PENDING: "…", SKIP: "–"}
            if fancy
            else {PASS: "ok", FAIL: "FAIL", PENDING: "wait", SKIP: "-"}
        )


class ProgressBar:
    """A plain-text progress bar on stderr, redrawn in place."""

    WIDTH: Final = 30

    def __init__(self, label: str, stream: TextIO) -> None:
        self.label, self.stream, self.shown = label, stream, -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 * done // total if total else 100
        if percent == self.shown and done != total:
            return
        self.shown = percent
        filled = self.WIDTH * done // total if total else self.WIDTH
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total} receipts {percent:3d}%")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    return [
        "  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in (header, *rows)
    ]


def render_report(report: Report, symbols: _Symbols, *, quiet: bool = False) -> list[str]:
    """Return the human-readable lines of one bundle's report."""
    marks = symbols.marks
    revealed = "server seed revealed" if report.revealed else "server seed not revealed yet"
    lines = [
        f"Bundle {report.source}: seed pair {report.seed_pair_id} of user {report.user_id}, "
        f"public key {_short(report.public_key_hex)}, {revealed}"
    ]
    if not quiet:
        rows = [
            [row.where, "", "", *(marks[row.statuses[c]] for c in CHECKS)]
            for row in report.documents
        ]
        rows += [
            [
                str(row.round_id),
                str(row.game),
                str(row.nonce),
                *(marks[row.statuses[c]] for c in CHECKS),
            ]
            for row in report.rounds
        ]
        lines += ["  " + line for line in _table(["round", "game", "nonce", *CHECKS], rows)]
        lines.append(
            f"  ({marks[PASS]} passed, {marks[FAIL]} failed, {marks[PENDING]} pending until the "
            f"reveal, {marks[SKIP]} not applicable)"
        )
    failures = report.failures
    if failures:
        lines.append("  Failures:")
        lines += [f"    {f.text()}" for f in failures]
    pending = Counter(f.check for f in report.findings if f.status == PENDING)
    if pending:
        what = ", ".join(f"{check} ({count})" for check, count in pending.items())
        lines.append(f"  Pending until the server seed is revealed: {what}")
    failed_rounds = sum(1 for row in report.rounds if not row.ok)
    verdict = "FAILED" if failures else ("OK so far (pending the reveal)" if pending else "OK")
    lines.append(
        f"  {len(report.rounds)} rounds: {len(report.rounds) - failed_rounds} passed, "
        f"{failed_rounds} failed. {verdict}"
    )
    return lines


def _read_bundles(path: str) -> list[tuple[str, object]]:
    """Return the bundles of a file, each with a label.

    :raises BundleError: if the file cannot be read or is not JSON.
    """
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BundleError(f"cannot read {path}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BundleError(f"{path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise BundleError(f"{path} is nested too deeply to be a bundle") from None
    if isinstance(data, list):
        return [(f"{path}[{i}]", item) for i, item in enumerate(data)]
    return [(path, data)]


def _bundle_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    reports: list[Report] = []
    errors: list[dict[str, str]] = []
    show_progress = args.progress or err.isatty()
    for path in args.bundles:
        try:
            labelled = _read_bundles(path)
        except BundleError as exc:
            errors.append({"source": path, "message": str(exc)})
            continue
        for label, bundle in labelled:
            bar = ProgressBar(f"verifying {label}", err) if show_progress else None
            try:
                reports.append(
                    verify_bundle(
                        bundle, args.public_key, source=label, jobs=args.jobs, progress=bar
                    )
                )
            except BundleError as exc:
                errors.append({"source": label, "message": str(exc)})
    code = EXIT_UNUSABLE if errors else (EXIT_OK if all(r.ok for r in reports) else EXIT_FAILED)
    if args.json:
        document = {
            "ok": code == EXIT_OK,
            "pending": any(r.pending for r in reports),
            "exit_code": code,
            "bundles": [r.to_dict() for r in reports],
            "errors": errors,
        }
        json.dump(document, out, ensure_ascii=False, indent=2)
        out.write("\n")
        return code
    symbols = _Symbols(out)
    for report in reports:
        out.write("\n".join(render_report(report, symbols, quiet=args.quiet)) + "\n\n")
    for error in errors:
        out.write(f"Unusable input {error['source']}: {error['message']}\n")
    out.write(_overall(reports, errors, code) + "\n")
    return code


def _overall(reports: Sequence[Report], errors: Sequence[Mapping[str, str]], code: int) -> str:
    rounds = sum(len(r.rounds) for r in reports)
    failed = sum(1 for r in reports if not r.ok)
    summary = f"{len(reports)} bundle(s), {rounds} rounds"
    if code == EXIT_UNUSABLE:
        return (
            f"Result: UNUSABLE INPUT: {len(errors)} file(s) or bundle(s) could not be checked; "
            f"{summary}, {failed} failed (exit {code})"
        )
    if code == EXIT_FAILED:
        return (
            f"Result: FAILED: {failed} of {len(reports)} bundle(s) do not verify; "
            f"{summary} (exit {code})"
        )
    if any(r.pending for r in reports):
        return (
            f"Result: OK so far: {summary}; everything checkable passed, and the checks that need "
            f"the server seed are pending until it is revealed (exit {code})"
        )
    return f"Result: OK: {summary}, every check passed (exit {code})"


def _audit_command(args: argparse.Namespace, out: TextIO) -> int:
    try:
        text = (
            sys.stdin.read()
            if args.export == "-"
            else Path(args.export).read_text(encoding="utf-8")
        )
        export = audit_chain.parse_export(text.splitlines())
    except (OSError, UnicodeDecodeError, audit_chain.ExportFormatError) as exc:
        message = f"cannot use {args.export}: {exc}"
        if args.json:
            json.dump({"ok": False, "exit_code": EXIT_UNUSABLE, "errors": [message]}, out, indent=2)
            out.write("\n")
        else:
            out.write(f"Unusable input: {message}\nResult: UNUSABLE INPUT (exit {EXIT_UNUSABLE})\n")
        return EXIT_UNUSABLE
    report = verify_audit_export(export, args.public_key, source=args.export)
    code = EXIT_OK if report.ok else EXIT_FAILED
    if args.json:
        json.dump({**report.to_dict(), "exit_code": code}, out, ensure_ascii=False, indent=2)
        out.write("\n")
        return code
    out.write("\n".join(render_audit(report, _Symbols(out))) + "\n")
    return code


def render_audit(report: AuditReport, symbols: _Symbols) -> list[str]:
    """Return the human-readable lines of an audit export's report."""
    marks, chain = symbols.marks, report.chain
    lines = [
        f"Audit export {report.source}: {chain.size} entries, {len(report.checkpoints)} checkpoints"
    ]
    if chain.ok:
        lines.append(
            f"  chain {marks[PASS]}  entries 1..{chain.size} linked, head {_short(chain.head_hash)}"
        )
    else:
        lines.append(f"  chain {marks[FAIL]}  first bad entry: seq {chain.first_bad_seq}")
    rows = [
        [
            str(i + 1),
            str(_doc_field(cp, "size")),
            str(_doc_field(cp, "time")),
            *(marks[s] for s in report.checkpoint_statuses(i).values()),
        ]
        for i, cp in enumerate(report.checkpoints)
    ]
    if rows:
        header = ["checkpoint", "size", "time", "signature", "root", "consistency"]
        lines += ["  " + line for line in _table(header, rows)]
    failures = report.failures()
    if failures:
        lines.append("  Failures:")
        lines += [f"    {line}" for line in failures]
    if report.uncovered:
        lines.append(
            f"  Note: the last {report.uncovered} entries are not covered by a checkpoint yet"
        )
    verdict = "OK" if report.ok else "FAILED"
    lines.append(f"Result: {verdict} (exit {EXIT_OK if report.ok else EXIT_FAILED})")
    return lines


def _key_argument(text: str) -> str:
    key = text.strip().lower()
    if not _is_hex64(key):
        raise argparse.ArgumentTypeError(
            "a public key is 64 hex digits (the raw 32-byte Ed25519 key)"
        )
    return key


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError("jobs must be a whole number of at least 1")
    return jobs


def _bundle_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sota_casino.verify",
        description=(
            "Verify Sota Casino receipt bundles offline (every check of FAIRNESS.md). "
            "To check an audit log export instead: python -m sota_casino.verify audit EXPORT.jsonl "
            "--public-key HEX."
        ),
        epilog="Exit codes: 0 everything checkable holds, 1 something fails, 2 unusable input.",
    )
    parser.add_argument(
        "bundles",
        nargs="+",
        metavar="BUNDLE.json",
        help="bundle files ('-' reads stdin); a file may hold a JSON list of bundles",
    )
    parser.add_argument(
        "--public-key",
        type=_key_argument,
        metavar="HEX",
        help="the published public key; a bundle naming another key fails",
    )
    parser.add_argument("--json", action="store_true", help="print a machine-readable JSON report")
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help=f"worker processes for bundles of {PARALLEL_MIN_ROUNDS} rounds or more",
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show a progress bar on stderr even when it is not a terminal",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only failures and the summary, not the table",
    )
    return parser


def _audit_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sota_casino.verify audit",
        description=(
            "Verify an audit log export: the hash chain, each checkpoint's signature and "
            "Merkle root, and their consistency."
        ),
        epilog="Exit codes: 0 everything holds, 1 something fails, 2 unusable input.",
    )
    parser.add_argument(
        "export", metavar="EXPORT.jsonl", help="the JSON Lines export ('-' reads stdin)"
    )
    parser.add_argument(
        "--public-key",
        type=_key_argument,
        required=True,
        metavar="HEX",
        help="the published public key",
    )
    parser.add_argument("--json", action="store_true", help="print a machine-readable JSON report")
    return parser


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the verifier; return its exit code (argparse exits with 2 on a bad command line)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out, err = out or sys.stdout, err or sys.stderr
    if argv[:1] == ["audit"]:
        return _audit_command(_audit_parser().parse_args(argv[1:]), out)
    return _bundle_command(_bundle_parser().parse_args(argv), out, err)


if __name__ == "__main__":
    sys.exit(main())
