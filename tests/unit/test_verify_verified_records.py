"""The verifier with the digests of the documents the player's browser verified (the records'
``verified`` list): a bundle signing another document under one of their names is the casino's
own proof of a rewrite, though the bundle alone passes every check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_verify_cli import GOOD
from test_verify_cli import KEY_HEX
from test_verify_cli import _rewritten
from test_verify_cli import _run
from test_verify_cli import _write

from sota_casino.verify import Records
from sota_casino.verify import verify_bundle
from sota_casino.verify.records import RecordsError
from sota_casino.verify.runner import signed_documents


def _records(verified: list[Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"format": "sota-casino-records", "v": 1, "public_key_hex": KEY_HEX}
    if verified is not None:
        data["verified"] = verified
    return data


def _verified_in_the_browser(bundle: dict[str, Any]) -> list[dict[str, str]]:
    """The entries a browser keeps once its verifier found the bundle's documents signed."""
    report = verify_bundle(bundle, KEY_HEX)
    return [
        {"name": name, "sha256": digest, "seen_at": "2025-04-02T09:00:00.000Z"}
        for name, digest, _, _ in signed_documents(bundle, report)
    ]


@pytest.mark.parametrize("what", ["commitment", "reveal", "receipt"])
def test_a_document_rewritten_since_the_browser_verified_it_fails_naming_the_records(
    tmp_path: Path, what: str
) -> None:
    forged, text = _rewritten(what)
    bundle = _write(tmp_path, "later.json", forged)
    assert _run(bundle, "--public-key", KEY_HEX)[0] == 0  # alone, it passes
    records = _write(tmp_path, "records.json", _records(_verified_in_the_browser(GOOD)))

    code, out, _ = _run("--records", records, bundle, "-q")

    assert code == 1, out
    assert (
        f"equivocation: {text} in {bundle} differs from the one in the records, both signed "
        "(sha256 "
    ) in out, out
    if what != "commitment":  # a new commitment deals every round again: each one differs
        assert out.count("equivocation:") == 1  # a receipt is named once, not by its nonce too


def test_records_without_the_list_or_holding_the_same_digests_pass(tmp_path: Path) -> None:
    bundle = _write(tmp_path, "good.json", GOOD)
    for verified in (None, [], _verified_in_the_browser(GOOD)):
        records = _write(tmp_path, "records.json", _records(verified))
        code, out, _ = _run("--records", records, bundle, "-q")
        assert code == 0, out


def test_the_verified_list_is_read_by_name_one_entry_per_digest() -> None:
    entries = _verified_in_the_browser(GOOD)
    records = Records.parse(_records([*entries, entries[0]]))
    assert records.verified == {e["name"]: frozenset([e["sha256"]]) for e in entries}
    assert Records.parse(_records()).verified == {}


DIGEST = "ab" * 32


@pytest.mark.parametrize(
    ("verified", "says"),
    [
        ({}, "verified is not a list"),
        (["the receipt of round 1"], "verified[0] has no name"),
        ([{"sha256": DIGEST}], "verified[0] has no name"),
        ([{"name": "", "sha256": DIGEST}], "verified[0] has no name"),
        ([{"name": "the receipt of round 1"}], "verified[0]: sha256 is 64 lowercase hex"),
        ([{"name": "n", "sha256": DIGEST.upper()}], "verified[0]: sha256 is 64 lowercase hex"),
        ([{"name": "n", "sha256": DIGEST[:-2]}], "verified[0]: sha256 is 64 lowercase hex"),
        ([{"name": "n", "sha256": DIGEST, "seen_at": 7}], "verified[0]: seen_at is the time"),
    ],
)
def test_a_verified_entry_of_another_shape_makes_the_records_unusable(
    verified: Any, says: str, tmp_path: Path
) -> None:
    with pytest.raises(RecordsError, match=says.replace("[", r"\[").replace("]", r"\]")):
        Records.parse(_records(verified))
    # The command line says so and checks nothing (exit code 2).
    records = _write(tmp_path, "records.json", json.dumps(_records(verified)))
    code, out, _ = _run("--records", records, _write(tmp_path, "good.json", GOOD))
    assert code == 2 and "verified" in out, out
