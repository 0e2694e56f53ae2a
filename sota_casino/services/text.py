"""Text bound for the database: PostgreSQL cannot store a NUL character (SQLite can), so every
free text a service stores or searches with is refused with it, the same on both databases."""

from __future__ import annotations

from ..core.errors import InvalidInput

#: The JSON Schema pattern of such text.
NO_NUL_PATTERN = "^[^\\x00]*$"


def storable(value: str, field: str) -> str:
    """Return ``value`` if the database can hold it.

    :raises InvalidInput: if it contains a NUL character.
    """
    if "\x00" in value:
        raise InvalidInput(f"{field} must not contain a NUL character", field=field)
    return value
