"""The OpenAPI 3.1 document is well formed and describes the real answers of every endpoint."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator
from openapi_spec_validator import OpenAPIV31SpecValidator
from operator_support import add_user
from operator_support import bearer as staff_bearer
from web_support import PASSWORD
from web_support import bearer
from web_support import plant_server_seed

from sota_casino.web.openapi import openapi_document

METHODS = ("get", "post", "put", "patch", "delete")
#: Flask's names of path arguments, as API.md and the document name them.
PATH_ARGUMENTS = {
    "round_id": "id",
    "seed_pair_id": "id",
    "user_id": "id",
    "seq": "seq",
    "name": "name",
}
#: The POSTs that move money (API.md): each takes an Idempotency-Key, and no other call does.
MONEY_MOVING = {
    ("/me/topup", "post"),
    ("/casino-war/rounds", "post"),
    ("/casino-war/rounds/{id}/decision", "post"),
    ("/sota/games", "post"),
    ("/sota/games/{id}/moves", "post"),
    ("/operator/adjustments", "post"),
}


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


def test_the_document_validates_as_openapi_3_1(client: FlaskClient) -> None:
    served = client.get("/api/v1/openapi.json").get_json()
    errors = [error.message for error in OpenAPIV31SpecValidator(served).iter_errors()]
    assert not errors, errors[:5]


def app_operations(app: Flask) -> set[tuple[str, str]]:
    """Every (path, method) the app serves under ``/api/v1``, in the document's spelling."""
    found = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1/"):
            continue
        path = re.sub(
            r"<(?:\w+:)?(\w+)>", lambda m: "{" + PATH_ARGUMENTS[m.group(1)] + "}", rule.rule
        )
        found |= {
            (path.removeprefix("/api/v1"), m.lower()) for m in rule.methods - {"HEAD", "OPTIONS"}
        }
    return found


def test_the_document_describes_exactly_the_endpoints_of_the_app(
    app: Flask, document: dict[str, Any]
) -> None:
    documented = {(path, method) for path, method, _ in operations(document)}
    served = app_operations(app)
    assert served - documented == set(), "served but not in the OpenAPI document"
    assert documented - served == set(), "in the OpenAPI document but not served"
    assert ("/openapi.json", "get") in documented


def test_exactly_the_money_moving_posts_take_an_idempotency_key(document: dict[str, Any]) -> None:
    key = {"$ref": "#/components/parameters/IdempotencyKey"}
    taking = {
        (path, method)
        for path, method, op in operations(document)
        if key in op.get("parameters", [])
    }
    assert taking == MONEY_MOVING


def test_the_document_is_served(client: FlaskClient, document: dict[str, Any]) -> None:
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.get_json() == document


class Checker:
    """Validate real answers against the schema their operation documents for their status.

    A JSON answer is validated whole; a JSON Lines answer line by line, each a JSON object.
    """

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
        media = response.mimetype
        assert media in described["content"], f"{method} {path} {status} answered {media}"
        if media == "application/jsonl":
            lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
            assert lines and all(isinstance(line, dict) for line in lines)
        else:
            self.validate(
                f"{method} {path} {status}",
                described["content"][media]["schema"],
                response.get_json(),
            )
        self.checked.add((path, method, status))
        return response.get_json(silent=True)

    def validate(self, where: str, schema: dict[str, Any], value: Any) -> None:
        validator = Draft202012Validator({**self.document, **schema})
        errors = sorted(validator.iter_errors(value), key=str)
        assert not errors, f"{where}: {errors[0].message} at {list(errors[0].absolute_path)}"

    def operations(self) -> set[tuple[str, str]]:
        return {(path, method) for path, method, _ in self.checked}


def documented(document: dict[str, Any], *, operator: bool) -> set[tuple[str, str]]:
    return {
        (path, method)
        for path, method, _ in operations(document)
        if path.startswith("/operator/") == operator
    }


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

    check("/openapi.json", "get", client.get("/api/v1/openapi.json"))
    assert check.operations() == documented(document, operator=False)


