"""The offline verifier answers every input with an exit code, never an exception.

A real bundle, a player's records and an audit export each get one value, anywhere in them,
replaced by an odd one (another type, a number past any integer, NaN, a lone surrogate,
nothing at all): the verifier must fail it, refuse it as unusable or pass it, and say which.
A cheating operator chooses much of what the verifier reads, the records included (the page
records the commitments the casino shows), so a crash would be a way to stop a check.
"""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from test_verify_cli import GOOD
from test_verify_cli import KEY_HEX
from test_verify_cli import _audit_log

from sota_casino.core import audit_chain
from sota_casino.verify import main

ODD: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    1.5,
    2**64,
    10**400,
    float("nan"),
    float("inf"),
    "",
    "x",
    "00" * 32,
    "\u0000",
    "\ud800",
    "²",
    "9999-12-31T23:59:59.999999Z",
    [],
    {},
    [None],
    {"a": 1},
)
#: Stands for the value taken away.
GONE = object()
RECORDS = {
    "format": "sota-casino-records",
    "v": 1,
    "public_key_hex": KEY_HEX,
    "commitments": [GOOD["commitment"]],
    "actions": [
        {"round_id": 100, "seed_pair_id": 12, "nonce": 0, "game": "casino_war", "action": "war"},
        {
            "round_id": 101,
            "seed_pair_id": None,
            "nonce": None,
            "game": "sota",
            "move": 0,
            "cards": ["AS"],
        },
    ],
    "rotations": [{"seed_pair_id": 12, "client_seed": "x"}],
    "verified": [
        {"name": "the receipt of round 100", "sha256": "00" * 32, "seen_at": "2025-04-02T09:00Z"}
    ],
}
AUDIT = [
    json.loads(line)
    for line in "".join(audit_chain.export_lines(*_audit_log(22))).split("\n")
    if line
]


def places(value: Any, here: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into ``value``'s objects and lists."""
    if here:
        yield here
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        yield from places(item, (*here, key))


def with_odd(document: Any, place: tuple[Any, ...], odd: Any) -> Any:
    changed = copy.deepcopy(document)
    holder = changed
    for key in place[:-1]:
        holder = holder[key]
    if odd is GONE:
        del holder[place[-1]]
    else:
        holder[place[-1]] = odd
    return changed


def run(tmp_path: Path, *args: str, **files: Any) -> int:
    for name, content in files.items():
        text = (
            "".join(json.dumps(line) + "\n" for line in content)
            if name.endswith("jsonl")
            else json.dumps(content)
        )
        (tmp_path / name.replace("_", ".")).write_text(
            text, encoding="utf-8", errors="surrogatepass"
        )
    code = main(
        [str(tmp_path / a) if a.endswith((".json", ".jsonl")) else a for a in args],
        io.StringIO(),
        io.StringIO(),
    )
    assert code in (0, 1, 2, 3, 4), code  # EXIT_CODES
    return code


odd_values = st.sampled_from((*ODD, GONE))
SETTINGS = settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


@SETTINGS
@given(place=st.sampled_from(list(places(GOOD))), odd=odd_values)
def test_a_bundle_with_any_odd_value_gets_an_exit_code(
    tmp_path_factory: pytest.TempPathFactory, place: tuple[Any, ...], odd: Any
) -> None:
    folder = tmp_path_factory.mktemp("bundle")
    run(folder, "b.json", "--public-key", KEY_HEX, "-q", b_json=with_odd(GOOD, place, odd))


@SETTINGS
@given(place=st.sampled_from(list(places(RECORDS))), odd=odd_values)
def test_records_with_any_odd_value_get_an_exit_code(
    tmp_path_factory: pytest.TempPathFactory, place: tuple[Any, ...], odd: Any
) -> None:
    folder = tmp_path_factory.mktemp("records")
    run(
        folder,
        "b.json",
        "--records",
        "r.json",
        "--public-key",
        KEY_HEX,
        "-q",
        b_json=GOOD,
        r_json=with_odd(RECORDS, place, odd),
    )


@SETTINGS
@given(place=st.sampled_from(list(places(AUDIT))), odd=odd_values)
def test_an_audit_export_with_any_odd_value_gets_an_exit_code(
    tmp_path_factory: pytest.TempPathFactory, place: tuple[Any, ...], odd: Any
) -> None:
    folder = tmp_path_factory.mktemp("audit")
    run(folder, "audit", "a.jsonl", "--public-key", KEY_HEX, a_jsonl=with_odd(AUDIT, place, odd))


# The inputs these found: each a traceback before.


def test_a_recorded_commitment_whose_pair_id_is_a_list_leaves_the_records_usable(
    tmp_path: Path,
) -> None:
    """It names no pair the verifier looks up, so the records read as without it."""
    odd = copy.deepcopy(GOOD["commitment"])
    odd["document"]["seed_pair_id"] = [12]
    records = {"format": "sota-casino-records", "v": 1, "public_key_hex": KEY_HEX}
    args = ("b.json", "--records", "r.json", "--public-key", KEY_HEX, "-q")
    without = run(tmp_path, *args, b_json=GOOD, r_json={**records, "commitments": []})
    assert run(tmp_path, *args, b_json=GOOD, r_json={**records, "commitments": [odd]}) == without


def test_a_recorded_commitment_holding_a_lone_surrogate_differs_from_the_bundles(
    tmp_path: Path,
) -> None:
    """The page records the commitment the casino shows, whatever it holds, and JavaScript
    writes a lone surrogate that Python reads. It has no canonical bytes, and is another
    commitment than the bundle's all the same: the pair was re-committed, as the page says."""
    odd = copy.deepcopy(GOOD["commitment"])
    odd["document"]["created_at"] = "\ud800"
    records = {"format": "sota-casino-records", "v": 1, "public_key_hex": KEY_HEX}
    (tmp_path / "b.json").write_text(json.dumps(GOOD))
    (tmp_path / "r.json").write_text(json.dumps({**records, "commitments": [odd]}))
    out = io.StringIO()
    args = [str(tmp_path / "b.json"), "--records", str(tmp_path / "r.json"), "--public-key"]
    assert main([*args, KEY_HEX, "-q"], out, io.StringIO()) == 1
    assert "the pair was re-committed" in out.getvalue()


@pytest.mark.parametrize("where", ["records", "audit"])
def test_nan_in_records_or_an_audit_export_is_unusable_input(tmp_path: Path, where: str) -> None:
    out = io.StringIO()
    if where == "records":
        odd = with_odd(RECORDS, ("commitments", 0, "document", "created_at"), float("nan"))
        (tmp_path / "b.json").write_text(json.dumps(GOOD))
        (tmp_path / "r.json").write_text(json.dumps(odd))
        args = [str(tmp_path / "b.json"), "--records", str(tmp_path / "r.json")]
    else:
        odd = with_odd(AUDIT, (3, "data", "bet"), float("nan"))
        (tmp_path / "a.jsonl").write_text("".join(json.dumps(line) + "\n" for line in odd))
        args = ["audit", str(tmp_path / "a.jsonl")]
    assert main([*args, "--public-key", KEY_HEX], out, io.StringIO()) == 2
    assert "NaN is not a JSON value" in out.getvalue()


def test_an_audit_entry_holding_a_lone_surrogate_breaks_the_chain_there(tmp_path: Path) -> None:
    """JSON can write it (as \\ud800) and Python reads it, but it has no UTF-8, so no hash."""
    odd = with_odd(AUDIT, (3, "data", "bet"), "\ud800")
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(line) + "\n" for line in odd))
    out = io.StringIO()
    assert (
        main(["audit", str(tmp_path / "a.jsonl"), "--public-key", KEY_HEX], out, io.StringIO()) == 1
    )
    assert "entry 4 has no canonical JSON" in out.getvalue()


