"""The tamper-evident audit log: entry hashing, the hash chain, signed Merkle checkpoints.

An entry is ``{"seq", "time", "actor", "action", "subject", "data"}`` with ``seq`` counting
1, 2, 3, ... without gaps. It is stored with ``prev_hash`` (the hash of the entry before it, or
:data:`GENESIS_HASH` for the first) and ``hash = sha256(bytes.fromhex(prev_hash) ‖
canonical_json(entry)).hexdigest()``, so changing, removing, reordering or inserting an entry
breaks the chain at that entry. Checkpoints sign ``{size, root, time}`` where ``root`` is the
RFC 6962 Merkle root (:mod:`.merkle`) over the first ``size`` entry hashes: they pin the log,
so even a chain rewritten from some entry on no longer matches what was signed.

The JSON Lines export, shared by the service and the offline verifier, has one line per entry
``{"kind": "entry", "seq", "time", "actor", "action", "subject", "data", "prev_hash", "hash"}``
and then one line per checkpoint ``{"kind": "checkpoint", "document", "signature"}``, in the
order they were signed.

An export of a range of entries (seq ``a..b``) stands on its own: after its entries and the
checkpoint that covers them it carries ``{"kind": "proof", "seq", "size", "proof"}``, the RFC
6962 inclusion proof of its last covered entry in that checkpoint. Each entry's hash commits
to the one before it, so a proven last entry vouches for the whole chain back to ``a``
(:func:`verify_range_checkpoints`). Asked for with checkpoint sizes an auditor kept, it then
carries one ``{"kind": "consistency", "old_size", "new_size", "proof"}`` per kept size: the RFC
6962 consistency proof from the tree of the first ``old_size`` entries to the vouching
checkpoint's tree of ``new_size``, which holds the range to the kept checkpoint's root.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from . import merkle
from .fairness import canonical_json
from .fairness import parse_time
from .fairness import strict_json
from .fairness import verify_signature
from .fairness import weak_key_problem
from .marks import N_
from .marks import Nn_
from .marks import Problem

GENESIS_HASH: Final = "00" * 32
ENTRY_KEYS: Final = ("seq", "time", "actor", "action", "subject", "data")
LINK_KEYS: Final = ("prev_hash", "hash")
CHECKPOINT_TYPE: Final = "checkpoint"
ENTRY_KIND: Final = "entry"
CHECKPOINT_KIND: Final = "checkpoint"
PROOF_KIND: Final = "proof"
CONSISTENCY_KIND: Final = "consistency"

# What the chain check says of a broken link, as message ids: a check keeps the id and its
# params (a :class:`Problem`), its English is the report's ``reason``, and the console words it
# in the operator's language.
SEQ_TWICE: Final = N_(
    "seq %(seq)s appears twice (an inserted or repeated entry) where %(due)s was due"
)
SEQ_AFTER: Final = N_("entry %(seq)s is out of order: it comes after entry %(before)s")
SEQ_BEFORE: Final = N_("entries are out of order: entry %(seq)s comes before entry %(due)s")
ENTRY_MISSING: Final = N_(
    "entry %(due)s is missing (deleted): seq jumps from %(before)s to %(seq)s"
)
ENTRIES_MISSING: Final = N_(
    "entries %(due)s..%(last)s are missing (deleted): seq jumps from %(before)s to %(seq)s"
)
UNLINKED_FIRST: Final = N_("entry %(due)s: prev_hash does not link to the genesis hash")
UNLINKED: Final = N_("entry %(due)s: prev_hash does not link to entry %(before)s's hash")
HASH_CHANGED: Final = N_(
    "entry %(due)s: its hash does not match its contents (the entry was changed)"
)
#: An entry with no canonical JSON (a lone surrogate, a NaN), with what the encoder said.
UNHASHABLE: Final = N_("entry %(due)s has no canonical JSON (%(error)s): it hashes to nothing")
#: A malformed entry: ``shape`` is what :func:`entry_shape_problem` found malformed in it.
ENTRY_MALFORMED: Final = N_("entry %(due)s %(shape)s")
#: What :func:`entry_shape_problem` finds malformed in an entry, said of the entry ("entry 7
#: has no action"; the offline verifier says "it has no action").
NOT_AN_OBJECT: Final = N_("is not an object")
LACKS_FIELDS: Final = N_("lacks %(fields)s")
SEQ_NOT_INTEGER: Final = N_("has a seq that is not an integer")
TIME_MALFORMED: Final = N_("has a time not written as YYYY-MM-DDTHH:MM:SS.ffffffZ")
NAME_MALFORMED: Final = N_("has an %(field)s that is neither a string nor null")
NO_ACTION: Final = N_("has no action")
DATA_NOT_AN_OBJECT: Final = N_("has data that is not an object")
LINK_MALFORMED: Final = N_("has a %(field)s that is not 64 lower-case hex digits")

_HASH_HEX = re.compile(r"[0-9a-f]{64}")
_JSON_WHITESPACE: Final = " \t\r\n"


# --- entries and the chain ----------------------------------------------------------------


def canonical_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Return the six hashed fields of ``entry`` (any other keys, such as its links, dropped).

    :raises KeyError: if one of the six is missing.
    """
    return {key: entry[key] for key in ENTRY_KEYS}


