"""Strict parsing of what clients send: JSON bodies, form fields, query strings, headers.

JSON bodies and API query strings are read as the models of :mod:`.schemas`. Every bad value
becomes an :class:`~sota_casino.core.errors.InvalidInput` (422) that names the field and says
what is expected, so no input reaches a service in a shape it did not expect, and none can
cause a 500. Range checks that depend on a table (its limits) stay in the services.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from typing import Final
from typing import TypeVar

from flask import Flask
from flask import request
from flask.typing import ResponseReturnValue
from pydantic import BaseModel
from pydantic import ValidationError
from werkzeug.exceptions import BadRequest
from werkzeug.exceptions import UnsupportedMediaType
from werkzeug.routing import BaseConverter
from werkzeug.routing import ValidationError as NoRoute

from ..core.errors import InvalidInput
from ..core.marks import N_
from ..core.marks import Nn_
from ..services.idempotency import check_key
from ..services.results import MAX_ID
from ..services.text import storable
from .form_words import REPEATED
from .i18n import gettext
from .paths import wants_json

IDEMPOTENCY_HEADER: Final = "Idempotency-Key"
M = TypeVar("M", bound=BaseModel)
_WHOLE: Final = re.compile(r"-?[0-9]{1,19}")
_MAX_DIGITS: Final = 40
#: Options past this many are not listed in a refusal, which names the document instead.
_MAX_LISTED: Final = 20


class TooBig:
    """A JSON number with too many digits to be any amount (kept apart so it is a clear 422)."""

    def __init__(self, text: str) -> None:
        self.text = text


class Repeated:
    """A field given more than once in one JSON object: which value was meant cannot be told
    (parsers differ: the first, the last, an error), so the body is refused naming it."""


def _unique_fields(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name, value in pairs:
        fields[name] = Repeated() if name in fields else value
    return fields


def _parse_int(text: str) -> int | TooBig:
    return TooBig(text) if len(text.lstrip("-")) > _MAX_DIGITS else int(text)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def json_body() -> dict[str, Any]:
    """Return the request's JSON object.

    :raises UnsupportedMediaType: (415) unless sent as ``application/json`` (no ``+json``
        type): a cross-site form can post ``text/plain`` without a preflight, but never JSON;
        for a body sent with a ``Content-Encoding``, which is not decoded (RFC 9110, 15.5.16);
        and for a ``charset`` other than UTF-8, the only one JSON travels in (RFC 8259, 8.1).
    :raises BadRequest: (400) if the body is not JSON at all.
    :raises InvalidInput: (422) if it is JSON but not an object.
    """
    if request.mimetype != "application/json":
        raise UnsupportedMediaType(N_("send the body as JSON, with Content-Type: application/json"))
    if request.headers.get("Content-Encoding", "identity").strip().lower() != "identity":
        raise UnsupportedMediaType(N_("send the body unencoded, without a Content-Encoding"))
    if request.mimetype_params.get("charset", "utf-8").strip().lower() != "utf-8":
        raise UnsupportedMediaType(N_("send the body in UTF-8, the only charset of JSON"))
    raw = request.get_data(cache=True)
    if not raw.strip():
        raise InvalidInput(N_("the body must be a JSON object"))
    try:
        body = json.loads(
            raw.decode("utf-8"),
            parse_int=_parse_int,
            parse_constant=_refuse_constant,
            object_pairs_hook=_unique_fields,
        )
    except (ValueError, RecursionError) as error:
        raise BadRequest(N_("the body is not valid JSON (UTF-8 encoded)")) from error
    if not isinstance(body, dict):
        raise InvalidInput(N_("the body must be a JSON object"))
    _refuse_unusable_values(body)
    return body


def _refuse_unusable_values(body: dict[str, Any]) -> None:
    """Refuse, wherever nested, numbers too long to be any amount, fields given twice and text
    no database can store.

    :raises InvalidInput: naming where the value is.
    """
    pending: list[tuple[str, Any]] = [("", body)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, TooBig):
            raise InvalidInput(
                N_("%(field)s is far too large"), params={"field": path}, field=path.split(".")[0]
            )
        if isinstance(value, Repeated):
            raise InvalidInput(
                N_("%(field)s is given more than once"),
                params={"field": path},
                field=path.split(".")[0],
            )
        if isinstance(value, str):
            storable(value, path)
        if isinstance(value, dict):
            for key, item in value.items():
                storable(key, None, name="a field name")
                pending.append((f"{path}.{key}" if path else key, item))
        elif isinstance(value, list):
            pending.extend((f"{path}[{i}]", item) for i, item in enumerate(value))


def parse_body(model: type[M]) -> M:
    """Return the request's JSON object read as ``model``.

    :raises InvalidInput: (422) naming the first field that does not fit, and how.
    """
    return _validated(model, json_body())


def parse_query(model: type[M]) -> M:
    """Return the query string read as ``model``.

    Whole numbers written as digits are numbers, everything else text, and the model is
    strict: ``1.0`` or ``1e3`` is no integer here either. An empty value (``decks=``) is the
    empty text, as the document reads it: no number, no option, so a 422, not the default.
    A parameter given twice is a 422 too: which value was meant cannot be told.
    """
    given: dict[str, object] = {}
    numbers = _integer_fields(model)
    for name, values in request.args.lists():
        if len(values) > 1:
            raise InvalidInput(
                N_("%(field)s is given more than once"), params={"field": name}, field=name
            )
        value = values[0]
        storable(value, name)
        given[name] = int(value) if name in numbers and _WHOLE.fullmatch(value) else value
    return _validated(model, given)


@functools.cache
def _integer_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of a query model that take a whole number (digits elsewhere stay text)."""
    properties = model.model_json_schema()["properties"]
    return frozenset(name for name, prop in properties.items() if _takes_integer(prop))


