"""The Casino War engine against its rules: payouts, card positions, table options, refusals."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sota_casino.core import errors
from sota_casino.core.cards import Card
from sota_casino.core.casino_war import TableRules
from sota_casino.core.casino_war import WarRound
from sota_casino.core.casino_war import deal
from sota_casino.core.casino_war import decide
from sota_casino.core.casino_war import play
from sota_casino.core.casino_war import replay
from sota_casino.core.errors import DecisionNotDue
from sota_casino.core.errors import InvalidBet
from sota_casino.core.errors import InvalidInput
from sota_casino.core.errors import InvalidRules
from sota_casino.core.errors import RoundSettled

BET = 1_000  # 10 chips
TIE_BET = 500  # 5 chips


class Shoe:
    """A shuffled shoe with the given cards on top that records how many cards were asked for."""

    def __init__(self, cards: str) -> None:
        self.cards: tuple[Card, ...] = tuple(cards.split())
        self.requests: list[int] = []

    def __call__(self, k: int) -> Sequence[Card]:
        self.requests.append(k)
        assert k <= len(self.cards), (
            f"the round asked for {k} cards, the shoe has {len(self.cards)}"
        )
        return self.cards[:k]


# The payout table of the Casino War rules: first cards, later cards (burn 3), choice, outcome,
# net in antes with bonus none, net in antes with bonus ante.
PAYOUT_TABLE = [
    ("KS 9H", "", "war", "win", 1, 1),
    ("4D JC", "", "war", "lose", -1, -1),
    ("QC QD", "", "surrender", "surrender", -0.5, -0.5),
    ("QC QD", "2S 3S 4S AH 5D", "war", "war_win", 1, 1),
    ("QC QD", "2S 3S 4S 8H 8D", "war", "war_tie", 1, 2),
    ("QC QD", "2S 3S 4S 5H TD", "war", "war_lose", -2, -2),
]


@pytest.mark.parametrize("tie_bet", [0, TIE_BET], ids=["no-tie-bet", "tie-bet"])
@pytest.mark.parametrize("bonus", ["none", "ante"])
@pytest.mark.parametrize(
    ("first", "later", "choice", "outcome", "net_none", "net_ante"),
    PAYOUT_TABLE,
    ids=[row[3] for row in PAYOUT_TABLE],
)
def test_every_row_of_the_payout_table(
    first: str,
    later: str,
    choice: str,
    outcome: str,
    net_none: float,
    net_ante: float,
    bonus: str,
    tie_bet: int,
) -> None:
    rules = TableRules(bonus=bonus, tie_payout=10, burn=3)
    round_ = play(rules, Shoe(f"{first} {later}"), BET, tie_bet, choice)
    tied = first.split()[0][0] == first.split()[1][0]
    tie_bet_net = (10 * tie_bet if tied else -tie_bet) if tie_bet else 0
    ante_net = net_none if bonus == "none" else net_ante
    assert round_.status == "settled"
    assert round_.outcome == outcome
    assert round_.net == int(ante_net * BET) + tie_bet_net
    assert round_.tie_bet_won == (tied and tie_bet > 0)
    assert round_.payout == round_.net + round_.staked >= 0
    went_to_war = outcome.startswith("war_")
    assert round_.raise_amount == (BET if went_to_war else 0)
    assert round_.stakes == {"bet": BET, "tie_bet": tie_bet, "raise": round_.raise_amount}
    assert round_.actions == ((choice,) if tied else ())
    assert round_.receipt_outcome() == {
        "result": outcome,
        "tie_bet_won": round_.tie_bet_won,
        "net": round_.net,
    }


def test_surrendering_an_odd_number_of_chips_returns_exactly_half() -> None:
    round_ = play(TableRules(), Shoe("5C 5H"), 300, choice="surrender")
    assert round_.payout == 150 and round_.net == -150


def test_the_tie_bet_is_settled_on_the_first_cards_only() -> None:
    # the war cards tie, but the tie bet already lost on the first cards
    round_ = play(TableRules(burn=0), Shoe("9C 8C 7H 7S"), BET, TIE_BET)
    assert round_.outcome == "win" and not round_.tie_bet_won
    assert round_.net == BET - TIE_BET


@pytest.mark.parametrize("payout", [1, 30])
def test_the_tie_bet_pays_the_table_payout(payout: int) -> None:
    round_ = play(TableRules(tie_payout=payout), Shoe("9C 9D"), BET, TIE_BET, "surrender")
    assert round_.net == payout * TIE_BET - BET // 2


def test_a_tie_waits_for_the_decision_with_only_the_first_cards_dealt() -> None:
    shoe = Shoe("TC TD 2S 3S 4S 5S 6S")
    opened = deal(TableRules(), shoe, BET, TIE_BET)
    assert opened.status == "awaiting_decision"
    assert opened.outcome is None and opened.payout == 0
    assert opened.cards == ("TC", "TD") and opened.war is None
    assert shoe.requests == [2]


@pytest.mark.parametrize("burn", range(6))
def test_the_war_cards_follow_the_burned_cards(burn: int) -> None:
    # Burned aces would win the war if they were read as the war cards.
    burned = ["AS", "AH", "AD", "AC", "AS"][:burn]
    shoe = Shoe(" ".join(["6C", "6D", *burned, "3H", "JD", "AC", "AD"]))
    round_ = play(TableRules(burn=burn), shoe, BET)
    assert shoe.requests[-1] == burn + 4
    assert round_.cards == shoe.cards[: burn + 4]
    assert round_.war == {"burned": burned, "player_card": "3H", "dealer_card": "JD"}
    assert round_.outcome == "war_lose"


def test_suits_never_matter() -> None:
    assert play(TableRules(), Shoe("AS AC"), BET, choice="surrender").outcome == "surrender"


def test_replay_reproduces_each_kind_of_round() -> None:
    rules = TableRules(burn=3)
    for first, later, choice, *_ in PAYOUT_TABLE:
        cards = f"{first} {later}"
        played = play(rules, Shoe(cards), BET, TIE_BET, choice)
        replayed = replay(rules, Shoe(cards), played.stakes, played.actions)
        assert replayed == played


def test_a_round_is_immutable() -> None:
    round_ = play(TableRules(), Shoe("KS 9H"), BET)
    with pytest.raises(AttributeError):
        round_.payout = 10**9  # type: ignore[misc]


# --- invalid steps ----------------------------------------------------------------------------


def test_a_decision_on_a_settled_round_is_refused() -> None:
    settled = deal(TableRules(), Shoe("KS 9H"), BET)
    with pytest.raises(RoundSettled) as refused:
        decide(settled, "war", Shoe("KS 9H"))
    assert isinstance(refused.value, errors.InvalidAction)


def test_a_second_decision_is_refused() -> None:
    shoe = Shoe("TC TD 2S 3S 4S 5S 6S")
    decided = decide(deal(TableRules(), shoe, BET), "surrender", shoe)
    for choice in ("war", "surrender"):
        with pytest.raises(RoundSettled):
            decide(decided, choice, shoe)


@pytest.mark.parametrize("choice", ["peace", "WAR", "", None, 1])
def test_an_unknown_choice_is_refused_as_invalid_input(choice: object) -> None:
    opened = deal(TableRules(), Shoe("TC TD 2S 3S 4S 5S 6S"), BET)
    with pytest.raises(InvalidInput) as refused:
        decide(opened, choice, Shoe("TC TD 2S 3S 4S 5S 6S"))  # type: ignore[arg-type]
    assert isinstance(refused.value, errors.InvalidInput)
    assert "war" in refused.value.message and "surrender" in refused.value.message


def test_war_cards_from_another_shoe_are_refused() -> None:
    opened = deal(TableRules(), Shoe("TC TD"), BET)
    with pytest.raises(ValueError):
        decide(opened, "war", Shoe("9C 9D 2S 3S 4S 5S 6S"))


@pytest.mark.parametrize(
    ("cards", "actions", "error"),
    [
        ("KS 9H", ["war"], RoundSettled),
        ("TC TD 2S 3S 4S 5S 6S", [], DecisionNotDue),
        ("TC TD 2S 3S 4S 5S 6S", ["war", "war"], DecisionNotDue),
        ("TC TD 2S 3S 4S 5S 6S", ["flee"], InvalidInput),
    ],
)
def test_replay_refuses_actions_that_do_not_fit_the_cards(
    cards: str, actions: list[str], error: type[Exception]
) -> None:
    with pytest.raises(error):
        replay(TableRules(), Shoe(cards), {"bet": BET, "tie_bet": 0, "raise": 0}, actions)


def test_replay_refuses_stakes_without_a_bet() -> None:
    with pytest.raises(InvalidBet):
        replay(TableRules(), Shoe("KS 9H"), {}, [])


# --- bets -------------------------------------------------------------------------------------

BAD_AMOUNTS = [
    pytest.param(150, id="not-whole-chips"),
    pytest.param(100.0, id="float"),
    pytest.param("100", id="string"),
    pytest.param(True, id="bool"),
    pytest.param(None, id="none"),
    pytest.param(-100, id="negative"),
    pytest.param(50_100, id="above-max"),
]


@pytest.mark.parametrize("bet", [*BAD_AMOUNTS, pytest.param(0, id="zero")])
def test_a_bad_ante_is_refused_before_any_card_is_dealt(bet: object) -> None:
    shoe = Shoe("KS 9H")
    with pytest.raises(InvalidBet) as refused:
        deal(TableRules(), shoe, bet)  # type: ignore[arg-type]
    assert refused.value.details["field"] == "bet"
    assert isinstance(refused.value, errors.InvalidInput)
    assert shoe.requests == []


def test_an_ante_below_the_table_minimum_is_refused() -> None:
    rules = TableRules(min_bet=500)
    with pytest.raises(InvalidBet, match="500"):
        deal(rules, Shoe("KS 9H"), 400)
    assert deal(rules, Shoe("KS 9H"), 500).bet == 500


def test_the_limits_themselves_are_accepted() -> None:
    rules = TableRules(min_bet=100, max_bet=50_000)
    assert deal(rules, Shoe("KS 9H"), 100).bet == 100
    assert deal(rules, Shoe("KS 9H"), 50_000, 50_000).tie_bet == 50_000


@pytest.mark.parametrize("tie_bet", BAD_AMOUNTS)
def test_a_bad_tie_bet_is_refused(tie_bet: object) -> None:
    with pytest.raises(InvalidBet) as refused:
        deal(TableRules(), Shoe("KS 9H"), BET, tie_bet)  # type: ignore[arg-type]
    assert refused.value.details["field"] == "tie_bet"


def test_a_tie_bet_is_refused_where_none_is_offered() -> None:
    rules = TableRules(tie_payout=0)
    with pytest.raises(InvalidBet, match="no tie bet"):
        deal(rules, Shoe("KS 9H"), BET, TIE_BET)
    assert deal(rules, Shoe("KS 9H"), BET, 0).tie_bet == 0


# --- table options ----------------------------------------------------------------------------


def test_the_defaults_are_those_of_the_rule_book() -> None:
    assert TableRules().to_dict() == {
        "decks": 6,
        "min_bet": 100,
        "max_bet": 50_000,
        "tie_payout": 10,
        "burn": 3,
        "bonus": "none",
    }


@pytest.mark.parametrize(
    ("option", "valid", "invalid"),
    [
        ("decks", [1, 8], [0, 9, -1]),
        ("tie_payout", [0, 30], [-1, 31]),
        ("burn", [0, 5], [-1, 6]),
        ("min_bet", [100, 50_000], [0, 99, 150, 50_100]),
        ("max_bet", [100, 10**12], [99, 250, 10**12 + 100]),
        ("bonus", ["none", "ante"], ["double", "", "NONE"]),
    ],
)
def test_each_table_option_is_checked_against_its_range(
    option: str, valid: list[object], invalid: list[object]
) -> None:
    for value in valid:
        settings = {option: value, "min_bet": 100} if option == "max_bet" else {option: value}
        assert getattr(TableRules.from_dict(settings), option) == value
    for value in invalid:
        with pytest.raises(InvalidRules) as refused:
            TableRules.from_dict({option: value})
        assert refused.value.details["option"] in (option, "min_bet")


@pytest.mark.parametrize("option", ["decks", "tie_payout", "burn", "min_bet", "max_bet"])
@pytest.mark.parametrize("value", [True, False, 6.0, "6", None], ids=repr)
def test_a_number_option_must_be_an_int_not_a_bool_float_or_string(
    option: str, value: object
) -> None:
    with pytest.raises(InvalidRules):
        TableRules.from_dict({option: value})


@pytest.mark.parametrize("value", [True, None, 1, ["none"]], ids=repr)
def test_bonus_must_be_one_of_its_names(value: object) -> None:
    with pytest.raises(InvalidRules, match="none, ante"):
        TableRules.from_dict({"bonus": value})


def test_min_bet_above_max_bet_is_refused() -> None:
    with pytest.raises(InvalidRules):
        TableRules(min_bet=1_000, max_bet=500)


def test_an_unknown_option_is_refused_naming_the_valid_ones() -> None:
    with pytest.raises(InvalidRules) as refused:
        TableRules.from_dict({"deck": 6})
    message = refused.value.message
    assert "'deck'" in message
    for name in ("decks", "min_bet", "max_bet", "tie_payout", "burn", "bonus"):
        assert name in message


@pytest.mark.parametrize("data", [None, [("decks", 6)], "decks=6"], ids=repr)
def test_table_rules_must_come_from_a_mapping(data: object) -> None:
    with pytest.raises(InvalidRules):
        TableRules.from_dict(data)  # type: ignore[arg-type]


def test_table_rules_round_trip_through_a_dict() -> None:
    rules = TableRules(decks=2, min_bet=200, max_bet=1_000, tie_payout=0, burn=0, bonus="ante")
    assert TableRules.from_dict(rules.to_dict()) == rules


def test_a_round_remembers_the_rules_it_was_played_under() -> None:
    rules = TableRules(decks=1, bonus="ante")
    assert isinstance(play(rules, Shoe("KS 9H"), BET), WarRound)
    assert play(rules, Shoe("KS 9H"), BET).rules == rules
