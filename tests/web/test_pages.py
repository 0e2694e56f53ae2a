"""Every player page through the test client: accounts, lobby, tables, history, fairness."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from name_support import name_check_missed_once
from operator_support import add_user
from operator_support import db
from web_support import PASSWORD
from web_support import api_register
from web_support import csrf_token
from web_support import first_cards
from web_support import plant_seed_repeating_a_move
from web_support import plant_server_seed
from web_support import post_form
from web_support import register_page

from sota_casino.core.cards import RANKS
from sota_casino.services import money
from sota_casino.services import settings
from sota_casino.verify.build import build


def text(response) -> str:  # type: ignore[no-untyped-def]
    return response.get_data(as_text=True)  # type: ignore[no-any-return]


def follow(client: FlaskClient, response) -> str:  # type: ignore[no-untyped-def]
    assert response.status_code == 303, text(response)
    return text(client.get(response.location, follow_redirects=True))


def refused_bet(client: FlaskClient, form: dict[str, str]) -> str:
    """Send the table's bet form, expecting the table again with the reason (no redirect)."""
    response = post_form(client, "/casino-war/rounds", form)
    assert response.status_code in (402, 409, 422), text(response)
    return text(response)


# --- accounts -------------------------------------------------------------------------------------


def test_signing_up_logs_in_and_shows_the_grant_in_the_lobby(client: FlaskClient) -> None:
    page = follow(client, register_page(client, "carol"))
    assert "Welcome to the table, carol" in page
    assert 'data-testid="chips-balance">1,000<' in page
    assert 'data-testid="sweets-balance">100<' in page


def test_signing_up_with_a_taken_name_or_a_weak_password_explains_why(client: FlaskClient) -> None:
    register_page(client, "carol")
    post_form(client, "/auth/logout")
    for form, status, message, invalid in (
        (
            {"username": "Carol", "password": PASSWORD},
            409,
            "the username 'Carol' is taken",
            "username",
        ),
        ({"username": "dave", "password": "short"}, 422, "password must be 10 to", "password"),
        ({"username": "dave", "password": "aaaaaaaaaaaa"}, 422, "password is too weak", "password"),
        ({"username": "d!", "password": PASSWORD}, 422, "username must be 3 to 32", "username"),
    ):
        response = post_form(client, "/auth/register", {**form, "confirm": form["password"]})
        assert response.status_code == status, form
        page = text(response).replace("&#39;", "'")
        assert f'role="alert" id="form-error">{message}' in page, form
        # The form comes back with the name as typed, and the faulty field marked.
        assert f'value="{form["username"]}"' in page
        assert re.search(rf'id="{invalid}"[^>]*aria-invalid="true"', page), form
    differ = post_form(
        client, "/auth/register", {"username": "dave", "password": PASSWORD, "confirm": "other"}
    )
    assert differ.status_code == 422 and "The two passwords differ" in text(differ)
    assert client.get("/lobby").status_code == 303  # no account was made, nobody logged in


