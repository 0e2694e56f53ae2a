"""Rounds of Casino War and Sota. Each call is one transaction holding the nonce, the shuffle,
the engine's result, the postings, the round row, the signed receipt and the audit entries.

A round is on every player's path, so its transaction is a handful of statements built once
and run on the session's connection, with no ORM unit of work: lock the player's row (which
orders the player's rounds and seed pairs) reading its role and the table settings' version,
take the nonce, insert the round, post its transfers, settle the row, append its entries, read
the balances. The answer is built from what the transaction wrote (:class:`RoundRecord`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import cast

from sqlalchemy import Table
from sqlalchemy import bindparam
from sqlalchemy import insert
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.orm import Session

from ..core import anchors
from ..core import casino_war
from ..core import fairness
from ..core import sota
from ..core.cards import canonical_shoe
from ..core.errors import Forbidden
from ..core.errors import InvalidBet
from ..core.errors import InvalidInput
from ..core.errors import InvalidRules
from ..core.errors import MoveNotDue
from ..core.errors import NonceNotNext
from ..core.errors import NotFound
from ..core.errors import RoundSettled
from ..core.errors import RulesChanged
from ..core.marks import N_
from ..core.marks import Nn_
from ..database import EncodedJson
from ..models import Round
from ..models import SeedPair
from ..models import TableSetting
from ..models import User
from . import audit
from . import fairness as fairness_service
from . import idempotency
from . import ledger
from . import player_keys
from . import settings as table_settings
from .results import Balances
from .results import CasinoWarRound
from .results import PendingMove
from .results import RoundList
from .results import RoundRow
from .results import RoundSummary
from .results import SotaGame
from .results import Trick
from .results import War
from .staff import require_player_role
from .tx import in_transaction
from .tx import read_only

MAX_PAGE = 100
#: The most tricks of a game this casino deals from a player's own rules (the rule book allows
#: up to 100 000): a game is played out in the request that deals it, and again for each move
#: and each look at it, and a fixed gather order can cycle to the limit, 20 µs a trick.
MAX_DEALT_TRICKS = 10_000


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """A round as its row holds it: read from the row, or what the transaction wrote into it.

    ``seeds`` and ``commitment`` are its seed pair's (the secret server seed draws the cards;
    nothing of it is shown until the pair is revealed).
    """

    id: int
    user_id: int
    game: str
    status: str
    seed_pair_id: int
    nonce: int
    seeds: fairness.Seeds
    commitment: str
    currency: str
    rules: dict[str, Any]
    stakes: dict[str, int]
    staked: int
    actions: list[Any]
    cards: list[str]
    created_at: datetime
    outcome: dict[str, Any] | None = None
    payout: int | None = None
    net: int | None = None
    settled_at: datetime | None = None
    #: The player's signed actions, beside ``actions`` (``None`` while none is signed).
    signed_actions: list[Any] | None = None
    #: The player's signed bet (``None`` for a bet sent unsigned).
    signed_bet: dict[str, Any] | None = None

    @classmethod
    def of(cls, row: Round) -> RoundRecord:
        pair = row.seed_pair
        assert pair.client_seed is not None
        return cls.from_columns(row, fairness_service.seeds_for(pair, row.nonce), pair.commitment)

    @classmethod
    def from_columns(cls, row: Any, seeds: fairness.Seeds, commitment: str) -> RoundRecord:
        """The record of a round's columns (an ORM row or a Core one) with its pair's seeds."""
        return cls(
            id=row.id,
            user_id=row.user_id,
            game=row.game,
            status=row.status,
            seed_pair_id=row.seed_pair_id,
            nonce=row.nonce,
            seeds=seeds,
            commitment=commitment,
            currency=row.currency,
            rules=row.rules,
            stakes=row.stakes,
            staked=row.staked,
            actions=list(row.actions),
            cards=list(row.cards),
            created_at=row.created_at,
            outcome=row.outcome,
            payout=row.payout,
            net=row.net,
            settled_at=row.settled_at,
            signed_actions=row.signed_actions,
            signed_bet=row.signed_bet,
        )

    def stream(self) -> fairness.Stream:
        return fairness.Stream(self.seeds)


# --- the statements of a round, built once --------------------------------------------------

_USERS = cast(Table, User.__table__)
_ROUNDS = cast(Table, Round.__table__)
_PAIRS = cast(Table, SeedPair.__table__)
_SETTINGS = cast(Table, TableSetting.__table__)
#: The player's row, locked (every round and seed pair change of the player waits for it), with
#: the table settings' version: the settings themselves come from the process's memory.
_LOCK_PLAYER = (
    select(
        _USERS.c.role,
        _USERS.c.locked,
        select(_SETTINGS.c.updated_at)
        .where(_SETTINGS.c.name == bindparam("table"))
        .scalar_subquery()
        .label("settings_version"),
    )
    .where(_USERS.c.id == bindparam("user_id"))
    .with_for_update(of=_USERS)
)
_NEW_ROUND = insert(_ROUNDS).returning(_ROUNDS.c.id)
#: Sets the columns its parameters name.
_UPDATE_ROUND = update(_ROUNDS).where(_ROUNDS.c.id == bindparam("round_id"))
_LOCK_ROUND = (
    select(
        _ROUNDS,
        _PAIRS.c.server_seed,
        _PAIRS.c.client_seed,
        _PAIRS.c.commitment,
    )
    .join(_PAIRS, _PAIRS.c.id == _ROUNDS.c.seed_pair_id)
    .where(_ROUNDS.c.id == bindparam("round_id"))
    .with_for_update(of=_ROUNDS)
)


# --- shared steps -------------------------------------------------------------------------


def _lock_player(session: Session, user_id: int, table: str) -> dict[str, Any]:
    """Lock the player's row, refuse a locked account or staff; return ``table``'s settings."""
    row = session.connection().execute(_LOCK_PLAYER, {"user_id": user_id, "table": table}).first()
    if row is None:
        raise NotFound(N_("no such user"))
    if row.locked:
        raise Forbidden(N_("this account is locked; betting is not possible"))
    require_player_role(row.role)
    return table_settings.current_as_of(session, table, row.settings_version)


def _own_round(
    session: Session, user_id: int, round_id: object, game: str | None = None
) -> RoundRecord:
    """Return the caller's round, locked; another player's round is indistinguishable from none."""
    if type(round_id) is not int:
        raise NotFound(N_("no such round"))
    row = session.connection().execute(_LOCK_ROUND, {"round_id": round_id}).first()
    if row is None or row.user_id != user_id or (game and row.game != game):
        raise NotFound(N_("no round %(id)s of yours"), params={"id": round_id})
    seeds = fairness.Seeds(bytes.fromhex(row.server_seed), row.client_seed, row.nonce)
    return RoundRecord.from_columns(row, seeds, row.commitment)


def _read_round(session: Session, user_id: int, round_id: object, game: str | None = None) -> Round:
    """Return the caller's round for reading (no lock)."""
    if type(round_id) is not int:
        raise NotFound(N_("no such round"))
    found = session.get(Round, round_id)
    if found is None or found.user_id != user_id or (game and found.game != game):
        raise NotFound(N_("no round %(id)s of yours"), params={"id": round_id})
    return found


