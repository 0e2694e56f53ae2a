"""Verify Sota Casino's receipts and audit log offline, against a key you trust.

``python -m sota_casino.verify BUNDLE.json ... --public-key HEX`` (or the standalone
``python verify.pyz ...``) makes every check of docs/fairness.md on the bundles of
``GET /fairness/seed-pairs/{id}/bundle``, and with ``--records FILE`` compares them with what the
player kept. ``... audit EXPORT.jsonl --public-key HEX`` checks an audit log export.

The package needs only the standard library, ``cryptography`` and :mod:`sota_casino.core`:
:mod:`.checks` (the checks of one bundle's documents), :mod:`.anchors` (the documents' anchors
in the signed log), :mod:`.player_signatures` (the player's own signatures), :mod:`.report`
(findings, rows, reports and their text), :mod:`.runner` (a whole bundle, in worker processes
when large), :mod:`.trust` (which key to trust), :mod:`.records` (the player's records),
:mod:`.audit` (the audit export), :mod:`.monitor` (a witness of the log, ``... monitor``),
:mod:`.cli` (the command line) and :mod:`.build` (the zipapp).
"""

from __future__ import annotations

from .audit import AuditReport
from .audit import verify_audit_export
from .checks import PairContext
from .checks import check_round
from .checks import signature_valid
from .cli import main
from .records import Records
from .report import CHECKS
from .report import EXIT_FAILED
from .report import EXIT_NOT_ANCHORED
from .report import EXIT_OK
from .report import EXIT_UNPINNED
from .report import EXIT_UNUSABLE
from .report import FAIL
from .report import PASS
from .report import PENDING
from .report import SKIP
from .report import BundleError
from .report import Finding
from .report import Report
from .report import Row
from .runner import PARALLEL_MIN_ROUNDS
from .runner import verify_bundle

__all__ = [
    "AuditReport",
    "BundleError",
    "CHECKS",
    "EXIT_FAILED",
    "EXIT_NOT_ANCHORED",
    "EXIT_OK",
    "EXIT_UNPINNED",
    "EXIT_UNUSABLE",
    "FAIL",
    "Finding",
    "PARALLEL_MIN_ROUNDS",
    "PASS",
    "PENDING",
    "PairContext",
    "Records",
    "Report",
    "Row",
    "SKIP",
    "check_round",
    "main",
    "signature_valid",
    "verify_audit_export",
    "verify_bundle",
]
