"""Which public key to trust: one the user gave, or one a known-keys file holds for the service.

A verdict of "fair" means something only against a key the user chose to trust before reading
the bundle: the key a bundle carries is the casino's own word. The key comes from
``--public-key HEX``, ``--key-file FILE`` (PEM or hex), or a known-keys file kept like SSH's
``known_hosts``: one line ``SERVICE KEYHEX`` per service, written on first use (trust on first
use, said loudly) and never changed silently. When a bundle names another key, it is refused,
unless a chain of key-change documents, each signed by the key it retires, leads from the
trusted key to the bundle's (then the file moves on to the new key, and says so). A document
made before a key change stays signed by the key it retired: the keys the trusted key succeeded
count too, but only as the trusted key's own signed log proves them (:func:`logged_predecessors`).
A weak key (:func:`..core.fairness.weak_key_problem`), under which anyone can sign, is trusted
nowhere: not given, not in the file, and no key change to one is followed.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from ..core.anchors import ONE_CHAIN_RULE
from ..core.anchors import TAKEN_ONCE_RULE
from ..core.anchors import same_json
from ..core.audit_chain import entry_hash
from ..core.audit_chain import entry_shape_problem
from ..core.fairness import KEY_CHANGE_TYPE
from ..core.fairness import KEY_CHANGED
from ..core.fairness import is_hex64
from ..core.fairness import public_key_hex
from ..core.fairness import time_or_none
from ..core.fairness import verify_signature
from ..core.fairness import weak_key_problem
from .player_signatures import anchor_problem
from .report import short

#: Where the known keys live unless ``--known-keys`` says otherwise.
DEFAULT_KNOWN_KEYS: Final = Path("~/.config/sota-casino/known_keys")
_SERVICE_NAME: Final = re.compile(r"[^\s#]{1,200}")


class KeyProblem(ValueError):
    """A key, key file or known-keys file that cannot be used (exit code 2)."""


def refuse_weak_key(key_hex: str, source: str) -> str:
    """Return ``key_hex`` (64 hex digits) unless it is a weak key, which no one may trust.

    :raises KeyProblem: if it is one, naming ``source`` and why.
    """
    problem = weak_key_problem(bytes.fromhex(key_hex))
    if problem is not None:
        raise KeyProblem(f"{source} holds the key {short(key_hex)}, which is {problem}; refused")
    return key_hex


def parse_key_text(text: str, source: str) -> str:
    """Return the raw Ed25519 key, as hex, of a PEM public key or of 64 hex digits.

    :raises KeyProblem: if ``text`` is neither, or holds a weak key.
    """
    stripped = text.strip()
    if stripped.startswith("-----BEGIN"):
        try:
            key = load_pem_public_key(stripped.encode())
        except ValueError as exc:
            raise KeyProblem(f"{source} is not a PEM public key: {exc}") from None
        if not isinstance(key, Ed25519PublicKey):
            raise KeyProblem(f"{source} holds a public key that is not Ed25519")
        return refuse_weak_key(public_key_hex(key), source)
    hex_text = stripped.lower()
    if not is_hex64(hex_text):
        raise KeyProblem(
            f"{source} is neither a PEM public key nor 64 hex digits (the raw Ed25519 key)"
        )
    return refuse_weak_key(hex_text, source)


def read_key_file(path: str) -> str:
    """Return the key in ``path`` (PEM, or 64 hex digits).

    :raises KeyProblem: if it cannot be read or holds no such key.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyProblem(f"cannot read key file {path}: {exc}") from None
    return parse_key_text(text, f"key file {path}")


# --- key changes -------------------------------------------------------------------------------


def signed_key_change(envelope: object) -> Mapping[str, Any] | None:
    """Return the key-change document of ``envelope`` if it is one, validly signed by the key it
    retires (its old key), to a key that is not weak, dated as the scheme writes times, else
    ``None``: it proves nothing, or is refused (:func:`refused_key_changes` says why)."""
    doc = _signed_by_old_key(envelope)
    if doc is None or _refusal(doc) is not None:
        return None
    return doc


