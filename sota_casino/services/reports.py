"""Read-only reports for the operator console: the house's results and one player's story.

Nothing here changes the books. The house's reports store the totals of the days that closed
since the last report (``day_totals``), in a short write of their own before they read; each
report then reads in one transaction, so its figures agree with each other. Per-day figures are
by the UTC date a round settled.

Casino War's edge is measured the way the published odds state the theoretical one: per unit of the
**ante**. The main game's result (ante and raise) is kept apart from the tie side bet, whose
edge is far larger and would otherwise blur the comparison. Sota has no closed-form expected
result, so only the realized figure is given.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import date
from datetime import datetime
from fractions import Fraction
from typing import Annotated
from typing import Any
from typing import Final

from pydantic import Field
from sqlalchemy import func
from sqlalchemy import or_
from sqlalchemy import select
from sqlalchemy.orm import Session
from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

from ..core import casino_war
from ..core import fairness
from ..core import odds
from ..core import sota
from ..core.errors import InvalidInput
from ..core.errors import NotFound
from ..core.marks import N_
from ..core.money import CURRENCIES
from ..models import Account
from ..models import AuditCheckpoint
from ..models import AuditEntry
from ..models import Round
from ..models import User
from ..sim import stats
from . import audit
from . import day_totals
from . import fairness as fairness_service
from . import ledger
from . import lists
from . import money
from . import results
from . import rounds
from . import settings
from . import staff
from .context import context_of
from .results import NO_ANTES
from .results import NO_TIE_BETS
from .results import CasinoWarRules
from .results import Count
from .results import Currency
from .results import Day
from .results import Figure
from .results import GameName
from .results import GameRules
from .results import Hex64
from .results import Id
from .results import Open
from .results import TieBetFigure
from .results import figure
from .results import ratio
from .transparency import NOTE_ORIGIN
from .transparency import signed_note
from .tx import in_transaction
from .tx import own_transactions
from .tx import read_only

GAMES = ("casino_war", "sota")
TABLE_HISTORY = 50
GAME_CURRENCY = {"casino_war": "chips", "sota": "sweets"}
#: Fewer settled rounds of a version than this give its realized edge no interval, and so no
#: verdict on the theoretical edge: the normal interval wants a sample of some size, and three
#: rounds the dealer won gave one of no width (100 % to 100 %), which read as the edge off.
INTERVAL_MIN_ROUNDS: Final = 30


@dataclass
class _Tally:
    """Totals of settled rounds, all integers in minor units."""

    rounds: int = 0
    handle: int = 0  # everything staked: ante, tie bet and raise (Sota: the stake)
    house_result: int = 0  # what the house kept: stakes minus payouts
    antes: int = 0  # Casino War antes (Sota: stakes): the base of the edge
    tie_bets: int = 0
    tie_result: int = 0

    def add(self, other: _Tally) -> None:
        self.rounds += other.rounds
        self.handle += other.handle
        self.house_result += other.house_result
        self.antes += other.antes
        self.tie_bets += other.tie_bets
        self.tie_result += other.tie_result

    @property
    def main_result(self) -> int:
        """The house's result without the tie side bet."""
        return self.house_result - self.tie_result

    def figures(self) -> dict[str, Any]:
        """The totals and their edges, as :class:`Tally` names them."""
        return {
            "rounds": self.rounds,
            "handle": self.handle,
            "house_result": self.house_result,
            "antes": self.antes,
            "main_result": self.main_result,
            "tie_bets": self.tie_bets,
            "tie_result": self.tie_result,
            "realized_edge": ratio(self.main_result, self.antes),
            "realized_tie_edge": ratio(self.tie_result, self.tie_bets),
        }


@dataclass(frozen=True, slots=True)
class AccountBalances:
    house: int
    escrow: int
    issuance: int
    players: int


@dataclass(frozen=True, slots=True)
class Tally:
    """Totals of settled rounds."""

    currency: Currency
    rounds: Count
    handle: int
    house_result: int
    antes: int
    main_result: int
    tie_bets: int
    tie_result: int
    realized_edge: Annotated[Figure | None, Field(description=NO_ANTES)]
    realized_tie_edge: Annotated[Figure | None, Field(description=NO_TIE_BETS)]


@dataclass(frozen=True, slots=True)
class GameTally(Tally):
    open_rounds: Count


