"""Who is asking, and may they: server-side sessions, CSRF, bearer tokens, security headers.

Pages: the signed cookie holds only an opaque session token (recorded, hashed, by the accounts
service) and the CSRF token. Logging in clears the cookie and starts a new session, so the
session id changes; logging out, changing the password and expiry end the recorded session, so
a copied cookie stops working. Every non-GET page request must carry the CSRF token in the form
field ``csrf_token`` (templates use ``{{ csrf_field() }}``).

API: ``Authorization: Bearer TOKEN``. A cookie alone never authorizes a state-changing API call:
browser JavaScript calling the API with the cookie must also send the page's CSRF token in the
``X-CSRF-Token`` header. Reads (GET) may use the cookie alone, so the pages' scripts can fetch.
A token is ended by the call that revokes it, sent with that token itself, never the cookie.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import logging
import secrets
from collections.abc import Callable
from collections.abc import Iterable
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import TypeVar
from typing import cast

from flask import Flask
from flask import Request
from flask import abort
from flask import g
from flask import redirect
from flask import request
from flask import session
from flask import url_for
from flask.sessions import SecureCookieSession
from flask.sessions import SecureCookieSessionInterface
from flask.typing import ResponseReturnValue
from markupsafe import Markup
from markupsafe import escape
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.wrappers import Response

from ..core.errors import Forbidden
from ..core.errors import Unauthorized
from ..core.marks import N_
from ..db import get_session
from ..services import accounts
from ..services import staff
from .i18n import flash_words
from .paths import is_local_path
from .paths import wants_json
from .visitor import SESSION_KEY
from .visitor import cookie_name
from .visitor import cookies_are_secure
from .visitor import session_user

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse
    from _typeshed.wsgi import WSGIApplication
    from _typeshed.wsgi import WSGIEnvironment

F = TypeVar("F", bound=Callable[..., Any])

CSRF_KEY = "csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    )
)
HSTS = "max-age=31536000; includeSubDomains"

CSRF_FAILED = N_(
    "This form has expired or did not come from this site (its security token is missing or "
    "wrong). Go back, reload the page and try again."
)


# --- CSRF -----------------------------------------------------------------------------------


def csrf_token() -> str:
    """Return this browser session's CSRF token, creating it on first use."""
    token = session.get(CSRF_KEY)
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(32)
        session[CSRF_KEY] = token
    return token


def csrf_field() -> Markup:
    """Return the hidden form field that carries the CSRF token."""
    return Markup('<input type="hidden" name="{}" value="{}">').format(
        CSRF_FIELD, escape(csrf_token())
    )


def csrf_matches(sent: object) -> bool:
    """Tell whether ``sent`` is this session's CSRF token (compared in constant time)."""
    expected = session.get(CSRF_KEY)
    if not isinstance(sent, str) or not isinstance(expected, str) or not expected:
        return False
    return hmac.compare_digest(sent.encode(), expected.encode())


def check_csrf() -> None:
    """Refuse (400) a state-changing page request without this session's CSRF token."""
    if request.method in SAFE_METHODS or wants_json() or request.routing_exception is not None:
        return  # an unknown URL or method answers 404/405, which changes nothing
    sent = request.form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
    if not csrf_matches(sent):
        abort(400, CSRF_FAILED)


# --- browser sessions -------------------------------------------------------------------------


def log_in(user_id: int) -> None:
    """Start a new recorded session for ``user_id``, this browser's from now on."""
    token, _expires = accounts.start_session(get_session(), user_id)
    set_browser_session(token)


def set_browser_session(token: str) -> None:
    """Make the recorded session ``token``, just started, this browser's; the old cookie's
    session ends.

    The session id and the CSRF token both change, so a cookie planted or copied before the
    login (session fixation) is worth nothing afterwards.
    """
    old = session.get(SESSION_KEY)
    if isinstance(old, str) and old:
        accounts.end_session(get_session(), old)
    session.clear()
    session[SESSION_KEY] = token
    session[CSRF_KEY] = secrets.token_urlsafe(32)
    g.pop("session_user", None)


def log_out() -> None:
    """End the recorded session and forget the cookie's contents."""
    token = session.get(SESSION_KEY)
    if isinstance(token, str) and token:
        accounts.end_session(get_session(), token)
    session.clear()
    g.pop("session_user", None)


def login_redirect() -> Response:
    """Send a visitor who is not logged in to the login page, then back to this page.

    Only a page (GET) is worth coming back to: a refused form's URL is no page to show.
    """
    flash_words(N_("Please log in first."), "info")
    target = request.full_path.rstrip("?") if request.method == "GET" else None
    return redirect(url_for("auth.login", next=target), code=303)


