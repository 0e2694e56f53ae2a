"""The signing key: made on first start, registered (audited) on first use; a new key retires
the old one, which stays listed with its retirement time."""

from __future__ import annotations

import io
import json
from pathlib import Path

from flask import Flask
from service_support import PASSWORD
from service_support import verify_with_known_key
from sqlalchemy import select
from sqlalchemy.orm import Session

from sota_casino.core import fairness
from sota_casino.factory import create_app
from sota_casino.models import AuditEntry
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services import fairness as fairness_service


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
    assert bundle["public_key_hex"] == new_key and bundle["key_changes"] == [change]

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
    assert "no key change signed by the trusted key names it: refused" in out.getvalue()


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
