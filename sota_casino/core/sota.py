"""Sota (classic War, Krig, Battle; docs/rules.md §2) as a pure, replayable engine.

:func:`play_game` plays a whole game from the round's fairness stream (or from an explicit deal
order, for tests) under a :class:`SotaRules` rule set, and logs every trick. The game has no
decisions except under ``prisoners_of_war``, where the player's moves are passed in and a game
that needs one more move stops with ``status == "awaiting_move"``; replaying from the start with
one more move continues it, which is what makes a game resumable and verifiable.

Cards are their codes (``"TD"``) throughout; piles are deques with the top card on the left.
A won pile is a stack with its top at the end of the list. The conventions chosen where the
rules are silent are listed in ``docs/rules.md``.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import fields
from typing import Any
from typing import ClassVar
from typing import Final
from typing import overload

from .anchors import same_json
from .cards import DECK_KINDS
from .cards import RANK_VALUES
from .cards import Card
from .cards import canonical_deck
from .errors import InvalidAction
from .errors import InvalidInput
from .errors import InvalidRules
from .errors import refuse_unknown_options
from .fairness import Stream
from .fairness import shuffle
from .marks import N_
from .marks import Nn_

GAME: Final = "sota"
SETTLED: Final = "settled"
AWAITING_MOVE: Final = "awaiting_move"
PLAYER: Final = 0
DRAW: Final = "draw"
TEAM_0: Final = "team_0"
TEAM_1: Final = "team_1"

#: How a game ended (``GameResult.ended_by``).
LAST_SEAT: Final = "last_seat"
NO_CARDS: Final = "no_cards"
MAX_TRICKS: Final = "max_tricks"
LEAD: Final = "lead"
SINGLE_PASS: Final = "single_pass"
#: Every way a game ends, as ``ended_by`` names it.
ENDINGS: Final = (LAST_SEAT, NO_CARDS, MAX_TRICKS, LEAD, SINGLE_PASS)

SEAT_COUNTS: Final = (2, 3, 4)
WAR_DOWN_VALUES: Final = (3, 1, "by_rank")
#: The options whose values are names, default first.
NAMED_VALUES: Final[dict[str, tuple[str, ...]]] = {
    "deck": DECK_KINDS,
    "won_cards": ("bottom", "won_pile"),
    "gather": ("winner_first", "table", "shuffled"),
    "short": ("lose", "last_card_up"),
    "multi_tie": ("tied_only", "tied_only_return", "all"),
    "end": ("all_cards", "single_pass"),
}
SWITCHES: Final = ("peace", "auto_war_twos", "underdog", "prisoners_of_war", "teams")
MAX_TRICKS_RANGE: Final = (1, 100_000)
LEAD_RANGE: Final = (1, 54)  # a lead larger than the biggest deck could never be reached

#: Named rule sets a user can pick: the options that differ from the defaults.
PRESETS: Final[dict[str, dict[str, Any]]] = {
    "nordic": {},
    "english": {"war_down": 1},
    "tod_und_leben": {"deck": "piquet32", "end": "single_pass"},
    "pjanitsa": {"deck": "pjanitsa36"},
    "rauha": {"peace": True},
    "syrian": {"war_down": "by_rank"},
    "kids_15_min": {"max_tricks": 300},
}

#: Face-down cards of a ``by_rank`` war, by the tied rank (a joker counts as an ace: one).
BY_RANK_WIDTH: Final[dict[str, int]] = {
    **{rank: int(rank) for rank in "23456789"},
    **dict.fromkeys("TJQK", 10),
    "A": 1,
    "X": 1,
}
PJANITSA_SIX: Final = RANK_VALUES["X"]  # a six above an ace takes the place above the ace


#: The most characters of a refused value a message quotes.
SHOWN_AT_MOST: Final = 40


def _shown(value: object) -> str:
    """Return ``value`` as the JSON a client sent it in (null, true, "3"), cut to
    :data:`SHOWN_AT_MOST` characters: a refusal quotes what was sent, not Python's repr."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # not from JSON: a caller's own object
        text = repr(value)
    return text if len(text) <= SHOWN_AT_MOST else text[: SHOWN_AT_MOST - 1] + "…"


def _choice(name: str, value: object, valid: Sequence[object]) -> None:
    """Refuse ``value`` unless it is one of ``valid`` (bools never pass for ints)."""
    if isinstance(value, bool) or not any(type(value) is type(v) and value == v for v in valid):
        listed = ", ".join(str(v) for v in valid)
        raise InvalidRules(
            N_("%(option)s must be one of: %(valid)s (got %(value)s)"),
            params={"option": name, "valid": listed, "value": _shown(value)},
            option=name,
        )


