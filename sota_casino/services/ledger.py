"""The double-entry ledger: accounts, transfers that sum to zero, postings never changed.

Every money move of the casino goes through :func:`post`. It locks the accounts it moves in
id order (no deadlocks; on SQLite the ``BEGIN IMMEDIATE`` write lock already serializes), and
changes each balance with a conditional ``UPDATE`` whose row count is checked, so a player
balance can never go below zero, whatever runs at the same time.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import date
from datetime import datetime
from typing import Any
from typing import Final
from typing import cast

from sqlalchemy import BigInteger
from sqlalchemy import Select
from sqlalchemy import Table
from sqlalchemy import bindparam
from sqlalchemy import case
from sqlalchemy import delete
from sqlalchemy import event
from sqlalchemy import exists
from sqlalchemy import func
from sqlalchemy import insert
from sqlalchemy import literal
from sqlalchemy import or_
from sqlalchemy import select
from sqlalchemy import union_all
from sqlalchemy import update
from sqlalchemy.orm import Session

from ..core.errors import InsufficientFunds
from ..core.marks import N_
from ..core.marks import Problem as Problem  # the ledger check's problems: ledger.Problem
from ..core.money import CURRENCIES
from ..models import Account
from ..models import LedgerCheckSum
from ..models import Posting
from ..models import Round
from ..models import Transfer
from . import day_totals
from .context import context_of
from .results import Balances
from .tx import in_transaction
from .tx import insert_ignoring_conflicts
from .tx import read_only

SYSTEM_KINDS = ("house", "escrow", "issuance")
#: ``escrow`` moves the stakes of rounds opened before escrow was kept per player (0010).
TRANSFER_KINDS = ("bet", "raise", "settle", "grant", "topup", "adjust", "escrow")
#: A balance short of a transfer, one message id per currency (in minor units, as the API counts).
NOT_COVERED = {
    "chips": N_("your chips balance does not cover %(needed)s"),
    "sweets": N_("your sweets balance does not cover %(needed)s"),
}


def player_account(user_id: int, currency: str) -> str:
    return f"player:{user_id}:{currency}"


def system_account(kind: str, currency: str) -> str:
    return f"{kind}:{currency}"


def escrow_account(user_id: int, currency: str) -> str:
    """The player's escrow: the stakes of its open rounds, and nobody else's. Each player has
    its own, so rounds of different players lock no row in common."""
    return f"escrow:{currency}:{user_id}"


def house_account(user_id: int, currency: str) -> str:
    """What the house made on the player's rounds: the house's result is the sum of these (and
    of ``house:{currency}``, which held it before it was kept per player)."""
    return f"house:{currency}:{user_id}"


@in_transaction
def open_player_accounts(session: Session, user_id: int) -> None:
    """Create the player's chip and sweet accounts (inside the caller's transaction)."""
    for currency in CURRENCIES:
        session.add(
            Account(
                name=player_account(user_id, currency),
                user_id=user_id,
                kind="player",
                currency=currency,
                balance=0,
            )
        )
    session.flush()


def _ensure_system_accounts(session: Session, names: Collection[str]) -> None:
    """Create the system accounts among ``names`` that do not exist yet (a player's own escrow
    and house account on its first round)."""
    for name in names:
        kind, currency, *owner = name.split(":")
        if kind not in SYSTEM_KINDS or currency not in CURRENCIES:
            continue
        if owner and not (len(owner) == 1 and owner[0].isdigit()):
            continue
        user_id = int(owner[0]) if owner else None
        insert_ignoring_conflicts(
            session,
            Account,
            {"name": name, "kind": kind, "currency": currency, "balance": 0, "user_id": user_id},
        )


# The statements of every money move, built once: building and keying a statement costs more
# than running it, and they run on the session's connection (same transaction, no ORM layer).
_ACCOUNTS = cast(Table, Account.__table__)
_TRANSFERS = cast(Table, Transfer.__table__)
_FIND_ACCOUNTS = select(
    _ACCOUNTS.c.id, _ACCOUNTS.c.name, _ACCOUNTS.c.kind, _ACCOUNTS.c.currency
).where(_ACCOUNTS.c.name.in_(bindparam("names", expanding=True)))
_NEW_TRANSFERS = insert(_TRANSFERS).returning(_TRANSFERS.c.id, sort_by_parameter_order=True)
#: The balance changes only if a player account stays at or above zero all through the
#: transfers: ``low`` is the lowest its running sum reaches. A 0-row update refuses. The
#: update takes the row's lock; accounts are updated in id order, so no two transactions wait
#: on each other in a cycle.
_MOVE_BALANCE = (
    update(_ACCOUNTS)
    .where(_ACCOUNTS.c.id == bindparam("account_id"))
    .where(or_(_ACCOUNTS.c.kind != "player", _ACCOUNTS.c.balance + bindparam("low") >= 0))
    .values(balance=_ACCOUNTS.c.balance + bindparam("amount"))
)
_NEW_POSTINGS = insert(cast(Table, Posting.__table__))
#: A player's balances, read at the end of every round and by every ``/me``.
_PLAYER_BALANCES = select(_ACCOUNTS.c.currency, _ACCOUNTS.c.balance).where(
    _ACCOUNTS.c.user_id == bindparam("user_id"), _ACCOUNTS.c.kind == "player"
)
#: Where the process keeps the accounts it has seen committed (an account's id, kind and
#: currency never change, so only its balance is read from the database), and where a
#: transaction keeps those it read until it commits (one it created may yet be rolled back).
_KNOWN = "ledger.accounts"
_SEEN = "sota_casino.ledger_accounts_seen"


@dataclass(frozen=True, slots=True)
class TransferSpec:
    """One balanced transfer to post: account name → signed amount in minor units."""

    kind: str
    currency: str
    moves: Mapping[str, int]
    user_id: int | None = None
    round_id: int | None = None
    idempotency_key: str | None = None
    memo: str | None = None


@dataclass(frozen=True, slots=True)
class _Known:
    id: int
    kind: str
    currency: str


def _accounts(session: Session, names: set[str]) -> dict[str, _Known]:
    """Return the named accounts, from the process's memory or one read (system accounts that
    do not exist yet are created)."""
    known: dict[str, _Known] = context_of(session).cache.setdefault(_KNOWN, {})
    seen: dict[str, _Known] = session.info.setdefault(_SEEN, {})
    missing = [name for name in names if name not in known and name not in seen]
    if missing:
        connection = session.connection()
        rows = connection.execute(_FIND_ACCOUNTS, {"names": missing}).all()
        if len(rows) < len(missing):
            _ensure_system_accounts(session, set(missing) - {row.name for row in rows})
            rows = connection.execute(_FIND_ACCOUNTS, {"names": missing}).all()
        seen.update({row.name: _Known(row.id, row.kind, row.currency) for row in rows})
        absent = sorted(set(missing) - set(seen))
        if absent:
            raise LookupError(f"no such account: {', '.join(absent)}")
    return {name: known.get(name) or seen[name] for name in names}


@event.listens_for(Session, "after_commit")
def _accounts_committed(session: Session) -> None:
    seen = session.info.pop(_SEEN, None)
    if seen:
        context_of(session).cache.setdefault(_KNOWN, {}).update(seen)


@event.listens_for(Session, "after_rollback")
def _accounts_rolled_back(session: Session) -> None:
    session.info.pop(_SEEN, None)


@in_transaction
def post_all(session: Session, transfers: Sequence[TransferSpec]) -> list[int]:
    """Post balanced transfers, in order, inside the caller's transaction; return their ids.

    A handful of statements whatever their number: one insert of the transfers, one update per
    account moved (by the transfers' net amount; a player account must cover the lowest point
    its running sum reaches), one insert of the postings.

    :raises InsufficientFunds: if a player account would go below zero at any step.
    """
    moves_of = [{name: amount for name, amount in t.moves.items() if amount} for t in transfers]
    for spec, moves in zip(transfers, moves_of, strict=True):
        if spec.kind not in TRANSFER_KINDS:
            raise ValueError(f"unknown transfer kind {spec.kind!r}")
        if any(type(amount) is not int for amount in moves.values()):
            raise TypeError("amounts are integers in minor units")
        if sum(moves.values()) != 0:
            raise ValueError(f"transfer does not balance: {moves}")
    accounts = _accounts(session, {name for moves in moves_of for name in moves})
    for spec, moves in zip(transfers, moves_of, strict=True):
        if any(accounts[name].currency != spec.currency for name in moves):
            raise ValueError(f"a transfer in {spec.currency} moves only {spec.currency} accounts")
    net: dict[str, int] = {}
    low: dict[str, int] = {}
    for moves in moves_of:
        for name, amount in moves.items():
            net[name] = net.get(name, 0) + amount
            low[name] = min(low.get(name, 0), net[name])
    connection = session.connection()
    now = datetime.now(UTC)
    transfer_ids = list(
        connection.execute(
            _NEW_TRANSFERS,
            [
                {
                    "kind": t.kind,
                    "currency": t.currency,
                    "user_id": t.user_id,
                    "round_id": t.round_id,
                    "idempotency_key": t.idempotency_key,
                    "memo": t.memo,
                    "created_at": now,
                }
                for t in transfers
            ],
        ).scalars()
    )
    for name in sorted(net, key=lambda n: accounts[n].id):
        if not net[name] and not low[name]:
            continue  # in and out again in these transfers (a round's escrow settled at once)
        changed = connection.execute(
            _MOVE_BALANCE,
            {"account_id": accounts[name].id, "amount": net[name], "low": low[name]},
        )
        if changed.rowcount != 1:
            currency = accounts[name].currency
            held = connection.execute(
                select(_ACCOUNTS.c.balance).where(_ACCOUNTS.c.id == accounts[name].id)
            ).scalar_one()
            raise InsufficientFunds(
                NOT_COVERED[currency],
                params={"needed": -low[name]},
                currency=currency,
                held=held,
                needed=-low[name],
            )
    connection.execute(
        _NEW_POSTINGS,
        [
            {"transfer_id": transfer_id, "account_id": accounts[name].id, "amount": amount}
            for transfer_id, moves in zip(transfer_ids, moves_of, strict=True)
            for name, amount in moves.items()
        ],
    )
    for account in session.identity_map.values():
        if isinstance(account, Account) and account.name in net:
            session.expire(account, ["balance"])  # changed in SQL; reload on next read
    return transfer_ids


@in_transaction
def post(
    session: Session,
    *,
    kind: str,
    currency: str,
    moves: Mapping[str, int],
    user_id: int | None = None,
    round_id: int | None = None,
    idempotency_key: str | None = None,
    memo: str | None = None,
) -> int:
    """Post one balanced transfer inside the caller's transaction; return its id.

    :param moves: account name → signed amount in minor units (+ raises the balance).
    :raises InsufficientFunds: if a player account would go below zero.
    """
    spec = TransferSpec(kind, currency, moves, user_id, round_id, idempotency_key, memo)
    return post_all(session, [spec])[0]


@in_transaction
def balance(session: Session, name: str) -> int:
    """Return the balance of the account called ``name`` (0 if it does not exist yet)."""
    value = session.scalar(select(Account.balance).where(Account.name == name))
    return int(value or 0)


@in_transaction
def player_balances(session: Session, user_id: int) -> Balances:
    """Return the player's balances (inside any transaction)."""
    session.flush()  # what an ORM query would flush first (nothing, unless objects are pending)
    rows = session.connection().execute(_PLAYER_BALANCES, {"user_id": user_id})
    found = dict(rows.tuples().all())
    return Balances(**{currency: int(found.get(currency, 0)) for currency in CURRENCIES})


