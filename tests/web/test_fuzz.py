"""Throw many malformed requests at every POST endpoint: none may give a 500 or move money."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_support import csrf_token
from web_support import plant_server_seed
from web_support import register_page

from sota_casino.services import ledger

RAW_BODIES: list[bytes] = [
    b"",
    b"null",
    b"true",
    b"1",
    b"1.5",
    b'"text"',
    b"[]",
    b"[1, 2]",
    b"{",
    b"}",
    b"{}",
    b"\xff\xfe\x00",
    b"\x00",
    b"NaN",
    b'{"bet": NaN}',
    b'{"bet": Infinity}',
    b'{"stake": -Infinity}',
    b'{"bet": 1e999}',
    b'{"bet": 1e-999}',
    b'{"bet": 100, "bet": "x"}',
    b'{"bet": "\\ud800"}',
    b'{"client_seed": "\\u0000"}',
    b'{"client_seed": "\\ud800"}',
    b'{"username": "\\udfff\\ud800abc", "password": "\\ud800\\ud800\\ud800\\ud800\\ud800x"}',
    b'{"cards": ["\\ud800S"]}',
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 3000 + b"1" + b"}" * 3000,
    b'{"rules": {"seats": ' + b"9" * 4400 + b"}}",
    b'{"stake": ' + b"1" * 4400 + b"}",
    '{"username": "\U0001f0a1", "password": "🂡🂡🂡🂡🂡🂡🂡🂡🂡🂡"}'.encode(),
]

WEIRD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    2**63,
    -(2**63) - 1,
    10**50,
    "",
    "x" * 5000,
    "100",
    [],
    {},
    [None],
    {"a": []},
    "\u0000",
    "🂡",
    [["AS"]],
]

FIELDS = {
    "/api/v1/auth/register": ("username", "password"),
    "/api/v1/auth/token": ("username", "password"),
    "/api/v1/me/topup": ("currency",),
    "/api/v1/fairness/rotate": ("client_seed",),
    "/api/v1/casino-war/rounds": ("bet", "tie_bet", "table"),
    "/api/v1/casino-war/rounds/1/decision": ("choice",),
    "/api/v1/sota/games": ("stake", "rules", "preset"),
    "/api/v1/sota/games/2/moves": ("cards",),
}


def check(response: Any, url: str, body: Any) -> None:
    assert response.status_code < 500, (url, body)
    if response.status_code >= 400 and url.startswith("/api/"):
        error = response.get_json()["error"]
        assert error["code"] and error["message"], (url, body)


def books_balance(app: Flask) -> None:
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        report = ledger.check(session)
        session.close()
    assert report.ok, report.problems


@pytest.fixture
def setup(app: Flask, client: FlaskClient, auth: dict[str, str]) -> dict[str, str]:
    """Bob has an open Casino War tie (round 1) and a Prisoners of War game (round 2)."""
    plant_server_seed(app, "bob", {0: True})
    tie = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=auth).get_json()
    assert tie["id"] == 1 and tie["status"] == "awaiting_decision"
    game = client.post(
        "/api/v1/sota/games", json={"stake": 1, "rules": {"prisoners_of_war": True}}, headers=auth
    ).get_json()
    assert game["id"] == 2
    return auth


def test_raw_malformed_bodies_never_give_a_500(
    app: Flask, client: FlaskClient, setup: dict[str, str]
) -> None:
    before = client.get("/api/v1/me", headers=setup).get_json()["balances"]
    for url, body, content_type in itertools.product(
        FIELDS, RAW_BODIES, ("application/json", "text/plain", "application/x-www-form-urlencoded")
    ):
        response = client.post(url, data=body, headers=setup, content_type=content_type)
        check(response, url, body)
    assert client.get("/api/v1/me", headers=setup).get_json()["balances"] == before
    books_balance(app)


def test_every_field_with_every_weird_value_never_gives_a_500(
    app: Flask, client: FlaskClient, setup: dict[str, str]
) -> None:
    before = client.get("/api/v1/me", headers=setup).get_json()["balances"]
    for url, fields in FIELDS.items():
        for field, value in itertools.product(fields, WEIRD_VALUES):
            body = {field: value}
            response = client.post(
                url, data=json.dumps(body), headers=setup, content_type="application/json"
            )
            check(response, url, body)
            for other in fields:
                body[other] = value
            check(client.post(url, json=body, headers=setup), url, body)
    after = client.get("/api/v1/me", headers=setup).get_json()["balances"]
    assert after == before
    books_balance(app)


def test_weird_headers_never_give_a_500(client: FlaskClient, setup: dict[str, str]) -> None:
    for key in ("", " ", "x" * 1000, "a\u00ffb", "ok-key"):
        headers = {**setup, "Idempotency-Key": key.encode().decode("latin-1")}
        check(client.post("/api/v1/casino-war/rounds", json={"bet": 1.5}, headers=headers), "", key)
    for auth in ("Bearer " + "x" * 5000, "Bearer \u00ff", "Bearer  ", "bearer a b c"):
        response = client.get(
            "/api/v1/me", headers={"Authorization": auth.encode().decode("latin-1")}
        )
        assert response.status_code == 401


def test_page_forms_with_weird_values_never_give_a_500(app: Flask, client: FlaskClient) -> None:
    register_page(client, "alice")
    plant_server_seed(app, "alice", {0: True})
    token = csrf_token(client)
    forms = {
        "/casino-war/rounds": ("bet", "tie_bet", "idempotency_key"),
        "/casino-war/rounds/1/decision": ("choice", "idempotency_key"),
        "/sota/games": (
            "again",
            "stake",
            "preset",
            "seats",
            "rule_seats",
            "rule_war_down",
            "rule_lead",
            "rule_max_tricks",
            "rule_deck",
        ),
        "/sota/games/1/moves": ("up", "down"),
        "/fairness/rotate": ("client_seed",),
        "/lobby/topup": ("currency",),
        "/auth/login": ("username", "password", "next"),
        "/auth/register": ("username", "password", "confirm"),
        "/auth/password": ("old", "new", "confirm"),
    }
    # "²" and "٣" are digits to str.isdigit, and int() takes only the second.
    values = [
        *("", "-1", "1.5", "1e3", "9" * 40, "x" * 3000, "\u0000", "🂡", "custom", "0", "by_rank"),
        *("²", "٣"),
    ]
    fresh = itertools.count()
    for url, fields in forms.items():
        for field, value in itertools.product(fields, values):
            data = {"csrf_token": token, "stake": "1", "bet": "1", field: value}
            response = client.post(url, data=data)
            assert response.status_code < 500, (url, field, value)
            if response.status_code == 303 and "/auth/login" in response.location:
                register_page(client, f"user{next(fresh)}")
                token = csrf_token(client)
