"""The audit log and the operator commands: tampering is caught, postings cannot change,
``flask ledger check``/``audit verify``/``audit export``/``create-operator``/``keys show``/``db``
work (their outages: test_command_outages.py)."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from bet_signing import bet_signature
from bet_signing import played_rules
from flask import Flask
from log_support import add_forged_checkpoint
from log_support import take_out
from sqlalchemy.orm import Session

from sota_casino import migrate
from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.core import fairness
from sota_casino.core import merkle
from sota_casino.core.errors import Conflict
from sota_casino.core.errors import NotYetAnchored
from sota_casino.core.fairness import new_signing_key
from sota_casino.core.marks import Problem
from sota_casino.models import AuditCheckpoint
from sota_casino.models import AuditEntry
from sota_casino.models import CheckRun
from sota_casino.models import SeedPair
from sota_casino.services import audit
from sota_casino.services import checks
from sota_casino.services import fairness as fairness_service
from sota_casino.services import player_keys
from sota_casino.services import rounds
from sota_casino.services import transparency
from sota_casino.services.results import to_json


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
            if played.status != "settled":
                rounds.decide_casino_war(session, user, played.id, "war")


def _cli(app: Flask, *args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return app.test_cli_runner().invoke(args=list(args), input=input)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE postings SET amount = amount + 1",
        "DELETE FROM postings",
        "UPDATE audit_entries SET action = 'x'",
        "DELETE FROM audit_entries",
        # A transfer says what its postings moved and why: relabelling a payout as an
        # adjustment, or moving it to another player, rewrote the books' story.
        "UPDATE transfers SET kind = 'adjust'",
        "UPDATE transfers SET user_id = NULL",
        "DELETE FROM transfers",
    ],
)
def test_postings_transfers_and_audit_entries_refuse_update_and_delete(
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


def test_the_whole_check_reports_its_progress_chunk_by_chunk(
    session: Session, register: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `flask audit verify` draws its progress bar from: the size reached after each
    chunk, up to the whole log."""
    _play_some(session, register)
    monkeypatch.setattr(audit, "CHUNK", 7)
    reached: list[int] = []
    assert audit.verify(session, progress=reached.append).ok
    size = audit.current_size(session)
    assert size > 3 * 7 and reached == sorted(reached) and reached[-1] == size
    assert len(reached) == size // 7 + 1


class Interrupted(BaseException):
    """What stops a whole check midway: Ctrl-C in `flask checks run --whole`, a worker ended."""


