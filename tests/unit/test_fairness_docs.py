"""docs/fairness.md cannot rot: its hand-check script and its worked example are run here."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import bundles
import pytest
from cryptography.exceptions import InvalidSignature

from sota_casino.core.cards import canonical_shoe
from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.core.fairness import public_key_hex
from sota_casino.core.fairness import shuffled_shoe

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "fairness.md").read_text(encoding="utf-8")
VECTOR = json.loads((ROOT / "docs" / "vectors" / "shuffle-vectors.json").read_text())["shuffles"][0]
PAIR = bundles.Pair()


def _python_blocks(heading: str) -> list[str]:
    """Return the ```python blocks of the section under ``heading``."""
    section = DOC.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def _check_round(tmp_path: Path, envelope: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "check_round.py"
    script.write_text(_python_blocks("Check one Casino War round by hand")[0], encoding="utf-8")
    receipt = tmp_path / "receipt.json"
    receipt.write_text(json.dumps(envelope), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script), str(receipt), PAIR.server_seed.hex()],
        capture_output=True,
        text=True,
    )


def _receipt_with(outcome: str) -> dict[str, Any]:
    for nonce in range(40):
        envelope = bundles.default_round(PAIR, nonce)
        if envelope["document"]["outcome"]["result"] == outcome:
            return envelope
    raise AssertionError(f"no {outcome} round in the first 40 nonces")


@pytest.mark.parametrize("outcome", ["win", "lose", "surrender", "war_win", "war_lose"])
def test_the_hand_check_script_verifies_a_real_receipt(tmp_path: Path, outcome: str) -> None:
    envelope = _receipt_with(outcome)
    result = _check_round(tmp_path, envelope)
    assert result.returncode == 0, result.stderr
    doc = envelope["document"]
    assert result.stdout.startswith(f"round {doc['round_id']} verified: {doc['cards']}")


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"payout": 123456}, "payout differs"),
        ({"cards": ["AS", "AD"]}, "cards differ"),
        ({"commitment": "00" * 32}, "seed does not match the commitment"),
    ],
)
def test_the_hand_check_script_catches_a_tampered_receipt(
    tmp_path: Path, change: dict[str, Any], error: str
) -> None:
    envelope = _receipt_with("war_win")
    result = _check_round(tmp_path, bundles.resign(PAIR, envelope, **change))
    assert result.returncode != 0 and error in result.stderr


def test_the_signature_snippet_accepts_the_receipt_and_refuses_another_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snippet = _python_blocks("Check one Casino War round by hand")[1]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "receipt.json").write_text(json.dumps(_receipt_with("win")), encoding="utf-8")
    exec(snippet, {"PUBLISHED_KEY_HEX": public_key_hex(PAIR.key)})
    other = public_key_hex(bundles.new_signing_key())
    with pytest.raises(InvalidSignature):
        exec(snippet, {"PUBLISHED_KEY_HEX": other})


def test_the_worked_example_shows_the_real_block_draws_and_cards() -> None:
    seeds = Seeds(bytes.fromhex(VECTOR["server_seed"]), VECTOR["client_seed"], VECTOR["nonce"])
    stream = Stream(seeds)
    assert f"`{stream.block(0).hex()}`" in DOC and f"`{stream.block(1).hex()}`" in DOC
    assert f"| commitment = sha256(seed) | `{VECTOR['commitment']}` |" in DOC
    rows = re.findall(
        r"^\| (\d) \| `([0-9a-f]{8})` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|", DOC, re.M
    )
    assert len(rows) == 7
    shoe = list(canonical_shoe(VECTOR["deck"], VECTOR["decks"]))
    block = stream.block(0)
    for i, word, x, n, limit, residue, j in rows:
        i, x, n, j = int(i), int(x), int(n), int(j)
        assert word == block[4 * i : 4 * i + 4].hex() and x == int(word, 16)
        assert n == len(shoe) - i and int(limit) == 2**32 - 2**32 % n
        assert int(residue) == x % n and j == i + x % n
        assert stream.uniform(n) == x % n
    first = list(shuffled_shoe(seeds, VECTOR["deck"], VECTOR["decks"], 7))
    assert first == VECTOR["first_cards"]
    assert f"`{' '.join(first)}`" in DOC


def test_the_canonical_bytes_example_is_the_published_commitment_vector() -> None:
    published = json.loads((ROOT / "docs" / "vectors" / "fairness-vectors.json").read_text())
    case = published["documents"][0]
    data = bytes.fromhex(case["canonical_hex"])
    from sota_casino.core.fairness import canonical_json

    assert canonical_json(case["document"]) == data
    assert f"signed as these {len(data)} bytes:\n\n```\n{data.decode()}\n```" in DOC
    seed = "a\u2028b\u2029c\u0085d\x0be\x0cf\x1cg"
    encoded = canonical_json({"client_seed": seed}).decode()
    assert encoded == '{"client_seed":"a\u2028b\u2029c\u0085d\\u000be\\ff\\u001cg"}'
    assert '`d\\u000be\\ff\\u001cg"`' in DOC