#: The params of a :class:`Problem` that are amounts, in minor units of its currency.
PROBLEM_AMOUNTS: Final = ("held", "posted", "total", "owed", "net", "payout", "staked")
#: The params of a :class:`Problem` that are amounts the house or the player were given.
PROBLEM_GIVEN: Final = ("house", "player")
#: The params of a :class:`Problem` that are codes: a round's state, its game.
PROBLEM_CODES: Final = ("status", "game")
ACCOUNT_OFF: Final = N_("account %(name)s holds %(held)s but its postings sum to %(posted)s")
PLAYER_NEGATIVE: Final = N_("player account %(name)s is negative: %(held)s")
TRANSFER_OFF: Final = N_("transfer %(transfer)s sums to %(total)s, not 0")
TRANSFER_EMPTY: Final = N_("transfer %(transfer)s has no postings")
#: A player's escrow (or, ``None``, the shared one of before) against its open rounds, by
#: currency.
ESCROW_OFF: Final = {
    ("player", "chips"): N_(
        "player %(user)s's chips escrow holds %(held)s but open rounds staked %(owed)s"
    ),
    ("player", "sweets"): N_(
        "player %(user)s's sweets escrow holds %(held)s but open rounds staked %(owed)s"
    ),
    ("shared", "chips"): N_(
        "the shared chips escrow holds %(held)s but open rounds staked %(owed)s"
    ),
    ("shared", "sweets"): N_(
        "the shared sweets escrow holds %(held)s but open rounds staked %(owed)s"
    ),
}
ROUND_ESCROW_OFF: Final = N_("round %(round)s (%(status)s) has %(held)s in escrow, not %(owed)s")
ROUND_ROW_OFF: Final = N_(
    "round %(round)s (%(game)s) says net %(net)s (payout %(payout)s, staked %(staked)s) but its "
    "postings gave the house %(house)s and the player %(player)s"
)


