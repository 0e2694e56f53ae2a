"""Operator actions: each leaves its audit entry, keeps the ledger balanced, and bad input
changes nothing."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from operator_support import CSRF
from operator_support import add_user
from operator_support import audit_size
from operator_support import balances
from operator_support import bearer
from operator_support import client_as
from operator_support import last_entry
from operator_support import ledger_ok
from operator_support import run_checks

from sota_casino.core.audit_chain import parse_export
from sota_casino.core.audit_chain import verify_chain


@pytest.fixture
def staff(app: Flask) -> dict[str, Any]:
    player = add_user(app, "alice", "player")
    operator = add_user(app, "olga", "operator")
    return {
        "player": player,
        "operator": operator,
        "page": client_as(app, operator),
        "api": bearer(app, "olga"),
    }


def form(data: dict[str, str]) -> dict[str, str]:
    return {"csrf_token": CSRF, **data}


# --- every action is audited ------------------------------------------------------------------


def test_an_adjustment_through_the_pages_is_previewed_then_applied_and_audited(
    app: Flask, staff: dict[str, Any]
) -> None:
    page, player = staff["page"], staff["player"]
    before, size = balances(app, player), audit_size(app)
    preview = page.post(
        f"/operator/players/{player}/adjust/preview",
        data=form({"direction": "credit", "currency": "chips", "amount": "12.50", "reason": "x"}),
    )
    assert preview.status_code == 200
    assert "Nothing has changed yet" in preview.get_data(as_text=True)
    assert balances(app, player) == before and audit_size(app) == size  # a preview changes nothing
    applied = page.post(
        f"/operator/players/{player}/adjust",
        data=form({"currency": "chips", "amount": "1250", "reason": "x"}),
    )
    assert applied.status_code == 303
    assert balances(app, player)["chips"] == before["chips"] + 1250
    entry = last_entry(app)
    assert entry["action"] == "money.adjust"
    assert entry["actor"] == f"user:{staff['operator']}"
    assert entry["subject"] == f"user:{player}"
    assert entry["data"] == {"currency": "chips", "amount": 1250, "reason": "x"}
    assert ledger_ok(app)


def test_a_debit_over_the_api_is_audited_and_keeps_the_ledger_balanced(
    app: Flask, staff: dict[str, Any]
) -> None:
    player = staff["player"]
    before = balances(app, player)
    response = app.test_client().post(
        "/api/v1/operator/adjustments",
        json={"user_id": player, "currency": "sweets", "amount": -7, "reason": "duplicate grant"},
        headers=staff["api"],
    )
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["balances"]["sweets"] == before["sweets"] - 7
    entry = last_entry(app)
    assert (entry["action"], entry["data"]["amount"], entry["data"]["reason"]) == (
        "money.adjust",
        -7,
        "duplicate grant",
    )
    assert ledger_ok(app)


def test_locking_and_unlocking_are_audited_and_a_locked_player_cannot_log_in(
    app: Flask, staff: dict[str, Any]
) -> None:
    page, player = staff["page"], staff["player"]
    assert (
        page.post(f"/operator/players/{player}/lock", data=form({"locked": "1"})).status_code == 303
    )
    assert (last_entry(app)["action"], last_entry(app)["subject"]) == (
        "user.locked",
        f"user:{player}",
    )
    login = app.test_client().post(
        "/api/v1/auth/token", json={"username": "alice", "password": "correct horse battery"}
    )
    assert login.status_code == 403
    assert login.get_json()["error"]["code"] == "account_locked"
    unlock = app.test_client().put(
        f"/api/v1/operator/players/{player}/locked", json={"locked": False}, headers=staff["api"]
    )
    assert unlock.status_code == 200
    assert last_entry(app)["action"] == "user.unlocked"


def test_a_role_change_is_audited_with_before_and_after(app: Flask, staff: dict[str, Any]) -> None:
    page, player = staff["page"], staff["player"]
    assert (
        page.post(f"/operator/players/{player}/role", data=form({"role": "auditor"})).status_code
        == 303
    )
    entry = last_entry(app)
    assert entry["action"] == "user.role_changed"
    assert entry["data"] == {"from": "player", "to": "auditor"}
    api = app.test_client().put(
        f"/api/v1/operator/players/{player}/role", json={"role": "player"}, headers=staff["api"]
    )
    assert api.status_code == 200
    assert last_entry(app)["data"] == {"from": "auditor", "to": "player"}


def test_a_table_change_is_audited_with_the_settings_before_and_after(
    app: Flask, staff: dict[str, Any]
) -> None:
    response = staff["page"].post(
        "/operator/tables/casino_war",
        data=form(
            {
                "min_bet": "5",
                "max_bet": "200",
                "decks": "2",
                "tie_payout": "8",
                "burn": "1",
                "bonus": "ante",
            }
        ),
    )
    assert response.status_code == 303
    entry = last_entry(app)
    assert (entry["action"], entry["subject"]) == ("table.updated", "table:casino_war")
    assert entry["data"]["before"]["decks"] == 6
    assert entry["data"]["after"] == {
        "decks": 2,
        "min_bet": 500,
        "max_bet": 20000,
        "tie_payout": 8,
        "burn": 1,
        "bonus": "ante",
    }
    sota = app.test_client().put(
        "/api/v1/operator/tables/sota",
        json={"max_stake": 50, "presets": ["nordic"]},
        headers=staff["api"],
    )
    assert sota.status_code == 200
    assert last_entry(app)["data"]["after"]["presets"] == ["nordic"]
    history = staff["page"].get("/operator/tables").get_data(as_text=True)
    assert "table:casino_war" in history and "table:sota" in history


def test_a_checkpoint_made_from_the_console_is_audited_and_proves_inclusion(
    app: Flask, staff: dict[str, Any]
) -> None:
    page = staff["page"]
    assert page.post("/operator/audit/checkpoint", data=form({})).status_code == 303
    entry = last_entry(app)
    assert entry["action"] == "audit.checkpoint"
    assert entry["actor"] == f"user:{staff['operator']}"
    proof = page.get("/operator/audit/proof/1")
    assert proof.status_code == 200
    assert "attachment" in proof.headers["Content-Disposition"]
    assert proof.get_json()["entry"]["seq"] == 1
    page_text = page.get("/operator/audit").get_data(as_text=True)
    assert "C2SP signed-note form" in page_text and "sota-casino/audit-log" in page_text


def test_the_export_verifies_and_the_audit_page_filters(app: Flask, staff: dict[str, Any]) -> None:
    page = staff["page"]
    page.post("/operator/audit/checkpoint", data=form({}))
    export = page.get("/operator/audit/export")
    assert export.status_code == 200
    parsed = parse_export(export.get_data(as_text=True).splitlines())
    assert verify_chain(list(parsed.entries)).ok
    assert len(parsed.checkpoints) == 1
    filtered = page.get("/operator/audit", query_string={"action": "user.created"})
    text = filtered.get_data(as_text=True)
    assert "user.created" in text and "money.grant" not in text
    api = app.test_client().get(
        "/api/v1/operator/audit",
        query_string={"subject": f"user:{staff['player']}", "limit": 1},
        headers=staff["api"],
    )
    body = api.get_json()
    assert [e["subject"] for e in body["entries"]] == [f"user:{staff['player']}"]
    assert body["order"] == "newest" and body["next_before_seq"] == body["entries"][-1]["seq"]


def test_the_audit_log_pages_newest_first_oldest_on_request_and_jumps_to_an_entry(
    app: Flask, staff: dict[str, Any]
) -> None:
    client, api = app.test_client(), staff["api"]
    size = audit_size(app)

    def seqs(**query: Any) -> tuple[list[int], dict[str, Any]]:
        body = client.get("/api/v1/operator/audit", query_string=query, headers=api).get_json()
        return [e["seq"] for e in body["entries"]], body

    newest, body = seqs(limit=2)
    assert newest == [size, size - 1] and body["next_before_seq"] == size - 1
    assert seqs(limit=2, before_seq=size - 1)[0] == [size - 2, size - 3]
    oldest, body = seqs(limit=2, order="oldest")
    assert oldest == [1, 2] and body["next_after_seq"] == 2
    assert seqs(limit=2, from_seq=3)[0] == [3, 2]
    assert seqs(limit=2, from_seq=3, order="oldest")[0] == [3, 4]
    assert (
        client.get(
            "/api/v1/operator/audit", query_string={"order": "sideways"}, headers=api
        ).status_code
        == 422
    )
    page = staff["page"]
    html = page.get("/operator/audit", query_string={"from_seq": 2}).get_data(as_text=True)
    assert 'id="seq-2"' in html and 'id="seq-3"' not in html
    csv_text = page.get(
        "/operator/audit/entries", query_string={"format": "csv", "action": "user.created"}
    ).get_data(as_text=True)
    header, *lines = csv_text.splitlines()
    assert header == "seq,time,actor,action,subject,data,prev_hash,hash"
    assert lines and all(",user.created," in line for line in lines)
    jsonl = page.get("/operator/audit/entries", query_string={"format": "jsonl"})
    assert len(jsonl.get_data(as_text=True).splitlines()) == audit_size(app)
    # A bad filter is refused before the download starts: once its first line was sent, a
    # refusal could only break the file off.
    for bad in ({"since": "yesterday"}, {"text": "a\x00b"}):
        refused = page.get("/operator/audit/entries", query_string={"format": "csv", **bad})
        assert refused.status_code == 422 and "attachment" not in str(refused.headers)


def test_checkpoints_are_paged_newest_first(app: Flask, staff: dict[str, Any]) -> None:
    page, client = staff["page"], app.test_client()
    for _ in range(3):
        page.post("/operator/audit/checkpoint", data=form({}))
    body = client.get(
        "/api/v1/operator/audit/checkpoints", query_string={"limit": 2}, headers=staff["api"]
    ).get_json()
    sizes = [c["document"]["size"] for c in body["checkpoints"]]
    assert sizes == sorted(sizes, reverse=True) and len(sizes) == 2
    rest = client.get(
        "/api/v1/operator/audit/checkpoints",
        query_string={"limit": 2, "cursor": body["next_cursor"]},
        headers=staff["api"],
    ).get_json()
    assert [c["document"]["size"] for c in rest["checkpoints"]] == [sizes[-1] - 1]


def test_the_audit_page_shows_the_stored_verdict_and_asks_for_a_whole_check(
    app: Flask, staff: dict[str, Any]
) -> None:
    page = staff["page"]
    first = page.get("/operator/audit").get_data(as_text=True)
    assert "not checked yet" in first and "Not checked yet" in first
    run_checks(app)
    add_user(app, "newcomer")  # appends entries the stored verdict has not reached
    size = audit_size(app)
    later = page.get("/operator/audit").get_data(as_text=True)
    assert "intact" in later and "ago" in later and "the whole audit was last read" in later
    assert "Run a whole check in the background" in later
    asked = page.post("/operator/checks/audit", data=form({}))
    assert asked.status_code == 303
    waiting = page.get("/operator/audit").get_data(as_text=True)
    # By name, as the console shows every person (it said "by user:2").
    # The test app runs no checks in the background (CHECK_INTERVAL_SECONDS is 0).
    assert "asked for by olga; it runs when <code>flask checks run</code> is next" in waiting
    assert "Run a whole check in the background" not in waiting  # asked once is enough
    assert last_entry(app)["action"] == "check.requested"
    run_checks(app)
    done = page.get("/operator/checks/audit")
    verdict = done.get_json()
    assert verdict["ok"] and not verdict["requested"] and verdict["size"] == size + 1
    assert page.post("/operator/checks/poker", data=form({})).status_code == 422


@pytest.mark.parametrize(
    ("seconds", "when"),
    [(0, None), (30, "within 1 minute"), (60, "within 1 minute"), (300, "within 5 minutes")],
)
def test_the_console_says_when_the_standing_checks_run_as_the_server_is_set(
    app: Flask, staff: dict[str, Any], seconds: int, when: str | None
) -> None:
    """The console said the checks run, and an asked-for whole check starts, "within a minute"
    whatever ``CHECK_INTERVAL_SECONDS`` said: on a server set to 300 (five minutes) or to 0 (no
    checks in the background, only ``flask checks run``), an operator waited for what would
    not come. Each line now says the server's own interval, or that none runs."""
    app.config["CHECK_INTERVAL_SECONDS"] = seconds  # what the pages read; no thread is started
    page = staff["page"]

    def text(path: str) -> str:  # a count and its unit are kept on one line
        return page.get(path).get_data(as_text=True).replace("\N{NO-BREAK SPACE}", " ")

    lines = [text("/operator/audit"), text("/operator/alerts")]
    page.post("/operator/checks/ledger", data=form({}))
    asked = text("/operator/ledger")
    said = " ".join(lines + [asked])
    assert "within a minute" not in said
    off = "<code>flask checks run</code> is run"
    if when is None:
        assert "Not checked yet." in lines[0] and off in lines[0]
        assert "which this server runs only when flask checks run is run" in lines[1]
        assert "it runs when <code>flask checks run</code> is next run" in asked
    else:
        assert f"the background check runs {when} of the server starting" in lines[0]
        assert off not in lines[0]
        assert f"found by the standing checks {when}." in lines[1]
        assert f"asked for by olga; it starts {when}." in asked


