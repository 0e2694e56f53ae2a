"""Anchors: a signed document tied to its entry in the audit log, proved into a checkpoint.

An anchor is ``{"of", "entry", "leaf_index", "checkpoint_size", "proof"}``: ``of`` names the
document (:func:`commitment_of`, :func:`reveal_of`, :func:`bet_of`, :func:`settlement_of`,
:func:`decision_of`), ``entry`` is the audit entry recorded with it (all eight stored fields),
``leaf_index`` is ``seq - 1`` and ``proof`` the RFC 6962 inclusion proof of the entry's hash in
the checkpoint of ``checkpoint_size`` entries. The entry's key (action and subject) is stable:
it is known when the document is made, its sequence number only once the log has taken it.

What the entry must say about the document is written here once, for the service's tests, the
offline verifier and (the same rules in JavaScript) the fairness page; and what the whole log
must say about each key (:func:`key_problem`): a key is taken once, so a pair or a round logged
again by appended entries contradicts the log, though every entry before them is untouched; and
about the pairs' commitments (:func:`seed_reused`): a server seed serves one pair, and a pair
reveals the server seed it committed to (:func:`other_seed_revealed`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timedelta
from itertools import groupby
from typing import Any
from typing import Final
from typing import TypeGuard

from . import merkle
from .audit_chain import entry_hash
from .audit_chain import entry_shape_problem
from .fairness import KEY_CHANGED
from .fairness import KEY_CREATED
from .fairness import KEY_IN_USE
from .fairness import PLAYER_KEY_REGISTERED
from .fairness import canonical_json
from .fairness import format_time
from .fairness import is_hex64
from .fairness import time_or_none
from .marks import N_
from .marks import Nn_
from .marks import Problem

COMMITMENT_ACTION: Final = "seed_pair.created"
CLIENT_SEED_ACTION: Final = "seed_pair.client_seed_set"
#: The rotation that revealed a pair: its entry names the server seed and the rounds played.
REVEAL_ACTION: Final = "seed_pair.rotated"
BET_ACTION: Final = "round.bet"
SETTLEMENT_ACTION: Final = "round.settled"
#: The entry of each player's action, by game: a Casino War decision, a Sota move.
DECISION_ACTIONS: Final = {"casino_war": "round.decision", "sota": "round.move"}
#: The field of a decision entry's data that holds the action as the receipt lists it.
DECISION_FIELDS: Final = {"round.decision": "choice", "round.move": "cards"}
#: What a settlement entry's data must name about its receipt.
SETTLEMENT_FIELDS: Final = ("receipt", "game", "payout")
#: What a bet entry's data must name about the round's receipt: where its cards came from.
BET_FIELDS: Final = ("game", "seed_pair_id", "nonce")
#: The scheme's bound (docs/fairness.md, "The bound"), a constant of the scheme and no setting:
#: an honest service has a settled round's bet and settlement entries in a signed checkpoint
#: within this long after the receipt's ``settled_at``, and a pair's commitment (reveal) entry
#: within this long after its ``created_at`` (``revealed_at``), and a player's key registration
#: within this long after its entry's ``time``. A document still pending while a
#: checkpoint signed by the trusted key is dated past it was left out of the log.
ANCHOR_BOUND: Final = timedelta(hours=1)
#: :data:`ANCHOR_BOUND` as the verifiers name it.
ANCHOR_BOUND_TEXT: Final = "1 hour"
#: How far before the time the service's clock had reached when the offline monitor (a witness
#: whose clock its operator keeps right) was last served the checkpoint it keeps as the latest
#: (:attr:`Served.least`) a checkpoint over more entries may be dated: the service dates one when
#: it signs it and serves it as the latest once that commits (seconds). Dated further back, it
#: was signed by then and withheld, or it is dated back to keep a round left out of the log
#: within its bound.
SERVED_SLACK: Final = timedelta(minutes=10)
#: :data:`SERVED_SLACK` as the witnesses name it.
SERVED_SLACK_TEXT: Final = "10 minutes"
#: Of each hour that passes on a witness's clock between two moments it is served the latest
#: checkpoint, how much it does not hold the service's clock to have gone on by (see
#: :func:`served_again`): a witness's clock set forward by up to :data:`SERVED_SLACK` adds no
#: alarm at all, and by more only for a while, since the witness forgets this much an hour of
#: what it counted; a casino whose new checkpoints' dates fall behind by more than this an hour
#: (a round left out of the log kept "not yet anchored" for good) is still refused.
SERVED_DRIFT: Final = timedelta(minutes=10)
#: :data:`SERVED_DRIFT` as the witnesses name it.
SERVED_DRIFT_TEXT: Final = "10 minutes an hour"


@dataclass(frozen=True, slots=True)
class Served:
    """What the offline monitor keeps of when it was last served the latest checkpoint: over
    ``size`` entries, at ``at`` by the witness's own clock, when the service's clock had reached
    ``least`` at least (docs/fairness.md, "Witnesses"). The players' page keeps none: a
    browser's clock is its owner's to set forward, and no clock of its own tells that apart from
    time passed.

    Only time that passes on the witness's clock counts, never what it reads, so a witness's
    clock set fast or slow (by any amount) is no matter: ``least`` is a date the service
    signed, moved on by the time counted between two moments it was served the latest."""

    size: int
    at: datetime
    least: datetime

    def as_json(self) -> dict[str, Any]:
        return {"size": self.size, "at": format_time(self.at), "least": format_time(self.least)}


def served_of(value: object) -> Served | None:
    """The :class:`Served` written as ``value`` (:meth:`Served.as_json`), or ``None``."""
    if not isinstance(value, Mapping):
        return None
    size, at, least = (
        value.get("size"),
        time_or_none(value.get("at")),
        time_or_none(value.get("least")),
    )
    if isinstance(size, bool) or not isinstance(size, int) or at is None or least is None:
        return None
    return Served(size, at, least)


def served_again(before: Served | None, size: int, dated: datetime, at: datetime) -> Served:
    """What a witness keeps once it is served, as the latest, the checkpoint over ``size`` entries
    (the one it keeps, or one it keeps from now on) dated ``dated``, at ``at`` by its clock.

    The service's clock had reached ``dated`` by then (it signed it), and had gone on since
    ``before`` by at least the time passed on the witness's clock, less :data:`SERVED_DRIFT` an
    hour, but never past what the witness's clock reads now: a witness's clock slow when it was
    served ``before`` and set right since adds nothing. Time passed backwards (a clock set back,
    or a page served earlier than the one before it taking its turn later) moves it back."""
    if before is None:
        return Served(size, at, dated)
    passed = at - before.at
    if passed > timedelta(0):
        passed -= passed * (SERVED_DRIFT / timedelta(hours=1))
    return Served(size, at, max(dated, min(before.least + passed, at)))


def served_backdated(served: Served | None, size: int, dated: datetime) -> bool:
    """Whether a checkpoint over ``size`` entries dated ``dated`` is dated more than
    :data:`SERVED_SLACK` before the service's clock had reached when the witness was last served
    a smaller one as the latest: signed by then, it was withheld, or it is dated back."""
    return served is not None and size > served.size and dated < served.least - SERVED_SLACK


@dataclass(frozen=True, slots=True)
class DatedBy:
    """The signed time the bound of a pending document runs from, and the verifiers' words."""

    #: The document's field that holds the time: ``settled_at``.
    name: str
    #: The time as the messages say it: ``settled at``.
    said: str
    #: The document that writes the time: ``the receipt``.
    document: str
    #: What a checkpoint past the bound shows left out of the log: ``the round``.
    left_out: str
    #: What a time dated ahead would keep left out of the log within the bound: ``a round``.
    kept: str
    #: Whether what is pending is its audit entry itself, which carries its place in the log
    #: (``seq``): a key registration; a round, the commitment and the reveal are documents.
    placed: bool = False


