"""The OpenAPI 3.1 document is well formed and describes the real answers of every endpoint."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator
from openapi_spec_validator import OpenAPIV31SpecValidator
from operator_support import add_user
from operator_support import bearer as staff_bearer
from web_support import PASSWORD
from web_support import bearer
from web_support import plant_server_seed

from sota_casino.core import fairness
from sota_casino.web.openapi import FEEDS
from sota_casino.web.openapi import PATH_NAMES
from sota_casino.web.openapi import openapi_document

METHODS = ("get", "post", "put", "patch", "delete")
JSON = "application/json"
#: The POSTs that move money, or propose or decide a change (four eyes): each takes an
#: Idempotency-Key, and no other call does.
MONEY_MOVING = {
    ("/me/topup", "post"),
    ("/casino-war/rounds", "post"),
    ("/casino-war/rounds/{id}/decision", "post"),
    ("/sota/games", "post"),
    ("/sota/games/{id}/moves", "post"),
    ("/operator/adjustments", "post"),
    ("/operator/approvals/adjustments", "post"),
    ("/operator/approvals/tables/{name}", "post"),
    ("/operator/approvals/operators/{id}", "post"),
    ("/operator/approvals/{id}/approve", "post"),
    ("/operator/approvals/{id}/reject", "post"),
}


@pytest.fixture
def document(app: Flask) -> dict[str, Any]:
    """The document of the whole API (that the app serves it unchanged is tested below)."""
    return openapi_document(app)


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
    schemas = document["components"]["schemas"]
    assert schemas
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)


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
            r"<(?:\w+:)?(\w+)>", lambda m: "{" + PATH_NAMES.get(m[1], m[1]) + "}", rule.rule
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


def test_every_operation_taking_a_key_declares_the_422_of_a_key_used_with_another_body(
    client: FlaskClient, document: dict[str, Any]
) -> None:
    """A key already used with another request refuses a schema-valid one (a top-up under the
    key of a bet): each operation that takes a key names that rule on its 422, where clients
    and schemathesis's acceptance check read what may refuse valid data."""
    headers = {**bearer(client, "bob"), "Idempotency-Key": "key-1"}
    placed = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=headers)
    assert placed.status_code == 201, placed.get_json()
    answer = client.post("/api/v1/me/topup", json={"currency": "chips"}, headers=headers)
    assert answer.status_code == 422, answer.get_json()
    assert answer.get_json()["error"]["code"] == "idempotency_mismatch"
    undeclared = [
        (path, method)
        for path, method in sorted(MONEY_MOVING)
        if not any(
            "idempotency_mismatch" in rule
            for rule in document["paths"][path][method]["responses"]["422"].get(
                "x-beyond-schema", []
            )
        )
    ]
    assert undeclared == []


def field_schema(document: dict[str, Any], schema: dict[str, Any], pointer: str) -> Any:
    """The schema of the field at ``pointer`` in a body of ``schema`` (None: no such field).
    A number steps into an array's items; a nullable field is read as its non-null type."""
    node: Any = schema
    for part in pointer.removeprefix("/").split("/"):
        node = concrete(document, node)
        if part.isdigit():
            node = node.get("items") if node.get("type") == "array" else None
        else:
            node = node.get("properties", {}).get(part)
        if node is None:
            return None
    return concrete(document, node)


