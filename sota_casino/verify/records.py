"""The player's own records, compared with a bundle: the eighth check, ``records``.

Nothing in a bundle can catch a casino that re-commits a whole seed pair (a new server seed,
every round re-dealt, everything re-signed with the real key), that starts a pair it made after
the player's client seed arrived instead of the one it committed to before, that signs a
receipt with a decision or a Prisoners of War move the player did not send, or that settles a
round under other rules or stakes than those the player bet (the payout follows from the
receipt's own rules and stakes, and the ledger debits its stakes), or that leaves out of a pair's
bundle a round the player played. Only what the player kept can: each commitment document shown
before play (the next pair's included, shown before the client seed that starts it is chosen),
the client seed sent to start each pair, the rules and the amounts each bet was sent with, and
each decision and move sent. The records file (``docs/fairness.md``, "The player's records") is::

    {"format": "sota-casino-records", "v": 1, "public_key_hex": "<hex>" or null,
     "commitments": [SIGNED, ...],
     "actions": [{"round_id", "seed_pair_id", "nonce", "game": "casino_war", "action"},
                 {"round_id", "seed_pair_id", "nonce", "game": "sota", "move", "cards"}],
     "rotations": [{"seed_pair_id", "client_seed"}],
     "bets": [{"round_id", "seed_pair_id", "nonce", "game": "casino_war", "bet", "tie_bet",
               "rules"},
              {"round_id", "seed_pair_id", "nonce", "game": "sota", "stake",
               "preset" or "rules"}],
     "verified": [{"name", "sha256", "seen_at"}]}

``verified`` holds the sha256 of each document a verifier in the player's browser found signed
by the trusted key, under the name only one document may have (``the receipt of round 17``, as
:func:`.runner.signed_documents` names them): a bundle signing another document under that name
is the casino's own proof of a rewrite (check 1), and another pair's commitment document under
``the seed pair committed to C`` its proof that it committed one server seed for two pairs
(check 2). ``rotations``, ``bets`` and ``verified`` came later and may be missing, and so may a
bet's amounts: records kept before them still load.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Final

from ..core import casino_war
from ..core import sota
from ..core.anchors import same_json
from ..core.errors import InvalidRules
from ..core.fairness import is_hex64
from ..core.fairness import signature_checker
from ..core.fairness import weak_key_problem
from ..core.fairness import whole_number_json
from .report import FAIL
from .report import Finding
from .report import Row
from .report import short

FORMAT: Final = "sota-casino-records"
VERSION: Final = 1
CHECK: Final = "records"
#: How many unplaced rounds a notice names; the rest are counted.
UNPLACED_NAMED: Final = 10
WAR_ACTIONS: Final = (casino_war.WAR, casino_war.SURRENDER)
#: The amounts a bet sends, by game, named as its receipt's ``stakes`` name them: the ante and the
#: tie bet in minor units, or the stake in sweets.
BET_AMOUNTS: Final = {casino_war.GAME: ("bet", "tie_bet"), sota.GAME: ("stake",)}


class RecordsError(ValueError):
    """A records file that cannot be used (exit code 2)."""


@dataclass(frozen=True, slots=True)
class Records:
    """What the player kept: commitments by seed pair, action records by round, the client
    seed sent to start each pair, each bet by round (its ``rules`` every rule it was placed
    under, its ``stakes`` the amounts it sent or None when they were not recorded), and the
    digests of the documents verified in the browser."""

    public_key_hex: str | None
    commitments: Mapping[Any, tuple[Mapping[str, Any], str]]  # seed_pair_id: (document, sig)
    actions: Mapping[int, tuple[Mapping[str, Any], ...]]  # round_id: its records, in order
    rotations: Mapping[int, str] = field(default_factory=dict)  # seed_pair_id: client seed
    verified: Mapping[str, frozenset[str]] = field(default_factory=dict)  # name: sha256 digests
    bets: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)  # round_id: its bet

    @classmethod
    def parse(cls, data: object, source: str = "records") -> Records:
        """Return the records of a parsed records file.

        :raises RecordsError: naming what is not as the format says.
        """
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RecordsError(f'{source} is not a records file (its "format" is not "{FORMAT}")')
        if type(data.get("v")) is not int or data["v"] != VERSION:
            raise RecordsError(f"{source} is records version {data.get('v')!r}, not {VERSION}")
        key = data.get("public_key_hex")
        if key is not None and not (isinstance(key, str) and len(key) == 64):
            raise RecordsError(f"{source}: public_key_hex is neither null nor 64 hex digits")
        if key is not None and is_hex64(key) and (weak := weak_key_problem(bytes.fromhex(key))):
            raise RecordsError(f"{source}: public_key_hex {short(key)} is {weak}; refused")
        commitments: dict[Any, tuple[Mapping[str, Any], str]] = {}
        for i, envelope in enumerate(_list(data, "commitments", source)):
            doc = envelope.get("document") if isinstance(envelope, dict) else None
            signature = envelope.get("signature") if isinstance(envelope, dict) else None
            if not isinstance(doc, dict) or not isinstance(signature, str):
                raise RecordsError(f"{source}: commitments[{i}] is not {{document, signature}}")
            # Found by an integer id (a pair's id of another kind fails the pair check); kept
            # under its JSON otherwise, since the casino chose the document the page recorded.
            pair = doc.get("seed_pair_id")
            pair = pair if type(pair) is int else json.dumps(pair, sort_keys=True)
            if pair in commitments and not _same_document(commitments[pair][0], doc):
                raise RecordsError(
                    f"{source}: two different commitments are recorded for seed pair {pair}"
                )
            commitments[pair] = (doc, signature)
        actions: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
        for i, record in enumerate(_list(data, "actions", source)):
            actions[_check_action(record, f"{source}: actions[{i}]")].append(record)
        rotations: dict[int, str] = {}
        for i, rotation in enumerate(_list(data, "rotations", source)):
            pair, client_seed = _check_rotation(rotation, f"{source}: rotations[{i}]")
            rotations[pair] = client_seed  # the last sent for a pair is the one that counted
        verified: dict[str, set[str]] = defaultdict(set)
        for i, entry in enumerate(_list(data, "verified", source)):
            name, digest = _check_verified(entry, f"{source}: verified[{i}]")
            verified[name].add(digest)
        bets = {}
        for i, record in enumerate(_list(data, "bets", source)):
            bet = _check_bet(record, f"{source}: bets[{i}]")
            bets[bet["round_id"]] = bet  # a round takes one bet: a retry's record is the same
        return cls(
            key,
            commitments,
            {k: tuple(v) for k, v in actions.items()},
            rotations,
            {name: frozenset(digests) for name, digests in verified.items()},
            bets,
        )

    def of_round(self, round_id: int) -> tuple[Mapping[str, Any], ...]:
        """Return every record of a round: its decisions and moves, then its bet."""
        bet = self.bets.get(round_id)
        return (*self.actions.get(round_id, ()), *(() if bet is None else (bet,)))

    def rounds_played(self) -> frozenset[int]:
        """Return the rounds the records name: each one the player bet or acted in."""
        return frozenset(self.actions) | frozenset(self.bets)

    @classmethod
    def read(cls, path: str) -> Records:
        """Read and parse a records file.

        :raises RecordsError: if it cannot be read or is not a records file.
        """
        try:
            data = whole_number_json(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise RecordsError(f"cannot read records file {path}: {exc}") from None
        return cls.parse(data, path)


def _same_document(one: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Whether two documents are the same, as their canonical bytes would say, for any two the
    casino may show: one holding a lone surrogate has no canonical bytes, and differs all the
    same from one that has."""
    return json.dumps(one, sort_keys=True) == json.dumps(other, sort_keys=True)


