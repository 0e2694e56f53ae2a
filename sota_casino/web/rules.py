"""How to play: the rules pages of Casino War and Sota, open to everyone.

The options listed are the engines' own (the fields of ``TableRules`` and ``SotaRules`` and the
values the engines accept), so a new option appears here at once; this module only adds the
plain words for each. The worked examples are played by the engines from fixed cards, and the
payouts and house edges are computed by the core for the table's present settings.
"""

from __future__ import annotations

from dataclasses import fields
from fractions import Fraction
from typing import Any
from typing import Final

from flask import Blueprint
from flask import render_template
from flask.typing import ResponseReturnValue

from ..core import casino_war
from ..core import odds
from ..core import sota
from ..core.cards import canonical_deck
from ..core.marks import N_
from ..db import get_session
from ..services import settings
from .i18n import gettext
from .i18n import ngettext
from .i18n import ranges_kept
from .sota import PRESET_TITLES

bp = Blueprint("rules", __name__, url_prefix="/rules")

# --- Casino War ---------------------------------------------------------------------------

#: What each table setting changes, in plain words.
WAR_OPTION_TEXT: Final[dict[str, tuple[str, str]]] = {
    "decks": (
        N_("Decks in the shoe"),
        N_(
            "How many 52-card decks are shuffled together for each round. More decks make a tie "
            "of the first two cards a little more likely, which changes the house edge slightly."
        ),
    ),
    "min_bet": (N_("Smallest ante"), N_("The least you may bet on a round, in whole chips.")),
    "max_bet": (N_("Largest ante"), N_("The most you may bet on a round, in whole chips.")),
    "tie_payout": (
        N_("Tie bet"),
        N_(
            "An optional side bet that the first two cards tie. It pays this many to one (and "
            "returns the tie bet) when they do, and is lost otherwise; the war cards never count "
            "for it. At 0 the table offers no tie bet."
        ),
    ),
    "burn": (
        N_("Burned cards"),
        N_(
            "How many cards the dealer discards face up before dealing the war cards. They are "
            "dealt and shown, but they never change the odds."
        ),
    ),
    "bonus": (
        N_("War tie bonus"),
        N_(
            "What you get when the war cards tie again. With none (the standard rule) your raise "
            "wins even money and the ante pushes; with an extra ante you also win an amount equal "
            "to the ante, as at the Mirage, Niagara, Wynn and Sands Macau."
        ),
    ),
}
#: Each outcome of a round in plain words, in the engine's order of outcomes.
WAR_OUTCOME_TEXT: Final[dict[str, str]] = {
    "win": N_("Your first card is higher"),
    "lose": N_("Your first card is lower"),
    "surrender": N_("The first cards tie and you surrender"),
    "war_win": N_("You go to war and your war card is higher"),
    "war_tie": N_("You go to war and the war cards tie again"),
    "war_lose": N_("You go to war and your war card is lower"),
}
#: The war of the example: a tie of nines, then a king against a four.
WAR_EXAMPLE_TIE: Final = ("9H", "9S")
WAR_EXAMPLE_BURNED: Final = ("2C", "7D", "JC", "5S", "3H")
WAR_EXAMPLE_WAR: Final = ("KD", "4C")
WAR_EXAMPLE_ANTE: Final = 1000  # 10 chips


def _antes(value: Fraction) -> str:
    """Write a net result in antes: ``+1 ante``, ``−½ ante``, ``+2 antes``."""
    sign = "+" if value > 0 else "−"
    size = abs(value)
    amount = sign + ("½" if size == Fraction(1, 2) else str(size))
    # Up to one ante the word is singular, as "½ ante" reads.
    return ngettext("%(amount)s ante", "%(amount)s antes", 1 if size <= 1 else 2, amount=amount)


