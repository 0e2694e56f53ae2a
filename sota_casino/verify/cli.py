"""The command line: ``python -m sota_casino.verify`` (or ``python verify.pyz``).

``verify BUNDLE.json ... (--public-key HEX | --key-file FILE | --service NAME) [--records FILE]``
checks receipt bundles; ``verify audit EXPORT.jsonl (--public-key HEX | --key-file FILE)``
checks an audit log export; ``verify monitor URL --state DIR [--public-key HEX]`` witnesses
the service's audit log (:mod:`.monitor`). The exit codes are :data:`EXIT_CODES`.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import sys
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any
from typing import Final
from typing import TextIO
from typing import Unpack
from typing import cast

from ..core import audit_chain
from ..core.fairness import WrittenOtherwise
from ..core.fairness import format_time
from ..core.fairness import is_hex64
from ..core.fairness import time_or_none
from ..core.fairness import whole_number_json
from .audit import read_export
from .audit import render_audit
from .audit import verify_audit_export
from .monitor import Unusable
from .monitor import monitor
from .records import Records
from .records import RecordsError
from .records import unplaced_notice
from .records import unplaced_rounds
from .report import EXIT_FAILED
from .report import EXIT_NOT_ANCHORED
from .report import EXIT_OK
from .report import EXIT_UNPINNED
from .report import EXIT_UNUSABLE
from .report import NOT_ANCHORED_MEANING
from .report import TRUST_FIRST_USE
from .report import TRUST_KNOWN
from .report import TRUST_PINNED
from .report import TRUST_SUCCESSOR
from .report import UNPINNED_MEANING
from .report import BundleError
from .report import ProgressBar
from .report import Report
from .report import Symbols
from .report import render_report
from .report import short
from .runner import PARALLEL_MIN_ROUNDS
from .runner import BundleOptions
from .runner import SignedDocument
from .runner import signed_documents
from .runner import verify_bundle
from .runner import with_equivocations
from .runner import with_forked_logs
from .trust import DEFAULT_KNOWN_KEYS
from .trust import KeyProblem
from .trust import KnownKeys
from .trust import check_service_name
from .trust import read_key_file
from .trust import refuse_weak_key

EXIT_CODES: Final = (
    "Exit codes: 0 everything checkable holds against a trusted key; 1 something fails (a "
    "changed key without a signed key change included); 2 unusable input; 3 UNPINNED: every "
    "check passed, but only against the key the bundle carries; 4 NOT YET ANCHORED: nothing "
    "fails, but some documents are not in a signed checkpoint of the log yet (fetch the bundle "
    "again later)."
)


def _read_bundles(path: str) -> list[tuple[str, object]]:
    """Return the bundles of a file, each with a label.

    :raises BundleError: if the file cannot be read, is not JSON, or is an empty list.
    """
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BundleError(f"cannot read {path}: {exc}") from None
    try:
        data = whole_number_json(text)
    except WrittenOtherwise as exc:
        raise BundleError(str(exc)) from None
    except ValueError as exc:  # json.JSONDecodeError, NaN or an infinity
        raise BundleError(f"{path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise BundleError(f"{path} is nested too deeply to be a bundle") from None
    if data == []:
        # Nothing in it fails, so it would pass: an empty answer from the service is no proof.
        raise BundleError(f"{path} holds no bundle (an empty list)")
    if isinstance(data, list):
        return [(f"{path}[{i}]", item) for i, item in enumerate(data)]
    return [(path, data)]


@dataclasses.dataclass(frozen=True, slots=True)
class _Move:
    """A key the known-keys file is to hold for the service, once the run's bundles were
    compared: a bundle that trusted it on first use, or followed a signed key change to it."""

    key: str
    why: str


class _KeyChoice:
    """Chooses the trusted key for each bundle, and keeps the known-keys file up to date.

    The file is written only once every bundle of the run was read and the bundles were
    compared (:meth:`save`): a bundle that passes alone may still fail for contradicting
    another (an equivocation), and a failing run leaves the file as it was.
    """

    def __init__(self, args: argparse.Namespace, records: Records | None) -> None:
        self.pinned: str | None = args.public_key
        self.pinned_by = "--public-key"
        if args.key_file is not None:
            self.pinned, self.pinned_by = read_key_file(args.key_file), f"key file {args.key_file}"
        self.service: str | None = args.service
        self.known = KnownKeys.load(args.known_keys) if self.service is not None else None
        if self.pinned is None and self.service is None and records is not None:
            self.pinned, self.pinned_by = records.public_key_hex, "the records file"
        #: What each report returned so far moves the file to (``None``: nothing).
        self.moves: list[_Move | None] = []

    def verify(self, bundle: object, **options: Unpack[BundleOptions]) -> Report:
        report, move = self._verify(bundle, options)
        if move is not None and report.ok:
            # The next bundles of the run are checked against it; the file waits for save().
            assert self.known is not None and self.service is not None
            self.known = dataclasses.replace(
                self.known, keys={**self.known.keys, self.service: move.key}
            )
        self.moves.append(move)
        return report

    def save(self, reports: Sequence[Report]) -> list[Report]:
        """Write the keys the run moved to, each only if the bundle that moved it still passes
        now the bundles were compared; each such report's note says which it was.

        :param reports: the reports :meth:`verify` returned, in order, as compared.
        """
        saved = []
        for report, move in zip(reports, self.moves, strict=True):
            if move is not None:
                assert self.service is not None and self.known is not None
                if report.ok:
                    KnownKeys.load(self.known.path).with_key(self.service, move.key, move.why)
                    written = f"written to {self.known.path}"
                else:
                    written = "not written, since the bundle fails"
                report = dataclasses.replace(report, trust_note=f"{report.trust_note} ({written})")
            saved.append(report)
        return saved

    def _verify(self, bundle: object, options: BundleOptions) -> tuple[Report, _Move | None]:
        if self.known is None or self.service is None:
            report = verify_bundle(bundle, self.pinned, **options)
            if report.trust == TRUST_PINNED and self.pinned_by != "--public-key":
                report = dataclasses.replace(report, trust_note=f"Key pinned by {self.pinned_by}.")
            return report, None
        known = self.known.key_of(self.service)
        if known is None:
            return self._first_use(bundle, options)
        report = verify_bundle(bundle, known, **options)
        if report.trust == TRUST_SUCCESSOR and report.ok:
            note = f"{report.trust_note} The known-keys file moves on to the new key"
            move = _Move(report.public_key_hex, f"key change signed by {short(known)}")
            return dataclasses.replace(report, trust_note=note), move
        if report.trust == TRUST_PINNED:
            note = f"Key known for {self.service} ({self.known.path})."
            report = dataclasses.replace(report, trust=TRUST_KNOWN, trust_note=note)
        return report, None

    def _first_use(self, bundle: object, options: BundleOptions) -> tuple[Report, _Move | None]:
        assert self.known is not None and self.service is not None
        key = bundle.get("public_key_hex") if isinstance(bundle, dict) else None
        report = verify_bundle(bundle, key if is_hex64(key) else None, **options)
        note = (
            f"FIRST USE: no key was known for {self.service}; trusting the bundle's key "
            f"{report.public_key_hex} from now on. Compare it with the key the service "
            "publishes (GET /api/v1/fairness/public-key, `flask keys show`) through another "
            "channel: this run proves only that the bundle matches it. The known-keys file "
            "takes it"
        )
        report = dataclasses.replace(report, trust=TRUST_FIRST_USE, trust_note=note)
        return report, _Move(report.public_key_hex, "first use")


def _bundle_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    reports: list[Report] = []
    signed: list[list[SignedDocument]] = []
    errors: list[dict[str, str]] = []
    show_progress = args.progress or err.isatty()
    try:
        records = Records.read(args.records) if args.records is not None else None
        choice = _KeyChoice(args, records)
    except (RecordsError, KeyProblem) as exc:
        return _unusable(str(exc), args.json, out)
    for path in args.bundles:
        try:
            labelled = _read_bundles(path)
        except BundleError as exc:
            errors.append({"source": path, "message": str(exc)})
            continue
        # Bundles are compared with each other, and with the documents the records hold.
        compared = len(args.bundles) > 1 or len(labelled) > 1 or bool(records and records.verified)
        for label, bundle in labelled:
            bar = ProgressBar(f"verifying {label}", err) if show_progress else None
            try:
                report = choice.verify(
                    bundle,
                    records=records,
                    source=label,
                    jobs=args.jobs,
                    progress=bar,
                    fetched_at=args.fetched_at,
                )
            except (BundleError, KeyProblem) as exc:
                errors.append({"source": label, "message": str(exc)})
                continue
            reports.append(report)
            # Kept small (names and hashes), not the bundles: compared once all are read.
            signed.append(signed_documents(bundle, report) if compared else [])
    reports = choice.save(
        with_forked_logs(
            with_equivocations(reports, signed, records.verified if records is not None else None)
        )
    )
    # Records name rounds by integer ids: a receipt's id of another kind (failed) holds none.
    held = {
        row.round_id for report in reports for row in report.rounds if type(row.round_id) is int
    }
    unplaced = unplaced_rounds(records, held) if records is not None else []
    code = _exit_code(reports, errors)
    if args.json:
        document = {
            "ok": code == EXIT_OK,
            "pending": any(r.pending for r in reports),
            "not_yet_anchored": any(r.not_yet_anchored for r in reports),
            "unpinned": any(r.unpinned for r in reports),
            "exit_code": code,
            "bundles": [r.to_dict() for r in reports],
            "errors": errors,
            "unplaced_rounds": unplaced,
        }
        json.dump(document, out, ensure_ascii=False, indent=2)
        out.write("\n")
        return code
    symbols = Symbols(out)
    for report in reports:
        out.write("\n".join(render_report(report, symbols, quiet=args.quiet)) + "\n\n")
    if unplaced:
        out.write(f"Not compared: {unplaced_notice(unplaced)}\n")
    for error in errors:
        out.write(f"Unusable input {error['source']}: {error['message']}\n")
    out.write(f"{_overall(reports, errors, code)}{_unplaced_clause(unplaced)} (exit {code})\n")
    return code


def _exit_code(reports: Sequence[Report], errors: Sequence[object]) -> int:
    if errors:
        return EXIT_UNUSABLE
    if not all(r.ok for r in reports):
        return EXIT_FAILED
    if any(r.unpinned for r in reports):
        return EXIT_UNPINNED
    return EXIT_NOT_ANCHORED if any(r.not_yet_anchored for r in reports) else EXIT_OK


def _unusable(message: str, as_json: bool, out: TextIO) -> int:
    if as_json:
        json.dump({"ok": False, "exit_code": EXIT_UNUSABLE, "errors": [message]}, out, indent=2)
        out.write("\n")
    else:
        out.write(f"Unusable input: {message}\nResult: UNUSABLE INPUT (exit {EXIT_UNUSABLE})\n")
    return EXIT_UNUSABLE


def _overall(reports: Sequence[Report], errors: Sequence[Mapping[str, str]], code: int) -> str:
    """The result line, but for the unplaced rounds and the exit code."""
    rounds = sum(len(r.rounds) for r in reports)
    failed = sum(1 for r in reports if not r.ok)
    summary = f"{len(reports)} bundle(s), {rounds} rounds"
    if code == EXIT_UNUSABLE:
        return (
            f"Result: UNUSABLE INPUT: {len(errors)} file(s) or bundle(s) could not be checked; "
            f"{summary}, {failed} failed"
        )
    if code == EXIT_FAILED:
        return f"Result: FAILED: {failed} of {len(reports)} bundle(s) do not verify; {summary}"
    if code == EXIT_UNPINNED:
        return (
            f"Result: UNPINNED: {UNPINNED_MEANING}; {summary}. Pin the service's key with "
            "--public-key HEX, --key-file FILE or --service NAME"
        )
    if code == EXIT_NOT_ANCHORED:
        return f"Result: NOT YET ANCHORED: {NOT_ANCHORED_MEANING}; {summary}"
    if any(r.pending for r in reports):
        return (
            f"Result: OK so far: {summary}; everything checkable passed, and the checks that need "
            "the server seed are pending until it is revealed"
        )
    return f"Result: OK: {summary}, every check passed"


def _unplaced_clause(unplaced: Sequence[int]) -> str:
    """What the result line adds for the recorded rounds compared with nothing: they fail
    nothing, yet the result must not read as if every recorded round was compared."""
    if not unplaced:
        return ""
    one = len(unplaced) == 1
    return (
        f"; {len(unplaced)} recorded round{'' if one else 's'} with no seed pair "
        f"{'is' if one else 'are'} in none of them and {'was' if one else 'were'} compared with "
        "nothing (above)"
    )


def _audit_command(args: argparse.Namespace, out: TextIO) -> int:
    try:
        key = args.public_key or read_key_file(args.key_file)
        export = read_export(args.export)
    except (OSError, UnicodeDecodeError, audit_chain.ExportFormatError, KeyProblem) as exc:
        return _unusable(f"cannot use {args.export}: {exc}", args.json, out)
    try:
        report = verify_audit_export(export, key, source=args.export, kept=args.checkpoint)
    except Unusable as exc:
        return _unusable(f"cannot use a kept checkpoint: {exc}", args.json, out)
    code = EXIT_OK if report.ok else EXIT_FAILED
    if args.json:
        json.dump({**report.to_dict(), "exit_code": code}, out, ensure_ascii=False, indent=2)
        out.write("\n")
        return code
    out.write("\n".join(render_audit(report, Symbols(out))) + "\n")
    return code


def _key_argument(text: str) -> str:
    key = text.strip().lower()
    if not is_hex64(key):
        raise argparse.ArgumentTypeError(
            "a public key is 64 hex digits (the raw 32-byte Ed25519 key)"
        )
    try:
        return refuse_weak_key(key, "--public-key")
    except KeyProblem as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _service_argument(text: str) -> str:
    try:
        return check_service_name(text)
    except KeyProblem as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _fetched_at(text: str) -> datetime:
    """``--fetched-at``: ``now``, or a time of the scheme's form, not past this computer's
    clock (no bundle was fetched then)."""
    now = datetime.now(UTC)
    if text == "now":
        return now
    fetched = time_or_none(text)
    if fetched is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither now nor a time written as YYYY-MM-DDTHH:MM:SS.ffffffZ"
        )
    if fetched > now:
        raise argparse.ArgumentTypeError(
            f"{text} is past this computer's clock ({format_time(now)}): no bundle was fetched then"
        )
    return fetched


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError("jobs must be a whole number of at least 1")
    return jobs


def _add_key_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    keys = parser.add_mutually_exclusive_group(required=required)
    keys.add_argument(
        "--public-key",
        type=_key_argument,
        metavar="HEX",
        help="trust this key (the service's published Ed25519 key, 64 hex digits)",
    )
    keys.add_argument(
        "--key-file",
        metavar="FILE",
        help="trust the key in FILE (a PEM public key, or 64 hex digits)",
    )


def _bundle_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python verify.pyz",
        description=(
            "Verify Sota Casino receipt bundles offline (every check of docs/fairness.md) "
            "against a "
            "key you trust. To check an audit log export instead: python verify.pyz audit "
            "EXPORT.jsonl --public-key HEX."
        ),
        epilog=EXIT_CODES,
    )
    parser.add_argument(
        "bundles",
        nargs="+",
        metavar="BUNDLE.json",
        help="bundle files ('-' reads stdin); a file may hold a JSON list of bundles",
    )
    _add_key_options(parser, required=False)
    parser.add_argument(
        "--service",
        type=_service_argument,
        metavar="NAME",
        help=(
            "trust the key the known-keys file holds for NAME (e.g. casino.example.com); "
            "on first use, the bundle's key is written there, loudly"
        ),
    )
    parser.add_argument(
        "--known-keys",
        default=str(DEFAULT_KNOWN_KEYS),
        metavar="FILE",
        help=f"the known-keys file of --service (default {DEFAULT_KNOWN_KEYS})",
    )
    parser.add_argument(
        "--records",
        metavar="FILE",
        help=(
            "the player's records (commitments shown before play, decisions and moves sent); "
            "the bundles must agree with them. Their key pins the service when no other does"
        ),
    )
    parser.add_argument(
        "--fetched-at",
        type=_fetched_at,
        metavar="TIME",
        help=(
            "when you fetched the bundles, by this computer's clock: now, or "
            "YYYY-MM-DDTHH:MM:SS.ffffffZ. The service signs a checkpoint over every document "
            "when a bundle is fetched, so a document still pending then, past its time and the "
            "bound of 1 hour, fails; without it, a bundle only its checkpoints date"
        ),
    )
    parser.add_argument("--json", action="store_true", help="print a machine-readable JSON report")
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help=f"worker processes for bundles of {PARALLEL_MIN_ROUNDS} rounds or more",
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show a progress bar on stderr even when it is not a terminal",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only failures and the summary, not the table",
    )
    return parser


def _audit_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python verify.pyz audit",
        description=(
            "Verify an audit log export: the hash chain; the keys (each pair, round and key "
            "logged once, a pair's rounds bet in nonce order and settled before its reveal, "
            "which counts them, a player's actions signed once the player registered a key, the "
            "service's keys changing in one chain); the commitments (no two pairs committed to "
            "one server seed); the reveals (each pair's revealed server seed hashing to its "
            "logged commitment); each checkpoint's signature and Merkle root, and their "
            "consistency; and, with --checkpoint, the checkpoints a witness kept. The export of "
            "a range is held to its own entries: a reveal whose commitment is before it is not "
            "checked."
        ),
        epilog="Exit codes: 0 everything holds, 1 something fails, 2 unusable input.",
    )
    parser.add_argument(
        "export", metavar="EXPORT.jsonl", help="the JSON Lines export ('-' reads stdin)"
    )
    _add_key_options(parser, required=True)
    parser.add_argument(
        "--checkpoint",
        metavar="FILE",
        action="append",
        default=[],
        help=(
            "a checkpoint a witness kept (the monitor's checkpoint.json, an answer of the "
            "public log, a bundle): the export's first entries must have its root (repeatable)"
        ),
    )
    parser.add_argument("--json", action="store_true", help="print a machine-readable JSON report")
    return parser


def _monitor_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python verify.pyz monitor",
        description=(
            "Witness the casino's audit log: fetch its latest signed checkpoint, check the "
            "signature and that it extends the checkpoint kept in DIR, then keep it. Run it "
            "from cron; publish what it keeps."
        ),
        epilog=(
            "Exit codes: 0 consistent; 1 a fork, a shrunk log or a bad signature (the line "
            "names both sizes and roots; the evidence is written to DIR); 2 unusable "
            "(unreachable, not a checkpoint, no key)."
        ),
    )
    parser.add_argument("url", metavar="URL", help="the service, e.g. https://casino.example")
    parser.add_argument(
        "--state", required=True, metavar="DIR", help="where the kept checkpoint and key live"
    )
    _add_key_options(parser, required=False)
    parser.add_argument(
        "--timeout", type=float, default=10.0, metavar="S", help="seconds per request"
    )
    parser.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="FILE",
        help="a signed checkpoint another witness published, held to the one kept (repeatable)",
    )
    return parser


def _monitor_command(args: argparse.Namespace, out: TextIO) -> int:
    key = args.public_key
    if args.key_file is not None:
        try:
            key = read_key_file(args.key_file)
        except KeyProblem as exc:
            out.write(f"UNUSABLE: {exc}\n")
            return EXIT_UNUSABLE
    verdict = monitor(args.url, args.state, key, timeout=args.timeout, compare=args.compare)
    out.write(verdict.line + "\n")
    return verdict.code


#: What a terminal acts on instead of showing, each written as its JSON escape: the C0 controls
#: but the line break and the tab (escape sequences move the cursor and erase lines), DEL, the
#: C1 controls, and the bidirectional overrides and isolates that reorder a line.
_CONTROLS: Final = {
    code: f"\\u{code:04x}"
    for code in (
        *range(0x20),
        0x7F,
        *range(0x80, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    )
    if chr(code) not in "\n\t"
}


class _Inert:
    """A text stream that shows the controls a report quotes instead of passing them to the
    terminal: a bundle's values are the casino's, and one holding ``ESC[1A`` could otherwise
    write over the line that says it fails. (In JSON the escape is the same character.)"""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(text.translate(_CONTROLS))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _lenient(stream: TextIO) -> TextIO:
    """The process's ``stream``, writing what its encoding cannot hold escaped: a report names
    the odd values a bundle holds (a lone surrogate, which no UTF-8 has), and must not stop at
    the first line that names one."""
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(errors="backslashreplace")
    return stream


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the verifier; return its exit code (argparse exits with 2 on a bad command line)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = cast(TextIO, _Inert(out or _lenient(sys.stdout)))
    err = err or _lenient(sys.stderr)
    if argv[:1] == ["audit"]:
        return _audit_command(_audit_parser().parse_args(argv[1:]), out)
    if argv[:1] == ["monitor"]:
        return _monitor_command(_monitor_parser().parse_args(argv[1:]), out)
    args = _bundle_parser().parse_args(argv)
    if args.service is not None and (args.public_key or args.key_file):
        _bundle_parser().error("--service takes its key from the known-keys file: give one")
    return _bundle_command(args, out, err)
