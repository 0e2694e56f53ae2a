"""A message a page leaves for the next one (a flash) reads in the language of the page that
shows it: the player may pick another language before that page is drawn.

Each kind of message is left in one language and read in another, and must read as it does
when left and read in the language it is read in; the messages that were left as text read in
the language of the request that left them.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any
from typing import Final

import pytest
from flask import Flask
from flask import g
from flask.testing import FlaskClient
from operator_support import CSRF
from operator_support import add_user
from operator_support import client_as
from web_support import PASSWORD
from web_support import post_form

import sota_casino.web
from sota_casino.core import casino_war
from sota_casino.core import sota
from sota_casino.core.errors import CasinoError
from sota_casino.web.format import when
from sota_casino.web.i18n import gettext
from sota_casino.web.i18n import phrase
from sota_casino.web.i18n import phrase_text
from sota_casino.web.i18n import refusal_phrase
from sota_casino.web.operator import _table_refusal as table_refusal
from sota_casino.web.operator import parse_adjustment_amount
from sota_casino.web.security import CSRF_KEY

FLASH: Final = re.compile(r'<p class="flash (\w+)" role="status"[^>]*>(.*?)</p>', re.S)
HTML_LANG: Final = re.compile(r'<html lang="([a-z]+)">')
_names = itertools.count()

#: A case: who leaves the message (a visitor, a player or an operator) and what they do to
#: leave it (the answer sends them to the page that shows it).
Leave = Callable[[FlaskClient, int], Any]


def _rule(client: FlaskClient, _user: int) -> Any:
    form = {"kind": "player_adjustments", "currency": "chips", "threshold": "1250"}
    return post_form(client, "/operator/alerts/rules", {**form, "period_hours": "24"})


def _rule_off(client: FlaskClient, user: int) -> Any:
    _rule(client, user)
    client.get("/operator/alerts")  # the page that shows the rule's message: read
    return post_form(client, "/operator/alerts/rules/1/enabled", {"enabled": "0"})


def _lock(client: FlaskClient, _user: int) -> Any:
    return post_form(client, f"/operator/players/{_player(client)}/lock", {"locked": "1"})


def _role(client: FlaskClient, _user: int) -> Any:
    return post_form(client, f"/operator/players/{_player(client)}/role", {"role": "auditor"})


def _sota_rules(client: FlaskClient, form: dict[str, str]) -> Any:
    headers = {"Referer": "http://localhost/sota"}
    return post_form(client, "/sota/games", {"stake": "5", **form}, headers=headers)


def _player(client: FlaskClient) -> int:
    app: Flask = client.application
    return add_user(app, f"pat{next(_names)}")


CASES: Final[dict[str, tuple[str, Leave]]] = {
    "log in first": ("visitor", lambda client, _user: client.get("/history")),
    "logged out": ("player", lambda client, _user: post_form(client, "/auth/logout")),
    "password changed": (
        "player",
        lambda client, _user: post_form(
            client,
            "/auth/password",
            {"old": PASSWORD, "new": "another pass 123", "confirm": "another pass 123"},
        ),
    ),
    # A refusal flashed by the errors' handler, its label, unit and example words themselves.
    "refused stake": (
        "player",
        lambda client, _user: post_form(
            client, "/sota/games", {"stake": "abc"}, headers={"Referer": "http://localhost/sota"}
        ),
    ),
    "refused seed": (
        "player",
        lambda client, _user: post_form(client, "/fairness/rotate", {"client_seed": "x" * 300}),
    ),
    # Refusals with amounts the page writes: money, as the language writes it.
    "top-up refused": (
        "player",
        lambda client, _user: post_form(client, "/lobby/topup", {"currency": "chips"}),
    ),
    # A refused rule set, its option named on the form and the presets the table offers
    # named in words (the engine names them by their codes).
    "refused rule option": (
        "player",
        lambda client, _user: _sota_rules(client, {"preset": "custom", "rule_teams": "on"}),
    ),
    "refused rule value": (
        "player",
        lambda client, _user: _sota_rules(client, {"preset": "custom", "rule_deck": "tarot"}),
    ),
    "refused preset": (
        "player",
        lambda client, _user: _sota_rules(client, {"preset": "klondike"}),
    ),
    "seed revealed": (
        "player",
        lambda client, _user: post_form(client, "/fairness/rotate", {"client_seed": "mine"}),
    ),
    "checkpoint": (
        "operator",
        lambda client, _user: post_form(client, "/operator/audit/checkpoint"),
    ),
    "check asked": ("operator", lambda client, _user: post_form(client, "/operator/checks/audit")),
    "locked": ("operator", _lock),
    "role": ("operator", _role),
    # Its description a phrase of its own, with an amount in chips and a count of hours.
    "rule added": ("operator", _rule),
    "rule off": ("operator", _rule_off),
    "time zone": (
        "operator",
        lambda client, _user: post_form(
            client, "/operator/me/time-zone", {"time_zone": "Europe/Helsinki"}
        ),
    ),
}


def shown(app: Flask, case: str, left_in: str, read_in: str) -> list[str]:
    """Leave the case's message with the page in ``left_in``, pick ``read_in``, and return the
    messages the next page shows (names, seeds and digits made alike)."""
    who, leave = CASES[case]
    name = f"aino{next(_names)}"
    user = add_user(app, name, who) if who != "visitor" else None
    client = client_as(app, user)
    post_form(client, "/language", {"locale": left_in, "next": "/"})
    answer = leave(client, user or 0)
    assert answer.status_code == 303, answer.get_data(as_text=True)
    with client.session_transaction() as cookie:
        # Logging out starts a new session: the picker's form carries its token, as a page's.
        cookie.setdefault(CSRF_KEY, CSRF)
    post_form(client, "/language", {"locale": read_in, "next": answer.location})
    page = client.get(answer.location, follow_redirects=True).get_data(as_text=True)
    lang = HTML_LANG.search(page)
    assert lang is not None and lang.group(1) == read_in
    found = [html.unescape(text) for _category, text in FLASH.findall(page)]
    assert found, f"{case}: no message shown"
    alike = [re.sub(r"\b(?:aino|pat)\d+\b", "NAME", text) for text in found]
    alike = [re.sub(r"\b[0-9a-f]{64}\b", "SEED", text) for text in alike]
    # Numbers of things made since (entries, ids) differ; how they are written stays.
    return [re.sub(r"[0-9]+", "N", text) for text in alike]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_message_left_for_the_next_page_reads_in_that_pages_language(
    app: Flask, case: str
) -> None:
    english, finnish = shown(app, case, "en", "en"), shown(app, case, "fi", "fi")
    assert english != finnish, "the message is translated, so the test can tell them apart"
    assert shown(app, case, "fi", "en") == english
    assert shown(app, case, "en", "fi") == finnish


def test_every_message_left_for_the_next_page_is_left_by_its_id() -> None:
    """A message left as text keeps the language of the request that left it: the views leave
    theirs by message id (``flash_words``, ``flash_phrase``); only those call ``flash``."""
    web = Path(sota_casino.web.__file__).parent
    callers = sorted(
        path.name for path in web.glob("*.py") if re.search(r"\bflash\(", path.read_text())
    )
    assert callers == ["i18n.py"]


def test_a_phrase_is_small_json_naming_the_params_that_are_message_ids(app: Flask) -> None:
    """What the session's cookie holds: the ids, the params, and which params are ids."""
    stored = phrase(
        "Alert rule #%(id)s added: %(rule)s.",
        {
            "id": 7,
            "rule": phrase(
                "a player wins more than %(threshold)s in one round",
                {"threshold": {"chips": 125_000}},
            ),
        },
    )
    assert stored == {
        "message_id": "Alert rule #%(id)s added: %(rule)s.",
        "params": {
            "id": 7,
            "rule": {
                "message_id": "a player wins more than %(threshold)s in one round",
                "params": {"threshold": {"chips": 125_000}},
            },
        },
    }
    labelled = phrase("Please enter the %(label)s.", {"label": "ante", "x": 1}, words=["label"])
    assert labelled["words"] == ["label"]
    with app.test_request_context(headers={"Accept-Language": "fi"}):
        worded = phrase_text(stored)
    assert worded.startswith("Hälytyssääntö #7") or "#7" in worded, worded
    assert "1\u00a0250\u00a0pelimerk" in worded, worded
    later = phrase(
        "One top-up a day: the next is possible after %(when)s.",
        {"when": {"time": "2026-12-01T08:31:13+00:00"}},
    )
    with app.test_request_context(headers={"Accept-Language": "fi"}):
        assert phrase_text(later) == gettext(
            "One top-up a day: the next is possible after %(when)s.",
            when=when(datetime(2026, 12, 1, 8, 31, 13, tzinfo=UTC)),
        )
        assert "1.12.2026" in phrase_text(later)


