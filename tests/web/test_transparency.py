"""The public transparency log end to end: checkpoints and proofs for anyone, anchors for the
owner, and what they catch: a re-committed pair, a rewritten round, a forked log (the monitor),
whatever the operator does with the key and the database."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from log_support import fork_log
from log_support import sign_backdated
from log_support import take_out
from serving_support import serving
from sqlalchemy import select
from sqlalchemy import text
from test_openapi import Checker
from weak_key_support import ANYONES_SIGNATURE
from weak_key_support import IDENTITY_KEY_HEX
from web_support import bearer
from werkzeug.serving import make_server

from sota_casino.core import anchors
from sota_casino.core import audit_chain
from sota_casino.core import fairness
from sota_casino.core import merkle
from sota_casino.factory import create_app
from sota_casino.models import AuditCheckpoint
from sota_casino.models import AuditEntry
from sota_casino.models import Round
from sota_casino.models import SeedPair
from sota_casino.services import audit
from sota_casino.verify import FAIL
from sota_casino.verify import PENDING
from sota_casino.verify import cli as verify_cli
from sota_casino.verify import main as verify_main
from sota_casino.verify import monitor as monitor_module
from sota_casino.verify import runner as verify_runner
from sota_casino.verify import verify_bundle
from sota_casino.verify.monitor import monitor
from sota_casino.web.openapi import openapi_document

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))
import forgeries  # noqa: E402  (the cheating casino's forgeries, shared with the page's tests)

API = "/api/v1"


@pytest.fixture
def app(make_app: Callable[..., Flask]) -> Flask:
    return make_app(CHECKPOINT_MIN_SECONDS=0)


def _play(client: FlaskClient, auth: dict[str, str], rounds: int = 4) -> list[dict[str, Any]]:
    """Play Casino War rounds (going to war at every tie) and a Sota game."""
    played = [_war_round(client, auth) for _ in range(rounds)]
    played.append(client.post(f"{API}/sota/games", json={"stake": 2}, headers=auth).get_json())
    return played


def _war_round(client: FlaskClient, auth: dict[str, str]) -> dict[str, Any]:
    """Play a Casino War round to its end, going to war at a tie."""
    result: dict[str, Any] = client.post(
        f"{API}/casino-war/rounds", json={"bet": 100}, headers=auth
    ).get_json()
    if result["status"] == "awaiting_decision":
        url = f"{API}/casino-war/rounds/{result['id']}/decision"
        result = client.post(url, json={"choice": "war"}, headers=auth).get_json()
    return result


def _session(app: Flask) -> Any:
    return app.extensions["sota_casino.sessionmaker"]()


def _context(app: Flask) -> Any:
    return _session(app).info["context"]


def _key(app: Flask) -> str:
    return str(_context(app).public_key_hex)


def _walk(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


# --- the endpoints ------------------------------------------------------------------------------


def test_a_players_round_proof_anchors_its_entries_in_a_public_signed_checkpoint(
    client: FlaskClient, app: Flask, auth: dict[str, str]
) -> None:
    plain = client.get(f"{API}/transparency/checkpoint")
    assert plain.status_code == 404 and plain.get_json()["error"]["code"] == "not_found"
    round_ = _play(client, auth)[0]
    proof = client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    assert proof.status_code == 200, proof.get_json()
    body = proof.get_json()
    checkpoint = body["checkpoint"]["document"]
    assert fairness.verify_signature(_key(app), checkpoint, body["checkpoint"]["signature"])
    kinds = [a["of"]["kind"] for a in body["anchors"]]
    assert kinds[:3] == ["commitment", "bet", "settlement"] and set(kinds) <= {
        "commitment",
        "bet",
        "settlement",
        "decision",
    }
    for anchor in body["anchors"]:
        assert anchors.proof_problem(anchor, checkpoint) is None
    commitment, bet, settlement = body["anchors"][:3]
    assert commitment["leaf_index"] < bet["leaf_index"] < settlement["leaf_index"]
    receipt = client.get(f"{API}/rounds/{round_['id']}/receipt", headers=auth).get_json()
    assert anchors.bet_problem(bet["entry"], receipt["document"]) is None
    assert settlement["entry"]["data"]["receipt"] == anchors.receipt_hash(
        client.get(f"{API}/rounds/{round_['id']}/receipt", headers=auth).get_json()["document"]
    )

    # Anyone, without logging in, sees the same checkpoint: hashes, never an entry.
    public = client.get(f"{API}/transparency/checkpoint").get_json()
    assert public["checkpoint"]["document"] == checkpoint
    assert (public["size"], public["root"]) == (checkpoint["size"], checkpoint["root"])
    assert audit_chain.open_checkpoint_note(public["note"], _key(app), public["origin"])[1:] == (
        checkpoint["size"],
        checkpoint["root"],
    )
    assert not {"entry", "entries", "data", "actor"} & set(_walk(public))
    by_size = client.get(f"{API}/transparency/checkpoints/{checkpoint['size']}").get_json()
    assert by_size["checkpoint"] == public["checkpoint"]
    missing = client.get(f"{API}/transparency/checkpoints/{checkpoint['size'] + 1}")
    assert missing.status_code == 404

    # Another player cannot tell the round exists.
    other = client.get(f"{API}/rounds/{round_['id']}/proof", headers=bearer(client, "eve"))
    assert other.status_code == 404

    # A later checkpoint extends this one, and the public consistency proof shows it.
    _play(client, auth, 1)
    later = client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth).get_json()
    new = later["checkpoint"]["document"]
    assert new["size"] > checkpoint["size"]
    query = f"old_size={checkpoint['size']}&new_size={new['size']}"
    proved = client.get(f"{API}/transparency/consistency?{query}").get_json()
    assert merkle.verify_consistency(
        checkpoint["size"],
        new["size"],
        bytes.fromhex(checkpoint["root"]),
        bytes.fromhex(new["root"]),
        [bytes.fromhex(h) for h in proved["proof"]],
    )
    unsigned = client.get(f"{API}/transparency/consistency?old_size=1&new_size={new['size']}")
    assert unsigned.status_code == 404  # only between sizes the service signed


def test_a_consistency_proof_asked_backwards_is_a_422_whatever_the_sizes(
    app: Flask, client: FlaskClient, auth: dict[str, str]
) -> None:
    """An old size over the new one can never be valid: it is refused as such (422 naming
    old_size), not as a size no checkpoint was signed over (404), which a script would retry
    once the log had grown."""
    round_ = _play(client, auth, 1)[0]
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)  # signs a checkpoint
    latest = client.get(f"{API}/transparency/checkpoint").get_json()["size"]
    check = Checker(openapi_document(app), client)
    for old, new in ((latest + 800, 1), (latest + 800, latest), (latest, 1)):
        refused = check("get", f"/transparency/consistency?old_size={old}&new_size={new}")
        assert check.response.status_code == 422, (old, new)
        assert refused["error"]["field"] == "old_size"
    for old, new in ((1, latest + 800), (latest, latest + 800)):
        check("get", f"/transparency/consistency?old_size={old}&new_size={new}")
        assert check.response.status_code == 404, (old, new)
    document = openapi_document(app)
    refusal = document["paths"]["/transparency/consistency"]["get"]["responses"]["422"]
    assert any("old_size above new_size" in rule for rule in refusal["x-beyond-schema"])


def _tie(client: FlaskClient, auth: dict[str, str]) -> int:
    """Bet until a round ties, and return its id (it waits for the decision)."""
    for _ in range(400):
        round_ = client.post(f"{API}/casino-war/rounds", json={"bet": 100}, headers=auth).get_json()
        if round_["status"] == "awaiting_decision":
            return int(round_["id"])
    raise AssertionError("no tie in 400 rounds")


def test_a_checkpoint_a_retired_key_signed_is_served_with_no_note_after_the_restart(
    client: FlaskClient, app: Flask, auth: dict[str, str]
) -> None:
    """docs/fairness.md, "The public log": the key in use signs the notes, and only of the
    checkpoints it signed; a retired key signs nothing more, so its checkpoints have no note."""
    old_key = _key(app)
    round_ = _play(client, auth, 1)[0]
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    old = client.get(f"{API}/transparency/checkpoint").get_json()
    assert audit_chain.open_checkpoint_note(old["note"], old_key, old["origin"])[1:] == (
        old["size"],
        old["root"],
    )
    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    renewed = create_app(dict(app.config))  # the restart: it loads the new key file
    renewed_client = renewed.test_client()
    _play(renewed_client, auth, 1)
    renewed_client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    latest = renewed_client.get(f"{API}/transparency/checkpoint").get_json()
    new_key = latest["checkpoint"]["public_key_hex"]
    assert new_key != old_key and latest["size"] > old["size"]
    assert audit_chain.open_checkpoint_note(latest["note"], new_key, latest["origin"])[1:] == (
        latest["size"],
        latest["root"],
    )
    retired = renewed_client.get(f"{API}/transparency/checkpoints/{old['size']}").get_json()
    assert retired["checkpoint"] == old["checkpoint"] and retired["note"] is None
    renewed.extensions["sota_casino.engine"].dispose()


def test_the_api_document_names_every_entry_a_round_proof_anchors_and_an_open_round_has_none(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    war = _tie(client, auth)
    client.post(f"{API}/casino-war/rounds/{war}/decision", json={"choice": "war"}, headers=auth)
    proof = client.get(f"{API}/rounds/{war}/proof", headers=auth).get_json()
    kinds = {anchor["of"]["kind"] for anchor in proof["anchors"]}
    assert kinds == {"commitment", "bet", "decision", "settlement"}
    described = client.get(f"{API}/openapi.json").get_json()["paths"]["/rounds/{id}/proof"]["get"]
    for kind in kinds:
        assert kind in described["summary"], kind
    # A tie waiting for its decision has no receipt yet, so no proof either.
    assert client.get(f"{API}/rounds/{_tie(client, auth)}/proof", headers=auth).status_code == 404


def test_an_entry_not_yet_in_a_checkpoint_is_a_retryable_409_and_a_pending_anchor(
    make_app: Callable[..., Flask],
) -> None:
    app = make_app(CHECKPOINT_MIN_SECONDS=3600)
    client = app.test_client()
    auth = bearer(client, "bob")
    first = _play(client, auth, 1)[0]
    assert client.get(f"{API}/rounds/{first['id']}/proof", headers=auth).status_code == 200
    late = _play(client, auth, 1)[0]
    refused = client.get(f"{API}/rounds/{late['id']}/proof", headers=auth)
    assert refused.status_code == 409
    assert refused.get_json()["error"]["code"] == "not_yet_anchored"
    assert 3500 < int(refused.headers["Retry-After"]) <= 3600
    assert "not in a signed checkpoint yet" in refused.get_json()["error"]["message"]

    bundle = client.get(
        f"{API}/fairness/seed-pairs/{late['seed_pair_id']}/bundle", headers=auth
    ).get_json()
    pending_rounds = {p["of"].get("round_id") for p in bundle["pending_anchors"]}
    assert late["id"] in pending_rounds and first["id"] not in pending_rounds
    report = verify_bundle(bundle, _key(app))
    assert report.ok, [f.text() for f in report.failures]
    (row,) = [row for row in report.rounds if row.round_id == late["id"]]
    assert row.statuses["log"] == PENDING


@pytest.mark.tampers
def test_a_round_taken_out_of_the_log_is_not_yet_anchored_only_within_the_bound(
    make_app: Callable[..., Flask], tmp_path: Path
) -> None:
    """An operator with the database takes a settled round's entries out of the log before a
    checkpoint covers them: the proof's 409 and the bundle carry the latest signed checkpoint,
    so once one is dated past the round's settlement and the bound, the player's verifier
    names the round left out instead of waiting for it forever."""
    app = make_app(CHECKPOINT_MIN_SECONDS=0)
    client = app.test_client()
    auth = bearer(client, "bob")
    first = _play(client, auth, 1)[0]
    assert client.get(f"{API}/rounds/{first['id']}/proof", headers=auth).status_code == 200
    late = _war_round(client, auth)  # the pair's last: a later bet would show it left out
    session = _session(app)
    with session.begin():
        subject = anchors.round_subject(late["id"])
        seqs = session.scalars(select(AuditEntry.seq).where(AuditEntry.subject == subject)).all()
    take_out(session, list(seqs))
    check = Checker(openapi_document(app), client)
    bundle_url = f"/fairness/seed-pairs/{late['seed_pair_id']}/bundle"

    refused = check("get", f"/rounds/{late['id']}/proof", headers=auth)
    assert check.response.status_code == 409 and refused["error"]["code"] == "not_yet_anchored"
    signed_now = refused["checkpoint"]  # signed on demand over the log without the round
    assert fairness.verify_signature(_key(app), signed_now["document"], signed_now["signature"])
    bundle = check("get", bundle_url, headers=auth)
    assert bundle["checkpoints"] == [signed_now]
    report = verify_bundle(bundle, _key(app))
    assert report.ok and report.not_yet_anchored, [f.text() for f in report.failures]
    (row,) = [row for row in report.rounds if row.round_id == late["id"]]
    assert row.statuses["log"] == PENDING

    (receipt,) = [
        r["document"] for r in bundle["rounds"] if r["document"]["round_id"] == late["id"]
    ]
    settled_at = receipt["settled_at"]
    past = fairness.format_time(fairness.parse_time(settled_at) + anchors.ANCHOR_BOUND * 1.001)
    sign_backdated(session, past)  # the next checkpoint, dated past the bound
    refused = check("get", f"/rounds/{late['id']}/proof", headers=auth)
    assert check.response.status_code == 409 and refused["checkpoint"]["document"]["time"] == past
    bundle = check("get", bundle_url, headers=auth)
    size = bundle["checkpoints"][0]["document"]["size"]
    report = verify_bundle(bundle, _key(app))
    (row,) = [row for row in report.rounds if row.round_id == late["id"]]
    assert not report.ok and row.statuses["log"] == FAIL
    said = (
        f"settled at {settled_at}, not in the checkpoint signed at {past} (size {size}), past "
        "the bound of 1 hour: the round was left out of the log"
    )
    assert [f.message for f in report.failures] == [said]
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    out = io.StringIO()
    assert verify_main([str(path), "--public-key", _key(app)], out, io.StringIO()) == 1
    assert f"round {late['id']} (nonce {receipt['nonce']}): log: {said}" in out.getvalue()


def _pair_bundle(client: FlaskClient, auth: dict[str, str], seed_pair_id: int) -> Any:
    answer = client.get(f"{API}/fairness/seed-pairs/{seed_pair_id}/bundle", headers=auth)
    assert answer.status_code == 200
    return answer.get_json()


def _past_the_bound(time: str) -> str:
    return fairness.format_time(fairness.parse_time(time) + anchors.ANCHOR_BOUND * 1.001)


def _unplayed_pairs(client: FlaskClient, auth: dict[str, str]) -> tuple[Any, Any]:
    """Rotate a player's first pair, never played: its bundle (revealed), and the bundle of the
    pair the rotation activated, committed when the player signed up."""
    first = client.get(f"{API}/fairness/seed-pair", headers=auth).get_json()
    assert client.post(f"{API}/fairness/rotate", json={}, headers=auth).status_code == 200
    active = first["next_seed_pair_id"]
    return _pair_bundle(client, auth, first["seed_pair_id"]), _pair_bundle(client, auth, active)


def test_an_honest_pairs_commitment_and_reveal_are_in_every_checkpoint_signed_after_them(
    make_app: Callable[..., Flask],
) -> None:
    """The service logs a pair's commitment (its reveal) in the transaction that signs it, and
    signs each checkpoint over the whole log: a checkpoint dated past the ``created_at``
    (``revealed_at``) and the bound anchors it, also for a pair nobody played, so the bound
    fails no honest bundle."""
    app = make_app(CHECKPOINT_MIN_SECONDS=0)
    client = app.test_client()
    auth = bearer(client, "bob")
    revealed, active = _unplayed_pairs(client, auth)
    later = _past_the_bound(revealed["reveal"]["document"]["revealed_at"])
    sign_backdated(_session(app), later)  # the next checkpoint, signed past both bounds
    for earlier in (revealed, active):
        bundle = _pair_bundle(client, auth, earlier["commitment"]["document"]["seed_pair_id"])
        assert [c["document"]["time"] for c in bundle["checkpoints"]] == [later]
        assert bundle["pending_anchors"] == []
        report = verify_bundle(bundle, _key(app))
        assert report.ok and not report.not_yet_anchored, [f.text() for f in report.failures]
        assert {row.statuses["log"] for row in report.documents} == {"pass"}


@pytest.mark.tampers
def test_a_commitment_or_a_reveal_taken_out_of_the_log_is_not_yet_anchored_only_within_the_bound(
    make_app: Callable[..., Flask],
) -> None:
    """An operator with the database takes a pair's commitment entry (a pair nobody played, so
    nothing its log takes after it shows it) or its reveal's (which nothing follows) out of the
    log before a checkpoint covers it: the bundle carries the latest signed checkpoint, so once
    one is dated past the document's ``created_at`` (``revealed_at``) and the bound, the
    player's verifier names it left out instead of waiting for it forever."""
    app = make_app(CHECKPOINT_MIN_SECONDS=0)
    client = app.test_client()
    auth = bearer(client, "bob")
    revealed, active = _unplayed_pairs(client, auth)
    session = _session(app)
    cases = (
        (revealed, anchors.REVEAL_ACTION, "reveal", "revealed at"),
        (active, anchors.COMMITMENT_ACTION, "commitment", "created at"),
    )
    for bundle, action, kind, said_at in cases:
        seed_pair_id = bundle["commitment"]["document"]["seed_pair_id"]
        dated_at = bundle[kind]["document"][said_at.replace(" ", "_")]
        with session.begin():
            (seq,) = session.scalars(
                select(AuditEntry.seq).where(
                    AuditEntry.action == action,
                    AuditEntry.subject == anchors.pair_subject(seed_pair_id),
                )
            ).all()
        take_out(session, [seq])
        served = _pair_bundle(client, auth, seed_pair_id)  # a checkpoint signed on demand, now
        assert [p["of"]["kind"] for p in served["pending_anchors"]] == [kind]
        report = verify_bundle(served, _key(app))
        assert report.ok and report.not_yet_anchored, [f.text() for f in report.failures]

        past = _past_the_bound(dated_at)
        sign_backdated(session, past)  # the next checkpoint, dated past the bound
        served = _pair_bundle(client, auth, seed_pair_id)
        size = served["checkpoints"][0]["document"]["size"]
        report = verify_bundle(served, _key(app))
        said = (
            f"{kind} document: log: {said_at} {dated_at}, not in the checkpoint signed at "
            f"{past} (size {size}), past the bound of 1 hour: it was left out of the log"
        )
        assert [f.text() for f in report.failures] == [said]


