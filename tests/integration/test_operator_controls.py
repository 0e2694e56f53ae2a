"""Controls a regulator asks for, on both databases: four-eyes approval of large adjustments and
table changes, alert rules raised where the events happen (and kept in the audit log), lists
paged by cursor and exported whole, and a range of the audit log that verifies on its own."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy.orm import Session

from sota_casino.core import audit_chain
from sota_casino.core.errors import ApprovalRequired
from sota_casino.core.errors import Conflict
from sota_casino.core.errors import InsufficientFunds
from sota_casino.core.errors import InvalidInput
from sota_casino.core.errors import NotFound
from sota_casino.core.errors import OwnApproval
from sota_casino.factory import create_app
from sota_casino.models import AuditEntry
from sota_casino.models import CheckRun
from sota_casino.models import Round
from sota_casino.services import accounts
from sota_casino.services import alerts
from sota_casino.services import approvals
from sota_casino.services import audit
from sota_casino.services import ledger
from sota_casino.services import lists
from sota_casino.services import money
from sota_casino.services import reports
from sota_casino.services import rounds
from sota_casino.services import settings
from sota_casino.services.context import context_of
from sota_casino.services.results import MAX_ID
from sota_casino.verify.cli import main as verify_main

PASSWORD = "correct horse battery"


@pytest.fixture
def four_eyes(db_url: str, tmp_path: Path) -> Iterator[Session]:
    """A session of an app whose table changes wait for a second operator (as deployed)."""
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": db_url,
            "SECRET_KEY": "test-secret-key",
            "SIGNING_KEY_FILE": str(tmp_path / "signing_key.pem"),
            "CHECKPOINT_EVERY": 0,
            "CHECK_INTERVAL_SECONDS": 0,
            "AUDIT_INTEGRATE_MS": 0,
            "FOUR_EYES_TABLES": 1,
        }
    )
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        yield session
        session.close()
    app.extensions["sota_casino.engine"].dispose()


def _people(session: Session) -> tuple[int, int, int]:
    """Two operators and a player."""
    olga = accounts.create_operator(session, "olga", PASSWORD).id
    otto = accounts.create_operator(session, "otto", PASSWORD).id
    pat = accounts.register(session, "pat", PASSWORD, address="127.0.0.1").id
    return olga, otto, pat


def _actions(session: Session) -> list[str]:
    with session.begin():
        return list(session.scalars(sa.select(AuditEntry.action).order_by(AuditEntry.seq)))


def test_a_large_adjustment_applies_only_when_a_second_operator_approves(
    four_eyes: Session,
) -> None:
    session = four_eyes
    olga, otto, pat = _people(session)
    before = money.balances(session, pat).chips
    with pytest.raises(ApprovalRequired):
        money.adjust(session, olga, pat, "chips", 100_001, "jackpot refund")
    assert money.adjust(session, olga, pat, "chips", 100_000, "at the limit").chips == (
        before + 100_000
    )

    proposal = money.propose_adjustment(session, olga, pat, "chips", 250_000, "jackpot refund")
    assert proposal.status == "pending" and proposal.proposed_by.name == "olga"
    assert money.balances(session, pat).chips == before + 100_000  # nothing moved yet
    with pytest.raises(OwnApproval):
        approvals.decide(session, olga, proposal.id, True)
    assert money.balances(session, pat).chips == before + 100_000

    decided = approvals.decide(session, otto, proposal.id, True, "seen the ticket")
    assert decided.status == "approved" and decided.decided_by.name == "otto"
    assert money.balances(session, pat).chips == before + 350_000
    with pytest.raises(Conflict):
        approvals.decide(session, otto, proposal.id, True)

    rejected = money.propose_adjustment(session, otto, pat, "chips", -300_000, "clawback")
    approvals.decide(session, olga, rejected.id, False, "no ticket")
    assert money.balances(session, pat).chips == before + 350_000

    with session.begin():
        applied = session.scalars(
            sa.select(AuditEntry).where(AuditEntry.action == "money.adjust").order_by("seq")
        ).all()
    assert [json.loads(e.data)["amount"] for e in applied] == [100_000, 250_000]
    assert applied[-1].actor == f"user:{olga}"
    assert json.loads(applied[-1].data)["approval"]["approved_by"] == f"user:{otto}"
    assert _actions(session)[-5:] == [
        "approval.proposed",
        "approval.approved",
        "money.adjust",
        "approval.proposed",
        "approval.rejected",
    ]


def test_one_operator_cannot_move_more_than_the_limit_alone_by_splitting_it(
    four_eyes: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = four_eyes
    olga, otto, pat = _people(session)
    amy = accounts.register(session, "amy", PASSWORD, address="127.0.0.1").id
    start = {who: money.balances(session, who).sweets for who in (pat, amy)}
    # Approved adjustments had four eyes: they leave otto's own 24 hours untouched.
    large = money.propose_adjustment(session, otto, pat, "sweets", 5_000, "promotion")
    approvals.decide(session, olga, large.id, True)
    money.adjust(session, otto, pat, "sweets", 1_000, "at the limit")

    # Each under the limit of 1,000 sweets, together over it: the split is refused...
    money.adjust(session, olga, pat, "sweets", 600, "goodwill, part 1")
    with pytest.raises(ApprovalRequired) as refused:
        money.adjust(session, olga, pat, "sweets", 401, "goodwill, part 2")
    assert refused.value.params == {"total": 1_001, "above": 1_000, "currency": "sweets"}
    # ... to another player too (an accomplice's account), and a debit counts as much.
    with pytest.raises(ApprovalRequired):
        money.adjust(session, olga, amy, "sweets", 401, "goodwill, elsewhere")
    money.adjust(session, olga, pat, "sweets", -400, "part 1 was too much")
    with pytest.raises(ApprovalRequired):
        money.adjust(session, olga, amy, "sweets", 1, "one more")
    assert money.request_adjustment(session, olga, amy, "sweets", 1, "one more").done is None
    assert reports.adjustment_preview(session, olga, amy, "sweets", 1, "one more").needs_approval
    money.adjust(session, olga, pat, "chips", 100_000, "chips count apart")

    # A day later the window has passed.
    later = datetime.now(UTC) + timedelta(hours=24, seconds=1)
    monkeypatch.setattr(money, "_now", lambda: later)
    money.adjust(session, olga, amy, "sweets", 1_000, "next day")

    assert money.balances(session, pat).sweets == start[pat] + 5_000 + 1_000 + 600 - 400
    assert money.balances(session, amy).sweets == start[amy] + 1_000
    assert ledger.check(session).ok


def test_the_console_button_applies_a_small_adjustment_and_proposes_a_large_one(
    four_eyes: Session,
) -> None:
    olga, _otto, pat = _people(four_eyes)
    small = money.request_adjustment(four_eyes, olga, pat, "sweets", 5, "goodwill")
    assert small.approval is None and small.done is not None
    assert small.done.sweets == 105
    large = money.request_adjustment(four_eyes, olga, pat, "sweets", 5_000, "promotion")
    assert large.done is None and large.approval is not None
    assert large.approval.change["amount"] == 5_000
    assert money.balances(four_eyes, pat).sweets == 105


def test_a_double_submit_of_the_console_button_acts_once_and_answers_alike(
    four_eyes: Session,
) -> None:
    olga, _otto, pat = _people(four_eyes)
    for amount, key in ((5, "small-once"), (5_000, "large-once")):
        first = money.request_adjustment(
            four_eyes, olga, pat, "sweets", amount, "goodwill", idempotency_key=key
        )
        again = money.request_adjustment(
            four_eyes, olga, pat, "sweets", amount, "goodwill", idempotency_key=key
        )
        assert again == first  # read back as the same typed answer
    assert money.balances(four_eyes, pat).sweets == 105
    change = {"min_stake": 2}
    first = settings.request_table_change(four_eyes, olga, "sota", change, idempotency_key="t-1")
    again = settings.request_table_change(four_eyes, olga, "sota", change, idempotency_key="t-1")
    assert again == first and first.done is None and first.approval is not None
    assert _actions(four_eyes).count("approval.proposed") == 2


def test_a_table_change_waits_for_a_second_operator(four_eyes: Session) -> None:
    session = four_eyes
    olga, otto, _pat = _people(session)
    decks = settings.table_rules(session, "casino_war")["decks"]
    with pytest.raises(ApprovalRequired):
        settings.update_table(session, olga, "casino_war", {"decks": 2})
    with pytest.raises(InvalidInput):  # refused when proposed, not when approved
        settings.propose_table_change(session, olga, "casino_war", {"decks": 99})
    proposal = settings.propose_table_change(session, olga, "casino_war", {"decks": 2})
    assert settings.table_rules(session, "casino_war")["decks"] == decks
    with pytest.raises(OwnApproval):
        approvals.decide(session, olga, proposal.id, True)
    approvals.decide(session, otto, proposal.id, True)
    assert settings.table_rules(session, "casino_war")["decks"] == 2
    with session.begin():
        change = session.scalars(
            sa.select(AuditEntry).where(AuditEntry.action == "table.updated")
        ).one()
    assert change.actor == f"user:{olga}"
    assert json.loads(change.data)["approval"]["approved_by"] == f"user:{otto}"


def test_making_an_operator_waits_for_a_second_operator(four_eyes: Session) -> None:
    session = four_eyes
    olga, otto, pat = _people(session)
    with pytest.raises(ApprovalRequired):
        accounts.set_role(session, olga, pat, "operator")
    asked = accounts.request_role_change(session, olga, pat, "operator")
    assert asked.done is None and asked.approval is not None
    assert accounts.get_user(session, pat).role == "player"
    with pytest.raises(OwnApproval):
        approvals.decide(session, olga, asked.approval.id, True)
    approvals.decide(session, otto, asked.approval.id, True)
    assert accounts.get_user(session, pat).role == "operator"
    with session.begin():
        change = session.scalars(
            sa.select(AuditEntry).where(AuditEntry.action == "user.role_changed")
        ).one()
    assert change.actor == f"user:{olga}"
    assert json.loads(change.data)["approval"] == {
        "id": asked.approval.id,
        "approved_by": f"user:{otto}",
    }
    # Taking the role back, or making an auditor, applies at once.
    demoted = accounts.request_role_change(session, otto, pat, "auditor")
    assert demoted.approval is None and demoted.done is not None
    assert demoted.done.role == "auditor"


def test_a_player_with_a_round_open_is_made_staff_only_once_it_is_finished(
    four_eyes: Session,
) -> None:
    session = four_eyes
    olga, otto, pat = _people(session)
    proposed_before = accounts.request_role_change(session, olga, pat, "operator").approval
    assert proposed_before is not None
    for _ in range(400):  # a tie comes once in about 13.5 rounds
        tie = rounds.place_casino_war_bet(session, pat, 100)
        if tie.status == "awaiting_decision":
            break
    assert tie.status == "awaiting_decision"
    why = f"pat has round {tie.id} open: staff cannot play, so it is finished first"
    for change in (
        lambda: accounts.request_role_change(session, olga, pat, "auditor"),
        lambda: accounts.propose_operator(session, olga, pat, idempotency_key="second"),
        lambda: approvals.decide(session, otto, proposed_before.id, True),
    ):
        with pytest.raises(Conflict) as refused:
            change()
        assert refused.value.message % refused.value.params == why
    assert accounts.get_user(session, pat).role == "player"
    rounds.decide_casino_war(session, pat, tie.id, "surrender")
    approvals.decide(session, otto, proposed_before.id, True)
    assert accounts.get_user(session, pat).role == "operator"


def _alerts(session: Session) -> list[alerts.AlertView]:
    return alerts.listing(session).alerts


def test_adjustments_over_a_threshold_raise_one_alert_kept_in_the_log(app: Flask) -> None:
    session = app.extensions["sota_casino.sessionmaker"]()
    olga, otto, pat = _people(session)
    rule = alerts.create_rule(session, olga, "player_adjustments", "chips", 30_000, 24)
    by_operator = alerts.create_rule(session, olga, "operator_adjustments", "chips", 50_000, 24)
    for _ in range(3):
        money.adjust(session, otto, pat, "chips", 10_000, "small credit")
    assert _alerts(session) == []  # 30,000 is not above 30,000
    money.adjust(session, otto, pat, "chips", -1, "rounding")  # a debit counts too
    money.adjust(session, otto, pat, "chips", 10_000, "small credit")
    raised = _alerts(session)
    assert [a.rule_id for a in raised] == [rule.id]  # once, when the total went over
    assert raised[0].subject == f"user:{pat}"
    # The message is kept as its id and params, in no language: each reader sees their own.
    assert (raised[0].message, raised[0].params) == (
        alerts.ADJUSTMENTS_TO,
        {"name": "pat", "total": 30_001, "currency": "chips", "hours": 24, "threshold": 30_000},
    )
    for _ in range(2):
        money.adjust(session, otto, pat, "chips", 10_000, "small credit")
    raised = _alerts(session)
    assert [a.rule_id for a in raised] == [by_operator.id, rule.id]
    assert raised[0].message == alerts.ADJUSTMENTS_BY and raised[0].params is not None
    assert (raised[0].params["name"], raised[0].params["total"]) == ("otto", 50_001)
    with session.begin():
        logged = session.scalars(
            sa.select(AuditEntry).where(AuditEntry.action == "alert.raised").order_by("seq")
        ).all()
    assert [json.loads(e.data)["rule_id"] for e in logged] == [rule.id, by_operator.id]
    assert json.loads(logged[-1].data)["message"] == alerts.ADJUSTMENTS_BY
    assert json.loads(logged[-1].data)["params"] == raised[0].params
    assert raised[0].audit_seq == logged[-1].seq
    session.close()


def test_an_adjustment_alert_counts_the_adjustments_of_its_own_currency(app: Flask) -> None:
    """The alert's count of adjustments is of the ones its total adds up, not of every currency's
    adjustments in the period."""
    session = app.extensions["sota_casino.sessionmaker"]()
    olga, otto, pat = _people(session)
    alerts.create_rule(session, olga, "player_adjustments", "chips", 1_000, 24)
    money.adjust(session, otto, pat, "sweets", 5, "a sweets credit")
    money.adjust(session, otto, pat, "chips", 600, "a chips credit")
    money.adjust(session, otto, pat, "chips", -600, "taken back")
    raised = _alerts(session)
    assert len(raised) == 1
    assert raised[0].data == {"total": 1_200, "currency": "chips", "adjustments": 2}
    session.close()


def test_an_approved_debit_the_balance_no_longer_covers_is_refused_in_the_operator_s_words(
    four_eyes: Session,
) -> None:
    """A debit proposed while the player held enough, approved once they hold less, is refused
    saying what the player holds (not "your balance", a player's words), and nothing of the
    decision stays: no entry, no posting, the proposal still pending."""
    session = four_eyes
    olga, otto, pat = _people(session)
    proposal = money.propose_adjustment(session, olga, pat, "sweets", -100, "clawback")
    money.adjust(session, otto, pat, "sweets", -50, "spent meanwhile")
    size = len(_actions(session))
    with pytest.raises(InsufficientFunds) as refused:
        approvals.decide(session, otto, proposal.id, True)
    assert str(refused.value) == (
        "the player holds 50 sweets (minor units); a debit of 100 would make it negative"
    )
    assert len(_actions(session)) == size
    assert approvals.one(session, proposal.id).status == "pending"
    assert money.balances(session, pat).sweets == 50


def test_an_adjustment_approved_after_its_player_was_made_staff_moves_nothing(
    four_eyes: Session,
) -> None:
    """Staff hold no play money: a credit proposed to a player who was made an auditor before
    it was approved is refused as adjusting staff is, and leaves their chips untouched."""
    session = four_eyes
    olga, otto, pat = _people(session)
    proposal = money.propose_adjustment(session, olga, pat, "chips", 250_000, "jackpot refund")
    accounts.set_role(session, otto, pat, "auditor")
    held = money.balances(session, pat).chips
    size = len(_actions(session))
    with pytest.raises(NotFound):
        approvals.decide(session, otto, proposal.id, True)
    assert money.balances(session, pat).chips == held
    assert len(_actions(session)) == size
    assert approvals.one(session, proposal.id).status == "pending"
    assert approvals.decide(session, otto, proposal.id, False).status == "rejected"


@pytest.mark.parametrize("stopped", ["made an auditor", "made a player", "locked"])
def test_a_proposal_whose_proposer_stopped_being_an_operator_waits_and_changes_nothing(
    four_eyes: Session, stopped: str
) -> None:
    """Four eyes are two operators': once the proposer is no operator (made an auditor or a
    player, or locked out), approving any of their proposals is refused naming them, and nothing
    of the decision is kept: the money, the table and the role stay, no entry is written, the
    proposal still waits. A second operator rejects it, and it applies again once its proposer
    is an operator again."""
    session = four_eyes
    olga, otto, pat = _people(session)
    amy = accounts.register(session, "amy", PASSWORD, address="127.0.0.1").id
    credit = money.propose_adjustment(session, olga, pat, "chips", 250_000, "jackpot refund")
    table = settings.propose_table_change(session, olga, "casino_war", {"decks": 4})
    role = accounts.propose_operator(session, olga, amy)
    if stopped == "locked":
        accounts.set_locked(session, otto, olga, True)
    else:
        accounts.set_role(session, otto, olga, stopped.split()[-1])
    held = money.balances(session, pat).chips
    decks = settings.table_rules(session, "casino_war")["decks"]
    size = len(_actions(session))
    for proposal in (credit, table, role):
        with pytest.raises(Conflict) as refused:
            approvals.decide(session, otto, proposal.id, True, "seen")
        assert str(refused.value) == (
            "olga, who proposed this change, is no operator now: it cannot be approved; "
            "reject it, or wait until olga is an operator again"
        )
        assert refused.value.code == "proposer_not_operator"
        assert approvals.one(session, proposal.id).status == "pending"
    assert money.balances(session, pat).chips == held
    assert settings.table_rules(session, "casino_war")["decks"] == decks
    assert accounts.get_user(session, amy).role == "player"
    assert len(_actions(session)) == size

    assert approvals.decide(session, otto, role.id, False, "olga left").status == "rejected"
    if stopped == "locked":
        accounts.set_locked(session, otto, olga, False)
    else:
        again = accounts.propose_operator(session, otto, olga)
        oona = accounts.create_operator(session, "oona", PASSWORD).id
        approvals.decide(session, oona, again.id, True)
    assert approvals.decide(session, otto, credit.id, True).status == "approved"
    assert money.balances(session, pat).chips == held + 250_000


def test_a_debit_over_the_balance_is_refused_in_the_operator_s_words(app: Flask) -> None:
    session = app.extensions["sota_casino.sessionmaker"]()
    olga, _otto, pat = _people(session)
    with pytest.raises(InsufficientFunds) as refused:
        money.adjust(session, olga, pat, "sweets", -101, "too much")
    assert str(refused.value) == (
        "the player holds 100 sweets (minor units); a debit of 101 would make it negative"
    )
    session.close()


#: The rounds are written as rows alone, without the entries play logs: the log misses them.
@pytest.mark.tampers
def test_large_wins_and_failed_checks_are_found_by_the_standing_checks(app: Flask) -> None:
    session = app.extensions["sota_casino.sessionmaker"]()
    olga, _otto, pat = _people(session)
    rule = alerts.create_rule(session, olga, "large_win", "chips", 900, 24)
    failed = alerts.create_rule(session, olga, "check_failed", None, 0, 24)
    now = datetime.now(UTC)
    with session.begin():  # settled rounds as play leaves them: a big win and a small one
        pair = session.execute(sa.text("SELECT id FROM seed_pairs LIMIT 1")).scalar_one()
        for net in (1_000, 500):
            session.add(
                Round(
                    user_id=pat,
                    game="casino_war",
                    table_name="main",
                    status="settled",
                    seed_pair_id=pair,
                    nonce=net,
                    currency="chips",
                    rules={},
                    stakes={},
                    staked=500,
                    payout=500 + net,
                    net=net,
                    settled_at=now,
                    settled_on=now.date(),
                )
            )
        session.add(
            CheckRun(name="ledger", ok=False, size=3, reason="posting 3 is off", checked_at=now)
        )
    assert alerts.scan(session) == 2
    assert alerts.scan(session) == 0  # neither is raised twice
    raised = _alerts(session)
    assert {a.rule_id for a in raised} == {rule.id, failed.id}
    win = next(a for a in raised if a.rule_id == rule.id)
    with session.begin():
        won = session.scalars(sa.select(Round.id).where(Round.net == 1_000)).one()
    assert win.subject == f"round:{won}"
    assert (win.message, win.params) == (
        alerts.WON,
        {"name": "pat", "net": 1_000, "currency": "chips", "game": "Casino War", "round": won},
    )
    check = next(a for a in raised if a.rule_id == failed.id)
    assert (check.message, check.params) == (
        alerts.CHECK_FAILED_BECAUSE["ledger"],
        {"reason": "posting 3 is off"},
    )
    acknowledged = alerts.acknowledge(session, olga, win.id)
    assert acknowledged.acknowledged_by.name == "olga"
    assert alerts.open_count(session) == 1
    session.close()


def test_every_list_pages_both_ways_jumps_and_exports_whole(session: Session) -> None:
    names = [f"user{n:02}" for n in range(7)]
    ids = [
        accounts.register(session, n, PASSWORD, address=f"10.0.0.{i}").id
        for i, n in enumerate(names)
    ]
    first = lists.page(session, "users", lists.Paging(limit=3), q="user")
    assert [u["id"] for u in first.users] == ids[::-1][:3]
    second = lists.page(session, "users", lists.Paging(cursor=first.next_cursor, limit=3), q="user")
    assert [u["id"] for u in second.users] == ids[::-1][3:6]
    oldest = lists.page(
        session, "users", lists.Paging(order="oldest", from_id=ids[2], limit=2), q="user"
    )
    assert [u["id"] for u in oldest.users] == ids[2:4]
    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert lists.page(session, "users", lists.Paging(since=future), q="user").users == []
    with pytest.raises(InvalidInput):
        lists.page(session, "users", lists.Paging(until="yesterday"))

    player = ids[0]
    operator = accounts.create_operator(session, "olga", PASSWORD).id
    for n in range(5):
        money.adjust(session, operator, player, "sweets", n + 1, f"credit {n}")
    moves = lists.page(session, "transfers", lists.Paging(limit=2), user_id=player)
    assert [t["amount"] for t in moves.transfers] == [5, 4]
    exported = list(lists.iter_all(session, "transfers", lists.Paging(), user_id=player))
    assert [t["amount"] for t in exported if t["kind"] == "adjust"] == [1, 2, 3, 4, 5]
    assert exported[0]["kind"] == "grant"
    seeds = lists.page(session, "seed_pairs", lists.Paging(), user_id=player)
    assert [s["status"] for s in seeds.seed_pairs] == ["active"]


#: Times every ISO 8601 reader takes, whose UTC is before year 1 or past 9999, or before 1000.
BEFORE_YEAR_1 = "0001-01-01T00:00:00+18:00"
PAST_9999 = "9999-12-31T23:00:00-05:00"
YEAR_913 = "0913-12-02T01:06:00.0Z"


def test_a_time_bound_out_of_every_year_bounds_the_range_as_the_first_or_last_time(
    session: Session,
) -> None:
    """A valid time whose UTC is before year 1 or past 9999 was a 422 (the API's document calls
    it valid), and one before year 1000 filtered the log as text written without its leading
    zero ("913-…" sorts after "2026-…"): a since of year 913 hid every entry."""
    player = accounts.register(session, "timeless", PASSWORD, address="10.0.0.9").id
    log = [e["seq"] for e in audit.entries(session, limit=200).entries]
    assert log
    every = {"since": YEAR_913, "until": PAST_9999}
    none_ = ({"until": BEFORE_YEAR_1}, {"since": PAST_9999})
    assert [e["seq"] for e in audit.entries(session, limit=200, **every).entries] == log
    assert [e["seq"] for e in audit.entries(session, limit=200, since=BEFORE_YEAR_1).entries] == log
    for bounds in none_:
        assert audit.entries(session, **bounds).entries == []
        with pytest.raises(NotFound):
            audit.export_range(session, **bounds)
    first, last, _ = audit.export_range(session, **every)
    assert (first, last) == (min(log), max(log))

    users = lists.page(session, "users", lists.Paging(**every), q="timeless").users
    assert [u["id"] for u in users] == [player]
    for bounds in none_:
        assert lists.page(session, "users", lists.Paging(**bounds), q="timeless").users == []
    with pytest.raises(InvalidInput, match="until must be an ISO 8601 time or date"):
        audit.entries(session, until="0001-01-01T00:00:00+24:00")


def _range_export(session: Session, **bounds: Any) -> str:
    first, last, proof = audit.export_range(session, **bounds)
    return "".join(audit.iter_range_export(session, first, last, proof))


def _verify(tmp_path: Path, text: str, key: str) -> tuple[int, str]:
    path = tmp_path / "range.jsonl"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    code = verify_main(["audit", str(path), "--public-key", key], out)
    return code, out.getvalue()


@pytest.mark.tampers
def test_a_range_export_verifies_on_its_own_and_a_tampered_one_fails(
    session: Session, tmp_path: Path
) -> None:
    with session.begin():
        for n in range(40):
            audit.record(session, actor="system", action="test.filler", data={"n": n})
    audit.checkpoint(session)  # over 40 entries (and records entry 41)
    with session.begin():
        for n in range(5):
            audit.record(session, actor="system", action="test.filler", data={"n": 100 + n})
    key = context_of(session).public_key_hex
    text = _range_export(session, from_seq=11, to_seq=30)
    parsed = audit_chain.parse_export_text(text)
    assert [e["seq"] for e in parsed.entries] == list(range(11, 31))
    assert len(parsed.checkpoints) == 1 and parsed.proofs[0]["seq"] == 30
    code, output = _verify(tmp_path, text, key)
    assert code == 0, output
    assert "entries 11..30 linked" in output

    # An entry changed: its hash no longer matches.
    lines = text.splitlines(keepends=True)
    edited = json.loads(lines[4])
    edited["data"] = {"n": 999}
    changed = [*lines[:4], json.dumps(edited) + "\n", *lines[5:]]
    code, output = _verify(tmp_path, "".join(changed), key)
    assert code != 0 and "entry 15" in output

    # The chain rewritten from that entry on: it links, but no longer proves into the checkpoint.
    entries = [json.loads(line) for line in lines if '"kind":"entry"' in line]
    entries[4]["data"] = {"n": 999}
    relinked = audit_chain.link_entries(
        [{k: e[k] for k in audit_chain.ENTRY_KEYS} for e in entries], entries[0]["prev_hash"]
    )
    rest = [line for line in lines if '"kind":"entry"' not in line]
    forged = "".join(audit_chain.export_lines(relinked, ())) + "".join(rest)
    code, output = _verify(tmp_path, forged, key)
    assert code != 0 and "no inclusion proof leads" in output

    # A range past the last checkpoint is linked but said to be uncovered.
    code, output = _verify(tmp_path, _range_export(session, from_seq=42), key)
    assert code == 0 and "not covered by a checkpoint" in output


def test_free_text_is_searched_a_window_at_a_time_and_the_page_says_where_it_goes_on(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    with session.begin():
        for n in range(30):
            word = "needle" if n in (3, 24) else "hay"
            audit.record(session, actor="system", action="test.filler", data={"w": word})
    monkeypatch.setattr(audit, "TEXT_WINDOW", 10)
    found, cursor, pages = [], None, 0
    while True:
        page = audit.entries(session, text="needle", before_seq=cursor)
        found += [e["seq"] for e in page.entries]
        pages += 1
        cursor = page.next_before_seq
        if cursor is None:
            break
    assert found == [25, 4] and pages == 3  # each page read at most 10 entries
    beyond = audit.entries(session, text="needle", before_seq=10**12)
    assert [e["seq"] for e in beyond.entries] == [25] and beyond.next_before_seq == 21
    oldest = audit.entries(session, text="needle", order="oldest")
    assert [e["seq"] for e in oldest.entries] == [4] and oldest.next_after_seq == 10


def test_free_text_finds_words_with_underscores_and_percent_signs_as_typed(
    session: Session,
) -> None:
    """The log's own words hold underscores (``client_seed``, ``seed_pair.rotated``): free text
    finds them as typed, and an underscore or a percent sign matches only itself."""
    with session.begin():
        for data in ({"client_seed": "abc"}, {"clientseed": "abc"}, {"note": "50% off"}):
            audit.record(session, actor="system", action="test.filler", data=data)

    def found(text: str) -> list[str]:
        page = audit.entries(session, text=text, order="oldest")
        return [json.dumps(e["data"], sort_keys=True) for e in page.entries]

    assert found("client_seed") == ['{"client_seed": "abc"}']
    assert found("50%") == ['{"note": "50% off"}']
    assert found("test_filler") == []


def test_free_text_ignores_letter_case_alike_on_both_databases(session: Session) -> None:
    """A search box finds a word however its letters are capitalised, in the log's data and in
    its action, subject and actor, for the letters of every language the console speaks (ä, ø,
    ç), and still takes an underscore and a percent sign as themselves."""
    notes = ("Jackpot Refund", "ÄÄNESTYS", "Ærlig gevinst", "ação Especial", "100% Bonus_A")
    with session.begin():
        for note in notes:
            audit.record(session, actor="system", action="test.Filler", data={"note": note})
        audit.record(session, actor="system", action="test.filler", subject="Table:X", data={})

    def found(text: str) -> list[str]:
        page = audit.entries(session, text=text, order="oldest")
        return [e["data"].get("note", e["subject"]) for e in page.entries]

    assert found("jackpot refund") == found("JACKPOT REFUND") == ["Jackpot Refund"]
    assert found("äänestys") == found("ÄäNeStYs") == ["ÄÄNESTYS"]
    assert found("ærlig") == found("ÆRLIG") == ["Ærlig gevinst"]
    assert found("AÇÃO") == ["ação Especial"]
    assert found("% BONUS_a") == ["100% Bonus_A"]
    assert found("% bonusXa") == found("100 %") == []
    assert found("TABLE:x") == ["Table:X"]
    assert len(found("TEST.FILLER")) == len(notes) + 1  # the action, whatever its case


@pytest.mark.parametrize(
    "cursor", [{"after_seq": MAX_ID - 1}, {"from_seq": MAX_ID, "order": "oldest"}]
)
def test_a_free_text_search_from_the_largest_id_on_is_an_empty_page(
    session: Session, cursor: dict[str, Any]
) -> None:
    """The window past a cursor near the largest id must not overflow the database's integer
    (found by the stateful API run: a 500)."""
    with session.begin():
        audit.record(session, actor="system", action="test.filler", data={"w": "needle"})
    page = audit.entries(session, text="needle", **cursor)
    assert page.entries == [] and page.next_after_seq is None


def test_a_rule_made_after_the_total_went_over_raises_at_the_next_adjustment_once_a_period(
    app: Flask,
) -> None:
    """A rule raised its alert only when an adjustment carried the total across its threshold:
    one made after an operator's total was already over stayed silent for the whole period."""
    session = app.extensions["sota_casino.sessionmaker"]()
    olga, otto, pat = _people(session)
    money.adjust(session, otto, pat, "chips", 1_250, "before the rule")
    rule = alerts.create_rule(session, olga, "operator_adjustments", "chips", 1_000, 24)
    assert _alerts(session) == []  # nothing moved since the rule was made
    money.adjust(session, otto, pat, "chips", 100, "after the rule")
    raised = _alerts(session)
    assert [(a.rule_id, a.subject) for a in raised] == [(rule.id, f"user:{otto}")]
    assert raised[0].params is not None and raised[0].params["total"] == 1_350
    money.adjust(session, otto, pat, "chips", 100, "again")
    assert len(_alerts(session)) == 1  # once a period
    session.close()


