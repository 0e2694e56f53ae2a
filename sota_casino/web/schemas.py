"""What ``/api/v1`` accepts, declared once as pydantic models: request bodies and query strings.

Requests are strict: no ``1.0``, ``true`` or ``"500"`` for an integer, no unknown field, and
text must hold no NUL. :mod:`.openapi` builds the OpenAPI components from these models, and
:mod:`.inputs` validates request bodies and query strings with them, so the two cannot drift.
Answers are the use cases' result types (:mod:`~sota_casino.services.results` and beside each
service); the few left here describe what no service returns as a type (the odds of the pure
core, the document itself).

Value sets and ranges come from the layer that owns the rule (the core, the services).
"""

from __future__ import annotations

from typing import Annotated
from typing import Any
from typing import Final
from typing import Literal

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import RootModel
from pydantic import WithJsonSchema
from pydantic.config import JsonDict

from ..core import casino_war
from ..core import odds
from ..core import sota
from ..core.money import MAX_AMOUNT
from ..services import accounts
from ..services import alerts
from ..services import money
from ..services import proposals
from ..services import rounds
from ..services.checks import CheckName
from ..services.results import CANONICAL_RULES
from ..services.results import CHIPS
from ..services.results import MAX_PAGE
from ..services.results import NEWEST
from ..services.results import SWEETS
from ..services.results import Bonus
from ..services.results import Card
from ..services.results import Count
from ..services.results import Currency
from ..services.results import Decks
from ..services.results import Figure
from ..services.results import GameName
from ..services.results import Hex64
from ..services.results import Id
from ..services.results import OneOf
from ..services.results import Open
from ..services.results import Order
from ..services.results import Role
from ..services.results import Signature
from ..services.results import TieBetFigure
from ..services.results import TiePayout
from ..services.results import WarOutcome
from ..services.results import casino_war_rules_schema
from ..services.results import enum_schema
from ..services.results import sota_rules_schema
from ..services.results import sota_table_schema
from ..services.text import NO_NUL_PATTERN
from ..services.text import NON_BLANK_PATTERN

MAX_MOVE_CARDS = 64
AUDIT_FILTER_MAX = 200
#: The longest part of a name the players' search takes (names are at most 32 characters).
NAME_FILTER_MAX = 64
#: Text a database can store: no NUL (lone surrogates are refused when the body is read).
Text = Annotated[str, Field(pattern=NO_NUL_PATTERN)]
PageLimit = Annotated[int, Field(ge=1, le=MAX_PAGE)]


def absent(description: str | None = None) -> Any:
    """A field that may be left out, and is never null when present (typed ``Any`` for mypy,
    which would read pydantic's ``Field(None)`` as a null value of a non-null type)."""
    return Field(None, description=description)


class Answer(BaseModel):
    """A response body: the promised fields; more may be added."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Request(BaseModel):
    """A request body: strict, closed."""

    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class Query(BaseModel):
    """A query string, strict like a body once its digits are read as numbers."""

    model_config = ConfigDict(strict=True, extra="forbid")


# --- requests ---------------------------------------------------------------------------------


class Credentials(Request):
    username: Annotated[Text, Field(min_length=1, max_length=64)]
    password: Annotated[Text, Field(min_length=1, max_length=256)]


class Registration(Request):
    username: Annotated[str, Field(pattern=f"^{accounts.USERNAME.pattern}$")]
    password: Annotated[
        Text, Field(min_length=accounts.PASSWORD_MIN, max_length=accounts.PASSWORD_MAX)
    ]


class TopupRequest(Request):
    currency: Currency


class RotateRequest(Request):
    client_seed: Annotated[Text, Field(min_length=1, max_length=64)] | None = None


def _war_option(name: str) -> Any:
    low, high = casino_war.RANGES[name]
    return Field(ge=low, le=high)


class CasinoWarRules(Request):
    """Every option of a Casino War table, as a round's ``rules`` show them."""

    decks: Decks
    min_bet: Annotated[int, _war_option("min_bet")]
    max_bet: Annotated[int, _war_option("max_bet")]
    tie_payout: TiePayout
    burn: Annotated[int, _war_option("burn")]
    bonus: Bonus


