"""The audit log's hash chain, its signed Merkle checkpoints and the JSON Lines export."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from sota_casino.core import audit_chain
from sota_casino.core import merkle
from sota_casino.core.audit_chain import GENESIS_HASH
from sota_casino.core.audit_chain import checkpoint_document
from sota_casino.core.audit_chain import entry_hash
from sota_casino.core.audit_chain import link_entries
from sota_casino.core.audit_chain import verify_chain
from sota_casino.core.audit_chain import verify_checkpoints
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import signed

KEY = new_signing_key()
PUBLIC = public_key_hex(KEY)


def _raw(n: int, tag: str = "") -> list[dict[str, Any]]:
    return [
        {
            "seq": i,
            "time": f"2025-03-01T12:00:{i % 60:02d}.{i:06d}Z",
            "actor": f"user:{i % 3}" if i % 4 else None,
            "action": "round.bet" if i % 2 else "auth.login",
            "subject": f"round:{i}{tag}" if i % 2 else None,
            "data": {"amount": 100 * i, "note": "ä✓"},
        }
        for i in range(1, n + 1)
    ]


def _log(n: int, tag: str = "") -> list[dict[str, Any]]:
    return link_entries(_raw(n, tag))


def _checkpoint(entries: list[dict[str, Any]], size: int, time: str, key: Any = KEY) -> dict:
    root = merkle.root([bytes.fromhex(e["hash"]) for e in entries[:size]]).hex()
    return signed(key, checkpoint_document(size, root, time))


def _rehash_from(entries: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    """Rewrite the chain from position ``start`` on, as a forger with database access would."""
    prev = entries[start - 1]["hash"] if start else GENESIS_HASH
    return entries[:start] + link_entries(entries[start:], prev)


# --- entry hashing and the chain ----------------------------------------------------------


def test_entry_hash_is_sha256_of_the_previous_hash_and_the_canonical_entry() -> None:
    entry = {
        "seq": 1,
        "time": "2025-01-01T00:00:00.000000Z",
        "actor": "system",
        "action": "key.create",
        "subject": None,
        "data": {"public_key": "ab", "note": "ä"},
    }
    canonical = (
        '{"action":"key.create","actor":"system","data":{"note":"ä","public_key":"ab"},'
        '"seq":1,"subject":null,"time":"2025-01-01T00:00:00.000000Z"}'
    ).encode()
    expected = hashlib.sha256(bytes(32) + canonical).hexdigest()
    assert entry_hash(GENESIS_HASH, entry) == expected
    assert expected == "afb6feba7ea810c1a86544d05a448e79328c025a922d59a856ace35d67bbe704"
    # The links are not part of what is hashed.
    assert entry_hash(GENESIS_HASH, {**entry, "prev_hash": "x", "hash": "y"}) == expected


def test_a_whole_untouched_chain_verifies() -> None:
    entries = _log(25)
    report = verify_chain(entries)
    assert report.ok and report.size == 25 and report.first_bad_seq is None
    assert report.head_hash == entries[-1]["hash"]
    assert entries[0]["prev_hash"] == GENESIS_HASH
    assert verify_chain([]).ok


def test_an_edited_entry_is_named() -> None:
    entries = _log(10)
    entries[6] = {**entries[6], "data": {"amount": 1}}
    report = verify_chain(entries)
    assert not report.ok and report.first_bad_seq == 7
    assert "entry 7: its hash does not match its contents" in (report.reason or "")
    assert report.head_hash == entries[5]["hash"]


def test_an_edited_entry_with_a_recomputed_hash_breaks_the_next_link() -> None:
    entries = _log(10)
    entries[6] = audit_chain.linked_entry(entries[5]["hash"], {**entries[6], "actor": "user:666"})
    report = verify_chain(entries)
    assert report.first_bad_seq == 8
    assert report.reason == "entry 8: prev_hash does not link to entry 7's hash"


def test_a_deleted_entry_leaves_a_gap_that_is_named() -> None:
    entries = _log(10)
    del entries[3]
    report = verify_chain(entries)
    assert report.first_bad_seq == 4
    assert report.reason == "entry 4 is missing (deleted): seq jumps from 3 to 5"
    del entries[3:6]
    assert "entries 4..7 are missing (deleted): seq jumps from 3 to 8" == (
        verify_chain(entries).reason or ""
    )


def test_reordered_entries_are_named() -> None:
    entries = _log(10)
    entries[4], entries[5] = entries[5], entries[4]
    report = verify_chain(entries)
    assert report.first_bad_seq == 5
    assert report.reason == "entries are out of order: entry 6 comes before entry 5"


def test_an_inserted_entry_is_named() -> None:
    entries = _log(10)
    forged = audit_chain.linked_entry(entries[3]["hash"], {**entries[4], "action": "adjust"})
    entries.insert(4, forged)  # a second entry 5, correctly linked to entry 4
    report = verify_chain(entries)
    assert report.first_bad_seq == 6
    assert report.reason == "seq 5 appears twice (an inserted or repeated entry) where 6 was due"


def test_an_inserted_and_renumbered_entry_breaks_the_chain_after_it() -> None:
    entries = _log(10)
    shifted = [{**e, "seq": e["seq"] + 1} for e in entries[4:]]
    forged = audit_chain.linked_entry(entries[3]["hash"], {**entries[4], "action": "adjust"})
    report = verify_chain([*entries[:4], forged, *shifted])
    assert report.first_bad_seq == 6
    assert "entry 6: prev_hash does not link" in (report.reason or "")


def test_a_wrong_first_link_or_a_malformed_entry_is_named() -> None:
    entries = _log(3)
    entries[0] = {**entries[0], "prev_hash": "11" * 32}
    assert verify_chain(entries).reason == "entry 1: prev_hash does not link to the genesis hash"
    entries = _log(3)
    del entries[1]["hash"]
    assert verify_chain(entries).reason == "entry 2 lacks hash"
    entries = _log(3)
    entries[2]["time"] = "yesterday"
    assert verify_chain(entries).first_bad_seq == 3


def test_a_chain_can_be_checked_from_a_known_entry_on() -> None:
    entries = _log(10)
    report = verify_chain(entries[4:], start_seq=5, prev_hash=entries[3]["hash"])
    assert report.ok and report.head_hash == entries[-1]["hash"]


# --- checkpoints --------------------------------------------------------------------------


def _times(n: int) -> list[str]:
    return [f"2025-03-02T00:00:{i:02d}.000000Z" for i in range(n)]


def test_checkpoints_over_an_untouched_log_verify() -> None:
    entries = _log(40)
    t = _times(5)
    cps = [_checkpoint(entries, size, t[i]) for i, size in enumerate((0, 1, 17, 32, 40))]
    cps.append(_checkpoint(entries, 40, t[4]))  # the same tree signed again is fine
    report = verify_checkpoints(entries, cps, PUBLIC)
    assert report.ok and report.count == 6


def test_a_checkpoint_signed_by_another_key_fails_its_signature() -> None:
    entries = _log(8)
    cps = [_checkpoint(entries, 8, _times(1)[0], key=new_signing_key())]
    (problem,) = verify_checkpoints(entries, cps, PUBLIC).problems
    assert problem.check == "signature"
    assert problem.message == "checkpoint 1 (size 8): the signature is not valid for this key"


def test_a_rewritten_log_no_longer_matches_its_checkpoint_root() -> None:
    entries = _log(12)
    cps = [_checkpoint(entries, 12, _times(1)[0])]
    # The forger edits entry 3 and rewrites the chain after it: the chain verifies again.
    entries[2] = {**entries[2], "data": {"amount": 0}}
    forged = _rehash_from(entries, 2)
    assert verify_chain(forged).ok
    (problem,) = verify_checkpoints(forged, cps, PUBLIC).problems
    assert problem.check == "root" and problem.index == 0
    assert "is not the Merkle root of the first 12 entries" in problem.message


def test_a_checkpoint_beyond_the_exported_entries_is_reported() -> None:
    entries = _log(12)
    cps = [_checkpoint(entries, 12, _times(1)[0])]
    (problem,) = verify_checkpoints(entries[:10], cps, PUBLIC).problems
    assert (
        problem.message == "checkpoint 1 (size 12): covers 12 entries but the log holds 10 entries"
    )


def test_a_checkpoint_of_the_same_size_with_another_root_is_inconsistent() -> None:
    entries, other = _log(10), _log(10, tag="x")
    t = _times(2)
    cps = [_checkpoint(entries, 10, t[0]), _checkpoint(other, 10, t[1])]
    problems = verify_checkpoints(entries, cps, PUBLIC).problems
    assert [(p.index, p.check) for p in problems] == [(1, "root"), (1, "consistency")]
    assert problems[1].message == (
        "checkpoint 2 (size 10): the same size as checkpoint 1 (size 10) but another root"
    )


def test_a_later_checkpoint_that_does_not_extend_the_earlier_tree_is_inconsistent() -> None:
    old, new = _log(6), _log(14, tag="x")  # the log was rewritten after the first checkpoint
    t = _times(2)
    cps = [_checkpoint(old, 6, t[0]), _checkpoint(new, 14, t[1])]
    problems = verify_checkpoints(new, cps, PUBLIC).problems
    assert [(p.index, p.check) for p in problems] == [(0, "root"), (1, "consistency")]
    assert problems[1].message.startswith(
        "checkpoint 2 (size 14): not consistent with the earlier checkpoint 1 (size 6)"
    )


def test_a_checkpoint_smaller_than_an_earlier_one_or_dated_before_it_is_inconsistent() -> None:
    entries = _log(10)
    t = _times(3)
    shrunk = [_checkpoint(entries, 10, t[0]), _checkpoint(entries, 7, t[1])]
    (problem,) = verify_checkpoints(entries, shrunk, PUBLIC).problems
    assert problem.message == (
        "checkpoint 2 (size 7): smaller than the earlier checkpoint 1 (size 10): "
        "a log never shrinks"
    )
    backdated = [_checkpoint(entries, 5, t[2]), _checkpoint(entries, 10, t[1])]
    (problem,) = verify_checkpoints(entries, backdated, PUBLIC).problems
    assert (
        problem.message
        == "checkpoint 2 (size 10): dated before checkpoint 1 (size 5), which it follows"
    )


def test_a_bad_checkpoint_does_not_hide_that_the_next_one_is_good() -> None:
    entries, other = _log(10), _log(10, tag="x")
    t = _times(3)
    cps = [
        _checkpoint(entries, 4, t[0]),
        _checkpoint(other, 8, t[1]),
        _checkpoint(entries, 10, t[2]),
    ]
    problems = verify_checkpoints(entries, cps, PUBLIC).problems
    assert {p.index for p in problems} == {1}


def test_a_malformed_checkpoint_is_reported_as_such() -> None:
    entries = _log(3)
    cps = [{"document": {"type": "round"}, "signature": "00"}, {"nope": 1}]
    problems = verify_checkpoints(entries, cps, PUBLIC).problems
    assert [(p.index, p.check) for p in problems] == [(0, "format"), (1, "format")]


# --- the export and the signed-note form ----------------------------------------------------


def test_the_export_round_trips_through_json_lines() -> None:
    entries = _log(5)
    cps = [_checkpoint(entries, 5, _times(1)[0])]
    lines = list(audit_chain.export_lines(entries, cps))
    assert len(lines) == 6 and all(line.endswith("\n") for line in lines)
    assert lines[0].startswith('{"kind":"entry","seq":1,"time":')
    assert lines[-1].startswith('{"kind":"checkpoint","document":{')
    parsed = audit_chain.parse_export(["\n", *lines])
    assert list(parsed.entries) == entries and list(parsed.checkpoints) == cps


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not valid JSON"),
        ("[1, 2]", "line 2: not a JSON object"),
        ('{"kind": "row"}', "line 2: kind must be"),
    ],
)
def test_an_unreadable_export_line_is_named(line: str, message: str) -> None:
    good = next(audit_chain.export_lines(_log(1), []))
    with pytest.raises(audit_chain.ExportFormatError, match=message):
        audit_chain.parse_export([good, line])


@pytest.mark.parametrize("size", ["\u0663", "\u00b2"])  # Arabic-Indic 3, superscript 2
def test_a_checkpoint_note_signed_with_its_size_in_other_digits_is_refused(size: str) -> None:
    """A key holder can sign any text: a size written in digits other than 0 to 9 is no
    C2SP checkpoint, though Python's int() reads the first as 3 and str.isdigit takes both."""
    origin = "sota-casino.example/audit"
    root = merkle.root([bytes.fromhex(e["hash"]) for e in _log(3)])
    body = f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n"
    blob = audit_chain.note_key_id(origin, PUBLIC) + KEY.sign(body.encode())
    note = f"{body}\n\u2014 {origin} {base64.b64encode(blob).decode()}\n"
    with pytest.raises(ValueError, match="not a checkpoint note"):
        audit_chain.open_checkpoint_note(note, PUBLIC, origin)


def test_a_checkpoint_note_in_the_c2sp_form_opens_only_with_its_key() -> None:
    entries = _log(9)
    root = merkle.root([bytes.fromhex(e["hash"]) for e in entries]).hex()
    note = audit_chain.checkpoint_note(KEY, "sota-casino.example/audit", 9, root)
    lines = note.split("\n")
    assert lines[:3] == ["sota-casino.example/audit", "9", lines[2]] and lines[3] == ""
    assert lines[4].startswith("\u2014 sota-casino.example/audit ")
    origin = "sota-casino.example/audit"
    assert audit_chain.open_checkpoint_note(note, PUBLIC, origin) == (origin, 9, root)
    with pytest.raises(ValueError):
        audit_chain.open_checkpoint_note(note, public_key_hex(new_signing_key()), origin)
    with pytest.raises(ValueError):
        audit_chain.open_checkpoint_note(note.replace("\n9\n", "\n8\n"), PUBLIC, origin)