def _escrow(
    round_: RoundRecord, kind: str, amount: int, key: str | None = None
) -> ledger.TransferSpec:
    """Move a stake from the player into the round's escrow."""
    return ledger.TransferSpec(
        kind=kind,
        currency=round_.currency,
        moves={
            ledger.player_account(round_.user_id, round_.currency): -amount,
            ledger.escrow_account(round_.user_id, round_.currency): amount,
        },
        user_id=round_.user_id,
        round_id=round_.id,
        idempotency_key=key,
    )


def _event(round_: RoundRecord, action: str, data: dict[str, Any]) -> audit.EntrySpec:
    return audit.EntrySpec(f"user:{round_.user_id}", action, f"round:{round_.id}", data)


def _settle(
    session: Session,
    round_: RoundRecord,
    *,
    payout: int,
    outcome: dict[str, Any],
    figures: dict[str, int],
    transfers: list[ledger.TransferSpec],
    events: list[audit.EntrySpec],
    row_outcome: dict[str, Any] | None = None,
) -> RoundRecord:
    """Post ``transfers`` and empty the round's escrow to the player and the house, sign the
    receipt, write the settled row, and append ``events`` and the settlement to the log.

    :param figures: the house's report columns (``ante``, ``tie_bet``, ``tie_result``).
    :param row_outcome: what the row's ``outcome`` column keeps, when less than the receipt's
        ``outcome`` (by default all of it).
    """
    currency = round_.currency
    settle = ledger.TransferSpec(
        kind="settle",
        currency=currency,
        moves={
            ledger.escrow_account(round_.user_id, currency): -round_.staked,
            ledger.player_account(round_.user_id, currency): payout,
            ledger.house_account(round_.user_id, currency): round_.staked - payout,
        },
        user_id=round_.user_id,
        round_id=round_.id,
    )
    ledger.post_all(session, [*transfers, settle])
    now = datetime.now(UTC)
    document = fairness.round_document(
        round_id=round_.id,
        game=round_.game,
        seed_pair_id=round_.seed_pair_id,
        commitment=round_.commitment,
        client_seed=round_.seeds.client_seed,
        nonce=round_.nonce,
        rules=round_.rules,
        actions=round_.actions,
        cards=round_.cards,
        outcome=outcome,
        stakes=round_.stakes,
        payout=payout,
        settled_at=fairness.format_time(now),
        signed_actions=round_.signed_actions,
        signed_bet=round_.signed_bet,
    )
    # Its canonical bytes once: the signature and the settlement entry's hash both read them (a
    # Sota receipt holds the whole trick log).
    canonical = fairness.canonical_json(document)
    envelope = fairness_service.signed(session, document, canonical)
    settled = replace(
        round_,
        status="settled",
        outcome=outcome,
        payout=payout,
        net=payout - round_.staked,
        settled_at=now,
    )
    session.connection().execute(
        _UPDATE_ROUND,
        {
            "round_id": round_.id,
            "status": "settled",
            "stakes": settled.stakes,
            "staked": settled.staked,
            "payout": payout,
            "net": settled.net,
            "outcome": outcome if row_outcome is None else row_outcome,
            "actions": settled.actions,
            "cards": settled.cards,
            "signed_actions": settled.signed_actions,
            "settled_at": now,
            "settled_on": now.date(),
            # The column writes the canonical text (the same values) instead of a second
            # encoding of the document (a Sota receipt holds the whole trick log).
            "receipt": EncodedJson(envelope["document"], canonical.decode()),
            "receipt_signature": envelope["signature"],
            **figures,
        },
    )
    settlement = _event(
        settled,
        anchors.SETTLEMENT_ACTION,
        {
            # The receipt's hash ties the signed receipt to the log: rewriting it later
            # contradicts a checkpoint the service signed.
            "receipt": anchors.receipt_hash(document, canonical),
            "game": round_.game,
            "staked": round_.staked,
            "payout": payout,
            "net": settled.net,
            "currency": currency,
        },
    )
    audit.record_all(session, [*events, settlement])
    return settled