def _refusal(act: Callable[[], object]) -> CasinoError:
    with pytest.raises(CasinoError) as refused:
        act()
    return refused.value


#: Refusals the console shows beside their form, made as its views make them: each is a phrase
#: too, so it reads in any language it is shown in, as the flashed ones do.
CONSOLE_REFUSALS: Final[dict[str, Callable[[], CasinoError]]] = {
    # The engine names options by their codes, the form by their names (lower case here).
    "table stakes": lambda: table_refusal(
        _refusal(lambda: sota.SotaTable.from_dict({**SOTA_TABLE, "min_stake": 50}))
    ),
    # Its bets counted in hundredths of a chip by the engine, in whole chips on the form.
    "table bets": lambda: table_refusal(_refusal(lambda: casino_war.TableRules(min_bet=50))),
    "table bonus": lambda: table_refusal(_refusal(lambda: casino_war.TableRules(bonus="x"))),
    "adjustment too large": lambda: _refusal(
        lambda: parse_adjustment_amount("999999999999", "chips", "credit")
    ),
    "adjustment too large in sweets": lambda: _refusal(
        lambda: parse_adjustment_amount("99999999999999", "sweets", "debit")
    ),
}
SOTA_TABLE: Final = {
    "min_stake": 1,
    "max_stake": 10,
    "presets": ["nordic"],
    "custom_rules": True,
}


