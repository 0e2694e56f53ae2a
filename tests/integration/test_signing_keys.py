"""The signing key: made on first start, registered (audited) on first use; a new key retires
the old one, which stays listed with its retirement time."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask import Flask
from service_support import PASSWORD
from service_support import verify_with_known_key
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core import fairness
from sota_casino.core.errors import Conflict
from sota_casino.factory import create_app
from sota_casino.models import AuditEntry
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services import fairness as fairness_service
from sota_casino.services import rounds


def test_a_new_signing_key_retires_the_old_one_and_is_audited(
    app: Flask, session: Session, tmp_path: Path
) -> None:
    accounts.register(session, "alice", PASSWORD)
    old = fairness_service.public_key_info(session)
    assert old.retired == []
    key_file = Path(app.config["SIGNING_KEY_FILE"])
    assert key_file.stat().st_mode & 0o777 == 0o600
    renewed = create_app(dict(app.config, SIGNING_KEY_FILE=str(tmp_path / "new_key.pem")))
    with renewed.app_context():
        fresh = renewed.extensions["sota_casino.sessionmaker"]()
        bob = accounts.register(fresh, "bob", PASSWORD).id  # signs with the new key
        info = fairness_service.public_key_info(fresh)
        assert info.public_key_hex != old.public_key_hex
        assert [k.public_key_hex for k in info.retired] == [old.public_key_hex]
        assert info.retired[0].retired_at is not None
        pair = fairness_service.active_seed_pair(fresh, bob)
        assert fairness.verify_signature(
            info.public_key_hex, pair.commitment_document, pair.signature
        )
        with fresh.begin():
            created = fresh.scalars(
                select(AuditEntry.data).where(AuditEntry.action == "key.created")
            ).all()
        assert len(created) == 2 and old.public_key_hex in created[1]
        fresh.close()
    renewed.extensions["sota_casino.engine"].dispose()


def test_checkpoints_signed_by_a_retired_key_still_verify(app: Flask, tmp_path: Path) -> None:

    with app.app_context():
        first = app.extensions["sota_casino.sessionmaker"]()
        accounts.register(first, "alice", PASSWORD)
        audit.checkpoint(first)
        first.close()
    renewed = create_app(dict(app.config, SIGNING_KEY_FILE=str(tmp_path / "new_key.pem")))
    with renewed.app_context():
        fresh = renewed.extensions["sota_casino.sessionmaker"]()
        accounts.register(fresh, "bob", PASSWORD)
        audit.checkpoint(fresh)
        verdict = audit.verify(fresh)
        assert verdict.ok, verdict
        fresh.close()
    renewed.extensions["sota_casino.engine"].dispose()


def test_keys_rotate_signs_a_key_change_with_the_old_key_that_pinned_verifiers_follow(
    app: Flask, session: Session, tmp_path: Path
) -> None:
    from sota_casino.verify import main

    alice = accounts.register(session, "alice", PASSWORD).id
    old_key = fairness_service.public_key_info(session).public_key_hex
    key_file = Path(app.config["SIGNING_KEY_FILE"])
    old_pem = key_file.read_bytes()
    result = app.test_cli_runner().invoke(args=["keys", "rotate"])
    assert result.exit_code == 0, result.output
    assert key_file.read_bytes() != old_pem and key_file.stat().st_mode & 0o777 == 0o600
    (kept,) = key_file.parent.glob(f"{key_file.name}.retired-*")
    assert kept.read_bytes() == old_pem
    with session.begin():
        audited = session.scalars(
            select(AuditEntry.data).where(AuditEntry.action == "key.changed")
        ).all()
    (change,) = fairness_service.public_key_info(session).key_changes
    assert len(audited) == 1 and change["signature"] in audited[0]
    new_key = change["document"]["new_public_key_hex"]
    assert change["document"]["old_public_key_hex"] == old_key
    assert fairness.verify_signature(old_key, change["document"], change["signature"])
    assert "signed by the old key" in app.test_cli_runner().invoke(args=["keys", "show"]).output

    renewed = create_app(dict(app.config))  # a restart: it loads the new key file
    with renewed.app_context():
        fresh = renewed.extensions["sota_casino.sessionmaker"]()
        fairness_service.rotate(fresh, alice)  # the reveal is signed by the new key
        bob = accounts.register(fresh, "bob", PASSWORD).id
        pair = fairness_service.active_seed_pair(fresh, bob).seed_pair_id
        audit.sign_if_due(fresh)  # as the bundle endpoint does: the pair's entry in a checkpoint
        bundle = fairness_service.bundle(fresh, bob, pair)
        assert not bundle["pending_anchors"]
        assert fairness_service.public_key_info(fresh).public_key_hex == new_key
        fresh.close()
    renewed.extensions["sota_casino.engine"].dispose()
    assert bundle["public_key_hex"] == new_key
    (logged,) = bundle["key_changes"]  # the signed change, with its entry in the log
    assert {"document": logged["document"], "signature": logged["signature"]} == change

    code, output, known = verify_with_known_key(bundle, old_key, tmp_path)
    assert code == 0, output
    assert "KEY CHANGED: the bundle's key" in output
    assert f"casino.test {new_key}" in known.read_text().split("\n")
    assert f"# casino.test {old_key} replaced: key change signed by" in known.read_text()
    # Without the signed change, the same new key is refused.
    unsigned = dict(bundle, key_changes=[])
    path = tmp_path / "unsigned.json"
    path.write_text(json.dumps(unsigned))
    out = io.StringIO()
    assert main([str(path), "--public-key", old_key], out) == 1
    assert "KEY CHANGED: the bundle names public key" in out.getvalue()
    assert (
        "no chain of key changes, each signed by the key it retires, leads there from the trusted"
        in out.getvalue()
    )


def _play_a_round(session: Session, user_id: int) -> None:
    opened = rounds.place_casino_war_bet(session, user_id, 200)
    if opened.status != "settled":  # a tie waits for the decision
        rounds.decide_casino_war(session, user_id, opened.id, "surrender")


def _verify_pinned(bundle: dict[str, Any], key: str, folder: Path) -> tuple[int, str]:
    from sota_casino.verify import main

    path = folder / f"bundle-{bundle['commitment']['document']['seed_pair_id']}.json"
    path.write_text(json.dumps(bundle))
    out = io.StringIO()
    return main([str(path), "--public-key", key], out), out.getvalue()


def _pairs_across_a_key_change(
    app: Flask, session: Session
) -> tuple[str, str, list[dict[str, Any]]]:
    """Return the old key, the new key, and the bundles fetched after the restart of a pair
    committed, played and revealed under the old key and of a pair committed and played under
    it, then played and revealed under the new (mixed)."""
    alice = accounts.register(session, "alice", PASSWORD).id
    old_key = fairness_service.public_key_info(session).public_key_hex
    before = fairness_service.active_seed_pair(session, alice).seed_pair_id
    _play_a_round(session, alice)
    _play_a_round(session, alice)
    fairness_service.rotate(session, alice)  # revealed by the old key
    mixed = fairness_service.active_seed_pair(session, alice).seed_pair_id
    _play_a_round(session, alice)
    audit.checkpoint(session)  # signed by the old key
    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    (change,) = fairness_service.public_key_info(session).key_changes
    new_key = change["document"]["new_public_key_hex"]

    renewed = create_app(dict(app.config))  # a restart: it loads the new key file
    with renewed.app_context():
        fresh = renewed.extensions["sota_casino.sessionmaker"]()
        _play_a_round(fresh, alice)  # signed by the new key
        fairness_service.rotate(fresh, alice)  # the mixed pair's reveal, by the new key
        audit.checkpoint(fresh)  # the new key's, over the key change and every document
        bundles = [fairness_service.bundle(fresh, alice, pair) for pair in (before, mixed)]
        fresh.close()
    renewed.extensions["sota_casino.engine"].dispose()
    return old_key, new_key, [dict(bundle) for bundle in bundles]


def test_pairs_signed_before_keys_rotate_verify_after_it_with_the_old_key_or_the_new(
    app: Flask, session: Session, tmp_path: Path
) -> None:
    """Each document is signed by the key in use when it was made: a pair signed wholly by the
    old key, and a mixed one, verify pinned to either key (the new one learns the old from the
    key change its own checkpoint proves in the log)."""
    old_key, new_key, bundles = _pairs_across_a_key_change(app, session)
    for bundle in bundles:
        assert bundle["public_key_hex"] == new_key and not bundle["pending_anchors"]
        (change,) = bundle["key_changes"]
        assert change["entry"]["action"] == "key.changed" and "anchor" in change
        for pinned in (old_key, new_key):
            code, output = _verify_pinned(bundle, pinned, tmp_path)
            assert code == 0, output
            assert "Result: OK" in output, output


def test_a_retired_key_signs_for_a_verifier_pinned_to_the_new_key_only_through_its_log(
    app: Flask, session: Session, tmp_path: Path
) -> None:
    """An operator holding the database and the new key, not the old one: a key change he
    leaves out of the log, or writes for a key of his own, makes no key a predecessor of the
    new key; the old key pinned still follows its own change."""
    old_key, new_key, (before, _) = _pairs_across_a_key_change(app, session)
    (change,) = before["key_changes"]
    unlogged = dict(
        before, key_changes=[{"document": change["document"], "signature": change["signature"]}]
    )
    code, output = _verify_pinned(unlogged, new_key, tmp_path)
    assert code == 1 and "commitment document: signature: the signature is not valid" in output
    assert _verify_pinned(unlogged, old_key, tmp_path)[0] == 0  # the old key's own word

    own = Ed25519PrivateKey.generate()
    own_change = fairness.signed(
        own,
        fairness.key_change_document(
            old_public_key_hex=fairness.public_key_hex(own),
            new_public_key_hex=new_key,
            changed_at=change["document"]["changed_at"],
        ),
    )
    recommitted = dict(
        before,
        commitment=fairness.signed(own, before["commitment"]["document"]),
        key_changes=[{**change, **own_change}],  # the genuine entry and anchor beside it
    )
    for pinned in (new_key, old_key):
        code, output = _verify_pinned(recommitted, pinned, tmp_path)
        assert code == 1 and "commitment document: signature: the signature is not valid" in output


@pytest.mark.tampers
def test_a_second_key_change_into_the_new_key_fails_the_bundles_trusting_either_key(
    app: Flask, session: Session, tmp_path: Path
) -> None:
    """Whoever holds the database and the new key logs a change into it from a key of his own,
    and the new key's checkpoint covers it: the service's bundles carry it beside the real one,
    and a verifier trusting the new key took as its predecessor whichever came first. Both
    changes are named instead, whichever key is trusted."""
    old_key, new_key, (before, _) = _pairs_across_a_key_change(app, session)
    own = Ed25519PrivateKey.generate()
    own_key = fairness.public_key_hex(own)
    document = fairness.key_change_document(
        old_public_key_hex=own_key,
        new_public_key_hex=new_key,
        changed_at=before["reveal"]["document"]["revealed_at"],
    )
    renewed = create_app(dict(app.config))  # the service, running with the new key
    with renewed.app_context():
        fresh = renewed.extensions["sota_casino.sessionmaker"]()
        with fresh.begin():
            audit.record(
                fresh,
                actor="system",
                action=fairness_service.KEY_CHANGED,
                subject=f"key:{new_key[:16]}",
                data={"key_change": fairness.signed(own, document)},
            )
        audit.checkpoint(fresh)  # the new key's, over both changes
        pair = before["commitment"]["document"]
        bundle = dict(fairness_service.bundle(fresh, pair["user_id"], pair["seed_pair_id"]))
        fresh.close()
    renewed.extensions["sota_casino.engine"].dispose()
    assert [change["document"]["old_public_key_hex"] for change in bundle["key_changes"]] == [
        old_key,
        own_key,
    ]
    for pinned in (new_key, old_key):
        code, output = _verify_pinned(bundle, pinned, tmp_path)
        assert code == 1, output
        assert (
            f"key.changed of key {new_key[:16]}… from key {own_key[:16]}…, which key "
            f"{old_key[:16]}… was changed into before"
        ) in output


def test_a_registration_rolled_back_with_its_signature_is_made_again(
    app: Flask, session: Session
) -> None:
    """The first signature's transaction fails: its key row and audit entry go with it, so the
    next signature registers the key again instead of trusting a flag the rollback outlived."""
    from sota_casino.models import SigningKey

    class Abandoned(Exception):
        pass

    try:
        with session.begin():
            fairness_service.signed(session, {"type": "test", "v": 1})
            raise Abandoned
    except Abandoned:
        pass
    accounts.register(session, "alice", PASSWORD)  # signs a commitment, committed
    with session.begin():
        keys = session.scalars(select(SigningKey.public_key_hex)).all()
        created = session.scalars(
            select(AuditEntry.seq).where(AuditEntry.action == "key.created")
        ).all()
    assert len(keys) == 1 and len(created) == 1


def test_a_bundle_fetched_right_after_keys_rotate_and_a_restart_verifies_pinned_to_the_new_key(
    app: Flask, session: Session, tmp_path: Path
) -> None:
    """The last checkpoint before the restart was signed by the old key over the whole log,
    the key change included, and nothing was logged since: the first bundle the restarted
    service serves is proved into a checkpoint of the new key over the key change, so a
    verifier trusting only the new key learns the old one from its own log at once."""
    alice = accounts.register(session, "alice", PASSWORD).id
    before = fairness_service.active_seed_pair(session, alice).seed_pair_id
    _play_a_round(session, alice)
    fairness_service.rotate(session, alice)  # committed, played and revealed by the old key
    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    (change,) = fairness_service.public_key_info(session).key_changes
    old_key, new_key = (change["document"][f"{k}_public_key_hex"] for k in ("old", "new"))
    signed_before = audit.sign_if_due(session)  # the process not yet restarted: the old key
    assert signed_before is not None and signed_before["public_key_hex"] == old_key
    assert signed_before["document"]["size"] == audit.current_size(session)

    renewed = create_app(dict(app.config))  # a restart: it loads the new key file
    with renewed.app_context():
        fresh = renewed.extensions["sota_casino.sessionmaker"]()
        audit.sign_if_due(fresh)  # as the bundle endpoint does
        bundle = dict(fairness_service.bundle(fresh, alice, before))
        again = audit.sign_if_due(fresh)  # the new key's checkpoint is signed once
        fresh.close()
    renewed.extensions["sota_casino.engine"].dispose()
    for pinned in (new_key, old_key):
        code, output = _verify_pinned(bundle, pinned, tmp_path)
        assert code == 0, output
        assert "Result: OK" in output, output
    (checkpoint,) = bundle["checkpoints"]
    assert checkpoint["public_key_hex"] == new_key
    assert again is None


def test_a_process_still_signing_with_the_retired_key_cannot_change_it_again(
    app: Flask, session: Session
) -> None:
    """The log's key changes form one chain, each from the key in use: a process not yet
    restarted after `flask keys rotate` would log a second change from the retired key."""
    accounts.register(session, "alice", PASSWORD)
    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    key_file = Path(app.config["SIGNING_KEY_FILE"])
    in_use = key_file.read_bytes()
    with pytest.raises(Conflict, match="signs with a retired key"):
        fairness_service.change_key(session, Ed25519PrivateKey.generate())
    again = app.test_cli_runner().invoke(args=["keys", "rotate"])  # this app loaded the old key
    assert again.exit_code == 1 and "signs with a retired key" in again.output
    assert key_file.read_bytes() == in_use
    assert len(fairness_service.public_key_info(session).key_changes) == 1


def test_the_export_of_a_log_across_keys_rotate_passes_pinned_to_the_old_key_or_the_new(
    app: Flask, session: Session, tmp_path: Path
) -> None:
    """An honest log across `flask keys rotate` holds checkpoints of the old key (one of them
    signed after the change, by the process not yet restarted) and of the new: its export
    follows the log's own key change from either key."""
    from sota_casino.verify import main

    alice = accounts.register(session, "alice", PASSWORD).id
    audit.checkpoint(session)
    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    (change,) = fairness_service.public_key_info(session).key_changes
    old_key, new_key = (change["document"][f"{k}_public_key_hex"] for k in ("old", "new"))
    _play_a_round(session, alice)  # the process not yet restarted signs with the old key
    assert audit.checkpoint(session)["public_key_hex"] == old_key
    renewed = create_app(dict(app.config))  # a restart: it loads the new key file
    export = tmp_path / "audit.jsonl"
    with renewed.app_context():
        fresh = renewed.extensions["sota_casino.sessionmaker"]()
        _play_a_round(fresh, alice)
        assert audit.checkpoint(fresh)["public_key_hex"] == new_key
        fresh.close()
        result = renewed.test_cli_runner().invoke(args=["audit", "export", str(export)])
        assert result.exit_code == 0, result.output
    renewed.extensions["sota_casino.engine"].dispose()
    for pinned in (old_key, new_key):
        out = io.StringIO()
        assert main(["audit", str(export), "--public-key", pinned], out) == 0, out.getvalue()
        assert out.getvalue().splitlines()[-1] == "Result: OK (exit 0)"


