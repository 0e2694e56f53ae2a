"""The user of this browser session, read once a request, and the names its cookies go by.

Apart from :mod:`.security` (which starts and ends sessions) so that the language of a page
(:mod:`.i18n`) can follow the user's choice, and its cookie be named as the session's, while
:mod:`.security` words its prompts through :mod:`.i18n`, and neither module imports the other.
"""

from __future__ import annotations

from typing import Final
from typing import cast

from flask import current_app
from flask import g
from flask import request
from flask import session

from ..db import get_session
from ..services import accounts

#: The cookie session's key of the opaque session token.
SESSION_KEY = "sid"
#: The prefix of a cookie bound to this host (RFC 6265bis, 4.1.3.2): browsers take it only
#: ``Secure``, from HTTPS, with ``Path=/`` and no ``Domain``, so neither another host of the
#: domain nor a page over plain HTTP can set one in its place.
HOST_ONLY: Final = "__Host-"


def cookies_are_secure() -> bool:
    """Whether this request's cookies are ``Secure``: it came over HTTPS (directly or through a
    trusted proxy), or ``SESSION_COOKIE_SECURE`` says all are."""
    return bool(current_app.config["SESSION_COOKIE_SECURE"] or request.is_secure)


def cookie_name(name: str) -> str:
    """The name the cookie ``name`` has in this request: host-bound where it is ``Secure``."""
    return f"{HOST_ONLY}{name}" if cookies_are_secure() else name


def session_user() -> accounts.UserView | None:
    """Return the user of this browser session, or None (a stale cookie is cleared)."""
    if "session_user" not in g:
        user = None
        token = session.get(SESSION_KEY)
        if isinstance(token, str) and token:
            user = accounts.session_user(get_session(), token)
            if user is None or user.locked:
                session.pop(SESSION_KEY, None)
                user = None
        g.session_user = user
    return cast("accounts.UserView | None", g.session_user)
