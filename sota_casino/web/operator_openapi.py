"""The operator endpoints' part of the OpenAPI document (merged in by :mod:`.openapi`)."""

from __future__ import annotations

from typing import Any
from typing import Final

from .openapi import EXTRA_PATHS
from .openapi import EXTRA_SCHEMAS
from .openapi import ID
from .openapi import TIME
from .openapi import _path_id
from .openapi import _query
from .openapi import nullable
from .openapi import obj
from .openapi import operation
from .openapi import ref

TAG: Final = "operator"
READ_ERRORS: Final = ("401", "403", "422")
HASH: Final = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
SIGNATURE: Final = {"type": "string", "pattern": "^[0-9a-f]{128}$"}
MONEY: Final = {"type": "integer"}
FIGURE: Final = nullable(obj({"exact": {"type": "string"}, "value": {"type": "number"}}))
OPEN: Final = {"type": "object"}  # settings and rules: their own documents describe them

ENTRY = obj(
    {
        "seq": ID,
        "time": TIME,
        "actor": nullable({"type": "string"}),
        "action": {"type": "string"},
        "subject": nullable({"type": "string"}),
        "data": {"type": "object"},
        "prev_hash": HASH,
        "hash": HASH,
    }
)
CHECKPOINT = obj(
    {
        "document": obj(
            {
                "type": {"const": "checkpoint"},
                "v": {"const": 1},
                "size": ID,
                "root": HASH,
                "time": TIME,
            },
            ["size", "root", "time"],
        ),
        "signature": SIGNATURE,
        "public_key_hex": {"type": "string"},
    }
)
TALLY = {
    "rounds": {"type": "integer"},
    "handle": MONEY,
    "house_result": MONEY,
    "antes": MONEY,
    "main_result": MONEY,
    "tie_bets": MONEY,
    "tie_result": MONEY,
    "realized_edge": FIGURE,
    "realized_tie_edge": FIGURE,
    "currency": {"enum": ["chips", "sweets"]},
}
MANAGED_USER = obj(
    {
        "user": obj(
            {
                "id": ID,
                "username": {"type": "string"},
                "role": {"enum": ["player", "operator", "auditor"]},
                "locked": {"type": "boolean"},
            }
        )
    }
)

