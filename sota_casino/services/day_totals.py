"""Totals of closed days: what the house's reports add up, stored once per UTC day.

A round is dated by the UTC day it settled (``settled_on``). Once a day has ended, and the
transactions that settled its last rounds have surely committed, it never gains a settled round
(a settled round is fixed: see migration 0007), so what its rounds add up to, per game and
table-rules version, is computed once and kept in ``closed_day_totals``. The reports read the
stored days and add up live only the rounds settled since the last stored day: a few thousand
rows instead of every round ever played.

Nothing is kept up at settlement (a row every round would lock). The days are stored lazily, by
whoever reads a report first after a day closes (:func:`store_closed_days`), in a short write
of their own before the report's read: the sums are read first, outside it, and the rows are
inserted unless present, so two readers storing the same day store it once. The ledger check
compares the stored days with their rounds again (:func:`problems`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Mapping
from datetime import date
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import Final

from sqlalchemy import Date
from sqlalchemy import Select
from sqlalchemy import Text
from sqlalchemy import case
from sqlalchemy import cast
from sqlalchemy import func
from sqlalchemy import literal
from sqlalchemy import select
from sqlalchemy import union_all
from sqlalchemy.orm import Session

from ..core.marks import N_
from ..core.marks import MessageId
from ..core.marks import Nn_
from ..models import ClosedDayTotal
from ..models import Round
from .tx import in_transaction
from .tx import insert_all_ignoring_conflicts
from .tx import own_transactions
from .tx import read_only
from .tx import transactional

#: How long after midnight UTC a day is taken as closed. A round is dated by its settling
#: transaction's clock before that transaction commits: a request's transaction ends within
#: gunicorn's timeout (30 s; the service refuses to start with database waits over half of it,
#: config.database_wait_problems), and servers' clocks may differ a little (the audit check
#: allows 10 minutes for both: ``audit.ROUNDS_OVERLAP``). A fixed hour is far past any of these
#: whatever the waits are set to, and costs only that the first hour of a day adds up the day
#: before live.
MARGIN: Final = timedelta(hours=1)

#: What is added up per day, game and rules, in the order of :func:`_sums_of_rounds`' columns
#: and of the table's. ``main_result`` is the house's result without the tie side bet (x), the
#: base of the edge is the ante (a); the products feed the edge's interval.
FIGURES: Final = (
    "rounds",
    "handle",
    "house_result",
    "main_result",
    "antes",
    "tie_bets",
    "tie_result",
    "main_result_squares",
    "main_result_antes",
    "ante_squares",
    "ties",
    "surrenders",
    "tied_antes",
    "surrendered_antes",
)
#: The figures that are amounts of the game's currency (chips in hundredths, or sweets); the
#: others are counts, or sums of squares and products of amounts (the house's math).
AMOUNT_FIGURES: Final = (
    "handle",
    "house_result",
    "main_result",
    "antes",
    "tie_bets",
    "tie_result",
    "tied_antes",
    "surrendered_antes",
)
#: A closed day whose stored totals differ from its settled rounds, by how (message ids, their
#: params ``day``, ``game`` and ``rules``; the console words them in the operator's language).
DAY_UNSTORED: Final = Nn_(
    "the closed day %(day)s of %(game)s under rules %(rules)s has %(num)s settled round but "
    "no stored totals: a round was settled after its day was stored",
    "the closed day %(day)s of %(game)s under rules %(rules)s has %(num)s settled rounds but "
    "no stored totals: a round was settled after its day was stored",
)
DAY_UNSETTLED: Final = N_(
    "the closed day %(day)s of %(game)s under rules %(rules)s has stored totals but no settled "
    "round"
)
#: ``figures`` is the English of the figures that differ (``differing``: each one's name, what
#: is stored and what its rounds add up to), each as :data:`FIGURE_OFF` says it.
DAY_OFF: Final = N_("the closed day %(day)s of %(game)s under rules %(rules)s stores %(figures)s")
FIGURE_OFF: Final = N_("%(figure)s %(stored)s (its rounds: %(summed)s)")
#: Casino War outcomes that began with tied first cards (the player chose war or surrender).
TIED: Final = ("surrender", "war_win", "war_tie", "war_lose")

#: A group of settled rounds: their UTC day, game and rules (canonical JSON, keys sorted).
Key = tuple[date, str, str]
#: The figures of each group, in the order of :data:`FIGURES`.
Sums = dict[Key, tuple[int, ...]]


#: A settled round, written so that no index serves it: the reads here are of a few days, which
#: the rounds' index of days finds (SQLite's planner took the status index instead, every
#: settled round: 80 ms at 100,000 rounds for a read of one day).
_SETTLED: Final = Round.status + "" == "settled"


def closed_before(now: datetime) -> date:
    """The first day not yet closed at ``now``: every earlier day gains no settled round."""
    return (now - MARGIN).date()


def canonical_rules(found: Any) -> str:
    """The rules as one text whatever the database gave back (JSON text, or the decoded
    value) and however it ordered their keys: the rules of one version are one group."""
    rules = json.loads(found) if isinstance(found, str) else found
    return json.dumps(rules, sort_keys=True)


def _sums_of_rounds() -> Select[Any]:
    """Settled rounds added up per day, game and rules (the rules as the database writes
    them as text; :func:`canonical_rules` makes them one key)."""
    result = -Round.net - Round.tie_result
    ante = Round.ante
    tied = Round.outcome["result"].as_string().in_(TIED)
    surrendered = Round.outcome["result"].as_string() == "surrender"
    rules_text = cast(Round.rules, Text)
    return (
        select(
            Round.settled_on,
            Round.game,
            rules_text,
            func.count(Round.id),
            func.sum(Round.staked),
            func.sum(-Round.net),
            func.sum(result),
            func.sum(ante),
            func.sum(Round.tie_bet),
            func.sum(Round.tie_result),
            func.sum(result * result),
            func.sum(result * ante),
            func.sum(ante * ante),
            func.sum(case((tied, 1), else_=0)),
            func.sum(case((surrendered, 1), else_=0)),
            func.sum(case((tied, ante), else_=0)),
            func.sum(case((surrendered, ante), else_=0)),
        )
        .where(_SETTLED)
        .group_by(Round.settled_on, Round.game, rules_text)
    )


def _stored() -> Select[Any]:
    return select(
        ClosedDayTotal.day,
        ClosedDayTotal.game,
        ClosedDayTotal.rules,
        *(getattr(ClosedDayTotal, name) for name in FIGURES),
    )


def _gathered(rows: Iterable[Any], into: Sums | None = None) -> Sums:
    """Rows of ``(day, game, rules, *figures)`` added up by their key (a version's rules
    stored as differently ordered JSON are one)."""
    sums: Sums = {} if into is None else into
    for day, game, rules, *figures in rows:
        key = (day, game, canonical_rules(rules))
        counted = tuple(int(figure or 0) for figure in figures)
        held = sums.get(key)
        sums[key] = counted if held is None else tuple(map(sum, zip(held, counted, strict=True)))
    return sums


def _last_stored() -> Any:
    return select(func.max(ClosedDayTotal.day)).scalar_subquery()


@in_transaction
def totals(session: Session, *, first: date | None = None, last: date | None = None) -> Sums:
    """The settled rounds' figures per day, game and rules (days ``first`` to ``last``, both
    included, if given): the stored closed days, and the rounds settled after the last of them
    added up live. One statement, so on either database it reads one snapshot: a day stored
    meanwhile is counted once, stored or live."""
    stored = _stored()
    # No stored day yet: every round is added up live (no day is before the first one).
    after = func.coalesce(_last_stored(), literal(date.min, Date))
    live = _sums_of_rounds().where(Round.settled_on > after)
    if first is not None:
        stored = stored.where(ClosedDayTotal.day >= first)
        live = live.where(Round.settled_on >= first)
    if last is not None:
        stored = stored.where(ClosedDayTotal.day <= last)
        live = live.where(Round.settled_on <= last)
    return _gathered(session.execute(union_all(stored, live)))


@own_transactions
def store_closed_days(session: Session, now: datetime) -> int:
    """Store the totals of every closed day not stored yet (days with settled rounds only);
    return how many rows were stored. Cheap when there is none: one read of an index."""
    missing = _unstored_closed_days(session, closed_before(now))
    if not missing:
        return 0
    return _store(session, missing)


@read_only
def _unstored_closed_days(session: Session, before: date) -> Sums:
    """The sums of the closed days after the last stored one: read here, outside the write
    that stores them (a closed day's rounds do not change), so that write is short."""
    last = session.scalar(select(func.max(ClosedDayTotal.day)))
    pending = select(Round.id).where(_SETTLED, Round.settled_on < before)
    query = _sums_of_rounds().where(Round.settled_on < before)
    if last is not None:
        pending = pending.where(Round.settled_on > last)
        query = query.where(Round.settled_on > last)
    if session.scalar(pending.limit(1)) is None:
        return {}
    return _gathered(session.execute(query))


@transactional
def _store(session: Session, sums: Mapping[Key, tuple[int, ...]]) -> int:
    """Insert each day's rows unless present: another reader may have stored the same days
    meanwhile, with the same figures (the day was closed), and its rows stand."""
    rows = [
        {"day": day, "game": game, "rules": rules, **dict(zip(FIGURES, figures, strict=True))}
        for (day, game, rules), figures in sorted(sums.items())
    ]
    return insert_all_ignoring_conflicts(session, ClosedDayTotal, rows)


@in_transaction
def problems(
    session: Session, after: date | None = None
) -> tuple[list[tuple[MessageId, dict[str, Any]]], date | None]:
    """Compare the stored closed days (those after ``after``, all if ``None``) with what their
    settled rounds add up to now; return a message id and its params per group that differs,
    and the last stored day (where a later comparison may start). Inside the caller's
    transaction."""
    last = session.scalar(select(func.max(ClosedDayTotal.day)))
    if last is None:
        return [], after
    stored = _stored().where(ClosedDayTotal.day <= last)
    summed = _sums_of_rounds().where(Round.settled_on <= last)
    if after is not None:
        stored = stored.where(ClosedDayTotal.day > after)
        summed = summed.where(Round.settled_on > after)
    kept, found = _gathered(session.execute(stored)), _gathered(session.execute(summed))
    differing = [
        _difference(key, kept.get(key), found.get(key))
        for key in sorted(kept.keys() | found.keys())
        if kept.get(key) != found.get(key)
    ]
    return differing, last


def _difference(
    key: Key, kept: tuple[int, ...] | None, found: tuple[int, ...] | None
) -> tuple[MessageId, dict[str, Any]]:
    day, game, rules = key
    group: dict[str, Any] = {"day": day.isoformat(), "game": game, "rules": rules}
    if kept is None:
        assert found is not None
        return DAY_UNSTORED, {**group, "num": found[0]}
    if found is None:
        return DAY_UNSETTLED, group
    differing = [
        [name, held, summed]
        for name, held, summed in zip(FIGURES, kept, found, strict=True)
        if held != summed
    ]
    figures = ", ".join(
        FIGURE_OFF % {"figure": name, "stored": held, "summed": summed}
        for name, held, summed in differing
    )
    return DAY_OFF, {**group, "figures": figures, "differing": differing}
