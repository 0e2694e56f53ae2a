"""The checks of docs/fairness.md ("What the verifier checks") on the documents of one bundle.

1. ``signature``: every document is signed by the trusted public key, or a key it handed on to
   or succeeded (the key in use when the document was made);
2. ``commitment``: ``sha256(server_seed)`` is the commitment, in all three kinds of document;
3. ``pair``: each receipt belongs to the pair: its seed pair, commitment and client seed, settled
   after the commitment was signed and before the seed was revealed; the reveal is the pair's;
4. ``nonces``: the nonces are ``0 .. rounds−1``, each once;
5. ``cards``: replaying the stream gives each receipt's cards;
6. ``outcome``: replaying the game with the receipt's rules and actions gives its outcome,
   stakes and payout.

Before the reveal, the checks that need the server seed are *pending*, not failed; the outcome
is then replayed on the receipt's own cards. The others are beside them: ``player`` (7) in
:mod:`.player_signatures`, ``records`` (8) in :mod:`.records`, ``log`` (9) in :mod:`.anchors`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from functools import lru_cache
from itertools import islice
from typing import Any
from typing import Final
from typing import TypeGuard
from typing import TypeVar

from ..core import casino_war
from ..core import sota
from ..core.anchors import same_json
from ..core.cards import Card
from ..core.cards import canonical_shoe
from ..core.errors import CasinoError
from ..core.errors import InvalidInput
from ..core.errors import InvalidRules
from ..core.fairness import PartialShuffle
from ..core.fairness import Seeds
from ..core.fairness import Stream
from ..core.fairness import check_client_seed
from ..core.fairness import commitment_of
from ..core.fairness import format_time
from ..core.fairness import is_hex64
from ..core.fairness import round_document
from ..core.fairness import signature_checker
from ..core.fairness import time_or_none
from .report import CHECKS
from .report import FAIL
from .report import NOT_REVEALED
from .report import PENDING
from .report import UNCOMPARED
from .report import BundleError
from .report import Finding
from .report import Row
from .report import _Collector
from .report import short

#: The fields of a round receipt (docs/fairness.md), besides ``type`` and ``v``.
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

# --- small validators -----------------------------------------------------------------------


def _is_int(value: object) -> TypeGuard[int]:
    return type(value) is int  # JSON integers are exactly int; bool is not a number here


def _is_hex64(value: object) -> TypeGuard[str]:
    """:func:`is_hex64`, telling the type checker that a value it accepts is a ``str``."""
    return is_hex64(value)


def _same(a: object, b: object) -> bool:
    """Tell whether two JSON values are equal, types included (in Python ``true == 1``)."""
    return type(a) is type(b) and a == b


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
    keys: Sequence[str],
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
        valid = checker_of_keys(keys)(doc, signature)
    if not valid:
        found.fail("signature", "the signature is not valid for the public key")


def signature_valid(public_key_hex: str, doc: Mapping[str, Any], signature_hex: str) -> bool:
    """Tell whether ``signature_hex`` signs the canonical JSON of ``doc`` by the key."""
    return signature_checker(public_key_hex)(doc, signature_hex)


def checker_of_keys(keys: Sequence[str]) -> Callable[[Any, str], bool]:
    """Return a function telling whether a hex signature signs a document by one of ``keys``:
    the checked key first, then the keys it succeeded on the way from the trusted key (a document
    made before a key change is signed by the key that change retired)."""
    checkers = [signature_checker(key) for key in keys]
    if len(checkers) == 1:
        return checkers[0]  # thousands of receipts: no detour for the usual single key
    return lambda doc, signature_hex: any(valid(doc, signature_hex) for valid in checkers)


# A pair's seed is hashed again for each of its receipts.
_sha256_hex: Final = lru_cache(maxsize=8)(commitment_of)


def _check_commits_to_seed(
    found: _Collector, commitment: object, seed: bytes | None, what: str
) -> None:
    if seed is not None and commitment == _sha256_hex(seed):
        return
    if not is_hex64(commitment):
        found.fail("commitment", f"the {what} has no valid commitment (64 lower-case hex digits)")
    elif seed is None:
        found.pending("commitment")
    elif _sha256_hex(seed) != commitment:
        found.fail(
            "commitment",
            f"the {what} commits to {short(str(commitment))}, but sha256 of the revealed "
            f"server seed is {short(_sha256_hex(seed))}",
        )


# --- the pair: commitment and reveal --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairContext:
    """What every receipt of the bundle is checked against."""

    signing_keys: tuple[str, ...]  # the checked key, then those it succeeded from the trusted
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
    envelope: Mapping[str, Any], signing_keys: Sequence[str], server_seed: bytes | None
) -> Row:
    """Check the commitment document: signature (by one of ``signing_keys``), sha256 of the
    seed, its fields."""
    doc, signature = _envelope(envelope) or ({}, "")
    found = _Collector("commitment")
    _check_signature(found, signing_keys, doc, signature, "commitment")
    _check_commits_to_seed(found, doc.get("commitment"), server_seed, "commitment document")
    for name in ("seed_pair_id", "user_id"):
        if name not in doc:
            found.fail("pair", f"the commitment document has no {name}")
        elif not _is_int(doc[name]):
            # The player's records find the pair by its integer id: a pair re-committed under
            # the id "12" would not be compared with the commitment recorded for pair 12.
            found.fail("pair", f"the commitment document's {name} {doc[name]!r} is not an integer")
    if time_or_none(doc.get("created_at")) is None:
        found.fail("pair", "created_at is not a YYYY-MM-DDTHH:MM:SS.ffffffZ time")
    return found.row()


def check_reveal(
    envelope: Mapping[str, Any], signing_keys: Sequence[str], commitment_doc: Mapping[str, Any]
) -> Row:
    """Check the reveal: signature (by one of ``signing_keys``), sha256 of its seed, that it is
    this pair's, its count."""
    doc, signature = _envelope(envelope) or ({}, "")
    found = _Collector("reveal")
    _check_signature(found, signing_keys, doc, signature, "reveal")
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
    try:
        check_client_seed(client_seed)
    except InvalidInput as exc:
        found.fail("pair", f"the reveal's {exc.message}")
    revealed_at = time_or_none(doc.get("revealed_at"))
    created_at = time_or_none(commitment_doc.get("created_at"))
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
    _check_signature(found, context.signing_keys, doc, signature, "round", signature_ok)
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
    server_seed, client_seed, rounds = context.server_seed, context.client_seed, context.rounds
    # fully_known implies that none of them is None; the type checker needs to see it.
    if not context.fully_known or server_seed is None or client_seed is None or rounds is None:
        return None
    try:
        rules = _war_rules(_frozen_rules(doc["rules"]))
        nonce = doc["nonce"]
        if not (_is_int(nonce) and 0 <= nonce < rounds):
            return None
        seeds = Seeds(server_seed, client_seed, nonce)
        shoe = PartialShuffle(canonical_shoe("standard52", rules.decks), Stream(seeds))
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
            signed_actions=doc.get("signed_actions"),  # the player check's, checked there
            signed_bet=doc.get("signed_bet"),  # as signed_actions
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
            time_or_none(doc["settled_at"]),
            context.created_at,
            context.revealed_at,
        )
        # The pair's times are None where its documents held none: the TypeError is caught below.
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
        UNCOMPARED,
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
            f"the receipt's commitment {short(commitment)} is not the pair's "
            f"{short(context.commitment)}",
        )
    client_seed = doc.get("client_seed")
    if not isinstance(client_seed, str):
        found.fail("pair", "the receipt has no client seed")
    elif context.client_seed is not None and client_seed != context.client_seed:
        found.fail(
            "pair",
            f"client seed {client_seed!r} is not the pair's client seed {context.client_seed!r}",
        )
    settled = time_or_none(doc.get("settled_at"))
    if settled is None:
        found.fail("pair", "settled_at is not a YYYY-MM-DDTHH:MM:SS.ffffffZ time")
        return
    if context.created_at is not None and settled <= context.created_at:
        found.fail(
            "pair",
            f"settled at {doc['settled_at']}, before the commitment was signed "
            f"({format_time(context.created_at)})",
        )
    if context.revealed_at is not None and settled > context.revealed_at:
        found.fail(
            "pair",
            f"settled at {doc['settled_at']}, after the server seed was revealed "
            f"({format_time(context.revealed_at)})",
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

    :raises InvalidRules: if they are not valid, leave an option out (a receipt lists them
        all, defaults included), or write one in a form a request may use but no signed
        document holds (Sota's ``lead`` off as ``"off"``, not ``null``).
    """
    names, _, values = key
    given = dict(zip(names, values, strict=True))
    rules = kind.from_dict(given)
    signed = rules.to_dict()
    missing = sorted(set(signed) - set(names))
    if missing:
        raise InvalidRules(
            f"every option must be listed, defaults included; missing: {', '.join(missing)}"
        )
    # A receipt is written as the service writes it: a form it never signs is not its own, and
    # its readers may differ on what it means.
    for name, value in signed.items():
        if not same_json(given[name], value):
            raise InvalidRules(
                f"{name} is {json.dumps(given[name])}, a form no signed document holds: the "
                f"service signs it as {json.dumps(value)}"
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
        shoe = PartialShuffle(canonical_shoe("standard52", rules.decks), Stream(seeds))
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
    whole_deck = canonical_shoe(rules.deck, 1)
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
        # Plain equality first, for the long trick log; then the JSON types, the winner's
        # named apart (in Python ``false == 0``, and seat 0 is the player), then any other:
        # a trick's ``"wars": false`` is not the ``0`` replayed, as the page says.
        if outcome != replayed:
            found.fail("outcome", f"outcome {sota.first_difference(outcome, replayed)}")
        elif not _same(outcome.get("winner"), replayed["winner"]):
            found.fail(
                "outcome",
                f"outcome winner is {_brief(outcome.get('winner'))}, "
                f"replay gives {_brief(replayed['winner'])}",
            )
        elif not same_json(outcome, replayed):
            found.fail("outcome", f"outcome {sota.first_difference(outcome, replayed)}")
    _compare_payout(found, doc.get("payout"), sota.payout(rules, result.winner, stakes["stake"]))


def check_batch(context: PairContext, start: int, envelopes: Sequence[object]) -> list[Row]:
    """Check a run of receipts, the first at position ``start``: all signatures, then the rest.

    The phases are kept apart because OpenSSL's signature check and the Python replay evict
    each other's working set from the CPU caches: alternating them receipt by receipt was
    measured about 8 % slower.
    """
    signature_ok = checker_of_keys(context.signing_keys)
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


def _bundle_parts(
    bundle: object,
) -> tuple[str, Mapping[str, Any], Mapping[str, Any] | None, list[Any]]:
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
    if not is_hex64(key):
        raise BundleError("public_key_hex is not 64 lower-case hex digits")
    if _envelope(commitment) is None:
        raise BundleError("commitment is not a signed document {document, signature}")
    if reveal is not None and _envelope(reveal) is None:
        raise BundleError("reveal is neither null nor a signed document {document, signature}")
    if not isinstance(rounds, list):
        raise BundleError("rounds is not a list")
    return key, commitment, reveal, rounds


def _pair_context(
    signing_keys: Sequence[str],
    commitment_doc: Mapping[str, Any],
    reveal_doc: Mapping[str, Any] | None,
    seed: bytes | None,
) -> PairContext:
    commitment = commitment_doc.get("commitment")
    reveal = reveal_doc or {}
    client_seed, rounds = reveal.get("client_seed"), reveal.get("rounds")
    return PairContext(
        signing_keys=tuple(signing_keys),
        seed_pair_id=commitment_doc.get("seed_pair_id"),
        commitment=commitment if is_hex64(commitment) else None,
        created_at=time_or_none(commitment_doc.get("created_at")),
        server_seed=seed,
        client_seed=client_seed if isinstance(client_seed, str) else None,
        revealed_at=time_or_none(reveal.get("revealed_at")),
        rounds=rounds if _is_int(rounds) and rounds >= 0 else None,
    )
