"""The OpenAPI document against the code, by schemathesis: every operation of
``/api/v1/openapi.json`` called with generated requests as a player, an auditor and an
operator; every answer must be no server error, a documented status with a documented content
type and body, and bad input must be refused.

Not checked yet: that every schema-valid request is accepted (``positive_data_acceptance``).
The document does not carry the business rules (password strength, table limits) that turn
some schema-valid values into a 422.
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
from schemathesis.specs.openapi.checks import positive_data_acceptance

pytestmark = pytest.mark.slow

EXAMPLES_PER_OPERATION = 8


def failures_of(app: Flask, role: str) -> list[str]:
    add_user(app, f"st{role}", role)
    headers = bearer(app, f"st{role}")
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
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
            case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])

        try:
            call()
        except (Exception, BaseExceptionGroup) as failure:  # noqa: BLE001 - report them all
            found.append(f"{operation.method.upper()} {operation.path}: {failure}")
    return found


@pytest.mark.parametrize("role", ["player", "auditor", "operator"])
def test_the_api_matches_its_openapi_document(make_app: Any, role: str) -> None:
    app = make_app(SIGNUPS_PER_ADDRESS=10**6, LOGIN_ATTEMPTS=10**6)
    assert failures_of(app, role) == []