def check_max_tricks(value: object, most: int = MAX_TRICKS_RANGE[1]) -> None:
    """Refuse a ``max_tricks`` that is not a whole number from 1 to ``most``: the rule book's
    limit, or a casino's, which may deal no game as long as the rule book allows."""
    _whole(MAX_TRICKS, value, MAX_TRICKS_RANGE[0], most)


def _whole(name: str, value: object, low: int, high: int, *, may_be_off: bool = False) -> None:
    """Refuse ``value`` unless it is an int (not a bool) in ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        message = (
            N_(
                "%(option)s must be off (null) or a whole number from %(low)s to %(high)s "
                "(got %(value)s)"
            )
            if may_be_off
            else N_("%(option)s must be a whole number from %(low)s to %(high)s (got %(value)s)")
        )
        params = {"option": name, "low": low, "high": high, "value": _shown(value)}
        raise InvalidRules(message, params=params, option=name)


@dataclass(frozen=True, slots=True)
class SotaRules:
    """A Sota rule set: every option of docs/rules.md §2.1 with its default."""

    seats: int = 2
    deck: str = "standard52"
    war_down: int | str = 3
    won_cards: str = "bottom"
    gather: str = "winner_first"
    short: str = "lose"
    multi_tie: str = "tied_only"
    end: str = "all_cards"
    max_tricks: int = 2000
    lead: int | None = None
    peace: bool = False
    auto_war_twos: bool = False
    underdog: bool = False
    prisoners_of_war: bool = False
    teams: bool = False

    def __post_init__(self) -> None:
        _choice("seats", self.seats, SEAT_COUNTS)
        for name, valid in NAMED_VALUES.items():
            _choice(name, getattr(self, name), valid)
        _choice("war_down", self.war_down, WAR_DOWN_VALUES)
        check_max_tricks(self.max_tricks)
        if self.lead is not None:
            _whole("lead", self.lead, *LEAD_RANGE, may_be_off=True)
        for name in SWITCHES:
            if not isinstance(getattr(self, name), bool):
                raise InvalidRules(
                    N_("%(option)s must be true or false"), params={"option": name}, option=name
                )
        if self.teams and self.seats != 4:
            raise InvalidRules(
                N_("%(option)s needs 4 seats (you and CPU 1 against the dealer and CPU 2)"),
                params={"option": "teams"},
                option="teams",
            )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SotaRules:
        """Build a rule set from a mapping, with defaults for what is missing.

        ``lead`` may be given as ``"off"`` as well as ``null``.

        :raises InvalidRules: on an unknown option (naming the valid ones) or a bad value.
        """
        if not isinstance(data, Mapping):
            raise InvalidRules(N_("rules must be an object of options"))
        refuse_unknown_options(data, [f.name for f in fields(cls)])
        options = dict(data)
        if options.get("lead") == "off":
            options["lead"] = None
        return cls(**options)

    @classmethod
    def from_preset(cls, name: str) -> SotaRules:
        """Return the named preset's rule set.

        :raises InvalidRules: naming the presets if ``name`` is not one.
        """
        if not isinstance(name, str) or name not in PRESETS:
            raise InvalidRules(
                N_("unknown preset %(name)s; valid: %(valid)s"),
                params={"name": _shown(name), "valid": ", ".join(PRESETS)},
                option="preset",
            )
        return cls.from_dict(PRESETS[name])

    def to_dict(self) -> dict[str, Any]:
        """Return every option, defaults included, as plain JSON values."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def sides(self) -> int:
        """How many sides can win: two with teams, else one per seat."""
        return 2 if self.teams else self.seats


#: The largest stake a Sota table may take, in whole sweets.
MAX_TABLE_STAKE: Final = 10**9
#: What a Sota table's settings hold (all of it, always: a change is merged over them).
TABLE_OPTIONS: Final = ("min_stake", "max_stake", "presets", "custom_rules")


