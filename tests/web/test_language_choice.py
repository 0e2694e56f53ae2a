"""Which language a page speaks: the player's stored choice, then the picker's cookie, then
``Accept-Language``, then English; the JSON API speaks English unless asked."""

from __future__ import annotations

import html
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_support import PASSWORD
from web_support import post_form
from web_support import register_page
from werkzeug.test import TestResponse

from sota_casino.db import get_session
from sota_casino.models import User

HTML_LANG = re.compile(r'<html lang="([a-z]+)">')


def page_lang(client: FlaskClient, path: str = "/", **headers: str) -> str:
    answer = client.get(path, headers=headers)
    assert answer.status_code == 200
    found = HTML_LANG.search(answer.get_data(as_text=True))
    assert found, "the page has no <html lang>"
    return found.group(1)


def test_without_any_choice_a_page_is_english(client: FlaskClient) -> None:
    assert page_lang(client) == "en"


def test_accept_language_picks_the_best_of_the_four(client: FlaskClient) -> None:
    assert page_lang(client, **{"Accept-Language": "fi-FI,fi;q=0.9,en;q=0.5"}) == "fi"
    assert page_lang(client, **{"Accept-Language": "pt-BR"}) == "pt"
    assert page_lang(client, **{"Accept-Language": "no;q=0.9, de;q=0.8"}) == "nb"
    assert page_lang(client, **{"Accept-Language": "de, fr;q=0.5"}) == "en"


def test_the_picker_cookie_outranks_accept_language(client: FlaskClient) -> None:
    answer = post_form(client, "/language", {"locale": "nb", "next": "/auth/login"})
    assert answer.status_code == 303 and answer.headers["Location"] == "/auth/login"
    assert page_lang(client, "/auth/login", **{"Accept-Language": "fi"}) == "nb"


def test_a_players_stored_choice_outranks_the_cookie(app: Flask, client: FlaskClient) -> None:
    register_page(client, "aino")
    post_form(client, "/language", {"locale": "fi", "next": "/lobby"})
    with app.app_context():
        stored = get_session().query(User).filter_by(username="aino").one().locale
    assert stored == "fi"
    client.set_cookie("lang", "pt")  # another picker choice left in this browser
    assert page_lang(client, "/lobby", **{"Accept-Language": "nb"}) == "fi"


PICKER_NEXT = re.compile(
    r'action="/language"[^>]*>.*?<input type="hidden" name="next" value="([^"]*)">', re.S
)


def picker_next(answer: TestResponse) -> str:
    """Return where the header's language picker of this page brings the player back."""
    found = PICKER_NEXT.search(answer.get_data(as_text=True))
    assert found, "the page has no language picker"
    return html.unescape(found.group(1))


def test_the_picker_brings_the_player_back_to_the_page_loaded(client: FlaskClient) -> None:
    assert picker_next(client.get("/rules/sota?x=1")) == "/rules/sota?x=1"


def test_after_a_refused_bet_the_picker_goes_back_to_the_table_shown(
    client: FlaskClient,
) -> None:
    register_page(client, "tuuli")
    refused = post_form(client, "/casino-war/rounds", {"bet": "600", "tie_bet": "0"})
    assert refused.status_code == 422  # the table, shown again at the form's address
    assert picker_next(refused) == "/casino-war"


def test_after_a_refused_login_the_picker_goes_back_to_the_login_page(
    client: FlaskClient,
) -> None:
    refused = post_form(client, "/auth/login", {"username": "nobody", "password": "wrong one"})
    assert refused.status_code == 401
    assert picker_next(refused) == "/auth/login"


def test_a_language_picked_before_logging_in_wins_over_the_stored_one_and_is_stored(
    app: Flask, client: FlaskClient
) -> None:
    body = {"username": "aino", "password": PASSWORD}
    client.post("/api/v1/auth/register", json=body, headers={"Accept-Language": "pt"})
    assert stored_locale(app, "aino") == "pt"
    post_form(client, "/language", {"locale": "nb", "next": "/auth/login"})  # on the login page
    assert post_form(client, "/auth/login", body).status_code == 303
    assert page_lang(client, "/lobby") == "nb"
    assert stored_locale(app, "aino") == "nb"