@dataclass(frozen=True, slots=True)
class DayTally(Tally):
    day: Day
    game: GameName


@dataclass(frozen=True, slots=True)
class CasinoWarTheory:
    rules: CasinoWarRules
    strategy: str
    edge: Figure
    tie_edge: TieBetFigure


@dataclass(frozen=True, slots=True)
class Theoretical:
    casino_war: CasinoWarTheory
    sota: Annotated[None, Field(description="no closed form")]


@dataclass(frozen=True, slots=True)
class LedgerSummary:
    balances: dict[str, AccountBalances]
    games: dict[str, GameTally]
    days: list[DayTally]
    theoretical: Theoretical


@dataclass(frozen=True, slots=True)
class Interval:
    """An estimate and its 95 % interval."""

    value: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class RealizedEdge(Interval):
    exact: str


#: What a figure of the house's math that Sota has no closed form of says of its null.
NO_THEORY: Final = "null for Sota: no closed form"
#: What a figure of tied Casino War rounds says of its null.
NO_TIES: Final = "null when none of its rounds tied (Sota: always)"


@dataclass(frozen=True, slots=True)
class MathVersion:
    game: GameName
    currency: Currency
    rules: Annotated[GameRules, Field(description="the rules its rounds were played under")]
    version: str
    rounds: Count
    first_settled: Day
    last_settled: Day
    antes: int
    main_result: int
    realized_edge: Annotated[
        RealizedEdge | None,
        Field(
            description=f"null for fewer than {INTERVAL_MIN_ROUNDS} rounds: too few for an interval"
        ),
    ]
    theoretical_edge: Annotated[
        Figure | None,
        Field(
            description=f"exact, for the rules and the share of tied antes surrendered; {NO_THEORY}"
        ),
    ]
    always_war_edge: Annotated[Figure | None, Field(description=NO_THEORY)]
    consistent: Annotated[
        bool | None,
        Field(
            description="theoretical inside the interval; null without both (Sota, or too few "
            "rounds)"
        ),
    ]
    ties: Count
    surrenders: Count
    surrendered_ante_share: Annotated[Figure | None, Field(description=NO_TIES)]
    surrender_rate: Annotated[Interval | None, Field(description=NO_TIES)]
    tie_bets: int
    tie_result: int
    realized_tie_edge: Annotated[Figure | None, Field(description=NO_TIE_BETS)]
    theoretical_tie_edge: Annotated[
        Figure | None,
        Field(description="null for Sota, and for rules with no tie bet (tie_payout 0)"),
    ]


@dataclass(frozen=True, slots=True)
class HouseMath:
    since: Annotated[Day | None, Field(description="null if not asked: from the first day")]
    until: Annotated[Day | None, Field(description="null if not asked: to the last day")]
    versions: list[MathVersion]


def _daily_tallies(sums: day_totals.Sums) -> dict[tuple[date, str], _Tally]:
    """The settled rounds' figures per UTC day and game (the rules versions together)."""
    tallies: dict[tuple[date, str], _Tally] = {}
    for (day, game, _), figures in sums.items():
        named = dict(zip(day_totals.FIGURES, figures, strict=True))
        tally = tallies.setdefault((day, game), _Tally())
        tally.add(_Tally(**{name: named[name] for name in _TALLIED}))
    return tallies


#: The figures of :class:`_Tally`, as :data:`day_totals.FIGURES` names them.
_TALLIED: Final = ("rounds", "handle", "house_result", "antes", "tie_bets", "tie_result")


def _now() -> datetime:
    return datetime.now(UTC)


def _balances(session: Session) -> dict[str, AccountBalances]:
    """Per currency: the house, escrow and issuance balances and all players' together."""
    totals = {c: {"house": 0, "escrow": 0, "issuance": 0, "players": 0} for c in CURRENCIES}
    rows = session.execute(
        select(Account.currency, Account.kind, func.sum(Account.balance)).group_by(
            Account.currency, Account.kind
        )
    )
    for currency, kind, total in rows:
        key = "players" if kind == "player" else kind
        totals[currency][key] = int(total or 0)
    return {currency: AccountBalances(**kinds) for currency, kinds in totals.items()}


