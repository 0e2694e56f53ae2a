"""Bets the player signs, in Chromium: with a key made on the fairness page, the Casino War and
Sota tables sign every bet over its seed pair, nonce, stakes and rules, and play as before; an
operator holding the casino's key and the database, but not the player's key, who bets a round
in the player's name to spend a nonce, is caught by the page's verifier and the offline one
alike, on the same bundle."""

from __future__ import annotations

import copy
import io
import json
import re
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from bet_signing import played_rules
from browser_support import sign_up
from browser_support import wait_until
from sqlalchemy import select

from sota_casino.core import fairness
from sota_casino.core import sota
from sota_casino.models import User
from sota_casino.services import player_keys
from sota_casino.services import rounds
from sota_casino.verify import main
from sota_casino.verify import verify_bundle

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import bundles  # noqa: E402
from test_page_and_offline_verifiers_agree import PAGE_PASSES  # noqa: E402
from test_page_and_offline_verifiers_agree import changed  # noqa: E402
from test_verify_any_input import places  # noqa: E402
from test_verify_player_log_order import KEY_HEX  # noqa: E402
from test_verify_player_log_order import _registered_first  # noqa: E402
from test_verify_player_log_order import _with_registration  # noqa: E402
from test_verify_signed_bets import PHANTOM_NONCE  # noqa: E402
from test_verify_signed_bets import ROUNDS  # noqa: E402
from test_verify_signed_bets import bet_before_the_registration  # noqa: E402
from test_verify_signed_bets import bet_in_the_players_name  # noqa: E402
from test_verify_signed_bets import player_signed  # noqa: E402
from web_support import plant_server_seed  # noqa: E402

pytestmark = pytest.mark.browser

PINNED_PROBLEMS = (
    "async ([bundle, key]) => (await window.SotaVerify.verifyBundle(bundle, "
    "{trustedKey: key, records: null})).problems.join(' | ')"
)
NOT_THE_PLAYERS = "the bet was not signed by the player's key"


def _offline(tmp_path: Path, bundle: Any, key: str) -> tuple[int, str]:
    """``verify.pyz``'s code on ``bundle``, pinned to ``key``: its exit code and report."""
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main([str(path), "--public-key", key], out, err)
    return code, out.getvalue() + err.getvalue()


def _make_key(tab: Any) -> dict[str, Any]:
    tab.goto("/fairness")
    tab.click("#signing-key [data-testid=make-player-key]")
    tab.locator("#signing-key [data-testid=player-key-status]").filter(
        has_text="This browser signs your decisions"
    ).wait_for()
    keys = tab.evaluate("async () => (await fetch('/api/v1/me/keys')).json()")
    return dict(next(k for k in keys["keys"] if k["key_id"] == keys["current_key_id"]))


def _receipt(tab: Any, round_id: int) -> dict[str, Any]:
    return dict(
        tab.evaluate(
            "async id => (await (await fetch('/api/v1/rounds/' + id + '/receipt')).json())"
            ".document",
            round_id,
        )
    )


#: The player's rounds, newest first, as the service lists them now (never from the cache).
LISTED = "async () => (await (await fetch('/api/v1/rounds', {cache: 'no-store'})).json()).rounds"


def _latest_round(tab: Any) -> dict[str, Any]:
    return dict(tab.evaluate(LISTED)[0])


def _deal_war(tab: Any) -> dict[str, Any]:
    """Deal a round on the table and return it: the one round the service lists after the click
    that it did not list before (waiting for the result alone could read a round listed before,
    while a bet refused for its nonce is signed again)."""
    known = [r["id"] for r in tab.evaluate(LISTED)]
    tab.click("#deal")
    dealt = wait_until(
        tab, f"async known => (await ({LISTED})()).filter(r => !known.includes(r.id))", known
    )
    tab.wait_for_selector("[data-testid=result]")
    [dealt] = dealt
    return dict(dealt)


