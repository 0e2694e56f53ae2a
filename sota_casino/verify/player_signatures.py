"""The ``player`` check: every bet, decision and move is the player's own (docs/fairness.md,
"Decisions the player signs" and "Bets the player signs").

A player may register Ed25519 keys; each registration is an audit entry
``player_key.registered`` that the bundle carries (``player_keys``), and a newer registration
retires the key before it. From a registration on, the service takes no decision or move that
the player did not sign, so a receipt fails this check when

* one of its signed actions is not a valid signature, by a key the log registered for this
  player before the round settled, of the action document for the receipt's own round, seed
  pair, nonce, position and choice (a rewritten choice, a key hidden from the log);
* its settling action (the last: the decision or move the round settled on) is unsigned while
  one of the player's keys was registered before the round settled, or is signed by a key the
  player had already replaced. "Before" is by the times the entries and the receipt carry, or
  by the log's order where the bundle proves the round's settlement entry: registrations and
  decisions take the player's row lock, so the log orders them as the service took them,
  while the times are the casino's to write;
* an unsigned action follows a signed one (keys are replaced, never removed);
* an unsigned action was taken, by the log's order where the bundle proves the action's entry,
  after one of the player's keys was registered: the service takes none then, so a move of a
  game played after the registration, rewritten and left unsigned, is not the player's though
  the move the game settled on is signed;
* an action before the settling one is signed by a key the player had replaced before the log
  took it (by the log's order, where the bundle proves the action's entry): the service takes
  an action signed by the key in use only, so moves of a game played after the player replaced
  a key, rewritten and signed by the replaced one, are not the player's though the move the
  game settled on is signed by the key in use;
* its signed bet is not a valid signature, by a key the log registered for this player before
  the round settled (the key in use when the log took the bet, where the bundle proves the
  bet's entry), of the bet document of the receipt's own player, game, seed pair, nonce,
  stakes and rules (a bet carried to another nonce, a larger stake);
* its bet is unsigned while one of the player's keys was registered before the log took the
  bet (where the bundle proves the bet's entry), or, for a round settled with its bet (no
  decision or move), before the round settled: an operator betting a round in the player's
  name, to spend a nonce whose cards would have favoured the player's next bet, holds no
  key of the player's to sign it with.

The registrations themselves are checked to be whole audit entries whose hash is what the
entry holds, of this player, in the order of the log, and (once a checkpoint covers them) to be
in the log: an inclusion proof of the entry into a checkpoint signed by the trusted key, or by
a key the bundle's key changes lead to from it (a checkpoint signed before a change, or by a
process not yet restarted with the new key, is signed by the key that change retired); never by
a key the trusted key succeeded.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from datetime import datetime
from typing import Any
from typing import Final
from typing import TypeVar

from ..core.anchors import proof_problem
from ..core.anchors import same_json
from ..core.audit_chain import checkpoint_shape_problem
from ..core.audit_chain import entry_hash
from ..core.audit_chain import entry_shape_problem
from ..core.fairness import PLAYER_KEY_REGISTERED
from ..core.fairness import action_document
from ..core.fairness import bet_document
from ..core.fairness import bet_stakes
from ..core.fairness import canonical_json
from ..core.fairness import is_hex64
from ..core.fairness import parse_time
from ..core.fairness import signature_checker
from ..core.fairness import time_or_none
from ..core.fairness import verify_signature
from .anchors import PendingDates
from .report import FAIL
from .report import PENDING
from .report import Finding
from .report import Row

CHECK: Final = "player"
#: Where the log took a round's entries: the settlement's seq, or the actions' seqs.
_Logged = TypeVar("_Logged")


@dataclass(frozen=True, slots=True)
class PlayerKey:
    """One of the player's keys as the log registered it."""

    key_id: int
    public_key_hex: str
    registered_at: datetime
    seq: int
    retired_at: datetime | None  # when the next registration replaced it


def _bundle_finding(message: str, status: str = FAIL) -> Finding:
    return Finding("bundle", CHECK, status, message)