def _open_round(
    session: Session,
    user_id: int,
    *,
    game: str,
    currency: str,
    rules: dict[str, Any],
    stakes: dict[str, int],
) -> RoundRecord:
    """Take the player's next nonce and insert the round (the caller holds the player's lock);
    the caller posts its escrow and appends its bet to the log."""
    pair, nonce = fairness_service.take_nonce(session, user_id)
    return RoundRecord(
        id=0,  # until it is inserted
        user_id=user_id,
        game=game,
        status="open",
        seed_pair_id=pair.id,
        nonce=nonce,
        seeds=fairness.Seeds(bytes.fromhex(pair.server_seed), pair.client_seed, nonce),
        commitment=pair.commitment,
        currency=currency,
        rules=rules,
        stakes=stakes,
        staked=sum(stakes.values()),
        actions=[],
        cards=[],
        created_at=datetime.now(UTC),
    )


def _insert(session: Session, round_: RoundRecord, table: str) -> RoundRecord:
    """Insert the round as it stands; return it with its id."""
    round_id = (
        session.connection()
        .execute(
            _NEW_ROUND,
            {
                "user_id": round_.user_id,
                "game": round_.game,
                "table_name": table,
                "status": round_.status,
                "seed_pair_id": round_.seed_pair_id,
                "nonce": round_.nonce,
                "currency": round_.currency,
                "rules": round_.rules,
                "stakes": round_.stakes,
                "staked": round_.staked,
                "actions": round_.actions,
                "cards": round_.cards,
                "signed_bet": round_.signed_bet,
                "created_at": round_.created_at,
            },
        )
        .scalar_one()
    )
    return replace(round_, id=round_id)


def _bet_event(round_: RoundRecord) -> audit.EntrySpec:
    data = {
        "game": round_.game,
        "stakes": round_.stakes,
        "seed_pair_id": round_.seed_pair_id,
        "nonce": round_.nonce,
        **({"signed": round_.signed_bet} if round_.signed_bet else {}),
    }
    return _event(round_, "round.bet", data)