def test_a_large_win_rule_looks_at_rounds_settled_from_its_making_on(app: Flask) -> None:
    """A new rule's first scan looked five minutes back, raising alerts for wins settled before
    the rule existed."""
    session = app.extensions["sota_casino.sessionmaker"]()
    olga, _otto, pat = _people(session)

    def a_win() -> int:
        while True:
            played = rounds.place_casino_war_bet(session, pat, 1_000)
            if played.status != "settled":
                played = rounds.decide_casino_war(session, pat, played.id, "war")
            if played.net is not None and played.net > 0:
                return played.id

    before = a_win()
    rule = alerts.create_rule(session, olga, "large_win", "chips", 1, 24)
    after = a_win()
    alerts.scan(session)
    assert [(a.rule_id, a.subject) for a in _alerts(session)] == [(rule.id, f"round:{after}")]
    assert before != after
    session.close()


def test_a_debit_the_balance_does_not_cover_is_refused_as_such_before_asking_for_approval(
    four_eyes: Session,
) -> None:
    """A 2,000-chip debit of a player holding 1,000 was refused with "needs the approval of
    another operator: propose it", and the proposal then with insufficient funds."""
    session = four_eyes
    _olga, otto, pat = _people(session)
    size = len(_actions(session))
    with pytest.raises(InsufficientFunds):
        money.adjust(session, otto, pat, "chips", -200_000, "clawback")
    assert len(_actions(session)) == size
    assert money.balances(session, pat).chips == 100_000