def test_signing_up_with_a_name_the_database_refuses_explains_why(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_page(client, "carol")
    post_form(client, "/auth/logout")
    checks = name_check_missed_once(monkeypatch)
    form = {"username": "CAROL", "password": PASSWORD, "confirm": PASSWORD}
    response = post_form(client, "/auth/register", form)
    assert checks == ["missed", "checked"]  # the database refused the name, not the check
    assert response.status_code == 409
    page = text(response).replace("&#39;", "'")
    assert 'role="alert" id="form-error">the username \'CAROL\' is taken' in page
    assert re.search(r'id="username"[^>]*aria-invalid="true"', page)
    assert client.get("/lobby").status_code == 303  # no account was made, nobody logged in


def test_logging_in_with_a_wrong_password_says_so_and_then_throttles(client: FlaskClient) -> None:
    api_register(client, "erin")
    wrong = post_form(client, "/auth/login", {"username": "erin", "password": "wrong one!"})
    assert wrong.status_code == 401
    assert "wrong username or password" in text(wrong) and 'value="erin"' in text(wrong)
    for _ in range(5):
        response = post_form(client, "/auth/login", {"username": "erin", "password": "wrong one!"})
    assert response.status_code == 429
    assert "too many failed logins; try again in 5\u00a0minutes" in text(response)
    assert 299 <= int(response.headers["Retry-After"]) <= 300
    still = post_form(client, "/auth/login", {"username": "erin", "password": PASSWORD})
    assert still.status_code == 429, "a throttled login must not log in, even with the password"
    assert client.get("/lobby").status_code == 303


def marked_invalid(page: str) -> list[str]:
    """Return the ids of the fields a refused form marks invalid."""
    return re.findall(r'<input id="([^"]+)"[^>]*aria-invalid="true"', page)


def test_a_sign_up_refused_for_too_many_from_the_address_marks_no_field(make_app: Any) -> None:
    client = make_app(SIGNUPS_PER_ADDRESS=1).test_client()
    register_page(client, "carol")
    post_form(client, "/auth/logout")
    form = {"username": "dave", "password": PASSWORD, "confirm": PASSWORD}
    refused = post_form(client, "/auth/register", form)
    assert refused.status_code == 429 and 'role="alert" id="form-error">' in text(refused)
    assert marked_invalid(text(refused)) == []  # nothing typed was wrong


def test_a_wrong_password_marks_both_fields_and_a_throttled_login_none(
    client: FlaskClient,
) -> None:
    api_register(client, "erin")
    form = {"username": "erin", "password": "wrong one!"}
    wrong = post_form(client, "/auth/login", form)
    assert wrong.status_code == 401
    assert marked_invalid(text(wrong)) == ["username", "password"]  # either may be wrong
    for _ in range(5):
        throttled = post_form(client, "/auth/login", form)
    assert throttled.status_code == 429
    assert marked_invalid(text(throttled)) == []


def test_logging_in_and_out(client: FlaskClient) -> None:
    api_register(client, "frank")
    response = post_form(client, "/auth/login", {"username": "frank", "password": PASSWORD})
    assert response.location == "/lobby"
    assert "frank" in text(client.get("/lobby"))
    assert "logged out" in follow(client, post_form(client, "/auth/logout"))
    assert client.get("/lobby").status_code == 303


def test_changing_the_password_needs_the_old_one(player: FlaskClient) -> None:
    assert "Change your password" in text(player.get("/auth/password"))
    new = "another long passphrase"
    wrong = post_form(player, "/auth/password", {"old": "nope", "new": new, "confirm": new})
    # Shown on the form again, the field to fix marked, the refusal read out.
    assert wrong.status_code == 401
    page = text(wrong)
    assert "current password is wrong" in page
    assert re.search(
        r'<input id="old"[^>]* aria-invalid="true" aria-errormessage="form-error"', page
    )
    assert not re.search(r'<input id="new"[^>]* aria-invalid', page)
    right = post_form(player, "/auth/password", {"old": PASSWORD, "new": new, "confirm": new})
    assert "Password changed" in follow(player, right)
    post_form(player, "/auth/logout")
    login = post_form(player, "/auth/login", {"username": "alice", "password": new})
    assert login.location == "/lobby"


# --- lobby ----------------------------------------------------------------------------------------


def test_the_landing_page_invites_visitors_and_sends_players_to_the_lobby(
    client: FlaskClient,
) -> None:
    assert "Sign up and get free chips" in text(client.get("/"))
    register_page(client, "gina")
    assert client.get("/").location == "/lobby"


def test_the_top_up_button_appears_only_when_the_balance_is_low(
    app: Flask, player: FlaskClient
) -> None:
    assert 'id="topup-chips"' not in text(player.get("/lobby"))
    refused = post_form(player, "/lobby/topup", {"currency": "chips"})
    assert "only below" in follow(player, refused)
    app.config["LOW_BALANCE_CHIPS"] = 1_000_000
    lobby = text(player.get("/lobby"))
    assert 'id="topup-chips"' in lobby
    # A double click sends the form's one-time key twice: one top-up, and "topped up" to both.
    once = re.findall(r'name="idempotency_key" value="(\w+chips)"', lobby)
    assert len(once) == 1
    form = {"currency": "chips", "idempotency_key": once[0]}
    first = post_form(player, "/lobby/topup", form)
    page = follow(player, post_form(player, "/lobby/topup", form))
    assert first.status_code == 303 and "Topped up" in page
    assert 'data-testid="chips-balance">2,000<' in page
    assert 'id="topup-chips"' not in page and "next top-up comes tomorrow" in page
    bad = post_form(player, "/lobby/topup", {"currency": "gold"})
    assert "The form is garbled" in follow(player, bad)


def test_the_lobby_lists_the_last_rounds(player: FlaskClient) -> None:
    post_form(player, "/casino-war/rounds", {"bet": "5"})
    post_form(player, "/sota/games", {"stake": "2", "preset": "english", "seats": "2"})
    page = text(player.get("/lobby"))
    assert page.count('data-round="') == 2
    assert "Casino War" in page and "Sota" in page


# --- Casino War -----------------------------------------------------------------------------------


def test_the_table_shows_limits_and_chips(player: FlaskClient) -> None:
    page = text(player.get("/casino-war"))
    assert "Bets 1–\u2060500\xa0chips" in page and "tie pays 10 to 1" in page
    assert page.count('data-chips="') == 5
    assert 'accesskey="d"' in page
    words = " ".join(page.split())
    assert "House edge: 2.88 % if you always go to war, 3.70 % if you always surrender" in words
    assert "the tie bet 18.65 %" in words


def test_a_bet_deals_the_cards_and_shows_the_result(app: Flask, player: FlaskClient) -> None:
    planted = plant_server_seed(app, "alice", {0: False})
    response = post_form(player, "/casino-war/rounds", {"bet": "5", "tie_bet": "0"})
    assert response.location.startswith("/casino-war/rounds/")
    page = follow(player, response)
    mine, dealer = first_cards(planted.server_seed, planted.client_seed, 0)
    assert f'data-card="{mine}"' in page and f'data-card="{dealer}"' in page
    net = re.search(r'data-testid="net">([^<]+)<', page)
    assert net and net.group(1) in ("+5", "−5")
    balance = 1000 + (5 if net.group(1) == "+5" else -5)
    assert f'data-testid="new-balance">{balance:,}<' in page
    # Every amount the result names carries its unit, as the page drawn in place writes it.
    assert ("paid back 10\u00a0chips" if net.group(1) == "+5" else "paid back 0\u00a0chips") in page


def test_a_tie_offers_war_and_surrender_and_both_settle(app: Flask, player: FlaskClient) -> None:
    plant_server_seed(app, "alice", {0: True, 1: True})
    tied = follow(player, post_form(player, "/casino-war/rounds", {"bet": "10", "tie_bet": "1"}))
    assert "A tie!" in tied and 'id="go-to-war"' in tied and 'id="surrender"' in tied
    assert "raise 10" in tied and "get 5 back" in tied
    # the table page leads back to the open round, and the next bet must wait
    assert player.get("/casino-war").location == "/casino-war/rounds/1"
    table = {"Referer": "http://localhost/casino-war/rounds/1"}
    war = follow(
        player,
        post_form(player, "/casino-war/rounds/1/decision", {"choice": "war"}, headers=table),
    )
    assert "War!" in war and "burned" in war
    assert len(re.findall(r'class="card[^"]* mini"', war)) == 3
    assert "Tie bet 1: won 10\u00a0chips!" in war
    assert re.search(r"(You won the war|War tied: you win|Dealer won the war)", war)
    again = post_form(
        player,
        "/casino-war/rounds/1/decision",
        {"choice": "war"},
        headers={"Referer": "http://localhost/casino-war/rounds/1"},
    )
    assert "round 1 is settled; no decision is due" in follow(player, again)
    follow(player, post_form(player, "/casino-war/rounds", {"bet": "10"}))
    surrender = follow(
        player, post_form(player, "/casino-war/rounds/2/decision", {"choice": "surrender"})
    )
    assert "You surrendered" in surrender
    assert 'data-testid="net">−5<' in surrender


def test_bad_bets_on_the_page_are_explained_and_move_nothing(player: FlaskClient) -> None:
    cases = {
        "": "Please enter the ante",
        "-5": "The ante cannot be negative",
        "2.5": "whole number of chips",
        "0": "The ante must be from 1 to 500 whole chips.",
        "501": "The ante must be from 1 to 500 whole chips.",
        "100000000": "The ante must be from 1 to 500 whole chips.",
        "abc": "whole number of chips",
    }
    for value, message in cases.items():
        page = refused_bet(player, {"bet": value})
        assert message in page, value
        assert f'value="{value}"' in page, value  # the amount stays as typed
    tie = refused_bet(player, {"bet": "5", "tie_bet": "900"})
    assert "The tie bet must be 0 or from 1 to 500 whole chips." in tie
    assert 'data-testid="chips-balance">1,000<' in text(player.get("/lobby"))


def test_a_bet_over_the_limit_is_refused_without_a_note_on_affording_war(
    player: FlaskClient,
) -> None:
    # 600 of 1,000 chips would leave 400, short of a 600 raise: but 600 cannot be bet at all.
    for form in ({"bet": "600"}, {"bet": "450", "tie_bet": "501"}):
        page = refused_bet(player, form)
        assert "must be" in page and "from 1 to 500 whole chips." in page, form
        note = re.search(r'<p class="afford" id="afford"([^>]*)>(.*?)</p>', page)
        assert note and note.groups() == (' role="status" data-testid="afford" hidden', ""), form


def test_a_bet_or_a_stake_over_the_balance_is_explained_in_chips_and_sweets(
    app: Flask, player: FlaskClient
) -> None:
    alice = player.get("/api/v1/me").get_json()["user"]["id"]
    olga = add_user(app, "olga", "operator")
    session = db(app)
    try:
        money.adjust(session, olga, alice, "chips", -99_000, "leave 10 chips")
        money.adjust(session, olga, alice, "sweets", -97, "leave 3 sweets")
    finally:
        session.close()
    bet = refused_bet(player, {"bet": "20"})
    assert (
        "You have 10\u00a0chips, not enough for this bet of 20\u00a0chips. Bet less, or top up in "
        "the lobby once you are below 100\u00a0chips."
    ) in bet
    stake = follow(player, post_form(player, "/sota/games", {"stake": "5", "preset": "nordic"}))
    assert (
        "You have 3\u00a0sweets, not enough for a stake of 5\u00a0sweets. Stake less, or top up in "
        "the lobby once you are below 10\u00a0sweets."
    ) in stake
    plant_server_seed(app, "alice", {0: True})
    follow(player, post_form(player, "/casino-war/rounds", {"bet": "10"}))
    table = {"Referer": "http://localhost/casino-war/rounds/1"}
    war = follow(
        player,
        post_form(player, "/casino-war/rounds/1/decision", {"choice": "war"}, headers=table),
    )
    assert (
        "You have 0\u00a0chips, not enough for the raise of 10\u00a0chips. Surrender instead" in war
    )
    assert 'id="surrender"' in war  # the tie still waits: surrendering is still possible


def test_another_players_round_is_not_found(app: Flask, player: FlaskClient) -> None:
    post_form(player, "/casino-war/rounds", {"bet": "5"})
    other = app.test_client()
    register_page(other, "mallory")
    assert other.get("/casino-war/rounds/1").status_code == 404
    assert other.get("/history/1").status_code == 404
    refused = post_form(other, "/casino-war/rounds/1/decision", {"choice": "war"})
    assert refused.status_code == 404 and "no round 1 of yours" in text(refused)


def test_a_double_submitted_bet_form_deals_once(player: FlaskClient) -> None:
    token = csrf_token(player)
    form = {"csrf_token": token, "bet": "5", "idempotency_key": "a" * 32}
    first = player.post("/casino-war/rounds", data=form)
    second = player.post("/casino-war/rounds", data=form)
    assert first.location == second.location
    assert text(player.get("/history")).count('data-round="') == 1


def test_a_form_key_of_look_alike_digits_is_no_key_and_the_bet_is_dealt(
    player: FlaskClient,
) -> None:
    """The page draws its key in ASCII letters and digits; any other (full-width digits,
    Arabic-Indic ones, which ``str.isalnum`` takes) is as odd as a short one: the form acts
    without a key, not refused in the API's words about a header it never sent."""
    for key in ("\uff11" * 12, "\u0663" * 12):
        form = {"csrf_token": csrf_token(player), "bet": "5", "idempotency_key": key}
        dealt = player.post("/casino-war/rounds", data=form)
        assert dealt.status_code == 303, text(dealt)[:200]
    assert text(player.get("/history")).count('data-round="') == 2


# --- Sota -----------------------------------------------------------------------------------------


def test_the_sota_table_explains_every_rule_option(player: FlaskClient) -> None:
    page = text(player.get("/sota"))
    assert page.count('name="seats"') == 1  # one seat count for named and custom rule sets
    for option in (
        "deck",
        "war_down",
        "won_cards",
        "gather",
        "short",
        "multi_tie",
        "end",
        "max_tricks",
        "lead",
        "peace",
        "auto_war_twos",
        "underdog",
        "prisoners_of_war",
        "teams",
    ):
        assert f'name="rule_{option}"' in page, option
    for preset in ("nordic", "english", "tod_und_leben", "pjanitsa", "rauha", "syrian"):
        assert f'value="{preset}"' in page


def game_data(page: str) -> dict:  # type: ignore[type-arg]
    found = re.search(r'<script type="application/json" id="game-data">(.*?)</script>', page, re.S)
    assert found, "the game page has no data block"
    return json.loads(found.group(1))  # type: ignore[no-any-return]


def test_a_preset_game_is_played_and_animated_from_its_data_block(player: FlaskClient) -> None:
    response = post_form(player, "/sota/games", {"stake": "4", "preset": "nordic", "seats": "3"})
    page = follow(player, response)
    game = game_data(page)
    assert game["status"] == "settled" and game["seats"] == 3
    assert game["rules"]["seats"] == 3
    assert len(game["tricks"]) >= 1
    assert page.count('class="seat"') == 3
    for control in ("play-pause", "step", "step-back", "to-start", "to-end", "speed", "scrub"):
        assert f'id="{control}"' in page
    assert "js/sota.js" in page


def test_a_custom_rule_set_is_played_as_given(player: FlaskClient) -> None:
    form = {
        "stake": "3",
        "preset": "custom",
        "seats": "4",
        "rule_deck": "jokers54",
        "rule_war_down": "1",
        "rule_won_cards": "won_pile",
        "rule_gather": "shuffled",
        "rule_short": "last_card_up",
        "rule_multi_tie": "all",
        "rule_end": "all_cards",
        "rule_max_tricks": "500",
        "rule_lead": "20",
        "rule_teams": "on",
        "rule_peace": "on",
    }
    game = game_data(follow(player, post_form(player, "/sota/games", form)))
    rules = game["rules"]
    assert rules["seats"] == 4 and rules["deck"] == "jokers54" and rules["war_down"] == 1
    assert rules["teams"] is True and rules["peace"] is True and rules["underdog"] is False
    assert rules["max_tricks"] == 500 and rules["lead"] == 20


def test_bad_sota_forms_are_explained(player: FlaskClient) -> None:
    cases = [
        ({"stake": "x", "preset": "nordic"}, "The stake must be a whole number of sweets, like"),
        ({"stake": "0", "preset": "nordic"}, "stake must be a whole number of sweets from"),
        ({"stake": "5", "preset": "klondike"}, "Pick one of the rule sets this table offers: "),
        (
            {"stake": "5", "preset": "custom", "rule_deck": "tarot"},
            "Choose one of the options offered for “Deck”.",
        ),
        (
            {"stake": "5", "preset": "custom", "rule_max_tricks": "lots"},
            "Trick limit must be a whole",
        ),
        (
            {"stake": "5", "preset": "custom", "rule_max_tricks": "-3"},
            "Trick limit cannot be negative",
        ),
        (
            {"stake": "5", "preset": "custom", "rule_lead": "10" * 12},
            "Winning lead is far too large",
        ),
        ({"stake": "-3", "preset": "nordic"}, "The stake cannot be negative"),
        ({"stake": "1" + "0" * 23, "preset": "nordic"}, "The stake is far too large"),
        ({"stake": "5", "preset": "custom", "rule_teams": "on"}, "Teams needs 4 seats"),
    ]
    for form, message in cases:
        assert message in follow(player, post_form(player, "/sota/games", form)), form
    assert 'data-testid="sweets-balance">100<' in text(player.get("/lobby"))


def test_prisoners_of_war_asks_for_moves_until_the_game_ends(player: FlaskClient) -> None:
    form = {
        "stake": "1",
        "preset": "custom",
        "rule_prisoners_of_war": "on",
        "rule_max_tricks": "60",
    }
    response = post_form(player, "/sota/games", form)
    url = response.location
    page = follow(player, response)
    moves = 0
    while game_data(page)["status"] == "awaiting_move":
        pending = game_data(page)["pending"]
        assert "Your move" in page and page.count('name="up"') == len(pending["options"])
        data = {"up": pending["options"][0], "down": pending["options"][1 : pending["count"]]}
        page = follow(player, post_form(player, f"{url}/moves", data))
        moves += 1
        assert moves < 200
    assert game_data(page)["status"] == "settled"
    assert 'id="game-result"' in page
    refused = follow(player, post_form(player, f"{url}/moves", {"up": "AS"}))
    assert "no move is due" in refused


@pytest.mark.parametrize("peace", [False, True])
def test_the_move_form_says_which_cards_the_dealers_choice_picks(
    player: FlaskClient, peace: bool
) -> None:
    """Under Rauha the dealer lays its lowest card face up (docs/rules.md, rule 5), and the
    form picks that card for the player, but said it had picked the highest."""
    form = {"stake": "1", "preset": "custom", "rule_prisoners_of_war": "on"}
    if peace:
        form["rule_peace"] = "on"
    response = post_form(player, "/sota/games", form)
    url = response.location
    page = follow(player, response)
    said = []
    while game_data(page)["status"] == "awaiting_move" and len(said) < 5:
        options = game_data(page)["pending"]["options"]
        up = re.search(r'name="up" value="(\w\w)" checked', page)
        down = re.findall(r'name="down" value="(\w\w)" checked', page)
        assert up, "the form picks no card to lay face up"
        ranks = sorted(RANKS.index(card[0]) for card in options)
        best, worst = (ranks[0], ranks[-1]) if peace else (ranks[-1], ranks[0])
        assert RANKS.index(up.group(1)[0]) == best
        about = re.search(r'<p id="move-about">(.*?)</p>', page, re.S)
        assert about
        words = " ".join(re.sub(r"<[^>]+>", " ", about.group(1)).split())
        said.append(words)
        assert ("the lowest face up" if peace else "the highest face up") in words, words
        if down:
            assert ("the highest face down" if peace else "the lowest face down") in words
            assert worst in {RANKS.index(card[0]) for card in down}
        data = {"up": up.group(1), "down": down}
        page = follow(player, post_form(player, f"{url}/moves", data))
    assert said, "the game asked for no move"


def test_a_move_form_sent_from_two_tabs_lays_the_cards_once(
    app: Flask, player: FlaskClient
) -> None:
    """Two tabs showing one choice (each form with its own key) laid the same cards twice when
    they fit the next choice too: the form sends the number of the choice it was drawn for."""
    move = plant_seed_repeating_a_move(app, "alice")
    form = {"stake": "1", "preset": "custom", "rule_prisoners_of_war": "on"}
    response = post_form(player, "/sota/games", form)
    url = response.location
    page = follow(player, response)
    assert game_data(page)["pending"]["move"] == 0
    assert '<input type="hidden" name="move" value="0">' in page
    first = {"up": move[-1], "down": move[:-1], "move": "0", "idempotency_key": "firsttab"}
    page = follow(player, post_form(player, f"{url}/moves", first))
    assert game_data(page)["pending"]["move"] == 1
    assert 'data-move="1"' in page and 'name="move" value="1"' in page
    second = {**first, "idempotency_key": "secondtab"}
    back = {"Referer": f"http://localhost{url}"}  # a refused form goes back to its page
    refused = follow(player, post_form(player, f"{url}/moves", second, headers=back))
    game_id = url.rsplit("/", 1)[1]
    assert f"game {game_id} waits for move 1, not move 0" in refused
    assert game_data(refused)["pending"]["move"] == 1
    assert game_data(refused)["tricks"] == game_data(page)["tricks"]


# --- history and receipts -------------------------------------------------------------------------


def test_history_filters_by_game_and_pages(player: FlaskClient) -> None:
    for _ in range(3):
        post_form(player, "/sota/games", {"stake": "1", "preset": "kids_15_min"})
    for _ in range(21):
        post_form(player, "/casino-war/rounds", {"bet": "1"})
    first = text(player.get("/history"))
    assert first.count('data-round="') == 20 and 'rel="next"' in first
    older = re.search(r'href="(/history\?before=\d+)" rel="next"', first)
    assert older
    second = text(player.get(older.group(1).replace("&amp;", "&")))
    assert second.count('data-round="') == 4 and "← Newest" in second
    only_sota = text(player.get("/history?game=sota"))
    assert only_sota.count('data-round="') == 3
    assert "Casino War</td>" not in only_sota


def test_a_round_page_shows_its_cards_receipt_and_how_to_verify(
    app: Flask, player: FlaskClient
) -> None:
    plant_server_seed(app, "alice", {0: False})
    post_form(player, "/casino-war/rounds", {"bet": "5"})
    page = text(player.get("/history/1"))
    assert "Signed receipt" in page
    receipt = re.search(r'data-testid="receipt" tabindex="0">(.*?)</pre>', page, re.S)
    assert receipt
    document = json.loads(receipt.group(1).replace("&#34;", '"').replace("&quot;", '"'))
    assert document["type"] == "round" and document["round_id"] == 1
    assert re.search(r'data-testid="signature">[0-9a-f]{128}<', page)
    key = player.get("/api/v1/fairness/public-key").get_json()["public_key_hex"]
    command = re.search(r"python3 verify\.pyz --public-key <span[^>]*>([0-9a-f]{64})</span>", page)
    assert command and command.group(1) == key


# --- fairness -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "signed_bets", "bet_in_your_name"),
    [
        ("en", "every bet, decision", "the casino could bet a round in your name"),
        ("fi", "jokaisen panoksesi, päätöksesi", "kasino voisi pelata pelikierroksen nimissäsi"),
        ("nb", "hver innsats, hvert valg", "kasinoet satse en runde i ditt navn"),
        ("pt", "cada aposta, decisão", "o cassino poderia apostar uma rodada em seu nome"),
    ],
)
def test_the_fairness_page_says_a_players_key_signs_bets_and_what_playing_without_one_leaves_open(
    player: FlaskClient, language: str, signed_bets: str, bet_in_your_name: str
) -> None:
    # A registered key signs bets too (docs/fairness.md, "Bets the player signs"); the page
    # offering the key said only decisions and moves, and not why a player without one should
    # make one: an operator can bet a round in their name unnoticed.
    page = text(player.get("/fairness", headers={"Accept-Language": language}))
    section = page[page.index('id="signing-key"') :]
    assert signed_bets in section and bet_in_your_name in section