def _list(data: Mapping[str, Any], name: str, source: str) -> list[Any]:
    value = data.get(name, [])
    if not isinstance(value, list):
        raise RecordsError(f"{source}: {name} is not a list")
    return value


def _optional_int(value: object) -> bool:
    return value is None or (type(value) is int and value >= 0)


def _check_rotation(rotation: object, where: str) -> tuple[int, str]:
    """Return the seed pair and the client seed of a rotation record.

    :raises RecordsError: if it is not ``{"seed_pair_id", "client_seed"}``.
    """
    if not isinstance(rotation, dict) or type(rotation.get("seed_pair_id")) is not int:
        raise RecordsError(f"{where} has no seed_pair_id (a whole number)")
    client_seed = rotation.get("client_seed")
    if not isinstance(client_seed, str) or not client_seed:
        raise RecordsError(f"{where}: client_seed is the text sent, not {client_seed!r}")
    return int(rotation["seed_pair_id"]), client_seed


def _check_verified(entry: object, where: str) -> tuple[str, str]:
    """Return the name and the digest of a verified document's record.

    :raises RecordsError: if it is not ``{"name", "sha256", "seen_at"}``.
    """
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
        raise RecordsError(f"{where} has no name (the text naming the document)")
    digest = entry.get("sha256")
    if not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
        raise RecordsError(f"{where}: sha256 is 64 lowercase hex digits, not {digest!r}")
    if not isinstance(entry.get("seen_at", ""), str):
        raise RecordsError(f"{where}: seen_at is the time it was verified, as text")
    return entry["name"], digest


