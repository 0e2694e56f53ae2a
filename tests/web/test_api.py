"""The JSON API through the test client: every endpoint, its answers and its refusals."""

from __future__ import annotations

import gzip
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from move_support import PRISONERS
from name_support import name_check_missed_once
from operator_support import add_user
from operator_support import audit_size
from operator_support import bearer as staff_bearer
from operator_support import last_entry
from sqlalchemy import select
from web_support import PASSWORD
from web_support import api_register
from web_support import bearer
from web_support import plant_seed_repeating_a_move
from web_support import plant_server_seed
from web_support import register_page

from sota_casino.core import sota
from sota_casino.core.cards import canonical_deck
from sota_casino.core.fairness import signature_checker
from sota_casino.models import User
from sota_casino.services import accounts
from sota_casino.services import rounds
from sota_casino.services import settings
from sota_casino.services import tx


def error_code(response: Any) -> str:
    body = response.get_json()
    assert set(body) == {"error"} and set(body["error"]) - {"field"} == {"code", "message"}, body
    assert body["error"]["message"] and body["error"].get("field", "x")
    return str(body["error"]["code"])


def balances(client: FlaskClient, auth: dict[str, str]) -> dict[str, int]:
    return client.get("/api/v1/me", headers=auth).get_json()["balances"]  # type: ignore[no-any-return]


@pytest.fixture
def operator(app: Flask, auth: dict[str, str]) -> dict[str, str]:
    """The Authorization header of the operator ``olga`` (the player ``bob`` exists too)."""
    add_user(app, "olga", "operator")
    return staff_bearer(app, "olga")


def raise_table_limit(app: Flask, max_bet: int) -> None:
    operator = add_user(app, "table-boss", "operator")
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        settings.update_table(session, operator, "casino_war", {"max_bet": max_bet})
        session.close()


# --- accounts -------------------------------------------------------------------------------------


def test_register_creates_a_player_with_the_grant(client: FlaskClient) -> None:
    response = client.post("/api/v1/auth/register", json={"username": "zoe", "password": PASSWORD})
    assert response.status_code == 201
    user = response.get_json()["user"]
    assert user["username"] == "zoe" and user["role"] == "player" and user["id"] >= 1
    token = client.post("/api/v1/auth/token", json={"username": "zoe", "password": PASSWORD})
    me = client.get("/api/v1/me", headers={"Authorization": f"Bearer {token.get_json()['token']}"})
    assert me.get_json() == {"user": user, "balances": {"chips": 100_000, "sweets": 100}}


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"username": "zo", "password": PASSWORD}, 422, "invalid_input"),
        ({"username": "zoe zoe", "password": PASSWORD}, 422, "invalid_input"),
        ({"username": "zoe", "password": "short"}, 422, "invalid_input"),
        ({"username": "zoe"}, 422, "invalid_input"),
        ({"username": 7, "password": PASSWORD}, 422, "invalid_input"),
        ({"username": "zoe", "password": PASSWORD, "admin": True}, 422, "invalid_input"),
        (["zoe", PASSWORD], 422, "invalid_input"),
    ],
)
def test_register_refuses_bad_input(client: FlaskClient, body: Any, status: int, code: str) -> None:
    response = client.post("/api/v1/auth/register", json=body)
    assert response.status_code == status
    assert error_code(response) == code


def test_register_refuses_a_taken_name_naming_its_field(client: FlaskClient) -> None:
    api_register(client, "zoe")
    response = client.post("/api/v1/auth/register", json={"username": "zoe", "password": PASSWORD})
    assert response.status_code == 409 and error_code(response) == "username_taken"
    assert response.get_json()["error"]["field"] == "username"