def worded(app: Flask, case: str, made_in: str, read_in: str) -> str:
    """The case's refusal made in a request in ``made_in``, as a page in ``read_in`` words it."""
    with app.test_request_context():
        g.locale = made_in
        stored = refusal_phrase(CONSOLE_REFUSALS[case]())
    with app.test_request_context():
        g.locale = read_in
        return phrase_text(stored)


@pytest.mark.parametrize("case", sorted(CONSOLE_REFUSALS))
@pytest.mark.parametrize("language", ["fi", "pt"])
def test_a_console_refusal_reads_in_the_language_it_is_shown_in(
    app: Flask, case: str, language: str
) -> None:
    english, translated = worded(app, case, "en", "en"), worded(app, case, language, language)
    assert english != translated, "the refusal is translated, so the test can tell them apart"
    assert worded(app, case, language, "en") == english
    assert worded(app, case, "en", language) == translated


def test_a_console_refusal_reads_as_it_did_when_made_and_shown_in_one_language(
    app: Flask,
) -> None:
    """Worded from its ids, each reads as the console showed it (a sentence, money written)."""
    said = {
        ("table stakes", "en"): "Minimum stake must not exceed maximum stake",
        ("table stakes", "pt"): "“Aposta mínima” não pode ser maior que “aposta máxima”",
        ("table stakes", "fi"): "Pienin panos ei saa olla suurempi kuin suurin panos",
        ("table bets", "en"): "Minimum bet must be a whole number from 1 to 10000000000",
        ("table bonus", "en"): "Choose one of the options offered for “Bonus on a war tie”.",
        ("adjustment too large", "en"): "One adjustment may be at most 10,000,000,000\u00a0chips.",
        ("adjustment too large", "pt"): (
            "Um ajuste pode ser de no máximo 10.000.000.000\u00a0fichas."
        ),
        ("adjustment too large in sweets", "fi"): (
            "Yksi oikaisu voi olla enintään 1\u00a0000\u00a0000\u00a0000\u00a0000\u00a0karkkia."
        ),
    }
    for (case, lang), text in said.items():
        assert worded(app, case, lang, lang) == text, (case, lang)
