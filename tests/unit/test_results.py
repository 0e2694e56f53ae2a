"""The use cases' results: their JSON is the API's, and reads back as the same value (an
idempotent retry answers what the first call answered)."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import NotRequired
from typing import get_args
from typing import get_origin

from typing_extensions import get_type_hints
from typing_extensions import is_typeddict

from sota_casino.services.lists import LISTS
from sota_casino.services.results import Balances
from sota_casino.services.results import CasinoWarRound
from sota_casino.services.results import PendingMove
from sota_casino.services.results import SotaGame
from sota_casino.services.results import Token
from sota_casino.services.results import War
from sota_casino.services.results import adapter
from sota_casino.services.results import from_json
from sota_casino.services.results import to_json

CREATED = datetime(2026, 12, 1, 8, 31, 13, tzinfo=UTC)  # no microseconds: still six digits
WAR = CasinoWarRound(
    id=7,
    game="casino_war",
    status="settled",
    bet=1_000,
    tie_bet=0,
    raise_=1_000,
    player_card="9H",
    dealer_card="9S",
    war=War(burned=["2C", "3C", "4C"], player_card="KD", dealer_card="5S"),
    outcome="war_win",
    tie_bet_won=None,
    net=1_000,
    payout=3_000,
    rules={"decks": 6, "burn": 3},
    seed_pair_id=1,
    nonce=0,
    created_at=CREATED,
    settled_at=None,
    balances=Balances(chips=101_000, sweets=100),
)
GAME = SotaGame(
    id=8,
    game="sota",
    status="awaiting_move",
    stake=5,
    rules={"seats": 2, "prisoners_of_war": True},
    seats=2,
    winner=None,
    tricks=[
        {"laid": [["AS"], ["AH"]], "wars": 0, "winner": None, "counts": [25, 25], "steps": [[1, 1]]}
    ],
    pending=PendingMove(move=0, seat=0, count=2, options=["KD", "2C"], table=[["AS"], ["AH"]]),
    ended_by=None,
    net=None,
    payout=None,
    seed_pair_id=1,
    nonce=1,
    created_at=CREATED,
    settled_at=None,
    balances=Balances(chips=100_000, sweets=95),
)


def test_a_round_is_written_as_the_api_writes_it() -> None:
    written = to_json(WAR)
    assert written["raise"] == 1_000 and "raise_" not in written
    assert written["created_at"] == "2026-12-01T08:31:13.000000Z"
    assert written["war"] == {
        "burned": ["2C", "3C", "4C"],
        "player_card": "KD",
        "dealer_card": "5S",
    }
    assert written["balances"] == {"chips": 101_000, "sweets": 100}
    assert written["settled_at"] is None and written["tie_bet_won"] is None


def test_what_is_written_reads_back_as_the_same_value() -> None:
    for value in (WAR, GAME, WAR.balances):
        assert from_json(type(value), to_json(value)) == value


def test_a_games_trick_log_is_answered_as_pydantic_would_write_it() -> None:
    """to_json passes a game's trick log through without pydantic's walk: the same JSON."""
    for game in (GAME, replace(GAME, status="settled", winner=0, pending=None, tricks=[])):
        assert to_json(game) == adapter(SotaGame).dump_python(game, mode="json", by_alias=True)


def test_a_tricks_optional_key_is_kept_only_when_the_engine_wrote_it() -> None:
    returned = {**GAME.tricks[0], "returned": [["AS"], []]}
    written = to_json(GAME)
    assert "returned" not in written["tricks"][0]
    assert to_json(adapter(SotaGame).validate_python({**written, "tricks": [returned]}))[
        "tricks"
    ] == [returned]


def test_the_schema_names_every_field_required_under_its_json_name() -> None:
    schema = adapter(CasinoWarRound).json_schema()
    assert set(schema["required"]) == set(to_json(WAR))
    assert schema["properties"]["created_at"]["type"] == "string"


def test_a_tokens_secret_stays_out_of_its_repr() -> None:
    issued = Token("s3cret-" * 4, CREATED)
    assert "s3cret" not in repr(issued) and to_json(issued)["token"] == "s3cret-" * 4


def test_the_operator_exports_have_the_columns_decided_for_them() -> None:
    """The exports' columns are read from their rows' types: a field added to a row must not
    become a column of every download unnoticed (a secret one least of all)."""
    assert {name: spec.columns for name, spec in LISTS.items()} == {
        "users": ("id", "username", "role", "locked", "created_at"),
        "rounds": (
            "id",
            "game",
            "status",
            "currency",
            "staked",
            "payout",
            "net",
            "outcome",
            "seed_pair_id",
            "nonce",
            "created_at",
            "settled_at",
        ),
        "transfers": ("id", "time", "kind", "currency", "amount", "round_id", "memo"),
        "seed_pairs": (
            "seed_pair_id",
            "status",
            "commitment",
            "client_seed",
            "rounds",
            "created_at",
            "revealed_at",
            "server_seed",
        ),
    }


#: The fields with no default of every result type stored as an idempotent answer, and of the
#: types within them, as every answer stored so far holds them. A field added to one of these
#: types must have a default, so that an answer stored before it reads back (a retry of its
#: request answered 500 otherwise); else the operations storing it need a mend that fills it
#: in such an answer (services/idempotency.py), named in MENDED.
STORED_FIELDS: dict[str, list[str]] = {
    "accounts.UserView": ["id", "role", "username"],
    "proposals.ApprovalView": [
        "change",
        "decided_at",
        "decided_by",
        "id",
        "kind",
        "note",
        "proposed_at",
        "proposed_by",
        "status",
        "subject",
    ],
    "proposals.Requested": ["approval", "done"],
    "results.Balances": ["chips", "sweets"],
    "results.CasinoWarRound": [
        "balances",
        "bet",
        "created_at",
        "dealer_card",
        "game",
        "id",
        "net",
        "nonce",
        "outcome",
        "payout",
        "player_card",
        "raise_",
        "rules",
        "seed_pair_id",
        "settled_at",
        "status",
        "tie_bet",
        "tie_bet_won",
        "war",
    ],
    "results.PendingMove": ["count", "options", "seat", "table"],
    "results.Person": ["id", "name"],
    "results.SotaGame": [
        "balances",
        "created_at",
        "ended_by",
        "game",
        "id",
        "net",
        "nonce",
        "payout",
        "pending",
        "rules",
        "seats",
        "seed_pair_id",
        "settled_at",
        "stake",
        "status",
        "tricks",
        "winner",
    ],
    "results.Trick": ["counts", "laid", "steps", "wars", "winner"],
    "results.War": ["burned", "dealer_card", "player_card"],
}

#: Fields added with no default after answers holding their type were stored, each filled by
#: the mend of every operation storing it (tests/integration/test_stored_answers.py).
MENDED = {"results.PendingMove": ["move"]}


def _required_fields(root: Any) -> dict[str, list[str]]:
    """Each dataclass and TypedDict within the type ``root`` (itself too), by its module's
    last name and its name: its fields with no default (a TypedDict's not NotRequired)."""
    found: dict[str, list[str]] = {}
    todo = [root]
    while todo:
        kind = todo.pop()
        origin = get_origin(kind)
        if origin is not None:
            todo.extend(arg for arg in get_args(kind) if not isinstance(arg, (str, int)))
            todo.append(origin)
            continue
        if not isinstance(kind, type):
            continue
        name = f"{kind.__module__.rsplit('.', 1)[-1]}.{kind.__qualname__}"
        if name in found:
            continue
        if dataclasses.is_dataclass(kind):
            hints = get_type_hints(kind, include_extras=True)
            fields = dataclasses.fields(kind)
            found[name] = sorted(
                f.name
                for f in fields
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            )
            todo.extend(hints[f.name] for f in fields)
        elif is_typeddict(kind):
            hints = get_type_hints(kind, include_extras=True)
            found[name] = sorted(k for k, h in hints.items() if get_origin(h) is not NotRequired)
            todo.extend(hints.values())
    return found


def test_every_field_of_a_stored_answer_added_since_it_was_stored_has_a_default() -> None:
    """An idempotent use case stores its first answer as JSON, and a retry reads it back as the
    result type of today: a field with no default added since makes the answers stored before
    it fail to read back. Each such field is given a default, or mended (MENDED)."""
    import sota_casino.services  # noqa: F401
    from sota_casino.services import accounts  # noqa: F401
    from sota_casino.services import approvals  # noqa: F401
    from sota_casino.services import money  # noqa: F401
    from sota_casino.services import rounds  # noqa: F401
    from sota_casino.services import settings  # noqa: F401
    from sota_casino.services.idempotency import STORED

    assert len(STORED) >= 13, sorted(STORED)
    seen: set[str] = set()
    for operation, (answer, mend) in STORED.items():
        if answer is None:
            continue  # JSON values, read back as they were stored
        for name, required in _required_fields(answer).items():
            seen.add(name)
            assert name in STORED_FIELDS, f"{operation}: {name} is stored: add it to STORED_FIELDS"
            new = sorted(set(required) - set(STORED_FIELDS[name]))
            if name in MENDED:
                assert mend is not None, f"{operation} stores {name}, whose {MENDED[name]} it mends"
                new = sorted(set(new) - set(MENDED[name]))
            assert new == [], f"{operation}: {name}'s {new} need a default (or a mend)"
    assert seen == set(STORED_FIELDS)  # none left here that is no longer stored


def test_a_stored_answer_holding_a_field_removed_since_reads_back() -> None:
    stored = {**to_json(WAR), "removed": 1, "balances": {"chips": 1, "sweets": 2, "gone": 3}}
    assert from_json(CasinoWarRound, stored) == replace(WAR, balances=Balances(chips=1, sweets=2))