def test_outsiders_cannot_make_the_service_sign(
    make_app: Callable[..., Flask],
) -> None:
    app = make_app(CHECKPOINT_MIN_SECONDS=3600)
    client = app.test_client()
    auth = bearer(client, "bob")
    round_ = _play(client, auth, 1)[0]
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)

    def signed() -> int:
        with _session(app) as session:
            return len(session.scalars(select(AuditCheckpoint.id)).all())

    before = signed()
    _play(client, auth, 1)
    for _ in range(20):
        client.get(f"{API}/transparency/checkpoint")
        client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
        client.get(f"{API}/fairness/seed-pairs/{round_['seed_pair_id']}/bundle", headers=auth)
    assert signed() == before == 1


# --- what the anchors catch ---------------------------------------------------------------------


def _revealed_bundle(client: FlaskClient, auth: dict[str, str], seed_pair_id: int) -> Any:
    client.post(f"{API}/fairness/rotate", json={}, headers=auth)
    answer = client.get(f"{API}/fairness/seed-pairs/{seed_pair_id}/bundle", headers=auth)
    assert answer.status_code == 200
    return answer.get_json()


def _store_forgery(app: Flask, forged: dict[str, Any]) -> None:
    """As an operator with the key and the database: put a forged pair and its receipts in
    place of the real ones, settled-round guard and all (the log is left as it was)."""
    with _session(app) as session, session.begin():
        for event in ("update", "delete"):
            session.execute(text(f"DROP TRIGGER rounds_settled_no_{event}"))
        doc = forged["commitment"]["document"]
        pair = session.get(SeedPair, doc["seed_pair_id"])
        pair.commitment = doc["commitment"]
        pair.commitment_document = doc
        pair.commitment_signature = forged["commitment"]["signature"]
        pair.server_seed = forged["reveal"]["document"]["server_seed"]
        pair.reveal_document = forged["reveal"]["document"]
        pair.reveal_signature = forged["reveal"]["signature"]
        for signed in forged["rounds"]:
            row = session.get(Round, signed["document"]["round_id"])
            row.receipt = signed["document"]
            row.receipt_signature = signed["signature"]