def _theoretical(session: Session) -> Theoretical:
    """The exact house edge of the Casino War table's present settings, playing always war."""
    table = settings.current(session, "casino_war")
    figures = odds.casino_war_odds(casino_war.TableRules.from_dict(table))
    tie = figures.house_edge_tie_bet
    return Theoretical(
        casino_war=CasinoWarTheory(
            rules=table,
            strategy="always war",
            edge=figure(figures.house_edge_war),
            tie_edge=None if tie is None else figure(tie),
        ),
        sota=None,
    )


@own_transactions
def house_summary(session: Session) -> LedgerSummary:
    """Return balances per currency, the house's results per game and per day, and the edges.

    ``games[g]`` and every ``days[i]`` carry ``rounds``, ``handle``, ``house_result``,
    ``antes``, ``main_result``, ``tie_bets``, ``tie_result`` (minor units of the game's
    currency) and the realized edges as exact ratios; ``theoretical`` has Casino War's exact
    edge at the table's present settings (always war) and ``None`` for Sota.

    The days that closed since the last report are stored first, in a write of their own
    (:func:`day_totals.store_closed_days`); the report itself is one read.
    """
    day_totals.store_closed_days(session, _now())
    return _house_summary(session)


@read_only
def _house_summary(session: Session) -> LedgerSummary:
    per_day = _daily_tallies(day_totals.totals(session))
    per_game = {game: _Tally() for game in GAMES}
    for (_, game), tally in per_day.items():
        per_game[game].add(tally)
    open_rounds = dict(
        session.execute(
            select(Round.game, func.count(Round.id))
            .where(Round.status != "settled")
            .group_by(Round.game)
        )
        .tuples()
        .all()
    )
    return LedgerSummary(
        balances=_balances(session),
        games={
            game: GameTally(
                currency=GAME_CURRENCY[game],
                open_rounds=int(open_rounds.get(game, 0)),
                **tally.figures(),
            )
            for game, tally in per_game.items()
        },
        days=[
            DayTally(
                day=day.isoformat(), game=game, currency=GAME_CURRENCY[game], **tally.figures()
            )
            for (day, game), tally in sorted(per_day.items())
        ],
        theoretical=_theoretical(session),
    )


MATH_COLUMNS: Final = (
    "game",
    "version",
    "rounds",
    "first_settled",
    "last_settled",
    "antes",
    "main_result",
    "realized_edge",
    "realized_low",
    "realized_high",
    "theoretical_edge",
    "always_war_edge",
    "consistent",
    "ties",
    "surrenders",
    "surrender_rate",
    "tie_bets",
    "tie_result",
    "realized_tie_edge",
    "theoretical_tie_edge",
)


def _day(value: str | None, name: str) -> date | None:
    if value is None or value == "":
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InvalidInput(
            N_("%(option)s must be a date written YYYY-MM-DD"), params={"option": name}, field=name
        ) from None


@own_transactions
def house_math(
    session: Session, *, since: str | None = None, until: str | None = None
) -> HouseMath:
    """The house's result against the math, per game and per table-settings version played.

    Each round keeps the rules it was played under, so rounds are grouped by those, never by
    today's settings. Per version: the rounds and their UTC dates, the realized edge on the
    ante with its 95 % interval, the exact theoretical edge of the decisions players made
    (always-war edge moved toward the always-surrender edge by the share of tied antes that
    surrendered), the always-war edge itself, the surrender rate, and the tie bet's realized
    and exact edges. ``consistent`` tells whether the theoretical edge lies in the interval.

    The days that closed since the last report are stored first, in a write of their own
    (:func:`day_totals.store_closed_days`); the report itself is one read.

    :param since: first UTC settlement day (``YYYY-MM-DD``) included; ``until`` the last.
    """
    first, last = _day(since, "since"), _day(until, "until")
    if first and last and first > last:
        raise InvalidInput(N_("since must not be after until"), field="since")
    day_totals.store_closed_days(session, _now())
    return _house_math(session, first, last)


