"""The ``log`` check: each document of the bundle is anchored in the casino's signed audit log.

For every anchor (:mod:`sota_casino.core.anchors`): its checkpoint is signed by the trusted key,
its entry hashes to the leaf the inclusion proof leads up to the checkpoint's root, and the
entry says what the document says (the commitment entry names the same commitment, the
rotation's entry the reveal's server seed and rounds, the bet entry the receipt's pair and nonce,
the settlement entry the receipt's hash, the decision entries the receipt's actions); and in the
log the pair's commitment entry precedes every round's entries, each round's bet its other
entries, and the pair's rotation's entry follows them. A re-committed pair or a
rewritten round then contradicts a checkpoint the casino signed, which a third party can check.

A bundle without its anchors proves none of that, so it fails the check: an operator holding the
key and the database could otherwise hand out a rewritten round stripped of the anchors that
contradict it. A document the bundle lists in ``pending_anchors`` is *pending*, never proven:
the verdict says to fetch the bundle again later (:attr:`.Report.not_yet_anchored`). A document
stays pending only within the scheme's bound (``core.anchors.ANCHOR_BOUND``): once a
checkpoint signed by the trusted key is dated past its signed time (a round's ``settled_at``,
the commitment's ``created_at``, the reveal's ``revealed_at``) and the bound, it fails, since
an honest service would have had it in that checkpoint.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from typing import Final

from ..core import anchors
from ..core.audit_chain import checkpoint_shape_problem
from ..core.fairness import verify_signature
from .report import FAIL
from .report import PENDING
from .report import Finding
from .report import Row
from .report import SignedLog
from .report import short

LOG: Final = "log"
#: A bundle that carries no anchors (and says none is pending) proves nothing in the log.
UNANCHORED: Final = "unanchored: the bundle proves none of its documents in the signed log"
#: What to do about a document pending past its bound in a bundle checked without the time it
#: was fetched: the service signs a checkpoint over it when a bundle is fetched.
FETCH_AGAIN: Final = (
    "fetch the bundle again and verify it with --fetched-at now, which fails it if it is "
    "still pending"
)


@dataclass(frozen=True, slots=True)
class PendingDates:
    """What dates the bound of a document a bundle lists as pending: the bundle's checkpoints
    signed by a key of the trusted chain, the verifier's clock, and when it fetched the bundle
    by that clock (``None`` for a file checked without that time)."""

    checkpoints: Sequence[Mapping[str, Any]]
    now: datetime
    fetched_at: datetime | None = None

    def judged(self, kind: str, document: Mapping[str, Any]) -> tuple[str, str | None]:
        """``FAIL`` and why a pending ``document`` of ``kind`` (a key of
        ``core.anchors.DATED_BY``) fails by the bound, or, an audit entry, by a checkpoint
        that covers its ``seq`` (``core.anchors.bound_problem``), or
        ``PENDING`` and what its pending line adds: for a bundle checked without the time it
        was fetched, how long past the bound the verifier's clock is (``None`` within it)."""
        problem = anchors.bound_problem(kind, document, self.checkpoints, self.now, self.fetched_at)
        if problem is not None:
            return FAIL, problem
        by = anchors.DATED_BY[kind]
        passed = anchors.pending_for(document.get(by.name), self.now, by)
        if passed is None or self.fetched_at is not None:
            return PENDING, None
        return PENDING, f"{passed}: {FETCH_AGAIN}"


def _signed_checkpoints(
    bundle: Mapping[str, Any], keys: Sequence[str]
) -> tuple[dict[int, Mapping[str, Any]], list[Mapping[str, Any]], list[Finding]]:
    """The bundle's checkpoints signed by one of ``keys``, by size (the last listed at a size)
    and every one (each dates the bound, also one another of its size follows), and a finding
    per bad one: unsigned, or one of two signed over the same entries that differ (the service
    signs one checkpoint a size: two are a fork, or one dated back), or one dated before another
    over fewer entries (dated back)."""
    good: dict[int, Mapping[str, Any]] = {}
    every: list[Mapping[str, Any]] = []
    findings: list[Finding] = []
    listed = bundle.get("checkpoints")
    for number, envelope in enumerate(listed if isinstance(listed, list) else [], start=1):
        shape = checkpoint_shape_problem(envelope)
        if shape is not None:
            findings.append(Finding("bundle", LOG, FAIL, f"checkpoint {number} {shape}"))
            continue
        doc = envelope["document"]
        if not any(verify_signature(key, doc, envelope["signature"]) for key in keys):
            findings.append(
                Finding(
                    "bundle",
                    LOG,
                    FAIL,
                    f"the checkpoint over {doc['size']} entries is not signed by the trusted "
                    f"key {short(keys[0])}",
                )
            )
            continue
        twin = good.get(doc["size"])
        if twin is not None and (twin["root"], twin["time"]) != (doc["root"], doc["time"]):
            findings.append(Finding("bundle", LOG, FAIL, anchors.twin_checkpoints(twin, doc)))
        good[doc["size"]] = doc
        every.append(doc)
    for message in anchors.backdated_checkpoints(every):
        findings.append(Finding("bundle", LOG, FAIL, message))
    return good, every, findings