def war_example(rules: casino_war.TableRules) -> dict[str, Any]:
    """A war played by the engine at the table's burn: the tie, the burned cards, the war."""
    shoe = (*WAR_EXAMPLE_TIE, *WAR_EXAMPLE_BURNED[: rules.burn], *WAR_EXAMPLE_WAR)
    played = casino_war.play(rules, lambda count: shoe[:count], WAR_EXAMPLE_ANTE, 0, casino_war.WAR)
    return {
        "tie": WAR_EXAMPLE_TIE,
        "burned": WAR_EXAMPLE_BURNED[: rules.burn],
        "war": WAR_EXAMPLE_WAR,
        "ante": WAR_EXAMPLE_ANTE,
        "outcome": played.outcome,
        "payout": played.payout,
        "net": played.payout - played.staked,
    }


@bp.get("/casino-war", endpoint="casino_war")
def casino_war_rules() -> ResponseReturnValue:
    table = casino_war.TableRules.from_dict(settings.table_rules(get_session(), "casino_war"))
    options = [
        {
            "name": f.name,
            "title": gettext(WAR_OPTION_TEXT[f.name][0]),
            "about": gettext(WAR_OPTION_TEXT[f.name][1]),
            "value": getattr(table, f.name),
            "default": f.default,
        }
        for f in fields(casino_war.TableRules)
    ]
    payouts = [
        {
            "outcome": outcome,
            "about": gettext(WAR_OUTCOME_TEXT[outcome]),
            "none": _antes(odds.ante_net(outcome, "none")),
            "ante": _antes(odds.ante_net(outcome, "ante")),
        }
        for outcome in casino_war.OUTCOMES
    ]
    return render_template(
        "rules/casino_war.html",
        table=table,
        options=options,
        payouts=payouts,
        figures=odds.casino_war_odds(table),
        by_decks=odds.odds_by_decks(table.tie_payout, table.bonus),
        example=war_example(table),
    )


# --- Sota ---------------------------------------------------------------------------------

