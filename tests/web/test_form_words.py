"""Every refusal a page form can show is worded as the form words it, in the page's language:
no field's id (``reason``, ``client_seed``), no option's code (``chips``, ``credit``) and no
English left in a Finnish, Norwegian or Portuguese sentence. The JSON API keeps its field names
(its clients read those); these are the pages.

:data:`SENT` lists what is sent: each form's fields with each kind of bad value (missing, not
an option offered, far too long, a NUL character, not a number, out of range).
"""

from __future__ import annotations

import html
import re
from typing import Any
from typing import Final

import pytest
from flask import Flask
from flask.testing import FlaskClient
from operator_support import add_user
from operator_support import client_as
from operator_support import db
from web_support import PASSWORD
from web_support import post_form

from sota_casino.services import accounts

LONG: Final = "x" * 600
NUL: Final = "a\x00b"

#: Who sends it, how, where and what: ``(who, method, path, form)``; "{pat}" is a player's id,
#: "{approval}" another operator's pending proposal. A form sent with ``GET`` is a list page's
#: query.
SENT: Final[list[tuple[str, str, str, dict[str, Any]]]] = [
    # Player: sign-up, login, password.
    (
        "visitor",
        "POST",
        "/auth/register",
        {"username": NUL, "password": "x" * 12, "confirm": "x" * 12},
    ),
    (
        "visitor",
        "POST",
        "/auth/register",
        {"username": "ann", "password": NUL * 5, "confirm": NUL * 5},
    ),
    ("visitor", "POST", "/auth/login", {"username": NUL, "password": "x" * 12}),
    ("player", "POST", "/auth/password", {"old": "x" * 12, "new": NUL * 5, "confirm": NUL * 5}),
    # Casino War: bet and decision.
    ("player", "POST", "/casino-war/rounds", {"bet": "lots"}),
    ("player", "POST", "/casino-war/rounds", {"bet": "5", "tie_bet": "-1"}),
    ("player", "POST", "/casino-war/rounds/1/decision", {"choice": "fold"}),
    ("player", "POST", "/casino-war/rounds/1/decision", {}),
    # Sota: options and moves.
    ("player", "POST", "/sota/games", {"stake": "5", "preset": "custom", "seats": "7"}),
    ("player", "POST", "/sota/games", {"stake": "x", "preset": "custom", "seats": "2"}),
    (
        "player",
        "POST",
        "/sota/games",
        {"stake": "5", "preset": "custom", "seats": "2", "rule_war_down": "9"},
    ),
    ("player", "POST", "/sota/games/1/moves", {"move": "one"}),
    # Rotation and top-up.
    ("player", "POST", "/fairness/rotate", {"client_seed": NUL}),
    ("player", "POST", "/fairness/rotate", {"client_seed": LONG}),
    ("player", "POST", "/lobby/topup", {"currency": "gold"}),
    ("player", "POST", "/lobby/topup", {}),
    # Console: adjustments.
    (
        "operator",
        "POST",
        "/operator/players/{pat}/adjust/preview",
        {"direction": "credit", "currency": "chips", "amount": "5", "reason": NUL},
    ),
    (
        "operator",
        "POST",
        "/operator/players/{pat}/adjust/preview",
        {"direction": "credit", "currency": "chips", "amount": "5", "reason": LONG},
    ),
    (
        "operator",
        "POST",
        "/operator/players/{pat}/adjust/preview",
        {"direction": "credit", "currency": "chips", "amount": "5", "reason": ""},
    ),
    (
        "operator",
        "POST",
        "/operator/players/{pat}/adjust/preview",
        {"direction": "sideways", "currency": "chips", "amount": "5", "reason": "r"},
    ),
    (
        "operator",
        "POST",
        "/operator/players/{pat}/adjust/preview",
        {"direction": "credit", "currency": "gold", "amount": "5", "reason": "r"},
    ),
    (
        "operator",
        "POST",
        "/operator/players/{pat}/adjust",
        {"currency": "gold", "amount": "500", "reason": "r"},
    ),
    (
        "operator",
        "POST",
        "/operator/players/{pat}/adjust",
        {"currency": "chips", "amount": "500", "reason": NUL},
    ),
    (
        "operator",
        "POST",
        "/operator/players/{pat}/adjust",
        {"currency": "chips", "amount": "five", "reason": "r"},
    ),
    (
        "operator",
        "POST",
        "/operator/players/{pat}/adjust",
        {"currency": "chips", "amount": "500", "reason": "r", "once": "bad key!"},
    ),
    # Console: locks and roles.
    ("operator", "POST", "/operator/players/{pat}/adjust", {}),
    ("operator", "POST", "/operator/players/{pat}/lock", {"locked": "maybe"}),
    ("operator", "POST", "/operator/players/{pat}/role", {"role": "wizard"}),
    ("operator", "POST", "/operator/players/{pat}/role", {"role": NUL}),
    (
        "operator",
        "POST",
        "/operator/players/{pat}/role",
        {"role": "player", "idempotency_key": ["a" * 9, "b" * 9]},
    ),
    # Console: tables.
    (
        "operator",
        "POST",
        "/operator/tables/casino_war",
        {"min_bet": "x", "max_bet": "10", "decks": "6", "tie_payout": "10", "burn": "3"},
    ),
    (
        "operator",
        "POST",
        "/operator/tables/casino_war",
        {
            "min_bet": "1",
            "max_bet": "10",
            "decks": "6",
            "tie_payout": "10",
            "burn": "3",
            "bonus": "maybe",
        },
    ),
    # Console: alerts.
    (
        "operator",
        "POST",
        "/operator/alerts/rules",
        {"kind": "weather", "currency": "chips", "threshold": "5", "period_hours": "24"},
    ),
    (
        "operator",
        "POST",
        "/operator/alerts/rules",
        {"kind": "player_adjustments", "currency": "gold", "threshold": "5", "period_hours": "24"},
    ),
    (
        "operator",
        "POST",
        "/operator/alerts/rules",
        {"kind": "player_adjustments", "currency": "chips", "threshold": "5", "period_hours": "0"},
    ),
    (
        "operator",
        "POST",
        "/operator/alerts/rules",
        {"kind": "player_adjustments", "currency": "chips", "threshold": "5", "period_hours": "x"},
    ),
    # Console: approvals and time zone.
    ("operator", "POST", "/operator/approvals/{approval}/reject", {"note": NUL}),
    ("operator", "POST", "/operator/approvals/{approval}/approve", {"note": NUL}),
    ("operator", "POST", "/operator/me/time-zone", {"time_zone": "Mars/Base"}),
    ("operator", "POST", "/operator/me/time-zone", {"time_zone": NUL}),
    # Console: list pages' filters and queries.
    ("operator", "GET", "/operator/players", {"q": NUL}),
    ("operator", "GET", "/operator/audit", {"from_seq": "zzz"}),
    ("operator", "GET", "/operator/audit", {"actor": LONG}),
    ("operator", "GET", "/operator/audit", {"action": NUL}),
    ("operator", "GET", "/operator/audit", {"since": "yesterday"}),
    ("operator", "GET", "/operator/audit", {"order": "sideways"}),
    ("operator", "GET", "/operator/approvals", {"status": "lost"}),
]

