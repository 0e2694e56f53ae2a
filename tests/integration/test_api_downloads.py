"""The API downloads every list the console downloads, with the same rows: a player's seed
pairs and the audit entries a filter matches, on SQLite and PostgreSQL, byte for byte what the
console's download of the same filter gives; a bad filter is a 422 naming it before anything
is sent, and staff only may download (an auditor too)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from service_support import PASSWORD

from sota_casino.services import accounts
from sota_casino.services import fairness

API = "/api/v1/operator"
FAR_PAST = "2000-01-01T00:00:00Z"
FAR_FUTURE = "2999-01-01T00:00:00Z"


def db(app: Flask) -> Any:
    """A fresh session of the app's own sessionmaker (closed by the caller)."""
    return app.extensions["sota_casino.sessionmaker"]()


def _user(app: Flask, name: str, role: str) -> int:
    session = db(app)
    try:
        if role == "player":
            return accounts.register(session, name, PASSWORD).id
        return accounts.create_operator(session, name, PASSWORD, role=role).id
    finally:
        session.close()


def _signed_in(app: Flask, user_id: int) -> tuple[FlaskClient, dict[str, str]]:
    """A console client logged in as ``user_id``, and an API bearer header of theirs."""
    session = db(app)
    try:
        api_token, _ = accounts.start_session(session, user_id, kind="api")
        web_token, _ = accounts.start_session(session, user_id)
    finally:
        session.close()
    console = app.test_client()
    with console.session_transaction() as cookie:
        cookie["sid"] = web_token
    return console, {"Authorization": f"Bearer {api_token}"}


@pytest.fixture
def casino(app: Flask) -> dict[str, Any]:
    """A player with rotated seeds and money moves by an operator; an operator and an auditor
    signed in to the console and the API."""
    pat = _user(app, "pat", "player")
    olga = _user(app, "olga", "operator")
    audrey = _user(app, "audrey", "auditor")
    session = db(app)
    try:
        for seed in ("first-rotation", "=SUM(A1)"):  # a formula: the CSV writes it as text
            fairness.rotate(session, pat, client_seed=seed)
    finally:
        session.close()
    olga_console, olga_api = _signed_in(app, olga)
    for reason in ("welcome", "goodwill"):
        credit = {"user_id": pat, "currency": "chips", "amount": 250, "reason": reason}
        made = app.test_client().post(f"{API}/adjustments", json=credit, headers=olga_api)
        assert made.status_code == 201, made.get_data(as_text=True)
    audrey_console, audrey_api = _signed_in(app, audrey)
    _pat_console, pat_api = _signed_in(app, pat)
    return {
        "pat": pat,
        "olga": olga,
        "console": olga_console,
        "api": olga_api,
        "auditor_console": audrey_console,
        "auditor_api": audrey_api,
        "player_api": pat_api,
    }


def _read(answer: Any) -> Any:
    """``answer``, read whole (a download streams until read, in a request context of its own)."""
    answer.get_data()
    return answer


def _same_download(console: Any, api: Any, stem: str, kind: str) -> str:
    """Assert the API's download is the console's, byte for byte, under the same kind of name
    and type; return its text."""
    assert console.status_code == 200, console.get_data(as_text=True)[:300]
    assert api.status_code == 200, api.get_data(as_text=True)[:300]
    assert api.get_data() == console.get_data()
    assert (
        api.mimetype == console.mimetype == ("text/csv" if kind == "csv" else "application/jsonl")
    )
    for answer in (console, api):
        named = answer.headers["Content-Disposition"]
        assert re.fullmatch(rf'attachment; filename="{stem}-[0-9]{{8}}T[0-9]{{6}}Z\.{kind}"', named)
    return str(api.get_data(as_text=True))


def _refused(answer: Any, field: str) -> None:
    assert answer.status_code == 422, answer.get_data(as_text=True)[:300]
    assert answer.get_json()["error"]["field"] == field
    assert "Content-Disposition" not in answer.headers


