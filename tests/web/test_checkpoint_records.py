"""What a checkpoint signed on a staff member's download leaves in the audit log: the same as
one signed for any other asker. The console's and the API's exports of the whole log sign the
new key's first checkpoint right after `flask keys rotate` and a restart; so do `flask audit
export` and a player's bundle. Each signs one checkpoint over the whole log with the new key
and adds no entry of its own (docs/fairness.md, *When checkpoints are signed*); only a
checkpoint asked for as such (*Make a checkpoint now*, its API call, `flask audit checkpoint`)
is audited, as `audit.checkpoint` by whoever asked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from operator_support import add_user
from operator_support import bearer
from operator_support import client_as
from operator_support import db
from sqlalchemy import select

from sota_casino.models import AuditCheckpoint
from sota_casino.models import AuditEntry
from sota_casino.services import audit
from sota_casino.services import fairness


def _records(app: Flask) -> tuple[list[tuple[str | None, str, str | None]], list[Any]]:
    """Every audit entry (actor, action, subject), and every checkpoint (size, key)."""
    session = db(app)
    try:
        entries = session.execute(
            select(AuditEntry.actor, AuditEntry.action, AuditEntry.subject).order_by(AuditEntry.seq)
        ).all()
        signed = session.execute(
            select(AuditCheckpoint.size, AuditCheckpoint.public_key_hex).order_by(
                AuditCheckpoint.size
            )
        ).all()
    finally:
        session.close()
    return [tuple(row) for row in entries], [tuple(row) for row in signed]


@dataclass
class Askers:
    """The staff member's and the player's ways in, made before anything is counted (a login
    is an entry of its own)."""

    page: FlaskClient
    staff_api: dict[str, str]
    player_api: dict[str, str]
    pair: int


def _console_export(app: Flask, tmp_path: Path, askers: Askers) -> None:
    answer = askers.page.get("/operator/audit/export")
    assert answer.status_code == 200 and answer.get_data()


def _api_export(app: Flask, tmp_path: Path, askers: Askers) -> None:
    answer = app.test_client().get("/api/v1/operator/audit/export", headers=askers.staff_api)
    assert answer.status_code == 200 and answer.get_data()


def _command_export(app: Flask, tmp_path: Path, askers: Askers) -> None:
    with app.app_context():
        done = app.test_cli_runner().invoke(args=["audit", "export", str(tmp_path / "log.jsonl")])
    assert done.exit_code == 0, done.output


def _player_bundle(app: Flask, tmp_path: Path, askers: Askers) -> None:
    answer = app.test_client().get(
        f"/api/v1/fairness/seed-pairs/{askers.pair}/bundle", headers=askers.player_api
    )
    assert answer.status_code == 200


@pytest.mark.parametrize(
    "sign",
    [_console_export, _api_export, _command_export, _player_bundle],
    ids=lambda f: f.__name__,
)
def test_a_checkpoint_a_staff_download_signs_is_recorded_as_one_any_other_asker_has_signed(
    app: Flask,
    make_app: Callable[..., Flask],
    tmp_path: Path,
    sign: Callable[[Flask, Path, Askers], None],
) -> None:
    alice = add_user(app, "alice")
    olga = add_user(app, "olga", "operator")
    session = db(app)
    try:
        audit.checkpoint(session)
        old_key = fairness.public_key_info(session).public_key_hex
        pair = fairness.active_seed_pair(session, alice).seed_pair_id
    finally:
        session.close()
    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    restarted = make_app()  # a restart: it signs with the new key file
    askers = Askers(
        client_as(restarted, olga), bearer(restarted, "olga"), bearer(restarted, "alice"), pair
    )
    entries, signed = _records(restarted)
    assert signed[-1][1] == old_key and "key.changed" in [e[1] for e in entries]

    sign(restarted, tmp_path, askers)
    after, signed_after = _records(restarted)
    new_key = signed_after[-1][1]
    assert new_key != old_key
    # One checkpoint, by the new key, over the whole log as it was, and no entry of its own.
    assert signed_after[len(signed) :] == [(len(entries), new_key)]
    assert after == entries
