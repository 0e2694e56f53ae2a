"""The player's bet records hold the stakes the bet sent, and place its round.

An operator holding the signing key and the database can sign a receipt naming a larger ante,
tie bet or Sota stake than the player sent and pay it consistently (the ledger debits it too, so
the balance simply ends lower): every check of the bundle passes. And it can leave out of a
pair's bundle a round the player only bet in (a Casino War round without a tie, a Sota game
without prisoners' moves): nothing else the player kept names that round. Only the bet records
(``bets``) can tell, so they must hold the amounts sent and count as placing their round."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import bundles
from test_verify_cli import GOOD
from test_verify_cli import KEY_HEX
from test_verify_cli import PAIR
from test_verify_cli import _run
from test_verify_cli import _write
from test_verify_signed_bets import PHANTOM_NONCE
from test_verify_signed_bets import bet_in_the_players_name

from sota_casino.core import casino_war
from sota_casino.core import sota
from sota_casino.verify import Records
from sota_casino.verify import verify_bundle
from sota_casino.verify.records import unplaced_rounds

SHOWN = casino_war.TableRules().to_dict()
#: GOOD's round 101 (nonce 1): a tie, met by war, with a tie bet of 100 on an ante of 500.
TIED = 101
#: A round after GOOD's last (105), dealt to the player and left out of the bundle.
LEFT_OUT = 106


def _records(*bets: dict[str, Any]) -> dict[str, Any]:
    return {"format": "sota-casino-records", "v": 1, "public_key_hex": KEY_HEX, "bets": list(bets)}


def _bet(round_id: int, game: str = casino_war.GAME, **sent: Any) -> dict[str, Any]:
    """A bet record of GOOD's pair, as the page keeps it (the rules the table showed)."""
    agreed = {"rules": SHOWN} if game == casino_war.GAME else {"preset": "nordic"}
    nonce = round_id - 100  # as bundles.receipt numbers the rounds
    return {"round_id": round_id, "seed_pair_id": 12, "nonce": nonce, "game": game} | agreed | sent


def _staked(round_id: int, **stakes: int) -> bundles.Doc:
    """GOOD with round ``round_id`` played and paid with other stakes, logged so from the start."""

    def make(pair: bundles.Pair, nonce: int) -> bundles.Doc:
        if 100 + nonce != round_id:
            return bundles.default_round(pair, nonce)
        return bundles.war_receipt(pair, nonce, **stakes)

    return bundles.bundle(6, pair=PAIR, make_round=make)


def _failures(bundle: bundles.Doc, records: dict[str, Any], tmp_path: Path) -> tuple[int, str]:
    code, out, _ = _run(
        _write(tmp_path, "b.json", bundle),
        "--records",
        _write(tmp_path, "r.json", records),
        "-q",
    )
    return code, out


def test_a_larger_ante_paid_by_the_receipt_passes_the_bundle_but_not_the_records(
    tmp_path: Path,
) -> None:
    forged = _staked(TIED, bet=2500, tie_bet=100)
    assert _run(_write(tmp_path, "b.json", forged), "--public-key", KEY_HEX, "-q")[0] == 0

    code, out = _failures(forged, _records(_bet(TIED, bet=500, tie_bet=100)), tmp_path)
    assert code == 1
    assert (
        f"round {TIED} (nonce 1): records: the receipt's stakes differ from those the player "
        "sent (recorded): bet is 2500 in the receipt, 500 as recorded"
    ) in out


def test_a_tie_bet_the_player_did_not_send_fails_naming_it(tmp_path: Path) -> None:
    forged = _staked(TIED, bet=500, tie_bet=2000)
    code, out = _failures(forged, _records(_bet(TIED, bet=500, tie_bet=100)), tmp_path)
    assert code == 1 and "tie_bet is 2000 in the receipt, 100 as recorded" in out
    # A bet sent without a tie bet is a tie bet of 0, as the table reads the request.
    code, out = _failures(forged, _records(_bet(TIED, bet=500)), tmp_path)
    assert code == 1 and "tie_bet is 2000 in the receipt, 0 as recorded" in out