def _signed_bet(
    session: Session,
    round_: RoundRecord,
    placed: tuple[object, object],
    signature: object,
    key_id: object,
) -> RoundRecord:
    """Return the round just opened with the player's signed bet, checked (the caller holds the
    player's lock and has taken the nonce; a refusal rolls both back).

    :param placed: the ``seed_pair_id`` and ``nonce`` the bet names (``None`` for either left
        out); a signed bet names both, since its document holds them.
    :raises NonceNotNext: if the bet names another pair or nonce than the one it takes (409).
    :raises SignatureRequired, SignatureInvalid: for a missing or bad signature (422).
    """
    seed_pair_id, nonce = placed
    if (seed_pair_id is None) != (nonce is None) or (signature is not None and nonce is None):
        raise InvalidInput(
            N_(
                "a bet names both its seed_pair_id and its nonce, or neither; a bet with a "
                "signature names both, as its bet document does"
            ),
            field="nonce" if nonce is None else "seed_pair_id",
        )
    if nonce is not None and (seed_pair_id, nonce) != (round_.seed_pair_id, round_.nonce):
        raise NonceNotNext(
            N_(
                "the bet names nonce %(nonce)s of seed pair %(pair)s, but the next bet takes "
                "nonce %(next)s of seed pair %(active)s: sign it for that one"
            ),
            params={
                "nonce": json.dumps(nonce),
                "pair": json.dumps(seed_pair_id),
                "next": round_.nonce,
                "active": round_.seed_pair_id,
            },
            field="nonce",
        )
    document = fairness.bet_document(
        user_id=round_.user_id,
        game=round_.game,
        seed_pair_id=round_.seed_pair_id,
        nonce=round_.nonce,
        stakes=fairness.bet_stakes(round_.game, round_.stakes),
        rules=round_.rules,
    )
    signed = player_keys.signed_bet(session, document, signature, key_id)
    return replace(round_, signed_bet=signed)


def _wait(
    session: Session, transfers: list[ledger.TransferSpec], events: list[audit.EntrySpec]
) -> None:
    """Leave a round open for the player's next step: post and append what happened so far."""
    if transfers:
        ledger.post_all(session, transfers)
    audit.record_all(session, events)


# --- Casino War ---------------------------------------------------------------------------


def _war_shoe(round_: RoundRecord, rules: casino_war.TableRules) -> Any:
    shuffler = fairness.PartialShuffle(canonical_shoe("standard52", rules.decks), round_.stream())
    return shuffler.prefix


def _war_state(round_: RoundRecord) -> casino_war.WarRound:
    """Rebuild the engine's state of an open round from its row (after any restart)."""
    return casino_war.WarRound(
        rules=casino_war.TableRules.from_dict(round_.rules),
        bet=round_.stakes["bet"],
        tie_bet=round_.stakes["tie_bet"],
        cards=tuple(round_.cards),
    )


def war_view(round_: RoundRecord, balances: Balances) -> CasinoWarRound:
    """The round of Casino War as the player sees it (never the unplayed shoe)."""
    stakes, cards = round_.stakes, round_.cards
    rules = round_.rules
    war = None
    if len(cards) > 2:
        burn = rules["burn"]
        war = War(
            burned=cards[2 : 2 + burn], player_card=cards[2 + burn], dealer_card=cards[3 + burn]
        )
    settled = round_.status == "settled"
    outcome = round_.outcome if settled else None
    return CasinoWarRound(
        id=round_.id,
        game="casino_war",
        status=round_.status,
        bet=stakes["bet"],
        tie_bet=stakes["tie_bet"],
        raise_=stakes["raise"],
        player_card=cards[0],
        dealer_card=cards[1],
        war=war,
        outcome=outcome["result"] if outcome is not None else None,
        tie_bet_won=outcome["tie_bet_won"] if outcome is not None else None,
        net=round_.net,
        payout=round_.payout,
        rules=rules,
        seed_pair_id=round_.seed_pair_id,
        nonce=round_.nonce,
        created_at=round_.created_at,
        settled_at=round_.settled_at,
        balances=balances,
    )


def _settle_war(
    session: Session,
    round_: RoundRecord,
    state: casino_war.WarRound,
    transfers: list[ledger.TransferSpec],
    events: list[audit.EntrySpec],
) -> RoundRecord:
    # For the house's reports: the edge is per unit of the ante, the tie side bet apart.
    figures = {
        "ante": state.bet,
        "tie_bet": state.tie_bet,
        "tie_result": state.tie_bet - state.tie_bet_payout,
    }
    played = replace(
        round_,
        stakes=state.stakes,
        staked=state.staked,
        cards=list(state.cards),
        actions=list(state.actions),
    )
    return _settle(
        session,
        played,
        payout=state.payout,
        outcome=state.receipt_outcome(),
        figures=figures,
        transfers=transfers,
        events=events,
    )


