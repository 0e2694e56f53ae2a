"""The OpenAPI 3.1 document is well formed and describes the real answers of every endpoint."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator
from web_support import PASSWORD
from web_support import bearer
from web_support import plant_server_seed

from sota_casino.web.openapi import openapi_document

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture
def document(app: Flask) -> dict[str, Any]:
    """The document as the app serves it (other modules add their paths when the app is made)."""
    return openapi_document()


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
        if method in METHODS
    ]


def resolve(document: dict[str, Any], pointer: str) -> Any:
    assert pointer.startswith("#/"), pointer
    node: Any = document
    for part in pointer[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def all_refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for value in node.values() for r in all_refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in all_refs(value)]
    return []


def test_the_document_is_openapi_3_1_with_responses_everywhere(document: dict[str, Any]) -> None:
    assert document["openapi"] == "3.1.0"
    assert document["info"]["title"] and document["info"]["version"]
    ids = []
    for path, method, op in operations(document):
        assert path.startswith("/")
        assert op["responses"], f"{method} {path} has no responses"
        for status, response in op["responses"].items():
            assert re.fullmatch(r"[1-5]\d\d|default", status), status
            response = resolve(document, response["$ref"]) if "$ref" in response else response
            assert response["description"]
        for name in re.findall(r"{(\w+)}", path):
            params = [resolve(document, p["$ref"]) if "$ref" in p else p for p in op["parameters"]]
            assert any(p["in"] == "path" and p["name"] == name and p["required"] for p in params)
        ids.append(op["operationId"])
    assert len(ids) == len(set(ids)), "operationIds must be unique"


def test_every_reference_resolves_and_every_schema_is_valid_2020_12(
    document: dict[str, Any],
) -> None:
    for pointer in all_refs(document):
        resolve(document, pointer)
    for name, schema in document["components"]["schemas"].items():
        Draft202012Validator.check_schema(schema), name


def test_every_endpoint_of_the_app_is_documented(app: Flask, document: dict[str, Any]) -> None:
    documented = {(f"/api/v1{path}", method.upper()) for path, method, _ in operations(document)}
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1/"):
            continue
        if rule.rule == "/api/v1/openapi.json":
            continue
        path = re.sub(
            r"<(?:\w+:)?(\w+)>",
            lambda m: "{id}" if m.group(1).endswith("id") else "{" + m.group(1) + "}",
            rule.rule,
        )
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert (path, method) in documented, f"{method} {path} is not in the OpenAPI document"


def test_the_document_is_served(client: FlaskClient, document: dict[str, Any]) -> None:
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.get_json() == document


class Checker:
    """Validate real answers against the schema their operation documents for their status."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.checked: set[tuple[str, str, str]] = set()

    def __call__(self, path: str, method: str, response: Any) -> Any:
        op = self.document["paths"][path][method]
        status = str(response.status_code)
        assert status in op["responses"], f"{method} {path} answered {status}, not documented"
        described = op["responses"][status]
        if "$ref" in described:
            described = resolve(self.document, described["$ref"])
        schema = described["content"]["application/json"]["schema"]
        validator = Draft202012Validator({**self.document, **schema})
        errors = sorted(validator.iter_errors(response.get_json()), key=str)
        assert not errors, (
            f"{method} {path} {status}: {errors[0].message} at {list(errors[0].absolute_path)}"
        )
        self.checked.add((path, method, status))
        return response.get_json()


