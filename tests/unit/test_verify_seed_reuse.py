"""One server seed committed for two seed pairs: each pair alone passes every check, but a seed
serves one pair, and revealed for either (or known to the casino all along) it tells every
shuffle of the other in advance. Bundles given together, or a bundle and the documents the
player's browser verified, compare the pairs' commitments (``sha256`` of the server seed, check
2), so an unrevealed pair committed to a seed already revealed for another fails too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import bundles
from test_verify_cli import GOOD
from test_verify_cli import KEY_HEX
from test_verify_cli import PAIR
from test_verify_cli import _run
from test_verify_cli import _write
from test_verify_verified_records import _records
from test_verify_verified_records import _verified_in_the_browser

#: Pair 13 of the same player, and pair 14 of another, committed to pair 12's server seed.
SAME_PLAYER = bundles.Pair(seed_pair_id=13, server_seed=PAIR.server_seed)
OTHER_PLAYER = bundles.Pair(seed_pair_id=14, user_id=8, server_seed=PAIR.server_seed)


def _pair_bundle(pair: bundles.Pair, first_round: int, *, revealed: bool = True) -> dict[str, Any]:
    """A bundle of ``pair`` with 4 rounds, ids from ``first_round`` (none shared with GOOD's)."""
    made = bundles.bundle(4, pair=pair, revealed=revealed)
    made["rounds"] = [
        bundles.resign(pair, envelope, round_id=first_round + i)
        for i, envelope in enumerate(made["rounds"])
    ]
    return made


def _said(pair: int, here: str, other: int, there: str) -> str:
    return (
        f"commitment document: commitment: seed reused: seed pair {pair} in {here} is committed "
        f"to the server seed of seed pair {other} in {there} (commitment {PAIR.commitment[:16]}…)"
    )


def test_two_pairs_committed_to_one_seed_fail_together_naming_each_other(tmp_path: Path) -> None:
    for pair, revealed in ((SAME_PLAYER, True), (OTHER_PLAYER, False)):
        made = _pair_bundle(pair, 200, revealed=revealed)
        # One log serves both, as the service's: two logs would be a fork, a finding of its own.
        together = bundles.anchored_together([GOOD, made], PAIR.key)
        first, second = (_write(tmp_path, f"b{i}.json", b) for i, b in enumerate(together))
        for alone in (first, second):
            assert _run(alone, "--public-key", KEY_HEX)[0] == 0  # alone, each passes

        code, out, _ = _run(first, second, "--public-key", KEY_HEX, "-q")

        assert code == 1, out
        other = pair.seed_pair_id
        assert _said(12, first, other, second) in out, out
        assert _said(other, second, 12, first) in out, out
        assert "Result: FAILED: 2 of 2 bundle(s) do not verify" in out
        assert out.count("seed reused:") == 2 and "equivocation" not in out
        code, out, _ = _run(first, second, "--public-key", KEY_HEX, "--json")
        failed = json.loads(out)["bundles"][1]["documents"][0]["checks"]["commitment"]
        assert code == 1 and failed == "fail", out


def test_a_pair_committed_to_a_seed_the_browser_verified_for_another_fails(tmp_path: Path) -> None:
    records = _write(tmp_path, "records.json", _records(_verified_in_the_browser(GOOD)))
    later = _write(tmp_path, "b13.json", bundles.anchored(_pair_bundle(SAME_PLAYER, 200)))
    assert _run(later, "--public-key", KEY_HEX)[0] == 0  # alone, it passes

    code, out, _ = _run("--records", records, later, "-q")

    assert code == 1, out
    assert _said(13, later, 12, "the records") in out, out


def test_one_pair_given_twice_or_pairs_of_their_own_seeds_pass(tmp_path: Path) -> None:
    unrevealed = bundles.bundle(4, pair=PAIR, revealed=False)
    own = _pair_bundle(bundles.Pair(seed_pair_id=13), 200)
    together = bundles.anchored_together([GOOD, own], PAIR.key)
    paths = [_write(tmp_path, f"b{i}.json", b) for i, b in enumerate(together)]
    records = _write(tmp_path, "records.json", _records(_verified_in_the_browser(GOOD)))
    for given in (
        [_write(tmp_path, "good.json", GOOD), _write(tmp_path, "early.json", unrevealed)],
        paths,
        ["--records", records, *paths],
    ):
        code, out, _ = _run(*given, "--public-key", KEY_HEX, "-q")
        assert code == 0, out
