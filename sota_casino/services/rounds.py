"""Rounds of Casino War and Sota. Each call is one transaction holding the nonce, the shuffle,
the engine's result, the postings, the round row, the signed receipt and the audit entries."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..core import casino_war
from ..core import fairness
from ..core import sota
from ..core.cards import canonical_shoe
from ..core.errors import Forbidden
from ..core.errors import InvalidBet
from ..core.errors import InvalidInput
from ..core.errors import InvalidRules
from ..core.errors import NotFound
from ..core.errors import RoundSettled
from ..core.marks import N_
from ..models import Round
from ..models import User
from . import audit
from . import fairness as fairness_service
from . import idempotency
from . import ledger
from . import settings as table_settings
from .staff import require_player
from .tx import in_transaction
from .tx import locked
from .tx import read_only

MAX_PAGE = 100


# --- shared steps -------------------------------------------------------------------------


def _player(session: Session, user_id: int) -> User:
    user = session.get(User, user_id)
    if user is None:
        raise NotFound("no such user")
    if user.locked:
        raise Forbidden(N_("this account is locked; betting is not possible"))
    require_player(user)
    return user


def _own_round(
    session: Session, user_id: int, round_id: object, game: str | None = None, *, lock: bool = False
) -> Round:
    """Return the caller's round; another player's round is indistinguishable from none."""
    if type(round_id) is not int:
        raise NotFound("no such round")
    query = select(Round).where(Round.id == round_id)
    found = session.scalar(locked(query) if lock else query)
    if found is None or found.user_id != user_id or (game and found.game != game):
        raise NotFound(f"no round {round_id} of yours")
    return found


def _escrow(
    session: Session, round_: Round, kind: str, amount: int, key: str | None = None
) -> None:
    """Move a stake from the player into the round's escrow."""
    ledger.post(
        session,
        kind=kind,
        currency=round_.currency,
        moves={
            ledger.player_account(round_.user_id, round_.currency): -amount,
            ledger.system_account("escrow", round_.currency): amount,
        },
        user_id=round_.user_id,
        round_id=round_.id,
        idempotency_key=key,
    )


def _settle(
    session: Session,
    round_: Round,
    *,
    payout: int,
    outcome: dict[str, Any],
    cards: list[str],
    actions: list[Any],
) -> None:
    """Empty the round's escrow to the player and the house, sign the receipt, audit it."""
    currency = round_.currency
    ledger.post(
        session,
        kind="settle",
        currency=currency,
        moves={
            ledger.system_account("escrow", currency): -round_.staked,
            ledger.player_account(round_.user_id, currency): payout,
            ledger.system_account("house", currency): round_.staked - payout,
        },
        user_id=round_.user_id,
        round_id=round_.id,
    )
    pair = round_.seed_pair
    assert pair.client_seed is not None
    now = datetime.now(UTC)
    envelope = fairness_service.signed(
        session,
        fairness.round_document(
            round_id=round_.id,
            game=round_.game,
            seed_pair_id=pair.id,
            commitment=pair.commitment,
            client_seed=pair.client_seed,
            nonce=round_.nonce,
            rules=round_.rules,
            actions=actions,
            cards=cards,
            outcome=outcome,
            stakes=round_.stakes,
            payout=payout,
            settled_at=fairness.format_time(now),
        ),
    )
    round_.status = "settled"
    round_.payout = payout
    round_.net = payout - round_.staked
    round_.outcome = outcome
    round_.actions = actions
    round_.cards = cards
    round_.settled_at = now
    round_.settled_on = now.date()
    round_.receipt = envelope["document"]
    round_.receipt_signature = envelope["signature"]
    session.flush()
    audit.record(
        session,
        actor=f"user:{round_.user_id}",
        action="round.settled",
        subject=f"round:{round_.id}",
        data={
            "game": round_.game,
            "staked": round_.staked,
            "payout": payout,
            "net": round_.net,
            "currency": currency,
        },
    )


def _open_round(
    session: Session,
    user_id: int,
    *,
    game: str,
    table: str,
    currency: str,
    rules: dict[str, Any],
    stakes: dict[str, int],
    key: str | None,
) -> Round:
    pair, nonce = fairness_service.take_nonce(session, user_id)
    round_ = Round(
        user_id=user_id,
        game=game,
        table_name=table,
        status="open",
        seed_pair=pair,
        nonce=nonce,
        currency=currency,
        rules=rules,
        stakes=stakes,
        staked=sum(stakes.values()),
        actions=[],
        cards=[],
    )
    session.add(round_)
    session.flush()
    _escrow(session, round_, "bet", round_.staked, key)
    audit.record(
        session,
        actor=f"user:{user_id}",
        action="round.bet",
        subject=f"round:{round_.id}",
        data={"game": game, "stakes": stakes, "seed_pair_id": pair.id, "nonce": nonce},
    )
    return round_


