"""Refusals of a page form worded as the form words its fields.

The services and the input checks name a field by its id and list option codes
(``reason must not contain a NUL character``, ``currency must be one of: chips, sweets``), as
the JSON API's clients read them. A page's reader sees labels and option words instead, so on
the pages such a refusal is said again with the field's label (the very message id its
template shows), and a field the reader never typed in (a hidden one, a button) is a garbled
form. :func:`~.i18n.error_message` asks here for every page's refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..core.errors import CasinoError
from ..core.errors import InvalidInput
from ..core.marks import N_
from ..services import text

#: A field of the form the reader did not fill in: hidden, or a button's value.
HIDDEN: Final = ""

#: Each page form's fields as its template labels them (the same message ids), by endpoint.
FORM_LABELS: Final[Mapping[str, Mapping[str, str]]] = {
    "auth.login_post": {"username": N_("Username"), "password": N_("Password")},
    "auth.register_post": {"username": N_("Username"), "password": N_("Password")},
    "auth.password_post": {"password": N_("New password")},
    "casino_war.decision": {"choice": HIDDEN},
    "lobby.topup": {"currency": HIDDEN},
    "fairness.rotate": {"client_seed": N_("New client seed")},
    "operator.adjust_preview": {
        "amount": N_("Amount"),
        "currency": N_("Currency"),
        "reason": N_("Reason (required, kept in the audit log)"),
    },
    # The confirmation sends again, hidden, what the preview showed.
    "operator.adjust": {
        "amount": HIDDEN,
        "currency": HIDDEN,
        "reason": HIDDEN,
        "Idempotency-Key": HIDDEN,
    },
    "operator.lock": {"locked": HIDDEN},
    "operator.role": {"role": N_("Role"), "Idempotency-Key": HIDDEN},
    "operator.reject": {"note": N_("Note"), "Idempotency-Key": HIDDEN},
    "operator.approve": {"note": N_("Note"), "Idempotency-Key": HIDDEN},
    "operator.create_rule": {
        "kind": N_("Raise an alert on"),
        "currency": N_("Above (chips or sweets)"),
        "period_hours": N_("Period (hours)"),
    },
    "operator.set_time_zone": {"time_zone": N_("Show times in")},
    # The approvals' tabs are links: a status none of them gives was made by hand.
    "operator.approvals_page": {"status": HIDDEN},
    "operator.players": {
        "q": N_("Name contains"),
        "since": N_("Since (UTC)"),
        "until": N_("Until (UTC)"),
    },
    "operator.player_list": {"since": N_("Since (UTC)"), "until": N_("Until (UTC)")},
    "operator.audit_log": {
        "action": N_("Action (prefix)"),
        "actor": N_("Actor"),
        "subject": N_("Subject"),
        "since": N_("Since (UTC)"),
        "until": N_("Until (UTC)"),
        "text": N_("Text"),
        "from_seq": N_("Go to entry #"),
        "order": HIDDEN,
    },
}

GARBLED: Final = N_("The form is garbled: load the page again and make the change there.")
CHOOSE_OFFERED: Final = N_("Choose one of the options offered for “%(label)s”.")
#: A field sent twice (``inputs.refuse_repeated_fields``), named by its label here.
REPEATED: Final = N_(
    "“%(label)s” was sent more than once, so which was meant cannot be told: "
    "send the form with it once."
)
#: The refusals of a value that is none of the options a form offers: the reader sees the
#: options' words, never their codes, so a page asks to choose one of them.
NOT_AN_OPTION: Final = frozenset(
    {
        N_("%(option)s must be one of: %(valid)s"),
        N_("%(option)s must be one of: %(valid)s (got %(value)s)"),
        N_("currency must be one of: %(currencies)s"),
        N_("kind must be one of: %(kinds)s"),
        N_("status must be one of: %(statuses)s"),
    }
)

#: The refusals said again with the field's label: by their message id, the page's message id.
IN_THE_FORMS_WORDS: Final[Mapping[str, str]] = {
    **dict.fromkeys(NOT_AN_OPTION, CHOOSE_OFFERED),
    text.NUL_IN["field"]: N_("“%(label)s” must not contain a NUL character."),
    text.NOT_UNICODE["field"]: N_("“%(label)s” is not valid text."),
    N_("period_hours must be from 1 to %(max)s"): N_(
        "“%(label)s” must be a whole number from 1 to %(max)s."
    ),
    N_("the %(name)s filter is too long"): N_("The filter “%(label)s” is too long."),
    N_("%(option)s must be a whole number from %(low)s to %(high)s"): N_(
        "“%(label)s” must be a whole number from %(low)s to %(high)s."
    ),
    N_("%(option)s must be an ISO 8601 time or date"): N_(
        "“%(label)s” must be a date and time, like 2026-05-31T18:00."
    ),
    REPEATED: REPEATED,
}


def in_the_forms_words(error: CasinoError, endpoint: str) -> tuple[str, str] | None:
    """Return how the page form of ``endpoint`` says ``error``: a message id and the label's
    message id (its ``%(label)s``); None for a refusal it says as it is."""
    field = error.details.get("field")
    labels = FORM_LABELS.get(endpoint, {})
    if not isinstance(error, InvalidInput) or not isinstance(field, str) or field not in labels:
        return None
    label = labels[field]
    if label == HIDDEN:
        return GARBLED, ""
    worded = IN_THE_FORMS_WORDS.get(error.template)
    return (worded, label) if worded is not None else None