def registered_keys(
    registrations: object, user_id: object, log_keys: Sequence[str], dates: PendingDates
) -> tuple[dict[int, PlayerKey], list[Finding]]:
    """Return the player's keys from the bundle's ``player_keys`` (by key id) and what is wrong
    with the registrations. A registration that is not a whole, self-consistent audit entry of
    this player, or whose inclusion proof fails, registers nothing; one that no signed
    checkpoint covers yet counts, and is said to be pending, within the bound of its entry's
    ``time`` as a pending document is (``dates``, and the checkpoints the anchored ones carry),
    else it fails: a registration kept pending for good would never be proved in the log.

    :param log_keys: the trusted key and the keys its chain of key changes leads to, as the
        document anchors take them: a checkpoint signed by any of them holds."""
    if registrations is None:
        return {}, []
    if not isinstance(registrations, list):
        return {}, [_bundle_finding("player_keys is not a list of key registrations")]
    findings: list[Finding] = []
    accepted: list[tuple[int, str, datetime, int]] = []
    pending: list[tuple[int, Mapping[str, Any]]] = []
    carried: list[Mapping[str, Any]] = []  # the checkpoints the anchored ones hold, signed
    for position, item in enumerate(registrations, start=1):
        entry = item.get("entry") if isinstance(item, dict) else None
        problem = _registration_problem(entry, user_id)
        if problem is None:
            assert isinstance(item, dict)
            problem = anchor_problem(item, log_keys)
        if problem is not None:
            findings.append(_bundle_finding(f"key registration #{position} {problem}"))
            continue
        assert isinstance(item, dict) and isinstance(entry, dict)
        if "anchor" in item:
            carried.append(item["checkpoint"]["document"])
        else:
            pending.append((position, entry))
        data = entry["data"]
        accepted.append(
            (data["key_id"], data["public_key_hex"], parse_time(entry["time"]), entry["seq"])
        )
    # A later registration's checkpoint may cover an earlier one's entry: each counts.
    judging = replace(dates, checkpoints=[*dates.checkpoints, *carried])
    findings += [_pending_registration(position, entry, judging) for position, entry in pending]
    accepted.sort(key=lambda registration: registration[3])
    keys: dict[int, PlayerKey] = {}
    for (key_id, public_hex, at, seq), successor in zip(
        accepted, [*accepted[1:], None][: len(accepted)], strict=True
    ):
        if key_id in keys:
            # A verdict names a signing key by its id, which the player compares with its own:
            # a second key under one id would pass for the player's.
            findings.append(
                _bundle_finding(
                    f"key {key_id} is registered twice, at log entry {keys[key_id].seq} and at "
                    f"log entry {seq}: a key id names one key, so a key registered again under "
                    "the id of another would pass for it"
                )
            )
            continue
        keys[key_id] = PlayerKey(key_id, public_hex, at, seq, successor[2] if successor else None)
    return keys, findings


def _pending_registration(position: int, entry: Mapping[str, Any], dates: PendingDates) -> Finding:
    """The finding of a registration no signed checkpoint covers: pending within the bound of
    its entry's ``time``, else failing by it."""
    named = f"key registration #{position} (entry {entry['seq']})"
    status, said = dates.judged("registration", entry)
    if status == FAIL:
        return _bundle_finding(f"{named}: {said}")
    waiting = (
        f"{named} is not in a signed checkpoint yet: ask for the bundle again later to prove it "
        "is in the log"
    )
    return _bundle_finding(waiting if said is None else f"{waiting}; {said}", PENDING)


