"""Strict parsing of what clients send: JSON bodies, form fields, query strings, headers.

Every bad value becomes an :class:`~sota_casino.core.errors.InvalidInput` (422) that names the
field and says what is expected, so no input reaches a service in a shape it did not expect,
and none can cause a 500. Range checks that depend on a table (its limits) stay in the services.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from typing import Final

from flask import request
from werkzeug.exceptions import BadRequest
from werkzeug.exceptions import UnsupportedMediaType
from werkzeug.routing import BaseConverter
from werkzeug.routing import ValidationError

from ..core.errors import InvalidInput

#: The largest amount accepted anywhere: 2**53 - 1 keeps every amount exact in JavaScript too.
MAX_AMOUNT: Final = 2**53 - 1
MAX_ID: Final = 2**63 - 1
IDEMPOTENCY_KEY: Final = re.compile(r"[\x21-\x7e]{1,64}")
IDEMPOTENCY_HEADER: Final = "Idempotency-Key"
_MAX_DIGITS: Final = 40


class TooBig:
    """A JSON number with too many digits to be any amount (kept apart so it is a clear 422)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _parse_int(text: str) -> int | TooBig:
    return TooBig(text) if len(text.lstrip("-")) > _MAX_DIGITS else int(text)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def json_body() -> dict[str, Any]:
    """Return the request's JSON object.

    :raises UnsupportedMediaType: (415) unless sent as ``application/json``: a cross-site form
        can post ``text/plain`` without a preflight, but never JSON.
    :raises BadRequest: (400) if the body is not JSON at all.
    :raises InvalidInput: (422) if it is JSON but not an object.
    """
    if not request.is_json:
        raise UnsupportedMediaType("send the body as JSON, with Content-Type: application/json")
    raw = request.get_data(cache=True)
    if not raw.strip():
        raise InvalidInput("the body must be a JSON object")
    try:
        body = json.loads(
            raw.decode("utf-8"), parse_int=_parse_int, parse_constant=_refuse_constant
        )
    except (ValueError, RecursionError) as error:
        raise BadRequest("the body is not valid JSON (UTF-8 encoded)") from error
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object")
    _refuse_unusable_values(body)
    return body


def json_object(*allowed: str) -> dict[str, Any]:
    """Return the request's JSON object, which may hold only the fields ``allowed``.

    :raises BadRequest: (400) if the body is not JSON at all.
    :raises InvalidInput: (422) if it is not an object, or holds another field.
    """
    body = json_body()
    only_fields(body, allowed)
    return body


def _refuse_unusable_values(body: dict[str, Any]) -> None:
    """Refuse, wherever nested, numbers too long to be any amount and text no database can store.

    :raises InvalidInput: naming where the value is.
    """
    pending: list[tuple[str, Any]] = [("", body)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, TooBig):
            raise InvalidInput(f"{path} is far too large", field=path.split(".")[0])
        if isinstance(value, str):
            _refuse_unstorable(value, path, field=path)
        if isinstance(value, dict):
            for key, item in value.items():
                _refuse_unstorable(key, "a field name", field=None)
                pending.append((f"{path}.{key}" if path else key, item))
        elif isinstance(value, list):
            pending.extend((f"{path}[{i}]", item) for i, item in enumerate(value))


def _refuse_unstorable(text: str, name: str, *, field: str | None) -> None:
    """Refuse text that no database column or hash can hold.

    JSON's ``\\ud800`` escapes smuggle lone surrogates, which UTF-8 cannot encode, and
    PostgreSQL text cannot hold a NUL character (the query would fail: a 500).

    :raises InvalidInput: naming ``name``.
    """
    if "\x00" in text:
        raise InvalidInput(f"{name} must not contain a NUL character", field=field)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{name} is not valid Unicode text", field=field) from None


def only_fields(body: Mapping[str, Any], allowed: Iterable[str]) -> None:
    """Refuse fields the endpoint does not know.

    :raises InvalidInput: naming the first unknown field and the allowed ones.
    """
    allowed = tuple(allowed)
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise InvalidInput(
            f"unknown field {unknown[0]!r}; allowed: {', '.join(allowed) or 'none'}",
            field=unknown[0],
        )