def _id(value: object) -> object:
    """A round id as a dictionary key: itself if an integer or a string, else a stand-in (a
    forged anchor or receipt may name a list, and must fail, not crash the verifier)."""
    return value if type(value) in (int, str) else (type(value).__name__, repr(value))


def _place(of: Mapping[str, Any]) -> tuple[str, Any]:
    """Which document an anchor (or a pending one) is of: the pair's commitment or reveal, or
    a round."""
    kind = of.get("kind")
    if kind in ("commitment", "reveal"):
        return (str(kind), None)
    return ("round", _id(of.get("round_id")))


def _leaf(anchor: Mapping[str, Any]) -> int:
    """Where the log took an anchor's entry (its proof held: ``leaf_index`` is a whole number)."""
    leaf: int = anchor["leaf_index"]
    return leaf


class _Anchors:
    """The bundle's anchors, proved and sorted by what they anchor."""

    def __init__(
        self,
        bundle: Mapping[str, Any],
        keys: Sequence[str],
        now: datetime,
        fetched_at: datetime | None = None,
    ) -> None:
        self.checkpoints, self.signed, self.findings = _signed_checkpoints(bundle, keys)
        self.key = keys[0]
        self.dates = PendingDates(self.signed, now, fetched_at)
        self.commitment: Mapping[str, Any] | None = None
        self.reveal: Mapping[str, Any] | None = None
        self.bets: dict[Any, Mapping[str, Any]] = {}
        self.settlements: dict[Any, Mapping[str, Any]] = {}
        self.decisions: dict[Any, list[Mapping[str, Any]]] = defaultdict(list)
        self.problems: dict[tuple[str, Any], list[str]] = defaultdict(list)
        self.pending: dict[tuple[str, Any], str] = {}
        self.proven: list[Mapping[str, Any]] = []  # the entries whose anchors hold
        listed = bundle.get("anchors")
        for anchor in listed if isinstance(listed, list) else []:
            self._add(anchor)
        waiting = bundle.get("pending_anchors")
        for item in waiting if isinstance(waiting, list) else []:
            of = item.get("of") if isinstance(item, dict) else None
            if isinstance(of, dict):
                self.pending.setdefault(_place(of), str(item.get("reason", "not yet anchored")))
        # In the log's order, not the order the anchors' ``index`` labels claim: the player's
        # actions are the receipt's in the order the log took them.
        for decisions in self.decisions.values():
            decisions.sort(key=_leaf)

    def cited(self, anchor: Mapping[str, Any]) -> str:
        """Name the signed checkpoint and leaf an anchor stands on, for a third party."""
        doc = self.checkpoints[anchor["checkpoint_size"]]
        return (
            f"entry {anchor['entry']['seq']} of the log, in the checkpoint over {doc['size']} "
            f"entries (root {short(doc['root'])}, {doc['time']}) signed by {short(self.key)}"
        )

    def _add(self, anchor: object) -> None:
        of = anchor.get("of") if isinstance(anchor, dict) else None
        if not isinstance(anchor, dict) or not isinstance(of, dict):
            self.findings.append(Finding("bundle", LOG, FAIL, "an anchor names no document"))
            return
        kind = of.get("kind")
        place = _place(of)
        size = anchor.get("checkpoint_size")
        checkpoint = self.checkpoints.get(size) if type(size) is int else None
        if checkpoint is None:
            self.problems[place].append(
                f"its {kind} anchor names no checkpoint of the bundle signed by the trusted key"
            )
            return
        problem = anchors.proof_problem(anchor, checkpoint)
        if problem is None:
            self.proven.append(anchor["entry"])
        if problem is not None:
            self.problems[place].append(f"its {kind} anchor does not hold: {problem}")
        elif isinstance(kind, str) and kind in anchors.LOGGED_ONCE:
            self._once(kind, place, anchor)
        elif kind == "decision":
            self.decisions[place[1]].append(anchor)

    def _once(self, kind: str, place: tuple[str, Any], anchor: Mapping[str, Any]) -> None:
        """Keep the proven anchor of a document the service logs once (the first listed); a
        second that proves another entry for it is a problem of the document, naming both."""
        by_round = self.bets if kind == "bet" else self.settlements
        first = getattr(self, kind) if kind in ("commitment", "reveal") else by_round.get(place[1])
        if first is not None:
            if (_leaf(first), first["entry"]["hash"]) != (_leaf(anchor), anchor["entry"]["hash"]):
                twice = anchors.anchored_twice(kind, _leaf(first), _leaf(anchor))
                self.problems[place].append(twice)
        elif kind in ("commitment", "reveal"):
            setattr(self, kind, anchor)
        else:
            by_round[place[1]] = anchor


