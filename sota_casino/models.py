"""SQLAlchemy 2.0 typed models. Money is ``BigInteger`` minor units; postings and audit entries
are append-only (triggers in the migrations refuse UPDATE and DELETE on them)."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from typing import Any
from typing import Final

from sqlalchemy import JSON
from sqlalchemy import BigInteger
from sqlalchemy import Boolean
from sqlalchemy import CheckConstraint
from sqlalchemy import Date
from sqlalchemy import ForeignKey
from sqlalchemy import Index
from sqlalchemy import Integer
from sqlalchemy import String
from sqlalchemy import Text
from sqlalchemy import UniqueConstraint
from sqlalchemy import func
from sqlalchemy import text
from sqlalchemy.orm import Mapped
from sqlalchemy.orm import mapped_column
from sqlalchemy.orm import relationship

from .core.money import CURRENCIES
from .database import Base
from .database import BigInt
from .database import UTCDateTime

ROLES = ("player", "operator", "auditor")


def utcnow() -> datetime:
    return datetime.now(UTC)


class User(Base):
    __tablename__ = "users"
    __table_args__ = (
        CheckConstraint(f"role IN {ROLES!r}", name="role"),
        # A list's date range is read between the ids found through it (services/ranges.py).
        Index("ix_users_created_at_id", "created_at", "id"),
    )

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    username: Mapped[str] = mapped_column(String(32), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16), default="player")
    locked: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    #: The language the player chose ("fi", "nb", "pt", "en"); None: the browser's.
    locale: Mapped[str | None] = mapped_column(String(8))
    #: The IANA zone an operator reads times in (UTC is shown beside them); None: UTC.
    time_zone: Mapped[str | None] = mapped_column(String(64))


# Names are unique ignoring case ("Alice" and "alice" are one name) whatever path writes one;
# the login's lookup by lower(username) reads this index too.
Index("uq_users_username_lower", func.lower(User.username), unique=True)
# The console's search by any part of a name (``LIKE '%text%'``) reads the names holding the
# text's trigrams through this index, on PostgreSQL (pg_trgm); SQLite reads every name.
Index(
    "ix_users_username_trigrams",
    func.lower(User.username).label("name"),
    postgresql_using="gin",
    postgresql_ops={"name": "gin_trgm_ops"},
).ddl_if(dialect="postgresql")


class UserSession(Base):
    """A logged-in browser session; the cookie carries the token, the table its hash."""

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    kind: Mapped[str] = mapped_column(String(8), default="web")  # web | api
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class LoginAttempt(Base):
    """Failed logins, counted per account and per address to throttle guessing."""

    __tablename__ = "login_attempts"

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    #: A keyed digest of the name typed, never the text (it may be a password typed there).
    name_digest: Mapped[str] = mapped_column(String(64), index=True)
    address: Mapped[str] = mapped_column(String(64), index=True)
    #: The IPv6 /48 of the address, counted too (None: an IPv4 address, counted alone).
    site: Mapped[str | None] = mapped_column(String(64), index=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class KnownLoginAddress(Base):
    """An address the account logged in from (or signed up at), lately: failed guesses from
    elsewhere do not lock the owner out there."""

    __tablename__ = "known_login_addresses"

    username: Mapped[str] = mapped_column(String(64), primary_key=True)
    address: Mapped[str] = mapped_column(String(64), primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class Signup(Base):
    """Accounts opened, counted per address to throttle sign-ups: each is granted play money."""

    __tablename__ = "signups"

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    address: Mapped[str] = mapped_column(String(64), index=True)
    #: The IPv6 /48 of the address, counted too (None: an IPv4 address, counted alone).
    site: Mapped[str | None] = mapped_column(String(64), index=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class Account(Base):
    __tablename__ = "accounts"
    __table_args__ = (
        CheckConstraint("kind <> 'player' OR balance >= 0", name="player_not_negative"),
        CheckConstraint(f"currency IN {CURRENCIES!r}", name="currency"),
        CheckConstraint("kind IN ('player', 'house', 'escrow', 'issuance')", name="kind"),
    )

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)  # "player:7:chips", "house:chips"
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    currency: Mapped[str] = mapped_column(String(8))
    balance: Mapped[int] = mapped_column(BigInteger, default=0)


class Transfer(Base):
    __tablename__ = "transfers"
    __table_args__ = (
        Index("ix_transfers_user_id_idempotency_key", "user_id", "idempotency_key"),
        Index("ix_transfers_created_at_id", "created_at", "id"),
    )

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # bet raise settle grant topup adjust
    currency: Mapped[str] = mapped_column(String(8))
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), index=True)
    round_id: Mapped[int | None] = mapped_column(ForeignKey("rounds.id"), index=True)
    idempotency_key: Mapped[str | None] = mapped_column(String(64))
    memo: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Posting(Base):
    __tablename__ = "postings"
    # An account's postings in transfer order: a page of a player's money moves.
    __table_args__ = (Index("ix_postings_account_id_transfer_id", "account_id", "transfer_id"),)

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    transfer_id: Mapped[int] = mapped_column(ForeignKey("transfers.id"), index=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    amount: Mapped[int] = mapped_column(BigInteger)  # + credit to the account, - debit


class IdempotencyRecord(Base):
    """The first answer to a money-moving request, replayed to a retry with the same key."""

    __tablename__ = "idempotency_records"
    __table_args__ = (UniqueConstraint("user_id", "key", name="uq_idempotency_records_user_key"),)

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    key: Mapped[str] = mapped_column(String(64))
    request_hash: Mapped[str] = mapped_column(String(64))
    response: Mapped[Any] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class SigningKey(Base):
    __tablename__ = "signing_keys"

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    public_key_hex: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class PlayerKey(Base):
    """A player's Ed25519 key for signing decisions and moves. Append-only: a player's newest
    key is the one in use; registering another retires it (its successor's time is when)."""

    __tablename__ = "player_keys"
    __table_args__ = (Index("ix_player_keys_user_id_id", "user_id", "id"),)

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    public_key_hex: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class SeedPair(Base):
    __tablename__ = "seed_pairs"
    __table_args__ = (
        CheckConstraint("status IN ('next', 'active', 'revealed')", name="status"),
        Index("ix_seed_pairs_created_at_id", "created_at", "id"),
        Index(
            "uq_seed_pairs_one_active",
            "user_id",
            unique=True,
            sqlite_where=text("status = 'active'"),
            postgresql_where=text("status = 'active'"),
        ),
        Index(
            "uq_seed_pairs_one_next",
            "user_id",
            unique=True,
            sqlite_where=text("status = 'next'"),
            postgresql_where=text("status = 'next'"),
        ),
        # One server seed serves one pair: revealed for one, it would tell every shuffle of
        # another committed to it in advance.
        Index("uq_seed_pairs_commitment", "commitment", unique=True),
    )

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    status: Mapped[str] = mapped_column(String(8))
    server_seed: Mapped[str] = mapped_column(String(64))  # secret until revealed
    commitment: Mapped[str] = mapped_column(String(64))
    client_seed: Mapped[str | None] = mapped_column(String(64))
    next_nonce: Mapped[int] = mapped_column(BigInteger, default=0)
    commitment_document: Mapped[Any] = mapped_column(JSON)
    commitment_signature: Mapped[str] = mapped_column(String(128))
    reveal_document: Mapped[Any | None] = mapped_column(JSON)
    reveal_signature: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    activated_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    revealed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class Round(Base):
    __tablename__ = "rounds"
    __table_args__ = (
        UniqueConstraint("seed_pair_id", "nonce", name="uq_rounds_seed_pair_nonce"),
        CheckConstraint("game IN ('casino_war', 'sota')", name="game"),
        Index("ix_rounds_user_id_id", "user_id", "id"),
        Index("ix_rounds_created_at_id", "created_at", "id"),
        # The rounds still open, few at any time: each standing step of the ledger check reads
        # them all (and adds up their stakes by player), which without it was a scan of every
        # round.
        Index(
            "ix_rounds_open",
            "user_id",
            "currency",
            sqlite_where=text("status != 'settled'"),
            postgresql_where=text("status != 'settled'"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    game: Mapped[str] = mapped_column(String(16))
    table_name: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(24), index=True)
    seed_pair_id: Mapped[int] = mapped_column(ForeignKey("seed_pairs.id"), index=True)
    # Held by the round, so the pair loaded (and locked) for its nonce stays in the session
    # for the shuffle and the receipt instead of being loaded again.
    seed_pair: Mapped[SeedPair] = relationship()
    nonce: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    rules: Mapped[Any] = mapped_column(JSON)
    stakes: Mapped[Any] = mapped_column(JSON)
    staked: Mapped[int] = mapped_column(BigInteger)  # sum of stakes, what escrow holds while open
    actions: Mapped[Any] = mapped_column(JSON, default=list)
    cards: Mapped[Any] = mapped_column(JSON, default=list)
    # A settled Sota game's row holds its winner and how it ended; the trick log is its
    # receipt's (rows settled before held the log here too).
    outcome: Mapped[Any | None] = mapped_column(JSON)
    payout: Mapped[int | None] = mapped_column(BigInteger)
    net: Mapped[int | None] = mapped_column(BigInteger)
    # For each entry of ``actions``, the player's signed action or null; null if none signed.
    signed_actions: Mapped[Any | None] = mapped_column(JSON)
    # The player's signed bet ({document, signature, key_id}); null for a bet sent unsigned.
    signed_bet: Mapped[Any | None] = mapped_column(JSON)
    receipt: Mapped[Any | None] = mapped_column(JSON)
    receipt_signature: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    settled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Set at settlement for the house's reports, which add them up in the database: the UTC
    # day, the ante (Casino War's bet, Sota's stake), and the tie side bet with what the house
    # made on it (0 for Sota).
    settled_on: Mapped[date | None] = mapped_column(Date, index=True)
    ante: Mapped[int | None] = mapped_column(BigInteger)
    tie_bet: Mapped[int | None] = mapped_column(BigInteger)
    tie_result: Mapped[int | None] = mapped_column(BigInteger)


class AuditHead(Base):
    """One row: the last sequence number and hash; locking it serializes appends (on SQLite
    in each use case's transaction, on PostgreSQL in the integrator's)."""

    __tablename__ = "audit_head"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, default=0)
    hash: Mapped[str] = mapped_column(String(64))


class AuditEntry(Base):
    __tablename__ = "audit_entries"
    # A filter's page is its newest (or oldest) entries: each index ends in ``seq``.
    __table_args__ = (
        Index("ix_audit_entries_actor_seq", "actor", "seq"),
        Index("ix_audit_entries_action_seq", "action", "seq"),
        Index("ix_audit_entries_subject_seq", "subject", "seq"),
    )

    seq: Mapped[int] = mapped_column(BigInt, primary_key=True, autoincrement=False)
    time: Mapped[str] = mapped_column(String(27), index=True)  # YYYY-MM-DDTHH:MM:SS.ffffffZ
    actor: Mapped[str | None] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    subject: Mapped[str | None] = mapped_column(String(64))
    data: Mapped[str] = mapped_column(Text)  # canonical JSON, hashed as stored
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class AuditPending(Base):
    """An entry written by a committed use case that the integrator has not sequenced yet
    (PostgreSQL only): what it will hash, in the order written (``id``)."""

    __tablename__ = "audit_pending"

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    time: Mapped[str] = mapped_column(String(27))  # as the entry will carry it
    actor: Mapped[str | None] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    subject: Mapped[str | None] = mapped_column(String(64))
    data: Mapped[str] = mapped_column(Text)  # canonical JSON, hashed as stored


class AuditCheckpoint(Base):
    __tablename__ = "audit_checkpoints"

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger, unique=True)
    root: Mapped[str] = mapped_column(String(64))
    time: Mapped[str] = mapped_column(String(27))
    signature: Mapped[str] = mapped_column(String(128))
    public_key_hex: Mapped[str] = mapped_column(String(64))
    #: The roots of the tree's perfect subtrees (``merkle.Frontier``), so that the next
    #: checkpoint hashes only the entries after this one.
    frontier: Mapped[str | None] = mapped_column(Text)


class TableSetting(Base):
    __tablename__ = "table_settings"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    settings: Mapped[Any] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))