def _registration_problem(entry: object, user_id: object) -> str | None:
    shape = entry_shape_problem(entry)
    if shape is not None:
        return f"is not an audit entry: it {shape.text()}"
    assert isinstance(entry, dict)
    if entry_hash(entry["prev_hash"], entry) != entry["hash"]:
        return f"(entry {entry['seq']}) does not hash to the hash it shows: it was altered"
    data = entry["data"]
    if entry["action"] != PLAYER_KEY_REGISTERED:
        return f"(entry {entry['seq']}) is a {entry['action']!r} entry, not a key registration"
    if type(data.get("user_id")) is not int or not same_json(data["user_id"], user_id):
        return f"(entry {entry['seq']}) registers a key of user {data.get('user_id')!r}"
    if type(data.get("key_id")) is not int or not is_hex64(data.get("public_key_hex")):
        return f"(entry {entry['seq']}) names no key_id and public_key_hex"
    return None


def anchor_problem(item: Mapping[str, Any], log_keys: Sequence[str]) -> str | None:
    """Say why the anchor of a logged item (a key registration, a key change) does not prove
    its ``entry`` into a checkpoint signed by one of ``log_keys``, or ``None`` (also when it
    has no anchor yet)."""
    if "anchor" not in item:
        return None
    anchor, checkpoint = item["anchor"], item.get("checkpoint")
    shape = checkpoint_shape_problem(checkpoint)
    if shape is not None or not isinstance(anchor, dict) or not isinstance(checkpoint, dict):
        return f"has no usable checkpoint: it {shape or 'has no anchor object'}"
    doc = checkpoint["document"]
    if not any(verify_signature(key, doc, checkpoint["signature"]) for key in log_keys):
        return "proves into a checkpoint that the trusted key did not sign"
    if not same_json(anchor.get("checkpoint_size"), doc.get("size")):  # true is not 1
        return "names another checkpoint than the one it carries"
    problem = proof_problem({**anchor, "entry": item["entry"]}, doc)
    return None if problem is None else f"is not shown to be in the log: {problem}"


def check_signed_actions(
    row: Row,
    doc: Mapping[str, Any],
    keys: Mapping[int, PlayerKey],
    settled_seq: int | None = None,
    acted_seqs: Sequence[int] = (),
) -> list[Finding]:
    """Return the ``player`` findings of one receipt (empty if it passes).

    :param settled_seq: the seq of the round's settlement entry, where the bundle proves it.
    :param acted_seqs: the seqs of the round's decision or move entries the bundle proves, in
        the log's order: the ``i``-th is where the log took ``actions[i]``.
    """
    actions = doc.get("actions")
    if not isinstance(actions, list) or not actions:
        return []
    signed = doc.get("signed_actions", [None] * len(actions))
    settled_at = time_or_none(doc.get("settled_at"))
    if not isinstance(signed, list) or len(signed) != len(actions):
        return [_finding(row, "signed_actions is not a list with one entry for each action")]
    findings: list[str] = []
    for index, (choice, entry) in enumerate(zip(actions, signed, strict=True)):
        if entry is not None:
            findings += _signed_problems(doc, index, choice, entry, keys, settled_at, settled_seq)
            if index < len(actions) - 1 and index < len(acted_seqs):
                # The action the round settled on is held to the key in use below.
                findings += _signed_by_replaced_key(index, choice, entry, keys, acted_seqs[index])
        elif index and signed[index - 1] is not None:
            findings.append(
                f"action {index} ({_text(choice)}) is unsigned, but action {index - 1} is signed: "
                "a registered key is replaced, never removed"
            )
        elif index < len(actions) - 1 and index < len(acted_seqs):
            # The action the round settled on is held to the key in use below.
            findings += _unsigned_after_registration(index, choice, keys, acted_seqs[index])
    last = len(actions) - 1
    in_use = _key_in_use(keys, settled_at, settled_seq)
    if signed[last] is None and in_use is not None:
        logged = (
            f" (log entry {settled_seq})"
            if settled_seq is not None and in_use.seq < settled_seq
            else ""
        )
        findings.append(
            f"the {_what(doc)} {_text(actions[last])} is unsigned, but the player's key "
            f"{in_use.key_id} was registered (log entry {in_use.seq}, "
            f"{in_use.registered_at:%Y-%m-%dT%H:%M:%S.%fZ}) before the round settled{logged}: "
            "the service takes no unsigned decision then, so the player did not make this one"
        )
    elif isinstance(signed[last], dict) and in_use is not None:
        key_id = signed[last].get("key_id")
        # ``type(...) is int``: ``True in keys`` finds key 1, though ``true`` names no key.
        if type(key_id) is int and key_id in keys and key_id != in_use.key_id:
            findings.append(
                f"the {_what(doc)} is signed by key {key_id}, which the player had replaced by "
                f"key {in_use.key_id} before the round settled"
            )
    return [_finding(row, message) for message in findings]


