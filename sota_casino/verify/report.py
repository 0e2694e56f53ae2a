"""What the verifier found: findings per check, rows per document, a report per bundle, and
their text and JSON forms."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Final
from typing import NamedTuple
from typing import TextIO

PASS: Final = "pass"
FAIL: Final = "fail"
PENDING: Final = "pending"
SKIP: Final = "skip"  # does not apply, or could not run because a check before it failed

#: The checks of docs/fairness.md, in its order.
#: ``records`` compares the bundle with what the player kept before and during play (``--records``).
#: ``player`` checks the decisions and moves the player signed (:mod:`.player_signatures`);
#: ``log`` checks the documents' anchors in the signed audit log (:mod:`.anchors`).
CHECKS: Final = (
    "signature",
    "commitment",
    "pair",
    "nonces",
    "cards",
    "outcome",
    "player",
    "records",
    "log",
)
DOCUMENT_CHECKS: Final[dict[str, tuple[str, ...]]] = {
    "commitment": ("signature", "commitment", "pair", "records", "log"),
    "reveal": ("signature", "commitment", "pair", "nonces", "log"),
    "round": CHECKS,
}
NOT_REVEALED: Final = "pending (not revealed)"

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_UNUSABLE: Final = 2
#: Every check passed, but only against the key the bundle carries: that proves nothing about
#: who signed it.
EXIT_UNPINNED: Final = 3
#: Nothing failed, but some documents are not yet in a signed checkpoint of the log (the bundle
#: lists them as pending): not proven until the bundle is fetched again and they are.
EXIT_NOT_ANCHORED: Final = 4

#: The checks whose pending findings wait for a signed checkpoint, not for the reveal: the
#: documents' anchors, and a key registration no checkpoint covers yet.
LOG_PENDING_CHECKS: Final = frozenset(("log", "player"))
NOT_ANCHORED_MEANING: Final = (
    "not every document is in a signed checkpoint of the casino's log yet, so the log proves "
    "nothing about those: fetch the bundle again later"
)

UNPINNED_MEANING: Final = (
    "signatures match the key in the bundle itself, which proves nothing about who signed"
)

#: How the key that every signature was checked against came to be trusted.
TRUST_PINNED: Final = "pinned"  # --public-key or --key-file
TRUST_KNOWN: Final = "known"  # the known-keys file already held it for the service
TRUST_FIRST_USE: Final = "first use"  # not known before: now recorded in the known-keys file
TRUST_SUCCESSOR: Final = "successor"  # a key change signed by the trusted key names it
TRUST_UNPINNED: Final = "unpinned"  # only the bundle's own key: proves nothing

#: What a row skips until the player's records are compared with it.
UNCOMPARED: Final[frozenset[str]] = frozenset(("records",))


class BundleError(ValueError):
    """The input is not a bundle at all (exit code 2)."""


# --- findings and reports -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    """A failed or pending check, and where: the bundle, a document or a round."""

    where: str  # "bundle", "commitment", "reveal" or "round"
    check: str
    status: str  # FAIL or PENDING
    message: str
    index: int | None = None  # the receipt's position in the bundle
    round_id: Any = None
    nonce: Any = None

    @property
    def place(self) -> str:
        if self.where == "round":
            if self.round_id is None:
                return f"receipt #{(self.index or 0) + 1}"
            return f"round {self.round_id} (nonce {self.nonce})"
        if self.where == "bundle":
            return "bundle"
        return f"{self.where} document"

    def text(self) -> str:
        """Return the finding as one line: place, check, message."""
        return f"{self.place}: {self.check}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "round_id": self.round_id,
            "nonce": self.nonce,
            "check": self.check,
            "status": self.status,
            "message": self.message,
            "text": self.text(),
        }


class Row(NamedTuple):
    """The checks of one signed document of the bundle: the commitment, the reveal or a round.

    An immutable named tuple rather than a frozen dataclass: the verifier builds one for every
    receipt, and a tuple is built three times faster.
    """

    where: str
    index: int | None  # type: ignore[assignment]  # shadows tuple.index, which rows never use
    round_id: Any
    game: Any
    nonce: Any
    client_seed: Any
    findings: tuple[Finding, ...]
    skipped: frozenset[str]

    @property
    def statuses(self) -> dict[str, str]:
        """Return each check's status: fail, pending, skip (n/a) or pass."""
        applicable = DOCUMENT_CHECKS[self.where]
        failed = {f.check for f in self.findings if f.status == FAIL}
        pending = {f.check for f in self.findings if f.status == PENDING}
        statuses: dict[str, str] = {}
        for check in CHECKS:
            if check in failed:
                statuses[check] = FAIL
            elif check in pending:
                statuses[check] = PENDING
            elif check not in applicable or check in self.skipped:
                statuses[check] = SKIP
            else:
                statuses[check] = PASS
        return statuses

    @property
    def ok(self) -> bool:
        return all(f.status != FAIL for f in self.findings)

    def __reduce__(self) -> tuple[type[Row], tuple[Any, ...]]:
        # Rows come back from worker processes by the thousand: a plain constructor call
        # pickles twice as fast as a named tuple's default protocol.
        return Row, tuple(self)

    def with_findings(self, extra: Sequence[Finding]) -> Row:
        return self._replace(findings=self.findings + tuple(extra)) if extra else self