class PlayerSigned(Request):
    """The player's signature of the action's document, required once a key is registered."""

    signature: Signature | None = None
    key_id: Id | None = None


#: A bet names its seed pair and its nonce together, and a signed bet names both (the service
#: refuses anything else with 422 invalid_input).
BET_PLACE: Final[JsonDict] = {
    "dependentRequired": {"seed_pair_id": ["nonce"], "nonce": ["seed_pair_id"]},
    "if": {"required": ["signature"], "properties": {"signature": {"type": "string"}}},
    "then": {"required": ["seed_pair_id", "nonce"]},
}


class PlayerSignedBet(PlayerSigned):
    """The player's signature of the bet's document (docs/fairness.md, "Bets the player
    signs"), required once a key is registered, and the seed pair and nonce the bet takes,
    which a signed bet names: the active pair's ``seed_pair_id`` and ``next_nonce``
    (``GET /api/v1/fairness/seed-pair``)."""

    model_config = ConfigDict(json_schema_extra=BET_PLACE)

    seed_pair_id: Id = absent(
        "the active seed pair the bet is dealt from; with nonce, required with a signature"
    )
    nonce: Count = absent(
        "the nonce the bet takes, the active pair's next_nonce: a bet naming another pair or "
        "nonce (one taken since by another bet, or a pair rotated out) is refused with 409 "
        "nonce_not_next, and nothing changes"
    )


class BetRequest(PlayerSignedBet):
    bet: Annotated[
        int,
        Field(ge=casino_war.CHIP, le=MAX_AMOUNT, multiple_of=casino_war.CHIP, description=CHIPS),
    ]
    tie_bet: Annotated[int, Field(ge=0, le=MAX_AMOUNT, multiple_of=casino_war.CHIP)] = 0
    table: Literal["casino_war"] = "casino_war"
    rules: CasinoWarRules = absent(
        "the table's rules as shown to the player, every option: a bet is refused with 409 "
        "rules_changed when the table's differ (an operator changed them since), naming each "
        "option as sent → the table's (tie_payout 10 → 8), instead of being dealt under rules "
        "the player did not see; the player's records keep them "
        "(docs/fairness.md)"
    )


class DecisionRequest(PlayerSigned):
    choice: Annotated[str, OneOf(casino_war.CHOICES)]


DealtRules = Annotated[
    dict[str, Any], WithJsonSchema(sota_rules_schema(most_tricks=rounds.MAX_DEALT_TRICKS))
]


class GameRequest(PlayerSignedBet):
    """Rules or a preset, not both (or neither: the table's first preset, nordic unless the
    operator changed the table's list)."""

    model_config = ConfigDict(
        json_schema_extra={**BET_PLACE, "not": {"required": ["rules", "preset"]}}
    )

    stake: Annotated[int, Field(ge=1, le=MAX_AMOUNT, description=SWEETS)]
    rules: DealtRules | None = absent(
        "options of the rule book (max_tricks as long as the casino deals), the rest at their "
        "defaults; played and signed as the game's rules hold them: " + CANONICAL_RULES
    )
    #: Checked by the service, which also knows which presets the table allows (invalid_rules).
    preset: Annotated[str, WithJsonSchema(enum_schema(tuple(sota.PRESETS)))] | None = absent(
        "one the table offers; GET /api/v1/tables/sota gives each one's rules (preset_rules), "
        "which the game's rules and a signed bet's document hold"
    )


class MoveRequest(PlayerSigned):
    """Won cards to lay: face-down ones first, the face-up card last."""

    cards: Annotated[list[Card], Field(min_length=1, max_length=MAX_MOVE_CARDS)]
    #: Optional, so that clients that send none keep working: such a move answers whatever
    #: choice the game waits for.
    move: Count | None = absent(
        "the game's pending.move that this move answers: a copy of a move already laid (a "
        "retry, a second tab) is refused with 409 move_not_due instead of laid again"
    )


class PlayerKeyRequest(Request):
    public_key_hex: Annotated[Hex64, Field(description="the raw 32-byte Ed25519 public key")]


class RoleChange(Request):
    role: Role


class LockChange(Request):
    locked: bool


