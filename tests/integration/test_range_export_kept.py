"""The export of a range asked for with ``kept=``: consistency proofs from the checkpoints an
auditor kept to the one vouching for the range, through the API on SQLite and PostgreSQL, and
the offline verifier holding the range to a checkpoint fetched earlier from the public log."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from service_support import PASSWORD

from sota_casino.core import audit_chain
from sota_casino.core import merkle
from sota_casino.services import accounts
from sota_casino.services import audit
from sota_casino.services.context import context_of
from sota_casino.verify import main as verify_main
from sota_casino.web.openapi import openapi_document

API = "/api/v1"
RANGE = f"{API}/operator/audit/range-export"


def db(app: Flask) -> Any:
    """A fresh session of the app's own sessionmaker (closed by the caller)."""
    return app.extensions["sota_casino.sessionmaker"]()


def _operator_bearer(app: Flask) -> dict[str, str]:
    """The Authorization header of an API token of a new operator."""
    session = db(app)
    try:
        user = accounts.create_operator(session, "olga", PASSWORD, role="operator")
        token, _expires = accounts.start_session(session, user.id, kind="api")
    finally:
        session.close()
    return {"Authorization": f"Bearer {token}"}


def _fill_and_sign(app: Flask, n: int) -> int:
    """Log ``n`` entries and sign a checkpoint over them; return its size."""
    session = db(app)
    try:
        with session.begin():
            for i in range(n):
                audit.record(session, actor="system", action="test.filler", data={"n": i})
        return int(audit.checkpoint(session)["document"]["size"])
    finally:
        session.close()


def _key(app: Flask) -> str:
    session = db(app)
    try:
        return str(context_of(session).public_key_hex)
    finally:
        session.close()


def _verify(tmp_path: Path, text: str, key: str, *kept: str) -> tuple[int, str]:
    path = tmp_path / "range.jsonl"
    path.write_text(text, encoding="utf-8")
    checkpoints = [arg for name in kept for arg in ("--checkpoint", name)]
    out = io.StringIO()
    code = verify_main(["audit", str(path), "--public-key", key, *checkpoints], out)
    return code, out.getvalue()


def _get(client: FlaskClient, query: str, auth: dict[str, str]) -> Any:
    return client.get(f"{RANGE}?{query}", headers=auth)


def test_a_range_export_carries_consistency_proofs_from_the_kept_sizes_asked_for(
    app: Flask, tmp_path: Path
) -> None:
    auth = _operator_bearer(app)
    client = app.test_client()
    first = _fill_and_sign(app, 6)
    kept_answer = client.get(f"{API}/transparency/checkpoint")
    assert kept_answer.status_code == 200, kept_answer.get_json()
    kept_file = tmp_path / "kept.json"
    kept_file.write_text(json.dumps(kept_answer.get_json()), encoding="utf-8")
    second = _fill_and_sign(app, 7)
    third = _fill_and_sign(app, 9)
    assert first < second < third
    key = _key(app)

    # Without kept=: as before, the smallest checkpoint covering the range and no consistency.
    plain = _get(client, "from_seq=2&to_seq=4", auth)
    assert plain.status_code == 200, plain.get_data(as_text=True)
    parsed = audit_chain.parse_export_text(plain.get_data(as_text=True))
    assert [c["document"]["size"] for c in parsed.checkpoints] == [first]
    assert parsed.consistency == () and '"consistency"' not in plain.get_data(as_text=True)
    code, out = _verify(tmp_path, plain.get_data(as_text=True), key, str(kept_file))
    assert code == 2 and f"ask for the export with kept={first}" in out, out

    # With kept=: vouched for by the smallest checkpoint covering the range and every kept size.
    asked = _get(client, f"from_seq=2&to_seq=4&kept={second},{first}", auth)
    assert asked.status_code == 200, asked.get_data(as_text=True)
    text = asked.get_data(as_text=True)
    parsed = audit_chain.parse_export_text(text)
    assert [e["seq"] for e in parsed.entries] == [2, 3, 4]
    (vouching,) = parsed.checkpoints
    assert vouching["document"]["size"] == second
    assert [(c["old_size"], c["new_size"]) for c in parsed.consistency] == [
        (first, second),
        (second, second),
    ]
    assert parsed.consistency[1]["proof"] == []
    kept_root = bytes.fromhex(kept_answer.get_json()["checkpoint"]["document"]["root"])
    nodes = [bytes.fromhex(h) for h in parsed.consistency[0]["proof"]]
    new_root = bytes.fromhex(vouching["document"]["root"])
    assert merkle.verify_consistency(first, second, kept_root, new_root, nodes)
    assert text.splitlines()[-1] == json.dumps(
        {"kind": "consistency", **parsed.consistency[1]}, separators=(",", ":")
    )
    code, out = _verify(tmp_path, text, key, str(kept_file))
    assert code == 0, out
    assert "the log the range is proven into extends it" in out
    assert out.splitlines()[-1] == "Result: OK (exit 0)"

    # A range past every kept size is vouched for as before, with the proofs added.
    later = _get(client, f"from_seq={second + 1}&to_seq={second + 2}&kept={first}", auth)
    parsed = audit_chain.parse_export_text(later.get_data(as_text=True))
    assert [c["document"]["size"] for c in parsed.checkpoints] == [third]
    assert [(c["old_size"], c["new_size"]) for c in parsed.consistency] == [(first, third)]
    code, out = _verify(tmp_path, later.get_data(as_text=True), key, str(kept_file))
    assert code == 0, out


def test_a_kept_size_no_checkpoint_can_have_is_a_422_naming_kept(app: Flask) -> None:
    auth = _operator_bearer(app)
    client = app.test_client()
    size = _fill_and_sign(app, 4)
    session = db(app)
    try:
        with session.begin():
            audit.record(session, actor="system", action="test.filler", data={"n": "tail"})
        audit.flush(session)
        log = audit.current_size(session)
        latest = audit.checkpoint_size(session)
    finally:
        session.close()
    assert size <= latest < log
    refusals = {
        "0": "kept must be 1 or more",
        f"{size},0": "kept must be 1 or more",
        str(log + 1): f"kept size {log + 1} is past the log's size ({log})",
        str(log): f"kept size {log} is past the latest checkpoint's size ({latest})",
        "1,,2": "kept: string should match pattern",
        "x": "kept: string should match pattern",
        ",".join(["1"] * 33): "kept: string should match pattern",
    }
    for kept, message in refusals.items():
        answer = _get(client, f"from_seq=1&kept={kept}", auth)
        assert answer.status_code == 422, (kept, answer.get_data(as_text=True))
        error = answer.get_json()["error"]
        assert error["field"] == "kept" and message in error["message"], (kept, error)
    assert _get(client, f"from_seq=1&kept={latest}", auth).status_code == 200


def test_the_api_document_declares_the_kept_parameter(app: Flask) -> None:
    operation = openapi_document(app)["paths"]["/operator/audit/range-export"]["get"]
    (kept,) = [p for p in operation["parameters"] if p["name"] == "kept"]
    assert kept["in"] == "query" and kept["required"] is False
    (text,) = [s for s in kept["schema"]["anyOf"] if s["type"] == "string"]
    assert text["pattern"] == "^[0-9]{1,19}(,[0-9]{1,19}){0,31}$"  # up to 32 sizes
    assert "consistency" in kept["description"]