def _verify_cli(tmp_path: Path, bundle: Any, key: str) -> tuple[int, str]:
    import io

    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    out = io.StringIO()
    code = verify_main([str(path), "--public-key", key], out, io.StringIO())
    return code, out.getvalue()


def test_a_pair_recommitted_after_its_rounds_contradicts_the_signed_checkpoint(
    client: FlaskClient, app: Flask, auth: dict[str, str], tmp_path: Path
) -> None:
    seed_pair_id = _play(client, auth)[0]["seed_pair_id"]
    honest = _revealed_bundle(client, auth, seed_pair_id)
    assert verify_bundle(honest, _key(app)).ok
    key = _context(app).signing_key
    _store_forgery(app, forgeries.recommitted(honest, key))

    served = client.get(f"{API}/fairness/seed-pairs/{seed_pair_id}/bundle", headers=auth)
    bundle = served.get_json()
    report = verify_bundle(bundle, _key(app))
    failed = {(f.where, f.check) for f in report.failures}
    assert failed and {check for _, check in failed} == {"log"}, failed  # all else is consistent
    assert ("commitment", "log") in failed
    code, out = _verify_cli(tmp_path, bundle, _key(app))
    assert code == 1
    size = bundle["checkpoints"][0]["document"]["size"]
    (line,) = [line for line in out.splitlines() if "commitment document: log:" in line]
    logged = honest["commitment"]["document"]["commitment"]
    assert f"the log recorded commitment {logged[:16]}… for this pair" in line
    assert f"in the checkpoint over {size} entries" in line and _key(app)[:16] in line


def test_a_round_rewritten_after_it_settled_contradicts_the_signed_checkpoint(
    make_app: Callable[..., Flask], tmp_path: Path
) -> None:
    from web_support import plant_server_seed

    app = make_app(CHECKPOINT_MIN_SECONDS=0)
    client = app.test_client()
    auth = bearer(client, "bob")
    plant_server_seed(app, "bob", {0: True, 1: False})
    seed_pair_id = _play(client, auth, 2)[0]["seed_pair_id"]
    honest = _revealed_bundle(client, auth, seed_pair_id)
    key = _context(app).signing_key
    forged, round_id = forgeries.war_into_surrender(honest, key)
    _store_forgery(app, forged)

    bundle = client.get(f"{API}/fairness/seed-pairs/{seed_pair_id}/bundle", headers=auth).get_json()
    report = verify_bundle(bundle, _key(app))
    failures = report.failures
    assert failures and all(f.check == "log" and f.round_id == round_id for f in failures)
    messages = " ".join(f.message for f in failures)
    assert "the receipt was rewritten" in messages
    assert "the log recorded the player's actions ['war'], the receipt lists ['surrender']" in (
        messages
    )
    assert f"signed by {_key(app)[:16]}…" in messages


# --- the monitor --------------------------------------------------------------------------------


@pytest.fixture
def served(app: Flask) -> Iterator[str]:
    """The app on a real port (the monitor speaks HTTP), threaded, stopped after the test."""
    with _serving(app) as url:
        yield url


def _serve_key_changes(handler: Any, checkpoint: Any, published: Any) -> None:
    """Serve ``checkpoint`` and the public key's answer ``published`` (its key changes)."""
    handler.bodies = {
        "/api/v1/transparency/checkpoint": json.dumps({"checkpoint": checkpoint}).encode(),
        "/api/v1/fairness/public-key": json.dumps(published).encode(),
    }


def _monitor(url: str, state: Path, *extra: str) -> tuple[int, str]:
    import io

    out = io.StringIO()
    code = verify_main(["monitor", url, "--state", str(state), *extra], out, io.StringIO())
    return code, out.getvalue().strip()


def test_the_monitor_keeps_consistent_checkpoints_and_names_a_fork(
    client: FlaskClient, app: Flask, auth: dict[str, str], served: str, tmp_path: Path
) -> None:
    state = tmp_path / "witness"
    key = _key(app)
    round_ = _play(client, auth, 2)[0]
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    code, line = _monitor(served, state, "--public-key", key)
    assert code == 0 and line.startswith("OK: first checkpoint kept"), line
    kept = json.loads((state / "checkpoint.json").read_text())["document"]
    assert _monitor(served, state) == (0, f"OK: unchanged, size {kept['size']} root {kept['root']}")

    _play(client, auth, 1)
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    code, line = _monitor(served, state)
    assert code == 0 and line.startswith("OK: consistent"), line
    kept = json.loads((state / "checkpoint.json").read_text())["document"]

    fork_log(_session(app), 3, kept["size"])  # one entry changed, signed over the same size
    forked = client.get(f"{API}/transparency/checkpoint").get_json()
    code, line = _monitor(served, state)
    assert code == 1, line
    assert line.startswith(f"FORK: two signed checkpoints over {kept['size']} entries differ")
    assert f"kept size {kept['size']} root {kept['root']}" in line
    assert f"served size {forked['size']} root {forked['root']}" in line
    evidence = json.loads(next(state.glob("evidence-*.json")).read_text())
    assert evidence["kept"]["document"] == kept
    assert evidence["seen"]["document"] == forked["checkpoint"]["document"]
    assert json.loads((state / "checkpoint.json").read_text())["document"] == kept  # not moved

    # Grown past the fork: the proof the service gives leads from its forked tree, not the kept.
    _play(client, auth, 1)
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    code, line = _monitor(served, state)
    assert code == 1, line
    assert line.startswith("FORK: the served checkpoint does not extend the kept one"), line
    assert f"kept size {kept['size']} root {kept['root']}" in line


def test_the_monitor_refuses_a_newer_checkpoint_dated_before_the_kept_one(
    client: FlaskClient, app: Flask, auth: dict[str, str], served: str, tmp_path: Path
) -> None:
    """The cheat who left a round out of the log dates its new checkpoints back, so that none
    is dated past the round's bound: every one still extends the tree, but not the time."""
    state = tmp_path / "witness"
    round_ = _play(client, auth, 2)[0]
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    assert _monitor(served, state, "--public-key", _key(app))[0] == 0
    kept = json.loads((state / "checkpoint.json").read_text())["document"]

    _play(client, auth, 1)
    earlier = fairness.format_time(fairness.parse_time(kept["time"]).replace(year=2020))
    backdated = sign_backdated(_session(app), earlier)["document"]
    assert backdated["size"] > kept["size"]
    code, line = _monitor(served, state)
    assert code == 1, line
    assert line.startswith(
        "BACKDATED: the served checkpoint is dated before the kept one, which it follows: "
        f"kept size {kept['size']} root {kept['root']} at {kept['time']}, served size "
        f"{backdated['size']} root {backdated['root']} at {earlier}"
    ), line
    assert json.loads((state / "checkpoint.json").read_text())["document"] == kept
    evidence = json.loads(next(state.glob("evidence-*.json")).read_text())
    assert evidence["seen"]["document"] == backdated

    # Published by another witness: a checkpoint over fewer entries signed again, dated later.
    other = tmp_path / "other"
    assert _monitor(served, other, "--public-key", _key(app))[0] == 0
    mine = json.loads((other / "checkpoint.json").read_text())["document"]
    later = fairness.format_time(fairness.parse_time(mine["time"]).replace(year=2099))
    resigned = audit_chain.checkpoint_document(kept["size"], kept["root"], later)
    published = tmp_path / "published.json"
    signature = fairness.sign(_context(app).signing_key, resigned)
    published.write_text(json.dumps({"document": resigned, "signature": signature}))
    code, line = _monitor(served, other, "--compare", str(published))
    assert code == 1, line
    assert line.startswith(
        "BACKDATED: of two signed checkpoints, the one over more entries is dated before the one "
        f"over fewer: kept size {mine['size']} root {mine['root']} at {mine['time']}, published "
        f"in {published} size {kept['size']} root {kept['root']} at {later}"
    ), line


