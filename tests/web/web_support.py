"""Helpers for the web tests: CSRF-carrying forms, logged-in players, API tokens, known seeds."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from log_support import relog_commitment
from move_support import seed_repeating_a_move
from seed_support import candidate_seeds
from sqlalchemy import select

import sota_casino.web  # noqa: F401  (imports every module that defines a refusal)
from sota_casino.core import fairness
from sota_casino.core import sota
from sota_casino.core.cards import rank_value
from sota_casino.core.errors import CasinoError
from sota_casino.models import SeedPair
from sota_casino.models import User

PASSWORD = "correct horse battery"
CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)">')
#: The script that gives a page's scripts their words, in the page's language.
SCRIPT_WORDS_URL = re.compile(r'<script src="(/language/[a-z]+\.js\?v=[0-9a-f]{12})"></script>')
SCRIPT_WORDS = re.compile(r"window\.SotaTranslations = (\{.*\});\n", re.DOTALL)


def scripts_words(client: FlaskClient, page: str) -> dict[str, Any]:
    """Return the words a page gives its scripts: the script it names, read as its JSON."""
    url = SCRIPT_WORDS_URL.search(page)
    assert url, "the page names no script of its scripts' words"
    with client.get(url.group(1)) as answer:
        assert answer.status_code == 200, url.group(1)
        found = SCRIPT_WORDS.fullmatch(answer.get_data(as_text=True))
    assert found, url.group(1)
    words: dict[str, Any] = json.loads(found.group(1))
    return words


def refusal_kinds(base: type[CasinoError] = CasinoError) -> list[type[CasinoError]]:
    """Return every kind of refusal below ``base``, however deep."""
    return [kind for sub in base.__subclasses__() for kind in (sub, *refusal_kinds(sub))]


def csrf_token(client: FlaskClient) -> str:
    """Return the browser session's CSRF token (loading a page creates it)."""
    with client.session_transaction() as session:
        token = session.get("csrf")
    if token:
        return str(token)
    page = client.get("/auth/login").get_data(as_text=True)
    found = CSRF_META.search(page)
    assert found, "the page carries no CSRF token"
    return found.group(1)


def post_form(client: FlaskClient, url: str, data: dict[str, Any] | None = None, **kw: Any) -> Any:
    """POST a page form with this session's CSRF token."""
    return client.post(url, data={"csrf_token": csrf_token(client), **(data or {})}, **kw)


def register_page(client: FlaskClient, username: str = "alice") -> Any:
    """Sign up through the page (which logs the browser in)."""
    response = post_form(
        client,
        "/auth/register",
        {"username": username, "password": PASSWORD, "confirm": PASSWORD},
    )
    assert response.status_code == 303, response.get_data(as_text=True)
    return response


def api_register(client: FlaskClient, username: str) -> dict[str, Any]:
    response = client.post(
        "/api/v1/auth/register", json={"username": username, "password": PASSWORD}
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["user"]  # type: ignore[no-any-return]


def bearer(client: FlaskClient, username: str = "bob") -> dict[str, str]:
    """Register ``username`` over the API and return its Authorization header."""
    api_register(client, username)
    response = client.post("/api/v1/auth/token", json={"username": username, "password": PASSWORD})
    assert response.status_code == 200, response.get_json()
    return {"Authorization": f"Bearer {response.get_json()['token']}"}


# --- known seeds -------------------------------------------------------------------------------


def first_cards(
    server_seed: bytes, client_seed: str, nonce: int, count: int = 2
) -> tuple[str, ...]:
    return fairness.shuffled_shoe(
        fairness.Seeds(server_seed, client_seed, nonce), decks=6, count=count
    )


def is_tie(server_seed: bytes, client_seed: str, nonce: int) -> bool:
    player, dealer = first_cards(server_seed, client_seed, nonce)
    return rank_value(player) == rank_value(dealer)


def find_server_seed(client_seed: str, wanted: dict[int, bool]) -> bytes:
    """Return a server seed (:func:`~seed_support.candidate_seeds`) whose nonces tie as
    ``wanted``."""
    for seed in candidate_seeds(f"test seed {client_seed}"):
        if all(is_tie(seed, client_seed, n) == tie for n, tie in wanted.items()):
            return seed
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class PlantedSeed:
    seed_pair_id: int
    server_seed: bytes
    client_seed: str


def plant_server_seed(app: Flask, username: str, wanted: dict[int, bool]) -> PlantedSeed:
    """Give ``username``'s active seed pair a known server seed whose nonces tie as ``wanted``.

    Tests may write to the database directly: the commitment and its signed document are
    replaced too (signed with the app's key), so the pair still verifies end to end.
    """
    return plant_chosen_seed(
        app, username, lambda client_seed: find_server_seed(client_seed, wanted)
    )


def plant_sota_winner(
    app: Flask, username: str, rules: sota.SotaRules, winner: int | str
) -> PlantedSeed:
    """Give ``username``'s seed pair a server seed whose first game of ``rules`` is settled with
    ``winner`` (a seat's number, a team or "draw"), as :func:`plant_server_seed` does."""

    def choose(client_seed: str) -> bytes:
        for seed in candidate_seeds(f"sota winner {client_seed}"):
            game = sota.play_game(
                rules, stream=fairness.Stream(fairness.Seeds(seed, client_seed, 0))
            )
            if game.status == "settled" and game.winner == winner:
                return seed
        raise AssertionError("unreachable")

    return plant_chosen_seed(app, username, choose)


def plant_seed_repeating_a_move(app: Flask, username: str) -> list[str]:
    """Plant a server seed whose first Prisoners of War game (``move_support.PRISONERS``) waits
    for a move whose cards fit the choice after it too; return that move."""
    found: list[list[str]] = []

    def choose(client_seed: str) -> bytes:
        seed, move = seed_repeating_a_move(client_seed)
        found.append(move)
        return seed

    plant_chosen_seed(app, username, choose)
    return found[0]


def plant_chosen_seed(app: Flask, username: str, choose: Callable[[str], bytes]) -> PlantedSeed:
    """Give ``username``'s active seed pair the server seed ``choose`` picks for its client seed
    (before the pair's first round), as :func:`plant_server_seed` does."""
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        with session.begin():
            user = session.scalars(select(User).where(User.username == username)).one()
            pair = session.scalars(
                select(SeedPair).where(SeedPair.user_id == user.id, SeedPair.status == "active")
            ).one()
            assert pair.next_nonce == 0, "plant the seed before the pair's first round"
            client_seed = pair.client_seed or ""
            seed = choose(client_seed)
            commitment = fairness.commitment_of(seed)
            document = {**pair.commitment_document, "commitment": commitment}
            key = session.info["context"].signing_key
            pair.server_seed = seed.hex()
            pair.commitment = commitment
            pair.commitment_document = document
            pair.commitment_signature = fairness.sign(key, document)
            relog_commitment(session, pair)
            planted = PlantedSeed(pair.id, seed, client_seed)
        session.close()
    return planted
