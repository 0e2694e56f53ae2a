"""No secret leaves the server before its time: a player plays through the pages and the API,
rotates once, plays on, then every GET route of the app is asked by the player and by an
operator. No answer (body or header), audit entry or log line may hold a server seed that is
not revealed yet, the signing key or the session secret.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask import request
from flask.testing import FlaskClient
from flask.wrappers import Response
from operator_support import CSRF
from operator_support import add_user
from operator_support import audit_size
from operator_support import bearer
from operator_support import client_as
from operator_support import db
from sqlalchemy import select
from web_support import PASSWORD
from web_support import csrf_token
from web_support import plant_server_seed
from web_support import post_form
from web_support import register_page

from sota_casino.models import AuditCheckpoint
from sota_casino.models import AuditEntry
from sota_casino.models import SeedPair
from sota_casino.models import User
from sota_casino.models import UserSession

SAMPLE = {
    "name": ["casino_war", "sota"],
    "list_name": ["rounds", "transfers", "seed_pairs"],
    "locale": ["en", "fi"],
}


def record_every_answer(app: Flask) -> list[tuple[str, str]]:
    """Keep the text of every answer the app gives from now on (files served as-is aside)."""
    answers: list[tuple[str, str]] = []

    def record(response: Response) -> Response:
        if not response.direct_passthrough:  # static files and the verifier script
            text = response.get_data(as_text=True)
            answers.append((f"{request.method} {request.full_path}", f"{response.headers}{text}"))
        return response

    app.after_request(record)
    return answers


def play(app: Flask, alice: FlaskClient) -> None:
    """Casino War and Sota through the pages and the API, a rotation, and a tie left open."""
    api = {"X-CSRF-Token": csrf_token(alice)}
    token = alice.post("/api/v1/auth/token", json={"username": "alice", "password": PASSWORD})
    auth = {"Authorization": f"Bearer {token.get_json()['token']}"}
    plant_server_seed(app, "alice", {0: True, 1: False})
    statuses = [
        post_form(alice, "/casino-war/rounds", {"bet": "5", "tie_bet": "1"}).status_code,
        post_form(alice, "/casino-war/rounds/1/decision", {"choice": "war"}).status_code,
        alice.post("/api/v1/casino-war/rounds", json={"bet": 500}, headers=auth).status_code,
        post_form(
            alice, "/sota/games", {"stake": "2", "preset": "nordic", "seats": "3"}
        ).status_code,
        alice.post(
            "/api/v1/sota/games", json={"stake": 1, "preset": "english"}, headers=api
        ).status_code,
        post_form(alice, "/fairness/rotate", {"client_seed": "first rotation"}).status_code,
        alice.post(
            "/api/v1/fairness/rotate", json={"client_seed": "two"}, headers=auth
        ).status_code,
    ]
    plant_server_seed(app, "alice", {0: True})
    tie = alice.post("/api/v1/casino-war/rounds", json={"bet": 300}, headers=auth)
    assert tie.get_json()["status"] == "awaiting_decision"  # left open
    statuses.append(tie.status_code)
    assert statuses == [303, 303, 201, 303, 201, 303, 200, 201]


def ids_of(app: Flask, alice: FlaskClient) -> dict[str, list[Any]]:
    rounds = [r["id"] for r in alice.get("/api/v1/rounds").get_json()["rounds"]]
    session = db(app)
    try:
        pairs = list(session.scalars(select(SeedPair.id)))
        sizes = list(session.scalars(select(AuditCheckpoint.size)))
    finally:
        session.close()
    user = alice.get("/api/v1/me").get_json()["user"]["id"]
    return {
        **SAMPLE,
        "round_id": rounds,
        "seed_pair_id": pairs,
        "user_id": [user],
        "seq": list(range(1, audit_size(app) + 1)),
        "size": [*sizes, audit_size(app) + 1],  # the public log's checkpoints, and one unsigned
    }


#: What each route is asked with: plainly, for a long page, and for each kind of download.
QUERIES = ("", "?limit=500", "?download=1", "?format=csv", "?format=jsonl")


def crawl(
    app: Flask, visitors: list[tuple[FlaskClient, dict[str, str]]], ids: dict[str, Any]
) -> int:
    """GET every route with every sample id, as each visitor; return how many were asked.

    The query strings that ask a route for a download or a long page go with its first sample
    of each id, and every name: its other ids show other rows of the same answer (they number
    dozens, every entry of the log among them), where a name (a list, a table) is another answer."""
    asked = 0
    for rule in app.url_map.iter_rules():
        if "GET" not in (rule.methods or set()) or rule.endpoint == "static":
            continue
        names = sorted(rule.arguments)
        assert set(names) <= set(ids), f"{rule.rule}: give its arguments sample values here"
        values = [ids[name] for name in names]
        combos = [dict(zip(names, combo, strict=True)) for combo in _product(values)]
        for args in combos:
            url = rule.build(args, append_unknown=False)[1]
            first_ids = all(v == ids[k][0] for k, v in args.items() if isinstance(v, int))
            for client, headers in visitors:
                # The console's downloads answer only when asked for a format.
                for query in QUERIES if first_ids else QUERIES[:1]:
                    client.get(url + query, headers=headers).close()
                    asked += 1
    return asked


def _product(values: list[list[Any]]) -> list[tuple[Any, ...]]:
    combos: list[tuple[Any, ...]] = [()]
    for options in values:
        combos = [combo + (option,) for combo in combos for option in options]
    return combos


def test_no_answer_audit_entry_or_log_line_holds_an_unrevealed_seed_or_a_key(
    app: Flask, client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    answers = record_every_answer(app)
    register_page(client, "alice")
    play(app, client)
    olga = add_user(app, "olga", "operator")
    operator = client_as(app, olga)
    operator.post("/operator/audit/checkpoint", data={"csrf_token": CSRF})
    visitors = [(client, {}), (operator, {}), (app.test_client(), bearer(app, "olga"))]
    assert crawl(app, visitors, ids_of(app, client)) > 300

    session = db(app)
    try:
        pairs = session.scalars(select(SeedPair)).all()
        entries = " ".join(str(e.data) for e in session.scalars(select(AuditEntry)))
    finally:
        session.close()
    hidden = [p.server_seed for p in pairs if p.status != "revealed"]
    shown = [p.server_seed for p in pairs if p.status == "revealed"]
    assert len(hidden) == 4 and len(shown) == 2  # alice's and olga's active and next pairs
    key = Path(app.config["SIGNING_KEY_FILE"]).read_text().splitlines()[1]
    secrets = [*hidden, *(seed.upper() for seed in hidden), key, app.config["SECRET_KEY"]]
    everything = answers + [("audit log", entries), ("log", caplog.text)]
    for secret in secrets:
        leaks = [where for where, text in everything if secret in text]
        assert leaks == [], f"{secret[:12]}… leaked in {leaks[:5]}"
    # The crawl read the downloads too: a player's seed pairs in both formats, as an operator.
    pairs_export = "/lists/seed_pairs/export?format="
    for kind in ("csv", "jsonl"):
        assert any(pairs_export + kind in where for where, text in answers if shown[0] in text)
    # The crawl does see seeds where they belong: each revealed one is on the fairness page.
    for seed in shown:
        assert any(seed in text for where, text in answers if "/fairness" in where)


def test_no_answer_audit_entry_or_log_line_holds_a_password_a_token_or_a_session(
    app: Flask, client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Alice's password, her API token, her session's id and every stored hash are in no
    answer, audit entry or log line; her CSRF token is in her own pages only."""
    caplog.set_level(logging.DEBUG)
    answers = record_every_answer(app)
    register_page(client, "alice")
    play(app, client)
    issued = client.post("/api/v1/auth/token", json={"username": "alice", "password": PASSWORD})
    token = issued.get_json()["token"]
    with client.session_transaction() as cookie:
        sid, csrf = cookie["sid"], cookie["csrf"]
    ids = ids_of(app, client)
    crawl(app, [(client, {}), (app.test_client(), {"Authorization": f"Bearer {token}"})], ids)
    issuing = "POST /api/v1/auth/token"  # the one answer that hands out a token is its own
    hers = [(where, text) for where, text in answers if not where.startswith(issuing)]
    answers.clear()
    staff = [add_user(app, "olga", "operator"), add_user(app, "audrey", "auditor")]
    others = [(client_as(app, member), {}) for member in staff]
    others += [(app.test_client(), bearer(app, "olga")), (app.test_client(), {})]
    assert crawl(app, others, ids) > 300

    session = db(app)
    try:
        hashes = [*session.scalars(select(User.password_hash))]
        hashes += [*session.scalars(select(UserSession.token_hash))]
        entries = [
            ("audit entry", f"{e.actor} {e.subject} {e.data}")
            for e in session.scalars(select(AuditEntry))
        ]
    finally:
        session.close()
    kept = [*entries, ("log", caplog.text)]
    secrets = [PASSWORD, token, sid, *hashes, app.config["DATABASE_URL"]]
    for secret in secrets:
        leaks = [where for where, text in [*hers, *answers, *kept] if secret in text]
        assert leaks == [], f"{secret[:12]}… is in {leaks[:5]}"
    assert any(csrf in text for _, text in hers)  # her pages carry it, for their forms
    assert [where for where, text in [*answers, *kept] if csrf in text] == []


def test_the_database_logger_at_debug_writes_no_row_holding_a_secret(
    app: Flask, client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    """SQLAlchemy's own logger at DEBUG (turned on by name: it stays at WARNING under a debug
    root logger) writes every statement and every row fetched. The statements' parameters are
    hidden; the rows must be too: they hold the server seeds still secret, the password hashes
    and the digests of session tokens."""
    caplog.set_level(logging.DEBUG, logger="sqlalchemy.engine")
    register_page(client, "alice")
    post_form(client, "/casino-war/rounds", {"bet": "5"})
    assert client.get("/api/v1/fairness/seed-pair").status_code == 200
    assert client.get("/fairness").status_code == 200
    session = db(app)
    try:
        pairs = session.scalars(select(SeedPair)).all()
    finally:
        session.close()
    hidden = [p.server_seed for p in pairs if p.status != "revealed"]
    assert len(hidden) == 2  # alice's active and next pairs
    logged = caplog.text
    assert "SELECT" in logged and "FROM seed_pairs" in logged  # the logger was on
    for seed in hidden:
        assert seed not in logged and seed.upper() not in logged
    assert "$argon2id$" not in logged
