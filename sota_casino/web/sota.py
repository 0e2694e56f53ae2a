"""The Sota table (pages): pick a rule set and a stake, watch the game, make prisoners' moves."""

from __future__ import annotations

import secrets
from typing import Any
from typing import Final

from flask import Blueprint
from flask import current_app
from flask import g
from flask import redirect
from flask import render_template
from flask import request
from flask import session
from flask import url_for
from flask.typing import ResponseReturnValue
from werkzeug.datastructures import MultiDict

from ..core import sota
from ..core.cards import RANK_VALUES
from ..core.errors import CasinoError
from ..core.errors import InsufficientFunds
from ..core.errors import InvalidInput
from ..core.errors import InvalidRules
from ..core.marks import N_
from ..db import get_session
from ..services import money
from ..services import results
from ..services import rounds
from ..services import settings
from ..services.results import SotaGame
from .errors import back_url
from .errors import handle_casino_error
from .errors import status_of
from .format import sweets_text
from .format import written_now
from .i18n import error_message
from .i18n import gettext
from .i18n import in_words
from .inputs import form_key
from .inputs import form_whole
from .inputs import is_digits
from .security import login_required
from .security import player_page

bp = Blueprint("sota", __name__, url_prefix="/sota")

TABLE: Final = "sota"
CUSTOM: Final = "custom"

#: Every option of the rule set, each value explained in one sentence, in docs/rules.md's order.
RULE_HELP: Final[list[dict[str, Any]]] = [
    {
        "name": "deck",
        "title": N_("Deck"),
        "about": N_("Which cards are shuffled and dealt."),
        "values": [
            ("standard52", N_("52 cards: the usual deck, 2 up to ace.")),
            ("jokers54", N_("54 cards: 52 and two jokers, which beat aces and tie each other.")),
            ("pjanitsa36", N_("36 cards, 6 up to ace; a six beats an ace.")),
            ("piquet32", N_("32 cards, 7 up to ace.")),
        ],
    },
    {
        "name": "war_down",
        "title": N_("Cards face down in a war"),
        "about": N_("How many cards each side lays face down before the deciding face-up card."),
        "values": [
            (3, N_("Nordic: three face down, the fourth face up.")),
            (1, N_("English: one face down, one face up.")),
            ("by_rank", N_("Syrian: as many as the tied rank is worth (2–10, J/Q/K 10, ace 1).")),
        ],
    },
    {
        "name": "won_cards",
        "title": N_("Won cards"),
        "about": N_("Where a trick's winner keeps the cards it takes."),
        "values": [
            ("bottom", N_("Straight under the winner's own pile.")),
            (
                "won_pile",
                N_("On a separate pile, shuffled and turned over when the pile runs out."),
            ),
        ],
    },
    {
        "name": "gather",
        "title": N_("Gathering the pot"),
        "about": N_("In what order the winner picks up the cards on the table."),
        "values": [
            ("winner_first", N_("Step by step, the winner's own cards first.")),
            ("table", N_("Step by step, in seat order.")),
            ("shuffled", N_("The pot is shuffled first (no game can loop forever).")),
        ],
    },
    {
        "name": "short",
        "title": N_("Short of cards in a war"),
        "about": N_("What happens to a hand that cannot lay a full war."),
        "values": [
            ("lose", N_("It loses at once and its cards join the pot.")),
            ("last_card_up", N_("Its last card is turned up and stands for the missing ones.")),
        ],
    },
    {
        "name": "multi_tie",
        "title": N_("Ties among three or four"),
        "about": N_("Who goes to war when only some hands tie at the top."),
        "values": [
            ("tied_only", N_("Only the tied hands; the others' cards stay in the pot.")),
            ("tied_only_return", N_("Only the tied hands; the others take their card back.")),
            ("all", N_("Every hand goes to war.")),
        ],
    },
    {
        "name": "end",
        "title": N_("End of the game"),
        "about": N_("When the game is over."),
        "values": [
            ("all_cards", N_("When one hand holds all the cards.")),
            ("single_pass", N_("After one pass through the dealt cards; most won cards wins.")),
        ],
    },
]
#: Options given as numbers, with their ranges.
NUMBER_HELP: Final = [
    {
        "name": "max_tricks",
        "title": N_("Trick limit"),
        "about": N_("After this many tricks the hand with the most cards wins (%(low)s–%(high)s)."),
        "default": 2000,
        "min": sota.MAX_TRICKS_RANGE[0],
        "max": rounds.MAX_DEALT_TRICKS,
    },
    {
        "name": "lead",
        "title": N_("Winning lead"),
        "about": N_(
            "End early once the leader has this many cards more than the next (blank: off)."
        ),
        "default": "",
        "min": sota.LEAD_RANGE[0],
        "max": sota.LEAD_RANGE[1],
    },
]
SWITCH_HELP: Final = [
    ("peace", N_("Rauha (peace)"), N_("The lowest card wins the trick instead of the highest.")),
    (
        "auto_war_twos",
        N_("Twos start wars"),
        N_("A face-up 2 starts a war among all hands at once."),
    ),
    (
        "underdog",
        N_("Underdog jack"),
        N_("A hand that loses a war with a jack face down takes the pot."),
    ),
    (
        "prisoners_of_war",
        N_("Prisoners of war"),
        N_("Won cards stay face up and you choose which of them to play once your pile is empty."),
    ),
    ("teams", N_("Teams"), N_("With 4 seats, you and CPU 1 play against the dealer and CPU 2.")),
]
#: A number written into a name or help joins its unit with a no-break space ("\u00a0", as
#: i18n.NO_BREAK_SPACE does where a count is filled in): a line never ends between them.
PRESET_TITLES: Final = {
    "nordic": N_("Nordic"),
    "english": N_("English"),
    "tod_und_leben": N_("Tod und Leben"),
    "pjanitsa": N_("Pjanitsa"),
    "rauha": N_("Rauha"),
    "syrian": N_("Syrian"),
    "kids_15_min": N_("Kids' 15\u00a0minutes"),
}
PRESET_HELP: Final = {
    "nordic": N_("Three cards face down in a war, the classic way."),
    "english": N_("One card face down in a war: quicker wars."),
    "tod_und_leben": N_("A 32-card deck, each pile played once; most won cards wins."),
    "pjanitsa": N_("36 cards from 6 up, and a six beats an ace."),
    "rauha": N_("Peace: the lowest card wins the trick."),
    "syrian": N_("A war is as wide as the tied card's value."),
    "kids_15_min": N_("Ends after 300 tricks, so a game fits in 15\u00a0minutes."),
}
#: What a player reads for each option's name in a refusal (the engine's messages name codes).
OPTION_TITLES: Final = {
    "seats": N_("Seats"),
    **{option["name"]: option["title"] for option in RULE_HELP},
    **{number["name"]: number["title"] for number in NUMBER_HELP},
    **{name: title for name, title, _about in SWITCH_HELP},
}


