"""The OpenAPI 3.1 document of ``/api/v1`` (API.md), built as a plain dict.

Response schemas list the fields API.md promises as required and allow more (the contract
lets fields be added); request schemas refuse unknown fields, as the endpoints do. The web
tests validate the document with openapi-spec-validator and real responses of every endpoint
against these schemas. The operator's endpoints are described in :mod:`.operator_openapi`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any
from typing import Final

from .. import __version__

JSON: Final = "application/json"
HEX64: Final = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
SIGNATURE: Final = {
    "type": "string",
    "pattern": "^[0-9a-f]{128}$",
    "description": "Ed25519 over the document's canonical JSON, hex",
}
CARD: Final = {"type": "string", "pattern": "^([2-9TJQKA][CDHS]|X[12])$"}
TIME: Final = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$"}
ID: Final = {"type": "integer", "minimum": 1}
#: A whole number that may be zero: nonces, counts, sizes.
COUNT: Final = {"type": "integer", "minimum": 0}
#: An amount in minor units that cannot be negative: stakes, payouts, player balances.
AMOUNT: Final = COUNT
#: An amount in minor units of either sign: results, house and issuance accounts.
MONEY: Final = {"type": "integer"}
TEXT: Final = {"type": "string"}
FLAG: Final = {"type": "boolean"}
CURRENCY: Final = {"enum": ["chips", "sweets"]}
GAME: Final = {"enum": ["casino_war", "sota"]}
USER_FIELDS: Final = {
    "id": ID,
    "username": TEXT,
    "role": {"enum": ["player", "operator", "auditor"]},
}
WAR_OUTCOME: Final = {"enum": ["win", "lose", "surrender", "war_win", "war_tie", "war_lose"]}
SOTA_WINNER: Final = {"anyOf": [COUNT, {"enum": ["team_0", "team_1", "draw"]}]}
SOTA_PRESET: Final = {
    "enum": ["nordic", "english", "tod_und_leben", "pjanitsa", "rauha", "syrian", "kids_15_min"]
}

#: Statuses an operation may refuse with (each documented once under ``components``).
DENIED: Final = ("401", "403")
DENIED_OR_MISSING: Final = ("401", "403", "404")
CHANGE: Final = ("400", "401", "403", "409", "422")
CHANGE_OF_ONE: Final = ("400", "401", "403", "404", "409", "422")


def ref(name: str) -> dict[str, str]:
    """Return a reference to the component schema ``name``."""
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """Return ``schema`` or null (OpenAPI 3.1 / JSON Schema 2020-12 style)."""
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: dict[str, Any], **keywords: Any) -> dict[str, Any]:
    """Return the schema of a list of ``items``."""
    return {"type": "array", "items": items, **keywords}


def obj(
    properties: dict[str, Any], required: Sequence[str] | None = None, *, closed: bool = False
) -> dict[str, Any]:
    """Return an object schema; every property is required unless ``required`` says otherwise.

    :param closed: refuse other properties (request bodies).
    """
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    schema["required"] = list(properties if required is None else required)
    if closed:
        schema["additionalProperties"] = False
    return schema


def document(kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    """Return the schema of a document of FAIRNESS.md: its ``type``, version 1, and ``fields``."""
    return obj({"type": {"const": kind}, "v": {"const": 1}, **fields})


def signed(content: dict[str, Any], **more: dict[str, Any]) -> dict[str, Any]:
    """Return the schema of a signed ``content``: ``{"document", "signature"}`` and ``more``."""
    return obj({"document": content, "signature": SIGNATURE, **more})


def round_of(
    game: str, statuses: list[str], promised: dict[str, Any], more: dict[str, Any]
) -> dict[str, Any]:
    """Return the schema of a round of ``game``: what API.md promises is required.

    :param promised: the game's own promised fields; those of every round are added.
    :param more: fields the answer also carries.
    """
    required = {
        "id": ID,
        "status": {"enum": statuses},
        **promised,
        "net": nullable(MONEY),
        "payout": nullable(AMOUNT),
        "seed_pair_id": ID,
        "nonce": COUNT,
        "balances": ref("Balances"),
    }
    every = {"game": {"const": game}, "created_at": TIME, "settled_at": nullable(TIME)}
    return obj(required | every | more, list(required))


SCHEMAS: Final[dict[str, Any]] = {
    "Error": obj(
        {"error": obj({"code": {**TEXT, "examples": ["insufficient_funds"]}, "message": TEXT})}
    ),
    "User": obj(USER_FIELDS),
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
    "Token": obj({"token": {"type": "string", "minLength": 20}, "expires_at": TIME}),
    "SIGNED": signed({"type": "object", "description": "a signed document of FAIRNESS.md"}),
    "PublicKey": obj(
        {
            "algorithm": {"const": "Ed25519"},
            "public_key_hex": HEX64,
            "public_key_pem": TEXT,
            "retired": array(
                obj(
                    {"public_key_hex": HEX64, "created_at": TIME, "retired_at": TIME},
                    ["public_key_hex"],
                )
            ),
        }
    ),
    "SeedPair": obj(
        {
            "seed_pair_id": ID,
            "commitment": HEX64,
            "client_seed": {"type": "string", "minLength": 1, "maxLength": 64},
            "next_nonce": COUNT,
            "commitment_document": document(
                "commitment",
                {
                    "seed_pair_id": ID,
                    "user_id": ID,
                    "commitment": HEX64,
                    "created_at": TIME,
                },
            ),
            "signature": SIGNATURE,
            "next_commitment": HEX64,
            "next_seed_pair_id": ID,
        },
        [
            "seed_pair_id",
            "commitment",
            "client_seed",
            "next_nonce",
            "commitment_document",
            "signature",
            "next_commitment",
        ],
    ),
    "Rotation": obj({"revealed": ref("SIGNED"), "active": ref("SeedPair")}),
    "Bundle": obj(
        {
            "public_key_hex": HEX64,
            "commitment": ref("SIGNED"),
            "reveal": nullable(ref("SIGNED")),
            "rounds": array(ref("SIGNED")),
        }
    ),
    "Round": round_of(
        "casino_war",
        ["awaiting_decision", "settled"],
        {
            "bet": AMOUNT,
            "tie_bet": AMOUNT,
            "raise": AMOUNT,
            "player_card": CARD,
            "dealer_card": CARD,
            "war": nullable(obj({"burned": array(CARD), "player_card": CARD, "dealer_card": CARD})),
            "outcome": nullable(WAR_OUTCOME),
        },
        {"tie_bet_won": nullable(FLAG), "rules": {"type": "object"}},
    ),
    "Trick": obj(
        {
            "laid": array(
                array(CARD), description="per seat, every card it laid in the trick, in order"
            ),
            "wars": COUNT,
            "winner": nullable({**COUNT, "maximum": 3}),
            "counts": array(COUNT),
            "steps": array(
                array(COUNT),
                description="per step (first flip, then each war), cards laid per seat",
            ),
        },
        ["laid", "wars", "winner", "counts"],
    ),
    "PendingMove": nullable(
        obj(
            {
                "seat": {"type": "integer"},
                "count": ID,
                "options": array(CARD),
                "table": array({"type": "array"}),
            },
            ["count", "options"],
        )
    ),
    "Game": round_of(
        "sota",
        ["awaiting_move", "settled"],
        {
            "stake": {**ID, "description": "whole sweets"},
            "rules": ref("SotaRules"),
            "seats": {"enum": [2, 3, 4]},
            "winner": nullable(SOTA_WINNER),
            "tricks": array(ref("Trick")),
        },
        {"pending": ref("PendingMove"), "ended_by": nullable(TEXT)},
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
            "lead": nullable(ID),
            "peace": FLAG,
            "auto_war_twos": FLAG,
            "underdog": FLAG,
            "prisoners_of_war": FLAG,
            "teams": FLAG,
        },
        [],
        closed=True,
    ),
    "RoundSummary": obj(
        {
            "id": ID,
            "game": GAME,
            "status": {"enum": ["awaiting_decision", "awaiting_move", "settled"]},
            "currency": CURRENCY,
            "staked": AMOUNT,
            "payout": nullable(AMOUNT),
            "net": nullable(MONEY),
            "outcome": nullable({"anyOf": [WAR_OUTCOME, SOTA_WINNER]}),
            "seed_pair_id": ID,
            "nonce": COUNT,
            "created_at": TIME,
        }
    ),
    "RoundList": obj({"rounds": array(ref("RoundSummary")), "next_before": nullable(ID)}),
    "Receipt": signed(
        document(
            "round",
            {
                "round_id": ID,
                "game": GAME,
                "seed_pair_id": ID,
                "commitment": HEX64,
                "client_seed": TEXT,
                "nonce": COUNT,
                "rules": {"type": "object"},
                "actions": {"type": "array"},
                "cards": array(CARD),
                "outcome": {"type": "object"},
                "stakes": {"type": "object", "additionalProperties": AMOUNT},
                "payout": AMOUNT,
                "settled_at": TIME,
            },
        )
    ),
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
    "GameStats": obj(
        {
            "currency": CURRENCY,
            "rounds": {**COUNT, "description": "settled rounds (Sota: games)"},
            "open_rounds": {**COUNT, "description": "rounds waiting for a decision or move"},
            "handle": {**AMOUNT, "description": "everything staked, in the game's minor units"},
            "net": {**MONEY, "description": "the player's net result"},
            "antes": {**AMOUNT, "description": "antes (Sota: stakes): the base of the edge"},
            "realized_edge": nullable(ref("Figure")),
            "expected_edge": nullable(ref("Figure")),
        }
    ),
    "WarStats": {
        "allOf": [
            ref("GameStats"),
            obj(
                {
                    "main_net": {**MONEY, "description": "the net result without the tie bet"},
                    "tie_bets": AMOUNT,
                    "tie_net": MONEY,
                    "outcomes": obj({outcome: COUNT for outcome in WAR_OUTCOME["enum"]}),
                    "wars": COUNT,
                    "surrenders": COUNT,
                    "interval": nullable(
                        obj(
                            {
                                "confidence": {"const": 0.95},
                                "low": {"type": "number"},
                                "high": {"type": "number"},
                                "inside": FLAG,
                            }
                        )
                    ),
                    "realized_tie_edge": nullable(ref("Figure")),
                    "expected_tie_edge": nullable(ref("Figure")),
                    "settings": array(
                        obj(
                            {
                                "decks": {"type": "integer", "minimum": 1, "maximum": 8},
                                "bonus": {"enum": ["none", "ante"]},
                                "tie_payout": {"type": "integer", "minimum": 0, "maximum": 30},
                                "rounds": COUNT,
                                "antes": AMOUNT,
                                "ties": COUNT,
                                "war_share": ref("Figure"),
                                "house_edge_war": ref("Figure"),
                                "house_edge_surrender": ref("Figure"),
                                "expected_edge": ref("Figure"),
                                "tie_bet_edge": nullable(ref("Figure")),
                            }
                        )
                    ),
                }
            ),
        ],
        "description": (
            "expected_edge plays each tie as the player did (the share of ties taken to war, "
            "per table setting); interval is where the realized edge falls 95 times in 100"
        ),
    },
    "SotaStats": {
        "allOf": [
            ref("GameStats"),
            obj(
                {
                    "by_seats": array(
                        obj(
                            {
                                "seats": {"enum": [2, 3, 4]},
                                "teams": FLAG,
                                "games": COUNT,
                                "wins": COUNT,
                                "draws": COUNT,
                                "losses": COUNT,
                                "net": MONEY,
                            }
                        )
                    )
                }
            ),
        ]
    },
    "PlayerStats": obj(
        {
            "casino_war": ref("WarStats"),
            "sota": ref("SotaStats"),
            "days": array(
                obj(
                    {
                        "day": {"type": "string", "format": "date"},
                        "game": GAME,
                        "currency": CURRENCY,
                        "rounds": ID,
                        "handle": AMOUNT,
                        "net": MONEY,
                    }
                ),
                description="per UTC day a round settled, and game",
            ),
            "balance_history": obj(
                {
                    currency: array(obj({"time": TIME, "balance": AMOUNT}), maxItems=240)
                    for currency in CURRENCY["enum"]
                },
                # the balance after each money move, thinned evenly to at most 240 points
            ),
        }
    ),
    "OpenAPIDocument": obj(
        {"openapi": {"const": "3.1.0"}, "info": {"type": "object"}, "paths": {"type": "object"}}
    ),
    # request bodies: unknown fields are refused
    "Credentials": obj({"username": TEXT, "password": TEXT}, closed=True),
    "TopupRequest": obj({"currency": CURRENCY}, closed=True),
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
            "tie_bet": {**COUNT, "multipleOf": 100},
            "table": {"const": "casino_war"},
        },
        ["bet"],
        closed=True,
    ),
    "DecisionRequest": obj({"choice": {"enum": ["war", "surrender"]}}, closed=True),
    "GameRequest": {
        **obj(
            {
                "stake": {**ID, "description": "whole sweets"},
                "rules": ref("SotaRules"),
                "preset": SOTA_PRESET,
            },
            ["stake"],
            closed=True,
        ),
        "not": {"required": ["rules", "preset"]},
    },
    "MoveRequest": obj(
        {
            "cards": array(
                CARD,
                minItems=1,
                description="won cards to lay: face-down ones first, the face-up card last",
            )
        },
        closed=True,
    ),
}

ERROR_RESPONSES: Final = {
    "400": ("bad_request", "The body is not JSON, or a form lacks its CSRF token."),
    "401": ("unauthorized", "No credentials, or they are wrong or expired."),
    "403": ("forbidden", "Not allowed (a locked account, or not an operator)."),
    "404": ("not_found", "No such thing, or it is not yours."),
    "409": ("conflict", "The state does not allow it (settled round, open round, top-up)."),
    "422": ("invalid_input", "Invalid input: names the field and what is expected."),
    "429": ("rate_limited", "Too many attempts."),
}


def operation(
    operation_id: str,
    summary: str,
    tag: str,
    ok: tuple[str, str, str | dict[str, Any]],
    *,
    errors: Sequence[str] = ("400", "401", "422"),
    body: str | None = None,
    auth: bool = True,
    idempotent: bool = False,
    parameters: Sequence[dict[str, Any]] = (),
    media: str = JSON,
) -> dict[str, Any]:
    """Return one OpenAPI operation object.

    :param ok: (status, description, schema name or schema) of the success answer.
    :param errors: the refusals it may answer, from :data:`ERROR_RESPONSES`.
    :param body: the schema name of its JSON request body.
    :param idempotent: it moves money, so it takes an ``Idempotency-Key``.
    :param media: the success answer's media type.
    """
    status, description, schema = ok
    answer = {
        "description": description,
        "content": {media: {"schema": ref(schema) if isinstance(schema, str) else schema}},
    }
    refusals = {code: {"$ref": f"#/components/responses/E{code}"} for code in errors}
    op: dict[str, Any] = {
        "operationId": operation_id,
        "summary": summary,
        "tags": [tag],
        "responses": {status: answer, **refusals},
    }
    if body:
        op["requestBody"] = {"required": True, "content": {JSON: {"schema": ref(body)}}}
    params = list(parameters)
    if idempotent:
        params.append({"$ref": "#/components/parameters/IdempotencyKey"})
    if params:
        op["parameters"] = params
    op["security"] = [{"bearer": []}, {"cookie": [], "csrf": []}] if auth else []
    return op


def read_one(
    operation_id: str, summary: str, tag: str, ok: tuple[str, str, str], parameter: dict[str, Any]
) -> dict[str, Any]:
    """Return a GET of one thing named by the path ``parameter`` (404 if there is none)."""
    return operation(
        operation_id, summary, tag, ok, errors=DENIED_OR_MISSING, parameters=[parameter]
    )


def money_move(
    operation_id: str,
    summary: str,
    tag: str,
    ok: tuple[str, str, str],
    body: str,
    *,
    parameters: Sequence[dict[str, Any]] = (),
    errors: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Return a POST that moves money: it takes an ``Idempotency-Key``.

    :param errors: by default, those of a change (of the thing in the path, if there is one).
    """
    if errors is None:
        errors = CHANGE_OF_ONE if parameters else CHANGE
    return operation(
        operation_id,
        summary,
        tag,
        ok,
        errors=errors,
        body=body,
        idempotent=True,
        parameters=parameters,
    )