@dataclass(frozen=True, slots=True)
class SotaTable:
    """A Sota table's settings: the stakes it takes (whole sweets), the named rule sets it
    offers (at least one) and whether a player may set rules of their own."""

    min_stake: int
    max_stake: int
    presets: tuple[str, ...]
    custom_rules: bool

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SotaTable:
        """Build a table's settings from a mapping that holds every option.

        :raises InvalidRules: naming the first unknown, missing or bad option.
        """
        refuse_unknown_options(data, TABLE_OPTIONS)
        for key in ("min_stake", "max_stake"):
            value = data.get(key)
            if type(value) is not int or not 1 <= value <= MAX_TABLE_STAKE:
                raise InvalidRules(
                    N_("%(option)s must be a whole number of sweets from %(low)s to %(high)s"),
                    params={"option": key, "low": 1, "high": MAX_TABLE_STAKE},
                    option=key,
                )
        if data["min_stake"] > data["max_stake"]:
            raise InvalidRules(
                N_("%(option)s must not exceed %(other)s"),
                params={"option": "min_stake", "other": "max_stake"},
                option="min_stake",
            )
        presets = data.get("presets")
        names = isinstance(presets, list) and all(isinstance(p, str) for p in presets)
        if not names or not presets or any(p not in PRESETS for p in presets):
            raise InvalidRules(
                N_("%(option)s must be a non-empty list of: %(valid)s"),
                params={"option": "presets", "valid": ", ".join(PRESETS)},
                option="presets",
            )
        if type(data.get("custom_rules")) is not bool:
            raise InvalidRules(
                N_("%(option)s must be true or false"),
                params={"option": "custom_rules"},
                option="custom_rules",
            )
        return cls(
            data["min_stake"],
            data["max_stake"],
            tuple(dict.fromkeys(presets)),
            data["custom_rules"],
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the settings as plain JSON values (the presets a list, each once)."""
        return {
            "min_stake": self.min_stake,
            "max_stake": self.max_stake,
            "presets": list(self.presets),
            "custom_rules": self.custom_rules,
        }


# --- the trick log --------------------------------------------------------------------------

#: One step of a trick (the first flip or a war step): per seat, the cards laid in order.
Step = tuple[tuple[Card, ...], ...]
#: A trick as the engine records it: steps, winner, counts after it, cards taken back.
RawTrick = tuple[tuple[Step, ...], int | None, tuple[int, ...], tuple[Card | None, ...] | None]


@dataclass(frozen=True, slots=True)
class Trick:
    """One trick: the first flip and all its wars, who won it and the counts after it."""

    steps: tuple[Step, ...]
    winner: int | None  # None: a war no seat could decide, its pot is out of play
    counts: tuple[int, ...]
    returned: tuple[Card | None, ...] | None = None  # multi_tie tied_only_return

    @property
    def laid(self) -> tuple[tuple[Card, ...], ...]:
        """Per seat, every card it laid in this trick in order, face-down ones included."""
        return tuple(
            tuple(card for step in self.steps for card in step[seat])
            for seat in range(len(self.counts))
        )

    @property
    def wars(self) -> int:
        """How many war steps followed the first flip."""
        return len(self.steps) - 1

    def to_dict(self) -> dict[str, Any]:
        """Return the trick as the API shapes it (plus ``steps``: cards per seat per step)."""
        return _trick_dict(self.steps, self.winner, self.counts, self.returned)


def _trick_dict(
    steps: tuple[Step, ...],
    winner: int | None,
    counts: tuple[int, ...],
    returned: tuple[Card | None, ...] | None,
) -> dict[str, Any]:
    """A trick as the API and the receipt shape it, straight from the engine's tuples: a game's
    log is built twice (receipt and answer), a trick at a time, so this is on the hot path."""
    if len(steps) == 1:  # nine tricks in ten: no war
        (step,) = steps
        laid = [list(cards) for cards in step]
    else:
        laid = [[card for step in steps for card in step[seat]] for seat in range(len(counts))]
    trick: dict[str, Any] = {
        "laid": laid,
        "wars": len(steps) - 1,
        "winner": winner,
        "counts": list(counts),
        "steps": [[len(cards) for cards in step] for step in steps],
    }
    if returned is not None:
        trick["returned"] = [[] if card is None else [card] for card in returned]
    return trick


class TrickLog(Sequence[Trick]):
    """The tricks of a game, built into :class:`Trick` values only when read."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Sequence[RawTrick] = ()) -> None:
        self._raw = tuple(raw)

    @overload
    def __getitem__(self, index: int) -> Trick: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Trick, ...]: ...

    def __getitem__(self, index: int | slice) -> Trick | tuple[Trick, ...]:
        if isinstance(index, slice):
            return tuple(Trick(*raw) for raw in self._raw[index])
        return Trick(*self._raw[index])

    def __len__(self) -> int:
        return len(self._raw)

    def __iter__(self) -> Iterator[Trick]:
        return (Trick(*raw) for raw in self._raw)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TrickLog) and self._raw == other._raw

    def __hash__(self) -> int:
        return hash(self._raw)

    def __repr__(self) -> str:
        return f"TrickLog({len(self._raw)} tricks)"

    def to_list(self) -> list[dict[str, Any]]:
        """Return every trick as a plain JSON dict."""
        return [_trick_dict(*raw) for raw in self._raw]


