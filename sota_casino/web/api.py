"""The JSON API ``/api/v1``: parse strictly, call one service, answer JSON.

Each view declares its operation (:func:`.openapi.operation`): the models of its body, query
string and answer, which parse the request and make the OpenAPI document.

Errors are ``{"error": {"code", "message"}}`` (see :mod:`.errors`); credentials are bearer
tokens, or the session cookie with the page's CSRF token in ``X-CSRF-Token`` (see
:mod:`.security`). Money-moving calls pass the ``Idempotency-Key`` header and the parsed body to
the service, which stores the first answer in the same transaction as the postings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final
from typing import TypeVar

from flask import Blueprint
from flask import current_app
from flask import g
from flask import jsonify
from flask.typing import ResponseReturnValue
from pydantic import BaseModel

from .. import config
from ..core import odds
from ..db import get_session
from ..services import accounts
from ..services import audit
from ..services import fairness
from ..services import money
from ..services import player_keys
from ..services import rounds
from ..services import settings
from ..services import stats
from ..services import transparency
from ..services.audit import ConsistencyProof
from ..services.results import ActiveSeedPair
from ..services.results import Bundle
from ..services.results import CasinoWarRound
from ..services.results import Me
from ..services.results import PlayerKeys
from ..services.results import PublicKey
from ..services.results import Receipt
from ..services.results import Rotation
from ..services.results import RoundList
from ..services.results import SotaGame
from ..services.results import TableSettings
from ..services.results import Token
from ..services.results import TopupResult
from ..services.results import UserCreated
from . import inputs
from . import schemas as s
from .errors import NotYetAnchoredError
from .i18n import LANGUAGES
from .i18n import accepted_language
from .openapi import CHANGE
from .openapi import CHANGE_OF_ONE
from .openapi import DENIED
from .openapi import Refusal
from .openapi import answer as _answer
from .openapi import no_content
from .openapi import openapi_document
from .openapi import operation
from .security import api_login_required
from .security import bearer_token_to_revoke
from .security import client_address

bp = Blueprint("api", __name__, url_prefix="/api/v1")

T = TypeVar("T")
#: A GET of one thing of the caller's, named in the path.
ONE: Final = (*DENIED, 404)
#: The limits are the table's settings of the moment, which an operator changes.
TABLE_LIMITS: Final = "a stake outside the table's current limits (invalid_bet)"
#: A player's signature is checked against the keys the player registered.
PLAYER_SIGNATURE: Final = (
    "a signature sent with no key registered, or not made by the registered key named "
    "(signature_invalid); none sent once a key is registered (signature_required)"
)
#: What a bet signs, and how it learns the nonce it takes.
SIGNED_BET: Final = (
    "Once the player registered a key, the bet carries the player's signature (signature, "
    "key_id) over its bet document: the player, the seed pair and nonce it takes (send them as "
    "seed_pair_id and nonce: the active pair's next_nonce, GET /api/v1/fairness/seed-pair), "
    'the game, the stakes and every rule it is played by (docs/fairness.md, "Bets the player '
    'signs"). A bet naming another pair or nonce than the next (one taken since, a pair '
    "rotated out) is refused with 409 nonce_not_next, and nothing changes: read the pair "
    "again and sign the bet for it."
)
#: Which rule sets a game may take are the table's settings of the moment, as its limits are.
TABLE_OFFER: Final = (
    "a preset the table does not offer now (invalid_rules, field preset), or rules of one's own "
    "where it takes none (invalid_rules, field rules)"
)
#: A key anyone can sign with is no key (core.fairness.weak_key_problem).
WEAK_KEY: Final = (
    "a public key of small order or not canonically encoded, under which anyone could sign "
    "(invalid_input, field public_key_hex)"
)
#: Actions that write records kept for good are limited per account (services.hourly_limits).
HOURLY_LIMIT: Final = (
    "It writes records kept for good: at most {setting} ({default} unless set otherwise) per "
    "account within the last hour, far above what a player does; past it a 429 rate_limited "
    "with Retry-After, and nothing changes."
)


def _hourly_limit(setting: str) -> str:
    return HOURLY_LIMIT.format(setting=setting, default=config.INT_SETTINGS[setting])


#: Which won cards a move may lay depends on the game's state.
PRISONERS: Final = (
    "cards that are not among the won cards the move may lay, or not as many, or one twice "
    "(invalid_input, field cards)"
)


def _move_money(service: Callable[..., T], body: BaseModel, **path: int) -> T:
    """Call a money-moving ``service`` for the caller with the request's parsed ``body``.

    The fields are the service's arguments and what a retry with the same ``Idempotency-Key``
    must repeat to be answered with the first answer.
    """
    fields = {**path, **body.model_dump(by_alias=True)}
    return service(
        get_session(),
        g.user.id,
        idempotency_key=inputs.idempotency_key(),
        request_body=fields,
        **fields,
    )


# --- accounts -----------------------------------------------------------------------------------


@bp.post("/auth/register")
@operation(
    "register",
    "Create a player account (with the sign-up grant)",
    "accounts",
    UserCreated,
    status=201,
    errors=(400, 409, 422, 429),
    body=s.Registration,
    auth=False,
    beyond_schema=(accounts.WEAK_PASSWORD,),
    description=(
        "Keeps the best match of Accept-Language among the casino's languages "
        f"({', '.join(LANGUAGES)}) as the player's language, which the pages then speak; "
        "none if it names none of them."
    ),
)
def register(body: s.Registration) -> ResponseReturnValue:
    # The client's language goes with the account as the picker's does at a page sign-up: the
    # pages speak it wherever the player logs in; none of ours (or no header) keeps none.
    user = accounts.register(
        get_session(),
        body.username,
        body.password,
        address=client_address(),
        locale=accepted_language(),
    )
    return _answer(UserCreated(user.shown()), 201)


@bp.post("/auth/token")
@operation(
    "issueToken",
    "Get a bearer token",
    "accounts",
    Token,
    errors=(400, 401, 403, 422, 429),
    body=s.Credentials,
    auth=False,
    description=(
        "A token lasts TOKEN_HOURS (24 unless set otherwise). An account keeps at most "
        "SESSIONS_PER_ACCOUNT (100) tokens and browser sessions: one more ends the oldest, so "
        "a script keeps its token rather than logging in for each call."
    ),
)
def token(body: s.Credentials) -> ResponseReturnValue:
    issued = accounts.issue_api_token(
        get_session(), body.username, body.password, address=client_address()
    )
    return _answer(issued)


@bp.delete("/auth/token")
@operation(
    "revokeToken",
    "End the bearer token this call is sent with",
    "accounts",
    None,
    status=204,
    errors=(401,),
    cookie=False,
    description=(
        "For a token that leaked or is done with: every later call with it is a 401, while the "
        "account's other tokens and browser sessions go on (changing the password ends them "
        "all). Only the bearer token sent ends: a session cookie is refused (401)."
    ),
)
def revoke_token() -> ResponseReturnValue:
    accounts.revoke_api_token(get_session(), bearer_token_to_revoke())
    return no_content()


@bp.get("/me")
@api_login_required
@operation("me", "Who am I, and my balances", "accounts", Me, errors=DENIED)
def me() -> ResponseReturnValue:
    return _answer(Me(g.user.shown(), money.balances(get_session(), g.user.id)))


@bp.post("/me/topup")
@api_login_required
@operation(
    "topup",
    "Top up a low balance (at most once a day)",
    "accounts",
    TopupResult,
    status=201,
    errors=CHANGE,
    body=s.TopupRequest,
    idempotent=True,
)
def topup(body: s.TopupRequest) -> ResponseReturnValue:
    balances = _move_money(money.topup, body)
    return _answer(TopupResult(balances, balances.chips, balances.sweets), 201)


@bp.get("/me/keys")
@api_login_required
@operation(
    "myKeys",
    "Your keys for signing bets, decisions and moves",
    "fairness",
    PlayerKeys,
    errors=DENIED,
)
def my_keys() -> ResponseReturnValue:
    return _answer(player_keys.keys(get_session(), g.user.id))


@bp.post("/me/keys")
@api_login_required
@operation(
    "registerKey",
    "Register an Ed25519 key that signs your bets, decisions and moves (retires the one in use)",
    "fairness",
    PlayerKeys,
    status=201,
    errors=(*CHANGE, 429),
    body=s.PlayerKeyRequest,
    beyond_schema=(WEAK_KEY,),
    description=_hourly_limit("KEY_REGISTRATIONS_PER_HOUR")
    + " The key in use sent again changes nothing and is answered as ever.",
)
def register_key(body: s.PlayerKeyRequest) -> ResponseReturnValue:
    return _answer(player_keys.register_key(get_session(), g.user.id, body.public_key_hex), 201)


@bp.get("/me/stats")
@api_login_required
@operation(
    "myStats",
    "Your statistics: results per game and per day against the exact odds",
    "accounts",
    stats.PlayerStats,
    errors=DENIED,
)
def my_stats() -> ResponseReturnValue:
    return _answer(stats.player_stats(get_session(), g.user.id))


# --- fairness -----------------------------------------------------------------------------------


@bp.get("/fairness/public-key")
@operation(
    "publicKey",
    "The service's Ed25519 public key and the retired ones",
    "fairness",
    PublicKey,
    errors=(),
    auth=False,
)
def public_key() -> ResponseReturnValue:
    return _answer(fairness.public_key_info(get_session()))


@bp.get("/fairness/seed-pair")
@api_login_required
@operation(
    "seedPair",
    "The active seed pair (never its server seed) and the next pair's signed commitment",
    "fairness",
    ActiveSeedPair,
    errors=DENIED,
)
def seed_pair() -> ResponseReturnValue:
    return _answer(fairness.active_seed_pair(get_session(), g.user.id))


@bp.post("/fairness/rotate")
@api_login_required
@operation(
    "rotate",
    "Reveal the active server seed and activate the next pair",
    "fairness",
    Rotation,
    errors=(*CHANGE, 429),
    body=s.RotateRequest,
    description=_hourly_limit("ROTATIONS_PER_HOUR"),
)
def rotate(body: s.RotateRequest) -> ResponseReturnValue:
    return _answer(fairness.rotate(get_session(), g.user.id, body.client_seed))


@bp.get("/fairness/seed-pairs/<id:seed_pair_id>/bundle")
@api_login_required
@operation("bundle", "The verifier's input for one seed pair", "fairness", Bundle, errors=ONE)
def bundle(seed_pair_id: int) -> ResponseReturnValue:
    audit.sign_if_due(get_session())  # so that its newest rounds can be anchored too
    return jsonify(fairness.bundle(get_session(), g.user.id, seed_pair_id))


# --- Casino War -----------------------------------------------------------------------------------


@bp.post("/casino-war/rounds")
@api_login_required
@operation(
    "placeBet",
    "Bet and deal a Casino War round",
    "casino war",
    CasinoWarRound,
    status=201,
    errors=CHANGE,
    body=s.BetRequest,
    idempotent=True,
    beyond_schema=(TABLE_LIMITS, PLAYER_SIGNATURE),
    description=SIGNED_BET,
)
def casino_war_bet(body: s.BetRequest) -> ResponseReturnValue:
    return _answer(_move_money(rounds.place_casino_war_bet, body), 201)


@bp.post("/casino-war/rounds/<id:round_id>/decision")
@api_login_required
@operation(
    "decide",
    "Go to war or surrender on a tie",
    "casino war",
    CasinoWarRound,
    errors=CHANGE_OF_ONE,
    body=s.DecisionRequest,
    idempotent=True,
    beyond_schema=(PLAYER_SIGNATURE,),
)
def casino_war_decision(round_id: int, body: s.DecisionRequest) -> ResponseReturnValue:
    return _answer(_move_money(rounds.decide_casino_war, body, round_id=round_id))


@bp.get("/casino-war/rounds/<id:round_id>")
@api_login_required
@operation("getRound", "One of your Casino War rounds", "casino war", CasinoWarRound, errors=ONE)
def casino_war_round(round_id: int) -> ResponseReturnValue:
    return _answer(rounds.get_round(get_session(), g.user.id, round_id, "casino_war"))


@bp.get("/tables/<name>")
@operation(
    "table",
    "A table's rules and limits now, as its page shows them",
    "tables",
    TableSettings,
    errors=(404,),
    auth=False,
    description=(
        "Send casino_war's settings as a bet's rules: the bet is dealt under them or refused "
        "with 409 rules_changed, so the rules a script records are those it was played by. "
        "Sota's preset_rules are the rules a game of each preset is played by and its signed "
        "bet document holds."
    ),
)
def table(name: str) -> ResponseReturnValue:
    return _answer(TableSettings.of(name, settings.table_rules(get_session(), name)))


@bp.get("/casino-war/odds")
@operation(
    "odds",
    "Exact house edge figures of a table setting",
    "casino war",
    s.Odds,
    errors=(422,),
    query=s.OddsQuery,
    auth=False,
    database=False,
)
def casino_war_odds(query: s.OddsQuery) -> ResponseReturnValue:
    return jsonify(odds.odds_table(**query.model_dump()))


# --- Sota ---------------------------------------------------------------------------------------


@bp.post("/sota/games")
@api_login_required
@operation(
    "playSota",
    "Stake sweets on a whole game of Sota (rules or a preset)",
    "sota",
    SotaGame,
    status=201,
    errors=CHANGE,
    body=s.GameRequest,
    idempotent=True,
    beyond_schema=(TABLE_LIMITS, TABLE_OFFER, PLAYER_SIGNATURE),
    description=SIGNED_BET,
)
def sota_game(body: s.GameRequest) -> ResponseReturnValue:
    return _answer(_move_money(rounds.play_sota, body), 201)


@bp.post("/sota/games/<id:round_id>/moves")
@api_login_required
@operation(
    "sotaMove",
    "Lay prisoners (Prisoners of War only)",
    "sota",
    SotaGame,
    errors=CHANGE_OF_ONE,
    body=s.MoveRequest,
    idempotent=True,
    beyond_schema=(PLAYER_SIGNATURE, PRISONERS),
    description=(
        "A move that names the choice it answers (move: the game's pending.move) is laid "
        "once: sent again after it was laid (a retry without an Idempotency-Key, a second "
        "tab), it is refused with 409 move_not_due, which names the move the game waits for "
        "now, and nothing changes. A move that names none answers whatever choice the game "
        "waits for, so a copy whose cards fit the next choice too is laid again."
    ),
)
def sota_move(round_id: int, body: s.MoveRequest) -> ResponseReturnValue:
    return _answer(_move_money(rounds.sota_move, body, round_id=round_id))


@bp.get("/sota/games/<id:round_id>")
@api_login_required
@operation("getGame", "One of your Sota games", "sota", SotaGame, errors=ONE)
def sota_get(round_id: int) -> ResponseReturnValue:
    return _answer(rounds.get_round(get_session(), g.user.id, round_id, "sota"))


# --- history -----------------------------------------------------------------------------------


@bp.get("/rounds")
@api_login_required
@operation(
    "listRounds",
    "Your rounds, newest first",
    "history",
    RoundList,
    errors=(*DENIED, 422),
    query=s.RoundsQuery,
)
def list_rounds(query: s.RoundsQuery) -> ResponseReturnValue:
    return _answer(rounds.list_rounds(get_session(), g.user.id, **query.model_dump()))


@bp.get("/rounds/<id:round_id>/receipt")
@api_login_required
@operation("receipt", "The signed receipt of a settled round", "history", Receipt, errors=ONE)
def receipt(round_id: int) -> ResponseReturnValue:
    return jsonify(rounds.receipt(get_session(), g.user.id, round_id))


@bp.get("/rounds/<id:round_id>/proof")
@api_login_required
@operation(
    "roundProof",
    "Your settled round's audit entries (commitment, bet, decisions, settlement) with inclusion "
    "proofs in a signed checkpoint; 409 not_yet_anchored with Retry-After until one covers them",
    "history",
    transparency.RoundProof,
    errors=(*ONE, 409),
    refusals_of_its_own=(
        Refusal(
            409,
            NotYetAnchoredError,
            "not_yet_anchored, with the latest signed checkpoint (null before the first): a "
            "round still pending while it is dated past the round's settled_at and the bound "
            "of docs/fairness.md was left out of the log",
            retry_after=True,
        ),
    ),
)
def round_proof(round_id: int) -> ResponseReturnValue:
    audit.sign_if_due(get_session())
    return _answer(transparency.round_proof(get_session(), g.user.id, round_id))


# --- the public transparency log: hashes only, never an entry ----------------------------------


@bp.get("/transparency/checkpoint")
@operation(
    "latestCheckpoint",
    "The audit log's latest signed checkpoint (also as a C2SP signed note)",
    "transparency",
    transparency.PublicCheckpoint,
    errors=(404,),
    auth=False,
)
def latest_checkpoint() -> ResponseReturnValue:
    return _answer(transparency.latest(get_session()))


@bp.get("/transparency/checkpoints/<id:size>")
@operation(
    "checkpointBySize",
    "The signed checkpoint over exactly this many entries",
    "transparency",
    transparency.PublicCheckpoint,
    errors=(404,),
    auth=False,
)
def checkpoint_by_size(size: int) -> ResponseReturnValue:
    return _answer(transparency.checkpoint(get_session(), size))


@bp.get("/transparency/consistency")
@operation(
    "consistency",
    "The RFC 6962 proof that one signed checkpoint's tree is a prefix of a later one's",
    "transparency",
    ConsistencyProof,
    errors=(404, 422),
    auth=False,
    query=s.ConsistencyQuery,
    beyond_schema=("old_size above new_size (checked before whether either is a checkpoint's)",),
)
def consistency(query: s.ConsistencyQuery) -> ResponseReturnValue:
    return _answer(transparency.consistency(get_session(), query.old_size, query.new_size))


@bp.get("/openapi.json")
@operation(
    "openapi",
    "This document: the API in OpenAPI 3.1",
    "meta",
    s.OpenAPIDocument,
    errors=(),
    auth=False,
    database=False,
)
def openapi() -> ResponseReturnValue:
    return jsonify(openapi_document(current_app))