def _refuse_other_rules(table: dict[str, Any], sent: object) -> None:
    """Refuse a bet sent under rules the table does not play now (its page showed them before
    an operator changed them): the player agreed to those rules, and records them.

    :raises RulesChanged: naming each option that differs, as sent → the table's (JSON, so
        ``true`` is not taken for 1, nor the message worded in one language).
    """
    sent = sent if isinstance(sent, dict) else {}
    shown = {name: json.dumps(sent.get(name)) for name in sent}
    played = {name: json.dumps(table.get(name)) for name in table}
    changed = [
        f"{name} {shown.get(name, 'null')} → {played.get(name, 'null')}"
        for name in sorted(shown.keys() | played.keys())
        if shown.get(name) != played.get(name)
    ]
    if changed:
        raise RulesChanged(
            N_(
                "The table's rules changed since they were shown to you (%(changes)s): "
                "look at them again before you bet."
            ),
            params={"changes": "; ".join(changed)},
        )


@idempotency.idempotent("casino_war.bet", CasinoWarRound)
def place_casino_war_bet(
    session: Session,
    user_id: int,
    bet: object,
    tie_bet: object = 0,
    *,
    table: object = "casino_war",
    rules: object = None,
    seed_pair_id: object = None,
    nonce: object = None,
    signature: object = None,
    key_id: object = None,
    key: str | None = None,
) -> CasinoWarRound:
    """Open a Casino War round: escrow the ante and tie bet, deal, settle unless it ties.

    With a key registered, the bet must carry the player's ``signature`` by ``key_id`` over its
    bet document, naming the ``seed_pair_id`` and ``nonce`` it takes.

    :param rules: the table's rules as shown to the player, every option; ``None`` takes the
        table's as they are.
    :raises InvalidBet: for an amount that is not valid at the table.
    :raises RulesChanged: if ``rules`` are not the table's (nothing changes).
    :raises NonceNotNext: if the bet names another pair or nonce than the next (409).
    :raises SignatureRequired, SignatureInvalid: for a missing or bad signature (422).
    :raises InsufficientFunds: if the balance does not cover the stakes (nothing changes).
    """
    if table != "casino_war":
        raise InvalidInput(N_("table must be 'casino_war'"), field="table")
    current = _lock_player(session, user_id, "casino_war")
    if rules is not None:
        _refuse_other_rules(current, rules)
    played = casino_war.TableRules.from_dict(current)
    bet, tie_bet = played.check_bet(bet, 0 if tie_bet is None else tie_bet)
    round_ = _open_round(
        session,
        user_id,
        game="casino_war",
        currency="chips",
        rules=played.to_dict(),
        stakes={"bet": bet, "tie_bet": tie_bet, "raise": 0},
    )
    round_ = _signed_bet(session, round_, (seed_pair_id, nonce), signature, key_id)
    state = casino_war.deal(played, _war_shoe(round_, played), bet, tie_bet)
    waits = state.status != casino_war.SETTLED
    round_ = _insert(
        session,
        replace(
            round_,
            status=casino_war.AWAITING_DECISION if waits else "open",
            cards=list(state.cards),
        ),
        "casino_war",
    )
    transfers = [_escrow(round_, "bet", round_.staked, key)]
    events = [_bet_event(round_)]
    if waits:
        _wait(session, transfers, events)
    else:
        round_ = _settle_war(session, round_, state, transfers, events)
    return war_view(round_, ledger.player_balances(session, user_id))