def test_the_monitor_compares_what_other_witnesses_published_and_names_a_split_view(
    client: FlaskClient, app: Flask, auth: dict[str, str], served: str, tmp_path: Path
) -> None:
    """A split view shows each witness one history: each alone sees nothing wrong. Given the
    checkpoint another witness published, the monitor holds it to its own, at one size or by a
    consistency proof, and the two signed checkpoints are the evidence."""
    key = _key(app)
    round_ = _play(client, auth, 1)[0]
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    assert _monitor(served, theirs, "--public-key", key)[0] == 0
    published = str(theirs / "checkpoint.json")
    honest = json.loads((theirs / "checkpoint.json").read_text())["document"]
    code, line = _monitor(served, mine, "--public-key", key, "--compare", published)
    assert code == 0, line
    assert line.endswith(f"; joined the published {published} ({_described(honest)})"), line

    # The other history, over the same size, shown only to this witness from its start.
    fork_log(_session(app), 3, honest["size"])
    for name in ("checkpoint.json", "public_key"):
        (mine / name).unlink()
    assert _monitor(served, mine, "--public-key", key)[0] == 0  # alone, it sees nothing wrong
    forked = json.loads((mine / "checkpoint.json").read_text())["document"]
    assert forked["size"] == honest["size"] and forked["root"] != honest["root"]
    code, line = _monitor(served, mine, "--compare", published)
    assert code == 1, line
    assert line.startswith(
        f"FORK: two signed checkpoints over {honest['size']} entries differ: "
        f"kept {_described(forked)}, published in {published} {_described(honest)}; evidence in "
    ), line
    evidence = json.loads(next(mine.glob("evidence-*.json")).read_text())
    assert evidence["kept"]["document"] == forked and evidence["seen"]["document"] == honest

    # Grown on this side: the service's proof from the published size leads from its own tree.
    _play(client, auth, 1)
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    code, line = _monitor(served, mine, "--compare", published)
    assert code == 1, line
    grown = json.loads((mine / "checkpoint.json").read_text())["document"]
    assert grown["size"] > honest["size"]
    assert line.startswith(
        "FORK: the service's consistency proof does not join two checkpoints it signed: "
        f"kept {_described(grown)}, published in {published} {_described(honest)}"
    ), line

    # One not signed by the pinned key is evidence of nothing.
    stranger = tmp_path / "stranger.json"
    forged = json.loads((theirs / "checkpoint.json").read_text())
    forged["signature"] = fairness.sign(fairness.new_signing_key(), forged["document"])
    stranger.write_text(json.dumps(forged))
    code, line = _monitor(served, mine, "--compare", str(stranger))
    assert code == 2 and "is not signed by the pinned key" in line, line


def test_a_bundle_proved_into_a_forked_log_passes_alone_but_not_against_a_witness(
    client: FlaskClient, app: Flask, auth: dict[str, str], served: str, tmp_path: Path
) -> None:
    """The casino shows this player a bundle anchored in a history of its own, signed with its
    key, and everyone else the true log: the bundle verifies alone, and only its checkpoints
    held to one a witness kept show the fork."""
    key = _key(app)
    round_ = _play(client, auth, 1)[0]
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    state = tmp_path / "witness"
    assert _monitor(served, state, "--public-key", key)[0] == 0
    kept = json.loads((state / "checkpoint.json").read_text())["document"]
    with _session(app) as session:
        actor = session.scalar(select(AuditEntry.actor).where(AuditEntry.seq == 3))

    fork_log(_session(app), 3, kept["size"])  # the history shown to this player alone
    bundle = _revealed_bundle(client, auth, round_["seed_pair_id"])
    code, output = _verify_cli(tmp_path, bundle, key)
    assert code == 0, output
    fork_log(_session(app), 3, kept["size"], actor=actor)  # the true log, for everyone else
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    assert _monitor(served, state)[0] == 0

    saved = tmp_path / "bundle.json"
    code, line = _monitor(served, state, "--compare", str(saved))
    assert code == 1, line
    (forked,) = bundle["checkpoints"]
    assert line.startswith("FORK: "), line
    assert f"published in {saved} {_described(forked['document'])}" in line, line

    # A checkpoint no key of the witness signed, or one that is no checkpoint, listed beside the
    # forked one hides nothing: the forked one is still compared, and the others named.
    stranger = dict(
        forked,
        signature=fairness.sign(
            fairness.new_signing_key(), forged_doc := {**forked["document"], "root": "cd" * 32}
        ),
    )
    assert forged_doc["size"] == forked["document"]["size"]
    for stray in (stranger, {"document": {"type": "checkpoint"}, "signature": "00"}):
        saved.write_text(json.dumps(dict(bundle, checkpoints=[stray, forked])), encoding="utf-8")
        code, line = _monitor(served, state, "--compare", str(saved))
        assert code == 1 and line.startswith("FORK: "), line
        assert f"published in {saved} {_described(forked['document'])}" in line, line
        assert f"; also in {saved}: 1 checkpoint not signed by a key of this witness" in line


def _described(doc: dict[str, Any]) -> str:
    return f"size {doc['size']} root {doc['root']}"


@contextmanager
def _serving(app: Flask) -> Iterator[str]:
    with serving(make_server("127.0.0.1", 0, app, threaded=True)) as server:
        yield f"http://127.0.0.1:{server.server_port}"


def test_the_monitor_follows_a_key_change_the_pinned_key_signed_and_still_names_a_fork(
    client: FlaskClient, app: Flask, auth: dict[str, str], served: str, tmp_path: Path
) -> None:
    """After `flask keys rotate` and a restart, the checkpoints are signed by the new key: the
    monitor follows the key change the pinned key signed, keeps holding the log to the
    checkpoint it kept before, and moves its pin; a process not yet restarted, still signing
    with the retired key, is no alarm. A key change the pinned key did not sign moves nothing."""
    state = tmp_path / "witness"
    old_key = _key(app)
    round_ = _play(client, auth, 1)[0]
    client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    assert _monitor(served, state, "--public-key", old_key)[0] == 0
    kept = json.loads((state / "checkpoint.json").read_text())["document"]

    assert app.test_cli_runner().invoke(args=["keys", "rotate"]).exit_code == 0
    renewed = create_app(dict(app.config))  # the restart: it loads the new key file
    new_key = str(renewed.extensions["sota_casino.sessionmaker"]().info["context"].public_key_hex)
    assert new_key != old_key
    renewed_client = renewed.test_client()
    _play(renewed_client, auth, 1)
    renewed_client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
    with _serving(renewed) as url:
        served_now = renewed_client.get(f"{API}/transparency/checkpoint").get_json()
        assert served_now["checkpoint"]["public_key_hex"] == new_key
        code, line = _monitor(url, state, "--public-key", old_key)  # cron gives the first key
        assert code == 0, line
        assert line.startswith(
            f"OK: consistent, kept size {kept['size']} root {kept['root']}, "
            f"served size {served_now['size']} root {served_now['root']}; kept the new one; "
            f"the key changed, signed by the pinned key: {old_key} to {new_key} at "
        ), line
        assert (state / "public_key").read_text().strip() == new_key
        assert (state / "retired_keys").read_text().split()[0] == old_key

        # The process not yet restarted signs with the retired key: checked, and consistent.
        _play(client, auth, 1)
        client.get(f"{API}/rounds/{round_['id']}/proof", headers=auth)
        assert client.get(f"{API}/fairness/public-key").get_json()["public_key_hex"] == old_key
        code, line = _monitor(served, state)
        assert code == 0 and line.startswith("OK: consistent"), line

        # A history signed anew after the change is still a fork of the one kept before it.
        kept = json.loads((state / "checkpoint.json").read_text())["document"]
        fork_log(_session(renewed), 3, kept["size"])
        code, line = _monitor(url, state)
        assert code == 1 and line.startswith("FORK: two signed checkpoints over"), line
    renewed.extensions["sota_casino.engine"].dispose()

    # A witness pinned to a key that signed no change to the key in use moves nothing.
    other = tmp_path / "other"
    stranger = fairness.public_key_hex(fairness.new_signing_key())
    code, line = _monitor(served, other, "--public-key", stranger)
    assert code == 1 and line.startswith("BAD SIGNATURE: "), line
    assert (other / "public_key").read_text().strip() == stranger
    assert not (other / "checkpoint.json").exists()


class _Canned(BaseHTTPRequestHandler):
    """Answers every GET with the class's ``status`` and ``body``, or with the body ``bodies``
    holds for its path."""

    status = 200
    body = b"<html>not a casino</html>"
    bodies: dict[str, bytes] = {}

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        self.send_response(self.status)
        self.end_headers()
        self.wfile.write(self.bodies.get(self.path, self.body))

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def canned() -> Iterator[tuple[str, type[_Canned]]]:
    handler = type("Handler", (_Canned,), {})
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as server:
        yield f"http://127.0.0.1:{server.server_port}", handler


def test_the_monitor_says_unusable_for_garbage_and_fails_a_bad_signature_or_a_shrink(
    canned: tuple[str, type[_Canned]], tmp_path: Path
) -> None:
    url, handler = canned
    signer = fairness.new_signing_key()
    key = fairness.public_key_hex(signer)
    state = tmp_path / "w"
    assert _monitor(url, state)[0] == 2  # no key pinned yet
    code, line = _monitor(url, state, "--public-key", key)
    assert code == 2 and line.startswith("UNUSABLE:") and "not JSON" in line
    handler.body = b'{"checkpoint": {"document": {"type": "checkpoint"}, "signature": "00"}}'
    code, line = _monitor(url, state)
    assert code == 2 and "did not answer a signed checkpoint" in line, line
    handler.status, handler.body = 503, b'{"error": {"code": "unavailable", "message": "x"}}'
    assert _monitor(url, state)[0] == 2
    assert _monitor("ftp://example.invalid", state)[0] == 2
    assert _monitor("http://127.0.0.1:9", state)[0] == 2  # nothing listens on the discard port
    other = fairness.public_key_hex(fairness.new_signing_key())
    code, line = _monitor(url, state, "--public-key", other)
    assert code == 2 and "not the key this state pins" in line

    def serve(size: int, root: str, by: Any = signer) -> None:
        doc = audit_chain.checkpoint_document(size, root, "2026-01-01T00:00:00.000000Z")
        signed = {"document": doc, "signature": fairness.sign(by, doc), "public_key_hex": key}
        handler.status, handler.body = 200, json.dumps({"checkpoint": signed}).encode()

    serve(5, "ab" * 32, by=fairness.new_signing_key())
    code, line = _monitor(url, state)
    # No key change to name: the line says so, with nothing in brackets.
    assert code == 1 and line == (
        f"BAD SIGNATURE: the checkpoint size 5 root {'ab' * 32} is not signed by the pinned key "
        f"{key}, nor by a key a chain of key changes signed by it leads to; kept: nothing yet"
    ), line
    assert not list(state.glob("evidence-*")), "an unsigned checkpoint is evidence of nothing"
    serve(5, "ab" * 32)
    assert _monitor(url, state)[0] == 0
    serve(4, "cd" * 32)
    code, line = _monitor(url, state)
    assert code == 1 and line.startswith("SHRUNK:"), line
    assert f"kept size 5 root {'ab' * 32}, served size 4 root {'cd' * 32}" in line
    (state / "checkpoint.json").write_text("{not json")
    assert _monitor(url, state)[0] == 2