def test_the_tables_sign_bets_and_both_verifiers_catch_a_round_bet_in_the_players_name(
    tab: Any, live_server: Any, tmp_path: Path
) -> None:
    app = live_server.app
    username = sign_up(tab, "betsigner")
    plant_server_seed(app, username, {0: False, 1: False, 2: False})
    key = _make_key(tab)

    # The player's first bet, signed by the page for nonce 0.
    tab.goto("/casino-war")
    tab.locator("[data-testid=player-key-status]").filter(has_text="This browser signs").wait_for()
    first = _deal_war(tab)
    signed = _receipt(tab, first["id"])["signed_bet"]
    assert signed["key_id"] == key["key_id"]
    assert signed["document"] == {
        "type": "bet",
        "v": 1,
        "user_id": signed["document"]["user_id"],
        "game": "casino_war",
        "seed_pair_id": first["seed_pair_id"],
        "nonce": 0,
        "stakes": {"bet": first["staked"], "tie_bet": 0},
        "rules": _receipt(tab, first["id"])["rules"],
    }
    assert fairness.verify_signature(key["public_key_hex"], signed["document"], signed["signature"])

    # The operator, with the casino's key and the database but not the player's key, bets the
    # next nonce in the player's name (the service's own path, its signature check left out):
    # logged, debited and paid like any other round.
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        user_id = session.scalars(select(User.id).where(User.username == username)).one()
        session.close()
        with mock.patch.object(player_keys, "signed_bet", lambda *args, **kwargs: None):
            phantom = rounds.place_casino_war_bet(session, user_id, 100)
        session.close()
    assert phantom.nonce == 1

    # The player's next bet takes the nonce after; the page signs it for that one.
    second = _deal_war(tab)
    assert (
        second["nonce"] == 2 and _receipt(tab, second["id"])["signed_bet"]["document"]["nonce"] == 2
    )

    # The Sota table signs its games too, over every rule of the preset played.
    tab.goto("/sota")
    tab.check("input[name=preset][value=english]")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    game = _latest_round(tab)
    sota_bet = _receipt(tab, game["id"])["signed_bet"]
    assert sota_bet["document"]["nonce"] == 3 and sota_bet["document"]["stakes"] == {
        "stake": game["staked"]
    }
    assert sota_bet["document"]["rules"] == _receipt(tab, game["id"])["rules"]

    tab.goto("/fairness")
    tab.click("#rotate")
    tab.wait_for_selector("[data-verify]")
    url = tab.locator("[data-verify]").first.get_attribute("data-bundle-url")
    bundle = tab.evaluate("async url => (await fetch(url)).json()", url)
    service = bundle["public_key_hex"]

    caught = tab.evaluate(PINNED_PROBLEMS, [bundle, service])
    assert caught == (
        f"round {phantom.id} (nonce 1): player failed (the bet is unsigned, but the player's "
        f"key {key['key_id']} was registered before the log took the bet: {NOT_THE_PLAYERS})"
    ), caught
    report = verify_bundle(bundle, service)
    failures = [f.text() for f in report.failures]
    assert [(f.round_id, f.check) for f in report.failures] == [(phantom.id, "player")], failures
    assert (
        failures[0].startswith(
            f"round {phantom.id} (nonce 1): player: the bet is unsigned, but the player's key "
            f"{key['key_id']} was registered (log entry "
        )
        and NOT_THE_PLAYERS in failures[0]
    ), failures
    code, said = _offline(tmp_path, bundle, service)
    assert code == 1 and failures[0] in said, said

    # The page's table: the round's "Your signature" is ✗, every bet the player signed ✓.
    tab.locator("[data-verify]").first.click()
    row = tab.locator(f".revealed-pair tr[data-round='{phantom.id}']").first
    row.wait_for()
    assert row.get_attribute("data-ok") == "0"
    marks = tab.locator(".revealed-pair [data-testid=player-signed]").all_inner_texts()
    assert sorted(marks) == ["✓", "✓", "✓", "✗"], marks


