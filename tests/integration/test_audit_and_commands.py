"""The audit log and the operator commands: tampering is caught, postings cannot change,
``flask ledger check``/``audit verify``/``audit export``/``create-operator``/``keys show`` work."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy.orm import Session

from sota_casino import migrate
from sota_casino.core import audit_chain
from sota_casino.core import merkle
from sota_casino.core.errors import Conflict
from sota_casino.models import AuditCheckpoint
from sota_casino.models import AuditEntry
from sota_casino.services import audit
from sota_casino.services import fairness as fairness_service
from sota_casino.services import rounds


@pytest.fixture
def drop_append_only_triggers(session: Session, db_url: str) -> Iterator[Callable[[], None]]:
    """Drop the triggers as an attacker with DDL rights would; rebuild the schema after."""
    yield lambda: _drop_triggers(session)
    session.close()
    if db_url.startswith("postgresql"):  # the run's database is shared by later tests
        migrate.downgrade(db_url, "base")
        migrate.upgrade(db_url)


def _drop_triggers(session: Session) -> None:
    with session.begin():
        if session.get_bind().dialect.name == "postgresql":
            for table in ("postings", "audit_entries"):
                session.execute(sa.text(f"DROP TRIGGER {table}_append_only ON {table}"))
        else:
            for table in ("postings", "audit_entries"):
                for event in ("update", "delete"):
                    session.execute(sa.text(f"DROP TRIGGER {table}_no_{event}"))


def _play_some(session: Session, register: Callable) -> None:
    for name in ("ann", "bob"):
        user = register(name)
        for _ in range(3):
            played = rounds.place_casino_war_bet(session, user, 100)
            if played["status"] != "settled":
                rounds.decide_casino_war(session, user, played["id"], "war")


def _cli(app: Flask, *args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return app.test_cli_runner().invoke(args=list(args), input=input)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE postings SET amount = amount + 1",
        "DELETE FROM postings",
        "UPDATE audit_entries SET action = 'x'",
        "DELETE FROM audit_entries",
    ],
)
def test_postings_and_audit_entries_refuse_update_and_delete(
    session: Session, register: Callable, statement: str
) -> None:
    _play_some(session, register)
    with pytest.raises(sa.exc.DBAPIError, match="append-only"):
        with session.begin():
            session.execute(sa.text(statement))


TAMPERING = {
    "edited": ["UPDATE audit_entries SET data = '{\"forged\":1}' WHERE seq = 5"],
    "deleted": ["DELETE FROM audit_entries WHERE seq = 5"],
    "reordered": [
        "UPDATE audit_entries SET seq = -5 WHERE seq = 5",
        "UPDATE audit_entries SET seq = 5 WHERE seq = 6",
        "UPDATE audit_entries SET seq = 6 WHERE seq = -5",
    ],
    "inserted": [
        "UPDATE audit_entries SET seq = seq + 1000 WHERE seq >= 5",
        "UPDATE audit_entries SET seq = seq - 999 WHERE seq >= 1005",
        "INSERT INTO audit_entries (seq, time, actor, action, subject, data, prev_hash, hash) "
        "SELECT 5, time, actor, 'money.adjust', subject, '{}', prev_hash, hash "
        "FROM audit_entries WHERE seq = 4",
    ],
}


@pytest.mark.tampers
@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_audit_verify_names_the_first_tampered_entry(
    app: Flask,
    session: Session,
    register: Callable,
    drop_append_only_triggers: Callable[[], None],
    how: str,
) -> None:
    _play_some(session, register)
    ok = _cli(app, "audit", "verify")
    assert ok.exit_code == 0 and "audit log ok" in ok.output
    drop_append_only_triggers()
    with session.begin():
        for statement in TAMPERING[how]:
            session.connection().exec_driver_sql(statement)
    broken = _cli(app, "audit", "verify")
    assert broken.exit_code == 1
    assert "BROKEN at entry 5" in broken.output


@pytest.mark.tampers
def test_ledger_check_passes_then_reports_a_forged_balance(
    app: Flask, session: Session, register: Callable
) -> None:
    _play_some(session, register)
    good = _cli(app, "ledger", "check")
    assert good.exit_code == 0 and "ledger ok" in good.output
    with session.begin():
        session.execute(
            sa.text("UPDATE accounts SET balance = balance + 7 WHERE name = 'house:chips'")
        )
    bad = _cli(app, "ledger", "check")
    assert bad.exit_code == 1
    assert "account house:chips holds" in bad.output and "postings sum to" in bad.output


def test_checkpoints_cover_the_log_and_prove_inclusion_and_consistency(
    session: Session, register: Callable
) -> None:
    _play_some(session, register)
    first = audit.checkpoint(session)["document"]
    rounds.place_casino_war_bet(session, 1, 100)
    second = audit.checkpoint(session)["document"]
    assert second["size"] > first["size"]
    proof = audit.inclusion_proof(session, 3)
    assert merkle.verify_inclusion(
        2,
        second["size"],
        bytes.fromhex(proof["entry"]["hash"]),
        [bytes.fromhex(h) for h in proof["proof"]],
        bytes.fromhex(second["root"]),
    )
    consistency = audit.consistency_proof(session, first["size"], second["size"])
    assert consistency["old_root"] == first["root"]
    assert merkle.verify_consistency(
        first["size"],
        second["size"],
        bytes.fromhex(first["root"]),
        bytes.fromhex(second["root"]),
        [bytes.fromhex(h) for h in consistency["proof"]],
    )
    assert audit.verify(session)["ok"]


def _all_leaves(session: Session) -> list[bytes]:
    with session.begin():
        hashes = session.scalars(sa.select(AuditEntry.hash).order_by(AuditEntry.seq)).all()
    return [bytes.fromhex(h) for h in hashes]


def test_each_checkpoint_extends_the_last_ones_stored_tree_to_the_root_of_every_entry(
    session: Session, register: Callable
) -> None:
    _play_some(session, register)
    sizes = []
    for _ in range(3):
        signed = audit.checkpoint(session)["document"]
        assert signed["root"] == merkle.root(_all_leaves(session)[: signed["size"]]).hex()
        sizes.append(signed["size"])
        rounds.place_casino_war_bet(session, 1, 100)
    assert sizes == sorted(set(sizes))
    # A checkpoint from before frontiers were stored: the next one hashes its entries once.
    with session.begin():
        session.execute(sa.update(AuditCheckpoint).values(frontier=None))
    signed = audit.checkpoint(session)["document"]
    assert signed["root"] == merkle.root(_all_leaves(session)[: signed["size"]]).hex()
    assert audit.verify(session)["ok"]


def test_a_checkpoint_is_refused_when_the_stored_tree_does_not_match_its_root(
    session: Session, register: Callable
) -> None:
    _play_some(session, register)
    audit.checkpoint(session)
    with session.begin():
        latest = session.scalars(
            sa.select(AuditCheckpoint).order_by(AuditCheckpoint.size.desc())
        ).first()
        assert latest is not None and latest.frontier is not None
        latest.frontier = "00" * (len(latest.frontier) // 2)
    rounds.place_casino_war_bet(session, 1, 100)
    with pytest.raises(Conflict, match="does not match its root; not signing"):
        audit.checkpoint(session)


def test_audit_export_writes_json_lines_that_verify_offline(
    app: Flask, session: Session, register: Callable, tmp_path: Path
) -> None:
    _play_some(session, register)
    audit.checkpoint(session)
    path = tmp_path / "audit.jsonl"
    result = _cli(app, "audit", "export", str(path))
    assert result.exit_code == 0, result.output
    exported = audit_chain.parse_export(path.read_text().splitlines())
    assert audit_chain.verify_chain(exported.entries).ok
    shown = _cli(app, "keys", "show").output
    public = fairness_service.public_key_info(session)["public_key_hex"]
    assert f"Ed25519 public key: {public}" in shown
    assert audit_chain.verify_checkpoints(exported.entries, exported.checkpoints, public).ok


def test_create_operator_reads_the_password_from_standard_input(app: Flask) -> None:
    made = _cli(app, "create-operator", "olga", input="a long enough secret\n")
    assert made.exit_code == 0, made.output
    assert "created operator olga" in made.output
    weak = _cli(app, "create-operator", "oleg", input="short\n")
    assert weak.exit_code != 0 and "password must be" in weak.output
    taken = _cli(app, "create-operator", "olga", input="a long enough secret\n")
    assert taken.exit_code != 0 and "taken" in taken.output