def _unsigned_after_registration(
    index: int, choice: object, keys: Mapping[int, PlayerKey], acted_seq: int
) -> list[str]:
    """The problem of an unsigned action the log took (entry ``acted_seq``) after one of the
    player's keys was registered: the service takes no unsigned action then."""
    in_use = _key_in_use(keys, None, acted_seq)
    if in_use is None:
        return []
    return [
        f"action {index} ({_text(choice)}) is unsigned, but the player's key {in_use.key_id} "
        f"was registered (log entry {in_use.seq}, {in_use.registered_at:%Y-%m-%dT%H:%M:%S.%fZ}) "
        f"before the log took it (log entry {acted_seq}): the service takes no unsigned action "
        "then, so the player did not make this one"
    ]


def _signed_by_replaced_key(
    index: int, choice: object, entry: object, keys: Mapping[int, PlayerKey], acted_seq: int
) -> list[str]:
    """The problem of an action signed by one of the player's keys that the player had
    replaced before the log took it (entry ``acted_seq``): the service takes an action signed
    by the key in use only, so a replaced key (lost with a browser, or one registered for the
    player by someone else) signs no action the player made."""
    key_id = entry.get("key_id") if isinstance(entry, dict) else None
    in_use = _key_in_use(keys, None, acted_seq)
    # ``type(...) is int``: ``True in keys`` finds key 1, though ``true`` names no key.
    if in_use is None or type(key_id) is not int or key_id not in keys or key_id == in_use.key_id:
        return []
    return [
        f"action {index} ({_text(choice)}) is signed by key {key_id}, which the player had "
        f"replaced by key {in_use.key_id} (log entry {in_use.seq}, "
        f"{in_use.registered_at:%Y-%m-%dT%H:%M:%S.%fZ}) before the log took it (log entry "
        f"{acted_seq}): the service takes no action signed by a replaced key, so the player "
        "did not make this one"
    ]


def _signed_problems(
    doc: Mapping[str, Any],
    index: int,
    choice: object,
    entry: object,
    keys: Mapping[int, PlayerKey],
    settled_at: datetime | None,
    settled_seq: int | None,
) -> list[str]:
    where = f"action {index}"
    if not isinstance(entry, dict) or not isinstance(entry.get("document"), dict):
        return [f"{where}: the signed action is not {{document, signature, key_id}}"]
    signed_doc, signature, key_id = entry["document"], entry.get("signature"), entry.get("key_id")
    problems = []
    expected = action_document(
        game=doc.get("game"),  # type: ignore[arg-type]  # compared as JSON, whatever it is
        round_id=doc.get("round_id"),  # type: ignore[arg-type]  # as game
        seed_pair_id=doc.get("seed_pair_id"),  # type: ignore[arg-type]  # as game
        nonce=doc.get("nonce"),  # type: ignore[arg-type]  # as game
        index=index,
        choice=choice,
    )
    if canonical_json(signed_doc) != canonical_json(expected):
        for name in sorted(set(expected) | set(signed_doc)):
            mine, theirs = signed_doc.get(name), expected.get(name)
            if canonical_json(mine) != canonical_json(theirs):
                label = "the receipt's choice" if name == "choice" else f"the receipt's {name}"
                problems.append(
                    f"{where}: the player signed {name} {_text(mine)}, but {label} is "
                    f"{_text(theirs)}"
                )
    key = keys.get(key_id) if type(key_id) is int else None
    if key is None:
        problems.append(
            f"{where} is signed by key {_text(key_id)}, which no registration of this player "
            "in the log names (a registration hidden from the bundle or removed from the log?)"
        )
    elif not isinstance(signature, str) or not signature_checker(key.public_key_hex)(
        signed_doc, signature
    ):
        problems.append(f"{where}: the signature is not valid for the player's key {key_id}")
    elif settled_at is not None and not _before_settlement(key, settled_at, settled_seq):
        problems.append(f"{where} is signed by key {key_id}, registered after the round settled")
    return problems