def test_the_fairness_page_shows_the_active_pair_and_rotates_it(
    app: Flask, player: FlaskClient
) -> None:
    plant_server_seed(app, "alice", {0: False})
    page = text(player.get("/fairness"))
    commitment = re.search(r'data-testid="commitment">([0-9a-f]{64})<', page)
    upcoming = re.search(r'data-testid="next-commitment">([0-9a-f]{64})<', page)
    assert commitment and upcoming
    assert 'data-testid="next-nonce">0<' in page
    post_form(player, "/casino-war/rounds", {"bet": "5"})
    rotated = follow(
        player, post_form(player, "/fairness/rotate", {"client_seed": "my lucky seed"})
    )
    seed = re.search(r"its server seed was ([0-9a-f]{64})", rotated)
    assert seed
    assert hashlib.sha256(bytes.fromhex(seed.group(1))).hexdigest() == commitment.group(1)
    assert f'data-testid="commitment">{upcoming.group(1)}<' in rotated
    assert 'data-testid="client-seed">my lucky seed<' in rotated
    key = player.get("/api/v1/fairness/public-key").get_json()["public_key_hex"]
    pinned_command = r"python3 verify\.pyz --public-key <span[^>]*>([0-9a-f]{64})</span>"
    commands = re.findall(pinned_command, rotated)
    assert len(commands) == 2 and set(commands) == {key}  # the general one and the pair's
    assert f'data-service-public-key="{key}"' in rotated
    assert "js/verify.js" in rotated and "js/sota_engine.js" in rotated
    # Served disabled, enabled by verify.js: a click before the script has run did nothing.
    assert re.search(r"<button [^>]*data-verify disabled", rotated)
    assert re.search(r"<button [^>]*data-export-records disabled", rotated)
    assert "data-export-records" in rotated and "js/records.js" in rotated