def _stream(round_: Round) -> fairness.Stream:
    return fairness.Stream(fairness_service.seeds_for(round_.seed_pair, round_.nonce))


# --- Casino War ---------------------------------------------------------------------------


def _war_shoe(session: Session, round_: Round, rules: casino_war.TableRules) -> Any:
    shuffler = fairness.PartialShuffle(canonical_shoe("standard52", rules.decks), _stream(round_))
    return shuffler.prefix


def _war_state(round_: Round) -> casino_war.WarRound:
    """Rebuild the engine's state of an open round from its row (after any restart)."""
    return casino_war.WarRound(
        rules=casino_war.TableRules.from_dict(round_.rules),
        bet=round_.stakes["bet"],
        tie_bet=round_.stakes["tie_bet"],
        cards=tuple(round_.cards),
    )


@in_transaction
def war_view(session: Session, round_: Round) -> dict[str, Any]:
    """The JSON round of Casino War (the API's Round)."""
    stakes, cards = round_.stakes, round_.cards
    rules = round_.rules
    war = None
    if len(cards) > 2:
        burn = rules["burn"]
        war = {
            "burned": cards[2 : 2 + burn],
            "player_card": cards[2 + burn],
            "dealer_card": cards[3 + burn],
        }
    settled = round_.status == "settled"
    outcome = round_.outcome if settled else None
    return {
        "id": round_.id,
        "game": "casino_war",
        "status": round_.status,
        "bet": stakes["bet"],
        "tie_bet": stakes["tie_bet"],
        "raise": stakes["raise"],
        "player_card": cards[0],
        "dealer_card": cards[1],
        "war": war,
        "outcome": outcome["result"] if outcome is not None else None,
        "tie_bet_won": outcome["tie_bet_won"] if outcome is not None else None,
        "net": round_.net,
        "payout": round_.payout,
        "rules": rules,
        "seed_pair_id": round_.seed_pair_id,
        "nonce": round_.nonce,
        "created_at": fairness.format_time(round_.created_at),
        "settled_at": fairness.format_time(round_.settled_at) if round_.settled_at else None,
        "balances": ledger.player_balances(session, round_.user_id),
    }


def _settle_war(session: Session, round_: Round, state: casino_war.WarRound) -> None:
    round_.stakes = state.stakes
    round_.staked = state.staked
    # For the house's reports: the edge is per unit of the ante, the tie side bet apart.
    round_.ante, round_.tie_bet = state.bet, state.tie_bet
    round_.tie_result = state.tie_bet - state.tie_bet_payout
    _settle(
        session,
        round_,
        payout=state.payout,
        outcome=state.receipt_outcome(),
        cards=list(state.cards),
        actions=list(state.actions),
    )


@idempotency.idempotent("casino_war.bet")
def place_casino_war_bet(
    session: Session,
    user_id: int,
    bet: object,
    tie_bet: object = 0,
    *,
    table: object = "casino_war",
    key: str | None = None,
) -> dict[str, Any]:
    """Open a Casino War round: escrow the ante and tie bet, deal, settle unless it ties.

    :raises InvalidBet: for an amount that is not valid at the table.
    :raises InsufficientFunds: if the balance does not cover the stakes (nothing changes).
    """
    if table != "casino_war":
        raise InvalidInput("table must be 'casino_war'", field="table")
    _player(session, user_id)
    rules = casino_war.TableRules.from_dict(table_settings.current(session, "casino_war"))
    bet, tie_bet = rules.check_bet(bet, 0 if tie_bet is None else tie_bet)
    round_ = _open_round(
        session,
        user_id,
        game="casino_war",
        table="casino_war",
        currency="chips",
        rules=rules.to_dict(),
        stakes={"bet": bet, "tie_bet": tie_bet, "raise": 0},
        key=key,
    )
    state = casino_war.deal(rules, _war_shoe(session, round_, rules), bet, tie_bet)
    round_.cards = list(state.cards)
    if state.status == casino_war.SETTLED:
        _settle_war(session, round_, state)
    else:
        round_.status = casino_war.AWAITING_DECISION
        session.flush()
    return war_view(session, round_)


