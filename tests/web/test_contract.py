"""Every endpoint agrees with its documented request schema, both ways.

For each operation with a JSON body or query parameters, bodies are derived from the schema:
values it allows (each enum value, each bound, the longest text) and values it refuses (wrong
types, one past each bound, unknown fields, missing fields, NUL). Which side each falls on is
decided by the schema itself (jsonschema), then the service must agree: a refused body is a 422
naming the field; an allowed one is never refused as invalid input. Only what no static schema
knows may still refuse an allowed value: a table's limits (``invalid_bet``) and the log's size.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator
from jsonschema import FormatChecker
from jsonschema import validators
from operator_support import add_user
from operator_support import bearer as staff_bearer
from web_support import PASSWORD
from web_support import bearer
from web_support import plant_server_seed

from sota_casino.web.openapi import openapi_document

#: Limits of a table: a refusal of a schema-valid body the contract leaves to the service.
TABLE_LIMITS = {"invalid_bet"}
#: And the player's signature, checked against the keys the player registered (a key_id sent
#: by a player without a key), where the operation says so beyond its schema.
SIGNATURES = {"signature_invalid", "signature_required"}
#: And the size of the log, which a proof between two sizes cannot pass, and one size against
#: the other (the operations name both beyond their schemas).
BETWEEN_SIZES = ("the log's size", "old_size must not exceed new_size")
#: JSON Schema lets ``1.0`` be an integer; the API, as its description says, does not.
StrictValidator = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)
    ),
)
#: ``date-time`` as the API documents it: ISO 8601, the zone optional (UTC).
FORMATS = FormatChecker(formats=())


@FORMATS.checks("date-time", raises=ValueError)
def iso_time(value: object) -> bool:
    return not isinstance(value, str) or bool(datetime.fromisoformat(value.replace("Z", "+00:00")))


WRONG_TYPES: tuple[Any, ...] = (1.0, "500", True, None, [], {}, 7)


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = document["components"]["schemas"][name]
    if "anyOf" in schema:  # an optional value: describe the value, not the null
        values = [s for s in schema["anyOf"] if s != {"type": "null"}]
        if len(values) == 1:
            return resolve(document, values[0])
    return schema


def text(length: int) -> str:
    """Text of ``length`` varied characters (a repeated one would be a weak password)."""
    return ("Quick-brown_fox.jumps0ver7lazy9dogs" * (length // 35 + 1))[:length]


def allowed_values(schema: dict[str, Any]) -> Iterator[Any]:
    yield from schema.get("enum", ())
    yield from schema.get("examples", ())  # what only a pattern allows
    if "const" in schema:
        yield schema["const"]
    for bound in ("minimum", "maximum"):
        if bound in schema:
            yield schema[bound]
    if schema.get("type") == "boolean":
        yield from (True, False)
    if "maxLength" in schema:
        yield text(schema["maxLength"])


def refused_values(schema: dict[str, Any]) -> Iterator[Any]:
    yield from WRONG_TYPES
    if "minimum" in schema:
        yield schema["minimum"] - 1
    if "maximum" in schema:
        yield schema["maximum"] + 1
    if "maxLength" in schema:
        yield text(schema["maxLength"] + 1)
    if schema.get("type") == "string" or "enum" in schema:
        yield from ("no-such-value", "bad\x00text")


def variants(
    document: dict[str, Any], schema: dict[str, Any], base: dict[str, Any]
) -> Iterator[tuple[dict[str, Any], str]]:
    """Yield (body, the field it is about): the base, each property changed, added, removed."""
    schema = resolve(document, schema)
    yield base, ""
    yield {**base, "surplus": 1}, "surplus"
    for name in schema.get("required", ()):
        yield {k: v for k, v in base.items() if k != name}, name
    for name, prop in schema.get("properties", {}).items():
        prop = resolve(document, prop)
        for value in (*allowed_values(prop), *refused_values(prop)):
            yield {**base, name: value}, name
        if prop.get("type") == "object" and "properties" in prop:
            inner = base.get(name) or {}
            for body, field in variants(document, prop, inner):
                yield {**base, name: body}, field or name


def takes_integer(schema: dict[str, Any]) -> bool:
    kinds = schema.get("type")
    return (
        kinds == "integer"
        or (isinstance(kinds, list) and "integer" in kinds)
        or any(takes_integer(option) for option in schema.get("anyOf", ()))
    )


class Contract:
    def __init__(self, app: Flask, client: FlaskClient) -> None:
        self.document = openapi_document(app)
        self.client = client
        self.seen: dict[str, tuple[int, int]] = {}

    def operation(self, path: str, method: str) -> dict[str, Any]:
        return self.document["paths"][path][method]

    def send_bodies(
        self, method: str, path: str, url: str, base: dict[str, Any], headers: dict[str, str]
    ) -> None:
        op = self.operation(path, method)
        schema = op["requestBody"]["content"]["application/json"]["schema"]
        validator = StrictValidator({**self.document, **schema}, format_checker=FORMATS)
        for body, field in variants(self.document, schema, copy.deepcopy(base)):
            response = self.client.open(
                f"/api/v1{url}",
                method=method.upper(),
                data=json.dumps(body),
                content_type="application/json",
                headers=headers,
            )
            self.judge(
                op["operationId"],
                validator.is_valid(body),
                response,
                body,
                field,
                beyond=SIGNATURES if _says_beyond_schema(op, SIGNATURES) else set(),
            )

    def send_queries(
        self, path: str, base: dict[str, str], headers: dict[str, str], url: str | None = None
    ) -> None:
        op = self.operation(path, "get")
        for param in op["parameters"]:
            if param.get("in") == "path":
                continue  # the URL holds it
            schema = resolve(self.document, param["schema"])
            validator = StrictValidator({**self.document, **schema}, format_checker=FORMATS)
            # an empty value is a value too: "" is no number, no option, no date
            for value in (*allowed_values(schema), *refused_values(schema), ""):
                if isinstance(value, (list, dict)) or value is None:
                    continue  # a query string holds text only
                text = json.dumps(value) if isinstance(value, bool) else str(value)
                # the value as the service reads it: digits are numbers where numbers are
                # asked for, the rest text
                number = text.lstrip("-").isdigit() and takes_integer(schema)
                typed = int(text) if number else text
                query = {**base, param["name"]: text}
                response = self.client.get(
                    f"/api/v1{url or path}", query_string=query, headers=headers
                )
                ok = validator.is_valid(typed)
                self.judge(op["operationId"], ok, response, query, param["name"])

    def judge(
        self,
        operation: str,
        allowed: bool,
        response: Any,
        body: Any,
        field: str,
        beyond: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        where = f"{operation} {body!r}: {response.status_code} {response.get_data(as_text=True)}"
        error = (response.get_json(silent=True) or {}).get("error") or {}
        assert response.status_code < 500, where
        if allowed:
            refused_as_input = (
                response.status_code == 422
                and error.get("code") not in TABLE_LIMITS | beyond
                and not any(rule in error.get("message", "") for rule in BETWEEN_SIZES)
            )
            assert not refused_as_input, f"the schema allows it, the service refuses: {where}"
        else:
            assert response.status_code == 422, f"the schema refuses it, the service took: {where}"
            if field:
                assert field in error["message"], f"the refusal does not name {field}: {where}"
        counts = self.seen.get(operation, (0, 0))
        self.seen[operation] = (counts[0] + allowed, counts[1] + (not allowed))


def _says_beyond_schema(op: dict[str, Any], codes: set[str]) -> bool:
    """Whether the operation's 422 answer names each of ``codes`` as a rule beyond its schema."""
    said = json.dumps(op["responses"].get("422", {}))
    return all(code in said for code in codes)