def refused_key_changes(key_changes: object) -> list[str]:
    """Say which of a bundle's key changes, each validly signed by the key it retires, are
    refused (each change once); empty if none. No chain is followed through one: an honest
    service never hands its trust to a key under which anyone can sign, and dates every change
    as it dates every document (``YYYY-MM-DDTHH:MM:SS.ffffffZ``)."""
    if not isinstance(key_changes, list):
        return []
    problems: dict[str, None] = {}  # in order, each once: the same change may be listed twice
    for doc in filter(None, map(_signed_by_old_key, key_changes)):
        problem = _refusal(doc)
        if problem is not None:
            problems[problem] = None
    return list(problems)


def _refusal(doc: Mapping[str, Any]) -> str | None:
    """Why a key change validly signed by its old key is not followed, or ``None``."""
    old, new = short(doc["old_public_key_hex"]), short(doc["new_public_key_hex"])
    problem = weak_key_problem(bytes.fromhex(doc["new_public_key_hex"]))
    if problem is not None:
        return (
            f"key {old} was handed on to key {new}, which is {problem}; no change to such a "
            "key is followed"
        )
    if time_or_none(doc.get("changed_at")) is None:
        return (
            f"key {old} was handed on to key {new} with a changed_at not written as "
            "YYYY-MM-DDTHH:MM:SS.ffffffZ; no change so dated is followed"
        )
    return None


def _signed_by_old_key(envelope: object) -> Mapping[str, Any] | None:
    """The key-change document of ``envelope`` if it is one, validly signed by its old key."""
    doc = envelope.get("document") if isinstance(envelope, dict) else None
    signature = envelope.get("signature") if isinstance(envelope, dict) else None
    if not (isinstance(doc, dict) and isinstance(signature, str)):
        return None
    old, new = doc.get("old_public_key_hex"), doc.get("new_public_key_hex")
    signed = (
        doc.get("type") == KEY_CHANGE_TYPE
        and type(doc.get("v")) is int
        and doc["v"] == 1
        and isinstance(old, str)  # is_hex64 accepts only str; says so to the type checker
        and isinstance(new, str)
        and is_hex64(old)
        and is_hex64(new)
        and verify_signature(old, doc, signature)
    )
    return doc if signed else None


def handed_on(docs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Mapping[str, Any]]]:
    """Return, for each old key of the key changes ``docs`` (each validly signed by its old key),
    the keys it was handed on to, each with the first change of ``docs`` that names it.

    An old key with two keys here was handed on twice: the one chain of keys forks there.
    """
    handed: dict[str, dict[str, Mapping[str, Any]]] = {}
    for doc in docs:
        handed.setdefault(doc["old_public_key_hex"], {}).setdefault(doc["new_public_key_hex"], doc)
    return handed


def _signed_changes(key_changes: Sequence[object]) -> list[Mapping[str, Any]]:
    """The key-change documents of ``key_changes`` validly signed by their old keys, refused or
    not: a refused change is still its old key's word that it was handed on."""
    return [doc for item in key_changes if (doc := _signed_by_old_key(item)) is not None]


def _successors(key_changes: Sequence[object]) -> dict[str, Mapping[str, Any]]:
    """Each key's one successor in ``key_changes`` (the change that names it), followed only
    where the chain can go: none for a key handed on twice (a refused change counts: its
    signature hands the key on all the same), nor for a key on a loop (:func:`_loops`), nor
    through a refused change (:func:`refused_key_changes`)."""
    every = _signed_changes(key_changes)
    handed = handed_on(every)
    successors = {
        old: next(iter(handed_to.values()))
        for old, handed_to in handed_on(doc for doc in every if _refusal(doc) is None).items()
        if len(handed[old]) == 1
    }
    looped = {key for loop in _loops(successors) for key in loop}
    return {old: doc for old, doc in successors.items() if old not in looped}


def _loops(successors: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, ...]]:
    """The loops of key changes among ``successors`` (each key's one successor): the keys of
    each, from the lowest, each loop once. Each change is signed by the key it retires, so a
    loop is its keys' holders' own word that a key retired was taken into use again, which an
    honest service never does (``flask keys rotate`` refuses a retired key)."""
    loops: dict[tuple[str, ...], None] = {}
    for start in successors:
        path = [start]
        key = successors[start]["new_public_key_hex"]
        while key in successors and key not in path:
            path.append(key)
            key = successors[key]["new_public_key_hex"]
        if key == start:
            first = path.index(min(path))
            loops[tuple(path[first:] + path[:first])] = None
    return list(loops)


