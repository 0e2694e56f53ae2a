"""A player's own statistics: what they played, how it went, and what the odds said.

Read-only: a few grouped queries over the player's settled rounds and postings, in one
transaction, so the figures agree with each other. Per-day figures are by the UTC date a round
settled, as in the house's reports.

Casino War's edge is per unit of the **ante**, the tie side bet apart (as the published odds and the
house's reports measure it). The exact edge "for the settings played" weighs each table setting
by the antes staked under it, and plays a tie the way the player did: a player who went to war on
a share ``f`` of their ties (at that setting) is compared with the exact edge of going to war on
``f`` of ties. The 95 % interval is where the realized edge falls 95 times in 100 for a player
of exactly these rounds (normal approximation, from the exact variance of each round). Sota's
payouts take no house edge: fair odds for seats equally likely to win, which two seats under
every named rule set are; other seat counts and gather orders can favour a seat, the player's
clearly under ``gather: table`` (docs/rules.md gives the simulated figures).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from dataclasses import field
from fractions import Fraction
from typing import Annotated
from typing import Final

from pydantic import Field
from sqlalchemy import Text
from sqlalchemy import case
from sqlalchemy import cast
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core import casino_war
from ..core import fairness
from ..core import odds
from ..core import sota
from ..core.errors import Forbidden
from ..core.errors import NotFound
from ..core.marks import N_
from ..core.money import CURRENCIES
from ..models import Account
from ..models import Posting
from ..models import Round
from ..models import Transfer
from ..models import User
from .results import NO_ANTES
from .results import NO_TIE_BETS
from .results import Bonus
from .results import Count
from .results import Currency
from .results import Day
from .results import Decks
from .results import Figure
from .results import GameName
from .results import Id
from .results import OneOf
from .results import TieBetFigure
from .results import TiePayout
from .results import Time
from .results import WarOutcome
from .results import figure
from .results import ratio
from .tx import read_only

SETTLED: Final = "settled"
GAME_CURRENCY: Final = {"casino_war": "chips", "sota": "sweets"}
#: The confidence of the interval of the realized edge, and its two-sided normal quantile.
CONFIDENCE: Final = 0.95
Z_95: Final = 1.959963984540054
#: The balance history keeps at most this many points per currency (evenly spread, last kept).
BALANCE_POINTS: Final = 240
WARS: Final = ("war_win", "war_tie", "war_lose")


@dataclass(frozen=True, slots=True)
class EdgeInterval:
    """Where the realized edge falls 95 times in 100 for a player of exactly these rounds."""

    confidence: Annotated[float, OneOf((CONFIDENCE,))]
    low: float
    high: float
    inside: bool


@dataclass(frozen=True, slots=True)
class WarSetting:
    """The player's Casino War rounds at one table setting, against its exact odds."""

    decks: Decks
    bonus: Bonus
    tie_payout: TiePayout
    rounds: Count
    antes: Count
    ties: Count
    war_share: Figure
    house_edge_war: Figure
    house_edge_surrender: Figure
    expected_edge: Figure
    tie_bet_edge: TieBetFigure


@dataclass(frozen=True, slots=True)
class GameStats:
    currency: Currency
    rounds: Annotated[Count, Field(description="settled rounds (Sota: games)")]
    open_rounds: Annotated[Count, Field(description="rounds waiting for a decision or move")]
    handle: Annotated[Count, Field(description="everything staked, in the game's minor units")]
    net: Annotated[int, Field(description="the player's net result")]
    antes: Annotated[Count, Field(description="antes (Sota: stakes): the base of the edge")]
    tie_net: int
    realized_edge: Annotated[Figure | None, Field(description=NO_ANTES)]
    expected_edge: Annotated[Figure | None, Field(description=NO_ANTES)]


#: Settled rounds per outcome, every outcome present.
OutcomeCounts = Annotated[
    dict[WarOutcome, Count], Field(json_schema_extra={"required": list(casino_war.OUTCOMES)})
]


