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
from flask import url_for
from flask.typing import ResponseReturnValue
from werkzeug.datastructures import MultiDict

from ..core import sota
from ..core.errors import InsufficientFunds
from ..core.errors import InvalidInput
from ..core.errors import InvalidRules
from ..db import get_session
from ..services import money
from ..services import rounds
from ..services import settings
from .format import sweets
from .inputs import form_whole
from .security import login_required

bp = Blueprint("sota", __name__, url_prefix="/sota")

TABLE: Final = "sota"
CUSTOM: Final = "custom"

#: Every option of the rule set, each value explained in one sentence, in RULES.md's order.
RULE_HELP: Final[list[dict[str, Any]]] = [
    {
        "name": "seats",
        "title": "Seats",
        "about": "How many hands play: you, the dealer, and up to two computer players.",
        "values": [
            (2, "You against the dealer."),
            (3, "You, the dealer and one computer player."),
            (4, "You, the dealer and two computer players."),
        ],
    },
    {
        "name": "deck",
        "title": "Deck",
        "about": "Which cards are shuffled and dealt.",
        "values": [
            ("standard52", "The usual 52 cards, 2 up to ace."),
            ("jokers54", "52 cards and two jokers, which beat aces and tie each other."),
            ("pjanitsa36", "36 cards, 6 up to ace; a six beats an ace."),
            ("piquet32", "32 cards, 7 up to ace."),
        ],
    },
    {
        "name": "war_down",
        "title": "Cards face down in a war",
        "about": "How many cards each side lays face down before the deciding face-up card.",
        "values": [
            (3, "Nordic: three face down, the fourth face up."),
            (1, "English: one face down, one face up."),
            ("by_rank", "Syrian: as many as the tied rank is worth (2–10, J/Q/K 10, ace 1)."),
        ],
    },
    {
        "name": "won_cards",
        "title": "Won cards",
        "about": "Where a trick's winner keeps the cards it takes.",
        "values": [
            ("bottom", "Straight under the winner's own pile."),
            ("won_pile", "On a separate pile, shuffled and turned over when the pile runs out."),
        ],
    },
    {
        "name": "gather",
        "title": "Gathering the pot",
        "about": "In what order the winner picks up the cards on the table.",
        "values": [
            ("winner_first", "Step by step, the winner's own cards first."),
            ("table", "Step by step, in seat order."),
            ("shuffled", "The pot is shuffled first (no game can loop forever)."),
        ],
    },
    {
        "name": "short",
        "title": "Short of cards in a war",
        "about": "What happens to a hand that cannot lay a full war.",
        "values": [
            ("lose", "It loses at once and its cards join the pot."),
            ("last_card_up", "Its last card is turned up and stands for the missing ones."),
        ],
    },
    {
        "name": "multi_tie",
        "title": "Ties among three or four",
        "about": "Who goes to war when only some hands tie at the top.",
        "values": [
            ("tied_only", "Only the tied hands; the others' cards stay in the pot."),
            ("tied_only_return", "Only the tied hands; the others take their card back."),
            ("all", "Every hand goes to war."),
        ],
    },
    {
        "name": "end",
        "title": "End of the game",
        "about": "When the game is over.",
        "values": [
            ("all_cards", "When one hand holds all the cards."),
            ("single_pass", "After one pass through the dealt cards; most won cards wins."),
        ],
    },
]
#: Options given as numbers, with their ranges.
NUMBER_HELP: Final = [
    {
        "name": "max_tricks",
        "title": "Trick limit",
        "about": "After this many tricks the hand with the most cards wins (1–100 000).",
        "default": 2000,
        "min": sota.MAX_TRICKS_RANGE[0],
        "max": sota.MAX_TRICKS_RANGE[1],
    },
    {
        "name": "lead",
        "title": "Winning lead",
        "about": "End early once the leader has this many cards more than the next (blank: off).",
        "default": "",
        "min": sota.LEAD_RANGE[0],
        "max": sota.LEAD_RANGE[1],
    },
]
SWITCH_HELP: Final = [
    ("peace", "Rauha (peace)", "The lowest card wins the trick instead of the highest."),
    ("auto_war_twos", "Twos start wars", "A face-up 2 starts a war among all hands at once."),
    ("underdog", "Underdog jack", "A hand that loses a war with a jack face down takes the pot."),
    (
        "prisoners_of_war",
        "Prisoners of war",
        "Won cards stay face up and you choose which of them to play once your pile is empty.",
    ),
    ("teams", "Teams", "With 4 seats, you and CPU 1 play against the dealer and CPU 2."),
]
PRESET_TITLES: Final = {
    "nordic": "Nordic",
    "english": "English",
    "tod_und_leben": "Tod und Leben",
    "pjanitsa": "Pjanitsa",
    "rauha": "Rauha",
    "syrian": "Syrian",
    "kids_15_min": "Kids' 15 minutes",
}
PRESET_HELP: Final = {
    "nordic": "The Nordic classic: three cards face down in a war.",
    "english": "The English way: one card face down in a war.",
    "tod_und_leben": "Tod und Leben: a 32-card deck, each pile played once, most won cards wins.",
    "pjanitsa": "Pjanitsa: 36 cards from 6 up, and a six beats an ace.",
    "rauha": "Rauha (peace): the lowest card wins.",
    "syrian": "Syrian: a war is as wide as the tied card's value.",
    "kids_15_min": "Kids' 15 minutes: the game ends after 300 tricks.",
}