def test_the_players_csv_says_true_and_false_as_the_json_lines_do(
    app: Flask, staff: dict[str, Any]
) -> None:
    """The players' CSV wrote Python's ``True`` and ``False`` in its ``locked`` column, where the
    same download as JSON Lines, and the API, say ``true`` and ``false``: a script reading both
    had to know the one language's spelling. Each CSV cell now reads as its JSON value."""
    client = app.test_client()
    path = f"/api/v1/operator/players/{staff['player']}/locked"
    assert client.put(path, json={"locked": True}, headers=staff["api"]).status_code == 200
    exports = {
        kind: staff["page"]
        .get("/operator/players/export", query_string={"format": kind})
        .get_data(as_text=True)
        for kind in ("csv", "jsonl")
    }
    rows = list(csv.DictReader(io.StringIO(exports["csv"])))
    objects = [json.loads(line) for line in exports["jsonl"].splitlines()]
    assert {row["username"]: row["locked"] for row in rows} == {"alice": "true", "olga": "false"}
    for row, whole in zip(rows, objects, strict=True):
        assert row["locked"] == json.dumps(whole["locked"])


def test_the_player_api_shows_balances_rounds_seed_pairs_and_audit(
    app: Flask, staff: dict[str, Any]
) -> None:
    body = (
        app.test_client()
        .get(f"/api/v1/operator/players/{staff['player']}", headers=staff["api"])
        .get_json()
    )
    assert body["user"]["username"] == "alice"
    assert body["balances"] == balances(app, staff["player"])
    assert {p["status"] for p in body["seed_pairs"]} == {"active", "next"}
    assert all(p["server_seed"] is None for p in body["seed_pairs"])  # never before its reveal
    assert [t["kind"] for t in body["transfers"]] == ["grant", "grant"]
    assert any(e["action"] == "money.grant" for e in body["audit"])


