"""The standing checks and the stored tree: verdicts kept in the database and extended from
where they stopped, proofs read from O(log n) stored nodes, whole checks and exports in flat
memory, settled rounds fixed and reconciled with their postings."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from sota_casino import migrate
from sota_casino.core import merkle
from sota_casino.models import Account
from sota_casino.models import AuditEntry
from sota_casino.models import CheckRun
from sota_casino.models import LedgerCheckSum
from sota_casino.models import Posting
from sota_casino.models import Round
from sota_casino.services import audit
from sota_casino.services import checks
from sota_casino.services import ledger
from sota_casino.services import rounds


def _append(session: Session, count: int) -> None:
    """Append ``count`` entries in one transaction (a log of a known size, quickly): in one
    call, as a use case writes its entries, chained and checkpointed as one at a time are."""
    with session.begin():
        audit.record_all(
            session, [audit.EntrySpec("system", "test.filler", data={"n": n}) for n in range(count)]
        )


def _leaves(session: Session) -> list[bytes]:
    with session.begin():
        return [
            bytes.fromhex(h) for h in session.scalars(sa.select(AuditEntry.hash).order_by("seq"))
        ]


def _size(session: Session) -> int:
    with session.begin():
        return audit.log_size(session)


@contextmanager
def _statements(session: Session) -> Iterator[list[str]]:
    seen: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    engine = session.get_bind()
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_proofs_from_the_stored_tree_are_the_trees_own_and_read_a_few_rows(
    session: Session,
) -> None:
    _append(session, 700)
    audit.checkpoint(session)  # over 700 entries (and appends its own entry)
    _append(session, 300)
    assert audit.extend_tree(session) == 1000 >> 6 << 6  # whole blocks only
    whole = merkle.MerkleTree(_leaves(session))
    for seq in (1, 64, 65, 400, 700):
        proof = audit.inclusion_proof(session, seq)
        assert [bytes.fromhex(h) for h in proof.proof] == whole.inclusion_proof(seq - 1, 700)
    for old, new in ((1, 1001), (64, 700), (333, 999), (1001, 1001)):
        found = audit.consistency_proof(session, old, new)
        assert found.old_root == whole.root(old).hex()
        assert found.new_root == whole.root(new).hex()
        assert [bytes.fromhex(h) for h in found.proof] == whole.consistency_proof(old, new)
    with _statements(session) as seen:
        audit.inclusion_proof(session, 400)
    # The checkpoint, the entry, the nodes in one query and the leaf's block: not every leaf.
    assert len([s for s in seen if s.lstrip().upper().startswith("SELECT")]) <= 6


def test_a_proof_over_entries_the_stored_tree_has_not_reached_is_still_right(
    session: Session,
) -> None:
    _append(session, 150)
    audit.extend_tree(session)  # 128 covered
    _append(session, 200)
    size = audit.checkpoint(session)["document"]["size"]
    assert size == 350
    whole = merkle.MerkleTree(_leaves(session))
    proof = audit.inclusion_proof(session, 300)
    assert [bytes.fromhex(h) for h in proof.proof] == whole.inclusion_proof(299, size)


@pytest.mark.tampers
def test_a_stored_node_that_went_wrong_gives_a_clear_refusal_not_a_false_proof(
    session: Session,
) -> None:
    _append(session, 130)
    audit.checkpoint(session)
    audit.extend_tree(session)
    with session.begin():
        session.execute(
            sa.text("UPDATE audit_tree_nodes SET hash = :h WHERE height = 6 AND idx = 0"),
            {"h": "00" * 32},
        )
    with pytest.raises(Exception, match="does not prove into the checkpoint"):
        audit.inclusion_proof(session, 100)


def _peak(work: Callable[[], None]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_whole_check_and_the_export_stream_in_flat_memory(session: Session) -> None:
    peaks = []
    for size in (2_500, 10_000):
        _append(session, size - _size(session))
        audit.checkpoint(session)
        lines = 0

        def export() -> None:
            nonlocal lines
            lines = sum(1 for _ in audit.iter_export(session))

        check_peak = _peak(lambda: audit.check_chain(session))
        export_peak = _peak(export)
        assert lines >= size
        peaks.append((check_peak, export_peak))
    (small_check, small_export), (large_check, large_export) = peaks
    # Four times the log, about the same memory: a chunk's worth, not the log's.
    assert large_check < small_check * 1.5 + 200_000, peaks
    assert large_export < small_export * 1.5 + 200_000, peaks
    assert max(large_check, large_export) < 12_000_000, peaks


def test_the_standing_checks_store_their_verdict_and_extend_it(
    session: Session, register: Callable[..., int]
) -> None:
    player = register("ann")
    assert checks.verdict(session, "audit").ok is None  # never run yet
    first = checks.run(session, "audit", "runner-a")
    assert first.ran and first.whole and first.verdict.ok
    rounds.place_casino_war_bet(session, player, 100)
    later = checks.run(session, "audit", "runner-a")
    assert not later.whole and later.verdict.ok
    assert later.verdict.size == _size(session)
    assert later.verdict.whole_at == first.verdict.whole_at
    assert later.verdict.findings["checked"] == later.verdict.size - first.verdict.size

    ledger_first = checks.run(session, "ledger", "runner-a")
    assert ledger_first.whole and ledger_first.verdict.ok
    rounds.place_casino_war_bet(session, player, 100)
    ledger_later = checks.run(session, "ledger", "runner-a")
    assert not ledger_later.whole and ledger_later.verdict.ok
    assert ledger_later.verdict.size > ledger_first.verdict.size


def _ledger_state(session: Session) -> dict[str, Any]:
    with session.begin():
        state = session.scalar(sa.select(CheckRun.state).where(CheckRun.name == "ledger"))
    assert isinstance(state, dict)
    return state


def _kept_and_posted(session: Session) -> tuple[dict[int, int], dict[int, int]]:
    """The sums the ledger check keeps, and what every account's postings sum to."""
    with session.begin():
        kept = session.execute(sa.select(LedgerCheckSum.account_id, LedgerCheckSum.posted))
        posted = session.execute(
            sa.select(Posting.account_id, sa.func.sum(Posting.amount)).group_by(Posting.account_id)
        )
        return dict(kept.tuples().all()), {a: int(s) for a, s in posted.tuples().all() if s}