def _number(text: str, name: str) -> int:
    title = {"title": OPTION_TITLES[name]}
    field = f"rules.{name}"  # as the game request the form becomes holds it
    if text.lstrip().startswith(("-", "−")):
        raise InvalidRules(
            N_("%(title)s cannot be negative."), params=title, words=title, field=field
        )
    if not is_digits(text):
        raise InvalidRules(
            N_("%(title)s must be a whole number."), params=title, words=title, field=field
        )
    if len(text) > 9:
        raise InvalidRules(
            N_("%(title)s is far too large."), params=title, words=title, field=field
        )
    return int(text)


def _in_words(error: InvalidRules) -> InvalidRules:
    """A refused rule set as the form words it: its options by their names on the form, and a
    rule set the table does not offer (a preset, or rules of one's own) by the names of the
    presets it does."""
    if error.details.get("field") not in ("preset", "rules"):
        return in_words(error, OPTION_TITLES)
    offered = settings.table_rules(get_session(), TABLE)["presets"]
    # Named in the language the refusal is read in: a page may show it later.
    names = {"valid": {"names": [PRESET_TITLES.get(name, name) for name in offered]}}
    return InvalidRules(
        N_("Pick one of the rule sets this table offers: %(valid)s."),
        params=written_now(names),
        amounts=names,
        field="preset",
    )


def suggested_move(rules: dict[str, Any], options: list[str], count: int) -> dict[str, Any]:
    """Return a prisoners' move as the page offers it: the won cards strongest first, and the
    choice the dealer's rule would make (docs/rules.md: highest up, lowest down)."""
    sign = -1 if rules.get("peace") else 1

    def strength(card: str) -> int:
        return sign * RANK_VALUES[card[0]]

    up = max(options, key=strength)  # the first of equals from the top, as the dealer does
    rest = [card for card in options if card != up]
    down = sorted(rest, key=strength)[: count - 1]
    return {"cards": sorted(options, key=strength, reverse=True), "up": up, "down": down}