@read_only
def _house_math(session: Session, first: date | None, last: date | None) -> HouseMath:
    groups: dict[tuple[str, str], list[int]] = {}
    days: dict[tuple[str, str], list[date]] = {}
    for (day, game, rules), figures in day_totals.totals(session, first=first, last=last).items():
        named = dict(zip(day_totals.FIGURES, figures, strict=True))
        counts = [named[_COUNTED_AS.get(name, name)] for name in _MATH_COUNTS]
        key = (game, rules)
        held = groups.get(key)
        groups[key] = counts if held is None else [a + b for a, b in zip(held, counts, strict=True)]
        days.setdefault(key, []).append(day)
    versions = [
        _version_row(
            game,
            _MathSums.of(json.loads(rules), counts, min(days[game, rules]), max(days[game, rules])),
        )
        for (game, rules), counts in sorted(groups.items())
    ]
    return HouseMath(
        since=first.isoformat() if first else None,
        until=last.isoformat() if last else None,
        versions=versions,
    )


@dataclass(frozen=True)
class _MathSums:
    """What the database added up for one version: x is the house's main result, a the ante."""

    rules: dict[str, Any]
    rounds: int
    sum_a: int
    sum_x: int
    sum_xx: int
    sum_xa: int
    sum_aa: int
    tie_bets: int
    tie_result: int
    ties: int
    surrenders: int
    tied_antes: int
    surrendered_antes: int
    first_day: date
    last_day: date

    @classmethod
    def of(
        cls, rules: dict[str, Any], counts: Iterable[int], first_day: date, last_day: date
    ) -> _MathSums:
        """The sums from the counts in the order of :data:`_MATH_COUNTS`."""
        named = dict(zip(_MATH_COUNTS, counts, strict=True))
        return cls(rules=rules, first_day=first_day, last_day=last_day, **named)


#: The fields of :class:`_MathSums` that the database counts, in the query's order.
_MATH_COUNTS: Final = (
    "rounds",
    "sum_a",
    "sum_x",
    "sum_xx",
    "sum_xa",
    "sum_aa",
    "tie_bets",
    "tie_result",
    "ties",
    "surrenders",
    "tied_antes",
    "surrendered_antes",
)
#: The names :data:`day_totals.FIGURES` gives the counts of :data:`_MATH_COUNTS` named apart.
_COUNTED_AS: Final = {
    "sum_a": "antes",
    "sum_x": "main_result",
    "sum_xx": "main_result_squares",
    "sum_xa": "main_result_antes",
    "sum_aa": "ante_squares",
}


def _version_label(game: str, rules: dict[str, Any]) -> str:
    if game == "casino_war":
        bonus = rules.get("bonus", "none")
        return f"{rules.get('decks')} decks, tie pays {rules.get('tie_payout')} to 1" + (
            "" if bonus == "none" else f", bonus {bonus}"
        )
    return ", ".join(
        f"{k} {v}" for k, v in sorted(rules.items()) if not isinstance(v, (dict, list))
    )


def _version_row(game: str, sums: _MathSums) -> MathVersion:
    realized = None
    if sums.rounds >= INTERVAL_MIN_ROUNDS and sums.sum_a > 0:
        found = stats.ratio_estimate(
            sums.sum_x, sums.sum_a, sums.sum_xx, sums.sum_xa, sums.sum_aa, sums.rounds
        )
        realized = RealizedEdge(found.value, found.low, found.high, f"{sums.sum_x}/{sums.sum_a}")
    theoretical = always_war = tie_edge = None
    surrender_share = (
        Fraction(sums.surrendered_antes, sums.tied_antes) if sums.tied_antes else Fraction(0)
    )
    if game == "casino_war":
        table = odds.casino_war_odds(casino_war.TableRules.from_dict(sums.rules))
        expected = table.house_edge_war + surrender_share * (
            table.house_edge_surrender - table.house_edge_war
        )
        theoretical, always_war = figure(expected), figure(table.house_edge_war)
        if table.house_edge_tie_bet is not None:
            tie_edge = figure(table.house_edge_tie_bet)
    surrender_rate = None
    if sums.ties:
        rate = stats.proportion_estimate(sums.surrenders, sums.ties)
        surrender_rate = Interval(rate.value, rate.low, rate.high)
    consistent = None
    if realized is not None and theoretical is not None:
        consistent = realized.low <= theoretical["value"] <= realized.high
    return MathVersion(
        game=game,
        currency=GAME_CURRENCY[game],
        rules=sums.rules,
        version=_version_label(game, sums.rules),
        rounds=sums.rounds,
        first_settled=sums.first_day.isoformat(),
        last_settled=sums.last_day.isoformat(),
        antes=sums.sum_a,
        main_result=sums.sum_x,
        realized_edge=realized,
        theoretical_edge=theoretical,
        always_war_edge=always_war,
        consistent=consistent,
        ties=sums.ties,
        surrenders=sums.surrenders,
        surrendered_ante_share=figure(surrender_share) if sums.tied_antes else None,
        surrender_rate=surrender_rate,
        tie_bets=sums.tie_bets,
        tie_result=sums.tie_result,
        realized_tie_edge=ratio(sums.tie_result, sums.tie_bets),
        theoretical_tie_edge=tie_edge,
    )