@idempotency.idempotent("casino_war.decision", CasinoWarRound)
def decide_casino_war(
    session: Session,
    user_id: int,
    round_id: object,
    choice: object,
    signature: object = None,
    key_id: object = None,
    *,
    key: str | None = None,
) -> CasinoWarRound:
    """Settle a tied round by surrender or war (war escrows a raise equal to the ante).

    With a key registered, the decision must carry the player's ``signature`` by ``key_id``.

    :raises RoundSettled: if no decision is due (409).
    :raises SignatureRequired, SignatureInvalid: for a missing or bad signature (422).
    :raises InsufficientFunds: if the raise is not covered (nothing changes).
    """
    round_ = _own_round(session, user_id, round_id, "casino_war")
    if round_.status != casino_war.AWAITING_DECISION:
        raise RoundSettled(
            N_("round %(round)s is settled; no decision is due"), params={"round": round_.id}
        )
    if choice not in casino_war.CHOICES:
        raise InvalidInput(
            N_("%(option)s must be one of: %(valid)s"),
            params={"option": "choice", "valid": ", ".join(casino_war.CHOICES)},
            field="choice",
        )
    _lock_player(session, user_id, "casino_war")
    signed = player_keys.signed_action(session, round_, choice, signature, key_id)
    state = _war_state(round_)
    settled = casino_war.decide(state, str(choice), _war_shoe(round_, state.rules))
    transfers = []
    if settled.raise_amount:
        transfers.append(_escrow(round_, "raise", settled.raise_amount, key))
    decision = {"choice": choice, **({"signed": signed} if signed else {})}
    events = [_event(round_, "round.decision", decision)]
    round_ = replace(round_, signed_actions=player_keys.with_signed(None, 0, signed))
    round_ = _settle_war(session, round_, settled, transfers, events)
    return war_view(round_, ledger.player_balances(session, user_id))


# --- Sota ---------------------------------------------------------------------------------


def _sota_rules(table: dict[str, Any], rules: object, preset: object) -> sota.SotaRules:
    """Return the rule set a game request asks for at a table with these settings.

    :raises InvalidRules: naming the request's field it is about: ``preset``, ``rules``, or
        an option of the rules by its path (``rules.teams``).
    """
    if preset is not None and rules is not None:
        raise InvalidRules(N_("send either rules or preset, not both"))
    if preset is not None:
        if preset not in table["presets"]:
            raise InvalidRules(
                N_("%(option)s must be one of: %(valid)s"),
                params={"option": "preset", "valid": ", ".join(table["presets"])},
                field="preset",
            )
        return sota.SotaRules.from_preset(str(preset))
    if rules is None:
        return sota.SotaRules.from_preset(table["presets"][0])
    if not table["custom_rules"]:
        raise InvalidRules(
            N_("this table plays presets only: %(valid)s"),
            params={"valid": ", ".join(table["presets"])},
            field="rules",
        )
    if not isinstance(rules, dict):
        raise InvalidRules(N_("rules must be an object of rule options"), field="rules")
    try:
        if sota.MAX_TRICKS in rules:
            sota.check_max_tricks(rules[sota.MAX_TRICKS], MAX_DEALT_TRICKS)
        return sota.SotaRules.from_dict(rules)
    except InvalidRules as error:
        # The engine names the option; the request holds it in its rules.
        option = error.details.get("option")
        error.details["field"] = f"rules.{option}" if option else "rules"
        raise


def _sota_play(round_: RoundRecord, choices: list[Any]) -> sota.GameResult:
    return sota.play_game(
        sota.SotaRules.from_dict(round_.rules), stream=round_.stream(), choices=choices
    )


def sota_view(
    round_: RoundRecord, balances: Balances, result: sota.GameResult | None = None
) -> SotaGame:
    """The game of Sota as the player sees it, replayed from its row unless ``result`` is given."""
    given = result is not None
    if result is None:
        result = _sota_play(round_, list(round_.actions))
    settled = round_.status == "settled"
    # A game this call settled holds its trick log in its receipt's outcome already (the
    # engine's dicts, hundreds of them): the answer shows that list instead of building it again.
    tricks = (
        round_.outcome["tricks"]
        if given and settled and round_.outcome is not None
        else result.tricks.to_list()
    )
    return SotaGame(
        id=round_.id,
        game="sota",
        status="settled" if settled else "awaiting_move",
        stake=round_.stakes["stake"],
        rules=round_.rules,
        seats=round_.rules["seats"],
        winner=result.winner if settled else None,
        tricks=cast(list[Trick], tricks),  # the engine's dicts, as typed
        pending=(
            PendingMove(move=result.moves_used, **result.pending)
            if result.pending is not None
            else None
        ),
        ended_by=result.ended_by,
        net=round_.net,
        payout=round_.payout,
        seed_pair_id=round_.seed_pair_id,
        nonce=round_.nonce,
        created_at=round_.created_at,
        settled_at=round_.settled_at,
        balances=balances,
    )


