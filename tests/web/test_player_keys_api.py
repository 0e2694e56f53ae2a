"""The player's keys over the API: register, list, replace; with a key, a bet, a decision or a
move without a valid signature is a 422 with its own code, a bet naming a nonce that is no
longer next a 409, and neither changes anything."""

from __future__ import annotations

import re
from typing import Any

import pytest
from bet_signing import bet_signature
from bet_signing import played_rules
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator
from operator_support import db
from sqlalchemy import select
from test_openapi import Checker
from weak_key_support import IDENTITY_KEY_HEX
from web_support import bearer
from web_support import plant_server_seed
from web_support import post_form
from web_support import register_page

from sota_casino.core import fairness
from sota_casino.models import User
from sota_casino.services import player_keys
from sota_casino.web.openapi import openapi_document


def test_keys_register_replace_and_a_decision_must_be_signed(
    app: Flask, client: FlaskClient
) -> None:
    headers = bearer(client, "signer")
    plant_server_seed(app, "signer", {0: True})
    assert client.get("/api/v1/me/keys", headers=headers).get_json() == {
        "keys": [],
        "current_key_id": None,
    }
    lost, key = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    for private in (lost, key):
        answer = client.post(
            "/api/v1/me/keys",
            json={"public_key_hex": fairness.public_key_hex(private)},
            headers=headers,
        )
        assert answer.status_code == 201, answer.get_json()
    keys = client.get("/api/v1/me/keys", headers=headers).get_json()
    assert [k["status"] for k in keys["keys"]] == ["retired", "current"]
    key_id = keys["current_key_id"]
    bad = client.post("/api/v1/me/keys", json={"public_key_hex": "AB" * 32}, headers=headers)
    assert bad.status_code == 422 and bad.get_json()["error"]["code"] == "invalid_input"

    pair = client.get("/api/v1/fairness/seed-pair", headers=headers).get_json()
    rules = played_rules("casino_war")
    signed_bet = bet_signature(key, key_id, pair, "casino_war", {"bet": 500, "tie_bet": 0}, rules)
    tie = client.post(
        "/api/v1/casino-war/rounds", json={"bet": 500, **signed_bet}, headers=headers
    ).get_json()
    assert tie["status"] == "awaiting_decision"
    url = f"/api/v1/casino-war/rounds/{tie['id']}/decision"
    document = fairness.action_document(
        game="casino_war",
        round_id=tie["id"],
        seed_pair_id=tie["seed_pair_id"],
        nonce=tie["nonce"],
        index=0,
        choice="surrender",
    )
    refused = [
        ({"choice": "surrender"}, "signature_required"),
        (
            {"choice": "war", "signature": fairness.sign(key, document), "key_id": key_id},
            "signature_invalid",
        ),
        (
            {"choice": "surrender", "signature": fairness.sign(lost, document), "key_id": key_id},
            "signature_invalid",
        ),
    ]
    for body, code in refused:
        answer = client.post(url, json=body, headers=headers)
        assert answer.status_code == 422, answer.get_json()
        assert answer.get_json()["error"]["code"] == code
    again = client.get(f"/api/v1/casino-war/rounds/{tie['id']}", headers=headers).get_json()
    assert again["status"] == "awaiting_decision" and again["balances"] == tie["balances"]

    signed = {"choice": "surrender", "signature": fairness.sign(key, document), "key_id": key_id}
    done = client.post(url, json=signed, headers=headers)
    assert done.status_code == 200 and done.get_json()["outcome"] == "surrender"
    receipt = client.get(f"/api/v1/rounds/{tie['id']}/receipt", headers=headers).get_json()
    assert receipt["document"]["signed_actions"] == [
        {"document": document, "signature": signed["signature"], "key_id": key_id}
    ]
    assert receipt["document"]["signed_bet"]["signature"] == signed_bet["signature"]