#: What a gate does before its view: ``None`` to let the request in (``g.user`` set), or the
#: answer that turns it away.
Admit = Callable[[], ResponseReturnValue | None]


def admit_user() -> ResponseReturnValue | None:
    """Let in whoever is logged in; send a visitor to the login page."""
    user = session_user()
    if user is None:
        return login_redirect()
    g.user = user
    return None


def admit_player() -> ResponseReturnValue | None:
    """Let in a logged-in player; send a visitor to the login page.

    :raises Forbidden: for staff, who hold no play money and play no rounds.
    """
    user = session_user()
    if user is None:
        return login_redirect()
    if user.role in staff.STAFF:
        raise Forbidden(N_("Staff accounts do not play: this page is for players."))
    g.user = user
    return None


def _gate(admit: Admit) -> Callable[[F], F]:
    """Run ``admit`` before the view; the wrapped view keeps it as ``admit``, so a check made
    before any view runs can let the request in first (:func:`~.inputs.check_repeated_fields`)."""

    def decorator(view: F) -> F:
        @functools.wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> ResponseReturnValue:
            turned_away = admit()
            if turned_away is not None:
                return turned_away
            answer: ResponseReturnValue = view(*args, **kwargs)
            return answer

        wrapped.admit = admit  # type: ignore[attr-defined]  # read by check_repeated_fields
        return cast(F, wrapped)

    return decorator


#: Send a visitor who is not logged in to the login page, then back here.
login_required = _gate(admit_user)
#: A page only players use (lobby, tables, history, statistics): a visitor is sent to log in,
#: and staff, who hold no play money and play no rounds, are told so plainly (403).
player_page = _gate(admit_player)


def home_url(user: accounts.UserView | None) -> str:
    """Return where a user starts: staff in the console, players (and visitors) in the lobby."""
    if user is not None and user.role in staff.STAFF:
        return url_for("operator.audit_log")
    return url_for("lobby.lobby")


def safe_next(target: str | None, home: str | None = None) -> str:
    """Return ``target`` if it is a path on this site, else ``home`` or the lobby (no open
    redirects)."""
    if target and is_local_path(target):
        return target
    return home or url_for("lobby.lobby")


# --- API --------------------------------------------------------------------------------------


def api_user() -> accounts.UserView:
    """Return the caller of an API request.

    :raises Unauthorized: without valid credentials (locking an account ends its sessions and
        tokens), or a cookie without its CSRF header on a state-changing call.
    """
    token = _bearer_token()
    if token is None:
        return _cookie_api_user()
    user = accounts.session_user(get_session(), token, kind="api")
    if user is None:
        raise Unauthorized(accounts.INVALID_TOKEN)
    return user


def _bearer_token() -> str | None:
    """Return the token of the request's ``Authorization`` header (None: it has none).

    :raises Unauthorized: if the header holds no bearer token.
    """
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(N_("the Authorization header must be 'Bearer TOKEN'"))
    return token.strip()


def bearer_token_to_revoke() -> str:
    """Return the bearer token the request carries, for the call that ends it.

    A session cookie never stands in for one, even with its CSRF header: the call ends the
    credential it is sent with, and a browser's session ends by logging out.

    :raises Unauthorized: if the request carries no bearer token.
    """
    token = _bearer_token()
    if token is None:
        raise Unauthorized(
            N_(
                "this call revokes the bearer token it is sent with: send it as 'Authorization: "
                "Bearer TOKEN' (a session cookie revokes nothing; a browser logs out instead)"
            )
        )
    return token


def _cookie_api_user() -> accounts.UserView:
    token = session.get(SESSION_KEY)
    if not isinstance(token, str) or not token:
        raise Unauthorized(N_("send 'Authorization: Bearer TOKEN' (get one from POST /auth/token)"))
    if request.method not in SAFE_METHODS and not csrf_matches(request.headers.get(CSRF_HEADER)):
        raise Unauthorized(
            N_(
                "a session cookie alone cannot authorize this call: send a bearer token, or the "
                "page's CSRF token in %(header)s"
            ),
            params={"header": CSRF_HEADER},
        )
    user = session_user()
    if user is None:
        raise Unauthorized(N_("your session has ended; log in again"))
    return user


