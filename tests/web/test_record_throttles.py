"""Actions that write records kept for good (a seed rotation, a key registration) are limited
per account and hour, counted in the database so every worker shares the count: a script
cannot grow the audit log and the tables without end, and a player never meets the limit."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask import Flask
from flask.testing import FlaskClient
from operator_support import add_user
from operator_support import audit_size
from operator_support import bearer
from operator_support import client_as
from operator_support import db
from sqlalchemy import func
from sqlalchemy import select
from web_support import post_form

from sota_casino import config
from sota_casino.core import fairness
from sota_casino.models import PlayerKey
from sota_casino.models import SeedPair
from sota_casino.web.openapi import openapi_document

ROTATE = "/api/v1/fairness/rotate"
KEYS = "/api/v1/me/keys"


def rotate(client: FlaskClient, headers: dict[str, str]) -> Any:
    return client.post(ROTATE, json={}, headers=headers)


def register_new_key(client: FlaskClient, headers: dict[str, str]) -> Any:
    key_hex = fairness.public_key_hex(Ed25519PrivateKey.generate())
    return client.post(KEYS, json={"public_key_hex": key_hex}, headers=headers)


def rows(app: Flask, model: type[SeedPair] | type[PlayerKey]) -> int:
    session = db(app)
    try:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)
    finally:
        session.close()


def backdate_rotations(app: Flask, by: timedelta) -> None:
    with db(app) as session, session.begin():
        for pair in session.scalars(select(SeedPair).where(SeedPair.revealed_at.is_not(None))):
            assert pair.revealed_at is not None
            pair.revealed_at -= by


def assert_held_off(answer: Any, what: str) -> None:
    """A 429 ``rate_limited`` saying ``what`` and the minutes to wait, with its
    ``Retry-After`` within the hour."""
    assert answer.status_code == 429, answer.get_json()
    error = answer.get_json()["error"]
    assert error["code"] == "rate_limited"
    assert error["message"].startswith(f"too many {what} in the last hour; try again in ")
    assert 1 <= int(answer.headers["Retry-After"]) <= 3600


def test_the_limits_a_player_never_meets_are_the_defaults() -> None:
    settings = config.defaults()
    assert (settings["ROTATIONS_PER_HOUR"], settings["KEY_REGISTRATIONS_PER_HOUR"]) == (30, 10)


def test_rotations_past_the_hourly_limit_are_refused_and_change_nothing(app: Flask) -> None:
    add_user(app, "alice")
    add_user(app, "bob")
    client, alice = app.test_client(), bearer(app, "alice")
    for _ in range(30):
        assert rotate(client, alice).status_code == 200
    shown = client.get("/api/v1/fairness/seed-pair", headers=alice).get_json()
    entries, pairs = audit_size(app), rows(app, SeedPair)

    assert_held_off(rotate(client, alice), "seed rotations")
    assert client.get("/api/v1/fairness/seed-pair", headers=alice).get_json() == shown
    assert (audit_size(app), rows(app, SeedPair)) == (entries, pairs)
    # Another player is not held back.
    assert rotate(client, bearer(app, "bob")).status_code == 200


def test_key_registrations_past_the_hourly_limit_are_refused_and_change_nothing(
    app: Flask,
) -> None:
    add_user(app, "alice")
    client, alice = app.test_client(), bearer(app, "alice")
    for _ in range(10):
        assert register_new_key(client, alice).status_code == 201
    shown = client.get(KEYS, headers=alice).get_json()
    entries, keys = audit_size(app), rows(app, PlayerKey)

    assert_held_off(register_new_key(client, alice), "key registrations")
    assert client.get(KEYS, headers=alice).get_json() == shown
    assert (audit_size(app), rows(app, PlayerKey)) == (entries, keys)
    # The key in use sent again writes nothing, so it is answered as ever.
    current = shown["keys"][-1]["public_key_hex"]
    again = client.post(KEYS, json={"public_key_hex": current}, headers=alice)
    assert again.status_code == 201 and again.get_json() == shown


def test_the_limits_hold_across_two_workers_on_one_database(make_app: Any) -> None:
    first = make_app(ROTATIONS_PER_HOUR=2, KEY_REGISTRATIONS_PER_HOUR=2)
    second = make_app(ROTATIONS_PER_HOUR=2, KEY_REGISTRATIONS_PER_HOUR=2)
    add_user(first, "alice")
    alice = bearer(first, "alice")
    for worker in (first, second):
        assert rotate(worker.test_client(), alice).status_code == 200
        assert register_new_key(worker.test_client(), alice).status_code == 201
    assert_held_off(rotate(first.test_client(), alice), "seed rotations")
    assert_held_off(register_new_key(second.test_client(), alice), "key registrations")


def test_the_wait_is_until_the_oldest_counted_rotation_leaves_the_hour(make_app: Any) -> None:
    app = make_app(ROTATIONS_PER_HOUR=1)
    add_user(app, "alice")
    client, alice = app.test_client(), bearer(app, "alice")
    assert rotate(client, alice).status_code == 200
    backdate_rotations(app, timedelta(minutes=45))
    refused = rotate(client, alice)
    assert_held_off(refused, "seed rotations")
    assert 890 <= int(refused.headers["Retry-After"]) <= 900
    assert refused.get_json()["error"]["message"].endswith("15\u00a0minutes")
    backdate_rotations(app, timedelta(minutes=15))
    assert rotate(client, alice).status_code == 200


def test_the_fairness_pages_rotation_past_the_limit_says_so_in_the_players_language(
    make_app: Any,
) -> None:
    app = make_app(ROTATIONS_PER_HOUR=1)
    browser = client_as(app, add_user(app, "alice"))
    finnish = {"Accept-Language": "fi"}
    assert post_form(browser, "/fairness/rotate", {"client_seed": "lucky"}).status_code == 303
    browser.get("/fairness")  # shows the rotation's own message
    entries = audit_size(app)
    refused = post_form(browser, "/fairness/rotate", {"client_seed": "again"}, headers=finnish)
    assert refused.status_code == 303
    page = browser.get("/fairness", headers=finnish).get_data(as_text=True)
    assert (
        "liian monta siemenparin vaihtoa viimeisen tunnin aikana; yritä uudelleen "
        "60\u00a0minuutin kuluttua"
    ) in page
    assert audit_size(app) == entries


def test_the_document_declares_the_429_and_its_wait_on_both_operations(app: Flask) -> None:
    document = openapi_document(app)
    paths, responses = document["paths"], document["components"]["responses"]
    for operation in (paths["/fairness/rotate"]["post"], paths["/me/keys"]["post"]):
        refused = operation["responses"]["429"]
        assert refused == {"$ref": "#/components/responses/E429"}, operation["operationId"]
        assert "Retry-After" in responses["E429"]["headers"]
        assert "per account within the last hour" in operation["description"]


def test_a_limit_of_zero_is_no_limit(make_app: Any) -> None:
    app = make_app(ROTATIONS_PER_HOUR=0, KEY_REGISTRATIONS_PER_HOUR=0)
    add_user(app, "alice")
    client, alice = app.test_client(), bearer(app, "alice")
    for _ in range(3):
        assert rotate(client, alice).status_code == 200
        assert register_new_key(client, alice).status_code == 201
