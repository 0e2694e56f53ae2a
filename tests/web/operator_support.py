"""Helpers for the operator console's tests: users of each role and clients logged in as them.

Clients are logged in by starting a recorded session directly (the login form and its
throttling are tested elsewhere), and carry a known CSRF token in their cookie session.
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func
from sqlalchemy import select
from web_support import PASSWORD

from sota_casino.models import AuditEntry
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services import checks
from sota_casino.services import ledger
from sota_casino.services.results import to_json
from sota_casino.web.security import CSRF_KEY
from sota_casino.web.visitor import SESSION_KEY

CSRF = "known-csrf-token-for-tests"


def db(app: Flask) -> Any:
    """Return a fresh session of the app's own sessionmaker (close it when done)."""
    return app.extensions["sota_casino.sessionmaker"]()


def add_user(app: Flask, username: str, role: str = "player") -> int:
    """Create a user with ``role`` (players register, so they get their grant and seeds)."""
    session = db(app)
    try:
        if role == "player":
            return accounts.register(session, username, PASSWORD, address="127.0.0.1").id
        return accounts.create_operator(session, username, PASSWORD, role=role).id
    finally:
        session.close()


def client_as(app: Flask, user_id: int | None) -> FlaskClient:
    """Return a test client logged in as ``user_id`` (anonymous for None), with a CSRF token."""
    client = app.test_client()
    token = None
    if user_id is not None:
        session = db(app)
        try:
            token, _expires = accounts.start_session(session, user_id)
        finally:
            session.close()
    with client.session_transaction() as cookie:
        cookie[CSRF_KEY] = CSRF
        if token is not None:
            cookie[SESSION_KEY] = token
    return client


def bearer(app: Flask, username: str) -> dict[str, str]:
    """Return the Authorization header of a fresh API token for ``username``."""
    session = db(app)
    try:
        user = accounts.find_users(session, username)[0]
        token, _expires = accounts.start_session(session, user.id, kind="api")
    finally:
        session.close()
    return {"Authorization": f"Bearer {token}"}


def audit_size(app: Flask) -> int:
    session = db(app)
    try:
        return int(session.scalar(select(func.count(AuditEntry.seq))) or 0)
    finally:
        session.close()


def last_entry(app: Flask) -> dict[str, Any]:
    session = db(app)
    try:
        row = session.scalar(select(AuditEntry).order_by(AuditEntry.seq.desc()).limit(1))
        assert row is not None
        return audit.entry_dict(row)
    finally:
        session.close()


def balances(app: Flask, user_id: int) -> dict[str, int]:
    """The player's balances as the API writes them."""
    session = db(app)
    try:
        with session.begin():
            found: dict[str, int] = to_json(ledger.player_balances(session, user_id))
            return found
    finally:
        session.close()


def ledger_ok(app: Flask) -> bool:
    session = db(app)
    try:
        report = ledger.check(session)
        assert report.ok, report.problems
        return True
    finally:
        session.close()


def run_checks(app: Flask, *, whole: bool = False) -> None:
    """Run a step of each standing check, as the server's background runner does."""
    session = db(app)
    try:
        for name in checks.NAMES:
            assert checks.run(session, name, "test-runner", whole=whole).ran
    finally:
        session.close()