@idempotency.idempotent("casino_war.decision")
def decide_casino_war(
    session: Session, user_id: int, round_id: object, choice: object, *, key: str | None = None
) -> dict[str, Any]:
    """Settle a tied round by surrender or war (war escrows a raise equal to the ante).

    :raises RoundSettled: if no decision is due (409).
    :raises InsufficientFunds: if the raise is not covered (nothing changes).
    """
    round_ = _own_round(session, user_id, round_id, "casino_war", lock=True)
    if round_.status != casino_war.AWAITING_DECISION:
        raise RoundSettled(f"round {round_.id} is settled; no decision is due")
    if choice not in casino_war.CHOICES:
        raise InvalidInput(
            f"choice must be one of: {', '.join(casino_war.CHOICES)}", field="choice"
        )
    _player(session, user_id)
    state = _war_state(round_)
    settled = casino_war.decide(state, str(choice), _war_shoe(session, round_, state.rules))
    if settled.raise_amount:
        _escrow(session, round_, "raise", settled.raise_amount, key)
    audit.record(
        session,
        actor=f"user:{user_id}",
        action="round.decision",
        subject=f"round:{round_.id}",
        data={"choice": choice},
    )
    _settle_war(session, round_, settled)
    return war_view(session, round_)


# --- Sota ---------------------------------------------------------------------------------


def _sota_rules(table: dict[str, Any], rules: object, preset: object) -> sota.SotaRules:
    if preset is not None and rules is not None:
        raise InvalidRules("send either rules or preset, not both")
    if preset is not None:
        if preset not in table["presets"]:
            raise InvalidRules(
                f"preset must be one of: {', '.join(table['presets'])}", option="preset"
            )
        return sota.SotaRules.from_preset(str(preset))
    if rules is None:
        return sota.SotaRules.from_preset(table["presets"][0])
    if not table["custom_rules"]:
        raise InvalidRules(f"this table plays presets only: {', '.join(table['presets'])}")
    if not isinstance(rules, dict):
        raise InvalidRules("rules must be an object of rule options")
    return sota.SotaRules.from_dict(rules)


def _sota_play(session: Session, round_: Round, choices: list[Any]) -> sota.GameResult:
    return sota.play_game(
        sota.SotaRules.from_dict(round_.rules), stream=_stream(round_), choices=choices
    )


@in_transaction
def sota_view(
    session: Session, round_: Round, result: sota.GameResult | None = None
) -> dict[str, Any]:
    """The JSON game of Sota (the API's Game)."""
    if result is None:
        result = _sota_play(session, round_, list(round_.actions))
    played = result.to_dict()
    return {
        "id": round_.id,
        "game": "sota",
        "status": "settled" if round_.status == "settled" else "awaiting_move",
        "stake": round_.stakes["stake"],
        "rules": round_.rules,
        "seats": round_.rules["seats"],
        "winner": played["winner"] if round_.status == "settled" else None,
        "tricks": played["tricks"],
        "pending": played.get("pending"),
        "ended_by": played.get("ended_by"),
        "net": round_.net,
        "payout": round_.payout,
        "seed_pair_id": round_.seed_pair_id,
        "nonce": round_.nonce,
        "created_at": fairness.format_time(round_.created_at),
        "settled_at": fairness.format_time(round_.settled_at) if round_.settled_at else None,
        "balances": ledger.player_balances(session, round_.user_id),
    }


def _advance_sota(session: Session, round_: Round, result: sota.GameResult) -> dict[str, Any]:
    if result.status == "settled":
        rules = sota.SotaRules.from_dict(round_.rules)
        round_.ante, round_.tie_bet, round_.tie_result = round_.staked, 0, 0  # no side bet
        _settle(
            session,
            round_,
            payout=sota.payout(rules, result.winner, round_.stakes["stake"]),
            outcome=result.receipt_outcome(),
            cards=list(result.deck),
            actions=list(round_.actions),
        )
    else:
        round_.status = "awaiting_move"
        session.flush()
    return sota_view(session, round_, result)