def test_both_verifiers_fail_a_round_bet_in_the_players_name_and_pass_bets_before_a_key(
    tab: Any, live_server: Any, tmp_path: Path
) -> None:
    """The forgery of tests/unit/test_verify_signed_bets.py, and the bets it must not touch:
    rounds bet before the key was registered pass unsigned, in both verifiers."""
    sign_up(tab, "phantombet")
    tab.goto("/fairness")
    phantom = 100 + PHANTOM_NONCE
    honest = _with_registration(
        bundles.bundle(ROUNDS, pair=bundles.Pair(), make_round=player_signed()), _registered_first
    )
    for passing in (honest, bet_before_the_registration()):
        assert tab.evaluate(PINNED_PROBLEMS, [passing, KEY_HEX]) == ""
        assert _offline(tmp_path, passing, KEY_HEX)[0] == 0
    forged = bet_in_the_players_name()
    caught = tab.evaluate(PINNED_PROBLEMS, [forged, KEY_HEX])
    assert caught == (
        f"round {phantom} (nonce {PHANTOM_NONCE}): player failed (the bet is unsigned, but the "
        f"player's key 3 was registered before the log took the bet: {NOT_THE_PLAYERS})"
    ), caught
    code, said = _offline(tmp_path, forged, KEY_HEX)
    assert (
        code == 1
        and f"round {phantom} (nonce {PHANTOM_NONCE}): player: the bet is unsigned" in (said)
    ), said

    # A bet signed for another nonce, stake or rule set is not this round's, in both.
    for altered, words in (
        ({"nonce": 9}, "the player signed a bet of nonce 9, but the receipt's nonce is 0"),
        ({"stakes": {"bet": 100, "tie_bet": 0}}, 'the player signed a bet of stakes {"bet":100'),
        ({"rules": {"decks": 8}}, 'the player signed a bet of rules {"decks":8}'),
    ):
        made = bundles.bundle(ROUNDS, pair=bundles.Pair(), make_round=player_signed(**altered))
        carried = _with_registration(made, _registered_first)
        caught = tab.evaluate(PINNED_PROBLEMS, [carried, KEY_HEX])
        assert words in caught and NOT_THE_PLAYERS in caught, caught
        code, said = _offline(tmp_path, carried, KEY_HEX)
        assert code == 1 and words in said, said


def test_the_sota_page_signs_the_rules_the_service_plays(tab: Any) -> None:
    """The Sota table signs a game over every rule it is played by, which the page works out
    from the preset or the rules it sends (with more seats, or its own): the same rule set the
    service deals and its receipt holds, or the signature would sign another game."""
    sign_up(tab, "sotarules")
    tab.goto("/sota")
    sent: list[dict[str, Any]] = [{"preset": name} for name in sota.PRESETS]
    sent += [{"rules": {**sota.PRESETS[name], "seats": 3}} for name in sota.PRESETS]
    sent += [{"rules": {"seats": 4, "teams": True, "lead": 10}}, {"rules": {"war_down": "by_rank"}}]
    sent += [{"rules": {"lead": "off", "peace": True}}]  # signed as the game holds it: null
    worked_out = tab.evaluate(
        "sent => sent.map(body => typeof body.preset === 'string'"
        " ? window.SotaEngine.presetRules(body.preset) : window.SotaEngine.ruleSet(body.rules))",
        sent,
    )
    played = [played_rules("sota", body.get("rules"), body.get("preset")) for body in sent]
    assert worked_out == played


def test_both_verifiers_pass_or_fail_each_one_value_change_of_a_re_signed_signed_bet(
    tab: Any, tmp_path: Path
) -> None:
    """The casino holds its key, not the player's: each one-value change of a receipt whose bet
    the player signed (its signed bet, or the bet it signed, a war and a plain round), the
    receipt signed again and logged so from the start, passes the page exactly when it passes
    the offline verifier; and a change to what the player signed passes neither."""
    sign_up(tab, "resignedbet")
    tab.goto("/fairness")
    made = bundles.bundle(ROUNDS, pair=bundles.Pair(), make_round=player_signed())
    unanchored = {name: made[name] for name in ("public_key_hex", "commitment", "reveal", "rounds")}
    cases = []
    for index in (1, PHANTOM_NONCE):  # a war with a tie bet, and a plain round
        document = unanchored["rounds"][index]["document"]
        for place in places(document):
            forged = copy.deepcopy(unanchored)
            holder = forged["rounds"][index]["document"]
            for key in place[:-1]:
                holder = holder[key]
            holder[place[-1]] = changed(holder[place[-1]])
            envelope = forged["rounds"][index]
            envelope["signature"] = fairness.sign(bundles.KEY, envelope["document"])
            cases.append((place, _with_registration(forged, _registered_first)))
    disagree, passed = [], []
    for start in range(0, len(cases), 20):
        chunk = cases[start : start + 20]
        page = tab.evaluate(PAGE_PASSES, [[bundle for _, bundle in chunk], KEY_HEX])
        for (place, bundle), said in zip(chunk, page, strict=True):
            offline = _offline(tmp_path, bundle, KEY_HEX)[0] == 0
            if said != offline:
                disagree.append((place, said))
            if offline and place[0] == "signed_bet":
                passed.append(place)
    assert len(cases) > 60 and disagree == [], disagree
    assert passed == [], passed  # nothing the player signed changes unnoticed
    honest = _with_registration(unanchored, _registered_first)
    assert tab.evaluate(PAGE_PASSES, [[honest], KEY_HEX]) == [True]