def _key_in_use(
    keys: Mapping[int, PlayerKey], moment: datetime | None, seq: int | None = None
) -> PlayerKey | None:
    """Return the player's key in use when the round settled: the newest registered before
    ``moment`` (the receipt's time), or logged before entry ``seq`` (its settlement's)."""
    before = [key for key in keys.values() if _before_settlement(key, moment, seq)]
    return max(before, key=lambda key: key.seq) if before else None


def _before_settlement(key: PlayerKey, moment: datetime | None, seq: int | None) -> bool:
    """Tell whether ``key`` was registered before the round settled: dated before ``moment``
    (the receipt's time), or logged before entry ``seq`` (its settlement's)."""
    return (moment is not None and key.registered_at < moment) or (
        seq is not None and key.seq < seq
    )


def _what(doc: Mapping[str, Any]) -> str:
    return "decision" if doc.get("game") == "casino_war" else "last move"


def _text(value: object) -> str:
    try:
        return canonical_json(value).decode()
    except (TypeError, ValueError):
        return repr(value)


def _finding(row: Row, message: str) -> Finding:
    return Finding("round", CHECK, FAIL, message, row.index, row.round_id, row.nonce)


def with_player_findings(
    rows: Sequence[Row],
    documents: Sequence[Mapping[str, Any] | None],
    keys: Mapping[int, PlayerKey],
    settled: Mapping[Any, int] | None = None,
    acted: Mapping[Any, Sequence[int]] | None = None,
    *,
    user_id: object = None,
    bets: Mapping[Any, int] | None = None,
) -> list[Row]:
    """Return ``rows`` with the ``player`` findings of their receipts (``documents``, by row;
    ``settled``: the seq of each round's settlement entry the bundle proves, by round id;
    ``acted``: the seqs of its decision and move entries, in the log's order; ``bets``: the
    seq of its bet entry; ``user_id``: the commitment document's, whose bets they are)."""
    settled, acted, bets = settled or {}, acted or {}, bets or {}
    return [
        row
        if doc is None
        else row.with_findings(
            [
                *check_signed_actions(
                    row,
                    doc,
                    keys,
                    _by_round(settled, row.round_id),
                    _by_round(acted, row.round_id) or (),
                ),
                *check_signed_bet(
                    row,
                    doc,
                    keys,
                    user_id,
                    _by_round(settled, row.round_id),
                    _by_round(bets, row.round_id),
                ),
            ]
        )
        for row, doc in zip(rows, documents, strict=True)
    ]


#: Said of every bet that fails the check: what the player holds against it.
NOT_THE_PLAYERS: Final = "the bet was not signed by the player's key"