@dataclass(frozen=True, slots=True)
class SignedLog:
    """What a bundle shows of the casino's log, as the trusted keys prove it: its checkpoints
    signed by one of them, and the entries its anchors prove into those (compared across the
    bundles given together: one log has one checkpoint a size and one entry a seq)."""

    checkpoints: tuple[Mapping[str, Any], ...] = ()
    entries: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class Report:
    """Everything found in one bundle."""

    source: str
    public_key_hex: str
    seed_pair_id: Any
    user_id: Any
    revealed: bool
    documents: tuple[Row, ...]
    rounds: tuple[Row, ...]
    bundle_findings: tuple[Finding, ...]
    trust: str = TRUST_PINNED
    trust_note: str = ""  # what the reader must know about the key, in a sentence or two
    log: SignedLog = field(default_factory=SignedLog)

    @property
    def unpinned(self) -> bool:
        """Whether the signatures were checked only against the key the bundle carries."""
        return self.trust == TRUST_UNPINNED

    @property
    def findings(self) -> list[Finding]:
        found = list(self.bundle_findings)
        for row in (*self.documents, *self.rounds):
            found.extend(row.findings)
        return found

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.status == FAIL]

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def pending(self) -> bool:
        return any(f.status == PENDING for f in self.findings)

    @property
    def not_yet_anchored(self) -> bool:
        """Whether a document (or a key registration) waits for a signed checkpoint: the
        bundle then proves nothing about it in the log, however well the rest holds."""
        return any(f.status == PENDING and f.check in LOG_PENDING_CHECKS for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        """Return the report as plain JSON (the shape of ``--json``)."""
        failed_rounds = sum(1 for row in self.rounds if not row.ok)
        return {
            "source": self.source,
            "seed_pair_id": self.seed_pair_id,
            "user_id": self.user_id,
            "public_key_hex": self.public_key_hex,
            "trust": self.trust,
            "trust_note": self.trust_note,
            "revealed": self.revealed,
            "ok": self.ok,
            "pending": self.pending,
            "not_yet_anchored": self.not_yet_anchored,
            "documents": [
                {"document": row.where, "checks": row.statuses} for row in self.documents
            ],
            "rounds": [
                {
                    "round_id": row.round_id,
                    "game": row.game,
                    "nonce": row.nonce,
                    "ok": row.ok,
                    "checks": row.statuses,
                }
                for row in self.rounds
            ],
            "findings": [f.to_dict() for f in self.findings],
            "summary": {
                "rounds": len(self.rounds),
                "passed": len(self.rounds) - failed_rounds,
                "failed": failed_rounds,
                "pending_checks": sum(1 for f in self.findings if f.status == PENDING),
            },
        }


class _Collector:
    """Gathers the findings of one row."""

    __slots__ = ("where", "index", "round_id", "nonce", "findings", "skipped")

    def __init__(
        self, where: str, index: int | None = None, round_id: Any = None, nonce: Any = None
    ):
        self.where, self.index, self.round_id, self.nonce = where, index, round_id, nonce
        self.findings: list[Finding] = []
        self.skipped = UNCOMPARED  # a new set only for the few rows that skip another check

    def _add(self, check: str, status: str, message: str) -> None:
        self.findings.append(
            Finding(self.where, check, status, message, self.index, self.round_id, self.nonce)
        )

    def fail(self, check: str, message: str) -> None:
        self._add(check, FAIL, message)

    def pending(self, check: str, message: str = NOT_REVEALED) -> None:
        self._add(check, PENDING, message)

    def skip(self, *checks: str) -> None:
        self.skipped = self.skipped.union(checks)

    def row(self, game: Any = None, client_seed: Any = None) -> Row:
        return Row(
            self.where,
            self.index,
            self.round_id,
            game,
            self.nonce,
            client_seed,
            tuple(self.findings),
            self.skipped,
        )


# --- text ----------------------------------------------------------------------------------------


class Symbols:
    """Check marks, or plain words where the terminal cannot show them."""

    def __init__(self, stream: TextIO) -> None:
        try:
            "✓✗…–".encode(getattr(stream, "encoding", None) or "utf-8")
            fancy = True
        except (UnicodeEncodeError, LookupError):
            fancy = False
        self.marks = (
            {PASS: "✓", FAIL: "✗", PENDING: "…", SKIP: "–"}
            if fancy
            else {PASS: "ok", FAIL: "FAIL", PENDING: "wait", SKIP: "-"}
        )


class ProgressBar:
    """A plain-text progress bar on stderr, redrawn in place."""

    WIDTH: Final = 30

    def __init__(self, label: str, stream: TextIO) -> None:
        self.label, self.stream, self.shown = label, stream, -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 * done // total if total else 100
        if percent == self.shown and done != total:
            return
        self.shown = percent
        filled = self.WIDTH * done // total if total else self.WIDTH
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total} receipts {percent:3d}%")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def short(hex_text: str) -> str:
    """Return the first 16 digits of a hash or key, for messages."""
    return f"{hex_text[:16]}…"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    return [
        "  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in (header, *rows)
    ]