class AdjustmentRequest(Request):
    user_id: Id
    currency: Currency
    amount: Annotated[
        int,
        Field(
            ge=-money.MAX_ADJUSTMENT,
            le=money.MAX_ADJUSTMENT,
            json_schema_extra={"not": {"const": 0}},
            description="minor units (hundredths of a chip, or sweets); negative debits",
        ),
    ]
    reason: Annotated[
        str, Field(pattern=NON_BLANK_PATTERN, min_length=1, max_length=money.REASON_MAX)
    ]


def _table_settings_schema() -> dict[str, Any]:
    """The settings of either table as the table shows them, any of them (the core checks
    them)."""
    return {
        "description": "Merged over the present settings of the table; new rounds only.",
        "minProperties": 1,
        "anyOf": [
            {name: value for name, value in table.items() if name != "required"}
            for table in (casino_war_rules_schema(), sota_table_schema())
        ],
    }


class TableSettingsChange(RootModel[Open]):
    """Checked by the settings service, which answers invalid_rules naming the option in
    error.field."""

    model_config = ConfigDict(json_schema_extra=_table_settings_schema())


# --- query strings ----------------------------------------------------------------------------

_DEFAULT_TABLE = casino_war.TableRules()


class OddsQuery(Query):
    decks: Decks = _DEFAULT_TABLE.decks
    tie_payout: TiePayout = _DEFAULT_TABLE.tie_payout
    bonus: Bonus = _DEFAULT_TABLE.bonus


class RoundsQuery(Query):
    game: GameName | None = None
    before: Id | None = None
    limit: Annotated[int, Field(ge=1, le=rounds.MAX_PAGE)] = 20


AuditFilter = Annotated[Text, Field(max_length=AUDIT_FILTER_MAX)] | None
#: Checked by the audit service: ISO 8601, UTC if no zone is given.
TimeFilter = (
    Annotated[
        Text,
        Field(min_length=1, max_length=AUDIT_FILTER_MAX, json_schema_extra={"format": "date-time"}),
    ]
    | None
)


class ConsoleQuery(Query):
    """A query string of the console's API: parameters it does not name are left alone."""

    model_config = ConfigDict(extra="ignore")


class Page(ConsoleQuery):
    """Where a page of a list continues, and how long it is."""

    cursor: Count | None = absent("continue after this id (from next_cursor)")
    limit: PageLimit = 50


class Dated(ConsoleQuery):
    """A range of time (checked by the services: ISO 8601, UTC if no zone is given)."""

    since: TimeFilter = absent("from this ISO 8601 time (UTC if no zone)")
    until: TimeFilter = absent("up to this ISO 8601 time (UTC if no zone)")


class AuditFilters(Dated):
    action: AuditFilter = absent("action prefix, e.g. money.")
    actor: AuditFilter = absent("e.g. user:7 or system")
    subject: AuditFilter = absent("e.g. user:7, round:12, table:casino_war")
    text: AuditFilter = absent(
        "free text in the action, actor, subject or data, as typed but in any letter case"
    )


class AuditQuery(AuditFilters):
    after_seq: Count | None = absent("oldest first: entries after this sequence number")
    before_seq: Count | None = absent("newest first: entries before this sequence number")
    from_seq: Count | None = absent("jump to this entry (included), in the order asked for")
    order: Order | None = absent("newest first unless oldest (or after_seq is given)")
    limit: PageLimit = 50


class CheckpointsQuery(Page):
    order: Annotated[Order, Field(description="newest first unless oldest")] = NEWEST
    cursor: Count | None = absent("continue after this size (from next_cursor)")


#: Checked by the reports service too (a real day of the calendar).
DayFilter = (
    Annotated[
        str,
        Field(
            pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
            json_schema_extra={"format": "date"},
            examples=["2026-01-31"],
        ),
    ]
    | None
)


class MathQuery(ConsoleQuery):
    since: DayFilter = absent("first UTC settlement day (YYYY-MM-DD)")
    until: DayFilter = absent("last UTC settlement day (YYYY-MM-DD)")


class CheckPath(Query):
    """The path of a standing check (Flask routes it; the checks service refuses other names)."""

    name: Annotated[CheckName, Field(description="which standing check")]


class ConsistencyQuery(ConsoleQuery):
    old_size: Id
    new_size: Id


