"""Table settings apply to new rounds only: an open round keeps the rules it started with."""

from __future__ import annotations

import html
import json
import re

import pytest
from flask import Flask
from operator_support import add_user
from operator_support import bearer
from operator_support import client_as
from web_support import first_cards
from web_support import plant_server_seed
from web_support import post_form

from sota_casino.core import casino_war
from sota_casino.core import fairness
from sota_casino.core.cards import canonical_shoe
from sota_casino.web.openapi import openapi_document


def test_a_tie_opened_under_six_decks_settles_under_those_rules_after_the_table_changes(
    app: Flask,
) -> None:
    add_user(app, "alice", "player")
    add_user(app, "olga", "operator")
    player, operator = bearer(app, "alice"), bearer(app, "olga")
    client = app.test_client()
    planted = plant_server_seed(app, "alice", {0: True})

    opened = client.post("/api/v1/casino-war/rounds", json={"bet": 1000}, headers=player)
    assert opened.status_code == 201, opened.get_json()
    round_ = opened.get_json()
    assert round_["status"] == "awaiting_decision"
    original = round_["rules"]
    assert (original["decks"], original["bonus"]) == (6, "none")

    changed = client.put(
        "/api/v1/operator/tables/casino_war",
        json={"decks": 2, "bonus": "ante", "tie_payout": 5, "burn": 0},
        headers=operator,
    )
    assert changed.status_code == 200, changed.get_json()

    settled = client.post(
        f"/api/v1/casino-war/rounds/{round_['id']}/decision", json={"choice": "war"}, headers=player
    )
    assert settled.status_code == 200, settled.get_json()
    receipt = client.get(f"/api/v1/rounds/{round_['id']}/receipt", headers=player).get_json()
    document = receipt["document"]
    assert document["rules"] == original
    # The cards are those of the round's own six-deck shoe with three burned cards.
    assert tuple(document["cards"]) == first_cards(
        planted.server_seed, planted.client_seed, 0, count=7
    )
    # And the payout follows the old rules (no ante bonus), as a verifier replays it.
    seeds = fairness.Seeds(planted.server_seed, planted.client_seed, 0)
    shoe = fairness.PartialShuffle(canonical_shoe("standard52", 6), fairness.Stream(seeds))
    replayed = casino_war.replay(
        casino_war.TableRules.from_dict(original), shoe.prefix, document["stakes"], ["war"]
    )
    assert document["payout"] == replayed.payout

    # The next round is dealt under the new settings.
    later = client.post("/api/v1/casino-war/rounds", json={"bet": 1000}, headers=player).get_json()
    assert (later["rules"]["decks"], later["rules"]["bonus"], later["rules"]["burn"]) == (
        2,
        "ante",
        0,
    )


def test_a_bet_naming_the_rules_shown_before_the_table_changed_is_refused_with_409(
    app: Flask,
) -> None:
    """A bet names the rules the player saw (the page sends those it shows): once the table
    changed they are not the rules it would be played under, so it is refused and nothing
    moves, instead of dealing a round under rules the player never saw."""
    add_user(app, "alice", "player")
    add_user(app, "olga", "operator")
    player, operator = bearer(app, "alice"), bearer(app, "olga")
    client = app.test_client()
    first = client.post("/api/v1/casino-war/rounds", json={"bet": 1000}, headers=player)
    shown = first.get_json()["rules"]  # every option, as the table's page shows them
    body = {"bet": 1000, "rules": shown}
    placed = client.post("/api/v1/casino-war/rounds", json=body, headers=player)
    assert placed.status_code == 201, placed.get_json()
    assert placed.get_json()["rules"] == shown

    changed = client.put(
        "/api/v1/operator/tables/casino_war", json={"tie_payout": 8}, headers=operator
    )
    assert changed.status_code == 200, changed.get_json()
    balance = placed.get_json()["balances"]["chips"]
    refused = client.post("/api/v1/casino-war/rounds", json=body, headers=player)
    assert refused.status_code == 409, refused.get_json()
    assert refused.get_json()["error"]["code"] == "rules_changed"
    assert "(tie_payout 10 → 8)" in refused.get_json()["error"]["message"]
    # In another language only the words change: the option and its values are the API's.
    finnish = client.post(
        "/api/v1/casino-war/rounds", json=body, headers={**player, "Accept-Language": "fi"}
    )
    assert finnish.get_json()["error"]["message"] == (
        "Pöydän säännöt ovat muuttuneet sen jälkeen, kun ne näytettiin sinulle (tie_payout 10 → "
        "8): katso ne uudelleen ennen kuin asetat panoksen."
    )
    assert client.get("/api/v1/me", headers=player).get_json()["balances"]["chips"] == balance
    again = {**body, "rules": {**shown, "tie_payout": 8}}
    assert client.post("/api/v1/casino-war/rounds", json=again, headers=player).status_code == 201