def test_the_ledger_summary_and_check_answer_over_the_api(
    app: Flask, staff: dict[str, Any]
) -> None:
    client = app.test_client()
    summary = client.get("/api/v1/operator/ledger/summary", headers=staff["api"]).get_json()
    assert summary["balances"]["chips"]["players"] == -summary["balances"]["chips"]["issuance"]
    edge = summary["theoretical"]["casino_war"]["edge"]
    assert edge["exact"] == "142853/4965115" and round(edge["value"], 6) == 0.028771
    assert summary["theoretical"]["sota"] is None
    run_checks(app)
    check = client.get("/api/v1/operator/ledger/check", headers=staff["api"]).get_json()
    assert check["ok"] is True and check["problems"] == []


# --- bad input changes nothing ----------------------------------------------------------------

BAD_PAGE_ADJUSTMENTS = [
    {"direction": "credit", "currency": "chips", "amount": "10", "reason": ""},
    {"direction": "credit", "currency": "chips", "amount": "10", "reason": "   "},
    {"direction": "credit", "currency": "chips", "amount": "0", "reason": "x"},
    {"direction": "credit", "currency": "chips", "amount": "1.234", "reason": "x"},
    {"direction": "credit", "currency": "chips", "amount": "-5", "reason": "x"},
    {"direction": "credit", "currency": "chips", "amount": "99999999999999", "reason": "x"},
    {"direction": "credit", "currency": "sweets", "amount": "1.5", "reason": "x"},
    {"direction": "credit", "currency": "gold", "amount": "10", "reason": "x"},
    {"direction": "sideways", "currency": "chips", "amount": "10", "reason": "x"},
    {"direction": "debit", "currency": "chips", "amount": "1000000", "reason": "more than held"},
]