def amount(
    body: Mapping[str, Any],
    name: str,
    *,
    unit: str,
    required: bool = True,
    default: int = 0,
    allow_zero: bool = False,
    signed: bool = False,
) -> int:
    """Return the integer amount ``body[name]`` in minor units.

    :param unit: how the amount is counted, for the error message ("hundredths of a chip").
    :param signed: a negative amount is allowed too (a debit).
    :raises InvalidInput: if it is missing, not an integer (floats, strings and booleans are
        refused, even ``1.0`` or ``"100"``), negative (unless signed), zero (unless allowed) or
        too large.
    """
    value = body.get(name)
    if value is None:
        if required:
            raise InvalidInput(f"{name} is required: an integer in {unit}", field=name)
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        kind = _json_kind(value)
        raise InvalidInput(f"{name} must be an integer in {unit}, not {kind}", field=name)
    if abs(value) > MAX_AMOUNT:
        raise InvalidInput(f"{name} is far too large", field=name)
    if value < 0 and not signed:
        raise InvalidInput(f"{name} must not be negative", field=name)
    if value == 0 and not allow_zero:
        raise InvalidInput(
            f"{name} must not be zero" if signed else f"{name} must be more than zero", field=name
        )
    return value


def identifier(body: Mapping[str, Any], name: str) -> int:
    """Return ``body[name]`` if it can be a database id.

    :raises InvalidInput: if it is not a whole number from 1 to :data:`MAX_ID`.
    """
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ID:
        raise InvalidInput(f"{name} must be an id, a whole number from 1 to {MAX_ID}", field=name)
    return value


def flag(body: Mapping[str, Any], name: str) -> bool:
    """Return ``body[name]`` if it is true or false.

    :raises InvalidInput: otherwise (``1`` and ``"yes"`` are no flags).
    """
    value = body.get(name)
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be true or false", field=name)
    return value


def object_field(body: Mapping[str, Any], name: str, *, holding: str) -> dict[str, Any] | None:
    """Return the JSON object ``body[name]``, or None if it is absent.

    :param holding: what the object holds, for the error message ("rule options").
    :raises InvalidInput: if it is something else.
    """
    value = body.get(name)
    if value is not None and not isinstance(value, dict):
        raise InvalidInput(f"{name} must be an object of {holding}", field=name)
    return value


def card_codes(body: Mapping[str, Any], name: str, *, most: int) -> list[str]:
    """Return ``body[name]`` if it is a list of 1 to ``most`` two-character card codes.

    Whether the cards are the right ones is the game's to say.

    :raises InvalidInput: otherwise.
    """
    value = body.get(name)
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= most
        or not all(isinstance(card, str) and len(card) == 2 for card in value)
    ):
        raise InvalidInput(f"{name} must be a list of 1 to {most} card codes like 'QH'", field=name)
    return value


def string(
    body: Mapping[str, Any],
    name: str,
    *,
    required: bool = True,
    max_length: int = 256,
) -> str | None:
    """Return the string ``body[name]`` (None if optional and absent).

    :raises InvalidInput: if it is missing, not a string, empty or longer than ``max_length``.
    """
    if name not in body or body[name] is None:
        if required:
            raise InvalidInput(f"{name} is required", field=name)
        return None
    value = body[name]
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, not {_json_kind(value)}", field=name)
    if not 1 <= len(value) <= max_length:
        raise InvalidInput(f"{name} must be 1 to {max_length} characters", field=name)
    return value


def choice(body: Mapping[str, Any], name: str, options: Iterable[str]) -> str:
    """Return ``body[name]`` if it is one of ``options``.

    :raises InvalidInput: naming the options otherwise.
    """
    options = tuple(options)
    value = body.get(name)
    if not isinstance(value, str) or value not in options:
        raise _not_one_of(name, options)
    return value


def _not_one_of(name: str, options: tuple[str, ...]) -> InvalidInput:
    return InvalidInput(f"{name} must be one of: {', '.join(options)}", field=name)


#: How a JSON value is named in messages; ``bool`` before ``int``, since a bool is an int.
_JSON_KINDS: Final = (
    (bool, "a boolean"),
    (int, "a whole number"),
    (float, "a number with a fraction or exponent"),
    (str, "a string"),
    (list, "a list"),
    (dict, "an object"),
    (type(None), "null"),
)


def _json_kind(value: object) -> str:
    return next((kind for type_, kind in _JSON_KINDS if isinstance(value, type_)), "that value")