def math_rows(report: HouseMath) -> Iterator[dict[str, Any]]:
    """The report's versions flattened to one row of plain values each (CSV, JSON Lines)."""

    def value(found: Figure | None) -> float | None:
        return None if found is None else found["value"]

    for version in report.versions:
        realized = version.realized_edge
        yield {
            "game": version.game,
            "version": version.version,
            "rounds": version.rounds,
            "first_settled": version.first_settled,
            "last_settled": version.last_settled,
            "antes": version.antes,
            "main_result": version.main_result,
            "realized_edge": realized and realized.value,
            "realized_low": realized and realized.low,
            "realized_high": realized and realized.high,
            "theoretical_edge": value(version.theoretical_edge),
            "always_war_edge": value(version.always_war_edge),
            "consistent": version.consistent,
            "ties": version.ties,
            "surrenders": version.surrenders,
            "surrender_rate": version.surrender_rate and version.surrender_rate.value,
            "tie_bets": version.tie_bets,
            "tie_result": version.tie_result,
            "realized_tie_edge": value(version.realized_tie_edge),
            "theoretical_tie_edge": value(version.theoretical_tie_edge),
        }


def _transfers(
    session: Session, user_id: int, limit: int, before: int | None = None
) -> list[results.Transfer]:
    """The player's money moves before ``before`` (id), newest first, each with what it did
    to their balance."""
    paging = lists.Paging(cursor=before, limit=limit)
    page: lists.TransferPage = lists.page_within(session, "transfers", paging, user_id=user_id)
    return page.transfers


def _audit_entries(
    session: Session, user_id: int, limit: int, before: int | None = None
) -> list[results.AuditEntry]:
    """The audit entries by or about the user before seq ``before``, newest first."""
    name = f"user:{user_id}"
    query = select(AuditEntry).where(or_(AuditEntry.subject == name, AuditEntry.actor == name))
    if before is not None:
        query = query.where(AuditEntry.seq < before)
    rows = session.scalars(query.order_by(AuditEntry.seq.desc()).limit(limit))
    return [audit.entry_dict(row) for row in rows]


def _next(keys: Sequence[int], limit: int) -> int | None:
    """The cursor of the page after one of these ``keys`` (its last), if the page was full."""
    return keys[-1] if len(keys) == limit else None


@dataclass(frozen=True, slots=True)
class AdjustmentTotal:
    """The adjustments one operator made in one currency."""

    actor: Annotated[str, Field(description="the operator, as the audit log names them (user:7)")]
    name: Annotated[str, Field(description="the operator's username")]
    currency: Currency
    count: Count
    amount: int


class CurrencyTotals(TypedDict):
    """A player's settled rounds in one currency, and the adjustments made to them."""

    rounds: Count
    handle: Annotated[Count, Field(description="everything staked")]
    net: Annotated[int, Field(description="the player's net result")]
    adjusted: Annotated[int, Field(description="the adjustments' sum, credits less debits")]


@dataclass(frozen=True, slots=True)
class PlayerTotals:
    currencies: Annotated[
        dict[Currency, CurrencyTotals], Field(description="every currency, in its minor units")
    ]
    adjustments: list[AdjustmentTotal]


#: What a cursor of a player's overview, null after a page not full, says of its null.
NOT_FULL: Final = "null when the list holds fewer than limit: there is no next page"


@dataclass(frozen=True, slots=True)
class PlayerCursors:
    """Where the next page of each list starts (its ``*_before`` query parameter)."""

    rounds_before: Annotated[Id | None, Field(description=NOT_FULL)]
    transfers_before: Annotated[Id | None, Field(description=NOT_FULL)]
    audit_before: Annotated[Id | None, Field(description=NOT_FULL)]