def test_real_answers_of_every_operator_endpoint_match_their_schemas(
    app: Flask, client: FlaskClient, document: dict[str, Any]
) -> None:
    check = Checker(document)
    player = add_user(app, "alice")
    add_user(app, "olga", "operator")
    add_user(app, "ada", "auditor")
    alice, olga, ada = (staff_bearer(app, name) for name in ("alice", "olga", "ada"))
    plant_server_seed(app, "alice", {0: False, 1: True})
    client.post("/api/v1/casino-war/rounds", json={"bet": 500, "tie_bet": 100}, headers=alice)
    client.post("/api/v1/casino-war/rounds", json={"bet": 500}, headers=alice)  # left open
    client.post("/api/v1/sota/games", json={"stake": 2, "preset": "nordic"}, headers=alice)

    audit = "/api/v1/operator/audit"
    check("/operator/audit", "get", client.get(f"{audit}?limit=2&action=round.", headers=ada))
    check("/operator/audit", "get", client.get(f"{audit}?since=soon", headers=ada))
    check("/operator/audit", "get", client.get(audit))
    check("/operator/audit", "get", client.get(audit, headers=alice))
    check("/operator/audit/proof/{seq}", "get", client.get(f"{audit}/proof/1", headers=ada))
    check("/operator/audit/checkpoints", "post", client.post(f"{audit}/checkpoints", headers=ada))
    check("/operator/audit/checkpoints", "post", client.post(f"{audit}/checkpoints", headers=olga))
    check("/operator/audit/checkpoints", "get", client.get(f"{audit}/checkpoints", headers=ada))
    check(
        "/operator/audit/checkpoint-note",
        "get",
        client.get(f"{audit}/checkpoint-note", headers=ada),
    )
    check("/operator/audit/proof/{seq}", "get", client.get(f"{audit}/proof/2", headers=ada))
    check("/operator/audit/verify", "get", client.get(f"{audit}/verify", headers=ada))
    consistency = f"{audit}/consistency"
    check(
        "/operator/audit/consistency",
        "get",
        client.get(f"{consistency}?old_size=1&new_size=5", headers=ada),
    )
    check("/operator/audit/consistency", "get", client.get(consistency, headers=ada))
    check("/operator/audit/export", "get", client.get(f"{audit}/export", headers=ada))

    check(
        "/operator/ledger/summary",
        "get",
        client.get("/api/v1/operator/ledger/summary", headers=ada),
    )
    check("/operator/ledger/check", "get", client.get("/api/v1/operator/ledger/check", headers=ada))

    players = "/api/v1/operator/players"
    check("/operator/players", "get", client.get(f"{players}?q=AL", headers=ada))
    check("/operator/players", "get", client.get(f"{players}?q={'x' * 65}", headers=ada))
    check("/operator/players/{id}", "get", client.get(f"{players}/{player}", headers=ada))
    check("/operator/players/{id}", "get", client.get(f"{players}/999", headers=ada))
    adjust = "/api/v1/operator/adjustments"
    credit = {"user_id": player, "currency": "chips", "amount": 250, "reason": "goodwill"}
    check("/operator/adjustments", "post", client.post(adjust, json=credit, headers=olga))
    check("/operator/adjustments", "post", client.post(adjust, json=credit, headers=ada))
    check(
        "/operator/adjustments",
        "post",
        client.post(adjust, json={**credit, "amount": 2.5}, headers=olga),
    )
    check(
        "/operator/adjustments",
        "post",
        client.post(adjust, json={**credit, "user_id": 999}, headers=olga),
    )
    check(
        "/operator/adjustments",
        "post",
        client.post(adjust, json={**credit, "amount": -(10**9)}, headers=olga),
    )
    check(
        "/operator/adjustments",
        "post",
        client.post(adjust, data="{", headers=olga, content_type="application/json"),
    )
    role, locked = f"{players}/{player}/role", f"{players}/{player}/locked"
    check(
        "/operator/players/{id}/role",
        "put",
        client.put(role, json={"role": "auditor"}, headers=olga),
    )
    check(
        "/operator/players/{id}/role", "put", client.put(role, json={"role": "king"}, headers=olga)
    )
    check(
        "/operator/players/{id}/locked",
        "put",
        client.put(locked, json={"locked": True}, headers=olga),
    )
    check(
        "/operator/players/{id}/locked",
        "put",
        client.put(f"{players}/999/locked", json={"locked": True}, headers=olga),
    )

    tables = "/api/v1/operator/tables"
    check("/operator/tables/{name}", "get", client.get(f"{tables}/casino_war", headers=ada))
    check("/operator/tables/{name}", "get", client.get(f"{tables}/sota", headers=ada))
    check("/operator/tables/{name}", "get", client.get(f"{tables}/poker", headers=ada))
    check(
        "/operator/tables/{name}",
        "put",
        client.put(f"{tables}/casino_war", json={"decks": 4}, headers=olga),
    )
    check(
        "/operator/tables/{name}",
        "put",
        client.put(f"{tables}/sota", json={"max_stake": 50}, headers=olga),
    )
    check(
        "/operator/tables/{name}",
        "put",
        client.put(f"{tables}/casino_war", json={"decks": 0}, headers=olga),
    )
    check(
        "/operator/tables/{name}",
        "put",
        client.put(f"{tables}/casino_war", json={"decks": 4}, headers=ada),
    )

    assert check.operations() == documented(document, operator=True)
