"""Fixtures for the web tests: their database, more apps on it, clients, logged-in players.

The schema is made once per run with the project's migrations (``migrated_template`` in
tests/conftest.py), then each test gets a copy of that file, so every test starts from an
empty, migrated database quickly.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_support import app_config
from app_support import copy_of_template
from flask import Flask
from flask.testing import FlaskClient
from web_support import bearer
from web_support import register_page

from sota_casino.factory import create_app


@pytest.fixture
def db_url(migrated_template: Path, tmp_path: Path) -> str:
    """The web tests' database: a copy of the migrated SQLite file (the same schema as migrating
    anew, quicker). The ``app`` fixture (tests/conftest.py) runs on it and checks the books
    after each test, as it does on both databases for the service tests."""
    return copy_of_template(migrated_template, tmp_path)


@pytest.fixture
def make_app(db_url: str, tmp_path: Path) -> Iterator[Callable[..., Flask]]:
    """Build more apps on the test's database (two apps = two gunicorn workers sharing it),
    each with ``settings`` over the tests' own."""
    made: list[Flask] = []

    def build(**settings: Any) -> Flask:
        app = create_app(app_config(db_url, tmp_path, **settings))
        made.append(app)
        return app

    yield build
    for app in made:
        app.extensions["sota_casino.engine"].dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def player(client: FlaskClient) -> FlaskClient:
    """A browser logged in as the new player ``alice``."""
    register_page(client, "alice")
    return client


@pytest.fixture
def auth(client: FlaskClient) -> dict[str, str]:
    """The Authorization header of the new API player ``bob``."""
    return bearer(client, "bob")