@pytest.mark.parametrize("how", ["command", "download"])
def test_the_export_right_after_keys_rotate_and_a_restart_verifies_pinned_to_the_new_key(
    app: Flask, session: Session, tmp_path: Path, how: str
) -> None:
    """After `flask keys rotate` and the restart, the whole log's export failed pinned to the
    new key, the one the console and the public-key answer show ("checkpoint 1 (size 9): the
    signature is not valid for this key"), until something else made the new key sign a
    checkpoint: the export now has it signed first, as a bundle does."""
    from sota_casino.verify import main

    alice = accounts.register(session, "alice", PASSWORD).id
    _play_a_round(session, alice)
    audit.checkpoint(session)
    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    (change,) = fairness_service.public_key_info(session).key_changes
    new_key = change["document"]["new_public_key_hex"]
    renewed = create_app(dict(app.config))  # a restart: it loads the new key file
    export = tmp_path / "audit.jsonl"
    if how == "command":
        with renewed.app_context():  # the command's app, not the test's
            result = renewed.test_cli_runner().invoke(args=["audit", "export", str(export)])
        assert result.exit_code == 0, result.output
    else:
        with renewed.app_context():
            fresh = renewed.extensions["sota_casino.sessionmaker"]()
            operator = accounts.create_operator(fresh, "olga", PASSWORD, role="operator")
            token, _expires = accounts.start_session(fresh, operator.id, kind="api")
            fresh.close()
        answer = renewed.test_client().get(
            "/api/v1/operator/audit/export", headers={"Authorization": f"Bearer {token}"}
        )
        assert answer.status_code == 200
        export.write_bytes(answer.get_data())
    renewed.extensions["sota_casino.engine"].dispose()
    out = io.StringIO()
    assert main(["audit", str(export), "--public-key", new_key], out) == 0, out.getvalue()
    assert out.getvalue().splitlines()[-1] == "Result: OK (exit 0)"