def _check_bet(record: object, where: str) -> dict[str, Any]:
    """Return a bet record with every rule the bet was placed under as ``rules``.

    A Casino War bet names every table option, as its request does; a Sota bet names the
    preset or the rules it was sent with, options left out being the rulebook's defaults.

    :raises RecordsError: if it is not one of the two shapes, or its rules are no game's.
    """
    if not isinstance(record, dict) or type(record.get("round_id")) is not int:
        raise RecordsError(f"{where} has no round_id (a whole number)")
    if not (_optional_int(record.get("seed_pair_id")) and _optional_int(record.get("nonce"))):
        raise RecordsError(f"{where}: seed_pair_id and nonce are whole numbers or null")
    game, preset, rules = record.get("game"), record.get("preset"), record.get("rules")
    if game not in (casino_war.GAME, sota.GAME):
        raise RecordsError(f"{where}: game is casino_war or sota, not {game!r}")
    if rules is not None and not isinstance(rules, dict):
        raise RecordsError(f"{where}: rules is an object of rule options")
    if game == casino_war.GAME and (preset is not None or rules is None):
        raise RecordsError(f"{where}: a casino_war bet names its rules, every table option")
    if game == sota.GAME and (preset is None) == (rules is None):
        raise RecordsError(f"{where}: a sota bet names its preset or its rules, one of the two")
    try:
        if isinstance(rules, dict) and game == casino_war.GAME:
            agreed = casino_war.TableRules.from_dict(rules).to_dict()
        elif isinstance(rules, dict):
            agreed = sota.SotaRules.from_dict(rules).to_dict()
        elif isinstance(preset, str):
            agreed = sota.SotaRules.from_preset(preset).to_dict()
        else:
            raise RecordsError(f"{where}: preset is a preset's name, not {preset!r}")
    except InvalidRules as exc:
        raise RecordsError(f"{where}: {exc.message}") from None
    if game == casino_war.GAME and set(agreed) != set(rules or ()):
        raise RecordsError(f"{where}: a casino_war bet names its rules, every table option")
    return {**record, "rules": agreed, "stakes": _sent_amounts(record, game, where)}