@dataclass(frozen=True)
class GameResult:
    """A game as far as it went: settled, or waiting for the player's next move."""

    status: str
    winner: int | str | None  # seat, "team_0", "team_1", "draw"; None while awaiting
    tricks: TrickLog
    deck: tuple[Card, ...]  # the deal order: the whole shuffled deck
    bytes_used: int  # stream bytes consumed by this game
    pending: dict[str, Any] | None  # {"seat", "count", "options", "table"} while awaiting
    ended_by: str | None
    wars: int
    trick_count: int  # tricks played (also when the log was not kept)
    moves_used: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Return the game part of the API's Sota game shape."""
        return {
            "status": self.status,
            "winner": self.winner,
            "tricks": self.tricks.to_list(),
            "pending": self.pending,
            "ended_by": self.ended_by,
        }

    def receipt_outcome(self) -> dict[str, Any]:
        """Return the signed receipt's ``outcome``: the winner, the trick log, how it ended."""
        return {
            "winner": self.winner,
            "tricks": self.tricks.to_list(),
            "ended_by": self.ended_by,
        }


@dataclass(frozen=True, slots=True)
class Places:
    """Where every card of the deck is after a trick; every pile is listed top card first."""

    piles: tuple[tuple[Card, ...], ...]
    won: tuple[tuple[Card, ...], ...]
    aside: tuple[Card, ...]
    out_of_play: tuple[Card, ...]

    def all_cards(self) -> list[Card]:
        """Return every card in every place, duplicates kept."""
        cards = [c for pile in self.piles for c in pile] + [c for pile in self.won for c in pile]
        return cards + list(self.aside) + list(self.out_of_play)


Observer = Callable[[Places], None]


class StreamRequired(ValueError):
    """An in-game shuffle is due but the game was given a deal order and no stream."""


class _AwaitingMove(Exception):
    """Raised inside a game when the player must choose and no move is left."""

    def __init__(self, pending: dict[str, Any]) -> None:
        super().__init__("awaiting the player's move")
        self.pending = pending


# --- the game -------------------------------------------------------------------------------