@pytest.mark.parametrize("data", BAD_PAGE_ADJUSTMENTS)
def test_a_bad_adjustment_form_is_a_clear_4xx_and_changes_nothing(
    app: Flask, staff: dict[str, Any], data: dict[str, str]
) -> None:
    page, player = staff["page"], staff["player"]
    before, size = balances(app, player), audit_size(app)
    preview = page.post(f"/operator/players/{player}/adjust/preview", data=form(data))
    assert 400 <= preview.status_code < 500
    assert "Nothing has changed yet" not in preview.get_data(as_text=True)
    assert (balances(app, player), audit_size(app)) == (before, size)


BAD_APPLIED = [
    {"currency": "chips", "amount": "1250", "reason": ""},
    {"currency": "chips", "amount": "0", "reason": "x"},
    {"currency": "chips", "amount": "12.5", "reason": "x"},
    {"currency": "chips", "amount": str(10**13), "reason": "x"},
    {"currency": "gold", "amount": "100", "reason": "x"},
    {"currency": "chips", "amount": "-99999999", "reason": "x"},
]


@pytest.mark.parametrize("data", BAD_APPLIED)
def test_a_forged_confirmation_is_refused_too(
    app: Flask, staff: dict[str, Any], data: dict[str, str]
) -> None:
    page, player = staff["page"], staff["player"]
    before, size = balances(app, player), audit_size(app)
    response = page.post(f"/operator/players/{player}/adjust", data=form(data))
    assert 400 <= response.status_code < 500
    assert (balances(app, player), audit_size(app)) == (before, size)