@dataclass(frozen=True, slots=True)
class WarStats(GameStats):
    """``expected_edge`` plays each tie as the player did (the share of ties taken to war, per
    table setting); ``interval`` is where the realized edge falls 95 times in 100."""

    main_net: Annotated[int, Field(description="the net result without the tie bet")]
    tie_bets: Count
    outcomes: OutcomeCounts
    wars: Count
    surrenders: Count
    interval: Annotated[EdgeInterval | None, Field(description=NO_ANTES)]
    realized_tie_edge: Annotated[Figure | None, Field(description=NO_TIE_BETS)]
    expected_tie_edge: Annotated[Figure | None, Field(description=NO_TIE_BETS)]
    settings: list[WarSetting]


@dataclass(frozen=True, slots=True)
class SeatsStats:
    seats: Annotated[int, OneOf(sota.SEAT_COUNTS)]
    teams: bool
    games: Count
    wins: Count
    draws: Count
    losses: Count
    net: int


@dataclass(frozen=True, slots=True)
class SotaStats(GameStats):
    """``expected_edge`` is the payouts' edge, 0: fair odds for seats equally likely to win
    (a gather by seat order, ``gather: table``, favours the player's seat: docs/rules.md)."""

    by_seats: list[SeatsStats]


@dataclass(frozen=True, slots=True)
class DayStats:
    day: Day
    game: GameName
    currency: Currency
    rounds: Id
    handle: Count
    net: int


@dataclass(frozen=True, slots=True)
class BalancePoint:
    time: Time
    balance: Count


BalanceLine = Annotated[list[BalancePoint], Field(max_length=BALANCE_POINTS)]


@dataclass(frozen=True, slots=True)
class BalanceHistory:
    """The balance after each money move, thinned evenly to at most 240 points."""

    chips: BalanceLine
    sweets: BalanceLine


@dataclass(frozen=True, slots=True)
class PlayerStats:
    casino_war: WarStats
    sota: SotaStats
    days: Annotated[list[DayStats], Field(description="per UTC day a round settled, and game")]
    balance_history: BalanceHistory


@dataclass
class _Setting:
    """Casino War rounds played at one table setting (decks, bonus, tie payout)."""

    decks: int
    bonus: str
    tie_payout: int
    rounds: int = 0
    antes: int = 0
    antes_squared: int = 0  # for the variance of the realized edge
    tie_bets: int = 0
    outcomes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(casino_war.OUTCOMES, 0))

    @property
    def wars(self) -> int:
        return sum(self.outcomes[o] for o in WARS)

    @property
    def war_share(self) -> Fraction:
        """The share of ties the player went to war on; with no tie yet, always war."""
        ties = self.wars + self.outcomes["surrender"]
        return Fraction(self.wars, ties) if ties else Fraction(1)

    def edge_and_variance(self) -> tuple[Fraction, Fraction]:
        return odds.mixed_edge_and_variance(self.decks, self.bonus, self.war_share)

    def tie_bet_edge(self) -> Fraction | None:
        return odds.tie_bet_house_edge(self.decks, self.tie_payout) if self.tie_payout else None

    def shown(self) -> WarSetting:
        edge, _ = self.edge_and_variance()
        tie_edge = self.tie_bet_edge()
        return WarSetting(
            decks=self.decks,
            bonus=self.bonus,
            tie_payout=self.tie_payout,
            rounds=self.rounds,
            antes=self.antes,
            ties=self.wars + self.outcomes["surrender"],
            war_share=figure(self.war_share),
            house_edge_war=figure(odds.house_edge(self.decks, casino_war.WAR, self.bonus)),
            house_edge_surrender=figure(
                odds.house_edge(self.decks, casino_war.SURRENDER, self.bonus)
            ),
            expected_edge=figure(edge),
            tie_bet_edge=None if tie_edge is None else figure(tie_edge),
        )