class _Table:
    """The state of one game and the procedure of docs/rules.md §2.2."""

    #: Play two-seat plain tricks inline (see :meth:`run`); tests switch it off to compare.
    inline_plain_tricks: ClassVar[bool] = True

    def __init__(
        self,
        rules: SotaRules,
        deck: Sequence[Card],
        stream: Stream | None,
        choices: Sequence[Sequence[str]],
        *,
        log: bool,
        observer: Observer | None,
        autoplay: bool,
    ) -> None:
        seats = rules.seats
        dealt = len(deck) - len(deck) % seats
        self.rules = rules
        self.seats = seats
        self.piles: list[deque[Card]] = [deque(deck[s:dealt:seats]) for s in range(seats)]
        self.won: list[list[Card]] = [[] for _ in range(seats)]
        self.aside = tuple(deck[dealt:])
        self.out_of_play: list[Card] = []
        self.stream = stream
        self.choices = choices
        self.moves_used = 0
        self.autoplay = autoplay
        self.log: list[RawTrick] | None = [] if log else None
        self.observer = observer
        self.trick_count = 0
        self.wars = 0
        self.winner: int | str | None = None
        self.ended_by: str | None = None
        # A card's strength: the higher wins (so the rank value, negated under peace).
        sign = -1 if rules.peace else 1
        self.value = {card: sign * RANK_VALUES[card[0]] for card in deck}
        self.six_over_ace = sign * PJANITSA_SIX
        self.pjanitsa = rules.deck == "pjanitsa36"
        self.fast = seats == 2 and self.inline_plain_tricks
        self.single_pass = rules.end == "single_pass"
        # Won cards go to a won pile under won_pile, single_pass and prisoners_of_war.
        self.into_won = rules.won_cards == "won_pile" or self.single_pass or rules.prisoners_of_war
        self.won_playable = self.into_won and not self.single_pass
        self.steps: list[list[tuple[Card, ...]]] = []  # the trick in progress
        self.dumps: set[tuple[int, int]] = set()  # (step, seat) laid all it had under `lose`

    # -- cards in and out --------------------------------------------------------------------

    def count(self, seat: int) -> int:
        """Cards the seat holds: its pile plus its won pile."""
        return len(self.piles[seat]) + len(self.won[seat])

    def available(self, seat: int) -> int:
        """Cards the seat can lay now (a won pile counts where it would be turned over)."""
        pile = len(self.piles[seat])
        return pile + len(self.won[seat]) if self.won_playable else pile

    def take(self, seat: int, k: int, *, dump: bool = False) -> list[Card]:
        """Take the seat's next ``k`` cards; the caller has checked they are available."""
        pile = self.piles[seat]
        if len(pile) >= k:
            return [pile.popleft() for _ in range(k)]
        cards = list(pile)
        pile.clear()
        rest = k - len(cards)
        if self.rules.prisoners_of_war:
            cards += self.choose(seat, rest, dump=dump, laid=len(cards))
        else:
            turned = self.won[seat][::-1]  # top to bottom: the order the cards lie
            self.won[seat].clear()
            pile.extend(self.shuffle(turned))
            cards += [pile.popleft() for _ in range(rest)]
        return cards

    def forfeit(self, seat: int) -> list[Card]:
        """Take every card of a seat that is short under ``lose``: it lays them all and is out.

        Under ``single_pass`` its won pile never counts for a war, but it is still the seat's
        cards (docs/rules.md §2.2: pile plus won pile) and "its cards join the pot", so it follows
        the dealt cards as it lies, top first, unshuffled (it is never turned over).
        """
        cards = self.take(seat, self.available(seat), dump=True)
        if self.single_pass:
            stack = self.won[seat]
            cards += stack[::-1]
            stack.clear()
        return cards

    def shuffle(self, cards: list[Card]) -> list[Card]:
        """Shuffle with the round stream, continuing where its last draw stopped."""
        if len(cards) < 2:
            return cards
        if self.stream is None:
            raise StreamRequired(
                "this game shuffles cards in play (won_pile turn-over or gather shuffled); "
                "pass stream= along with deck_order"
            )
        return shuffle(cards, self.stream)

    # -- prisoners of war --------------------------------------------------------------------

    def choose(self, seat: int, count: int, *, dump: bool, laid: int) -> list[Card]:
        """Take ``count`` won cards by the seat's choice; the last one is laid face up."""
        won = self.won[seat]
        options = won[::-1]  # top to bottom
        if dump:
            chosen = options[:count]
        elif seat == PLAYER and len(options) > 1 and not self.autoplay:
            chosen = self.next_move(count, options, laid)
        else:
            chosen = self.policy(options, count)
        for card in chosen:
            won.remove(card)
        return chosen

    def policy(self, options: list[Card], count: int) -> list[Card]:
        """The dealer's and CPU's choice: the best card face up, the weakest face down."""
        best = max(options, key=self.value.__getitem__)  # the first of equals from the top
        rest = list(options)
        rest.remove(best)
        return sorted(rest, key=self.value.__getitem__)[: count - 1] + [best]

    def next_move(self, count: int, options: list[Card], laid: int) -> list[Card]:
        """Return the player's next move, checked; stop the game if none is left."""
        if self.moves_used == len(self.choices):
            raise _AwaitingMove(
                {"seat": PLAYER, "count": count, "options": options, "table": self.table(laid)}
            )
        number = self.moves_used + 1
        move = self.choices[self.moves_used]
        self.moves_used += 1
        if isinstance(move, str) or not isinstance(move, Sequence):
            raise InvalidInput(
                N_("move %(number)s must be a list of cards"),
                params={"number": number},
                field="cards",
            )
        cards = list(move)
        if len(cards) != count:
            raise InvalidInput(
                Nn_(
                    "move %(number)s must lay exactly %(num)s card (got %(got)s)",
                    "move %(number)s must lay exactly %(num)s cards (got %(got)s)",
                ),
                params={"number": number, "num": count, "got": len(cards)},
                field="cards",
            )
        for card in cards:
            if not isinstance(card, str) or card not in options:
                raise InvalidInput(
                    N_("move %(number)s: %(card)s is not among your won cards: %(options)s"),
                    params={"number": number, "card": _shown(card), "options": ", ".join(options)},
                    field="cards",
                )
        if len(set(cards)) != len(cards):
            raise InvalidInput(
                N_("move %(number)s lays the same card twice"),
                params={"number": number},
                field="cards",
            )
        return cards

    def table(self, player_laid: int) -> list[list[Card | None]]:
        """The trick in progress as the player sees it: face-down cards are ``None``."""
        seen: list[list[Card | None]] = [[] for _ in range(self.seats)]
        for index, step in enumerate(self.steps):
            for seat, cards in enumerate(step):
                if (index, seat) in self.dumps:
                    seen[seat] += [None] * len(cards)
                elif cards:
                    seen[seat] += [None] * (len(cards) - 1) + [cards[-1]]
        seen[PLAYER] += [None] * player_laid
        return seen

    # -- a trick -----------------------------------------------------------------------------

    def compare(self, seats: list[int], up: list[Card | None]) -> tuple[Card, list[int]]:
        """Return the step's best face-up card and the seats that hold its rank."""
        # Every seat compared has a face-up card: only seats that turned one are passed.
        cards: list[Card] = [up[s] for s in seats]  # type: ignore[misc]
        value = self.value
        values = [value[card] for card in cards]
        if self.pjanitsa:
            ranks = {card[0] for card in cards}
            if "6" in ranks and "A" in ranks:
                six = self.six_over_ace
                values = [six if card[0] == "6" else value[card] for card in cards]
        best = max(values)
        tied = [s for s, v in zip(seats, values, strict=True) if v == best]
        return up[tied[0]], tied  # type: ignore[return-value]  # as above: not None

    def trick(self) -> None:
        """Play one trick: the first flip, its wars, the pot to the winner."""
        rules, seats = self.rules, self.seats
        piles, won = self.piles, self.won
        up: list[Card | None] = [None] * seats
        first: list[tuple[Card, ...]] = [()] * seats
        self.steps = steps = [first]
        self.dumps = dumps = set()
        active = [s for s in range(seats) if piles[s] or won[s]]
        for s in active:
            pile = piles[s]
            card = pile.popleft() if pile else self.take(s, 1)[0]
            first[s] = (card,)
            up[s] = card
        contenders, turned = active, active
        returned: list[Card | None] | None = None
        out: set[int] = set()  # seats that laid all they had under `lose`
        winner: int | None = None
        while True:
            best, tied = self.compare(contenders, up)
            # A seat in `turned` has just laid its face-up card, so up[s] is a card.
            if rules.auto_war_twos and any(up[s][0] == "2" for s in turned):  # type: ignore[index]
                fighters = contenders
            elif len(tied) == 1:
                winner = tied[0]
                break
            else:
                fighters = tied
                if len(steps) == 1 and len(tied) < len(contenders):
                    if rules.multi_tie == "all":
                        fighters = contenders
                    elif rules.multi_tie == "tied_only_return":
                        returned = [None] * seats
                        for s in contenders:
                            if s not in tied:
                                returned[s] = up[s]
                                piles[s].append(up[s])  # type: ignore[arg-type]  # contender: a card
            width = BY_RANK_WIDTH[best[0]] if rules.war_down == "by_rank" else rules.war_down
            step: list[tuple[Card, ...]] = [()] * seats
            steps.append(step)
            index = len(steps) - 1
            need = int(width) + 1
            if rules.short == "lose":
                ready = [s for s in fighters if self.available(s) >= need]
                for s in fighters:
                    if s not in ready:
                        step[s] = tuple(self.forfeit(s))
                        dumps.add((index, s))
                        out.add(s)
                    elif len(ready) > 1:
                        cards = self.take(s, need)
                        step[s] = tuple(cards)
                        up[s] = cards[-1]
                if len(ready) <= 1:
                    winner = ready[0] if ready else None
                    break
                contenders = turned = ready
            else:
                turned = []
                for s in fighters:
                    have = self.available(s)
                    if have:  # with none, the face-up card that tied stands for this war
                        cards = self.take(s, min(have, need))
                        step[s] = tuple(cards)
                        up[s] = cards[-1]
                        turned.append(s)
                if not turned:
                    break  # nobody can lay a new card: the pot is out of play
                contenders = fighters
        if rules.underdog and winner is not None and len(steps) > 1:
            winner = self.underdog(winner, out)
        self.finish_trick(winner, returned)

    def underdog(self, winner: int, out: set[int]) -> int:
        """Give the pot to the first seat that lost the war with a jack face down in it."""
        for seat in range(self.seats):
            if seat == winner or seat in out:
                continue
            for step in self.steps[1:]:
                if any(card[0] == "J" for card in step[seat][:-1]):
                    return seat
        return winner

    def finish_trick(self, winner: int | None, returned: list[Card | None] | None) -> None:
        """Gather the pot, give it to the winner (or put it out of play), log the trick."""
        steps, piles, won = self.steps, self.piles, self.won
        laid = steps
        if returned is not None:  # cards taken back are not in the pot
            first = [() if back else cards for cards, back in zip(steps[0], returned, strict=True)]
            laid = [first, *steps[1:]]
        pot: list[Card] = []
        if self.rules.gather == "winner_first" and winner is not None:
            for step in laid:
                pot += step[winner]
                for seat, cards in enumerate(step):
                    if seat != winner:
                        pot += cards
        else:
            for step in laid:
                for cards in step:
                    pot += cards
        if winner is None:
            self.out_of_play += pot
        else:
            if self.rules.gather == "shuffled":
                pot = self.shuffle(pot)
            if self.into_won:
                won[winner] += reversed(pot)  # the first gathered card ends on top
            else:
                piles[winner] += pot
        self.trick_count += 1
        self.wars += len(steps) - 1
        if self.log is not None:
            self.log.append(
                (
                    tuple([tuple(step) for step in steps]),
                    winner,
                    tuple([len(pile) + len(stack) for pile, stack in zip(piles, won, strict=True)]),
                    None if returned is None else tuple(returned),
                )
            )
        if self.observer is not None:
            self.observer(self.places())

    # -- the game ----------------------------------------------------------------------------

    def run(self) -> None:
        """Play tricks until the game is over.

        A two-seat trick whose first flip is decided at once (nine tricks in ten) is played
        inline here, because it is what a game mostly consists of; anything else (a tie, a 2
        under auto_war_twos, pjanitsa's six against an ace, an empty pile) goes to
        :meth:`trick`, which plays every trick the same way and is checked against this path.
        """
        rules, piles, won, value, log = self.rules, self.piles, self.won, self.value, self.log
        max_tricks, lead, single_pass = rules.max_tricks, rules.lead, self.single_pass
        fast = self.fast
        pile_0, pile_1 = piles[0], piles[1]
        won_0, won_1 = won[0], won[1]
        twos, pjanitsa, into_won = rules.auto_war_twos, self.pjanitsa, self.into_won
        # The pot in seat order: what `table` keeps and what `shuffled` shuffles.
        table_order, shuffled = rules.gather != "winner_first", rules.gather == "shuffled"
        while True:
            if single_pass and not all(piles):
                self.end_by_score(SINGLE_PASS)
                return
            if fast and pile_0 and pile_1:
                a, b = pile_0.popleft(), pile_1.popleft()
                value_a, value_b = value[a], value[b]
                if (
                    value_a == value_b
                    or (twos and "2" in (a[0], b[0]))
                    or (pjanitsa and {a[0], b[0]} == {"6", "A"})
                ):
                    pile_0.appendleft(a)
                    pile_1.appendleft(b)
                    self.trick()
                else:
                    winner = 0 if value_a > value_b else 1
                    pot = [a, b] if winner == 0 or table_order else [b, a]
                    if shuffled:
                        pot = self.shuffle(pot)
                    if into_won:
                        won[winner] += reversed(pot)  # the first gathered card ends on top
                    else:
                        piles[winner] += pot
                    self.trick_count += 1
                    if log is not None:
                        counts = (len(pile_0) + len(won_0), len(pile_1) + len(won_1))
                        log.append(((((a,), (b,)),), winner, counts, None))
                    if self.observer is not None:
                        self.observer(self.places())
                if (pile_0 or won_0) and (pile_1 or won_1):
                    pass  # both seats still hold cards: the game goes on
                elif self.over():
                    return
            else:
                self.trick()
                if self.over():
                    return
            if lead is not None and self.lead_reached(lead):
                self.end_by_score(LEAD)
                return
            if self.trick_count >= max_tricks:
                self.end_by_score(MAX_TRICKS)
                return

    def side_name(self, side: int) -> int | str:
        return (TEAM_0, TEAM_1)[side] if self.rules.teams else side

    def side_totals(self, per_seat: list[int]) -> list[int]:
        """Per side (seat, or team with teams) totals of a per-seat measure."""
        if self.rules.teams:
            return [per_seat[0] + per_seat[2], per_seat[1] + per_seat[3]]
        return per_seat

    def scores(self) -> list[int]:
        """What an end option counts per side: cards, or won cards with single_pass."""
        seats = range(self.seats)
        if self.single_pass:
            return self.side_totals([len(self.won[s]) for s in seats])
        return self.side_totals([self.count(s) for s in seats])

    def over(self) -> bool:
        """End the game if at most one side has cards left."""
        alive = [seat for seat, pile in enumerate(self.piles) if pile or self.won[seat]]
        sides = {seat % 2 for seat in alive} if self.rules.teams else alive  # teams: 0+2, 1+3
        if len(sides) > 1:
            return False
        self.winner = (
            self.side_name(alive[0] % 2 if self.rules.teams else alive[0]) if alive else DRAW
        )
        self.ended_by = LAST_SEAT if alive else NO_CARDS
        return True

    def lead_reached(self, lead: int) -> bool:
        top, second = sorted(self.scores(), reverse=True)[:2]
        return top - second >= lead

    def end_by_score(self, reason: str) -> None:
        """End the game by an end option: the most cards win, equal counts at the top draw."""
        scores = self.scores()
        top = max(scores)
        leaders = [side for side, score in enumerate(scores) if score == top]
        self.winner = self.side_name(leaders[0]) if len(leaders) == 1 else DRAW
        self.ended_by = reason

    def places(self) -> Places:
        return Places(
            piles=tuple(tuple(pile) for pile in self.piles),
            won=tuple(tuple(reversed(pile)) for pile in self.won),
            aside=self.aside,
            out_of_play=tuple(self.out_of_play),
        )