def test_a_server_started_with_the_retired_key_file_is_refused_at_start(
    app: Flask, session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After `flask keys rotate` on one server, another started with its old key file served
    and signed checkpoints with the retired key, saying nothing. gunicorn's master now refuses
    to start it, in one line (gunicorn.conf.py's ``on_starting`` calls this check)."""
    from sota_casino import config
    from sota_casino.factory import check_settings

    accounts.register(session, "alice", PASSWORD)  # signs: the key is registered
    key_file = Path(app.config["SIGNING_KEY_FILE"])
    old_file = tmp_path / "other-server" / "signing_key.pem"
    old_file.parent.mkdir()
    old_file.write_bytes(key_file.read_bytes())
    monkeypatch.setenv("DATABASE_URL", app.config["DATABASE_URL"])
    monkeypatch.setenv("SECRET_KEY", "x")
    monkeypatch.setenv("SIGNING_KEY_FILE", str(old_file))
    check_settings()  # the key in use: nothing to say
    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    with pytest.raises(config.SettingsError) as refused:
        check_settings()
    said = str(refused.value)
    assert said.startswith(f"SIGNING_KEY_FILE {old_file} holds key ")
    assert "which `flask keys rotate` retired on " in said
    monkeypatch.setenv("SIGNING_KEY_FILE", str(key_file))
    check_settings()  # the new key file: in use