def test_a_script_reads_the_rules_its_page_would_show_before_its_first_bet(app: Flask) -> None:
    """The rules a bet names come from the table, not from a round already played under them:
    the answer is the page's own, and a bet naming it is dealt under exactly those rules."""
    alice = client_as(app, add_user(app, "alice", "player"))
    add_user(app, "olga", "operator")
    anyone = app.test_client()
    table = anyone.get("/api/v1/tables/casino_war")
    assert table.status_code == 200, table.get_json()
    shown = json.loads(shown_rules(alice.get("/casino-war").get_data(as_text=True)))
    assert table.get_json() == {"name": "casino_war", "settings": shown, "preset_rules": {}}
    player = bearer(app, "alice")
    bet = "/api/v1/casino-war/rounds"
    first = anyone.post(bet, json={"bet": 1000, "rules": shown}, headers=player)
    assert first.status_code == 201, first.get_json()
    assert first.get_json()["rules"] == shown

    olga = bearer(app, "olga")
    changed = anyone.put("/api/v1/operator/tables/casino_war", json={"burn": 0}, headers=olga)
    assert changed.status_code == 200, changed.get_json()
    now = anyone.get("/api/v1/tables/casino_war").get_json()["settings"]
    assert now == {**shown, "burn": 0}
    refused = anyone.post(bet, json={"bet": 1000, "rules": shown}, headers=player)
    assert (refused.status_code, refused.get_json()["error"]["code"]) == (409, "rules_changed")
    placed = anyone.post(bet, json={"bet": 1000, "rules": now}, headers=player)
    assert placed.status_code == 201, placed.get_json()
    assert placed.get_json()["rules"] == now

    sota = anyone.get("/api/v1/tables/sota").get_json()
    assert sota["name"] == "sota" and "presets" in sota["settings"]
    unknown = anyone.get("/api/v1/tables/blackjack")
    assert unknown.status_code == 404
    assert unknown.get_json()["error"]["message"] == (
        "no table 'blackjack'; tables: casino_war, sota"
    )


def shown_rules(page: str) -> str:
    """The rules the table page's bet form sends (its hidden ``rules`` field), as sent."""
    found = re.search(r"<input type=\"hidden\" name=\"rules\" value='([^']*)'>", page)
    assert found, "the bet form sends no rules"
    return html.unescape(found[1])


def test_the_tables_plain_form_sends_the_rules_it_shows_and_a_change_since_refuses_it(
    app: Flask,
) -> None:
    """Without the page's script the form sends the rules the page shows too: a change since
    the page was drawn refuses the bet, moving nothing, and the table is drawn again with the
    new rules and the refusal, its form sending them."""
    alice = client_as(app, add_user(app, "alice", "player"))
    add_user(app, "olga", "operator")
    drawn = alice.get("/casino-war").get_data(as_text=True)
    assert "tie pays 10 to 1" in drawn
    assert json.loads(shown_rules(drawn))["tie_payout"] == 10
    held = alice.get("/api/v1/balances").get_json()

    changed = app.test_client().put(
        "/api/v1/operator/tables/casino_war", json={"tie_payout": 8}, headers=bearer(app, "olga")
    )
    assert changed.status_code == 200, changed.get_json()
    refused = post_form(alice, "/casino-war/rounds", {"bet": "10", "rules": shown_rules(drawn)})
    assert refused.status_code == 409
    redrawn = refused.get_data(as_text=True)
    assert "rules changed since this page was shown, so your bet was not placed" in redrawn
    assert "tie pays 8 to 1" in redrawn
    assert alice.get("/api/v1/balances").get_json() == held
    assert alice.get("/api/v1/rounds").get_json()["rounds"] == []

    placed = post_form(alice, "/casino-war/rounds", {"bet": "10", "rules": shown_rules(redrawn)})
    assert placed.status_code == 303, placed.get_data(as_text=True)
    round_id = placed.location.rsplit("/", 1)[-1]
    played = alice.get(f"/api/v1/casino-war/rounds/{round_id}").get_json()
    assert played["rules"]["tie_payout"] == 8


