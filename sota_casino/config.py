"""Configuration: defaults, overridden by the environment. The only reader of ``os.environ``."""

from __future__ import annotations

import os
from typing import Any

#: Integer settings an operator may set through the environment, with their defaults.
INT_SETTINGS: dict[str, int] = {
    "SIGNUP_CHIPS": 100_000,  # 1,000 chips in hundredths
    "SIGNUP_SWEETS": 100,
    "TOPUP_CHIPS": 100_000,
    "TOPUP_SWEETS": 100,
    "LOW_BALANCE_CHIPS": 10_000,  # a top-up is allowed below 100 chips
    "LOW_BALANCE_SWEETS": 10,
    "SOTA_MIN_STAKE": 1,
    "SOTA_MAX_STAKE": 100,
    "SESSION_HOURS": 12,
    "TOKEN_HOURS": 24,
    # live browser sessions and API tokens of one account; one more ends the oldest
    "SESSIONS_PER_ACCOUNT": 100,
    "LOGIN_ATTEMPTS": 5,  # failures per account and address (x4 per address) per window
    "LOGIN_WINDOW_SECONDS": 300,
    "KNOWN_ADDRESS_DAYS": 90,  # an address the owner logged in from stays exempt this long
    "SIGNUPS_PER_ADDRESS": 5,  # new accounts from one address per window
    "SIGNUP_WINDOW_SECONDS": 3600,
    # An account's actions that write records kept for good, per hour (0: no limit); far
    # above what a player does, so only a script meets them
    "ROTATIONS_PER_HOUR": 30,
    "KEY_REGISTRATIONS_PER_HOUR": 10,
    "CHECKPOINT_EVERY": 100,  # sign an audit checkpoint every N entries
    # a player's proof or bundle signs one over newer entries if the latest is this old (s)
    "CHECKPOINT_MIN_SECONDS": 5,
    # PostgreSQL: each process's background integrator looks for audit entries still waiting
    # for their sequence numbers this often, and then its use cases leave their entries to it
    # (ms; 0: off, and each use case integrates its own right after its commit)
    "AUDIT_INTEGRATE_MS": 100,
    "CHECK_INTERVAL_SECONDS": 30,  # the standing audit and ledger checks run this often (0: off)
    # Four eyes: an adjustment that takes what its operator adjusted alone in the last 24 hours
    # (to any player, in absolute value) over this (minor units) waits for a second operator's
    # approval (0: none does); table changes wait for one unless FOUR_EYES_TABLES is 0, and
    # making a user an operator unless FOUR_EYES_OPERATORS is 0.
    "FOUR_EYES_ABOVE_CHIPS": 100_000,  # 1,000 chips
    "FOUR_EYES_ABOVE_SWEETS": 1_000,
    "FOUR_EYES_TABLES": 1,
    "FOUR_EYES_OPERATORS": 1,
    # The longest a request waits for the database (ms), well under gunicorn's timeout: for a
    # lock (PostgreSQL's lock_timeout; SQLite's write gate and busy timeout together), and for
    # one statement (PostgreSQL's statement_timeout; on SQLite a progress handler interrupts it;
    # commands and the standing checks are not cut off). Past either, the request is a 503 with
    # Retry-After. See docs/operations.md.
    "DB_LOCK_TIMEOUT_MS": 5_000,
    "DB_STATEMENT_TIMEOUT_MS": 10_000,
    "PORT": 5000,  # where `python app.py` serves
    "TRUSTED_PROXIES": 0,  # proxies in front that set X-Forwarded-For/-Proto/-Host (throttling)
}

#: Whole-number settings that 0 would make useless, with what 0 would do.
AT_LEAST_ONE = {
    "SESSION_HOURS": "a session of 0 hours ends as it starts, and no one could log in",
    "TOKEN_HOURS": "a token of 0 hours ends as it is given, and no script could use one",
}

#: The peers whose ``X-Forwarded-*`` headers are believed: the addresses or networks of the
#: proxy in front, comma-separated, ``*`` for any peer. gunicorn reads the same variable for
#: ``X-Forwarded-Proto`` (gunicorn.conf.py), so one setting says who the proxy is.
FORWARDED_ALLOW_IPS = "127.0.0.1,::1"


#: The names of this computer, which ``make run`` and ``python app.py`` answer on by default:
#: they serve on 127.0.0.1, and a page of another site whose name is made to point there (DNS
#: rebinding) asks for its own name, which they then refuse.
LOCAL_HOSTS = ("127.0.0.1", "localhost")


class SettingsError(ValueError):
    """A setting the service cannot start with: said in one line, naming the setting."""


