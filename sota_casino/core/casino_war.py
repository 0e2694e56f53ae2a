"""Casino War (as /rules/casino-war tells it) as a pure state machine over a card stream.

``deal`` opens a round: it is settled at once, or waits for the player's decision on a tie;
``decide`` settles it by surrender or war. Card positions never depend on the bet or the
decision: card 0 is the player's, card 1 the dealer's, cards ``2..burn+1`` are burned and
cards ``burn+2`` and ``burn+3`` are the war cards.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import fields
from typing import Any
from typing import Final
from typing import NamedTuple

from .cards import Card
from .cards import rank_value
from .errors import DecisionNotDue
from .errors import InvalidBet
from .errors import InvalidInput
from .errors import InvalidRules
from .errors import RoundSettled
from .errors import refuse_unknown_options
from .marks import N_

GAME: Final = "casino_war"
CHIP: Final = 100  # minor units per chip; bets are whole chips
AWAITING_DECISION: Final = "awaiting_decision"
SETTLED: Final = "settled"
WAR: Final = "war"
SURRENDER: Final = "surrender"
CHOICES: Final = (WAR, SURRENDER)
BONUS_MODES: Final = ("none", "ante")
OUTCOMES: Final = ("win", "lose", "surrender", "war_win", "war_tie", "war_lose")

#: Returns the first ``k`` cards of the round's shuffled shoe (``PartialShuffle.prefix``).
Draw = Callable[[int], Sequence[Card]]

RANGES: Final[dict[str, tuple[int, int]]] = {
    "decks": (1, 8),
    "tie_payout": (0, 30),
    "burn": (0, 5),
    "min_bet": (CHIP, 10**12),
    "max_bet": (CHIP, 10**12),
}


def _int_option(name: str, value: object) -> int:
    low, high = RANGES[name]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidRules(
            N_("%(option)s must be a whole number from %(low)s to %(high)s"),
            params={"option": name, "low": low, "high": high},
            option=name,
        )
    return value


@dataclass(frozen=True, slots=True)
class TableRules:
    """A Casino War table's settings, with the house defaults."""

    decks: int = 6
    min_bet: int = 100
    max_bet: int = 50_000
    tie_payout: int = 10
    burn: int = 3
    bonus: str = "none"

    def __post_init__(self) -> None:
        for name in RANGES:
            _int_option(name, getattr(self, name))
        if self.bonus not in BONUS_MODES:
            raise InvalidRules(
                N_("%(option)s must be one of: %(valid)s"),
                params={"option": "bonus", "valid": ", ".join(BONUS_MODES)},
                option="bonus",
            )
        if self.min_bet % CHIP or self.max_bet % CHIP or self.min_bet > self.max_bet:
            raise InvalidRules(
                N_("%(option)s and %(other)s must be whole chips with %(option)s <= %(other)s"),
                params={"option": "min_bet", "other": "max_bet"},
                option="min_bet",
            )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableRules:
        """Build rules from a mapping, defaults for what is missing.

        :raises InvalidRules: on an unknown option (naming the valid ones) or a bad value.
        """
        if not isinstance(data, Mapping):
            raise InvalidRules(N_("table rules must be an object"))
        refuse_unknown_options(data, [f.name for f in fields(cls)])
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        """Return every option, defaults included, as plain JSON values."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def cards_for_war(self) -> int:
        """How many cards a round that goes to war uses."""
        return self.burn + 4

    def check_bet(self, bet: object, tie_bet: object = 0) -> tuple[int, int]:
        """Return ``(bet, tie_bet)`` if they are valid at this table.

        Both are integers in minor units and whole chips; the ante is within the limits; the tie
        bet is 0 or within the same limits, and only where a tie bet is offered.

        :raises InvalidBet: saying which amount is wrong and why.
        """
        for name, value in (("bet", bet), ("tie_bet", tie_bet)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidBet(
                    N_("%(name)s must be an integer in hundredths of a chip"),
                    params={"name": name},
                    field=name,
                )
            if value % CHIP:
                raise InvalidBet(
                    N_("%(name)s must be whole chips (a multiple of %(chip)s)"),
                    params={"name": name, "chip": CHIP},
                    field=name,
                )
        assert isinstance(bet, int) and isinstance(tie_bet, int)
        if not self.min_bet <= bet <= self.max_bet:
            raise self._outside(N_("bet must be from %(low)s to %(high)s (minor units)"), "bet")
        if tie_bet and self.tie_payout == 0:
            raise self._outside(N_("this table offers no tie bet"), "tie_bet")
        if tie_bet and not self.min_bet <= tie_bet <= self.max_bet:
            raise self._outside(N_("tie_bet must be 0 or from %(low)s to %(high)s"), "tie_bet")
        return bet, tie_bet

    def _outside(self, message: str, field: str) -> InvalidBet:
        """A refused amount, with the limits it broke (a page words them in chips)."""
        return InvalidBet(
            message,
            params={"low": self.min_bet, "high": self.max_bet},
            field=field,
            min_bet=self.min_bet,
            max_bet=self.max_bet,
            tie_payout=self.tie_payout,
        )


class WarRound(NamedTuple):
    """One Casino War round: what was staked, the cards used so far, and how it stands.

    An immutable named tuple rather than a frozen dataclass: every round builds one or two,
    and a tuple is built several times faster.

    The round is settled once it has an ``outcome``; its status and raise follow from the
    outcome and the decision, so they are derived rather than stored and can never disagree.
    """

    rules: TableRules
    bet: int
    tie_bet: int
    cards: tuple[Card, ...]
    actions: tuple[str, ...] = ()
    outcome: str | None = None
    payout: int = 0  # credited back to the player at settlement, 0 on a loss

    @property
    def status(self) -> str:
        """``"awaiting_decision"`` until the round has an outcome, then ``"settled"``."""
        return AWAITING_DECISION if self.outcome is None else SETTLED

    @property
    def raise_amount(self) -> int:
        """The raise, equal to the ante, once the player went to war."""
        return self.bet if WAR in self.actions else 0

    @property
    def player_card(self) -> Card:
        return self.cards[0]

    @property
    def dealer_card(self) -> Card:
        return self.cards[1]

    @property
    def is_tie(self) -> bool:
        return rank_value(self.cards[0]) == rank_value(self.cards[1])

    @property
    def tie_bet_won(self) -> bool:
        return self.tie_bet > 0 and self.is_tie

    @property
    def tie_bet_payout(self) -> int:
        """What the tie bet returns: stake plus winnings on a tie, else nothing."""
        return self.tie_bet * (self.rules.tie_payout + 1) if self.tie_bet_won else 0

    @property
    def stakes(self) -> dict[str, int]:
        return {"bet": self.bet, "tie_bet": self.tie_bet, "raise": self.raise_amount}

    @property
    def staked(self) -> int:
        return self.bet + self.tie_bet + self.raise_amount

    @property
    def net(self) -> int:
        """The player's net result; meaningful once settled."""
        return self.payout - self.staked

    @property
    def war(self) -> dict[str, Any] | None:
        """The burned and war cards, once the player went to war."""
        if len(self.cards) <= 2:
            return None
        burn = self.rules.burn
        return {
            "burned": list(self.cards[2 : 2 + burn]),
            "player_card": self.cards[2 + burn],
            "dealer_card": self.cards[3 + burn],
        }

    def receipt_outcome(self) -> dict[str, Any]:
        """The ``outcome`` field of the round receipt."""
        return {"result": self.outcome, "tie_bet_won": self.tie_bet_won, "net": self.net}