def _registered(client: FlaskClient, name: str) -> tuple[dict[str, str], Ed25519PrivateKey, int]:
    headers = bearer(client, name)
    key = Ed25519PrivateKey.generate()
    answer = client.post(
        "/api/v1/me/keys", json={"public_key_hex": fairness.public_key_hex(key)}, headers=headers
    )
    assert answer.status_code == 201, answer.get_json()
    return headers, key, answer.get_json()["current_key_id"]


#: Each game's bet: its URL, what it sends and what its document signs of it.
BETS: dict[str, tuple[str, dict[str, Any], dict[str, int], dict[str, Any]]] = {
    "casino_war": (
        "/api/v1/casino-war/rounds",
        {"bet": 500, "tie_bet": 100},
        {"bet": 500, "tie_bet": 100},
        played_rules("casino_war"),
    ),
    "sota": (
        "/api/v1/sota/games",
        {"stake": 3, "preset": "english"},
        {"stake": 3},
        played_rules("sota", preset="english"),
    ),
}


@pytest.mark.parametrize("game", sorted(BETS))
def test_with_a_key_a_bet_must_be_signed_over_its_pair_nonce_stakes_and_rules(
    app: Flask, client: FlaskClient, game: str
) -> None:
    """Once a key is registered, the service deals no bet the player did not sign over exactly
    this bet: the player, the pair and nonce it takes, the game, the stakes and the rules. A
    signature made for another nonce, stake or rule set is refused, and so is one by another
    key; refused, the bet takes no nonce and moves nothing."""
    headers, key, key_id = _registered(client, f"bettor{game[:4]}")
    url, sent, stakes, rules = BETS[game]
    pair = client.get("/api/v1/fairness/seed-pair", headers=headers).get_json()
    before = client.get("/api/v1/me", headers=headers).get_json()["balances"]
    right = bet_signature(key, key_id, pair, game, stakes, rules)
    other_rules = {**rules, "decks": 8} if game == "casino_war" else {**rules, "war_down": 3}
    more = {name: amount + 100 for name, amount in stakes.items()}
    refused = [
        ({}, 422, "signature_required", "signature"),
        ({**right, "signature": None, "key_id": None}, 422, "signature_required", "signature"),
        (
            bet_signature(key, key_id, pair, game, more, rules),
            422,
            "signature_invalid",
            "signature",
        ),
        (
            bet_signature(key, key_id, pair, game, stakes, other_rules),
            422,
            "signature_invalid",
            "signature",
        ),
        (
            bet_signature(Ed25519PrivateKey.generate(), key_id, pair, game, stakes, rules),
            422,
            "signature_invalid",
            "signature",
        ),
        ({**right, "key_id": key_id + 1}, 422, "signature_invalid", "key_id"),
        # Signed for the nonce after: a signature carried to another nonce signs nothing.
        (
            {**bet_signature(key, key_id, pair, game, stakes, rules, nonce=1), "nonce": 0},
            422,
            "signature_invalid",
            "signature",
        ),
        ({k: v for k, v in right.items() if k != "nonce"}, 422, "invalid_input", "nonce"),
        (
            bet_signature(key, key_id, pair, game, stakes, rules, nonce=1),
            409,
            "nonce_not_next",
            "nonce",
        ),
        ({**right, "seed_pair_id": pair["next_seed_pair_id"]}, 409, "nonce_not_next", "nonce"),
    ]
    for extra, status, code, field in refused:
        answer = client.post(url, json={**sent, **extra}, headers=headers)
        assert answer.status_code == status, (extra, answer.get_json())
        error = answer.get_json()["error"]
        assert (error["code"], error["field"]) == (code, field), (extra, error)
    assert client.get("/api/v1/me", headers=headers).get_json()["balances"] == before
    again = client.get("/api/v1/fairness/seed-pair", headers=headers).get_json()
    assert again["next_nonce"] == pair["next_nonce"] == 0

    dealt = client.post(url, json={**sent, **right}, headers=headers)
    assert dealt.status_code == 201, dealt.get_json()
    round_ = dealt.get_json()
    assert (round_["seed_pair_id"], round_["nonce"]) == (pair["seed_pair_id"], 0)
    # The same signed bet sent again names a nonce taken since: a 409 that names the next one.
    copy = client.post(url, json={**sent, **right}, headers=headers)
    assert copy.status_code == 409
    assert copy.get_json()["error"]["message"] == (
        f"the bet names nonce 0 of seed pair {pair['seed_pair_id']}, but the next bet takes "
        f"nonce 1 of seed pair {pair['seed_pair_id']}: sign it for that one"
    )