def test_real_answers_of_every_endpoint_match_their_schemas(
    app: Flask, client: FlaskClient, document: dict[str, Any]
) -> None:
    check = Checker(document)
    register = client.post("/api/v1/auth/register", json={"username": "olga", "password": PASSWORD})
    check("/auth/register", "post", register)
    check("/auth/register", "post", client.post("/api/v1/auth/register", json={"username": "x"}))
    check(
        "/auth/register",
        "post",
        client.post("/api/v1/auth/register", data="{", content_type="application/json"),
    )
    check(
        "/auth/register",
        "post",
        client.post("/api/v1/auth/register", json={"username": "olga", "password": PASSWORD}),
    )
    token = check(
        "/auth/token",
        "post",
        client.post("/api/v1/auth/token", json={"username": "olga", "password": PASSWORD}),
    )
    check(
        "/auth/token",
        "post",
        client.post("/api/v1/auth/token", json={"username": "olga", "password": "nope-nope-nope"}),
    )
    auth = {"Authorization": f"Bearer {token['token']}"}
    check("/me", "get", client.get("/api/v1/me", headers=auth))
    check("/me", "get", client.get("/api/v1/me"))
    check(
        "/me/topup",
        "post",
        client.post("/api/v1/me/topup", json={"currency": "chips"}, headers=auth),
    )
    app.config["LOW_BALANCE_CHIPS"] = 10**9
    check(
        "/me/topup",
        "post",
        client.post("/api/v1/me/topup", json={"currency": "chips"}, headers=auth),
    )
    check("/fairness/public-key", "get", client.get("/api/v1/fairness/public-key"))
    pair = check(
        "/fairness/seed-pair", "get", client.get("/api/v1/fairness/seed-pair", headers=auth)
    )

    plant_server_seed(app, "olga", {0: True, 1: False})
    tie = check(
        "/casino-war/rounds",
        "post",
        client.post("/api/v1/casino-war/rounds", json={"bet": 500, "tie_bet": 100}, headers=auth),
    )
    assert tie["status"] == "awaiting_decision"
    check("/fairness/rotate", "post", client.post("/api/v1/fairness/rotate", json={}, headers=auth))
    check(
        "/casino-war/rounds",
        "post",
        client.post("/api/v1/casino-war/rounds", json={"bet": 1.5}, headers=auth),
    )
    rid = tie["id"]
    check(
        "/casino-war/rounds/{id}",
        "get",
        client.get(f"/api/v1/casino-war/rounds/{rid}", headers=auth),
    )
    check("/rounds/{id}/receipt", "get", client.get(f"/api/v1/rounds/{rid}/receipt", headers=auth))
    check(
        "/casino-war/rounds/{id}/decision",
        "post",
        client.post(
            f"/api/v1/casino-war/rounds/{rid}/decision", json={"choice": "war"}, headers=auth
        ),
    )
    check(
        "/casino-war/rounds/{id}/decision",
        "post",
        client.post(
            f"/api/v1/casino-war/rounds/{rid}/decision", json={"choice": "war"}, headers=auth
        ),
    )
    check(
        "/casino-war/rounds/{id}/decision",
        "post",
        client.post("/api/v1/casino-war/rounds/999/decision", json={"choice": "war"}, headers=auth),
    )
    check(
        "/casino-war/rounds/{id}",
        "get",
        client.get(f"/api/v1/casino-war/rounds/{rid}", headers=auth),
    )
    check(
        "/casino-war/rounds",
        "post",
        client.post("/api/v1/casino-war/rounds", json={"bet": 500}, headers=auth),
    )
    check("/rounds/{id}/receipt", "get", client.get(f"/api/v1/rounds/{rid}/receipt", headers=auth))

    game = check(
        "/sota/games",
        "post",
        client.post(
            "/api/v1/sota/games",
            json={"stake": 3, "rules": {"seats": 4, "teams": True}},
            headers=auth,
        ),
    )
    check("/sota/games/{id}", "get", client.get(f"/api/v1/sota/games/{game['id']}", headers=auth))
    check(
        "/sota/games",
        "post",
        client.post("/api/v1/sota/games", json={"stake": 3, "rules": {"nope": 1}}, headers=auth),
    )
    pow_game = check(
        "/sota/games",
        "post",
        client.post(
            "/api/v1/sota/games",
            json={"stake": 1, "rules": {"prisoners_of_war": True, "max_tricks": 40}},
            headers=auth,
        ),
    )
    url = f"/api/v1/sota/games/{pow_game['id']}/moves"
    if pow_game["status"] == "awaiting_move":
        check(
            "/sota/games/{id}/moves", "post", client.post(url, json={"cards": ["ZZ"]}, headers=auth)
        )
    while pow_game["status"] == "awaiting_move":
        pending = pow_game["pending"]
        pow_game = check(
            "/sota/games/{id}/moves",
            "post",
            client.post(url, json={"cards": pending["options"][: pending["count"]]}, headers=auth),
        )
    check("/sota/games/{id}/moves", "post", client.post(url, json={"cards": ["AS"]}, headers=auth))

    check("/rounds", "get", client.get("/api/v1/rounds?limit=2", headers=auth))
    check("/rounds", "get", client.get("/api/v1/rounds?limit=0", headers=auth))
    check("/casino-war/odds", "get", client.get("/api/v1/casino-war/odds?decks=2&bonus=ante"))
    check("/casino-war/odds", "get", client.get("/api/v1/casino-war/odds?decks=0"))
    rotated = check(
        "/fairness/rotate",
        "post",
        client.post("/api/v1/fairness/rotate", json={"client_seed": "after"}, headers=auth),
    )
    bundle = check(
        "/fairness/seed-pairs/{id}/bundle",
        "get",
        client.get(f"/api/v1/fairness/seed-pairs/{pair['seed_pair_id']}/bundle", headers=auth),
    )
    assert bundle["reveal"] == rotated["revealed"] and len(bundle["rounds"]) == 4
    for round_ in bundle["rounds"]:
        receipt = {"document": round_["document"], "signature": round_["signature"]}
        validator = Draft202012Validator({**document, "$ref": "#/components/schemas/Receipt"})
        assert not list(validator.iter_errors(receipt))
    other = bearer(client, "pavel")
    check(
        "/fairness/seed-pairs/{id}/bundle",
        "get",
        client.get(f"/api/v1/fairness/seed-pairs/{pair['seed_pair_id']}/bundle", headers=other),
    )

    documented = {
        (path, method)
        for path, method, _ in operations(document)
        if not path.startswith("/operator")
    }
    assert {(path, method) for path, method, _ in check.checked} == documented
