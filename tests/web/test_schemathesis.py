"""The OpenAPI document against the code, by schemathesis: every operation of
``/api/v1/openapi.json`` called with generated requests as a player, an auditor and an
operator; every check must pass: no server error, a documented status with a documented content
type and body, bad input refused, and schema-valid input accepted (``positive_data_acceptance``).

A schema-valid request may still get a 422 only where the document says why: the operation's
422 answer lists its rules beyond the schema (``x-beyond-schema``: a table's current limits,
one field against another, the log's size, an ``Idempotency-Key`` already used with another
request), and only those operations expect a 422 for valid data. Integers are sent without a
fraction, as the document asks (JSON Schema cannot tell ``1.0`` from ``1``; the service
refuses ``1.0``).

Every call runs with the role's token, but those of the operation that ends the token it is
sent with (:data:`ENDS_ITS_TOKEN`), which each get a token of their own: the calls after one
would otherwise meet only a 401, and the run checks that the role's token outlived it.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from operator_support import add_user
from operator_support import bearer
from schemathesis.config import SchemathesisConfig

from sota_casino.web.openapi import openapi_document

EXAMPLES_PER_OPERATION = 8
#: schemathesis's own expectation for valid data.
ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]
#: The operation that ends the bearer token it is called with.
ENDS_ITS_TOKEN = "revokeToken"


def beyond_schema(document: dict[str, Any]) -> list[str]:
    """The operations whose document names rules beyond the schema on their 422."""
    return [
        op["operationId"]
        for methods in document["paths"].values()
        for op in methods.values()
        if "x-beyond-schema" in op["responses"].get("422", {})
    ]


def config_of(app: Flask, **project: Any) -> SchemathesisConfig:
    """schemathesis as the document reads: a 422 for valid data only where it says why (with
    ``project``'s other settings, e.g. ``headers``)."""
    operations = [
        {
            "include-operation-id": name,
            "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "422"]}},
        }
        for name in beyond_schema(openapi_document(app))
    ]
    return SchemathesisConfig.from_dict({"operations": operations, **project})


def whole_numbers(value: Any) -> Any:
    """``value`` with every integral float written as an integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole_numbers(item) for item in value]
    return value


def send_whole_numbers(schema: Any) -> None:
    """Send integers without a fraction in bodies and query strings alike (a generated cursor
    of 30.0 once went out as ``cursor=30.0``, which the service rightly refuses)."""

    @schema.hook("map_body")
    def body_integers(_context: Any, body: Any) -> Any:
        return whole_numbers(body)

    @schema.hook("map_query")
    def query_integers(_context: Any, query: Any) -> Any:
        return whole_numbers(query)


def token_for(app: Flask, operation: Any, name: str, headers: dict[str, str]) -> dict[str, str]:
    """The Authorization header of a call to ``operation`` as ``name``: ``headers``, or a new
    token for a call that ends the one it is sent with."""
    if operation.definition.raw.get("operationId") == ENDS_ITS_TOKEN:
        return bearer(app, name)
    return headers


def failures_of(app: Flask, role: str) -> list[str]:
    name = f"st{role}"
    add_user(app, name, role)
    headers = bearer(app, name)
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app, config=config_of(app))

    send_whole_numbers(schema)

    found: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()

        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def call(case: Any) -> None:
            case.call_and_validate(headers=token_for(app, case.operation, name, headers))

        try:
            call()
        except (Exception, BaseExceptionGroup) as failure:  # noqa: BLE001 - report them all
            found.append(f"{operation.method.upper()} {operation.path}: {failure}")
    if app.test_client().get("/api/v1/me", headers=headers).status_code != 200:
        found.append("the role's token was ended: the calls after that met only a 401")
    return found


@pytest.mark.parametrize("role", ["player", "auditor", "operator"])
def test_the_api_matches_its_openapi_document(make_app: Any, role: str) -> None:
    app = make_app(SIGNUPS_PER_ADDRESS=10**6, LOGIN_ATTEMPTS=10**6)
    assert failures_of(app, role) == []


def test_only_the_rules_the_document_names_refuse_valid_data(make_app: Any) -> None:
    """The operations allowed a 422 for valid data are those whose rules are written out."""
    names = beyond_schema(openapi_document(make_app()))
    assert sorted(names) == [
        "adjust",
        "approve",
        "auditConsistency",
        "auditRangeExport",
        "consistency",
        "decide",
        "ledgerMath",
        "placeBet",
        "playSota",
        "proposeAdjustment",
        "proposeOperator",
        "proposeTableChange",
        "register",
        "registerKey",
        "reject",
        "sotaMove",
        "topup",
        "updateTable",
    ]