def _war_settings(session: Session, user_id: int) -> list[_Setting]:
    """The player's settled Casino War rounds, added up per table setting and outcome."""
    result = Round.outcome["result"].as_string()
    query = (
        select(
            cast(Round.rules, Text),
            result,
            func.count(Round.id),
            func.sum(Round.ante),
            func.sum(Round.ante * Round.ante),
            func.sum(Round.tie_bet),
        )
        .where(Round.user_id == user_id, Round.game == "casino_war", Round.status == SETTLED)
        .group_by(cast(Round.rules, Text), result)
    )
    settings: dict[tuple[int, str, int], _Setting] = {}
    for rules_text, outcome, count, antes, squares, tie_bets in session.execute(query):
        rules = casino_war.TableRules.from_dict(json.loads(rules_text))
        key = (rules.decks, rules.bonus, rules.tie_payout)
        setting = settings.setdefault(key, _Setting(*key))
        setting.rounds += int(count)
        setting.antes += int(antes)
        setting.antes_squared += int(squares)
        setting.tie_bets += int(tie_bets)
        setting.outcomes[outcome] += int(count)
    return [settings[key] for key in sorted(settings)]


def _totals(session: Session, user_id: int, game: str) -> dict[str, int]:
    """Settled rounds, handle, net and tie-bet figures of one game; open rounds apart."""
    settled = session.execute(
        select(
            func.count(Round.id),
            func.coalesce(func.sum(Round.staked), 0),
            func.coalesce(func.sum(Round.net), 0),
            func.coalesce(func.sum(Round.ante), 0),
            func.coalesce(func.sum(Round.tie_result), 0),
        ).where(Round.user_id == user_id, Round.game == game, Round.status == SETTLED)
    ).one()
    still_open = session.scalar(
        select(func.count(Round.id)).where(
            Round.user_id == user_id, Round.game == game, Round.status != SETTLED
        )
    )
    rounds, handle, net, antes, house_tie_result = (int(x) for x in settled)
    return {
        "rounds": rounds,
        "open_rounds": int(still_open or 0),
        "handle": handle,
        "net": net,
        "antes": antes,
        "tie_net": -house_tie_result,
    }


def _casino_war(session: Session, user_id: int) -> WarStats:
    totals = _totals(session, user_id, "casino_war")
    settings = _war_settings(session, user_id)
    antes = totals["antes"]
    main_net = totals["net"] - totals["tie_net"]
    outcomes = {o: sum(s.outcomes[o] for s in settings) for o in casino_war.OUTCOMES}
    expected = interval = None
    if antes:
        edges = [(s, *s.edge_and_variance()) for s in settings]
        exact = sum((s.antes * edge for s, edge, _ in edges), Fraction(0)) / antes
        spread = math.sqrt(sum(s.antes_squared * var for s, _, var in edges)) / antes
        expected = figure(exact)
        realized = float(Fraction(-main_net, antes))
        low, high = float(exact) - Z_95 * spread, float(exact) + Z_95 * spread
        interval = EdgeInterval(CONFIDENCE, low, high, inside=low <= realized <= high)
    tie_bets = sum(s.tie_bets for s in settings)
    tie_expected = sum(
        (s.tie_bets * (s.tie_bet_edge() or 0) for s in settings if s.tie_bets), Fraction(0)
    )
    return WarStats(
        currency="chips",
        **totals,
        main_net=main_net,
        tie_bets=tie_bets,
        outcomes=outcomes,
        wars=sum(outcomes[o] for o in WARS),
        surrenders=outcomes["surrender"],
        realized_edge=ratio(-main_net, antes),
        expected_edge=expected,
        interval=interval,
        realized_tie_edge=ratio(-totals["tie_net"], tie_bets),
        expected_tie_edge=ratio(tie_expected, tie_bets),
        settings=[s.shown() for s in settings],
    )


