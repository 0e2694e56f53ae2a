"""Players, operators and auditors: registration, login with throttling, sessions and tokens."""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import math
import re
import secrets
import string
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import Any
from typing import Final
from typing import cast
from zoneinfo import TZPATH
from zoneinfo import available_timezones

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError
from argon2.exceptions import VerificationError
from sqlalchemy import ColumnElement
from sqlalchemy import Table
from sqlalchemy import bindparam
from sqlalchemy import delete
from sqlalchemy import func
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.orm import Session

from ..core.errors import ApprovalRequired
from ..core.errors import CasinoError
from ..core.errors import Conflict
from ..core.errors import Forbidden
from ..core.errors import InvalidInput
from ..core.errors import NotFound
from ..core.errors import RateLimited
from ..core.errors import Unauthorized
from ..core.marks import N_
from ..core.marks import Nn_
from ..models import ROLES
from ..models import KnownLoginAddress
from ..models import LoginAttempt
from ..models import Round
from ..models import Signup
from ..models import User
from ..models import UserSession
from . import audit
from . import fairness as fairness_service
from . import idempotency
from . import money
from . import proposals
from . import results
from .context import context_of
from .ledger import open_player_accounts
from .staff import require_operator
from .text import storable
from .tx import in_transaction
from .tx import insert_ignoring_conflicts
from .tx import one_read
from .tx import own_transactions
from .tx import read_only
from .tx import serialize_on
from .tx import transactional

USERNAME = re.compile(r"[A-Za-z0-9_.-]{3,32}")
#: Only the ASCII capitals: Unicode's lower case turns a few other letters into ASCII ones
#: (U+212A KELVIN SIGN into "k"), which would let a name no account has log in to one.
_ASCII_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
PASSWORD_MIN, PASSWORD_MAX = 10, 128
#: OWASP's argon2id parameters: 19 MiB, 2 iterations, 1 lane.
HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)
#: Verified against unknown usernames so a wrong name costs as long as a wrong password: a hash
#: of :data:`HASHER`'s parameters (a test holds them equal), made once and written here, since
#: hashing it at import cost every command and worker a hash's time at start.
STAND_IN_HASH: Final = (
    "$argon2id$v=19$m=19456,t=2,p=1$CKC+Xp9pweKMYyivLg2BbQ"  # the parameters and the salt
    "$sfwUZr+eYZe+z2zM9AE0fvUZGbXFrQ+TsVzFOqlyGNM"
)


class UsernameTaken(Conflict):
    """That username is taken."""

    code = "username_taken"


class AccountLocked(Forbidden):
    """This account is locked; contact the casino."""

    code = "account_locked"


@dataclass(frozen=True, slots=True)
class UserView:
    id: int
    username: str
    role: str
    locked: bool = False
    locale: str | None = None
    time_zone: str | None = None  # None: UTC

    @classmethod
    def of(cls, user: User) -> UserView:
        return cls(user.id, user.username, user.role, user.locked, user.locale, user.time_zone)

    def shown(self) -> results.User:
        """The user as the API shows one."""
        return results.User(self.id, self.username, self.role)


@dataclass(frozen=True, slots=True)
class LoggedIn:
    """A login that passed: the user, and the browser session or API token it started."""

    user: UserView
    token: str = field(repr=False)  # a secret: kept out of logs
    expires_at: datetime


def login_name_key(name: str) -> str:
    """Return the form of a login name that tells accounts apart: its ASCII letters in lower
    case, any other character as typed.

    Names are ASCII (:data:`USERNAME`) and unique by ``lower(username)``, which leaves them
    ASCII in either database; so a key holding any other character matches no account, and the
    throttle counts it as a name of its own.
    """
    return name.translate(_ASCII_LOWER)


def names_containing(text: str) -> ColumnElement[bool]:
    """The users whose name contains ``text``, ignoring case (``%`` and ``_`` in it are the
    characters themselves, not wildcards: names may hold ``_``)."""
    return func.lower(User.username).contains(login_name_key(text), autoescape=True)


def check_username(username: object) -> str:
    if not isinstance(username, str) or not USERNAME.fullmatch(username):
        raise InvalidInput(
            N_(
                "username must be 3 to 32 characters: the letters A–Z without accents, digits,"
                " '.', '_' or '-'"
            ),
            field="username",
        )
    return username


#: Long enough to pass the length rule, and still among the first guesses of any attacker.
COMMON_PASSWORDS = frozenset(
    {
        "0123456789",
        "1234567890",
        "0987654321",
        "1q2w3e4r5t",
        "1qaz2wsx3edc",
        "abc1234567",
        "abcdefghij",
        "administrator",
        "iloveyou123",
        "letmein123",
        "password12",
        "password123",
        "password1234",
        "passw0rd123",
        "qwerty1234",
        "qwerty12345",
        "qwertyuiop",
        "welcome123",
        "zaq12wsxcde",
        "trustno1234",
        "football123",
        "baseball123",
        "sunshine123",
        "princess123",
    }
)


#: The strength rules of :func:`check_password` beyond its length, in words (for the API's
#: document: no JSON Schema states them).
WEAK_PASSWORD = (
    "a weak password: fewer than 4 different characters, a common one, or one holding the username"
)