def test_the_monitor_follows_no_key_change_to_a_key_anyone_can_sign_with(
    canned: tuple[str, type[_Canned]], tmp_path: Path
) -> None:
    """The pinned key signs a key change to the identity key, and the checkpoints are then
    signed as anyone can sign under it: BAD SIGNATURE, naming the change, and the pin stays."""
    url, handler = canned
    pinned = fairness.new_signing_key()
    pinned_hex = fairness.public_key_hex(pinned)
    change = fairness.key_change_document(
        old_public_key_hex=pinned_hex,
        new_public_key_hex=IDENTITY_KEY_HEX,
        changed_at="2026-01-01T00:00:00.000000Z",
    )
    doc = audit_chain.checkpoint_document(5, "ab" * 32, "2026-01-01T00:00:05.000000Z")
    checkpoint = {"document": doc, "signature": ANYONES_SIGNATURE.hex()}
    published = {
        "public_key_hex": IDENTITY_KEY_HEX,
        "key_changes": [fairness.signed(pinned, change)],
    }
    _serve_key_changes(handler, checkpoint, published)
    state = tmp_path / "w"
    code, line = _monitor(url, state, "--public-key", pinned_hex)
    assert code == 1 and line.startswith("BAD SIGNATURE: the checkpoint size 5"), line
    assert (
        f"key {pinned_hex[:16]}… was handed on to key {IDENTITY_KEY_HEX[:16]}…, which is of "
        "small order: signatures anyone makes without a private key verify under it; no change "
        "to such a key is followed"
    ) in line
    assert (state / "public_key").read_text().strip() == pinned_hex
    assert not (state / "checkpoint.json").exists()
    # A state pinned to such a key (as an earlier version followed the change) checks nothing.
    (state / "public_key").write_text(IDENTITY_KEY_HEX + "\n")
    code, line = _monitor(url, state)
    assert code == 2 and "which is of small order" in line, line


def test_the_monitor_checks_a_retired_keys_checkpoint_only_within_the_grace_after_the_change(
    canned: tuple[str, type[_Canned]], tmp_path: Path
) -> None:
    """The pinned key hands the service on, and the monitor follows: a checkpoint the retired
    key signs, from a process not yet restarted, is checked for an hour after this witness
    followed the change, then no longer. Its holder (a key file the operator keeps, perhaps
    leaked) could otherwise sign the checkpoints this witness keeps for good, and disown them."""
    url, handler = canned
    old, new = fairness.new_signing_key(), fairness.new_signing_key()
    old_hex, new_hex = fairness.public_key_hex(old), fairness.public_key_hex(new)
    change = fairness.key_change_document(
        old_public_key_hex=old_hex,
        new_public_key_hex=new_hex,
        changed_at="2026-01-01T00:00:00.000000Z",
    )
    doc = audit_chain.checkpoint_document(5, "ab" * 32, "2026-01-01T00:00:05.000000Z")
    published = {"public_key_hex": new_hex, "key_changes": [fairness.signed(old, change)]}

    def serve_signed_by(key: Any) -> None:
        checkpoint = {"document": doc, "signature": fairness.sign(key, doc)}
        _serve_key_changes(handler, checkpoint, published)

    state = tmp_path / "w"
    followed = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
    serve_signed_by(old)
    assert monitor(url, str(state), old_hex, now=followed - timedelta(hours=1)).code == 0
    serve_signed_by(new)
    verdict = monitor(url, str(state), old_hex, now=followed)
    assert verdict.code == 0 and "the key changed, signed by the pinned key" in verdict.line
    assert (state / "retired_keys").read_text() == f"{old_hex} {fairness.format_time(followed)}\n"

    serve_signed_by(old)
    within = followed + monitor_module.RETIRED_KEY_GRACE
    assert (
        monitor(url, str(state), None, now=within).line
        == f"OK: unchanged, size 5 root {doc['root']}"
    )
    past = monitor(url, str(state), None, now=within + timedelta(microseconds=1))
    assert past.code == 1 and past.line.startswith("BAD SIGNATURE: the checkpoint size 5"), past
    assert (
        f"it is signed by the retired key {old_hex}, which a key change this witness followed at "
        f"{fairness.format_time(followed)} retired: a process not yet restarted signs with it for "
        "1 hour after that, not later"
    ) in past.line
    # A state an earlier version wrote keeps no time: the grace of its retired keys is over.
    (state / "retired_keys").write_text(f"{old_hex}\n")
    unknown = monitor(url, str(state), None, now=followed)
    assert unknown.code == 1 and "at a time this state does not keep" in unknown.line, unknown
    # The new key's checkpoints are checked as ever.
    serve_signed_by(new)
    assert monitor(url, str(state), None, now=within + timedelta(days=30)).code == 0


def test_the_monitor_follows_two_key_changes_to_a_checkpoint_the_key_between_signed(
    canned: tuple[str, type[_Canned]], tmp_path: Path
) -> None:
    """Pinned to ``A``, the monitor meets ``A`` to ``B`` to ``C`` at once (it was down over two
    rotations) and a checkpoint ``B`` signed: a process not yet restarted after the second
    rotation. ``B`` is a key the chain retires now, so it is checked as ``C``'s, as the retired
    pinned key would be, within the grace; not a ``BAD SIGNATURE`` false alarm."""
    url, handler = canned
    a, b, c = (fairness.new_signing_key() for _ in range(3))
    a_hex, b_hex, c_hex = (fairness.public_key_hex(key) for key in (a, b, c))
    changes = [
        fairness.signed(
            by,
            fairness.key_change_document(
                old_public_key_hex=fairness.public_key_hex(by),
                new_public_key_hex=to,
                changed_at="2026-01-01T00:00:00.000000Z",
            ),
        )
        for by, to in ((a, b_hex), (b, c_hex))
    ]
    doc = audit_chain.checkpoint_document(5, "ab" * 32, "2026-01-01T00:00:05.000000Z")
    published = {"public_key_hex": c_hex, "key_changes": changes}
    _serve_key_changes(handler, {"document": doc, "signature": fairness.sign(b, doc)}, published)
    state = tmp_path / "w"
    followed = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
    verdict = monitor(url, str(state), a_hex, now=followed)
    assert verdict.code == 0, verdict.line
    assert f"{a_hex} to {b_hex} at " in verdict.line and f"{b_hex} to {c_hex} at " in verdict.line
    assert (state / "public_key").read_text().strip() == c_hex
    stamp = fairness.format_time(followed)
    assert (state / "retired_keys").read_text() == f"{a_hex} {stamp}\n{b_hex} {stamp}\n"

    # Past the grace, the key between is retired as any other.
    past = followed + monitor_module.RETIRED_KEY_GRACE + timedelta(seconds=1)
    verdict = monitor(url, str(state), None, now=past)
    assert verdict.code == 1 and f"signed by the retired key {b_hex}" in verdict.line, verdict
    _serve_key_changes(handler, {"document": doc, "signature": fairness.sign(c, doc)}, published)
    assert monitor(url, str(state), None, now=past).code == 0


def test_the_monitor_follows_no_key_change_back_to_a_key_it_retired(
    canned: tuple[str, type[_Canned]], tmp_path: Path
) -> None:
    """The monitor followed ``A`` to ``B``; then the holder of ``B`` signs a change back to ``A``
    (whose file the operator keeps) and signs the checkpoints with ``A``: BAD SIGNATURE, and the
    pin stays on ``B``. A retired key is taken into use once."""
    url, handler = canned
    old, new = fairness.new_signing_key(), fairness.new_signing_key()
    old_hex, new_hex = fairness.public_key_hex(old), fairness.public_key_hex(new)

    def change(by: Any, to: str) -> dict[str, Any]:
        doc = fairness.key_change_document(
            old_public_key_hex=fairness.public_key_hex(by),
            new_public_key_hex=to,
            changed_at="2026-01-01T00:00:00.000000Z",
        )
        return fairness.signed(by, doc)

    doc = audit_chain.checkpoint_document(5, "ab" * 32, "2026-01-01T00:00:05.000000Z")
    checkpoint = {"document": doc, "signature": fairness.sign(old, doc)}
    published = {
        "public_key_hex": old_hex,
        "key_changes": [change(old, new_hex), change(new, old_hex)],
    }
    _serve_key_changes(handler, checkpoint, published)
    state = tmp_path / "w"
    state.mkdir()
    (state / "public_key").write_text(new_hex + "\n")
    code, line = _monitor(url, state)
    assert code == 1 and line.startswith("BAD SIGNATURE: the checkpoint size 5"), line
    assert (state / "public_key").read_text().strip() == new_hex
    assert not (state / "checkpoint.json").exists()


