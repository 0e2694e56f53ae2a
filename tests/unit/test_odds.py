"""The exact Casino War odds: the published figures, and an independent enumeration."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

import pytest

from sota_casino.__main__ import main
from sota_casino.core.cards import RANKS
from sota_casino.core.cards import canonical_shoe
from sota_casino.core.cards import rank_value
from sota_casino.core.casino_war import OUTCOMES
from sota_casino.core.casino_war import TableRules
from sota_casino.core.casino_war import play
from sota_casino.core.errors import InvalidRules
from sota_casino.core.odds import ante_net
from sota_casino.core.odds import casino_war_odds
from sota_casino.core.odds import format_odds_by_decks
from sota_casino.core.odds import odds_by_decks
from sota_casino.core.odds import odds_table
from sota_casino.core.odds import outcome_probabilities


def odds_for(decks: int, bonus: str = "none", tie_payout: int = 10):
    return casino_war_odds(TableRules(decks=decks, bonus=bonus, tie_payout=tie_payout))


def pct(value: Fraction, digits: int = 2) -> str:
    return f"{float(value) * 100:.{digits}f}"


# --- the published figures ------------------------------------------------------------------

# decks: P(tie), always war (none), always war (ante), always surrender, tie bet 10 to 1
ODDS_MD_ROWS = {
    1: ("1/17", "2.42", "2.06", "2.94", "35.29"),
    2: ("7/103", "2.70", "2.24", "3.40", "25.24"),
    4: ("5/69", "2.84", "2.31", "3.62", "20.29"),
    6: ("23/311", "2.88", "2.33", "3.70", "18.65"),
    8: ("31/415", "2.90", "2.34", "3.73", "17.83"),
}


@pytest.mark.parametrize("decks", sorted(ODDS_MD_ROWS))
def test_every_row_of_the_published_table_is_reproduced(decks: int) -> None:
    p_tie, war, war_ante, surrender, tie_bet = ODDS_MD_ROWS[decks]
    plain, ante = odds_for(decks), odds_for(decks, bonus="ante")
    assert str(plain.p_tie) == p_tie
    assert pct(plain.house_edge_war) == war
    assert pct(ante.house_edge_war) == war_ante
    assert pct(plain.house_edge_surrender) == surrender
    assert plain.house_edge_tie_bet is not None
    assert pct(plain.house_edge_tie_bet) == tie_bet


def test_published_exact_fractions_hold() -> None:
    one, six = odds_for(1), odds_for(6)
    assert one.house_edge_war == Fraction(503, 20825)
    assert one.house_edge_surrender == Fraction(1, 34)
    assert one.house_edge_tie_bet == Fraction(6, 17)
    assert six.house_edge_surrender == Fraction(23, 622)
    assert six.house_edge_tie_bet == Fraction(58, 311)
    assert six.p_war_tie == Fraction(1181, 15965)
    assert [odds_for(d).p_tie for d in (2, 4, 6, 8)] == [
        Fraction(7, 103),
        Fraction(5, 69),
        Fraction(23, 311),
        Fraction(31, 415),
    ]


def test_six_decks_to_four_digits_always_war_with_and_without_the_bonus() -> None:
    assert pct(odds_for(6).house_edge_war, 4) == "2.8771"
    assert pct(odds_for(6, bonus="ante").house_edge_war, 4) == "2.3301"


def test_six_decks_outcome_probabilities_match_the_published_ones() -> None:
    p = outcome_probabilities(6)
    assert f"{float(p['win'] + p['war_win'] + p['war_tie']):.6f}" == "0.502735"
    assert f"{float(p['lose']):.6f}" == "0.463023"
    assert f"{float(p['war_lose']):.6f}" == "0.034242"
    assert p["surrender"] == 0
    assert sum(p.values()) == 1


def test_six_decks_element_of_risk_and_standard_deviation() -> None:
    six = odds_for(6)
    assert pct(six.element_of_risk) == "2.68"
    assert f"{six.std_dev:.2f}" == "1.05"


def test_always_surrender_gives_up_half_the_ante_on_every_tie() -> None:
    for decks in range(1, 9):
        p = outcome_probabilities(decks, "surrender")
        assert p["surrender"] == odds_for(decks).p_tie
        assert p["war_win"] == p["war_tie"] == p["war_lose"] == 0
        assert odds_for(decks).house_edge_surrender == p["surrender"] / 2


# --- an independent enumeration -------------------------------------------------------------

# The payout table of the rules, written out again so that the odds module is checked against
# the rule book rather than against itself.
RULE_BOOK_NET = {
    "none": {"win": 1, "lose": -1, "war_win": 1, "war_tie": 1, "war_lose": -2},
    "ante": {"win": 1, "lose": -1, "war_win": 1, "war_tie": 2, "war_lose": -2},
}


def enumerate_one_deck_card_by_card() -> dict[str, Fraction]:
    """Deal every ordered pair of first cards, and after a tie every ordered pair of war cards."""
    values = [rank_value(card) for card in canonical_shoe("standard52", 1)]
    n = len(values)
    war_pairs = (n - 2) * (n - 3)
    counts: Counter[str] = Counter()
    for i, player in enumerate(values):
        for j, dealer in enumerate(values):
            if i == j:
                continue
            if player != dealer:
                # every war pair of the other 50 cards is as likely: weigh to a common total
                counts["win" if player > dealer else "lose"] += war_pairs
                continue
            rest = [v for position, v in enumerate(values) if position not in (i, j)]
            for a, war_player in enumerate(rest):
                for b, war_dealer in enumerate(rest):
                    if a == b:
                        continue
                    if war_player > war_dealer:
                        counts["war_win"] += 1
                    elif war_player == war_dealer:
                        counts["war_tie"] += 1
                    else:
                        counts["war_lose"] += 1
    total = n * (n - 1) * war_pairs
    assert sum(counts.values()) == total
    return {outcome: Fraction(count, total) for outcome, count in counts.items()}


@pytest.fixture(scope="module")
def one_deck() -> dict[str, Fraction]:
    return enumerate_one_deck_card_by_card()


@pytest.mark.parametrize("bonus", ["none", "ante"])
def test_always_war_edge_equals_the_card_by_card_enumeration(
    one_deck: dict[str, Fraction], bonus: str
) -> None:
    enumerated = -sum(p * RULE_BOOK_NET[bonus][o] for o, p in one_deck.items())
    assert odds_for(1, bonus).house_edge_war == enumerated


def test_outcome_probabilities_equal_the_card_by_card_enumeration(
    one_deck: dict[str, Fraction],
) -> None:
    assert {o: p for o, p in outcome_probabilities(1).items() if p} == one_deck


def test_surrender_tie_bet_risk_and_spread_equal_the_enumeration(
    one_deck: dict[str, Fraction],
) -> None:
    p_tie = one_deck["war_win"] + one_deck["war_tie"] + one_deck["war_lose"]
    odds = odds_for(1)
    assert odds.house_edge_surrender == p_tie / 2
    for payout in range(1, 31):
        assert odds_for(1, tie_payout=payout).house_edge_tie_bet == 1 - p_tie * (payout + 1)
    net = RULE_BOOK_NET["none"]
    mean = sum(p * net[o] for o, p in one_deck.items())
    assert odds.variance == sum(p * net[o] ** 2 for o, p in one_deck.items()) - mean**2
    assert odds.element_of_risk == -mean / (1 + p_tie)


def war_outcomes_after_burning(decks: int, burn: int) -> dict[str, Fraction]:
    """Enumerate, by rank and card counts, a tie, ``burn`` unseen cards and the war cards."""
    weights: Counter[str] = Counter()

    def walk(counts: list[int], drawn: Sequence[int], weight: int) -> None:
        if len(drawn) == 2 + burn + 2:
            player, dealer = drawn[-2], drawn[-1]
            outcome = "war_win" if player > dealer else "war_lose" if player < dealer else "war_tie"
            weights[outcome] += weight
            return
        for rank, left in enumerate(counts):
            if left and (len(drawn) != 1 or rank == drawn[0]):  # the second card ties the first
                counts[rank] -= 1
                walk(counts, [*drawn, rank], weight * left)
                counts[rank] += 1

    walk([4 * decks] * len(RANKS), [], 1)
    cards = 52 * decks
    total = 1
    for drawn in range(2 + burn + 2):
        total *= cards - drawn
    return {outcome: Fraction(weight, total) for outcome, weight in weights.items()}


@pytest.mark.parametrize(("decks", "burn"), [(1, 0), (1, 1), (1, 2), (2, 1)])
def test_burned_cards_change_nothing(decks: int, burn: int) -> None:
    expected = {o: p for o, p in outcome_probabilities(decks).items() if o.startswith("war_")}
    assert war_outcomes_after_burning(decks, burn) == expected


def test_the_burn_setting_leaves_every_figure_unchanged() -> None:
    figures = {casino_war_odds(TableRules(burn=burn)) for burn in range(6)}
    assert len(figures) == 1


@pytest.mark.parametrize("bonus", ["none", "ante"])
@pytest.mark.parametrize(
    ("cards", "choice", "outcome"),
    [
        ("AC 2D", "war", "win"),
        ("2C AD", "war", "lose"),
        ("7C 7D", "surrender", "surrender"),
        ("7C 7D 2C 3C 4C KH QH", "war", "war_win"),
        ("7C 7D 2C 3C 4C QH QS", "war", "war_tie"),
        ("7C 7D 2C 3C 4C QH KS", "war", "war_lose"),
    ],
)
def test_the_odds_use_the_engines_net_result_of_each_outcome(
    bonus: str, cards: str, choice: str, outcome: str
) -> None:
    dealt = tuple(cards.split())
    rules = TableRules(bonus=bonus, burn=3)
    round_ = play(rules, lambda k: dealt[:k], 1000, choice=choice)
    assert round_.outcome == outcome
    assert Fraction(round_.net, 1000) == ante_net(outcome, bonus)


# --- the table and the commands -------------------------------------------------------------


def test_odds_table_gives_each_figure_exactly_and_as_a_float() -> None:
    table = odds_table(decks=6, tie_payout=10, bonus="none")
    assert table["decks"] == 6 and table["tie_payout"] == 10 and table["bonus"] == "none"
    assert table["p_tie"] == {"exact": "23/311", "value": pytest.approx(23 / 311)}
    assert table["house_edge_surrender"]["exact"] == "23/622"
    assert table["house_edge_tie_bet"]["exact"] == "58/311"
    assert table["p_war_tie"]["exact"] == "1181/15965"
    assert table["house_edge_war"]["value"] == pytest.approx(0.028771, abs=5e-7)
    assert table["element_of_risk"]["value"] == pytest.approx(0.0268, abs=5e-5)
    assert table["std_dev"] == pytest.approx(1.05, abs=5e-3)
    assert set(table["outcomes"]) == {"war", "surrender"}
    assert set(table["outcomes"]["war"]) == set(OUTCOMES)
    assert table["outcomes"]["surrender"]["surrender"]["exact"] == "23/311"


def test_odds_table_of_one_deck_names_the_published_fraction() -> None:
    assert odds_table(decks=1)["house_edge_war"]["exact"] == "503/20825"


def test_a_table_without_a_tie_bet_has_no_tie_bet_edge() -> None:
    assert odds_table(tie_payout=0)["house_edge_tie_bet"] is None


@pytest.mark.parametrize(
    "settings", [{"decks": 0}, {"decks": 9}, {"tie_payout": 31}, {"bonus": "double"}]
)
def test_odds_of_invalid_settings_are_refused(settings: dict) -> None:
    with pytest.raises(InvalidRules):
        odds_table(**settings)


def test_the_decks_table_covers_one_to_eight_decks() -> None:
    assert [odds.decks for odds in odds_by_decks()] == list(range(1, 9))
    text = format_odds_by_decks(10, "none")
    assert "| 6 | 23/311 | 2.8771 % | 3.6977 % | 18.6495 % | 2.6790 % | 1.0497 |" in text
    assert "| 1 | 1/17 | 2.4154 % |" in format_odds_by_decks(0, "none")


def test_python_dash_m_prints_the_table_without_loading_flask() -> None:
    code = (
        "import sys\n"
        "from sota_casino.__main__ import main\n"
        "main(['odds', '--bonus', 'ante'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('flask', 'sqlalchemy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "| 6 | 23/311 | 2.3301 % |" in out.stdout
    assert out.stdout.rstrip().endswith("[]")


def test_python_dash_m_refuses_an_out_of_range_payout(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["odds", "--tie-payout", "31"])
    assert exit_.value.code == 2
    assert "tie_payout" in capsys.readouterr().err
