"""A round settled under rules other than those the player bet under: a Casino War tie paid 8
to 1 at a table whose page showed 10 to 1, or a Sota game played under another preset than the
one sent. The casino holds the key and the database, so it deals every card honestly, signs a
receipt naming the worse rules and logs it so from the start: every check of the bundle
passes, since the payout follows from the receipt's own rules. Only the rules the player's
records kept for the bet (``bets``) can tell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bundles
from test_verify_cli import _run
from test_verify_cli import _write

from sota_casino.core import casino_war
from sota_casino.core import sota
from sota_casino.core.fairness import public_key_hex

#: The table's page showed (and the bet sent) the house rules: the tie pays 10 to 1.
SHOWN = casino_war.TableRules().to_dict()
#: A pair whose Casino War rounds were all settled at a tie payout of 8 to 1.
WORSE_TIES = bundles.Pair(war_rules=casino_war.TableRules(tie_payout=8))
KEY_HEX = public_key_hex(bundles.KEY)


def _records(*bets: dict[str, Any]) -> dict[str, Any]:
    return {"format": "sota-casino-records", "v": 1, "public_key_hex": KEY_HEX, "bets": list(bets)}


def _bet(round_id: int, game: str = casino_war.GAME, **agreed: Any) -> dict[str, Any]:
    nonce = round_id - 100  # as bundles.receipt numbers the rounds
    return {"round_id": round_id, "seed_pair_id": 12, "nonce": nonce, "game": game, **agreed}


def _sota_game(preset: str) -> bundles.RoundMaker:
    def make(pair: bundles.Pair, nonce: int) -> dict[str, Any]:
        return bundles.sota_receipt(pair, nonce, sota.SotaRules.from_preset(preset))

    return make


def test_a_tie_paid_at_less_than_the_table_showed_passes_the_bundle_but_not_the_records(
    tmp_path: Path,
) -> None:
    forged = _write(tmp_path, "b.json", bundles.bundle(6, pair=WORSE_TIES))
    assert _run(forged, "--public-key", KEY_HEX, "-q")[0] == 0  # the bundle alone holds

    records = _write(tmp_path, "r.json", _records(_bet(101, rules=SHOWN)))
    code, out, _ = _run(forged, "--records", records, "-q")
    assert code == 1
    assert (
        "round 101 (nonce 1): records: the receipt's rules differ from those the player bet "
        "under (recorded): tie_payout is 8 in the receipt, 10 as recorded"
    ) in out


def test_a_sota_game_played_under_another_preset_than_the_one_sent_fails_naming_the_rule(
    tmp_path: Path,
) -> None:
    played = bundles.bundle(2, make_round=_sota_game("english"))
    bundle = _write(tmp_path, "b.json", played)
    sent_nordic = _write(tmp_path, "r.json", _records(_bet(100, sota.GAME, preset="nordic")))
    code, out, _ = _run(bundle, "--records", sent_nordic, "-q")
    assert code == 1
    assert "war_down is 1 in the receipt, 3 as recorded" in out

    # The preset sent, or its options sent as rules (the rest are the defaults), agree.
    english = [_bet(100, sota.GAME, preset="english"), _bet(101, sota.GAME, rules={"war_down": 1})]
    assert _run(bundle, "--records", _write(tmp_path, "e.json", _records(*english)))[0] == 0


def test_bets_recorded_under_the_rules_the_rounds_were_played_by_pass(tmp_path: Path) -> None:
    bets = [_bet(round_id, rules=SHOWN) for round_id in range(100, 106)]
    records = _write(tmp_path, "r.json", _records(*bets))
    code, out, _ = _run(_write(tmp_path, "b.json", bundles.bundle(6)), "--records", records)
    assert code == 0, out


def test_a_bet_record_whose_rules_no_table_plays_is_unusable(tmp_path: Path) -> None:
    bundle = _write(tmp_path, "b.json", bundles.bundle(2))
    for bet in (
        _bet(100, rules={**SHOWN, "tie_payout": "ten"}),
        _bet(100, rules=None),
        _bet(100, sota.GAME, preset="nordic", rules={}),
        _bet(100, sota.GAME, preset="nowhere"),
    ):
        code, out, _ = _run(bundle, "--records", _write(tmp_path, "r.json", _records(bet)))
        assert code == 2 and ": bets[0]" in out, (bet, out)
