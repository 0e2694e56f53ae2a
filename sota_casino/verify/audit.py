"""The offline check of an audit log export: the hash chain, that no pair or round is logged
again under a key already taken, each checkpoint's signature (by the key in use at that point
of the log, following its key changes from the trusted key) and Merkle root, the
consistency between checkpoints, and the checkpoints a witness kept (``--checkpoint``): an
operator holding the key and the database can cut off or rewrite the log and sign every
checkpoint of the export anew, which only a checkpoint kept outside shows."""

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


@dataclass(frozen=True, slots=True)
class KeptCheckpoint:
    """A checkpoint a witness kept, held to the export: ``problem`` is ``None`` when the
    export's first ``size`` entries have its root."""

    source: str
    document: Mapping[str, Any]
    problem: str | None
    #: How many other checkpoints its file lists that no key of the export's chain signed.
    unsigned_beside: int = 0

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
        an answer of the public log, a bundle), each held to the export's entries: an export
        whose every checkpoint the operator signed anew passes alone, cut off or rewritten.
    :raises monitor.Unusable: if a file of ``kept`` cannot be read or holds no checkpoint a key
        of the export's chain signed, or if the export is of a range (whose first entries are
        not there to take a root over).
    """
    if export.is_range:
        if kept:
            raise Unusable(
                f"{source} is the export of a range: a kept checkpoint is held to the export of "
                "the whole log, from its first entry"
            )
        return _verify_range(export, public_key_hex, source)
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
    (:func:`anchors.key_problem`), as a broken link would fail it: the first bad entry and why.

    :param whole: the entries are the whole log, from its first (a range's rounds and pairs
        may have begun before it).
    """
    pairs = anchors.PairsInPlay(from_start=whole)
    found = anchors.first_key_problem(entries, pairs=pairs) if chain.ok else None
    if found is None:
        return chain
    seq, reason = found
    position = next(i for i, entry in enumerate(entries) if entry["seq"] == seq)
    head = entries[position - 1]["hash"] if position else entries[0]["prev_hash"]
    return audit_chain.ChainReport(False, chain.size, seq, reason, head)


def _verify_range(export: audit_chain.AuditExport, public_key_hex: str, source: str) -> AuditReport:
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
    return AuditReport(source, chain, export.checkpoints, report, start, covered)


def render_audit(report: AuditReport, symbols: Symbols) -> list[str]:
    """Return the human-readable lines of an audit export's report."""
    marks, chain = symbols.marks, report.chain
    lines = [
        f"Audit export {report.source}: {chain.size} entries, {len(report.checkpoints)} checkpoints"
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
        verdict = (
            f"{marks[PASS]}  the export holds it"
            if kept.problem is None
            else f"{marks[FAIL]}  the export does not hold it"
        )
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
