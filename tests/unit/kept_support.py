"""A log, its checkpoints signed by one key, and the checkpoint a witness or an auditor kept,
for the tests of exports held to kept checkpoints (``verify.pyz audit --checkpoint``)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from sota_casino.core import audit_chain
from sota_casino.core import merkle
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import signed
from sota_casino.verify import main

KEY = new_signing_key()
PUBLIC = public_key_hex(KEY)
#: How many entries the kept checkpoint covers.
KEPT_SIZE = 12


def log(n: int, *, rewritten_at: int | None = None) -> list[dict[str, Any]]:
    """A log of ``n`` entries; from ``rewritten_at`` on (a seq) every entry says otherwise and
    the chain is linked again, as an operator with the database rewrites or forks it."""
    return audit_chain.link_entries(
        {
            "seq": seq,
            "time": f"2025-04-01T10:00:{seq:02d}.000000Z",
            "actor": "user:7",
            "action": "user.login",
            "subject": "user:7",
            "data": {"attempt": seq, "forged": rewritten_at is not None and seq >= rewritten_at},
        }
        for seq in range(1, n + 1)
    )


def checkpoint(entries: list[dict[str, Any]], size: int, time: str) -> dict[str, Any]:
    """The checkpoint over the first ``size`` of ``entries``, signed by :data:`KEY`."""
    root = merkle.root([bytes.fromhex(entry["hash"]) for entry in entries[:size]]).hex()
    return signed(KEY, audit_chain.checkpoint_document(size, root, time))


def kept_file(
    tmp_path: Path, size: int = KEPT_SIZE, *, name: str = "checkpoint.json", answer: bool = False
) -> str:
    """Write the checkpoint kept over the honest log's first ``size`` entries, as the monitor
    keeps it (``{"document", "signature"}``) or as the public log answers it."""
    envelope = checkpoint(log(size), size, "2025-04-01T10:59:00.000000Z")
    held = {"size": size, "checkpoint": envelope} if answer else envelope
    path = tmp_path / name
    path.write_text(json.dumps(held), encoding="utf-8")
    return str(path)


def audit(*args: str) -> tuple[int, str]:
    """Run ``verify.pyz audit`` with the key pinned: its exit code and what it printed."""
    out = io.StringIO()
    return main(["audit", *args, "--public-key", PUBLIC], out), out.getvalue()


def fails_only_held_to_kept(tmp_path: Path, export: str) -> tuple[str, str]:
    """Check ``export`` alone, which passes, then held to the checkpoint kept over the honest
    log's first :data:`KEPT_SIZE` entries, which fails it: the kept file and what that said."""
    code, out = audit(export)
    assert code == 0 and out.splitlines()[-1] == "Result: OK (exit 0)", out  # alone, it passes
    kept = kept_file(tmp_path)
    code, out = audit(export, "--checkpoint", kept)
    assert code == 1, out
    return kept, out
