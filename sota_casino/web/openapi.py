"""The OpenAPI 3.1 document of ``/api/v1``, built from the routes and the models.

Each API view is decorated with :func:`operation`, which declares its request body, query
string and answers as models of :mod:`.schemas` or as the use cases' result types (their schemas
derived from the dataclasses of :mod:`~sota_casino.services.results`). The same declaration
parses the request (the view receives ``body=`` and ``query=``) and describes it here, so the
document cannot drift from what the endpoints accept. The refusals that do not depend on the
view (a body's, any request's size limits, the database's) come from the declaration too. The
web tests validate the document with openapi-spec-validator, real answers of every endpoint
against it (those refusals and an outage included), and that each endpoint agrees with its
request schema.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import Final

from flask import Flask
from flask import Response
from flask import jsonify
from flask.typing import ResponseReturnValue
from pydantic import BaseModel
from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from .. import __version__
from ..services import results
from ..services.idempotency import KEY_PATTERN
from ..services.results import MAX_ID
from .errors import HTTP_CODES
from .errors import Error
from .inputs import IDEMPOTENCY_HEADER
from .inputs import parse_body
from .inputs import parse_query
from .protocol import MAX_HEADER_FIELD
from .protocol import MAX_HEADER_FIELDS
from .protocol import MAX_REQUEST_LINE
from .protocol import SERVER_MAX_HEADER_FIELD
from .protocol import SERVER_MAX_REQUEST_LINE

JSON: Final = "application/json"
PREFIX: Final = "/api/v1"
REF: Final = "#/components/schemas/{model}"
#: Flask's names of path arguments that the document (and docs/) call ``{id}``.
PATH_NAMES: Final = {
    name: "id"
    for name in ("round_id", "seed_pair_id", "user_id", "approval_id", "rule_id", "alert_id")
}

#: Every refusal the document describes, in words (its code is the one the app answers with,
#: :data:`~.errors.HTTP_CODES`). No operation lists 405: it answers a method for which the
#: document has no operation, and OpenAPI has no answers of the whole API (the document's
#: description names it; the components keep it).
ERROR_RESPONSES: Final = {
    400: "The body is not JSON, or a form lacks its CSRF token.",
    401: "No credentials, or they are wrong or expired.",
    403: "Not allowed (a locked account, or not an operator).",
    404: "No such thing, or it is not yours.",
    405: "No operation of this path takes this method (see Allow).",
    409: "The state does not allow it (settled round, open round, top-up).",
    413: "The body is over the service's limit (64 KiB unless set otherwise), with a "
    "Content-Length or chunked.",
    414: f"The request line (method and URL) is over {MAX_REQUEST_LINE} bytes (past "
    f"{SERVER_MAX_REQUEST_LINE}, the HTTP server answers first, in HTML).",
    415: "The body is not sent as Content-Type: application/json in UTF-8 (no other charset), "
    "or is sent encoded (a Content-Encoding other than identity).",
    422: "Invalid input: names the field and what is expected.",
    429: "Too many attempts; retry after Retry-After seconds.",
    431: f"A header field is over {MAX_HEADER_FIELD} bytes, or there are over {MAX_HEADER_FIELDS} "
    f"(a field past {SERVER_MAX_HEADER_FIELD} bytes: the HTTP server answers first, in HTML).",
    503: "The database cannot serve now (down, read-only, full), a wait for it ran out (a "
    "lock held elsewhere), or other requests kept changing the same records through every "
    "retry (a deadlock); nothing was done: retry after Retry-After seconds.",
}
#: The refusals whose answer says when to try again.
RETRY_AFTER: Final = (429, 503)
#: How an answer says when to try again.
RETRY_AFTER_HEADER: Final = {
    "description": "seconds to wait before trying again",
    "required": True,
    "schema": {"type": "integer", "minimum": 1},
}
#: What any request may meet, whatever its operation: its body, request line or headers over
#: the limits the app checks before the operation runs (web/protocol.py).
REQUEST_LIMITS: Final = (413, 414, 431)
#: An operation with a body refuses one not sent as JSON.
BODY_REFUSALS: Final = (415,)
#: An operation that reads or writes the database: an outage, or a wait for it that ran out.
DATABASE_REFUSALS: Final = (503,)
#: The fields of answers that later requests take (OpenAPI ``links``): ``(answer model, JSON
#: pointer into its body, the parameter it fills, the operations that take it)``. Every
#: operation whose success answer is the model links to each operation named, so a link is
#: written once here, not per operation. The next page of a list is linked by its name
#: instead (``next_cursor`` fills ``cursor``: see :func:`_link`).
FEEDS: Final[tuple[tuple[str, str, str, tuple[str, ...]], ...]] = (
    ("CasinoWarRound", "/id", "path.id", ("getRound", "decide", "receipt", "roundProof")),
    ("CasinoWarRound", "/seed_pair_id", "path.id", ("bundle",)),
    ("SotaGame", "/id", "path.id", ("getGame", "sotaMove", "receipt", "roundProof")),
    ("SotaGame", "/seed_pair_id", "path.id", ("bundle",)),
    ("ActiveSeedPair", "/seed_pair_id", "path.id", ("bundle",)),
    ("Rotation", "/active/seed_pair_id", "path.id", ("bundle",)),
    ("Rotation", "/revealed/document/seed_pair_id", "path.id", ("bundle",)),
    ("RoundList", "/rounds/0/id", "path.id", ("receipt", "roundProof")),
    ("RoundList", "/rounds/0/seed_pair_id", "path.id", ("bundle",)),
    ("RoundProof", "/round_id", "path.id", ("receipt",)),
    ("RoundProof", "/seed_pair_id", "path.id", ("bundle",)),
    ("RoundProof", "/checkpoint/document/size", "path.size", ("checkpointBySize",)),
    ("PublicCheckpoint", "/size", "path.size", ("checkpointBySize",)),
    ("PublicCheckpoint", "/size", "query.new_size", ("consistency",)),
    ("UserList", "/users/0/id", "path.id", ("playerOverview", "playerRounds", "playerTransfers")),
    ("UserList", "/users/0/id", "path.id", ("playerSeedPairs", "setLocked", "proposeOperator")),
    ("RoundPage", "/rounds/0/id", "path.id", ("receipt", "roundProof")),
    ("SeedPairPage", "/seed_pairs/0/seed_pair_id", "path.id", ("bundle",)),
    ("AdjustmentResult", "/user_id", "path.id", ("playerOverview", "playerTransfers")),
    ("ManagedUser", "/user/id", "path.id", ("playerOverview", "proposeOperator")),
    ("AuditPage", "/entries/0/seq", "path.seq", ("auditProof",)),
    ("TableSettings", "/name", "path.name", ("table", "tableSettings", "updateTable")),
    ("TableSettings", "/name", "path.name", ("proposeTableChange",)),
    ("ApprovalPage", "/approvals/0/id", "path.id", ("approve", "reject")),
    ("ApprovalView", "/id", "path.id", ("approve", "reject")),
    ("AlertPage", "/alerts/0/id", "path.id", ("acknowledgeAlert",)),
    ("AlertView", "/id", "path.id", ("acknowledgeAlert",)),
    ("AlertRuleList", "/rules/0/id", "path.id", ("setAlertRuleEnabled",)),
    ("AlertRuleView", "/id", "path.id", ("setAlertRuleEnabled",)),
)
#: What refuses a schema-valid request to any operation that takes an ``Idempotency-Key``.
KEY_REUSED: Final = (
    "an Idempotency-Key already used with another request of the caller's (idempotency_mismatch)"
)
DENIED: Final = (401, 403)
CHANGE: Final = (400, 401, 403, 409, 422)
CHANGE_OF_ONE: Final = (*CHANGE, 404)


@dataclass(frozen=True)
class Refusal:
    """A refusal whose answer is an operation's own: another body than :class:`Error`.

    :param retry_after: the answer carries ``Retry-After``.
    """

    status: int
    model: type[Any]
    description: str
    retry_after: bool = False


@dataclass(frozen=True)
class Operation:
    """What one endpoint accepts and answers.

    :param ok: the success answer's model or result type (None: text of ``media``, or no
        body at all for a ``status`` of 204).
    :param description: what the summary leaves out, in a sentence or two ("": nothing).
    :param errors: the refusals it may answer, from :data:`ERROR_RESPONSES`.
    :param cookie: the pages' session cookie (with the CSRF header) may stand in for a bearer
        token; False for a call that acts on the bearer token it is sent with.
    :param idempotent: a retry must not do it twice (it moves money, or proposes or decides
        a change: four eyes), so it takes an ``Idempotency-Key``.
    :param path: describes path arguments narrower than their Flask converter (the service
        checks them, so that an unknown name is a 422 that says which names there are).
    :param database: it reads or writes the database, so it may answer 503 (with the
        ``Retry-After`` header); the refusals every operation may meet
        (:data:`REQUEST_LIMITS`) and those of a body (:data:`BODY_REFUSALS`) are added to
        ``errors`` from the declaration, not listed by each view.
    :param refusals_of_its_own: refusals (of ``errors``) answered with a body of their own.
    :param beyond_schema: what may still refuse a schema-valid request with a 422, in words:
        rules no JSON Schema can state (a table's current limits, one field against another,
        the log's size). The document lists them on the 422 answer (``x-beyond-schema``), so
        a client knows the whole contract and a schema-valid request gets no other 422. An
        operation that takes an ``Idempotency-Key`` lists :data:`KEY_REUSED` there too.
    """

    id: str
    summary: str
    tag: str
    ok: type[Any] | None
    status: int = 200
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    path: type[BaseModel] | None = None
    errors: tuple[int, ...] = (400, 401, 422)
    auth: bool = True
    cookie: bool = True
    idempotent: bool = False
    media: str | tuple[str, ...] = JSON  # a download may come in more than one
    beyond_schema: tuple[str, ...] = ()
    database: bool = True
    description: str = ""
    refusals_of_its_own: tuple[Refusal, ...] = ()

    def rules_beyond_schema(self) -> tuple[str, ...]:
        """What may refuse a schema-valid request with a 422: its own rules, and a key's."""
        return (*self.beyond_schema, *((KEY_REUSED,) if self.idempotent else ()))

    def refusals(self) -> tuple[int, ...]:
        """Every status it may refuse with: its own, its body's, any request's, the database's."""
        found = (
            *self.errors,
            *(BODY_REFUSALS if self.body is not None else ()),
            *REQUEST_LIMITS,
            *(DATABASE_REFUSALS if self.database else ()),
        )
        return tuple(sorted(set(found)))


View = Callable[..., ResponseReturnValue]


class _JsonSchema(GenerateJsonSchema):
    """Pydantic's JSON Schema, without ``"default": null`` on fields left out when absent."""

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        if schema.get("default", ...) is None:
            return self.generate_inner(schema["schema"])
        return super().default_schema(schema)

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        """A map's keys are strings: an enum of them says so, as every enum names its type
        (code generators make an enum of one named type)."""
        found = super().dict_schema(schema)
        names = found.get("propertyNames")
        if isinstance(names, dict) and "enum" in names:
            found["propertyNames"] = {"type": "string", **names}
        return found


def operation(
    id: str, summary: str, tag: str, ok: type[Any] | None, **more: Any
) -> Callable[[View], View]:
    """Declare a view's operation; the view gets the parsed ``body`` and ``query``."""
    declared = Operation(id, summary, tag, ok, **more)

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def run(*args: Any, **kwargs: Any) -> ResponseReturnValue:
            if declared.body is not None:
                kwargs["body"] = parse_body(declared.body)
            if declared.query is not None:
                kwargs["query"] = parse_query(declared.query)
            return view(*args, **kwargs)

        run.operation = declared  # type: ignore[attr-defined]  # read by openapi_document
        return run

    return decorate


def answer(result: Any, status: int = 200) -> ResponseReturnValue:
    """Answer a use case's result (:mod:`~sota_casino.services.results`) as its JSON."""
    return jsonify(results.to_json(result)), status


def no_content() -> ResponseReturnValue:
    """Answer 204 with no body, and so no Content-Type (Flask would type the empty body)."""
    response = Response(status=204)
    del response.headers["Content-Type"]
    return response


def _ref(model: type[Any]) -> dict[str, str]:
    return {"$ref": REF.format(model=model.__name__)}


def _parameters(path: str, op: Operation) -> list[dict[str, Any]]:
    narrowed = _properties(op.path) if op.path is not None else {}
    found: list[dict[str, Any]] = [
        {
            "name": PATH_NAMES.get(name, name),
            "in": "path",
            "required": True,
            **({"description": narrowed[name]["description"]} if name in narrowed else {}),
            "schema": narrowed.get(name, _path_schema(converter)),
        }
        for converter, name in re.findall(r"<(?:(\w+):)?(\w+)>", path)
    ]
    if op.query is not None:
        schema = op.query.model_json_schema(ref_template=REF, schema_generator=_JsonSchema)
        found += [
            {
                "name": name,
                "in": "query",
                "required": name in schema.get("required", ()),
                "description": prop.get("description", prop.get("title", name)),
                "schema": prop,
            }
            for name, prop in schema["properties"].items()
        ]
    if op.idempotent:
        found.append({"$ref": "#/components/parameters/IdempotencyKey"})
    return found


def _properties(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(ref_template=REF, schema_generator=_JsonSchema)
    return dict(schema["properties"])


def _path_schema(converter: str) -> dict[str, Any]:
    if converter == "id":
        return {"type": "integer", "minimum": 1, "maximum": MAX_ID}
    return {"type": "string"}


def _describe(path: str, op: Operation) -> dict[str, Any]:
    schema = _ref(op.ok) if op.ok is not None else {"type": "string"}
    medias = (op.media,) if isinstance(op.media, str) else op.media
    answer: dict[str, Any] = {"description": op.summary}
    if op.status != 204:
        answer["content"] = {m: {"schema": schema} for m in medias}
    security: list[dict[str, list[str]]] = [{"bearer": []}]
    if op.cookie:
        security.append({"cookie": [], "csrf": []})
    described: dict[str, Any] = {
        "operationId": op.id,
        "summary": op.summary,
        "tags": [op.tag],
        "responses": {
            str(op.status): answer,
            **{str(code): _refusal(code, op) for code in op.refusals()},
        },
        "security": security if op.auth else [],
    }
    if op.description:
        described["description"] = op.description
    if op.body is not None:
        described["requestBody"] = {"required": True, "content": {JSON: {"schema": _ref(op.body)}}}
    if parameters := _parameters(path, op):
        described["parameters"] = parameters
    return described


def _refusal(status: int, op: Operation) -> dict[str, Any]:
    """A documented refusal: the shared one, or a 422 naming the operation's rules beyond its
    schema."""
    own = next((r for r in op.refusals_of_its_own if r.status == status), None)
    if own is not None:
        answer: dict[str, Any] = {
            "description": f"{_described(status)}; here: {own.description}",
            "content": {JSON: {"schema": _ref(own.model)}},
        }
        if own.retry_after:
            answer["headers"] = {"Retry-After": RETRY_AFTER_HEADER}
        return answer
    rules = op.rules_beyond_schema()
    if status != 422 or not rules:
        return {"$ref": f"#/components/responses/E{status}"}
    return {
        "description": f"{_described(status)}; also: {'; '.join(rules)}",
        "content": {JSON: {"schema": _ref(Error)}},
        "x-beyond-schema": list(rules),
    }


def _described(status: int) -> str:
    return f"{ERROR_RESPONSES[status]} (code e.g. {HTTP_CODES[status]})"


def _error_response(status: int) -> dict[str, Any]:
    """The shared answer of a refusal, with ``Retry-After`` where it says when to retry."""
    response: dict[str, Any] = {
        "description": _described(status),
        "content": {JSON: {"schema": _ref(Error)}},
    }
    if status in RETRY_AFTER:
        response["headers"] = {"Retry-After": RETRY_AFTER_HEADER}
    return response


def operations(app: Flask) -> list[tuple[str, str, Operation]]:
    """Every (Flask rule, method, operation) the app serves and declares below ``/api/v1``."""
    found = []
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith(f"{PREFIX}/"):
            continue
        declared = getattr(app.view_functions[rule.endpoint], "operation", None)
        if not isinstance(declared, Operation):
            continue  # undocumented: the web tests compare the document with the URL map
        methods = sorted((rule.methods or set()) - {"HEAD", "OPTIONS"})
        found += [(rule.rule, method.lower(), declared) for method in methods]
    return found


def _link(paths: dict[str, dict[str, Any]], schemas: dict[str, Any]) -> None:
    """Add the :data:`FEEDS` to each success answer whose model feeds later requests, and
    to each page of a list the link to the next page: an answer's ``next_<name>`` fills the
    query parameter ``<name>`` of the same operation."""
    described = {op["operationId"]: op for methods in paths.values() for op in methods.values()}
    for source in described.values():
        answer = next(a for status, a in source["responses"].items() if status.startswith("2"))
        model = answer.get("content", {}).get(JSON, {}).get("schema", {}).get("$ref", "")
        feeds = [feed for feed in FEEDS if model == REF.format(model=feed[0])]
        name = model.rpartition("/")[2]
        fields = schemas.get(name, {}).get("properties", {})
        feeds += [
            (name, f"/next_{p['name']}", f"query.{p['name']}", (source["operationId"],))
            for p in source.get("parameters", ())
            if p.get("in") == "query" and f"next_{p['name']}" in fields
        ]
        links: dict[str, Any] = {}
        for _, pointer, parameter, targets in feeds:
            for target in targets:
                link: dict[str, Any] = {
                    "operationId": target,
                    "parameters": {parameter: f"$response.body#{pointer}"},
                }
                if target == source["operationId"]:
                    link = _same_question(link, source, feeds)
                elif "/0/" in pointer:  # a link cannot say "if there is one"
                    link["description"] = "The list's first item: an empty list has none."
                links[f"{target}From{_camel(pointer)}"] = link
        if links:
            answer["links"] = links


def _same_question(
    link: dict[str, Any],
    source: dict[str, Any],
    feeds: list[tuple[str, str, str, tuple[str, ...]]],
) -> dict[str, Any]:
    """Make ``link`` (to the next page of the same list) carry the request's own parameters
    that every request has (the path's), and name in words the others to send again.

    A runtime expression cannot say "if given": ``$request.query.game`` of a request that left
    ``game`` out cannot be read, and the link could not be followed (schemathesis: "Could not
    resolve parameter").
    """
    cursors = {feed[2] for feed in feeds if source["operationId"] in feed[3]}
    others = [
        p
        for p in source.get("parameters", ())
        if "name" in p and f"{p['in']}.{p['name']}" not in cursors | set(link["parameters"])
    ]
    link["parameters"] |= {
        f"{p['in']}.{p['name']}": f"$request.{p['in']}.{p['name']}" for p in others if p["required"]
    }
    if optional := [p["name"] for p in others if not p["required"]]:
        link["description"] = (
            f"The next page of the same list: send the request's {', '.join(optional)} again, "
            "if it had them."
        )
    return link


def _camel(pointer: str) -> str:
    """``/active/seed_pair_id`` → ``ActiveSeedPairId`` (``/rounds/0/id`` → ``Rounds0Id``)."""
    return "".join(word.capitalize() for word in re.split(r"[/_]", pointer))


def openapi_document(app: Flask) -> dict[str, Any]:
    """Return the OpenAPI 3.1 document of the app's API (built once per app)."""
    cached = app.extensions.get("sota_casino.openapi")
    if cached is None:
        cached = app.extensions["sota_casino.openapi"] = _build(app)
    return dict(cached)


def _build(app: Flask) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    models: list[type[Any]] = [Error]
    for rule, method, op in operations(app):
        path = re.sub(
            r"<(?:\w+:)?(\w+)>",
            lambda m: "{" + PATH_NAMES.get(m[1], m[1]) + "}",
            rule.removeprefix(PREFIX),
        )
        paths.setdefault(path, {})[method] = _describe(rule, op)
        models += [model for model in (op.ok, op.body) if model is not None]
        models += [refusal.model for refusal in op.refusals_of_its_own]
    _, definitions = TypeAdapter.json_schemas(
        [(model.__name__, "validation", results.adapter(model)) for model in dict.fromkeys(models)],
        ref_template=REF,
        schema_generator=_JsonSchema,
    )
    _link(paths, definitions["$defs"])
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "info": {
            "title": "Sota Casino API",
            "version": __version__,
            "summary": "Provably fair Casino War and Sota for play money.",
            "description": (
                "Amounts are integers in minor units: chips in hundredths of a chip, sweets in "
                "whole sweets. Integers are written without a fraction or exponent (1, not 1.0). "
                'Errors are {"error": {"code", "message"}}, with "field" too where the refusal '
                "is about one field of the request (a field inside an object by its path: "
                "rules.teams). Money-moving POSTs, and proposing an "
                "adjustment or a table change and deciding a proposal (four eyes), accept an "
                "Idempotency-Key. Every operation lists every status it may answer, including "
                "those any request may meet (413, 414, 431: a body, request line or header over "
                "the limits) and 503 with Retry-After where it uses the database (an outage, or a "
                "wait for it that ran out; retry then, with the same Idempotency-Key). A method "
                "that no operation of a path takes is answered 405 method_not_allowed with an "
                "Allow header (components.responses.E405): no operation lists it, since OpenAPI "
                "has no answers of the whole API and it is the answer of an operation that does "
                "not exist. Nor does any list a request that is not valid HTTP (a byte outside "
                "ASCII in the request line, a NUL in a header, a Content-Length sent twice, a "
                "broken chunk): the HTTP server refuses it before the service sees it, 400 in "
                "HTML (its own page, as for a request line or header field past its own limits). "
                "Nor a Host header that is no host name, or not one the service is set to answer "
                "on: 400 bad_request on any path, about the address the request was sent to, "
                "not the operation."
            ),
        },
        "servers": [{"url": PREFIX}],
        "paths": paths,
        "components": {
            "schemas": definitions["$defs"],
            "responses": {f"E{status}": _error_response(status) for status in ERROR_RESPONSES},
            "parameters": {
                "IdempotencyKey": {
                    "name": IDEMPOTENCY_HEADER,
                    "in": "header",
                    "required": False,
                    "description": (
                        "a retry with the same key and body returns the first answer and does "
                        "nothing again; another body is a 422 idempotency_mismatch. One key, "
                        "without a comma: a header sent twice arrives joined by commas (a 422)"
                    ),
                    "schema": {"type": "string", "pattern": KEY_PATTERN},
                }
            },
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "cookie": {
                    "type": "apiKey",
                    "in": "cookie",
                    "name": "session",
                    "description": "named __Host-session over HTTPS (Secure, bound to the host)",
                },
                "csrf": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-CSRF-Token",
                    "description": "with the cookie, required on every non-GET call",
                },
            },
        },
    }
