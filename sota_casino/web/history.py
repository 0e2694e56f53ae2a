"""The player's history: rounds with filters and pages, and each round with its receipt."""

from __future__ import annotations

from flask import Blueprint
from flask import g
from flask import render_template
from flask import request
from flask.typing import ResponseReturnValue

from ..db import get_session
from ..services import fairness
from ..services import rounds
from .inputs import query_int
from .security import login_required
from .security import player_page

bp = Blueprint("history", __name__, url_prefix="/history")

GAMES = {"casino_war": "Casino War", "sota": "Sota"}
PAGE_SIZE = 20


@bp.get("")
@player_page
def index() -> ResponseReturnValue:
    game = request.args.get("game") or None
    if game not in GAMES:
        game = None
    before = query_int("before", low=1)
    page = rounds.list_rounds(get_session(), g.user.id, game=game, before=before, limit=PAGE_SIZE)
    return render_template(
        "history/index.html", page=page, game=game, games=GAMES, first_page=before is None
    )


@bp.get("/<id:round_id>")
@login_required
def round_page(round_id: int) -> ResponseReturnValue:
    db = get_session()
    played = rounds.get_round(db, g.user.id, round_id)
    signed = rounds.receipt(db, g.user.id, round_id) if played.status == "settled" else None
    # A round is dealt from the active pair only: any other pair of the player's is revealed.
    revealed = played.seed_pair_id != fairness.active_seed_pair(db, g.user.id).seed_pair_id
    return render_template(
        "history/round.html", round=played, receipt=signed, pair_revealed=revealed
    )