@dataclass(frozen=True, slots=True)
class PlayerOverview:
    user: results.AccountSince
    balances: results.Balances
    totals: PlayerTotals
    next: PlayerCursors
    rounds: list[results.RoundSummary]
    transfers: list[results.Transfer]
    seed_pairs: list[results.SeedPairSummary]
    audit: list[results.AuditEntry]


@read_only
def player_overview(
    session: Session,
    user_id: int,
    *,
    limit: int = 50,
    rounds_before: int | None = None,
    transfers_before: int | None = None,
    audit_before: int | None = None,
) -> PlayerOverview:
    """Return one user's balances, totals, rounds, money moves, seed pairs and audit entries.

    Each list is a page, newest first, before its cursor (``*_before``: an id or seq); the
    overview says where each next page starts (``next``).

    :param limit: how many rounds, transfers and audit entries a page holds.
    :raises NotFound: if there is no such user.
    """
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(N_("no user %(id)s"), params={"id": user_id})
    round_query = select(Round).where(Round.user_id == user_id)
    if rounds_before is not None:
        round_query = round_query.where(Round.id < rounds_before)
    recent = session.scalars(round_query.order_by(Round.id.desc()).limit(limit))
    round_list = [rounds.summary(r) for r in recent]
    transfers = _transfers(session, user_id, limit, transfers_before)
    entries = _audit_entries(session, user_id, limit, audit_before)
    return PlayerOverview(
        user=results.AccountSince(
            id=user.id,
            username=user.username,
            role=user.role,
            locked=user.locked,
            created_at=fairness.format_time(user.created_at),
        ),
        balances=ledger.player_balances(session, user_id),
        totals=_player_totals(session, user_id),
        rounds=round_list,
        transfers=transfers,
        seed_pairs=fairness_service.pairs_of(session, user_id),
        audit=entries,
        next=PlayerCursors(
            rounds_before=_next([r.id for r in round_list], limit),
            transfers_before=_next([t["id"] for t in transfers], limit),
            audit_before=_next([e["seq"] for e in entries], limit),
        ),
    )


def _player_totals(session: Session, user_id: int) -> PlayerTotals:
    """Per currency: settled rounds, handle and the player's net; and the adjustments made to
    them, per operator (named), from the audit log."""
    per_currency = {c: CurrencyTotals(rounds=0, handle=0, net=0, adjusted=0) for c in CURRENCIES}
    for currency, count, handle, net in session.execute(
        select(Round.currency, func.count(Round.id), func.sum(Round.staked), func.sum(Round.net))
        .where(Round.user_id == user_id, Round.status == "settled")
        .group_by(Round.currency)
    ):
        per_currency[currency] = CurrencyTotals(
            rounds=int(count), handle=int(handle), net=int(net), adjusted=0
        )
    by_operator: dict[tuple[str, str], dict[str, int]] = {}
    for actor, data in session.execute(
        select(AuditEntry.actor, AuditEntry.data).where(
            AuditEntry.action == "money.adjust", AuditEntry.subject == f"user:{user_id}"
        )
    ):
        assert actor is not None  # an adjustment is logged as its operator's (user:7)
        moved = json.loads(data)
        key = (actor, moved["currency"])
        found = by_operator.setdefault(key, {"count": 0, "amount": 0})
        found["count"] += 1
        found["amount"] += int(moved["amount"])
        per_currency[moved["currency"]]["adjusted"] += int(moved["amount"])
    names = actor_names(session, {actor for actor, _ in by_operator})
    return PlayerTotals(
        currencies=per_currency,
        adjustments=[
            AdjustmentTotal(actor, names[actor], currency, **figures)
            for (actor, currency), figures in sorted(by_operator.items(), key=str)
        ],
    )


@read_only
def people(session: Session, actors: set[str | None]) -> dict[str | None, str]:
    """The names of actors, for a page that shows them (see :func:`actor_names`)."""
    return actor_names(session, actors)


