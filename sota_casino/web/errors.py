"""The one place where refusals become HTTP: JSON under ``/api/``, pages everywhere else.

A :class:`~sota_casino.core.errors.CasinoError` keeps its own status and code. On a page, a
refused form (a POST) flashes the message and sends the player back to the page the form was
on; a refused page load, or a form about something that is not there (404: another player's
round looks exactly like no round), shows the friendly error page with its status. Werkzeug's
HTTP errors (404, 405, 413, 400) get the same two shapes, and anything unexpected (Flask logs
it) is answered with a plain 500 that leaks nothing. A database that cannot be reached is a 503
``unavailable`` (a friendly page on the pages), never a 500: a client can tell an outage from a
bug. A 429 and a 503 say when to retry (``Retry-After``).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated
from typing import Any
from typing import Final
from typing import NotRequired
from typing import TypeVar
from typing import cast
from urllib.parse import urlsplit

from flask import Flask
from flask import current_app
from flask import g
from flask import jsonify
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for
from flask.globals import request_ctx
from flask.typing import ResponseReturnValue
from pydantic import Field
from sqlalchemy.exc import DBAPIError
from typing_extensions import TypedDict
from werkzeug.exceptions import HTTPException
from werkzeug.exceptions import InternalServerError
from werkzeug.exceptions import SecurityError
from werkzeug.wrappers import Response

from ..core import errors as kinds
from ..core.errors import CasinoError
from ..core.marks import N_
from ..services.results import Checkpoint
from ..services.results import LatestCheckpoint
from ..services.results import to_json
from ..services.tx import is_outage
from ..services.tx import unavailable
from .i18n import error_message
from .i18n import flash_phrase
from .i18n import gettext
from .i18n import refusal_phrase
from .paths import is_local_path
from .paths import wants_json

#: Stable codes for the HTTP errors Werkzeug raises, as API clients see them.
HTTP_CODES: dict[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    414: "uri_too_long",
    415: "unsupported_media_type",
    422: "invalid_input",
    429: "rate_limited",
    431: "header_fields_too_large",
    500: "internal_error",
    503: "unavailable",
}

#: What a player reads on the error page, in plain words.
FRIENDLY: dict[int, tuple[str, str]] = {
    400: (
        N_("That request did not make sense"),
        N_("Something in the request was missing or garbled."),
    ),
    401: (N_("Please log in"), N_("You need to be logged in to see this page.")),
    403: (N_("Not allowed"), N_("Your account may not do this.")),
    404: (N_("Nothing here"), N_("There is no such page, or it belongs to someone else.")),
    405: (N_("Not like that"), N_("This page cannot be used with that kind of request.")),
    409: (N_("Not right now"), N_("The table is not in a state that allows this.")),
    413: (N_("Too much"), N_("The request was larger than the casino accepts.")),
    422: (N_("Please check what you entered"), N_("Some of the values were not valid.")),
    429: (N_("Slow down"), N_("Too many attempts. Wait a few minutes and try again.")),
    500: (
        N_("The dealer dropped the cards"),
        N_("Something went wrong on our side. Please try again."),
    ),
    503: (
        N_("The tables are closed for a moment"),
        N_("We cannot reach our records right now. Please try again in a minute."),
    ),
}

#: The refusals' own default messages (their docstrings, which the extractor cannot read),
#: marked here so a refusal raised without a message is translated too.
REFUSAL_DEFAULTS: Final = (
    N_("The request is not valid."),
    N_("A rule option or its value is unknown or out of range."),
    N_("The amount is not a valid bet at this table."),
    N_("With a key registered, every bet, decision and move must carry the player's signature."),
    N_("The signature is not the registered key's over this bet's or action's document."),
    N_("This Idempotency-Key was already used with another request body."),
    N_("This step is not allowed in the round's present state."),
    N_("The round is not waiting for a decision."),
    N_("The game is not waiting for that move."),
    N_("The round is already settled."),
    N_("The balance does not cover this amount."),
    N_("No such thing, or it is not yours."),
    N_("You may not do this."),
    N_("Staff accounts do not play: they cannot bet, top up or register a player's key."),
    N_("This account is locked; contact the casino."),
    N_("Log in first, or the credentials are wrong."),
    N_("Not now; try again after the seconds given."),
    N_("Too many attempts; wait a little and try again."),
    N_("The request conflicts with the present state."),
    N_("The bet names a seed pair and nonce that are not the next to deal; sign it again."),
    N_("A round of this seed pair is still open; finish it first."),
    N_("The table's rules are not those the bet was sent under; look at them again."),
    N_("Not in a signed checkpoint yet; ask again after the seconds given."),
    N_("This change needs a second operator's approval: propose it instead."),
    N_("The same change is proposed already and waits for a second operator."),
    N_("An operator may not approve or reject a change they proposed."),
    N_("Whoever proposed this change is no operator now: it cannot be approved."),
    N_("A top-up is given only when the balance is low, at most once a day."),
    N_("That username is taken."),
    N_("A fairness check failed."),
    N_("The casino cannot reach its records right now; try again shortly."),
)

#: Short API messages for Werkzeug's errors that carry only their long default text.
API_MESSAGES: dict[int, str] = {
    400: N_("the request is malformed"),
    404: N_("no such endpoint or resource"),
    405: N_("this method is not allowed on this endpoint"),
    413: N_("the request body is too large"),
    414: N_("the request line (method and URL) is too long"),
    415: N_("send the body as JSON"),
    431: N_("a request header, or their number, is too large"),
}

#: What answers a ``Host`` outside ``TRUSTED_HOSTS`` (Werkzeug's own text repeats the host).
UNTRUSTED_HOST: Final = N_("The casino does not answer on the address this request was sent to.")


#: The HTTP status of each kind of refusal; a kind not listed takes its nearest base's.
STATUS_OF_KIND: dict[type[CasinoError], int] = {
    CasinoError: 400,
    kinds.InvalidInput: 422,
    kinds.InvalidAction: 409,
    kinds.InsufficientFunds: 409,
    kinds.Conflict: 409,
    kinds.NotFound: 404,
    kinds.Forbidden: 403,
    kinds.Unauthorized: 401,
    kinds.RateLimited: 429,
    kinds.Unavailable: 503,
}


def status_of(error: CasinoError) -> int:
    """Return the HTTP status of a refusal, from its kind."""
    return status_of_kind(type(error))


def status_of_kind(kind: type[CasinoError]) -> int:
    """Return the HTTP status of a kind of refusal: its own, or its nearest base's."""
    return next(STATUS_OF_KIND[k] for k in kind.__mro__ if k in STATUS_OF_KIND)