def test_a_larger_sota_stake_fails_naming_it(tmp_path: Path) -> None:
    def nordic(stake: int) -> bundles.RoundMaker:
        def make(pair: bundles.Pair, nonce: int) -> bundles.Doc:
            return bundles.sota_receipt(pair, nonce, sota.SotaRules.from_preset("nordic"), stake)

        return make

    forged = bundles.bundle(2, pair=PAIR, make_round=nordic(30))
    code, out = _failures(forged, _records(_bet(100, sota.GAME, stake=3)), tmp_path)
    assert code == 1
    assert (
        "round 100 (nonce 0): records: the receipt's stakes differ from those the player sent "
        "(recorded): stake is 30 in the receipt, 3 as recorded"
    ) in out
    honest = bundles.bundle(2, pair=PAIR, make_round=nordic(3))
    assert _failures(honest, _records(_bet(100, sota.GAME, stake=3)), tmp_path)[0] == 0


def test_the_stakes_sent_for_every_round_of_an_honest_bundle_pass(tmp_path: Path) -> None:
    bets = [
        _bet(100 + nonce, bet=500, tie_bet=100 if nonce % 2 else 0) for nonce in range(6)
    ]  # as bundles.default_round bets
    code, out = _failures(GOOD, _records(*bets), tmp_path)
    assert code == 0, out


def test_bets_recorded_without_amounts_still_load_and_compare_their_rules(tmp_path: Path) -> None:
    forged = _staked(TIED, bet=2500, tie_bet=100)
    assert _failures(forged, _records(_bet(TIED)), tmp_path)[0] == 0  # nothing to compare
    worse = bundles.bundle(6, pair=bundles.Pair(war_rules=casino_war.TableRules(tie_payout=8)))
    code, out = _failures(worse, _records(_bet(TIED)), tmp_path)
    assert code == 1 and "tie_payout is 8 in the receipt, 10 as recorded" in out
    assert "stakes" not in out


def test_a_bet_record_whose_amounts_are_not_what_a_bet_sends_is_unusable(tmp_path: Path) -> None:
    for bet in (
        _bet(TIED, bet="500"),
        _bet(TIED, bet=True),
        _bet(TIED, bet=-500),
        _bet(TIED, tie_bet=100),  # a tie bet with no ante
        _bet(TIED, bet=500, stake=500),  # a Sota stake on a Casino War bet
        _bet(100, sota.GAME, bet=3),
    ):
        code, out = _failures(GOOD, _records(bet), tmp_path)
        assert code == 2 and ": bets[0]" in out, (bet, out)
    # A number written as a float is refused as the records file is read, naming it there.
    code, out = _failures(GOOD, _records(_bet(100, sota.GAME, stake=3.0)), tmp_path)
    assert code == 2 and "a number is written 3.0 at bets[0].stake" in out, out


def test_a_round_recorded_only_by_its_bet_and_left_out_of_its_pairs_bundle_fails(
    tmp_path: Path,
) -> None:
    records = _records(_bet(TIED), _bet(LEFT_OUT))
    code, out = _failures(GOOD, records, tmp_path)
    assert code == 1
    assert (
        f"bundle: records: round {LEFT_OUT}: the player played it on seed pair 12 (recorded), "
        "but the bundle holds no receipt for it"
    ) in out


def test_a_round_hidden_and_its_nonce_given_to_another_round_fails(tmp_path: Path) -> None:
    """The round the player lost at nonce 2 is hidden, and the receipt at nonce 2 names another
    round (signed and logged so): the nonces are whole, and only the bet names the hidden one."""
    forged = {**GOOD, "rounds": list(GOOD["rounds"])}
    forged["rounds"][2] = bundles.resign(PAIR, GOOD["rounds"][2], round_id=112)
    forged = bundles.anchored(forged, PAIR.key)
    assert _run(_write(tmp_path, "b.json", forged), "--public-key", KEY_HEX, "-q")[0] == 0
    code, out = _failures(forged, _records(_bet(102)), tmp_path)
    assert code == 1
    assert "round 102: the player played it on seed pair 12 (recorded), but the bundle" in out


def test_a_round_bet_with_no_pair_that_no_bundle_holds_is_named(tmp_path: Path) -> None:
    records = _records(_bet(TIED) | {"seed_pair_id": None}, _bet(LEFT_OUT) | {"seed_pair_id": None})
    code, out = _failures(GOOD, records, tmp_path)
    assert code == 0  # it may be a round of a pair not given
    assert (
        f"Not compared: round {LEFT_OUT}: you played it (recorded with no seed pair), but no "
        "bundle given holds it, so it was compared with nothing."
    ) in out
    code, out, _ = _run(
        _write(tmp_path, "b.json", GOOD), "--records", _write(tmp_path, "r.json", records), "--json"
    )
    assert code == 0 and json.loads(out)["unplaced_rounds"] == [LEFT_OUT]