def _takes_integer(schema: dict[str, Any]) -> bool:
    kinds = schema.get("type")
    if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
        return True
    return any(_takes_integer(option) for option in schema.get("anyOf", ()))


def _validated(model: type[M], data: object) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        message, params, field = _first_problem(error)
        raise InvalidInput(message, params=params, field=field) from None


#: What a field must be, for pydantic's type errors.
_EXPECTED: Final = {
    "int_type": N_("an integer"),
    "int_parsing": N_("a whole number"),
    "string_type": N_("a string"),
    "bool_type": N_("true or false"),
    "list_type": N_("a list"),
    "dict_type": N_("an object"),
    "model_type": N_("an object"),
}

#: pydantic's other refusals, as message ids with its context as params (the API's English is
#: pydantic's own wording after the field; a client sending Accept-Language reads its language).
_PROBLEMS: Final = {
    "missing": N_("%(field)s is required"),
    "extra_forbidden": N_("unknown field %(field)s"),
    "greater_than_equal": N_("%(field)s must be greater than or equal to %(ge)s"),
    "less_than_equal": N_("%(field)s must be less than or equal to %(le)s"),
    "greater_than": N_("%(field)s must be greater than %(gt)s"),
    "less_than": N_("%(field)s must be less than %(lt)s"),
    "multiple_of": N_("%(field)s must be a multiple of %(multiple_of)s"),
    "literal_error": N_("%(field)s must be %(expected)s"),
    "too_many_to_list": N_("%(field)s must be one of the values the API document lists for it"),
    "enum": N_("%(field)s must be %(expected)s"),
    "string_pattern_mismatch": N_("%(field)s: string should match pattern '%(pattern)s'"),
}

#: pydantic's refusals of a length, which count characters or items: plural messages by the
#: bound (``num``), as pydantic's own English says "at least 1 character".
_LENGTHS: Final = {
    "string_too_short": (
        Nn_(
            "%(field)s: string should have at least %(num)s character",
            "%(field)s: string should have at least %(num)s characters",
        ),
        "min_length",
    ),
    "string_too_long": (
        Nn_(
            "%(field)s: string should have at most %(num)s character",
            "%(field)s: string should have at most %(num)s characters",
        ),
        "max_length",
    ),
    "too_short": (
        Nn_(
            "%(field)s must have at least %(num)s item",
            "%(field)s must have at least %(num)s items",
        ),
        "min_length",
    ),
    "too_long": (
        Nn_(
            "%(field)s must have at most %(num)s item", "%(field)s must have at most %(num)s items"
        ),
        "max_length",
    ),
}

#: One value of pydantic's list of a literal's values ("'war' or 'surrender'"): as its repr.
_LISTED_VALUE: Final = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|-?\d+")


def _either(expected: str) -> str:
    """Return pydantic's list of the values a field takes ("'a', 'b' or 'c'") with the "or" of
    this request's language: pydantic writes it in English whatever the language."""
    values = _LISTED_VALUE.findall(expected)
    if len(values) < 2:
        return expected
    last = values.pop()
    return gettext(N_("%(values)s or %(last)s"), values=", ".join(values), last=last)


