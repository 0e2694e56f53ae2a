"""The house's reports read the stored totals of closed days and add up live only the rounds
settled since the last of them: they must say what adding up every settled round says, a day
must be stored once and only once it is closed, and the ledger check must hold the stored days
to their rounds."""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask import g
from sqlalchemy.orm import Session
from test_house_report import _expected
from test_house_report import _figures
from test_house_report import _play_both_games

from sota_casino import migrate
from sota_casino.models import ClosedDayTotal
from sota_casino.models import Round
from sota_casino.services import accounts
from sota_casino.services import alerts
from sota_casino.services import checks
from sota_casino.services import day_totals
from sota_casino.services import ledger
from sota_casino.services import reports
from sota_casino.services import rounds
from sota_casino.services import settings
from sota_casino.services.tx import read_only
from sota_casino.web.format import chips_text
from sota_casino.web.format import day
from sota_casino.web.visitor import SESSION_KEY

#: How far past the day its rounds were played the first test sets a report's clock (its "today").
DAYS_AHEAD = timedelta(days=5)


@read_only
def _played_on(session: Session) -> date:
    """The day the test's rounds were played, read back from them rather than from the clock,
    which may have passed midnight since."""
    played: date = session.scalar(sa.select(sa.func.min(Round.settled_on)))
    return played


def _ranges(today: date) -> tuple[tuple[date | None, date | None], ...]:
    """The date ranges the reports are asked for, around ``today``."""
    yesterday = today - timedelta(days=1)
    return (
        (None, None),
        (today - timedelta(days=3), None),
        (None, yesterday),
        (yesterday, yesterday),
        (today, today),
    )


def _at(day: date, hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute, second), tzinfo=UTC)


def _clock(monkeypatch: pytest.MonkeyPatch, now: datetime) -> None:
    monkeypatch.setattr(reports, "_now", lambda: now)


def _play_two_versions(session: Session, player: int, rig: Callable) -> None:
    """Both games, and Casino War under six decks and then eight."""
    operator = accounts.create_operator(session, "olga", "a long enough secret").id
    _play_both_games(session, player, rig)
    settings.update_table(session, operator, "casino_war", {"decks": 8})
    for bet in (700, 400, 900):  # dealt as the seeds fall (the rig deals six decks)
        opened = rounds.place_casino_war_bet(session, player, bet, 100)
        if opened.status == "awaiting_decision":
            rounds.decide_casino_war(session, player, opened.id, "war")


def _copy_settled_rounds(session: Session, at: datetime, *, only: int | None = None) -> int:
    """Copy the rounds played (``only`` the first so many) as if settled at ``at``, as rows
    alone: the log holds no entry of them. Return how many were copied."""
    columns = [c for c in Round.__table__.columns if c.name != "id"]
    day_after = _played_on(session) + timedelta(days=1)
    with session.begin():
        played = session.execute(
            sa.select(*columns)
            .where(Round.status == "settled", Round.settled_at < _at(day_after, 0))
            .order_by(Round.id)
            .limit(only)
        ).all()
        offset = session.scalar(sa.select(sa.func.max(Round.nonce))) + 1
        for n, row in enumerate(played):
            values = dict(zip((c.name for c in columns), row, strict=True))
            values |= {"nonce": offset + n, "settled_at": at, "settled_on": at.date()}
            session.execute(sa.insert(Round).values(values))
    return len(played)


def _plain(monkeypatch: pytest.MonkeyPatch, session: Session, report: Callable[[], Any]) -> Any:
    """The report as adding up every settled round gives it, nothing stored or read stored."""
    with monkeypatch.context() as plain:

        def every_round(session: Session, *, first: Any = None, last: Any = None) -> Any:
            query = day_totals._sums_of_rounds()
            if first is not None:
                query = query.where(Round.settled_on >= first)
            if last is not None:
                query = query.where(Round.settled_on <= last)
            return day_totals._gathered(session.execute(query))

        plain.setattr(day_totals, "totals", every_round)
        plain.setattr(day_totals, "store_closed_days", lambda session, now: 0)
        return report()


def _assert_reports_add_up_every_round(
    monkeypatch: pytest.MonkeyPatch, session: Session, today: date
) -> None:
    summary = reports.house_summary(session)
    assert summary == _plain(monkeypatch, session, lambda: reports.house_summary(session))
    _, per_day = _expected(session)  # from each round's own JSON
    assert {(d.day, d.game): _figures(d) for d in summary.days} == per_day
    for first, last in _ranges(today):
        since, until = (d and d.isoformat() for d in (first, last))
        math = reports.house_math(session, since=since, until=until)
        assert math == _plain(
            monkeypatch,
            session,
            lambda s=since, u=until: reports.house_math(session, since=s, until=u),
        )


@read_only
def _stored(session: Session) -> dict[date, int]:
    """The stored rows per day."""
    rows = session.execute(
        sa.select(ClosedDayTotal.day, sa.func.count()).group_by(ClosedDayTotal.day)
    )
    return dict(rows.tuples().all())


