"""Every status an operation really answers is in the OpenAPI document, and the answer is the
one documented: a body not sent as JSON (415) or over the limit (413) on every operation that
takes one; a body, request line or header over the limits (413, 414, 431) on every operation;
and in an outage, 503 with Retry-After on every operation that uses the database, while the
others (that list no 503) still answer. 405 is on no operation (see the document's
description): it answers a method that no operation of the path takes."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from app_support import app_config
from flask import Flask
from operator_support import add_user
from operator_support import bearer
from test_openapi import Checker
from test_openapi import concrete
from test_openapi import operations

from sota_casino.factory import create_app
from sota_casino.services import tx
from sota_casino.web.openapi import openapi_document

JSON = "application/json"
#: One byte over the app's body limit (MAX_CONTENT_LENGTH).
OVER_THE_LIMIT = 64 * 1024 + 1
#: Requests that reach the database without credentials (the others ask for the caller's
#: token first, which is the database's too).
VALID_WITHOUT_CREDENTIALS: dict[str, dict[str, Any]] = {
    "register": {"json": {"username": "newcomer", "password": "a long passphrase"}},
    "issueToken": {"json": {"username": "newcomer", "password": "a long passphrase"}},
    "consistency": {"query_string": "old_size=1&new_size=1"},
}


def example_url(document: dict[str, Any], path: str, op: dict[str, Any]) -> str:
    """``path`` with a value in each of its parameters: 1 for a number, else the first name
    the parameter takes (``casino_war`` for a table)."""

    def value(match: re.Match[str]) -> str:
        param = next(p for p in op["parameters"] if p.get("name") == match[1])
        schema = concrete(document, param["schema"])
        if schema.get("type") == "integer":
            return "1"
        return str(schema.get("enum", ["casino_war"])[0])

    return re.sub(r"{(\w+)}", value, path)


@pytest.fixture
def credentials(app: Flask) -> dict[str, dict[str, str]]:
    """The Authorization header of a player and of an operator, by the tag they may call."""
    add_user(app, "pia")
    add_user(app, "oskar", "operator")
    return {"player": bearer(app, "pia"), "operator": bearer(app, "oskar")}


def headers_for(op: dict[str, Any], credentials: dict[str, dict[str, str]]) -> dict[str, str]:
    if not op["security"]:
        return {}
    return credentials["operator" if "operator" in op["tags"] else "player"]


def test_every_operation_with_a_body_refuses_text_and_an_oversized_body_as_documented(
    app: Flask, credentials: dict[str, dict[str, str]]
) -> None:
    document = openapi_document(app)
    check = Checker(document, app.test_client())
    taking = [
        (path, method, op) for path, method, op in operations(document) if "requestBody" in op
    ]
    assert len(taking) >= 20
    for path, method, op in taking:
        url, headers = example_url(document, path, op), headers_for(op, credentials)
        check(method, url, data="{}", content_type="text/plain", headers=headers)
        assert check.response.status_code == 415, (method, path, check.response.get_json())
        padded = json.dumps({"pad": "x" * OVER_THE_LIMIT})
        check(method, url, data=padded, content_type=JSON, headers=headers)
        assert check.response.status_code == 413, (method, path, check.response.get_json())


def test_every_operation_documents_the_limits_any_request_meets(
    app: Flask, credentials: dict[str, dict[str, str]]
) -> None:
    document = openapi_document(app)
    check = Checker(document, app.test_client())
    for path, method, op in operations(document):
        url, headers = example_url(document, path, op), headers_for(op, credentials)
        check(method, f"{url}?pad={'x' * 5000}", headers=headers)
        assert check.response.status_code == 414, (method, path)
        check(method, url, headers={**headers, "X-Padding": "y" * 9000})
        assert check.response.status_code == 431, (method, path)
        chunked = {"wsgi.input_terminated": True, "CONTENT_LENGTH": ""}
        body = io.BytesIO(b"x" * OVER_THE_LIMIT)
        check(method, url, headers=headers, input_stream=body, environ_overrides=chunked)
        assert check.response.status_code == 413, (method, path)


@pytest.fixture
def unreachable(tmp_path: Path) -> Flask:
    """An app whose SQLite database cannot be opened (its folder is gone): an outage."""
    return create_app(app_config(f"sqlite:///{tmp_path / 'gone' / 'casino.db'}", tmp_path))


def test_every_operation_answers_an_outage_as_documented(
    unreachable: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each operation that lists a 503 answers one in an outage, with Retry-After; each that
    lists none does not need the database and still answers."""
    # One try each: the tries again on a fresh connection are tested elsewhere
    # (tests/integration/test_outages.py), and their pauses would take ten seconds here.
    monkeypatch.setattr(tx, "OUTAGE_ATTEMPTS", 1)
    document = openapi_document(unreachable)
    check = Checker(document, unreachable.test_client())
    headers = {"Authorization": "Bearer whatever-the-database-would-say"}
    answered = {}
    for path, method, op in operations(document):
        request = VALID_WITHOUT_CREDENTIALS.get(op["operationId"], {})
        check(method, example_url(document, path, op), headers=headers, **request)
        response = check.response
        answered[op["operationId"]] = response.status_code
        if "503" in op["responses"]:
            assert response.status_code == 503, (method, path, response.status_code)
            assert response.get_json()["error"]["code"] == "unavailable"
            assert int(response.headers["Retry-After"]) > 0
        else:
            assert response.status_code < 300, (method, path, response.status_code)
    assert {name for name, status in answered.items() if status < 300} == {"odds", "openapi"}
