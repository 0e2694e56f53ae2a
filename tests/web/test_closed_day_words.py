"""The ledger check's problems with a closed day's stored totals, as the console says them: in
the operator's language, the day as the console writes days, the game by its name, each figure
by its name and its amounts as the game's money; the command and the API keep the English."""

from __future__ import annotations

import html
from datetime import UTC
from datetime import date
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import pytest
from flask import Flask
from flask import g
from operator_support import add_user
from operator_support import bearer
from operator_support import client_as
from operator_support import db
from web_support import post_form

from sota_casino.models import CheckRun
from sota_casino.services import alerts
from sota_casino.services import day_totals
from sota_casino.services import ledger
from sota_casino.web.i18n import gettext
from sota_casino.web.operator import ledger_problems

RULES = '{"decks": 6}'
KEY = (date(2026, 12, 1), "casino_war", RULES)
#: Casino War's figures of a day, as :data:`day_totals.FIGURES` orders them.
FIGURES = (6, 3000, 1250, 1250, 2500, 500, 0, 9, 9, 9, 2, 1, 1000, 500)
#: The same day with its house result and its rounds changed.
TAMPERED = (5, 3000, 125_000, 1250, 2500, 500, 0, 9, 9, 9, 2, 1, 1000, 500)


def problem(kept: Any, found: Any) -> ledger.Problem:
    message, params = day_totals._difference(KEY, kept, found)
    return ledger.Problem.of(message, params)