def test_register_refuses_a_name_taken_in_another_case_even_past_the_name_check(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    api_register(client, "zoe")
    response = client.post("/api/v1/auth/register", json={"username": "ZOE", "password": PASSWORD})
    assert response.status_code == 409 and error_code(response) == "username_taken"
    checks = name_check_missed_once(monkeypatch)
    response = client.post("/api/v1/auth/register", json={"username": "Zoe", "password": PASSWORD})
    assert checks == ["missed", "checked"]  # the database refused the name, not the check
    assert response.status_code == 409 and error_code(response) == "username_taken"
    assert "'Zoe' is taken" in response.get_json()["error"]["message"]


def test_a_write_that_loses_a_race_no_service_foresaw_is_a_409_not_a_500(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A unique key taken by a concurrent write, with no check of the service turning it into
    a refusal of its own, is the API's conflict; the log names the key, not the player's name."""
    api_register(client, "zoe")
    name_check_missed_once(monkeypatch)
    monkeypatch.setattr(tx, "RETRYABLE_CONSTRAINTS", ())  # no retry to find it taken
    response = client.post("/api/v1/auth/register", json={"username": "Zoe", "password": PASSWORD})
    assert response.status_code == 409 and error_code(response) == "conflict"
    assert "try again" in response.get_json()["error"]["message"]
    lost = [r.getMessage() for r in caplog.records if "lost a race" in r.getMessage()]
    assert len(lost) == 1 and "uq_users_username_lower" in lost[0]
    assert "Zoe" not in caplog.text and "zoe" not in lost[0].lower().replace("username", "")
    with client.application.extensions["sota_casino.sessionmaker"]() as session:
        names = session.scalars(select(User.username)).all()
    assert names == ["zoe"]  # nothing of the refused sign-up was kept


def test_a_token_needs_the_right_password_and_guessing_is_throttled(client: FlaskClient) -> None:
    api_register(client, "zoe")
    wrong = client.post("/api/v1/auth/token", json={"username": "zoe", "password": "x" * 12})
    assert wrong.status_code == 401 and error_code(wrong) == "unauthorized"
    statuses = [
        client.post(
            "/api/v1/auth/token", json={"username": "zoe", "password": "y" * 12}
        ).status_code
        for _ in range(6)
    ]
    assert statuses[-1] == 429
    throttled = client.post("/api/v1/auth/token", json={"username": "zoe", "password": PASSWORD})
    assert throttled.status_code == 429 and error_code(throttled) == "rate_limited"


def test_me_needs_credentials(client: FlaskClient) -> None:
    response = client.get("/api/v1/me")
    assert response.status_code == 401 and error_code(response) == "unauthorized"


def test_topup_only_when_low_and_once_a_day(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    refused = client.post("/api/v1/me/topup", json={"currency": "sweets"}, headers=auth)
    assert refused.status_code == 409 and error_code(refused) == "topup_not_allowed"
    app.config["LOW_BALANCE_SWEETS"] = 1000
    response = client.post("/api/v1/me/topup", json={"currency": "sweets"}, headers=auth)
    assert response.status_code == 201
    assert response.get_json()["balances"] == {"chips": 100_000, "sweets": 200}
    again = client.post("/api/v1/me/topup", json={"currency": "sweets"}, headers=auth)
    assert again.status_code == 409
    for body in ({"currency": "gold"}, {}, {"currency": 1}, {"currency": "chips", "x": 1}):
        bad = client.post("/api/v1/me/topup", json=body, headers=auth)
        assert bad.status_code == 422, body


# --- fairness -------------------------------------------------------------------------------------


def test_the_public_key_needs_no_login(client: FlaskClient) -> None:
    key = client.get("/api/v1/fairness/public-key").get_json()
    assert key["algorithm"] == "Ed25519" and len(key["public_key_hex"]) == 64
    assert "BEGIN PUBLIC KEY" in key["public_key_pem"] and key["retired"] == []


def test_a_process_not_restarted_after_keys_rotate_answers_its_key_in_use_and_retired(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    """docs/fairness.md, "Canonical JSON and signatures": until the restart, the key the
    process still signs with is `public_key_hex` and listed in `retired`, beside the change."""
    old = client.get("/api/v1/fairness/public-key").get_json()["public_key_hex"]
    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    key = client.get("/api/v1/fairness/public-key").get_json()
    assert key["public_key_hex"] == old
    assert [retired["public_key_hex"] for retired in key["retired"]] == [old]
    (change,) = key["key_changes"]
    assert change["document"]["old_public_key_hex"] == old
    assert change["document"]["new_public_key_hex"] != old


def test_rotation_reveals_the_committed_seed_and_activates_the_next(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    before = client.get("/api/v1/fairness/seed-pair", headers=auth).get_json()
    response = client.post("/api/v1/fairness/rotate", json={"client_seed": "mine"}, headers=auth)
    assert response.status_code == 200
    rotated = response.get_json()
    assert rotated["revealed"]["document"]["commitment"] == before["commitment"]
    assert rotated["active"]["commitment"] == before["next_commitment"]
    assert rotated["active"]["client_seed"] == "mine"
    bundle = client.get(
        f"/api/v1/fairness/seed-pairs/{before['seed_pair_id']}/bundle", headers=auth
    ).get_json()
    assert bundle["reveal"] == rotated["revealed"]
    assert client.post("/api/v1/fairness/rotate", json={}, headers=auth).status_code == 200


def test_the_next_pairs_signed_commitment_is_shown_before_the_seed_and_is_the_pair_started(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    """A player keeps the next pair's signed commitment before choosing the client seed that
    starts it: what rotation activates must be that very document."""
    key = client.get("/api/v1/fairness/public-key").get_json()["public_key_hex"]
    before = client.get("/api/v1/fairness/seed-pair", headers=auth).get_json()
    upcoming = before["next_commitment_document"]
    assert signature_checker(key)(upcoming, before["next_signature"])
    assert (
        upcoming["type"] == "commitment" and upcoming["seed_pair_id"] == before["next_seed_pair_id"]
    )
    assert upcoming["commitment"] == before["next_commitment"]
    rotated = client.post("/api/v1/fairness/rotate", json={"client_seed": "mine"}, headers=auth)
    active = rotated.get_json()["active"]
    assert active["seed_pair_id"] == before["next_seed_pair_id"]
    assert (active["commitment_document"], active["signature"]) == (
        upcoming,
        before["next_signature"],
    )
    # The rotation's answer shows the pair after that one, signed, before its seed is chosen.
    following = active["next_commitment_document"]
    assert signature_checker(key)(following, active["next_signature"])
    assert following["seed_pair_id"] == active["next_seed_pair_id"] > active["seed_pair_id"]


@pytest.mark.parametrize("seed", ["", "x" * 65, 5, True, ["a"]])
def test_rotation_refuses_a_bad_client_seed(
    client: FlaskClient, auth: dict[str, str], seed: Any
) -> None:
    response = client.post("/api/v1/fairness/rotate", json={"client_seed": seed}, headers=auth)
    assert response.status_code == 422 and error_code(response) == "invalid_input"


def test_rotation_is_refused_while_a_round_is_open(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    plant_server_seed(app, "bob", {0: True})
    client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=auth)
    response = client.post("/api/v1/fairness/rotate", json={}, headers=auth)
    assert response.status_code == 409 and error_code(response) == "round_open"


def test_the_bundle_holds_the_server_seed_only_after_the_reveal(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    planted = plant_server_seed(app, "bob", {0: False})
    client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=auth)
    url = f"/api/v1/fairness/seed-pairs/{planted.seed_pair_id}/bundle"
    before = client.get(url, headers=auth)
    assert before.get_json()["reveal"] is None and len(before.get_json()["rounds"]) == 1
    assert planted.server_seed.hex() not in before.get_data(as_text=True)
    client.post("/api/v1/fairness/rotate", json={}, headers=auth)
    after = client.get(url, headers=auth).get_json()
    assert after["reveal"]["document"]["server_seed"] == planted.server_seed.hex()


def test_another_players_bundle_or_the_unshown_next_pair_is_not_found(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    mine = client.get("/api/v1/fairness/seed-pair", headers=auth).get_json()
    other = bearer(client, "eve")
    stolen = client.get(f"/api/v1/fairness/seed-pairs/{mine['seed_pair_id']}/bundle", headers=other)
    assert stolen.status_code == 404
    upcoming = client.get(
        f"/api/v1/fairness/seed-pairs/{mine['next_seed_pair_id']}/bundle", headers=auth
    )
    assert upcoming.status_code == 404


# --- Casino War -----------------------------------------------------------------------------------


def test_a_bet_returns_the_round_with_the_new_balance(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    plant_server_seed(app, "bob", {0: False})
    response = client.post(
        "/api/v1/casino-war/rounds", json={"bet": 500, "tie_bet": 100}, headers=auth
    )
    assert response.status_code == 201
    round_ = response.get_json()
    assert round_["status"] == "settled" and round_["outcome"] in ("win", "lose")
    assert round_["war"] is None and round_["raise"] == 0 and round_["nonce"] == 0
    assert round_["net"] == (400 if round_["outcome"] == "win" else -600)
    assert round_["balances"]["chips"] == 100_000 + round_["net"]
    fetched = client.get(f"/api/v1/casino-war/rounds/{round_['id']}", headers=auth).get_json()
    assert fetched == round_


AMOUNT_CASES = [
    ({"bet": "500"}, "bet must be an integer"),
    ({"bet": 500.0}, "not a number with a fraction"),
    ({"bet": 5e2}, "not a number with a fraction"),
    ({"bet": True}, "not a boolean"),
    ({"bet": None}, "bet must be an integer, not null"),
    ({}, "bet is required"),
    ({"bet": [500]}, "not a list"),
    ({"bet": {"chips": 5}}, "not an object"),
    ({"bet": -500}, "bet must be greater than or equal to 100"),
    ({"bet": 0}, "bet must be greater than or equal to 100"),
    ({"bet": 150}, "bet must be a multiple of 100"),
    ({"bet": 10**30}, "bet must be less than or equal to"),
    ({"bet": 60_000}, "bet must be from"),
    ({"bet": 500, "tie_bet": -100}, "tie_bet must be greater than or equal to 0"),
    ({"bet": 500, "tie_bet": 1.5}, "tie_bet must be an integer"),
    ({"bet": 500, "tie_bet": "100"}, "tie_bet must be an integer"),
    ({"bet": 500, "stake": 5}, "unknown field 'stake'"),
    ({"bet": 500, "table": "blackjack"}, "table must be"),
    ({"bet": 500, "table": 3}, "table must be 'casino_war'"),
]


@pytest.mark.parametrize(("body", "message"), AMOUNT_CASES)
def test_bad_amounts_are_422_and_move_nothing(
    client: FlaskClient, auth: dict[str, str], body: dict[str, Any], message: str
) -> None:
    response = client.post("/api/v1/casino-war/rounds", json=body, headers=auth)
    assert response.status_code == 422
    assert message in response.get_json()["error"]["message"]
    assert balances(client, auth)["chips"] == 100_000
    assert client.get("/api/v1/rounds", headers=auth).get_json()["rounds"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"bet": 60_000}, "bet"),  # over the table's limit: the service's refusal
        ({"bet": 500, "tie_bet": 1.5}, "tie_bet"),  # no integer: the schema's
        ({"bet": 500, "stake": 5}, "stake"),  # unknown
        ({"bet": 500, "rules": {"decks": "six"}}, "rules.decks"),  # an option of the rules
    ],
)
def test_a_refusal_names_the_field_it_is_about(
    client: FlaskClient, auth: dict[str, str], body: dict[str, Any], field: str | None
) -> None:
    """A script (and the table's page, which marks the field in error) reads which field a
    refusal is about from the answer, not from the words of its message."""
    response = client.post("/api/v1/casino-war/rounds", json=body, headers=auth)
    assert response.status_code in (409, 422)
    assert response.get_json()["error"].get("field") == field
    shown = client.get("/api/v1/tables/casino_war").get_json()["settings"]
    other = {"bet": 500, "rules": {**shown, "tie_payout": shown["tie_payout"] - 1}}
    changed = client.post("/api/v1/casino-war/rounds", json=other, headers=auth)
    # The table's rules changed since shown: about no field the player typed.
    assert error_code(changed) == "rules_changed" and "field" not in changed.get_json()["error"]


def test_a_number_with_hundreds_of_digits_is_a_clear_422(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    body = '{"bet": ' + "9" * 5000 + "}"
    response = client.post(
        "/api/v1/casino-war/rounds", data=body, headers=auth, content_type="application/json"
    )
    assert (
        response.status_code == 422 and "far too large" in response.get_json()["error"]["message"]
    )


def test_a_bet_beyond_the_balance_is_409_and_moves_nothing(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    raise_table_limit(app, 500_000)
    response = client.post("/api/v1/casino-war/rounds", json={"bet": 200_000}, headers=auth)
    assert response.status_code == 409 and error_code(response) == "insufficient_funds"
    assert balances(client, auth)["chips"] == 100_000


def test_a_tie_waits_for_war_or_surrender(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    plant_server_seed(app, "bob", {0: True, 1: True})
    tied = client.post("/api/v1/casino-war/rounds", json={"bet": 1000}, headers=auth).get_json()
    assert tied["status"] == "awaiting_decision" and tied["outcome"] is None
    assert tied["player_card"][0] == tied["dealer_card"][0]
    url = f"/api/v1/casino-war/rounds/{tied['id']}/decision"
    bad = client.post(url, json={"choice": "fold"}, headers=auth)
    assert bad.status_code == 422 and error_code(bad) == "invalid_input"
    war = client.post(url, json={"choice": "war"}, headers=auth)
    assert war.status_code == 200
    settled = war.get_json()
    assert settled["raise"] == 1000 and len(settled["war"]["burned"]) == 3
    assert settled["outcome"] in ("war_win", "war_tie", "war_lose")
    again = client.post(url, json={"choice": "surrender"}, headers=auth)
    assert again.status_code == 409 and error_code(again) == "round_settled"
    second = client.post("/api/v1/casino-war/rounds", json={"bet": 1000}, headers=auth).get_json()
    surrender = client.post(
        f"/api/v1/casino-war/rounds/{second['id']}/decision",
        json={"choice": "surrender"},
        headers=auth,
    ).get_json()
    assert surrender["outcome"] == "surrender" and surrender["net"] == -500


def test_another_players_round_is_404_everywhere(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    plant_server_seed(app, "bob", {0: True})
    mine = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=auth).get_json()
    other = bearer(client, "eve")
    rid = mine["id"]
    for method, url, body in (
        ("get", f"/api/v1/casino-war/rounds/{rid}", None),
        ("post", f"/api/v1/casino-war/rounds/{rid}/decision", {"choice": "war"}),
        ("get", f"/api/v1/rounds/{rid}/receipt", None),
        ("get", f"/api/v1/sota/games/{rid}", None),
    ):
        response = getattr(client, method)(url, json=body, headers=other)
        assert response.status_code == 404, url
        assert error_code(response) == "not_found"
    assert balances(client, other)["chips"] == 100_000


def test_the_odds_are_exact_and_their_settings_checked(client: FlaskClient) -> None:
    odds = client.get("/api/v1/casino-war/odds").get_json()
    assert odds["decks"] == 6 and odds["house_edge_surrender"]["exact"] == "23/622"
    assert odds["house_edge_tie_bet"]["exact"] == "58/311"
    one_deck = client.get("/api/v1/casino-war/odds?decks=1&tie_payout=0&bonus=ante").get_json()
    assert one_deck["p_tie"]["exact"] == "1/17" and one_deck["house_edge_tie_bet"] is None
    for query in ("decks=9", "decks=abc", "tie_payout=-1", "bonus=big", "decks=1.5", "x=1"):
        response = client.get(f"/api/v1/casino-war/odds?{query}")
        assert response.status_code == 422, query


# --- Sota -----------------------------------------------------------------------------------------


def test_a_sota_game_is_played_whole(client: FlaskClient, auth: dict[str, str]) -> None:
    response = client.post(
        "/api/v1/sota/games", json={"stake": 10, "preset": "english"}, headers=auth
    )
    assert response.status_code == 201
    game = response.get_json()
    assert game["status"] == "settled" and game["rules"]["war_down"] == 1
    assert game["net"] in (10, -10, 0) and game["balances"]["sweets"] == 100 + game["net"]
    assert client.get(f"/api/v1/sota/games/{game['id']}", headers=auth).get_json() == game
    custom = client.post(
        "/api/v1/sota/games",
        json={"stake": 1, "rules": {"seats": 3, "deck": "piquet32", "gather": "shuffled"}},
        headers=auth,
    ).get_json()
    assert custom["seats"] == 3 and all(len(t["counts"]) == 3 for t in custom["tricks"])


def test_a_game_with_neither_rules_nor_preset_plays_what_the_document_says(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    """Neither plays the table's first preset, which the operator may have moved from nordic."""
    operator = add_user(app, "table-boss", "operator")
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        settings.update_table(session, operator, "sota", {"presets": ["rauha", "nordic"]})
        session.close()
    game = client.post("/api/v1/sota/games", json={"stake": 1}, headers=auth).get_json()
    assert game["rules"]["peace"] is True  # rauha, not the defaults (nordic)
    document = client.get("/api/v1/openapi.json").get_json()
    described = document["components"]["schemas"]["GameRequest"]["description"]
    assert "neither: the table's first preset" in described


SOTA_CASES = [
    ({"stake": 1.0, "preset": "nordic"}, "invalid_input"),
    ({"stake": "1", "preset": "nordic"}, "invalid_input"),
    ({"stake": -1, "preset": "nordic"}, "invalid_input"),
    ({"stake": 0, "preset": "nordic"}, "invalid_input"),
    ({"stake": 10**20, "preset": "nordic"}, "invalid_input"),
    ({"preset": "nordic"}, "invalid_input"),
    ({"stake": 1000, "preset": "nordic"}, "invalid_bet"),
    ({"stake": 1, "preset": "klondike"}, "invalid_rules"),
    ({"stake": 1, "rules": {"jokers": True}}, "invalid_rules"),
    ({"stake": 1, "rules": {"seats": 5}}, "invalid_rules"),
    ({"stake": 1, "rules": {"max_tricks": 2.5}}, "invalid_rules"),
    ({"stake": 1, "rules": {"peace": 1}}, "invalid_rules"),
    ({"stake": 1, "rules": {}, "preset": "nordic"}, "invalid_rules"),
    ({"stake": 1, "rules": "nordic"}, "invalid_input"),
    ({"stake": 1, "preset": "nordic", "seats": 3}, "invalid_input"),
]


@pytest.mark.parametrize(("body", "code"), SOTA_CASES)
def test_bad_sota_games_are_422_and_move_nothing(
    client: FlaskClient, auth: dict[str, str], body: dict[str, Any], code: str
) -> None:
    response = client.post("/api/v1/sota/games", json=body, headers=auth)
    assert response.status_code == 422
    assert error_code(response) == code
    assert balances(client, auth)["sweets"] == 100


#: A table that offers two presets and no rules of one's own.
PRESETS_ONLY: dict[str, Any] = {"presets": ["nordic", "rauha"], "custom_rules": False}

#: A refused game, the table's settings it is sent to (None: the defaults), and the field of the
#: body its refusal names: the stake, the preset, the rules as a whole, or one option of them by
#: its path in the body.
REFUSED_GAME_FIELDS = [
    ({"stake": 1000, "preset": "nordic"}, None, "stake"),  # over the table's limit
    ({"stake": 0, "preset": "nordic"}, None, "stake"),  # under any limit: the schema's
    ({"stake": 1, "preset": "klondike"}, None, "preset"),  # no such preset
    ({"stake": 1, "preset": "english"}, PRESETS_ONLY, "preset"),  # not offered here
    ({"stake": 1, "rules": {"peace": True}}, PRESETS_ONLY, "rules"),  # no rules of one's own
    ({"stake": 1, "rules": "nordic"}, None, "rules"),  # not an object: the schema's
    ({"stake": 1, "rules": {"seats": 3, "teams": True}}, None, "rules.teams"),
    ({"stake": 1, "rules": {"max_tricks": 0}}, None, "rules.max_tricks"),
    ({"stake": 1, "rules": {"max_tricks": 2.5}}, None, "rules.max_tricks"),
    ({"stake": 1, "rules": {"lead": 99}}, None, "rules.lead"),
    ({"stake": 1, "rules": {"seats": 5}}, None, "rules.seats"),
    ({"stake": 1, "rules": {"deck": "tarot78"}}, None, "rules.deck"),
    ({"stake": 1, "rules": {"peace": 1}}, None, "rules.peace"),
    ({"stake": 1, "rules": {"jokers": True}}, None, "rules.jokers"),  # no such option
    ({"stake": 1, "rules": {}, "preset": "nordic"}, None, None),  # both: either may go
]


@pytest.mark.parametrize(("body", "table", "field"), REFUSED_GAME_FIELDS)
def test_a_refused_sota_game_names_the_field_it_is_about(
    app: Flask,
    client: FlaskClient,
    auth: dict[str, str],
    body: dict[str, Any],
    table: dict[str, Any] | None,
    field: str | None,
) -> None:
    """A refused rule set named no field, though the service knows which option it is about: a
    script could not tell which to fix. The refusal names it as the body does."""
    if table is not None:
        operator = add_user(app, "table-boss", "operator")
        with app.app_context():
            session = app.extensions["sota_casino.sessionmaker"]()
            settings.update_table(session, operator, "sota", table)
            session.close()
    response = client.post("/api/v1/sota/games", json=body, headers=auth)
    assert response.status_code == 422 and error_code(response).startswith("invalid_")
    assert response.get_json()["error"].get("field") == field
    assert balances(client, auth)["sweets"] == 100


def test_a_rule_set_the_table_does_not_offer_is_a_refusal_the_document_names(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    """A preset the table does not offer now, or rules of one's own where it takes none, is
    valid by the schema (which lists every preset and option) and refused: the operation's 422
    names that rule beyond its schema, as it names the table's stake limits."""
    operator = add_user(app, "table-boss", "operator")
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        settings.update_table(session, operator, "sota", PRESETS_ONLY)
        session.close()
    for body in ({"stake": 1, "preset": "english"}, {"stake": 1, "rules": {"peace": True}}):
        response = client.post("/api/v1/sota/games", json=body, headers=auth)
        assert response.status_code == 422 and error_code(response) == "invalid_rules"
    document = client.get("/api/v1/openapi.json").get_json()
    refused = document["paths"]["/sota/games"]["post"]["responses"]["422"]["x-beyond-schema"]
    assert [rule for rule in refused if "invalid_rules" in rule], refused


@pytest.mark.parametrize(
    ("rule", "sent", "shown"),
    [
        ("seats", None, "null"),
        ("seats", True, "true"),
        ("seats", "3", '"3"'),
        ("max_tricks", False, "false"),
        ("max_tricks", 2.5, "2.5"),
        ("war_down", [1], "[1]"),
    ],
)
def test_a_rule_refused_names_the_value_as_json_writes_it(
    client: FlaskClient, auth: dict[str, str], rule: str, sent: object, shown: str
) -> None:
    """A refused rule's value was shown as Python writes it ("got None", "got True", "got
    '3'"), which a client sending JSON never wrote: it is shown as JSON (null, true, "3")."""
    body = {"stake": 1, "rules": {"seats": 2, rule: sent}}
    response = client.post("/api/v1/sota/games", json=body, headers=auth)
    assert response.status_code == 422 and error_code(response) == "invalid_rules"
    assert response.get_json()["error"]["message"].endswith(f"(got {shown})")


#: Rules under which a game often cycles, a fixed gather order never ending it: it runs to
#: ``max_tricks``, each trick played in the request that deals it.
CYCLING = {"seats": 4, "teams": True, "gather": "table", "war_down": 1}


def test_a_game_longer_than_the_casino_deals_is_refused_and_changes_nothing(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    """The rule book allows up to 100 000 tricks; played out in one request, a game that cycles
    that long took seconds of a worker and its answer ten megabytes. Rules of one's own may ask
    for at most :data:`rounds.MAX_DEALT_TRICKS`, which the form and the document say."""
    most = rounds.MAX_DEALT_TRICKS
    before = balances(client, auth)
    for too_long in (most + 1, 100_000):
        body = {"stake": 1, "rules": CYCLING | {"max_tricks": too_long}}
        response = client.post("/api/v1/sota/games", json=body, headers=auth)
        assert response.status_code == 422 and response.get_json()["error"] == {
            "code": "invalid_rules",
            "message": f"max_tricks must be a whole number from 1 to {most} (got {too_long})",
            "field": "rules.max_tricks",
        }
    assert balances(client, auth) == before
    lengths = []
    for _ in range(6):
        body = {"stake": 1, "rules": CYCLING | {"max_tricks": most}}
        response = client.post("/api/v1/sota/games", json=body, headers=auth)
        assert response.status_code == 201, response.get_json()
        lengths.append(len(response.get_json()["tricks"]))
    assert max(lengths) <= most
    document = client.get("/api/v1/openapi.json").get_json()
    (rules,) = document["components"]["schemas"]["GameRequest"]["properties"]["rules"]["anyOf"][:1]
    assert rules["properties"]["max_tricks"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": most,
        "default": sota.SotaRules().max_tricks,
    }
    player = app.test_client()
    register_page(player, "long-player")
    form = player.get("/sota").get_data(as_text=True)
    assert f'name="rule_max_tricks" type="number" min="1" max="{most}"' in form
    assert "After this many tricks the hand with the most cards wins (1–\u206010,000)." in form


def test_a_refused_move_names_the_field_it_is_about(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    """Cards a move may not lay are about ``cards``; a move number not due, about ``move``
    (also when the game waits for another: a 409, which named no field)."""
    move = plant_seed_repeating_a_move(app, "bob")
    game = client.post(
        "/api/v1/sota/games", json={"stake": 1, "rules": PRISONERS}, headers=auth
    ).get_json()
    pending = game["pending"]
    count, options = pending["count"], pending["options"]
    not_won = next(card for card in canonical_deck("standard52") if card not in options)
    url = f"/api/v1/sota/games/{game['id']}/moves"
    refused = [
        ({"cards": [*options[: count - 1], not_won]}, 422, "cards"),  # not among the won cards
        ({"cards": [options[0]] * (count + 1)}, 422, "cards"),  # not as many as due
        ({"cards": ["ZZ"]}, 422, "cards"),  # no card: the schema's
        ({"cards": move, "move": 1}, 409, "move"),  # not the move due
        ({"cards": move, "move": -1}, 422, "move"),
    ]
    for body, status, field in refused:
        response = client.post(url, json=body, headers=auth)
        assert response.status_code == status, (body, response.get_json())
        assert response.get_json()["error"].get("field") == field, body
    assert client.post(url, json={"cards": move, "move": 0}, headers=auth).status_code == 200


def test_a_refused_decision_names_its_choice(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    plant_server_seed(app, "bob", {0: True})
    tied = client.post("/api/v1/casino-war/rounds", json={"bet": 1000}, headers=auth).get_json()
    decision = f"/api/v1/casino-war/rounds/{tied['id']}/decision"
    for choice in ("fold", None):
        response = client.post(decision, json={"choice": choice}, headers=auth)
        assert response.status_code == 422 and response.get_json()["error"]["field"] == "choice"


def test_prisoners_of_war_moves_until_the_game_ends(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    game = client.post(
        "/api/v1/sota/games",
        json={"stake": 2, "rules": {"prisoners_of_war": True, "max_tricks": 80}},
        headers=auth,
    ).get_json()
    url = f"/api/v1/sota/games/{game['id']}/moves"
    for bad in ({"cards": []}, {"cards": "AS"}, {"cards": [1]}, {"cards": ["ZZ"]}, {}):
        if game["status"] == "awaiting_move":
            response = client.post(url, json=bad, headers=auth)
            assert response.status_code == 422, bad
    moves = 0
    while game["status"] == "awaiting_move":
        pending = game["pending"]
        response = client.post(
            url, json={"cards": pending["options"][: pending["count"]]}, headers=auth
        )
        assert response.status_code == 200
        game = response.get_json()
        moves += 1
        assert moves < 300
    assert game["status"] == "settled" and game["winner"] is not None
    done = client.post(url, json={"cards": ["AS"]}, headers=auth)
    assert done.status_code == 409 and error_code(done) == "round_settled"


def test_a_games_moves_are_anchored_as_decisions_of_their_round_move_entries(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    """docs/fairness.md, "Anchors": the kind `decision` names a Sota move too (no kind `move`)."""
    plant_seed_repeating_a_move(app, "bob")
    game = client.post(
        "/api/v1/sota/games", json={"stake": 1, "rules": PRISONERS}, headers=auth
    ).get_json()
    while game["status"] == "awaiting_move":
        pending = game["pending"]
        cards = pending["options"][: pending["count"]]
        game = client.post(
            f"/api/v1/sota/games/{game['id']}/moves", json={"cards": cards}, headers=auth
        ).get_json()
    actions = client.get(f"/api/v1/rounds/{game['id']}/receipt", headers=auth).get_json()[
        "document"
    ]["actions"]
    proof = client.get(f"/api/v1/rounds/{game['id']}/proof", headers=auth)
    assert proof.status_code == 200, proof.get_json()
    anchors = proof.get_json()["anchors"]
    moves = [anchor for anchor in anchors if anchor["of"]["kind"] == "decision"]
    kinds = {anchor["of"]["kind"] for anchor in anchors}
    assert kinds == {"commitment", "bet", "settlement", "decision"}
    assert [anchor["of"]["index"] for anchor in moves] == list(range(len(actions))) != []
    assert {anchor["entry"]["action"] for anchor in moves} == {"round.move"}
    assert [anchor["entry"]["data"]["cards"] for anchor in moves] == actions


def test_a_move_sent_twice_with_its_number_is_laid_once_and_the_copy_is_a_409(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    """Without an Idempotency-Key, a copy of a move (a retry after a lost answer, a second tab)
    whose cards fit the next choice too was laid again: the move now names its choice."""
    move = plant_seed_repeating_a_move(app, "bob")
    game = client.post(
        "/api/v1/sota/games", json={"stake": 1, "rules": PRISONERS}, headers=auth
    ).get_json()
    assert game["status"] == "awaiting_move" and game["pending"]["move"] == 0
    url = f"/api/v1/sota/games/{game['id']}/moves"
    laid = client.post(url, json={"cards": move, "move": 0}, headers=auth)
    assert laid.status_code == 200, laid.get_json()
    pending = laid.get_json()["pending"]
    assert pending["move"] == 1 and set(move) <= set(pending["options"])  # it fits again
    size = audit_size(app)
    copy = client.post(url, json={"cards": move, "move": 0}, headers=auth)
    assert copy.status_code == 409 and error_code(copy) == "move_not_due"
    assert copy.get_json()["error"]["message"] == (
        f"game {game['id']} waits for move 1, not move 0"
    )
    assert audit_size(app) == size
    assert client.get(f"/api/v1/sota/games/{game['id']}", headers=auth).get_json() == (
        laid.get_json()
    )
    for number in (-1, "1", 1.0, True):
        refused = client.post(url, json={"cards": move, "move": number}, headers=auth)
        assert refused.status_code == 422 and "move" in refused.get_json()["error"]["message"]
    assert client.post(url, json={"cards": move, "move": 1}, headers=auth).status_code == 200


def test_a_move_in_a_game_without_prisoners_is_refused(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    game = client.post(
        "/api/v1/sota/games", json={"stake": 1, "preset": "nordic"}, headers=auth
    ).get_json()
    response = client.post(
        f"/api/v1/sota/games/{game['id']}/moves", json={"cards": ["AS"]}, headers=auth
    )
    assert response.status_code == 409


# --- history --------------------------------------------------------------------------------------


def test_rounds_are_listed_newest_first_with_filters_and_pages(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    for _ in range(3):
        client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=auth)
    client.post("/api/v1/sota/games", json={"stake": 1, "preset": "kids_15_min"}, headers=auth)
    page = client.get("/api/v1/rounds?limit=2", headers=auth).get_json()
    assert [r["id"] for r in page["rounds"]] == [4, 3] and page["next_before"] == 3
    rest = client.get("/api/v1/rounds?limit=2&before=3", headers=auth).get_json()
    assert [r["id"] for r in rest["rounds"]] == [2, 1] and rest["next_before"] is None
    sota = client.get("/api/v1/rounds?game=sota", headers=auth).get_json()
    assert [r["game"] for r in sota["rounds"]] == ["sota"]
    for query in ("limit=0", "limit=101", "limit=x", "before=-3", "game=poker", "page=2"):
        response = client.get(f"/api/v1/rounds?{query}", headers=auth)
        assert response.status_code == 422, query


def test_a_receipt_exists_once_the_round_settles(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    plant_server_seed(app, "bob", {0: True})
    tied = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=auth).get_json()
    assert client.get(f"/api/v1/rounds/{tied['id']}/receipt", headers=auth).status_code == 404
    client.post(
        f"/api/v1/casino-war/rounds/{tied['id']}/decision", json={"choice": "war"}, headers=auth
    )
    receipt = client.get(f"/api/v1/rounds/{tied['id']}/receipt", headers=auth).get_json()
    assert receipt["document"]["actions"] == ["war"] and len(receipt["document"]["cards"]) == 7
    assert len(receipt["signature"]) == 128


# --- idempotency ----------------------------------------------------------------------------------


def test_a_replayed_idempotency_key_returns_the_first_answer_and_moves_nothing(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    headers = {**auth, "Idempotency-Key": "bet-0001"}
    first = client.post("/api/v1/casino-war/rounds", json={"bet": 500}, headers=headers)
    after_first = balances(client, auth)
    second = client.post("/api/v1/casino-war/rounds", json={"bet": 500}, headers=headers)
    assert second.status_code == first.status_code == 201
    assert second.get_json() == first.get_json()
    assert balances(client, auth) == after_first
    assert len(client.get("/api/v1/rounds", headers=auth).get_json()["rounds"]) == 1


def test_the_same_key_with_another_body_is_an_idempotency_mismatch(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    headers = {**auth, "Idempotency-Key": "game-1"}
    client.post("/api/v1/sota/games", json={"stake": 1, "preset": "nordic"}, headers=headers)
    after = balances(client, auth)
    other = client.post(
        "/api/v1/sota/games", json={"stake": 2, "preset": "nordic"}, headers=headers
    )
    assert other.status_code == 422 and error_code(other) == "idempotency_mismatch"
    elsewhere = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=headers)
    assert elsewhere.status_code == 422 and error_code(elsewhere) == "idempotency_mismatch"
    assert balances(client, auth) == after


def test_a_decision_replayed_with_its_key_is_answered_once(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    plant_server_seed(app, "bob", {0: True})
    tied = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=auth).get_json()
    url = f"/api/v1/casino-war/rounds/{tied['id']}/decision"
    headers = {**auth, "Idempotency-Key": "decide-1"}
    first = client.post(url, json={"choice": "war"}, headers=headers)
    second = client.post(url, json={"choice": "war"}, headers=headers)
    assert first.status_code == second.status_code == 200
    assert first.get_json() == second.get_json()


@pytest.mark.parametrize(
    ("url", "body", "other_body", "staff"),
    [
        ("/api/v1/me/topup", {"currency": "sweets"}, {"currency": "chips"}, False),
        ("/api/v1/sota/games", {"stake": 2, "preset": "nordic"}, {"stake": 3}, False),
        (
            "/api/v1/operator/adjustments",
            {"user_id": 1, "currency": "chips", "amount": -300, "reason": "refund"},
            {"user_id": 1, "currency": "chips", "amount": -400, "reason": "refund"},
            True,
        ),
    ],
)
def test_every_money_moving_post_answers_a_retry_with_its_first_answer(
    app: Flask,
    client: FlaskClient,
    auth: dict[str, str],
    operator: dict[str, str],
    url: str,
    body: dict[str, Any],
    other_body: dict[str, Any],
    staff: bool,
) -> None:
    app.config["LOW_BALANCE_SWEETS"] = 1000
    headers = {**(operator if staff else auth), "Idempotency-Key": "retry-me"}
    size = audit_size(app)
    first = client.post(url, json=body, headers=headers)
    assert first.status_code == 201, first.get_json()
    done = (balances(client, auth), audit_size(app))
    assert done[1] > size  # the first call did its work (a Sota game may end level)
    again = client.post(url, json=body, headers=headers)
    assert (again.status_code, again.get_json()) == (201, first.get_json())
    other = client.post(url, json=other_body, headers=headers)
    assert other.status_code == 422 and error_code(other) == "idempotency_mismatch"
    assert (balances(client, auth), audit_size(app)) == done


def test_a_proposal_and_its_approval_retried_with_their_keys_are_done_once(
    app: Flask, client: FlaskClient, auth: dict[str, str], operator: dict[str, str]
) -> None:
    add_user(app, "otto", "operator")
    otto = staff_bearer(app, "otto")
    bob = client.get("/api/v1/me", headers=auth).get_json()["user"]["id"]
    change = {"user_id": bob, "currency": "chips", "amount": 250_000, "reason": "jackpot refund"}
    propose = {**operator, "Idempotency-Key": "propose-1"}
    first = client.post("/api/v1/operator/approvals/adjustments", json=change, headers=propose)
    again = client.post("/api/v1/operator/approvals/adjustments", json=change, headers=propose)
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json()
    pending = client.get("/api/v1/operator/approvals", headers=operator).get_json()["approvals"]
    assert [a["id"] for a in pending] == [first.get_json()["id"]]
    other = client.post(
        "/api/v1/operator/approvals/adjustments", json={**change, "amount": 1}, headers=propose
    )
    assert other.status_code == 422 and error_code(other) == "idempotency_mismatch"

    url = f"/api/v1/operator/approvals/{first.get_json()['id']}/approve"
    approve = {**otto, "Idempotency-Key": "approve-1"}
    approved = client.post(url, json={"note": "seen"}, headers=approve)
    size = audit_size(app)
    retried = client.post(url, json={"note": "seen"}, headers=approve)
    assert approved.status_code == retried.status_code == 200
    assert retried.get_json() == approved.get_json()
    assert balances(client, auth)["chips"] == 350_000  # credited once
    other = client.post(url, json={"note": "seen twice"}, headers=approve)
    assert other.status_code == 422 and error_code(other) == "idempotency_mismatch"
    unkeyed = client.post(url, json={"note": "seen"}, headers=otto)
    assert unkeyed.status_code == 409 and error_code(unkeyed) == "conflict"
    assert (balances(client, auth)["chips"], audit_size(app)) == (350_000, size)


def test_approving_a_proposal_of_one_no_longer_an_operator_is_a_409_and_it_waits(
    app: Flask, client: FlaskClient, auth: dict[str, str], operator: dict[str, str]
) -> None:
    """Olga proposes a credit, then is made an auditor: otto's approval is refused naming her,
    the money stays and the proposal still waits; otto can reject it."""
    otto_id = add_user(app, "otto", "operator")
    otto = staff_bearer(app, "otto")
    bob = client.get("/api/v1/me", headers=auth).get_json()["user"]["id"]
    change = {"user_id": bob, "currency": "chips", "amount": 250_000, "reason": "jackpot refund"}
    proposed = client.post("/api/v1/operator/approvals/adjustments", json=change, headers=operator)
    assert proposed.status_code == 201, proposed.get_json()
    olga = proposed.get_json()["proposed_by"]["id"]
    demoted = client.put(
        f"/api/v1/operator/players/{olga}/role", json={"role": "auditor"}, headers=otto
    )
    assert demoted.status_code == 200, demoted.get_json()
    held, size = balances(client, auth)["chips"], audit_size(app)
    url = f"/api/v1/operator/approvals/{proposed.get_json()['id']}/approve"
    refused = client.post(url, json={"note": "seen"}, headers={**otto, "Idempotency-Key": "a-1"})
    assert refused.status_code == 409 and error_code(refused) == "proposer_not_operator"
    assert refused.get_json()["error"]["message"] == (
        "olga, who proposed this change, is no operator now: it cannot be approved; reject it, "
        "or wait until olga is an operator again"
    )
    assert (balances(client, auth)["chips"], audit_size(app)) == (held, size)
    waiting = client.get("/api/v1/operator/approvals", headers=otto).get_json()["approvals"]
    assert [a["id"] for a in waiting] == [proposed.get_json()["id"]]
    rejected = client.post(url.replace("approve", "reject"), json={}, headers=otto)
    assert rejected.status_code == 200 and rejected.get_json()["status"] == "rejected"
    assert rejected.get_json()["decided_by"]["id"] == otto_id


def test_a_table_proposal_retried_with_its_key_is_made_once(
    app: Flask, client: FlaskClient, operator: dict[str, str]
) -> None:
    url = "/api/v1/operator/approvals/tables/casino_war"
    propose = {**operator, "Idempotency-Key": "table-1"}
    first = client.post(url, json={"decks": 4}, headers=propose)
    size = audit_size(app)
    again = client.post(url, json={"decks": 4}, headers=propose)
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json()
    assert first.get_json()["change"] == {"table": "casino_war", "changes": {"decks": 4}}
    pending = client.get("/api/v1/operator/approvals", headers=operator).get_json()["approvals"]
    assert [a["id"] for a in pending] == [first.get_json()["id"]]
    other = client.post(url, json={"decks": 2}, headers=propose)
    assert other.status_code == 422 and error_code(other) == "idempotency_mismatch"
    elsewhere = client.post(
        "/api/v1/operator/approvals/tables/sota", json={"decks": 4}, headers=propose
    )
    assert elsewhere.status_code == 422 and error_code(elsewhere) == "idempotency_mismatch"
    assert audit_size(app) == size  # neither the retry nor the refusals proposed anything
    # Without its key it is no retry but the same change again, which waits already.
    unkeyed = client.post(url, json={"decks": 4}, headers=operator)
    assert unkeyed.status_code == 409 and error_code(unkeyed) == "proposal_pending"


def _role(client: FlaskClient, headers: dict[str, str]) -> str:
    role: str = client.get("/api/v1/me", headers=headers).get_json()["user"]["role"]
    return role


def test_one_operator_cannot_approve_their_own_change_through_an_account_they_promote(
    app: Flask, client: FlaskClient, auth: dict[str, str], operator: dict[str, str]
) -> None:
    """Olga proposes a large credit and would approve it as bob, a player whose account she
    holds, made an operator: making an operator waits for a second operator too."""
    add_user(app, "otto", "operator")
    otto = staff_bearer(app, "otto")
    bob = client.get("/api/v1/me", headers=auth).get_json()["user"]["id"]
    change = {"user_id": bob, "currency": "chips", "amount": 50_000_000, "reason": "jackpot"}
    credit = client.post("/api/v1/operator/approvals/adjustments", json=change, headers=operator)
    assert credit.status_code == 201, credit.get_json()

    promote = client.put(
        f"/api/v1/operator/players/{bob}/role", json={"role": "operator"}, headers=operator
    )
    assert promote.status_code == 409 and error_code(promote) == "approval_required"
    assert _role(client, auth) == "player"
    approve_credit = f"/api/v1/operator/approvals/{credit.get_json()['id']}/approve"
    assert client.post(approve_credit, json={}, headers=auth).status_code == 403

    proposed = client.post(f"/api/v1/operator/approvals/operators/{bob}", headers=operator)
    assert proposed.status_code == 201, proposed.get_json()
    proposal = proposed.get_json()
    assert (proposal["kind"], proposal["subject"], proposal["status"]) == (
        "role",
        f"user:{bob}",
        "pending",
    )
    assert proposal["change"] == {"user_id": bob, "role": "operator"}
    url = f"/api/v1/operator/approvals/{proposal['id']}/approve"
    own = client.post(url, json={}, headers=operator)
    assert own.status_code == 403 and error_code(own) == "own_approval"
    assert _role(client, auth) == "player"

    approved = client.post(url, json={"note": "new shift lead"}, headers=otto)
    assert approved.status_code == 200 and approved.get_json()["status"] == "approved"
    assert _role(client, auth) == "operator"
    entry = last_entry(app)
    assert (entry["action"], entry["actor"], entry["subject"]) == (
        "user.role_changed",
        f"user:{approved.get_json()['proposed_by']['id']}",
        f"user:{bob}",
    )
    otto_id = approved.get_json()["decided_by"]["id"]
    assert entry["data"] == {
        "from": "player",
        "to": "operator",
        "approval": {"id": proposal["id"], "approved_by": f"user:{otto_id}"},
    }
    again = client.post(f"/api/v1/operator/approvals/operators/{bob}", headers=otto)
    assert again.status_code == 409 and error_code(again) == "conflict"


def test_an_operator_proposal_retried_with_its_key_is_made_once(
    app: Flask, client: FlaskClient, auth: dict[str, str], operator: dict[str, str]
) -> None:
    bob = client.get("/api/v1/me", headers=auth).get_json()["user"]["id"]
    url = f"/api/v1/operator/approvals/operators/{bob}"
    propose = {**operator, "Idempotency-Key": "promote-1"}
    first = client.post(url, headers=propose)
    size = audit_size(app)
    again = client.post(url, headers=propose)
    assert first.status_code == again.status_code == 201, first.get_json()
    assert again.get_json() == first.get_json()
    pending = client.get("/api/v1/operator/approvals", headers=operator).get_json()["approvals"]
    assert [a["id"] for a in pending] == [first.get_json()["id"]]
    assert audit_size(app) == size  # the retry proposed nothing
    assert _role(client, auth) == "player"


def test_a_promotion_pending_already_is_not_proposed_again_by_anyone(
    app: Flask, client: FlaskClient, auth: dict[str, str], operator: dict[str, str]
) -> None:
    add_user(app, "otto", "operator")
    otto = staff_bearer(app, "otto")
    bob = client.get("/api/v1/me", headers=auth).get_json()["user"]["id"]
    url = f"/api/v1/operator/approvals/operators/{bob}"
    first = client.post(url, headers={**operator, "Idempotency-Key": "promote-1"})
    assert first.status_code == 201, first.get_json()
    size = audit_size(app)
    for headers in (operator, otto, {**otto, "Idempotency-Key": "promote-2"}):
        again = client.post(url, headers=headers)
        assert again.status_code == 409 and error_code(again) == "proposal_pending"
        assert f"(#{first.get_json()['id']})" in again.get_json()["error"]["message"]
    pending = client.get("/api/v1/operator/approvals", headers=operator).get_json()["approvals"]
    assert [a["id"] for a in pending] == [first.get_json()["id"]]
    assert audit_size(app) == size  # nothing proposed, nothing logged
    # Once it is decided, the promotion may be proposed again.
    rejected = client.post(
        f"/api/v1/operator/approvals/{first.get_json()['id']}/reject", json={}, headers=otto
    )
    assert rejected.status_code == 200
    assert client.post(url, headers=otto).status_code == 201


def test_another_change_of_a_table_or_the_same_adjustment_may_be_proposed_while_one_waits(
    client: FlaskClient, auth: dict[str, str], operator: dict[str, str]
) -> None:
    table = "/api/v1/operator/approvals/tables/casino_war"
    assert client.post(table, json={"decks": 4}, headers=operator).status_code == 201
    assert client.post(table, json={"decks": 2}, headers=operator).status_code == 201
    elsewhere = "/api/v1/operator/approvals/tables/sota"
    assert client.post(elsewhere, json={"min_stake": 2}, headers=operator).status_code == 201
    bob = client.get("/api/v1/me", headers=auth).get_json()["user"]["id"]
    change = {"user_id": bob, "currency": "chips", "amount": 500_000, "reason": "refund"}
    adjust = "/api/v1/operator/approvals/adjustments"
    twice = [client.post(adjust, json=change, headers=operator) for _ in range(2)]
    assert [answer.status_code for answer in twice] == [201, 201]
    assert twice[0].get_json()["id"] != twice[1].get_json()["id"]


@pytest.mark.parametrize("four_eyes", [1, 0])
def test_demotions_and_auditors_apply_at_once_and_without_four_eyes_so_does_promotion(
    make_app: Any, four_eyes: int
) -> None:
    app = make_app(FOUR_EYES_OPERATORS=four_eyes)
    client = app.test_client()
    add_user(app, "olga", "operator")
    olga = staff_bearer(app, "olga")
    otto = add_user(app, "otto", "operator")
    pat = add_user(app, "pat", "player")
    for user, role in ((otto, "player"), (pat, "auditor"), (pat, "player")):
        url = f"/api/v1/operator/players/{user}/role"
        changed = client.put(url, json={"role": role}, headers=olga)
        assert changed.status_code == 200, changed.get_json()
        assert changed.get_json()["user"]["role"] == role
    promote = client.put(
        f"/api/v1/operator/players/{pat}/role", json={"role": "operator"}, headers=olga
    )
    if four_eyes:
        assert promote.status_code == 409 and error_code(promote) == "approval_required"
    else:
        assert promote.status_code == 200 and promote.get_json()["user"]["role"] == "operator"
        assert last_entry(app)["data"] == {"from": "player", "to": "operator"}


@pytest.mark.parametrize("key", ["", "x" * 65, "has space", "tab\tkey", "ключ"])
def test_a_malformed_idempotency_key_is_422(
    client: FlaskClient, auth: dict[str, str], key: str
) -> None:
    headers = {**auth, "Idempotency-Key": key.encode("utf-8").decode("latin-1")}
    response = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=headers)
    assert response.status_code == 422 and error_code(response) == "invalid_input"
    assert balances(client, auth)["chips"] == 100_000


@pytest.mark.parametrize(
    "sent",
    [
        {"headers": [("Idempotency-Key", "key-a"), ("Idempotency-Key", "key-b")]},
        # gunicorn joins a repeated header with a bare comma: one visible-ASCII "key"
        {"environ_overrides": {"HTTP_IDEMPOTENCY_KEY": "key-a,key-b"}},
    ],
    ids=["test-client", "as-gunicorn-joins-them"],
)
def test_two_idempotency_keys_are_refused_naming_the_header_and_bet_nothing(
    client: FlaskClient, auth: dict[str, str], sent: dict[str, Any]
) -> None:
    """Two keys in one request: which one a retry must repeat cannot be told."""
    headers = [*auth.items(), *sent.get("headers", [])]
    response = client.post(
        "/api/v1/casino-war/rounds",
        json={"bet": 100},
        headers=headers,
        environ_overrides=sent.get("environ_overrides"),
    )
    assert response.status_code == 422 and error_code(response) == "invalid_input"
    assert "Idempotency-Key is given more than once" in response.get_json()["error"]["message"]
    assert balances(client, auth)["chips"] == 100_000
    assert client.get("/api/v1/rounds", headers=auth).get_json()["rounds"] == []


def test_a_token_stops_working_after_the_password_changes(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    with client.application.app_context():
        session = client.application.extensions["sota_casino.sessionmaker"]()
        accounts.change_password(session, 1, PASSWORD, "a different passphrase")
        session.close()
    response = client.get("/api/v1/me", headers=auth)
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("language", "said"), [("en", "the API document lists"), ("fi", "API-kuvauksen")]
)
def test_an_unknown_time_zone_is_refused_in_a_sentence_and_changes_nothing(
    client: FlaskClient, operator: dict[str, str], language: str, said: str
) -> None:
    """A value outside a long list of options is refused naming the field and where the options
    are: the refusal listed all the hundreds of zone names the machine knows (11 KB)."""
    headers = {**operator, "Accept-Language": language}
    before = audit_size(client.application)
    sent = {"time_zone": "Mars/Olympus"}
    answer = client.put("/api/v1/operator/me/time-zone", json=sent, headers=headers)
    assert answer.status_code == 422 and error_code(answer) == "invalid_input"
    message = answer.get_json()["error"]["message"]
    assert message.startswith("time_zone ") and said in message and len(message) < 200
    assert audit_size(client.application) == before


def test_the_machines_own_zone_is_no_time_zone_to_choose(
    client: FlaskClient, operator: dict[str, str]
) -> None:
    """``localtime`` is in the zone database's directory but names no zone: it is whatever
    the server was set to, so the console's times would shift with the machine."""
    assert "localtime" not in accounts.time_zones()
    before = audit_size(client.application)
    sent = {"time_zone": "localtime"}
    answer = client.put("/api/v1/operator/me/time-zone", json=sent, headers=operator)
    assert answer.status_code == 422 and error_code(answer) == "invalid_input"
    assert audit_size(client.application) == before


@pytest.mark.parametrize("presets", [[{}], [["nordic"]], ["nordic", {"a": 1}]])
@pytest.mark.parametrize(
    ("method", "url"),
    [("put", "/api/v1/operator/tables/sota"), ("post", "/api/v1/operator/approvals/tables/sota")],
)
def test_presets_that_are_not_names_are_refused_and_change_nothing(
    client: FlaskClient, operator: dict[str, str], method: str, url: str, presets: list[Any]
) -> None:
    """A list or an object among the presets was looked up among the names as it was: a 500."""
    before = client.get("/api/v1/operator/tables/sota", headers=operator).get_json()
    answer = client.open(url, method=method.upper(), json={"presets": presets}, headers=operator)
    assert answer.status_code == 422 and error_code(answer) == "invalid_rules"
    assert "presets" in answer.get_json()["error"]["message"]
    assert client.get("/api/v1/operator/tables/sota", headers=operator).get_json() == before
    assert client.get("/api/v1/operator/approvals", headers=operator).get_json()["approvals"] == []


# --- a field given twice -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "body", "named"),
    [
        ("/api/v1/casino-war/rounds", '{"bet": "x", "bet": 100}', "bet"),
        ("/api/v1/casino-war/rounds", '{"bet": 100, "tie_bet": 0, "bet": 100}', "bet"),
        (
            "/api/v1/sota/games",
            '{"stake": 1, "rules": {"deck": "standard52", "deck": "piquet32"}}',
            "rules.deck",
        ),
        ("/api/v1/fairness/rotate", '{"client_seed": "a", "client_seed": "b"}', "client_seed"),
    ],
)
def test_a_field_given_twice_in_a_body_is_a_422_naming_it_and_changes_nothing(
    client: FlaskClient, auth: dict[str, str], url: str, body: str, named: str
) -> None:
    """Which of the two was meant cannot be told (parsers differ: the first, the last, an
    error), so neither is taken."""
    pair = client.get("/api/v1/fairness/seed-pair", headers=auth).get_json()
    response = client.post(url, data=body, headers=auth, content_type="application/json")
    assert response.status_code == 422 and error_code(response) == "invalid_input", url
    assert response.get_json()["error"]["message"] == f"{named} is given more than once"
    assert balances(client, auth) == {"chips": 100_000, "sweets": 100}
    assert client.get("/api/v1/rounds", headers=auth).get_json()["rounds"] == []
    assert client.get("/api/v1/fairness/seed-pair", headers=auth).get_json() == pair


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("/api/v1/casino-war/odds?decks=1&decks=x", "decks"),
        ("/api/v1/rounds?limit=1&limit=2", "limit"),
        ("/api/v1/rounds?game=sota&limit=5&game=casino_war", "game"),
    ],
)
def test_a_query_parameter_given_twice_is_a_422_naming_it(
    client: FlaskClient, auth: dict[str, str], url: str, named: str
) -> None:
    response = client.get(url, headers=auth)
    assert response.status_code == 422 and error_code(response) == "invalid_input", url
    assert response.get_json()["error"]["message"] == f"{named} is given more than once"


# --- text no database can store ----------------------------------------------------------------


def test_text_with_a_nul_character_is_a_422_and_changes_nothing(
    app: Flask, client: FlaskClient, auth: dict[str, str], operator: dict[str, str]
) -> None:
    """PostgreSQL text cannot hold NUL: such text is refused before it reaches the database."""
    pair = client.get("/api/v1/fairness/seed-pair", headers=auth).get_json()
    size = audit_size(app)
    for url, body, headers in (
        ("/api/v1/fairness/rotate", {"client_seed": "lucky\u0000"}, auth),
        ("/api/v1/sota/games", {"stake": 1, "rules": {"deck\u0000": "x"}}, auth),
        (
            "/api/v1/operator/adjustments",
            {"user_id": 1, "currency": "chips", "amount": 100, "reason": "a\u0000b"},
            operator,
        ),
    ):
        response = client.post(url, json=body, headers=headers)
        assert response.status_code == 422 and error_code(response) == "invalid_input", url
        assert "NUL" in response.get_json()["error"]["message"]
    assert audit_size(app) == size
    assert client.get("/api/v1/fairness/seed-pair", headers=auth).get_json() == pair
    assert balances(client, auth) == {"chips": 100_000, "sweets": 100}


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("audit", "action"),
        ("audit", "actor"),
        ("audit", "subject"),
        ("audit", "text"),
        ("players", "q"),
    ],
)
def test_a_nul_character_in_an_operator_query_is_a_422(
    client: FlaskClient, operator: dict[str, str], path: str, name: str
) -> None:
    response = client.get(
        f"/api/v1/operator/{path}", query_string={name: "user\u0000"}, headers=operator
    )
    assert response.status_code == 422 and error_code(response) == "invalid_input"


@pytest.mark.parametrize("name", ["since", "until"])
def test_an_audit_time_outside_the_calendar_is_a_422(
    client: FlaskClient, operator: dict[str, str], name: str
) -> None:
    response = client.get(
        "/api/v1/operator/audit", query_string={name: "2024-02-30T00:00:00"}, headers=operator
    )
    assert response.status_code == 422 and error_code(response) == "invalid_input"


@pytest.mark.parametrize(
    ("name", "moment", "found"),
    [
        ("since", "9999-12-31T23:59:59-05:00", False),  # past 9999 in UTC: after every entry
        ("until", "9999-12-31T23:59:59-05:00", True),
        ("since", "0001-01-01T00:00:00+05:00", True),  # before year 1 in UTC: before them all
        ("until", "0001-01-01T00:00:00+05:00", False),
    ],
)
def test_an_audit_time_beyond_every_year_in_utc_bounds_the_log_as_the_first_or_last_time(
    client: FlaskClient, operator: dict[str, str], name: str, moment: str, found: bool
) -> None:
    """Valid ISO 8601, as the document's date-time, so not refused (it was a 422, which the
    document allows no schema-valid request)."""
    response = client.get("/api/v1/operator/audit", query_string={name: moment}, headers=operator)
    assert response.status_code == 200
    assert bool(response.get_json()["entries"]) is found


def test_a_body_that_is_not_sent_as_json_is_a_415(client: FlaskClient) -> None:
    # A cross-site HTML form can post text/plain without a preflight; JSON it cannot.
    answer = client.post(
        "/api/v1/auth/token",
        data='{"username": "bob", "password": "correct horse battery"}',
        content_type="text/plain",
    )
    assert answer.status_code == 415
    assert answer.get_json()["error"]["code"]


@pytest.mark.parametrize(
    "media", ["application/merge-patch+json", "application/vnd.api+json", "application/json-seq"]
)
def test_a_body_sent_as_another_json_type_is_a_415_and_bets_nothing(
    client: FlaskClient, media: str
) -> None:
    """The document takes application/json alone (its 415: "not sent as Content-Type:
    application/json"); a ``+json`` type was read as JSON all the same and bet."""
    auth = bearer(client)
    before = balances(client, auth)
    answer = client.post(
        "/api/v1/casino-war/rounds", data=b'{"bet": 500}', content_type=media, headers=auth
    )
    assert answer.status_code == 415 and error_code(answer) == "unsupported_media_type"
    assert balances(client, auth) == before


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_body_sent_with_a_content_encoding_is_a_415_and_bets_nothing(
    client: FlaskClient, gzipped: bool
) -> None:
    """The service decodes no body: one labelled gzip was read as plain JSON (a bet placed),
    and a real gzip body was a 400 that did not say why."""
    auth = bearer(client)
    before = balances(client, auth)
    body = b'{"bet": 500}'
    answer = client.post(
        "/api/v1/casino-war/rounds",
        data=gzip.compress(body) if gzipped else body,
        content_type="application/json",
        headers={**auth, "Content-Encoding": "gzip"},
    )
    assert answer.status_code == 415, answer.get_json()
    assert "Content-Encoding" in answer.get_json()["error"]["message"]
    assert balances(client, auth) == before
    plain = client.post(
        "/api/v1/casino-war/rounds",
        json={"bet": 500},
        headers={**auth, "Content-Encoding": "identity"},
    )
    assert plain.status_code == 201, plain.get_json()


@pytest.mark.parametrize("charset", ["utf-16", "iso-8859-1"])
def test_a_body_in_another_charset_than_utf_8_is_a_415_that_says_so_and_bets_nothing(
    client: FlaskClient, charset: str
) -> None:
    """JSON travels in UTF-8 (RFC 8259, 8.1): a body labelled UTF-16 was read as UTF-8 and
    refused as "not valid JSON", a 400 that did not say why."""
    auth = bearer(client)
    before = balances(client, auth)
    answer = client.post(
        "/api/v1/casino-war/rounds",
        data='{"bet": 500}'.encode(charset),
        content_type=f"application/json; charset={charset}",
        headers=auth,
    )
    assert answer.status_code == 415, answer.get_json()
    assert error_code(answer) == "unsupported_media_type"
    assert "UTF-8" in answer.get_json()["error"]["message"]
    assert balances(client, auth) == before
    labelled = client.post(
        "/api/v1/casino-war/rounds",
        data=b'{"bet": 500}',
        content_type="application/json; charset=UTF-8",
        headers=auth,
    )
    assert labelled.status_code == 201, labelled.get_json()


def test_query_digits_are_text_where_the_document_asks_for_text(
    client: FlaskClient, operator: dict[str, str]
) -> None:
    """Digits are a number only for a parameter that takes one: ``action=123`` is a filter."""
    response = client.get("/api/v1/operator/audit?action=123", headers=operator)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["entries"] == []
    refused = client.get("/api/v1/casino-war/odds?decks=", headers=operator)
    assert refused.status_code == 422 and error_code(refused) == "invalid_input"