def test_the_anchored_log_vector_is_described_as_it_is() -> None:
    published = json.loads((ROOT / "docs" / "vectors" / "fairness-vectors.json").read_text())
    log = published["anchored_log"]
    words = {
        "seed_pair.created": "a pair's commitment",
        "seed_pair.client_seed_set": "its client seed",
        "round.bet": "a war round's bet",
        "round.decision": "decision",
        "round.settled": "settlement",
        "user.registered": "a player's registration",
        "key.created": "the key's creation",
    }
    actions = [entry["action"] for entry in log["entries"]]
    assert actions == list(words)
    kinds = [anchor["of"]["kind"] for anchor in log["anchors"]]
    named = ", the ".join(kinds[:-1]) + f" and the {kinds[-1]}"
    sizes = [checkpoint["document"]["size"] for checkpoint in log["checkpoints"]]
    described = (
        "a small audit log (seven entries: a pair's commitment and its client seed, a war round's"
        " bet, decision and settlement, a player's registration and the key's creation), two"
        f" checkpoints over it signed by the test key (sizes {sizes[0]} and {sizes[1]}),"
        f" the anchors of the {named} in the later one,"
    )
    assert len(actions) == 7 and described in " ".join(DOC.split())


def test_every_vector_the_page_names_is_published_beside_it() -> None:
    # The page sent readers to tests/data/ for the shuffle and uniform vectors, and its worked
    # example named that file as its source: a third party holding the docs had neither.
    linked = set(re.findall(r"\]\((vectors/[^)#]+)\)", DOC))
    assert linked == {"vectors/fairness-vectors.json", "vectors/shuffle-vectors.json"}
    for path in linked:
        assert (ROOT / "docs" / path).is_file(), path
    assert "tests/data" not in DOC
    published = json.loads((ROOT / "docs" / "vectors" / "shuffle-vectors.json").read_text())
    assert sorted(published) == ["shuffles", "uniform"] and VECTOR == published["shuffles"][0]


def test_the_pages_examples_say_whose_seeds_they_take() -> None:
    # Its examples signed one pair under two commitments, both as "the vectors'".
    published = json.loads((ROOT / "docs" / "vectors" / "fairness-vectors.json").read_text())
    commitment = published["documents"][0]["document"]
    seed = next(c for c in published["documents"] if c["document"]["type"] == "reveal")
    assert f"server seed\n`{seed['document']['server_seed'][:8]}…`" in DOC
    assert (
        commitment["commitment"]
        == hashlib.sha256(bytes.fromhex(seed["document"]["server_seed"])).hexdigest()
    )
    examples = DOC.split("\n## The signed documents\n", 1)[1].split("\n## ", 1)[0]
    first = examples.split("**Commitment document**")[0]
    assert f"server seed `{VECTOR['server_seed'][:8]}…`" in first
    assert f"commitment `{VECTOR['commitment'][:8]}…`" in first
    assert examples.count(f'"commitment": "{VECTOR["commitment"][:8]}…"') >= 2


def test_the_witness_section_names_the_monitors_own_files_and_slack() -> None:
    """A witness written from the page keeps what the monitor keeps, and dates a checkpoint no
    further back than the monitor allows: the page names the monitor's files and its slack."""
    from sota_casino.core.anchors import SERVED_DRIFT
    from sota_casino.core.anchors import SERVED_DRIFT_TEXT
    from sota_casino.verify import monitor

    section = DOC[DOC.index("## Witnesses: a split view is detectable") : DOC.index("## Vectors")]
    assert f"`DIR/{monitor.SERVED_FILE}`" in section
    assert f"`DIR/{monitor.UNPROVEN_FILE}`" in section
    slack = re.findall(r"dated more than (\d+ \w+) before", section)
    assert slack and set(slack) == {monitor.SERVED_SLACK_TEXT}
    minutes = int(monitor.SERVED_SLACK_TEXT.split()[0])
    assert monitor.SERVED_SLACK.total_seconds() == minutes * 60
    assert f"less {SERVED_DRIFT_TEXT}" in section
    assert SERVED_DRIFT.total_seconds() == int(SERVED_DRIFT_TEXT.split()[0]) * 60


def test_the_sota_bet_example_signs_the_rules_the_game_is_played_by() -> None:
    """The example of a Sota bet shows the rules as the engine writes them (every option, lead
    off as null), not as the request sent them."""
    from sota_casino.core import fairness
    from sota_casino.core import sota

    sent = {"lead": "off", "peace": True}
    assert '`{"stake": 2, "rules":\n{"lead": "off", "peace": true}}` at nonce 4 signs' in DOC
    document = fairness.bet_document(
        user_id=7,
        game="sota",
        seed_pair_id=12,
        nonce=4,
        stakes={"stake": 2},
        rules=sota.SotaRules.from_dict(sent).to_dict(),
    )
    assert f"```\n{fairness.canonical_json(document).decode()}\n```" in DOC