def _sent_amounts(record: Mapping[str, Any], game: str, where: str) -> dict[str, int] | None:
    """Return the amounts a bet record says the bet sent, named as its receipt's ``stakes``
    name them, or None for a record that holds none (kept before they were recorded).

    A Casino War bet sent without ``tie_bet`` has a tie bet of 0, as the table reads it.

    :raises RecordsError: if an amount is not a whole number, is the other game's, or a tie bet
        is given without its ante.
    """
    every_amount = [name for names in BET_AMOUNTS.values() for name in names]
    sent = {name: record[name] for name in every_amount if name in record}
    if not sent:
        return None
    amounts = BET_AMOUNTS[game]
    for name, value in sent.items():
        if name not in amounts:
            raise RecordsError(f"{where}: a {game} bet sends {' and '.join(amounts)}, not {name}")
        if type(value) is not int or value < 0:
            raise RecordsError(f"{where}: {name} is the amount sent, a whole number, not {value!r}")
    if amounts[0] not in sent:  # only a tie bet: a Casino War bet always sends its ante
        raise RecordsError(f"{where}: a casino_war bet that names its tie_bet names its bet too")
    return {name: sent.get(name, 0) for name in amounts}


def _check_action(record: object, where: str) -> int:
    """Return the round of an action record.

    :raises RecordsError: if it is not one of the two shapes.
    """
    if not isinstance(record, dict) or type(record.get("round_id")) is not int:
        raise RecordsError(f"{where} has no round_id (a whole number)")
    if not (_optional_int(record.get("seed_pair_id")) and _optional_int(record.get("nonce"))):
        raise RecordsError(f"{where}: seed_pair_id and nonce are whole numbers or null")
    game = record.get("game")
    if game == casino_war.GAME:
        if record.get("action") not in WAR_ACTIONS:
            raise RecordsError(f"{where}: a casino_war action is war or surrender")
    elif game == sota.GAME:
        move, cards = record.get("move"), record.get("cards")
        if not (type(move) is int and move >= 0):
            raise RecordsError(f"{where}: move is the move's index, a whole number")
        if not (isinstance(cards, list) and all(isinstance(c, str) for c in cards)):
            raise RecordsError(f"{where}: cards is a list of card codes")
    else:
        raise RecordsError(f"{where}: game is casino_war or sota, not {game!r}")
    return int(record["round_id"])


# --- the comparison ----------------------------------------------------------------------------


def _differing_fields(shown: Mapping[str, Any], kept: Mapping[str, Any]) -> str:
    names = sorted(
        name
        for name in set(shown) | set(kept)
        if json.dumps(shown.get(name), sort_keys=True) != json.dumps(kept.get(name), sort_keys=True)
    )
    return ", ".join(
        f"{name} is {_as_json(shown.get(name))} in the bundle, "
        f"{_as_json(kept.get(name))} as recorded"
        for name in names
    )