def _first_problem(
    error: ValidationError,
) -> tuple[str | tuple[str, str], dict[str, object], str]:
    """Return the message id (a plural's pair), its params and the field of the first problem
    pydantic found."""
    problem = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in problem["loc"]) or "the body"
    field = _field_path(problem["loc"])
    kind, message = problem["type"], problem["msg"]
    if kind == "extra_forbidden":
        return _PROBLEMS[kind], {"field": repr(where)}, field
    if kind in _EXPECTED:
        expected, got = gettext(_EXPECTED[kind]), gettext(_json_kind(problem["input"]))
        params: dict[str, object] = {"field": where, "expected": expected, "got": got}
        return N_("%(field)s must be %(expected)s, not %(got)s"), params, field
    if kind == "literal_error" and problem["ctx"]["expected"].count(",") >= _MAX_LISTED:
        kind = "too_many_to_list"  # hundreds of time zones in a message are read by no one
    if kind in _LENGTHS:
        message_ids, bound = _LENGTHS[kind]
        return message_ids, {"field": where, "num": problem["ctx"][bound]}, field
    if kind in ("literal_error", "enum"):
        listed = {"expected": _either(problem["ctx"]["expected"])}
        return _PROBLEMS[kind], {"field": where, **problem["ctx"], **listed}, field
    if kind in _PROBLEMS:
        return _PROBLEMS[kind], {"field": where, **problem.get("ctx", {})}, field
    if message.startswith("Input should"):
        return f"{where} must{message.removeprefix('Input should')}", {}, field
    return f"{where}: {message[:1].lower()}{message[1:]}", {}, field


def _field_path(loc: tuple[int | str, ...]) -> str:
    """Return the field a problem at ``loc`` is about, by its path in the body (``rules.decks``):
    its keys down to the first list item, which is a value of the field holding the list."""
    keys: list[str] = []
    for part in loc:
        if not isinstance(part, str):
            break
        keys.append(part)
    return ".".join(keys)


#: How a JSON value is named in messages; ``bool`` before ``int``, since a bool is an int.
_JSON_KINDS: Final = (
    (bool, N_("a boolean")),
    (int, N_("a whole number")),
    (float, N_("a number with a fraction or exponent")),
    (str, N_("a string")),
    (list, N_("a list")),
    (dict, N_("an object")),
    (type(None), N_("null")),
)


def _json_kind(value: object) -> str:
    return next((kind for type_, kind in _JSON_KINDS if isinstance(value, type_)), "that value")


def is_digits(text: str) -> bool:
    """Whether ``text`` is digits 0 to 9 only: ``str.isdigit`` takes "²" too, which ``int``
    refuses, and "٣", which it reads as 3."""
    return text.isascii() and text.isdigit()


def choice(body: Mapping[str, Any], name: str, options: Iterable[str]) -> str:
    """Return the form field ``body[name]`` if it is one of ``options``.

    :raises InvalidInput: naming the options otherwise.
    """
    options = tuple(options)
    value = body.get(name)
    if not isinstance(value, str) or value not in options:
        raise InvalidInput(
            N_("%(option)s must be one of: %(valid)s"),
            params={"option": name, "valid": ", ".join(options)},
            field=name,
        )
    return value


def idempotency_key() -> str | None:
    """Return the ``Idempotency-Key`` header, if sent.

    :raises InvalidInput: unless one key (1 to 64 visible ASCII characters, no comma).
    """
    return check_key(request.headers.get(IDEMPOTENCY_HEADER))


def form_key() -> str | None:
    """Return the form's one-time key (``idempotency_key``, 8 to 64 letters and digits, made
    when the page was drawn), which makes a double submit act only once; None for a missing
    or odd one (the form then acts without one). Letters and digits are ASCII ones:
    ``str.isalnum`` takes "１" or "٣" too, which the services refuse in a key."""
    key = request.form.get("idempotency_key", "")
    return key if 8 <= len(key) <= 64 and key.isascii() and key.isalnum() else None


#: The page forms' fields that may come more than once, by endpoint: the cards laid face down in
#: Sota's move and the presets a table offers (checkboxes sharing a name). Any other field sent
#: twice is refused (:func:`refuse_repeated_fields`).
REPEATABLE_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "sota.move": frozenset({"down"}),
    "operator.update_table": frozenset({"presets"}),
}


def refuse_repeated_fields() -> None:
    """Refuse a page form that sends a field more than once, as the API refuses a field or a
    query parameter given twice: which value was meant cannot be told (the views read the
    first), so nothing is done. Fields of :data:`REPEATABLE_FIELDS` may repeat.

    :raises InvalidInput: (422) naming the first field sent twice as it was sent (only a
        request made by hand does so; the form marks the field).
    """
    repeatable = REPEATABLE_FIELDS.get(request.endpoint or "", frozenset())
    for name, values in request.form.lists():
        if len(values) > 1 and name not in repeatable:
            raise InvalidInput(
                REPEATED,
                params={"label": name},
                field=name,
            )


