"""What the player's use cases answer: frozen dataclasses of the domain, and their JSON.

A settled or open Casino War round, a Sota game and the player's balances are values with named
fields, not dicts read by string key. The web layer answers them as JSON (:func:`to_json`) and
renders them in pages; the OpenAPI document derives its response schemas from these classes
(the ``Annotated`` metadata of their fields is the JSON Schema); and an idempotent use case
stores its first answer as that same JSON and reads it back (:func:`from_json`), so a field
added to a stored result needs a default, or a mend of the answers stored without it
(``idempotency.idempotent``'s ``mend``): the answers stored before it are read back too
(tests/unit/test_results.py holds every stored type's fields to it).

Signed documents (receipts, commitments, reveals) are not dataclasses: they stay the mappings
that were signed and hashed, written back unchanged; a ``TypedDict`` only describes their
fields for the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from fractions import Fraction
from typing import Annotated
from typing import Any
from typing import Final
from typing import Literal
from typing import NotRequired
from typing import TypeVar

from pydantic import Field
from pydantic import GetCoreSchemaHandler
from pydantic import PlainSerializer
from pydantic import PlainValidator
from pydantic import TypeAdapter
from pydantic import WithJsonSchema
from pydantic_core import core_schema
from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

from ..core import casino_war
from ..core import odds
from ..core import sota
from ..core.errors import InvalidInput
from ..core.fairness import MAX_EXACT_INTEGER
from ..core.fairness import format_time
from ..core.marks import N_
from ..core.money import CURRENCIES
from ..models import ROLES

T = TypeVar("T")

#: Ids are whole numbers a browser reads exactly, as amounts are (the databases' integers go
#: to 2**63 - 1, but no document the casino signs holds a number past 2**53 - 1).
MAX_ID: Final = MAX_EXACT_INTEGER
CHIPS: Final = "hundredths of a chip"
SWEETS: Final = "whole sweets"
GAMES: Final = ("casino_war", "sota")
#: How the services write a moment (:func:`~sota_casino.core.fairness.format_time`).
TIME_PATTERN: Final = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$"


@dataclass(frozen=True)
class OneOf:
    """Annotation: the value must be one of ``values`` (a JSON Schema ``enum``)."""

    values: tuple[Any, ...]

    def __get_pydantic_core_schema__(
        self, _source: Any, _handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.literal_schema(list(self.values))


Hex64 = Annotated[str, Field(pattern="^[0-9a-f]{64}$")]
#: A moment as text, as the services write it.
Time = Annotated[str, Field(pattern=TIME_PATTERN)]
Day = Annotated[str, Field(json_schema_extra={"format": "date"})]
#: The most rows a page of the operator's lists holds.
MAX_PAGE: Final = 500
NEWEST: Final = "newest"
OLDEST: Final = "oldest"
#: Which way a page of a list runs.
Order = Annotated[str, OneOf((NEWEST, OLDEST))]
Open = dict[str, Any]
Signature = Annotated[
    str, Field(pattern="^[0-9a-f]{128}$", description="Ed25519 over the canonical JSON, hex")
]
Card = Annotated[str, Field(pattern="^([2-9TJQKA][CDHS]|X[12])$")]
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
#: What a list's cursor that is null on the last page says of its null.
LAST_PAGE: Final = "null on the last page"
NextCursor = Annotated[Id | None, Field(description=f"the cursor of the next page; {LAST_PAGE}")]
#: Bounded as ids are: a larger one could reach no row.
Count = Annotated[int, Field(ge=0, le=MAX_ID)]
Currency = Annotated[str, OneOf(CURRENCIES)]
GameName = Annotated[str, OneOf(GAMES)]
Role = Annotated[str, OneOf(ROLES)]
WarOutcome = Annotated[str, OneOf(casino_war.OUTCOMES)]
#: The Casino War table options, in the core's ranges.
Decks = Annotated[int, Field(ge=casino_war.RANGES["decks"][0], le=casino_war.RANGES["decks"][1])]
TiePayout = Annotated[
    int, Field(ge=casino_war.RANGES["tie_payout"][0], le=casino_war.RANGES["tie_payout"][1])
]
Bonus = Annotated[str, OneOf(casino_war.BONUS_MODES)]
SotaWinner = int | Annotated[str, OneOf((sota.TEAM_0, sota.TEAM_1, sota.DRAW))]
#: What a field of a round that is null while the round is open says of its null.
UNTIL_SETTLED: Final = "null while the round is open (waiting for a decision or a move)"
#: A field of a round that the round's settlement fills in.
Settled = Annotated[T, Field(description=UNTIL_SETTLED)]
#: What a field of a seed pair that its reveal fills in says of its null.
UNTIL_RETIRED: Final = "null until a rotation retires the pair"
#: A moment, written in UTC to the microsecond (``2026-12-01T08:31:13.842813Z``).
Moment = Annotated[
    datetime,
    PlainSerializer(format_time, return_type=str),
    WithJsonSchema({"type": "string", "pattern": TIME_PATTERN}),
]


class Figure(TypedDict):
    """An exact fraction, and its float for display."""

    exact: Annotated[str, Field(pattern=r"^-?\d+/\d+$")]
    value: float


#: A figure of the tie bet, at a table setting that may offer none.
TieBetFigure = Annotated[Figure | None, Field(description="null: no tie bet (tie_payout 0)")]
#: What an edge that is null says of its null.
NO_ANTES: Final = "null until a round (Sota: a game) settles: no ante to measure it by"
NO_TIE_BETS: Final = "null until a round with a tie bet settles"


def check_page(order: str, limit: int) -> None:
    """Refuse a page of an operator's list that runs neither way, or is empty or too long.

    :raises InvalidInput: naming ``order`` or ``limit`` (checked in that order).
    """
    if order not in (NEWEST, OLDEST):
        raise InvalidInput(N_('order must be "newest" or "oldest"'), field="order")
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(
            N_("limit must be from 1 to %(max)s"), params={"max": MAX_PAGE}, field="limit"
        )


def filter_time(value: str | None, name: str) -> datetime | None:
    """Return a list's or the log's time bound (``since``, ``until``) in UTC, None if not given.

    Any ISO 8601 time or date is taken, UTC where it names no zone. One that is before year 1
    or past 9999 once in UTC (``0001-01-01T00:00+18:00``) is the earliest or the latest time
    there is: it bounds a range the same.

    :raises InvalidInput: naming ``name``, for text that is no such time.
    """
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInput(
            N_("%(option)s must be an ISO 8601 time or date"), params={"option": name}, field=name
        ) from exc
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        return (datetime.min if moment.year == 1 else datetime.max).replace(tzinfo=UTC)


def figure(value: Fraction) -> Figure:
    """:func:`~sota_casino.core.odds.figure`, typed as the answers declare it."""
    found = odds.figure(value)
    return Figure(exact=found["exact"], value=found["value"])


def ratio(numerator: int | Fraction, denominator: int | Fraction) -> Figure | None:
    """An exact ratio as a :func:`figure`; None when the denominator is zero (nothing was bet).
    The float ``value`` is for display only; ``exact`` is the figure."""
    return None if denominator == 0 else figure(Fraction(numerator) / Fraction(denominator))


def enum_schema(values: tuple[Any, ...]) -> dict[str, Any]:
    """An ``enum`` that also names its JSON type, so ``1.0`` is not the option ``1``; values of
    two types (``war_down``'s ``3``, ``1`` and ``"by_rank"``) are an ``anyOf`` of one enum per
    type, which code generators read (an enum of mixed types makes them drop its schema)."""
    by_type: dict[str, list[Any]] = {}
    for value in values:
        by_type.setdefault("integer" if isinstance(value, int) else "string", []).append(value)
    enums = [{"type": kind, "enum": listed} for kind, listed in by_type.items()]
    return enums[0] if len(enums) == 1 else {"anyOf": enums}


def casino_war_rules_schema() -> dict[str, Any]:
    """Every option of a Casino War table, in the core's ranges (the core checks them), as a
    round's ``rules`` and the table's settings show them."""
    properties: dict[str, Any] = {
        name: {"type": "integer", "minimum": low, "maximum": high}
        for name, (low, high) in casino_war.RANGES.items()
    }
    properties["bonus"] = enum_schema(casino_war.BONUS_MODES)
    return _every_option(properties)


def sota_table_schema() -> dict[str, Any]:
    """The Sota table's settings: its stake limits in sweets, the presets it offers (a game
    that names none plays the first) and whether it deals rules of the player's own."""
    stake = {"type": "integer", "minimum": 1, "maximum": sota.MAX_TABLE_STAKE}
    return _every_option(
        {
            "min_stake": stake,
            "max_stake": stake,
            "presets": {"type": "array", "minItems": 1, "items": enum_schema(tuple(sota.PRESETS))},
            "custom_rules": {"type": "boolean"},
        }
    )