def test_a_ledger_step_stores_a_few_numbers_however_many_accounts(
    session: Session, register: Callable[..., int]
) -> None:
    """A step resumes from every account's sum of postings. Kept in the check's state, they were
    all written again at each step (7 MB at 400,000 accounts, every 30 s); kept in a table of
    their own, a step writes the rows of the accounts whose sums moved."""
    player = register("ann")
    assert checks.run(session, "ledger", "runner-a").whole
    before = _ledger_state(session)
    for name in ("bob", "cat", "dan", "eve", "fay"):
        register(name)
    rounds.place_casino_war_bet(session, player, 100)
    step = checks.run(session, "ledger", "runner-a")
    assert step.ran and not step.whole and step.verdict.ok
    after = _ledger_state(session)
    assert set(after) == set(before) == {"posting_id", "transfer_id", "day"}
    assert after["posting_id"] > before["posting_id"]
    kept, posted = _kept_and_posted(session)
    assert kept == posted and len(kept) > 6
    # A whole check keeps the same sums, written anew.
    assert checks.run(session, "ledger", "runner-a", whole=True).verdict.ok
    assert _kept_and_posted(session) == (posted, posted)


@pytest.mark.tampers
def test_a_ledger_step_names_a_balance_changed_without_a_posting_since_the_last(
    session: Session, register: Callable[..., int]
) -> None:
    player = register("ann")
    register("bob")
    assert checks.run(session, "ledger", "runner-a").verdict.ok
    rounds.place_casino_war_bet(session, player, 100)
    with session.begin():
        session.execute(
            sa.update(Account).where(Account.name == "player:2:sweets").values(balance=99)
        )
    state = ledger.LedgerState.from_json(_ledger_state(session))
    step = ledger.check(session, state)
    assert step.problems == ["account player:2:sweets holds 99 but its postings sum to 100"]
    verdict = checks.run(session, "ledger", "runner-a").verdict
    assert not verdict.ok and verdict.reason == step.problems[0]