def check_password(password: object, username: str | None = None) -> str:
    """Return ``password`` if it is long, varied and not an obvious guess.

    :raises InvalidInput: saying what makes it weak.
    """
    if not isinstance(password, str) or not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise InvalidInput(
            N_("password must be %(min)s to %(max)s characters"),
            params={"min": PASSWORD_MIN, "max": PASSWORD_MAX},
            field="password",
        )
    storable(password, "password")  # a lone surrogate (an undecodable byte) is no text to hash
    if len(set(password)) < 4:
        message = N_("password is too weak: use more different characters")
        raise InvalidInput(message, field="password")
    if password.lower() in COMMON_PASSWORDS:
        raise InvalidInput(
            N_("password is too common: choose one nobody would guess"), field="password"
        )
    if username and username.lower() in password.lower():
        raise InvalidInput(N_("password must not contain the username"), field="password")
    return password


@in_transaction
def refuse_taken_name(session: Session, username: str) -> None:
    """Refuse ``username`` if an account has it, in any letter case.

    :raises UsernameTaken: if it is taken.
    """
    # The unique index on lower(username) is what keeps names unique: a sign-up that found the
    # name free and then met it in the index is retried (tx.py), and the retry refuses it here.
    # The lock keeps the common race off that path: of two sign-ups of one name at once, the
    # second waits here and is refused, without a failed insert and a retry of its sign-up.
    serialize_on(session, f"username:{login_name_key(username)}")
    if name_taken(session, username):
        raise _taken(username)


@in_transaction
def name_taken(session: Session, username: str) -> bool:
    """Tell whether an account has ``username``, in any letter case."""
    key = login_name_key(username)
    return session.scalar(select(User.id).where(func.lower(User.username) == key)) is not None


def _taken(username: str) -> UsernameTaken:
    return UsernameTaken(
        N_("the username '%(name)s' is taken; choose another"),
        params={"name": username},
        field="username",
    )


def _new_user(session: Session, username: str, password_hash: str, role: str) -> User:
    """Add a user whose password was hashed before the transaction (hashing takes tens of
    milliseconds, which SQLite's write lock must not be held for)."""
    refuse_taken_name(session, username)
    user = User(username=username, password_hash=password_hash, role=role)
    session.add(user)
    session.flush()
    open_player_accounts(session, user.id)
    fairness_service.open_seed_pairs(session, user.id)
    return user


@own_transactions
def register(
    session: Session,
    username: object,
    password: object,
    *,
    address: str = "",
    locale: str | None = None,
) -> UserView:
    """Create a player with the sign-up grant, an active seed pair and the next one.

    :param locale: the language the player chose before signing up, kept with the account
        (the web layer offers only the ones it speaks); None: none chosen.

    :raises InvalidInput: for a bad username or a weak password.
    :raises RateLimited: if the address opened too many accounts lately (each one is granted
        play money, so sign-ups would otherwise mint chips without end), or the login
        throttle holds the name or the address off (:func:`_try_name`).
    :raises UsernameTaken: if the name (ignoring case) is taken; from an address, this counts
        as a failed login.
    """
    name = check_username(username)
    secret = check_password(password, name)
    refusal = _try_name(session, name, address, datetime.now(UTC))
    if refusal is not None:
        raise refusal
    return _register(session, name, HASHER.hash(secret), address, locale)


@transactional
def _try_name(session: Session, name: str, address: str, now: datetime) -> CasinoError | None:
    """Return why a sign-up of ``name`` from ``address`` is refused before its password is
    hashed (tens of milliseconds and 19 MiB, which refused sign-ups must not cost without end),
    or None: the sign-up goes on, and :func:`_register` checks it again, exactly.

    A name found taken from an address tells the sender an account has it, as a failed login
    would: it is counted as one, so names cannot be probed through sign-ups faster than through
    logins. Without an address (commands and scripts) no throttle applies.
    """
    if address:  # every web request has one
        signup_wait = _signup_wait(session, address, now)
        if signup_wait is not None:
            return _too_many_signups(signup_wait)
        _lock_guesses(session, name, address)
        wait = _throttle_wait(session, name, address, now)
        if wait is not None:
            return _held_off(
                Nn_(
                    "too many failed logins or taken names; try again in %(num)s minute",
                    "too many failed logins or taken names; try again in %(num)s minutes",
                ),
                Throttled(wait),
            )
    if not name_taken(session, name):
        return None
    if address:
        _count_failure(session, name, address, now)
    return _taken(name)


@transactional
def _register(
    session: Session, name: str, password_hash: str, address: str, locale: str | None
) -> UserView:
    if address:  # every web request has one; commands and scripts do not
        _admit_signup(session, address)
    user = _new_user(session, name, password_hash, "player")
    user.locale = locale
    _remember_address(session, name, address)
    audit.record(
        session,
        actor=f"user:{user.id}",
        action="user.registered",
        subject=f"user:{user.id}",
        data={"username": name, "address": address},
    )
    money.grant_signup(session, user.id)
    return UserView.of(user)


def _admit_signup(session: Session, address: str) -> None:
    """Count a sign-up from ``address``, or refuse it once ``SIGNUPS_PER_ADDRESS`` accounts were
    opened from there within the window, saying when the oldest of them leaves it.

    Counted in the database under a lock per address, so the limit is exact however many
    workers and servers take sign-ups at once. Sign-ups that left the window are forgotten, so
    the table holds one window's worth.
    """
    place, site = throttle_place(address), throttle_site(address)
    if site is not None:
        serialize_on(session, f"signup-site:{site}")
    serialize_on(session, f"signup:{place}")
    now = datetime.now(UTC)
    wait = _signup_wait(session, address, now)
    if wait is not None:
        raise _too_many_signups(wait)
    window = timedelta(seconds=context_of(session).setting("SIGNUP_WINDOW_SECONDS"))
    session.execute(delete(Signup).where(Signup.at <= now - window))
    session.add(Signup(address=place, site=site, at=now))