def _as_json(value: Any) -> str:
    """``value`` as JSON, its text as written where it can be (a lone surrogate, escaped)."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


def compare_commitment(
    row: Row, shown: Mapping[str, Any], records: Records, public_key_hex: str
) -> Row:
    """Compare the bundle's commitment document with the one recorded before play (a pair
    whose id is not an integer fails the ``pair`` check, and is recorded for no pair)."""
    pair = shown.get("seed_pair_id")
    kept = records.commitments.get(pair) if type(pair) is int else None
    if kept is None:
        return row
    kept_doc, kept_signature = kept
    compared = row._replace(skipped=row.skipped - {CHECK})
    if _same_document(shown, kept_doc):
        return compared
    signed_too = signature_checker(public_key_hex)(kept_doc, kept_signature)
    proof = (
        " The recorded one is signed by the same key: the service committed to two server "
        "seeds for this pair."
        if signed_too
        else ""
    )
    message = (
        f"seed pair {shown.get('seed_pair_id')}: the commitment differs from the one recorded "
        f"before play ({_differing_fields(shown, kept_doc)}): the pair was re-committed.{proof}"
    )
    return compared.with_findings([Finding(row.where, CHECK, FAIL, message)])


def compare_client_seed(row: Row, seed_pair_id: Any, dealt: str | None, records: Records) -> Row:
    """Compare the client seed the pair deals with (``dealt``: the reveal's, or before the
    reveal the receipts') with the client seeds the player recorded sending.

    The pair must deal with the seed sent to start it; and a pair no rotation names must not
    deal with a seed sent to start another pair: the casino then made it once the seed was
    known, instead of the pair whose commitment the player kept before sending it.
    """
    if dealt is None or not records.rotations:
        return row
    compared = row._replace(skipped=row.skipped - {CHECK})
    sent = records.rotations.get(seed_pair_id) if type(seed_pair_id) is int else None
    if sent is not None:
        if sent == dealt:
            return compared
        message = (
            f"seed pair {seed_pair_id} deals with the client seed "
            f"{json.dumps(dealt, ensure_ascii=False)}, but you sent "
            f"{json.dumps(sent, ensure_ascii=False)} to start it (recorded)"
        )
        return compared.with_findings([Finding(row.where, CHECK, FAIL, message)])
    started = [pair for pair, seed in records.rotations.items() if seed == dealt]
    if not started:
        return row
    other = max(started)
    kept = " (whose commitment you recorded before play)" if other in records.commitments else ""
    message = (
        f"seed pair {seed_pair_id} deals with the client seed you sent to start seed pair "
        f"{other}{kept}: a pair committed after your client seed was known"
    )
    return compared.with_findings([Finding(row.where, CHECK, FAIL, message)])


def _war_difference(receipt: Mapping[str, Any], kept: Sequence[Mapping[str, Any]]) -> list[str]:
    chosen = [record["action"] for record in kept]
    if list(receipt.get("actions") or []) == chosen[-1:]:
        return []
    shown = receipt.get("actions")
    return [
        f"the receipt's actions are {json.dumps(shown)}, but the player sent "
        f"{json.dumps(chosen[-1])} (recorded)"
    ]


def _sota_difference(receipt: Mapping[str, Any], kept: Sequence[Mapping[str, Any]]) -> list[str]:
    moves = receipt.get("actions")
    moves = moves if isinstance(moves, list) else []
    differences = []
    for record in kept:
        index, cards = record["move"], record["cards"]
        if index >= len(moves):
            differences.append(
                f"move {index} (cards {json.dumps(cards)}) was sent but the receipt holds only "
                f"{len(moves)} moves"
            )
        elif moves[index] != cards:
            differences.append(
                f"move {index} is {json.dumps(moves[index])} in the receipt, but the player sent "
                f"{json.dumps(cards)} (recorded)"
            )
    return differences


def _bet_difference(receipt: Mapping[str, Any], bet: Mapping[str, Any]) -> list[str]:
    """Name each rule the bet was placed under and each amount it sent that the receipt's
    ``rules`` and ``stakes`` do not hold."""
    compared = [("rules", bet["rules"], "bet under")]
    if bet["stakes"] is not None:
        compared.append(("stakes", bet["stakes"], "sent"))
    differences = []
    for field_name, recorded, what in compared:
        shown = receipt.get(field_name)
        shown = shown if isinstance(shown, dict) else {}
        differing = [
            f"{name} is {_as_json(shown[name]) if name in shown else 'absent'} in the receipt, "
            f"{_as_json(value)} as recorded"
            for name, value in sorted(recorded.items())
            if name not in shown or json.dumps(shown[name]) != json.dumps(value)
        ]
        if differing:
            differences.append(
                f"the receipt's {field_name} differ from those the player {what} (recorded): "
                + ", ".join(differing)
            )
    return differences


def compare_round(row: Row, receipt: Mapping[str, Any], records: Records) -> Row:
    """Compare a receipt with the bet, decisions and moves recorded for its round."""
    round_id = row.round_id if type(row.round_id) is int else None
    kept = records.actions.get(round_id, ()) if round_id is not None else ()
    bet = records.bets.get(round_id) if round_id is not None else None
    placed = records.of_round(round_id) if round_id is not None else ()
    if not placed:
        return row
    differences = []
    for name in ("seed_pair_id", "nonce"):
        # Every record of the round names its pair and nonce (or null): the bet's and the
        # decisions' alike.
        recorded = {record[name] for record in placed if record.get(name) is not None}
        # As JSON values: a receipt's ``true`` is not the nonce 1 recorded (``True == 1``).
        wrong = sorted(value for value in recorded if not same_json(value, receipt.get(name)))
        if wrong:
            differences.append(
                f"{name} is {receipt.get(name)!r} in the receipt, {wrong[0]!r} as recorded"
            )
    games = {record["game"] for record in placed}
    if games != {receipt.get("game")}:
        differences.append(
            f"the receipt is a {receipt.get('game')!r} round, recorded as "
            f"{', '.join(sorted(games))}"
        )
    else:
        if kept and receipt.get("game") == casino_war.GAME:
            differences += _war_difference(receipt, kept)
        elif kept:
            differences += _sota_difference(receipt, kept)
        if bet is not None:
            differences += _bet_difference(receipt, bet)
    compared = row._replace(skipped=row.skipped - {CHECK})
    return compared.with_findings(
        [
            Finding("round", CHECK, FAIL, message, row.index, row.round_id, row.nonce)
            for message in differences
        ]
    )


def missing_rounds(
    seed_pair_id: Any, present: set[Any], records: Records, revealed: bool
) -> list[Finding]:
    """Name the rounds of this pair the player bet or acted in but the bundle lacks (once
    revealed, every round of the pair is settled, so each must be there)."""
    if not revealed:
        return []
    missing = sorted(
        round_id
        for round_id in records.rounds_played()
        if round_id not in present
        and any(r.get("seed_pair_id") == seed_pair_id for r in records.of_round(round_id))
    )
    return [
        Finding(
            "bundle",
            CHECK,
            FAIL,
            f"round {round_id}: the player played it on seed pair {seed_pair_id} (recorded), but "
            "the bundle holds no receipt for it",
        )
        for round_id in missing
    ]


def unplaced_rounds(records: Records, held: Collection[Any]) -> list[int]:
    """Return the rounds the player bet or acted in that no record places and no bundle given
    holds.

    A record (a bet, a decision or a move) naming its seed pair places its round
    (:func:`missing_rounds` checks that pair's bundle); one with ``seed_pair_id: null`` is placed
    by its round id in whichever bundle holds it. One that none holds may be a round of a pair
    not given or still active, so it fails nothing, but it was compared with nothing and must be
    said (:func:`unplaced_notice`).

    :param held: the round ids of every bundle given.
    """
    return sorted(
        round_id
        for round_id in records.rounds_played()
        if round_id not in held
        and all(record.get("seed_pair_id") is None for record in records.of_round(round_id))
    )


def unplaced_notice(rounds: Sequence[int]) -> str:
    """Say which of :func:`unplaced_rounds` were compared with nothing, and what to do."""
    named = ", ".join(map(str, rounds[:UNPLACED_NAMED]))
    if len(rounds) > UNPLACED_NAMED:
        named += f" and {len(rounds) - UNPLACED_NAMED} more"
    one = len(rounds) == 1
    it, it_was = ("it", "it was") if one else ("them", "they were")
    return (
        f"round{'' if one else 's'} {named}: you played {it} (recorded with no seed pair), but "
        f"no bundle given holds {it}, so {it_was} compared with nothing. A revealed pair's "
        f"bundle must hold every round you played: verify the bundle of the pair {it_was} "
        "played on with these records, or record each round's seed_pair_id."
    )