EXTRA_SCHEMAS.update(
    {
        "AuditEntry": ENTRY,
        "AuditPage": obj(
            {
                "entries": {"type": "array", "items": ref("AuditEntry")},
                "next_after_seq": nullable(ID),
            }
        ),
        "AuditVerification": obj(
            {
                "ok": {"type": "boolean"},
                "size": {"type": "integer", "minimum": 0},
                "first_bad_seq": nullable(ID),
                "reason": nullable({"type": "string"}),
                "checkpoint": nullable(ref("Checkpoint")),
            }
        ),
        "Checkpoint": CHECKPOINT,
        "CheckpointList": obj({"checkpoints": {"type": "array", "items": ref("Checkpoint")}}),
        "CheckpointNote": obj(
            {
                "note": nullable(
                    obj(
                        {
                            "origin": {"type": "string"},
                            "key_name": {"type": "string"},
                            "public_key_hex": {"type": "string"},
                            "size": ID,
                            "note": {
                                "type": "string",
                                "description": "C2SP tlog-checkpoint signed note",
                            },
                        }
                    )
                )
            }
        ),
        "InclusionProof": obj(
            {
                "seq": ID,
                "leaf_index": {"type": "integer", "minimum": 0},
                "entry": ref("AuditEntry"),
                "checkpoint": ref("Checkpoint"),
                "proof": {"type": "array", "items": HASH},
            }
        ),
        "ConsistencyProof": obj(
            {
                "old_size": ID,
                "new_size": ID,
                "old_root": HASH,
                "new_root": HASH,
                "proof": {"type": "array", "items": HASH},
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
                    "additionalProperties": obj(
                        TALLY | {"open_rounds": {"type": "integer", "minimum": 0}}
                    ),
                },
                "days": {
                    "type": "array",
                    "items": obj(
                        TALLY
                        | {
                            "day": {"type": "string", "format": "date"},
                            "game": {"enum": ["casino_war", "sota"]},
                        }
                    ),
                },
                "theoretical": obj(
                    {
                        "casino_war": obj(
                            {
                                "rules": OPEN,
                                "strategy": {"type": "string"},
                                "edge": FIGURE,
                                "tie_edge": FIGURE,
                            }
                        ),
                        "sota": {"type": "null", "description": "no closed form"},
                    }
                ),
            }
        ),
        "LedgerCheck": obj(
            {
                "ok": {"type": "boolean"},
                "problems": {"type": "array", "items": {"type": "string"}},
                "transfers": {"type": "integer"},
                "accounts": {"type": "integer"},
            }
        ),
        "UserList": obj({"users": {"type": "array", "items": {"type": "object"}}}),
        "PlayerOverview": obj(
            {
                "user": {"type": "object"},
                "balances": obj({"chips": MONEY, "sweets": MONEY}),
                "rounds": {"type": "array", "items": {"type": "object"}},
                "transfers": {
                    "type": "array",
                    "items": obj(
                        {
                            "id": ID,
                            "time": TIME,
                            "kind": {
                                "enum": ["bet", "raise", "settle", "grant", "topup", "adjust"]
                            },
                            "currency": {"enum": ["chips", "sweets"]},
                            "amount": MONEY,
                            "round_id": nullable(ID),
                            "memo": nullable({"type": "string"}),
                        }
                    ),
                },
                "seed_pairs": {"type": "array", "items": {"type": "object"}},
                "audit": {"type": "array", "items": ref("AuditEntry")},
            }
        ),
        "ManagedUser": MANAGED_USER,
        "RoleChange": obj({"role": {"enum": ["player", "operator", "auditor"]}}, closed=True),
        "LockChange": obj({"locked": {"type": "boolean"}}, closed=True),
        "AdjustmentRequest": obj(
            {
                "user_id": ID,
                "currency": {"enum": ["chips", "sweets"]},
                "amount": {
                    "type": "integer",
                    "not": {"const": 0},
                    "description": "minor units (hundredths of a chip, or sweets); negative debits",
                },
                "reason": {"type": "string", "minLength": 1, "maxLength": 500},
            },
            closed=True,
        ),
        "AdjustmentResult": obj(
            {"user_id": ID, "balances": obj({"chips": MONEY, "sweets": MONEY})}
        ),
        "TableSettings": obj({"name": {"enum": ["casino_war", "sota"]}, "settings": OPEN}),
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
)

USER_ID = _path_id("id", "user id")
TABLE_NAME = {
    "name": "name",
    "in": "path",
    "required": True,
    "description": "table name",
    "schema": {"enum": ["casino_war", "sota"]},
}
AUDIT_QUERY = [
    _query("after_seq", {"type": "integer", "minimum": 0}, "entries after this sequence number"),
    _query("limit", {"type": "integer", "minimum": 1, "maximum": 500}, "1-500, default 50"),
    _query("action", {"type": "string"}, "action prefix, e.g. money."),
    _query("actor", {"type": "string"}, "e.g. user:7 or system"),
    _query("subject", {"type": "string"}, "e.g. user:7, round:12, table:casino_war"),
    _query("since", {"type": "string"}, "ISO 8601 time (UTC if no zone)"),
    _query("until", {"type": "string"}, "ISO 8601 time (UTC if no zone)"),
    _query("text", {"type": "string"}, "free text in the action, actor, subject or data"),
]


def _read(op_id: str, summary: str, schema: str, **kw: Any) -> dict[str, Any]:
    errors = kw.pop("errors", READ_ERRORS)
    return operation(op_id, summary, TAG, ("200", summary.lower(), schema), errors=errors, **kw)


def _export() -> dict[str, Any]:
    op = _read("auditExport", "The whole log as JSON Lines, then the checkpoints", "AuditPage")
    op["responses"]["200"] = {
        "description": "one JSON object per line: every entry, then every signed checkpoint",
        "content": {"application/jsonl": {"schema": {"type": "string"}}},
    }
    return op