def successor_chain(
    trusted: str, bundle_key: str, key_changes: object
) -> list[Mapping[str, Any]] | None:
    """Return the key-change documents leading from ``trusted`` to ``bundle_key``, each signed
    by the key it retires, or ``None`` if there is no such chain.

    ``key_changes`` is the bundle's list of signed key-change documents; anything in it that is
    not one, or not validly signed by its old key, is ignored (it proves nothing). A key handed
    on twice (two changes signed by it to two different keys) has no successor: a chain that
    reaches it stops there, whatever the order of the list, which its holder chooses. The same
    change listed twice is no fork. Nor has a key on a loop of changes (``A`` to ``B``, ``B``
    back to ``A``), logged or not: following it would take a retired key into use again.
    """
    if not isinstance(key_changes, list):
        return None
    successors = _successors(key_changes)
    chain: list[Mapping[str, Any]] = []
    key = trusted
    while key != bundle_key:
        step = successors.get(key)
        if step is None or len(chain) > len(successors):
            return None
        chain.append(step)
        key = step["new_public_key_hex"]
    return chain


def logged_predecessors(trusted: str, key_changes: object, log_keys: Sequence[str]) -> list[str]:
    """Return the keys that ``trusted`` succeeded, newest first, as the service's signed log
    proves them: each handed on to the key after it by a key change it signed, whose
    ``key.changed`` audit entry (holding that signed change) the bundle proves into a checkpoint
    signed by one of ``log_keys`` (the trusted key and the keys it handed on to).

    A key change alone is only its old key's word, which anyone can write for a key of their
    own: only a checkpoint of a trusted key makes the old key the trusted key's predecessor.
    """
    if not isinstance(key_changes, list):
        return []
    predecessors: dict[str, str] = {}  # new key -> the key it replaced
    for item in key_changes:
        doc = signed_key_change(item)
        if doc is not None and _logged(item, log_keys):
            predecessors.setdefault(doc["new_public_key_hex"], doc["old_public_key_hex"])
    found: list[str] = []
    key = trusted
    while (old := predecessors.get(key)) is not None and old != trusted and old not in found:
        found.append(old)
        key = old
    return found


def forked_key_changes(key_changes: object, log_keys: Sequence[str]) -> list[str]:
    """Say where a bundle's key changes leave the service's one chain of keys, the rule
    ``flask audit verify`` holds the whole log to (:mod:`..core.anchors`); empty if nowhere.

    Two changes from one key to two others, each signed by that key, are its holder's own word
    that it was handed on twice; two changes from two keys into one, each logged as
    :func:`logged_predecessors` counts them (proved into a checkpoint of ``log_keys``), are the
    log's word that one key was taken into use twice. An honest service does neither, and the
    key a chain leads to, or the predecessor a log proves, would depend on which change the
    list holds first; nor does it change back into a key it retired (a loop, ``A`` to ``B`` to
    ``A``), which would make a retired key the one in use again, followed by every verifier
    trusting a key on the loop: each change signed by the key it retires, a loop is named
    whether logged or not (a loop wholly logged by its entries). A change into a key from a key
    of one's own is only that key's word, which anyone can write: it counts here only once
    logged, as it does for a predecessor.
    """
    if not isinstance(key_changes, list):
        return []
    signed = [(doc, item) for item in key_changes if (doc := signed_key_change(item)) is not None]
    problems = []
    for old, news in sorted(handed_on(_signed_changes(key_changes)).items()):
        first, *others = sorted(news)
        problems += [
            f"key {short(old)} was handed on twice, to key {short(first)} and to key "
            f"{short(other)}, each change signed by it: {ONE_CHAIN_RULE}"
            for other in others
        ]
    logged = sorted(
        (item["entry"]["seq"], doc["old_public_key_hex"], doc["new_public_key_hex"])
        for doc, item in signed
        if _logged(item, log_keys)
    )
    successors = {
        old: next(iter(news.values()))
        for old, news in handed_on(doc for doc, _ in signed).items()
        if len(news) == 1
    }
    logged_steps = {(old, new) for _, old, new in logged}
    for loop in _loops(successors):
        keys = [*loop, loop[0]]
        if not set(pairwise(keys)) <= logged_steps:  # a loop wholly logged is named below
            problems.append(
                f"the key changes from key {short(loop[0])} lead back to it "
                f"({' → '.join(map(short, keys))}), each signed by the key it retires: "
                f"{TAKEN_ONCE_RULE}"
            )
    taken: dict[str, tuple[int, str]] = {}  # new key -> the seq and old key of its first change
    retired: dict[str, int] = {}  # old key -> the seq of its first change: it was in use
    for seq, old, new in logged:
        before, first_old = taken.setdefault(new, (seq, old))
        if first_old != old:
            problems.append(
                f"entry {seq}: {KEY_CHANGED} of key {short(new)} from key {short(old)}, which "
                f"key {short(first_old)} was changed into before (entry {before}): "
                f"{TAKEN_ONCE_RULE}"
            )
        retired.setdefault(old, seq)
        if new in retired:  # a loop of changes back to a retired key, as the whole log says
            problems.append(
                f"entry {seq}: {KEY_CHANGED} of key {short(new)}, which was in use before "
                f"(entry {retired[new]}): {TAKEN_ONCE_RULE}"
            )
    return problems