class ErrorDetail(TypedDict):
    code: Annotated[str, Field(examples=["insufficient_funds"])]
    message: str
    field: NotRequired[
        Annotated[
            str,
            Field(
                description=(
                    "the request's field the refusal is about, where it is about one; a field "
                    "inside an object is named by its path (rules.teams)"
                ),
                examples=["bet", "rules.teams"],
            ),
        ]
    ]


@dataclass(frozen=True, slots=True)
class Error:
    """The API's error body."""

    error: ErrorDetail


@dataclass(frozen=True, slots=True)
class NotYetAnchoredError:
    """The API's refusal of a proof not in a signed checkpoint yet (409 ``not_yet_anchored``):
    the error, and the latest signed checkpoint (``null`` before the first), by which a player
    holds a round still pending to the scheme's bound (docs/fairness.md, "The bound")."""

    error: ErrorDetail
    checkpoint: LatestCheckpoint


def api_error(
    status: int, code: str, message: str, *, field: object = None, **headers: str
) -> ResponseReturnValue:
    """Return the API's error body ``{"error": {"code", "message"}}`` with ``status``, and the
    ``field`` it is about if one is named."""
    return _error_body(status, Error(_detail(code, message, field)), headers)


def _detail(code: str, message: str, field: object) -> ErrorDetail:
    detail = ErrorDetail(code=code, message=message)
    if isinstance(field, str) and field:
        detail["field"] = field
    return detail