def test_the_pages_shown_before_play_carry_the_signed_commitment(
    app: Flask, player: FlaskClient
) -> None:
    plant_server_seed(app, "alice", {0: True})
    active = player.get("/api/v1/fairness/seed-pair").get_json()
    for url in ("/fairness", "/casino-war", "/sota"):
        page = text(player.get(url))
        shown = re.search(
            r'<script type="application/json" data-signed-commitment>(.*?)</script>', page, re.S
        )
        assert shown, url
        signed = json.loads(shown.group(1))
        assert signed["document"]["commitment"] == active["commitment"], url
        assert signed["document"]["type"] == "commitment" and len(signed["signature"]) == 128
    # The tie's decision form tells records.js which round, pair and nonce the choice is for.
    post_form(player, "/casino-war/rounds", {"bet": "5"})
    table = text(player.get("/casino-war/rounds/1"))
    form = re.search(r'<form [^>]*class="decision"[^>]*>', table)
    assert form
    for attribute in (
        "data-record-action",
        'data-game="casino_war"',
        'data-round-id="1"',
        f'data-seed-pair-id="{active["seed_pair_id"]}"',
        'data-nonce="0"',
    ):
        assert attribute in form.group(0)


def test_a_refused_decision_goes_back_to_a_page_marked_as_a_refusal(
    app: Flask, player: FlaskClient
) -> None:
    """records.js records a decision posted plainly only when the answer's page shows no
    refusal (data-refusal): the accepted one's page has none, the refused one's has it."""
    plant_server_seed(app, "alice", {0: True})
    post_form(player, "/casino-war/rounds", {"bet": "5"})
    accepted = follow(player, post_form(player, "/casino-war/rounds/1/decision", {"choice": "war"}))
    assert "data-refusal" not in accepted
    again = {"choice": "surrender"}
    refused = follow(player, post_form(player, "/casino-war/rounds/1/decision", again))
    flashed = re.search(r'<p class="flash error"[^>]*\bdata-refusal\b[^>]*>(.*?)</p>', refused)
    assert flashed and flashed.group(1) == "round 1 is settled; no decision is due"
    missing = post_form(player, "/casino-war/rounds/99/decision", again)
    assert missing.status_code == 404 and "data-refusal" in text(missing)  # no round: refused


