"""The published anchored log (docs/vectors/fairness-vectors.json, ``anchored_log``): from
docs/fairness.md alone (hashlib, no project code) each entry hashes as published, each anchor's
proof leads to the signed checkpoint's root, the consistency proof holds, and the project's own
anchor checks agree; one changed byte breaks them."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from test_published_vectors import spec_encode

from sota_casino import vectors
from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.core import merkle
from sota_casino.core.fairness import verify_signature

PUBLISHED = json.loads(vectors.PATH.read_text(encoding="ascii"))
LOG = PUBLISHED["anchored_log"]
KEY = PUBLISHED["test_key"]["public_key_hex"]


def sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def spec_entry_hash(entry: dict[str, Any]) -> str:
    fields = {k: entry[k] for k in ("seq", "time", "actor", "action", "subject", "data")}
    return sha(bytes.fromhex(entry["prev_hash"]) + spec_encode(fields).encode()).hex()


def spec_root(leaves: list[bytes]) -> bytes:
    """MTH of docs/fairness.md, recursively, from the entries' hashes."""
    if len(leaves) == 1:
        return sha(b"\x00" + leaves[0])
    k = 1 << ((len(leaves) - 1).bit_length() - 1)
    return sha(b"\x01" + spec_root(leaves[:k]) + spec_root(leaves[k:]))


def spec_path_root(index: int, leaf: bytes, proof: list[str], size: int) -> bytes:
    """Fold an inclusion proof the RFC 6962 way: split at k, the proof listed leaf side first."""
    if size == 1:
        return sha(b"\x00" + leaf)
    k = 1 << ((size - 1).bit_length() - 1)
    sibling = bytes.fromhex(proof[-1])
    if index < k:
        return sha(b"\x01" + spec_path_root(index, leaf, proof[:-1], k) + sibling)
    return sha(b"\x01" + sibling + spec_path_root(index - k, leaf, proof[:-1], size - k))


def test_the_log_entries_checkpoints_and_anchors_hold_from_the_page_alone() -> None:
    previous = audit_chain.GENESIS_HASH
    for entry in LOG["entries"]:
        assert entry["prev_hash"] == previous and spec_entry_hash(entry) == entry["hash"]
        previous = entry["hash"]
    leaves = [bytes.fromhex(e["hash"]) for e in LOG["entries"]]
    for signed in LOG["checkpoints"]:
        doc = signed["document"]
        assert verify_signature(KEY, doc, signed["signature"])
        assert spec_root(leaves[: doc["size"]]).hex() == doc["root"]
    latest = LOG["checkpoints"][-1]["document"]
    for anchor in LOG["anchors"]:
        assert anchor["checkpoint_size"] == latest["size"]
        leaf = bytes.fromhex(anchor["entry"]["hash"])
        root = spec_path_root(anchor["leaf_index"], leaf, anchor["proof"], latest["size"])
        assert root.hex() == latest["root"]
        assert anchors.proof_problem(anchor, latest) is None
    old = LOG["checkpoints"][0]["document"]
    assert merkle.verify_consistency(
        old["size"],
        latest["size"],
        bytes.fromhex(old["root"]),
        bytes.fromhex(latest["root"]),
        [bytes.fromhex(h) for h in LOG["consistency"]["proof"]],
    )
    note = audit_chain.open_checkpoint_note(LOG["note"], KEY, "sota-casino/audit-log")
    assert note[1:] == (latest["size"], latest["root"])


def test_the_signed_note_is_byte_for_byte_the_form_the_page_spells_out() -> None:
    """docs/fairness.md, "Checkpoints": the body, a blank line, the signature line (an em dash,
    the key name, base64 of the 4-byte key id and the signature) and a final newline; the
    signature is over the body alone, its final newline included."""
    latest = LOG["checkpoints"][-1]["document"]
    root = base64.b64encode(bytes.fromhex(latest["root"])).decode()
    body = f"sota-casino/audit-log\n{latest['size']}\n{root}\n"
    prefix = body + "\n\u2014 sota-casino/audit-log "
    assert LOG["note"].startswith(prefix) and LOG["note"].endswith("=\n")
    blob = base64.b64decode(LOG["note"][len(prefix) : -1], validate=True)
    key = bytes.fromhex(KEY)
    assert blob[:4] == sha(b"sota-casino/audit-log" + b"\n" + b"\x01" + key)[:4]
    assert len(blob) == 4 + 64
    public = Ed25519PublicKey.from_public_bytes(key)
    public.verify(blob[4:], body.encode())  # raises if the signature is not over the body
    with pytest.raises(InvalidSignature):
        public.verify(blob[4:], (body + "\n").encode())


def test_the_anchored_entries_say_what_the_documents_say_and_a_change_breaks_them() -> None:
    receipt = LOG["receipt"]["document"]
    by_kind = {a["of"]["kind"]: a for a in LOG["anchors"]}
    assert LOG["receipt_hash"] == sha(spec_encode(receipt).encode()).hex()
    assert anchors.settlement_problem(by_kind["settlement"]["entry"], receipt) is None
    assert anchors.decisions_problem([by_kind["decision"]["entry"]], receipt) is None
    commitment = {
        "seed_pair_id": vectors.SEED_PAIR_ID,
        "user_id": vectors.USER_ID,
        "commitment": receipt["commitment"],
    }
    assert anchors.commitment_problem(by_kind["commitment"]["entry"], commitment) is None
    latest = LOG["checkpoints"][-1]["document"]
    changed = copy.deepcopy(by_kind["settlement"])
    changed["entry"]["data"]["payout"] += 1
    assert "does not match its contents" in str(anchors.proof_problem(changed, latest))
    rewritten = {**receipt, "payout": receipt["payout"] + 1}
    assert "the receipt was rewritten" in str(
        anchors.settlement_problem(by_kind["settlement"]["entry"], rewritten)
    )
    recommitted = {**commitment, "commitment": "00" * 32}
    assert "the log recorded commitment" in str(
        anchors.commitment_problem(by_kind["commitment"]["entry"], recommitted)
    )
