"""The JSON API ``/api/v1`` (API.md): parse strictly, call one service, answer JSON.

Errors are ``{"error": {"code", "message"}}`` (see :mod:`.errors`); credentials are bearer
tokens, or the session cookie with the page's CSRF token in ``X-CSRF-Token`` (see
:mod:`.security`). Money-moving calls pass the ``Idempotency-Key`` header and the parsed body to
the service, which stores the first answer in the same transaction as the postings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import Final
from typing import TypeVar

from flask import Blueprint
from flask import g
from flask import jsonify
from flask import request
from flask.typing import ResponseReturnValue

from ..core import fairness as core_fairness
from ..core import odds
from ..core.casino_war import CHOICES
from ..db import get_session
from ..services import accounts
from ..services import fairness
from ..services import money
from ..services import rounds
from ..services import stats
from . import inputs
from .inputs import amount
from .inputs import json_object
from .inputs import only_fields
from .inputs import string
from .openapi import openapi_document
from .security import api_login_required
from .security import client_address

bp = Blueprint("api", __name__, url_prefix="/api/v1")

T = TypeVar("T")

CHIPS: Final = "hundredths of a chip"
SWEETS: Final = "whole sweets"
GAMES: Final = ("casino_war", "sota")
CURRENCIES: Final = ("chips", "sweets")
MAX_MOVE_CARDS: Final = 64


def _credentials() -> tuple[str, str]:
    body = json_object("username", "password")
    username = string(body, "username", max_length=64)
    password = string(body, "password", max_length=256)
    assert username is not None and password is not None
    return username, password


def _move_money(service: Callable[..., T], **request_fields: Any) -> T:
    """Call a money-moving ``service`` for the caller, with the request's parsed fields.

    The fields are the service's arguments and what a retry with the same ``Idempotency-Key``
    must repeat to be answered with the first answer.
    """
    return service(
        get_session(),
        g.user.id,
        idempotency_key=inputs.idempotency_key(),
        request_body=request_fields,
        **request_fields,
    )


def _created(payload: Any) -> ResponseReturnValue:
    return jsonify(payload), 201


# --- accounts -----------------------------------------------------------------------------------


@bp.post("/auth/register")
def register() -> ResponseReturnValue:
    username, password = _credentials()
    user = accounts.register(get_session(), username, password, address=client_address())
    return _created({"user": user.to_dict()})


@bp.post("/auth/token")
def token() -> ResponseReturnValue:
    username, password = _credentials()
    issued, expires = accounts.issue_api_token(
        get_session(), username, password, address=client_address()
    )
    return jsonify({"token": issued, "expires_at": core_fairness.format_time(expires)})


@bp.get("/me")
@api_login_required
def me() -> ResponseReturnValue:
    balances = money.balances(get_session(), g.user.id)
    return jsonify({"user": g.user.to_dict(), "balances": balances})


@bp.post("/me/topup")
@api_login_required
def topup() -> ResponseReturnValue:
    currency = inputs.choice(json_object("currency"), "currency", CURRENCIES)
    balances = _move_money(money.topup, currency=currency)
    return _created({"balances": balances, **balances})


@bp.get("/me/stats")
@api_login_required
def my_stats() -> ResponseReturnValue:
    return jsonify(stats.player_stats(get_session(), g.user.id))


# --- fairness -----------------------------------------------------------------------------------


@bp.get("/fairness/public-key")
def public_key() -> ResponseReturnValue:
    return jsonify(fairness.public_key_info(get_session()))


@bp.get("/fairness/seed-pair")
@api_login_required
def seed_pair() -> ResponseReturnValue:
    return jsonify(fairness.active_seed_pair(get_session(), g.user.id))


@bp.post("/fairness/rotate")
@api_login_required
def rotate() -> ResponseReturnValue:
    body = json_object("client_seed")
    client_seed = string(body, "client_seed", required=False, max_length=64)
    return jsonify(fairness.rotate(get_session(), g.user.id, client_seed))


@bp.get("/fairness/seed-pairs/<id:seed_pair_id>/bundle")
@api_login_required
def bundle(seed_pair_id: int) -> ResponseReturnValue:
    return jsonify(fairness.bundle(get_session(), g.user.id, seed_pair_id))


# --- Casino War -----------------------------------------------------------------------------------


@bp.post("/casino-war/rounds")
@api_login_required
def casino_war_bet() -> ResponseReturnValue:
    body = json_object("bet", "tie_bet", "table")
    bet = amount(body, "bet", unit=CHIPS)
    tie_bet = amount(body, "tie_bet", unit=CHIPS, required=False, allow_zero=True)
    table = string(body, "table", required=False, max_length=32) or "casino_war"
    return _created(_move_money(rounds.place_casino_war_bet, bet=bet, tie_bet=tie_bet, table=table))


@bp.post("/casino-war/rounds/<id:round_id>/decision")
@api_login_required
def casino_war_decision(round_id: int) -> ResponseReturnValue:
    choice = inputs.choice(json_object("choice"), "choice", CHOICES)
    return jsonify(_move_money(rounds.decide_casino_war, round_id=round_id, choice=choice))


@bp.get("/casino-war/rounds/<id:round_id>")
@api_login_required
def casino_war_round(round_id: int) -> ResponseReturnValue:
    return jsonify(rounds.get_round(get_session(), g.user.id, round_id, "casino_war"))


@bp.get("/casino-war/odds")
def casino_war_odds() -> ResponseReturnValue:
    only_fields(request.args, ("decks", "tie_payout", "bonus"))
    decks = inputs.query_int("decks", low=1, high=8, default=6)
    tie_payout = inputs.query_int("tie_payout", low=0, high=30, default=10)
    bonus = inputs.query_choice("bonus", ("none", "ante"), default="none")
    assert decks is not None and tie_payout is not None and bonus is not None
    return jsonify(odds.odds_table(decks=decks, tie_payout=tie_payout, bonus=bonus))


# --- Sota ---------------------------------------------------------------------------------------


@bp.post("/sota/games")
@api_login_required
def sota_game() -> ResponseReturnValue:
    body = json_object("stake", "rules", "preset")
    stake = amount(body, "stake", unit=SWEETS)
    rules = inputs.object_field(body, "rules", holding="rule options")
    preset = string(body, "preset", required=False, max_length=32)
    return _created(_move_money(rounds.play_sota, stake=stake, rules=rules, preset=preset))


@bp.post("/sota/games/<id:round_id>/moves")
@api_login_required
def sota_move(round_id: int) -> ResponseReturnValue:
    cards = inputs.card_codes(json_object("cards"), "cards", most=MAX_MOVE_CARDS)
    return jsonify(_move_money(rounds.sota_move, round_id=round_id, cards=cards))


@bp.get("/sota/games/<id:round_id>")
@api_login_required
def sota_get(round_id: int) -> ResponseReturnValue:
    return jsonify(rounds.get_round(get_session(), g.user.id, round_id, "sota"))


# --- history -----------------------------------------------------------------------------------


@bp.get("/rounds")
@api_login_required
def list_rounds() -> ResponseReturnValue:
    only_fields(request.args, ("game", "before", "limit"))
    game = inputs.query_choice("game", GAMES)
    before = inputs.query_int("before", low=1)
    limit = inputs.query_int("limit", low=1, high=rounds.MAX_PAGE, default=20)
    page = rounds.list_rounds(get_session(), g.user.id, game=game, before=before, limit=limit)
    return jsonify(page)


@bp.get("/rounds/<id:round_id>/receipt")
@api_login_required
def receipt(round_id: int) -> ResponseReturnValue:
    return jsonify(rounds.receipt(get_session(), g.user.id, round_id))


@bp.get("/openapi.json")
def openapi() -> ResponseReturnValue:
    return jsonify(openapi_document())