VERIFY_ROUND = re.compile(r'<a class="button primary" id="verify-round" href="([^"]*)">([^<]*)</a>')


def test_a_receipt_s_verify_button_leads_to_its_own_pair_or_to_the_rotation_it_waits_for(
    app: Flask, player: FlaskClient
) -> None:
    """The receipt's "Verify this round" led to the fairness page's revealed pairs whatever the
    round: before its pair was revealed that list said "None yet" or held only other pairs, and
    after, the player looked for the round's pair among all of them. Before the reveal the
    button says what comes first and leads to the rotation; after it, to the round's own pair."""
    plant_server_seed(app, "alice", {0: False})
    post_form(player, "/casino-war/rounds", {"bet": "5"})
    before = VERIFY_ROUND.search(text(player.get("/history/1")))
    assert before and before.groups() == (
        "/fairness#rotation",
        "Reveal the seed pair to verify this round",
    )
    assert 'id="rotation"' in text(player.get("/fairness"))
    post_form(player, "/fairness/rotate", {"client_seed": "mine"})
    after = VERIFY_ROUND.search(text(player.get("/history/1")))
    assert after and after.groups() == ("/fairness#pair-1", "Verify this round")
    assert '<article class="revealed-pair" id="pair-1"' in text(player.get("/fairness"))