#: What each option of the rule set changes, in plain words, and which rule texts it comes from.
SOTA_OPTION_TEXT: Final[dict[str, dict[str, str]]] = {
    "seats": {
        "title": N_("Seats"),
        "about": N_(
            "How many hands play: you, the dealer, and up to two computer players. The "
            "deck is dealt out one card at a time around the table; cards that do not share out "
            "evenly are set aside unseen."
        ),
        "origin": N_("every rule text"),
    },
    "deck": {
        "title": N_("Deck"),
        "about": N_("Which cards are shuffled and dealt. A smaller deck makes a shorter game."),
        "origin": N_(
            "the Finnish rule texts: one ranks a joker above the ace; the other names "
            "Pjanitsa's 36 and Tod und Leben's 32 cards"
        ),
    },
    "war_down": {
        "title": N_("Cards face down in a war"),
        "about": N_(
            "How many cards each hand in a war lays face down before the face-up card "
            "that decides it. More cards down means bigger pots and faster swings."
        ),
        "origin": N_(
            "the Finnish and Norwegian texts (three down), the Portuguese text and the "
            "English tradition (one down), and the Syrian war of the Finnish text"
        ),
    },
    "won_cards": {
        "title": N_("Won cards"),
        "about": N_("Where the winner of a trick keeps the cards it takes."),
        "origin": N_("the Finnish and Norwegian rule texts"),
    },
    "gather": {
        "title": N_("Gathering the pot"),
        "about": N_(
            "In what order the winner picks up the cards on the table, which decides the "
            "order they come back into play. Fixed orders can repeat forever; a shuffled pot "
            "cannot."
        ),
        "origin": N_("the Finnish rule text"),
    },
    "short": {
        "title": N_("Short of cards in a war"),
        "about": N_("What happens to a hand that has too few cards to lay a full war."),
        "origin": N_("the Norwegian, Portuguese and Finnish rule texts, which do not agree"),
    },
    "multi_tie": {
        "title": N_("Ties among three or four"),
        "about": N_(
            "Who goes to war when, with three or four seats, only some hands tie for the "
            "highest card."
        ),
        "origin": N_("the Finnish and Portuguese rule texts"),
    },
    "end": {
        "title": N_("End of the game"),
        "about": N_("When the game is over and who wins it."),
        "origin": N_(
            "the Norwegian and Finnish rule texts (one pass, as in the German Tod und Leben)"
        ),
    },
    "max_tricks": {
        "title": N_("Trick limit"),
        "about": N_(
            "After this many tricks (and the wars in them) the game stops and the hand "
            "with the most cards wins; equal top counts are a draw. It keeps every game finite."
        ),
        "origin": N_("the Norwegian text and the Finnish text's time-limit war"),
    },
    "lead": {
        "title": N_("Winning lead"),
        "about": N_(
            "When set, the game ends as soon as the leading hand holds this many cards "
            "more than the next one, and the leader wins."
        ),
        "origin": N_("the Finnish rule text"),
    },
    "peace": {
        "title": N_("Rauha (peace)"),
        "about": N_(
            "Everything is turned around: the lowest card wins the trick. Equal lowest "
            "cards still go to war."
        ),
        "origin": N_("Rauha (Finnish for “peace”), an extra rule of the Finnish rule text"),
    },
    "auto_war_twos": {
        "title": N_("Twos start wars"),
        "about": N_(
            "A 2 turned face up starts a war among every hand of that step, tied or not. "
            "With Syrian wars, the step's best card sets how many cards go down."
        ),
        "origin": N_("the automatic war (automaattinen sota) of the Finnish rule text"),
    },
    "underdog": {
        "title": N_("Underdog jack"),
        "about": N_(
            "A hand that loses a war but laid a jack face down in it takes the pot "
            "instead. If several did, the first in seat order takes it."
        ),
        "origin": N_(
            "the underdog rule of the Finnish rule text, where the jack is the “soldier” (sotamies)"
        ),
    },
    "prisoners_of_war": {
        "title": N_("Prisoners of war"),
        "about": N_(
            "Won cards stay face up beside each hand. Once its face-down pile is empty, a "
            "hand chooses which of its won cards (its prisoners) to play: the only Sota with "
            "decisions. You choose yours; the dealer and computer players lay their best card "
            "face up and their weakest face down."
        ),
        "origin": N_("Sotavangit (Prisoners of War), an extra rule of the Finnish rule text"),
    },
    "teams": {
        "title": N_("Teams"),
        "about": N_(
            "With four seats, you and CPU 1 (seats 0 and 2) play together against the dealer "
            "and CPU 2 (seats 1 and 3). A team wins when the other team has no cards left."
        ),
        "origin": N_("the team war (joukkuesota) of the Finnish rule text"),
    },
}
#: Each value of each option, in plain words (switches: False is off, True is on).
SOTA_VALUE_TEXT: Final[dict[str, dict[Any, str]]] = {
    "seats": {
        2: N_("You against the dealer."),
        3: N_("You, the dealer and one computer player."),
        4: N_("You, the dealer and two computer players."),
    },
    "deck": {
        "standard52": N_("The usual 52 cards, 2 up to ace."),
        "jokers54": N_("52 cards and two jokers; a joker beats an ace, and two jokers tie."),
        "pjanitsa36": N_(
            "36 cards, 6 up to ace. A six beats an ace: when a six and an ace lie "
            "face up in the same step, the sixes rank above the aces. Nothing else changes."
        ),
        "piquet32": N_("32 cards, 7 up to ace."),
    },
    "war_down": {
        3: N_("Nordic: three cards face down, the fourth face up."),
        1: N_("English: one card face down, one face up."),
        "by_rank": N_(
            "Syrian: as many cards face down as the tied card is worth: 2 to 10 their "
            "number, jack, queen and king 10, an ace (or a joker) 1."
        ),
    },
    "won_cards": {
        "bottom": N_("Straight under the winner's own pile."),
        "won_pile": N_(
            "On a separate pile of won cards, which is shuffled and turned over as "
            "the new pile when the pile in hand runs out."
        ),
    },
    "gather": {
        "winner_first": N_(
            "Step by step in the order laid, the trick winner's cards first in each step."
        ),
        "table": N_("Step by step in the order laid, in seat order."),
        "shuffled": N_("The pot is shuffled first (from the round's fair shuffle stream)."),
    },
    "short": {
        "lose": N_("It lays all it has and loses at once; its cards join the pot."),
        "last_card_up": N_(
            "Its last card is turned face up and stands for all the missing "
            "cards; with no card at all, the card that tied stands."
        ),
    },
    "multi_tie": {
        "tied_only": N_("Only the tied hands go to war; the others' cards stay in the pot."),
        "tied_only_return": N_(
            "Only the tied hands go to war; the others take their card back under their pile."
        ),
        "all": N_("Every hand goes to war."),
    },
    "end": {
        "all_cards": N_("The last hand with cards wins."),
        "single_pass": N_(
            "Each hand plays its dealt pile once; won cards go to a pile that is "
            "never turned over, and the most won cards wins."
        ),
    },
    "max_tricks": {"number": N_("Any whole number of tricks from {low} to {high}.")},
    "lead": {
        None: N_("Off: the game is not ended by a lead."),
        "number": N_("A lead of {low} to {high} cards ends the game."),
    },
    **{
        name: {False: N_("Off."), True: N_("On.")}
        for name in ("peace", "auto_war_twos", "underdog", "prisoners_of_war", "teams")
    },
}
#: Where each named rule set comes from, and what it is like to play (titled by PRESET_TITLES).
PRESET_ORIGINS: Final = {
    "nordic": N_(
        "The Finnish Sota and the Norwegian Krig as children play them: three cards face "
        "down in a war, the fourth face up, the winner's cards under its pile. These are the "
        "defaults."
    ),
    "english": N_(
        "The English-language tradition (War, in Britain also Battle), as the Finnish rule "
        "text describes it and the Portuguese text plays it: one card face down and one face "
        "up in a war, so a war between two wins six cards."
    ),
    "syrian": N_(
        "The Syrian war, one of the international cousins in the Finnish rule text: the width "
        "of a war depends on the tied card, so a war of threes lays three cards face down."
    ),
    "rauha": N_(
        "Rauha is Finnish for “peace”: the reverse game of the Finnish rule text's extra "
        "rules, where the lower card wins the trick."
    ),
    "pjanitsa": N_(
        "Pjanitsa, the Russian cousin named in the Finnish rule text: a 36-card deck, and a "
        "six beats an ace, the only exception to the ranking."
    ),
    "tod_und_leben": N_(
        "Tod und Leben (“death and life”), the German relative that written sources mention "
        "from the 1830s: 32 cards and a single pass; won cards are not played again, and "
        "whoever collected more wins."
    ),
    "kids_15_min": N_(
        "The time-limit war of the Finnish rule text, played in short rounds that the hand "
        "with the most cards wins: here the game ends after 300 tricks."
    ),
}
#: The variants that are options rather than named rule sets, with where they come from.
VARIANT_ORIGINS: Final[dict[str, str]] = {
    "prisoners_of_war": N_(
        "Sotavangit (Prisoners of War), an extra rule of the Finnish rule "
        "text: won cards are kept in view and a player chooses which one to play next, the only "
        "variant that brings real decisions into the game."
    ),
    "teams": N_(
        "The team war (joukkuesota) of the Finnish rule text: two against two, and a "
        "pair's cards count together."
    ),
}
#: The war of the example, with the Nordic rules: both turn an eight, then three down each.
SOTA_EXAMPLE_DEAL: Final = ("8H", "8C", "3D", "TS", "JH", "6C", "2S", "KD", "QS", "5D")