def check_signed_bet(
    row: Row,
    doc: Mapping[str, Any],
    keys: Mapping[int, PlayerKey],
    user_id: object,
    settled_seq: int | None = None,
    bet_seq: int | None = None,
) -> list[Finding]:
    """Return the ``player`` findings of one receipt's bet (empty if it passes).

    :param user_id: the player's, as the pair's commitment document names it.
    :param settled_seq: the seq of the round's settlement entry, where the bundle proves it.
    :param bet_seq: the seq of the round's bet entry, where the bundle proves it.
    """
    signed = doc.get("signed_bet")
    settled_at = time_or_none(doc.get("settled_at"))
    if signed is None:
        return [
            _finding(row, m) for m in _unsigned_bet(doc, keys, settled_at, settled_seq, bet_seq)
        ]
    if not isinstance(signed, dict) or not isinstance(signed.get("document"), dict):
        return [
            _finding(
                row, f"the signed bet is not {{document, signature, key_id}}: {NOT_THE_PLAYERS}"
            )
        ]
    signed_doc, signature, key_id = (
        signed["document"],
        signed.get("signature"),
        signed.get("key_id"),
    )
    problems = []
    stakes = doc.get("stakes")
    sent = bet_stakes(str(doc.get("game")), stakes) if isinstance(stakes, dict) else stakes
    expected = bet_document(
        user_id=user_id,  # type: ignore[arg-type]  # compared as JSON, whatever it is
        game=doc.get("game"),  # type: ignore[arg-type]  # as user_id
        seed_pair_id=doc.get("seed_pair_id"),  # type: ignore[arg-type]  # as user_id
        nonce=doc.get("nonce"),  # type: ignore[arg-type]  # as user_id
        stakes=sent,  # type: ignore[arg-type]  # as user_id
        rules=doc.get("rules"),  # type: ignore[arg-type]  # as user_id
    )
    for name in sorted(set(expected) | set(signed_doc)):
        mine, theirs = signed_doc.get(name), expected.get(name)
        if _text(mine) != _text(theirs):
            whose = "the pair's player" if name == "user_id" else f"the receipt's {name}"
            problems.append(
                f"the player signed a bet of {name} {_text(mine)}, but {whose} is "
                f"{_text(theirs)}: {NOT_THE_PLAYERS} over this round's bet"
            )
    key = keys.get(key_id) if type(key_id) is int else None
    if key is None:
        problems.append(
            f"the bet is signed by key {_text(key_id)}, which no registration of this player in "
            f"the log names (a registration hidden from the bundle or removed from the log?): "
            f"{NOT_THE_PLAYERS} as the log registered it"
        )
    elif not isinstance(signature, str) or not signature_checker(key.public_key_hex)(
        signed_doc, signature
    ):
        problems.append(
            f"the bet's signature is not valid for the player's key {key_id}: {NOT_THE_PLAYERS}"
        )
    elif settled_at is not None and not _before_settlement(key, settled_at, settled_seq):
        problems.append(f"the bet is signed by key {key_id}, registered after the round settled")
    else:
        in_use = _key_in_use(keys, None, bet_seq) if bet_seq is not None else None
        if in_use is not None and in_use.key_id != key_id:
            problems.append(
                f"the bet is signed by key {key_id}, which the player had replaced by key "
                f"{in_use.key_id} before the log took the bet (log entry {bet_seq})"
            )
    return [_finding(row, message) for message in problems]


def _unsigned_bet(
    doc: Mapping[str, Any],
    keys: Mapping[int, PlayerKey],
    settled_at: datetime | None,
    settled_seq: int | None,
    bet_seq: int | None,
) -> list[str]:
    """The problem of an unsigned bet taken once one of the player's keys was registered: by
    the log's order where the bundle proves the bet's entry; else, for a round settled with
    its bet (no decision or move), before the round settled."""
    if bet_seq is not None:
        in_use, taken = (
            _key_in_use(keys, None, bet_seq),
            f"the log took the bet (log entry {bet_seq})",
        )
    elif not (isinstance(doc.get("actions"), list) and doc["actions"]):
        in_use, taken = _key_in_use(keys, settled_at, settled_seq), "the round was bet and settled"
    else:
        return []
    if in_use is None:
        return []
    return [
        f"the bet is unsigned, but the player's key {in_use.key_id} was registered (log entry "
        f"{in_use.seq}, {in_use.registered_at:%Y-%m-%dT%H:%M:%S.%fZ}) before {taken}: the "
        f"service takes no unsigned bet then, so {NOT_THE_PLAYERS}: the player did not place "
        "this bet"
    ]


def _by_round(logged: Mapping[Any, _Logged], round_id: object) -> _Logged | None:
    return logged.get(round_id) if type(round_id) in (int, str) else None
