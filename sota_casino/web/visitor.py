"""The user of this browser session, read once a request.

Apart from :mod:`.security` (which starts and ends sessions) so that the language of a page
(:mod:`.i18n`) can follow the user's choice while :mod:`.security` words its prompts through
:mod:`.i18n`, and neither module imports the other.
"""

from __future__ import annotations

from typing import cast

from flask import g
from flask import session

from ..db import get_session
from ..services import accounts

#: The cookie session's key of the opaque session token.
SESSION_KEY = "sid"


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
