"""Signed documents' bytes and times: canonical JSON is exactly docs/fairness.md's
``json.dumps(..., sort_keys=True, ...)`` whichever encoder builds it, and times have one shape."""

from __future__ import annotations

import json
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sota_casino.core import fairness
from sota_casino.core.fairness import canonical_json

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


def spec_bytes(doc: Any) -> bytes:
    return json.dumps(
        doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


@settings(max_examples=300)
@given(doc=json_values)
def test_canonical_bytes_are_the_specs_json_dumps(doc: Any) -> None:
    assert canonical_json(doc) == spec_bytes(doc)


@pytest.fixture(scope="module")
def pure_python_encode() -> Any:
    """The encoder built where ``json`` has no C accelerator."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fairness, "c_make_encoder", None)
        return fairness._canonical_encoder()


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinities_are_refused_by_both_encoders(
    number: float, pure_python_encode: Any
) -> None:
    for encode in (canonical_json, pure_python_encode):
        with pytest.raises(ValueError, match="not JSON compliant"):
            encode({"payout": number})


@settings(max_examples=100)
@given(doc=json_values)
def test_the_pure_python_encoder_gives_the_same_bytes(doc: Any, pure_python_encode: Any) -> None:
    assert pure_python_encode(doc).encode() == spec_bytes(doc)


def test_a_receipt_is_encoded_with_sorted_keys_no_spaces_and_raw_utf8() -> None:
    doc = {"v": 1, "type": "round", "client_seed": "ёлка 🎄", "rules": {"decks": 6, "burn": 3}}
    assert canonical_json(doc) == (
        '{"client_seed":"ёлка 🎄","rules":{"burn":3,"decks":6},"type":"round","v":1}'.encode()
    )


@pytest.mark.parametrize("value", [object(), {1, 2}, b"bytes", {"a": [object()]}])
def test_what_json_cannot_hold_is_refused(value: object) -> None:
    with pytest.raises(TypeError):
        canonical_json(value)


# --- times in signed documents ----------------------------------------------------------------


def test_a_time_round_trips_through_its_text_to_the_microsecond() -> None:
    moment = datetime(2026, 11, 30, 4, 5, 6, 789, tzinfo=UTC)
    assert fairness.format_time(moment) == "2026-11-30T04:05:06.000789Z"
    assert fairness.parse_time("2026-11-30T04:05:06.000789Z") == moment


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-30T04:05:06.000789",  # no Z
        "2026-11-30T4:5:6.789Z",  # one-digit fields
        "2026-11-30T04:05:06.789Z",  # not six digits of fraction
        "2026-13-30T04:05:06.000789Z",  # no such month
        "2026-11-30 04:05:06.000789Z",
        "2026-11-30T04:05:06.000789+00:00",
        "٢٠٢٦-11-30T04:05:06.000789Z",  # other digits
        "2026-11-30T04:05:06.000789Z\n",
    ],
)
def test_a_time_in_any_other_shape_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        fairness.parse_time(text)


class _EndOfDayDatetime(datetime):
    """``datetime`` as CPython 3.14 reads ISO 8601: ``T24:00:00`` (all zeros after it) is
    midnight of the next day. Python 3.11 refuses it; the verifier runs on 3.11 and later."""

    @classmethod
    def fromisoformat(cls, text: str) -> Any:
        date, sep, rest = text.partition("T24:00:00.000000")
        if sep:
            return datetime.fromisoformat(f"{date}T00:00:00.000000{rest}") + timedelta(days=1)
        return datetime.fromisoformat(text)


@pytest.mark.parametrize("python", ["this one", "3.14"])
def test_a_time_at_hour_24_is_refused_by_every_python(
    python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/fairness.md: a time of the scheme has hours 00 to 23. The page's verifier and the
    service never write ``24:00``; a verifier whose date library reads it as the next midnight
    (CPython 3.14's ``fromisoformat``) would date a receipt a day later than the one it names."""
    if python == "3.14":
        monkeypatch.setattr(fairness, "datetime", _EndOfDayDatetime)
    with pytest.raises(ValueError):
        fairness.parse_time("2025-04-01T24:00:00.000000Z")
    assert fairness.time_or_none("2025-04-01T24:00:00.000000Z") is None
    assert fairness.parse_time("2025-04-01T23:59:59.999999Z") == datetime(
        2025, 4, 1, 23, 59, 59, 999999, tzinfo=UTC
    )