@dataclass(frozen=True)
class LedgerReport:
    """What ``flask ledger check`` proves, and every problem it found.

    ``state`` is where a later check of only what was posted since resumes from.
    """

    ok: bool
    problems: list[str] = field(default_factory=list)
    transfers: int = 0
    accounts: int = 0
    state: LedgerState | None = None
    #: The sums of postings to keep with ``state`` (:func:`keep_sums`): those that moved since
    #: the state checked from, or every one that is not 0 after a whole check.
    sums: Mapping[int, int] = field(default_factory=dict)
    #: ``problems`` as message ids and params, for words in another language.
    found: list[Problem] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "problems": self.problems,
            "transfers": self.transfers,
            "accounts": self.accounts,
            "postings": self.state.posting_id if self.state else None,
        }


@dataclass(frozen=True)
class LedgerState:
    """The books as far as a check read them: the last posting and transfer, and the last
    closed day whose stored totals were compared with its rounds (``None``: none yet). What
    each account's postings summed to by then is kept beside it (:class:`LedgerCheckSum`)."""

    posting_id: int
    transfer_id: int
    day: date | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "posting_id": self.posting_id,
            "transfer_id": self.transfer_id,
            "day": None if self.day is None else self.day.isoformat(),
        }

    @classmethod
    def from_json(cls, stored: Any) -> LedgerState | None:
        """Read a stored state back; ``None`` for one that is missing or malformed (a state
        stored before days were compared has none: the next step compares every day)."""
        try:
            day = stored.get("day")
            return cls(
                int(stored["posting_id"]),
                int(stored["transfer_id"]),
                None if day is None else date.fromisoformat(day),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


EMPTY_LEDGER = LedgerState(0, 0)


@read_only
def check(session: Session, since: LedgerState | None = None) -> LedgerReport:
    """Check the books: transfers sum to zero, balances equal their postings, no player below
    zero, each player's escrow equals the stakes of its open rounds, each settled round's
    row agrees with what its transfers posted, and each closed day's stored totals (what the
    house's reports read) equal what its settled rounds add up to.

    With ``since`` only what was posted after that state is read (plus every account, with the
    sums kept for that state, the open rounds and the days stored since); a problem found that
    way may be a posting committed late under a lower id, so whoever stores verdicts checks the
    whole ledger again before believing it.
    """
    start = since or EMPTY_LEDGER
    problems: list[Problem] = []
    sums: dict[int, int] = {}
    last_posting = start.posting_id
    for account_id, name, kind, currency, held, before, added, newest in session.execute(
        _accounts_to_look_at(start.posting_id, kept_sums=since is not None)
    ):
        posted = int(before or 0) + int(added or 0)
        # A step keeps the sums that moved; a whole check every one that is not 0.
        if (int(added or 0) if since is not None else posted) != 0:
            sums[account_id] = posted
        last_posting = max(last_posting, newest or 0)
        of = {"name": name, "currency": currency, "held": held}
        if held != posted:
            problems.append(Problem(ACCOUNT_OFF, {**of, "posted": posted}))
        if kind == "player" and held < 0:
            problems.append(Problem(PLAYER_NEGATIVE, of))
    unbalanced = session.execute(
        select(Posting.transfer_id, func.sum(Posting.amount))
        .where(Posting.transfer_id > start.transfer_id, Posting.id <= last_posting)
        .group_by(Posting.transfer_id)
        .having(func.sum(Posting.amount) != 0)
    ).all()
    currencies = _transfer_currencies(session, [tid for tid, _ in unbalanced])
    problems += [
        Problem(
            TRANSFER_OFF, {"transfer": tid, "total": int(total), "currency": currencies.get(tid)}
        )
        for tid, total in unbalanced
    ]
    last_transfer = (
        session.scalar(select(func.max(Posting.transfer_id)).where(Posting.id <= last_posting))
        or start.transfer_id
    )
    empty = session.scalars(
        select(Transfer.id).where(
            Transfer.id > start.transfer_id,
            Transfer.id <= last_transfer,
            # NOT EXISTS, an anti-join: PostgreSQL ran NOT IN as a scan of every posting for
            # each transfer once the postings' ids outgrew work_mem (hours at two million).
            ~exists().where(Posting.transfer_id == Transfer.id),
        )
    ).all()
    problems += [Problem(TRANSFER_EMPTY, {"transfer": tid}) for tid in empty]
    problems += _escrow_problems(session)
    touched = None if since is None else _rounds_touched(start.transfer_id, last_transfer)
    problems += _round_escrow_problems(session, touched)
    problems += _round_row_problems(session, touched)
    day_problems, last_day = day_totals.problems(session, None if since is None else since.day)
    problems += [Problem.of(message, params) for message, params in day_problems]
    transfers = session.scalar(select(func.count(Transfer.id))) or 0
    accounts = session.scalar(select(func.count(Account.id))) or 0
    state = LedgerState(last_posting, last_transfer, last_day)
    texts = [problem.text() for problem in problems]
    return LedgerReport(not problems, texts, transfers, accounts, state, sums, problems)


def _transfer_currencies(session: Session, transfer_ids: list[int]) -> dict[int, str]:
    """The currency each of a few transfers moved (the one of its first posting's account)."""
    if not transfer_ids:
        return {}
    rows = session.execute(
        select(Posting.transfer_id, func.min(Account.currency))
        .join(Account, Account.id == Posting.account_id)
        .where(Posting.transfer_id.in_(transfer_ids))
        .group_by(Posting.transfer_id)
    )
    return dict(rows.tuples().all())


def _accounts_to_look_at(after_posting: int, *, kept_sums: bool) -> Select[Any]:
    """The accounts posted to after ``after_posting`` and those whose balance is not what their
    postings sum to (or, a player's, below 0), with their balance, the sum kept for the check's
    state (``kept_sums``; else 0: a whole check sums every posting), the postings' sum since and
    the newest posting's id.

    One statement, so balances, kept sums and postings are of one snapshot on either database;
    it compares every account in the database and sends back the few a step needs (with every
    account read into Python, a quiet step took 2.6 s instead of 0.4 s at 400,086 accounts).
    """
    since = (
        select(
            Posting.account_id,
            func.sum(Posting.amount).label("added"),
            func.max(Posting.id).label("newest"),
        )
        .where(Posting.id > after_posting)
        .group_by(Posting.account_id)
        .subquery()
    )
    kept = LedgerCheckSum.posted if kept_sums else literal(0, BigInteger, literal_execute=True)
    posted = func.coalesce(kept, 0) + func.coalesce(since.c.added, 0)
    query = (
        select(Account.id, Account.name, Account.kind, Account.currency, Account.balance, kept)
        .add_columns(since.c.added, since.c.newest)
        .outerjoin(since, since.c.account_id == Account.id)
        .where(
            or_(
                since.c.account_id.is_not(None),
                Account.balance != posted,
                (Account.kind == "player") & (Account.balance < 0),
            )
        )
        .order_by(Account.id)
    )
    if kept_sums:
        query = query.outerjoin(LedgerCheckSum, LedgerCheckSum.account_id == Account.id)
    return query


@in_transaction
def keep_sums(session: Session, report: LedgerReport, *, whole: bool) -> None:
    """Keep the sums of postings of a passing ``report`` for its state, in the transaction that
    stores the state: a whole check's replace every row, a step's those of the accounts whose
    sums moved. A sum of 0 has no row."""
    if whole:
        session.execute(delete(LedgerCheckSum))
    moved = sorted(report.sums.items())
    for start in range(0, len(moved), _SUMS_A_STATEMENT):
        batch = moved[start : start + _SUMS_A_STATEMENT]
        if not whole:
            ids = [account_id for account_id, _ in batch]
            session.execute(delete(LedgerCheckSum).where(LedgerCheckSum.account_id.in_(ids)))
        rows = [{"account_id": a, "posted": posted} for a, posted in batch if posted]
        if rows:
            session.execute(insert(LedgerCheckSum), rows)


#: Rows a statement of :func:`keep_sums` writes (under either database's bound parameters).
_SUMS_A_STATEMENT = 5_000


#: A round not settled yet, written as the partial index ``ix_rounds_open`` says it (a literal: a
#: database uses a partial index only for a condition it can see implies the index's).
_OPEN = Round.status != literal("settled", literal_execute=True)


def _escrow_problems(session: Session) -> list[Problem]:
    """Each player's escrow must hold the stakes of its open rounds, and no escrow anything
    else (the one escrow of each currency that came before holds nothing once 0010 ran).

    One statement: the escrows and the open rounds of one snapshot, compared in the database,
    which sends back only those that differ (reading every escrow into Python took 0.5 to 0.7 s
    at 100,000 players).
    """
    nothing = literal(0, BigInteger, literal_execute=True)
    both = union_all(
        select(Account.user_id, Account.currency, Account.balance.label("held"))
        .add_columns(nothing.label("owed"))
        .where(Account.kind == "escrow"),
        select(Round.user_id, Round.currency, nothing, Round.staked).where(_OPEN),
    ).subquery()
    held, owed = func.sum(both.c.held), func.sum(both.c.owed)
    differ = session.execute(
        select(both.c.user_id, both.c.currency, held, owed)
        .group_by(both.c.user_id, both.c.currency)
        .having(held != owed)
    )
    problems = []
    for user_id, currency, has, owes in sorted(differ, key=lambda row: (row[0] or 0, row[1])):
        whose = "player" if user_id is not None else "shared"
        params = {"user": user_id, "currency": currency, "held": int(has), "owed": int(owes)}
        problems.append(Problem(ESCROW_OFF[whose, currency], params))
    return problems


def _rounds_touched(after_transfer: int, upto_transfer: int) -> Any:
    """The rounds a transfer moved money for since the last check, and every open round."""
    return (
        select(Transfer.round_id)
        .where(
            Transfer.id > after_transfer,
            Transfer.id <= upto_transfer,
            Transfer.round_id.is_not(None),
        )
        .union(select(Round.id).where(_OPEN))
    )


def _round_escrow_problems(session: Session, rounds: Any | None) -> list[Problem]:
    """Each open round's escrow must equal its stakes, and each settled round's be zero."""
    escrow_ids = select(Account.id).where(Account.kind == "escrow")
    held_query = (
        select(Transfer.round_id, func.sum(Posting.amount))
        .join(Posting, Posting.transfer_id == Transfer.id)
        .where(Transfer.round_id.is_not(None), Posting.account_id.in_(escrow_ids))
        .group_by(Transfer.round_id)
    )
    rounds_query = select(Round.id, Round.status, Round.staked, Round.currency).order_by(Round.id)
    if rounds is not None:
        held_query = held_query.where(Transfer.round_id.in_(rounds))
        rounds_query = rounds_query.where(Round.id.in_(rounds))
    held = dict(session.execute(held_query).tuples().all())
    problems = []
    for round_id, status, staked, currency in session.execute(rounds_query):
        owed = 0 if status == "settled" else staked
        has = int(held.get(round_id, 0))
        if has != owed:
            params = {"round": round_id, "status": status, "currency": currency}
            problems.append(Problem(ROUND_ESCROW_OFF, {**params, "held": has, "owed": owed}))
    return problems


def _round_row_problems(session: Session, rounds: Any | None) -> list[Problem]:
    """Each settled round's row must say what its transfers posted: the house made ``-net``,
    the player ``net``, and ``net`` is the payout less the stakes. The house's reports add up
    these rows, so a row changed behind the database's triggers is named here."""
    house = func.sum(case((Account.kind == "house", Posting.amount), else_=0))
    player = func.sum(case((Account.kind == "player", Posting.amount), else_=0))
    query = (
        select(Round.id, Round.game, Round.currency, Round.net, Round.payout, Round.staked)
        .add_columns(house, player)
        .join(Transfer, Transfer.round_id == Round.id)
        .join(Posting, Posting.transfer_id == Transfer.id)
        .join(Account, Account.id == Posting.account_id)
        .where(Round.status == "settled")
        .group_by(Round.id, Round.game, Round.currency, Round.net, Round.payout, Round.staked)
        .having(
            or_(
                house != -Round.net,
                player != Round.net,
                Round.net != Round.payout - Round.staked,
            )
        )
        .order_by(Round.id)
    )
    if rounds is not None:
        query = query.where(Round.id.in_(rounds))
    names = ("round", "game", "currency", "net", "payout", "staked", "house", "player")
    return [
        Problem(ROUND_ROW_OFF, dict(zip(names, (*row[:3], *map(int, row[3:])), strict=True)))
        for row in session.execute(query)
    ]