@pytest.mark.parametrize("what", ["bundle", "records", "audit"])
def test_a_lone_surrogate_in_any_input_is_reported_escaped_by_the_real_process(
    tmp_path: Path, what: str
) -> None:
    """The report names odd values, and no UTF-8 holds a lone surrogate: the process wrote
    its report up to the first line naming one, then stopped with a traceback."""
    (tmp_path / "good.json").write_text(json.dumps(GOOD))
    if what == "bundle":
        odd = with_odd(GOOD, ("commitment", "document", "seed_pair_id"), "\ud800")
        (tmp_path / "b.json").write_text(json.dumps(odd))
        args = [str(tmp_path / "b.json")]
    elif what == "records":
        odd = with_odd(RECORDS, ("commitments", 0, "document", "created_at"), "\ud800")
        (tmp_path / "r.json").write_text(json.dumps(odd))
        args = [str(tmp_path / "good.json"), "--records", str(tmp_path / "r.json")]
    else:
        odd = with_odd(AUDIT, (3, "subject"), "\ud800")
        (tmp_path / "a.jsonl").write_text("".join(json.dumps(line) + "\n" for line in odd))
        args = ["audit", str(tmp_path / "a.jsonl")]
    result = subprocess.run(
        [sys.executable, "-m", "sota_casino.verify", *args, "--public-key", KEY_HEX],
        capture_output=True,
        check=False,
    )
    assert result.returncode == 1 and b"Traceback" not in result.stderr, result.stderr
    assert b"\\ud800" in result.stdout and b"Result: " in result.stdout


@pytest.mark.parametrize(
    "control", ["\x1b[1A\x1b[2K", "\r", "\x9b1A", "\u202e"], ids=["escape", "return", "csi", "bidi"]
)
def test_a_control_the_bundle_holds_is_shown_not_passed_to_the_terminal(
    tmp_path: Path, control: str
) -> None:
    """The bundle's values are the casino's: a pair id holding ESC[1A could move the cursor up
    and write over the report's result line, or a bidi override reorder it."""
    odd = with_odd(GOOD, ("commitment", "document", "seed_pair_id"), f"{control}Result: OK")
    (tmp_path / "b.json").write_text(json.dumps(odd))
    out = io.StringIO()
    code = main([str(tmp_path / "b.json"), "--public-key", KEY_HEX], out, io.StringIO())
    shown = out.getvalue()
    assert code == 1 and control not in shown
    assert "".join(f"\\u{ord(c):04x}" if c not in "[12AK" else c for c in control) in shown
