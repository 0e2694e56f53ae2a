"""The Casino War table (pages): bet, see the cards, decide a tie."""

from __future__ import annotations

import secrets

from flask import Blueprint
from flask import current_app
from flask import g
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for
from flask.typing import ResponseReturnValue

from ..core import odds
from ..core.casino_war import CHOICES
from ..core.casino_war import TableRules
from ..core.errors import InsufficientFunds
from ..core.errors import InvalidBet
from ..db import get_session
from ..services import money
from ..services import rounds
from ..services import settings
from .format import chips
from .inputs import choice
from .inputs import form_chips
from .security import login_required

bp = Blueprint("casino_war", __name__, url_prefix="/casino-war")

TABLE = "casino_war"
#: Chip denominations offered on the table, in whole chips.
CHIP_VALUES = (1, 5, 25, 100, 500)


def _form_key() -> str | None:
    """Return the form's one-time key, which makes a double submit deal only once."""
    key = request.form.get("idempotency_key", "")
    return key if 8 <= len(key) <= 64 and key.isalnum() else None


def _render_table(round_: dict[str, object] | None) -> ResponseReturnValue:
    db = get_session()
    rules = settings.table_rules(db, TABLE)
    balances = money.balances(db, g.user.id)
    chips = [c for c in CHIP_VALUES if c * 100 <= rules["max_bet"]]
    return render_template(
        "casino_war/table.html",
        rules=rules,
        edge=odds.casino_war_odds(TableRules.from_dict(rules)),
        round=round_,
        balances=balances,
        chip_values=chips,
        form_key=secrets.token_hex(16),
    )


@bp.get("")
@login_required
def table() -> ResponseReturnValue:
    latest = rounds.list_rounds(get_session(), g.user.id, game=TABLE, limit=1)["rounds"]
    if latest and latest[0]["status"] == "awaiting_decision":
        # A tie waits for the player's decision: the table is that round until it is settled.
        return redirect(url_for("casino_war.round_page", round_id=latest[0]["id"]))
    return _render_table(None)


@bp.get("/rounds/<id:round_id>")
@login_required
def round_page(round_id: int) -> ResponseReturnValue:
    round_ = rounds.get_round(get_session(), g.user.id, round_id)
    if round_.get("game", TABLE) != TABLE:
        return redirect(url_for("sota.game", round_id=round_id))
    return _render_table(round_)


def _short_of_chips(needed: int, what: str, instead: str) -> InsufficientFunds:
    """Say, in chips, that the balance does not cover ``needed`` and what the player can do."""
    held = money.balances(get_session(), g.user.id)["chips"]
    low = current_app.config["LOW_BALANCE_CHIPS"]
    return InsufficientFunds(
        f"You have {chips(held)} chips, not enough for {what} of {chips(needed)} chips. "
        f"{instead}, or top up in the lobby once you are below {chips(low)} chips."
    )


def _outside_limits(error: InvalidBet) -> InvalidBet:
    """Say the table's limits in chips (the services count in hundredths)."""
    rules = settings.table_rules(get_session(), TABLE)
    limits = f"from {chips(rules['min_bet'])} to {chips(rules['max_bet'])} whole chips"
    if error.details.get("field") == "tie_bet":
        if not rules["tie_payout"]:
            return InvalidBet("This table offers no tie bet; leave it at 0.", field="tie_bet")
        return InvalidBet(f"The tie bet must be 0 or {limits}.", field="tie_bet")
    return InvalidBet(f"The ante must be {limits}.", field="bet")


@bp.post("/rounds")
@login_required
def bet() -> ResponseReturnValue:
    body = {"bet": form_chips("bet"), "tie_bet": form_chips("tie_bet", required=False)}
    try:
        round_ = rounds.place_casino_war_bet(
            get_session(),
            g.user.id,
            body["bet"],
            body["tie_bet"],
            idempotency_key=_form_key(),
            request_body=body,
        )
    except InvalidBet as error:
        raise _outside_limits(error) from error
    except InsufficientFunds as error:
        needed = body["bet"] + body["tie_bet"]
        raise _short_of_chips(needed, "this bet", "Bet less") from error
    return redirect(url_for("casino_war.round_page", round_id=round_["id"]), code=303)


@bp.post("/rounds/<id:round_id>/decision")
@login_required
def decision(round_id: int) -> ResponseReturnValue:
    picked = choice(request.form, "choice", CHOICES)
    try:
        rounds.decide_casino_war(
            get_session(),
            g.user.id,
            round_id,
            picked,
            idempotency_key=_form_key(),
            request_body={"choice": picked},
        )
    except InsufficientFunds as error:
        ante = rounds.get_round(get_session(), g.user.id, round_id)["bet"]
        raise _short_of_chips(ante, "the raise", "Surrender instead") from error
    return redirect(url_for("casino_war.round_page", round_id=round_id), code=303)
