"""Text bound for the database, refused the same on both databases wherever it comes from (a
JSON body, a query string, a form, a service's own argument): PostgreSQL cannot store a NUL
character (SQLite can), and a lone surrogate (JSON's ``\\ud800`` escape) has no UTF-8 form for
either, nor for a hash."""

from __future__ import annotations

from ..core.errors import InvalidInput

#: The JSON Schema pattern of such text.
NO_NUL_PATTERN = "^[^\\x00]*$"


def storable(value: str, field: str | None, *, name: str | None = None) -> str:
    """Return ``value`` if the database can hold it.

    :param field: the field it came in (None: no single field, such as a field's name).
    :param name: how the message names it (default: the field).
    :raises InvalidInput: if it contains a NUL character or a lone surrogate.
    """
    named = name or field or "the text"
    if "\x00" in value:
        raise InvalidInput(f"{named} must not contain a NUL character", field=field)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{named} is not valid Unicode text", field=field) from None
    return value
