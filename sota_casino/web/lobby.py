"""The landing page and the lobby: balances, top-ups, the last rounds."""

from __future__ import annotations

import secrets
from datetime import datetime
from datetime import timedelta

from flask import Blueprint
from flask import current_app
from flask import g
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for
from flask.typing import ResponseReturnValue

from ..core.errors import TopupNotAllowed
from ..core.marks import N_
from ..core.money import CURRENCIES
from ..db import get_session
from ..services import money
from ..services import rounds
from ..services.results import Balances
from .format import written_now
from .i18n import flash_words
from .inputs import choice
from .inputs import form_key
from .security import home_url
from .security import login_required
from .security import player_page
from .visitor import session_user

#: What the lobby says after a top-up, per currency.
TOPPED_UP = {
    "chips": N_("Topped up! Fresh chips are on your balance."),
    "sweets": N_("Topped up! Fresh sweets are on your balance."),
}

bp = Blueprint("lobby", __name__)


def header_balances() -> Balances | None:
    """Return the balances the header shows on every page: a player's, else None."""
    user = session_user()
    if user is None or user.role != "player":
        return None
    return money.balances(get_session(), user.id)


@bp.app_context_processor
def wallet_helpers() -> dict[str, object]:
    """Give every template ``header_balances()``, called only by pages that draw the header."""
    return {"header_balances": header_balances}


@bp.get("/")
def index() -> ResponseReturnValue:
    user = session_user()
    if user is not None:
        return redirect(home_url(user))
    return render_template("lobby/index.html")


@bp.get("/lobby")
@player_page
def lobby() -> ResponseReturnValue:
    db = get_session()
    balances = money.balances(db, g.user.id)
    config = current_app.config
    low = {
        "chips": balances.chips < config["LOW_BALANCE_CHIPS"],
        "sweets": balances.sweets < config["LOW_BALANCE_SWEETS"],
    }
    recent = rounds.list_rounds(db, g.user.id, limit=8).rounds
    return render_template(
        "lobby/lobby.html",
        balances=balances,
        low=low,
        topup=money.topup_status(db, g.user.id),
        topup_hours=money.TOPUP_EVERY // timedelta(hours=1),
        recent=recent,
        form_key=secrets.token_hex(16),  # a double click on a top-up tops up once
    )


@bp.post("/lobby/topup")
@login_required
def topup() -> ResponseReturnValue:
    currency = choice(request.form, "currency", CURRENCIES)
    db = get_session()
    try:
        money.topup(db, g.user.id, currency, idempotency_key=form_key())
    except TopupNotAllowed as error:
        next_at = error.details.get("next_at")
        # Its moment and amounts written again in the language the lobby is read in.
        if isinstance(next_at, datetime):
            moment = {"when": {"time": next_at.isoformat()}}
            raise TopupNotAllowed(
                N_("One top-up a day: the next is possible after %(when)s."),
                params=written_now(moment),
                amounts=moment,
            ) from error
        low, held = error.details["low"], error.details["held"]
        assert isinstance(low, int) and isinstance(held, int)  # as the service refuses
        amounts = {"low": {currency: low}, "held": {currency: held}}
        raise TopupNotAllowed(
            N_("A top-up is given only below %(low)s; you have %(held)s."),
            params=written_now(amounts),
            amounts=amounts,
        ) from error
    flash_words(TOPPED_UP[currency], "ok")
    return redirect(url_for("lobby.lobby"), code=303)