def test_a_script_signs_a_game_from_the_api_alone_every_preset_and_rules_as_played(
    app: Flask, client: FlaskClient
) -> None:
    """A script signs a Sota game's bet from what the API declares, hard-coding no rule: a
    preset's whole rule set from the table's answer, the rules it sends with the defaults the
    document names and lead off as null (the document says the bet signs the rules as the
    game holds them). The rules as sent ("lead": "off", the rest left out) are not what the
    bet signs, and the refusal shows the document that it does sign."""
    headers, key, key_id = _registered(client, "scripter")
    document = openapi_document(app)
    table = Checker(document, client, closed=True)("get", "/tables/sota")
    assert sorted(table["preset_rules"]) == sorted(table["settings"]["presets"])

    def signed(stakes: dict[str, int], rules: dict[str, Any]) -> dict[str, Any]:
        pair = client.get("/api/v1/fairness/seed-pair", headers=headers).get_json()
        return bet_signature(key, key_id, pair, "sota", stakes, rules)

    for preset, rules in table["preset_rules"].items():
        body = {"stake": 1, "preset": preset, **signed({"stake": 1}, rules)}
        game = client.post("/api/v1/sota/games", json=body, headers=headers)
        assert game.status_code == 201, (preset, game.get_json())
        assert game.get_json()["rules"] == rules

    schemas = document["components"]["schemas"]
    request = schemas["GameRequest"]["properties"]["rules"]
    assert "lead off as null" in request["description"]
    options = request["anyOf"][0]["properties"]
    sent = {"lead": "off", "peace": True}
    as_sent = client.post(
        "/api/v1/sota/games",
        json={"stake": 1, "rules": sent, **signed({"stake": 1}, sent)},
        headers=headers,
    )
    assert as_sent.status_code == 422
    assert as_sent.get_json()["error"]["code"] == "signature_invalid"
    assert '"lead":null' in as_sent.get_json()["error"]["message"]
    played = {name: option["default"] for name, option in options.items()} | sent | {"lead": None}
    game = client.post(
        "/api/v1/sota/games",
        json={"stake": 1, "rules": sent, **signed({"stake": 1}, played)},
        headers=headers,
    )
    assert game.status_code == 201, game.get_json()
    assert game.get_json()["rules"] == played
    answered = Draft202012Validator({**document, **schemas["SotaGame"]["properties"]["rules"]})
    assert answered.is_valid(played) and not answered.is_valid(played | {"lead": "off"})
    assert not answered.is_valid({"peace": True})


def test_a_bet_without_a_key_may_name_its_nonce_and_a_stale_one_is_a_conflict(
    app: Flask, client: FlaskClient
) -> None:
    headers = bearer(client, "nokey")
    pair = client.get("/api/v1/fairness/seed-pair", headers=headers).get_json()
    place = {"seed_pair_id": pair["seed_pair_id"], "nonce": pair["next_nonce"]}
    first = client.post("/api/v1/sota/games", json={"stake": 2, **place}, headers=headers)
    assert first.status_code == 201 and first.get_json()["nonce"] == 0
    stale = client.post("/api/v1/sota/games", json={"stake": 2, **place}, headers=headers)
    assert stale.status_code == 409 and stale.get_json()["error"]["code"] == "nonce_not_next"
    unsigned = client.post("/api/v1/sota/games", json={"stake": 2}, headers=headers)
    assert unsigned.status_code == 201 and unsigned.get_json()["nonce"] == 1
    sent_alone = client.post(
        "/api/v1/sota/games",
        json={"stake": 2, "signature": "ab" * 64, "key_id": 1, **place, "nonce": 2},
        headers=headers,
    )
    assert sent_alone.status_code == 422
    assert sent_alone.get_json()["error"]["code"] == "signature_invalid"