def test_a_bet_naming_its_pair_places_its_round_as_a_decision_does() -> None:
    records = Records.parse(
        {
            **_records(_bet(107), _bet(108) | {"seed_pair_id": None}),
            "actions": [
                {"round_id": 107, "seed_pair_id": None, "nonce": None, "game": "casino_war"}
                | {"action": "war"}
            ],
        }
    )
    assert unplaced_rounds(records, {100}) == [108]


def _bets_of_the_player(phantom: int) -> list[dict[str, Any]]:
    """The records of the pair's six rounds but the one bet in the player's name."""
    return [
        _bet(100 + nonce, bet=500, tie_bet=100 if nonce % 2 else 0)
        for nonce in range(6)
        if 100 + nonce != phantom
    ]


def test_a_round_bet_in_the_players_name_after_a_key_registration_fails_the_player_check(
    tmp_path: Path,
) -> None:
    """An operator holding the database and the key, but not the player's key, bets a round in
    the player's name (a small ante, debited and paid like any other) to spend a nonce whose
    cards would have favoured the player's next bet, which then takes the nonce after. Every
    receipt replays, the nonces run without a gap, the log holds it all, and the records hold
    no bet for that round and say nothing against it either (a round played from another
    browser looks the same to them: ``–``, not compared). But the player registered a key
    before it, and from then on the service deals no bet the player did not sign: the round's
    bet is unsigned, and its ``player`` check fails."""
    phantom = 100 + PHANTOM_NONCE
    bets = _bets_of_the_player(phantom)
    code, out, _ = _run(
        _write(tmp_path, "b.json", bet_in_the_players_name()),
        "--records",
        _write(tmp_path, "r.json", _records(*bets)),
        "--json",
    )
    (report,) = json.loads(out)["bundles"]
    records = {row["round_id"]: row["checks"]["records"] for row in report["rounds"]}
    player = {row["round_id"]: row["checks"]["player"] for row in report["rounds"]}
    assert code == 1 and records.pop(phantom) == "skip" and player.pop(phantom) == "fail", out
    assert set(records.values()) == set(player.values()) == {"pass"}
    [failure] = report["findings"]
    assert failure["round_id"] == phantom and failure["check"] == "player", failure
    assert "the bet was not signed by the player's key" in failure["message"], failure


def test_a_round_bet_in_the_players_name_without_a_key_is_not_compared_and_fails_nothing(
    tmp_path: Path,
) -> None:
    """A player who registered no key signs no bet, so the same round bet in its name fails
    nothing: the records hold no bet for it, and a round played from another browser or a
    script that kept no records looks the same. Its ``records`` check is ``–`` (not compared),
    as docs/fairness.md says under the security model: only a key of the player's own, or the
    player reading the rounds of a bundle, tells it apart."""
    phantom = 100 + PHANTOM_NONCE
    bets = _bets_of_the_player(phantom)
    code, out, _ = _run(
        _write(tmp_path, "b.json", GOOD),
        "--records",
        _write(tmp_path, "r.json", _records(*bets)),
        "--json",
    )
    (report,) = json.loads(out)["bundles"]
    statuses = {row["round_id"]: row["checks"]["records"] for row in report["rounds"]}
    assert code == 0 and statuses.pop(phantom) == "skip", out
    assert set(statuses.values()) == {"pass"}


def test_a_receipt_naming_nonce_true_is_not_the_nonce_1_recorded() -> None:
    """A record's nonce and pair are JSON numbers, compared as JSON values: a receipt naming
    ``"nonce": true`` is not of the nonce 1 the player recorded, though Python's ``True == 1``.
    The page's records check says so (static/js/records.js, ``compareBundle``: ``a.nonce !==
    doc.nonce``); offline the records check passed it, and the two named different checks."""
    forged = copy.deepcopy(GOOD)
    forged["rounds"][1] = bundles.resign(PAIR, forged["rounds"][1], nonce=True)
    records = Records.parse(_records(_bet(TIED, bet=500, tie_bet=100)))
    report = verify_bundle(forged, KEY_HEX, records=records)
    said = [f.message for f in report.findings if f.check == "records" and f.round_id == TIED]
    assert said == ["nonce is True in the receipt, 1 as recorded"]
    assert verify_bundle(GOOD, KEY_HEX, records=records).ok