CASES = {
    "off": (
        (TAMPERED, FIGURES),
        "the closed day 2026-12-01 of casino_war under rules "
        + RULES
        + " stores rounds 5 (its rounds: 6), house_result 125000 (its rounds: 1250)",
        "suljetun päivän 1.12.2026 tallennetut summat pelille Casino War säännöillä "
        + RULES
        + ": ratkaistut pelikierrokset 5 (sen pelikierroksista: 6), talon tulos 1\u00a0250\u00a0"
        "pelimerkkiä (sen pelikierroksista: 12,50\u00a0pelimerkkiä)",
    ),
    "unstored": (
        (None, FIGURES),
        "the closed day 2026-12-01 of casino_war under rules "
        + RULES
        + " has 6 settled rounds but no stored totals: a round was settled after its day was "
        "stored",
        "suljetulla päivällä 1.12.2026 on pelin Casino War säännöillä "
        + RULES
        + " 6\u00a0ratkaistua pelikierrosta mutta ei tallennettuja summia: pelikierros "
        "ratkaistiin päivän tallentamisen jälkeen",
    ),
    # One round is counted in the singular: the English read "has 1 settled rounds".
    "unstored, one round": (
        (None, (1, *FIGURES[1:])),
        "the closed day 2026-12-01 of casino_war under rules "
        + RULES
        + " has 1 settled round but no stored totals: a round was settled after its day was "
        "stored",
        "suljetulla päivällä 1.12.2026 on pelin Casino War säännöillä "
        + RULES
        + " 1\u00a0ratkaistu pelikierros mutta ei tallennettuja summia: pelikierros "
        "ratkaistiin päivän tallentamisen jälkeen",
    ),
    "unsettled": (
        (FIGURES, None),
        "the closed day 2026-12-01 of casino_war under rules "
        + RULES
        + " has stored totals but no settled round",
        "suljetulla päivällä 1.12.2026 on pelin Casino War säännöillä "
        + RULES
        + " tallennetut summat mutta ei yhtään ratkaistua pelikierrosta",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_closed_days_problem_reads_in_the_operators_language(app: Flask, case: str) -> None:
    (kept, found), english, finnish = CASES[case]
    found_problem = problem(kept, found)
    assert found_problem.text() == english  # the command's and the API's words, as they were
    said = console_words(app, found_problem)
    assert said["fi"] == finnish
    assert "Casino War" in said["en"] and "Dec 1, 2026" in said["en"]


def console_words(app: Flask, found: ledger.Problem) -> dict[str, str]:
    """A ledger problem as the console's ledger page says it, in Finnish and in English."""
    check = SimpleNamespace(findings={"found": [found.to_json()]}, problems=[found.text()])
    said = {}
    for language in ("fi", "en"):
        with app.test_request_context():
            g.locale = language
            (said[language],) = ledger_problems(check)  # type: ignore[arg-type]
    return said


@pytest.mark.parametrize("lang", ["fi", "pt", "en"])
def test_a_failed_ledger_checks_alert_gives_its_reason_in_the_operators_language(
    app: Flask, lang: str
) -> None:
    """The alert names the check's first problem, which the console words as the ledger page
    does; the API keeps the check's English reason, and gives the problem's id and params."""
    found_problem = problem(TAMPERED, FIGURES)
    english = found_problem.text()
    olga = add_user(app, f"olga{lang}", "operator")
    session = db(app)
    try:
        alerts.create_rule(session, olga, alerts.CHECK_FAILED, None, 0, 24)
        with session.begin():
            findings = {"problems": [english], "found": [found_problem.to_json()]}
            session.add(
                CheckRun(
                    name="ledger",
                    ok=False,
                    size=3,
                    reason=english,
                    findings=findings,
                    checked_at=datetime.now(UTC),
                )
            )
        assert alerts.scan(session) == 1
    finally:
        session.close()
    console = client_as(app, olga)
    post_form(console, "/language", {"locale": lang, "next": "/"})
    page = html.unescape(console.get("/operator/alerts").get_data(as_text=True))
    check = SimpleNamespace(findings={"found": [found_problem.to_json()]}, problems=[english])
    with app.test_request_context():
        g.locale = lang
        (reason,) = ledger_problems(check)  # type: ignore[arg-type]
        said = gettext(alerts.CHECK_FAILED_BECAUSE["ledger"], reason=reason)
    assert said in page
    if lang != "en":
        assert english not in page
    api = app.test_client().get("/api/v1/operator/alerts", headers=bearer(app, f"olga{lang}"))
    (alert,) = api.get_json()["alerts"]
    assert alert["message"] == f"the ledger check failed: {english}"
    assert alert["params"] == {"reason": english, "problem": found_problem.to_json()}


#: A round's problems name its state or its game by code; the console says them in words.
ROUND_CASES = {
    "escrow": (
        ledger.Problem(
            ledger.ROUND_ESCROW_OFF,
            {
                "round": 12,
                "status": "awaiting_decision",
                "currency": "chips",
                "held": 0,
                "owed": 500,
            },
        ),
        "round 12 (awaiting_decision) has 0 in escrow, not 500",
        "pelikierroksella 12 (odottaa päätöstä) on sulkutilillä 0\u00a0pelimerkkiä eikä "
        "5\u00a0pelimerkkiä",
    ),
    "open": (
        ledger.Problem(
            ledger.ROUND_ESCROW_OFF,
            {"round": 13, "status": "open", "currency": "sweets", "held": 0, "owed": 5},
        ),
        "round 13 (open) has 0 in escrow, not 5",
        "pelikierroksella 13 (pelissä) on sulkutilillä 0\u00a0karkkia eikä 5\u00a0karkkia",
    ),
    "row": (
        ledger.Problem(
            ledger.ROUND_ROW_OFF,
            dict(
                zip(
                    ("round", "game", "currency", "net", "payout", "staked", "house", "player"),
                    (14, "casino_war", "chips", 500, 1000, 500, 0, 0),
                    strict=True,
                )
            ),
        ),
        "round 14 (casino_war) says net 500 (payout 1000, staked 500) but its postings gave "
        "the house 0 and the player 0",
        "pelikierroksen 14 (Casino War) nettotulos on 5\u00a0pelimerkkiä (voitonmaksu "
        "10\u00a0pelimerkkiä, panokset 5\u00a0pelimerkkiä), mutta sen kirjausten mukaan talon "
        "osuus on 0\u00a0pelimerkkiä ja pelaajan 0\u00a0pelimerkkiä",
    ),
}


@pytest.mark.parametrize("case", sorted(ROUND_CASES))
def test_a_rounds_problem_names_its_state_and_game_in_the_operators_language(
    app: Flask, case: str
) -> None:
    """The command and the API keep the codes (awaiting_decision, casino_war); the console
    says them as its lists do."""
    found_problem, english, finnish = ROUND_CASES[case]
    assert found_problem.text() == english
    said = console_words(app, found_problem)
    assert said["fi"] == finnish
    assert "_" not in said["en"], said["en"]
