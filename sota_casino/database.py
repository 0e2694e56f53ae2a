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
from sqlalchemy.orm import DeclarativeBase
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
