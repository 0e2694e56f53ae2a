"""The verifier's command line: exit codes, output, JSON shape, progress, and what it imports."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import bundles
import pytest

from sota_casino.core import audit_chain
from sota_casino.core import merkle
from sota_casino.core.fairness import key_change_document
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import signed
from sota_casino.verify import main

PAIR = bundles.Pair()
KEY_HEX = public_key_hex(PAIR.key)
GOOD = bundles.bundle(6, pair=PAIR)


def _write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def _tampered_payout(bundle: dict[str, Any], position: int = 2) -> dict[str, Any]:
    changed = copy.deepcopy(bundle)
    envelope = changed["rounds"][position]
    payout = envelope["document"]["payout"] + 100
    changed["rounds"][position] = bundles.resign(PAIR, envelope, payout=payout)
    return bundles.anchored(changed, PAIR.key)  # logged as signed: only the outcome check fails


def _verify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sota_casino.verify", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out, err)
    return code, out.getvalue(), err.getvalue()


# --- exit codes, in a real process -------------------------------------------------------------


def test_an_honest_bundle_exits_0_and_prints_a_table_and_a_summary(tmp_path: Path) -> None:
    result = _verify(_write(tmp_path, "good.json", GOOD), "--public-key", KEY_HEX)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split() == [
        "round",
        "game",
        "nonce",
        "signature",
        "commitment",
        "pair",
        "nonces",
        "cards",
        "outcome",
        "player",
        "records",
        "log",
    ]
    assert lines[4].split() == [
        "100",
        "casino_war",
        "0",
        *["✓"] * 7,
        "–",
        "✓",
    ]
    assert lines[-1] == "Result: OK: 1 bundle(s), 6 rounds, every check passed (exit 0)"
    assert result.stderr == ""  # no progress bar when stderr is not a terminal


def test_a_tampered_bundle_exits_1_naming_the_round_and_the_check(tmp_path: Path) -> None:
    bad = _tampered_payout(GOOD)
    result = _verify(_write(tmp_path, "bad.json", bad))
    assert result.returncode == 1
    payout = bad["rounds"][2]["document"]["payout"]
    assert (
        f"    round 102 (nonce 2): outcome: payout is {payout}, replay gives {payout - 100}"
        in result.stdout.splitlines()
    )
    assert "102         casino_war  2      ✓          ✓           ✓     ✓       ✓      ✗" in (
        result.stdout
    )
    assert result.stdout.splitlines()[-1].startswith("Result: FAILED: 1 of 1 bundle(s)")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{not json", "is not valid JSON"),
        ({"rounds": []}, "the bundle lacks public_key_hex, commitment, reveal"),
        ("\udcff", "cannot read"),
    ],
    ids=["missing file", "bad JSON", "missing fields", "not UTF-8"],
)
def test_unusable_input_exits_2_with_a_reason_and_no_traceback(
    tmp_path: Path, content: Any, message: str
) -> None:
    path = tmp_path / "input.json"
    if content == "\udcff":
        path.write_bytes(b'{"a": "\xff"}')
    elif content is not None:
        _write(tmp_path, "input.json", content)
    result = _verify(str(path))
    assert result.returncode == 2
    assert message in result.stdout and "Result: UNUSABLE INPUT" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "keys",
    [[], ["--public-key", KEY_HEX], ["--service", "casino"], ["--records", "records.json"]],
    ids=["no key", "public key", "service", "records"],
)
def test_a_file_holding_an_empty_list_is_unusable_whatever_the_key(
    tmp_path: Path, keys: list[str]
) -> None:
    """An empty answer proves nothing: ``verify bundle.json && echo fair`` must not pass it."""
    _write(tmp_path, "records.json", {"format": "sota-casino-records", "v": 1})
    keys = [str(tmp_path / k) if k.endswith(".json") else k for k in keys]
    known = ["--known-keys", str(tmp_path / "known_keys")]
    empty = _write(tmp_path, "empty.json", [])
    code, out, _ = _run(empty, *keys, *known)
    assert code == 2
    assert f"Unusable input {empty}: {empty} holds no bundle (an empty list)" in out
    assert out.splitlines()[-1].startswith("Result: UNUSABLE INPUT: 1 file(s) or bundle(s)")
    assert not (tmp_path / "known_keys").exists()


def test_an_empty_list_among_other_files_is_unusable_and_the_others_are_still_checked(
    tmp_path: Path,
) -> None:
    good = _write(tmp_path, "good.json", GOOD)
    empty = _write(tmp_path, "empty.json", [])
    code, out, _ = _run(good, empty, "--public-key", KEY_HEX, "-q", "--json")
    document = json.loads(out)
    assert code == 2 and document["exit_code"] == 2
    assert [b["ok"] for b in document["bundles"]] == [True]
    assert document["errors"] == [
        {"source": empty, "message": f"{empty} holds no bundle (an empty list)"}
    ]


def test_a_bad_command_line_exits_2(tmp_path: Path) -> None:
    assert _verify().returncode == 2
    assert _verify(_write(tmp_path, "b.json", GOOD), "--public-key", "zz").returncode == 2
    assert _verify(_write(tmp_path, "b.json", GOOD), "--jobs", "0").returncode == 2


def test_the_verifier_runs_without_importing_flask_or_sqlalchemy(tmp_path: Path) -> None:
    path = _write(tmp_path, "good.json", GOOD)
    code = (
        "import io, sys\n"
        "from sota_casino import verify\n"
        f"status = verify.main([{path!r}, '--json', '--public-key', {KEY_HEX!r}], io.StringIO(), "
        "io.StringIO())\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('flask', 'sqlalchemy'))\n"
        "print(status, heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "0 []", result.stderr


# --- output -----------------------------------------------------------------------------------


def test_json_output_has_the_documented_shape(tmp_path: Path) -> None:
    bad = _write(tmp_path, "bad.json", _tampered_payout(GOOD))
    code, out, _ = _run(bad, "--json")
    report = json.loads(out)
    assert code == 1 and report["exit_code"] == 1 and report["ok"] is False
    assert set(report) == {
        "ok",
        "pending",
        "not_yet_anchored",
        "unpinned",
        "exit_code",
        "bundles",
        "errors",
        "unplaced_rounds",
    }
    (bundle,) = report["bundles"]
    assert set(bundle) == {
        "source",
        "seed_pair_id",
        "user_id",
        "public_key_hex",
        "trust",
        "trust_note",
        "revealed",
        "ok",
        "pending",
        "not_yet_anchored",
        "documents",
        "rounds",
        "findings",
        "summary",
    }
    assert bundle["summary"] == {"rounds": 6, "passed": 5, "failed": 1, "pending_checks": 0}
    assert bundle["documents"][0] == {
        "document": "commitment",
        "checks": {
            "signature": "pass",
            "commitment": "pass",
            "pair": "pass",
            "nonces": "skip",
            "cards": "skip",
            "outcome": "skip",
            "player": "skip",
            "records": "skip",
            "log": "pass",
        },
    }
    assert bundle["rounds"][2]["checks"]["outcome"] == "fail"
    assert bundle["rounds"][2] | {"checks": None} == {
        "round_id": 102,
        "game": "casino_war",
        "nonce": 2,
        "ok": False,
        "checks": None,
    }
    (finding,) = bundle["findings"]
    assert finding["where"] == "round" and finding["check"] == "outcome"
    assert finding["round_id"] == 102 and finding["nonce"] == 2 and finding["status"] == "fail"
    assert finding["text"].startswith("round 102 (nonce 2): outcome: payout is")


def test_an_unrevealed_bundle_exits_0_and_says_what_is_pending(tmp_path: Path) -> None:
    hidden = _write(tmp_path, "hidden.json", bundles.bundle(4, pair=PAIR, revealed=False))
    code, out, _ = _run(hidden, "--public-key", KEY_HEX)
    assert code == 0
    assert "Pending until the server seed is revealed: commitment (5), cards (4)" in out
    assert "everything checkable passed" in out and "pending until it is revealed" in out
    code, out, _ = _run(hidden, "--json", "--public-key", KEY_HEX)
    assert json.loads(out)["pending"] is True and json.loads(out)["ok"] is True


def test_several_files_and_a_list_of_bundles_in_one_file_are_all_checked(tmp_path: Path) -> None:
    many = _write(tmp_path, "many.json", [GOOD, _tampered_payout(GOOD)])
    good = _write(tmp_path, "good.json", GOOD)
    code, out, _ = _run(good, many, "-q")
    assert code == 1
    assert f"Bundle {many}[1]: seed pair 12 of user 7" in out
    # The good bundles hold another signed receipt of the round the tampered one re-signed.
    assert "Result: FAILED: 3 of 3 bundle(s) do not verify; 3 bundle(s), 18 rounds" in out
    code, out, _ = _run(good, str(tmp_path / "absent.json"))
    assert code == 2 and "Unusable input" in out


def _rewritten(what: str) -> tuple[dict[str, Any], str]:
    """GOOD rewritten by a casino holding the key, and logged so from the start (each bundle
    alone passes every check), with the text of the document two bundles then disagree on."""
    if what == "commitment":
        other = bundles.Pair(server_seed=b"\x01" * 32)
        return bundles.bundle(6, pair=other), "the commitment document of seed pair 12"
    forged = copy.deepcopy(GOOD)
    if what == "reveal":
        forged["reveal"] = bundles.resign(
            PAIR, forged["reveal"], revealed_at="2025-04-01T19:00:00.000000Z"
        )
        text = "the reveal document of seed pair 12"
    else:
        forged["rounds"][2] = bundles.resign(
            PAIR, forged["rounds"][2], settled_at="2025-04-01T11:30:00.000000Z"
        )
        text = "the receipt of round 102"
    return bundles.anchored(forged, PAIR.key), text


@pytest.mark.parametrize("what", ["commitment", "reveal", "receipt"])
def test_two_bundles_signing_two_documents_for_one_pair_or_round_fail_naming_both(
    tmp_path: Path, what: str
) -> None:
    forged, text = _rewritten(what)
    first, second = _write(tmp_path, "b1.json", GOOD), _write(tmp_path, "b2.json", forged)
    assert _run(first, "--public-key", KEY_HEX)[0] == 0
    assert _run(second, "--public-key", KEY_HEX)[0] == 0  # alone, each passes
    code, out, _ = _run(first, second, "--public-key", KEY_HEX, "-q")
    assert code == 1, out
    for here, there in ((first, second), (second, first)):
        assert f"equivocation: {text} in {here} differs from the one in {there}" in out, out
    assert "Result: FAILED: 2 of 2 bundle(s) do not verify" in out
    # A bundle fetched before the reveal and one after agree on everything both hold.
    unrevealed = _write(tmp_path, "b0.json", bundles.bundle(4, pair=PAIR, revealed=False))
    assert _run(unrevealed, first, "--public-key", KEY_HEX)[0] == 0


def _pair_13(rounds: int) -> dict[str, Any]:
    """A bundle of the player's next pair (its rounds 200 and up, from a server seed of its own),
    not yet anchored."""
    pair = bundles.Pair(seed_pair_id=13)
    made = bundles.bundle(rounds, pair=pair)
    made["rounds"] = [
        bundles.resign(pair, envelope, round_id=200 + i)
        for i, envelope in enumerate(made["rounds"])
    ]
    return made


def test_two_bundles_anchored_in_two_logs_fail_naming_where_the_logs_part(tmp_path: Path) -> None:
    """A casino that shows each of its bundles a log of its own (a split view: two players, or
    two of one player's pairs, shown two histories) passes each bundle alone, its log whole; given
    together, two signed checkpoints over the same entries that differ, or two entries at one
    seq, are its own signed proof of the fork, as they are within one bundle."""
    pair_12 = bundles.bundle(6, pair=PAIR)
    size = pair_12["checkpoints"][0]["document"]["size"]
    # Pair 13 deals no tie in its first 7 rounds: its log then holds as many entries as pair 12's.
    for rounds, said in (
        (7, f"two signed checkpoints over {size} entries differ: root "),
        (3, "two entries at seq 1 of the signed log differ: hash "),
    ):
        split = bundles.anchored(_pair_13(rounds), PAIR.key)  # a log of its own
        first, second = _write(tmp_path, "b1.json", pair_12), _write(tmp_path, "b2.json", split)
        assert _run(second, "--public-key", KEY_HEX)[0] == 0  # alone, it passes
        code, out, _ = _run(first, second, "--public-key", KEY_HEX, "-q")
        assert code == 1, out
        for here, there in ((first, second), (second, first)):
            assert f"({here}; {there})" in out, out
        assert f"bundle: log: {said}" in out, out
        assert "Result: FAILED: 2 of 2 bundle(s) do not verify" in out
        # Served by one log, the two bundles agree.
        together = bundles.anchored_together([pair_12, _pair_13(rounds)], PAIR.key)
        paths = [_write(tmp_path, f"t{i}.json", b) for i, b in enumerate(together)]
        assert _run(*paths, "--public-key", KEY_HEX)[0] == 0


def test_a_key_change_in_bundles_that_contradict_each_other_leaves_the_known_keys_file(
    tmp_path: Path,
) -> None:
    old = new_signing_key()
    change = signed(
        old,
        key_change_document(
            old_public_key_hex=public_key_hex(old),
            new_public_key_hex=KEY_HEX,
            changed_at=bundles.CREATED_AT,
        ),
    )
    forged, text = _rewritten("receipt")
    first = _write(tmp_path, "b1.json", dict(GOOD, key_changes=[change]))
    second = _write(tmp_path, "b2.json", dict(forged, key_changes=[change]))
    known = tmp_path / "known_keys"
    kept = f"casino.example {public_key_hex(old)}\n"
    known.write_text(kept)
    trusting = ("--service", "casino.example", "--known-keys", str(known))
    # Each alone follows the signed change, but together they are two receipts of one round.
    code, out, _ = _run(first, second, *trusting)
    assert code == 1 and f"equivocation: {text}" in out
    assert "(not written, since the bundle fails)" in out  # b2 is checked against the new key
    assert known.read_text() == kept
    code, out, _ = _run(first, *trusting)
    assert code == 0 and f"(written to {known})" in out
    assert known.read_text().split("\n")[-2] == f"casino.example {KEY_HEX}"


def test_a_pinned_key_that_differs_from_the_bundles_fails(tmp_path: Path) -> None:
    other = public_key_hex(new_signing_key())
    code, out, _ = _run(_write(tmp_path, "good.json", GOOD), "--public-key", other)
    assert code == 1 and "bundle: signature: KEY CHANGED: the bundle names public key" in out


def test_progress_is_drawn_on_stderr_when_asked(tmp_path: Path) -> None:
    code, out, err = _run(
        _write(tmp_path, "good.json", GOOD), "--progress", "-q", "--public-key", KEY_HEX
    )
    assert code == 0
    assert err.startswith("\rverifying ") and err.endswith("] 6/6 receipts 100%\n")
    assert "receipts" not in out


def test_jobs_spread_a_large_bundle_over_processes_with_the_same_result(tmp_path: Path) -> None:
    big = _write(tmp_path, "big.json", _tampered_payout(bundles.bundle(520, pair=PAIR), 517))
    one = _run(big, "--json")
    two = _run(big, "--json", "--jobs", "2")
    assert one[0] == two[0] == 1 and json.loads(one[1]) == json.loads(two[1])


# --- the audit export -------------------------------------------------------------------------


def _export(tmp_path: Path, entries: list[dict[str, Any]], checkpoints: list[dict]) -> str:
    text = "".join(audit_chain.export_lines(entries, checkpoints))
    return _write(tmp_path, "audit.jsonl", text)


def _audit_log(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    raw = [
        {
            "seq": i,
            "time": f"2025-04-01T10:00:{i:02d}.000000Z",
            "actor": "user:7",
            "action": "user.login",
            "subject": "user:7",
            "data": {"attempt": i},
        }
        for i in range(1, n + 1)
    ]
    entries = audit_chain.link_entries(raw)
    hashes = [bytes.fromhex(e["hash"]) for e in entries]
    checkpoints = [
        signed(
            PAIR.key,
            audit_chain.checkpoint_document(
                size, merkle.root(hashes[:size]).hex(), f"2025-04-01T11:00:0{i}.000000Z"
            ),
        )
        for i, size in enumerate((5, 12, 20))
    ]
    return entries, checkpoints


def test_an_untouched_audit_export_exits_0(tmp_path: Path) -> None:
    entries, checkpoints = _audit_log(22)
    result = _verify("audit", _export(tmp_path, entries, checkpoints), "--public-key", KEY_HEX)
    assert result.returncode == 0, result.stdout
    assert "chain ✓  entries 1..22 linked" in result.stdout
    assert "Note: the last 2 entries are not covered by a checkpoint yet" in result.stdout
    assert result.stdout.splitlines()[-1] == "Result: OK (exit 0)"


def test_an_edited_audit_entry_exits_1_naming_it(tmp_path: Path) -> None:
    entries, checkpoints = _audit_log(22)
    entries[8] = {**entries[8], "data": {"bet": 50000}}
    result = _verify("audit", _export(tmp_path, entries, checkpoints), "--public-key", KEY_HEX)
    assert result.returncode == 1
    assert "chain: entry 9: its hash does not match its contents (the entry was changed)" in (
        result.stdout
    )


def test_a_rewritten_audit_log_fails_its_checkpoints_in_json(tmp_path: Path) -> None:
    entries, checkpoints = _audit_log(22)
    forged = audit_chain.link_entries([{**entries[0], "actor": "system"}, *entries[1:]])
    code, out, _ = _run(
        "audit", _export(tmp_path, forged, checkpoints), "--public-key", KEY_HEX, "--json"
    )
    report = json.loads(out)
    assert code == 1 and report["chain"]["ok"] is True and report["ok"] is False
    assert [c["checks"]["root"] for c in report["checkpoints"]] == ["fail", "fail", "fail"]
    assert {f["check"] for f in report["findings"]} == {"root", "consistency"}


def test_an_unreadable_audit_export_exits_2(tmp_path: Path) -> None:
    path = _write(tmp_path, "audit.jsonl", '{"kind": "entry"}\nnot json\n')
    result = _verify("audit", path, "--public-key", KEY_HEX)
    assert result.returncode == 2 and "line 2: not valid JSON" in result.stdout
    assert "Traceback" not in result.stderr
    assert _verify("audit", path).returncode == 2  # the key is required
