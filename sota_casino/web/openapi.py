"""The OpenAPI 3.1 document of ``/api/v1`` (API.md), built as a plain dict.

Response schemas list the fields API.md promises as required and allow more (the contract
lets fields be added); request schemas refuse unknown fields, as the endpoints do. The web
tests validate real responses of every endpoint against these schemas.
"""

from __future__ import annotations

import copy
from typing import Any
from typing import Final

from .. import __version__

JSON: Final = "application/json"
HEX64: Final = "^[0-9a-f]{64}$"
SIGNATURE: Final = "^[0-9a-f]{128}$"
CARD: Final = {"type": "string", "pattern": "^([2-9TJQKA][CDHS]|X[12])$"}
TIME: Final = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$"}
AMOUNT: Final = {"type": "integer", "minimum": 0}
ID: Final = {"type": "integer", "minimum": 1}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """Return ``schema`` or null (OpenAPI 3.1 / JSON Schema 2020-12 style)."""
    return {"anyOf": [schema, {"type": "null"}]}


def obj(
    properties: dict[str, Any], required: list[str] | None = None, *, closed: bool = False
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    schema["required"] = list(properties) if required is None else required
    if closed:
        schema["additionalProperties"] = False
    return schema


SCHEMAS: Final[dict[str, Any]] = {
    "Error": obj(
        {
            "error": obj(
                {
                    "code": {"type": "string", "examples": ["insufficient_funds"]},
                    "message": {"type": "string"},
                }
            )
        }
    ),
    "User": obj(
        {
            "id": ID,
            "username": {"type": "string"},
            "role": {"enum": ["player", "operator", "auditor"]},
        }
    ),
    "UserCreated": obj({"user": ref("User")}),
    "Balances": obj(
        {
            "chips": {**AMOUNT, "description": "hundredths of a chip"},
            "sweets": {**AMOUNT, "description": "whole sweets"},
        }
    ),
    "Me": obj({"user": ref("User"), "balances": ref("Balances")}),
    "TopupResult": obj(
        {"balances": ref("Balances"), "chips": AMOUNT, "sweets": AMOUNT}, ["balances"]
    ),
    "Token": obj(
        {"token": {"type": "string", "minLength": 20}, "expires_at": TIME},
    ),
    "SIGNED": obj(
        {
            "document": {"type": "object", "description": "a signed document of FAIRNESS.md"},
            "signature": {
                "type": "string",
                "pattern": SIGNATURE,
                "description": "Ed25519 over the document's canonical JSON, hex",
            },
        }
    ),
    "PublicKey": obj(
        {
            "algorithm": {"const": "Ed25519"},
            "public_key_hex": {"type": "string", "pattern": HEX64},
            "public_key_pem": {"type": "string"},
            "retired": {
                "type": "array",
                "items": obj(
                    {"public_key_hex": {"type": "string", "pattern": HEX64}, "retired_at": TIME},
                    ["public_key_hex"],
                ),
            },
        }
    ),
    "SeedPair": obj(
        {
            "seed_pair_id": ID,
            "commitment": {"type": "string", "pattern": HEX64},
            "client_seed": {"type": "string", "minLength": 1, "maxLength": 64},
            "next_nonce": {"type": "integer", "minimum": 0},
            "commitment_document": obj(
                {
                    "type": {"const": "commitment"},
                    "v": {"const": 1},
                    "seed_pair_id": ID,
                    "user_id": ID,
                    "commitment": {"type": "string", "pattern": HEX64},
                    "created_at": TIME,
                }
            ),
            "signature": {"type": "string", "pattern": SIGNATURE},
            "next_commitment": {"type": "string", "pattern": HEX64},
        }
    ),
    "Rotation": obj({"revealed": ref("SIGNED"), "active": ref("SeedPair")}),
    "Bundle": obj(
        {
            "public_key_hex": {"type": "string", "pattern": HEX64},
            "commitment": ref("SIGNED"),
            "reveal": nullable(ref("SIGNED")),
            "rounds": {"type": "array", "items": ref("SIGNED")},
        }
    ),
    "Round": obj(
        {
            "id": ID,
            "status": {"enum": ["awaiting_decision", "settled"]},
            "bet": AMOUNT,
            "tie_bet": AMOUNT,
            "raise": AMOUNT,
            "player_card": CARD,
            "dealer_card": CARD,
            "war": nullable(
                obj(
                    {
                        "burned": {"type": "array", "items": CARD},
                        "player_card": CARD,
                        "dealer_card": CARD,
                    }
                )
            ),
            "outcome": nullable(
                {"enum": ["win", "lose", "surrender", "war_win", "war_tie", "war_lose"]}
            ),
            "net": nullable({"type": "integer"}),
            "payout": nullable(AMOUNT),
            "seed_pair_id": ID,
            "nonce": {"type": "integer", "minimum": 0},
            "balances": ref("Balances"),
        }
    ),
    "Trick": obj(
        {
            "laid": {
                "type": "array",
                "description": "per seat, every card it laid in the trick, in order",
                "items": {"type": "array", "items": CARD},
            },
            "wars": {"type": "integer", "minimum": 0},
            "winner": nullable({"type": "integer", "minimum": 0, "maximum": 3}),
            "counts": {"type": "array", "items": {"type": "integer", "minimum": 0}},
            "steps": {
                "type": "array",
                "description": "per step (first flip, then each war), cards laid per seat",
                "items": {"type": "array", "items": {"type": "integer", "minimum": 0}},
            },
        },
        ["laid", "wars", "winner", "counts"],
    ),
    "PendingMove": nullable(
        obj(
            {
                "seat": {"type": "integer"},
                "count": {"type": "integer", "minimum": 1},
                "options": {"type": "array", "items": CARD},
                "table": {"type": "array", "items": {"type": "array"}},
            },
            ["count", "options"],
        )
    ),
    "Game": obj(
        {
            "id": ID,
            "status": {"enum": ["awaiting_move", "settled"]},
            "stake": {"type": "integer", "minimum": 1},
            "rules": ref("SotaRules"),
            "seats": {"enum": [2, 3, 4]},
            "winner": nullable(
                {
                    "anyOf": [
                        {"type": "integer", "minimum": 0},
                        {"enum": ["team_0", "team_1", "draw"]},
                    ]
                }
            ),
            "tricks": {"type": "array", "items": ref("Trick")},
            "pending": ref("PendingMove"),
            "net": nullable({"type": "integer"}),
            "payout": nullable(AMOUNT),
            "seed_pair_id": ID,
            "nonce": {"type": "integer", "minimum": 0},
            "balances": ref("Balances"),
        },
        [
            "id",
            "status",
            "stake",
            "rules",
            "seats",
            "winner",
            "tricks",
            "net",
            "payout",
            "seed_pair_id",
            "nonce",
            "balances",
        ],
    ),
    "SotaRules": obj(
        {
            "seats": {"enum": [2, 3, 4]},
            "deck": {"enum": ["standard52", "jokers54", "pjanitsa36", "piquet32"]},
            "war_down": {"enum": [3, 1, "by_rank"]},
            "won_cards": {"enum": ["bottom", "won_pile"]},
            "gather": {"enum": ["winner_first", "table", "shuffled"]},
            "short": {"enum": ["lose", "last_card_up"]},
            "multi_tie": {"enum": ["tied_only", "tied_only_return", "all"]},
            "end": {"enum": ["all_cards", "single_pass"]},
            "max_tricks": {"type": "integer", "minimum": 1, "maximum": 100000},
            "lead": nullable({"type": "integer", "minimum": 1}),
            "peace": {"type": "boolean"},
            "auto_war_twos": {"type": "boolean"},
            "underdog": {"type": "boolean"},
            "prisoners_of_war": {"type": "boolean"},
            "teams": {"type": "boolean"},
        },
        [],
        closed=True,
    ),
    "RoundSummary": obj(
        {
            "id": ID,
            "game": {"enum": ["casino_war", "sota"]},
            "status": {"enum": ["awaiting_decision", "awaiting_move", "settled"]},
            "currency": {"enum": ["chips", "sweets"]},
            "staked": AMOUNT,
            "payout": nullable(AMOUNT),
            "net": nullable({"type": "integer"}),
            "seed_pair_id": ID,
            "nonce": {"type": "integer", "minimum": 0},
            "created_at": TIME,
        }
    ),
    "RoundList": obj(
        {
            "rounds": {"type": "array", "items": ref("RoundSummary")},
            "next_before": nullable(ID),
        }
    ),
    "Receipt": {
        "allOf": [
            ref("SIGNED"),
            obj(
                {
                    "document": obj(
                        {
                            "type": {"const": "round"},
                            "v": {"const": 1},
                            "round_id": ID,
                            "game": {"enum": ["casino_war", "sota"]},
                            "seed_pair_id": ID,
                            "commitment": {"type": "string", "pattern": HEX64},
                            "client_seed": {"type": "string"},
                            "nonce": {"type": "integer", "minimum": 0},
                            "rules": {"type": "object"},
                            "actions": {"type": "array"},
                            "cards": {"type": "array", "items": CARD},
                            "outcome": {"type": "object"},
                            "stakes": {
                                "type": "object",
                                "additionalProperties": {"type": "integer", "minimum": 0},
                            },
                            "payout": AMOUNT,
                            "settled_at": TIME,
                        }
                    )
                }
            ),
        ]
    },
    "Figure": obj(
        {"exact": {"type": "string", "pattern": r"^-?\d+/\d+$"}, "value": {"type": "number"}}
    ),
    "Odds": obj(
        {
            "decks": {"type": "integer", "minimum": 1, "maximum": 8},
            "tie_payout": {"type": "integer", "minimum": 0, "maximum": 30},
            "bonus": {"enum": ["none", "ante"]},
            "p_tie": ref("Figure"),
            "house_edge_war": ref("Figure"),
            "house_edge_surrender": ref("Figure"),
            "house_edge_tie_bet": nullable(ref("Figure")),
        }
    ),
    "OpenAPIDocument": obj(
        {"openapi": {"const": "3.1.0"}, "info": {"type": "object"}, "paths": {"type": "object"}}
    ),
    # request bodies: unknown fields are refused
    "Credentials": obj(
        {"username": {"type": "string"}, "password": {"type": "string"}}, closed=True
    ),
    "TopupRequest": obj({"currency": {"enum": ["chips", "sweets"]}}, closed=True),
    "RotateRequest": obj(
        {"client_seed": {"type": "string", "minLength": 1, "maxLength": 64}}, [], closed=True
    ),
    "BetRequest": obj(
        {
            "bet": {
                "type": "integer",
                "minimum": 100,
                "multipleOf": 100,
                "description": "the ante in hundredths of a chip: whole chips within limits",
            },
            "tie_bet": {"type": "integer", "minimum": 0, "multipleOf": 100},
            "table": {"const": "casino_war"},
        },
        ["bet"],
        closed=True,
    ),
    "DecisionRequest": obj({"choice": {"enum": ["war", "surrender"]}}, closed=True),
    "GameRequest": {
        **obj(
            {
                "stake": {"type": "integer", "minimum": 1, "description": "whole sweets"},
                "rules": ref("SotaRules"),
                "preset": {
                    "enum": [
                        "nordic",
                        "english",
                        "tod_und_leben",
                        "pjanitsa",
                        "rauha",
                        "syrian",
                        "kids_15_min",
                    ]
                },
            },
            ["stake"],
            closed=True,
        ),
        "not": {"required": ["rules", "preset"]},
    },
    "MoveRequest": obj(
        {
            "cards": {
                "type": "array",
                "items": CARD,
                "minItems": 1,
                "description": "won cards to lay: face-down ones first, the face-up card last",
            }
        },
        closed=True,
    ),
}

ERROR_RESPONSES: Final = {
    "400": ("bad_request", "The body is not JSON, or a form lacks its CSRF token."),
    "401": ("unauthorized", "No credentials, or they are wrong or expired."),
    "403": ("forbidden", "Not allowed (a locked account)."),
    "404": ("not_found", "No such thing, or it is not yours."),
    "409": ("conflict", "The state does not allow it (settled round, open round, top-up)."),
    "422": ("invalid_input", "Invalid input: names the field and what is expected."),
    "429": ("rate_limited", "Too many attempts."),
}


def _error_responses(*statuses: str) -> dict[str, Any]:
    return {status: {"$ref": f"#/components/responses/E{status}"} for status in statuses}


def _json_response(description: str, schema: str) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": ref(schema)}}}


def operation(
    operation_id: str,
    summary: str,
    tag: str,
    ok: tuple[str, str, str],
    *,
    errors: tuple[str, ...] = ("400", "401", "422"),
    body: str | None = None,
    auth: bool = True,
    idempotent: bool = False,
    parameters: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Return one OpenAPI operation object.

    :param ok: (status, description, schema name) of the success answer.
    """
    status, description, schema = ok
    op: dict[str, Any] = {
        "operationId": operation_id,
        "summary": summary,
        "tags": [tag],
        "responses": {status: _json_response(description, schema), **_error_responses(*errors)},
    }
    if body:
        op["requestBody"] = {"required": True, "content": {JSON: {"schema": ref(body)}}}
    params = list(parameters or [])
    if idempotent:
        params.append({"$ref": "#/components/parameters/IdempotencyKey"})
    if params:
        op["parameters"] = params
    op["security"] = [{"bearer": []}, {"cookie": [], "csrf": []}] if auth else []
    return op


def _path_id(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": {"type": "integer", "minimum": 1, "maximum": 2**63 - 1},
    }


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema,
    }


ROUND_ID = _path_id("id", "round id")


def _paths() -> dict[str, Any]:
    return {
        "/auth/register": {
            "post": operation(
                "register",
                "Create a player account (with the sign-up grant)",
                "accounts",
                ("201", "the new player", "UserCreated"),
                errors=("400", "409", "422", "429"),
                body="Credentials",
                auth=False,
            )
        },
        "/auth/token": {
            "post": operation(
                "issueToken",
                "Get a bearer token",
                "accounts",
                ("200", "a bearer token and its expiry", "Token"),
                errors=("400", "401", "403", "422", "429"),
                body="Credentials",
                auth=False,
            )
        },
        "/me": {
            "get": operation(
                "me",
                "Who am I, and my balances",
                "accounts",
                ("200", "you", "Me"),
                errors=("401", "403"),
            )
        },
        "/me/topup": {
            "post": operation(
                "topup",
                "Top up a low balance (at most once a day)",
                "accounts",
                ("201", "the new balances", "TopupResult"),
                errors=("400", "401", "403", "409", "422"),
                body="TopupRequest",
                idempotent=True,
            )
        },
        "/fairness/public-key": {
            "get": operation(
                "publicKey",
                "The service's Ed25519 public key and the retired ones",
                "fairness",
                ("200", "the public key", "PublicKey"),
                errors=(),
                auth=False,
            )
        },
        "/fairness/seed-pair": {
            "get": operation(
                "seedPair",
                "The active seed pair (never its server seed) and the next commitment",
                "fairness",
                ("200", "the active seed pair", "SeedPair"),
                errors=("401", "403"),
            )
        },
        "/fairness/rotate": {
            "post": operation(
                "rotate",
                "Reveal the active server seed and activate the next pair",
                "fairness",
                ("200", "the signed reveal and the new active pair", "Rotation"),
                errors=("400", "401", "403", "409", "422"),
                body="RotateRequest",
            )
        },
        "/fairness/seed-pairs/{id}/bundle": {
            "get": operation(
                "bundle",
                "The verifier's input for one seed pair",
                "fairness",
                ("200", "the bundle", "Bundle"),
                errors=("401", "403", "404"),
                parameters=[_path_id("id", "seed pair id")],
            )
        },
        "/casino-war/rounds": {
            "post": operation(
                "placeBet",
                "Bet and deal a Casino War round",
                "casino war",
                ("201", "the round", "Round"),
                errors=("400", "401", "403", "409", "422"),
                body="BetRequest",
                idempotent=True,
            )
        },
        "/casino-war/rounds/{id}/decision": {
            "post": operation(
                "decide",
                "Go to war or surrender on a tie",
                "casino war",
                ("200", "the settled round", "Round"),
                errors=("400", "401", "403", "404", "409", "422"),
                body="DecisionRequest",
                idempotent=True,
                parameters=[ROUND_ID],
            )
        },
        "/casino-war/rounds/{id}": {
            "get": operation(
                "getRound",
                "One of your Casino War rounds",
                "casino war",
                ("200", "the round", "Round"),
                errors=("401", "403", "404"),
                parameters=[ROUND_ID],
            )
        },
        "/casino-war/odds": {
            "get": operation(
                "odds",
                "Exact house edge figures of a table setting",
                "casino war",
                ("200", "the figures, each as an exact fraction and a float", "Odds"),
                errors=("422",),
                auth=False,
                parameters=[
                    _query("decks", {"type": "integer", "minimum": 1, "maximum": 8}, "decks"),
                    _query(
                        "tie_payout",
                        {"type": "integer", "minimum": 0, "maximum": 30},
                        "tie bet pays this many to 1",
                    ),
                    _query("bonus", {"enum": ["none", "ante"]}, "war tie bonus"),
                ],
            )
        },
        "/sota/games": {
            "post": operation(
                "playSota",
                "Stake sweets on a whole game of Sota (rules or a preset)",
                "sota",
                ("201", "the game", "Game"),
                errors=("400", "401", "403", "409", "422"),
                body="GameRequest",
                idempotent=True,
            )
        },
        "/sota/games/{id}/moves": {
            "post": operation(
                "sotaMove",
                "Lay prisoners (Prisoners of War only)",
                "sota",
                ("200", "the game", "Game"),
                errors=("400", "401", "403", "404", "409", "422"),
                body="MoveRequest",
                idempotent=True,
                parameters=[ROUND_ID],
            )
        },
        "/sota/games/{id}": {
            "get": operation(
                "getGame",
                "One of your Sota games",
                "sota",
                ("200", "the game", "Game"),
                errors=("401", "403", "404"),
                parameters=[ROUND_ID],
            )
        },
        "/rounds": {
            "get": operation(
                "listRounds",
                "Your rounds, newest first",
                "history",
                ("200", "a page of rounds", "RoundList"),
                errors=("401", "403", "422"),
                parameters=[
                    _query("game", {"enum": ["casino_war", "sota"]}, "only this game"),
                    _query("before", {"type": "integer", "minimum": 1}, "rounds before this id"),
                    _query("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "1-100"),
                ],
            )
        },
        "/rounds/{id}/receipt": {
            "get": operation(
                "receipt",
                "The signed receipt of a settled round",
                "history",
                ("200", "the receipt", "Receipt"),
                errors=("401", "403", "404"),
                parameters=[ROUND_ID],
            )
        },
        "/openapi.json": {
            "get": operation(
                "openapi",
                "This document: the API in OpenAPI 3.1",
                "meta",
                ("200", "the OpenAPI document", "OpenAPIDocument"),
                errors=(),
                auth=False,
            )
        },
    }


#: Paths other modules add (the operator's endpoints), merged in by :func:`openapi_document`.
EXTRA_PATHS: dict[str, Any] = {}
EXTRA_SCHEMAS: dict[str, Any] = {}


def openapi_document() -> dict[str, Any]:
    """Return the OpenAPI 3.1 document of the API."""
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "info": {
            "title": "Sota Casino API",
            "version": __version__,
            "summary": "Provably fair Casino War and Sota for play money.",
            "description": (
                "Amounts are integers in minor units: chips in hundredths of a chip, sweets in "
                'whole sweets. Errors are {"error": {"code", "message"}}. Money-moving POSTs '
                "accept an Idempotency-Key."
            ),
        },
        "servers": [{"url": "/api/v1"}],
        "paths": {**_paths(), **copy.deepcopy(EXTRA_PATHS)},
        "components": {
            "schemas": {**copy.deepcopy(SCHEMAS), **copy.deepcopy(EXTRA_SCHEMAS)},
            "responses": {
                f"E{status}": {
                    "description": f"{description} (code e.g. {code})",
                    "content": {JSON: {"schema": ref("Error")}},
                }
                for status, (code, description) in ERROR_RESPONSES.items()
            },
            "parameters": {
                "IdempotencyKey": {
                    "name": "Idempotency-Key",
                    "in": "header",
                    "required": False,
                    "description": (
                        "1-64 visible ASCII characters; a retry with the same key and body "
                        "returns the first answer and moves nothing; another body is a 422 "
                        "idempotency_mismatch"
                    ),
                    "schema": {"type": "string", "pattern": "^[\\x21-\\x7e]{1,64}$"},
                }
            },
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "cookie": {"type": "apiKey", "in": "cookie", "name": "session"},
                "csrf": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-CSRF-Token",
                    "description": "with the cookie, required on every non-GET call",
                },
            },
        },
    }