def _every_option(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


#: The Sota rule set as an answer writes it, which a signed bet's document holds.
CANONICAL_RULES: Final = (
    "every option, those a request left out at their defaults, lead off as null (never "
    '"off"): what a bet signs as its rules (docs/fairness.md, "Bets the player signs")'
)


def sota_rules_schema(
    most_tricks: int = sota.MAX_TRICKS_RANGE[1], *, canonical: bool = False
) -> dict[str, Any]:
    """The rule options of ``core.sota`` (which checks them) as a JSON Schema, ``max_tricks``
    up to ``most_tricks`` (the rule book's limit, or a casino's): as a request may send them
    (any of them, ``lead`` off as ``"off"`` too, each with the default it takes when left
    out), or ``canonical``, as the engine writes them (:data:`CANONICAL_RULES`)."""
    low, high = sota.MAX_TRICKS_RANGE[0], most_tricks
    first, last = sota.LEAD_RANGE
    lead = [{"type": "integer", "minimum": first, "maximum": last}, {"type": "null"}]
    properties: dict[str, Any] = {
        "seats": enum_schema(sota.SEAT_COUNTS),
        "war_down": enum_schema(sota.WAR_DOWN_VALUES),
        **{name: enum_schema(values) for name, values in sota.NAMED_VALUES.items()},
        "max_tricks": {"type": "integer", "minimum": low, "maximum": high},
        "lead": {
            "description": "off (null), or N: the game ends when the leader has N more cards "
            "than the next seat",
            "anyOf": lead if canonical else [*lead, {"const": "off"}],
        },
        **{name: {"type": "boolean"} for name in sota.SWITCHES},
    }
    if not canonical:
        defaults = sota.SotaRules().to_dict()
        properties = {
            name: {**found, "default": defaults[name]} for name, found in properties.items()
        }
    teams = {"properties": {"teams": {"const": True}}, "required": ["teams"]}
    every = {"description": CANONICAL_RULES, "required": list(properties)} if canonical else {}
    return {
        "type": "object",
        **every,
        "properties": properties,
        "additionalProperties": False,
        "if": teams,
        "then": {"properties": {"seats": {"const": 4}}, "required": ["seats"]},
    }


#: A Sota rule set as :meth:`~sota_casino.core.sota.SotaRules.to_dict` writes it.
SotaRules = Annotated[dict[str, Any], WithJsonSchema(sota_rules_schema(canonical=True))]
#: A Casino War table's rules, every option, as a round keeps them and the table's settings are.
CasinoWarRules = Annotated[dict[str, Any], WithJsonSchema(casino_war_rules_schema())]
#: The rules a round of either game was played under, as it keeps them.
GameRules = Annotated[
    dict[str, Any],
    WithJsonSchema({"anyOf": [casino_war_rules_schema(), sota_rules_schema(canonical=True)]}),
]
PresetName = Annotated[str, OneOf(tuple(sota.PRESETS))]


@dataclass(frozen=True, slots=True)
class Balances:
    """The player's balances in minor units."""

    chips: Annotated[Count, Field(description=CHIPS)]
    sweets: Annotated[Count, Field(description=SWEETS)]

    def of(self, currency: str) -> int:
        """The balance in ``currency`` (one of :data:`~sota_casino.core.money.CURRENCIES`)."""
        return int(getattr(self, currency))


@dataclass(frozen=True, slots=True)
class User:
    """A user as the API shows one: who the caller is."""

    id: Id
    username: str
    role: Role


@dataclass(frozen=True, slots=True)
class Person:
    """A user by id and name (an account is never deleted: the name is always known)."""

    id: Id
    name: str


@dataclass(frozen=True, slots=True)
class Me:
    """The caller and its balances."""

    user: User
    balances: Balances


@dataclass(frozen=True, slots=True)
class UserCreated:
    user: User


@dataclass(frozen=True, slots=True)
class TopupResult:
    """The balances after a top-up (also at the top level, as the first version answered)."""

    balances: Balances
    chips: Annotated[Count, Field(description=CHIPS)]
    sweets: Annotated[Count, Field(description=SWEETS)]


@dataclass(frozen=True, slots=True)
class AdjustmentResult:
    user_id: Id
    balances: Balances


@dataclass(frozen=True, slots=True)
class TableSettings:
    name: GameName
    settings: Annotated[
        Open, WithJsonSchema({"anyOf": [casino_war_rules_schema(), sota_table_schema()]})
    ]
    preset_rules: Annotated[
        dict[PresetName, SotaRules],
        Field(
            description=(
                "Sota: the whole rule set of each preset the table offers (settings.presets), "
                "by name, as the game's rules and a signed bet's document hold it; Casino "
                "War: none (its settings are its rules)"
            )
        ),
    ]

    @classmethod
    def of(cls, name: str, settings: Open) -> TableSettings:
        """The settings of table ``name``, with the rule sets of the presets they offer."""
        offered = settings["presets"] if name == sota.GAME else ()
        return cls(name, settings, {p: sota.SotaRules.from_preset(p).to_dict() for p in offered})


@dataclass(frozen=True, slots=True)
class TimeZoneView:
    time_zone: str


@dataclass(frozen=True, slots=True)
class Token:
    """A bearer token for the JSON API, and when it expires."""

    token: Annotated[str, Field(min_length=20)] = field(repr=False)  # a secret: kept out of logs
    expires_at: Moment


@dataclass(frozen=True, slots=True)
class War:
    """The war of a tied Casino War round: the burned cards and the second deal."""

    burned: list[Card]
    player_card: Card
    dealer_card: Card


@dataclass(frozen=True, slots=True)
class CasinoWarRound:
    """A Casino War round, open (awaiting the player's decision on a tie) or settled, with the
    player's balances after it."""

    id: Id
    game: Literal["casino_war"]
    status: Annotated[str, OneOf((casino_war.AWAITING_DECISION, casino_war.SETTLED))]
    bet: Count
    tie_bet: Count
    raise_: Annotated[Count, Field(alias="raise")]
    player_card: Card
    dealer_card: Card
    war: Annotated[War | None, Field(description="null unless the player went to war on a tie")]
    outcome: Settled[WarOutcome | None]
    tie_bet_won: Annotated[
        bool | None,
        Field(
            description=f"{UNTIL_SETTLED}, though the tie that left it open already decided "
            "it: a tie bet above 0 is won, and paid when the round settles"
        ),
    ]
    net: Settled[int | None]
    payout: Settled[Count | None]
    rules: CasinoWarRules
    seed_pair_id: Id
    nonce: Count
    created_at: Moment
    settled_at: Settled[Moment | None]
    balances: Balances


class Trick(TypedDict):
    """One trick of a Sota game as the engine logs it (``core.sota.Trick.to_dict``)."""

    laid: Annotated[list[list[Card]], Field(description="per seat, every card it laid")]
    wars: Count
    winner: Annotated[
        Annotated[int, Field(ge=0, le=3)] | None,
        Field(
            description="the seat that took it; null: a war no seat could decide, its pot "
            "out of play"
        ),
    ]
    counts: list[Count]
    steps: Annotated[list[list[Count]], Field(description="cards laid per seat, per step")]
    #: ``multi_tie: tied_only_return``: per seat, the card it took back (none: empty).
    returned: NotRequired[list[list[Card]]]


@dataclass(frozen=True, slots=True)
class PendingMove:
    """The Prisoners of War move the player owes: lay ``count`` of the won ``options``."""

    move: Annotated[
        Count,
        Field(
            description=(
                "the number of this choice, from 0: the index its move takes in the "
                "receipt's actions (the signed action document's index). A move request "
                "that sends it as its move is laid once: a copy is refused"
            )
        ),
    ]
    seat: int
    count: Id
    options: list[Card]
    table: Annotated[
        list[list[Card | None]],
        Field(description="per seat, the cards laid in the trick so far; face-down ones null"),
    ]


@dataclass(frozen=True, slots=True)
class SotaGame:
    """A game of Sota, settled or awaiting the player's move, with the balances after it."""

    id: Id
    game: Literal["sota"]
    status: Annotated[str, OneOf((sota.AWAITING_MOVE, sota.SETTLED))]
    stake: Annotated[Id, Field(description=SWEETS)]
    rules: SotaRules
    seats: Annotated[int, OneOf(sota.SEAT_COUNTS)]
    winner: Settled[SotaWinner | None]
    tricks: list[Trick]
    pending: Annotated[
        PendingMove | None, Field(description="null unless the game waits for the player's move")
    ]
    ended_by: Settled[Annotated[str, OneOf(sota.ENDINGS)] | None]
    net: Settled[int | None]
    payout: Settled[Count | None]
    seed_pair_id: Id
    nonce: Count
    created_at: Moment
    settled_at: Settled[Moment | None]
    balances: Balances


class CommitmentDocument(TypedDict):
    """A seed pair's commitment as it is signed (``core.fairness.commitment_document``)."""

    type: Literal["commitment"]
    v: Literal[1]
    seed_pair_id: Id
    user_id: Id
    commitment: Hex64
    created_at: Annotated[str, Field(pattern=TIME_PATTERN)]


class RevealDocument(TypedDict):
    """A seed pair's reveal as it is signed (``core.fairness.reveal_document``)."""

    type: Literal["reveal"]
    v: Literal[1]
    seed_pair_id: Id
    user_id: Id
    commitment: Hex64
    server_seed: Hex64
    client_seed: str
    rounds: Count
    revealed_at: Annotated[str, Field(pattern=TIME_PATTERN)]


def _as_signed(value: Any) -> dict[str, Any]:
    """A signed document read back: the mapping as it was signed, never rewritten."""
    if not isinstance(value, dict):
        raise ValueError("a signed document is an object")
    return value


#: A seed pair's signed commitment, written as it was signed: its fields are described (one
#: component of the OpenAPI document, which every answer holding one names), never read or
#: rewritten.
Commitment = Annotated[
    dict[str, Any], PlainValidator(_as_signed, json_schema_input_type=CommitmentDocument)
]


class Signed(TypedDict):
    """A signed document of docs/fairness.md."""

    document: dict[str, Any]
    signature: Signature


class SignedReveal(TypedDict):
    """A seed pair's signed reveal (docs/fairness.md)."""

    document: Annotated[
        dict[str, Any], PlainValidator(_as_signed, json_schema_input_type=RevealDocument)
    ]
    signature: Signature


class Account(TypedDict):
    """A user as the console shows one."""

    id: Id
    username: str
    role: Role
    locked: bool


class AccountSince(Account):
    created_at: Time


@dataclass(frozen=True, slots=True)
class ManagedUser:
    """A user's account as an operator's change left it."""

    user: Account


class Transfer(TypedDict):
    """A money move of a player as the lists show it: the transfer and the player's side."""

    id: Id
    time: Time
    kind: Annotated[str, OneOf(("bet", "raise", "settle", "grant", "topup", "adjust"))]
    currency: Currency
    amount: int
    round_id: Annotated[
        Id | None,
        Field(description="the round it is part of (bet, raise, settle); null for the others"),
    ]
    memo: Annotated[str | None, Field(description="an adjust's reason; null for the others")]


class SeedPairSummary(TypedDict):
    """A seed pair in a list; its server seed only once revealed, with the signed reveal."""

    seed_pair_id: Id
    status: Annotated[str, OneOf(("next", "active", "revealed"))]
    commitment: Hex64
    client_seed: Annotated[
        str | None,
        Field(description="null while the pair is next: the rotation that activates it sets it"),
    ]
    rounds: Count
    created_at: Time
    revealed_at: Annotated[Time | None, Field(description=UNTIL_RETIRED)]
    server_seed: Annotated[Hex64 | None, Field(description="only once revealed")]
    reveal: Annotated[Signed | None, Field(description=UNTIL_RETIRED)]


class AuditEntry(TypedDict):
    """An entry of the audit log, hashed into the chain as it is written here."""

    seq: Id
    time: Time
    actor: Annotated[
        str | None,
        Field(description="who did it (user:7, system); null: no one known (a failed sign-in)"),
    ]
    action: str
    subject: Annotated[
        str | None,
        Field(
            description="what it is about (user:7, round:12); null: no one record (a sign-in "
            "under a name no account has)"
        ),
    ]
    data: Open
    prev_hash: Hex64
    hash: Hex64


class _CheckpointFields(TypedDict):
    type: Literal["checkpoint"]
    v: Literal[1]
    size: Id
    root: Hex64
    time: Time


class Checkpoint(TypedDict):
    """A signed checkpoint of the audit log (``core.audit_chain.checkpoint_document``)."""

    document: Annotated[
        dict[str, Any], WithJsonSchema(TypeAdapter(_CheckpointFields).json_schema())
    ]
    signature: Signature
    public_key_hex: Hex64


#: The latest signed checkpoint of the audit log, of which there may be none yet.
LatestCheckpoint = Annotated[
    Checkpoint | None, Field(description="the latest; null before the first checkpoint")
]


class AnchorOf(TypedDict):
    """The document an anchor ties to the log: a pair's commitment or reveal, a round's bet or
    settlement, or the ``index``-th decision (a Casino War decision, a Sota move) of a round."""

    kind: Annotated[str, OneOf(("commitment", "reveal", "bet", "settlement", "decision"))]
    seed_pair_id: NotRequired[Id]
    round_id: NotRequired[Id]
    index: NotRequired[Count]


class Anchor(TypedDict):
    """A document's audit entry, proved into a signed checkpoint (``core.anchors``)."""

    of: AnchorOf
    entry: AuditEntry
    leaf_index: Annotated[Count, Field(description="the entry's seq - 1")]
    checkpoint_size: Annotated[Id, Field(description="the signed checkpoint it proves into")]
    proof: Annotated[list[Hex64], Field(description="RFC 6962 inclusion proof, leaf side first")]


class PendingAnchor(TypedDict):
    of: AnchorOf
    reason: str
    retry_after: Annotated[int, Field(ge=1, description="seconds until it is worth asking again")]


class RoundDocument(TypedDict):
    """A settled round as its receipt signs it (``core.fairness.round_document``)."""

    type: Literal["round"]
    v: Literal[1]
    round_id: Id
    game: GameName
    seed_pair_id: Id
    commitment: Hex64
    client_seed: str
    nonce: Count
    rules: Open
    actions: list[Any]
    cards: list[Card]
    outcome: Open
    stakes: dict[str, Count]
    payout: Count
    settled_at: Time
    signed_actions: NotRequired[
        Annotated[
            list[Open | None],
            Field(
                description="the player's signed action document for each action (null: unsigned)"
            ),
        ]
    ]
    signed_bet: NotRequired[
        Annotated[
            Open,
            Field(
                description=(
                    "the player's signed bet document {document, signature, key_id}, once the "
                    'player registered a key (docs/fairness.md, "Bets the player signs")'
                )
            ),
        ]
    ]


class Receipt(TypedDict):
    """The signed receipt of a settled round."""

    document: RoundDocument
    signature: Signature


class KeyAnchor(TypedDict):
    leaf_index: Count
    checkpoint_size: Id
    proof: list[Hex64]


class KeyRegistration(TypedDict):
    """The audit entry that registered one of the player's keys, and once a signed checkpoint
    covers it, its anchor (leaf index, checkpoint size, inclusion proof) and that checkpoint."""

    entry: AuditEntry
    anchor: NotRequired[KeyAnchor]
    checkpoint: NotRequired[Checkpoint]


class LoggedKeyChange(Signed):
    """A signed key change as a bundle carries it: with the audit entry that recorded it and,
    once a signed checkpoint covers that entry, its anchor and that checkpoint."""

    entry: AuditEntry
    anchor: NotRequired[KeyAnchor]
    checkpoint: NotRequired[Checkpoint]


class PairAnchors(TypedDict):
    """A pair's part of the log: its documents' anchors, the checkpoint they prove into, and
    what is still pending."""

    anchors: list[Anchor]
    checkpoints: Annotated[
        list[Checkpoint],
        Field(
            description="the latest signed checkpoint (none before the first), which the "
            "anchors prove into"
        ),
    ]
    pending_anchors: list[PendingAnchor]


class Bundle(PairAnchors):
    """The verifier's input for one seed pair (docs/fairness.md), a document as it is read."""

    public_key_hex: Hex64
    commitment: Signed
    reveal: Annotated[SignedReveal | None, Field(description=UNTIL_RETIRED)]
    rounds: list[Receipt]
    key_changes: list[LoggedKeyChange]
    player_keys: list[KeyRegistration]


@dataclass(frozen=True, slots=True)
class ActiveSeedPair:
    """The player's active seed pair (never its server seed) and the next pair's commitment,
    signed: the pair that the next rotation activates with the client seed it sends, shown
    before that seed is chosen so that the player can keep it first."""

    seed_pair_id: Id
    commitment: Hex64
    client_seed: Annotated[str, Field(min_length=1, max_length=64)]
    next_nonce: Count
    commitment_document: Commitment
    signature: Signature
    next_commitment: Hex64
    next_seed_pair_id: Id
    next_commitment_document: Commitment
    next_signature: Signature


@dataclass(frozen=True, slots=True)
class Rotation:
    """A rotation: the retired pair's signed reveal, and the pair now active."""

    revealed: SignedReveal
    active: ActiveSeedPair


@dataclass(frozen=True, slots=True)
class RetiredKey:
    """A signing key the service used before."""

    public_key_hex: Hex64
    created_at: Moment
    retired_at: Moment


@dataclass(frozen=True, slots=True)
class PublicKey:
    """The service's signing key, the retired ones, and the key changes each old key signed."""

    algorithm: Literal["Ed25519"]
    public_key_hex: Hex64
    public_key_pem: str
    key_changes: list[Signed]
    retired: list[RetiredKey]


@dataclass(frozen=True, slots=True)
class PlayerKey:
    """One of the player's keys for signing bets, decisions and moves."""

    key_id: Id
    public_key_hex: Hex64
    registered_at: Moment
    retired_at: Annotated[Moment | None, Field(description="null while it is the key in use")]
    status: Annotated[str, OneOf(("current", "retired"))]


@dataclass(frozen=True, slots=True)
class PlayerKeys:
    """The player's keys, oldest first, and which one is in use."""

    keys: list[PlayerKey]
    current_key_id: Annotated[Id | None, Field(description="null until a key is registered")]


@dataclass(frozen=True, slots=True)
class WaitingRound:
    """A round of the player's active seed pair that waits for a decision or a move."""

    id: Id
    game: GameName


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """A round in a list: what was staked, how it ended."""

    id: Id
    game: GameName
    status: Annotated[
        str, OneOf((casino_war.AWAITING_DECISION, sota.AWAITING_MOVE, casino_war.SETTLED))
    ]
    currency: Currency
    staked: Count
    payout: Settled[Count | None]
    net: Settled[int | None]
    outcome: Annotated[
        WarOutcome | SotaWinner | None,
        Field(description=f"Casino War's outcome, Sota's winner; {UNTIL_SETTLED}"),
    ]
    seed_pair_id: Id
    nonce: Count
    created_at: Moment


@dataclass(frozen=True, slots=True)
class RoundRow(RoundSummary):
    """A round in the console's lists: also when it settled."""

    settled_at: Settled[Moment | None]


@dataclass(frozen=True, slots=True)
class RoundList:
    """A page of the player's rounds, newest first; ``next_before`` continues it."""

    rounds: list[RoundSummary]
    next_before: Annotated[Id | None, Field(description=LAST_PAGE)]


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def adapter(kind: Any) -> TypeAdapter[Any]:
    """The pydantic adapter of a result type (built once: the JSON Schema, dumping, reading)."""
    found = _ADAPTERS.get(kind)
    if found is None:
        found = _ADAPTERS[kind] = TypeAdapter(kind)
    return found


def to_json(value: Any) -> Any:
    """Return a result as the JSON values the API answers (field aliases as keys)."""
    if type(value) is SotaGame:
        # A game's trick log (hundreds of the engine's dicts) is JSON values already, as its
        # type says: pydantic dumps the rest of the game, and the log is answered as it is.
        found = adapter(SotaGame).dump_python(replace(value, tricks=[]), mode="json", by_alias=True)
        found["tricks"] = value.tricks
        return found
    return adapter(type(value)).dump_python(value, mode="json", by_alias=True)


def from_json(kind: type[T], data: Any) -> T:
    """Read back a result that :func:`to_json` wrote (an idempotent use case's stored answer)."""
    found: T = adapter(kind).validate_python(data)
    return found