def check_repeated_fields(app: Flask) -> None:
    """Refuse page forms that send a field twice (:func:`refuse_repeated_fields`), on ``app``
    with its blueprints registered.

    Whoever may not use the form is told that first: the check runs last among each blueprint's
    request hooks (after the console's staff gate), and lets a view's own gate (``admit``, see
    ``security.login_required``) in before it, so a refused form is shown to its user as the
    view shows its other refusals.
    """

    def check() -> ResponseReturnValue | None:
        if request.method != "POST" or wants_json() or request.routing_exception is not None:
            return None
        admit = getattr(app.view_functions.get(request.endpoint or ""), "admit", None)
        turned_away: ResponseReturnValue | None = admit() if admit is not None else None
        if turned_away is None:
            refuse_repeated_fields()
        return turned_away

    for name in app.blueprints:
        app.before_request_funcs.setdefault(name, []).append(check)


def query_int(
    name: str, *, low: int = 0, high: int = MAX_ID, default: int | None = None
) -> int | None:
    """Return the page's query parameter ``name`` as an integer in ``[low, high]``.

    :raises InvalidInput: if it is present but not such an integer.
    """
    text = request.args.get(name)
    if text is None or text == "":
        return default
    if not _WHOLE.fullmatch(text) or not low <= int(text) <= high:
        raise InvalidInput(
            N_("%(option)s must be a whole number from %(low)s to %(high)s"),
            params={"option": name, "low": low, "high": high},
            field=name,
        )
    return int(text)


def query_text(name: str, most: int) -> str:
    """Return the page's query parameter ``name`` stripped ("" if absent).

    :raises InvalidInput: if it is longer than ``most`` characters, as the API refuses it
        (a cut text would be searched for, or read as a time, in place of the one asked).
    """
    text = request.args.get(name, "").strip()
    if len(text) > most:
        raise InvalidInput(N_("the %(name)s filter is too long"), params={"name": name}, field=name)
    return text


def _form_number(name: str, label: str, unit: str, example: str) -> int | None:
    """Return a form field's whole, non-negative number (None if blank), refusing in words.

    :param label: the field as the form names it ("ante", "stake").
    :raises InvalidInput: for a negative, fractional, huge or garbled number.
    """
    text = (request.form.get(name) or "").strip()
    if not text:
        return None
    # Label, unit and example are marked where they are given, and translated with the refusal.
    words = {"label": label, "unit": unit, "example": example}
    if re.fullmatch(r"[-−][0-9.,]*[0-9]", text):
        message = N_("The %(label)s cannot be negative: enter %(example)s.")
        raise InvalidInput(message, params=words, words=words, field=name)
    digits = text.replace(",", "")
    many_digits = re.fullmatch(r"[0-9]+", digits) and len(digits) > _MAX_FORM_DIGITS
    if many_digits or re.fullmatch(r"[0-9.]+[eE]\+?[0-9]+", text):
        message = N_("The %(label)s is far too large: enter %(example)s.")
        raise InvalidInput(message, params=words, words=words, field=name)
    if not re.fullmatch(r"[0-9]{1,12}", digits):
        if unit:
            message = N_("The %(label)s must be a whole number of %(unit)s, like %(example)s.")
        else:
            message = N_("The %(label)s must be a whole number.")
        raise InvalidInput(message, params=words, words=words, field=name)
    return int(digits)


#: Digits a form's whole number may have: more is no amount any table takes.
_MAX_FORM_DIGITS: Final = 12


def form_chips(name: str, *, label: str | None = None, required: bool = True) -> int:
    """Return a form field given in whole chips, converted to hundredths of a chip.

    :param label: the field as the form names it (default: its name in words).
    :raises InvalidInput: if it is missing or not a whole, non-negative number of chips.
    """
    label = label or name.replace("_", " ")
    number = _form_number(name, label, N_("chips"), N_("5 or 25"))
    if number is None:
        if required:
            message = N_("Please enter the %(label)s in chips.")
            raise InvalidInput(message, params={"label": label}, words=["label"], field=name)
        return 0
    return number * 100


def form_whole(
    name: str, *, label: str, unit: str = "", example: str = N_("a number like 5")
) -> int:
    """Return a form field holding a whole, non-negative number.

    :raises InvalidInput: if it is missing or not a whole number.
    """
    number = _form_number(name, label, unit, example)
    if number is None:
        message = N_("Please enter the %(label)s.")
        raise InvalidInput(message, params={"label": label}, words=["label"], field=name)
    return number


class IdConverter(BaseConverter):
    """Match a positive id in a URL (at most :data:`MAX_ID`), so huge ids are a clean 404."""

    regex = r"[1-9][0-9]{0,15}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ID:
            raise NoRoute()
        return number

    def to_url(self, value: Any) -> str:
        return str(int(value))
