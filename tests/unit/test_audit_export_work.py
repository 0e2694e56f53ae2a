"""The offline audit export check does each piece of work once, and says the same as before.

An export of 100,000 entries and 2,000 checkpoints is checked in about a second: each entry's
hash is read once (the chain check hands the Merkle tree the hashes it computed), a consistency
proof is built only where the roots do not already settle it, and the report looks up each
checkpoint's failed checks instead of scanning every problem for each checkpoint. The figures
are in docs/benchmarks.md (`python -m bench export`).
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterator
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sota_casino.core import audit_chain
from sota_casino.core import fairness
from sota_casino.core import merkle
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import signed
from sota_casino.verify.audit import render_audit
from sota_casino.verify.audit import verify_audit_export
from sota_casino.verify.report import Symbols

KEY = new_signing_key()
PUBLIC = public_key_hex(KEY)
EVERY = 5


def _log(n: int, actor: str = "user:7") -> list[dict[str, Any]]:
    return audit_chain.link_entries(
        {
            "seq": i,
            "time": f"2025-04-01T10:00:{i % 60:02d}.{i:06d}Z",
            "actor": actor if i == 1 else "user:7",
            "action": "user.login",
            "subject": "user:7",
            "data": {"attempt": i},
        }
        for i in range(1, n + 1)
    )


def _checkpoints(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A checkpoint every ``EVERY`` entries, signed over the roots of ``entries``."""
    tree = merkle.MerkleTree([bytes.fromhex(e["hash"]) for e in entries])
    return [
        signed(
            KEY,
            audit_chain.checkpoint_document(
                size, tree.root(size).hex(), f"2025-04-01T11:00:00.{size:06d}Z"
            ),
        )
        for size in range(EVERY, len(entries) + 1, EVERY)
    ]


def _export(entries: Sequence[dict[str, Any]], checkpoints: Sequence[dict[str, Any]]) -> Any:
    return audit_chain.parse_export_text("".join(audit_chain.export_lines(entries, checkpoints)))


class _CountedProblems(tuple[audit_chain.CheckpointProblem, ...]):
    """The problems of a report, counting how often they are read through."""

    reads = 0

    def __iter__(self) -> Iterator[audit_chain.CheckpointProblem]:
        type(self).reads += 1
        return super().__iter__()


def test_the_report_reads_its_problems_a_few_times_not_once_per_checkpoint() -> None:
    """A rewritten log fails every checkpoint: at 2,000 of them, scanning all the problems for
    each checkpoint took longer than checking the export."""
    entries = _log(200)
    rewritten = _export(_log(200, actor="system"), _checkpoints(entries))
    report = verify_audit_export(rewritten, PUBLIC)
    assert len(report.checkpoint_report.problems) == 79  # 40 roots, 39 consistencies
    problems = _CountedProblems(report.checkpoint_report.problems)
    counted = dataclasses.replace(
        report, checkpoint_report=dataclasses.replace(report.checkpoint_report, problems=problems)
    )
    lines = render_audit(counted, Symbols(io.StringIO()))
    as_json = counted.to_dict()
    assert _CountedProblems.reads <= 4
    assert lines == render_audit(report, Symbols(io.StringIO()))
    assert as_json == report.to_dict()
    assert all(row["checks"]["root"] == "fail" for row in as_json["checkpoints"])
    assert as_json["uncovered_entries"] == 200


def test_no_consistency_proof_is_built_where_both_roots_are_the_entries_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two roots of one tree prove that the later tree extends the earlier one; a proof is still
    built, and fails, where a root is not the entries' own."""
    built: list[tuple[int, int | None]] = []
    prove = merkle.MerkleTree.consistency_proof

    def counted(tree: merkle.MerkleTree, old_size: int, new_size: int | None = None) -> Any:
        built.append((old_size, new_size))
        return prove(tree, old_size, new_size)

    monkeypatch.setattr(merkle.MerkleTree, "consistency_proof", counted)
    entries = _log(100)
    checkpoints = _checkpoints(entries)
    assert audit_chain.verify_checkpoints(entries, checkpoints, PUBLIC).ok
    assert built == []

    rewritten = _log(100, actor="system")  # after the first checkpoint was signed
    forged = [*_checkpoints(entries)[:1], *_checkpoints(rewritten)[1:]]
    problems = audit_chain.verify_checkpoints(rewritten, forged, PUBLIC).problems
    # Each later checkpoint is held to the first, the last one that passed: each fails.
    assert [(p.index, p.check) for p in problems] == [(0, "root")] + [
        (i, "consistency") for i in range(1, 20)
    ]
    assert problems[1].message.startswith(
        "checkpoint 2 (size 10): not consistent with the earlier checkpoint 1 (size 5): "
        "the consistency proof from the entries fails"
    )
    assert built == [(5, size) for size in range(10, 101, EVERY)]


class _Unread(dict[str, Any]):
    """An entry that fails the test if its hash is read."""

    def __getitem__(self, key: str) -> Any:
        raise AssertionError(f"read {key}")

    def get(self, key: str, default: Any = None) -> Any:
        raise AssertionError(f"read {key}")


