"""No server seed reaches a log: each statement that carries a still-secret seed is made to fail
(a trigger raises inside the database), and every log line and the answer are searched for it."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from flask import Flask
from service_support import PASSWORD
from sqlalchemy import select
from sqlalchemy import text

from sota_casino.core import fairness as core_fairness
from sota_casino.models import SeedPair
from sota_casino.services import accounts

KNOWN_SEED = bytes.fromhex("5eed" * 16)

#: (table, event, condition): the statements whose parameters hold a secret server seed.
SECRET_STATEMENTS = {
    "seed_insert": ("seed_pairs", "INSERT", None),
    "reveal_update": ("seed_pairs", "UPDATE", "NEW.status = 'revealed'"),
    "rotation_audit": ("audit_entries", "INSERT", "NEW.action = 'seed_pair.rotated'"),
}


def install_failure(app: Flask, name: str) -> None:
    table, event, condition = SECRET_STATEMENTS[name]
    engine = app.extensions["sota_casino.engine"]
    table = _written_by_the_use_case(table, engine.dialect.name)
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(
                text(
                    "CREATE OR REPLACE FUNCTION injected_failure() RETURNS trigger "
                    "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$"
                )
            )
            when = f"WHEN ({condition})" if condition else ""
            connection.execute(
                text(
                    f"CREATE TRIGGER injected_{name} BEFORE {event} ON {table} FOR EACH ROW "
                    f"{when} EXECUTE FUNCTION injected_failure()"
                )
            )
        else:
            when = f"WHEN {condition}" if condition else ""
            connection.execute(
                text(
                    f"CREATE TRIGGER injected_{name} BEFORE {event} ON {table} {when} "
                    "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
                )
            )


def _written_by_the_use_case(table: str, dialect: str) -> str:
    """On PostgreSQL a use case writes its log entries to audit_pending (the integrator
    sequences them into audit_entries after the commit)."""
    return "audit_pending" if table == "audit_entries" and dialect == "postgresql" else table


def remove_failure(app: Flask, name: str) -> None:
    engine = app.extensions["sota_casino.engine"]
    table = _written_by_the_use_case(SECRET_STATEMENTS[name][0], engine.dialect.name)
    on_table = f" ON {table}" if engine.dialect.name == "postgresql" else ""
    with engine.begin() as connection:
        connection.execute(text(f"DROP TRIGGER IF EXISTS injected_{name}{on_table}"))


@pytest.fixture
def failing(app: Flask, request: pytest.FixtureRequest) -> Iterator[str]:
    name = request.param
    install_failure(app, name)
    yield name
    remove_failure(app, name)


def active_seed(app: Flask, user_id: int) -> str:
    with app.extensions["sota_casino.engine"].connect() as connection:
        return connection.execute(
            select(SeedPair.server_seed).where(
                SeedPair.user_id == user_id, SeedPair.status == "active"
            )
        ).scalar_one()


def token_for(app: Flask, username: str) -> tuple[int, dict[str, str]]:
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        user = accounts.register(session, username, PASSWORD)
        token, _ = accounts.start_session(session, user.id, kind="api")
        session.close()
    return user.id, {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("failing", ["seed_insert"], indirect=True)
def test_a_failed_seed_pair_insert_logs_no_seed(
    app: Flask, failing: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(core_fairness, "new_server_seed", lambda: KNOWN_SEED)
    caplog.set_level(logging.DEBUG)
    response = app.test_client().post(
        "/api/v1/auth/register", json={"username": "bob", "password": PASSWORD}
    )
    assert response.status_code == 500  # the injected failure is a bug, not an outage
    assert caplog.records, "the failure was not logged at all"
    for output in (caplog.text, response.get_data(as_text=True)):
        assert KNOWN_SEED.hex() not in output


@pytest.mark.parametrize("failing", ["reveal_update", "rotation_audit"], indirect=True)
def test_a_failed_rotation_logs_no_seed_and_keeps_it_secret(
    app: Flask, failing: str, caplog: pytest.LogCaptureFixture
) -> None:
    user_id, token = token_for(app, "carol")
    seed = active_seed(app, user_id)
    caplog.set_level(logging.DEBUG)
    response = app.test_client().post("/api/v1/fairness/rotate", json={}, headers=token)
    assert response.status_code == 500
    assert caplog.records, "the failure was not logged at all"
    for output in (caplog.text, response.get_data(as_text=True)):
        assert seed not in output
    assert active_seed(app, user_id) == seed  # rolled back: the pair is still active, unrevealed