def _error_body(status: int, body: Any, headers: dict[str, str]) -> ResponseReturnValue:
    response = jsonify(to_json(body))
    response.status_code = status
    response.headers.update(headers)
    return response


def error_page(status: int, message: str | None = None) -> ResponseReturnValue:
    """Render the friendly error page for ``status``."""
    return _page(status, message), status


def refusal_page(error: CasinoError) -> ResponseReturnValue:
    """Render the friendly error page of a refusal, with its headers (when to retry)."""
    status = status_of(error)
    return _page(status, error_message(error)), status, refusal_headers(error)


def _page(status: int, message: str | None) -> str:
    title, default = FRIENDLY.get(status, FRIENDLY[400 if status < 500 else 500])
    no_database: dict[str, Any] = {}
    if status >= 500:
        # The page must not ask the database who is logged in, nor a player's balances for
        # the header: it may be what failed, and the 503 would become a 500.
        g.setdefault("session_user", None)
        no_database["header_balances"] = _no_balances
    return render_template(
        "errors/error.html",
        status=status,
        title=gettext(title),
        message=message or gettext(default),
        **no_database,
    )


def _no_balances() -> None:
    """The header's balances on a page that may not read the database: none shown."""
    return None


def back_url() -> str:
    """Return where a refused form sends the player: the page it came from, on this site."""
    referrer = request.referrer
    if referrer:
        parts = urlsplit(referrer)
        back = parts.path + (f"?{parts.query}" if parts.query else "")
        if parts.netloc == request.host and is_local_path(back):
            return back
    return url_for("lobby.index")


#: What ``invalid_attrs`` (``_macros.html``) is given to mark every field of a refused form.
EVERY_FIELD: Final = "*"
#: Refusals of what was typed: wrong credentials or an amount over the balance are about every
#: field when they name none. Others (too many attempts, an outage, a locked account, a round
#: still open) are about none: the form was right.
ABOUT_WHAT_WAS_TYPED: Final = (kinds.InvalidInput, kinds.Unauthorized, kinds.InsufficientFunds)


def invalid_fields(error: CasinoError) -> str | None:
    """Return which fields of a refused form to mark invalid: the one the refusal names,
    :data:`EVERY_FIELD`, or None for a refusal about none of them."""
    field = error.details.get("field")
    if isinstance(field, str) and field:
        return field
    return EVERY_FIELD if isinstance(error, ABOUT_WHAT_WAS_TYPED) else None


def refusal_headers(error: CasinoError) -> dict[str, str]:
    """Return the headers that go with a refusal: how to authenticate, or when to retry."""
    if status_of(error) == 401 and wants_json():
        return {"WWW-Authenticate": "Bearer"}
    if isinstance(error, kinds.RetryLater):
        return {"Retry-After": str(error.retry_after)}
    return {}


ErrorT = TypeVar("ErrorT", bound=Exception)


def drawn_in_an_outage(
    handler: Callable[[ErrorT], ResponseReturnValue],
) -> Callable[[ErrorT], ResponseReturnValue]:
    """Make an error handler whose answer reads the database (the header of a logged-in
    player, a form shown again beside its refusal) answer an outage it meets meanwhile as
    every request does, 503 with ``Retry-After``: raised from a handler, it would become a 500.
    The database can go away between the read that refused and the page that says so."""

    @functools.wraps(handler)
    def answer(error: ErrorT) -> ResponseReturnValue:
        try:
            return handler(error)
        except kinds.Unavailable as outage:
            return _outage_answer(outage)
        except DBAPIError as failure:
            if not is_outage(failure):
                raise
            return _outage_answer(unavailable(failure))

    return answer


def _outage_answer(outage: kinds.Unavailable) -> ResponseReturnValue:
    """Answer an outage met while answering something else; this reads nothing (:func:`_page`)."""
    if wants_json():
        return api_error(503, outage.code, error_message(outage), **refusal_headers(outage))
    return refusal_page(outage)