def _number(text: str, name: str) -> int:
    if not text.isdigit() or len(text) > 9:
        raise InvalidRules(f"{name.replace('_', ' ')} must be a whole number", option=name)
    return int(text)


def parse_rules(form: MultiDict[str, str]) -> dict[str, Any]:
    """Return the custom rule set sent by the table's form (the engine checks the values).

    :raises InvalidRules: if a number field is not a number.
    """
    rules: dict[str, Any] = {}
    for option in RULE_HELP:
        name = option["name"]
        value = form.get(f"rule_{name}")
        if value is None:
            continue
        rules[name] = int(value) if value.isdigit() and name in ("seats", "war_down") else value
    for number in NUMBER_HELP:
        name = number["name"]
        text = (form.get(f"rule_{name}") or "").strip()
        if text and text != "off":
            rules[name] = _number(text, name)
        elif name == "lead":
            rules[name] = None
    for name, _title, _about in SWITCH_HELP:
        rules[name] = form.get(f"rule_{name}") == "on"
    return rules


def _form_key() -> str | None:
    key = request.form.get("idempotency_key", "")
    return key if 8 <= len(key) <= 64 and key.isalnum() else None


@bp.get("")
@login_required
def table() -> ResponseReturnValue:
    db = get_session()
    return render_template(
        "sota/table.html",
        table=settings.table_rules(db, TABLE),
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
    stake = form_whole("stake", label="stake", unit="sweets", example="5 or 10")
    picked = form.get("preset", "")
    if picked == CUSTOM:
        body: dict[str, Any] = {"stake": stake, "rules": parse_rules(form)}
    else:
        seats = form.get("seats", "2")
        if seats not in ("2", "3", "4"):
            raise InvalidInput("Pick 2, 3 or 4 seats.", field="seats")
        if seats == "2":
            body = {"stake": stake, "preset": picked}
        elif picked in sota.PRESETS:
            # A preset with more seats is that preset's rule set with another seat count.
            body = {"stake": stake, "rules": {**sota.PRESETS[picked], "seats": int(seats)}}
        else:
            raise InvalidRules(f"unknown preset {picked!r}", option="preset")
    try:
        game = rounds.play_sota(
            get_session(),
            g.user.id,
            body["stake"],
            body.get("rules"),
            body.get("preset"),
            idempotency_key=_form_key(),
            request_body=body,
        )
    except InsufficientFunds as error:
        held = money.balances(get_session(), g.user.id)["sweets"]
        low = current_app.config["LOW_BALANCE_SWEETS"]
        raise InsufficientFunds(
            f"You have {sweets(held)} sweets, not enough for a stake of {sweets(stake)} sweets. "
            f"Stake less, or top up in the lobby once you are below {sweets(low)} sweets."
        ) from error
    return redirect(url_for("sota.game", round_id=game["id"]), code=303)


@bp.get("/games/<id:round_id>")
@login_required
def game(round_id: int) -> ResponseReturnValue:
    played = rounds.get_round(get_session(), g.user.id, round_id)
    if played["game"] != TABLE:
        return redirect(url_for("casino_war.round_page", round_id=round_id))
    return render_template("sota/game.html", game=played, form_key=secrets.token_hex(16))


@bp.post("/games/<id:round_id>/moves")
@login_required
def move(round_id: int) -> ResponseReturnValue:
    form = request.form
    face_up = form.get("up")
    if not face_up:
        raise InvalidInput("Pick the card to lay face up.", field="cards")
    cards = [card for card in form.getlist("down") if card != face_up] + [face_up]
    rounds.sota_move(
        get_session(),
        g.user.id,
        round_id,
        cards,
        idempotency_key=_form_key(),
        request_body={"cards": cards},
    )
    return redirect(url_for("sota.game", round_id=round_id), code=303)