def test_a_players_seed_pairs_download_over_the_api_as_the_console_gives_it(
    app: Flask, casino: dict[str, Any]
) -> None:
    pat, client = casino["pat"], app.test_client()
    console_path = f"/operator/players/{pat}/lists/seed_pairs/export"
    api_path = f"{API}/players/{pat}/seed-pairs/export"
    stem = f"seed-pairs-user-{pat}"
    for ranged in ({}, {"since": FAR_PAST, "until": FAR_FUTURE}, {"until": FAR_PAST}):
        for kind in ("csv", "jsonl"):
            query = {"format": kind, **ranged}
            text = _same_download(
                _read(casino["console"].get(console_path, query_string=query)),
                client.get(api_path, query_string=query, headers=casino["api"]),
                stem,
                kind,
            )
            lines = text.splitlines()
            rows = lines[1:] if kind == "csv" else lines
            # Rotated twice: two revealed pairs and the active one (the next one is not shown).
            assert len(rows) == (0 if ranged.get("until") == FAR_PAST else 3), (ranged, text)
            if kind == "csv" and rows:
                assert ",'=SUM(A1)," in text
    # JSON Lines unless asked otherwise, as the API's other downloads.
    plain = _read(client.get(api_path, headers=casino["api"]))
    assert plain.mimetype == "application/jsonl"
    assert plain.get_data() == casino["console"].get(f"{console_path}?format=jsonl").get_data()

    for bad, field in (({"since": "soon"}, "since"), ({"format": "xml"}, "format")):
        _refused(client.get(api_path, query_string=bad, headers=casino["api"]), field)
    assert (
        client.get(f"{API}/players/999999/seed-pairs/export", headers=casino["api"]).status_code
        == 404
    )
    assert client.get(api_path, headers=casino["player_api"]).status_code == 403
    assert client.get(api_path).status_code == 401
    by_auditor = client.get(api_path, headers=casino["auditor_api"])
    assert by_auditor.status_code == 200 and by_auditor.get_data() == plain.get_data()


#: Filters as the audit page takes them, each alone and together.
AUDIT_FILTERS: tuple[dict[str, str], ...] = (
    {},
    {"action": "money."},
    {"action": "seed_pair.rotated"},
    {"text": "WELCOME"},  # free text, in any letter case
    {"since": FAR_PAST, "until": FAR_FUTURE, "action": "user."},
    {"until": FAR_PAST},
)


def test_the_audit_entries_a_filter_matches_download_over_the_api_as_the_console_gives_them(
    app: Flask, casino: dict[str, Any]
) -> None:
    pat, olga, client = casino["pat"], casino["olga"], app.test_client()
    api_path = f"{API}/audit/entries/export"
    filters = (
        *AUDIT_FILTERS,
        {"actor": f"user:{olga}"},
        {"subject": f"user:{pat}"},
        {"actor": f"user:{olga}", "subject": f"user:{pat}", "action": "money.adjust"},
    )
    for chosen in filters:
        for kind in ("csv", "jsonl"):
            query = {"format": kind, **chosen}
            text = _same_download(
                _read(casino["console"].get("/operator/audit/entries", query_string=query)),
                client.get(api_path, query_string=query, headers=casino["api"]),
                "audit-entries",
                kind,
            )
            lines = text.splitlines()
            rows = lines[1:] if kind == "csv" else lines
            if chosen.get("until") == FAR_PAST:
                assert rows == [], text
            else:
                assert rows, chosen
            if chosen.get("action") == "money.":
                # The grant on registering, then the two adjustments.
                assert len(rows) == 3 and all("money." in row for row in rows)
                assert sum("money.adjust" in row for row in rows) == 2
            if chosen.get("text"):
                assert len(rows) == 1 and "welcome" in rows[0]
    whole = _read(client.get(api_path, headers=casino["api"]))
    assert whole.mimetype == "application/jsonl"
    assert (
        whole.get_data() == casino["console"].get("/operator/audit/entries?format=jsonl").get_data()
    )

    for bad, field in (
        ({"since": "yesterday"}, "since"),
        ({"until": "later"}, "until"),
        ({"text": "a\x00b"}, "text"),
        ({"action": "x" * 201}, "action"),
        ({"format": "xml"}, "format"),
    ):
        _refused(client.get(api_path, query_string=bad, headers=casino["api"]), field)
    assert client.get(api_path, headers=casino["player_api"]).status_code == 403
    assert client.get(api_path).status_code == 401
    auditor_api = casino["auditor_api"]
    by_auditor = _read(client.get(api_path, query_string={"format": "csv"}, headers=auditor_api))
    console_csv = _read(casino["auditor_console"].get("/operator/audit/entries?format=csv"))
    assert by_auditor.status_code == 200 and by_auditor.get_data() == console_csv.get_data()