def _signup_wait(session: Session, address: str, now: datetime) -> int | None:
    """Return the whole seconds (at least 1) until ``address`` may open another account (and
    its site, :data:`SITE_ADDRESSES` times as many), or None when it may now."""
    settings = context_of(session)
    limit = settings.setting("SIGNUPS_PER_ADDRESS")
    window = timedelta(seconds=settings.setting("SIGNUP_WINDOW_SECONDS"))
    counts = [(limit, Signup.address == throttle_place(address))]
    if (site := throttle_site(address)) is not None:
        counts.append((limit * SITE_ADDRESSES, Signup.site == site))
    return _wait_for_counts(session, Signup.at, counts, window, now)


def _too_many_signups(wait: int) -> RateLimited:
    return RateLimited(
        Nn_(
            "too many new accounts from this address; try again in %(num)s minute",
            "too many new accounts from this address; try again in %(num)s minutes",
        ),
        params={"num": math.ceil(wait / 60)},
        retry_after=wait,
    )


@own_transactions
def create_operator(
    session: Session, username: object, password: object, role: str = "operator"
) -> UserView:
    """Create a staff account (no play money), audited."""
    if role not in ("operator", "auditor"):
        raise InvalidInput("role must be operator or auditor", field="role")
    name = check_username(username)
    return _create_staff(session, name, HASHER.hash(check_password(password, name)), role)


@transactional
def _create_staff(session: Session, name: str, password_hash: str, role: str) -> UserView:
    user = _new_user(session, name, password_hash, role)
    audit.record(
        session,
        actor="system",
        action="user.created",
        subject=f"user:{user.id}",
        data={"username": user.username, "role": role},
    )
    return UserView.of(user)


def _throttle_wait(session: Session, username: str, address: str, now: datetime) -> int | None:
    """Return the whole seconds (at least 1) for which the throttle still refuses a password
    check for ``username`` from ``address``, or None when it takes one.

    Counts of failures in the window, so that guessing is held off without handing anyone a
    way to lock a player out (OWASP ASVS V2.2.1):

    - this account from this address: ``LOGIN_ATTEMPTS``;
    - this address, whatever the accounts: four times that (one address trying many names);
    - an IPv6 address's site (its /48), whatever the accounts: :data:`SITE_ADDRESSES` times
      the address's count;
    - this account from every address: ``LOGIN_ATTEMPTS`` again.

    All but the first are *not* counted against an address the account logged in from lately,
    so strangers failing elsewhere, or at many names behind the owner's shared address (a
    carrier's NAT), cannot lock the owner out of the owner's own address; the first still
    holds guesses at the account from there. The wait is :func:`_wait_for_counts`'.
    """
    settings = context_of(session)
    window = timedelta(seconds=settings.setting("LOGIN_WINDOW_SECONDS"))
    limit = settings.setting("LOGIN_ATTEMPTS")
    digest, place = _typed_name_digest(session, username), throttle_place(address)
    counts: list[tuple[int, ColumnElement[bool]]] = [
        (limit, (LoginAttempt.name_digest == digest) & (LoginAttempt.address == place)),
    ]
    if not _is_known_address(session, _account_name(username), place, now):
        counts.append((limit * 4, LoginAttempt.address == place))
        if (site := throttle_site(address)) is not None:
            counts.append((limit * 4 * SITE_ADDRESSES, LoginAttempt.site == site))
        counts.append((limit, LoginAttempt.name_digest == digest))
    return _wait_for_counts(session, LoginAttempt.at, counts, window, now)


def _wait_for_counts(
    session: Session,
    at: InstrumentedAttribute[datetime],
    counts: list[tuple[int, ColumnElement[bool]]],
    window: timedelta,
    now: datetime,
) -> int | None:
    """Return the whole seconds (at least 1) until every count of ``counts`` (a limit and the
    records it counts, timed by ``at``) is below its limit within the window, or None when
    each is already: a full count frees when the record that fills it (its limit-th newest)
    leaves the window, and the wait is for the last of them."""
    frees_at = []
    for most, which in counts:
        filling = session.scalar(
            select(at).where(at > now - window, which).order_by(at.desc()).offset(most - 1).limit(1)
        )
        if filling is not None:
            frees_at.append(filling + window)
    if not frees_at:
        return None
    return max(1, math.ceil((max(frees_at) - now).total_seconds()))


#: Whoever holds one IPv6 address commonly holds its whole /64 (a home or a cloud host gets
#: one, and privacy addresses change within it): the throttles count it as one address.
IPV6_NETWORK_BITS: Final = 64
#: A site (a company, a provider's customer) commonly holds a whole /48, 65,536 networks of
#: /64: the throttles count it too, as :data:`SITE_ADDRESSES` addresses' worth, so that
#: sending each request from another network does not multiply an address's allowance.
IPV6_SITE_BITS: Final = 48
SITE_ADDRESSES: Final = 16