def _sota(session: Session, user_id: int) -> SotaStats:
    totals = _totals(session, user_id, "sota")
    seats, teams = Round.rules["seats"].as_integer(), Round.rules["teams"].as_boolean()
    result = case((Round.net > 0, "wins"), (Round.net == 0, "draws"), else_="losses")
    rows = session.execute(
        select(seats, teams, result, func.count(Round.id), func.sum(Round.net))
        .where(Round.user_id == user_id, Round.game == "sota", Round.status == SETTLED)
        .group_by(seats, teams, result)
    )
    by_seats: dict[tuple[int, bool], dict[str, int]] = defaultdict(
        lambda: {"games": 0, "wins": 0, "draws": 0, "losses": 0, "net": 0}
    )
    for seat_count, team_play, outcome, count, net in rows:
        line = by_seats[(int(seat_count), bool(team_play))]
        line["games"] += int(count)
        line[outcome] += int(count)
        line["net"] += int(net)
    return SotaStats(
        currency="sweets",
        **totals,
        realized_edge=ratio(-totals["net"], totals["antes"]),
        expected_edge=figure(Fraction(0)) if totals["antes"] else None,
        by_seats=[
            SeatsStats(seats=seat_count, teams=team_play, **line)
            for (seat_count, team_play), line in sorted(by_seats.items())
        ],
    )


def _days(session: Session, user_id: int) -> list[DayStats]:
    rows = session.execute(
        select(
            Round.settled_on,
            Round.game,
            func.count(Round.id),
            func.sum(Round.staked),
            func.sum(Round.net),
        )
        .where(Round.user_id == user_id, Round.status == SETTLED)
        .group_by(Round.settled_on, Round.game)
        .order_by(Round.settled_on, Round.game)
    )
    return [
        DayStats(day.isoformat(), game, GAME_CURRENCY[game], int(count), int(handle), int(net))
        for day, game, count, handle, net in rows
    ]


def _thin(points: list[BalancePoint], most: int) -> list[BalancePoint]:
    """Keep at most ``most`` points, evenly spread, always the first and the last."""
    if len(points) <= most:
        return points
    step = (len(points) - 1) / (most - 1)
    return [points[round(i * step)] for i in range(most)]


def _balance_history(session: Session, user_id: int) -> BalanceHistory:
    """The player's balance after each money move, per currency (thinned for drawing)."""
    rows = session.execute(
        select(Account.currency, Transfer.created_at, Posting.amount)
        .join(Posting, Posting.account_id == Account.id)
        .join(Transfer, Transfer.id == Posting.transfer_id)
        .where(Account.user_id == user_id, Account.kind == "player")
        .order_by(Transfer.id)
    )
    history: dict[str, list[BalancePoint]] = {currency: [] for currency in CURRENCIES}
    balance = dict.fromkeys(CURRENCIES, 0)
    for currency, at, amount in rows:
        balance[currency] += int(amount)
        history[currency].append(BalancePoint(fairness.format_time(at), balance[currency]))
    return BalanceHistory(**{c: _thin(points, BALANCE_POINTS) for c, points in history.items()})


@read_only
def player_stats(session: Session, user_id: int) -> PlayerStats:
    """Return a player's statistics over their own rounds (``GET /api/v1/me/stats``).

    ``casino_war`` and ``sota`` carry the settled rounds, the handle, the net result, open
    rounds, and the realized edge beside the exact one; ``days`` the net per UTC day and game;
    ``balance_history`` the balance after each money move (at most 240 points per currency).

    :raises NotFound: if there is no such user.
    :raises Forbidden: for staff, who play no rounds.
    """
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(N_("no user %(id)s"), params={"id": user_id})
    if user.role != "player":
        raise Forbidden(N_("statistics are kept for players; staff accounts play no rounds"))
    return PlayerStats(
        casino_war=_casino_war(session, user_id),
        sota=_sota(session, user_id),
        days=_days(session, user_id),
        balance_history=_balance_history(session, user_id),
    )
