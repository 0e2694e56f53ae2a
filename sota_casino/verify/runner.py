"""One whole bundle: which key to trust, the checks of every document (in worker processes for
large bundles), the checks across the rounds, and the comparison with the player's records."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Final
from typing import TypedDict

from ..core import anchors
from ..core.fairness import canonical_json
from ..core.fairness import weak_key_problem
from .anchors import PendingDates
from .anchors import check_anchors
from .checks import PairContext
from .checks import _bundle_parts
from .checks import _envelope
from .checks import _pair_context
from .checks import _revealed_seed
from .checks import check_across_rounds
from .checks import check_batch
from .checks import check_commitment
from .checks import check_reveal
from .player_signatures import registered_keys
from .player_signatures import with_player_findings
from .records import Records
from .records import compare_client_seed
from .records import compare_commitment
from .records import compare_round
from .records import missing_rounds
from .report import FAIL
from .report import PASS
from .report import TRUST_PINNED
from .report import TRUST_SUCCESSOR
from .report import TRUST_UNPINNED
from .report import UNPINNED_MEANING
from .report import Finding
from .report import Report
from .report import Row
from .report import SignedLog
from .report import short
from .trust import describe_chain
from .trust import forked_key_changes
from .trust import logged_predecessors
from .trust import refused_key_changes
from .trust import successor_chain

#: Below this many rounds a bundle is checked in one process whatever ``--jobs`` says.
PARALLEL_MIN_ROUNDS: Final = 512
#: Receipts whose signatures are checked together before their other checks.
SIGNATURE_BATCH: Final = 1024

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


# --- a whole bundle -----------------------------------------------------------------------------

Progress = Callable[[int, int], None]


class BundleOptions(TypedDict, total=False):
    """How :func:`verify_bundle` reads a bundle, besides its key (its keyword arguments)."""

    records: Records | None
    source: str
    jobs: int
    progress: Progress | None
    fetched_at: datetime | None


def verify_bundle(
    bundle: object,
    public_key_hex: str | None = None,
    *,
    records: Records | None = None,
    source: str = "bundle",
    jobs: int = 1,
    progress: Progress | None = None,
    now: datetime | None = None,
    fetched_at: datetime | None = None,
) -> Report:
    """Make every check of docs/fairness.md on one bundle and report what fails, and where.

    :param public_key_hex: the trusted key. Every signature is checked against it (or a key
        it handed on to or succeeded, :func:`_keys_of`), and a bundle naming another key fails,
        unless the bundle's key changes show that key to be its successor (each change signed
        by the key it retires). Without it, the bundle's own key is used and the report is
        *unpinned*: it proves nothing about who signed.
    :param records: what the player kept; the bundle must agree with them.
    :param jobs: worker processes for large bundles (:data:`PARALLEL_MIN_ROUNDS` and up).
    :param progress: called with ``(rounds checked, rounds)`` as the check goes.
    :param now: the time to judge a round still pending by (default: this computer's clock).
    :param fetched_at: when the bundle was fetched, by this computer's clock, if known: the
        service signs a checkpoint over every document when a bundle is fetched, so one still
        pending then, past its time and the bound, fails (``core.anchors.bound_problem``).
    :raises BundleError: if the input is not a bundle.
    """
    bundle_key, commitment_envelope, reveal_envelope, envelopes = _bundle_parts(bundle)
    assert isinstance(bundle, dict)  # _bundle_parts has raised BundleError if it is not
    key, trust, note, findings = _trusted_key(bundle, bundle_key, public_key_hex)
    findings += _refused_key_findings(key, bundle.get("key_changes"))
    commitment_doc, _ = _envelope(commitment_envelope) or ({}, "")
    reveal_doc = (
        (_envelope(reveal_envelope) or ({}, ""))[0] if reveal_envelope is not None else None
    )
    seed = _revealed_seed(reveal_doc) if reveal_doc is not None else None
    log_keys, signing_keys = _keys_of(bundle, key, public_key_hex)
    findings += [
        Finding("bundle", "signature", FAIL, forked)
        for forked in forked_key_changes(bundle.get("key_changes"), log_keys)
    ]
    documents = [check_commitment(commitment_envelope, signing_keys, seed)]
    if reveal_envelope is not None:
        documents.append(check_reveal(reveal_envelope, signing_keys, commitment_doc))
    context = _pair_context(signing_keys, commitment_doc, reveal_doc, seed)
    rows = _check_rounds(context, envelopes, jobs, progress)
    rows, across = check_across_rounds(context, rows)
    findings.extend(across)
    receipts = [(opened or (None, ""))[0] for opened in map(_envelope, envelopes)]
    documents, rows, logged, settled, acted, bets, shown, dates = check_anchors(
        bundle,
        log_keys,
        (commitment_doc, reveal_doc),
        documents,
        receipts,
        rows,
        now or datetime.now(UTC),
        fetched_at,
    )
    rows = _with_player_checks(
        rows, envelopes, bundle, (log_keys, dates), commitment_doc, findings, (settled, acted, bets)
    )
    findings.extend(logged)
    if records is not None:
        documents[0] = compare_commitment(documents[0], commitment_doc, records, key)
        dealt = _dealt_client_seed(context, reveal_doc, rows)
        documents[0] = compare_client_seed(documents[0], context.seed_pair_id, dealt, records)
        rows = [_compared_round(row, envelopes, records) for row in rows]
        findings += missing_rounds(
            context.seed_pair_id,
            {row.round_id for row in rows},
            records,
            revealed=reveal_doc is not None,
        )
    return Report(
        source=source,
        public_key_hex=key,
        seed_pair_id=commitment_doc.get("seed_pair_id"),
        user_id=commitment_doc.get("user_id"),
        revealed=reveal_doc is not None,
        documents=tuple(documents),
        rounds=tuple(rows),
        bundle_findings=tuple(findings),
        trust=trust,
        trust_note=note,
        log=shown,
    )


def _trusted_key(
    bundle: Mapping[str, Any], bundle_key: str, trusted: str | None
) -> tuple[str, str, str, list[Finding]]:
    """Return the key to check signatures with, how it is trusted, what to say about it, and
    the bundle's finding if it names a key that is not the trusted one."""
    if trusted is None:
        return bundle_key, TRUST_UNPINNED, f"UNPINNED: {UNPINNED_MEANING}.", []
    if trusted == bundle_key:
        return trusted, TRUST_PINNED, "", []
    chain = successor_chain(trusted, bundle_key, bundle.get("key_changes"))
    if chain is not None:
        note = (
            f"KEY CHANGED: the bundle's key {short(bundle_key)} succeeds the trusted key "
            f"{short(trusted)} by key changes each signed by the key it retires "
            f"({describe_chain(chain)})."
        )
        return bundle_key, TRUST_SUCCESSOR, note, []
    refusal = Finding(
        "bundle",
        "signature",
        FAIL,
        f"KEY CHANGED: the bundle names public key {short(bundle_key)}, not the trusted key "
        f"{short(trusted)}, and no chain of key changes, each signed by the key it retires, "
        "leads there from the trusted key (none leads on from a key handed on twice, or on a "
        "loop): refused. Signatures are checked against the trusted key.",
    )
    return trusted, TRUST_PINNED, "", [refusal]


def _refused_key_findings(key: str, key_changes: object) -> list[Finding]:
    """The bundle's findings of refused keys: a weak key
    (:func:`..core.fairness.weak_key_problem`) the signatures are checked against, which then
    signs nothing, and the key changes that are not followed (:func:`.refused_key_changes`)."""
    problem = weak_key_problem(bytes.fromhex(key))
    checked = [f"the key {short(key)} is {problem}; it signs nothing"] if problem else []
    return [
        Finding("bundle", "signature", FAIL, message)
        for message in [*checked, *refused_key_changes(key_changes)]
    ]


def _keys_of(
    bundle: Mapping[str, Any], key: str, trusted: str | None
) -> tuple[list[str], list[str]]:
    """Return the keys whose checkpoints prove the log, and the keys the documents may be
    signed by, the checked ``key`` first in both.

    The log's keys are the checked key and the keys its chain of key changes from the trusted
    key retired (a checkpoint signed before a change, or by a process not yet restarted, is
    signed by the retired key). A document is signed by the key in use when it was made: one of
    those, or a key the trusted key succeeded by a key change its own signed log proves
    (:func:`.logged_predecessors`); never one the old key alone calls its predecessor.
    """
    if trusted is None:
        return [key], [key]
    chain = successor_chain(trusted, key, bundle.get("key_changes"))
    log_keys = [key, *(change["old_public_key_hex"] for change in chain or ())]
    earlier = logged_predecessors(trusted, bundle.get("key_changes"), log_keys)
    return log_keys, [*log_keys, *(old for old in earlier if old not in log_keys)]


def _with_player_checks(
    rows: list[Row],
    envelopes: Sequence[object],
    bundle: Mapping[str, Any],
    log: tuple[Sequence[str], PendingDates],
    commitment_doc: Mapping[str, Any],
    findings: list[Finding],
    logged_at: tuple[Mapping[Any, int], Mapping[Any, Sequence[int]], Mapping[Any, int]],
) -> list[Row]:
    """Check every signed action against the player's keys registered in the bundle's log
    entries (:mod:`.player_signatures`), proved into checkpoints signed by one of the log's
    keys (``log``, as the documents' anchors are; a registration still pending is held to the
    bound as a pending document is, by the log's ``PendingDates``), and where the log took
    each round's settlement and actions (``logged_at``: the settlement's seq, and the actions'
    seqs in the log's order, and the bet's seq, by round id); the registrations' own problems
    go to ``findings``."""
    user_id = commitment_doc.get("user_id")
    keys, problems = registered_keys(bundle.get("player_keys"), user_id, *log)
    findings.extend(problems)
    documents = [
        opened[0] if row.index is not None and (opened := _envelope(envelopes[row.index])) else None
        for row in rows
    ]
    settled, acted, bets = logged_at
    return with_player_findings(rows, documents, keys, settled, acted, user_id=user_id, bets=bets)


def _dealt_client_seed(
    context: PairContext, reveal_doc: Mapping[str, Any] | None, rows: Sequence[Row]
) -> str | None:
    """The client seed the pair deals with: the reveal's, or before the reveal the one its
    receipts share (the most common: check 3 fails the others)."""
    if reveal_doc is not None:
        return context.client_seed
    seeds = Counter(row.client_seed for row in rows if isinstance(row.client_seed, str))
    return seeds.most_common(1)[0][0] if seeds else None


def _compared_round(row: Row, envelopes: Sequence[object], records: Records) -> Row:
    opened = _envelope(envelopes[row.index]) if row.index is not None else None
    return row if opened is None else compare_round(row, opened[0], records)


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


# --- bundles given together ---------------------------------------------------------------------

#: A signed document of a bundle: what it is the one document of (``the receipt of round 17``),
#: the sha256 of its canonical bytes, and its row (``documents`` or ``rounds``, position).
SignedDocument = tuple[str, str, str, int]


#: The name only one pair's commitment document may have besides its pair's: the pair committed
#: to a commitment (``sha256`` of the server seed, check 2), followed by it in hex.
COMMITTED_TO: Final = "the seed pair committed to "
#: How a pair's commitment document is named, followed by ``seed pair P``.
COMMITMENT_OF: Final = "the commitment document of "


def signed_documents(bundle: object, report: Report) -> list[SignedDocument]:
    """Each document of a verified bundle whose signature passed, under every name that only
    one document may have: a pair's commitment and reveal, a round's receipt, a pair's nonce,
    and the pair committed to a server seed (one seed serves one pair: committed for two, its
    reveal for either tells every shuffle of the other in advance)."""
    _, commitment, reveal, envelopes = _bundle_parts(bundle)
    found: list[SignedDocument] = []
    for rows, position, row in (
        *(("documents", i, row) for i, row in enumerate(report.documents)),
        *(("rounds", i, row) for i, row in enumerate(report.rounds)),
    ):
        envelope = {"commitment": commitment, "reveal": reveal}.get(row.where)
        if row.where == "round" and row.index is not None:
            envelope = envelopes[row.index]
        opened = _envelope(envelope)
        if opened is None or row.statuses["signature"] != PASS:
            continue
        doc = opened[0]
        digest = hashlib.sha256(canonical_json(doc)).hexdigest()
        pair = f"seed pair {doc.get('seed_pair_id')}"
        names = (
            [f"the receipt of round {doc.get('round_id')}", f"nonce {doc.get('nonce')} of {pair}"]
            if row.where == "round"
            else [f"the {row.where} document of {pair}"]
        )
        if row.where == "commitment":
            names.append(f"{COMMITTED_TO}{doc.get('commitment')}")
        found += [(name, digest, rows, position) for name in names]
    return found


#: Where a digest of the player's records came from, in an equivocation's finding.
RECORDS_SOURCE: Final = "the records"


def with_equivocations(
    reports: Sequence[Report],
    signed: Sequence[Sequence[SignedDocument]],
    recorded: Mapping[str, Iterable[str]] | None = None,
) -> list[Report]:
    """Fail every document that another bundle given with it contradicts: two documents signed
    for one pair's commitment or reveal, one round or one nonce are the casino's own proof that
    it rewrote one of them (each bundle alone may pass every check). Both are named. Two pairs'
    commitment documents committed to one server seed fail both, each naming the other pair
    (:func:`_seed_reused`); one pair's two commitment documents are an equivocation already.

    :param recorded: the digests by name of the documents the player's browser verified
        (:attr:`.Records.verified`): they take part as one more bundle, ``the records``.
    """
    holders: dict[str, dict[str, str]] = {  # name -> digest -> the first bundle holding it
        name: dict.fromkeys(digests, RECORDS_SOURCE) for name, digests in (recorded or {}).items()
    }
    for report, documents in zip(reports, signed, strict=True):
        for name, digest, _, _ in documents:
            holders.setdefault(name, {}).setdefault(digest, report.source)
    compared = []
    for report, documents in zip(reports, signed, strict=True):
        extra: dict[tuple[str, int], dict[str, Finding]] = {}
        for name, digest, rows, position in documents:
            row = getattr(report, rows)[position]
            for other, source in holders[name].items():
                if other != digest and name.startswith(COMMITTED_TO):
                    reused = _seed_reused(name, (digest, other), report.source, source, holders)
                    if reused is not None:
                        extra.setdefault((rows, position), {})[f"seed {other}"] = Finding(
                            row.where, "commitment", FAIL, reused, row.index
                        )
                elif other != digest:
                    # A receipt differs under its round and its nonce alike: named once.
                    extra.setdefault((rows, position), {}).setdefault(
                        other,
                        Finding(
                            row.where,
                            "signature",
                            FAIL,
                            f"equivocation: {name} in {report.source} differs from the one in "
                            f"{source}, both signed (sha256 {short(digest)} and "
                            f"{short(other)}): one of them is a rewrite",
                            row.index,
                            row.round_id,
                            row.nonce,
                        ),
                    )
        compared.append(
            dataclasses.replace(
                report,
                documents=_with_extra(report.documents, "documents", extra),
                rounds=_with_extra(report.rounds, "rounds", extra),
            )
            if extra
            else report
        )
    return compared


def _seed_reused(
    name: str,
    digests: tuple[str, str],
    here: str,
    there: str,
    holders: Mapping[str, Mapping[str, str]],
) -> str | None:
    """What to say of two commitment documents (``digests``: this one's, in ``here``, and the
    other, in ``there``) committed to one server seed, the pair of each found under its
    commitment document's name; None when both are of one pair."""
    mine, other = (
        next(
            (
                held[len(COMMITMENT_OF) :]
                for held, by_digest in holders.items()
                if held.startswith(COMMITMENT_OF) and digest in by_digest
            ),
            "another seed pair",
        )
        for digest in digests
    )
    if mine == other:
        return None
    return (
        f"seed reused: {mine} in {here} is committed to the server seed of {other} in {there} "
        f"(commitment {short(name[len(COMMITTED_TO) :])}), both signed: a server seed serves one "
        "pair, and revealed for either it tells every shuffle of the other in advance"
    )


def _with_extra(
    rows: Sequence[Row], name: str, extra: Mapping[tuple[str, int], Mapping[str, Finding]]
) -> tuple[Row, ...]:
    return tuple(
        row.with_findings(list(extra.get((name, i), {}).values())) for i, row in enumerate(rows)
    )


def with_forked_logs(reports: Sequence[Report]) -> list[Report]:
    """Fail every bundle whose signed log another bundle given with it contradicts: the service
    signs one checkpoint a size, never one over more entries dated before one over fewer, and
    its log holds one entry at each seq. Two bundles each anchored in a log of its own pass
    alone (a split view: each player, or each of a player's pairs, shown another history);
    together, their checkpoints or entries are the casino's own signed proof of it. Only the
    bundles checked against one service's keys are compared: all of them under a trusted key,
    and unpinned ones by the key each carries."""

    def service(report: Report) -> str:
        return report.public_key_hex if report.unpinned else ""

    compared = []
    for report in reports:
        others = [o for o in reports if o is not report and service(o) == service(report)]
        found = [
            Finding("bundle", "log", FAIL, f"{message} ({report.source}; {other.source})")
            for other in others
            for message in _contradictions(report.log, other.log)
        ]
        compared.append(
            dataclasses.replace(report, bundle_findings=(*report.bundle_findings, *found))
            if found
            else report
        )
    return compared


def _contradictions(mine: SignedLog, theirs: SignedLog) -> list[str]:
    """How the log ``theirs`` shows contradicts the log ``mine`` shows (``core.anchors``:
    :func:`~..core.anchors.twin_checkpoints`, :func:`~..core.anchors.backdated_checkpoints`,
    :func:`~..core.anchors.twin_entries`, the first seq where they part), each once, the rule's
    own findings within either bundle left to that bundle."""
    found: list[str] = []
    by_size = {doc["size"]: doc for doc in theirs.checkpoints}
    for doc in mine.checkpoints:
        twin = by_size.get(doc["size"])
        if twin is not None and (twin["root"], twin["time"]) != (doc["root"], doc["time"]):
            found.append(anchors.twin_checkpoints(doc, twin))
    alone = {
        *anchors.backdated_checkpoints(mine.checkpoints),
        *anchors.backdated_checkpoints(theirs.checkpoints),
    }
    found += [
        message
        for message in anchors.backdated_checkpoints([*mine.checkpoints, *theirs.checkpoints])
        if message not in alone
    ]
    hashes = {entry["seq"]: entry["hash"] for entry in theirs.entries}
    forked = [
        entry for entry in mine.entries if hashes.get(entry["seq"], entry["hash"]) != entry["hash"]
    ]
    if forked:  # the first place the two logs part is named, as the log's own check names it
        first = min(forked, key=lambda entry: int(entry["seq"]))
        found.append(anchors.twin_entries(first["seq"], first["hash"], hashes[first["seq"]]))
    return list(dict.fromkeys(found))