def render_report(report: Report, symbols: Symbols, *, quiet: bool = False) -> list[str]:
    """Return the human-readable lines of one bundle's report."""
    marks = symbols.marks
    revealed = "server seed revealed" if report.revealed else "server seed not revealed yet"
    lines = [
        f"Bundle {report.source}: seed pair {report.seed_pair_id} of user {report.user_id}, "
        f"public key {short(report.public_key_hex)}, {revealed}"
    ]
    if report.trust_note:
        lines.append(f"  {report.trust_note}")
    if not quiet:
        rows = [
            [row.where, "", "", *(marks[row.statuses[c]] for c in CHECKS)]
            for row in report.documents
        ]
        rows += [
            [
                str(row.round_id),
                str(row.game),
                str(row.nonce),
                *(marks[row.statuses[c]] for c in CHECKS),
            ]
            for row in report.rounds
        ]
        lines += ["  " + line for line in table(["round", "game", "nonce", *CHECKS], rows)]
        lines.append(
            f"  ({marks[PASS]} passed, {marks[FAIL]} failed, {marks[PENDING]} pending until the "
            f"reveal or a signed checkpoint, {marks[SKIP]} not applicable or not compared)"
        )
    failures = report.failures
    if failures:
        lines.append("  Failures:")
        lines += [f"    {f.text()}" for f in failures]
    pending = [f for f in report.findings if f.status == PENDING]
    unrevealed = Counter(f.check for f in pending if f.check not in LOG_PENDING_CHECKS)
    unlogged = Counter(f.check for f in pending if f.check in LOG_PENDING_CHECKS)
    if unrevealed:
        what = ", ".join(f"{check} ({count})" for check, count in unrevealed.items())
        lines.append(f"  Pending until the server seed is revealed: {what}")
    if unlogged:
        what = ", ".join(f"{check} ({count})" for check, count in unlogged.items())
        lines.append(f"  Not yet in the signed log (fetch the bundle again later): {what}")
    failed_rounds = sum(1 for row in report.rounds if not row.ok)
    verdict = "FAILED" if failures else ("OK so far (pending the reveal)" if pending else "OK")
    if unlogged and not failures:
        verdict = f"NOT YET ANCHORED: {NOT_ANCHORED_MEANING}"
    if report.unpinned and not failures:
        verdict = f"UNPINNED: {UNPINNED_MEANING}"
    lines.append(
        f"  {len(report.rounds)} rounds: {len(report.rounds) - failed_rounds} passed, "
        f"{failed_rounds} failed. {verdict}"
    )
    return lines