#: What the bound runs from, by what is pending: a round (its receipt's settlement), or the
#: pair's commitment or reveal, after which the log may take nothing of the pair (a pair never
#: played; a reveal, always), so that the bound alone shows either left out of the log; or a
#: player's key registration (a first key, or one replacing the key in use), dated by its audit
#: entry's ``time``: kept pending for good, a key registered before rounds the casino rewrote
#: unsigned would never be proved in the log, nor shown left out of it.
DATED_BY: Final = {
    "round": DatedBy("settled_at", "settled at", "the receipt", "the round", "a round"),
    "commitment": DatedBy("created_at", "created at", "the commitment", "it", "it"),
    "reveal": DatedBy("revealed_at", "revealed at", "the reveal", "it", "it"),
    "registration": DatedBy("time", "registered at", "the registration", "it", "it", placed=True),
}


def receipt_hash(document: Mapping[str, Any], canonical: bytes | None = None) -> str:
    """Return ``sha256(canonical_json(document))`` in hex: what a settlement entry names
    (``canonical``: the document's canonical bytes, where the caller has them already)."""
    return hashlib.sha256(canonical_json(document) if canonical is None else canonical).hexdigest()


def pair_subject(seed_pair_id: object) -> str:
    return f"seed_pair:{seed_pair_id}"


def round_subject(round_id: object) -> str:
    return f"round:{round_id}"


def commitment_of(seed_pair_id: int) -> dict[str, Any]:
    return {"kind": "commitment", "seed_pair_id": seed_pair_id}


def reveal_of(seed_pair_id: int) -> dict[str, Any]:
    return {"kind": "reveal", "seed_pair_id": seed_pair_id}


def bet_of(round_id: int) -> dict[str, Any]:
    return {"kind": "bet", "round_id": round_id}


def settlement_of(round_id: int) -> dict[str, Any]:
    return {"kind": "settlement", "round_id": round_id}


def decision_of(round_id: int, index: int) -> dict[str, Any]:
    return {"kind": "decision", "round_id": round_id, "index": index}


def key_of(of: Mapping[str, Any], game: str | None = None) -> tuple[str, str, int]:
    """Return the stable key of an anchored document's entry: action, subject, occurrence
    (the entry's place among the entries of that action and subject, 0 first)."""
    kind = of["kind"]
    if kind == "commitment":
        return COMMITMENT_ACTION, pair_subject(of["seed_pair_id"]), 0
    if kind == "reveal":
        return REVEAL_ACTION, pair_subject(of["seed_pair_id"]), 0
    if kind == "bet":
        return BET_ACTION, round_subject(of["round_id"]), 0
    if kind == "settlement":
        return SETTLEMENT_ACTION, round_subject(of["round_id"]), 0
    if kind == "decision" and game in DECISION_ACTIONS:
        return DECISION_ACTIONS[game], round_subject(of["round_id"]), of["index"]
    raise ValueError(f"no entry key for {dict(of)!r}")


# --- the whole log: each key taken once ----------------------------------------------------

#: The actions the service writes once per subject, and what a second one would mean (the
#: ``meaning`` of :data:`TAKEN_TWICE`). A pair is created (committed), given its client seed and
#: revealed (rotated) once; a round is bet once, decided at most once (a Casino War tie) and
#: settled once, after its decision or moves.
ONCE: Final = {
    COMMITMENT_ACTION: N_("the pair was committed twice"),
    CLIENT_SEED_ACTION: N_("the pair's client seed was set twice"),
    REVEAL_ACTION: N_("the pair was revealed twice"),
    BET_ACTION: N_("the round was bet twice"),
    DECISION_ACTIONS["casino_war"]: N_("the round was decided twice"),
    SETTLEMENT_ACTION: N_("the round was settled twice"),
}
#: The player's actions in a round, all logged before its settlement: a Sota game's moves
#: (``round.move``) are the only keyed entries that repeat under one subject.
_ROUND_ACTIONS: Final = frozenset(DECISION_ACTIONS.values())
#: What a round's entries after its bet are: the player's actions and its settlement.
_PLAYED: Final = frozenset((*_ROUND_ACTIONS, SETTLEMENT_ACTION))
#: Every action :func:`key_problem` reads; the entries of any other action never contradict it.
KEYED_ACTIONS: Final = frozenset((*ONCE, *_ROUND_ACTIONS))

# How an entry contradicts the entries the log took before it (:func:`first_key_found`), as
# message ids: a check keeps the id and its params (a :class:`Problem`), its English is the
# report's ``reason``, and the console words it in the operator's language. Each names the
# entry by its ``seq``, its ``action`` and ``subject`` as the log writes them.
ACTED_AFTER_SETTLEMENT: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s after its settlement (entry %(settled)s): a "
    "settled round takes no more actions, a rewrite"
)
TAKEN_TWICE: Final = N_(
    "entry %(seq)s: a second %(action)s of %(subject)s (the first is entry %(first)s): "
    "%(meaning)s, a rewrite"
)
BET_AFTER_REVEAL: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s on %(pair)s after its reveal (entry %(revealed)s): "
    "a revealed pair takes no more rounds, a rewrite"
)
BET_ON_UNCOMMITTED: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s on %(pair)s, which the log never committed: a "
    "round is bet on a committed pair, a rewrite"
)
BET_UNSIGNED: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s is not signed, though its player registered a key "
    "(entry %(registered)s): the service takes no unsigned bet from a player with a key, a "
    "rewrite"
)
NONCE_OUT_OF_ORDER: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s takes nonce %(nonce)s of %(pair)s, whose next "
    "nonce is %(next)s: a pair's nonces are taken in order, each once, a rewrite"
)
ACTION_UNSIGNED: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s is not signed, though its player registered a key "
    "(entry %(registered)s): the service takes no unsigned action from a player with a key, a "
    "rewrite"
)
PLAYED_UNBET: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s, which the log never bet: a round is played only "
    "after its bet, a rewrite"
)
REVEAL_OF_UNCOMMITTED: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s, which the log never committed: a pair is "
    "revealed only after its commitment, a rewrite"
)
REVEAL_WHILE_OPEN: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s while %(round)s, bet on it, is not settled: a pair "
    "is revealed only once its rounds are settled (a round decided after its cards are known), "
    "a rewrite"
)
#: A reveal whose ``rounds`` (as JSON has them) are not the ``num`` rounds bet on its pair.
REVEAL_HIDES_ROUNDS: Final = Nn_(
    "entry %(seq)s: %(action)s of %(subject)s says rounds %(rounds)s, but the log holds %(num)s "
    "round bet on the pair (nonces 0..%(last)s): a reveal hiding rounds bet on it, a rewrite",
    "entry %(seq)s: %(action)s of %(subject)s says rounds %(rounds)s, but the log holds %(num)s "
    "rounds bet on the pair (nonces 0..%(last)s): a reveal hiding rounds bet on it, a rewrite",
)
REVEAL_NAMES_ROUNDS: Final = Nn_(
    "entry %(seq)s: %(action)s of %(subject)s says rounds %(rounds)s, but the log holds %(num)s "
    "round bet on the pair (nonces 0..%(last)s): a reveal naming rounds never bet, a rewrite",
    "entry %(seq)s: %(action)s of %(subject)s says rounds %(rounds)s, but the log holds %(num)s "
    "rounds bet on the pair (nonces 0..%(last)s): a reveal naming rounds never bet, a rewrite",
)
REVEAL_NAMES_UNBET: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s says rounds %(rounds)s, but the log holds no bet: "
    "a reveal naming rounds never bet, a rewrite"
)
KEY_ID_TWICE: Final = N_(
    "entry %(seq)s: a second %(action)s of key %(key_id)s (the first is entry %(first)s): a key "
    "id names one key, a rewrite"
)
#: A service key named as the key in use that is not; ``rule`` is :data:`ONE_CHAIN_RULE`.
NOT_THE_KEY_IN_USE: Final = N_(
    "entry %(seq)s: %(action)s names key %(named)s as the key in use, but the key in use is "
    "%(in_use)s (entry %(since)s): %(rule)s"
)
#: A service key taken into use again; ``rule`` is :data:`TAKEN_ONCE_RULE`.
KEY_IN_USE_BEFORE: Final = N_(
    "entry %(seq)s: %(action)s of key %(key)s, which was in use before (entry %(before)s): %(rule)s"
)