class AuditTreeNode(Base):
    """The root of a perfect subtree of the audit log's Merkle tree: ``2**height`` entries from
    entry ``idx * 2**height + 1``. Kept from a height up, so a proof reads O(log n) rows."""

    __tablename__ = "audit_tree_nodes"

    height: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    idx: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    hash: Mapped[str] = mapped_column(String(64))


#: The standing checks, by name: each has one :class:`CheckRun` row.
STANDING_CHECKS: Final = ("audit", "ledger")


class CheckRun(Base):
    """The stored verdict of one standing check (``audit`` or ``ledger``), shared by every
    worker and server: how far it reached, where to resume, and who runs it now (a lease)."""

    __tablename__ = "check_runs"

    name: Mapped[str] = mapped_column(String(16), primary_key=True)
    ok: Mapped[bool | None] = mapped_column(Boolean)  # None until the first check ends
    size: Mapped[int] = mapped_column(BigInteger, default=0)  # entries or postings checked
    reason: Mapped[str | None] = mapped_column(Text)
    findings: Mapped[Any | None] = mapped_column(JSON)
    state: Mapped[Any | None] = mapped_column(JSON)  # what an incremental step resumes from
    checked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    whole_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    whole_requested_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    whole_requested_by: Mapped[str | None] = mapped_column(String(64))
    progress: Mapped[int | None] = mapped_column(BigInteger)  # while a whole check runs
    progress_total: Mapped[int | None] = mapped_column(BigInteger)
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime())