def test_the_monitor_follows_no_key_handed_on_twice_once_to_a_key_anyone_can_sign_with(
    canned: tuple[str, type[_Canned]], tmp_path: Path
) -> None:
    """The pinned key signs a change to the identity key and another to a key of the service's:
    handed on twice, it has no successor, the refused change counting as a hand-on all the same.
    The monitor followed the other change and moved its pin."""
    url, handler = canned
    pinned, new = fairness.new_signing_key(), fairness.new_signing_key()
    pinned_hex, new_hex = fairness.public_key_hex(pinned), fairness.public_key_hex(new)
    changes = [
        fairness.signed(
            pinned,
            fairness.key_change_document(
                old_public_key_hex=pinned_hex,
                new_public_key_hex=to,
                changed_at="2026-01-01T00:00:00.000000Z",
            ),
        )
        for to in (IDENTITY_KEY_HEX, new_hex)
    ]
    doc = audit_chain.checkpoint_document(5, "ab" * 32, "2026-01-01T00:00:05.000000Z")
    checkpoint = {"document": doc, "signature": fairness.sign(new, doc)}
    _serve_key_changes(handler, checkpoint, {"public_key_hex": new_hex, "key_changes": changes})
    state = tmp_path / "w"
    code, line = _monitor(url, state, "--public-key", pinned_hex)
    assert code == 1 and line.startswith("BAD SIGNATURE: the checkpoint size 5"), line
    assert (state / "public_key").read_text().strip() == pinned_hex
    assert not (state / "checkpoint.json").exists()


def test_the_monitor_follows_no_key_change_dated_otherwise_than_the_scheme(
    canned: tuple[str, type[_Canned]], tmp_path: Path
) -> None:
    """The pinned key signs a key change whose ``changed_at`` is not written as the scheme
    writes times, and the new key signs the checkpoints: BAD SIGNATURE, naming the change, and
    the pin stays, as the bundle verifiers refuse it."""
    url, handler = canned
    pinned, new = fairness.new_signing_key(), fairness.new_signing_key()
    pinned_hex, new_hex = fairness.public_key_hex(pinned), fairness.public_key_hex(new)
    change = fairness.key_change_document(
        old_public_key_hex=pinned_hex, new_public_key_hex=new_hex, changed_at="2026-01-01T00:00:00Z"
    )
    doc = audit_chain.checkpoint_document(5, "ab" * 32, "2026-01-01T00:00:05.000000Z")
    checkpoint = {"document": doc, "signature": fairness.sign(new, doc)}
    published = {"public_key_hex": new_hex, "key_changes": [fairness.signed(pinned, change)]}
    _serve_key_changes(handler, checkpoint, published)
    state = tmp_path / "w"
    code, line = _monitor(url, state, "--public-key", pinned_hex)
    assert code == 1 and line.startswith("BAD SIGNATURE: the checkpoint size 5"), line
    assert (
        f"key {pinned_hex[:16]}… was handed on to key {new_hex[:16]}… with a changed_at not "
        "written as YYYY-MM-DDTHH:MM:SS.ffffffZ; no change so dated is followed"
    ) in line
    assert (state / "public_key").read_text().strip() == pinned_hex
    assert not (state / "checkpoint.json").exists()


def test_the_monitor_refuses_a_checkpoint_answer_with_a_number_written_as_a_float(
    canned: tuple[str, type[_Canned]], tmp_path: Path
) -> None:
    """A checkpoint signed over ``"size":5`` and served as ``5.0``: the fairness page's reader
    takes it for 5, Python's for a float; the monitor refuses it as the page does, naming it."""
    url, handler = canned
    signer = fairness.new_signing_key()
    doc = audit_chain.checkpoint_document(5, "ab" * 32, "2026-01-01T00:00:00.000000Z")
    signed = {"document": doc, "signature": fairness.sign(signer, doc)}
    handler.body = json.dumps({"checkpoint": signed}).replace('"size": 5', '"size": 5.0').encode()
    code, line = _monitor(url, tmp_path / "w", "--public-key", fairness.public_key_hex(signer))
    assert code == 2, line
    assert line.startswith("UNUSABLE: ") and line.endswith(
        "answered 200: a number is written 5.0 at checkpoint.document.size: the casino writes "
        "whole numbers only"
    ), line


def test_a_war_rounds_entries_hold_what_the_anchors_table_of_the_docs_says(
    client: FlaskClient, auth: dict[str, str]
) -> None:
    """docs/fairness.md, "Anchors": the bet entry's stakes are those bet (no raise yet, so a war
    round's differ from its receipt's), and the settlement's staked, net and currency are the
    receipt's stakes summed, payout minus that, and the game's currency."""
    doc = (Path(__file__).parents[2] / "docs" / "fairness.md").read_text(encoding="utf-8")
    assert "`data.stakes` holds the stakes as bet, before any decision (`raise` 0" in doc
    settled = "`data.staked` (the sum of the receipt's `stakes`), `data.net` (`payout − staked`)"
    assert settled in doc
    for _ in range(300):
        result = client.post(f"{API}/casino-war/rounds", json={"bet": 100}, headers=auth).get_json()
        if result["status"] == "awaiting_decision":
            url = f"{API}/casino-war/rounds/{result['id']}/decision"
            client.post(url, json={"choice": "war"}, headers=auth)
            break
    else:
        pytest.fail("no tie in 300 rounds")
    receipt = client.get(f"{API}/rounds/{result['id']}/receipt", headers=auth).get_json()
    stakes = receipt["document"]["stakes"]
    assert stakes["raise"] == stakes["bet"] == 100
    proof = client.get(f"{API}/rounds/{result['id']}/proof", headers=auth).get_json()
    entries = {a["of"]["kind"]: a["entry"]["data"] for a in proof["anchors"]}
    assert entries["bet"]["stakes"] == {**stakes, "raise": 0}
    staked = sum(stakes.values())
    assert (entries["settlement"]["staked"], entries["settlement"]["net"]) == (
        staked,
        receipt["document"]["payout"] - staked,
    )
    assert entries["settlement"]["currency"] == "chips"


# --- the monitor against a casino that withholds proofs or dates checkpoints back -------------


