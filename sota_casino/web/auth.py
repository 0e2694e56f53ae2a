"""Registration, logging in and out, and changing the password (pages)."""

from __future__ import annotations

from flask import Blueprint
from flask import g
from flask import redirect
from flask import render_template
from flask import request
from flask import session
from flask import url_for
from flask.typing import ResponseReturnValue

from ..core.errors import CasinoError
from ..core.errors import InvalidInput
from ..core.marks import N_
from ..db import get_session
from ..services import accounts
from .errors import EVERY_FIELD
from .errors import drawn_in_an_outage
from .errors import handle_casino_error
from .errors import invalid_fields
from .errors import refusal_headers
from .errors import status_of
from .i18n import COOKIE
from .i18n import LANGUAGES
from .i18n import PICKED
from .i18n import error_message
from .i18n import flash_words
from .security import client_address
from .security import home_url
from .security import log_in
from .security import log_out
from .security import login_required
from .security import safe_next
from .security import set_browser_session
from .visitor import cookie_name
from .visitor import session_user

bp = Blueprint("auth", __name__, url_prefix="/auth")

#: Forms shown again, as typed, when refused: retyping a name after every typo is no fun. The
#: refusal stands beside the fields, the one to fix marked and focused.
FORMS = {
    "auth.login_post": "auth/login.html",
    "auth.register_post": "auth/register.html",
    "auth.password_post": "auth/password.html",
}
#: The field to fix for refusals that name none.
FIELD_OF_CODE = {accounts.UsernameTaken.code: "username"}
#: The password page's fields for the ones a refusal names: the new password's (too weak, or the
#: two typed differ) or, about none, the current one (wrong).
PASSWORD_FIELDS = {"password": "new", "confirm": "confirm", EVERY_FIELD: "old"}


@bp.errorhandler(CasinoError)
@drawn_in_an_outage
def refused(error: CasinoError) -> ResponseReturnValue:
    """Show a refused login or sign-up on its own form with the reason, the name kept and the
    refusal's status (401 wrong password, 409 name taken, 422 weak password, 429 throttled).

    A refused password change is shown on its form too (401 wrong current password, 422 weak
    or differing new ones, 429 throttled).
    """
    template = FORMS.get(request.endpoint or "")
    if template is None:
        return handle_casino_error(error)
    invalid = FIELD_OF_CODE.get(error.code) or invalid_fields(error)
    if request.endpoint == "auth.password_post":
        invalid = PASSWORD_FIELDS.get(invalid or "")
    body = render_template(
        template,
        error=error_message(error),
        invalid=invalid,
        username=_typed_name()[:32],
        next=request.form.get("next", ""),
    )
    return body, status_of(error), refusal_headers(error)


def _typed_name() -> str:
    """The user name typed in the form, less the spaces around it."""
    return request.form.get("username", "").strip()


def _same_passwords(first: str, second: str) -> None:
    if first != second:
        raise InvalidInput(
            N_("The two passwords differ. Type the same new password twice."), field="confirm"
        )


@bp.get("/register")
def register() -> ResponseReturnValue:
    user = session_user()
    if user is not None:
        return redirect(home_url(user))
    return render_template("auth/register.html")


@bp.post("/register")
def register_post() -> ResponseReturnValue:
    form = request.form
    _same_passwords(form.get("password", ""), form.get("confirm", ""))
    # A language chosen with the picker before signing up goes with the account, so the
    # player reads it wherever they log in next: read from the cookie the pages read (over
    # HTTPS the host-bound one, which no sibling host or plain-HTTP page can set).
    chosen = request.cookies.get(cookie_name(COOKIE))
    user = accounts.register(
        get_session(),
        _typed_name(),
        form.get("password", ""),
        address=client_address(),
        locale=chosen if chosen in LANGUAGES else None,
    )
    log_in(user.id)
    # Left by its id: the lobby may be read in a language picked meanwhile.
    flash_words(
        N_("Welcome to the table, %(name)s! Your sign-up chips and sweets are in."),
        "ok",
        name=user.username,
    )
    return redirect(url_for("lobby.lobby"), code=303)


@bp.get("/login")
def login() -> ResponseReturnValue:
    user = session_user()
    if user is not None:
        return redirect(safe_next(request.args.get("next"), home_url(user)))
    return render_template("auth/login.html", next=request.args.get("next", ""))


@bp.post("/login")
def login_post() -> ResponseReturnValue:
    form = request.form
    # The session starts with the login's verdict, so a password change that comes meanwhile
    # ends it too.
    logged_in = accounts.authenticate(
        get_session(), _typed_name(), form.get("password", ""), address=client_address()
    )
    picked = session.get(PICKED)  # read before the fresh session replaces the cookie's
    set_browser_session(logged_in.token)
    user = logged_in.user
    # A language picked in the header before logging in is the player's latest choice: it
    # wins over the one stored, and is stored in its place.
    if picked in LANGUAGES:
        accounts.set_locale(get_session(), user.id, picked)
    return redirect(safe_next(form.get("next"), home_url(user)), code=303)


@bp.post("/logout")
def logout() -> ResponseReturnValue:
    log_out()
    flash_words(N_("You are logged out. See you at the tables!"), "ok")
    return redirect(url_for("lobby.index"), code=303)


@bp.get("/password")
@login_required
def password() -> ResponseReturnValue:
    return render_template("auth/password.html")


@bp.post("/password")
@login_required
def password_post() -> ResponseReturnValue:
    form = request.form
    _same_passwords(form.get("new", ""), form.get("confirm", ""))
    accounts.change_password(
        get_session(),
        g.user.id,
        form.get("old", ""),
        form.get("new", ""),
        address=client_address(),
    )
    # The change ended every session, this one too: start a fresh one for this browser.
    log_in(g.user.id)
    flash_words(N_("Password changed. Every other session and API token was logged out."), "ok")
    return redirect(home_url(g.user), code=303)