class LedgerCheckSum(Base):
    """What an account's postings summed to where the ledger check's stored state stands, kept
    for the accounts whose sum is not 0: a step adds the postings since to it and compares the
    balance. A row is written only when its account's sum moves (services/ledger.py)."""

    __tablename__ = "ledger_check_sums"

    account_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    posted: Mapped[int] = mapped_column(BigInteger)


class ClosedDayTotal(Base):
    """What the settled rounds of one closed UTC day, game and table-rules version add up to,
    stored once the day can gain no round (services/day_totals.py); the ledger check compares
    them with the rounds again. Every figure is in minor units of the game's currency."""

    __tablename__ = "closed_day_totals"

    day: Mapped[date] = mapped_column(Date, primary_key=True)
    game: Mapped[str] = mapped_column(String(16), primary_key=True)
    rules: Mapped[str] = mapped_column(Text, primary_key=True)  # canonical JSON, keys sorted
    rounds: Mapped[int] = mapped_column(BigInteger)
    handle: Mapped[int] = mapped_column(BigInteger)  # everything staked
    house_result: Mapped[int] = mapped_column(BigInteger)  # stakes minus payouts
    main_result: Mapped[int] = mapped_column(BigInteger)  # the house result without the tie bet
    antes: Mapped[int] = mapped_column(BigInteger)
    tie_bets: Mapped[int] = mapped_column(BigInteger)
    tie_result: Mapped[int] = mapped_column(BigInteger)
    # The sums of products the edge's interval needs (services/reports.py, house_math).
    main_result_squares: Mapped[int] = mapped_column(BigInteger)
    main_result_antes: Mapped[int] = mapped_column(BigInteger)
    ante_squares: Mapped[int] = mapped_column(BigInteger)
    ties: Mapped[int] = mapped_column(BigInteger)  # Casino War rounds whose first cards tied
    surrenders: Mapped[int] = mapped_column(BigInteger)
    tied_antes: Mapped[int] = mapped_column(BigInteger)
    surrendered_antes: Mapped[int] = mapped_column(BigInteger)