def _settle_sota(
    session: Session,
    round_: RoundRecord,
    result: sota.GameResult,
    transfers: list[ledger.TransferSpec],
    events: list[audit.EntrySpec],
) -> RoundRecord:
    rules = sota.SotaRules.from_dict(round_.rules)
    return _settle(
        session,
        replace(round_, cards=list(result.deck)),
        payout=sota.payout(rules, result.winner, round_.stakes["stake"]),
        outcome=result.receipt_outcome(),
        figures={"ante": round_.staked, "tie_bet": 0, "tie_result": 0},  # no side bet
        transfers=transfers,
        events=events,
        # The row keeps how the game ended; its trick log is the receipt's (and a replay's),
        # not a second copy to encode and write with every game. Older rows hold both.
        row_outcome={"winner": result.winner, "ended_by": result.ended_by},
    )


def stake_refusal(low: int, high: int) -> InvalidBet:
    """The refusal of a stake outside the table's limits (whole sweets): a range, or the one
    stake of a table whose limits are equal (never "from 1 to 1")."""
    if low == high:
        return InvalidBet(
            Nn_("stake must be %(num)s sweet", "stake must be %(num)s sweets"),
            params={"num": low},
            field="stake",
        )
    return InvalidBet(
        N_("stake must be a whole number of sweets from %(low)s to %(high)s"),
        params={"low": low, "high": high},
        field="stake",
    )


def _numbered_pending(session: Session, user_id: int, stored: Any) -> Any:
    """A game's answer stored before ``pending.move`` was added, with the number its choice
    had: the moves of the game that lead to that very choice, counted by replaying them."""
    pending = stored.get("pending") if isinstance(stored, dict) else None
    if not isinstance(pending, dict) or "move" in pending:
        return stored
    round_ = RoundRecord.of(_read_round(session, user_id, stored.get("id"), "sota"))
    actions = list(round_.actions)
    for made in range(len(actions) + 1):
        result = _sota_play(round_, actions[:made])
        if result.pending == pending and len(result.tricks) == len(stored["tricks"]):
            return {**stored, "pending": {"move": made, **pending}}
    return stored  # no such choice: read back as it is, and refused as it is


@idempotency.idempotent("sota.game", SotaGame, _numbered_pending)
def play_sota(
    session: Session,
    user_id: int,
    stake: object,
    rules: object = None,
    preset: object = None,
    *,
    seed_pair_id: object = None,
    nonce: object = None,
    signature: object = None,
    key_id: object = None,
    key: str | None = None,
) -> SotaGame:
    """Stake sweets on a whole game of Sota; resolved at once unless the player has moves to make.

    With a key registered, the game must carry the player's ``signature`` by ``key_id`` over
    its bet document (every rule, as the game is played by), naming the ``seed_pair_id`` and
    ``nonce`` it takes.

    :raises InvalidBet: for a stake outside the table's limits.
    :raises InvalidRules: for an unknown option or value, or a preset the table does not allow.
    :raises NonceNotNext: if the game names another pair or nonce than the next (409).
    :raises SignatureRequired, SignatureInvalid: for a missing or bad signature (422).
    """
    table = _lock_player(session, user_id, "sota")
    if type(stake) is not int or not table["min_stake"] <= stake <= table["max_stake"]:
        raise stake_refusal(table["min_stake"], table["max_stake"])
    game_rules = _sota_rules(table, rules, preset)
    round_ = _open_round(
        session,
        user_id,
        game="sota",
        currency="sweets",
        rules=game_rules.to_dict(),
        stakes={"stake": stake},
    )
    round_ = _signed_bet(session, round_, (seed_pair_id, nonce), signature, key_id)
    result = _sota_play(round_, [])
    waits = result.status != "settled"
    round_ = _insert(session, replace(round_, status="awaiting_move" if waits else "open"), "sota")
    transfers = [_escrow(round_, "bet", round_.staked, key)]
    events = [_bet_event(round_)]
    if waits:
        _wait(session, transfers, events)
    else:
        round_ = _settle_sota(session, round_, result, transfers, events)
    return sota_view(round_, ledger.player_balances(session, user_id), result)