def idempotency_key() -> str | None:
    """Return the ``Idempotency-Key`` header, if sent.

    :raises InvalidInput: if it is not 1 to 64 visible ASCII characters.
    """
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    if not IDEMPOTENCY_KEY.fullmatch(key):
        raise InvalidInput(
            f"{IDEMPOTENCY_HEADER} must be 1 to 64 visible ASCII characters (no spaces)",
            field=IDEMPOTENCY_HEADER,
        )
    return key


def query_int(
    name: str, *, low: int = 0, high: int = MAX_ID, default: int | None = None
) -> int | None:
    """Return the query parameter ``name`` as an integer in ``[low, high]`` (or ``default``).

    :raises InvalidInput: if it is present but not such an integer.
    """
    text = request.args.get(name)
    if text is None or text == "":
        return default
    if not re.fullmatch(r"-?[0-9]{1,19}", text) or not low <= int(text) <= high:
        raise InvalidInput(f"{name} must be a whole number from {low} to {high}", field=name)
    return int(text)


def query_choice(name: str, options: Iterable[str], *, default: str | None = None) -> str | None:
    """Return the query parameter ``name`` if it is one of ``options`` (or ``default``).

    :raises InvalidInput: if it is present but not one of them.
    """
    options = tuple(options)
    text = request.args.get(name)
    if not text:
        return default
    if text not in options:
        raise _not_one_of(name, options)
    return text


def query_text(name: str, *, max_length: int) -> str | None:
    """Return the query parameter ``name`` as text (None if absent or empty).

    :raises InvalidInput: if it is longer than ``max_length`` or text no database can store.
    """
    text = request.args.get(name)
    if not text:
        return None
    if len(text) > max_length:
        raise InvalidInput(f"{name} must be at most {max_length} characters", field=name)
    _refuse_unstorable(text, name, field=name)
    return text


def _form_number(name: str, label: str, unit: str, example: str) -> int | None:
    """Return a form field's whole, non-negative number (None if blank), refusing in words.

    :param label: the field as the form names it ("ante", "stake").
    :raises InvalidInput: for a negative, fractional, huge or garbled number.
    """
    text = (request.form.get(name) or "").strip()
    if not text:
        return None
    if re.fullmatch(r"[-−][0-9.,]*[0-9]", text):
        raise InvalidInput(f"The {label} cannot be negative: enter {example}.", field=name)
    digits = text.replace(",", "")
    many_digits = re.fullmatch(r"[0-9]+", digits) and len(digits) > _MAX_FORM_DIGITS
    if many_digits or re.fullmatch(r"[0-9.]+[eE]\+?[0-9]+", text):
        raise InvalidInput(f"The {label} is far too large: enter {example}.", field=name)
    if not re.fullmatch(r"[0-9]{1,12}", digits):
        of_unit = f" of {unit}, like {example}" if unit else ""
        raise InvalidInput(f"The {label} must be a whole number{of_unit}.", field=name)
    return int(digits)


#: Digits a form's whole number may have: more is no amount any table takes.
_MAX_FORM_DIGITS: Final = 12


def form_chips(name: str, *, label: str | None = None, required: bool = True) -> int:
    """Return a form field given in whole chips, converted to hundredths of a chip.

    :param label: the field as the form names it (default: its name in words).
    :raises InvalidInput: if it is missing or not a whole, non-negative number of chips.
    """
    label = label or name.replace("_", " ")
    number = _form_number(name, label, "chips", "5 or 25")
    if number is None:
        if required:
            raise InvalidInput(f"Please enter the {label} in chips.", field=name)
        return 0
    return number * 100


def form_whole(name: str, *, label: str, unit: str = "", example: str = "a number like 5") -> int:
    """Return a form field holding a whole, non-negative number.

    :raises InvalidInput: if it is missing or not a whole number.
    """
    number = _form_number(name, label, unit, example)
    if number is None:
        raise InvalidInput(f"Please enter the {label}.", field=name)
    return number


class IdConverter(BaseConverter):
    """Match a positive database id in a URL (at most 2**63 - 1), so huge ids are a clean 404."""

    regex = r"[1-9][0-9]{0,18}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ID:
            raise ValidationError()
        return number

    def to_url(self, value: object) -> str:
        return str(int(value))  # type: ignore[call-overload]