class ListQuery(Page, Dated):
    """Cursor paging of a list (players, a player's rounds, money moves, seed pairs)."""

    order: Annotated[Order, Field(description="newest first unless oldest")] = NEWEST
    from_id: Count | None = absent("jump to this id (included), in the order asked for")


Name = Annotated[Text, Field(max_length=NAME_FILTER_MAX)]


class PlayersQuery(ListQuery):
    q: Name = ""


class ExportQuery(Dated):
    """A list's date range, downloaded whole as CSV or JSON Lines."""

    format: Annotated[str, OneOf(("csv", "jsonl"))] = "jsonl"


class PlayersExportQuery(ExportQuery):
    q: Name = ""


class AuditExportQuery(AuditFilters, ExportQuery):
    """The audit entries the filters match, downloaded whole."""


#: The sizes of checkpoints an auditor kept, comma-separated (at most :data:`MAX_KEPT`).
MAX_KEPT: Final = 32
KEPT_PATTERN: Final = f"^[0-9]{{1,19}}(,[0-9]{{1,19}}){{0,{MAX_KEPT - 1}}}$"
KeptSizes = Annotated[str, Field(pattern=KEPT_PATTERN)]


class RangeExportQuery(Dated):
    """A range of the audit log, by sequence number and/or time."""

    from_seq: Id | None = absent("the first entry (included)")
    to_seq: Id | None = absent("the last entry (included)")
    kept: KeptSizes | None = absent(
        "the sizes of checkpoints you kept, comma-separated (at most 32, each from 1 to the "
        "latest checkpoint's size): the range is then vouched for by the smallest checkpoint "
        "covering it and each of them, and for each the export carries a line "
        '{"kind": "consistency", "old_size", "new_size", "proof"}, the RFC 6962 consistency '
        "proof from that size to the vouching checkpoint's"
    )


class ApprovalsQuery(Page):
    status: Annotated[str, OneOf(proposals.STATUSES)] | None = absent(
        "pending (the default), approved or rejected"
    )


class AlertsQuery(Page):
    open: Annotated[int, Field(ge=0, le=1, description="1: only those not acknowledged")] = 0


# --- responses --------------------------------------------------------------------------------

#: How every tie is met in the figures of a table (``core.odds.STRATEGIES``).
Strategy = Annotated[str, OneOf(odds.STRATEGIES)]


class Odds(Answer):
    """The exact figures of a table setting, per unit of ante (``core.odds.CasinoWarOdds``)."""

    decks: Decks
    tie_payout: TiePayout
    bonus: Bonus
    p_tie: Figure
    p_war_tie: Annotated[Figure, Field(description="given that the first cards tied")]
    house_edge_war: Figure
    house_edge_surrender: Figure
    house_edge_tie_bet: TieBetFigure
    element_of_risk: Annotated[Figure, Field(description="always going to war")]
    variance: Annotated[Figure, Field(description="always going to war, antes squared")]
    std_dev: Annotated[float, Field(description="always going to war, in antes")]
    outcomes: Annotated[
        dict[Strategy, dict[WarOutcome, Figure]],
        Field(description="the chance of each outcome when every tie is met by the strategy"),
    ]


class OpenAPIDocument(Answer):
    openapi: Literal["3.1.0"]
    jsonSchemaDialect: str
    info: Open
    servers: list[Open]
    paths: Open
    components: Open


# --- operator responses -----------------------------------------------------------------------


class AdjustmentProposal(AdjustmentRequest):
    """An adjustment for a second operator to approve."""


class Decision(Request):
    note: Annotated[Text, Field(max_length=500)] | None = None


class AlertRuleRequest(Request):
    kind: Annotated[str, OneOf(alerts.KINDS)]
    currency: Currency = "chips"
    threshold: Annotated[int, Field(ge=0, le=alerts.MAX_THRESHOLD)] = 0
    period_hours: Annotated[int, Field(ge=1, le=alerts.MAX_PERIOD_HOURS)] = 24


class RuleEnabled(Request):
    enabled: bool


class TimeZoneChange(Request):
    time_zone: Annotated[
        str,
        OneOf(("", "UTC", *accounts.time_zones())),
        Field(description="an IANA name, e.g. Europe/Paris; UTC or empty: UTC"),
    ]