@pytest.mark.tampers
def test_the_ledger_check_names_an_escrow_that_differs_from_its_open_rounds(
    session: Session, register: Callable[..., int]
) -> None:
    player = register("ann")
    while (played := rounds.place_casino_war_bet(session, player, 100)).status == "settled":
        pass  # a tie leaves the round open, its stake in escrow
    assert ledger.check(session).ok
    with session.begin():
        session.execute(
            sa.update(Round).where(Round.id == played.id).values(staked=Round.staked + 100)
        )
    differ = f"player {player}'s chips escrow holds 100 but open rounds staked 200"
    assert differ in ledger.check(session).problems
    assert not checks.run(session, "ledger", "runner-a").verdict.ok
    assert differ in checks.ledger_verdict(session).problems


def test_one_runner_at_a_time_holds_a_check(session: Session) -> None:
    assert checks._take_lease(session, "audit", "runner-a")
    held = checks.run(session, "audit", "runner-b")
    assert not held.ran and held.verdict.running
    checks._store(session, "audit", "runner-a", lease_owner=None, lease_until=None)
    assert checks.run(session, "audit", "runner-b").ran


def test_a_whole_check_asked_for_runs_next_and_is_audited(session: Session) -> None:
    checks.run(session, "audit", "runner-a")
    asked = checks.request_whole(session, "audit", actor="user:1")
    assert asked.requested and asked.requested_by == "user:1"
    step = checks.run(session, "audit", "runner-a")
    assert step.whole and step.verdict.ok and not step.verdict.requested
    assert audit.entries(session, action="check.requested").entries[0]["actor"] == "user:1"


# --- settled rounds -------------------------------------------------------------------------


@pytest.fixture
def without_round_triggers(session: Session, db_url: str) -> Iterator[Callable[[], None]]:
    """Drop the settled-round triggers as an attacker with DDL rights would; rebuild after."""

    def drop() -> None:
        with session.begin():
            if session.get_bind().dialect.name == "postgresql":
                session.execute(sa.text("DROP TRIGGER rounds_settled_fixed ON rounds"))
            else:
                for event_name in ("update", "delete"):
                    session.execute(sa.text(f"DROP TRIGGER rounds_settled_no_{event_name}"))

    yield drop
    session.close()
    if db_url.startswith("postgresql"):
        migrate.downgrade(db_url, "base")
        migrate.upgrade(db_url)


def _settled_round(session: Session, register: Callable[..., int]) -> int:
    player = register("ann")
    while True:
        played = rounds.place_casino_war_bet(session, player, 100)
        if played.status == "settled":
            return int(played.id)
        rounds.decide_casino_war(session, player, played.id, "surrender")


def test_a_settled_round_refuses_changes_and_deletion(
    session: Session, register: Callable[..., int]
) -> None:
    round_id = _settled_round(session, register)
    for statement in (
        f"UPDATE rounds SET net = net + 1 WHERE id = {round_id}",
        f"DELETE FROM rounds WHERE id = {round_id}",
    ):
        with pytest.raises(DBAPIError, match="rounds are fixed once settled"):
            with session.begin():
                session.connection().exec_driver_sql(statement)
    with session.begin():
        assert session.get(Round, round_id, populate_existing=True) is not None


@pytest.mark.tampers
def test_the_ledger_check_names_a_round_whose_row_disagrees_with_its_postings(
    session: Session, register: Callable[..., int], without_round_triggers: Callable[[], None]
) -> None:
    round_id = _settled_round(session, register)
    assert ledger.check(session).ok
    assert checks.run(session, "ledger", "runner-a").verdict.ok
    without_round_triggers()
    with session.begin():
        session.connection().exec_driver_sql(
            f"UPDATE rounds SET net = net + 500 WHERE id = {round_id}"
        )
    report = ledger.check(session)
    assert not report.ok
    assert any(p.startswith(f"round {round_id} (casino_war) says net") for p in report.problems)
    whole = checks.run(session, "ledger", "runner-a", whole=True).verdict
    assert not whole.ok and whole.reason.startswith(f"round {round_id} ")