def deal(rules: TableRules, draw: Draw, bet: int, tie_bet: int = 0) -> WarRound:
    """Open a round: deal the first two cards and settle unless they tie.

    :param draw: gives the first ``k`` cards of the round's shuffled shoe.
    :raises InvalidBet: if the amounts are not valid at this table.
    """
    bet, tie_bet = rules.check_bet(bet, tie_bet)
    cards = tuple(draw(2))
    player, dealer = rank_value(cards[0]), rank_value(cards[1])
    if player == dealer:
        return WarRound(rules, bet, tie_bet, cards)
    # Settled at once; without a tie the tie bet is lost, so only the ante can pay. (Positional
    # arguments: this is the hot path of every round.)
    if player > dealer:
        return WarRound(rules, bet, tie_bet, cards, (), "win", 2 * bet)
    return WarRound(rules, bet, tie_bet, cards, (), "lose", 0)


def decide(round_: WarRound, choice: str, draw: Draw) -> WarRound:
    """Settle a tied round by the player's ``choice``: ``"surrender"`` or ``"war"``.

    Going to war raises an amount equal to the ante (the caller checks the balance).

    :param draw: gives the first ``k`` cards of the same shuffled shoe that :func:`deal` used.
    :raises RoundSettled: if the round is settled already (a decision on a round that did not
        tie, or a second decision).
    :raises InvalidInput: if ``choice`` is not one of the two decisions.
    :raises ValueError: if ``draw`` deals other first cards than the round's (another shoe).
    """
    if round_.status == SETTLED:
        raise RoundSettled(N_("this round is already settled; no decision is due"))
    if choice not in CHOICES:
        raise InvalidInput(
            N_("%(option)s must be one of: %(valid)s"),
            params={"option": "choice", "valid": ", ".join(CHOICES)},
            field="choice",
        )
    bet, rules = round_.bet, round_.rules
    tie_bet_payout = round_.tie_bet_payout
    if choice == SURRENDER:
        return round_._replace(
            actions=(SURRENDER,),
            outcome="surrender",
            payout=bet // 2 + tie_bet_payout,
        )
    cards = tuple(draw(rules.cards_for_war))
    if cards[:2] != round_.cards:
        # A resumed round must deal its war cards from its own seeds and nonce.
        raise ValueError("the war cards come from another shoe than the round's first cards")
    player, dealer = rank_value(cards[-2]), rank_value(cards[-1])
    if player > dealer:
        outcome, payout = "war_win", 3 * bet
    elif player == dealer:
        outcome, payout = "war_tie", (4 if rules.bonus == "ante" else 3) * bet
    else:
        outcome, payout = "war_lose", 0
    return round_._replace(
        cards=cards,
        actions=(WAR,),
        outcome=outcome,
        payout=payout + tie_bet_payout,
    )


def play(rules: TableRules, draw: Draw, bet: int, tie_bet: int = 0, choice: str = WAR) -> WarRound:
    """Play a whole round, taking ``choice`` if the first cards tie."""
    opened = deal(rules, draw, bet, tie_bet)
    return opened if opened.status == SETTLED else decide(opened, choice, draw)


def replay(
    rules: TableRules, draw: Draw, stakes: Mapping[str, int], actions: Sequence[str]
) -> WarRound:
    """Replay a round from its stakes and actions, as a verifier does.

    :raises InvalidBet: if the stakes are not valid at this table.
    :raises InvalidAction: if the actions do not fit the cards (a decision on a non-tie, or
        a tie without exactly one decision).
    :raises InvalidInput: if the decision is not one of the two choices.
    """
    opened = deal(rules, draw, stakes.get("bet", 0), stakes.get("tie_bet", 0))
    if opened.status == SETTLED:
        if actions:
            raise RoundSettled("a decision was recorded on a round that did not tie")
        return opened
    if len(actions) != 1:
        raise DecisionNotDue("a tied round needs exactly one decision")
    return decide(opened, actions[0], draw)