class AlertRule(Base):
    """A condition an operator asked to be told about: a large win, adjustments above a
    threshold over a period (per player or per operator), or a failed standing check."""

    __tablename__ = "alert_rules"

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    currency: Mapped[str | None] = mapped_column(String(8))  # None for a failed check
    threshold: Mapped[int] = mapped_column(BigInteger, default=0)  # minor units
    period_hours: Mapped[int] = mapped_column(Integer, default=24)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    scanned_at: Mapped[datetime | None] = mapped_column(UTCDateTime())  # large wins read up to


class Alert(Base):
    """One time a rule's condition held: shown on the console until someone acknowledges it."""

    __tablename__ = "alerts"

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    rule_id: Mapped[int] = mapped_column(ForeignKey("alert_rules.id"), index=True)
    subject: Mapped[str | None] = mapped_column(String(64))
    # A message id (services.alerts.MESSAGES) and its params, shown in each reader's language;
    # an alert raised before they were kept has English text here and no params.
    message: Mapped[str] = mapped_column(Text)
    params: Mapped[Any | None] = mapped_column(JSON)
    data: Mapped[Any] = mapped_column(JSON)
    audit_seq: Mapped[int | None] = mapped_column(BigInteger)
    raised_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    acknowledged_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    acknowledged_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class Approval(Base):
    """A change one operator proposed that applies only when a second, different operator
    approves it (four eyes): a large adjustment or a table change."""

    __tablename__ = "approvals"

    id: Mapped[int] = mapped_column(BigInt, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # adjustment | table
    subject: Mapped[str] = mapped_column(String(64))  # user:7, table:casino_war
    change: Mapped[Any] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    proposed_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    proposed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    decided_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    note: Mapped[str | None] = mapped_column(Text)
