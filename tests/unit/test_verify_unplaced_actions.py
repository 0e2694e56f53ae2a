"""Recorded decisions and moves whose seed pair is not known (``seed_pair_id: null``, which the
records allow): each is placed by its round id in a bundle given that holds the round, and one
that no bundle given holds is named, never passed over in silence.

A revealed pair's bundle must hold every round the player acted in (check 8); a casino that
leaves one out, the reveal signed with fewer rounds and logged so from the start, is caught only
by the records. Records naming the round but not its pair cannot say which bundle lacks it (it
may be a round of a pair not given, or of the pair still active), so the verifier cannot call
it a failure; it says which rounds it compared with nothing."""

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

from sota_casino.verify import Records
from sota_casino.verify.records import unplaced_notice
from sota_casino.verify.records import unplaced_rounds

#: A round after GOOD's last (105): the casino dealt it, the player went to war in it, and the
#: bundle leaves it out, its reveal signed with 6 rounds.
LEFT_OUT = 106


def _records(*actions: tuple[int, int | None, str]) -> dict[str, Any]:
    """Records of Casino War decisions, each ``(round_id, seed_pair_id, action)``."""
    return {
        "format": "sota-casino-records",
        "v": 1,
        "public_key_hex": KEY_HEX,
        "actions": [
            {
                "round_id": round_id,
                "seed_pair_id": pair,
                "nonce": None,
                "game": "casino_war",
                "action": action,
            }
            for round_id, pair, action in actions
        ],
    }


#: A round of pair 13 (:func:`_other_pair_bundle`) dealt a tie, at nonce 19: the player went to war.
OTHER_WAR = 219


def _other_pair_bundle() -> dict[str, Any]:
    """A revealed bundle of another pair of the player's, whose rounds are 200 to 219 (its own
    server seed deals its first tie at nonce 19, round :data:`OTHER_WAR`)."""
    pair = bundles.Pair(seed_pair_id=13)
    made = bundles.bundle(20, pair=pair)
    made["rounds"] = [
        bundles.resign(pair, envelope, round_id=200 + i)
        for i, envelope in enumerate(made["rounds"])
    ]
    return made


def test_a_left_out_round_recorded_with_its_pair_fails(tmp_path: Path) -> None:
    records = _write(tmp_path, "records.json", _records((101, 12, "war"), (LEFT_OUT, 12, "war")))
    code, out, _ = _run(_write(tmp_path, "b.json", GOOD), "--records", records, "-q")
    assert code == 1
    assert (
        f"bundle: records: round {LEFT_OUT}: the player played it on seed pair 12 (recorded), "
        "but the bundle holds no receipt for it"
    ) in out


def test_a_left_out_round_recorded_with_no_pair_is_named_and_not_passed_silently(
    tmp_path: Path,
) -> None:
    records = _write(
        tmp_path, "records.json", _records((101, None, "war"), (LEFT_OUT, None, "war"))
    )
    bundle = _write(tmp_path, "b.json", GOOD)
    code, out, _ = _run(bundle, "--records", records, "-q")
    assert code == 0  # it may be a round of a pair not given: not the bundle's fault for sure
    assert (
        f"Not compared: round {LEFT_OUT}: you played it (recorded with no seed pair), but no "
        "bundle given holds it"
    ) in out
    assert out.splitlines()[-1] == (
        "Result: OK: 1 bundle(s), 6 rounds, every check passed; 1 recorded round with no seed "
        "pair is in none of them and was compared with nothing (above) (exit 0)"
    )
    code, out, _ = _run(bundle, "--records", records, "--json")
    assert code == 0 and json.loads(out)["unplaced_rounds"] == [LEFT_OUT]


def test_a_round_recorded_with_no_pair_is_compared_in_the_bundle_that_holds_it(
    tmp_path: Path,
) -> None:
    # Round 101 was a war (a tie at nonce 1): recorded as a surrender, the receipt contradicts it.
    records = _write(tmp_path, "records.json", _records((101, None, "surrender")))
    code, out, _ = _run(_write(tmp_path, "b.json", GOOD), "--records", records, "-q")
    assert code == 1
    assert 'records: the receipt\'s actions are ["war"], but the player sent "surrender"' in out
    assert "Not compared" not in out


def test_rounds_recorded_with_no_pair_are_placed_in_whichever_bundle_given_holds_them(
    tmp_path: Path,
) -> None:
    records = _write(
        tmp_path, "records.json", _records((101, None, "war"), (OTHER_WAR, None, "war"))
    )
    # Anchored in one log, as the service serves two pairs' bundles: two logs would be a fork.
    both = bundles.anchored_together([GOOD, _other_pair_bundle()], PAIR.key)
    good, other = (
        _write(tmp_path, name, b) for name, b in zip(("good.json", "other.json"), both, strict=True)
    )
    code, out, _ = _run(good, other, "--records", records, "--json")
    assert code == 0 and json.loads(out)["unplaced_rounds"] == []
    code, out, _ = _run(good, "--records", records, "--json")
    assert code == 0 and json.loads(out)["unplaced_rounds"] == [OTHER_WAR]


def test_only_rounds_that_no_record_places_and_no_bundle_holds_are_unplaced() -> None:
    records = Records.parse(
        _records(
            (101, None, "war"),  # held by the bundle
            (106, 12, "war"),  # its pair is named: check 8 of that pair's bundle
            (107, None, "war"),
            (107, 12, "war"),  # another record of the round names its pair
            (108, None, "war"),
        )
    )
    assert unplaced_rounds(records, {100, 101}) == [108]


def test_many_unplaced_rounds_are_named_ten_and_counted() -> None:
    notice = unplaced_notice(list(range(300, 312)))
    assert notice.startswith(
        "rounds 300, 301, 302, 303, 304, 305, 306, 307, 308, 309 and 2 more: you played them "
        "(recorded with no seed pair), but no bundle given holds them"
    )