def option_values(name: str) -> list[Any]:
    """Return the values the engine accepts for option ``name``; a range is ``"number"``."""
    if name == "seats":
        return list(sota.SEAT_COUNTS)
    if name == "war_down":
        return list(sota.WAR_DOWN_VALUES)
    if name in sota.NAMED_VALUES:
        return list(sota.NAMED_VALUES[name])
    if name in sota.SWITCHES:
        return [False, True]
    if name == "max_tricks":
        return ["number"]
    if name == "lead":
        return [None, "number"]
    raise KeyError(f"option {name!r} has no known values")


RANGES: Final = {"max_tricks": sota.MAX_TRICKS_RANGE, "lead": sota.LEAD_RANGE}


def _shown(value: Any) -> str:
    """Write a value as the API and the rule picker spell it."""
    if value is None:
        return "off"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def sota_options() -> list[dict[str, Any]]:
    """Every option of the Sota rule set with its values, each in plain words."""
    options = []
    for f in fields(sota.SotaRules):
        low, high = RANGES.get(f.name, (0, 0))
        values = [
            {
                "value": _shown(value) if value != "number" else ranges_kept(f"{low}–{high}"),
                "about": gettext(SOTA_VALUE_TEXT[f.name][value]).format(low=low, high=high),
                "default": value == f.default or (value == "number" and f.default is not None),
            }
            for value in option_values(f.name)
        ]
        text = {key: gettext(words) for key, words in SOTA_OPTION_TEXT[f.name].items()}
        options.append({"name": f.name, **text, "values": values})
    return options