EXTRA_PATHS.update(
    {
        "/operator/audit": {
            "get": _read(
                "auditEntries", "A page of audit entries", "AuditPage", parameters=AUDIT_QUERY
            )
        },
        "/operator/audit/verify": {
            "get": _read("auditVerify", "The chain's verification", "AuditVerification")
        },
        "/operator/audit/checkpoints": {
            "get": _read("auditCheckpoints", "Every signed checkpoint", "CheckpointList"),
            "post": operation(
                "auditCheckpointNow",
                "Sign a checkpoint over the whole log now (operator)",
                TAG,
                ("201", "the new checkpoint", "Checkpoint"),
                errors=("401", "403", "409"),
            ),
        },
        "/operator/audit/checkpoint-note": {
            "get": _read(
                "auditCheckpointNote",
                "The latest checkpoint as a C2SP signed note",
                "CheckpointNote",
            )
        },
        "/operator/audit/proof/{seq}": {
            "get": _read(
                "auditProof",
                "Inclusion proof of one entry in the latest checkpoint",
                "InclusionProof",
                errors=("401", "403", "404"),
                parameters=[_path_id("seq", "entry sequence number")],
            )
        },
        "/operator/audit/consistency": {
            "get": _read(
                "auditConsistency",
                "Consistency proof between two log sizes",
                "ConsistencyProof",
                parameters=[
                    _query("old_size", {"type": "integer", "minimum": 1}, "the older size"),
                    _query("new_size", {"type": "integer", "minimum": 1}, "the newer size"),
                ],
            )
        },
        "/operator/audit/export": {"get": _export()},
        "/operator/ledger/summary": {
            "get": _read("ledgerSummary", "Balances, house results and edges", "LedgerSummary")
        },
        "/operator/ledger/check": {"get": _read("ledgerCheck", "The ledger check", "LedgerCheck")},
        "/operator/players": {
            "get": _read(
                "findPlayers",
                "Users whose name contains q",
                "UserList",
                parameters=[_query("q", {"type": "string", "maxLength": 64}, "part of a name")],
            )
        },
        "/operator/players/{id}": {
            "get": _read(
                "playerOverview",
                "One user's balances, rounds, money moves, seed pairs and audit entries",
                "PlayerOverview",
                errors=("401", "403", "404"),
                parameters=[USER_ID],
            )
        },
        "/operator/players/{id}/role": {
            "put": operation(
                "setRole",
                "Make a user player, auditor or operator (audited)",
                TAG,
                ("200", "the user", "ManagedUser"),
                errors=("400", "401", "403", "404", "409", "422"),
                body="RoleChange",
                parameters=[USER_ID],
            )
        },
        "/operator/players/{id}/locked": {
            "put": operation(
                "setLocked",
                "Lock or unlock an account (audited)",
                TAG,
                ("200", "the user", "ManagedUser"),
                errors=("400", "401", "403", "404", "409", "422"),
                body="LockChange",
                parameters=[USER_ID],
            )
        },
        "/operator/adjustments": {
            "post": operation(
                "adjust",
                "Credit or debit a player, with a reason (audited)",
                TAG,
                ("201", "the new balances", "AdjustmentResult"),
                errors=("400", "401", "403", "404", "409", "422"),
                body="AdjustmentRequest",
                idempotent=True,
            )
        },
        "/operator/tables/{name}": {
            "get": _read(
                "tableSettings",
                "A table's settings",
                "TableSettings",
                errors=("401", "403", "404"),
                parameters=[TABLE_NAME],
            ),
            "put": operation(
                "updateTable",
                "Change a table's settings (audited; new rounds only)",
                TAG,
                ("200", "the new settings", "TableSettings"),
                errors=("400", "401", "403", "404", "422"),
                body="TableSettingsChange",
                parameters=[TABLE_NAME],
            ),
        },
    }
)
