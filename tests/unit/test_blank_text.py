"""What the API's schema calls blank is what the services strip to nothing: JSON Schema's and
pydantic's ``\\s`` leave out U+001C to U+001F, which ``str.strip`` removes, so a reason of
"\\x1f" passed the schema and was then refused by the service as blank."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from sota_casino.services.text import WHITESPACE
from sota_casino.web.schemas import AdjustmentRequest


def test_the_white_space_class_is_what_str_isspace_calls_white_space() -> None:
    white = re.compile(f"[{WHITESPACE}]")
    assert [c for c in range(0x110000) if bool(white.fullmatch(chr(c))) != chr(c).isspace()] == []


@pytest.mark.parametrize(
    "reason",
    [
        *(chr(c) for c in range(0x110000) if chr(c).isspace()),
        " \x1f\u3000\x85 ",
        "\ufeff",  # not white space to Python: kept
        "\x1f refund \x1f",
        "goodwill",
    ],
)
def test_the_schema_refuses_a_reason_exactly_when_the_service_would_find_it_blank(
    reason: str,
) -> None:
    body = {"user_id": 1, "currency": "chips", "amount": 100, "reason": reason}
    try:
        AdjustmentRequest.model_validate(body)
        accepted = True
    except ValidationError:
        accepted = False
    assert accepted == bool(reason.strip())
