"""Every page answers any query string without a server error, for every role.

The API's query strings are checked against its document by schemathesis; the pages read theirs
by hand (cursors, filters, times, formats), so here each page the URL map has is asked with
query strings drawn from the names the pages read and from values that broke services before:
ids at the integer's edge, times before year 1000 or out of every year once in UTC, NUL and
lone surrogates, huge and negative numbers. Any answer but a 5xx is the page's to choose.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import pytest
from flask import Flask
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from operator_support import CSRF
from operator_support import add_user
from operator_support import client_as

from sota_casino.services.results import MAX_ID
from sota_casino.web.schemas import AUDIT_FILTER_MAX
from sota_casino.web.schemas import NAME_FILTER_MAX

#: The names the pages read from their query strings.
NAMES = (
    "after_seq",
    "before_seq",
    "from_seq",
    "to_seq",
    "from_id",
    "cursor",
    "before",
    "rounds_before",
    "transfers_before",
    "audit_before",
    "limit",
    "order",
    "since",
    "until",
    "text",
    "action",
    "actor",
    "subject",
    "q",
    "status",
    "game",
    "format",
    "download",
    "open",
    "next",
)
VALUES = (
    "",
    "0",
    "1",
    "-1",
    str(MAX_ID),
    str(MAX_ID - 1),
    str(MAX_ID + 1),
    "9" * 40,
    "1.0",
    "1e3",
    "oldest",
    "newest",
    "csv",
    "jsonl",
    "sota",
    "casino_war",
    "pending",
    "0913-12-02T01:06:00.0Z",
    "0001-01-01T00:00:00+18:00",
    "9999-12-31T23:00:00-05:00",
    "2026-02-30",
    "yesterday",
    "²",  # a digit to str.isdigit, not to int()
    "٣",  # a digit to both
    "a\x00b",
    "\ud800",
    "%",
    "_",
    "user:1",
    "//evil.example",
    "é" * 300,
)
EXAMPLES_PER_PAGE = 4
#: Hypothesis's settings for each page: a few examples, no deadline, nothing kept between runs.
PER_PAGE = settings(
    max_examples=EXAMPLES_PER_PAGE,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
queries = st.dictionaries(
    st.sampled_from(NAMES), st.sampled_from(VALUES) | st.text(max_size=12), max_size=4
)


def routes(app: Flask, method: str, skipped: tuple[str, ...]) -> list[str]:
    """Every path the app takes ``method`` on, but those starting with one of ``skipped``, its
    ids filled with 1."""
    found = set()
    for rule in app.url_map.iter_rules():
        if method not in (rule.methods or ()) or rule.rule.startswith(skipped):
            continue
        found.add(re.sub(r"<(?:\w+:)?(\w+)>", "1", rule.rule))
    return sorted(found)


def pages(app: Flask) -> list[str]:
    """Every page the app serves by GET (the API apart), its ids filled with 1."""
    return routes(app, "GET", ("/api/", "/static/"))


@pytest.mark.parametrize("role", ["player", "auditor", "operator"])
def test_no_query_string_makes_a_page_fail(app: Flask, role: str) -> None:
    user = add_user(app, f"q{role}", role)
    add_user(app, "qsomeone")  # user 1 or 2: a player the operator's pages can show
    client = client_as(app, user)
    failed: list[str] = []

    @PER_PAGE
    @given(query=queries)
    def ask(page: str, query: dict[str, Any]) -> None:
        url = f"{page}?{urlencode(query, errors='surrogatepass')}"
        status = client.get(url).status_code
        if status >= 500:
            failed.append(f"{status} {url}")

    for page in pages(app):
        ask(page)
    assert failed == []


#: The fields the pages' forms send.
FIELDS = (
    "again",
    "amount",
    "bet",
    "bonus",
    "burn",
    "chips_to",
    "choice",
    "client_seed",
    "confirm",
    "currency",
    "custom_rules",
    "decks",
    "direction",
    "down",
    "drawn",
    "enabled",
    "idempotency_key",
    "kind",
    "locale",
    "locked",
    "max_bet",
    "max_stake",
    "min_bet",
    "min_stake",
    "move",
    "new",
    "next",
    "note",
    "old",
    "once",
    "password",
    "period_hours",
    "preset",
    "presets",
    "reason",
    "role",
    "rules",
    "seats",
    "stake",
    "threshold",
    "tie_bet",
    "tie_payout",
    "time_zone",
    "up",
    "username",
    "rule_prisoners_of_war",
    "rule_max_tricks",
)
FORM_VALUES = (
    *VALUES,
    "5",
    "25",
    "−5",
    "1,000",
    "5.5",
    "on",
    "war",
    "surrender",
    "chips",
    "sweets",
    "operator",
    "auditor",
    "player",
    "fi",
    "Europe/Helsinki",
    "classic",
    "abcdefgh12",
    "{}",
    "[]",
    '{"decks": 6, "tie_payout": 10}',
    "[" * 20_000,  # JSON nested past the parser's depth (the table form's drawn field: a 500)
    '{"a":' * 5_000,
)
forms = st.dictionaries(
    st.sampled_from(FIELDS), st.sampled_from(FORM_VALUES) | st.text(max_size=12), max_size=6
)


def form_pages(app: Flask) -> list[str]:
    """Every page form the app takes by POST, its ids filled with 1."""
    return routes(app, "POST", ("/api/",))


@pytest.mark.parametrize("role", ["player", "auditor", "operator"])
def test_no_form_makes_a_page_fail(app: Flask, role: str) -> None:
    """As above, for the forms: each sent with the session's CSRF token and fields drawn from
    those the forms read, on a fresh login each (a form may log out or lock the account)."""
    add_user(app, "fsomeone")  # user 1: a player the operator's forms can act on
    user = add_user(app, f"f{role}", role)
    failed: list[str] = []

    @PER_PAGE
    @given(form=forms)
    def send(page: str, form: dict[str, Any]) -> None:
        body = urlencode({"csrf_token": CSRF, **form}, errors="surrogatepass")
        answer = client_as(app, user).post(
            page, data=body, content_type="application/x-www-form-urlencoded"
        )
        if answer.status_code >= 500:
            failed.append(f"{answer.status_code} {page} {form!r}")

    for page in form_pages(app):
        send(page)
    assert failed == []


#: A console list's text parameters, with the longest its API takes (web/schemas.py) and how
#: the refusal names them: by the label of the page's form, or (a download) as the API does.
TEXTS = [
    ("/operator/players", "q", NAME_FILTER_MAX, "The filter “Name contains” is too long."),
    ("/operator/players/export", "q", NAME_FILTER_MAX, "the q filter is too long"),
    ("/operator/players", "since", AUDIT_FILTER_MAX, "The filter “Since (UTC)” is too long."),
    (
        "/operator/players/1/lists/transfers",
        "until",
        AUDIT_FILTER_MAX,
        "The filter “Until (UTC)” is too long.",
    ),
    ("/operator/players/1/lists/rounds/export", "since", AUDIT_FILTER_MAX, None),
    ("/operator/audit/range-export", "since", AUDIT_FILTER_MAX, None),
]


@pytest.mark.parametrize(("page", "name", "most", "said"), TEXTS, ids=lambda x: str(x))
def test_a_console_lists_text_over_its_limit_is_refused_naming_it(
    app: Flask, page: str, name: str, most: int, said: str | None
) -> None:
    """A text longer than the API takes was cut to 64 characters on the pages, and the cut
    text searched for or read as a time: the page answered for what was not asked. It is
    refused as the API refuses it, naming the parameter; at the limit it is read."""
    add_user(app, "listed")
    client = client_as(app, add_user(app, "lister", "operator"))
    over = client.get(f"{page}?{urlencode({name: 'x' * (most + 1)})}")
    assert over.status_code == 422, over.status_code
    assert (said or f"the {name} filter is too long") in over.get_data(as_text=True)
    within = client.get(f"{page}?{urlencode({name: ' ' * 5 + 'x' * most})}")
    assert within.status_code != 500
    assert "too long" not in within.get_data(as_text=True)