def test_the_tree_takes_the_hashes_the_chain_check_read_and_reads_only_the_rest() -> None:
    entries = _log(30)
    hashes = [bytes.fromhex(e["hash"]) for e in entries]
    edited = [*entries[:9], {**entries[9], "data": {"attempt": 0}}, *entries[10:]]
    report, tree = audit_chain.verify_chain_with_tree(edited)
    assert (report.ok, report.first_bad_seq) == (False, 10)
    assert report == audit_chain.verify_chain(edited)
    assert tree.root() == merkle.root(hashes)  # the stored hashes on after the break

    malformed = [*entries[:20], {**entries[20], "hash": "not hex"}, *entries[21:]]
    report, tree = audit_chain.verify_chain_with_tree(malformed)
    assert report.first_bad_seq == 21 and tree.size == 20
    assert tree.root() == merkle.root(hashes[:20])

    unread = [_Unread(e) for e in entries[:12]] + entries[12:]
    tree = audit_chain.checkable_tree(unread, checked=hashes[:12])
    assert tree.root() == merkle.root(hashes)


@pytest.mark.parametrize("position", [0, 14])
@pytest.mark.parametrize("link", ["prev_hash", "hash"])
@pytest.mark.parametrize("value", [None, 7, "", {}, "AB" * 32])
def test_a_link_that_is_not_a_hash_is_named_wherever_it_is(
    position: int, link: str, value: object
) -> None:
    """The chain check matches a ``prev_hash`` against the pattern only where it differs from
    the hash of the entry before, which was matched already."""
    entries = _log(30)
    entries[position] = {**entries[position], link: value}
    for report in (
        audit_chain.verify_chain(entries),
        verify_audit_export(_export(entries, []), PUBLIC).chain,
    ):
        assert report.first_bad_seq == position + 1
        assert report.reason == (
            f"entry {position + 1} has a {link} that is not 64 lower-case hex digits"
        )


def test_a_range_starting_from_a_prev_hash_that_is_not_a_hash_names_it() -> None:
    entries = _log(30)[10:]
    entries[0] = {**entries[0], "prev_hash": "not hex"}
    report = audit_chain.verify_chain(entries, start_seq=11, prev_hash="not hex")
    assert report.reason == "entry 11 has a prev_hash that is not 64 lower-case hex digits"


def test_strict_json_builds_no_decoder_per_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """``json.loads`` with an argument builds a decoder for each call, as long as the parsing of
    a line of an export; one decoder serves them all, with the same answers and refusals."""
    built: list[object] = []
    init = json.JSONDecoder.__init__

    def counted(decoder: json.JSONDecoder, **options: Any) -> None:
        built.append(decoder)
        init(decoder, **options)

    monkeypatch.setattr(json.JSONDecoder, "__init__", counted)
    assert fairness.strict_json('{"a": [1, 2.5, "ä", null]}') == {"a": [1, 2.5, "ä", None]}
    assert built == []
    for text, message in [
        ('{"a": NaN}', "NaN is not a JSON value"),
        ("[Infinity]", "Infinity is not a JSON value"),
        ("\ufeff{}", "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"),
        ("{", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        ("{} x", "Extra data: line 1 column 4 (char 3)"),
    ]:
        with pytest.raises(ValueError) as caught:
            fairness.strict_json(text)
        assert str(caught.value) == message


@settings(max_examples=200)
@given(
    st.datetimes(
        min_value=datetime(1, 1, 2),  # noqa: DTZ001  # naive bounds, as hypothesis asks
        max_value=datetime(9999, 12, 31, 23, 59, 59, 999999),  # noqa: DTZ001
    )
)
def test_a_time_reads_back_as_the_utc_moment_it_was_written_from(moment: datetime) -> None:
    # From year 1 (day 2, so that no zone can take it before the calendar): the year is
    # written in four digits whatever it is, as the format says.
    parsed = fairness.parse_time(fairness.format_time(moment.replace(tzinfo=UTC)))
    assert parsed == moment.replace(tzinfo=UTC) and parsed.tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    [
        "2025-02-30T00:00:00.000000Z",
        "2025-13-01T00:00:00.000000Z",
        "2025-01-01T24:00:00.000000Z",
        "2025-01-01T23:59:60.000000Z",
        "0000-01-01T00:00:00.000000Z",
        "2025-01-01T00:00:00.000000+00:00",
        "2025-01-01T00:00:00Z",
    ],
)
def test_a_time_that_names_no_moment_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        fairness.parse_time(text)


def test_a_year_before_1000_is_written_in_four_digits() -> None:
    moment = datetime(999, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert fairness.format_time(moment) == "0999-01-02T03:04:05.000006Z"


@pytest.mark.parametrize(
    ("entries", "said"), [(5, "5 entries, 1 checkpoint"), (1, "1 entry, 0 checkpoints")]
)
def test_the_reports_first_line_counts_in_the_singular_where_there_is_one(
    entries: int, said: str
) -> None:
    # It read "10 entries, 1 checkpoints".
    log = _log(entries)
    report = verify_audit_export(_export(log, _checkpoints(log)), PUBLIC)
    assert render_audit(report, Symbols(io.StringIO()))[0].endswith(f": {said}")
