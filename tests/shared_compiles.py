"""Each test builds its own app, and each app compiled again what every other app compiles:
the parse and two URL builders of each route (over a hundred routes), every template it
renders and every SQL statement it sends. That was most of building an app and of its first
pages and statements. The apps of the test process share these instead, compiled once per
run: the same source gives the same code, so the apps route, build URLs, render and query
exactly as before. (Only the test process: the servers the tests start compile their own, as
in production.)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import CodeType
from typing import Any

import jinja2
from flask import Flask
from jinja2.bccache import Bucket
from jinja2.bccache import BytecodeCache
from jinja2.utils import _PassArg
from sqlalchemy.engine import Dialect
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Mapper
from sqlalchemy.util import LRUCache
from werkzeug.routing import Rule
from werkzeug.routing.rules import RulePart

from sota_casino import db

_Builder = Callable[..., tuple[str, str]]
#: What a converter is made from: the variable, the converter's name, its arguments.
_ConverterCall = tuple[str, str, tuple[Any, ...], dict[str, Any]]


def share_compiled_code() -> None:
    """Share URL builders, template code and compiled SQL among this process's apps
    (idempotent)."""
    _share_rule_parses()
    _share_url_builders()
    _share_template_code()
    _share_compiled_statements()


def _share_rule_parses() -> None:
    """A rule's parse (its regex parts and its trace) is a pure function of its text and of the
    converter classes its map names, and was most of what was left of building an app. Each
    rule still gets converters of its own, made by its own map from the names and arguments the
    first parse asked for, in the same order. Every rule is parsed as before if Werkzeug's
    parser changes shape."""
    parse_rule = getattr(Rule, "_parse_rule", None)
    if parse_rule is None or getattr(parse_rule, "shared", False):
        return
    if list(inspect.signature(parse_rule).parameters) != ["self", "rule"]:
        return
    parsed: dict[tuple[Any, ...], tuple[list[RulePart], list[Any], list[_ConverterCall]]] = {}

    def shared_parse(self: Rule, rule: str) -> list[RulePart]:
        key = (rule, tuple(self.map.converters.items()))
        if key in parsed:
            parts, trace, converters = parsed[key]
            self._trace.extend(trace)
            for variable, name, args, kwargs in converters:
                self._converters[variable] = self.get_converter(variable, name, args, kwargs)
                self.arguments.add(variable)
            return parts
        asked: list[_ConverterCall] = []
        make_converter = self.get_converter

        def recording_converter(variable: str, name: str, args: Any, kwargs: Any) -> Any:
            asked.append((variable, name, args, kwargs))
            return make_converter(variable, name, args, kwargs)

        self.get_converter = recording_converter  # type: ignore[method-assign]
        first = len(self._trace)
        try:
            parts = list(parse_rule(self, rule))
        finally:
            del self.get_converter
        parsed[key] = (parts, self._trace[first:], asked)
        return parts

    shared_parse.shared = True  # type: ignore[attr-defined]
    Rule._parse_rule = shared_parse  # type: ignore[method-assign,assignment]


def _share_url_builders() -> None:
    """A builder is a pure function of its route's rule, parts and default names, bound to the
    rule when used. A rule with a default for one of its own variables is compiled as before
    (its builder holds that value as its converter wrote it), and so is every rule if
    Werkzeug's builder changes shape."""
    compile_builder = getattr(Rule, "_compile_builder", None)
    if compile_builder is None or getattr(compile_builder, "shared", False):
        return
    if list(inspect.signature(compile_builder).parameters) != ["self", "append_unknown"]:
        return
    compiled: dict[tuple[Any, ...], _Builder] = {}

    def shared_builder(self: Rule, append_unknown: bool = True) -> _Builder:
        defaults = self.defaults or {}
        if any(is_dynamic and part in defaults for is_dynamic, part in self._trace):
            return compile_builder(self, append_unknown)  # type: ignore[no-any-return]
        key = (self.rule, tuple(self._trace), tuple(defaults), append_unknown)
        if key not in compiled:
            compiled[key] = compile_builder(self, append_unknown)
        return compiled[key]

    shared_builder.shared = True  # type: ignore[attr-defined]
    Rule._compile_builder = shared_builder  # type: ignore[method-assign]