def test_rotation_is_refused_while_a_round_is_open(app: Flask, player: FlaskClient) -> None:
    plant_server_seed(app, "alice", {0: True})
    post_form(player, "/casino-war/rounds", {"bet": "5"})
    refused = follow(player, post_form(player, "/fairness/rotate", {"client_seed": "x"}))
    assert "still open" in refused


def test_while_a_round_waits_the_rotation_form_says_so_and_links_its_table(
    app: Flask, player: FlaskClient
) -> None:
    """A rotation refused for an open round flashed "round 1 is still open; finish it before
    rotating" at the top of the page, and nothing on it led to round 1: a tie, or a Sota game
    waiting for a prisoners' move, left in another tab was for the player to find. The form
    says so before it is sent, with the way back to that table."""
    settled = text(player.get("/fairness"))
    assert "data-round-waiting" not in settled
    plant_server_seed(app, "alice", {0: True})
    post_form(player, "/casino-war/rounds", {"bet": "5"})
    page = text(player.get("/fairness"))
    waiting = re.search(r'<p class="flash info" data-round-waiting>(.*?)</p>', page, re.S)
    assert waiting, "no word of the waiting round beside the rotation form"
    assert "round 1 is still open; finish it before rotating" in waiting.group(1)
    assert 'href="/casino-war/rounds/1"' in waiting.group(1)
    assert page.index("data-round-waiting") < page.index('id="rotate"')
    post_form(player, "/casino-war/rounds/1/decision", {"choice": "surrender"})
    assert "data-round-waiting" not in text(player.get("/fairness"))