@drawn_in_an_outage
def handle_casino_error(error: CasinoError) -> ResponseReturnValue:
    """Answer a refusal from the services with its own status and code."""
    if wants_json():
        message = error_message(error)
        if isinstance(error, kinds.NotYetAnchored) and "checkpoint" in error.details:
            signed = cast(Checkpoint | None, error.details["checkpoint"])
            body = NotYetAnchoredError(_detail(error.code, message, None), signed)
            return _error_body(status_of(error), body, refusal_headers(error))
        field = error.details.get("field")
        return api_error(
            status_of(error), error.code, message, field=field, **refusal_headers(error)
        )
    status = status_of(error)
    if request.method == "POST" and status < 500 and status != 404:
        # Shown as a refusal (base.html's data-refusal): the browser's records keep no
        # decision or move a form sent and this page answers.
        # Left by its ids: the page it goes back to may be read in another language.
        flash_phrase(refusal_phrase(error), "error")
        return redirect(back_url(), code=303)
    # A form about something that is not there (or not yours) has no page to go back to, and
    # during an outage the page it came from cannot be shown either.
    return refusal_page(error)


@drawn_in_an_outage
def handle_http_error(error: HTTPException) -> ResponseReturnValue:
    """Answer Werkzeug's HTTP errors (404, 405, 413, 400, ...) in the request's format."""
    status = error.code or 500
    if status >= 500:
        return handle_unexpected(error)
    headers: dict[str, Any] = {}
    allowed = getattr(error, "valid_methods", None)  # only MethodNotAllowed carries it
    if status == 405 and allowed:
        headers["Allow"] = ", ".join(allowed)
    if wants_json():
        message = _page_message(error) or API_MESSAGES.get(status) or FRIENDLY[400][1]
        return api_error(status, HTTP_CODES.get(status, "error"), gettext(message), **headers)
    if request_ctx.url_adapter is None:
        return _plain_page(status, _page_message(error)), status, headers
    return _page(status, _page_message(error)), status, headers


def _plain_page(status: int, message: str | None) -> Response:
    """Answer in plain text, for a request no URL can be built for (a ``Host`` header that is
    no host name, or not one of ``TRUSTED_HOSTS``): the error page links to the stylesheet and
    the lobby, and could not (nor would they work on that host)."""
    title, default = FRIENDLY.get(status, FRIENDLY[400])
    text = message or gettext(default)
    return Response(f"{gettext(title)}\n\n{text}\n", mimetype="text/plain")


def _page_message(error: HTTPException) -> str | None:
    """Keep our own descriptions (set with ``abort(400, "...")``), not Werkzeug's defaults."""
    if isinstance(error, SecurityError):  # only an untrusted Host raises it
        return gettext(UNTRUSTED_HOST)
    default = type(error).description
    # Ours are marked for the catalogues (``N_``) and translated by that id.
    if error.description == default or not error.description:
        return None
    return gettext(error.description)


def handle_unexpected(error: Exception) -> ResponseReturnValue:
    """Answer a plain 500 that leaks nothing (Flask has logged the bug already)."""
    if wants_json():
        return api_error(500, "internal_error", gettext(N_("something went wrong on our side")))
    return error_page(500)


def handle_database_error(error: DBAPIError) -> ResponseReturnValue:
    """Answer a database error that escaped the services: an outage is a 503, anything else
    is a bug (logged, then the plain 500)."""
    if is_outage(error):
        return handle_casino_error(unavailable(error))
    current_app.log_exception(sys.exc_info())  # the error being handled
    return handle_unexpected(error)


def init_app(app: Flask) -> None:
    """Register the error handlers on ``app``."""
    app.register_error_handler(CasinoError, handle_casino_error)
    app.register_error_handler(DBAPIError, handle_database_error)
    app.register_error_handler(HTTPException, handle_http_error)
    app.register_error_handler(InternalServerError, handle_unexpected)