# --- the public entry points ----------------------------------------------------------------


def _check_deck(rules: SotaRules, deck_order: Sequence[str]) -> tuple[Card, ...]:
    """Return ``deck_order`` if it is distinct cards of the rule set's deck (tests may deal a
    smaller deck than the whole one), at least one per seat."""
    deck = tuple(deck_order)
    valid = set(canonical_deck(rules.deck))
    if (
        isinstance(deck_order, str)
        or not all(isinstance(card, str) for card in deck)
        or len(set(deck)) != len(deck)
        or not set(deck) <= valid
        or len(deck) < rules.seats
    ):
        raise InvalidInput(
            f"deck_order must be distinct cards of the {rules.deck} deck, one per seat at least"
        )
    return deck


def play_game(
    rules: SotaRules,
    *,
    stream: Stream | None = None,
    deck_order: Sequence[str] | None = None,
    choices: Sequence[Sequence[str]] = (),
    log: bool = True,
    autoplay: bool = False,
    observer: Observer | None = None,
) -> GameResult:
    """Play a whole game (or as far as the player's moves go) and return its result.

    :param stream: the round stream: the deck of the rule set's kind is shuffled from it, and
        every later shuffle of the game continues drawing from it.
    :param deck_order: an explicit deal order (tests); a stream may be given too, for the
        shuffles inside the game.
    :param choices: the player's moves under ``prisoners_of_war``, one list of cards per move
        (face-down cards first, the face-up card last).
    :param log: keep the trick log (simulations turn it off).
    :param autoplay: the player's seat follows the dealer's policy (simulations).
    :param observer: called with where every card is after each trick (conservation checks).
    :raises InvalidInput: on a bad deal order or an invalid move.
    :raises InvalidAction: on moves without ``prisoners_of_war`` or after the game ended.
    :raises StreamRequired: if an in-game shuffle is due and no stream was given.
    """
    if stream is None and deck_order is None:
        raise ValueError("play_game needs a stream or a deck_order")
    if choices and not rules.prisoners_of_war:
        raise InvalidAction(N_("moves are made only under prisoners_of_war"))
    start = 0 if stream is None else stream.bytes_read
    if deck_order is not None:
        deck = _check_deck(rules, deck_order)
    else:
        assert stream is not None
        deck = tuple(shuffle(canonical_deck(rules.deck), stream))
    table = _Table(rules, deck, stream, choices, log=log, observer=observer, autoplay=autoplay)
    pending: dict[str, Any] | None = None
    try:
        table.run()
    except _AwaitingMove as waiting:
        pending = waiting.pending
    if pending is None and table.moves_used < len(choices):
        raise InvalidAction(
            Nn_(
                "the game ended after %(num)s move; moves sent: %(given)s",
                "the game ended after %(num)s moves; moves sent: %(given)s",
            ),
            params={"num": table.moves_used, "given": len(choices)},
        )
    return GameResult(
        status=SETTLED if pending is None else AWAITING_MOVE,
        winner=table.winner,
        tricks=TrickLog(table.log or ()),
        deck=deck,
        bytes_used=0 if stream is None else stream.bytes_read - start,
        pending=pending,
        ended_by=table.ended_by,
        wars=table.wars,
        trick_count=table.trick_count,
        moves_used=table.moves_used,
    )