def again_body(played: SotaGame) -> dict[str, Any]:
    """Return the API body that deals another game like ``played``: its stake, and its preset's
    name when it played one (a presets-only table takes no rule set), else its rules."""
    for name in sota.PRESETS:
        if sota.SotaRules.from_preset(name).to_dict() == played.rules:
            return {"stake": played.stake, "preset": name}
    return {"stake": played.stake, "rules": played.rules}


def parse_rules(form: MultiDict[str, str]) -> dict[str, Any]:
    """Return the custom rule set sent by the table's form (the engine checks the values).

    :raises InvalidRules: if a number field is not a number.
    """
    rules: dict[str, Any] = {}
    seats = form.get("seats", "2")
    rules["seats"] = int(seats) if is_digits(seats) and len(seats) == 1 else seats
    for option in RULE_HELP:
        name = option["name"]
        value = form.get(f"rule_{name}")
        if value is None:
            continue
        rules[name] = int(value) if is_digits(value) and name == "war_down" else value
    for number in NUMBER_HELP:
        name = str(number["name"])
        text = (form.get(f"rule_{name}") or "").strip()
        if text and text != "off":
            rules[name] = _number(text, name)
        elif name == "lead":
            rules[name] = None
    for name, _title, _about in SWITCH_HELP:
        rules[name] = form.get(f"rule_{name}") == "on"
    return rules


def _table_body(form: MultiDict[str, str], stake: int) -> dict[str, Any]:
    """Return the API body for the table's form: a preset, a preset with more seats, or custom."""
    picked = form.get("preset", "")
    if picked == CUSTOM:
        return {"stake": stake, "rules": parse_rules(form)}
    seats = form.get("seats", "2")
    if seats not in ("2", "3", "4"):
        raise InvalidInput(N_("Pick 2, 3 or 4 seats."), field="seats")
    if seats == "2":
        return {"stake": stake, "preset": picked}
    if picked in sota.PRESETS:
        # A preset with more seats is that preset's rule set with another seat count.
        return {"stake": stake, "rules": {**sota.PRESETS[picked], "seats": int(seats)}}
    raise InvalidRules(N_("unknown preset '%(name)s'"), params={"name": picked}, field="preset")


#: The session's note of a refused table form for the table's page drawn next: the field the
#: refusal is about and what was typed, as a flashed message is kept for it.
REFUSED: Final = "sota_refused"
#: The table form's fields a refusal may be about, each drawn beside its refusal: the stake, the
#: seats, the rule set and each option of one's own rules (named as the engine names them).
REFUSABLE: Final = ("stake", "preset", *OPTION_TITLES)
#: The longest value of a field the note keeps (a rule's longest, "tied_only_return", fits).
TYPED_LENGTH: Final = 40


def refused_field(error: CasinoError) -> object:
    """Return the table form's field a refusal is about: the stake for a balance that does not
    cover it, else the field of the request the refusal names, as the form names it (an option
    of the rules, ``rules.teams``, by its own name; the rules as a whole by the rule set)."""
    if isinstance(error, InsufficientFunds):
        return "stake"
    field = error.details.get("field")
    if field == "rules":
        return "preset"
    return field.removeprefix("rules.") if isinstance(field, str) else field


def typed_rules(form: MultiDict[str, str]) -> dict[str, str]:
    """Return one's own rules as the table's form sent them, each field's value by its option."""
    names = [*(option["name"] for option in RULE_HELP), *(number["name"] for number in NUMBER_HELP)]
    names += [name for name, _title, _about in SWITCH_HELP]
    return {name: form[f"rule_{name}"][:TYPED_LENGTH] for name in names if f"rule_{name}" in form}


@bp.errorhandler(CasinoError)
def refused(error: CasinoError) -> ResponseReturnValue:
    """Send a refused form back as every refused form goes (flashed, 303); one about a field of
    the table's form notes it, so that its page shows the refusal beside the field, focused,
    keeping what was typed (on a phone the message at the page's top and the field under the
    Deal bar could not both be seen, nor an option of one's own rules drawn back at its
    default)."""
    field = refused_field(error)
    form = request.form
    status = status_of(error)
    if (
        request.endpoint == "sota.play"
        and not form.get("again")
        and field in REFUSABLE
        and status < 500
        and status != 404
        and back_url() == url_for("sota.table")
    ):
        seats = form.get("seats", "")
        session[REFUSED] = {
            "field": field,
            "stake": form.get("stake", "")[:16],
            "seats": seats if seats in ("2", "3", "4") else "",
            "preset": form.get("preset", "")[:TYPED_LENGTH],
            "rules": typed_rules(form),
        }
    return handle_casino_error(error)


