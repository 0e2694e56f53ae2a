"""The use cases' results: their JSON is the API's, and reads back as the same value (an
idempotent retry answers what the first call answered)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC
from datetime import datetime

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
