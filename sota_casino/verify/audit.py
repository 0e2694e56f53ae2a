"""The offline check of an audit log export: the hash chain, that no pair or round is logged
again under a key already taken nor two pairs committed to one server seed, that each pair's
reveal is of the server seed its commitment entry is to, each checkpoint's signature (by the key
in use at that point of the log, following its key changes from the trusted key) and Merkle
root, the consistency between checkpoints, and the checkpoints a witness kept
(``--checkpoint``): an operator holding the key and the database can cut off or rewrite the log
and sign every checkpoint of the export anew, which only a checkpoint kept outside shows. The
export of a range is held to a kept checkpoint by the consistency proof it carries from the
kept size to the checkpoint that vouches for the range."""

from __future__ import annotations

import sys
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..core import anchors
from ..core import audit_chain
from ..core import merkle
from ..core.fairness import KEY_CHANGED
from ..core.fairness import is_hex64
from .monitor import Unusable
from .monitor import published_checkpoints
from .report import EXIT_FAILED
from .report import EXIT_OK
from .report import FAIL
from .report import PASS
from .report import Symbols
from .report import short
from .report import table
from .trust import logged_predecessors
from .trust import signed_key_change

#: Why a range fails a kept checkpoint whose root the consistency proof does not lead from.
FORKED = (
    "the log the range is proven into does not extend the kept checkpoint: it was rewritten or "
    "forked"
)


