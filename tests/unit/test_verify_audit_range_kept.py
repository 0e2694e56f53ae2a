"""The export of a range held to checkpoints an auditor kept, by consistency proofs.

A range export carries the checkpoint that vouches for it and an inclusion proof of its last
covered entry; its first entries are not there to take a root over. Asked for with ``kept=S``,
it also carries ``{"kind": "consistency", "old_size": S, "new_size": N, "proof": [...]}``, the
RFC 6962 consistency proof from the tree of the first ``S`` entries to the vouching checkpoint's
tree of ``N``. ``audit --checkpoint KEPT.json`` verifies it between the kept root and the
vouching root: an operator who rewrote or forked the log before ``S`` and signed everything
anew hands over a range that passes alone, and fails held to the kept checkpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kept_support import KEPT_SIZE
from kept_support import PUBLIC
from kept_support import audit
from kept_support import checkpoint
from kept_support import fails_only_held_to_kept
from kept_support import kept_file
from kept_support import log

from sota_casino.core import audit_chain
from sota_casino.core import merkle

FORK_MESSAGE = (
    "the log the range is proven into does not extend the kept checkpoint: it was rewritten or "
    "forked"
)


def _tree(entries: list[dict[str, Any]]) -> merkle.MerkleTree:
    return merkle.MerkleTree([bytes.fromhex(entry["hash"]) for entry in entries])


def _hex(hashes: list[bytes]) -> list[str]:
    return [h.hex() for h in hashes]


def _range(
    tmp_path: Path,
    log: list[dict[str, Any]],
    first: int,
    last: int,
    size: int,
    kept: tuple[int, ...] = (),
    *,
    tamper: bool = False,
) -> str:
    """Write the export of entries ``first..last`` of ``log`` as the service writes it: the
    entries, the checkpoint over ``size``, the inclusion proof of ``last``, then a consistency
    proof from each ``kept`` size to ``size`` (its first hash flipped if ``tamper``)."""
    tree = _tree(log)
    lines = list(
        audit_chain.export_lines(
            log[first - 1 : last],
            [checkpoint(log, size, "2025-04-01T11:00:00.000000Z")],
            [{"seq": last, "size": size, "proof": _hex(tree.inclusion_proof(last - 1, size))}],
        )
    )
    for old_size in kept:
        proof = _hex(tree.consistency_proof(old_size, size))
        if tamper:
            proof[0] = ("0" if proof[0][0] != "0" else "1") + proof[0][1:]
        row = {"kind": "consistency", "old_size": old_size, "new_size": size, "proof": proof}
        lines.append(json.dumps(row, separators=(",", ":")) + "\n")
    path = tmp_path / "range.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


def test_an_honest_range_holds_the_kept_checkpoint_by_its_consistency_proof(
    tmp_path: Path,
) -> None:
    export = _range(tmp_path, log(24), 14, 18, 20, (KEPT_SIZE, 20))
    kept = kept_file(tmp_path)
    code, out = audit(export, "--checkpoint", kept)
    assert code == 0, out
    root = json.loads(Path(kept).read_text())["document"]["root"]
    assert f"kept checkpoint {kept}: size {KEPT_SIZE} root {root[:12]}" in out, out
    assert "✓  the log the range is proven into extends it (consistency proof to the " in out
    assert "checkpoint over 20 entries)" in out
    assert out.splitlines()[-1] == "Result: OK (exit 0)"
    # One of the vouching checkpoint's own size: the same root, with an empty proof.
    same = kept_file(tmp_path, 20, name="same.json")
    code, out = audit(export, "--checkpoint", kept, "--checkpoint", same, "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] is True, out
    held = report["kept_checkpoints"]
    assert [(h["size"], h["ok"], h["source"]) for h in held] == [
        (KEPT_SIZE, True, kept),
        (20, True, same),
    ]
    assert held[0]["consistency"] == {
        "old_size": KEPT_SIZE,
        "new_size": 20,
        "new_root": _tree(log(24)).root(20).hex(),
        "ok": True,
    }
    assert held[0]["message"] is None and report["findings"] == []


def test_a_range_from_a_forked_log_signed_anew_fails_held_to_a_checkpoint_kept_before(
    tmp_path: Path,
) -> None:
    """The log rewritten from entry 7 on and every checkpoint signed anew: the range passes
    alone (its chain, signature and inclusion proof are the fork's own), and the consistency
    proof the operator serves from 12 entries is the fork's, which the kept root does not fit."""
    forked = log(24, rewritten_at=7)
    export = _range(tmp_path, forked, 14, 18, 20, (KEPT_SIZE,))
    kept, out = fails_only_held_to_kept(tmp_path, export)
    assert f"kept checkpoint {kept}: size {KEPT_SIZE} root " in out
    assert f"✗  {FORK_MESSAGE}" in out, out
    assert f"kept: {kept}: the checkpoint over {KEPT_SIZE} entries (root " in out
    assert out.splitlines()[-1] == "Result: FAILED (exit 1)"
    code, out = audit(export, "--checkpoint", kept, "--json")
    report = json.loads(out)
    assert code == 1 and report["ok"] is False and report["exit_code"] == 1
    (held,) = report["kept_checkpoints"]
    assert held["ok"] is False and FORK_MESSAGE in held["message"]
    assert held["consistency"]["ok"] is False and held["consistency"]["new_size"] == 20
    assert [f["check"] for f in report["findings"]] == ["kept"]


def test_a_kept_checkpoint_the_range_carries_no_consistency_proof_for_is_unusable(
    tmp_path: Path,
) -> None:
    """Exported without ``kept=12`` (or with another size only): nothing ties the range to the
    kept checkpoint, so it is unusable input (exit 2), never a pass, and says what to ask."""
    kept = kept_file(tmp_path)
    for sizes in ((), (5,)):
        export = _range(tmp_path, log(24), 14, 18, 20, sizes)
        code, out = audit(export, "--checkpoint", kept)
        assert code == 2, out
        assert f"ask for the export with kept={KEPT_SIZE}" in out, out
        code, out = audit(export, "--checkpoint", kept, "--json")
        assert code == 2 and f"kept={KEPT_SIZE}" in out, out


def test_a_tampered_consistency_proof_fails(tmp_path: Path) -> None:
    export = _range(tmp_path, log(24), 14, 18, 20, (KEPT_SIZE,), tamper=True)
    kept = kept_file(tmp_path)
    code, out = audit(export)
    assert code == 0, out  # a consistency proof no kept checkpoint asks for proves nothing
    code, out = audit(export, "--checkpoint", kept)
    assert code == 1 and f"✗  {FORK_MESSAGE}" in out, out
    # One whose hashes are not hashes fails too, naming it.
    lines = Path(export).read_text().splitlines(keepends=True)
    row = json.loads(lines[-1])
    row["proof"] = ["not a hash", *row["proof"][1:]]
    Path(export).write_text("".join([*lines[:-1], json.dumps(row) + "\n"]), encoding="utf-8")
    code, out = audit(export, "--checkpoint", kept)
    assert code == 1 and "not a list of 64-hex hashes" in out, out


def test_an_inclusion_proof_naming_seq_and_size_true_proves_no_entry_of_the_range() -> None:
    """A range export's inclusion proof names the entry's seq and the checkpoint's size, JSON
    numbers (docs/fairness.md): one naming ``"seq": true, "size": true`` for the entry 1 of a
    log of one entry proves nothing, though Python's ``True == 1`` (and ``hash(True) ==
    hash(1)``, so the entry of seq 1 was found under ``True``) took it for the proof of it."""
    one = log(1)
    signed_over = checkpoint(one, 1, "2025-04-01T11:00:00.000000Z")
    proof = {"seq": 1, "size": 1, "proof": []}
    report, covered = audit_chain.verify_range_checkpoints(one, [signed_over], [proof], PUBLIC)
    assert report.ok and covered == 1
    for loose in ({**proof, "seq": True}, {**proof, "size": True}):
        report, covered = audit_chain.verify_range_checkpoints(one, [signed_over], [loose], PUBLIC)
        assert covered == 0
        assert [p.check for p in report.problems] == ["root"], loose