class _Answers(BaseHTTPRequestHandler):
    """Answers each GET with the status and JSON the class's ``answers`` holds for its path (the
    query included), else 404."""

    answers: dict[str, tuple[int, Any]] = {}

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        status, body = self.answers.get(self.path, (404, {"error": {"code": "not_found"}}))
        self.send_response(status)
        self.end_headers()
        self.wfile.write(json.dumps(body).encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def answering() -> Iterator[tuple[str, type[_Answers]]]:
    handler = type("Handler", (_Answers,), {"answers": {}})
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as server:
        yield f"http://127.0.0.1:{server.server_port}", handler


_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _leaves(count: int, salt: bytes = b"") -> list[bytes]:
    return [merkle.leaf_hash(salt + bytes([i])) for i in range(count)]


def _signed_checkpoint(signer: Any, leaves: list[bytes], time: datetime) -> dict[str, Any]:
    doc = audit_chain.checkpoint_document(
        len(leaves), merkle.root(leaves).hex(), fairness.format_time(time)
    )
    return {"document": doc, "signature": fairness.sign(signer, doc)}


def _proof(old: int, leaves: list[bytes]) -> tuple[int, Any]:
    return 200, {"proof": [h.hex() for h in merkle.consistency_proof(old, leaves)]}


def _consistency(old: int, new: int) -> str:
    return f"/api/v1/transparency/consistency?old_size={old}&new_size={new}"


def _keep_four_then_six_unproven(
    url: str,
    handler: type[_Answers],
    state: Path,
    signer: Any,
    honest: list[bytes],
    *,
    signed_at: int,
    status: int,
) -> dict[str, Any]:
    """Have the monitor at ``state`` keep the checkpoint over ``honest[:4]`` signed at
    :data:`_T0`, then be served one over six entries signed ``signed_at`` minutes later, its
    consistency proof answered ``status``, which it keeps shown unproven (a minute after it was
    signed); return that one."""
    latest = "/api/v1/transparency/checkpoint"
    key = fairness.public_key_hex(signer)
    handler.answers = {latest: (200, {"checkpoint": _signed_checkpoint(signer, honest[:4], _T0)})}
    assert monitor(url, str(state), key, now=_T0).code == 0
    six = _signed_checkpoint(signer, honest[:6], _T0 + timedelta(minutes=signed_at))
    handler.answers = {latest: (200, {"checkpoint": six}), _consistency(4, 6): (status, {})}
    assert monitor(url, str(state), None, now=_T0 + timedelta(minutes=signed_at + 1)).code == 2
    return six


def test_the_monitor_keeps_a_checkpoint_shown_with_its_proof_withheld_until_a_proof_joins_it(
    answering: tuple[str, type[_Answers]], tmp_path: Path
) -> None:
    """A casino shows this witness a forked checkpoint and withholds the proof from the kept
    one, then shows the true log again: the forked checkpoint, signed, is the evidence. The
    monitor kept nothing of it and said OK on the next run; it now keeps it, says UNPROVEN on
    every run, and names the fork as soon as the service answers for it. An outage, proved
    later, leaves nothing behind."""
    url, handler = answering
    signer = fairness.new_signing_key()
    key = fairness.public_key_hex(signer)
    honest, forked = _leaves(8), _leaves(3) + _leaves(3, b"forged")
    latest = "/api/v1/transparency/checkpoint"
    state = tmp_path / "w"

    handler.answers = {latest: (200, {"checkpoint": _signed_checkpoint(signer, honest[:4], _T0)})}
    assert monitor(url, str(state), key, now=_T0).code == 0

    shown = _signed_checkpoint(signer, forked, _T0 + timedelta(minutes=1))
    handler.answers = {latest: (200, {"checkpoint": shown}), _consistency(4, 6): (500, {})}
    withheld = monitor(url, str(state), None, now=_T0 + timedelta(minutes=2))
    assert withheld.code == 2, withheld
    assert withheld.line.startswith(
        "UNPROVEN: no consistency proof joins the kept checkpoint (size 4 root "
        f"{merkle.root(honest[:4]).hex()}) with what this witness was shown since (size 6 root "
        f"{shown['document']['root']}, shown at 2026-01-01T00:02:00.000000Z: the consistency "
        "proof from 4 to 6 answered 500)"
    ), withheld
    assert json.loads((state / "checkpoint.json").read_text())["document"]["size"] == 4

    # Back to the true log, which never signed a checkpoint over 6 entries.
    handler.answers = {
        latest: (200, {"checkpoint": _signed_checkpoint(signer, honest, _T0 + timedelta(3))}),
        _consistency(4, 8): _proof(4, honest),
    }
    caught = monitor(url, str(state), None, now=_T0 + timedelta(minutes=3))
    assert caught.code == 1, caught
    assert caught.line.startswith(
        "FORK: the service no longer proves one of the two checkpoints it signed: kept size 4 "
        f"root {merkle.root(honest[:4]).hex()}, shown unproven at 2026-01-01T00:02:00.000000Z "
        f"size 6 root {shown['document']['root']}"
    ), caught
    evidence = json.loads(next(state.glob("evidence-*.json")).read_text())
    assert evidence["seen"] == shown

    # An honest outage: the proof is withheld once, then given; the warning goes.
    other = tmp_path / "other"
    _keep_four_then_six_unproven(url, handler, other, signer, honest, signed_at=1, status=503)
    handler.answers = {
        latest: (200, {"checkpoint": _signed_checkpoint(signer, honest, _T0 + timedelta(3))}),
        _consistency(4, 6): _proof(4, honest[:6]),
        _consistency(4, 8): _proof(4, honest),
    }
    joined = monitor(url, str(other), None, now=_T0 + timedelta(minutes=3))
    assert joined.code == 0 and joined.line.startswith("OK: consistent, kept size 4"), joined
    assert json.loads((other / "unproven.json").read_text()) == []
    assert not list(other.glob("evidence-*.json"))


def test_the_monitor_refuses_a_checkpoint_dated_before_one_it_keeps_shown_unproven(
    answering: tuple[str, type[_Answers]], tmp_path: Path
) -> None:
    """A checkpoint kept shown unproven is signed, and dated, by the service as much as the kept
    one: a later one over more entries dated before it contradicts it, whatever proof joins the
    later one to the kept one. BACKDATED, with the evidence, and the kept one stays."""
    url, handler = answering
    signer = fairness.new_signing_key()
    honest = _leaves(8)
    latest = "/api/v1/transparency/checkpoint"
    state = tmp_path / "w"
    six = _keep_four_then_six_unproven(url, handler, state, signer, honest, signed_at=2, status=500)

    eight = _signed_checkpoint(signer, honest, _T0 + timedelta(minutes=1))
    handler.answers = {
        latest: (200, {"checkpoint": eight}),
        _consistency(4, 6): (500, {}),
        _consistency(4, 8): _proof(4, honest),
        _consistency(6, 8): _proof(6, honest),
    }
    caught = monitor(url, str(state), None, now=_T0 + timedelta(minutes=4))
    assert caught.code == 1, caught
    assert caught.line.startswith(
        "BACKDATED: of two signed checkpoints, the one over more entries is dated before the one "
        f"over fewer: shown unproven at 2026-01-01T00:03:00.000000Z size 6 root "
        f"{merkle.root(honest[:6]).hex()} at 2026-01-01T00:02:00.000000Z, served size 8 root "
        f"{merkle.root(honest).hex()} at 2026-01-01T00:01:00.000000Z"
    ), caught
    evidence = json.loads(next(state.glob("evidence-*.json")).read_text())
    assert (evidence["kept"], evidence["seen"]) == (six, eight)
    assert json.loads((state / "checkpoint.json").read_text())["document"]["size"] == 4


def test_the_monitor_keeps_a_published_checkpoint_whose_proof_is_withheld_as_a_served_one(
    answering: tuple[str, type[_Answers]], tmp_path: Path
) -> None:
    """Another witness published a forked checkpoint; the casino withholds the proof joining it
    to the one this monitor keeps, then proves its true log. The monitor said UNUSABLE and kept
    nothing of it, so the next run, without the file, said OK: it now keeps it with those it was
    served unproven, says UNPROVEN on every run, and names the fork once the service answers."""
    url, handler = answering
    signer = fairness.new_signing_key()
    key = fairness.public_key_hex(signer)
    honest, forked = _leaves(8), _leaves(3) + _leaves(3, b"forged")
    latest = "/api/v1/transparency/checkpoint"
    state = tmp_path / "w"
    kept = _signed_checkpoint(signer, honest[:4], _T0)
    handler.answers = {latest: (200, {"checkpoint": kept})}
    assert monitor(url, str(state), key, now=_T0).code == 0

    published = tmp_path / "theirs.json"
    shown = _signed_checkpoint(signer, forked, _T0 + timedelta(minutes=1))
    published.write_text(json.dumps(shown), encoding="utf-8")
    handler.answers = {latest: (200, {"checkpoint": kept}), _consistency(4, 6): (500, {})}
    withheld = monitor(url, str(state), None, compare=[str(published)], now=_T0 + timedelta(2))
    assert withheld.code == 2, withheld
    assert withheld.line == (
        "UNPROVEN: no consistency proof joins the kept checkpoint (size 4 root "
        f"{kept['document']['root']}) with what this witness was shown since (size 6 root "
        f"{shown['document']['root']}, published in {published}, shown at "
        "2026-01-03T00:00:00.000000Z: the consistency proof from 4 to 6 answered 500): a casino "
        "that forked its log hides the fork so, and an outage reads the same; they are kept in "
        f"unproven.json and asked for again on every run; this run: OK: unchanged, size 4 root "
        f"{kept['document']['root']}; kept unproven the published {published}"
    ), withheld
    assert [one["checkpoint"] for one in json.loads((state / "unproven.json").read_text())] == [
        shown
    ]
    again = monitor(url, str(state), None, now=_T0 + timedelta(3))  # the file not given again
    assert again.code == 2 and again.line.startswith("UNPROVEN: "), again

    # The true log, proved: the published checkpoint is one it never signed.
    handler.answers = {
        latest: (200, {"checkpoint": _signed_checkpoint(signer, honest, _T0 + timedelta(4))}),
        _consistency(4, 8): _proof(4, honest),
    }
    caught = monitor(url, str(state), None, now=_T0 + timedelta(4))
    assert caught.code == 1, caught
    assert caught.line.startswith(
        "FORK: the service no longer proves one of the two checkpoints it signed: kept size 4 "
        f"root {kept['document']['root']}, published in {published}, shown unproven at "
        f"2026-01-03T00:00:00.000000Z size 6 root {shown['document']['root']}"
    ), caught
    assert json.loads(next(state.glob("evidence-*.json")).read_text())["seen"] == shown

    # Served one checkpoint over 6 entries, then shown another's published over 6 entries, each
    # proof withheld: two roots at one size are a fork at once, whichever proof is withheld.
    twice = tmp_path / "twice"
    handler.answers = {latest: (200, {"checkpoint": kept})}
    assert monitor(url, str(twice), key, now=_T0).code == 0
    six = _signed_checkpoint(signer, honest[:6], _T0 + timedelta(minutes=1))
    handler.answers = {latest: (200, {"checkpoint": six}), _consistency(4, 6): (500, {})}
    assert monitor(url, str(twice), None, now=_T0 + timedelta(minutes=2)).code == 2
    handler.answers = {latest: (200, {"checkpoint": kept}), _consistency(4, 6): (500, {})}
    forked = monitor(url, str(twice), None, compare=[str(published)], now=_T0 + timedelta(3))
    assert forked.code == 1, forked
    assert forked.line.startswith(
        "FORK: two signed checkpoints over 6 entries differ: shown unproven at "
        f"2026-01-01T00:02:00.000000Z size 6 root {six['document']['root']}, published in "
        f"{published} size 6 root {shown['document']['root']}; evidence in "
    ), forked
    evidence = json.loads(next(twice.glob("evidence-*.json")).read_text())
    assert (evidence["kept"], evidence["seen"]) == (six, shown)


def test_the_monitor_compares_published_checkpoints_while_the_served_ones_proof_is_withheld(
    answering: tuple[str, type[_Answers]], tmp_path: Path
) -> None:
    """A run whose served checkpoint came with its proof withheld ended there, UNPROVEN, and
    compared none of the checkpoints other witnesses published: a casino that withheld every
    proof kept a published fork from ever being compared. It is compared now."""
    url, handler = answering
    signer = fairness.new_signing_key()
    key = fairness.public_key_hex(signer)
    honest = _leaves(6)
    latest = "/api/v1/transparency/checkpoint"
    state = tmp_path / "w"
    kept = _signed_checkpoint(signer, honest[:4], _T0)
    handler.answers = {latest: (200, {"checkpoint": kept})}
    assert monitor(url, str(state), key, now=_T0).code == 0

    published = tmp_path / "theirs.json"
    other = _signed_checkpoint(signer, _leaves(4, b"forged"), _T0 + timedelta(minutes=1))
    published.write_text(json.dumps(other), encoding="utf-8")
    served = _signed_checkpoint(signer, honest, _T0 + timedelta(minutes=2))
    handler.answers = {latest: (200, {"checkpoint": served}), _consistency(4, 6): (500, {})}
    found = monitor(url, str(state), None, compare=[str(published)], now=_T0 + timedelta(1))
    assert found.code == 1, found
    assert found.line.startswith(
        f"FORK: two signed checkpoints over 4 entries differ: kept size 4 root "
        f"{kept['document']['root']}, published in {published} size 4 root "
        f"{other['document']['root']}"
    ), found

    # Nothing published contradicts it: the run is UNPROVEN, and says what it compared.
    state = tmp_path / "honest"
    handler.answers = {latest: (200, {"checkpoint": kept})}
    assert monitor(url, str(state), key, now=_T0).code == 0
    published.write_text(json.dumps(kept), encoding="utf-8")
    handler.answers = {latest: (200, {"checkpoint": served}), _consistency(4, 6): (500, {})}
    unproven = monitor(url, str(state), None, compare=[str(published)], now=_T0 + timedelta(1))
    assert unproven.code == 2 and unproven.line.startswith("UNPROVEN: "), unproven
    assert unproven.line.endswith(
        f"; joined the published {published} (size 4 root {kept['document']['root']})"
    ), unproven


#: A monitor's clock as the service's reads (``0``) and otherwise, at first and from then on: set
#: fast, set fast then right again, slow then set right (NTP), set back.
_WITNESS_CLOCKS = {
    "right": (timedelta(0), timedelta(0)),
    "15 minutes fast": (timedelta(minutes=15), timedelta(minutes=15)),
    "fast, then set right": (timedelta(minutes=15), timedelta(0)),
    "slow, then set right": (-timedelta(minutes=15), timedelta(0)),
    "set back 30 minutes": (timedelta(minutes=15), -timedelta(minutes=15)),
}


@pytest.mark.parametrize("clock", _WITNESS_CLOCKS.values(), ids=_WITNESS_CLOCKS.keys())
def test_the_monitor_refuses_a_checkpoint_dated_back_to_before_it_was_served_the_kept_one(
    answering: tuple[str, type[_Answers]], tmp_path: Path, clock: tuple[timedelta, timedelta]
) -> None:
    """A casino that left a round out of its log dates its new checkpoints just after the one a
    witness kept, never past the round's bound, so the round stays "not yet anchored": each is
    dated after the kept one, which the monitor checked alone. But the monitor was served the
    kept one as the latest two hours after it first kept it: the service's clock had gone on by
    then, and a checkpoint signed by then was withheld, or is dated back. So it is when the
    casino serves a new checkpoint at every run instead, each dated just after the one before.

    Only time passed on the monitor's clock counts, never what it reads: held to its clock, a
    monitor whose clock ran 15 minutes fast took an honest casino's next checkpoint, signed a
    minute after it was served the kept one, for a back-dated one, for good."""
    url, handler = answering
    signer = fairness.new_signing_key()
    key = fairness.public_key_hex(signer)
    leaves = _leaves(8)
    latest = "/api/v1/transparency/checkpoint"
    kept = _signed_checkpoint(signer, leaves[:4], _T0)
    first, then = clock

    def run(state: Path, at: timedelta, signed: dict[str, Any], given: str | None = None) -> Any:
        """Serve ``signed`` as the latest to the monitor at ``_T0 + at`` by the service's clock."""
        size = signed["document"]["size"]
        handler.answers = {latest: (200, {"checkpoint": signed})}
        for old in range(4, size):
            handler.answers[_consistency(old, size)] = _proof(old, leaves[:size])
        return monitor(
            url, str(state), given, now=_T0 + at + (first if at == timedelta(0) else then)
        )

    def served_again_after(dated: datetime) -> Any:
        state = tmp_path / fairness.format_time(dated)
        assert run(state, timedelta(0), kept, key).code == 0
        assert run(state, timedelta(hours=2), kept).code == 0
        return run(
            state, timedelta(hours=2, minutes=1), _signed_checkpoint(signer, leaves[:6], dated)
        )

    # An honest casino: its next checkpoint signed a minute after the monitor was last served the
    # kept one, then one at every run (a busy log): no alarm, whatever the monitor's clock reads.
    honest = tmp_path / "honest"
    assert run(honest, timedelta(0), kept, key).code == 0
    assert run(honest, timedelta(minutes=1), kept).code == 0
    for size, minutes in enumerate((3, 4, 65, 66), start=5):
        signed = _signed_checkpoint(signer, leaves[:size], _T0 + timedelta(minutes=minutes - 1))
        verdict = run(honest, timedelta(minutes=minutes), signed)
        assert verdict.code == 0 and verdict.line.startswith("OK: consistent"), verdict

    back = served_again_after(_T0 + timedelta(minutes=1))
    assert back.code == 1, back
    state = tmp_path / fairness.format_time(_T0 + timedelta(minutes=1))
    served = json.loads((state / "served.json").read_text())
    assert served["size"] == 4 and fairness.parse_time(served["least"]) > _T0 + timedelta(hours=1)
    assert back.line.startswith(
        "BACKDATED: the served checkpoint is dated more than 10 minutes before "
        f"{served['least']}, which the service's clock had reached when this witness was last "
        f"served the kept one as the latest, at {served['at']} by its own clock: signed by then, "
        f"it was withheld, or it is dated back: kept size 4 root {kept['document']['root']} at "
        f"2026-01-01T00:00:00.000000Z, served size 6 root {merkle.root(leaves[:6]).hex()} at "
        "2026-01-01T00:01:00.000000Z"
    ), back
    assert json.loads((state / "checkpoint.json").read_text()) == kept  # not replaced by it

    # A new checkpoint at every run, half an hour apart, each dated a minute after the one
    # before: the time passed counts from one kept checkpoint to the next, so the dates cannot
    # fall behind for long (held to each kept one alone, they could, for good).
    chain = tmp_path / "chain"
    assert run(chain, timedelta(0), kept, key).code == 0
    verdicts = [
        run(chain, timedelta(minutes=30 * n), _signed_checkpoint(signer, leaves[: 4 + n], dated))
        for n, dated in enumerate((_T0 + timedelta(minutes=m) for m in (1, 2, 3)), start=1)
    ]
    assert 1 in [verdict.code for verdict in verdicts], verdicts
    caught = next(verdict for verdict in verdicts if verdict.code == 1)
    assert caught.line.startswith("BACKDATED: the served checkpoint is dated more than "), caught

    # Signed and committed while the kept one was served, or a clock a little apart: no alarm.
    near = served_again_after(_T0 + timedelta(hours=2) - monitor_module.SERVED_SLACK)
    assert near.code == 0 and near.line.startswith("OK: consistent"), near


@pytest.mark.tampers
def test_a_round_left_out_of_a_log_that_signs_no_more_checkpoints_fails_when_fetched_late(
    make_app: Callable[..., Flask], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operator with the database and the key takes a settled round's entries out of the
    log and stops signing checkpoints: no checkpoint is ever dated past the round's
    ``settled_at`` and the bound, so by the checkpoints alone the round stays not yet anchored
    for good. The service signs a checkpoint over the whole log when a bundle is fetched, so a
    bundle fetched past the bound (by the verifier's own clock) that still lists the round as
    pending shows it left out; an honest service's bundle, fetched then, anchors it. A bundle
    file checked later, with no fetch time, still waits for it, and says for how long."""
    app = make_app(CHECKPOINT_MIN_SECONDS=0)
    client = app.test_client()
    auth = bearer(client, "bob")
    honest = _war_round(client, auth)

    def settled_at(bundle: Any, round_id: int) -> str:
        (receipt,) = [
            r["document"] for r in bundle["rounds"] if r["document"]["round_id"] == round_id
        ]
        return str(receipt["settled_at"])

    bundle = _pair_bundle(client, auth, honest["seed_pair_id"])
    fetched = fairness.parse_time(settled_at(bundle, honest["id"])) + anchors.ANCHOR_BOUND * 2
    report = verify_bundle(bundle, _key(app), now=fetched, fetched_at=fetched)
    assert report.ok and not report.not_yet_anchored, [f.text() for f in report.failures]

    late = _war_round(client, auth)  # the pair's last: a later bet would show it left out
    session = _session(app)
    with session.begin():
        subject = anchors.round_subject(late["id"])
        seqs = session.scalars(select(AuditEntry.seq).where(AuditEntry.subject == subject)).all()
    take_out(session, list(seqs))
    # The operator's service signs no checkpoint any more, on demand or otherwise.
    monkeypatch.setattr(audit, "sign_if_due", lambda session: None)
    bundle = _pair_bundle(client, auth, late["seed_pair_id"])
    settled = settled_at(bundle, late["id"])
    bound_ends = fairness.parse_time(settled) + anchors.ANCHOR_BOUND
    assert all(
        fairness.parse_time(c["document"]["time"]) <= bound_ends for c in bundle["checkpoints"]
    )
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    key = _key(app)

    # Fetched at the bound, it may still be waiting.
    at_the_bound = verify_bundle(bundle, key, now=bound_ends, fetched_at=bound_ends)
    assert at_the_bound.ok and at_the_bound.not_yet_anchored, at_the_bound.failures

    fetched = bound_ends + timedelta(minutes=1)
    report = verify_bundle(bundle, key, now=fetched, fetched_at=fetched)
    said = (
        f"settled at {settled}, still pending in the bundle fetched at "
        f"{fairness.format_time(fetched)} by this computer's clock, past the bound of 1 hour: "
        "the service signs a checkpoint over the whole log when a bundle is fetched, so the "
        "round was left out of the log, or the log's checkpoints were withheld"
    )
    assert not report.ok and [f.message for f in report.failures] == [said]
    # The offline verifier run then, its clock moved on, the bundle fetched just before.

    class Moved(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return fetched

    monkeypatch.setattr(verify_cli, "datetime", Moved)
    monkeypatch.setattr(verify_runner, "datetime", Moved)
    out = io.StringIO()
    args = [str(path), "--public-key", key, "--fetched-at", "now"]
    assert verify_main(args, out, io.StringIO()) == 1
    assert f"round {late['id']} (nonce {late['nonce']}): log: {said}" in out.getvalue()

    # Checked later without the time it was fetched, the file cannot show it: an honest
    # casino's bundle fetched within seconds of a round lists it as pending too.
    later = verify_bundle(bundle, key, now=fetched + timedelta(days=3))
    assert later.ok and later.not_yet_anchored, later.failures
    (row,) = [row for row in later.rounds if row.round_id == late["id"]]
    assert row.statuses["log"] == PENDING
    (finding,) = [f for f in row.findings if f.check == "log"]
    assert finding.message.endswith(
        f"; settled at {settled}, 3 days before this computer's clock: fetch the bundle again "
        "and verify it with --fetched-at now, which fails it if it is still pending"
    ), finding.message