def stake_words(table: dict[str, Any]) -> dict[str, str]:
    """What the table says of its stake limits, in the page's language: the stake's help, and
    the refusal of another stake (the service's). A table whose limits are equal names its one
    stake ("The stake is 1 sweet"), not a range of it ("from 1 to 1")."""
    low, high = table["min_stake"], table["max_stake"]
    if low == high:
        shown = gettext("The stake is %(amount)s at this table.", amount=sweets_text(low))
    else:
        shown = gettext(
            "Whole sweets from %(min_stake)s to %(max_stake)s.", min_stake=low, max_stake=high
        )
    return {"help": shown, "refusal": error_message(rounds.stake_refusal(low, high))}


@bp.get("")
@player_page
def table() -> ResponseReturnValue:
    db = get_session()
    noted = session.pop(REFUSED, None)
    typed: dict[str, Any] = noted if isinstance(noted, dict) else {}
    return render_template(
        "sota/table.html",
        typed=typed,
        refused_field=typed.get("field"),
        table=(rules := settings.table_rules(db, TABLE)),
        stake_words=stake_words(rules),
        balances=money.balances(db, g.user.id),
        rule_help=RULE_HELP,
        number_help=NUMBER_HELP,
        switch_help=SWITCH_HELP,
        preset_help=PRESET_HELP,
        preset_titles=PRESET_TITLES,
        presets=sota.PRESETS,
        form_key=secrets.token_hex(16),
    )


@bp.post("/games")
@login_required
def play() -> ResponseReturnValue:
    form = request.form
    again = form.get("again", "")
    if again:
        # "Deal again" on a game's page: the same stake and rules as that game.
        if not is_digits(again) or len(again) > 18:
            raise InvalidInput(N_("Pick a game to deal again."), field="again")
        played = rounds.get_round(get_session(), g.user.id, int(again), TABLE)
        assert isinstance(played, SotaGame)  # get_round refuses another game's round
        body: dict[str, Any] = again_body(played)
        stake = body["stake"]
    else:
        stake = form_whole("stake", label=N_("stake"), unit=N_("sweets"), example=N_("5 or 10"))
        body = _table_body(form, stake)
    try:
        game = rounds.play_sota(
            get_session(),
            g.user.id,
            body["stake"],
            body.get("rules"),
            body.get("preset"),
            idempotency_key=form_key(),
            request_body=body,
        )
    except InvalidRules as error:
        raise _in_words(error) from error
    except InsufficientFunds as error:
        held = error.details["held"]
        assert isinstance(held, int)  # as ledger.post refuses
        low = current_app.config["LOW_BALANCE_SWEETS"]
        amounts = {"held": {"sweets": held}, "stake": {"sweets": stake}, "low": {"sweets": low}}
        raise InsufficientFunds(
            N_(
                "You have %(held)s, not enough for a stake of %(stake)s. Stake less, or top up in "
                "the lobby once you are below %(low)s."
            ),
            params=written_now(amounts),
            amounts=amounts,
        ) from error
    return redirect(url_for("sota.game", round_id=game.id), code=303)


@bp.get("/games/<id:round_id>")
@login_required
def game(round_id: int) -> ResponseReturnValue:
    played = rounds.get_round(get_session(), g.user.id, round_id)
    if not isinstance(played, SotaGame):
        return redirect(url_for("casino_war.round_page", round_id=round_id))
    pending = played.pending
    move = suggested_move(played.rules, pending.options, pending.count) if pending else None
    return render_template(
        "sota/game.html",
        game=played,
        game_json=results.to_json(played),
        move=move,
        again=again_body(played),
        form_key=secrets.token_hex(16),
    )


@bp.post("/games/<id:round_id>/moves")
@login_required
def move(round_id: int) -> ResponseReturnValue:
    form = request.form
    face_up = form.get("up")
    if not face_up:
        raise InvalidInput(N_("Pick the card to lay face up."), field="cards")
    cards = [card for card in form.getlist("down") if card != face_up] + [face_up]
    # The choice the form was drawn for (a form of an older page sends none); anything but
    # digits goes to the service as sent, which refuses it.
    number = form.get("move")
    move = int(number) if number and is_digits(number) and len(number) <= 19 else number
    rounds.sota_move(
        get_session(),
        g.user.id,
        round_id,
        cards,
        move=move,
        idempotency_key=form_key(),
        request_body={"cards": cards, "move": move},
    )
    return redirect(url_for("sota.game", round_id=round_id), code=303)