FLASHED = re.compile(r'<p class="flash error"[^>]*>(.*?)</p>', re.S)
ERROR_PAGE = re.compile(r'<p class="lead">(.*?)</p>', re.S)


def shown_refusal(client: FlaskClient, answer: Any) -> str | None:
    """The refusal the page shows: flashed on the page gone back to, or on the answer."""
    if answer.status_code in (302, 303):
        answer = client.get(answer.headers["Location"], follow_redirects=True)
    page = answer.get_data(as_text=True)
    found = FLASHED.search(page) or (ERROR_PAGE.search(page) if answer.status_code >= 400 else None)
    return html.unescape(found.group(1)).strip() if found else None


def _proposal(app: Flask, user_id: int) -> int:
    """Another operator's pending proposal (making ``user_id`` an operator): its id."""
    session = db(app)
    try:
        proposer = accounts.create_operator(session, "ola", PASSWORD, role="operator").id
        done = accounts.request_role_change(session, proposer, user_id, "operator")
    finally:
        session.close()
    assert done.approval is not None
    return done.approval.id


#: What no shown refusal may say: a field's id or an option's code (as sent above), or English.
RAW: Final = re.compile(
    r"\b(?:username|password|choice|war|surrender|currency|chips|sweets|client_seed|reason|"
    r"direction|credit|debit|amount|locked|role|player|operator|auditor|min_bet|none, ante|"
    r"by_rank|kind|large_win|player_adjustments|period_hours|time_zone|q|from_seq|actor|status|"
    r"pending|approved|rejected|since|order|newest|oldest|Idempotency-Key)\b"
    r"|\b(?:must|should|choose|is not|the form|filter)\b",
    re.I,
)


@pytest.mark.parametrize("language", ["fi", "nb", "pt"])
@pytest.mark.parametrize(("who", "method", "path", "form"), SENT)
def test_a_refused_page_form_names_no_field_id_option_code_or_english(
    app: Flask, language: str, who: str, method: str, path: str, form: dict[str, Any]
) -> None:
    pat = add_user(app, "pat")
    user = {"visitor": None, "player": add_user(app, "pia")}.get(who)
    client = client_as(app, add_user(app, "olli", role="operator") if who == "operator" else user)
    post_form(client, "/language", {"locale": language, "next": "/"})
    url = path.format(pat=pat, approval=_proposal(app, pat) if "{approval}" in path else 0)
    if method == "GET":
        answer = client.get(url, query_string=form)
    else:
        answer = post_form(client, url, form)
    shown = shown_refusal(client, answer)
    assert shown, (answer.status_code, url)
    assert not RAW.search(shown), shown