BAD_API_ADJUSTMENTS = [
    ({"currency": "chips", "amount": 100}, "reason"),
    ({"currency": "chips", "amount": 100, "reason": ""}, "reason"),
    ({"currency": "chips", "amount": 0, "reason": "x"}, "amount"),
    ({"currency": "chips", "amount": 1.5, "reason": "x"}, "amount"),
    ({"currency": "chips", "amount": 100.0, "reason": "x"}, "amount"),
    ({"currency": "chips", "amount": "100", "reason": "x"}, "amount"),
    ({"currency": "chips", "amount": True, "reason": "x"}, "amount"),
    ({"currency": "chips", "amount": 10**30, "reason": "x"}, "amount"),
    ({"currency": "chips", "amount": 10**13, "reason": "x"}, "amount"),
    ({"currency": "gold", "amount": 100, "reason": "x"}, "currency"),
    ({"currency": "chips", "amount": 100, "reason": "x", "extra": 1}, "extra"),
]


@pytest.mark.parametrize(("body", "field"), BAD_API_ADJUSTMENTS)
def test_a_bad_api_adjustment_is_a_422_and_changes_nothing(
    app: Flask, staff: dict[str, Any], body: dict[str, Any], field: str
) -> None:
    player = staff["player"]
    before, size = balances(app, player), audit_size(app)
    response = app.test_client().post(
        "/api/v1/operator/adjustments", json={"user_id": player, **body}, headers=staff["api"]
    )
    assert response.status_code == 422, response.get_json()
    assert field in response.get_json()["error"]["message"]
    assert (balances(app, player), audit_size(app)) == (before, size)


def test_adjusting_an_unknown_user_or_a_staff_member_is_a_404(
    app: Flask, staff: dict[str, Any]
) -> None:
    size = audit_size(app)
    for user_id in (999_999, staff["operator"], 2**53 - 1):
        response = app.test_client().post(
            "/api/v1/operator/adjustments",
            json={"user_id": user_id, "currency": "chips", "amount": 100, "reason": "x"},
            headers=staff["api"],
        )
        assert response.status_code == 404
        preview = staff["page"].post(
            f"/operator/players/{user_id}/adjust/preview",
            data=form({"direction": "credit", "currency": "chips", "amount": "1", "reason": "x"}),
        )
        assert preview.status_code == 404
    assert audit_size(app) == size


BAD_TABLE_FORMS = [
    (
        "casino_war",
        {
            "min_bet": "5",
            "max_bet": "2",
            "decks": "6",
            "tie_payout": "10",
            "burn": "3",
            "bonus": "none",
        },
    ),
    (
        "casino_war",
        {
            "min_bet": "5",
            "max_bet": "200",
            "decks": "9",
            "tie_payout": "10",
            "burn": "3",
            "bonus": "none",
        },
    ),
    (
        "casino_war",
        {
            "min_bet": "5",
            "max_bet": "200",
            "decks": "6",
            "tie_payout": "31",
            "burn": "3",
            "bonus": "none",
        },
    ),
    (
        "casino_war",
        {
            "min_bet": "5",
            "max_bet": "200",
            "decks": "6",
            "tie_payout": "10",
            "burn": "3",
            "bonus": "both",
        },
    ),
    (
        "casino_war",
        {
            "min_bet": "1.5",
            "max_bet": "200",
            "decks": "6",
            "tie_payout": "10",
            "burn": "3",
            "bonus": "none",
        },
    ),
    ("casino_war", {"max_bet": "200"}),
    ("sota", {"min_stake": "0", "max_stake": "10", "presets": "nordic"}),
    ("sota", {"min_stake": "5", "max_stake": "10"}),  # no preset left
    ("sota", {"min_stake": "50", "max_stake": "10", "presets": "nordic"}),
]