def test_the_bundle_downloads_as_a_named_json_file(app: Flask, player: FlaskClient) -> None:
    plant_server_seed(app, "alice", {0: False})
    post_form(player, "/casino-war/rounds", {"bet": "5"})
    post_form(player, "/fairness/rotate", {"client_seed": "abc"})
    pair = re.search(r'data-seed-pair="(\d+)"', text(player.get("/fairness")))
    assert pair
    response = player.get(f"/fairness/seed-pairs/{pair.group(1)}/bundle.json?download=1")
    assert response.status_code == 200
    assert f'filename="bundle-{pair.group(1)}.json"' in response.headers["Content-Disposition"]
    bundle = response.get_json()
    assert bundle["reveal"]["document"]["client_seed"] != "abc"
    assert len(bundle["rounds"]) == 1


def test_the_verifier_downloads_with_the_digest_the_page_shows(client: FlaskClient) -> None:
    page = text(client.get("/fairness"))
    assert "Log in" in page and 'data-testid="public-key"' in page
    digest = re.search(r'data-testid="verifier-sha256">([0-9a-f]{64})<', page)
    with client.get("/fairness/verify.pyz") as response:
        assert response.status_code == 200
        assert response.headers["Content-Disposition"] == "attachment; filename=verify.pyz"
        body = response.get_data()
    assert digest and hashlib.sha256(body).hexdigest() == digest.group(1)
    assert body == build()  # the zipapp of these very sources, rebuilt: the same bytes


