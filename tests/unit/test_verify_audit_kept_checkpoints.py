"""The offline check of an audit export held to checkpoints a witness kept (``--checkpoint``).

Whoever holds the signing key and the database can cut entries off the end of the log, or
rewrite it from some entry on, and sign every checkpoint of the export anew: the export then
passes alone, its chain, keys, roots and consistency all its own. What it cannot do is change a
checkpoint a witness kept (the monitor's ``checkpoint.json``, the public log's answer, a
bundle): the export's first ``size`` entries must have that checkpoint's root, and a log that
holds fewer entries than it covers was cut off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kept_support import KEPT_SIZE
from kept_support import audit
from kept_support import checkpoint
from kept_support import fails_only_held_to_kept
from kept_support import kept_file
from kept_support import log

from sota_casino.core import audit_chain
from sota_casino.core import merkle
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import signed


def _export(tmp_path: Path, entries: list[dict[str, Any]], sizes: tuple[int, ...]) -> str:
    """Write the export of ``entries`` with checkpoints over ``sizes``, all signed by the key."""
    checkpoints = [
        checkpoint(entries, size, f"2025-04-01T11:00:{i:02d}.000000Z")
        for i, size in enumerate(sizes)
    ]
    path = tmp_path / "audit.jsonl"
    path.write_text("".join(audit_chain.export_lines(entries, checkpoints)), encoding="utf-8")
    return str(path)


def test_an_export_cut_off_before_a_kept_checkpoint_passes_alone_but_not_held_to_it(
    tmp_path: Path,
) -> None:
    """Entries cut off the end of the log, with the checkpoints over them: what is left is a
    whole log of its own, signed, so only the checkpoint a witness kept shows the cut."""
    cut = _export(tmp_path, log(10), (5, 10))
    kept, out = fails_only_held_to_kept(tmp_path, cut)
    assert f"kept: {kept}: the checkpoint over {KEPT_SIZE} entries (root " in out
    assert (
        "the export holds 10 entries, fewer than it covers: entries were cut off the end of "
        "the log since it was kept"
    ) in out
    assert out.splitlines()[-1] == "Result: FAILED (exit 1)"


def test_an_export_rewritten_and_signed_anew_passes_alone_but_not_held_to_a_kept_checkpoint(
    tmp_path: Path,
) -> None:
    """The log rewritten from entry 7 on, every checkpoint signed anew over sizes the witness
    did not keep: the export holds, but its first 12 entries have another root."""
    forged = log(20, rewritten_at=7)
    export = _export(tmp_path, forged, (8, 15, 20))
    code, out = audit(export)
    assert code == 0, out
    mine = merkle.root([bytes.fromhex(e["hash"]) for e in forged[:KEPT_SIZE]]).hex()
    for kept in (kept_file(tmp_path), kept_file(tmp_path, name="answer.json", answer=True)):
        code, out = audit(export, "--checkpoint", kept)
        assert code == 1, out
        assert (
            f"the export's first {KEPT_SIZE} entries have the root {mine}: the log was "
            "rewritten since the checkpoint was kept"
        ) in out, out
    code, out = audit(export, "--checkpoint", kept_file(tmp_path), "--json")
    report = json.loads(out)
    assert code == 1 and report["ok"] is False and report["exit_code"] == 1
    (held,) = report["kept_checkpoints"]
    assert held["size"] == KEPT_SIZE and held["ok"] is False
    assert [f["check"] for f in report["findings"]] == ["kept"]


def test_an_honest_export_holds_every_checkpoint_a_witness_kept(tmp_path: Path) -> None:
    export = _export(tmp_path, log(20), (5, 20))
    kept = kept_file(tmp_path)
    code, out = audit(
        export, "--checkpoint", kept, "--checkpoint", kept_file(tmp_path, name="b.json")
    )
    assert code == 0, out
    assert f"kept checkpoint {kept}: size {KEPT_SIZE}" in out and "the export holds it" in out
    assert out.splitlines()[-1] == "Result: OK (exit 0)"
    code, out = audit(export, "--checkpoint", kept, "--json")
    (held,) = json.loads(out)["kept_checkpoints"]
    assert code == 0 and held["ok"] is True and held["source"] == kept


def test_a_kept_checkpoint_not_signed_by_the_key_or_unreadable_is_unusable(
    tmp_path: Path,
) -> None:
    """A checkpoint no key of the export's chain signed is evidence of nothing: exit 2, as the
    monitor's ``--compare`` says of it, never a pass."""
    export = _export(tmp_path, log(20), (20,))
    other = tmp_path / "other.json"
    other.write_text(
        json.dumps(
            signed(new_signing_key(), json.loads(Path(kept_file(tmp_path)).read_text())["document"])
        ),
        encoding="utf-8",
    )
    code, out = audit(export, "--checkpoint", str(other))
    assert code == 2 and "not signed by" in out, out
    missing = str(tmp_path / "missing.json")
    code, out = audit(export, "--checkpoint", missing)
    assert code == 2 and "missing.json" in out, out