def _names(text: str) -> list[str]:
    return [name for name in (part.strip() for part in text.split(",")) if name]


def from_environment(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Return the settings found in the environment (only those that are set)."""
    env = os.environ if environ is None else environ
    found: dict[str, Any] = {}
    for name in ("DATABASE_URL", "SECRET_KEY", "SIGNING_KEY_FILE"):
        if env.get(name):
            found[name] = env[name]
    for name in INT_SETTINGS:
        if env.get(name):
            found[name] = _whole_number(name, env[name])
            if found[name] == 0 and name in AT_LEAST_ONE:
                raise SettingsError(f"{name} must be 1 or more: {AT_LEAST_ONE[name]}")
    for name in ("TRUSTED_HOSTS", "FORWARDED_ALLOW_IPS"):
        if env.get(name):
            found[name] = _names(env[name])
    if env.get("SESSION_COOKIE_SECURE"):
        found["SESSION_COOKIE_SECURE"] = _switch(
            "SESSION_COOKIE_SECURE", env["SESSION_COOKIE_SECURE"]
        )
    return found


#: The words of a setting that is on or off, in any letter case.
SWITCH_WORDS = {
    **dict.fromkeys(("1", "true", "yes", "on"), True),
    **dict.fromkeys(("0", "false", "no", "off"), False),
}


def _switch(name: str, text: str) -> bool:
    """Read an on-off setting; any other word is refused (``off`` read as on made every cookie
    Secure, and logins over plain HTTP failed)."""
    try:
        return SWITCH_WORDS[text.strip().lower()]
    except KeyError:
        raise SettingsError(
            f"{name} must be 1 or 0 (or true/false, yes/no, on/off), not {text!r}"
        ) from None


def _whole_number(name: str, text: str) -> int:
    if not (text.isascii() and text.strip().isdigit()):
        raise SettingsError(f"{name} must be a whole number of 0 or more, not {text!r}")
    return int(text)


def defaults() -> dict[str, Any]:
    """Return the default settings."""
    return {
        "DATABASE_URL": None,  # None: sqlite:///<instance>/sota_casino.db
        "SECRET_KEY": None,  # None: generated into instance/ on first start
        "SIGNING_KEY_FILE": None,  # None: instance/signing_key.pem, generated on first start
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SESSION_COOKIE_SECURE": False,  # set behind HTTPS
        "MAX_CONTENT_LENGTH": 64 * 1024,
        # The host names the casino answers on (Flask refuses any other Host with a 400, as
        # pages build absolute URLs from it); None: any, which production should not keep.
        "TRUSTED_HOSTS": None,
        # The proxy's addresses: only a request from one of them is read behind TRUSTED_PROXIES.
        "FORWARDED_ALLOW_IPS": _names(FORWARDED_ALLOW_IPS),
        **INT_SETTINGS,
    }


def host_warning(settings: dict[str, Any]) -> str | None:
    """Say why a served casino should set ``TRUSTED_HOSTS``, if it does not (None if it does)."""
    if settings["TRUSTED_HOSTS"] is not None:
        return None
    return (
        "TRUSTED_HOSTS is unset, so a request for any host name is answered; set it to the "
        "names the casino answers on (TRUSTED_HOSTS=casino.example,www.casino.example), or "
        f"{','.join(LOCAL_HOSTS)} on this computer only"
    )


#: The settings that bound a request's waits for the database.
DATABASE_WAITS = ("DB_LOCK_TIMEOUT_MS", "DB_STATEMENT_TIMEOUT_MS")


def database_wait_problems(settings: dict[str, Any], worker_timeout: float) -> list[str]:
    """Say what is wrong with the database waits for a worker that lives ``worker_timeout``
    seconds on one request (gunicorn's ``timeout``); nothing if they are sound.

    Each wait must be positive and at most half the worker's time, so a request that waits
    the whole of one still has time to roll back and answer its 503 before the worker is
    killed (an HTML 500 from gunicorn, and a request the client cannot tell from a bug).
    """
    problems = []
    for name in DATABASE_WAITS:
        value = settings[name]
        if not isinstance(value, int) or value <= 0:
            problems.append(f"{name} must be a whole number of milliseconds above 0, not {value!r}")
        elif value > worker_timeout * 1000 / 2:
            problems.append(
                f"{name}={value} is more than half of the worker timeout ({worker_timeout:g} s): "
                "a request that waits that long may be killed before it can answer"
            )
    return problems


def test_postgres_url() -> str:
    """Return the PostgreSQL server that tests, benchmarks and fault runs use."""
    return os.environ.get("TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