def test_a_signed_bet_is_in_its_receipt_and_its_bet_entry(app: Flask, client: FlaskClient) -> None:
    headers, key, key_id = _registered(client, "receipted")
    pair = client.get("/api/v1/fairness/seed-pair", headers=headers).get_json()
    url, sent, stakes, rules = BETS["sota"]
    signed = bet_signature(key, key_id, pair, "sota", stakes, rules)
    game = client.post(url, json={**sent, **signed}, headers=headers).get_json()
    receipt = client.get(f"/api/v1/rounds/{game['id']}/receipt", headers=headers).get_json()
    document = fairness.bet_document(
        user_id=pair["commitment_document"]["user_id"],
        game="sota",
        seed_pair_id=pair["seed_pair_id"],
        nonce=0,
        stakes={"stake": 3},
        rules=receipt["document"]["rules"],
    )
    assert receipt["document"]["signed_bet"] == {
        "document": document,
        "signature": signed["signature"],
        "key_id": key_id,
    }
    assert fairness.verify_signature(fairness.public_key_hex(key), document, signed["signature"])


def test_a_weak_key_is_refused_in_the_players_language(app: Flask, client: FlaskClient) -> None:
    """Under the identity key one signature verifies every action document: a key anyone can
    sign with would make the player's signatures prove nothing. Refused, and nothing kept."""
    headers = bearer(client, "weak")
    for weak in (IDENTITY_KEY_HEX, "ee" + "ff" * 30 + "7f"):  # small order; non-canonical
        answer = client.post("/api/v1/me/keys", json={"public_key_hex": weak}, headers=headers)
        assert answer.status_code == 422
        error = answer.get_json()["error"]
        assert error["code"] == "invalid_input" and error["field"] == "public_key_hex"
        assert error["message"].startswith("public_key_hex is a weak Ed25519 key (of small order")
    finnish = client.post(
        "/api/v1/me/keys",
        json={"public_key_hex": IDENTITY_KEY_HEX},
        headers={**headers, "Accept-Language": "fi"},
    )
    assert finnish.get_json()["error"]["message"].startswith("public_key_hex on heikko Ed25519")
    assert client.get("/api/v1/me/keys", headers=headers).get_json()["keys"] == []


def test_with_a_key_a_bet_sent_as_a_plain_form_is_refused_in_the_page_and_changes_nothing(
    app: Flask, client: FlaskClient
) -> None:
    """The tables' forms, sent without the page's script, carry no signature: once the player
    registered a key they are refused as an unsigned decision's form is, and nothing is dealt."""
    register_page(client, "formbettor")
    session = db(app)
    try:
        user_id = session.scalars(select(User.id).where(User.username == "formbettor")).one()
        player_keys.register_key(
            session, user_id, fairness.public_key_hex(Ed25519PrivateKey.generate())
        )
    finally:
        session.close()
    for url, form in (
        ("/casino-war/rounds", {"bet": "5"}),
        ("/sota/games", {"stake": "2", "preset": "nordic"}),
    ):
        refused = post_form(client, url, form, follow_redirects=True)
        page = refused.get_data(as_text=True)
        refusal = re.search(r'class="flash error"[^>]*>([^<]*)<', page)
        assert refusal and "sign this bet with it" in refusal[1], (url, refusal)
    assert client.get("/api/v1/rounds").get_json()["rounds"] == []
