"""A page form that sends a field twice is refused, as the API refuses a field given twice:
which value was meant cannot be told, so nothing is done. Only the fields that are lists
(Sota's face-down cards, the presets a table offers) may repeat."""

from __future__ import annotations

import re

from flask import Flask
from flask.testing import FlaskClient
from operator_support import CSRF
from operator_support import add_user
from operator_support import audit_size
from operator_support import client_as
from operator_support import db
from web_support import PASSWORD
from web_support import post_form

from sota_casino.services import accounts
from sota_casino.services import settings

SENT_TWICE = "was sent more than once, so which was meant cannot be told"


def text(response) -> str:  # type: ignore[no-untyped-def]
    return response.get_data(as_text=True)  # type: ignore[no-any-return]


def followed(client: FlaskClient, response) -> str:  # type: ignore[no-untyped-def]
    assert response.status_code == 303, text(response)
    return text(client.get(response.location, follow_redirects=True))


def test_a_bet_with_the_ante_twice_is_refused_on_the_table_and_deals_nothing(
    app: Flask, player: FlaskClient
) -> None:
    before = audit_size(app)
    refused = post_form(player, "/casino-war/rounds", {"bet": ["5", "500"]})
    assert refused.status_code == 422
    page = text(refused)
    assert f"“bet” {SENT_TWICE}" in page
    assert re.search(r'id="bet"[^>]*aria-invalid="true"', page)  # the field to fix is marked
    assert 'data-round="' not in text(player.get("/history"))
    assert 'data-testid="chips-balance">1,000<' in text(player.get("/lobby"))
    assert audit_size(app) == before


def test_the_refusal_is_in_the_players_language(player: FlaskClient) -> None:
    player.set_cookie("lang", "fi")
    page = text(post_form(player, "/casino-war/rounds", {"bet": "5", "tie_bet": ["0", "5"]}))
    assert "”tie_bet” lähetettiin useammin kuin kerran" in page


def test_a_stake_twice_is_refused_and_a_sota_game_is_not_dealt(player: FlaskClient) -> None:
    form = {"stake": ["1", "10"], "preset": "nordic"}
    page = followed(player, post_form(player, "/sota/games", form))
    assert f"“stake” {SENT_TWICE}" in page
    assert 'data-testid="sweets-balance">100<' in text(player.get("/lobby"))
    rule = {"stake": "1", "preset": "custom", "rule_deck": ["standard52", "jokers54"]}
    assert f"“rule_deck” {SENT_TWICE}" in followed(player, post_form(player, "/sota/games", rule))


def test_a_login_with_two_names_is_refused_on_its_form(app: Flask, client: FlaskClient) -> None:
    add_user(app, "pat")
    form = {"username": ["pat", "mallory"], "password": PASSWORD}
    refused = post_form(client, "/auth/login", form)
    assert refused.status_code == 422
    assert f"“Username” {SENT_TWICE}" in text(refused)
    assert client.get("/api/v1/me").status_code == 401  # nobody was logged in


def test_the_consoles_forms_refuse_a_field_twice_changing_nothing(app: Flask) -> None:
    pat = add_user(app, "pat")
    olga_id = add_user(app, "olga", "operator")
    olga = client_as(app, olga_id)
    before = audit_size(app)

    zone = olga.post(
        "/operator/me/time-zone", data={"csrf_token": CSRF, "time_zone": ["Asia/Tokyo", "UTC"]}
    )
    assert zone.status_code == 422
    assert 'data-testid="time-zone-error"' in text(zone)  # beside its form, as its other refusals
    assert f"“Show times in” {SENT_TWICE}" in text(zone)

    adjust = {"direction": "credit", "currency": "chips", "amount": ["5", "5000"], "reason": "x"}
    preview = olga.post(
        f"/operator/players/{pat}/adjust/preview", data={"csrf_token": CSRF, **adjust}
    )
    assert preview.status_code == 422
    assert 'id="adjust-error"' in text(preview) and f"“Amount” {SENT_TWICE}" in text(preview)

    rule = {"kind": "large_win", "currency": "chips", "threshold": ["1", "9"], "period_hours": "1"}
    alert = olga.post("/operator/alerts/rules", data={"csrf_token": CSRF, **rule})
    assert alert.status_code == 422 and 'data-testid="rule-error"' in text(alert)

    role = olga.post(
        f"/operator/players/{pat}/role", data={"csrf_token": CSRF, "role": ["auditor", "player"]}
    )
    assert role.status_code == 422 and f"“Role” {SENT_TWICE}" in text(role)

    table = {"min_bet": ["1", "2"], "max_bet": "500", "decks": "6", "tie_payout": "10"}
    tables = olga.post(
        "/operator/tables/casino_war", data={"csrf_token": CSRF, "burn": "3", **table}
    )
    assert tables.status_code == 422 and f"“min_bet” {SENT_TWICE}" in text(tables)

    session = db(app)
    try:
        assert accounts.get_user(session, olga_id).time_zone is None
        assert accounts.get_user(session, pat).role == "player"
        assert settings.table_rules(session, "casino_war")["min_bet"] == 100
    finally:
        session.close()
    assert audit_size(app) == before


def test_a_field_that_is_a_list_may_repeat(app: Flask) -> None:
    from sota_casino.web.inputs import REPEATABLE_FIELDS

    assert REPEATABLE_FIELDS == {
        "sota.move": frozenset({"down"}),
        "operator.update_table": frozenset({"presets"}),
    }
    olga = client_as(app, add_user(app, "olga", "operator"))
    form = {"min_stake": "1", "max_stake": "50", "presets": ["nordic", "english"]}
    saved = olga.post("/operator/tables/sota", data={"csrf_token": CSRF, **form})
    assert saved.status_code == 303, text(saved)
    session = db(app)
    try:
        assert settings.table_rules(session, "sota")["presets"] == ["nordic", "english"]
    finally:
        session.close()


def test_who_may_not_use_a_form_is_told_that_first(app: Flask, client: FlaskClient) -> None:
    twice = {"csrf_token": CSRF, "bet": ["5", "500"]}
    visitor = client_as(app, None)
    back = visitor.post("/casino-war/rounds", data=twice)
    assert back.status_code == 303  # back to the table, which asks the visitor to log in
    player = client_as(app, add_user(app, "pat"))
    role = {"csrf_token": CSRF, "role": ["operator", "operator"]}
    assert player.post("/operator/players/1/role", data=role).status_code == 403


def test_every_page_form_refuses_a_field_sent_twice(app: Flask) -> None:
    pat = client_as(app, add_user(app, "pat"))
    olga = client_as(app, add_user(app, "olga", "operator"))
    forms = [
        rule
        for rule in app.url_map.iter_rules()
        if "POST" in (rule.methods or ()) and not rule.rule.startswith("/api/")
    ]
    assert len(forms) > 20
    for rule in forms:
        url = rule.rule.replace("<id:", "<").replace("<name>", "sota")
        url = re.sub(r"<[a-z_]+>", "1", url)
        client = olga if rule.rule.startswith("/operator") else pat
        answer = client.post(url, data={"csrf_token": CSRF, "odd": ["1", "2"]})
        shown = followed(client, answer) if answer.status_code == 303 else text(answer)
        assert answer.status_code in (303, 422), (rule.rule, answer.status_code)
        assert f"“odd” {SENT_TWICE}" in shown, rule.rule
