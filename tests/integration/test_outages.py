"""A database that cannot serve is a clean 503 with Retry-After (a friendly page on the pages),
never a 500, and the service recovers by itself once the database is back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_support import app_config
from flask import Flask
from flask.testing import FlaskClient
from outage_support import Relay
from outage_support import SqliteFault
from service_support import PASSWORD
from service_support import assert_books_clean
from sqlalchemy.engine import make_url

from sota_casino.factory import create_app
from sota_casino.services import accounts


def signed_in(app: Flask) -> tuple[FlaskClient, dict[str, str]]:
    """A player ``alice`` with a bearer token, and a client whose cookie is logged in."""
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        user = accounts.register(session, "alice", PASSWORD)
        token, _ = accounts.start_session(session, user.id, kind="api")
        web_token, _ = accounts.start_session(session, user.id)
        session.close()
    client = app.test_client()
    with client.session_transaction() as cookie:
        cookie["sid"] = web_token
    return client, {"Authorization": f"Bearer {token}"}


def assert_unavailable(response: Any) -> None:
    assert response.status_code == 503, response.get_data(as_text=True)[:300]
    assert response.get_json()["error"]["code"] == "unavailable"
    assert int(response.headers["Retry-After"]) > 0


def assert_books(app: Flask) -> None:
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        assert_books_clean(session)
        session.close()


@pytest.fixture
def relayed_app(db_url: str, tmp_path: Path) -> Iterator[tuple[Flask, Relay]]:
    if not db_url.startswith("postgresql"):
        pytest.skip("the relay stands in front of PostgreSQL")
    url = make_url(db_url)
    relay = Relay((url.host or "127.0.0.1", url.port or 5432))
    app = create_app(app_config(url.set(port=relay.port).render_as_string(False), tmp_path))
    yield app, relay
    relay.cut()
    app.extensions["sota_casino.engine"].dispose()


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_postgres_going_away_is_a_503_and_coming_back_needs_no_restart(
    relayed_app: tuple[Flask, Relay],
) -> None:
    app, relay = relayed_app
    client, token = signed_in(app)
    assert client.get("/api/v1/me", headers=token).status_code == 200
    relay.cut()  # every pooled connection dies and no new one can be made
    assert_unavailable(client.get("/api/v1/me", headers=token))
    assert_unavailable(client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token))
    page = client.get("/lobby")
    assert page.status_code == 503 and "closed for a moment" in page.get_data(as_text=True)
    assert "Retry-After" in page.headers
    relay.restore()
    assert client.get("/api/v1/me", headers=token).status_code == 200
    assert (
        client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token).status_code
        == 201
    )
    assert_books(app)


@pytest.fixture
def sqlite_app(tmp_path: Path) -> Iterator[tuple[Flask, SqliteFault]]:
    from sota_casino import migrate

    url = f"sqlite:///{tmp_path / 'casino.db'}"
    migrate.upgrade(url)
    app = create_app(app_config(url, tmp_path))
    yield app, SqliteFault(app.extensions["sota_casino.engine"])
    app.extensions["sota_casino.engine"].dispose()


@pytest.mark.parametrize("mode", ["readonly", "full"])
def test_a_read_only_or_full_sqlite_database_is_a_503_until_it_is_writable(
    sqlite_app: tuple[Flask, SqliteFault], mode: str
) -> None:
    app, fault = sqlite_app
    client, token = signed_in(app)
    fault.mode = mode
    statuses = set()
    for n in range(30):  # a full file may still have room for a few rows in its free pages
        response = client.post(
            "/api/v1/auth/register", json={"username": f"late{n}", "password": PASSWORD}
        )
        statuses.add(response.status_code)
        if response.status_code == 503:
            assert_unavailable(response)
            break
    assert statuses <= {201, 503} and 503 in statuses, statuses
    fault.clear()
    assert (
        client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=token).status_code
        == 201
    )
    assert_books(app)