@pytest.mark.parametrize(("name", "data"), BAD_TABLE_FORMS)
def test_a_bad_table_form_is_a_4xx_and_changes_nothing(
    app: Flask, staff: dict[str, Any], name: str, data: dict[str, str]
) -> None:
    size = audit_size(app)
    api = staff["api"]
    before = app.test_client().get(f"/api/v1/operator/tables/{name}", headers=api).get_json()
    response = staff["page"].post(f"/operator/tables/{name}", data=form(data))
    assert 400 <= response.status_code < 500
    after = app.test_client().get(f"/api/v1/operator/tables/{name}", headers=api).get_json()
    assert (after, audit_size(app)) == (before, size)


BAD_TABLE_BODIES = [
    ("casino_war", {"decks": 0}),
    ("casino_war", {"decks": 6.0}),
    ("casino_war", {"decks": "6"}),
    ("casino_war", {"min_bet": 150}),
    ("casino_war", {"max_bet": 10**40}),
    ("casino_war", {"colour": "red"}),
    ("casino_war", {}),
    ("sota", {"presets": ["nordic", "poker"]}),
    ("sota", {"custom_rules": "yes"}),
]


@pytest.mark.parametrize(("name", "body"), BAD_TABLE_BODIES)
def test_bad_table_settings_over_the_api_are_a_422_and_change_nothing(
    app: Flask, staff: dict[str, Any], name: str, body: dict[str, Any]
) -> None:
    size = audit_size(app)
    response = app.test_client().put(
        f"/api/v1/operator/tables/{name}", json=body, headers=staff["api"]
    )
    assert response.status_code == 422, response.get_json()
    assert set(response.get_json()["error"]) - {"field"} == {"code", "message"}
    assert audit_size(app) == size


def test_an_unknown_table_is_a_404_on_the_page_and_the_api(
    app: Flask, staff: dict[str, Any]
) -> None:
    size = audit_size(app)
    assert staff["page"].post("/operator/tables/poker", data=form({})).status_code == 404
    api = app.test_client().put(
        "/api/v1/operator/tables/poker", json={"decks": 2}, headers=staff["api"]
    )
    assert api.status_code == 404
    assert api.get_json()["error"]["code"] == "not_found"
    assert audit_size(app) == size


def test_bad_role_and_lock_values_are_refused(app: Flask, staff: dict[str, Any]) -> None:
    page, player, api = staff["page"], staff["player"], staff["api"]
    size = audit_size(app)
    assert (
        page.post(f"/operator/players/{player}/role", data=form({"role": "king"})).status_code
        == 422
    )
    assert (
        page.post(f"/operator/players/{player}/lock", data=form({"locked": "yes"})).status_code
        == 422
    )
    client = app.test_client()
    assert (
        client.put(
            f"/api/v1/operator/players/{player}/locked", json={"locked": 1}, headers=api
        ).status_code
        == 422
    )
    own = client.put(
        f"/api/v1/operator/players/{staff['operator']}/role", json={"role": "player"}, headers=api
    )
    assert own.status_code == 409  # an operator cannot demote themselves
    assert audit_size(app) == size


def test_bad_audit_queries_are_a_422(app: Flask, staff: dict[str, Any]) -> None:
    client, api = app.test_client(), staff["api"]
    for query in ({"limit": 0}, {"limit": 10_000}, {"after_seq": "x"}, {"since": "yesterday"}):
        response = client.get("/api/v1/operator/audit", query_string=query, headers=api)
        assert response.status_code == 422, query
    assert (
        client.get("/api/v1/operator/audit/proof/1", headers=api).status_code == 404
    )  # no checkpoint yet
    assert staff["page"].get("/operator/audit", query_string={"since": "soon"}).status_code == 422