def api_login_required(view: F) -> F:
    """Require API credentials; the caller is ``g.user`` inside the view."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> ResponseReturnValue:
        g.user = api_user()
        answer: ResponseReturnValue = view(*args, **kwargs)
        return answer

    return cast(F, wrapped)


# --- headers ----------------------------------------------------------------------------------


def client_address() -> str:
    """Return the client's address, for login throttling (see ``TRUSTED_PROXIES``)."""
    return request.remote_addr or "unknown"


def security_headers(response: Response) -> Response:
    """Add the security headers to every response."""
    headers = response.headers
    headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("Referrer-Policy", "same-origin")
    if request.is_secure:
        headers.setdefault("Strict-Transport-Security", HSTS)
    if request.endpoint != "static" and "Cache-Control" not in headers:
        # Pages and API answers show balances and seeds: never keep them in shared caches.
        headers["Cache-Control"] = "no-store"
    return response


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed cookie session, whose cookie is also ``Secure`` on any HTTPS request, and
    then bound to the host (``__Host-session``).

    ``SESSION_COOKIE_SECURE=1`` forces the flag; without it, a request that came over HTTPS
    (directly, or through a proxy trusted with ``TRUSTED_PROXIES`` that says so in
    ``X-Forwarded-Proto``) still never gets a cookie that a browser would send over plain HTTP.
    A ``session`` cookie set by another host of the domain (a domain cookie) or by a page over
    plain HTTP is not read over HTTPS: it could log the player into someone else's account.
    """

    def get_cookie_secure(self, app: Flask) -> bool:
        return cookies_are_secure()

    def get_cookie_name(self, app: Flask) -> str:
        name = super().get_cookie_name(app)
        if self.get_cookie_domain(app) is not None or self.get_cookie_path(app) != "/":
            return name  # a browser would refuse a host-bound cookie with either
        return cookie_name(name)

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        # No cookie (every bearer-token call): the empty session Flask would give, without
        # building the cookie's serializer first, a sizeable part of such a request's work.
        if app.secret_key and not request.cookies.get(self.get_cookie_name(app)):
            return self.session_class()
        return super().open_session(app, request)


def init_app(app: Flask) -> None:
    """Install the CSRF check, the security headers, the session cookie and template helpers."""
    app.session_interface = SessionInterface()
    app.before_request(check_csrf)
    app.after_request(security_headers)
    app.jinja_env.globals.update(
        csrf_token=csrf_token, csrf_field=csrf_field, current_user=session_user
    )
    proxies = app.config.get("TRUSTED_PROXIES", 0)
    if proxies:
        # Flask documents wrapping wsgi_app so; typeshed declares it a method.
        app.wsgi_app = ProxiedFrom(  # type: ignore[method-assign]
            app.wsgi_app, proxies, app.config["FORWARDED_ALLOW_IPS"]
        )


log = logging.getLogger(__name__)

#: Logged once a process, for the first request naming a client from a peer that is no proxy.
UNTRUSTED_FORWARDER: Final = (
    "X-Forwarded-For from %s, which is not in FORWARDED_ALLOW_IPS: its client is taken at that "
    "address (logged once)"
)


class ProxiedFrom:
    """Read the client's address, scheme and host from the ``X-Forwarded-*`` headers of the
    ``proxies`` in front (Werkzeug's ``ProxyFix``), when the request comes from one of them:
    a peer in ``allowed`` (addresses or networks, ``*`` any), or one that is no IP address (a
    Unix socket, which only a process of the machine reaches), as gunicorn decides.

    Anyone else who reaches the server (gunicorn listens on every interface by default) is
    taken at the address it connects from: its own headers would name any address it likes,
    and each would escape the throttles counted by address. The first such request that
    names a client is logged (once a process): a proxy left out of ``FORWARDED_ALLOW_IPS``
    would otherwise go unnoticed, with every client counted at its address.
    """

    def __init__(self, app: WSGIApplication, proxies: int, allowed: list[str]) -> None:
        self.direct = app
        self.proxied = ProxyFix(app, x_for=proxies, x_proto=proxies, x_host=proxies)
        self.anyone = "*" in allowed
        self.networks = [
            ipaddress.ip_network(name, strict=False) for name in allowed if name != "*"
        ]
        self.told = False

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        peer = environ.get("REMOTE_ADDR", "")
        if self.from_proxy(peer):
            return self.proxied(environ, start_response)
        if "HTTP_X_FORWARDED_FOR" in environ and not self.told:
            self.told = True
            log.warning(UNTRUSTED_FORWARDER, peer)
        return self.direct(environ, start_response)

    def from_proxy(self, peer: str) -> bool:
        if self.anyone:
            return True
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return True
        return any(address in network for network in self.networks)