def entry_hash(prev_hash: str, entry: Mapping[str, Any]) -> str:
    """Return ``sha256(bytes.fromhex(prev_hash) ‖ canonical_json(entry))`` as lower-case hex.

    :param entry: an entry; only its six fields of :data:`ENTRY_KEYS` are hashed.
    """
    return entry_digest(bytes.fromhex(prev_hash), entry).hex()


def entry_digest(prev_digest: bytes, entry: Mapping[str, Any]) -> bytes:
    """Return :func:`entry_hash` as raw bytes, given the previous hash as raw bytes."""
    return hashlib.sha256(prev_digest + canonical_json(canonical_entry(entry))).digest()


def linked_entry(prev_hash: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``entry``'s six fields with its ``prev_hash`` and ``hash``, ready to store."""
    fields = canonical_entry(entry)
    return {**fields, "prev_hash": prev_hash, "hash": entry_hash(prev_hash, fields)}


def link_entries(
    entries: Iterable[Mapping[str, Any]], prev_hash: str = GENESIS_HASH
) -> list[dict[str, Any]]:
    """Return ``entries`` chained one after another from ``prev_hash``."""
    chained = []
    for entry in entries:
        linked = linked_entry(prev_hash, entry)
        chained.append(linked)
        prev_hash = linked["hash"]
    return chained


def _is_hash_hex(value: object) -> bool:
    return isinstance(value, str) and _HASH_HEX.fullmatch(value) is not None


def _is_time(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parse_time(value)
    except ValueError:
        return False
    return True


def entry_shape_problem(entry: object, *, checked_hash: str | None = None) -> Problem | None:
    """Return what is malformed in a stored entry (with its links), or ``None`` if nothing.

    :param checked_hash: a hash already found well-formed (the entry before's, when reading a
        chain): a link equal to it is not matched against the pattern again.
    """
    if not isinstance(entry, Mapping):
        return Problem(NOT_AN_OBJECT)
    missing = [key for key in (*ENTRY_KEYS, *LINK_KEYS) if key not in entry]
    if missing:
        return Problem(LACKS_FIELDS, {"fields": ", ".join(missing)})
    seq = entry["seq"]
    if isinstance(seq, bool) or not isinstance(seq, int):
        return Problem(SEQ_NOT_INTEGER)
    if not _is_time(entry["time"]):
        return Problem(TIME_MALFORMED)
    for key in ("actor", "subject"):
        if entry[key] is not None and not isinstance(entry[key], str):
            return Problem(NAME_MALFORMED, {"field": key})
    if not isinstance(entry["action"], str) or not entry["action"]:
        return Problem(NO_ACTION)
    if not isinstance(entry["data"], Mapping):
        return Problem(DATA_NOT_AN_OBJECT)
    for key in LINK_KEYS:
        value = entry[key]
        if (checked_hash is None or value != checked_hash) and not _is_hash_hex(value):
            return Problem(LINK_MALFORMED, {"field": key})
    return None


@dataclass(frozen=True, slots=True)
class ChainReport:
    """The result of checking the hash chain.

    ``size`` is how many entries were given; ``head_hash`` the hash of the last entry before
    the first bad one (:data:`GENESIS_HASH` if there is none); ``found`` the ``reason`` as a
    message id and params.
    """

    ok: bool
    size: int
    first_bad_seq: int | None
    reason: str | None
    head_hash: str
    found: Problem | None = None


def _seq_problem(
    seq: int, expected: int, start_seq: int, entries: Sequence[Mapping[str, Any]]
) -> Problem:
    """Explain why an entry carries ``seq`` where ``expected`` was due (the entries before it
    carried ``start_seq`` up to ``expected - 1``)."""
    params = {"seq": seq, "due": expected, "before": expected - 1}
    if start_seq <= seq < expected:
        return Problem(SEQ_TWICE, params)
    if seq < expected:
        return Problem(SEQ_AFTER, params)
    if any(
        isinstance(e, Mapping) and isinstance(e.get("seq"), int) and e["seq"] == expected
        for e in entries
    ):
        return Problem(SEQ_BEFORE, params)
    if seq == expected + 1:
        return Problem(ENTRY_MISSING, params)
    return Problem(ENTRIES_MISSING, {**params, "last": seq - 1})


def verify_chain(
    entries: Sequence[Mapping[str, Any]],
    *,
    start_seq: int = 1,
    prev_hash: str = GENESIS_HASH,
) -> ChainReport:
    """Check that ``entries`` form an unbroken hash chain, and name the first bad entry.

    Each entry must carry the next sequence number, link to the hash of the entry before it
    (the first to ``prev_hash``), and hash to its stored ``hash``: an edited entry fails its
    hash, a deleted one leaves a gap in ``seq``, reordered or inserted ones break ``seq`` or
    the links.

    :param start_seq: the seq of the first entry given (1 for a whole log).
    :param prev_hash: the hash the first entry links to (:data:`GENESIS_HASH` for a whole log).
    """
    return _checked_chain(entries, start_seq, prev_hash)[0]


def verify_chain_with_tree(
    entries: Sequence[Mapping[str, Any]],
) -> tuple[ChainReport, merkle.MerkleTree]:
    """Return :func:`verify_chain` of a whole log and :func:`checkable_tree` of its entries,
    reading each entry's hash once: the entries the chain check passed are leaves as it hashed
    them, and only the ones from its first bad entry on are looked at again."""
    report, digests = _checked_chain(entries, 1, GENESIS_HASH)
    return report, checkable_tree(entries, checked=digests)


def _checked_chain(
    entries: Sequence[Mapping[str, Any]], start_seq: int, prev_hash: str
) -> tuple[ChainReport, list[bytes]]:
    """The chain's report, and the hashes (raw bytes) of the entries before its first bad one."""
    digests: list[bytes] = []
    head = prev_hash
    for position, entry in enumerate(entries):
        expected = start_seq + position
        previous = digests[-1] if digests else None
        found = _linked_digest(entry, expected, head, previous, start_seq, entries)
        if isinstance(found, Problem):
            report = ChainReport(False, len(entries), expected, found.text(), head, found)
            return report, digests
        digests.append(found)
        head = entry["hash"]
    return ChainReport(True, len(entries), None, None, head), digests


def _linked_digest(
    entry: Mapping[str, Any],
    expected: int,
    head: str,
    head_digest: bytes | None,
    start_seq: int,
    entries: Sequence[Mapping[str, Any]],
) -> bytes | Problem:
    """Return the entry's hash as raw bytes if it is the next link of the chain, else why not
    (as a message id and params).

    :param head_digest: ``head`` as raw bytes, as the previous entry's check computed it
        (``None`` for the first entry: its ``prev_hash`` is read from hex once it is checked).
    """
    shape = entry_shape_problem(entry, checked_hash=None if head_digest is None else head)
    if shape is not None:
        return Problem(ENTRY_MALFORMED, {"due": expected, "shape": shape})
    seq = entry["seq"]
    if seq != expected:
        return _seq_problem(seq, expected, start_seq, entries)
    params = {"due": expected, "before": expected - 1}
    if entry["prev_hash"] != head:
        return Problem(UNLINKED_FIRST if head == GENESIS_HASH else UNLINKED, params)
    try:
        digest = entry_digest(bytes.fromhex(head) if head_digest is None else head_digest, entry)
    except ValueError as exc:  # a lone surrogate, a NaN: no canonical bytes to hash
        return Problem(UNHASHABLE, {"due": expected, "error": str(exc)})
    if digest.hex() != entry["hash"]:
        return Problem(HASH_CHANGED, params)
    return digest


# --- checkpoints --------------------------------------------------------------------------


def checkpoint_document(size: int, root_hex: str, time: str) -> dict[str, Any]:
    """Return the checkpoint document, signed (as a ``SIGNED`` envelope) over its canonical JSON.

    :param root_hex: the Merkle root of the first ``size`` entry hashes, lower-case hex.
    """
    return {"type": CHECKPOINT_TYPE, "v": 1, "size": size, "root": root_hex, "time": time}


def entries_tree(entries: Sequence[Mapping[str, Any]]) -> merkle.MerkleTree:
    """Return the Merkle tree over the entries' stored hashes (raw 32 bytes each)."""
    return merkle.MerkleTree([bytes.fromhex(entry["hash"]) for entry in entries])


def checkable_tree(
    entries: Sequence[Mapping[str, Any]], *, checked: Sequence[bytes] = ()
) -> merkle.MerkleTree:
    """Return the Merkle tree over the entries up to the first whose ``hash`` is malformed: the
    leaves stop there, and a checkpoint beyond it cannot be checked.

    :param checked: the hashes (raw bytes) of the first entries, as the chain check found them:
        those entries are not read again.
    """
    start = len(checked)
    usable = next(
        (
            i
            for i in range(start, len(entries))
            if not (isinstance(entries[i], Mapping) and _is_hash_hex(entries[i].get("hash")))
        ),
        len(entries),
    )
    rest = [bytes.fromhex(entry["hash"]) for entry in entries[start:usable]]
    return merkle.MerkleTree([*checked, *rest])


def checkpoint_shape_problem(envelope: object) -> str | None:
    """Return what is malformed in a ``SIGNED`` checkpoint, or ``None`` if nothing."""
    if not isinstance(envelope, Mapping):
        return "is not an object"
    doc, signature = envelope.get("document"), envelope.get("signature")
    if not isinstance(doc, Mapping) or not isinstance(signature, str):
        return "is not a signed document ({document, signature})"
    # ``type(...) is int``: ``true`` is no version, though Python's ``True == 1`` (the page's
    # ``isCheckpoint`` compares with ``===``).
    if doc.get("type") != CHECKPOINT_TYPE or type(doc.get("v")) is not int or doc["v"] != 1:
        return 'is not a checkpoint document (type "checkpoint", v 1)'
    size = doc.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return "has a size that is not a whole number"
    if not _is_hash_hex(doc.get("root")):
        return "has a root that is not 64 lower-case hex digits"
    if not _is_time(doc.get("time")):
        return "has a time not written as YYYY-MM-DDTHH:MM:SS.ffffffZ"
    return None


@dataclass(frozen=True, slots=True)
class CheckpointProblem:
    """Why checkpoint number ``index`` (0-based, in signing order) fails ``check``.

    ``check`` is ``format``, ``signature``, ``root`` or ``consistency``.
    """

    index: int
    size: int | None
    check: str
    message: str


@dataclass(frozen=True, slots=True)
class CheckpointReport:
    """The result of checking the checkpoints of an export against its entries."""

    count: int
    problems: tuple[CheckpointProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def _label(index: int, size: int) -> str:
    return f"checkpoint {index + 1} (size {size})"


#: The keys a checkpoint may be signed by: one key, any of several, or those a function gives
#: for the checkpoint's size (the keys in use up to that point of the log).
CheckpointKeys = str | Sequence[str] | Callable[[int], Sequence[str]]


def _keys_by_size(keys: CheckpointKeys) -> Callable[[int], Sequence[str]]:
    if callable(keys):
        return keys
    fixed = (keys,) if isinstance(keys, str) else tuple(keys)
    return lambda _size: fixed


@dataclass(frozen=True, slots=True)
class _Passed:
    """The last checkpoint that passed its signature and consistency checks."""

    index: int
    doc: Mapping[str, Any]
    root_is_the_entries: bool  # its root is the Merkle root of its first ``size`` entries


def verify_checkpoints(
    entries: Sequence[Mapping[str, Any]],
    checkpoints: Sequence[Mapping[str, Any]],
    public_key_hex: CheckpointKeys,
    *,
    tree: merkle.MerkleTree | None = None,
) -> CheckpointReport:
    """Check each checkpoint's signature, its root against the entries, and their consistency.

    Each checkpoint must be signed by ``public_key_hex`` (or, given several, by one of them: the
    service's current key and the keys it retired; given a function, by one of the keys it
    gives for the checkpoint's size) and its ``root`` must be the Merkle
    root of the first ``size`` entry hashes. Each must also be consistent with the earlier
    ones: it is checked with an RFC 6962 consistency proof, computed from the entries, against
    the last earlier checkpoint that passed (a good checkpoint consistent with the good one
    before it is, by transitivity, consistent with every earlier good one). Where both roots are
    the entries' own roots at their sizes, that is what the proof would show, so none is built.
    A checkpoint of the same size with another root, a smaller one, or one whose tree does not
    extend the earlier tree fails; so does one dated before the checkpoint it follows.

    :param entries: the stored entries (their ``hash`` fields are the leaves), already checked
        by :func:`verify_chain`.
    :param checkpoints: ``SIGNED`` checkpoint documents in the order they were signed.
    :param tree: :func:`checkable_tree` of ``entries``, if the caller has built it already
        (building it hashes every entry again).
    """
    keys = _keys_by_size(public_key_hex)
    tree = checkable_tree(entries) if tree is None else tree
    problems: list[CheckpointProblem] = []
    last_good: _Passed | None = None
    for index, envelope, doc, size, label in _well_formed(checkpoints, problems):
        found: list[CheckpointProblem] = []
        if message := signature_problem(label, doc, envelope["signature"], keys(size)):
            found.append(CheckpointProblem(index, size, "signature", message))
        root_found = _root_problems(index, doc, tree, len(entries))
        found.extend(root_found)
        if last_good is not None:
            found.extend(_consistency_problems(index, doc, not root_found, last_good, tree))
        problems.extend(found)
        if not any(p.check in ("signature", "consistency") for p in found):
            last_good = _Passed(index, doc, root_is_the_entries=not root_found)
    return CheckpointReport(len(checkpoints), tuple(problems))


def _well_formed(
    checkpoints: Sequence[Mapping[str, Any]], problems: list[CheckpointProblem]
) -> Iterator[tuple[int, Mapping[str, Any], dict[str, Any], int, str]]:
    """Yield each checkpoint that has a checkpoint's shape, as ``(index, envelope, document,
    size, label)``; note each one that has not in ``problems``."""
    for index, envelope in enumerate(checkpoints):
        shape = checkpoint_shape_problem(envelope)
        if shape is not None:
            problems.append(
                CheckpointProblem(index, None, "format", f"checkpoint {index + 1} {shape}")
            )
            continue
        size = envelope["document"]["size"]
        yield index, envelope, dict(envelope["document"]), size, _label(index, size)


def verify_range_checkpoints(
    entries: Sequence[Mapping[str, Any]],
    checkpoints: Sequence[Mapping[str, Any]],
    proofs: Sequence[Mapping[str, Any]],
    public_key_hex: CheckpointKeys,
) -> tuple[CheckpointReport, int]:
    """Check the checkpoints of a range export: each signed, each tied to the range's entries
    by an inclusion proof of one of them; return the report and the last seq so covered.

    A checkpoint over fewer entries than the range starts at proves nothing about it and is
    not needed; one with no proof, or a proof that does not lead to its root, fails.

    :param entries: the range's entries, already checked by :func:`verify_chain`.
    """
    keys = _keys_by_size(public_key_hex)
    by_seq = {e.get("seq"): e for e in entries if isinstance(e, Mapping)}
    problems: list[CheckpointProblem] = []
    covered = 0
    for index, envelope, doc, size, label in _well_formed(checkpoints, problems):
        if message := signature_problem(label, doc, envelope["signature"], keys(size)):
            problems.append(CheckpointProblem(index, size, "signature", message))
            continue
        proven = _proven_seq(doc, proofs, by_seq)
        if proven is None:
            problems.append(
                CheckpointProblem(
                    index,
                    size,
                    "root",
                    f"{label}: no inclusion proof leads from an entry of the range to its root: "
                    "entries it covers were changed, removed or added",
                )
            )
            continue
        covered = max(covered, proven)
    return CheckpointReport(len(checkpoints), tuple(problems)), covered


def _proven_seq(
    doc: Mapping[str, Any],
    proofs: Sequence[Mapping[str, Any]],
    by_seq: Mapping[Any, Mapping[str, Any]],
) -> int | None:
    """The seq of a range entry proven into checkpoint ``doc`` (its root), or ``None``."""
    root = bytes.fromhex(doc["root"])
    for proof in proofs:
        seq, path, size = proof.get("seq"), proof.get("proof"), proof.get("size")
        # ``type(...) is int``: ``true`` names no seq nor size, though ``True == 1`` (and a
        # dict finds the entry of seq 1 under ``True``).
        if type(seq) is not int or type(size) is not int or size != doc["size"]:
            continue
        entry = by_seq.get(seq)
        if entry is None or not isinstance(path, list):
            continue
        if not (_is_hash_hex(entry.get("hash")) and all(_is_hash_hex(p) for p in path)):
            continue
        nodes = [bytes.fromhex(p) for p in path]
        if merkle.verify_inclusion(seq - 1, doc["size"], bytes.fromhex(entry["hash"]), nodes, root):
            return seq
    return None


def _root_problems(
    index: int, doc: Mapping[str, Any], tree: merkle.MerkleTree, entry_count: int
) -> list[CheckpointProblem]:
    size, label = doc["size"], _label(index, doc["size"])
    if size > tree.size:
        held = (
            f"{entry_count} entries"
            if tree.size == entry_count
            else f"only {tree.size} well-formed entries"
        )
        return [CheckpointProblem(index, size, "root", beyond_log_problem(label, size, held))]
    if message := root_problem(label, doc, tree.root(size).hex()):
        return [CheckpointProblem(index, size, "root", message)]
    return []


def _consistency_problems(
    index: int,
    doc: Mapping[str, Any],
    root_is_the_entries: bool,
    passed: _Passed,
    tree: merkle.MerkleTree,
) -> list[CheckpointProblem]:
    earlier_index, earlier = passed.index, passed.doc
    size, old_size = doc["size"], earlier["size"]
    label, earlier_label = _label(index, size), _label(earlier_index, old_size)
    problems = []
    if message := order_problem(label, doc, earlier_label, earlier):
        problems.append(CheckpointProblem(index, size, "consistency", message))
    if size < old_size:
        message = f"{label}: smaller than the earlier {earlier_label}: a log never shrinks"
    elif size == old_size and doc["root"] != earlier["root"]:
        message = f"{label}: the same size as {earlier_label} but another root"
    elif size > tree.size:
        return problems  # nothing to build a proof from; the root check already failed
    elif root_is_the_entries and passed.root_is_the_entries:
        return problems  # two roots of one tree: the later tree extends the earlier one
    else:
        proof = tree.consistency_proof(old_size, size)
        old_root, new_root = bytes.fromhex(earlier["root"]), bytes.fromhex(doc["root"])
        if merkle.verify_consistency(old_size, size, old_root, new_root, proof):
            return problems
        message = (
            f"{label}: not consistent with the earlier {earlier_label}: the consistency proof "
            "from the entries fails, so its tree does not extend the earlier one"
        )
    problems.append(CheckpointProblem(index, size, "consistency", message))
    return problems


# --- one checkpoint at a time: shared by the whole check above and the incremental one -----


def signature_problem(
    label: str, doc: Mapping[str, Any], signature: str, keys: Sequence[str]
) -> str | None:
    """Say why no key of ``keys`` signed the checkpoint document ``doc``, or ``None``."""
    if any(verify_signature(key, doc, signature) for key in keys):
        return None
    return f"{label}: the signature is not valid for this key"


def beyond_log_problem(label: str, size: int, held: str) -> str:
    """The problem of a checkpoint over more entries than the log holds (``held`` says how
    many it does: entries were cut off its end)."""
    return f"{label}: covers {size} entries but the log holds {held}"


def root_problem(label: str, doc: Mapping[str, Any], actual_root: str) -> str | None:
    """Say why ``actual_root``, the Merkle root of the first ``doc["size"]`` entries, is not the
    checkpoint's root, or ``None``."""
    if actual_root == doc["root"]:
        return None
    return (
        f"{label}: root {doc['root'][:16]}… is not the Merkle root of the first {doc['size']} "
        f"entries ({actual_root[:16]}…): entries it covers were changed, removed or added"
    )


def order_problem(
    label: str, doc: Mapping[str, Any], earlier_label: str, earlier: Mapping[str, Any]
) -> str | None:
    """Say why ``doc`` cannot follow the checkpoint ``earlier`` in time, or ``None``."""
    if parse_time(doc["time"]) < parse_time(earlier["time"]):
        return f"{label}: dated before {earlier_label}, which it follows"
    return None


#: What the incremental check says of the next checkpoint (:func:`next_checkpoint_problem`),
#: which it names by the entries it covers, as message ids that count them.
CHECKPOINT_UNSIGNED: Final = Nn_(
    "checkpoint over %(num)s entry: the signature is not valid for this key",
    "checkpoint over %(num)s entries: the signature is not valid for this key",
)
CHECKPOINT_ROOT: Final = Nn_(
    "checkpoint over %(num)s entry: root %(root)s… is not the Merkle root of the first "
    "%(num)s entry (%(actual)s…): entries it covers were changed, removed or added",
    "checkpoint over %(num)s entries: root %(root)s… is not the Merkle root of the first "
    "%(num)s entries (%(actual)s…): entries it covers were changed, removed or added",
)
CHECKPOINT_EARLY: Final = Nn_(
    "checkpoint over %(num)s entry: dated before checkpoint over %(earlier)s entries, which "
    "it follows",
    "checkpoint over %(num)s entries: dated before checkpoint over %(earlier)s entries, which "
    "it follows",
)
CHECKPOINT_BEYOND: Final = Nn_(
    "checkpoint over %(num)s entry: covers %(num)s entry but the log holds %(held)s entries",
    "checkpoint over %(num)s entries: covers %(num)s entries but the log holds %(held)s entries",
)


def next_checkpoint_problem(
    doc: Mapping[str, Any],
    signature: str,
    keys: Sequence[str],
    actual_root: str,
    earlier: Mapping[str, Any] | None,
) -> Problem | None:
    """The incremental check of the next checkpoint of a log read in order: its signature, its
    root (``actual_root``, over the entries read so far) and its time after ``earlier`` (the
    document of the checkpoint before it, if any: its ``size`` and ``time``). Returns the first
    problem found, naming each checkpoint by the entries it covers.

    A root that is the Merkle root of the entries so far makes the checkpoint consistent with
    every earlier one that passed, which is what the whole check proves with proofs.
    """
    size = doc["size"]
    if not any(verify_signature(key, doc, signature) for key in keys):
        return Problem.of(CHECKPOINT_UNSIGNED, {"num": size})
    if actual_root != doc["root"]:
        found = {"num": size, "root": doc["root"][:16], "actual": actual_root[:16]}
        return Problem.of(CHECKPOINT_ROOT, found)
    if earlier is not None and parse_time(doc["time"]) < parse_time(earlier["time"]):
        return Problem.of(CHECKPOINT_EARLY, {"num": size, "earlier": earlier["size"]})
    return None


def next_checkpoint_beyond(size: int, held: int) -> Problem:
    """The incremental check's problem of a checkpoint over more entries than the log holds
    (``held``: entries were cut off its end)."""
    return Problem.of(CHECKPOINT_BEYOND, {"num": size, "held": held})


# --- the C2SP tlog-checkpoint signed-note form -----------------------------------------------

_NOTE_SIGNATURE_PREFIX: Final = "\u2014 "  # an em dash and a space
_ED25519_ALGORITHM: Final = b"\x01"


def note_key_id(key_name: str, public_key_hex: str) -> bytes:
    """Return the 4-byte key ID of an Ed25519 note key: ``sha256(name ‖ "\\n" ‖ 0x01 ‖ key)``."""
    material = key_name.encode() + b"\n" + _ED25519_ALGORITHM + bytes.fromhex(public_key_hex)
    return hashlib.sha256(material).digest()[:4]


def checkpoint_note_body(origin: str, size: int, root_hex: str) -> str:
    """Return the checkpoint body of C2SP tlog-checkpoint: origin, size, base64 root, lines."""
    root_b64 = base64.b64encode(bytes.fromhex(root_hex)).decode()
    return f"{origin}\n{size}\n{root_b64}\n"


def checkpoint_note(
    key: Ed25519PrivateKey, origin: str, size: int, root_hex: str, key_name: str | None = None
) -> str:
    """Return a checkpoint in the C2SP signed-note form, signed by ``key`` under ``key_name``.

    The note signature covers the note text (not the JSON document), so it is its own
    signature; ``key_name`` defaults to the origin, as transparency logs do.
    """
    name = key_name or origin
    body = checkpoint_note_body(origin, size, root_hex)
    blob = note_key_id(name, key.public_key().public_bytes_raw().hex()) + key.sign(body.encode())
    return f"{body}\n{_NOTE_SIGNATURE_PREFIX}{name} {base64.b64encode(blob).decode()}\n"


def _verify_raw(public_key_hex: str, signature: bytes, message: bytes) -> bool:
    """Tell whether ``signature`` signs ``message`` by the key; a weak key signs nothing."""
    try:
        raw = bytes.fromhex(public_key_hex)
        if weak_key_problem(raw) is not None:
            return False
        Ed25519PublicKey.from_public_bytes(raw).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def open_checkpoint_note(note: str, public_key_hex: str, key_name: str) -> tuple[str, int, str]:
    """Return ``(origin, size, root_hex)`` of a signed note carrying a valid signature.

    :raises ValueError: if the note is malformed or no line carries a valid signature by this
        key and name.
    """
    body, sep, signatures = note.partition("\n\n")
    lines = body.split("\n")
    # The size in ASCII digits, as C2SP writes it (str.isdigit alone takes "٣" as 3 too).
    if not sep or len(lines) < 3 or not (lines[1].isascii() and lines[1].isdigit()):
        raise ValueError("not a checkpoint note")
    body += "\n"
    key_id = note_key_id(key_name, public_key_hex)
    for line in signatures.splitlines():
        if not line.startswith(f"{_NOTE_SIGNATURE_PREFIX}{key_name} "):
            continue
        try:
            blob = base64.b64decode(line.rsplit(" ", 1)[1], validate=True)
        except ValueError:
            continue
        if blob[:4] == key_id and _verify_raw(public_key_hex, blob[4:], body.encode()):
            return lines[0], int(lines[1]), base64.b64decode(lines[2]).hex()
    raise ValueError("no valid signature by this key on the checkpoint note")


# --- the JSON Lines export ----------------------------------------------------------------


def export_lines(
    entries: Iterable[Mapping[str, Any]],
    checkpoints: Iterable[Mapping[str, Any]],
    proofs: Iterable[Mapping[str, Any]] = (),
    consistency: Iterable[Mapping[str, Any]] = (),
) -> Iterator[str]:
    """Yield the export, one JSON line (ending in ``"\\n"``) per entry, per checkpoint, per
    inclusion proof, then per consistency proof (a range export's).

    :param entries: stored entries with their six fields, ``prev_hash`` and ``hash``.
    :param checkpoints: ``SIGNED`` checkpoints ``{"document", "signature"}``, oldest first.
    :param proofs: ``{"seq", "size", "proof"}``: entry ``seq`` in the checkpoint of ``size``.
    :param consistency: ``{"old_size", "new_size", "proof"}``: the tree of ``old_size`` entries
        is a prefix of the tree of ``new_size``.
    """
    for entry in entries:
        row = {"kind": ENTRY_KIND, **{key: entry[key] for key in (*ENTRY_KEYS, *LINK_KEYS)}}
        yield _json_line(row)
    for checkpoint in checkpoints:
        row = {
            "kind": CHECKPOINT_KIND,
            "document": checkpoint["document"],
            "signature": checkpoint["signature"],
        }
        yield _json_line(row)
    for proof in proofs:
        yield _json_line(
            {
                "kind": PROOF_KIND,
                "seq": proof["seq"],
                "size": proof["size"],
                "proof": proof["proof"],
            }
        )
    for step in consistency:
        yield _json_line(
            {
                "kind": CONSISTENCY_KIND,
                "old_size": step["old_size"],
                "new_size": step["new_size"],
                "proof": step["proof"],
            }
        )


def _json_line(row: Mapping[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


class ExportFormatError(ValueError):
    """A line of an audit export is not valid JSON of a known kind."""


@dataclass(frozen=True, slots=True)
class AuditExport:
    """A parsed export: entries (without ``kind``) and ``SIGNED`` checkpoints, in file order."""

    entries: tuple[dict[str, Any], ...]
    checkpoints: tuple[dict[str, Any], ...]
    proofs: tuple[dict[str, Any], ...] = ()
    #: A range export's consistency proofs ``{"old_size", "new_size", "proof"}``.
    consistency: tuple[dict[str, Any], ...] = ()

    @property
    def is_range(self) -> bool:
        """Whether this is the export of a range (it carries proofs or starts after entry 1)."""
        first = self.entries[0].get("seq") if self.entries else 1
        return bool(self.proofs) or bool(self.consistency) or first != 1


def parse_export_text(text: str) -> AuditExport:
    """Parse a whole export: JSON Lines, whose records end at ``\\n`` and nowhere else.

    Not ``str.splitlines``: it also breaks at U+2028, U+2029, U+0085, ``\\x0b``, ``\\x0c``
    and ``\\x1c``–``\\x1e``, which JSON strings hold unescaped (``ensure_ascii=False``).

    :raises ExportFormatError: naming the line that is not valid.
    """
    return parse_export(text.split("\n"))


def parse_export(lines: Iterable[str]) -> AuditExport:
    """Parse the JSON Lines of :func:`export_lines`, already split at ``\\n``; blank lines
    (JSON whitespace only) are skipped.

    Only the syntax is checked here (each line a JSON object of a known ``kind``); whether the
    entries and checkpoints hold is for :func:`verify_chain` and :func:`verify_checkpoints`.

    :raises ExportFormatError: naming the line that is not valid.
    """
    entries: list[dict[str, Any]] = []
    checkpoints: list[dict[str, Any]] = []
    proofs: list[dict[str, Any]] = []
    consistency: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip(_JSON_WHITESPACE):
            continue
        try:
            row = strict_json(line)
        except ValueError as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise ExportFormatError(f"line {number}: not valid JSON ({reason})") from None
        if not isinstance(row, dict):
            raise ExportFormatError(f"line {number}: not a JSON object")
        kind = row.pop("kind", None)
        if kind == ENTRY_KIND:
            entries.append(row)
        elif kind == CHECKPOINT_KIND:
            checkpoints.append(row)
        elif kind == PROOF_KIND:
            proofs.append(row)
        elif kind == CONSISTENCY_KIND:
            consistency.append(row)
        else:
            raise ExportFormatError(
                f'line {number}: kind must be "{ENTRY_KIND}", "{CHECKPOINT_KIND}", '
                f'"{PROOF_KIND}" or "{CONSISTENCY_KIND}", got {kind!r}'
            )
    return AuditExport(tuple(entries), tuple(checkpoints), tuple(proofs), tuple(consistency))