def test_the_operator_endpoints_are_in_the_openapi_document(app: Flask) -> None:
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    for path in (
        "/operator/audit",
        "/operator/audit/verify",
        "/operator/audit/checkpoints",
        "/operator/audit/proof/{seq}",
        "/operator/audit/export",
        "/operator/ledger/summary",
        "/operator/ledger/check",
        "/operator/players/{id}",
        "/operator/adjustments",
        "/operator/tables/{name}",
    ):
        assert path in document["paths"], path
    refs = {
        value.rsplit("/", 1)[1]
        for value in _strings(document["paths"])
        if value.startswith("#/components/schemas/")
    }
    assert refs <= set(document["components"]["schemas"])


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_the_console_export_verifies_offline_with_the_verifier(
    app: Flask, staff: dict[str, Any], tmp_path: Path
) -> None:
    page = staff["page"]
    page.post("/operator/audit/checkpoint", data=form({}))
    export = tmp_path / "audit.jsonl"
    export.write_bytes(page.get("/operator/audit/export").get_data())
    key = app.test_client().get("/api/v1/fairness/public-key").get_json()["public_key_hex"]
    command = [sys.executable, "-m", "sota_casino.verify", "audit", str(export), "--public-key"]
    good = subprocess.run([*command, key], capture_output=True, text=True, check=False)
    assert good.returncode == 0, good.stdout + good.stderr
    lines = export.read_text().splitlines()
    assert '"action":"' in lines[1]
    lines[1] = lines[1].replace('"action":"', '"action":"forged.', 1)
    export.write_text("\n".join(lines) + "\n")
    bad = subprocess.run([*command, key], capture_output=True, text=True, check=False)
    assert bad.returncode != 0


def test_the_ledger_page_shows_the_math_per_version_and_exports_it(
    app: Flask, staff: dict[str, Any]
) -> None:
    client, alice = app.test_client(), bearer(app, "alice")
    settled = 0
    for bet in (500, 700, 900, 500, 700, 900):  # a tie leaves its round open: bet on past it
        answer = client.post("/api/v1/casino-war/rounds", json={"bet": bet}, headers=alice)
        assert answer.status_code == 201, answer.get_json()
        settled += answer.get_json()["status"] == "settled"
        if settled == 2:
            break
    assert settled == 2
    page = staff["page"]
    html = page.get("/operator/ledger").get_data(as_text=True)
    assert 'data-version="6 decks, tie pays 10 to 1"' in html and "Always war" in html
    csv_text = page.get("/operator/ledger/math", query_string={"format": "csv"}).get_data(
        as_text=True
    )
    header, *lines = csv_text.splitlines()
    assert header.startswith("game,version,rounds,") and lines
    assert lines[0].startswith('casino_war,"6 decks, tie pays 10 to 1",')
    jsonl = page.get("/operator/ledger/math", query_string={"format": "jsonl"})
    assert jsonl.mimetype == "application/jsonl"
    empty = page.get("/operator/ledger", query_string={"until": "2000-01-01"})
    assert "No rounds settled in that range." in empty.get_data(as_text=True)
    assert page.get("/operator/ledger", query_string={"since": "soon"}).status_code == 422
    assert page.get("/operator/ledger/math", query_string={"format": "xls"}).status_code == 422


def test_the_player_page_totals_adjustments_by_operator_name_and_pages_each_list(
    app: Flask, staff: dict[str, Any]
) -> None:
    page, player, client = staff["page"], staff["player"], app.test_client()
    for amount in (250, 400):
        client.post(
            "/api/v1/operator/adjustments",
            json={"user_id": player, "currency": "chips", "amount": amount, "reason": "goodwill"},
            headers=staff["api"],
        )
    body = client.get(
        f"/api/v1/operator/players/{player}", query_string={"limit": 1}, headers=staff["api"]
    ).get_json()
    assert body["totals"]["adjustments"] == [
        {
            "actor": f"user:{staff['operator']}",
            "name": "olga",
            "currency": "chips",
            "count": 2,
            "amount": 650,
        }
    ]
    assert body["totals"]["currencies"]["chips"]["adjusted"] == 650
    assert len(body["transfers"]) == 1 and body["next"]["transfers_before"] is not None
    older = client.get(
        f"/api/v1/operator/players/{player}",
        query_string={"limit": 1, "transfers_before": body["next"]["transfers_before"]},
        headers=staff["api"],
    ).get_json()
    assert older["transfers"][0]["id"] < body["transfers"][0]["id"]
    html = page.get(f"/operator/players/{player}").get_data(as_text=True)
    assert 'data-testid="player-totals"' in html
    assert re.search(r'<td data-label="[^"]*">olga</td>', html)