# --- tables whose limits are equal ----------------------------------------------------------------


def _one_amount_tables(app: Flask) -> None:
    """Both tables take one amount only: an ante of 1 chip, a stake of 1 sweet."""
    olga = add_user(app, "olga", "operator")
    session = db(app)
    try:
        settings.update_table(session, olga, "casino_war", {"min_bet": 100, "max_bet": 100})
        settings.update_table(session, olga, "sota", {"min_stake": 1, "max_stake": 1})
    finally:
        session.close()


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", ["Bet: 1 chip", "The ante is 1 chip at this table.", "The ante must be 1 chip."]),
        ("fi", ["Panos: 1 pelimerkki", "Panos on tässä pöydässä 1 pelimerkki."]),
        ("nb", ["Innsats: 1 sjetong", "Anten er 1 sjetong ved dette bordet."]),
        ("pt", ["Aposta: 1 ficha", "A aposta inicial nesta mesa é 1 ficha."]),
    ],
)
def test_a_casino_war_table_whose_limits_are_equal_names_its_one_bet(
    app: Flask, player: FlaskClient, language: str, said: list[str]
) -> None:
    """Limits of 1 and 1 read "Bet: 1 chip", not "Bets 1–1 chips", and so does every word of
    the page on the ante: its help, and the refusal of another amount."""
    _one_amount_tables(app)
    player.set_cookie("lang", language)
    page = text(player.get("/casino-war")).replace("\xa0", " ")
    assert not re.search(r"1–\u2060?1(?!\d)|from 1 to 1(?!\d)", page)
    for words in said:
        assert words in page, words
    if language == "en":
        refused = refused_bet(player, {"bet": "2"}).replace("\xa0", " ")
        assert "The ante must be 1 chip." in refused and "from 1 to 1" not in refused
        tie = refused_bet(player, {"bet": "1", "tie_bet": "2"}).replace("\xa0", " ")
        assert "The tie bet must be 0 or 1 chip." in tie


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", ["The stake is 1 sweet at this table.", "Stake must be 1 sweet"]),
        ("fi", ["Panos on tässä pöydässä 1 karkki.", "Panoksen on oltava 1 karkki"]),
        ("nb", ["Innsatsen er 1 godteri ved dette bordet."]),
        ("pt", ["A aposta nesta mesa é 1 bala."]),
    ],
)
def test_a_sota_table_whose_limits_are_equal_names_its_one_stake(
    app: Flask, player: FlaskClient, language: str, said: list[str]
) -> None:
    _one_amount_tables(app)
    player.set_cookie("lang", language)
    page = text(player.get("/sota")).replace("\xa0", " ")
    assert not re.search(r"1–\u2060?1(?!\d)|from 1 to 1(?!\d)", page)
    for words in said:
        assert words in page, words
    rules = text(player.get("/rules/sota")).replace("\xa0", " ")
    assert not re.search(r"1–\u2060?1(?!\d)|from 1 to 1(?!\d)", rules)
    if language == "en":
        assert "At this table now: a stake of 1 sweet" in rules
        table = {"Referer": "http://localhost/sota"}
        refused = post_form(
            player, "/sota/games", {"stake": "2", "preset": "nordic"}, headers=table
        )
        assert "stake must be 1 sweet" in follow(player, refused).replace("\xa0", " ")