@idempotency.idempotent("sota.game")
def play_sota(
    session: Session,
    user_id: int,
    stake: object,
    rules: object = None,
    preset: object = None,
    *,
    key: str | None = None,
) -> dict[str, Any]:
    """Stake sweets on a whole game of Sota; resolved at once unless the player has moves to make.

    :raises InvalidBet: for a stake outside the table's limits.
    :raises InvalidRules: for an unknown option or value, or a preset the table does not allow.
    """
    _player(session, user_id)
    table = table_settings.current(session, "sota")
    if type(stake) is not int or not table["min_stake"] <= stake <= table["max_stake"]:
        raise InvalidBet(
            N_("stake must be a whole number of sweets from %(low)s to %(high)s"),
            params={"low": table["min_stake"], "high": table["max_stake"]},
            field="stake",
        )
    game_rules = _sota_rules(table, rules, preset)
    round_ = _open_round(
        session,
        user_id,
        game="sota",
        table="sota",
        currency="sweets",
        rules=game_rules.to_dict(),
        stakes={"stake": stake},
        key=key,
    )
    return _advance_sota(session, round_, _sota_play(session, round_, []))


@idempotency.idempotent("sota.move")
def sota_move(
    session: Session, user_id: int, round_id: object, cards: object, *, key: str | None = None
) -> dict[str, Any]:
    """Make the player's Prisoners of War move: which won cards to lay.

    :raises RoundSettled: if the game is over.
    """
    round_ = _own_round(session, user_id, round_id, "sota", lock=True)
    if round_.status == "settled":
        raise RoundSettled(f"game {round_.id} is over; no move is due")
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        raise InvalidInput("cards must be a list of card codes", field="cards")
    actions = [*round_.actions, list(cards)]
    result = _sota_play(session, round_, actions)
    round_.actions = actions
    audit.record(
        session,
        actor=f"user:{user_id}",
        action="round.move",
        subject=f"round:{round_.id}",
        data={"cards": cards},
    )
    return _advance_sota(session, round_, result)


# --- reading ------------------------------------------------------------------------------


@in_transaction
def round_view(session: Session, round_: Round) -> dict[str, Any]:
    return war_view(session, round_) if round_.game == "casino_war" else sota_view(session, round_)


@read_only
def get_round(
    session: Session, user_id: int, round_id: object, game: str | None = None
) -> dict[str, Any]:
    """Return one of the caller's rounds. :raises NotFound: for anyone else's."""
    return round_view(session, _own_round(session, user_id, round_id, game))


@read_only
def moves_made(session: Session, user_id: int, round_id: object) -> int:
    """How many Prisoners of War moves the player has made in one of its Sota games: the
    index the next move takes in the receipt's ``actions``."""
    return len(_own_round(session, user_id, round_id, "sota").actions)


def summary(round_: Round) -> dict[str, Any]:
    """A round in a list: what was staked, how it ended."""
    return {
        "id": round_.id,
        "game": round_.game,
        "status": round_.status,
        "currency": round_.currency,
        "staked": round_.staked,
        "payout": round_.payout,
        "net": round_.net,
        "outcome": (round_.outcome or {}).get("result", (round_.outcome or {}).get("winner")),
        "seed_pair_id": round_.seed_pair_id,
        "nonce": round_.nonce,
        "created_at": fairness.format_time(round_.created_at),
    }


@read_only
def list_rounds(
    session: Session,
    user_id: int,
    *,
    game: object = None,
    before: object = None,
    limit: object = 20,
) -> dict[str, Any]:
    """Return the caller's rounds, newest first, ``limit`` at a time before round ``before``."""
    if game not in (None, "casino_war", "sota"):
        raise InvalidInput("game must be casino_war or sota", field="game")
    if type(limit) is not int or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be from 1 to {MAX_PAGE}", field="limit")
    if before is not None and type(before) is not int:
        raise InvalidInput("before must be a round id", field="before")
    query = select(Round).where(Round.user_id == user_id)
    if game:
        query = query.where(Round.game == game)
    if before is not None:
        query = query.where(Round.id < before)
    rows = session.scalars(query.order_by(Round.id.desc()).limit(limit + 1)).all()
    page = [summary(r) for r in rows[:limit]]
    return {"rounds": page, "next_before": page[-1]["id"] if len(rows) > limit else None}


@read_only
def receipt(session: Session, user_id: int, round_id: object) -> dict[str, Any]:
    """Return the signed receipt of one of the caller's settled rounds."""
    round_ = _own_round(session, user_id, round_id)
    if round_.status != "settled":
        raise NotFound(f"round {round_.id} has no receipt until it settles")
    return {"document": round_.receipt, "signature": round_.receipt_signature}


@read_only
def open_rounds(session: Session, user_id: int) -> list[dict[str, Any]]:
    """Return the caller's rounds that wait for a decision or a move."""
    rows = session.scalars(
        select(Round).where(Round.user_id == user_id, Round.status != "settled").order_by(Round.id)
    ).all()
    return [summary(r) for r in rows]