def test_a_language_left_in_the_browser_from_before_does_not_replace_the_stored_one(
    app: Flask, client: FlaskClient
) -> None:
    body = {"username": "aino", "password": PASSWORD}
    client.post("/api/v1/auth/register", json=body, headers={"Accept-Language": "pt"})
    client.set_cookie("lang", "fi")  # picked in this browser some other day
    assert post_form(client, "/auth/login", body).status_code == 303
    assert page_lang(client, "/lobby") == "pt"
    assert stored_locale(app, "aino") == "pt"


def test_the_picker_refuses_a_language_it_does_not_offer(client: FlaskClient) -> None:
    answer = post_form(client, "/language", {"locale": "de", "next": "/"})
    assert answer.status_code == 303  # the form's refusal: back, with the reason flashed
    assert client.get_cookie("lang") is None
    assert page_lang(client) == "en"


def test_the_picker_never_redirects_off_site(client: FlaskClient) -> None:
    answer = post_form(client, "/language", {"locale": "fi", "next": "//evil.example/"})
    assert answer.headers["Location"] == "/"


def test_the_picker_needs_the_csrf_token(client: FlaskClient) -> None:
    assert client.post("/language", data={"locale": "fi"}).status_code == 400


def test_the_once_a_day_top_up_refusal_is_in_the_players_language(
    app: Flask, client: FlaskClient
) -> None:
    register_page(client, "eino")
    post_form(client, "/language", {"locale": "fi", "next": "/lobby"})
    app.config["LOW_BALANCE_CHIPS"] = 1_000_000
    assert post_form(client, "/lobby/topup", {"currency": "chips"}).status_code == 303
    refused = post_form(client, "/lobby/topup", {"currency": "chips"})
    shown = client.get(refused.headers["Location"], follow_redirects=True)
    page = html.unescape(shown.get_data(as_text=True))
    assert "Yksi täydennys päivässä: seuraava on mahdollinen " in page
    assert "one top-up a day" not in page.lower()


def test_the_language_chosen_before_signing_up_is_kept_with_the_account(
    app: Flask, client: FlaskClient
) -> None:
    post_form(client, "/language", {"locale": "nb", "next": "/"})
    register_page(client, "ola")
    with app.app_context():
        stored = get_session().query(User).filter_by(username="ola").one().locale
    assert stored == "nb"


def test_without_a_choice_signing_up_stores_no_language(app: Flask, client: FlaskClient) -> None:
    register_page(client, "eve")
    with app.app_context():
        stored = get_session().query(User).filter_by(username="eve").one().locale
    assert stored is None


def stored_locale(app: Flask, username: str) -> str | None:
    with app.app_context():
        locale: str | None = get_session().query(User).filter_by(username=username).one().locale
    return locale


@pytest.mark.parametrize(
    ("accept_language", "stored"),
    [
        ("fi", "fi"),
        ("de, pt;q=0.8, fi;q=0.5", "pt"),
        ("pt-BR", "pt"),
        ("no", "nb"),
        ("de, fr;q=0.5", None),  # none of ours: as a page sign-up without a choice
        (None, None),
    ],
)
def test_an_api_sign_up_keeps_the_best_language_of_accept_language(
    app: Flask, client: FlaskClient, accept_language: str | None, stored: str | None
) -> None:
    headers = {"Accept-Language": accept_language} if accept_language else {}
    body = {"username": "api_player", "password": PASSWORD}
    answer = client.post("/api/v1/auth/register", json=body, headers=headers)
    assert answer.status_code == 201, answer.get_json()
    assert stored_locale(app, "api_player") == stored


def test_a_language_kept_at_an_api_sign_up_is_the_one_the_pages_speak(
    app: Flask, client: FlaskClient
) -> None:
    body = {"username": "aino", "password": PASSWORD}
    answer = client.post("/api/v1/auth/register", json=body, headers={"Accept-Language": "fi"})
    assert answer.status_code == 201
    logged_in = post_form(client, "/auth/login", body)
    assert logged_in.status_code == 303
    assert page_lang(client, "/lobby", **{"Accept-Language": "en"}) == "fi"


def test_an_api_sign_up_in_a_language_we_do_not_speak_stores_what_the_page_does(
    app: Flask, client: FlaskClient
) -> None:
    register_page(client, "page_player")  # no language chosen
    german = {"Accept-Language": "de"}
    body = {"username": "api_player", "password": PASSWORD}
    assert client.post("/api/v1/auth/register", json=body, headers=german).status_code == 201
    assert stored_locale(app, "api_player") == stored_locale(app, "page_player") is None