class _SharedTemplateCode(BytecodeCache):
    """Jinja's bytecode cache in memory, keyed also by what of the environment the compiled
    code depends on, and checked against the template's source as Jinja checks any cache."""

    def __init__(self) -> None:
        self._code: dict[str, tuple[str, CodeType]] = {}

    def get_bucket(
        self, environment: jinja2.Environment, name: str, filename: str | None, source: str
    ) -> Bucket:
        key = self.get_cache_key(f"{name}|{_settings(environment, name)!r}", filename)
        bucket = Bucket(environment, key, self.get_source_checksum(source))
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        checksum, code = self._code.get(bucket.key, ("", None))
        if code is not None and checksum == bucket.checksum:
            bucket.code = code

    def dump_bytecode(self, bucket: Bucket) -> None:
        assert bucket.code is not None
        self._code[bucket.key] = (bucket.checksum, bucket.code)


def _settings(environment: jinja2.Environment, name: str) -> tuple[Any, ...]:
    """What of an environment its compiled templates can depend on: its plain settings (the
    syntax, the gettext style...), the names of its policies, extensions, filters and tests,
    and how each filter and test is called (the code passes a context to some), and whether it
    escapes this template."""

    def plain(value: Any) -> Any:
        return value if isinstance(value, str | bool | int | None) else type(value).__name__

    autoescape = environment.autoescape
    return (
        sorted((key, plain(value)) for key, value in vars(environment).items()),
        sorted((key, plain(value)) for key, value in environment.policies.items()),
        sorted(environment.extensions),
        sorted((key, _PassArg.from_obj(f)) for key, f in environment.filters.items()),
        sorted((key, _PassArg.from_obj(f)) for key, f in environment.tests.items()),
        autoescape(name) if callable(autoescape) else autoescape,
    )


def _share_template_code() -> None:
    if "bytecode_cache" not in Flask.jinja_options:
        Flask.jinja_options = {**Flask.jinja_options, "bytecode_cache": _SharedTemplateCode()}


class _SharedStatements(LRUCache[Any, Any]):
    """SQLAlchemy's cache of compiled statements, keyed by what of a dialect the compiled SQL
    depends on instead of by the dialect object, which is each engine's own: every app's
    engine compiled the same statements again. The apps of a run configure their engines
    alike (db.make_engine), so equal settings compile to equal SQL."""

    def get(self, key: Any, default: Any = None) -> Any:
        return super().get(_settings_of_dialect(key), default)

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(_settings_of_dialect(key), value)


def _settings_of_dialect(key: Any) -> Any:
    """The cache key with its dialect replaced by the dialect's class and settings (a key of
    another shape is kept as it is: no sharing, only slower)."""
    if not (isinstance(key, tuple) and key and isinstance(key[0], Dialect)):
        return key
    dialect, *rest = key
    serializer = getattr(dialect, "_json_serializer", None)
    return (type(dialect), dialect.server_version_info, dialect.paramstyle, serializer, *rest)


_STATEMENTS = _SharedStatements(5000)


def _share_compiled_statements() -> None:
    """Engines made by the app, and the ORM's per-mapper caches of its flushes, share
    :data:`_STATEMENTS`."""
    create_engine = db.create_engine  # type: ignore[attr-defined]  # db's own import
    if getattr(create_engine, "shared", False):
        return

    def create_sharing_engine(*args: Any, **kwargs: Any) -> Engine:
        engine = create_engine(*args, **kwargs)
        engine.update_execution_options(compiled_cache=_STATEMENTS)
        return engine

    create_sharing_engine.shared = True  # type: ignore[attr-defined]
    db.create_engine = create_sharing_engine  # type: ignore[attr-defined]
    Mapper._compiled_cache = property(lambda _: _STATEMENTS)  # type: ignore[assignment]