def check_anchors(
    bundle: Mapping[str, Any],
    keys: Sequence[str],
    pair_docs: tuple[Mapping[str, Any], Mapping[str, Any] | None],
    documents: Sequence[Row],
    receipts: Sequence[Mapping[str, Any] | None],
    rows: Sequence[Row],
    now: datetime,
    fetched_at: datetime | None = None,
) -> tuple[
    list[Row],
    list[Row],
    list[Finding],
    dict[Any, int],
    dict[Any, tuple[int, ...]],
    dict[Any, int],
    SignedLog,
    PendingDates,
]:
    """Check the bundle's anchors against its documents.

    :param keys: the key every signature is checked with, then the keys it succeeded on the
        way from the trusted key (a checkpoint signed before a key change is signed by the key
        it retired); never a key the trusted key succeeded.
    :param pair_docs: the commitment document, and the reveal document once revealed.
    :param documents: the rows of the commitment, and of the reveal once revealed.
    :param receipts: each round's receipt document, as ``rows`` (``None`` if not signed).
    :param now: the verifier's clock: a document pending may not be dated past it and the
        bound.
    :param fetched_at: when the bundle was fetched, by the verifier's own clock, if known: a
        document still pending then may not be dated before it by more than the bound.
    :returns: the documents' rows, the rounds' rows and the bundle's findings, with the
        ``log`` findings added, the seq of each round's settlement entry that its anchor
        proves into a signed checkpoint (by round id): where the log took the settlement, and
        the seqs of each round's decision and move entries so proved, in the log's order (by
        round id): where the log took each of the player's actions, the seq of each
        round's bet entry so proved (by round id): where the log took its bet, what the
        bundle shows of the log (its signed checkpoints and the entries proved into them), and
        what dates the bound of what it lists as pending (the player's key registrations too).
        Every document must be anchored or listed as pending; a bundle without an ``anchors``
        list fails (:data:`UNANCHORED`), its ``pending_anchors`` disregarded, and so does one
        whose list is empty with nothing pending.
    """
    found = _Anchors(bundle, keys, now, fetched_at)
    if not isinstance(bundle.get("anchors"), list):
        found.pending.clear()
        found.findings.append(Finding("bundle", LOG, FAIL, f"{UNANCHORED} (it has no anchors)"))
    elif not bundle["anchors"] and not found.pending:
        found.findings.append(Finding("bundle", LOG, FAIL, UNANCHORED))
    commitment_doc, reveal_doc = pair_docs
    commitment_findings = _commitment_findings(found, commitment_doc)
    first_round: tuple[int, Any] | None = None
    last_round: tuple[int, Any] | None = None
    bets = _bets_by_nonce(found, rows)
    new_rows = []
    for row, receipt in zip(rows, receipts, strict=True):
        extra, leaves = _round_findings(found, row, receipt, bets)
        new_rows.append(row.with_findings(extra))
        if leaves and (first_round is None or min(leaves) < first_round[0]):
            first_round = (min(leaves), row.round_id)
        if leaves and (last_round is None or max(leaves) > last_round[0]):
            last_round = (max(leaves), row.round_id)
    if found.commitment is not None and first_round is not None:
        committed_at = found.commitment["leaf_index"]
        if committed_at >= first_round[0]:
            commitment_findings.append(
                f"the pair's commitment was logged at leaf {committed_at}, after round "
                f"{first_round[1]} was logged at leaf {first_round[0]}: the pair was committed "
                f"after it was played ({found.cited(found.commitment)})"
            )
    later = _first_logged_after_commitment(found)
    checked = [
        _document_row(found, "commitment", documents[0], commitment_doc, commitment_findings, later)
    ]
    if reveal_doc is not None and len(documents) > 1:
        reveal_findings = _reveal_findings(found, reveal_doc, last_round)
        checked.append(_document_row(found, "reveal", documents[1], reveal_doc, reveal_findings))
    settled = {round_id: a["leaf_index"] + 1 for round_id, a in found.settlements.items()}
    acted = {
        round_id: tuple(a["leaf_index"] + 1 for a in decisions)
        for round_id, decisions in found.decisions.items()
    }
    bet_seqs = {round_id: a["leaf_index"] + 1 for round_id, a in found.bets.items()}
    shown = SignedLog(tuple(found.signed), tuple(found.proven))
    return checked, new_rows, found.findings, settled, acted, bet_seqs, shown, found.dates