def throttle_place(address: str) -> str:
    """Return what the throttles count ``address`` as: an IPv4 address itself (also written as
    IPv6), an IPv6 address by its /64 network, anything else as sent (at most 64 characters).
    An address may come in brackets or with a port, as some proxies forward it."""
    ip = _ip(address)
    if ip is None:
        return address[:64]
    if isinstance(ip, ipaddress.IPv6Address):
        return _network(ip, IPV6_NETWORK_BITS)
    return str(ip)


def throttle_site(address: str) -> str | None:
    """Return the IPv6 /48 network the throttles count ``address`` in beside its /64, or None
    for an address that is no such IPv6 address (an IPv4 address is counted alone)."""
    ip = _ip(address)
    return _network(ip, IPV6_SITE_BITS) if isinstance(ip, ipaddress.IPv6Address) else None


def _ip(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``address`` read as an IP address (an IPv4 address written as IPv6 as itself)."""
    try:
        ip = ipaddress.ip_address(_without_port(address))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _network(ip: ipaddress.IPv6Address, bits: int) -> str:
    host_bits = 128 - bits
    return str(ipaddress.IPv6Network((int(ip) >> host_bits << host_bits, bits)))


def _without_port(address: str) -> str:
    """Return ``address`` without the brackets and port a proxy may add (``[2001:db8::1]:443``,
    ``192.0.2.7:5555``); a bare IPv6 address, all colons, is left whole."""
    if address.startswith("["):
        inside, bracket, port = address[1:].partition("]")
        return inside if bracket and (not port or port[:1] == ":") else address
    host, colon, port = address.partition(":")
    return host if colon and port.isdigit() and "." in host else address


def _account_name(username: str) -> str:
    return login_name_key(username)[:64]


def _typed_name_digest(session: Session, username: str) -> str:
    """How a failed login's name is kept: keyed with the app's secret, so a password typed into
    the name field is not left readable in the table (nor guessable from a copy of it)."""
    secret = context_of(session).settings["SECRET_KEY"]
    key = secret if isinstance(secret, bytes) else str(secret).encode()
    return hmac.new(key, _account_name(username).encode(), hashlib.sha256).hexdigest()


def _is_known_address(session: Session, name: str, address: str, now: datetime) -> bool:
    since = now - timedelta(days=context_of(session).setting("KNOWN_ADDRESS_DAYS"))
    known = session.scalar(
        select(KnownLoginAddress.at).where(
            KnownLoginAddress.username == name, KnownLoginAddress.address == address
        )
    )
    return known is not None and known >= since


def _remember_address(session: Session, username: str, address: str) -> None:
    """Note that the account's owner was at ``address`` (a login or the sign-up); addresses
    not seen for ``KNOWN_ADDRESS_DAYS`` are forgotten."""
    if not address:
        return
    now = datetime.now(UTC)
    name, place = _account_name(username), throttle_place(address)
    since = now - timedelta(days=context_of(session).setting("KNOWN_ADDRESS_DAYS"))
    session.execute(delete(KnownLoginAddress).where(KnownLoginAddress.at < since))
    insert_ignoring_conflicts(
        session, KnownLoginAddress, {"username": name, "address": place, "at": now}
    )
    session.execute(
        update(KnownLoginAddress)
        .where(KnownLoginAddress.username == name, KnownLoginAddress.address == place)
        .values(at=now)
    )


@dataclass(frozen=True, slots=True)
class Throttled:
    """A password check the throttle refuses, for ``wait`` more seconds."""

    wait: int


def _held_off(message: tuple[str, str], throttled: Throttled) -> RateLimited:
    """The refusal of a throttled check: ``Retry-After`` its exact wait, the message its
    minutes (``message`` counts them)."""
    minutes = math.ceil(throttled.wait / 60)
    return RateLimited(message, params={"num": minutes}, retry_after=throttled.wait)


@transactional
def _reserve_guess(session: Session, username: str, address: str, now: datetime) -> int | Throttled:
    """Count a password check before it is made (return its record's id), or say for how long
    the throttle refuses it.

    The check is recorded as a failure up front, under locks on the account's name and the
    address (always in that order), so however many arrive at once no more than the limits
    are ever tried; a right password takes its record back (:func:`_forgive_guess`). The hash
    is checked outside this short transaction, so the locks are not held for it. Records that
    left the window are forgotten.
    """
    _lock_guesses(session, username, address)
    wait = _throttle_wait(session, username, address, now)
    if wait is not None:
        return Throttled(wait)
    return _count_failure(session, username, address, now)


def _lock_guesses(session: Session, username: str, address: str) -> None:
    """Lock the failures counted for the account's name, the address's site and the address
    (always in that order), until the transaction ends."""
    serialize_on(session, f"login-account:{_account_name(username)}")
    if (site := throttle_site(address)) is not None:
        serialize_on(session, f"login-site:{site}")
    serialize_on(session, f"login-address:{throttle_place(address)}")


def _count_failure(session: Session, username: str, address: str, now: datetime) -> int:
    """Record a failure for the throttle (return its record's id); records that left the
    window are forgotten."""
    window = timedelta(seconds=context_of(session).setting("LOGIN_WINDOW_SECONDS"))
    session.execute(delete(LoginAttempt).where(LoginAttempt.at <= now - window))
    attempt = LoginAttempt(
        name_digest=_typed_name_digest(session, username),
        address=throttle_place(address),
        site=throttle_site(address),
        at=now,
    )
    session.add(attempt)
    session.flush()
    return attempt.id


def _forgive_guess(session: Session, attempt_id: int) -> None:
    """A right password is no failed guess: drop its record (inside the caller's transaction)."""
    session.execute(delete(LoginAttempt).where(LoginAttempt.id == attempt_id))


@read_only
def _login_candidate(session: Session, username: str) -> tuple[int | None, str]:
    """The account's id and password hash (a stand-in hash for no account, so that a wrong
    name takes as long as a wrong password), read without the write lock."""
    found = session.execute(
        select(User.id, User.password_hash).where(
            func.lower(User.username) == login_name_key(username)
        )
    ).first()
    return (found[0], found[1]) if found else (None, STAND_IN_HASH)


def _password_matches(password_hash: str, password: str) -> bool:
    try:
        return HASHER.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def _attempt_login(
    session: Session, username: str, password: str, address: str, attempt_id: int, kind: str
) -> tuple[LoggedIn | None, str]:
    """Read, check the password outside any transaction (it takes tens of milliseconds and a
    failed guess must not hold SQLite's write lock meanwhile), then record the verdict. The
    guess was counted before (:func:`_reserve_guess`), so concurrent guesses cannot pass the
    throttle while their hashes are being checked."""
    user_id, password_hash = _login_candidate(session, username)
    good = _password_matches(password_hash, password) and user_id is not None
    rehashed = None
    if good and HASHER.check_needs_rehash(password_hash):
        rehashed = HASHER.hash(password)
    matched = password_hash if good else None
    return _record_login(session, username, address, attempt_id, user_id, matched, rehashed, kind)


@transactional
def _record_login(
    session: Session,
    username: str,
    address: str,
    attempt_id: int,
    user_id: int | None,
    matched: str | None,
    rehashed: str | None,
    kind: str,
) -> tuple[LoggedIn | None, str]:
    """Record the verdict of a password checked against the hash ``matched`` (None: it matched
    none), and start the session of a login that passed, in one transaction under the user's
    row lock.

    The hash was checked outside any transaction: a password change (or a lock) that committed
    meanwhile is seen here, and one that comes after waits for the lock and then ends the
    session started here. A password changed since the check makes the login as wrong as any,
    so a password that was just replaced starts no session, and its rehash is not stored.
    """
    user = (
        session.get(User, user_id, with_for_update=True, populate_existing=True)
        if user_id is not None
        else None
    )
    if matched is None or user is None or user.password_hash != matched:
        audit.record(
            session,
            actor=None,
            action="user.login_failed",
            subject=f"user:{user.id}" if user else None,
            # The account's name, never a name that is none: that is often a password typed
            # into the wrong field, and the log keeps it for good and shows it to auditors.
            data={"username": user.username if user else None, "address": address},
        )
        return None, "wrong"
    _forgive_guess(session, attempt_id)
    if user.locked:
        audit.record(
            session,
            actor=f"user:{user.id}",
            action="user.login_refused",
            subject=f"user:{user.id}",
            data={"reason": "locked", "address": address},
        )
        return None, "locked"
    if rehashed is not None:
        user.password_hash = rehashed
    _remember_address(session, user.username, address)
    audit.record(
        session,
        actor=f"user:{user.id}",
        action="user.login",
        subject=f"user:{user.id}",
        data={"address": address},
    )
    return LoggedIn(UserView.of(user), *_new_session(session, user.id, kind)), "ok"


@own_transactions
def authenticate(
    session: Session, username: object, password: object, *, address: str = "", kind: str = "web"
) -> LoggedIn:
    """Check credentials, throttled per account and per address (in the database, so every
    worker shares the count), and start a browser session (``kind`` ``"web"``) or an API token
    (``"api"``) for them. Failures are recorded and audited before the refusal.

    :raises RateLimited: after too many failures in the window.
    :raises Unauthorized: for a wrong name or password (the same message for both).
    :raises AccountLocked: for a locked account.
    """
    if not isinstance(username, str) or not isinstance(password, str) or not username:
        raise InvalidInput(N_("username and password are required"))
    storable(username, "username")
    attempt_id = _reserve_guess(session, username, address, datetime.now(UTC))
    if isinstance(attempt_id, Throttled):
        raise _held_off(
            Nn_(
                "too many failed logins; try again in %(num)s minute",
                "too many failed logins; try again in %(num)s minutes",
            ),
            attempt_id,
        )
    logged_in, verdict = _attempt_login(
        session, username, password[: PASSWORD_MAX * 4], address, attempt_id, kind
    )
    if verdict == "locked":
        raise AccountLocked()
    if logged_in is None:
        raise Unauthorized(N_("wrong username or password"))
    return logged_in


#: What a call with a bearer token that is unknown, ended or expired is told.
INVALID_TOKEN: Final = N_("the bearer token is invalid or has expired; get a new one")


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@transactional
def start_session(session: Session, user_id: int, *, kind: str = "web") -> tuple[str, datetime]:
    """Start a server-side session (or API token); return the opaque token and its expiry."""
    session.get(User, user_id, with_for_update=True)  # the account's sessions, one at a time
    return _new_session(session, user_id, kind)


#: The setting each kind of session lives by, in hours.
LIFETIME_SETTINGS: Final = {"web": "SESSION_HOURS", "api": "TOKEN_HOURS"}


@in_transaction
def _new_session(session: Session, user_id: int, kind: str) -> tuple[str, datetime]:
    """Start a session of the account, whose row the caller holds locked.

    The account's sessions that ended or expired are deleted (they open nothing again), and
    past ``SESSIONS_PER_ACCOUNT`` live ones the oldest go too, so logging in over and over (a
    script holding the password) keeps no more rows than that. None is refused: no one holding
    the password can lock its owner out this way.
    """
    settings = context_of(session)
    hours = settings.setting(LIFETIME_SETTINGS[kind])
    now = datetime.now(UTC)
    mine = UserSession.user_id == user_id
    over = UserSession.ended_at.is_not(None) | (UserSession.expires_at <= now)
    session.execute(delete(UserSession).where(mine, over))
    kept = max(settings.setting("SESSIONS_PER_ACCOUNT") - 1, 0)
    oldest = select(UserSession.id).where(mine).order_by(UserSession.id.desc()).offset(kept)
    session.execute(delete(UserSession).where(UserSession.id.in_(oldest)))
    token, expires = secrets.token_urlsafe(32), now + timedelta(hours=hours)
    session.add(
        UserSession(token_hash=_token_hash(token), user_id=user_id, kind=kind, expires_at=expires)
    )
    return token, expires


# Built once: every authenticated request runs it. Plain columns, no ORM objects: the token's
# user and role in one indexed read, nothing loaded into the session's identity map.
_USERS = cast(Table, User.__table__)
_SESSIONS = cast(Table, UserSession.__table__)
_SESSION_USER = (
    select(
        _USERS.c.id,
        _USERS.c.username,
        _USERS.c.role,
        _USERS.c.locked,
        _USERS.c.locale,
        _USERS.c.time_zone,
        _SESSIONS.c.created_at,
        _SESSIONS.c.ended_at,
        _SESSIONS.c.expires_at,
    )
    .join(_SESSIONS, _SESSIONS.c.user_id == _USERS.c.id)
    .where(_SESSIONS.c.token_hash == bindparam("token_hash"), _SESSIONS.c.kind == bindparam("kind"))
)


@one_read
def session_user(session: Session, token: object, *, kind: str = "web") -> UserView | None:
    """Return the user of a live session or token, or None if it ended, expired or is unknown."""
    if not isinstance(token, str) or not token:
        return None
    row = (
        session.connection()
        .execute(_SESSION_USER, {"token_hash": _token_hash(token), "kind": kind})
        .first()
    )
    if row is None:
        return None
    now = datetime.now(UTC)
    # The lifetime in force counts too: one lowered at a restart ends the older sessions.
    lifetime = timedelta(hours=context_of(session).setting(LIFETIME_SETTINGS[kind]))
    if (
        row.ended_at is not None
        or row.locked
        or min(row.expires_at, row.created_at + lifetime) <= now
    ):
        return None
    return UserView(row.id, row.username, row.role, row.locked, row.locale, row.time_zone)


@transactional
def set_locale(session: Session, user_id: int, locale: str) -> None:
    """Store the language a player chose (the web layer offers only the ones it speaks)."""
    session.execute(update(User).where(User.id == user_id).values(locale=locale))


@transactional
def end_session(session: Session, token: object) -> None:
    """End one session or token (logout)."""
    if isinstance(token, str) and token:
        _end(session, UserSession.token_hash == _token_hash(token))


@transactional
def revoke_api_token(session: Session, token: str) -> None:
    """End one live API token, and only it: a script whose token leaked stops it while the
    account's other tokens and browser sessions go on (a password change ends them all).

    Not audited, as a logout is not: issuing the token was (``user.login``).

    :raises Unauthorized: if ``token`` is no live API token (unknown, ended or expired), as
        any call with it is refused.
    """
    live = (UserSession.kind == "api", UserSession.expires_at > datetime.now(UTC))
    if not _end(session, UserSession.token_hash == _token_hash(token), *live):
        raise Unauthorized(INVALID_TOKEN)


def _end_all(session: Session, user_id: int) -> None:
    _end(session, UserSession.user_id == user_id)


def _end(session: Session, *which: ColumnElement[bool]) -> bool:
    """End the sessions and tokens that ``which`` picks and that have not ended; tell whether
    there were any (of two revocations of one token at once, one ends it)."""
    ended = session.execute(
        update(UserSession)
        .where(*which, UserSession.ended_at.is_(None))
        .values(ended_at=datetime.now(UTC))
    )
    return bool(ended.rowcount)  # type: ignore[attr-defined]  # an UPDATE answers a CursorResult


@own_transactions
def issue_api_token(
    session: Session, username: object, password: object, *, address: str = ""
) -> results.Token:
    """Log in and return a bearer token for the JSON API with its expiry."""
    logged_in = authenticate(session, username, password, address=address, kind="api")
    return results.Token(logged_in.token, logged_in.expires_at)


@read_only
def _password_state(session: Session, user_id: int) -> tuple[str, str]:
    """The user's name and password hash."""
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(N_("no such user"))
    return user.username, user.password_hash


@transactional
def _set_password(
    session: Session, user_id: int, attempt_id: int, replaced: str, new_hash: str
) -> None:
    """Replace the hash ``replaced``, which the current password was checked against outside
    any transaction, and take back the failure recorded for the check; under the user's row
    lock, as a login is recorded (:func:`_record_login`).

    :raises Unauthorized: if the password changed since the check: what was typed as the
        current password is no longer it.
    """
    user = session.get(User, user_id, with_for_update=True, populate_existing=True)
    if user is None:
        raise NotFound(N_("no such user"))
    if user.password_hash != replaced:
        raise Unauthorized(N_("the current password is wrong"))
    _forgive_guess(session, attempt_id)
    user.password_hash = new_hash
    _end_all(session, user_id)
    audit.record(
        session, actor=f"user:{user_id}", action="user.password_changed", subject=f"user:{user_id}"
    )


@own_transactions
def change_password(
    session: Session, user_id: int, old: object, new: object, *, address: str = ""
) -> None:
    """Change the password and end every session and token of the user.

    A wrong current password counts as a failed login, so a stolen session cannot guess it
    without limit.

    :raises InvalidInput: for a new password that sign-up would refuse (weak, or holding the
        username).
    :raises RateLimited: after too many failures in the window.
    :raises Unauthorized: if the current password is wrong.
    """
    username, password_hash = _password_state(session, user_id)
    secret = check_password(new, username)
    attempt_id = _reserve_guess(session, username, address, datetime.now(UTC))
    if isinstance(attempt_id, Throttled):
        raise _held_off(
            Nn_(
                "too many failed attempts; try again in %(num)s minute",
                "too many failed attempts; try again in %(num)s minutes",
            ),
            attempt_id,
        )
    if not _password_matches(password_hash, old if isinstance(old, str) else ""):
        raise Unauthorized(N_("the current password is wrong"))
    _set_password(session, user_id, attempt_id, password_hash, HASHER.hash(secret))


def _staff_target(session: Session, actor_id: int, user_id: int) -> User:
    require_operator(session, actor_id)
    user = session.get(User, user_id, with_for_update=True, populate_existing=True)
    if user is None:
        raise NotFound(N_("no user %(id)s"), params={"id": user_id})
    return user


@in_transaction
def operators_need_approval(session: Session) -> bool:
    """Whether making a user an operator waits for a second operator (four eyes)."""
    return bool(context_of(session).setting("FOUR_EYES_OPERATORS"))


def _role_target(session: Session, actor_id: int, user_id: int, role: object) -> User:
    """The user whose role an operator changes (locked), the role checked."""
    if role not in ROLES:
        raise InvalidInput(
            N_("%(option)s must be one of: %(valid)s"),
            params={"option": "role", "valid": ", ".join(ROLES)},
            field="role",
        )
    user = _staff_target(session, actor_id, user_id)
    if user.id == actor_id:
        raise Conflict(N_("operators cannot change their own role"))
    return user


def _waits_for_approval(session: Session, user: User, role: object) -> bool:
    """Whether this role change waits for a second operator: making an operator of someone who
    is none, while four eyes is on (demotions and auditors apply at once)."""
    return role == "operator" and user.role != "operator" and operators_need_approval(session)


def _refuse_open_round(session: Session, user: User, role: str) -> None:
    """Refuse to make staff of a player (locked) who has a round open: staff cannot play, so
    the round would wait, its stake held, until the account were a player again.

    :raises Conflict: naming the round.
    """
    if user.role != "player" or role == "player":
        return
    open_round = session.scalar(
        select(Round.id).where(Round.user_id == user.id, Round.status != "settled").limit(1)
    )
    if open_round is not None:
        raise Conflict(
            N_("%(name)s has round %(round)s open: staff cannot play, so it is finished first"),
            params={"name": user.username, "round": open_round},
        )


@transactional
def set_role(session: Session, actor_id: int, user_id: int, role: object) -> UserView:
    """Change a user's role (audited).

    :raises ApprovalRequired: when making an operator waits for a second operator
        (:func:`propose_operator`).
    """
    user = _role_target(session, actor_id, user_id, role)
    if _waits_for_approval(session, user, role):
        raise ApprovalRequired(
            N_("making an operator needs a second operator's approval: propose it")
        )
    return apply_role_change(session, actor_id, user.id, str(role))


@in_transaction
def apply_role_change(
    session: Session,
    actor_id: int,
    user_id: int,
    role: str,
    *,
    approval: dict[str, Any] | None = None,
) -> UserView:
    """Give a user a role checked already, inside the caller's transaction (audited);
    ``approval`` names who approved it, if someone did."""
    user = session.get(User, user_id, with_for_update=True, populate_existing=True)
    if user is None:
        raise NotFound(N_("no user %(id)s"), params={"id": user_id})
    _refuse_open_round(session, user, role)
    before, user.role = user.role, role
    data = {"from": before, "to": role}
    proposals.record_applied(
        session, actor_id, "user.role_changed", f"user:{user_id}", data, approval
    )
    return UserView.of(user)


@idempotency.idempotent("accounts.propose_operator", proposals.ApprovalView)
def propose_operator(
    session: Session, actor_id: int, user_id: int, *, key: str | None = None
) -> proposals.ApprovalView:
    """Propose making a user an operator, for a second operator to approve (audited); nothing
    changes yet.

    A retried ``idempotency_key`` returns the first proposal instead of making a second.

    :raises Conflict: if the user is an operator already.
    """
    user = _role_target(session, actor_id, user_id, "operator")
    if user.role == "operator":
        raise Conflict(N_("%(name)s is an operator already"), params={"name": user.username})
    return _propose_operator(session, actor_id, user)


def _propose_operator(session: Session, actor_id: int, user: User) -> proposals.ApprovalView:
    _refuse_open_round(session, user, "operator")
    change = {"user_id": user.id, "role": "operator"}
    return proposals.propose(session, actor_id, "role", f"user:{user.id}", change)


@idempotency.idempotent("accounts.request_role_change", proposals.Requested[UserView])
def request_role_change(
    session: Session, actor_id: int, user_id: int, role: object, *, key: str | None = None
) -> proposals.Requested[UserView]:
    """Change a user's role, or propose it when making an operator waits for a second operator
    (the console's one button).

    A retried ``idempotency_key`` (a double submit of the form) returns the first answer.
    """
    user = _role_target(session, actor_id, user_id, role)
    if _waits_for_approval(session, user, role):
        return proposals.Requested(None, _propose_operator(session, actor_id, user))
    return proposals.Requested(apply_role_change(session, actor_id, user.id, str(role)), None)


@transactional
def set_locked(session: Session, actor_id: int, user_id: int, locked: bool) -> UserView:
    """Lock or unlock an account (audited); locking ends its sessions, open rounds stay open."""
    user = _staff_target(session, actor_id, user_id)
    if user.id == actor_id:
        raise Conflict(N_("operators cannot lock themselves"))
    user.locked = bool(locked)
    if user.locked:
        _end_all(session, user_id)
    audit.record(
        session,
        actor=f"user:{actor_id}",
        action="user.locked" if user.locked else "user.unlocked",
        subject=f"user:{user_id}",
    )
    return UserView.of(user)


@read_only
def get_user(session: Session, user_id: int) -> UserView:
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(N_("no user %(id)s"), params={"id": user_id})
    return UserView.of(user)


@read_only
def find_users(session: Session, query: str = "", limit: int = 50) -> list[UserView]:
    """Search users by name (substring, case-insensitive), oldest first."""
    storable(query, "q")
    users = session.scalars(
        select(User).where(names_containing(query)).order_by(User.id).limit(limit)
    ).all()
    return [UserView.of(u) for u in users]


#: The zone database's areas: its zones named ``Area/Location`` are the places.
AREAS: Final = (
    "Africa",
    "America",
    "Antarctica",
    "Arctic",
    "Asia",
    "Atlantic",
    "Australia",
    "Europe",
    "Indian",
    "Pacific",
)


@functools.cache
def time_zones() -> tuple[str, ...]:
    """The zones a person picks their place in, sorted (read once); UTC is offered beside them.

    These are the zone database's own list of places (``zone.tab``: each zone of each country
    by its present name, Europe/Oslo, Asia/Kolkata, America/Argentina/Buenos_Aires). Left out:
    the rules named for no place (EST5EDT, Factory, posixrules, the machine's ``localtime``),
    the ``Etc/`` offsets (Etc/GMT+5 is five hours *behind* UTC, the reverse of what people read
    in it; Etc/UTC is UTC again), and the old names kept as aliases (US/Eastern, GB,
    Asia/Calcutta, Europe/Kiev), each of which has its place's name in the list. Without that
    list (a machine that ships none), the zones named ``Area/Location``.
    """
    known = available_timezones()
    listed = _zone_table()
    if listed is None:
        return tuple(sorted(zone for zone in known if zone.split("/")[0] in AREAS))
    return tuple(sorted(known & listed))


def _zone_table() -> frozenset[str] | None:
    """The zones ``zone.tab`` lists, from where zoneinfo reads the zones (the machine's zone
    database first, then the ``tzdata`` package); None if there is none."""
    for root in TZPATH:
        path = Path(root, "zone.tab")
        if path.is_file():
            return _zones_listed(path.read_text(encoding="utf-8"))
    try:
        text = resources.files("tzdata.zoneinfo").joinpath("zone.tab").read_text("utf-8")
    except (ModuleNotFoundError, OSError):
        return None
    return _zones_listed(text)


def _zones_listed(text: str) -> frozenset[str]:
    """The zone names of a ``zone.tab``: its third column (country, coordinates, zone, ...)."""
    rows = (line.split("\t") for line in text.splitlines() if not line.startswith("#"))
    return frozenset(row[2] for row in rows if len(row) >= 3)


def check_time_zone(zone: object, current: str | None = None) -> str | None:
    """Return a zone of :func:`time_zones` (``None`` for ``""`` or ``UTC``: UTC), or the
    ``current`` one sent back as it is: chosen when it was still offered, it is no new choice.

    :raises InvalidInput: for any other name.
    """
    if zone is None or zone == "" or zone == "UTC":
        return None
    if zone == current:
        return current
    if not isinstance(zone, str) or len(zone) > 64 or zone not in time_zones():
        raise InvalidInput(
            N_("time zone must be a place's zone such as Europe/Paris or America/New_York"),
            field="time_zone",
        )
    return zone


@transactional
def set_time_zone(session: Session, user_id: int, zone: object) -> UserView:
    """Store the zone a member of staff reads times in (audited, sent changed or not, as a
    table's settings, a lock or a rule's switch are); UTC stays shown beside it.

    The zone one has is taken back even when it is no longer offered: the console's form shows
    it, and sends it again unchanged.
    """
    user = session.get(User, user_id, with_for_update=True, populate_existing=True)
    if user is None or user.role == "player":
        raise NotFound(N_("only staff choose the zone the console shows times in"))
    checked = check_time_zone(zone, user.time_zone)
    user.time_zone = checked
    audit.record(
        session,
        actor=f"user:{user_id}",
        action="user.time_zone",
        subject=f"user:{user_id}",
        data={"time_zone": checked or "UTC"},
    )
    return UserView.of(user)