def payout(rules: SotaRules, winner: int | str | None, stake: int) -> int:
    """Return what a settled game credits back to the player, in whole sweets.

    The player (seat 0) winning alone gets ``seats × stake`` (the stake and ``(seats − 1) ×
    stake``); with teams, ``team_0`` winning gets ``2 × stake``; a draw returns the stake.
    """
    if winner == DRAW:
        return stake
    if rules.teams:
        return 2 * stake if winner == TEAM_0 else 0
    if isinstance(winner, int) and not isinstance(winner, bool) and winner == PLAYER:
        return rules.seats * stake
    return 0


def first_difference(recorded: Mapping[str, Any], fresh: Mapping[str, Any]) -> str | None:
    """Say where a recorded game log differs from a fresh replay, or ``None`` if it does not.

    The values are compared as JSON values: ``false`` is not ``0`` (Python's bool is an int).
    """
    for key in fresh:
        if key == "tricks":
            continue
        if not same_json(recorded.get(key), fresh[key]):
            return f"{key}: recorded {recorded.get(key)!r}, replay {fresh[key]!r}"
    extra = sorted(set(recorded) - set(fresh))
    if extra:
        return f"unexpected field {extra[0]!r}"
    old, new = recorded.get("tricks"), fresh["tricks"]
    if not isinstance(old, list):
        return "tricks: recorded is not a list"
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if not same_json(a, b):
            return f"trick {number}: recorded {a!r}, replay {b!r}"
    if len(old) != len(new):
        return f"tricks: recorded {len(old)}, replay {len(new)}"
    return None


def replay_difference(
    rules: SotaRules,
    recorded: Mapping[str, Any],
    *,
    stream: Stream | None = None,
    deck_order: Sequence[str] | None = None,
    choices: Sequence[Sequence[str]] = (),
) -> str | None:
    """Replay a game and say where ``recorded`` differs from it (``None``: it matches).

    ``recorded`` is a :meth:`GameResult.to_dict` (has ``status``) or a
    :meth:`GameResult.receipt_outcome`.
    """
    try:
        fresh = play_game(rules, stream=stream, deck_order=deck_order, choices=choices)
    except (InvalidInput, InvalidAction) as error:
        return f"the replay refuses the moves: {error.message}"
    expected = fresh.to_dict() if "status" in recorded else fresh.receipt_outcome()
    return first_difference(recorded, expected)