@pytest.mark.parametrize(
    ("garbled", "status"),
    [("", 422), ("{", 422), ("[" * 5000, 422), ("[]", 409), ('{"tie_payout": 10}', 409)],
)
def test_a_bet_form_with_garbled_rules_is_refused_and_bets_nothing(
    app: Flask, garbled: str, status: int
) -> None:
    """Only a request made by hand sends rules that are not the page's: refused, nothing bet."""
    alice = client_as(app, add_user(app, "alice", "player"))
    refused = post_form(alice, "/casino-war/rounds", {"bet": "10", "rules": garbled})
    assert refused.status_code == status
    assert alice.get("/api/v1/rounds").get_json()["rounds"] == []


@pytest.mark.parametrize(
    ("method", "path"),
    [("put", "/api/v1/operator/tables/{}"), ("post", "/api/v1/operator/approvals/tables/{}")],
)
@pytest.mark.parametrize(
    ("table", "body"),
    [("casino_war", {"min_stake": 5}), ("sota", {"decks": 2}), ("sota", {"min_stake": 10**9})],
)
def test_a_change_the_schema_allows_but_the_table_refuses_is_a_422_the_document_declares(
    app: Flask, method: str, path: str, table: str, body: dict[str, int]
) -> None:
    """The body's schema covers both tables' options (the path names the table), and a minimum
    is checked against the maximum it is merged with: the document must say so on the 422,
    and the refusal names the option it is about as the body does."""
    add_user(app, "olga", "operator")
    url = path.format(table)
    answer = getattr(app.test_client(), method)(url, json=body, headers=bearer(app, "olga"))
    assert answer.status_code == 422, answer.get_json()
    assert answer.get_json()["error"]["code"] == "invalid_rules"
    assert answer.get_json()["error"]["field"] == next(iter(body))
    document = openapi_document(app)
    template = path.removeprefix("/api/v1").format("{name}")  # the document's paths
    declared = document["paths"][template][method]["responses"]["422"]
    assert declared.get("x-beyond-schema"), f"{method.upper()} {template} declares no such rule"


@pytest.mark.parametrize(
    ("method", "path"),
    [("put", "/api/v1/operator/tables/{}"), ("post", "/api/v1/operator/approvals/tables/{}")],
)
@pytest.mark.parametrize(
    ("table", "first", "then"),
    [
        ("casino_war", {"min_bet": 10_000}, {"max_bet": 5_000}),
        ("sota", {"min_stake": 50}, {"max_stake": 20}),
    ],
)
def test_a_maximum_below_the_present_minimum_is_refused_naming_the_maximum_the_body_sent(
    app: Flask,
    method: str,
    path: str,
    table: str,
    first: dict[str, int],
    then: dict[str, int],
) -> None:
    """The tables' check names the minimum it compares: the body that sent only the maximum
    is told about the maximum, the field it can change."""
    add_user(app, "olga", "operator")
    client, olga = app.test_client(), bearer(app, "olga")
    url = path.format(table)
    assert client.put(url.replace("/approvals", ""), json=first, headers=olga).status_code == 200
    answer = getattr(client, method)(url, json=then, headers=olga)
    assert answer.status_code == 422, answer.get_json()
    error = answer.get_json()["error"]
    assert (error["code"], error["field"]) == ("invalid_rules", next(iter(then)))