def _logged(item: Mapping[str, Any], log_keys: Sequence[str]) -> bool:
    """Tell whether a key change's entry is a whole ``key.changed`` audit entry holding exactly
    the signed change, proved into a checkpoint signed by one of ``log_keys``."""
    entry = item.get("entry")
    if entry_shape_problem(entry) is not None or "anchor" not in item:
        return False
    assert isinstance(entry, dict)  # entry_shape_problem says it is an audit entry
    signed = {"document": item["document"], "signature": item["signature"]}
    return (
        entry_hash(entry["prev_hash"], entry) == entry["hash"]
        and entry["action"] == KEY_CHANGED
        and same_json(entry["data"].get("key_change"), signed)
        and anchor_problem(item, log_keys) is None
    )


# --- the known-keys file -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KnownKeys:
    """The known-keys file: ``SERVICE KEYHEX`` per line; ``#`` starts a comment."""

    path: Path
    keys: Mapping[str, str]

    @classmethod
    def load(cls, path: str | Path) -> KnownKeys:
        """Read the file (a missing file knows no key).

        :raises KeyProblem: if a line is not ``SERVICE KEYHEX``, or names a weak key.
        """
        file = Path(path).expanduser()
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(file, {})
        except (OSError, UnicodeDecodeError) as exc:
            raise KeyProblem(f"cannot read known-keys file {file}: {exc}") from None
        keys: dict[str, str] = {}
        for number, line in enumerate(text.split("\n"), start=1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            if len(fields) != 2 or not is_hex64(fields[1]):
                raise KeyProblem(
                    f"{file} line {number}: expected SERVICE KEYHEX (64 lower-case hex digits)"
                )
            keys[fields[0]] = refuse_weak_key(fields[1], f"{file} line {number}")
        return cls(file, keys)

    def key_of(self, service: str) -> str | None:
        return self.keys.get(service)

    def with_key(self, service: str, key: str, why: str) -> KnownKeys:
        """Write ``service``'s key to the file (replacing its old line) and return the result.

        The old line stays as a comment saying why it went, so a change is never silent.
        """
        old = self.key_of(service)
        try:
            lines = self.path.read_text(encoding="utf-8").split("\n")
        except FileNotFoundError:
            lines = ["# Sota Casino public keys trusted by the verifier: SERVICE KEYHEX"]
        if lines and lines[-1] == "":
            lines.pop()
        kept = [line for line in lines if line.split("#", 1)[0].split()[:1] != [service]]
        if old is not None:
            kept.append(f"# {service} {old} replaced: {why}")
        kept.append(f"{service} {key}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, draft = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("\n".join(kept) + "\n")
        os.replace(draft, self.path)
        return KnownKeys(self.path, {**self.keys, service: key})


def check_service_name(name: str) -> str:
    """Return ``name`` if it can key a known-keys line (no spaces, no ``#``).

    :raises KeyProblem: otherwise.
    """
    if _SERVICE_NAME.fullmatch(name) is None:
        raise KeyProblem(
            "a service name is 1 to 200 characters without spaces or '#', e.g. casino.example.com"
        )
    return name


def describe_chain(chain: Sequence[Mapping[str, Any]]) -> str:
    """Say which key changes a chain holds, for the report."""
    return "; ".join(
        f"{doc['old_public_key_hex'][:16]}… → {doc['new_public_key_hex'][:16]}… "
        f"at {doc.get('changed_at')}"
        for doc in chain
    )