@in_transaction
def actor_names(session: Session, actors: set[str | None]) -> dict[str | None, str]:
    """Map ``user:N`` actors to their usernames (others, such as ``system``, to themselves)."""
    ids = {
        int(a.split(":", 1)[1]) for a in actors if a and a.startswith("user:") and a[5:].isdigit()
    }
    found = dict(
        session.execute(select(User.id, User.username).where(User.id.in_(ids))).tuples().all()
    )
    names: dict[str | None, str] = {}
    for actor in actors:
        if actor and actor.startswith("user:") and actor[5:].isdigit():
            names[actor] = found.get(int(actor[5:]), actor)
        elif actor:
            names[actor] = actor
    return names


@dataclass(frozen=True, slots=True)
class AdjustmentPreview:
    """What an adjustment would do, before it is applied: the balance ``before`` and ``after``
    in minor units, and why it waits for a second operator, if it does."""

    user: results.User
    currency: str
    amount: int
    reason: str
    before: int
    after: int
    needs_approval: money.OverAloneLimit | None


@read_only
def adjustment_preview(
    session: Session,
    actor_id: int,
    user_id: int,
    currency: object,
    amount: object,
    reason: object,
) -> AdjustmentPreview:
    """Return what an adjustment by ``actor_id`` would do, checked exactly as it will be,
    changing nothing.

    :raises InvalidInput: for a bad currency, amount or reason.
    :raises NotFound: if the user is not a player.
    :raises InsufficientFunds: if a debit would take the balance below zero.
    """
    currency, amount, reason = money.check_adjustment(currency, amount, reason)
    user = staff.target_player(session, user_id)
    before = ledger.player_balances(session, user_id).of(currency)
    money.refuse_overdraft(before, currency, amount)
    return AdjustmentPreview(
        results.User(user.id, user.username, user.role),
        currency,
        amount,
        reason,
        before,
        before + amount,
        money.needs_approval(session, actor_id, currency, amount),
    )


@dataclass(frozen=True, slots=True)
class SignedNote:
    origin: str
    key_name: str
    public_key_hex: Hex64
    size: Id
    note: Annotated[str, Field(description="C2SP tlog-checkpoint signed note")]


@dataclass(frozen=True, slots=True)
class CheckpointNote:
    """The latest checkpoint as a signed note (none before the first checkpoint)."""

    note: Annotated[SignedNote | None, Field(description="null before the first checkpoint")]


@read_only
def checkpoint_note(session: Session) -> CheckpointNote:
    """Return the latest checkpoint in the C2SP tlog-checkpoint signed-note form (or None).

    The note is signed on demand with the service's key; it states the same size and root as
    the stored checkpoint, whose own signature covers the JSON document.
    """
    row = session.scalar(select(AuditCheckpoint).order_by(AuditCheckpoint.size.desc()).limit(1))
    if row is None:
        return CheckpointNote(None)
    ctx = context_of(session)
    note = signed_note(ctx.signing_key, row.size, row.root)
    return CheckpointNote(SignedNote(NOTE_ORIGIN, NOTE_ORIGIN, ctx.public_key_hex, row.size, note))


@dataclass(frozen=True, slots=True)
class TableUpdate:
    """A ``table.updated`` entry of the audit log, its people by name."""

    entry: results.AuditEntry
    actor_name: str | None  # as the entry's actor: None only for an entry without one
    approved_by_name: str | None  # None: applied without a second operator


@dataclass(frozen=True, slots=True)
class Tables:
    """Every table's present settings and the latest changes to them, newest first."""

    settings: dict[str, Open]
    presets: tuple[str, ...]
    history: list[TableUpdate]
    four_eyes: bool  # a change waits for a second operator


@read_only
def tables(session: Session) -> Tables:
    """Return every table's present settings and the latest changes to them, newest first."""
    changes = session.scalars(
        select(AuditEntry)
        .where(AuditEntry.action == "table.updated")
        .order_by(AuditEntry.seq.desc())
        .limit(TABLE_HISTORY)
    )
    entries = [audit.entry_dict(row) for row in changes]
    approvers = [(e["data"].get("approval") or {}).get("approved_by") for e in entries]
    names = actor_names(session, {e["actor"] for e in entries} | set(approvers))
    history = [
        TableUpdate(entry, names.get(entry["actor"]), names.get(approver))
        for entry, approver in zip(entries, approvers, strict=True)
    ]
    return Tables(
        {name: settings.current(session, name) for name in settings.TABLES},
        tuple(sota.PRESETS),
        history,
        settings.needs_approval(session),
    )