@idempotency.idempotent("sota.move", SotaGame, _numbered_pending)
def sota_move(
    session: Session,
    user_id: int,
    round_id: object,
    cards: object,
    signature: object = None,
    key_id: object = None,
    move: object = None,
    *,
    key: str | None = None,
) -> SotaGame:
    """Make the player's Prisoners of War move: which won cards to lay.

    With a key registered, the move must carry the player's ``signature`` by ``key_id``.

    :param move: the number of the choice it answers (the game's ``pending.move``); without
        it, the move answers whatever choice the game waits for, so a copy sent again may be
        laid again when its cards fit the next choice too.
    :raises RoundSettled: if the game is over.
    :raises MoveNotDue: if ``move`` is not the move the game waits for (a copy of a move laid).
    :raises SignatureRequired, SignatureInvalid: for a missing or bad signature (422).
    """
    round_ = _own_round(session, user_id, round_id, "sota")
    if round_.status == "settled":
        raise RoundSettled(N_("game %(game)s is over; no move is due"), params={"game": round_.id})
    due = len(round_.actions)
    if move is not None and (type(move) is not int or move < 0):
        raise InvalidInput(
            N_("%(option)s must be a whole number from %(low)s"),
            params={"option": "move", "low": 0},
            field="move",
        )
    if move is not None and move != due:
        raise MoveNotDue(
            N_("game %(game)s waits for move %(due)s, not move %(move)s"),
            params={"game": round_.id, "due": due, "move": move},
            field="move",
        )
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        raise InvalidInput(N_("cards must be a list of card codes"), field="cards")
    signed = player_keys.signed_action(session, round_, list(cards), signature, key_id)
    round_ = replace(
        round_,
        actions=[*round_.actions, list(cards)],
        signed_actions=player_keys.with_signed(round_.signed_actions, due, signed),
    )
    result = _sota_play(round_, round_.actions)
    laid = {"cards": cards, **({"signed": signed} if signed else {})}
    events = [_event(round_, "round.move", laid)]
    if result.status == "settled":
        round_ = _settle_sota(session, round_, result, [], events)
    else:
        session.connection().execute(
            _UPDATE_ROUND,
            {
                "round_id": round_.id,
                "status": "awaiting_move",
                "actions": round_.actions,
                "signed_actions": round_.signed_actions,
            },
        )
        _wait(session, [], events)
    return sota_view(round_, ledger.player_balances(session, user_id), result)


# --- reading ------------------------------------------------------------------------------


@in_transaction
def round_view(session: Session, row: Round) -> CasinoWarRound | SotaGame:
    round_ = RoundRecord.of(row)
    balances = ledger.player_balances(session, round_.user_id)
    return (
        war_view(round_, balances) if round_.game == "casino_war" else sota_view(round_, balances)
    )


@read_only
def get_round(
    session: Session, user_id: int, round_id: object, game: str | None = None
) -> CasinoWarRound | SotaGame:
    """Return one of the caller's rounds. :raises NotFound: for anyone else's."""
    return round_view(session, _read_round(session, user_id, round_id, game))


def _listed(round_: Round) -> dict[str, Any]:
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
        "created_at": round_.created_at,
    }


def summary(round_: Round) -> RoundSummary:
    """A round in a list: what was staked, how it ended."""
    return RoundSummary(**_listed(round_))


def row(round_: Round) -> RoundRow:
    """A round in the console's lists: its summary and when it settled."""
    return RoundRow(**_listed(round_), settled_at=round_.settled_at)


@read_only
def list_rounds(
    session: Session,
    user_id: int,
    *,
    game: object = None,
    before: object = None,
    limit: object = 20,
) -> RoundList:
    """Return the caller's rounds, newest first, ``limit`` at a time before round ``before``."""
    if game not in (None, "casino_war", "sota"):
        raise InvalidInput(N_("game must be casino_war or sota"), field="game")
    if type(limit) is not int or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(
            N_("limit must be from 1 to %(max)s"), params={"max": MAX_PAGE}, field="limit"
        )
    if before is not None and type(before) is not int:
        raise InvalidInput(N_("before must be a round id"), field="before")
    query = select(Round).where(Round.user_id == user_id)
    if game:
        query = query.where(Round.game == game)
    if before is not None:
        query = query.where(Round.id < before)
    rows = session.scalars(query.order_by(Round.id.desc()).limit(limit + 1)).all()
    page = [summary(r) for r in rows[:limit]]
    return RoundList(rounds=page, next_before=page[-1].id if len(rows) > limit else None)


@read_only
def receipt(session: Session, user_id: int, round_id: object) -> dict[str, Any]:
    """Return the signed receipt of one of the caller's settled rounds."""
    round_ = _read_round(session, user_id, round_id)
    if round_.status != "settled":
        raise NotFound(
            N_("round %(round)s has no receipt until it settles"), params={"round": round_.id}
        )
    return {"document": round_.receipt, "signature": round_.receipt_signature}


@read_only
def open_rounds(session: Session, user_id: int) -> list[RoundSummary]:
    """Return the caller's rounds that wait for a decision or a move."""
    rows = session.scalars(
        select(Round).where(Round.user_id == user_id, Round.status != "settled").order_by(Round.id)
    ).all()
    return [summary(r) for r in rows]
