"""Health checks: alive without the database, ready only with it reachable and migrated."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient

from sota_casino import migrate
from sota_casino.services.health import migrations_head


def test_healthz_says_alive(client: FlaskClient) -> None:
    response = client.get("/healthz")
    assert (response.status_code, response.get_json()) == (200, {"status": "alive"})


def test_readyz_is_ready_with_the_schema_at_head(client: FlaskClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.get_json() == {
        "ready": True,
        "database": "ok",
        "migrations": {"database": migrations_head(), "code": migrations_head()},
    }


def test_readyz_is_not_ready_behind_the_migrations(app: Flask) -> None:
    migrate.downgrade(app.config["DATABASE_URL"], "-1")  # one migration behind
    app.extensions["sota_casino.engine"].dispose()
    response = app.test_client().get("/readyz")
    assert response.status_code == 503 and response.headers["Retry-After"]
    migrations = response.get_json()["migrations"]
    assert migrations["code"] == migrations_head() and migrations["database"] != migrations_head()
    migrate.upgrade(app.config["DATABASE_URL"])  # the books' check after the test reads it all


def test_readyz_is_not_ready_without_a_database(
    make_app: Callable[..., Flask], tmp_path: Path
) -> None:
    app = make_app(DATABASE_URL=f"sqlite:///{tmp_path / 'missing' / 'casino.db'}")
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.get_json() == {"ready": False, "database": "unreachable", "migrations": None}
    assert app.test_client().get("/healthz").status_code == 200