@pytest.fixture
def contract(app: Flask, client: FlaskClient) -> Contract:
    return Contract(app, client)


def test_every_operation_agrees_with_its_request_schema_both_ways(
    app: Flask, client: FlaskClient, contract: Contract
) -> None:
    add_user(app, "carla")
    player_id = add_user(app, "pat")  # the one whose role, lock and balance change
    add_user(app, "olga", "operator")
    add_user(app, "kim")  # registers a key: carla's decisions would need signing
    carla, olga = staff_bearer(app, "carla"), staff_bearer(app, "olga")
    plant_server_seed(app, "carla", {0: True})
    tie = client.post("/api/v1/casino-war/rounds", json={"bet": 500}, headers=carla).get_json()
    client.post(
        f"/api/v1/casino-war/rounds/{tie['id']}/decision", json={"choice": "war"}, headers=carla
    )
    game = client.post("/api/v1/sota/games", json={"stake": 1}, headers=carla).get_json()
    assert game["status"] == "settled"  # so every move is refused for the state, not the body

    credentials = {"username": "dora", "password": PASSWORD}
    send = contract.send_bodies
    send("post", "/auth/register", "/auth/register", credentials, {})
    send("post", "/auth/token", "/auth/token", credentials, {})
    send("post", "/me/topup", "/me/topup", {"currency": "chips"}, carla)
    send("post", "/fairness/rotate", "/fairness/rotate", {}, carla)
    # With the table's rules (every option), so that each one's variants are tried.
    bet = {"bet": 500, "rules": tie["rules"]}
    send("post", "/casino-war/rounds", "/casino-war/rounds", bet, carla)
    decision = f"/casino-war/rounds/{tie['id']}/decision"
    send("post", "/casino-war/rounds/{id}/decision", decision, {"choice": "war"}, carla)
    send("post", "/sota/games", "/sota/games", {"stake": 1}, carla)
    moves = f"/sota/games/{game['id']}/moves"
    send("post", "/sota/games/{id}/moves", moves, {"cards": ["AS"]}, carla)
    send(
        "put",
        "/operator/players/{id}/role",
        f"/operator/players/{player_id}/role",
        {"role": "player"},
        olga,
    )
    send(
        "put",
        "/operator/players/{id}/locked",
        f"/operator/players/{player_id}/locked",
        {"locked": False},
        olga,
    )
    adjustment = {"user_id": player_id, "currency": "sweets", "amount": 1, "reason": "goodwill"}
    send("post", "/operator/adjustments", "/operator/adjustments", adjustment, olga)
    send("put", "/operator/tables/{name}", "/operator/tables/casino_war", {"decks": 6}, olga)
    send("post", "/me/keys", "/me/keys", {"public_key_hex": "ab" * 32}, staff_bearer(app, "kim"))

    contract.send_queries("/casino-war/odds", {}, {})
    contract.send_queries("/rounds", {}, carla)
    contract.send_queries("/operator/audit", {}, olga)
    contract.send_queries("/operator/audit/checkpoints", {}, olga)
    contract.send_queries("/operator/ledger/math", {}, olga)
    contract.send_queries("/operator/audit/consistency", {"old_size": "1", "new_size": "2"}, olga)
    contract.send_queries("/operator/players", {}, olga)
    assert client.get(f"/api/v1/rounds/{tie['id']}/proof", headers=carla).status_code == 200
    size = str(client.get("/api/v1/transparency/checkpoint").get_json()["size"])
    contract.send_queries("/transparency/consistency", {"old_size": size, "new_size": size}, {})
    contract.send_queries("/operator/players/export", {}, olga)
    for name in ("rounds", "transfers", "seed-pairs"):
        url = f"/operator/players/{player_id}/{name}"
        contract.send_queries(f"/operator/players/{{id}}/{name}", {}, olga, url)
    for name in ("rounds", "transfers", "seed-pairs"):
        url = f"/operator/players/{player_id}/{name}/export"
        contract.send_queries(f"/operator/players/{{id}}/{name}/export", {}, olga, url)
    contract.send_queries("/operator/audit/range-export", {}, olga)
    contract.send_queries("/operator/audit/entries/export", {}, olga)
    contract.send_queries("/operator/approvals", {}, olga)
    contract.send_queries("/operator/alerts", {}, olga)

    # Four eyes: olga decides what otto proposed (and proposes what a second operator decides).
    add_user(app, "otto", "operator")
    otto = staff_bearer(app, "otto")
    # pat's role changed above: make pat a player again to be paid
    client.put(f"/api/v1/operator/players/{player_id}/role", json={"role": "player"}, headers=otto)
    payee = player_id
    proposal = {"user_id": payee, "currency": "chips", "amount": 200_000, "reason": "big win"}
    send(
        "post", "/operator/approvals/adjustments", "/operator/approvals/adjustments", proposal, olga
    )
    send(
        "post",
        "/operator/approvals/tables/{name}",
        "/operator/approvals/tables/casino_war",
        {"decks": 4},
        olga,
    )
    for decision in ("approve", "reject"):
        made = client.post(
            "/api/v1/operator/approvals/adjustments", json=proposal, headers=otto
        ).get_json()
        assert "id" in made, made
        path = f"/operator/approvals/{{id}}/{decision}"
        send("post", path, path.replace("{id}", str(made["id"])), {"note": "checked"}, olga)
    rule = {"kind": "large_win", "currency": "chips", "threshold": 100_000, "period_hours": 24}
    send("post", "/operator/alerts/rules", "/operator/alerts/rules", rule, olga)
    rule_id = client.get("/api/v1/operator/alerts/rules", headers=olga).get_json()["rules"][0]["id"]
    path = "/operator/alerts/rules/{id}/enabled"
    send("put", path, path.replace("{id}", str(rule_id)), {"enabled": True}, olga)
    send("put", "/operator/me/time-zone", "/operator/me/time-zone", {"time_zone": "UTC"}, olga)

    with_input = {
        op["operationId"]
        for item in contract.document["paths"].values()
        for op in item.values()
        if "requestBody" in op
        or any("in" in p and p["in"] == "query" for p in op.get("parameters", []))
    }
    assert set(contract.seen) == with_input
    for operation, (allowed, refused) in contract.seen.items():
        assert allowed and refused, f"{operation}: {allowed} allowed, {refused} refused bodies"


def test_a_refusal_names_the_field_and_what_it_must_be(client: FlaskClient) -> None:
    headers = bearer(client, "erin")
    response = client.post("/api/v1/casino-war/rounds", json={"bet": 1.0}, headers=headers)
    assert response.status_code == 422
    assert response.get_json() == {
        "error": {
            "code": "invalid_input",
            "message": "bet must be an integer, not a number with a fraction or exponent",
            "field": "bet",
        }
    }
