"""Every route that names a round or a seed pair, asked by another player (or by staff, who read
players' rounds in the console only): always the same 404 as for a round or pair that does not
exist (never 403, which would say it exists, never 200), and nothing changes.

The routes are read from the URL map, so a new route with a ``round_id`` or ``seed_pair_id``
is checked the moment it exists; an id argument of another name fails until it is added here.
"""

from __future__ import annotations

import json
import re
from itertools import product
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from operator_support import add_user
from operator_support import bearer as staff_bearer
from operator_support import client_as
from web_support import bearer
from web_support import csrf_token
from web_support import plant_server_seed
from web_support import post_form
from web_support import register_page

#: An id that belongs to nobody, to compare each answer with.
NOBODY = 987654
STAFF_PREFIXES = ("/operator", "/api/v1/operator")
SAFE = {"HEAD", "OPTIONS"}
#: The public log's checkpoints, the tables' settings and the scripts' words are everybody's: a
#: size, a table's name or a language is no one's id.
PUBLIC_PREFIXES = ("/api/v1/transparency/", "/api/v1/tables/", "/language/")
#: What each changing route is sent (API, page form), so the request is valid but for its owner.
BODIES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "decision": ({"choice": "war"}, {"choice": "war"}),
    "moves": ({"cards": ["AS"]}, {"up": "AS"}),
}


def alices_things(app: Flask, alice: FlaskClient) -> dict[str, list[int]]:
    """Alice plays: a settled Casino War round and a Sota game on a pair she then reveals, and
    a tie that waits for her decision on the next pair. Return her round and seed pair ids."""
    plant_server_seed(app, "alice", {0: False})
    post_form(alice, "/casino-war/rounds", {"bet": "5"})
    post_form(alice, "/sota/games", {"stake": "2", "preset": "english"})
    post_form(alice, "/fairness/rotate", {"client_seed": "alice's seed"})
    plant_server_seed(app, "alice", {0: True})
    post_form(alice, "/casino-war/rounds", {"bet": "5"})
    rounds = alice.get("/api/v1/rounds").get_json()["rounds"]
    assert [r["status"] for r in rounds] == ["awaiting_decision", "settled", "settled"]
    pair = alice.get("/api/v1/fairness/seed-pair").get_json()["seed_pair_id"]
    return {"round_id": [r["id"] for r in rounds], "seed_pair_id": [pair - 1, pair]}


def ask(mallory: FlaskClient, auth: dict[str, str], rule: Any, method: str, value: int) -> Any:
    url = rule.build({name: value for name in rule.arguments}, append_unknown=False)[1]
    api_body, form = BODIES.get(rule.rule.rsplit("/", 1)[-1], ({}, {}))
    if rule.rule.startswith("/api/"):
        return mallory.open(
            url, method=method, headers=auth, json=api_body if method != "GET" else None
        )
    data = {"csrf_token": csrf_token(mallory), **form} if method != "GET" else None
    return mallory.open(url, method=method, data=data)


def shape(response: Any, value: int) -> str:
    """What the answer says (JSON, or the error page's title and text), with the id blanked."""
    if response.is_json:
        said = json.dumps(response.get_json(), sort_keys=True)
    else:
        page = response.get_data(as_text=True)
        said = " | ".join(re.findall(r"<title>.*?</title>|<p class=\"lead\">.*?</p>", page, re.S))
    return re.sub(rf"\b{value}\b", "ID", said)


def test_another_players_rounds_and_seed_pairs_are_a_404_like_nothing_at_all(
    app: Flask, client: FlaskClient
) -> None:
    register_page(client, "alice")
    owned = alices_things(app, client)
    before = client.get("/api/v1/me").get_json()["balances"]
    mallory = app.test_client()
    register_page(mallory, "mallory")
    mallory.get("/lobby")  # shows the welcome message, so no answer below carries it
    # Staff read a player's rounds in the console; the players' own routes are no way in.
    askers = [("mallory", mallory, bearer(mallory, "mallory_api"))]
    askers += [
        (role, client_as(app, add_user(app, role, role)), staff_bearer(app, role))
        for role in ("operator", "auditor")
    ]
    checked = 0
    for rule in app.url_map.iter_rules():
        ids = set(rule.arguments) - {"filename"}
        if not ids or rule.rule.startswith((*STAFF_PREFIXES, *PUBLIC_PREFIXES)):
            continue
        assert ids <= set(owned), f"{rule.rule}: add its id argument to this test"
        (name,) = ids
        for (who, asker, auth), method in product(askers, sorted((rule.methods or set()) - SAFE)):
            nobody = ask(asker, auth, rule, method, NOBODY)
            assert nobody.status_code == 404, f"{who} {method} {rule.rule}"
            for value in owned[name]:
                response = ask(asker, auth, rule, method, value)
                where = f"{who} {method} {rule.rule} with alice's {name} {value}"
                assert response.status_code == 404, where
                assert shape(response, value) == shape(nobody, NOBODY), where
                checked += 1
    assert checked >= 90
    # Nothing moved: alice's tie still waits for her, her balances are as they were.
    assert client.get("/api/v1/rounds").get_json()["rounds"][0]["status"] == "awaiting_decision"
    assert client.get("/api/v1/me").get_json()["balances"] == before


def test_even_the_owner_cannot_see_the_pair_that_is_not_shown_yet(client: FlaskClient) -> None:
    register_page(client, "alice")
    active = client.get("/api/v1/fairness/seed-pair").get_json()["seed_pair_id"]
    assert client.get(f"/api/v1/fairness/seed-pairs/{active}/bundle").status_code == 200
    upcoming = active + 1  # made with the active one, committed, its seed still secret
    for url in (
        f"/api/v1/fairness/seed-pairs/{upcoming}/bundle",
        f"/fairness/seed-pairs/{upcoming}/bundle.json",
    ):
        assert client.get(url).status_code == 404, url
