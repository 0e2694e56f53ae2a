"""Bets the player signs: once the player's key is registered, the service deals no bet the
player did not sign over its own place (the player, the seed pair and nonce it takes, the
game, the stakes and the rules), so both verifiers fail a round bet after the registration
whose bet is unsigned, or signed over anything but exactly its receipt's.

The forgery this stops: an operator holding the database and the service key, but not the
player's key, bets a round in the player's name (a small ante, debited and paid like any
other) to spend a nonce whose cards would have favoured the player's next bet, which then
takes the nonce after. Every receipt replays, the nonces run without a gap and the log holds
it all; only the player's signature tells the rounds apart."""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import bundles
from test_verify_cli import _run
from test_verify_cli import _write
from test_verify_player_log_order import KEY_HEX
from test_verify_player_log_order import KEY_ID
from test_verify_player_log_order import PAIR
from test_verify_player_log_order import REGISTERED_AT
from test_verify_player_log_order import _registered_first
from test_verify_player_log_order import _registered_last
from test_verify_player_log_order import _with_registration
from test_verify_player_log_order import signed_actions
from test_verify_player_log_order import signed_bet

from sota_casino.core import fairness
from sota_casino.verify import verify_bundle

#: The round an operator bets in the player's name: nonce 2 (no tie: a bet and nothing else).
PHANTOM_NONCE = 2
ROUNDS = 6


def player_signed(unsigned_bets: Collection[int] = (), **bet_changed: Any) -> bundles.RoundMaker:
    """GOOD's rounds with every bet and decision signed by the player's key, except the bets of
    the nonces in ``unsigned_bets``; each signed bet's document changed as ``bet_changed``
    says."""

    def make(pair: bundles.Pair, nonce: int) -> dict[str, Any]:
        doc = bundles.default_round(pair, nonce)["document"]
        if doc["actions"]:
            doc["signed_actions"] = signed_actions(doc)
        if nonce not in unsigned_bets:
            doc["signed_bet"] = signed_bet(doc, **bet_changed)
        return pair.sign(doc)

    return make


def bet_in_the_players_name() -> dict[str, Any]:
    """The player registered a key before playing; every round is the player's, signed, but
    the one the operator bet at nonce 2 in the player's name, unsigned: logged, debited and
    paid like the others."""
    made = bundles.bundle(ROUNDS, pair=PAIR, make_round=player_signed({PHANTOM_NONCE}))
    return _with_registration(made, _registered_first)


def bet_before_the_registration() -> dict[str, Any]:
    """The same rounds, every bet and decision unsigned, the key registered once they were
    played: nothing is asked of them."""
    return _with_registration(bundles.bundle(ROUNDS, pair=PAIR), _registered_last)


def _bet_seq(bundle: Mapping[str, Any], round_id: int) -> int:
    [anchor] = [a for a in bundle["anchors"] if a["of"] == {"kind": "bet", "round_id": round_id}]
    seq: int = anchor["entry"]["seq"]
    return seq


def test_a_round_bet_in_the_players_name_after_the_key_registration_fails(
    tmp_path: Path,
) -> None:
    forged = bet_in_the_players_name()
    phantom = 100 + PHANTOM_NONCE
    honest = _with_registration(
        bundles.bundle(ROUNDS, pair=PAIR, make_round=player_signed()), _registered_first
    )
    assert verify_bundle(honest, KEY_HEX).ok

    report = verify_bundle(forged, KEY_HEX)

    failures = [f.text() for f in report.failures]
    assert {(f.check, f.round_id) for f in report.failures} == {("player", phantom)}, failures
    assert failures == [
        f"round {phantom} (nonce {PHANTOM_NONCE}): player: the bet is unsigned, but the "
        f"player's key {KEY_ID} was registered (log entry 2, {REGISTERED_AT}) before the log "
        f"took the bet (log entry {_bet_seq(forged, phantom)}): the service takes no unsigned "
        "bet then, so the bet was not signed by the player's key: the player did not place "
        "this bet"
    ]
    code, out, _ = _run(_write(tmp_path, "b.json", forged), "--public-key", KEY_HEX)
    assert code == 1 and failures[0] in out, out