def concrete(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema or "anyOf" in schema:
        if "$ref" in schema:
            schema = resolve(document, schema["$ref"])
        else:
            schema = next(s for s in schema["anyOf"] if s.get("type") != "null")
    return schema


def success_schema(document: dict[str, Any], op: dict[str, Any]) -> dict[str, Any]:
    """The schema of ``op``'s JSON success answer (empty if it answers no JSON)."""
    status = next(status for status in op["responses"] if status.startswith("2"))
    schema = op["responses"][status]["content"].get(JSON, {}).get("schema")
    return concrete(document, schema) if schema else {}


def links(document: dict[str, Any]) -> list[tuple[dict[str, Any], str, str, dict[str, Any]]]:
    """(source operation, status, link name, link) for every link of the document."""
    return [
        (op, status, name, link)
        for _, _, op in operations(document)
        for status, answer in op["responses"].items()
        for name, link in answer.get("links", {}).items()
    ]


def parameter(op: dict[str, Any], qualified: str) -> dict[str, Any] | None:
    """The parameter ``in.name`` (e.g. ``query.limit``) of ``op``, if it has one."""
    where, name = qualified.split(".")
    found = [p for p in op.get("parameters", ()) if p.get("name") == name]
    return next((p for p in found if p["in"] == where), None)


def test_every_link_names_a_real_operation_parameter_and_response_field(
    document: dict[str, Any],
) -> None:
    """A link takes a field its source's answer has, of the type its target's parameter is, or
    a parameter its source's request has; its target is an operation of the document."""
    by_id = {op["operationId"]: op for _, _, op in operations(document)}
    wrong = []
    for source, status, name, link in links(document):
        target = by_id.get(link["operationId"])
        if target is None:
            wrong.append(f"{name}: no operation {link['operationId']}")
            continue
        answer = source["responses"][status]["content"][JSON]["schema"]
        for qualified, expression in link["parameters"].items():
            taken = parameter(target, qualified)
            if taken is None:
                wrong.append(f"{name}: {link['operationId']} takes no {qualified}")
            elif expression.startswith("$response.body#"):
                field = field_schema(document, answer, expression.removeprefix("$response.body#"))
                if (
                    field is None
                    or field.get("type") != concrete(document, taken["schema"])["type"]
                ):
                    wrong.append(f"{name}: {expression} is not a {qualified} of its answer")
            elif expression.startswith("$request."):
                if parameter(source, expression.removeprefix("$request.")) is None:
                    wrong.append(f"{name}: {source['operationId']} has no {expression}")
            else:
                wrong.append(f"{name}: {expression} reads neither the answer nor the request")
    assert wrong == []


def steps_not_always_there(
    document: dict[str, Any], schema: dict[str, Any], pointer: str
) -> list[str]:
    """The steps of ``pointer`` into a body of ``schema`` that a valid body may lack: a field
    that is not required (one that may be null is there: null is "no next page"). A step into a
    list's item is left out: an empty list has none, and then there is nothing to follow."""
    lacking = []
    node = concrete(document, schema)
    for part in pointer.removeprefix("/").split("/"):
        if part.isdigit():
            node = concrete(document, node["items"])
            continue
        if part not in node.get("required", ()):
            lacking.append(part)
        node = concrete(document, node["properties"][part])
    return lacking


def test_every_link_takes_only_what_every_request_and_answer_of_its_source_has(
    document: dict[str, Any],
) -> None:
    """A link can always be followed: each ``$request.`` expression names a parameter every
    request of its source has (a required one: an optional one that a request left out cannot
    be read, and schemathesis reports "Could not resolve parameter"), and each
    ``$response.body#`` pointer a field every answer has."""
    wrong = []
    for source, status, name, link in links(document):
        answer = source["responses"][status]["content"][JSON]["schema"]
        for expression in link["parameters"].values():
            if expression.startswith("$request."):
                taken = parameter(source, expression.removeprefix("$request."))
                if taken is None or not taken["required"]:
                    wrong.append(f"{source['operationId']} {name}: {expression} may be absent")
            elif lacking := steps_not_always_there(
                document, answer, expression.removeprefix("$response.body#")
            ):
                wrong.append(f"{source['operationId']} {name}: {expression} may lack {lacking}")
    assert wrong == []


def test_a_link_to_a_lists_first_item_says_an_empty_list_has_none(
    document: dict[str, Any],
) -> None:
    """OpenAPI cannot make a link depend on its answer, so a link into a list's first item
    says in words that an empty list has none to follow (schemathesis's stateful phase reports
    such a link of an empty list as "Failed to extract data from response")."""
    into_items = [
        (name, link.get("description", ""))
        for _, _, name, link in links(document)
        if any(re.search(r"/0/", e) for e in link["parameters"].values())
    ]
    assert len(into_items) >= 8
    assert [name for name, said in into_items if "an empty list has none" not in said] == []


def test_the_links_come_from_the_feeds_and_every_feed_is_used(document: dict[str, Any]) -> None:
    """Each link of the document is one of :data:`FEEDS` or a next page, and each feed links
    something: a renamed model or operation cannot leave a feed that feeds nothing. Each list
    whose answer has ``next_<name>`` and whose request takes ``<name>`` links its next page."""
    made = {
        (link["operationId"], link["parameters"][p], p)
        for _, _, _, link in links(document)
        for p in link["parameters"]
        if link["parameters"][p].startswith("$response.")
    }
    fed = {
        (target, f"$response.body#{pointer}", parameter)
        for _, pointer, parameter, targets in FEEDS
        for target in targets
    }
    next_pages = {
        (op["operationId"], f"$response.body#/next_{p['name']}", f"query.{p['name']}")
        for _, _, op in operations(document)
        for p in op.get("parameters", ())
        if p.get("in") == "query"
        and f"next_{p['name']}" in success_schema(document, op).get("properties", {})
    }
    assert {("findPlayers", "$response.body#/next_cursor", "query.cursor")} <= next_pages
    assert len(next_pages) == 10
    assert made == fed | next_pages
    # bet → round, decision, receipt, proof: the chain a player follows
    bet = next(op for _, _, op in operations(document) if op["operationId"] == "placeBet")
    assert {"getRound", "decide", "receipt", "roundProof", "bundle"} <= {
        link["operationId"] for link in bet["responses"]["201"]["links"].values()
    }


def test_a_rotation_links_to_the_bundle_of_the_pair_it_revealed(
    client: FlaskClient, auth: dict[str, str], document: dict[str, Any]
) -> None:
    """The pair a rotation reveals is the one whose bundle verifies its rounds (the README
    fetches it so); the pair it activates has none yet."""
    links = document["paths"]["/fairness/rotate"]["post"]["responses"]["200"]["links"]
    revealed = [
        link
        for link in links.values()
        if link["operationId"] == "bundle"
        and link["parameters"] == {"path.id": "$response.body#/revealed/document/seed_pair_id"}
    ]
    assert len(revealed) == 1
    rotation = client.post("/api/v1/fairness/rotate", json={}, headers=auth).get_json()
    pair = rotation["revealed"]["document"]["seed_pair_id"]
    bundle = client.get(f"/api/v1/fairness/seed-pairs/{pair}/bundle", headers=auth).get_json()
    assert bundle["reveal"] == rotation["revealed"]


def test_the_keys_and_proofs_say_what_they_sign_and_prove(
    client: FlaskClient, auth: dict[str, str], document: dict[str, Any]
) -> None:
    """A player's key signs bets too (docs/fairness.md, "Bets the player signs"), and a
    round's proof anchors its bet beside its commitment, decisions and settlement."""
    for path, method in (("/me/keys", "get"), ("/me/keys", "post")):
        assert "bets, decisions and moves" in document["paths"][path][method]["summary"]
    described = document["components"]["schemas"]["RoundProof"]["description"]
    bet = client.post("/api/v1/casino-war/rounds", json={"bet": 100}, headers=auth).get_json()
    if bet["status"] == "awaiting_decision":
        client.post(
            f"/api/v1/casino-war/rounds/{bet['id']}/decision", json={"choice": "war"}, headers=auth
        )
    proof = client.get(f"/api/v1/rounds/{bet['id']}/proof", headers=auth).get_json()
    kinds = {anchor["of"]["kind"] for anchor in proof["anchors"]}
    assert {"commitment", "bet", "settlement"} <= kinds
    assert all(kind in described for kind in ("commitment", "bet", "decisions", "settlement"))


def test_the_sign_up_says_it_keeps_the_language_of_accept_language(
    document: dict[str, Any],
) -> None:
    described = document["paths"]["/auth/register"]["post"]["description"]
    assert "Accept-Language" in described and "(en, fi, nb, pt)" in described


def test_revoking_a_token_takes_the_bearer_token_alone_and_answers_no_body(
    document: dict[str, Any],
) -> None:
    """It ends the token it is sent with: a session cookie is no credential it takes."""
    revoke = document["paths"]["/auth/token"]["delete"]
    assert revoke["operationId"] == "revokeToken"
    assert revoke["security"] == [{"bearer": []}]
    assert "content" not in revoke["responses"]["204"]
    assert {"401", "503"} <= set(revoke["responses"])


def test_a_pending_moves_table_holds_cards_and_face_down_nulls_only(
    document: dict[str, Any],
) -> None:
    table = document["components"]["schemas"]["PendingMove"]["properties"]["table"]
    assert "face-down ones null" in table["description"]
    validator = Draft202012Validator(table)
    assert validator.is_valid([["5C", None, None], ["5D"]])
    assert not validator.is_valid([["5C", "down"], []])


def test_a_move_may_name_the_choice_it_answers_and_a_copy_is_a_409(
    document: dict[str, Any],
) -> None:
    schemas = document["components"]["schemas"]
    assert "move" in schemas["PendingMove"]["required"]
    request = schemas["MoveRequest"]
    assert "move" in request["properties"] and request["required"] == ["cards"]
    described = document["paths"]["/sota/games/{id}/moves"]["post"]["description"]
    assert "pending.move" in described and "409 move_not_due" in described


def test_the_rules_schema_takes_lead_off_as_the_engine_does(
    client: FlaskClient, auth: dict[str, str], document: dict[str, Any]
) -> None:
    rules = document["components"]["schemas"]["GameRequest"]["properties"]["rules"]["anyOf"][0]
    assert Draft202012Validator(rules).is_valid({"lead": "off"})
    game = client.post(
        "/api/v1/sota/games", json={"stake": 1, "rules": {"lead": "off"}}, headers=auth
    )
    assert game.status_code == 201 and game.get_json()["rules"]["lead"] is None


def inline_schemas(node: Any, top: bool = True) -> list[dict[str, Any]]:
    """Every schema written inside ``node`` (not ``node`` itself), depth first."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if not top and ("properties" in node or "enum" in node or "const" in node):
            found.append(node)
        for value in node.values():
            found += inline_schemas(value, top=False)
    elif isinstance(node, list):
        for value in node:
            found += inline_schemas(value, top=False)
    return found


def test_a_code_generator_names_each_inline_schema_of_a_component_apart(
    document: dict[str, Any],
) -> None:
    """Generators (openapi-python-client, openapi-generator) name an inline object schema by
    its component and its title: two of one title in one component are one name for two
    models, and the generator drops the component (ActiveSeedPair, and Rotation with it)."""
    for name, schema in document["components"]["schemas"].items():
        titles = [s["title"] for s in inline_schemas(schema) if "properties" in s and "title" in s]
        assert len(titles) == len(set(titles)), f"{name}: {sorted(titles)}"
    pair = document["components"]["schemas"]["ActiveSeedPair"]["properties"]
    for name in ("commitment_document", "next_commitment_document"):
        assert pair[name]["$ref"] == "#/components/schemas/CommitmentDocument"


def test_every_enum_names_the_one_json_type_of_its_values(document: dict[str, Any]) -> None:
    """A code generator makes an enum of one type: an enum that names no type, or mixes
    integers and strings (war_down's 3, 1 and "by_rank"), drops the schema holding it (the
    Sota game and its request, so POST /sota/games was not generated)."""
    kinds = {str: "string", int: "integer", bool: "boolean"}
    enums = [s for s in inline_schemas(document) if "enum" in s]
    assert enums
    for schema in enums:
        assert schema.get("type") in kinds.values(), schema
        assert {kinds[type(value)] for value in schema["enum"]} == {schema["type"]}, schema
    rules = document["components"]["schemas"]["SotaGame"]["properties"]["rules"]
    war_down = Draft202012Validator({**document, **rules["properties"]["war_down"]})
    assert all(war_down.is_valid(value) for value in (3, 1, "by_rank"))
    assert not any(war_down.is_valid(value) for value in (2, "3", "by_suit", None))


def test_the_rules_settings_and_endings_a_script_reads_are_described(
    client: FlaskClient, document: dict[str, Any]
) -> None:
    """A round's rules, a table's settings and how a game ended are named values, not any
    object or any text: a typed client reads them as the fields they are."""
    schemas = document["components"]["schemas"]

    def validator(schema: dict[str, Any]) -> Draft202012Validator:
        return Draft202012Validator({**document, **schema})

    war_rules = validator(schemas["CasinoWarRound"]["properties"]["rules"])
    table = {"decks": 6, "min_bet": 100, "max_bet": 50000, "tie_payout": 10, "burn": 3}
    assert war_rules.is_valid({**table, "bonus": "none"})
    assert not war_rules.is_valid(table) and not war_rules.is_valid({**table, "bonus": "all"})
    ended_by = validator(schemas["SotaGame"]["properties"]["ended_by"])
    endings = ("last_seat", "no_cards", "max_tricks", "lead", "single_pass", None)
    assert all(ended_by.is_valid(ending) for ending in endings)
    assert not ended_by.is_valid("timeout")
    settings = validator(schemas["TableSettings"]["properties"]["settings"])
    for name in ("casino_war", "sota"):
        assert settings.is_valid(client.get(f"/api/v1/tables/{name}").get_json()["settings"])
    assert not settings.is_valid({}) and not settings.is_valid({**table, "bonus": 1})
    assert not settings.is_valid({"min_stake": 1, "max_stake": 5, "presets": ["nordic"]})


def reachable(document: dict[str, Any], roots: list[str]) -> set[str]:
    """The components the schemas ``roots`` point to name, and those they name, and so on."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop().rpartition("/")[2]
        if name not in seen:
            seen.add(name)
            todo += all_refs(document["components"]["schemas"][name])
    return seen


def nullable_undescribed(schema: dict[str, Any], where: str) -> list[str]:
    """The properties in ``schema`` (at any depth) that may be null and do not say when."""
    found: list[str] = []
    for name, prop in schema.get("properties", {}).items():
        branches = [prop, *prop.get("anyOf", ())]
        if any(branch.get("type") == "null" for branch in branches) and not prop.get("description"):
            found.append(f"{where}.{name}")
        found += nullable_undescribed(prop, f"{where}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += nullable_undescribed(schema[key], f"{where}[]")
    for branch in schema.get("anyOf", ()):
        found += nullable_undescribed(branch, where)
    return found


def test_every_nullable_field_of_an_answer_says_when_it_is_null(
    document: dict[str, Any],
) -> None:
    """A script reads null as the answer means it (an open round's outcome, a game's winner
    while it waits for a move, a list's last page, an alert not yet acknowledged, an approval
    not yet decided): each field of a player's or the operator's answer that may be null says
    when."""
    answers = [
        ref
        for _, _, op in operations(document)
        for response in op["responses"].values()
        for ref in all_refs(response.get("content", {}))
    ]
    names = reachable(document, answers)
    assert {"CasinoWarRound", "SotaGame", "RoundList", "Bundle"} <= names
    assert {"AlertView", "ApprovalView", "MathVersion", "RoundRow", "Transfer"} <= names
    schemas = document["components"]["schemas"]
    found = [where for name in sorted(names) for where in nullable_undescribed(schemas[name], name)]
    assert not found, f"nullable fields that do not say when they are null: {found}"
    tie_bet_won = schemas["CasinoWarRound"]["properties"]["tie_bet_won"]["description"]
    assert "open" in tie_bet_won


def open_objects(node: Any, where: str) -> list[str]:
    """Where in ``node`` an object schema names neither its members nor their schema."""
    found: list[str] = []
    if isinstance(node, dict):
        members = "properties" in node or isinstance(node.get("additionalProperties"), dict)
        if node.get("type") == "object" and not members:
            found.append(where)
        for key, value in node.items():
            found += open_objects(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += open_objects(value, f"{where}/{index}")
    return found


def test_the_operators_answers_describe_every_object_whose_members_are_known(
    document: dict[str, Any],
) -> None:
    """A table's rules and a player's totals per currency are named fields, as the players'
    rounds and tables have them; only what varies with its kind (an audit entry's data, a
    proposal's change, an alert's values, a check's findings) or is read as signed stays open."""
    answers = [
        ref
        for path, _, op in operations(document)
        if path.startswith("/operator/")
        for response in op["responses"].values()
        for ref in all_refs(response.get("content", {}))
    ]
    schemas = document["components"]["schemas"]
    found = {
        where
        for name in reachable(document, answers)
        for where in open_objects(schemas[name], name)
    }
    assert found == {
        "AlertView/properties/params/anyOf/0",
        "AlertView/properties/data",
        "ApprovalView/properties/change",
        "AuditEntry/properties/data",
        "AuditVerification/properties/findings/anyOf/0",
        "CheckVerdict/properties/findings/anyOf/0",
        "LedgerCheck/properties/findings/anyOf/0",
        "Signed/properties/document",
    }

    def rules(name: str) -> dict[str, Any]:
        return {k: v for k, v in schemas[name]["properties"]["rules"].items() if k != "title"}

    assert rules("MathVersion")["anyOf"] == [rules("CasinoWarRound"), rules("SotaGame")]
    assert rules("CasinoWarTheory") == rules("CasinoWarRound")


def undeclared(document: dict[str, Any], schema: dict[str, Any], value: Any) -> list[str]:
    """The members of ``value`` that the object schemas it is read by do not name."""
    while "$ref" in schema:
        schema = resolve(document, schema["$ref"])
    for branch in schema.get("anyOf", ()):
        if Draft202012Validator({**document, **branch}).is_valid(value):
            return undeclared(document, branch, value)
    found: list[str] = []
    if isinstance(value, dict):
        named = schema.get("properties", {})
        others = schema.get("additionalProperties")
        if named and not isinstance(others, dict):
            found += [key for key in value if key not in named]
        for key, member in value.items():
            inner = named.get(key, others if isinstance(others, dict) else None)
            if inner is not None:
                found += [f"{key}/{deeper}" for deeper in undeclared(document, inner, member)]
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            found += [f"{index}/{deeper}" for deeper in undeclared(document, schema["items"], item)]
    return found


def test_the_document_is_served(client: FlaskClient, document: dict[str, Any]) -> None:
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.get_json() == document


class Checker:
    """Make API calls and validate each answer against what its operation documents.

    The documented path is found from the URL; a JSON answer is validated whole against the
    schema documented for its status, a JSON Lines answer line by line, each a JSON object, a
    CSV answer as rows as long as its header; an answer documented without content has none.
    """

    def __init__(self, document: dict[str, Any], client: FlaskClient, closed: bool = False) -> None:
        self.document = document
        self.client = client
        #: Every member of an answer is one its schema names (a typed client drops the rest).
        self.closed = closed
        self.checked: set[tuple[str, str, str]] = set()
        templates = [path for path, _, _ in operations(document) if "{" in path]
        self.templates = {
            path: re.compile(re.sub(r"{\w+}", "[^/]+", path) + "$") for path in templates
        }

    def path_of(self, url: str) -> str:
        path = url.split("?", 1)[0]
        if path in self.document["paths"]:
            return path
        matches = [template for template, regex in self.templates.items() if regex.match(path)]
        assert len(matches) == 1, f"{url} matches {matches or 'no documented path'}"
        return matches[0]

    def __call__(self, method: str, url: str, **request: Any) -> Any:
        """Call ``method url`` (below ``/api/v1``) and return the checked JSON answer (the
        whole answer stays in ``self.response``)."""
        response = self.client.open(f"/api/v1{url}", method=method.upper(), **request)
        self.response = response
        path = self.path_of(url)
        op = self.document["paths"][path][method]
        status = str(response.status_code)
        where = f"{method} {url} {status}"
        assert status in op["responses"], f"{where} is not documented"
        described = op["responses"][status]
        if "$ref" in described:
            described = resolve(self.document, described["$ref"])
        if "content" not in described:
            assert response.get_data() == b"", f"{where} has a body"
            assert "Content-Type" not in response.headers, f"{where} types no body"
            self.checked.add((path, method, status))
            return None
        media = response.mimetype
        assert media in described["content"], f"{where} answered {media}"
        if media == "application/jsonl":
            lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
            assert lines and all(isinstance(line, dict) for line in lines), where
        elif media == "text/csv":
            rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
            assert rows and all(len(row) == len(rows[0]) for row in rows), where
        else:
            validator = Draft202012Validator(
                {**self.document, **described["content"][media]["schema"]}
            )
            errors = sorted(validator.iter_errors(response.get_json()), key=str)
            assert not errors, f"{where}: {errors[0].message} at {list(errors[0].absolute_path)}"
            if self.closed:
                schema = described["content"][media]["schema"]
                extra = undeclared(self.document, schema, response.get_json())
                assert not extra, f"{where}: members the document does not name: {extra}"
        self.checked.add((path, method, status))
        return response.get_json(silent=True)

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
    check = Checker(document, client, closed=True)
    olga = {"username": "olga", "password": PASSWORD}
    check("post", "/auth/register", json=olga)
    check("post", "/auth/register", json={"username": "x"})
    check("post", "/auth/register", data="{", content_type="application/json")
    check("post", "/auth/register", json=olga)
    token = check("post", "/auth/token", json=olga)
    check("post", "/auth/token", json={**olga, "password": "nope-nope-nope"})
    auth = {"Authorization": f"Bearer {token['token']}"}
    check("get", "/me", headers=auth)
    check("get", "/me")
    check("post", "/me/topup", json={"currency": "chips"}, headers=auth)
    app.config["LOW_BALANCE_CHIPS"] = 10**9
    check("post", "/me/topup", json={"currency": "chips"}, headers=auth)
    check("get", "/fairness/public-key")
    pair = check("get", "/fairness/seed-pair", headers=auth)

    plant_server_seed(app, "olga", {0: True, 1: False})
    tie = check("post", "/casino-war/rounds", json={"bet": 500, "tie_bet": 100}, headers=auth)
    assert tie["status"] == "awaiting_decision"
    check("post", "/fairness/rotate", json={}, headers=auth)
    check("post", "/casino-war/rounds", json={"bet": 1.5}, headers=auth)
    rid = tie["id"]
    check("get", f"/casino-war/rounds/{rid}", headers=auth)
    check("get", f"/rounds/{rid}/receipt", headers=auth)
    for _ in range(2):
        check("post", f"/casino-war/rounds/{rid}/decision", json={"choice": "war"}, headers=auth)
    check("post", "/casino-war/rounds/999/decision", json={"choice": "war"}, headers=auth)
    check("get", f"/casino-war/rounds/{rid}", headers=auth)
    check("post", "/casino-war/rounds", json={"bet": 500}, headers=auth)
    check("get", f"/rounds/{rid}/receipt", headers=auth)

    teams = {"stake": 3, "rules": {"seats": 4, "teams": True}}
    game = check("post", "/sota/games", json=teams, headers=auth)
    check("get", f"/sota/games/{game['id']}", headers=auth)
    check("post", "/sota/games", json={"stake": 3, "rules": {"nope": 1}}, headers=auth)
    prisoners = {"stake": 1, "rules": {"prisoners_of_war": True, "max_tricks": 40}}
    pow_game = check("post", "/sota/games", json=prisoners, headers=auth)
    moves = f"/sota/games/{pow_game['id']}/moves"
    if pow_game["status"] == "awaiting_move":
        check("post", moves, json={"cards": ["ZZ"]}, headers=auth)
    copied = False
    while pow_game["status"] == "awaiting_move":
        pending = pow_game["pending"]
        move = {"cards": pending["options"][: pending["count"]], "move": pending["move"]}
        pow_game = check("post", moves, json=move, headers=auth)
        if not copied and pow_game["status"] == "awaiting_move":
            check("post", moves, json=move, headers=auth)  # its copy: 409 move_not_due
            copied = True
    check("post", moves, json={"cards": ["AS"]}, headers=auth)

    played = check("get", "/me/stats", headers=auth)
    assert played["casino_war"]["rounds"] == 2 and played["sota"]["rounds"] == 2
    check("get", "/me/stats")
    key = {"public_key_hex": fairness.public_key_hex(Ed25519PrivateKey.generate())}
    check("post", "/me/keys", json=key, headers=auth)
    check("post", "/me/keys", json={"public_key_hex": "no"}, headers=auth)
    assert check("get", "/me/keys", headers=auth)["current_key_id"] is not None
    check("get", "/rounds?limit=2", headers=auth)
    check("get", "/rounds?limit=0", headers=auth)
    for name in ("casino_war", "sota", "blackjack"):
        check("get", f"/tables/{name}")
    check("get", "/casino-war/odds?decks=2&bonus=ante")
    check("get", "/casino-war/odds?decks=0")
    rotated = check("post", "/fairness/rotate", json={"client_seed": "after"}, headers=auth)
    bundle_url = f"/fairness/seed-pairs/{pair['seed_pair_id']}/bundle"
    bundle = check("get", bundle_url, headers=auth)
    assert bundle["reveal"] == rotated["revealed"] and len(bundle["rounds"]) == 4
    for round_ in bundle["rounds"]:
        receipt = {"document": round_["document"], "signature": round_["signature"]}
        validator = Draft202012Validator({**document, "$ref": "#/components/schemas/Receipt"})
        assert not list(validator.iter_errors(receipt))
    check("get", bundle_url, headers=bearer(client, "pavel"))
    check("get", f"/rounds/{rid}/proof", headers=auth)
    check("get", f"/rounds/{rid}/proof", headers=bearer(client, "quinn"))
    latest = check("get", "/transparency/checkpoint")
    check("get", f"/transparency/checkpoints/{latest['size']}")
    check("get", f"/transparency/checkpoints/{latest['size'] + 1}")
    size = latest["size"]
    check("get", f"/transparency/consistency?old_size={size}&new_size={size}")
    check("get", f"/transparency/consistency?old_size={size}&new_size={size - 1}")
    check("get", "/openapi.json")
    check("delete", "/auth/token", headers=auth)
    check("delete", "/auth/token", headers=auth)  # ended: 401
    check("get", "/me", headers=auth)
    assert check.response.status_code == 401
    assert check.operations() == documented(document, operator=False)


def test_real_answers_of_every_operator_endpoint_match_their_schemas(
    app: Flask, client: FlaskClient, document: dict[str, Any]
) -> None:
    check = Checker(document, client, closed=True)
    player = add_user(app, "alice")
    add_user(app, "olga", "operator")
    add_user(app, "ada", "auditor")
    alice, olga, ada = (staff_bearer(app, name) for name in ("alice", "olga", "ada"))
    plant_server_seed(app, "alice", {0: False, 1: True})
    client.post("/api/v1/casino-war/rounds", json={"bet": 500, "tie_bet": 100}, headers=alice)
    client.post("/api/v1/casino-war/rounds", json={"bet": 500}, headers=alice)  # left open
    client.post("/api/v1/sota/games", json={"stake": 2, "preset": "nordic"}, headers=alice)

    check("get", "/operator/audit?limit=2&action=round.", headers=ada)
    check("get", "/operator/audit?since=soon", headers=ada)
    check("get", "/operator/audit")
    check("get", "/operator/audit", headers=alice)
    check("get", "/operator/audit/proof/1", headers=ada)  # no checkpoint yet
    check("post", "/operator/audit/checkpoints", headers=ada)
    check("post", "/operator/audit/checkpoints", headers=olga)
    check("get", "/operator/audit/checkpoints", headers=ada)
    check("get", "/operator/audit/checkpoint-note", headers=ada)
    check("get", "/operator/audit/proof/2", headers=ada)
    check("get", "/operator/audit/verify", headers=ada)
    check("get", "/operator/audit/consistency?old_size=1&new_size=5", headers=ada)
    check("get", "/operator/audit/consistency", headers=ada)
    check("get", "/operator/audit/export", headers=ada)
    check("get", "/operator/ledger/summary", headers=ada)
    check("get", "/operator/ledger/check", headers=ada)
    math = check("get", "/operator/ledger/math?since=2000-01-01", headers=ada)
    assert {version["game"] for version in math["versions"]} == {"casino_war", "sota"}
    check("get", "/operator/ledger/math?since=soon", headers=ada)
    check("post", "/operator/checks/audit", headers=olga)
    check("post", "/operator/checks/audit", headers=ada)
    check("get", "/operator/checks/audit", headers=ada)
    check("get", "/operator/checks/nonsense", headers=ada)

    check("get", "/operator/players?q=AL", headers=ada)
    check("get", f"/operator/players?q={'x' * 65}", headers=ada)
    check("get", f"/operator/players/{player}", headers=ada)
    check("get", "/operator/players/999", headers=ada)
    credit = {"user_id": player, "currency": "chips", "amount": 250, "reason": "goodwill"}
    check("post", "/operator/adjustments", json=credit, headers=olga)
    check("post", "/operator/adjustments", json=credit, headers=ada)
    for bad in ({"amount": 2.5}, {"user_id": 999}, {"amount": -(10**9)}):
        check("post", "/operator/adjustments", json=credit | bad, headers=olga)
    check("post", "/operator/adjustments", data="{", content_type=JSON, headers=olga)
    check("put", f"/operator/players/{player}/role", json={"role": "auditor"}, headers=olga)
    check("put", f"/operator/players/{player}/role", json={"role": "king"}, headers=olga)
    operator = {"role": "operator"}  # needs approval: 409
    check("put", f"/operator/players/{player}/role", json=operator, headers=olga)
    check("put", f"/operator/players/{player}/locked", json={"locked": True}, headers=olga)
    check("put", "/operator/players/999/locked", json={"locked": True}, headers=olga)

    for name in ("casino_war", "sota", "poker"):
        check("get", f"/operator/tables/{name}", headers=ada)
    check("put", "/operator/tables/casino_war", json={"decks": 4}, headers=olga)
    check("put", "/operator/tables/sota", json={"max_stake": 50}, headers=olga)
    check("put", "/operator/tables/casino_war", json={"decks": 0}, headers=olga)
    check("put", "/operator/tables/casino_war", json={"decks": 4}, headers=ada)

    bea = add_user(app, "bea")
    add_user(app, "otto", "operator")
    otto = staff_bearer(app, "otto")
    for path in ("/operator/players", f"/operator/players/{bea}/rounds?order=oldest"):
        check("get", path, headers=ada)
    check("get", f"/operator/players/{bea}/transfers?since=soon", headers=ada)
    check("get", f"/operator/players/{bea}/seed-pairs", headers=ada)
    check("get", "/operator/players/999/seed-pairs", headers=ada)
    for path in ("/operator/players/export", f"/operator/players/{bea}/rounds/export"):
        check("get", f"{path}?format=csv", headers=ada)
    check("get", f"/operator/players/{bea}/transfers/export?format=xml", headers=ada)
    check("get", f"/operator/players/{bea}/seed-pairs/export?format=csv", headers=ada)
    check("get", f"/operator/players/{bea}/seed-pairs/export?since=soon", headers=ada)
    check("get", "/operator/players/999/seed-pairs/export", headers=ada)
    check("get", "/operator/audit/entries/export?format=csv&action=user.", headers=ada)
    check("get", "/operator/audit/entries/export?until=later", headers=ada)
    check("get", "/operator/audit/range-export?from_seq=2&to_seq=4", headers=ada)
    check("get", "/operator/audit/range-export?from_seq=99999", headers=ada)
    large = {"user_id": bea, "currency": "chips", "amount": 250_000, "reason": "prize"}
    check("post", "/operator/adjustments", json=large, headers=olga)  # needs approval: 409
    check("post", "/operator/approvals/adjustments", json=large, headers=olga)
    check("post", "/operator/approvals/adjustments", json=large, headers=ada)
    check("post", "/operator/approvals/tables/casino_war", json={"decks": 2}, headers=olga)
    check("post", "/operator/approvals/tables/casino_war", json={"decks": 0}, headers=olga)
    check("get", "/operator/approvals", headers=ada)
    check("get", "/operator/approvals?status=maybe", headers=ada)
    check("post", "/operator/approvals/1/approve", json={}, headers=olga)  # olga's own: 403
    check("post", "/operator/approvals/1/approve", json={"note": "ok"}, headers=otto)
    check("post", "/operator/approvals/1/approve", json={}, headers=otto)  # decided: 409
    check("post", "/operator/approvals/2/reject", json={"note": "no"}, headers=otto)
    check("post", "/operator/approvals/99/reject", json={}, headers=otto)
    check("post", f"/operator/approvals/operators/{player}", headers=olga)
    check("post", "/operator/approvals/operators/999", headers=olga)
    check("post", f"/operator/approvals/operators/{player}", headers=ada)
    rule = {"kind": "player_adjustments", "currency": "chips", "threshold": 100}
    check("post", "/operator/alerts/rules", json=rule, headers=olga)
    check("post", "/operator/alerts/rules", json=rule | {"kind": "weather"}, headers=olga)
    check("get", "/operator/alerts/rules", headers=ada)
    check("put", "/operator/alerts/rules/1/enabled", json={"enabled": False}, headers=olga)
    check("put", "/operator/alerts/rules/9/enabled", json={"enabled": True}, headers=olga)
    check("put", "/operator/alerts/rules/1/enabled", json={"enabled": True}, headers=olga)
    check("post", "/operator/adjustments", json=credit | {"user_id": bea}, headers=olga)
    check("get", "/operator/alerts?open=1", headers=ada)
    check("post", "/operator/alerts/1/acknowledge", headers=olga)
    check("post", "/operator/alerts/9/acknowledge", headers=olga)
    check("put", "/operator/me/time-zone", json={"time_zone": "Europe/Oslo"}, headers=ada)
    check("put", "/operator/me/time-zone", json={"time_zone": "Mars/Base"}, headers=ada)
    assert check.operations() == documented(document, operator=True)
