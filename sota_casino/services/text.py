"""Text bound for the database, refused the same on both databases wherever it comes from (a
JSON body, a query string, a form, a service's own argument): PostgreSQL cannot store a NUL
character (SQLite can), and a lone surrogate (JSON's ``\\ud800`` escape) has no UTF-8 form for
either, nor for a hash."""

from __future__ import annotations

from ..core.errors import InvalidInput
from ..core.marks import N_

#: The JSON Schema pattern of such text.
NO_NUL_PATTERN = "^[^\\x00]*$"
#: Every character ``str.isspace`` calls white space (what ``str.strip`` removes), escaped for a
#: pattern: ``\\s`` means fewer in JSON Schema's regular expressions and pydantic's (not U+001C
#: to U+001F), which would pass a text the services find blank.
WHITESPACE = (
    "\\u0009-\\u000d\\u001c-\\u0020\\u0085\\u00a0\\u1680\\u2000-\\u200a"
    "\\u2028\\u2029\\u202f\\u205f\\u3000"
)
#: The JSON Schema pattern of text with something besides white space, and no NUL: text the
#: services keep once stripped.
NON_BLANK_PATTERN = f"^[^\\x00]*[^\\x00{WHITESPACE}][^\\x00]*$"


#: The refusals of text the database cannot hold, by how they name it: a field (its name, as the
#: API spells it, is the param), a field's name, or text that came in no single field.
NUL_IN = {
    "field": N_("%(field)s must not contain a NUL character"),
    "a field name": N_("a field name must not contain a NUL character"),
    "the text": N_("the text must not contain a NUL character"),
}
NOT_UNICODE = {
    "field": N_("%(field)s is not valid Unicode text"),
    "a field name": N_("a field name is not valid Unicode text"),
    "the text": N_("the text is not valid Unicode text"),
}


def storable(value: str, field: str | None, *, name: str | None = None) -> str:
    """Return ``value`` if the database can hold it.

    :param field: the field it came in (None: no single field, such as a field's name).
    :param name: how the message names it (default: the field); one of :data:`NUL_IN`'s keys.
    :raises InvalidInput: if it contains a NUL character or a lone surrogate.
    """
    named = name or ("field" if field else "the text")
    params = {"field": field} if named == "field" else {}
    if "\x00" in value:
        raise InvalidInput(NUL_IN[named], params=params, field=field)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(NOT_UNICODE[named], params=params, field=field) from None
    return value
