"""Who may reach what: every route of the app, for anonymous, player, auditor and operator.

Each route is classified by a small explicit table of public endpoints and one prefix rule
(``/operator`` and ``/api/v1/operator`` are staff only); every other route must demand a login.
So a new route cannot slip through: it is checked the moment it exists, and a new public route
fails until it is named here on purpose.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from operator_support import CSRF
from operator_support import add_user
from operator_support import bearer
from operator_support import client_as
from werkzeug.routing import Rule

#: Endpoints anyone may use without logging in, and why.
PUBLIC: dict[str, str] = {
    "static": "stylesheets and scripts",
    "lobby.index": "the landing page",
    "auth.login": "the login form",
    "auth.login_post": "logging in",
    "auth.register": "the sign-up form",
    "auth.register_post": "signing up",
    "auth.logout": "logging out is harmless without a session",
    "fairness.index": "the public key and how to verify, for anyone",
    "fairness.verifier": "the offline verifier script",
    "api.register": "signing up over the API",
    "api.token": "getting a bearer token",
    "api.public_key": "the public key, for verifiers",
    "api.casino_war_odds": "published odds",
    "api.table": "a table's settings, which its rules page shows anyone",
    "api.openapi": "the API's description",
    "health.alive": "the load balancer's liveness check",
    "health.ready": "the load balancer's readiness check (says nothing private)",
    "api.latest_checkpoint": "the public log's latest signed checkpoint (hashes only)",
    "api.checkpoint_by_size": "an earlier signed checkpoint of the public log",
    "api.consistency": "consistency proofs between signed checkpoints, for witnesses",
    "language.choose": "a visitor's choice of language, kept in a cookie until they sign in",
    "language.scripts_words": "the words of the pages' scripts, in each language",
    "rules.casino_war": "how to play Casino War, before signing up",
    "rules.sota": "how to play Sota, before signing up",
}
STAFF_PREFIXES = ("/operator", "/api/v1/operator")
ROLES = ("anonymous", "player", "auditor", "operator")
SAMPLE_ARGS = {
    "filename": "casino.css",
    "name": "casino_war",
    "seq": 1,
    "list_name": "rounds",
    "locale": "fi",
}
#: Routes that end the credential they are called with.
ENDS_THE_CALLERS = ("auth.logout", "api.revoke_token")
#: Staff routes an auditor may change too: only how the console shows things to them.
OWN_PREFERENCES = ("operator.set_time_zone", "operator_api.time_zone")


def kind_of(rule: Rule) -> str:
    """Classify a route: ``public``, ``staff`` or ``login`` (the default)."""
    if rule.endpoint in PUBLIC:
        return "public"
    if rule.rule.startswith(STAFF_PREFIXES):
        return "staff"
    return "login"


def is_api(rule: Rule) -> bool:
    return rule.rule.startswith("/api/")


def url_of(rule: Rule, target_id: int) -> str:
    args = {name: SAMPLE_ARGS.get(name, target_id) for name in rule.arguments}
    return rule.build(args, append_unknown=False)[1]  # type: ignore[index]


def call(client: FlaskClient, method: str, url: str, api: bool, headers: dict[str, str]) -> Any:
    if api:
        body = {"json": {}} if method in ("POST", "PUT", "PATCH", "DELETE") else {}
        return client.open(url, method=method, headers=headers, **body)
    data = {"data": {"csrf_token": CSRF}} if method != "GET" else {}
    return client.open(url, method=method, **data)


def expectation_failure(
    kind: str, role: str, method: str, api: bool, response: Any, endpoint: str = ""
) -> str | None:
    """Return what is wrong with ``response``, or None if it is the expected answer."""
    status = response.status_code
    location = response.headers.get("Location", "")
    if status >= 500:
        return f"server error {status}"
    denied_login = status == 401 if api else status in (302, 303) and "/auth/login" in location
    if role == "anonymous" and kind != "public":
        return None if denied_login else f"expected a login {'401' if api else 'redirect'}"
    if kind == "public" or kind == "login" and role == "player":
        return f"refused with {status}" if status in (401, 403) or denied_login else None
    if kind == "login":
        return None  # staff on player routes: anything but a 5xx (services may refuse them)
    # staff routes
    auditor_changes = role == "auditor" and method != "GET" and endpoint not in OWN_PREFERENCES
    if role == "player" or auditor_changes:
        return None if status == 403 else f"expected 403, got {status}"
    return f"refused with {status}" if status in (401, 403) or denied_login else None


@pytest.fixture
def people(app: Flask) -> dict[str, Any]:
    """A client (pages) and headers (API) for each role, plus a player for URLs to point at."""
    add_user(app, "target", "player")
    target = add_user(app, "target2", "player")
    ids = {
        "player": add_user(app, "pat", "player"),
        "auditor": add_user(app, "audrey", "auditor"),
        "operator": add_user(app, "olga", "operator"),
    }
    names = {"player": "pat", "auditor": "audrey", "operator": "olga"}
    return {
        "target": target,
        "clients": {"anonymous": client_as(app, None)}
        | {role: client_as(app, user_id) for role, user_id in ids.items()},
        "headers": {"anonymous": {}} | {role: bearer(app, names[role]) for role in ids},
    }


def matrix_failures(app: Flask, people: dict[str, Any]) -> list[str]:
    """Call every route as every role; return each answer that its class does not allow."""
    failures = []
    # Logging out ends the client's session, and revoking a token the role's token: they go last.
    rules = sorted(
        app.url_map.iter_rules(), key=lambda r: (r.endpoint in ENDS_THE_CALLERS, r.rule, r.endpoint)
    )
    for role in ROLES:  # the operator last: its requests may change things
        for rule in rules:
            kind, api = kind_of(rule), is_api(rule)
            url = url_of(rule, people["target"])
            for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
                client = people["clients"][role]
                response = call(client, method, url, api, people["headers"][role])
                problem = expectation_failure(kind, role, method, api, response, rule.endpoint)
                response.close()  # file responses (static, downloads) hold an open file
                if problem:
                    failures.append(f"{role:9} {method:4} {url} ({kind}): {problem}")
    return failures


def test_every_route_answers_each_role_as_its_class_requires(
    app: Flask, people: dict[str, Any]
) -> None:
    failures = matrix_failures(app, people)
    assert failures == [], "\n".join(failures)


def test_an_unprotected_new_route_is_caught(app: Flask, people: dict[str, Any]) -> None:
    app.add_url_rule("/operator/forgotten", "forgotten", lambda: "secret")
    app.add_url_rule("/api/v1/operator/forgotten", "api_forgotten", lambda: {"secret": 1})
    app.add_url_rule("/new-player-page", "new_page", lambda: "hello")
    failures = matrix_failures(app, people)
    assert any("anonymous GET  /operator/forgotten" in f for f in failures)
    assert any("player    GET  /operator/forgotten" in f for f in failures)
    assert any("anonymous GET  /api/v1/operator/forgotten" in f for f in failures)
    assert any("anonymous GET  /new-player-page" in f for f in failures)
    assert len(failures) == 5  # and the API route for a player: nothing else is wrong


def test_the_public_table_names_only_routes_that_exist(app: Flask) -> None:
    endpoints = {rule.endpoint for rule in app.url_map.iter_rules()}
    assert sorted(set(PUBLIC) - endpoints) == []


def test_every_staff_route_is_under_the_operator_prefixes(app: Flask) -> None:
    staff_endpoints = [
        rule.rule
        for rule in app.url_map.iter_rules()
        if rule.endpoint.split(".")[0] in ("operator", "operator_api")
        and not rule.rule.startswith(STAFF_PREFIXES)
    ]
    assert staff_endpoints == []


def test_a_player_gets_403_and_no_data_from_the_console(app: Flask) -> None:
    player = client_as(app, add_user(app, "pat", "player"))
    response = player.get("/operator/audit")
    assert response.status_code == 403
    assert "prev_hash" not in response.get_data(as_text=True)
    api = app.test_client().get("/api/v1/operator/audit", headers=bearer(app, "pat"))
    assert api.status_code == 403
    assert api.get_json()["error"]["code"] == "forbidden"


def test_an_anonymous_api_call_gets_401_in_the_error_format(app: Flask) -> None:
    response = app.test_client().get("/api/v1/operator/ledger/summary")
    assert response.status_code == 401
    assert set(response.get_json()["error"]) == {"code", "message"}


def test_an_auditor_reads_the_console_but_cannot_change_a_table(app: Flask) -> None:
    auditor = client_as(app, add_user(app, "audrey", "auditor"))
    page = auditor.get("/operator/tables")
    assert page.status_code == 200
    assert "Save Casino War settings" not in page.get_data(as_text=True)
    refused = auditor.post(
        "/operator/tables/casino_war", data={"csrf_token": CSRF, "min_bet": "5", "max_bet": "50"}
    )
    assert refused.status_code == 403
    api = app.test_client().put(
        "/api/v1/operator/tables/casino_war", json={"decks": 2}, headers=bearer(app, "audrey")
    )
    assert api.status_code == 403
    assert auditor.get("/api/v1/operator/tables/casino_war").get_json()["settings"]["decks"] == 6
