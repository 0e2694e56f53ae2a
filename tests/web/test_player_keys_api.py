"""The player's keys over the API: register, list, replace; with a key, a decision without a
valid signature is a 422 with its own code, and changes nothing."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask import Flask
from flask.testing import FlaskClient
from weak_key_support import IDENTITY_KEY_HEX
from web_support import bearer
from web_support import plant_server_seed

from sota_casino.core import fairness


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

    tie = client.post("/api/v1/casino-war/rounds", json={"bet": 500}, headers=headers).get_json()
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