def test_rounds_bet_before_the_key_registration_pass_unsigned(tmp_path: Path) -> None:
    report = verify_bundle(bet_before_the_registration(), KEY_HEX)
    assert report.ok, [f.text() for f in report.failures]
    code, out, _ = _run(
        _write(tmp_path, "b.json", bet_before_the_registration()), "--public-key", KEY_HEX, "-q"
    )
    assert code == 0, out


def test_an_unsigned_bet_settled_with_it_fails_by_the_dates_without_the_bets_anchor() -> None:
    """Without the bet's anchor, a round settled with its bet (no decision) was bet when it
    settled: a key registered before that asked a signature of it."""
    forged = bet_in_the_players_name()
    phantom = 100 + PHANTOM_NONCE
    forged["anchors"] = [
        a for a in forged["anchors"] if a["of"] != {"kind": "bet", "round_id": phantom}
    ]
    forged["pending_anchors"] = [{"of": {"kind": "bet", "round_id": phantom}, "reason": "later"}]
    [failure] = [f.text() for f in verify_bundle(forged, KEY_HEX).failures if f.check == "player"]
    assert "the bet is unsigned, but the player's key 3 was registered" in failure
    assert "before the round was bet and settled" in failure


def test_a_signed_bet_carried_to_another_nonce_pair_stake_or_rule_fails() -> None:
    """The signature binds the bet to its place: the player's signature of another nonce, pair,
    stake or rule set is not a signature of this round's bet."""
    cases = {
        "nonce": ({"nonce": 9}, "the player signed a bet of nonce 9, but the receipt's nonce is"),
        "seed_pair_id": (
            {"seed_pair_id": 13},
            "the player signed a bet of seed_pair_id 13, but the receipt's seed_pair_id is 12",
        ),
        "stakes": (
            {"stakes": {"bet": 100, "tie_bet": 0}},
            'the player signed a bet of stakes {"bet":100,"tie_bet":0}, but the receipt\'s stakes',
        ),
        "rules": ({"rules": {"decks": 8}}, 'the player signed a bet of rules {"decks":8}'),
        "user_id": ({"user_id": 8}, "the player signed a bet of user_id 8, but the pair's player"),
        "game": ({"game": "sota"}, 'the player signed a bet of game "sota", but the receipt\'s'),
    }
    for name, (changed, said) in cases.items():
        made = bundles.bundle(ROUNDS, pair=PAIR, make_round=player_signed(**changed))
        report = verify_bundle(_with_registration(made, _registered_first), KEY_HEX)
        failures = [f.text() for f in report.failures]
        assert {f.check for f in report.failures} == {"player"}, (name, failures)
        assert len(failures) == ROUNDS and all(said in f for f in failures), (name, failures)
        assert all("the bet was not signed by the player's key" in f for f in failures)


def _player_failures(bundle: Mapping[str, Any]) -> list[str]:
    """The ``player`` findings (a receipt signed again also contradicts its logged hash)."""
    return [f.text() for f in verify_bundle(bundle, KEY_HEX).failures if f.check == "player"]


def test_a_signed_bet_by_another_key_or_with_a_bad_signature_fails() -> None:
    made = bundles.bundle(ROUNDS, pair=PAIR, make_round=player_signed())
    honest = _with_registration(made, _registered_first)
    envelope = honest["rounds"][0]
    doc = envelope["document"]
    doc["signed_bet"] = {**doc["signed_bet"], "signature": "00" * 64}
    envelope["signature"] = fairness.sign(PAIR.key, doc)
    [failure] = _player_failures(honest)
    assert failure.startswith("round 100 (nonce 0): player: the bet's signature is not valid")
    doc["signed_bet"] = {**signed_bet(doc), "key_id": 4}
    envelope["signature"] = fairness.sign(PAIR.key, doc)
    [failure] = _player_failures(honest)
    assert "the bet is signed by key 4, which no registration of this player" in failure