def key_problem(entry: Mapping[str, Any], earlier: Mapping[str, int]) -> Problem | None:
    """Say how a logged entry contradicts the keys the log took before it, or ``None``.

    Appending a second settlement, decision or commitment rewrites a round or a pair while
    every entry logged before stays as it was (and every checkpoint over them holds): only
    the key already taken shows it.

    :param earlier: the seq of the first entry of each action of :data:`KEYED_ACTIONS` that the
        log holds under the entry's subject before the entry.
    """
    action = entry.get("action")
    named = _named(entry)
    settled = earlier.get(SETTLEMENT_ACTION)
    if action in _ROUND_ACTIONS and settled is not None:
        return Problem(ACTED_AFTER_SETTLEMENT, {**named, "settled": settled})
    first = earlier.get(action) if isinstance(action, str) else None
    if action in ONCE and first is not None:
        return Problem(TAKEN_TWICE, {**named, "first": first, "meaning": Problem(ONCE[action])})
    return None


def _named(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The params that name an entry in a problem: its seq, action and subject."""
    return {"seq": entry.get("seq"), "action": entry.get("action"), "subject": entry.get("subject")}


def keyed_subjects(entry: Mapping[str, Any]) -> list[str]:
    """The subjects whose earlier keys :func:`first_key_problem` reads for ``entry``: its own,
    and for a bet the pair it names (a round bet after its pair's reveal)."""
    action, subject = entry.get("action"), entry.get("subject")
    if action not in KEYED_ACTIONS or not isinstance(subject, str):
        return []
    if action == BET_ACTION:
        return [subject, pair_subject(_data(entry).get("seed_pair_id"))]
    return [subject]


@dataclass(slots=True)
class PairsInPlay:
    """The pairs committed and not yet revealed, as the entries read so far leave them: what a
    check reading the log a chunk at a time carries from one chunk to the next.

    Only pairs committed in the entries read are known. A check of the whole log (``from_start``)
    knows every pair, so a bet on a pair it does not know, a reveal of one, or a round played
    that it never saw bet is a rewrite; a range starts mid-pair, and cannot tell. One or two
    pairs per player, and the rounds bet on them and not yet settled: at most one per player.
    """

    #: The rounds bet so far on each pair (by subject): its next nonce.
    bets: dict[str, int] = field(default_factory=dict)
    #: Each round bet on one of those pairs and not yet settled (by subject): its pair's subject.
    unsettled: dict[str, str] = field(default_factory=dict)
    #: How many of ``unsettled`` each pair holds (kept with it, so a reveal looks up one count).
    open_rounds: dict[str, int] = field(init=False, default_factory=dict)
    #: The entries read begin at the log's first: nothing was logged before them.
    from_start: bool = True
    #: Whose each of those pairs is: the actor of its commitment (``user:N``).
    owners: dict[str, str] = field(default_factory=dict)
    #: The players who registered a key of their own (``user:N``): the seq of their first.
    signers: dict[str, int] = field(default_factory=dict)
    #: Each key id registered: the seq of its registration (an id names one key).
    key_ids: dict[str, int] = field(default_factory=dict)
    #: Each key the service signed with, in the order the log took them into use: the seq of
    #: the entry that named it first. The last is the key in use.
    service_keys: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for pair in self.unsettled.values():
            self.open_rounds[pair] = self.open_rounds.get(pair, 0) + 1

    def copy(self) -> PairsInPlay:
        return PairsInPlay(
            dict(self.bets),
            dict(self.unsettled),
            from_start=self.from_start,
            owners=dict(self.owners),
            signers=dict(self.signers),
            key_ids=dict(self.key_ids),
            service_keys=dict(self.service_keys),
        )

    def to_json(self) -> dict[str, dict[str, Any]]:
        return {
            "bets": self.bets,
            "unsettled": self.unsettled,
            "owners": self.owners,
            "signers": self.signers,
            "key_ids": self.key_ids,
            "service_keys": self.service_keys,
        }

    @classmethod
    def from_json(cls, stored: Any) -> PairsInPlay:
        """Read :meth:`to_json` back; raises ``KeyError``, ``TypeError``, ``ValueError`` or
        ``AttributeError`` on anything else."""
        return cls(
            {str(pair): int(bet) for pair, bet in stored["bets"].items()},
            {str(round_): str(pair) for round_, pair in stored["unsettled"].items()},
            owners={str(pair): str(user) for pair, user in stored["owners"].items()},
            signers={str(user): int(seq) for user, seq in stored["signers"].items()},
            key_ids={str(key): int(seq) for key, seq in stored["key_ids"].items()},
            service_keys={str(key): int(seq) for key, seq in stored["service_keys"].items()},
        )


def _rounds_problem(
    entry: Mapping[str, Any], firsts: Mapping[str, Mapping[str, int]], pairs: PairsInPlay
) -> Problem | None:
    """Say how a pair's commitment, bet or reveal contradicts the rounds the log took on the
    pair before it, or ``None``; bring ``pairs`` up to date through the entry.

    A pair's nonces are taken in order under the player's lock, each with its bet logged in
    the same transaction, and a pair with a round open is not revealed: so its bets are
    logged with nonces 0, 1, 2, … and settled before its reveal, which counts them all. A
    reveal logged with fewer rounds would hide the last ones from the pair's bundle, with
    nothing else to contradict; one logged while a round is open would let the round be
    decided (a war or a surrender, a Sota move) with its cards known.
    """
    action, subject = entry["action"], entry["subject"]
    data, named = _data(entry), _named(entry)
    if action == COMMITMENT_ACTION:
        pairs.bets[subject] = 0
        pairs.owners[subject] = str(entry.get("actor"))
    elif action == BET_ACTION:
        pair, nonce = pair_subject(data.get("seed_pair_id")), data.get("nonce")
        revealed = firsts.get(pair, {}).get(REVEAL_ACTION)
        if revealed is not None:
            return Problem(BET_AFTER_REVEAL, {**named, "pair": pair, "revealed": revealed})
        if pair not in pairs.bets and pairs.from_start:
            return Problem(BET_ON_UNCOMMITTED, {**named, "pair": pair})
        if "signed" not in data and (registered := pairs.signers.get(pairs.owners.get(pair, ""))):
            # A bet in the player's name, spending a nonce, hidden from the bundle with the
            # key's registration, shows here.
            return Problem(BET_UNSIGNED, {**named, "registered": registered})
        if pair in pairs.bets:
            if not (_is_whole(nonce) and nonce == pairs.bets[pair]):
                taken = {"nonce": repr(nonce), "pair": pair, "next": pairs.bets[pair]}
                return Problem(NONCE_OUT_OF_ORDER, {**named, **taken})
            pairs.bets[pair] += 1
            pairs.unsettled[subject] = pair
            pairs.open_rounds[pair] = pairs.open_rounds.get(pair, 0) + 1
    elif (
        action in _ROUND_ACTIONS
        and "signed" not in data
        and (
            registered := pairs.signers.get(pairs.owners.get(pairs.unsettled.get(subject, ""), ""))
        )
    ):
        # A decision hidden from the bundle with the key's registration shows here.
        return Problem(ACTION_UNSIGNED, {**named, "registered": registered})
    elif action in _PLAYED and subject not in pairs.unsettled and pairs.from_start:
        # A round logged again under a new id, with its pair's nonce: no key is taken twice.
        return Problem(PLAYED_UNBET, named)
    elif action == SETTLEMENT_ACTION:
        if (settled_pair := pairs.unsettled.pop(subject, None)) is not None:
            if still_open := pairs.open_rounds[settled_pair] - 1:
                pairs.open_rounds[settled_pair] = still_open
            else:
                del pairs.open_rounds[settled_pair]  # as counting ``unsettled`` afresh gives
    elif action == REVEAL_ACTION and subject not in pairs.bets and pairs.from_start:
        return Problem(REVEAL_OF_UNCOMMITTED, named)
    elif action == REVEAL_ACTION and subject in pairs.bets:
        if pairs.open_rounds.pop(subject, 0):
            open_round = next(r for r, p in pairs.unsettled.items() if p == subject)
            return Problem(REVEAL_WHILE_OPEN, {**named, "round": open_round})
        bet, rounds = pairs.bets.pop(subject), data.get("rounds")
        pairs.owners.pop(subject, None)
        if not (_is_whole(rounds) and rounds == bet):
            said = {**named, "rounds": repr(rounds)}
            if not bet:
                return Problem(REVEAL_NAMES_UNBET, said)
            hides = _is_whole(rounds) and rounds < bet
            message = REVEAL_HIDES_ROUNDS if hides else REVEAL_NAMES_ROUNDS
            return Problem.of(message, {**said, "num": bet, "last": bet - 1})
    return None


def _registration_problem(entry: Mapping[str, Any], pairs: PairsInPlay) -> Problem | None:
    """Say how a player's key registration contradicts the registrations before it, or
    ``None``; bring ``pairs`` up to date through it.

    A verifier names a signed action's key by its id, which the player compares with its own:
    an id registered again, for another key, would pass a forger's key off as the player's.
    """
    seq, key_id = entry["seq"], str(_data(entry).get("key_id"))
    if (first := pairs.key_ids.get(key_id)) is not None:
        said = {"seq": seq, "action": PLAYER_KEY_REGISTERED, "key_id": key_id, "first": first}
        return Problem(KEY_ID_TWICE, said)
    pairs.key_ids[key_id] = seq
    pairs.signers.setdefault(entry["subject"], seq)
    return None


#: The actions that name the service's key (:func:`_service_key_problem`).
SERVICE_KEY_ACTIONS: Final = frozenset((KEY_CREATED, KEY_CHANGED, KEY_IN_USE))
#: Why a key change from a key no longer in use is a rewrite: the whole log's rule, which the
#: bundle verifiers hold a bundle's key changes to as well (``verify.trust``).
ONE_CHAIN_RULE: Final = N_(
    "the service's keys change in one chain, each change signed by the key in use, a rewrite"
)
#: Why a key change into a key in use before is a rewrite (the same rule, and the same readers).
TAKEN_ONCE_RULE: Final = N_("a key is taken into use once, a rewrite")


def _short(key: object) -> str:
    return f"{key[:16]}…" if isinstance(key, str) else repr(key)


def _service_key_problem(entry: Mapping[str, Any], pairs: PairsInPlay) -> Problem | None:
    """Say how an entry naming the service's key contradicts the keys the log named before it,
    or ``None``; bring ``pairs`` up to date through it.

    The service's keys form one chain: each key change is signed by the key in use and names a
    key never used before (``flask keys rotate`` makes a new one), a key registered on its first
    signature is new too, and a key takes over the checkpoints only while in use. A verifier
    trusting the newest key takes as its predecessor the old key of any key change into it that
    its own checkpoint covers: a second change into the key in use, from a key of whoever holds
    the database and that key, would otherwise pass that key off as the one it succeeded.
    """
    seq, action, data = entry["seq"], entry["action"], _data(entry)
    change = data.get("key_change")
    document = change.get("document") if isinstance(change, Mapping) else None
    named = document if isinstance(document, Mapping) else {}
    if action == KEY_CHANGED:
        said_in_use, new = named.get("old_public_key_hex"), named.get("new_public_key_hex")
    else:  # key.created names a key not in use before it; key.in_use, the key in use
        new = data.get("public_key_hex")
        said_in_use = new if action == KEY_IN_USE else None
    in_use = next(reversed(pairs.service_keys), None)
    if in_use is None and isinstance(said_in_use, str):  # the first word of the entries read
        pairs.service_keys[said_in_use] = seq
        in_use = said_in_use
    if in_use is not None and action != KEY_CREATED and said_in_use != in_use:
        said = {"seq": seq, "action": action, "named": _short(said_in_use)}
        in_use_since = {"in_use": _short(in_use), "since": pairs.service_keys[in_use]}
        rule = Problem(ONE_CHAIN_RULE)
        return Problem(NOT_THE_KEY_IN_USE, {**said, **in_use_since, "rule": rule})
    if action == KEY_IN_USE:
        return None
    if (before := pairs.service_keys.get(new) if isinstance(new, str) else None) is not None:
        said = {"seq": seq, "action": action, "key": _short(new), "before": before}
        return Problem(KEY_IN_USE_BEFORE, {**said, "rule": Problem(TAKEN_ONCE_RULE)})
    if isinstance(new, str):
        pairs.service_keys[new] = seq
    return None


def first_key_problem(
    entries: Iterable[Mapping[str, Any]],
    known: Iterable[tuple[str, str, int]] = (),
    pairs: PairsInPlay | None = None,
) -> tuple[int, str] | None:
    """Return :func:`first_key_found`, its problem said in English (the offline verifier's)."""
    found = first_key_found(entries, known, pairs)
    return None if found is None else (found[0], found[1].text())


def first_key_found(
    entries: Iterable[Mapping[str, Any]],
    known: Iterable[tuple[str, str, int]] = (),
    pairs: PairsInPlay | None = None,
) -> tuple[int, Problem] | None:
    """Return the seq of the first entry that takes a key the log took before it
    (:func:`key_problem`, :func:`_registration_problem`, :func:`_service_key_problem`), or
    that contradicts the rounds its pair took before it (:func:`_rounds_problem`), and why;
    ``None`` if none does.

    :param entries: well-formed entries in log order (their chain already checked).
    :param known: ``(subject, action, seq)`` of entries logged before the first of ``entries``
        under their :func:`keyed_subjects` (the first of each action is what counts): what a
        check that reads the log a chunk at a time looks up for the chunk's subjects.
    :param pairs: the pairs in play as the entries before left them; brought up to date
        through ``entries``. A check that reads a chunk at a time carries it from one chunk to
        the next.
    """
    pairs = PairsInPlay() if pairs is None else pairs
    firsts: dict[str, dict[str, int]] = {}
    for subject, action, seq in known:
        taken = firsts.setdefault(subject, {})
        taken[action] = min(seq, taken.get(action, seq))
    for entry in entries:
        keyed, under = entry.get("action"), entry.get("subject")
        if keyed == PLAYER_KEY_REGISTERED and isinstance(under, str):
            if problem := _registration_problem(entry, pairs):
                return entry["seq"], problem
        if keyed in SERVICE_KEY_ACTIONS and (problem := _service_key_problem(entry, pairs)):
            return entry["seq"], problem
        if keyed not in KEYED_ACTIONS or not isinstance(under, str):
            continue
        taken = firsts.setdefault(under, {})
        if problem := key_problem(entry, taken) or _rounds_problem(entry, firsts, pairs):
            return entry["seq"], problem
        taken.setdefault(keyed, entry["seq"])
    return None


# --- one server seed a pair ------------------------------------------------------------------

#: What the checks say of a pair committed to a server seed another pair is committed to.
SEED_REUSED: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s commits to the server seed of %(other)s "
    "(commitment %(commitment)s): a server seed serves one pair, and revealed for either it "
    "tells every shuffle of the other in advance"
)
#: By commitment, the pairs committed to it: ``(the pair's subject, the seq of its first
#: commitment entry)``, the seq ``None`` where the log holds none (a pair only a database holds).
Committed = dict[str, list[tuple[str, int | None]]]


def commitment_in(entry: Mapping[str, Any]) -> str | None:
    """The commitment a pair's commitment entry commits to, or ``None`` (any other entry)."""
    said = _data(entry).get("commitment")
    return said if entry.get("action") == COMMITMENT_ACTION and isinstance(said, str) else None


def committed_in(entries: Iterable[Mapping[str, Any]]) -> Committed:
    """The pairs ``entries`` commit to each commitment, each with its first commitment entry:
    what a check holding the log alone (the offline check of an export) holds the entries to,
    one item a pair."""
    committed: Committed = {}
    for entry in entries:
        commitment, subject = commitment_in(entry), entry.get("subject")
        if commitment is not None and isinstance(subject, str):
            pairs = committed.setdefault(commitment, [])
            if all(pair != subject for pair, _ in pairs):
                pairs.append((subject, entry["seq"]))
    return committed


def seed_reused(
    entries: Iterable[Mapping[str, Any]], committed: Committed
) -> tuple[int, Problem] | None:
    """Return the seq of the first of ``entries`` that commits a pair to a server seed another
    pair is committed to, and why, or ``None``.

    The entry that reuses the seed is the later of the two pairs' commitment entries (so a
    check that reads only the new ones names the entry a check of the whole log names); where
    the log holds no commitment entry of the other pair (one a database holds, never logged),
    the one it holds.

    :param committed: the pairs committed to each commitment of ``entries``: the service's
        checks look them up in the database (its unique index on the pairs' commitments), the
        offline check of an export takes them from the entries (:func:`committed_in`).
    """
    for entry in entries:
        commitment = commitment_in(entry)
        for other, logged_at in committed.get(commitment or "", ()):
            if other != entry.get("subject") and (logged_at is None or logged_at < entry["seq"]):
                reused = {"other": other, "commitment": _short(commitment)}
                return entry["seq"], Problem(SEED_REUSED, _named(entry) | reused)
    return None


# --- a pair reveals the server seed it committed to -------------------------------------------

#: What the checks say of a reveal whose server seed is not the one its pair's commitment is to.
OTHER_SEED_REVEALED: Final = N_(
    "entry %(seq)s: %(action)s of %(subject)s reveals a server seed hashing to %(revealed)s, but "
    "the pair's commitment (entry %(committed)s) is %(commitment)s: a pair reveals the server "
    "seed it committed to, a rewrite"
)
#: By pair subject, its first commitment entry: ``(its seq, the commitment it logged)``.
Commitments = dict[str, tuple[int, str]]


def seed_commitment(server_seed: object) -> str:
    """The commitment to a server seed as a log entry or a pair's row writes it: the SHA-256 of
    its bytes, 64 hex digits. Anything else is hashed as written (as text): it is not the seed
    committed to either way, and the checks go on to say so."""
    hexed = is_hex64(server_seed)
    # A lone surrogate (a JSON escape) has no UTF-8: its text is hashed as Python holds it.
    text = str(server_seed)
    written = bytes.fromhex(text) if hexed else text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(written).hexdigest()


def commitments_in(entries: Iterable[Mapping[str, Any]]) -> Commitments:
    """Each pair ``entries`` commit, with its first commitment entry: what a reveal among them
    is held to (:func:`other_seed_revealed`), one item a pair."""
    commitments: Commitments = {}
    for entry in entries:
        commitment, subject = commitment_in(entry), entry.get("subject")
        if commitment is not None and isinstance(subject, str):
            commitments.setdefault(subject, (entry["seq"], commitment))
    return commitments


def other_seed_revealed(
    entries: Iterable[Mapping[str, Any]], commitments: Mapping[str, tuple[int, str]]
) -> tuple[int, Problem] | None:
    """Return the seq of the first of ``entries`` that reveals a pair's server seed not hashing
    to the commitment the pair's commitment entry logged before it, and why, or ``None``.

    The player's bundle holds the pair's own documents to each other; in the log, all an auditor
    is given, a reveal of another seed than the one committed to is shown only by the two
    entries, compared. A reveal whose pair's commitment ``commitments`` do not hold is not
    compared: a check of the whole log names the reveal of a pair it never committed
    (:data:`REVEAL_OF_UNCOMMITTED`), the export of a range cannot tell it from a pair committed
    before the range.

    :param commitments: the first commitment entry of each pair ``entries`` reveal: the
        service's checks look it up in the database (the index on ``subject``), the offline
        check of an export takes it from the entries (:func:`commitments_in`).
    """
    for entry in entries:
        if entry.get("action") != REVEAL_ACTION:
            continue
        committed = commitments.get(str(entry.get("subject")))
        if committed is None or committed[0] >= entry["seq"]:
            continue
        logged_at, commitment = committed
        revealed = seed_commitment(_data(entry).get("server_seed"))
        if revealed != commitment:
            said = {"revealed": _short(revealed), "committed": logged_at}
            return entry["seq"], Problem(
                OTHER_SEED_REVEALED, _named(entry) | said | {"commitment": _short(commitment)}
            )
    return None


def first_found(*found: tuple[int, Problem] | None) -> tuple[int, Problem] | None:
    """The first bad entry of what each rule found (``None``: nothing), and why: the one at the
    lowest seq, and at one seq the rule given first (:func:`first_key_found` before
    :func:`seed_reused`: a pair committed again to another pair's seed is committed twice;
    before :func:`other_seed_revealed`: a pair revealed twice is named so)."""
    return min((f for f in found if f is not None), key=lambda f: f[0], default=None)


# --- checking one anchor ----------------------------------------------------------------------


def _is_whole(value: object) -> TypeGuard[int]:
    return type(value) is int and value >= 0


def _data(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    data = entry.get("data")
    return data if isinstance(data, Mapping) else {}


def proof_problem(anchor: object, checkpoint: Mapping[str, Any]) -> str | None:
    """Say why an anchor does not prove its entry into a checkpoint document, or ``None``.

    The entry must be an audit entry as the log's own check has it (:func:`entry_shape_problem`:
    ``seq`` an integer, not ``true``, which Python and JavaScript take for 1), its hash the hash
    of its fields and link (so the entry shown is the entry logged), its leaf index its
    ``seq - 1``, and the inclusion proof must lead from ``leaf_hash(entry hash)`` to the
    checkpoint's root. The checkpoint's signature is the caller's to check.
    """
    if not isinstance(anchor, Mapping):
        return "the anchor is not an object"
    entry, index, proof = anchor.get("entry"), anchor.get("leaf_index"), anchor.get("proof")
    # A casino holding the key signs a checkpoint over any tree: an entry the whole log's check
    # refuses must not prove a document here, where no one reads the rest of the log.
    shape = entry_shape_problem(entry)
    if shape is not None:
        return f"the anchor's entry is not a whole audit entry: it {shape.text()}"
    assert isinstance(entry, Mapping)  # entry_shape_problem says it is an audit entry
    if not isinstance(proof, list) or not all(is_hex64(node) for node in proof):
        return "the inclusion proof is not a list of 64-hex-digit hashes"
    if not _is_whole(index) or entry["seq"] != index + 1:
        return f"leaf index {index!r} is not the entry's seq - 1 (seq {entry['seq']!r})"
    try:
        recomputed = entry_hash(entry["prev_hash"], entry)
    except (TypeError, ValueError) as exc:
        return f"the entry cannot be hashed: {exc}"
    if recomputed != entry["hash"]:
        return "the entry's hash does not match its contents: this is not the entry logged"
    size = checkpoint.get("size")
    if not _is_whole(size) or not is_hex64(checkpoint.get("root")):
        return "the checkpoint has no valid size and root"
    if index >= size:
        return f"leaf {index} is not in the checkpoint over {size} entries"
    if not merkle.verify_inclusion(
        index,
        size,
        bytes.fromhex(entry["hash"]),
        [bytes.fromhex(node) for node in proof],
        bytes.fromhex(checkpoint["root"]),
    ):
        return (
            f"the inclusion proof of leaf {index} does not lead to the root "
            f"{checkpoint['root'][:16]}… of the checkpoint over {size} entries"
        )
    return None


# --- what an entry must say about its document -----------------------------------------------


def same_json(left: object, right: object) -> bool:
    """Whether two JSON values are the same JSON value: ``true`` is not ``1`` nor ``false``
    ``0``, at any depth, though Python's ``bool`` is an ``int`` (the page's JavaScript compares
    them with ``===``, and its verdict and this one must agree)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(same_json, left, right))
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(same_json(v, right[k]) for k, v in left.items())
    return left == right


def commitment_problem(entry: Mapping[str, Any], commitment_doc: Mapping[str, Any]) -> str | None:
    """Say how a commitment's entry contradicts the commitment document, or ``None``."""
    data = _data(entry)
    if wrong := _pair_entry_problem(entry, COMMITMENT_ACTION, commitment_doc):
        return wrong
    if not same_json(data.get("commitment"), commitment_doc.get("commitment")):
        return (
            f"the log recorded commitment {str(data.get('commitment'))[:16]}… for this pair, "
            f"the commitment document names {str(commitment_doc.get('commitment'))[:16]}…"
        )
    return None


def _entry_of_problem(entry: Mapping[str, Any], action: str, subject: str) -> str | None:
    """Say why ``entry`` is not an ``action`` entry of ``subject``, or ``None``."""
    expected = (action, subject)
    if (entry.get("action"), entry.get("subject")) != expected:
        return f"the entry is {entry.get('action')!r} of {entry.get('subject')!r}, not {expected}"
    return None


def _pair_entry_problem(
    entry: Mapping[str, Any], action: str, document: Mapping[str, Any]
) -> str | None:
    """Say why ``entry`` is not the ``action`` entry of the document's seed pair, by its
    player, or ``None``."""
    subject = pair_subject(document.get("seed_pair_id"))
    if wrong := _entry_of_problem(entry, action, subject):
        return wrong
    user = document.get("user_id")
    if entry.get("actor") != f"user:{user}":
        return f"the entry is of {entry.get('actor')!r}, not of user {user}"
    return None


def reveal_problem(entry: Mapping[str, Any], reveal_doc: Mapping[str, Any]) -> str | None:
    """Say how a rotation's entry contradicts the reveal document, or ``None``: it must name
    the same server seed and as many rounds (a reveal re-signed with fewer rounds would hide
    the last ones)."""
    data = _data(entry)
    if wrong := _pair_entry_problem(entry, REVEAL_ACTION, reveal_doc):
        return wrong
    for name in ("server_seed", "rounds"):
        if name not in data:
            return f"the entry names no {name}: it does not anchor this reveal"
        if not same_json(data[name], reveal_doc.get(name)):
            return (
                f"the log recorded {name} {data[name]!r} when the pair was revealed, "
                f"the reveal says {reveal_doc.get(name)!r}"
            )
    return None


def settlement_problem(entry: Mapping[str, Any], receipt: Mapping[str, Any]) -> str | None:
    """Say how a settlement entry contradicts the receipt, or ``None``.

    The entry must name the receipt's hash, game and payout: one that leaves any of them out
    says nothing about the receipt, so it anchors none (an entry with empty data would
    otherwise anchor any receipt of its round).
    """
    data = _data(entry)
    subject = round_subject(receipt.get("round_id"))
    if wrong := _entry_of_problem(entry, SETTLEMENT_ACTION, subject):
        return wrong
    if missing := [name for name in SETTLEMENT_FIELDS if name not in data]:
        return f"the entry names no {' and no '.join(missing)}: it does not anchor this receipt"
    try:
        hashed = receipt_hash(receipt)
    except (ValueError, TypeError) as exc:  # a lone surrogate, a NaN: no canonical bytes
        return f"the receipt has no canonical JSON ({exc}): no entry can name its hash"
    if data["receipt"] != hashed:
        return (
            f"the log recorded receipt {str(data['receipt'])[:16]}… for this round, but this "
            f"receipt hashes to {hashed[:16]}…: the receipt was rewritten"
        )
    for name in ("game", "payout"):
        if not same_json(data[name], receipt.get(name)):
            return f"the log recorded {name} {data[name]!r}, the receipt says {receipt.get(name)!r}"
    return None


def bet_problem(entry: Mapping[str, Any], receipt: Mapping[str, Any]) -> str | None:
    """Say how a round's bet entry contradicts its receipt, or ``None``.

    The bet names the pair and nonce the round's cards were drawn with. A round logged again
    under a new id takes no key twice, and its settlement names only the new receipt; its bet
    must name the receipt's pair and nonce, which the whole log takes once
    (:func:`first_key_problem`), or another pair than the receipt's.
    """
    data = _data(entry)
    if wrong := _entry_of_problem(entry, BET_ACTION, round_subject(receipt.get("round_id"))):
        return wrong
    for name in BET_FIELDS:
        if name not in data:
            return f"the bet entry names no {name}: it does not anchor this round"
        if not same_json(data[name], receipt.get(name)):
            return (
                f"the log recorded the bet with {name} {data[name]!r}, the receipt says "
                f"{receipt.get(name)!r}: the round was logged again"
            )
    return None


def decisions_problem(
    entries: Sequence[Mapping[str, Any]], receipt: Mapping[str, Any]
) -> str | None:
    """Say how the round's decision entries contradict the receipt's actions, or ``None``."""
    action = DECISION_ACTIONS.get(str(receipt.get("game")))
    actions = receipt.get("actions")
    if action is None or not isinstance(actions, list):
        return "the receipt has no game or no list of actions to compare"
    name = DECISION_FIELDS[action]
    logged = [
        e.get("data", {}).get(name) if isinstance(e.get("data"), Mapping) else None for e in entries
    ]
    if any(
        e.get("action") != action or e.get("subject") != round_subject(receipt.get("round_id"))
        for e in entries
    ):
        return f"a decision entry is not a {action!r} entry of this round"
    if not same_json(logged, actions):
        return (
            f"the log recorded the player's actions {logged}, the receipt lists {actions}: "
            "the round was rewritten"
        )
    return None


def past_the_bound(
    dated_at: object, checkpoints: Iterable[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """Return the latest of ``checkpoints`` (documents whose signatures the caller checked)
    dated past ``dated_at`` + :data:`ANCHOR_BOUND`, or ``None``: the one a document still
    pending is not in, though an honest service would have put it there. A time that is not
    ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` judges nothing (a document's own fails its other checks)."""
    dated = time_or_none(dated_at)
    if dated is None:
        return None
    timed = [(time, doc) for doc in checkpoints if (time := time_or_none(doc.get("time")))]
    past = [(time, doc["size"], doc) for time, doc in timed if time > dated + ANCHOR_BOUND]
    return max(past, key=lambda found: found[:2])[2] if past else None


def covering_checkpoint(
    seq: object, checkpoints: Iterable[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """Return the one over the most entries of ``checkpoints`` (documents whose signatures the
    caller checked) that covers the entry at ``seq``, or ``None``: a checkpoint over ``size``
    entries holds the leaves ``0 .. size - 1``, the entries ``1 .. size``."""
    if not _is_whole(seq):
        return None
    covering = [doc for doc in checkpoints if _is_whole(doc.get("size")) and doc["size"] >= seq]
    return max(covering, key=lambda doc: int(doc["size"])) if covering else None


def covered_message(seq: object, checkpoint: Mapping[str, Any], by: DatedBy) -> str:
    """Why an entry pending in a bundle fails, whatever its dates, once
    :func:`covering_checkpoint` found ``checkpoint`` over its ``seq``: the service anchors
    what a checkpoint covers in it, so the entry is not the log's at that place, or the bundle
    withheld its anchor."""
    return (
        f"pending, though the checkpoint signed at {checkpoint['time']} (size "
        f"{checkpoint['size']}) covers entry {seq}: a signed checkpoint holds every entry up to "
        f"its size, and the service anchors them in it, so {by.left_out} was left out of the "
        "log, or its anchor was withheld"
    )


def left_out_message(dated_at: object, checkpoint: Mapping[str, Any], by: DatedBy) -> str:
    """Why a document pending in a bundle fails once :func:`past_the_bound` found
    ``checkpoint`` (``by``: what its time is)."""
    return (
        f"{by.said} {dated_at}, not in the checkpoint signed at {checkpoint['time']} (size "
        f"{checkpoint['size']}), past the bound of {ANCHOR_BOUND_TEXT}: {by.left_out} was left "
        "out of the log"
    )


def dated_ahead(dated_at: object, now: datetime, by: DatedBy) -> str | None:
    """Why a document still pending fails when its time (``by``) is past ``now`` (the
    verifier's clock) and :data:`ANCHOR_BOUND`, or ``None``: no casino has made it yet, and
    dated ahead, a document left out of the log would stay within the bound for as long."""
    return _dated_past(dated_at, now, by, f"this computer's clock ({format_time(now)})")


def fetched_before(dated_at: object, fetched_at: datetime, by: DatedBy) -> str | None:
    """Why a document still pending in a bundle fetched at ``fetched_at`` (by the verifier's
    own clock) fails when its time (``by``) is past that and :data:`ANCHOR_BOUND`, or ``None``:
    as :func:`dated_ahead`, by the fetch time. A bundle fetched then holds no document made
    later, and a verifier checking it long after would else let a receipt dated ahead of the
    fetch (by less than the years to its own clock) keep a round left out of the log within the
    bound."""
    moment = (
        f"the time the bundle was fetched ({format_time(fetched_at)}, by this computer's clock)"
    )
    return _dated_past(dated_at, fetched_at, by, moment)


def _dated_past(dated_at: object, moment: datetime, by: DatedBy, said: str) -> str | None:
    """The failure of a pending document dated past ``moment`` (``said`` in words) and the
    bound, or ``None``."""
    dated = time_or_none(dated_at)
    if dated is None or dated <= moment + ANCHOR_BOUND:
        return None
    return (
        f"{by.said} {dated_at}, past {said} and the bound of {ANCHOR_BOUND_TEXT}: {by.document} "
        f"is dated ahead, which would keep {by.kept} left out of the log within the bound"
    )


def pending_when_fetched(dated_at: object, fetched_at: datetime, by: DatedBy) -> str | None:
    """Why a document still pending in a bundle fetched at ``fetched_at`` (by the verifier's
    own clock, never a time the casino wrote) fails when that is past its time (``by``) and
    :data:`ANCHOR_BOUND`, or ``None``.

    The service signs a checkpoint over the whole log when a bundle is fetched (unless the
    latest, signed over it, is younger than ``CHECKPOINT_MIN_SECONDS``), so an honest bundle
    lists as pending only what was logged seconds before it was fetched: one that lists a
    document past its bound was served by a log that left it out, or that signs no more
    checkpoints to keep it waiting. A verifier's clock fast by less than the bound fails nothing
    honest, as one slow by less than it fails nothing in :func:`dated_ahead`."""
    dated = time_or_none(dated_at)
    if dated is None or fetched_at <= dated + ANCHOR_BOUND:
        return None
    return (
        f"{by.said} {dated_at}, still pending in the bundle fetched at {format_time(fetched_at)} "
        f"by this computer's clock, past the bound of {ANCHOR_BOUND_TEXT}: the service signs a "
        f"checkpoint over the whole log when a bundle is fetched, so {by.left_out} was left out "
        "of the log, or the log's checkpoints were withheld"
    )


def pending_for(dated_at: object, now: datetime, by: DatedBy) -> str | None:
    """How long before ``now`` (the verifier's clock) a document still pending was dated, once
    that is past :data:`ANCHOR_BOUND`, or ``None``: a bundle file checked without the time it
    was fetched cannot fail it (an honest bundle fetched seconds after the document lists it as
    pending too), but the time passed says a bundle fetched now must anchor it."""
    dated = time_or_none(dated_at)
    if dated is None or now <= dated + ANCHOR_BOUND:
        return None
    return f"{by.said} {dated_at}, {_how_long(now - dated)} before this computer's clock"


def _how_long(passed: timedelta) -> str:
    """``passed`` (over an hour) in whole days, hours or minutes, the largest that fits twice."""
    for unit, name in ((timedelta(days=1), "days"), (timedelta(hours=1), "hours")):
        if passed >= 2 * unit:
            return f"{passed // unit} {name}"
    return f"{passed // timedelta(minutes=1)} minutes"


def bound_problem(
    kind: str,
    document: Mapping[str, Any],
    checkpoints: Iterable[Mapping[str, Any]],
    now: datetime,
    fetched_at: datetime | None = None,
) -> str | None:
    """Why a document the bundle lists as pending fails, or ``None`` (still within the bound):
    an audit entry (``placed``) whose ``seq`` one of ``checkpoints`` covers, whatever its dates
    (:func:`covered_message`); dated past ``now`` (the verifier's clock) and the bound
    (:func:`dated_ahead`), or past ``fetched_at`` and the bound (:func:`fetched_before`), or
    not in one of ``checkpoints`` (signed by the trusted key) dated past its time and the bound
    (:func:`past_the_bound`), or still pending in a bundle fetched, by the verifier's clock, at
    ``fetched_at`` past its time and the bound (:func:`pending_when_fetched`).

    :param kind: what is pending, a key of :data:`DATED_BY`: ``round`` (``document`` is its
        receipt), ``commitment``, ``reveal`` or ``registration`` (``document`` is the key
        registration's audit entry).
    :param fetched_at: when the verifier fetched the bundle, by its own clock; ``None`` for a
        bundle checked without that time (a file kept since), which only the checkpoints date.
    """
    by, checkpoints = DATED_BY[kind], list(checkpoints)
    if by.placed:
        covering = covering_checkpoint(document.get("seq"), checkpoints)
        if covering is not None:
            return covered_message(document.get("seq"), covering, by)
    dated_at = document.get(by.name)
    ahead = dated_ahead(dated_at, now, by)
    if ahead is None and fetched_at is not None:
        ahead = fetched_before(dated_at, fetched_at, by)
    if ahead is not None:
        return ahead
    checkpoint = past_the_bound(dated_at, checkpoints)
    if checkpoint is not None:
        return left_out_message(dated_at, checkpoint, by)
    return None if fetched_at is None else pending_when_fetched(dated_at, fetched_at, by)


#: The kinds of anchored document whose entry the service logs once, and the action of each.
LOGGED_ONCE: Final = {
    "commitment": COMMITMENT_ACTION,
    "reveal": REVEAL_ACTION,
    "bet": BET_ACTION,
    "settlement": SETTLEMENT_ACTION,
}


def anchored_twice(kind: str, first: int, second: int) -> str:
    """Why a bundle whose anchors prove two different entries (at leaves ``first`` and
    ``second``) for one document of ``kind`` (a key of :data:`LOGGED_ONCE`) fails: the service
    logs each of them once, so two are the casino's own proof that it committed, revealed, bet
    or settled it twice (a round settled again with another payout), whichever of them the
    bundle's documents agree with."""
    low, high = sorted((first, second))
    meaning = ONCE[LOGGED_ONCE[kind]]
    return (
        f"two {kind} entries are anchored, at leaf {low} and at leaf {high}: the service logs "
        f"one, so {meaning}"
    )


def twin_checkpoints(first: Mapping[str, Any], second: Mapping[str, Any]) -> str:
    """Why two signed checkpoints over the same entries that differ (in root or time) fail: the
    service signs one checkpoint a size, so one of them forks or back-dates the log."""
    return (
        f"two signed checkpoints over {first['size']} "
        f"{'entry' if first['size'] == 1 else 'entries'} differ: root {first['root']} at "
        f"{first['time']}, root {second['root']} at {second['time']}: one of them forks or "
        "back-dates the log"
    )


def twin_entries(seq: object, first: object, second: object) -> str:
    """Why two entries of one ``seq``, each proved into a checkpoint the trusted keys signed,
    that differ (``first`` and ``second``, their hashes) fail: a log holds one entry at each
    place, so the checkpoints proving them are of two logs, a fork."""
    return (
        f"two entries at seq {seq} of the signed log differ: hash {first}, hash {second}, each "
        "proved into a checkpoint the trusted key signed: the log was forked"
    )


def backdated_checkpoints(checkpoints: Iterable[Mapping[str, Any]]) -> list[str]:
    """Why each of ``checkpoints`` (well-formed documents whose signatures the caller checked)
    dated before one over fewer entries fails: the service signs a checkpoint over the whole log
    as it is then, so one over more entries is never older, and a casino that dated its new
    checkpoints back could keep a round it left out of the log within the bound. The times are
    of one fixed form, so their text orders them; those over the same entries are
    :func:`twin_checkpoints`."""
    messages: list[str] = []
    latest: Mapping[str, Any] | None = None  # the latest dated of those over fewer entries
    by_size = sorted(checkpoints, key=lambda doc: int(doc["size"]))
    for _, group in groupby(by_size, key=lambda doc: int(doc["size"])):
        same = {(doc["root"], doc["time"]): doc for doc in group}  # one listed twice counts once
        for doc in same.values():
            if latest is not None and doc["time"] < latest["time"]:
                messages.append(
                    f"the signed checkpoint of size {doc['size']} (root {doc['root']}) is dated "
                    f"{doc['time']}, before the one of size {latest['size']} (root "
                    f"{latest['root']}) at {latest['time']}, over fewer entries: one of them "
                    "back-dates the log"
                )
        newest = max(same.values(), key=lambda doc: str(doc["time"]))
        if latest is None or newest["time"] > latest["time"]:
            latest = newest
    return messages