def _document_row(
    found: _Anchors,
    kind: str,
    row: Row,
    document: Mapping[str, Any],
    messages: list[str],
    later: Later | None = None,
) -> Row:
    """A pair document's row with its ``log`` findings; unanchored, pending or failing."""
    row = row.with_findings([Finding(kind, LOG, FAIL, message) for message in messages])
    anchor = found.commitment if kind == "commitment" else found.reveal
    if anchor is None and not messages:
        missing = _missing(found, (kind, None), document=document, later=later)
        row = row.with_findings([Finding(kind, LOG, *missing)])
    return row


#: An anchored entry that the log takes after another document's: its leaf, and what it is.
Later = tuple[int, str]


def _earliest(candidates: Sequence[Later | None]) -> Later | None:
    present = [later for later in candidates if later is not None]
    return min(present) if present else None


def _first_logged_after_commitment(found: _Anchors) -> Later | None:
    """The earliest anchored entry of the pair after its commitment: any round's, or the
    reveal's (the log takes the commitment before every one of them)."""
    rounds = [
        (_leaf(anchor), f"an entry of round {round_id}")
        for by_round in (found.bets, found.settlements)
        for round_id, anchor in by_round.items()
    ]
    rounds += [
        (_leaf(anchor), f"a decision of round {round_id}")
        for round_id, decisions in found.decisions.items()
        for anchor in decisions
    ]
    reveal = (_leaf(found.reveal), "the pair's reveal") if found.reveal is not None else None
    return _earliest([*rounds, reveal])


def _bets_by_nonce(found: _Anchors, rows: Sequence[Row]) -> list[tuple[int, Later]]:
    """The anchored bets of the bundle's rounds, by the nonce their rounds were dealt with."""
    return [
        (row.nonce, (_leaf(bet), f"the bet of round {row.round_id} (nonce {row.nonce})"))
        for row in rows
        if (bet := found.bets.get(_id(row.round_id))) is not None and type(row.nonce) is int
    ]


def _dealt_out_of_order(row: Row, leaf: int, bets: Sequence[tuple[int, Later]]) -> str | None:
    """Why a round whose bet the log took at ``leaf`` before the bet of a round with a lower
    nonce fails, or ``None``: a pair's nonces are taken in order under the player's lock, each
    with its bet logged, so the log holds its bets in the order of their nonces. A casino that
    knows the server seed and dealt a later bet an earlier nonce chose which cards it got."""
    earlier = [
        later
        for nonce, later in bets
        if type(row.nonce) is int and nonce < row.nonce and later[0] > leaf
    ]
    if not earlier:
        return None
    first_leaf, entry = min(earlier)
    return (
        f"the bet was logged at leaf {leaf}, before {entry} at leaf {first_leaf}: a pair's "
        "nonces are taken in order, each with its bet logged, so the nonces were dealt out of "
        "order"
    )


def _missing(
    found: _Anchors,
    place: tuple[str, Any],
    what: str = "it",
    document: Mapping[str, Any] | None = None,
    later: Later | None = None,
) -> tuple[str, str]:
    """A document (or a round's ``what``) without an anchor: pending if the service said so,
    else a failure. A pending one fails too where it was left out of the log: while the
    bundle anchors ``later``, an entry the log takes after it (every signed checkpoint holds
    all the log took before its last entry, so an honest bundle anchors it in the same one),
    or by its signed ``document`` (a round's receipt, the commitment, the reveal) while a
    checkpoint signed by the trusted key is dated past its time and the bound
    (``core.anchors.ANCHOR_BOUND``), or its time is dated past the verifier's clock (or the
    time the bundle was fetched) and the bound, or the bundle was fetched (by the verifier's
    clock) past its time and the bound (``core.anchors.bound_problem``). Without the time it
    was fetched, a document pending past its bound by the verifier's clock stays pending, and
    says for how long."""
    if place not in found.pending:
        return FAIL, f"the bundle carries no anchor of {what} in the audit log"
    if later is not None:
        leaf, entry = later
        return FAIL, (
            f"pending, though the signed log holds {entry} at leaf {leaf}, which the log takes "
            f"after {what}: {what} was left out of the log"
        )
    waiting = f"not yet anchored: {found.pending[place]}"
    if document is not None:
        status, said = found.dates.judged(place[0], document)
        if status == FAIL:
            return FAIL, str(said)
        if said is not None:
            waiting += f"; {said}"
    return PENDING, waiting


