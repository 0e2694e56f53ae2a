"""A Sota game's "Deal again" form, as sent without JavaScript: the same stake and rule set."""

from __future__ import annotations

import json
import re

from flask.testing import FlaskClient
from web_support import post_form

from sota_casino.services import money


def game_of(client: FlaskClient, response) -> dict:  # type: ignore[no-untyped-def,type-arg]
    assert response.status_code == 303, response.get_data(as_text=True)
    page = client.get(response.location).get_data(as_text=True)
    data = re.search(r'<script type="application/json" id="game-data">(.*?)</script>', page, re.S)
    assert data, page
    return dict(json.loads(data.group(1)))


def test_deal_again_plays_the_same_stake_and_rules(player: FlaskClient) -> None:
    first = game_of(
        player, post_form(player, "/sota/games", {"stake": "3", "preset": "english", "seats": "3"})
    )
    page = player.get(f"/sota/games/{first['id']}").get_data(as_text=True)
    assert 'id="deal-again-form"' in page and f'name="again" value="{first["id"]}"' in page
    # Beside it, the way to a game of other rules or stake: the table's form.
    assert first["status"] == "settled"
    assert '<a href="/sota">other rules or stake</a>' in page
    again = game_of(player, post_form(player, "/sota/games", {"again": str(first["id"])}))
    assert again["id"] != first["id"]
    assert again["stake"] == 3 and again["rules"] == first["rules"]


def test_deal_again_names_the_preset_a_two_seat_game_played(player: FlaskClient) -> None:
    first = game_of(player, post_form(player, "/sota/games", {"stake": "2", "preset": "rauha"}))
    page = player.get(f"/sota/games/{first['id']}").get_data(as_text=True)
    body = re.search(r"data-body='(.*?)'", page)
    assert body and json.loads(body.group(1)) == {"stake": 2, "preset": "rauha"}


def test_deal_again_of_a_game_that_is_not_yours_is_refused_and_changes_nothing(
    app,
    player: FlaskClient,  # type: ignore[no-untyped-def]
) -> None:
    session = app.extensions["sota_casino.sessionmaker"]()
    before = money.balances(session, 1)
    session.close()
    for again in ("999999", "x1", "1" * 30):
        response = post_form(player, "/sota/games", {"again": again})
        assert response.status_code in (303, 404, 422), again
    session = app.extensions["sota_casino.sessionmaker"]()
    assert money.balances(session, 1) == before
    session.close()
