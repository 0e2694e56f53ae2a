"""The declarative base and column types of the models; no Flask, so services stay free of it."""

from __future__ import annotations

import json
from datetime import UTC
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger
from sqlalchemy import DateTime
from sqlalchemy import Integer
from sqlalchemy import MetaData
from sqlalchemy import String
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

#: 64-bit integers everywhere; SQLite's INTEGER PRIMARY KEY needs the plain INTEGER variant.
BigInt = BigInteger().with_variant(Integer(), "sqlite")


class EncodedJson(dict[str, Any]):
    """A JSON object whose JSON text is known already (a signed document's canonical JSON), so
    a JSON column writes that text instead of encoding the object again (:func:`dump_json`).

    Read back, the column holds the same values (its keys in sorted order); anywhere else it is
    the dict it copies.
    """

    __slots__ = ("text",)

    def __init__(self, value: dict[str, Any], text: str) -> None:
        super().__init__(value)
        self.text = text


def dump_json(value: Any) -> str:
    """The JSON columns' encoder (the engine's ``json_serializer``): :class:`EncodedJson`
    writes the text it carries, anything else is ``json.dumps`` as by default."""
    return value.text if type(value) is EncodedJson else json.dumps(value)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every database (SQLite drops the zone otherwise)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    """Base of every model, with the constraint naming convention Alembic relies on."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


#: The name of SQLite's function that lower-cases text as PostgreSQL's ``lower()`` does, every
#: letter (SQLite's own ``lower()`` and ``LIKE`` know only the ASCII ones); each SQLite
#: connection registers it (db.py).
SQLITE_LOWER = "sota_lower"


def sqlite_lower(text: str | None) -> str | None:
    """SQLite's :data:`SQLITE_LOWER`: ``text`` in lower case, every letter (NULL stays NULL)."""
    return None if text is None else text.lower()


class lowered(FunctionElement[str]):  # noqa: N801 - named as SQL functions are
    """A text expression in lower case, every letter, alike on both databases: PostgreSQL's
    ``lower()``, SQLite's :data:`SQLITE_LOWER`."""

    type = String()
    name = "lowered"
    inherit_cache = True


@compiles(lowered)
def _lowered(element: lowered, compiler: SQLCompiler, **kw: Any) -> str:
    return f"lower({compiler.process(element.clauses, **kw)})"


@compiles(lowered, "sqlite")
def _lowered_on_sqlite(element: lowered, compiler: SQLCompiler, **kw: Any) -> str:
    return f"{SQLITE_LOWER}({compiler.process(element.clauses, **kw)})"


def contains_ignoring_case(
    column: ColumnElement[Any] | QueryableAttribute[Any], text: str, dialect: str
) -> ColumnElement[bool]:
    """Whether ``column`` holds ``text``, letter case aside, alike on both databases; an
    underscore or a percent sign matches only itself.

    SQLite's own ``LIKE`` ignores the case of ASCII letters, and does so ten times as fast as
    through a function of Python's, so a search of ASCII text is left to it there.
    """
    if dialect == "sqlite" and text.isascii():
        return column.contains(text, autoescape=True)
    return lowered(column).contains(text.lower(), autoescape=True)