def _commitment_findings(found: _Anchors, commitment_doc: Mapping[str, Any]) -> list[str]:
    messages = list(found.problems.get(("commitment", None), ()))
    if found.commitment is not None:
        problem = anchors.commitment_problem(found.commitment["entry"], commitment_doc)
        if problem is not None:
            messages.append(f"{problem} ({found.cited(found.commitment)})")
    return messages


def _reveal_findings(
    found: _Anchors, reveal_doc: Mapping[str, Any], last_round: tuple[int, Any] | None
) -> list[str]:
    messages = list(found.problems.get(("reveal", None), ()))
    if found.reveal is None:
        return messages
    problem = anchors.reveal_problem(found.reveal["entry"], reveal_doc)
    if problem is not None:
        messages.append(f"{problem} ({found.cited(found.reveal)})")
    revealed_at = found.reveal["leaf_index"]
    if last_round is not None and revealed_at <= last_round[0]:
        messages.append(
            f"the pair's reveal was logged at leaf {revealed_at}, before round {last_round[1]} "
            f"was logged at leaf {last_round[0]} ({found.cited(found.reveal)})"
        )
    return messages


def _round_findings(
    found: _Anchors,
    row: Row,
    receipt: Mapping[str, Any] | None,
    bets: Sequence[tuple[int, Later]],
) -> tuple[list[Finding], list[int]]:
    """The round's ``log`` findings, and the leaves of its entries that hold.

    :param bets: the bundle's anchored bets by nonce: the log takes a pair's bets in the order
        of their nonces, so a later one anchored anchors this one's too.
    """

    def fail(message: str, status: str = FAIL) -> Finding:
        return Finding("round", LOG, status, message, row.index, row.round_id, row.nonce)

    if receipt is None:
        return [], []
    place = ("round", _id(row.round_id))
    findings = [fail(message) for message in found.problems.get(place, ())]
    settlement = found.settlements.get(place[1])
    decisions = found.decisions.get(place[1], [])
    bet = found.bets.get(place[1])
    later_bets = [later for nonce, later in bets if type(row.nonce) is int and nonce > row.nonce]
    if settlement is None:
        # The log takes every round of the pair before its reveal, and each bet before the
        # next nonce's.
        reveal = (_leaf(found.reveal), "the pair's reveal") if found.reveal is not None else None
        later = _earliest([reveal, *(later_bets if bet is None else ())])
        if not findings:
            status, message = _missing(found, place, document=receipt, later=later)
            findings.append(fail(message, status))
        return findings, [a["leaf_index"] for a in decisions]
    problem = anchors.settlement_problem(settlement["entry"], receipt)
    if problem is not None:
        findings.append(fail(f"{problem} ({found.cited(settlement)})"))
    if bet is None:
        after_bet = (_leaf(settlement), "its settlement")  # the log takes the bet first
        status, message = _missing(found, place, "its bet", receipt, after_bet)
        findings.append(fail(message, status))
    elif (problem := anchors.bet_problem(bet["entry"], receipt)) is not None:
        findings.append(fail(f"{problem} ({found.cited(bet)})"))
    elif any(_leaf(a) <= _leaf(bet) for a in (settlement, *decisions)):
        findings.append(fail(f"the bet was logged after the round was played ({found.cited(bet)})"))
    if bet is not None and (dealt := _dealt_out_of_order(row, _leaf(bet), bets)) is not None:
        findings.append(fail(f"{dealt} ({found.cited(bet)})"))
    problem = anchors.decisions_problem([a["entry"] for a in decisions], receipt)
    if problem is not None:
        cited = found.cited(decisions[0] if decisions else settlement)
        findings.append(fail(f"{problem} ({cited})"))
    twice = [a for a, b in zip(decisions, decisions[1:], strict=False) if _leaf(a) == _leaf(b)]
    if twice:
        findings.append(
            fail(
                "one decision entry is anchored as two of the player's actions: a move "
                f"repeated in the receipt stands for one the log holds ({found.cited(twice[0])})"
            )
        )
    late = [a for a in decisions if a["leaf_index"] > settlement["leaf_index"]]
    if late:
        findings.append(
            fail(f"a decision was logged after the round settled ({found.cited(late[0])})")
        )
    played = [settlement, *decisions, *([bet] if bet is not None else [])]
    return findings, [_leaf(a) for a in played]