def path_id(name: str, description: str) -> dict[str, Any]:
    """Return a path parameter holding a database id."""
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": {**ID, "maximum": 2**63 - 1},
    }


def query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    """Return an optional query parameter."""
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema,
    }


ROUND_ID: Final = path_id("id", "round id")

PATHS: Final[dict[str, Any]] = {
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
            "me", "Who am I, and my balances", "accounts", ("200", "you", "Me"), errors=DENIED
        )
    },
    "/me/topup": {
        "post": money_move(
            "topup",
            "Top up a low balance (at most once a day)",
            "accounts",
            ("201", "the new balances", "TopupResult"),
            "TopupRequest",
        )
    },
    "/me/stats": {
        "get": operation(
            "myStats",
            "Your statistics: results per game and per day against the exact odds",
            "accounts",
            ("200", "your statistics over your settled rounds", "PlayerStats"),
            errors=DENIED,
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
            errors=DENIED,
        )
    },
    "/fairness/rotate": {
        "post": operation(
            "rotate",
            "Reveal the active server seed and activate the next pair",
            "fairness",
            ("200", "the signed reveal and the new active pair", "Rotation"),
            errors=CHANGE,
            body="RotateRequest",
        )
    },
    "/fairness/seed-pairs/{id}/bundle": {
        "get": read_one(
            "bundle",
            "The verifier's input for one seed pair",
            "fairness",
            ("200", "the bundle", "Bundle"),
            path_id("id", "seed pair id"),
        )
    },
    "/casino-war/rounds": {
        "post": money_move(
            "placeBet",
            "Bet and deal a Casino War round",
            "casino war",
            ("201", "the round", "Round"),
            "BetRequest",
        )
    },
    "/casino-war/rounds/{id}/decision": {
        "post": money_move(
            "decide",
            "Go to war or surrender on a tie",
            "casino war",
            ("200", "the settled round", "Round"),
            "DecisionRequest",
            parameters=[ROUND_ID],
        )
    },
    "/casino-war/rounds/{id}": {
        "get": read_one(
            "getRound",
            "One of your Casino War rounds",
            "casino war",
            ("200", "the round", "Round"),
            ROUND_ID,
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
                query("decks", {"type": "integer", "minimum": 1, "maximum": 8}, "decks"),
                query(
                    "tie_payout",
                    {"type": "integer", "minimum": 0, "maximum": 30},
                    "tie bet pays this many to 1",
                ),
                query("bonus", {"enum": ["none", "ante"]}, "war tie bonus"),
            ],
        )
    },
    "/sota/games": {
        "post": money_move(
            "playSota",
            "Stake sweets on a whole game of Sota (rules or a preset)",
            "sota",
            ("201", "the game", "Game"),
            "GameRequest",
        )
    },
    "/sota/games/{id}/moves": {
        "post": money_move(
            "sotaMove",
            "Lay prisoners (Prisoners of War only)",
            "sota",
            ("200", "the game", "Game"),
            "MoveRequest",
            parameters=[ROUND_ID],
        )
    },
    "/sota/games/{id}": {
        "get": read_one(
            "getGame", "One of your Sota games", "sota", ("200", "the game", "Game"), ROUND_ID
        )
    },
    "/rounds": {
        "get": operation(
            "listRounds",
            "Your rounds, newest first",
            "history",
            ("200", "a page of rounds", "RoundList"),
            errors=(*DENIED, "422"),
            parameters=[
                query("game", GAME, "only this game"),
                query("before", ID, "rounds before this id"),
                query("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "1-100"),
            ],
        )
    },
    "/rounds/{id}/receipt": {
        "get": read_one(
            "receipt",
            "The signed receipt of a settled round",
            "history",
            ("200", "the receipt", "Receipt"),
            ROUND_ID,
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


def openapi_document() -> dict[str, Any]:
    """Return the OpenAPI 3.1 document of the API, the operator's endpoints included."""
    from . import operator_openapi  # it builds on this module's helpers

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
        "paths": copy.deepcopy(PATHS | operator_openapi.PATHS),
        "components": {
            "schemas": copy.deepcopy(SCHEMAS | operator_openapi.SCHEMAS),
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