def sota_example() -> dict[str, Any]:
    """The first trick of a Nordic two-seat game dealt from :data:`SOTA_EXAMPLE_DEAL`."""
    rules = sota.SotaRules()
    rest = [card for card in canonical_deck(rules.deck) if card not in SOTA_EXAMPLE_DEAL]
    played = sota.play_game(rules, deck_order=[*SOTA_EXAMPLE_DEAL, *rest])
    trick = played.tricks[0]
    pot = sum(len(cards) for step in trick.steps for cards in step)
    return {"steps": trick.steps, "winner": trick.winner, "counts": trick.counts, "pot": pot}


def sota_payouts(stake: int) -> list[dict[str, Any]]:
    """What a win, a draw and a loss return at each seat count, computed by the engine."""
    rows = []
    for seats in sota.SEAT_COUNTS:
        rules = sota.SotaRules(seats=seats)
        rows.append(
            {
                "seats": seats,
                "teams": False,
                "win": sota.payout(rules, sota.PLAYER, stake),
                "draw": sota.payout(rules, sota.DRAW, stake),
                "lose": sota.payout(rules, 1, stake),
            }
        )
    teams = sota.SotaRules(seats=4, teams=True)
    rows.append(
        {
            "seats": 4,
            "teams": True,
            "win": sota.payout(teams, sota.TEAM_0, stake),
            "draw": sota.payout(teams, sota.DRAW, stake),
            "lose": sota.payout(teams, sota.TEAM_1, stake),
        }
    )
    return rows


@bp.get("/sota", endpoint="sota")
def sota_rules() -> ResponseReturnValue:
    table = settings.table_rules(get_session(), "sota")
    presets = [
        {
            "name": name,
            "title": gettext(PRESET_TITLES[name]),
            "about": gettext(PRESET_ORIGINS[name]),
            "changes": {key: _shown(value) for key, value in changes.items()},
            "offered": name in table["presets"],
        }
        for name, changes in sota.PRESETS.items()
    ]
    return render_template(
        "rules/sota.html",
        table=table,
        options=sota_options(),
        presets=presets,
        variants={name: gettext(words) for name, words in VARIANT_ORIGINS.items()},
        example=sota_example(),
        payouts=sota_payouts(10),
        example_stake=10,
    )