@dataclass(frozen=True, slots=True)
class KeptCheckpoint:
    """A checkpoint a witness kept, held to the export: ``problem`` is ``None`` when the
    export's first ``size`` entries have its root, or (the export of a range) when the
    consistency proof the export carries leads from its root to the vouching checkpoint's."""

    source: str
    document: Mapping[str, Any]
    problem: str | None
    #: How many other checkpoints its file lists that no key of the export's chain signed.
    unsigned_beside: int = 0
    #: The export of a range: ``{"old_size", "new_size", "new_root", "ok"}``, the consistency
    #: proof checked from this checkpoint to the one vouching for the range (``new_size`` and
    #: ``new_root`` ``None`` when no checkpoint of the export that passed is proven into).
    consistency: Mapping[str, Any] | None = None

    def described(self) -> str:
        doc = self.document
        return f"size {doc['size']} root {short(doc['root'])} at {doc['time']}"


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The result of checking an audit log export."""

    source: str
    chain: audit_chain.ChainReport
    checkpoints: tuple[Mapping[str, Any], ...]
    checkpoint_report: audit_chain.CheckpointReport
    #: For the export of a range: its first seq and the last seq a proven checkpoint covers.
    range_first: int | None = None
    range_covered: int = 0
    #: The checkpoints a witness kept, each held to the export's entries.
    kept: tuple[KeptCheckpoint, ...] = ()
    #: The checks each checkpoint failed, by its index: asked for each checkpoint, so read from
    #: the problems once rather than once per checkpoint.
    failed_checks: Mapping[int, frozenset[str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        failed: dict[int, set[str]] = {}
        for problem in self.checkpoint_report.problems:
            failed.setdefault(problem.index, set()).add(problem.check)
        checks = {index: frozenset(names) for index, names in failed.items()}
        object.__setattr__(self, "failed_checks", checks)

    @property
    def ok(self) -> bool:
        return (
            self.chain.ok
            and self.checkpoint_report.ok
            and all(kept.problem is None for kept in self.kept)
        )

    @property
    def last_seq(self) -> int:
        return (self.range_first or 1) + self.chain.size - 1

    @property
    def uncovered(self) -> int:
        """How many entries no checkpoint covers yet (after the largest good checkpoint)."""
        if self.range_first is not None:
            return self.last_seq - max(self.range_covered, self.range_first - 1)
        sizes = [
            cp["document"]["size"]
            for i, cp in enumerate(self.checkpoints)
            if i not in self.failed_checks
        ]
        return max(0, self.chain.size - max(sizes, default=0))

    def failures(self) -> list[str]:
        """Return every failure as one line."""
        lines = [] if self.chain.ok else [f"chain: {self.chain.reason}"]
        lines.extend(f"checkpoints: {p.message}" for p in self.checkpoint_report.problems)
        lines.extend(
            f"kept: {kept.source}: {kept.problem}" for kept in self.kept if kept.problem is not None
        )
        return lines

    def checkpoint_statuses(self, index: int) -> dict[str, str]:
        failed = self.failed_checks.get(index, frozenset())
        if "format" in failed:
            return {check: FAIL for check in ("signature", "root", "consistency")}
        return {c: FAIL if c in failed else PASS for c in ("signature", "root", "consistency")}

    def to_dict(self) -> dict[str, Any]:
        chain = self.chain
        return {
            "source": self.source,
            "ok": self.ok,
            "range": (
                None
                if self.range_first is None
                else {"first_seq": self.range_first, "last_seq": self.last_seq}
            ),
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
            "kept_checkpoints": [
                {
                    "source": kept.source,
                    "size": kept.document["size"],
                    "root": kept.document["root"],
                    "time": kept.document["time"],
                    "ok": kept.problem is None,
                    "message": kept.problem,
                    "unsigned_beside": kept.unsigned_beside,
                    "consistency": None if kept.consistency is None else dict(kept.consistency),
                }
                for kept in self.kept
            ],
            "findings": [
                {"check": p.check, "checkpoint": p.index + 1, "message": p.message}
                for p in self.checkpoint_report.problems
            ]
            + [
                {"check": "kept", "source": kept.source, "message": kept.problem}
                for kept in self.kept
                if kept.problem is not None
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


def read_export(path: str) -> audit_chain.AuditExport:
    """Read and parse an export file (``-``: standard input).

    JSON Lines separates records at ``\\n`` only: a client seed, a username or a reason may hold
    U+2028, U+2029, U+0085 or the other characters ``str.splitlines`` also breaks at, and
    ``ensure_ascii=False`` writes them as they are.

    :raises OSError, UnicodeDecodeError, audit_chain.ExportFormatError: if it is unusable.
    """
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        data = Path(path).read_bytes()  # bytes: no newline translation of any kind
    return audit_chain.parse_export_text(data.decode("utf-8"))


def verify_audit_export(
    export: audit_chain.AuditExport,
    public_key_hex: str,
    *,
    source: str = "export",
    kept: Sequence[str] = (),
) -> AuditReport:
    """Check the hash chain of the entries, their keys, and every checkpoint of an export.

    The export of a range starts its chain at its first entry's ``prev_hash`` (that hash is
    part of the entry's own hash, so it cannot be swapped) and ties each checkpoint to the
    range with the inclusion proof it carries; its keys are checked among its own entries
    (the ones before it are not there to compare with).

    :param kept: files holding checkpoints a witness kept (the monitor's ``checkpoint.json``,
        an answer of the public log, a bundle), each held to the export's entries (the export
        of a range: by the consistency proof it carries from the kept size to the checkpoint
        vouching for it): an export whose every checkpoint the operator signed anew passes
        alone, cut off or rewritten.
    :raises monitor.Unusable: if a file of ``kept`` cannot be read or holds no checkpoint a key
        of the export's chain signed, or if the export is of a range and carries no
        consistency proof from a kept checkpoint's size (it was not asked for with ``kept=``),
        or no checkpoint at all.
    """
    if export.is_range:
        return _verify_range(export, public_key_hex, source, kept)
    linked, tree = audit_chain.verify_chain_with_tree(export.entries)  # once: it hashes every entry
    chain = _keys_checked(linked, export.entries, whole=True)
    keys = _keys_in_use(export, public_key_hex, whole_tree=tree if chain.ok else None)
    checkpoints = audit_chain.verify_checkpoints(
        export.entries, export.checkpoints, keys, tree=tree
    )
    held = _held_to_kept(export, tree, tuple(keys(sys.maxsize)), kept)
    return AuditReport(source, chain, export.checkpoints, checkpoints, kept=held)


def _held_to_kept(
    export: audit_chain.AuditExport,
    tree: merkle.MerkleTree,
    keys: tuple[str, ...],
    paths: Sequence[str],
) -> tuple[KeptCheckpoint, ...]:
    """Hold each checkpoint of ``paths`` (signed by one of ``keys``) to the export's entries:
    the root of its first ``size`` entry hashes must be the kept root, and the export must hold
    that many entries. Either is evidence with the kept checkpoint: the export's own
    checkpoints, signed over the entries as they are now, and the one kept, signed before."""
    held = []
    for path in paths:
        checkpoints, unsigned = published_checkpoints(path, keys)
        for envelope in checkpoints:
            doc = envelope["document"]
            size, root = doc["size"], doc["root"]
            what = f"the checkpoint over {size} entries (root {root}, {doc['time']})"
            problem = None
            if size > len(export.entries):
                problem = (
                    f"{what}: the export holds {len(export.entries)} entries, fewer than it "
                    "covers: entries were cut off the end of the log since it was kept"
                )
            elif size > tree.size:
                problem = f"{what}: the export's entries up to it do not all have a hash"
            elif (mine := tree.root(size).hex()) != root:
                problem = (
                    f"{what}: the export's first {size} entries have the root {mine}: the log "
                    "was rewritten since the checkpoint was kept"
                )
            held.append(KeptCheckpoint(path, doc, problem, unsigned))
    return tuple(held)


def _keys_in_use(
    export: audit_chain.AuditExport, trusted: str, *, whole_tree: merkle.MerkleTree | None
) -> Callable[[int], list[str]]:
    """Return the keys a checkpoint over the first ``size`` entries may be signed by: the key
    in use at that point of the log, or a key it replaced (a process not yet restarted after
    ``flask keys rotate`` signs with the retired key), never a key taken into use later.

    The keys are the ones the log's ``key.changed`` entries lead through, each change signed by
    the key it retires: from the trusted key on, each change from the key in use; and before
    it, the keys the trusted key succeeded as the log proves them, by a checkpoint of the
    trusted key or a key after it over the change (:func:`.logged_predecessors`, the bundles'
    rule). A change signed by anyone else moves no key.

    :param whole_tree: the Merkle tree of the export's entries when it is the whole log, its chain
        intact, so the changes into the trusted key can be proved into its checkpoints; ``None``
        for a range (its checkpoints prove one entry each, so a range follows the changes it
        holds from the trusted key only) or a broken chain.
    """
    changes = [
        (entry, doc)
        for entry in export.entries
        if entry.get("action") == KEY_CHANGED
        and type(entry.get("seq")) is int
        and isinstance(entry.get("data"), dict)
        and (doc := signed_key_change(entry["data"].get("key_change"))) is not None
    ]
    taken: dict[tuple[str, str], int] = {}  # (old key, new key) -> the seq of the change
    for entry, doc in reversed(changes):  # the first change of a pair of keys counts
        taken[(doc["old_public_key_hex"], doc["new_public_key_hex"])] = entry["seq"]
    forward = [trusted]
    for _, doc in changes:
        if doc["old_public_key_hex"] == forward[-1] and doc["new_public_key_hex"] not in forward:
            forward.append(doc["new_public_key_hex"])
    proved = [] if whole_tree is None else _changes_proved(export, changes, forward, whole_tree)
    earlier = logged_predecessors(trusted, proved, forward)
    chain = [*reversed(earlier), *forward]
    since = {chain[0]: 0} | {new: taken[(old, new)] for old, new in pairwise(chain)}
    return lambda size: [key for key in chain if since[key] <= size]


def _changes_proved(
    export: audit_chain.AuditExport,
    changes: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    forward: Sequence[str],
    tree: merkle.MerkleTree,
) -> list[dict[str, Any]]:
    """The signed key changes into keys before ``forward``, as a bundle carries them: each with
    its entry and an inclusion proof, computed from the entries (their ``tree``), into each
    checkpoint over it (whichever of them proves it, if any, is for
    :func:`.logged_predecessors` to tell)."""
    wanted = [(e, d) for e, d in changes if d["new_public_key_hex"] not in forward[1:]]
    if not wanted:
        return []
    proved = []
    for checkpoint in export.checkpoints:
        if audit_chain.checkpoint_shape_problem(checkpoint) is not None:
            continue
        size = checkpoint["document"]["size"]
        for entry, _ in wanted:
            if entry["seq"] <= size <= tree.size:
                proof = [node.hex() for node in tree.inclusion_proof(entry["seq"] - 1, size)]
                anchor = {"leaf_index": entry["seq"] - 1, "checkpoint_size": size, "proof": proof}
                proved.append(
                    {**entry["data"]["key_change"], "entry": entry}
                    | {"anchor": anchor, "checkpoint": checkpoint}
                )
    return proved


def _keys_checked(
    chain: audit_chain.ChainReport, entries: Sequence[Mapping[str, Any]], *, whole: bool
) -> audit_chain.ChainReport:
    """The chain's report, failed at the first entry that takes a key an earlier entry took
    (:func:`anchors.key_problem`), or commits a pair to the server seed an earlier entry
    committed another pair to (:func:`anchors.seed_reused`), or reveals another server seed
    than its pair's commitment entry is to (:func:`anchors.other_seed_revealed`), as a broken
    link would fail it: the first bad entry and why.

    :param whole: the entries are the whole log, from its first (a range's rounds and pairs
        may have begun before it, and its pairs' commitments are compared among its own, its
        reveals with the commitments it holds).
    """
    if not chain.ok:
        return chain
    pairs = anchors.PairsInPlay(from_start=whole)
    found = anchors.first_found(
        anchors.first_key_found(entries, pairs=pairs),
        anchors.seed_reused(entries, anchors.committed_in(entries)),
        anchors.other_seed_revealed(entries, anchors.commitments_in(entries)),
    )
    if found is None:
        return chain
    seq, problem = found
    position = next(i for i, entry in enumerate(entries) if entry["seq"] == seq)
    head = entries[position - 1]["hash"] if position else entries[0]["prev_hash"]
    return audit_chain.ChainReport(False, chain.size, seq, problem.text(), head, problem)


def _verify_range(
    export: audit_chain.AuditExport, public_key_hex: str, source: str, kept: Sequence[str] = ()
) -> AuditReport:
    first = export.entries[0] if export.entries else {}
    start = first.get("seq")
    start = start if isinstance(start, int) and not isinstance(start, bool) and start > 0 else 1
    prev = first.get("prev_hash")
    chain = audit_chain.verify_chain(
        export.entries,
        start_seq=start,
        prev_hash=prev if isinstance(prev, str) else audit_chain.GENESIS_HASH,
    )
    keys = _keys_in_use(export, public_key_hex, whole_tree=None)
    report, covered = audit_chain.verify_range_checkpoints(
        export.entries if chain.ok else (), export.checkpoints, export.proofs, keys
    )
    chain = _keys_checked(chain, export.entries, whole=False)
    held = _held_by_consistency(export, report, tuple(keys(sys.maxsize)), kept, source)
    return AuditReport(source, chain, export.checkpoints, report, start, covered, held)


def _held_by_consistency(
    export: audit_chain.AuditExport,
    report: audit_chain.CheckpointReport,
    keys: tuple[str, ...],
    paths: Sequence[str],
    source: str,
) -> tuple[KeptCheckpoint, ...]:
    """Hold each checkpoint of ``paths`` (signed by one of ``keys``) to the export of a range:
    a consistency proof it carries from the kept size to the size of one of its checkpoints
    that passed (signed, and the range proven into it) must lead from the kept root to that
    checkpoint's root. It then vouches for the range in a log that extends the kept one.

    :raises Unusable: for a kept checkpoint the export carries no consistency proof from.
    """
    if not paths:
        return ()
    if not export.checkpoints:
        raise Unusable(
            f"{source} is the export of a range no checkpoint covers yet: nothing in it can be "
            "held to a kept checkpoint"
        )
    failed = {problem.index for problem in report.problems}
    vouching = {
        envelope["document"]["size"]: envelope["document"]
        for index, envelope in enumerate(export.checkpoints)
        if index not in failed and audit_chain.checkpoint_shape_problem(envelope) is None
    }
    held = []
    for path in paths:
        checkpoints, unsigned = published_checkpoints(path, keys)
        for envelope in checkpoints:
            doc = envelope["document"]
            size = doc["size"]
            steps = [
                step
                for step in export.consistency
                if type(step.get("old_size")) is int and step["old_size"] == size
            ]
            if not steps:
                raise Unusable(
                    f"{source} carries no consistency proof from the checkpoint over {size} "
                    f"entries in {path} to the checkpoint that vouches for the range: ask for "
                    f"the export with kept={size}"
                )
            problem, consistency = _consistency_held(doc, steps, vouching)
            held.append(KeptCheckpoint(path, doc, problem, unsigned, consistency))
    return tuple(held)


def _consistency_held(
    doc: Mapping[str, Any],
    steps: Sequence[Mapping[str, Any]],
    vouching: Mapping[int, Mapping[str, Any]],
) -> tuple[str | None, dict[str, Any]]:
    """Verify the consistency proofs ``steps`` from kept checkpoint ``doc`` into a vouching
    checkpoint: ``(None, …)`` when one leads from its root to that checkpoint's root, else the
    problem; and what was checked, for the report."""
    size, root = doc["size"], doc["root"]
    what = f"the checkpoint over {size} entries (root {root}, {doc['time']})"
    into = [
        (step, vouching[step["new_size"]])
        for step in steps
        if type(step.get("new_size")) is int and step["new_size"] in vouching
    ]
    if not into:
        unheld = (
            f"{what}: the export's consistency proof from it leads to no checkpoint of the "
            "export that passed, so nothing holds the range to it"
        )
        return unheld, {"old_size": size, "new_size": None, "new_root": None, "ok": False}
    problem: str | None = None
    for step, target in into:
        new_size, new_root = target["size"], target["root"]
        checked = {"old_size": size, "new_size": new_size, "new_root": new_root}
        path = step.get("proof")
        if not isinstance(path, list) or not all(is_hex64(p) for p in path):
            problem = f"{what}: its consistency proof is not a list of 64-hex hashes"
            continue
        nodes = [bytes.fromhex(p) for p in path]
        if merkle.verify_consistency(
            size, new_size, bytes.fromhex(root), bytes.fromhex(new_root), nodes
        ):
            return None, checked | {"ok": True}
        problem = (
            f"{what}: the consistency proof from it to the export's checkpoint over {new_size} "
            f"entries (root {new_root}) fails: {FORKED}"
        )
    return problem, checked | {"ok": False}


def render_audit(report: AuditReport, symbols: Symbols) -> list[str]:
    """Return the human-readable lines of an audit export's report."""
    marks, chain = symbols.marks, report.chain
    signed = len(report.checkpoints)
    lines = [
        f"Audit export {report.source}: {chain.size} entr{'y' if chain.size == 1 else 'ies'}, "
        f"{signed} checkpoint{'' if signed == 1 else 's'}"
    ]
    first = report.range_first or 1
    if chain.ok:
        lines.append(
            f"  chain {marks[PASS]}  entries {first}..{report.last_seq} linked, "
            f"head {short(chain.head_hash)}"
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
        lines += ["  " + line for line in table(header, rows)]
    for kept in report.kept:
        verdict = _kept_verdict(kept, marks)
        beside = (
            f" (also in it: {kept.unsigned_beside} checkpoints not signed by a key of the "
            "export, not compared)"
            if kept.unsigned_beside
            else ""
        )
        lines.append(f"  kept checkpoint {kept.source}: {kept.described()} {verdict}{beside}")
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


def _kept_verdict(kept: KeptCheckpoint, marks: Mapping[str, str]) -> str:
    """What the line of a kept checkpoint says after it: held by the entries, or (a range) by
    the consistency proof into the checkpoint vouching for the range."""
    if kept.consistency is None:
        if kept.problem is None:
            return f"{marks[PASS]}  the export holds it"
        return f"{marks[FAIL]}  the export does not hold it"
    if kept.problem is None:
        return (
            f"{marks[PASS]}  the log the range is proven into extends it (consistency proof to "
            f"the checkpoint over {kept.consistency['new_size']} entries)"
        )
    if kept.consistency["new_size"] is not None and FORKED in kept.problem:
        return f"{marks[FAIL]}  {FORKED}"
    return f"{marks[FAIL]}  the range is not held to it"