def test_a_whole_check_stopped_midway_stays_asked_for_and_shows_no_progress(
    session: Session, register: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The operator asked for a whole check; the step that took it up was stopped after a
    chunk. The request stands, for the next step to read the whole log, and no progress is
    shown for a check no one runs."""
    _play_some(session, register)
    monkeypatch.setattr(audit, "CHUNK", 7)
    checks.request_whole(session, "audit", actor="user:1")

    def stop(reached: int) -> None:
        raise Interrupted

    with pytest.raises(Interrupted):
        checks.run(session, "audit", "test-runner", progress=stop)
    stopped = checks.verdict(session, "audit")
    assert (stopped.requested, stopped.running) == (True, False)
    assert (stopped.progress, stopped.progress_total) == (None, None)
    step = checks.run(session, "audit", "test-runner")
    assert step.ran and step.whole and step.verdict.ok
    assert not step.verdict.requested


@pytest.mark.tampers
def test_ledger_check_passes_then_reports_a_forged_balance(
    app: Flask, session: Session, register: Callable
) -> None:
    _play_some(session, register)
    good = _cli(app, "ledger", "check")
    assert good.exit_code == 0 and "ledger ok" in good.output
    with session.begin():
        session.execute(
            sa.text("UPDATE accounts SET balance = balance + 7 WHERE name LIKE 'house:chips:%'")
        )
    bad = _cli(app, "ledger", "check")
    assert bad.exit_code == 1
    assert "account house:chips:" in bad.output and "postings sum to" in bad.output


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
        bytes.fromhex(proof.entry["hash"]),
        [bytes.fromhex(h) for h in proof.proof],
        bytes.fromhex(second["root"]),
    )
    consistency = audit.consistency_proof(session, first["size"], second["size"])
    assert consistency.old_root == first["root"]
    assert merkle.verify_consistency(
        first["size"],
        second["size"],
        bytes.fromhex(first["root"]),
        bytes.fromhex(second["root"]),
        [bytes.fromhex(h) for h in consistency.proof],
    )
    assert audit.verify(session).ok


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
    assert audit.verify(session).ok


@pytest.mark.tampers
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
    with session.begin():
        latest = session.scalars(
            sa.select(AuditCheckpoint).order_by(AuditCheckpoint.size.desc())
        ).first()
        assert latest is not None
        latest.frontier = "00"  # not even one root per set bit of the size
    with pytest.raises(Conflict, match="does not match its root; not signing"):
        audit.checkpoint(session)
    with session.begin():
        latest = session.get(AuditCheckpoint, latest.id)
        assert latest is not None
        latest.frontier, latest.root = None, "00" * 32  # signed before frontiers were kept
    with pytest.raises(Conflict, match="first entries no longer match the latest checkpoint"):
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
    public = fairness_service.public_key_info(session).public_key_hex
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


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # PostgreSQL's is the run's
def test_the_db_commands_say_alembics_refusal_in_one_line_and_exit_1(app: Flask) -> None:
    """A failed ``db check`` is a failed check (exit 1, as ``ledger check``'s), and a revision
    Alembic does not know a mistake said in a line: neither is a bug's traceback."""
    assert _cli(app, "db", "check").output == "models and migrations agree\n"
    assert _cli(app, "db", "downgrade", "--", "-1").exit_code == 0
    behind = _cli(app, "db", "check")
    assert (behind.exit_code, behind.output) == (1, "Error: Target database is not up to date.\n")
    unknown = _cli(app, "db", "upgrade", "no-such-revision")
    assert unknown.exit_code == 1 and isinstance(unknown.exception, SystemExit)
    assert unknown.output == "Error: Can't locate revision identified by 'no-such-revision'\n"
    assert _cli(app, "db", "upgrade").output == "database at head\n"
    assert _cli(app, "db", "check").exit_code == 0


def test_a_command_says_the_services_refusal_in_one_line_and_exits_1(app: Flask) -> None:
    """A refusal is no bug: ``audit checkpoint`` on an empty log says why in click's error line,
    as ``create-operator`` does for a taken name, not with a traceback."""
    empty = _cli(app, "audit", "checkpoint")
    assert (empty.exit_code, empty.output) == (
        1,
        "Error: the audit log is empty; nothing to checkpoint\n",
    )
    assert isinstance(empty.exception, SystemExit)


def test_the_checkpoint_command_says_how_many_entries_it_covers(
    app: Flask, register: Callable
) -> None:
    # It printed "checkpoint 9 root …", the 9 unexplained.
    register("alice")
    signed = _cli(app, "audit", "checkpoint")
    assert signed.exit_code == 0, signed.output
    assert re.fullmatch(r"checkpoint over \d+ entries, root [0-9a-f]{64}\n", signed.output)


# --- the operator page's check: the whole log once, then what was appended ---------------------


def _last_seq(session: Session) -> int:
    with session.begin():
        return session.scalar(sa.select(sa.func.max(AuditEntry.seq))) or 0


def _edit_entry(session: Session, seq: int) -> None:
    with session.begin():
        session.connection().exec_driver_sql(
            f"UPDATE audit_entries SET data = '{{\"forged\":1}}' WHERE seq = {seq}"
        )


def _step(session: Session, *, whole: bool = False) -> dict[str, Any]:
    """Run one step of the standing audit check and return its stored verdict."""
    step = checks.run(session, "audit", "test-runner", whole=whole)
    verdict = to_json(checks.audit_verdict(session))
    return verdict | {"whole": step.whole, "checked": verdict["findings"]["checked"]}


def test_the_standing_check_checks_the_whole_log_once_then_only_what_was_appended(
    session: Session, register: Callable
) -> None:
    _play_some(session, register)
    first = _step(session)
    assert first["ok"] and first["whole"] and first["size"] == _last_seq(session)
    rounds.place_casino_war_bet(session, 1, 100)
    signed = audit.checkpoint(session)["document"]
    rounds.place_casino_war_bet(session, 1, 100)
    later = _step(session)
    assert later["ok"] and later["size"] == _last_seq(session)
    assert later["checked"] == later["size"] - first["size"] and not later["whole"]
    assert later["checkpoint"]["document"] == signed
    assert later["whole_at"] == first["whole_at"]
    again = _step(session)
    assert again["ok"] and again["checked"] == 0
    assert _step(session, whole=True)["whole"]


@pytest.mark.parametrize(
    "earlier",
    [
        lambda pairs: pairs["bets"],  # before the open rounds were kept
        lambda pairs: {"bets": pairs["bets"], "unsettled": pairs["unsettled"]},  # and the keys
        # and the service's keys
        lambda pairs: {name: value for name, value in pairs.items() if name != "service_keys"},
    ],
    ids=["bets_only", "without_keys", "without_service_keys"],
)
def test_a_state_stored_in_an_earlier_shape_is_read_again_from_the_start(
    session: Session, register: Callable, earlier: Callable[[Any], Any]
) -> None:
    _play_some(session, register)
    assert _step(session)["ok"]
    with session.begin():
        row = session.get(CheckRun, "audit")
        assert row is not None
        kept = {"bets", "unsettled", "owners", "signers", "key_ids", "service_keys"}
        assert set(row.state["pairs"]) == kept
        row.state = {**row.state, "pairs": earlier(row.state["pairs"])}
    again = _step(session)
    assert again["ok"] and again["whole"] and again["checked"] == again["size"]


@pytest.mark.tampers
def test_the_standing_check_finds_a_changed_new_entry_and_the_whole_check_an_old_one(
    session: Session, register: Callable, drop_append_only_triggers: Callable[[], None]
) -> None:
    _play_some(session, register)
    assert _step(session)["ok"]
    drop_append_only_triggers()
    _edit_entry(session, 3)  # already checked: found only by reading the whole log again
    assert _step(session)["ok"]
    whole = _step(session, whole=True)
    assert not whole["ok"] and whole["first_bad_seq"] == 3
    assert not audit.verify(session).ok


@pytest.mark.tampers
def test_the_standing_check_finds_a_changed_entry_appended_since_it_last_looked(
    session: Session, register: Callable, drop_append_only_triggers: Callable[[], None]
) -> None:
    _play_some(session, register)
    assert _step(session)["ok"]
    rounds.place_casino_war_bet(session, 1, 100)
    newest = _last_seq(session)
    drop_append_only_triggers()
    _edit_entry(session, newest)
    status = _step(session)
    assert not status["ok"] and status["first_bad_seq"] == newest
    assert not status["whole"]  # found by the check of the new entries alone


@pytest.mark.tampers
def test_the_standing_check_finds_a_forged_checkpoint_signed_since_it_last_looked(
    session: Session, register: Callable
) -> None:
    _play_some(session, register)
    assert _step(session)["ok"]
    rounds.place_casino_war_bet(session, 1, 100)
    size = _last_seq(session)
    add_forged_checkpoint(session, size)
    status = _step(session)
    assert not status["ok"]
    assert status["reason"] == (
        f"checkpoint over {size} entries: the signature is not valid for this key"
    )


@pytest.mark.tampers
def test_entries_cut_off_the_end_of_the_log_are_found_by_the_checkpoint_over_them(
    session: Session, register: Callable, drop_append_only_triggers: Callable[[], None]
) -> None:
    _play_some(session, register)
    signed = audit.checkpoint(session)["document"]
    drop_append_only_triggers()
    with session.begin():
        session.connection().exec_driver_sql(
            f"DELETE FROM audit_entries WHERE seq > {signed['size'] - 2}"
        )
    whole = audit.verify(session)
    assert not whole.ok
    assert f"covers {signed['size']} entries but the log holds {signed['size'] - 2}" in (
        whole.reason or ""
    )
    assert not _step(session)["ok"]


@pytest.mark.tampers
def test_the_standing_check_finds_a_checkpoint_over_more_entries_than_the_log_holds(
    session: Session, register: Callable
) -> None:
    _play_some(session, register)
    assert _step(session)["ok"]
    size = _last_seq(session)
    forged = audit_chain.checkpoint_document(size + 5, "00" * 32, "2099-01-01T00:00:00.000000Z")
    with session.begin():
        session.add(
            AuditCheckpoint(
                size=size + 5,
                root=forged["root"],
                time=forged["time"],
                signature=fairness_service.signed(session, forged)["signature"],
                public_key_hex="00" * 32,
            )
        )
    status = _step(session)
    assert not status["ok"]
    assert status["reason"] == (
        f"checkpoint over {size + 5} entries: covers {size + 5} entries but the log holds "
        f"{size} entries"
    )


@pytest.mark.tampers
@pytest.mark.parametrize(
    "tamper",
    [
        "edited entry",
        "forged checkpoint",
        "settlement taken out",
        "malformed entry",
        "settled again",
    ],
)
def test_the_standing_check_keeps_its_reason_as_a_message_id_for_the_console(
    session: Session,
    register: Callable,
    drop_append_only_triggers: Callable[[], None],
    tamper: str,
) -> None:
    """The console words the check's reason in the operator's language from the message id and
    params it keeps (``findings["found"]``); the stored reason stays the English it was."""
    _play_some(session, register)
    assert _step(session)["ok"]
    played = rounds.place_casino_war_bet(session, 1, 100)
    if played.status != "settled":
        rounds.decide_casino_war(session, 1, played.id, "war")
    size = _last_seq(session)
    if tamper == "edited entry":
        drop_append_only_triggers()
        _edit_entry(session, size)
        found = Problem(audit_chain.HASH_CHANGED, {"due": size, "before": size - 1})
    elif tamper == "forged checkpoint":
        add_forged_checkpoint(session, size)
        found = Problem.of(audit_chain.CHECKPOINT_UNSIGNED, {"num": size})
    elif tamper == "settlement taken out":
        subject = f"round:{played.id}"
        take_out(session, [_first_seq(session, "round.settled", subject)])
        found = Problem(audit.UNLOGGED_ROUND, {"subject": subject, "action": "round.settled"})
    elif tamper == "malformed entry":
        drop_append_only_triggers()
        with session.begin():
            session.connection().exec_driver_sql(
                f"UPDATE audit_entries SET data = '[1]' WHERE seq = {size}"
            )
        shape = Problem(audit_chain.DATA_NOT_AN_OBJECT)
        found = Problem(audit_chain.ENTRY_MALFORMED, {"due": size, "shape": shape})
    else:
        subject = f"round:{played.id}"
        settled = _first_seq(session, "round.settled", subject)
        again = audit.EntrySpec("user:1", "round.settled", subject, {"payout": 0})
        [seq] = _append(session, again)
        meaning = Problem(anchors.ONCE["round.settled"])
        named = {"seq": seq, "action": "round.settled", "subject": subject}
        found = Problem(anchors.TAKEN_TWICE, {**named, "first": settled, "meaning": meaning})
    status = _step(session)
    assert not status["ok"]
    assert status["findings"]["found"] == [found.to_json()]
    assert status["reason"] == found.text()


@pytest.mark.tampers
def test_the_standing_check_reads_the_whole_log_again_when_its_last_checked_entry_is_gone(
    session: Session, register: Callable, drop_append_only_triggers: Callable[[], None]
) -> None:
    _play_some(session, register)
    size = _step(session)["size"]
    drop_append_only_triggers()
    with session.begin():
        session.connection().exec_driver_sql(f"DELETE FROM audit_entries WHERE seq = {size}")
    again = _step(session)
    assert again["whole"] and again["size"] == size - 1


#: Every character ``str.splitlines`` breaks at besides ``\n`` and ``\r``. JSON escapes those
#: below U+0020, but ``ensure_ascii=False`` writes the last three as they are, so JSON Lines
#: records must be split at ``\n`` only.
LINE_SEPARATORS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\u0085", "\u2028", "\u2029")
RAW_IN_JSON = ("\u0085", "\u2028", "\u2029")


def test_the_offline_check_reads_an_export_whose_texts_hold_every_unicode_line_separator(
    app: Flask, session: Session, register: Callable, tmp_path: Path
) -> None:
    from sota_casino.services import accounts
    from sota_casino.services import money
    from sota_casino.verify import main

    player = register("sepa")
    staff = accounts.create_operator(session, "olga", "a long enough secret", "operator").id
    for separator in LINE_SEPARATORS:
        fairness_service.rotate(session, player, client_seed=f"seed{separator}end")
        money.adjust(session, staff, player, "chips", 100, f"reason{separator}end")
    audit.checkpoint(session)
    path = tmp_path / "audit.jsonl"
    assert _cli(app, "audit", "export", str(path)).exit_code == 0
    text = path.read_text(encoding="utf-8")
    assert all(separator in text for separator in RAW_IN_JSON)
    with pytest.raises(audit_chain.ExportFormatError, match="not valid JSON"):
        audit_chain.parse_export(text.splitlines())  # what the offline check used to do
    key = fairness_service.public_key_info(session).public_key_hex
    out = io.StringIO()
    assert main(["audit", str(path), "--public-key", key], out) == 0, out.getvalue()
    assert out.getvalue().splitlines()[-1] == "Result: OK (exit 0)"
    exported = audit_chain.parse_export_text(text)
    seeds = [e["data"]["client_seed"] for e in exported.entries if "client_seed" in e["data"]]
    assert {f"seed{s}end" for s in LINE_SEPARATORS} <= set(seeds)
    reasons = {e["data"].get("reason") for e in exported.entries}
    assert {f"reason{s}end" for s in LINE_SEPARATORS} <= reasons
    assert _cli(app, "audit", "verify").exit_code == 0


# --- each key taken once: a pair or a round logged again by appended entries ----------------


def _first_seq(session: Session, action: str, subject: str) -> int:
    with session.begin():
        seq = session.scalar(
            sa.select(sa.func.min(AuditEntry.seq)).where(
                AuditEntry.action == action, AuditEntry.subject == subject
            )
        )
    assert seq is not None, f"no {action} of {subject} in the log"
    return seq


def _append(session: Session, *specs: audit.EntrySpec) -> list[int]:
    """Append entries as an operator holding the key and the database would: through the log's
    own sequencer, so each links to the one before, and sign a checkpoint over them. Nothing
    logged before changes, so every earlier checkpoint still holds. Returns their seqs."""
    with session.begin():
        audit.record_all(session, list(specs))
    audit.flush(session)
    last = _last_seq(session)
    audit.checkpoint(session)
    return list(range(last - len(specs) + 1, last + 1))


def _offline_check(app: Flask, session: Session, tmp_path: Path) -> tuple[int, str]:
    """Export the log and check the export offline; return the exit code and the report."""
    from sota_casino.verify import main

    path = tmp_path / "audit.jsonl"
    assert _cli(app, "audit", "export", str(path)).exit_code == 0
    key = fairness_service.public_key_info(session).public_key_hex
    out = io.StringIO()
    return main(["audit", str(path), "--public-key", key], out), out.getvalue()


def _the_checks_on_the_database_name(
    app: Flask, session: Session, seq: int | None, reason: str
) -> None:
    """The whole check, the standing check's next step (only the entries since its last) and
    the command all fail for ``reason``, at entry ``seq`` (None: no entry is the bad one)."""
    whole = audit.verify(session)
    assert (whole.ok, whole.first_bad_seq, whole.reason) == (False, seq, reason)
    step = _step(session)
    assert (step["ok"], step["first_bad_seq"], step["reason"]) == (False, seq, reason)
    assert not step["whole"] and step["checked"] < step["size"]
    command = _cli(app, "audit", "verify")
    assert command.exit_code == 1
    where = "" if seq is None else f" at entry {seq}"
    assert f"audit log BROKEN{where}: {reason}" in command.output


def _every_check_names(app: Flask, session: Session, tmp_path: Path, seq: int, reason: str) -> None:
    """The whole check, the standing check's next step (only the entries since its last), the
    command and the offline check of the export all name entry ``seq``, for ``reason``."""
    _the_checks_on_the_database_name(app, session, seq, reason)
    code, report = _offline_check(app, session, tmp_path)
    assert code == 1, report
    assert f"first bad entry: seq {seq}" in report and f"chain: {reason}" in report


@pytest.mark.tampers
@pytest.mark.parametrize("with_decision", [True, False], ids=["with_decision", "alone"])
def test_a_round_settled_again_is_named_by_every_whole_log_check(
    app: Flask,
    session: Session,
    register: Callable,
    rig: Callable,
    tmp_path: Path,
    with_decision: bool,
) -> None:
    player = register("ann")
    rig(player, ["tie"])
    tied = rounds.place_casino_war_bet(session, player, 100)
    assert tied.status == "awaiting_decision"
    rounds.decide_casino_war(session, player, tied.id, "war")
    subject = f"round:{tied.id}"
    settled = _first_seq(session, "round.settled", subject)
    assert _step(session)["ok"]
    # The war turned into a surrender, logged after the round settled: the receipt re-signed
    # to match would find its own decision and settlement entries in the log.
    surrender = audit.EntrySpec(
        f"user:{player}", "round.decision", subject, {"choice": "surrender"}
    )
    resettled = audit.EntrySpec(
        f"user:{player}",
        "round.settled",
        subject,
        {"game": "casino_war", "staked": 100, "payout": 50, "net": -50, "currency": "chips"},
    )
    if with_decision:
        decision, _ = _append(session, surrender, resettled)
        seq, reason = (
            decision,
            (
                f"entry {decision}: round.decision of {subject} after its settlement (entry "
                f"{settled}): a settled round takes no more actions, a rewrite"
            ),
        )
    else:
        [seq] = _append(session, resettled)
        reason = (
            f"entry {seq}: a second round.settled of {subject} (the first is entry {settled}): "
            "the round was settled twice, a rewrite"
        )
    _every_check_names(app, session, tmp_path, seq, reason)


@pytest.mark.tampers
@pytest.mark.parametrize("taken", ["settlement", "every_entry"])
def test_a_settled_round_taken_out_of_the_log_is_named_by_the_whole_check_and_a_step(
    app: Flask, session: Session, register: Callable, taken: str
) -> None:
    """An operator with the database takes a settled round's settlement (or all of its entries)
    out of the log before a checkpoint covers it, and links the chain again: the chain and its
    keys hold, so only the rounds table, compared with the log, shows it."""
    player = register("ann")
    rounds.place_casino_war_bet(session, player, 100)
    assert _step(session)["ok"]
    played = rounds.place_casino_war_bet(session, player, 100)
    if played.status != "settled":
        rounds.decide_casino_war(session, player, played.id, "war")
    subject = f"round:{played.id}"
    action = "round.settled" if taken == "settlement" else "round.bet"
    with session.begin():
        seqs = session.scalars(sa.select(AuditEntry.seq).where(AuditEntry.subject == subject)).all()
    dropped = [_first_seq(session, "round.settled", subject)] if taken == "settlement" else seqs
    take_out(session, list(dropped))
    reason = (
        f"{subject} is settled, but the log holds no {action} entry of it: an entry of a "
        "settled round was lost or taken out of the log"
    )
    _the_checks_on_the_database_name(app, session, None, reason)


@pytest.mark.tampers
@pytest.mark.parametrize("bet_again", [False, True], ids=["unbet", "bet_on_its_nonce"])
def test_a_round_logged_again_under_a_new_id_is_named_by_every_whole_log_check(
    app: Flask,
    session: Session,
    register: Callable,
    rig: Callable,
    tmp_path: Path,
    bet_again: bool,
) -> None:
    """The war turned into a surrender and logged as a round of its own: no key is taken
    twice, and without a bet nothing ties the new round to a pair; with one, its nonce is
    taken a second time."""
    player = register("ann")
    rig(player, ["tie"])
    tied = rounds.place_casino_war_bet(session, player, 100)
    rounds.decide_casino_war(session, player, tied.id, "war")
    assert _step(session)["ok"]
    subject, actor = "round:50000", f"user:{player}"
    bet = audit.EntrySpec(
        actor,
        "round.bet",
        subject,
        {"game": "casino_war", "seed_pair_id": tied.seed_pair_id, "nonce": tied.nonce},
    )
    surrender = audit.EntrySpec(actor, "round.decision", subject, {"choice": "surrender"})
    resettled = audit.EntrySpec(
        actor,
        "round.settled",
        subject,
        {"game": "casino_war", "staked": 100, "payout": 50, "net": -50, "currency": "chips"},
    )
    if bet_again:
        seq = _append(session, bet, surrender, resettled)[0]
        reason = (
            f"entry {seq}: round.bet of {subject} takes nonce {tied.nonce} of "
            f"seed_pair:{tied.seed_pair_id}, whose next nonce is {tied.nonce + 1}: a pair's "
            "nonces are taken in order, each once, a rewrite"
        )
    else:
        seq = _append(session, surrender, resettled)[0]
        reason = (
            f"entry {seq}: round.decision of {subject}, which the log never bet: a round is "
            "played only after its bet, a rewrite"
        )
    _every_check_names(app, session, tmp_path, seq, reason)


@pytest.mark.tampers
def test_a_decision_the_player_with_a_key_did_not_sign_is_named_by_every_whole_log_check(
    app: Flask, session: Session, register: Callable, rig: Callable, tmp_path: Path
) -> None:
    """An operator decides a tie for a player who registered a key: the service would refuse
    it unsigned, and a bundle that hides the registration with it would show nothing."""
    player = register("ann")
    key = new_signing_key()
    key_id = player_keys.register_key(session, player, fairness.public_key_hex(key)).current_key_id
    assert key_id is not None
    rig(player, ["tie"])
    pair = fairness_service.active_seed_pair(session, player)
    signed = bet_signature(
        key,
        key_id,
        {
            "seed_pair_id": pair.seed_pair_id,
            "next_nonce": pair.next_nonce,
            "commitment_document": pair.commitment_document,
        },
        "casino_war",
        {"bet": 100, "tie_bet": 0},
        played_rules("casino_war"),
    )
    tied = rounds.place_casino_war_bet(session, player, 100, **signed)
    assert tied.status == "awaiting_decision" and _step(session)["ok"]
    registered = _first_seq(session, "player_key.registered", f"user:{player}")
    subject = f"round:{tied.id}"
    [seq] = _append(
        session,
        audit.EntrySpec(f"user:{player}", "round.decision", subject, {"choice": "surrender"}),
    )
    reason = (
        f"entry {seq}: round.decision of {subject} is not signed, though its player registered "
        f"a key (entry {registered}): the service takes no unsigned action from a player with a "
        "key, a rewrite"
    )
    _every_check_names(app, session, tmp_path, seq, reason)


@pytest.mark.tampers
def test_a_bet_in_the_name_of_a_player_with_a_key_is_named_by_every_whole_log_check(
    app: Flask, session: Session, register: Callable, tmp_path: Path
) -> None:
    """An operator bets a round in the name of a player who registered a key, to spend a nonce
    whose cards would have favoured the player's next bet: the service would refuse the bet
    unsigned, and a bundle that hides the registration with it would show nothing."""
    player = register("ann")
    player_keys.register_key(session, player, fairness.public_key_hex(new_signing_key()))
    assert _step(session)["ok"]
    pair = fairness_service.active_seed_pair(session, player)
    registered = _first_seq(session, "player_key.registered", f"user:{player}")
    subject = "round:90001"
    data = {"game": "casino_war", "stakes": {"bet": 100, "tie_bet": 0, "raise": 0}}
    data |= {"seed_pair_id": pair.seed_pair_id, "nonce": pair.next_nonce}
    [seq] = _append(session, audit.EntrySpec(f"user:{player}", "round.bet", subject, data))
    reason = (
        f"entry {seq}: round.bet of {subject} is not signed, though its player registered a key "
        f"(entry {registered}): the service takes no unsigned bet from a player with a key, a "
        "rewrite"
    )
    _every_check_names(app, session, tmp_path, seq, reason)


@pytest.mark.tampers
def test_a_second_key_change_into_the_key_in_use_is_named_by_every_whole_log_check(
    app: Flask, session: Session, register: Callable, tmp_path: Path
) -> None:
    """Whoever holds the database and the new key logs a change into it from a key of his own
    (signed by that key): a verifier trusting the new key would take that key as the one it
    succeeded once a checkpoint of the new key covers the entry."""
    register("ann")
    honest = fairness_service.change_key(session, new_signing_key())["document"]
    assert _step(session)["ok"]
    new_key, own = honest["new_public_key_hex"], new_signing_key()
    forged = fairness.signed(
        own,
        fairness.key_change_document(
            old_public_key_hex=fairness.public_key_hex(own),
            new_public_key_hex=new_key,
            changed_at=honest["changed_at"],
        ),
    )
    subject = f"key:{new_key[:16]}"
    [seq] = _append(
        session, audit.EntrySpec("system", fairness.KEY_CHANGED, subject, {"key_change": forged})
    )
    reason = (
        f"entry {seq}: key.changed names key {fairness.public_key_hex(own)[:16]}… as the key in "
        f"use, but the key in use is {new_key[:16]}… (entry "
        f"{_first_seq(session, fairness.KEY_CHANGED, subject)}): the service's keys change in "
        "one chain, each change signed by the key in use, a rewrite"
    )
    _every_check_names(app, session, tmp_path, seq, reason)


def _play_pair(session: Session, player: int, count: int) -> list[Any]:
    """Play ``count`` settled Casino War rounds on the player's active pair (a tie surrendered)."""
    played = []
    for _ in range(count):
        round_ = rounds.place_casino_war_bet(session, player, 100)
        if round_.status == "awaiting_decision":
            round_ = rounds.decide_casino_war(session, player, round_.id, "surrender")
        played.append(round_)
    return played


@pytest.mark.tampers
def test_a_pair_committed_again_with_its_rounds_settled_again_is_named_by_every_whole_log_check(
    app: Flask,
    session: Session,
    register: Callable,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    player = register("bob")
    played = _play_pair(session, player, 4)
    subject = f"seed_pair:{played[0].seed_pair_id}"
    created = _first_seq(session, "seed_pair.created", subject)
    assert _step(session)["ok"]
    # A new server seed for the pair, committed anew, and every round re-dealt and settled anew.
    recommitted = audit.EntrySpec(
        f"user:{player}", "seed_pair.created", subject, {"commitment": "ab" * 32, "status": "next"}
    )
    resettled = [
        audit.EntrySpec(
            f"user:{player}", "round.settled", f"round:{r.id}", {"game": "casino_war", "payout": 0}
        )
        for r in played
    ]
    seq, *_ = _append(session, recommitted, *resettled)
    # Chunks of 7 entries: the pair's first commitment is chunks before its second, and is
    # looked up in the database, not remembered.
    monkeypatch.setattr(audit, "CHUNK", 7)
    assert seq - created > 7
    reason = (
        f"entry {seq}: a second seed_pair.created of {subject} (the first is entry {created}): "
        "the pair was committed twice, a rewrite"
    )
    _every_check_names(app, session, tmp_path, seq, reason)


@pytest.fixture
def drop_one_seed_a_pair(session: Session, db_url: str) -> Iterator[Callable[[], None]]:
    """Drop the unique index on the pairs' commitments, as a database that lost it (or an
    attacker with DDL rights) would; on the run's PostgreSQL database, take the pairs that
    share a server seed out after the test and build the index again."""
    yield lambda: _drop_index(session, "uq_seed_pairs_commitment")
    session.close()
    if db_url.startswith("postgresql"):
        with session.begin():
            session.execute(sa.text("SET LOCAL session_replication_role = replica"))
            session.execute(
                sa.text(
                    "DELETE FROM seed_pairs WHERE id NOT IN "
                    "(SELECT min(id) FROM seed_pairs GROUP BY commitment)"
                )
            )
            session.execute(
                sa.text("CREATE UNIQUE INDEX uq_seed_pairs_commitment ON seed_pairs (commitment)")
            )


def _drop_index(session: Session, name: str) -> None:
    with session.begin():
        session.execute(sa.text(f"DROP INDEX {name}"))


def _seed_reused(seq: int, subject: str, other: int, commitment: str) -> str:
    return (
        f"entry {seq}: seed_pair.created of {subject} commits to the server seed of "
        f"seed_pair:{other} (commitment {commitment[:16]}…): a server seed serves one pair, and "
        "revealed for either it tells every shuffle of the other in advance"
    )


@pytest.mark.tampers
def test_a_pair_committed_to_another_pairs_server_seed_is_named_by_every_whole_log_check(
    app: Flask,
    session: Session,
    register: Callable,
    drop_one_seed_a_pair: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A database without the unique index lets the service commit a server seed drawn again
    (a broken generator) for a second pair: each pair's log entries are as for a seed of its
    own, and only the seed pairs, compared by commitment, show it: the checks on the database
    look the pairs up by commitment, the offline check of an export compares its entries'."""
    ann = register("ann")
    _play_pair(session, ann, 2)
    fairness_service.rotate(session, ann)  # the seed revealed
    [revealed] = [p for p in fairness_service.seed_pairs(session, ann) if p["status"] == "revealed"]
    bob = register("bob")
    assert _step(session)["ok"]
    drop_one_seed_a_pair()
    with session.begin():
        seed = session.get(SeedPair, revealed["seed_pair_id"])
        assert seed is not None
        server_seed = bytes.fromhex(seed.server_seed)
    monkeypatch.setattr(fairness, "new_server_seed", lambda: server_seed)
    fairness_service.rotate(session, bob)  # bob's next pair draws ann's revealed seed
    twin = fairness_service.seed_pairs(session, bob)[0]  # the newest
    assert twin["commitment"] == revealed["commitment"]
    subject = f"seed_pair:{twin['seed_pair_id']}"
    seq = _first_seq(session, "seed_pair.created", subject)
    audit.checkpoint(session)
    reason = _seed_reused(seq, subject, revealed["seed_pair_id"], revealed["commitment"])
    _every_check_names(app, session, tmp_path, seq, reason)


@pytest.mark.tampers
def test_a_pair_the_log_never_committed_on_another_pairs_server_seed_is_named_by_the_whole_check(
    app: Flask, session: Session, register: Callable, drop_one_seed_a_pair: Callable[[], None]
) -> None:
    """A pair written straight into a database without the unique index, committed to a
    player's server seed, and never logged: the player's own commitment entry, looked up by
    its commitment, names it (a step reads only the entries since its last, so the whole check
    does)."""
    ann = register("ann")
    bob = register("bob")
    drop_one_seed_a_pair()
    with session.begin():
        seed = session.scalars(
            sa.select(SeedPair).where(SeedPair.user_id == ann).order_by(SeedPair.id)
        ).first()
        assert seed is not None
        twin = SeedPair(
            user_id=bob,
            status="revealed",
            server_seed=seed.server_seed,
            commitment=seed.commitment,
            commitment_document={},
            commitment_signature="",
        )
        session.add(twin)
        session.flush()
        subject, commitment, twin_id = f"seed_pair:{seed.id}", seed.commitment, twin.id
    seq = _first_seq(session, "seed_pair.created", subject)
    reason = _seed_reused(seq, subject, twin_id, commitment)

    whole = audit.verify(session)

    assert (whole.ok, whole.first_bad_seq, whole.reason) == (False, seq, reason)
    assert f"audit log BROKEN at entry {seq}: {reason}" in _cli(app, "audit", "verify").output
    step = _step(session, whole=True)
    assert (step["ok"], step["first_bad_seq"], step["reason"]) == (False, seq, reason)


@pytest.mark.tampers
def test_a_commitment_logged_for_a_pair_to_another_pairs_server_seed_is_named_by_every_check(
    app: Flask,
    session: Session,
    register: Callable,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The log takes a commitment to a pair's server seed for a pair the database does not
    hold (its row never written, or taken out): the pair holding the seed, looked up by its
    commitment, shows it however many chunks before its own commitment was logged."""
    ann = register("ann")
    pair = fairness_service.active_seed_pair(session, ann)
    created = _first_seq(session, "seed_pair.created", f"seed_pair:{pair.seed_pair_id}")
    _play_pair(session, register("bob"), 4)
    assert _step(session)["ok"]
    subject = "seed_pair:90000"
    data = {"commitment": pair.commitment, "status": "next"}
    [seq] = _append(session, audit.EntrySpec(f"user:{ann}", "seed_pair.created", subject, data))
    monkeypatch.setattr(audit, "CHUNK", 5)
    assert seq - created > 5
    reason = _seed_reused(seq, subject, pair.seed_pair_id, pair.commitment)
    _every_check_names(app, session, tmp_path, seq, reason)


def _rewrite_pair(
    session: Session, pair_id: int, *, commitment_too: bool = True
) -> tuple[str, str]:
    """Rewrite a pair's row as an operator holding the database and the key would: another
    server seed and (``commitment_too``) the commitment to it, the pair's documents signed
    anew, so that the row, its documents and its reveal agree with one another. Return the
    commitment the log holds and the one to the new seed."""
    seed = fairness.new_server_seed()
    new_commitment = fairness.commitment_of(seed)
    with session.begin():
        pair = session.get(SeedPair, pair_id)
        assert pair is not None
        logged = pair.commitment
        pair.server_seed = seed.hex()
        if commitment_too:
            pair.commitment = new_commitment
            document = pair.commitment_document | {"commitment": new_commitment}
            envelope = fairness_service.signed(session, document)
            pair.commitment_document = envelope["document"]
            pair.commitment_signature = envelope["signature"]
        if pair.reveal_document is not None:
            document = pair.reveal_document | {"server_seed": seed.hex()}
            envelope = fairness_service.signed(session, document | {"commitment": new_commitment})
            pair.reveal_document = envelope["document"]
            pair.reveal_signature = envelope["signature"]
    return logged, new_commitment


@pytest.mark.tampers
def test_a_revealed_pair_whose_row_was_rewritten_is_named_by_the_whole_check(
    app: Flask, session: Session, register: Callable
) -> None:
    """A revealed pair's seed and commitment rewritten in its row, after a standing step read
    its entries: the whole check holds each pair's row to its commitment entry."""
    ann = register("ann")
    _play_pair(session, ann, 2)
    fairness_service.rotate(session, ann)
    [revealed] = [p for p in fairness_service.seed_pairs(session, ann) if p["status"] == "revealed"]
    pair_id = revealed["seed_pair_id"]
    audit.checkpoint(session)
    assert _step(session)["ok"]
    logged, rewritten = _rewrite_pair(session, pair_id)
    with session.begin():
        pair = session.get(SeedPair, pair_id)
        assert pair is not None  # the row agrees with itself: only its entry contradicts it
        assert fairness.commitment_of(bytes.fromhex(pair.server_seed)) == pair.commitment
    subject = f"seed_pair:{pair_id}"
    seq = _first_seq(session, "seed_pair.created", subject)
    reason = (
        f"entry {seq}: seed_pair.created of {subject} commits to {logged[:16]}…, but the "
        f"database holds commitment {rewritten[:16]}… for the pair: the pair's row was rewritten "
        "after its commitment was logged"
    )

    whole = audit.verify(session)

    assert (whole.ok, whole.first_bad_seq, whole.reason) == (False, seq, reason)
    command = _cli(app, "audit", "verify")
    assert command.exit_code == 1
    assert f"audit log BROKEN at entry {seq}: {reason}" in command.output
    # A step reads the entries since its last: the row is held to its entry when it is read.
    assert _step(session)["ok"]
    step = _step(session, whole=True)
    assert (step["ok"], step["first_bad_seq"], step["reason"]) == (False, seq, reason)


@pytest.mark.tampers
def test_a_pairs_server_seed_rewritten_before_its_reveal_is_named_by_the_checks_on_the_database(
    app: Flask, session: Session, register: Callable
) -> None:
    """An active pair's server seed rewritten in its row, its commitment left as logged (a seed
    chosen once the client seed is known): the checks on the database hash the row's seed."""
    register("ann")
    assert _step(session)["ok"]
    bob = register("bob")  # committed since the step
    pair = fairness_service.active_seed_pair(session, bob)
    logged, rewritten = _rewrite_pair(session, pair.seed_pair_id, commitment_too=False)
    subject = f"seed_pair:{pair.seed_pair_id}"
    seq = _first_seq(session, "seed_pair.created", subject)
    reason = (
        f"entry {seq}: seed_pair.created of {subject} commits to {logged[:16]}…, but the server "
        f"seed the database holds for the pair hashes to {rewritten[:16]}…: the pair's server "
        "seed was rewritten after its commitment was logged"
    )
    _the_checks_on_the_database_name(app, session, seq, reason)


@pytest.mark.tampers
def test_a_reveal_of_another_server_seed_than_committed_is_named_by_every_whole_log_check(
    app: Flask,
    session: Session,
    register: Callable,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pair's rotation logged revealing another server seed than its commitment entry is
    to (the pair's row and documents untouched, so its own bundle would show it; the log, all an
    auditor is given, carries it): the commitment entry, chunks and a step before, is looked up
    for the reveal, and the offline check of the export holds the two entries to each other."""
    monkeypatch.setattr(audit, "CHUNK", 5)
    player = register("joe")
    played = _play_pair(session, player, 2)
    pair_id = played[0].seed_pair_id
    subject = f"seed_pair:{pair_id}"
    committed = _first_seq(session, "seed_pair.created", subject)
    _play_pair(session, register("kim"), 2)  # another player's entries between
    assert _step(session)["ok"]
    with session.begin():
        pair = session.get(SeedPair, pair_id)
        assert pair is not None
        commitment = pair.commitment
    other = fairness.new_server_seed()
    rotation = audit.EntrySpec(
        f"user:{player}", "seed_pair.rotated", subject, {"server_seed": other.hex(), "rounds": 2}
    )
    [seq] = _append(session, rotation)
    assert seq - committed > 5
    reason = (
        f"entry {seq}: seed_pair.rotated of {subject} reveals a server seed hashing to "
        f"{fairness.commitment_of(other)[:16]}…, but the pair's commitment (entry {committed}) "
        f"is {commitment[:16]}…: a pair reveals the server seed it committed to, a rewrite"
    )
    _every_check_names(app, session, tmp_path, seq, reason)


@pytest.mark.tampers
def test_a_move_logged_after_its_game_settled_is_named_by_every_whole_log_check(
    app: Flask, session: Session, register: Callable, tmp_path: Path
) -> None:
    player = register("cid")
    game = rounds.play_sota(session, player, 5)
    assert game.status == "settled"
    subject = f"round:{game.id}"
    settled = _first_seq(session, "round.settled", subject)
    assert _step(session)["ok"]
    [seq] = _append(
        session, audit.EntrySpec(f"user:{player}", "round.move", subject, {"cards": []})
    )
    reason = (
        f"entry {seq}: round.move of {subject} after its settlement (entry {settled}): "
        "a settled round takes no more actions, a rewrite"
    )
    _every_check_names(app, session, tmp_path, seq, reason)


@pytest.mark.tampers
def test_a_rotation_logged_with_fewer_rounds_than_its_pair_took_is_named_by_every_whole_log_check(
    app: Flask,
    session: Session,
    register: Callable,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Chunks of 5 entries: the pair's bets are chunks before its reveal, and are counted from
    # one chunk to the next and from one step of the standing check to the next.
    monkeypatch.setattr(audit, "CHUNK", 5)
    player = register("fay")
    played = _play_pair(session, player, 4)
    subject = f"seed_pair:{played[0].seed_pair_id}"
    assert _step(session)["ok"]
    # The pair revealed as if it had dealt two rounds, logged so from the start: its bundle
    # and its reveal leave out the last two rounds, and no key is taken twice.
    with session.begin():
        pair = session.get(SeedPair, played[0].seed_pair_id)
        assert pair is not None and pair.next_nonce == 4
        pair.next_nonce = 2
        fairness_service.reveal_pair(session, pair)
    audit.flush(session)
    seq = _last_seq(session)
    audit.checkpoint(session)
    assert seq - _first_seq(session, "round.bet", f"round:{played[0].id}") > 5
    reason = (
        f"entry {seq}: seed_pair.rotated of {subject} says rounds 2, but the log holds 4 "
        "rounds bet on the pair (nonces 0..3): a reveal hiding rounds bet on it, a rewrite"
    )
    _every_check_names(app, session, tmp_path, seq, reason)


@pytest.mark.tampers
def test_a_round_bet_on_a_pair_after_its_reveal_is_named_by_every_whole_log_check(
    app: Flask,
    session: Session,
    register: Callable,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(audit, "CHUNK", 5)
    player = register("gus")
    [played] = _play_pair(session, player, 1)
    fairness_service.rotate(session, player, client_seed="next")
    subject = f"seed_pair:{played.seed_pair_id}"
    rotated = _first_seq(session, "seed_pair.rotated", subject)
    _play_pair(session, player, 3)
    assert _step(session)["ok"]
    # A round dealt on the revealed pair with its next nonce, as if before the reveal.
    bet = audit.EntrySpec(
        f"user:{player}",
        "round.bet",
        f"round:{played.id + 100}",
        {"game": "casino_war", "seed_pair_id": played.seed_pair_id, "nonce": 1},
    )
    [seq] = _append(session, bet)
    assert seq - rotated > 5
    reason = (
        f"entry {seq}: round.bet of round:{played.id + 100} on {subject} after its reveal "
        f"(entry {rotated}): a revealed pair takes no more rounds, a rewrite"
    )
    _every_check_names(app, session, tmp_path, seq, reason)


@pytest.mark.tampers
def test_a_pair_revealed_while_its_round_waits_for_a_decision_is_named_by_every_whole_log_check(
    app: Flask,
    session: Session,
    register: Callable,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(audit, "CHUNK", 5)  # the tie's bet chunks before the reveal
    player = register("hal")
    for _ in range(400):  # a tie comes once in about 13.5 rounds
        tie = rounds.place_casino_war_bet(session, player, 100)
        if tie.status == "awaiting_decision":
            break
    assert tie.status == "awaiting_decision"
    _play_pair(session, register("ida"), 3)  # another player's entries between
    assert _step(session)["ok"]
    # The server seed revealed with the tie open (rotation refuses that; the operator signs
    # the reveal by hand), then the tie decided and settled, its war cards known: every key
    # is taken once and the reveal counts the round.
    with session.begin():
        pair = session.get(SeedPair, tie.seed_pair_id)
        assert pair is not None
        fairness_service.reveal_pair(session, pair)
    audit.flush(session)
    seq = _last_seq(session)
    rounds.decide_casino_war(session, player, tie.id, "war")
    audit.flush(session)
    audit.checkpoint(session)
    assert seq - _first_seq(session, "round.bet", f"round:{tie.id}") > 5
    reason = (
        f"entry {seq}: seed_pair.rotated of seed_pair:{tie.seed_pair_id} while round:{tie.id}, "
        "bet on it, is not settled: a pair is revealed only once its rounds are settled (a "
        "round decided after its cards are known), a rewrite"
    )
    _every_check_names(app, session, tmp_path, seq, reason)


def test_an_honest_log_of_both_games_prisoners_moves_and_rotations_passes_every_check(
    app: Flask,
    session: Session,
    register: Callable,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(audit, "CHUNK", 5)  # keys looked up across many chunks
    players = [register("dee"), register("eve")]
    assert _step(session)["ok"]
    for player in players:
        for turn in range(3):
            for _ in range(4):
                war = rounds.place_casino_war_bet(session, player, 100)
                if war.status == "awaiting_decision":
                    rounds.decide_casino_war(session, player, war.id, "war")
                rounds.play_sota(session, player, 1)
            for _ in range(40):
                game = rounds.play_sota(session, player, 1, rules={"prisoners_of_war": True})
                if game.status == "awaiting_move":
                    break
            while game.status == "awaiting_move":
                pending = game.pending
                options = sorted(pending.options)[: pending.count]
                game = rounds.sota_move(session, player, game.id, options)
            fairness_service.rotate(session, player, client_seed=f"seed {turn}")
        step = _step(session)
        assert step["ok"] and not step["whole"], step
    with session.begin():
        moves = session.execute(
            sa.select(AuditEntry.subject, sa.func.count())
            .where(AuditEntry.action == "round.move")
            .group_by(AuditEntry.subject)
        ).all()
    assert moves and any(count > 1 for _, count in moves), "no game took several moves"
    assert audit.verify(session).ok
    assert _step(session, whole=True)["ok"]
    code, report = _offline_check(app, session, tmp_path)
    assert code == 0, report


@pytest.mark.parametrize("covered", [1, 2])
def test_an_entry_past_the_latest_checkpoint_is_refused_counting_the_entries_it_covers(
    session: Session, covered: int
) -> None:
    """The refusal says how many entries the latest checkpoint covers, in that count's plural
    form (the count its ``num``)."""
    for n in range(covered):
        with session.begin():
            audit.record(session, actor="system", action="test.filler", subject=f"s:{n}", data={})
    audit.flush(session)
    assert audit.checkpoint(session, actor=None)["document"]["size"] == covered
    with session.begin():
        audit.record(session, actor="system", action="test.late", subject="s:late", data={})
    audit.flush(session)
    with session.begin(), pytest.raises(NotYetAnchored) as refused:
        transparency.anchor_of(session, "test.late", "s:late")
    entries = "1 entry" if covered == 1 else f"{covered} entries"
    assert f"(the latest covers {entries})" in str(refused.value)
    assert refused.value.plural and refused.value.params["num"] == covered
