"""The operator endpoints' part of the OpenAPI document (merged in by :mod:`.openapi`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from typing import Final

from .openapi import CHANGE_OF_ONE
from .openapi import COUNT
from .openapi import CURRENCY
from .openapi import DENIED
from .openapi import FLAG
from .openapi import GAME
from .openapi import HEX64
from .openapi import ID
from .openapi import MONEY
from .openapi import TEXT
from .openapi import TIME
from .openapi import USER_FIELDS
from .openapi import array
from .openapi import document
from .openapi import money_move
from .openapi import nullable
from .openapi import obj
from .openapi import operation
from .openapi import path_id
from .openapi import query
from .openapi import read_one
from .openapi import ref
from .openapi import signed

TAG: Final = "operator"
NUMBER: Final = {"type": "number"}
#: A read that takes query parameters may also refuse them.
QUERY_ERRORS: Final = (*DENIED, "422")
FIGURE: Final = nullable(ref("Figure"))
OPEN: Final = {"type": "object"}  # settings and rules: their own documents describe them
ACCOUNT_FIELDS: Final = USER_FIELDS | {"locked": FLAG}
#: Totals of settled rounds, per game and per day.
TALLY: Final = {
    "rounds": COUNT,
    "handle": MONEY,
    "house_result": MONEY,
    "antes": MONEY,
    "main_result": MONEY,
    "tie_bets": MONEY,
    "tie_result": MONEY,
    "realized_edge": FIGURE,
    "realized_tie_edge": FIGURE,
    "currency": CURRENCY,
}

#: A standing check's stored verdict (the background runner keeps it up to date).
VERDICT: Final = {
    "name": {"enum": ["audit", "ledger"]},
    "ok": {**nullable(FLAG), "description": "null until the first check ends"},
    "size": {**COUNT, "description": "entries (audit) or the last posting id (ledger) checked"},
    "reason": nullable(TEXT),
    "findings": nullable(OPEN),
    "checked_at": nullable(TIME),
    "age_seconds": nullable({"type": "number", "minimum": 0}),
    "whole_at": {**nullable(TIME), "description": "when a whole check last ended"},
    "running": FLAG,
    "requested": {**FLAG, "description": "a whole check was asked for and has not started"},
    "requested_by": nullable(TEXT),
    "progress": {**nullable(COUNT), "description": "while a whole check runs: entries read"},
    "progress_total": nullable(COUNT),
}

SCHEMAS: Final[dict[str, Any]] = {
    "AuditEntry": obj(
        {
            "seq": ID,
            "time": TIME,
            "actor": nullable(TEXT),
            "action": TEXT,
            "subject": nullable(TEXT),
            "data": OPEN,
            "prev_hash": HEX64,
            "hash": HEX64,
        }
    ),
    "AuditPage": obj(
        {
            "entries": array(ref("AuditEntry")),
            "order": {"enum": ["newest", "oldest"]},
            "next_after_seq": nullable(ID),
            "next_before_seq": nullable(ID),
        }
    ),
    "AuditVerification": obj(
        VERDICT | {"first_bad_seq": nullable(ID), "checkpoint": nullable(ref("Checkpoint"))}
    ),
    "CheckVerdict": obj(VERDICT),
    "HouseMath": obj(
        {
            "since": nullable({"type": "string", "format": "date"}),
            "until": nullable({"type": "string", "format": "date"}),
            "versions": array(ref("MathVersion")),
        }
    ),
    "MathVersion": obj(
        {
            "game": GAME,
            "currency": CURRENCY,
            "rules": OPEN,
            "version": TEXT,
            "rounds": COUNT,
            "first_settled": nullable({"type": "string", "format": "date"}),
            "last_settled": nullable({"type": "string", "format": "date"}),
            "antes": MONEY,
            "main_result": MONEY,
            "realized_edge": nullable(
                obj({"exact": TEXT, "value": NUMBER, "low": NUMBER, "high": NUMBER})
            ),
            "theoretical_edge": {
                **FIGURE,
                "description": "exact, for the rules and the share of tied antes surrendered",
            },
            "always_war_edge": FIGURE,
            "consistent": {**nullable(FLAG), "description": "theoretical inside the interval"},
            "ties": COUNT,
            "surrenders": COUNT,
            "surrendered_ante_share": FIGURE,
            "surrender_rate": nullable(obj({"value": NUMBER, "low": NUMBER, "high": NUMBER})),
            "tie_bets": MONEY,
            "tie_result": MONEY,
            "realized_tie_edge": FIGURE,
            "theoretical_tie_edge": FIGURE,
        }
    ),
    "Checkpoint": signed(
        document("checkpoint", {"size": ID, "root": HEX64, "time": TIME}),
        public_key_hex=HEX64,
    ),
    "CheckpointList": obj(
        {
            "checkpoints": array(ref("Checkpoint")),
            "order": {"enum": ["newest", "oldest"]},
            "next_cursor": {**nullable(ID), "description": "the cursor of the next page"},
        }
    ),
    "CheckpointNote": obj(
        {
            "note": nullable(
                obj(
                    {
                        "origin": TEXT,
                        "key_name": TEXT,
                        "public_key_hex": HEX64,
                        "size": ID,
                        "note": {**TEXT, "description": "C2SP tlog-checkpoint signed note"},
                    }
                )
            )
        }
    ),
    "InclusionProof": obj(
        {
            "seq": ID,
            "leaf_index": COUNT,
            "entry": ref("AuditEntry"),
            "checkpoint": ref("Checkpoint"),
            "proof": array(HEX64),
        }
    ),
    "ConsistencyProof": obj(
        {
            "old_size": ID,
            "new_size": ID,
            "old_root": HEX64,
            "new_root": HEX64,
            "proof": array(HEX64),
        }
    ),
    "LedgerSummary": obj(
        {
            "balances": {
                "type": "object",
                "additionalProperties": obj(
                    {"house": MONEY, "escrow": MONEY, "issuance": MONEY, "players": MONEY}
                ),
            },
            "games": {
                "type": "object",
                "additionalProperties": obj(TALLY | {"open_rounds": COUNT}),
            },
            "days": array(obj(TALLY | {"day": {"type": "string", "format": "date"}, "game": GAME})),
            "theoretical": obj(
                {
                    "casino_war": obj(
                        {"rules": OPEN, "strategy": TEXT, "edge": FIGURE, "tie_edge": FIGURE}
                    ),
                    "sota": {"type": "null", "description": "no closed form"},
                }
            ),
        }
    ),
    "LedgerCheck": obj(
        VERDICT
        | {
            "problems": array(TEXT, description="the first 100"),
            "problem_count": COUNT,
            "transfers": COUNT,
            "accounts": COUNT,
        }
    ),
    "Account": obj(ACCOUNT_FIELDS),
    "UserList": obj({"users": array(ref("Account"))}),
    "SeedPairSummary": obj(
        {
            "seed_pair_id": ID,
            "status": {"enum": ["next", "active", "revealed"]},
            "commitment": HEX64,
            "client_seed": nullable(TEXT),
            "rounds": COUNT,
            "created_at": TIME,
            "revealed_at": nullable(TIME),
            "server_seed": {**nullable(HEX64), "description": "only once revealed"},
            "reveal": nullable(ref("SIGNED")),
        }
    ),
    "PlayerOverview": obj(
        {
            "user": obj(ACCOUNT_FIELDS | {"created_at": TIME}),
            "balances": ref("Balances"),
            "totals": obj(
                {
                    "currencies": OPEN,
                    "adjustments": array(
                        obj(
                            {
                                "actor": nullable(TEXT),
                                "name": nullable(TEXT),
                                "currency": CURRENCY,
                                "count": COUNT,
                                "amount": MONEY,
                            }
                        )
                    ),
                }
            ),
            "next": obj(
                {
                    "rounds_before": nullable(ID),
                    "transfers_before": nullable(ID),
                    "audit_before": nullable(ID),
                }
            ),
            "rounds": array(ref("RoundSummary")),
            "transfers": array(
                obj(
                    {
                        "id": ID,
                        "time": TIME,
                        "kind": {"enum": ["bet", "raise", "settle", "grant", "topup", "adjust"]},
                        "currency": CURRENCY,
                        "amount": MONEY,
                        "round_id": nullable(ID),
                        "memo": nullable(TEXT),
                    }
                )
            ),
            "seed_pairs": array(ref("SeedPairSummary")),
            "audit": array(ref("AuditEntry")),
        }
    ),
    "ManagedUser": obj({"user": ref("Account")}),
    "RoleChange": obj({"role": USER_FIELDS["role"]}, closed=True),
    "LockChange": obj({"locked": FLAG}, closed=True),
    "AdjustmentRequest": obj(
        {
            "user_id": ID,
            "currency": CURRENCY,
            "amount": {
                **MONEY,
                "not": {"const": 0},
                "description": "minor units (hundredths of a chip, or sweets); negative debits",
            },
            "reason": {"type": "string", "minLength": 1, "maxLength": 500},
        },
        closed=True,
    ),
    "AdjustmentResult": obj({"user_id": ID, "balances": ref("Balances")}),
    "TableSettings": obj({"name": GAME, "settings": OPEN}),
    "TableSettingsChange": {
        "type": "object",
        "minProperties": 1,
        "description": (
            "Casino War: decks, min_bet, max_bet, tie_payout, burn, bonus; Sota: min_stake, "
            "max_stake, presets, custom_rules. Merged over the present settings; new rounds "
            "only."
        ),
    },
}

USER_ID: Final = path_id("id", "user id")
CHECK_NAME: Final = {
    "name": "name",
    "in": "path",
    "required": True,
    "description": "which standing check",
    "schema": {"enum": ["audit", "ledger"]},
}
TABLE_NAME: Final = {
    "name": "name",
    "in": "path",
    "required": True,
    "description": "table name",
    "schema": GAME,
}
TIME_FILTER: Final = "ISO 8601 time (UTC if no zone)"
ORDER: Final = query("order", {"enum": ["newest", "oldest"]}, "newest first unless oldest")
AUDIT_QUERY: Final = [
    query("after_seq", COUNT, "oldest first: entries after this sequence number"),
    query("before_seq", COUNT, "newest first: entries before this sequence number"),
    query("from_seq", COUNT, "jump to this entry (included), in the order asked for"),
    ORDER,
    query("limit", {"type": "integer", "minimum": 1, "maximum": 500}, "1-500, default 50"),
    query("action", TEXT, "action prefix, e.g. money."),
    query("actor", TEXT, "e.g. user:7 or system"),
    query("subject", TEXT, "e.g. user:7, round:12, table:casino_war"),
    query("since", TEXT, TIME_FILTER),
    query("until", TEXT, TIME_FILTER),
    query("text", TEXT, "free text in the action, actor, subject or data"),
]


def _read(
    operation_id: str,
    summary: str,
    schema: str,
    *,
    errors: Sequence[str] = DENIED,
    parameters: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """Return a GET that staff may use, auditors included."""
    ok = ("200", summary.lower(), schema)
    return operation(operation_id, summary, TAG, ok, errors=errors, parameters=parameters)


def _change(
    operation_id: str, summary: str, ok: tuple[str, str, str], body: str, parameter: dict[str, Any]
) -> dict[str, Any]:
    """Return a change (by an operator, audited) of the thing named by the path ``parameter``."""
    return operation(
        operation_id, summary, TAG, ok, errors=CHANGE_OF_ONE, body=body, parameters=[parameter]
    )


PATHS: Final[dict[str, Any]] = {
    "/operator/audit": {
        "get": _read(
            "auditEntries",
            "A page of audit entries",
            "AuditPage",
            errors=QUERY_ERRORS,
            parameters=AUDIT_QUERY,
        )
    },
    "/operator/audit/verify": {
        "get": _read(
            "auditVerify", "The stored verdict of the whole audit check", "AuditVerification"
        )
    },
    "/operator/audit/checkpoints": {
        "get": _read(
            "auditCheckpoints",
            "A page of signed checkpoints",
            "CheckpointList",
            errors=QUERY_ERRORS,
            parameters=[
                ORDER,
                query("cursor", COUNT, "continue after this size (from next_cursor)"),
                query("limit", {"type": "integer", "minimum": 1, "maximum": 500}, "default 50"),
            ],
        ),
        "post": operation(
            "auditCheckpointNow",
            "Sign a checkpoint over the whole log now (operator)",
            TAG,
            ("201", "the new checkpoint", "Checkpoint"),
            errors=(*DENIED, "409"),
        ),
    },
    "/operator/audit/checkpoint-note": {
        "get": _read(
            "auditCheckpointNote", "The latest checkpoint as a C2SP signed note", "CheckpointNote"
        )
    },
    "/operator/audit/proof/{seq}": {
        "get": read_one(
            "auditProof",
            "Inclusion proof of one entry in the latest checkpoint",
            TAG,
            ("200", "inclusion proof of the entry in the latest checkpoint", "InclusionProof"),
            path_id("seq", "entry sequence number"),
        )
    },
    "/operator/audit/consistency": {
        "get": _read(
            "auditConsistency",
            "Consistency proof between two log sizes",
            "ConsistencyProof",
            errors=QUERY_ERRORS,
            parameters=[
                query("old_size", ID, "the older size"),
                query("new_size", ID, "the newer size"),
            ],
        )
    },
    "/operator/audit/export": {
        "get": operation(
            "auditExport",
            "The whole log as JSON Lines, then the checkpoints",
            TAG,
            ("200", "one JSON object per line: every entry, then every signed checkpoint", TEXT),
            errors=DENIED,
            media="application/jsonl",
        )
    },
    "/operator/ledger/summary": {
        "get": _read("ledgerSummary", "Balances, house results and edges", "LedgerSummary")
    },
    "/operator/ledger/check": {
        "get": _read("ledgerCheck", "The stored verdict of the ledger check", "LedgerCheck")
    },
    "/operator/ledger/math": {
        "get": _read(
            "ledgerMath",
            "The house result against the math, per table version played",
            "HouseMath",
            errors=QUERY_ERRORS,
            parameters=[
                query("since", {"type": "string", "format": "date"}, "first UTC settlement day"),
                query("until", {"type": "string", "format": "date"}, "last UTC settlement day"),
            ],
        )
    },
    "/operator/checks/{name}": {
        "get": _read(
            "checkVerdict",
            "A standing check's stored verdict and progress",
            "CheckVerdict",
            errors=QUERY_ERRORS,
            parameters=[CHECK_NAME],
        ),
        "post": operation(
            "requestWholeCheck",
            "Ask for a whole check in the background (operator; audited)",
            TAG,
            ("202", "the verdict as it stands", "CheckVerdict"),
            errors=(*DENIED, "422"),
            parameters=[CHECK_NAME],
        ),
    },
    "/operator/players": {
        "get": _read(
            "findPlayers",
            "Users whose name contains q",
            "UserList",
            errors=QUERY_ERRORS,
            parameters=[query("q", {"type": "string", "maxLength": 64}, "part of a name")],
        )
    },
    "/operator/players/{id}": {
        "get": read_one(
            "playerOverview",
            "One user's balances, rounds, money moves, seed pairs and audit entries",
            TAG,
            ("200", "the user's balances, rounds, money moves and more", "PlayerOverview"),
            USER_ID,
        )
    },
    "/operator/players/{id}/role": {
        "put": _change(
            "setRole",
            "Make a user player, auditor or operator (audited)",
            ("200", "the user", "ManagedUser"),
            "RoleChange",
            USER_ID,
        )
    },
    "/operator/players/{id}/locked": {
        "put": _change(
            "setLocked",
            "Lock or unlock an account (audited)",
            ("200", "the user", "ManagedUser"),
            "LockChange",
            USER_ID,
        )
    },
    "/operator/adjustments": {
        "post": money_move(
            "adjust",
            "Credit or debit a player, with a reason (audited)",
            TAG,
            ("201", "the new balances", "AdjustmentResult"),
            "AdjustmentRequest",
            errors=CHANGE_OF_ONE,
        )
    },
    "/operator/tables/{name}": {
        "get": read_one(
            "tableSettings",
            "A table's settings",
            TAG,
            ("200", "the settings", "TableSettings"),
            TABLE_NAME,
        ),
        "put": _change(
            "updateTable",
            "Change a table's settings (audited; new rounds only)",
            ("200", "the new settings", "TableSettings"),
            "TableSettingsChange",
            TABLE_NAME,
        ),
    },
}