#: The copied rounds have no log entries, which ``audit verify`` after the test would name; the
#: ledger check is run here instead.
@pytest.mark.tampers
def test_reports_with_closed_days_kept_say_what_every_round_adds_up_to(
    session: Session, player: int, rig: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    _play_two_versions(session, player, rig)
    played = _played_on(session)
    today = played + DAYS_AHEAD
    _copy_settled_rounds(session, _at(today - timedelta(days=3), 12))
    _copy_settled_rounds(session, _at(today - timedelta(days=2), 0, 0, 1))
    _copy_settled_rounds(session, _at(today - timedelta(days=1), 23, 59, 30))  # before midnight
    _copy_settled_rounds(session, _at(today, 0, 10))  # today
    closed = {played, today - timedelta(days=3), today - timedelta(days=2)}

    # Half an hour past midnight: yesterday is within the margin, added up live.
    _clock(monkeypatch, _at(today, 0, 30))
    _assert_reports_add_up_every_round(monkeypatch, session, today)
    stored = _stored(session)
    assert set(stored) == closed
    # A round of yesterday whose transaction commits now, in the margin, is counted.
    _copy_settled_rounds(session, _at(today - timedelta(days=1), 23, 59, 59), only=2)
    _assert_reports_add_up_every_round(monkeypatch, session, today)
    assert _stored(session) == stored

    # Past the margin yesterday is closed and stored too, once; today stays live.
    _clock(monkeypatch, _at(today, 1, 30))
    _assert_reports_add_up_every_round(monkeypatch, session, today)
    stored = _stored(session)
    assert set(stored) == closed | {today - timedelta(days=1)}
    assert day_totals.store_closed_days(session, _at(today, 23)) == 0
    _copy_settled_rounds(session, _at(today, 18), only=3)
    _assert_reports_add_up_every_round(monkeypatch, session, today)
    assert _stored(session) == stored
    assert ledger.check(session).ok


def test_a_report_stores_nothing_when_no_day_closed_since(
    session: Session, player: int, rig: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    _play_both_games(session, player, rig)
    today = _played_on(session)
    _clock(monkeypatch, _at(today + timedelta(days=1), 0, 59))
    summary = reports.house_summary(session)
    assert _stored(session) == {}
    assert day_totals.store_closed_days(session, _at(today + timedelta(days=1), 1, 0)) == 2
    assert day_totals.store_closed_days(session, _at(today + timedelta(days=1), 1, 0)) == 0
    _clock(monkeypatch, _at(today + timedelta(days=1), 1, 0))
    assert reports.house_summary(session) == summary
    rows = _stored(session)
    assert rows == {today: 2}  # Casino War and Sota, one version each
    seen: list[str] = []
    listen = (session.get_bind(), "before_cursor_execute", lambda *args: seen.append(args[2]))
    sa.event.listen(*listen)
    try:
        assert reports.house_summary(session) == summary
    finally:
        sa.event.remove(*listen)
    assert seen and not any("INSERT" in statement.upper() for statement in seen)
    assert _stored(session) == rows


@pytest.mark.tampers
def test_the_ledger_check_names_a_stored_day_that_differs_from_its_rounds(
    session: Session, player: int, rig: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    _play_both_games(session, player, rig)
    assert checks.run(session, "ledger", "runner-a").verdict.ok
    today = _played_on(session)
    _clock(monkeypatch, _at(today + timedelta(days=1), 2))
    made = reports.house_summary(session).games["casino_war"].house_result
    assert ledger.check(session).ok
    with session.begin():
        session.execute(
            sa.update(ClosedDayTotal)
            .where(ClosedDayTotal.game == "casino_war")
            .values(house_result=ClosedDayTotal.house_result + 7)
        )
    report = ledger.check(session)
    assert not report.ok
    (problem,) = report.problems
    assert problem.startswith(f"the closed day {today.isoformat()} of casino_war under rules ")
    assert problem.endswith(f"stores house_result {made + 7} (its rounds: {made})")
    # The standing check's next step compares the days stored since its last one.
    verdict = checks.run(session, "ledger", "runner-a").verdict
    assert verdict.ok is False and verdict.reason == problem


def _a_closed_day_stored_7_off(
    session: Session, player: int, rig: Callable, monkeypatch: pytest.MonkeyPatch
) -> tuple[date, int]:
    """Play both games today, close the day (the clock two hours past its end), store its Casino War
    house result 7 hundredths of a chip off what its rounds made: the day, and what they made."""
    _play_both_games(session, player, rig)
    today = _played_on(session)
    _clock(monkeypatch, _at(today + timedelta(days=1), 2))
    made = reports.house_summary(session).games["casino_war"].house_result
    with session.begin():
        session.execute(
            sa.update(ClosedDayTotal)
            .where(ClosedDayTotal.game == "casino_war")
            .values(house_result=ClosedDayTotal.house_result + 7)
        )
    return today, made


@pytest.mark.tampers
def test_the_ledger_check_names_a_round_settled_into_a_stored_day(
    session: Session, player: int, rig: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    _play_both_games(session, player, rig)
    today = _played_on(session)
    _clock(monkeypatch, _at(today + timedelta(days=1), 2))
    reports.house_summary(session)
    assert ledger.check(session).ok
    # A round dated yesterday by a transaction that committed after the margin (none does).
    _copy_settled_rounds(session, _at(today, 23, 50), only=1)
    problems = ledger.check(session).problems
    assert len(problems) == 1
    assert problems[0].startswith(f"the closed day {today.isoformat()} of casino_war under rules ")
    assert "rounds 5 (its rounds: 6)" in problems[0]


def test_the_closed_days_table_comes_and_goes_with_its_migration(
    session: Session, player: int, rig: Callable, monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    _play_both_games(session, player, rig)
    today = _played_on(session)
    _clock(monkeypatch, _at(today + timedelta(days=1), 2))
    summary = reports.house_summary(session)
    assert _stored(session) == {today: 2}
    session.close()
    session.get_bind().dispose()
    migrate.downgrade(db_url, "0020")
    engine = sa.create_engine(db_url)
    assert "closed_day_totals" not in sa.inspect(engine).get_table_names()
    migrate.upgrade(db_url)
    assert "closed_day_totals" in sa.inspect(engine).get_table_names()
    engine.dispose()
    assert _stored(session) == {}  # empty: the next report stores the days again
    assert reports.house_summary(session) == summary
    assert _stored(session) == {today: 2}


@pytest.mark.tampers
def test_the_console_says_a_differing_closed_day_in_the_operators_language(
    app: Flask, session: Session, player: int, rig: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The console showed a closed day's problem in the check's English whatever the operator's
    language: in Finnish it reads in Finnish, its day as the console writes days, the game by
    its name, the figure by its name and its amounts as chips. The command and the API keep the
    English they said."""
    today, made = _a_closed_day_stored_7_off(session, player, rig, monkeypatch)
    verdict = checks.run(session, "ledger", "runner-a").verdict
    english = f"stores house_result {made + 7} (its rounds: {made})"
    assert verdict.ok is False and verdict.reason is not None
    assert verdict.reason.endswith(english)
    assert ledger.check(session).problems == [verdict.reason]
    operator = accounts.create_operator(session, "otto", "a long enough secret").id
    accounts.set_locale(session, operator, "fi")
    token, _expires = accounts.start_session(session, operator)
    console = app.test_client()
    with console.session_transaction() as cookie:
        cookie[SESSION_KEY] = token
    answer = console.get("/operator/ledger")
    assert answer.status_code == 200
    page = html.unescape(answer.get_data(as_text=True))
    assert '<html lang="fi">' in page
    with app.test_request_context():
        g.locale = "fi"
        held, summed, shown_day = chips_text(made + 7), chips_text(made), day(today)
    assert "pelimerk" in held and shown_day != today.isoformat()
    assert f"suljetun päivän {shown_day} tallennetut summat pelille Casino War säännöillä " in page
    assert f": talon tulos {held} (sen pelikierroksista: {summed})</li>" in page
    assert "the closed day" not in page and "house_result" not in page


@pytest.mark.tampers
def test_a_failed_ledger_checks_alert_says_its_reason_in_the_operators_language(
    app: Flask, session: Session, player: int, rig: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The alert a failed ledger check raises named the check's English reason on a Finnish
    console: it says the check's first problem as the ledger page does, and keeps the English
    reason, with the problem's id and params, for the API."""
    operator = accounts.create_operator(session, "otto", "a long enough secret").id
    alerts.create_rule(session, operator, alerts.CHECK_FAILED, None, 0, 24)
    today, made = _a_closed_day_stored_7_off(session, player, rig, monkeypatch)
    verdict = checks.run(session, "ledger", "runner-a").verdict
    assert verdict.ok is False and verdict.reason is not None
    assert alerts.scan(session) == 1
    (raised,) = alerts.listing(session).alerts
    (found,) = (verdict.findings or {})["found"]
    assert raised.params == {"reason": verdict.reason, "problem": found}
    accounts.set_locale(session, operator, "fi")
    api, _expires = accounts.start_session(session, operator, kind="api")
    # Each request in an app context of its own: the test's, else shared, keeps one's language.
    with app.app_context():
        listed = app.test_client().get(
            "/api/v1/operator/alerts", headers={"Authorization": f"Bearer {api}"}
        )
    (alert,) = listed.get_json()["alerts"]
    assert alert["message"] == f"the ledger check failed: {verdict.reason}"
    token, _expires = accounts.start_session(session, operator)
    console = app.test_client()
    with console.session_transaction() as cookie:
        cookie[SESSION_KEY] = token
    with app.app_context():
        page = html.unescape(console.get("/operator/alerts").get_data(as_text=True))
    with app.test_request_context():
        g.locale = "fi"
        held, summed, shown_day = chips_text(made + 7), chips_text(made), day(today)
    assert "kirjanpidon tarkistus epäonnistui: suljetun päivän " + shown_day in page
    assert f": talon tulos {held} (sen pelikierroksista: {summed})</td>" in page
    assert verdict.reason not in page and "house_result" not in page
