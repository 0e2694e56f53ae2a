"""The console's controls as pages: two operators and the four-eyes forms, alert rules, each
person by name, times in the reader's zone beside UTC, every list paged and downloadable, a
range of the log downloaded to verify on its own."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from operator_support import CSRF
from operator_support import add_user
from operator_support import audit_size
from operator_support import bearer as staff_bearer
from operator_support import client_as
from operator_support import db
from operator_support import last_entry
from operator_support import run_checks

from sota_casino.core import audit_chain
from sota_casino.services import accounts
from sota_casino.services import alerts
from sota_casino.services import audit
from sota_casino.services import money
from sota_casino.services import settings


def _balance(app: Flask, user_id: int, currency: str) -> int:
    session = db(app)
    try:
        return money.balances(session, user_id).of(currency)
    finally:
        session.close()


#: The Casino War table's form, changed to 4 decks.
WAR_TABLE_CHANGE = {
    "csrf_token": CSRF,
    "min_bet": "1",
    "max_bet": "500",
    "decks": "4",
    "tie_payout": "10",
    "burn": "3",
    "bonus": "none",
}


def test_two_operators_adjust_with_approval_and_change_a_table_by_the_forms(
    make_app: Callable[..., Flask],
) -> None:
    app = make_app(FOUR_EYES_TABLES=1)
    pat = add_user(app, "pat", "player")
    olga, otto = client_as(app, add_user(app, "olga", "operator")), None
    otto = client_as(app, add_user(app, "otto", "operator"))
    held = _balance(app, pat, "chips")

    preview = olga.post(
        f"/operator/players/{pat}/adjust/preview",
        data={
            "csrf_token": CSRF,
            "direction": "credit",
            "currency": "chips",
            "amount": "2500",
            "reason": "tournament prize",
        },
    )
    assert b"Propose for approval" in preview.data
    proposed = olga.post(
        f"/operator/players/{pat}/adjust",
        data={
            "csrf_token": CSRF,
            "currency": "chips",
            "amount": "250000",
            "reason": "tournament prize",
        },
        follow_redirects=True,
    )
    assert b"Adjustment proposed" in proposed.data
    assert _balance(app, pat, "chips") == held
    page = olga.get("/operator/approvals").get_data(as_text=True)
    assert "waits for a second operator" in page and "tournament prize" in page
    approval_id = page.split('data-approval="')[1].split('"')[0]
    own = olga.post(f"/operator/approvals/{approval_id}/approve", data={"csrf_token": CSRF})
    assert own.status_code == 403
    assert olga.post(f"/operator/approvals/{approval_id}/approve", data={}).status_code == 400
    # A double click sends the button's one-time key twice: applied once, "approved" to both.
    buttons = otto.get("/operator/approvals").get_data(as_text=True)
    once = re.findall(r'name="idempotency_key" value="(\w+approve)"', buttons)
    assert len(once) == 1
    decision = {"csrf_token": CSRF, "note": "prize list checked", "idempotency_key": once[0]}
    for _ in range(2):
        approved = otto.post(
            f"/operator/approvals/{approval_id}/approve", data=decision, follow_redirects=True
        )
        assert b"approved and applied" in approved.data
    assert _balance(app, pat, "chips") == held + 250_000
    assert "1" in olga.get("/operator/approvals?status=approved").get_data(as_text=True)

    changed = olga.post("/operator/tables/casino_war", data=WAR_TABLE_CHANGE, follow_redirects=True)
    assert b"The change is proposed" in changed.data
    tables = otto.get("/operator/tables").get_data(as_text=True)
    assert 'data-testid="four-eyes-tables"' in tables and 'value="6" selected' not in tables
    table_approval = otto.get("/operator/approvals").get_data(as_text=True)
    table_id = table_approval.split('data-approval="')[1].split('"')[0]
    otto.post(f"/operator/approvals/{table_id}/approve", data={"csrf_token": CSRF})
    tables = olga.get("/operator/tables").get_data(as_text=True)
    history = tables.split("Who changed what, when")[1]
    assert "olga" in history and "(approved by otto)" in history and "user:" not in history


def test_the_adjustment_preview_says_why_it_waits_for_a_second_operator(app: Flask) -> None:
    """Under the 1,000-chip limit itself, 990 chips waited for approval because of what olga
    adjusted alone that day, and the page did not say so."""
    pat = add_user(app, "pat", "player")
    olga_id = add_user(app, "olga", "operator")
    olga = client_as(app, olga_id)
    with db(app) as session:
        money.adjust(session, olga_id, pat, "chips", 1_250, "earlier today")

    def preview(chips: str) -> str:
        form = {"csrf_token": CSRF, "direction": "credit", "currency": "chips", "amount": chips}
        page = olga.post(f"/operator/players/{pat}/adjust/preview", data=form | {"reason": "r"})
        assert page.status_code == 200
        words = re.sub(r"<[^>]+>", "", page.get_data(as_text=True))
        return " ".join(html.unescape(words).split())

    assert "over the 1,000 chips one operator may adjust alone" in preview("2000")
    said = preview("990")
    assert "With what you adjusted alone in the last 24 hours, this makes 1,002.50 chips" in said
    assert "over the 1,000 chips one operator may adjust alone" in said
    assert "Propose for approval" in said and "one operator may adjust alone" not in preview("5")


def test_the_table_form_submitted_twice_with_its_key_proposes_once(
    make_app: Callable[..., Flask],
) -> None:
    app = make_app(FOUR_EYES_TABLES=1)
    olga = client_as(app, add_user(app, "olga", "operator"))
    page = olga.get("/operator/tables").get_data(as_text=True)
    form_keys = r'data-table="(\w+)">.*?name="idempotency_key" value="(\w+)"'
    keys = dict(re.findall(form_keys, page, re.S))
    assert set(keys) == {"casino_war", "sota"} and keys["casino_war"] != keys["sota"]
    form = {**WAR_TABLE_CHANGE, "idempotency_key": keys["casino_war"]}
    size = audit_size(app)
    flashes = []
    for _ in range(2):
        saved = olga.post("/operator/tables/casino_war", data=form, follow_redirects=True)
        assert saved.status_code == 200
        flashes += re.findall(r"The change is proposed \(#(\d+)\)", saved.get_data(as_text=True))
    proposals = olga.get("/operator/approvals").get_data(as_text=True)
    assert re.findall(r'data-approval="(\d+)"', proposals) == flashes[:1] == flashes[1:]
    assert audit_size(app) == size + 1  # one approval.proposed
    # Another table's form, with its own key, is a proposal of its own.
    sota = {"csrf_token": CSRF, "min_stake": "1", "max_stake": "50", "presets": "nordic"}
    olga.post("/operator/tables/sota", data={**sota, "idempotency_key": keys["sota"]})
    proposals = olga.get("/operator/approvals").get_data(as_text=True)
    assert len(re.findall(r'data-approval="(\d+)"', proposals)) == 2


#: The Casino War table's form as a new table draws it (its default settings).
WAR_TABLE_AS_DRAWN = {**WAR_TABLE_CHANGE, "decks": "6"}


def _drawn_with(page: str, table: str) -> str:
    """The settings a table's form was drawn with, as the page carries them in the form."""
    found = re.search(rf'data-table="{table}">.*?name="drawn" value="([^"]*)"', page, re.S)
    assert found, "the form carries no settings it was drawn with"
    return html.unescape(found.group(1))


def _war_table(app: Flask) -> dict[str, Any]:
    session = db(app)
    try:
        return settings.table_rules(session, "casino_war")
    finally:
        session.close()


def test_a_table_form_drawn_before_another_change_saves_only_what_it_changed(
    app: Flask,
) -> None:
    """Two operators with the tables page open: the second to save changed the decks only, and
    must not put back the minimum bet the first saved meanwhile, as the whole form would."""
    olga = client_as(app, add_user(app, "olga", "operator"))
    otto = client_as(app, add_user(app, "otto", "operator"))
    olgas_page = olga.get("/operator/tables").get_data(as_text=True)
    ottos_page = otto.get("/operator/tables").get_data(as_text=True)
    drawn = {"drawn": _drawn_with(ottos_page, "casino_war")}
    saved = otto.post(
        "/operator/tables/casino_war", data={**WAR_TABLE_AS_DRAWN, **drawn, "min_bet": "2"}
    )
    assert saved.status_code == 303
    stale = {**WAR_TABLE_AS_DRAWN, "drawn": _drawn_with(olgas_page, "casino_war"), "decks": "4"}
    size = audit_size(app)
    assert olga.post("/operator/tables/casino_war", data=stale).status_code == 303
    table = _war_table(app)
    assert (table["decks"], table["min_bet"]) == (4, 200)  # otto's minimum kept
    assert audit_size(app) == size + 1
    assert last_entry(app)["data"]["after"]["min_bet"] == 200


def test_proposals_from_forms_drawn_at_once_each_apply_only_their_own_change(
    make_app: Callable[..., Flask],
) -> None:
    """With four eyes, approving a proposal made on a page drawn before another change was
    approved applies the option it changed, not the whole form as it was drawn."""
    app = make_app(FOUR_EYES_TABLES=1)
    olga = client_as(app, add_user(app, "olga", "operator"))
    otto = client_as(app, add_user(app, "otto", "operator"))
    ada = client_as(app, add_user(app, "ada", "operator"))
    drawn = {
        "drawn": _drawn_with(olga.get("/operator/tables").get_data(as_text=True), "casino_war")
    }
    for client, change in ((olga, {"max_bet": "300"}), (otto, {"tie_payout": "8"})):
        proposed = client.post(
            "/operator/tables/casino_war", data={**WAR_TABLE_AS_DRAWN, **drawn, **change}
        )
        assert proposed.status_code == 303
    for approval in (1, 2):
        decided = ada.post(f"/operator/approvals/{approval}/approve", data={"csrf_token": CSRF})
        assert decided.status_code == 303
    table = _war_table(app)
    assert (table["max_bet"], table["tie_payout"], table["decks"]) == (30_000, 8, 6)


def test_a_refused_table_form_is_shown_again_with_the_reason_and_what_was_typed(
    app: Flask,
) -> None:
    """A refused table form was answered with the console's error page ("Please check what you
    entered … Error 422"): the operator went back and typed the form again."""
    olga = client_as(app, add_user(app, "olga", "operator"))
    size = audit_size(app)
    typed = {"min_bet": "60", "max_bet": "50", "decks": "4", "tie_payout": "8", "burn": "2"}
    refused = olga.post(
        "/operator/tables/casino_war", data={"csrf_token": CSRF, **typed, "bonus": "ante"}
    )
    assert refused.status_code == 422
    page = refused.get_data(as_text=True)
    war = page.split('aria-labelledby="war-title"')[1].split("</section>")[0]
    assert 'data-testid="table-refused"' in war and "Please check" not in page
    for field in ("min_bet", "max_bet", "tie_payout"):
        assert re.search(rf'name="{field}"[^>]*value="{typed[field]}"', war), field
    assert "<option selected>4</option>" in war and "<option selected>2</option>" in war
    assert re.search(r'value="ante" checked', war)
    sota = page.split('aria-labelledby="sota-title"')[1].split("</section>")[0]
    assert 'data-testid="table-refused"' not in sota
    assert audit_size(app) == size  # nothing changed
    assert _war_table(app)["decks"] == 6


def test_a_table_form_saved_unchanged_changes_nothing_and_says_so(app: Flask) -> None:
    olga = client_as(app, add_user(app, "olga", "operator"))
    drawn = {
        "drawn": _drawn_with(olga.get("/operator/tables").get_data(as_text=True), "casino_war")
    }
    size = audit_size(app)
    same = {**WAR_TABLE_AS_DRAWN, **drawn}
    saved = olga.post("/operator/tables/casino_war", data=same, follow_redirects=True)
    assert "Nothing to save: the settings are as they were." in saved.get_data(as_text=True)
    assert audit_size(app) == size


def test_a_table_form_with_garbled_drawn_settings_is_refused_and_changes_nothing(
    app: Flask,
) -> None:
    olga = client_as(app, add_user(app, "olga", "operator"))
    size = audit_size(app)
    for garbled in ("{", "[]", '"x"', "\x00"):
        refused = olga.post(
            "/operator/tables/casino_war", data={**WAR_TABLE_AS_DRAWN, "drawn": garbled}
        )
        assert refused.status_code == 422
        assert "load the page again" in refused.get_data(as_text=True)
    assert audit_size(app) == size


def _role_of(app: Flask, user_id: int) -> str:
    session = db(app)
    try:
        return accounts.get_user(session, user_id).role
    finally:
        session.close()


def test_the_role_form_proposes_an_operator_once_and_a_second_operator_approves_it(
    make_app: Callable[..., Flask],
) -> None:
    app = make_app(FOUR_EYES_OPERATORS=1)
    pat = add_user(app, "pat", "player")
    olga = client_as(app, add_user(app, "olga", "operator"))
    otto = client_as(app, add_user(app, "otto", "operator"))
    page = olga.get(f"/operator/players/{pat}").get_data(as_text=True)
    role_form = page.split("/role")[1].split("</form>")[0]
    key = re.findall(r'name="idempotency_key" value="(\w+)"', role_form)
    assert len(key) == 1
    form = {"csrf_token": CSRF, "role": "operator", "idempotency_key": key[0]}
    size = audit_size(app)
    flashes = []
    for _ in range(2):
        sent = olga.post(f"/operator/players/{pat}/role", data=form, follow_redirects=True)
        assert sent.status_code == 200
        flashes += re.findall(
            r"Making pat an operator proposed \(#(\d+)\): it applies once a second operator "
            r"approves it\.",
            sent.get_data(as_text=True),
        )
    assert len(flashes) == 2 and flashes[0] == flashes[1]
    assert audit_size(app) == size + 1  # one approval.proposed
    assert _role_of(app, pat) == "player"
    # Proposed again from a page drawn afresh (another key), by anyone: the one waiting is named.
    for proposer in (olga, otto):
        again = proposer.post(
            f"/operator/players/{pat}/role",
            data={"csrf_token": CSRF, "role": "operator", "idempotency_key": "b" * 32},
        )
        assert again.status_code == 409
        shown = f"this change is proposed already (#{flashes[0]}) and waits for a second operator"
        assert shown in again.get_data(as_text=True)
    assert audit_size(app) == size + 1

    listed = otto.get("/operator/approvals").get_data(as_text=True)
    row = listed.split(f'data-approval="{flashes[0]}"')[1].split("</tr>")[0]
    assert 'data-kind="role"' in listed and "New operator:" in row and "pat" in row
    own = olga.post(f"/operator/approvals/{flashes[0]}/approve", data={"csrf_token": CSRF})
    assert own.status_code == 403 and _role_of(app, pat) == "player"
    otto.post(f"/operator/approvals/{flashes[0]}/approve", data={"csrf_token": CSRF})
    assert _role_of(app, pat) == "operator"

    # Making an operator a player again applies at once.
    demoted = otto.post(
        f"/operator/players/{pat}/role",
        data={"csrf_token": CSRF, "role": "player"},
        follow_redirects=True,
    )
    assert b"pat is now a player." in demoted.data and _role_of(app, pat) == "player"


def test_alert_rules_are_set_and_shown_on_the_console(app: Flask) -> None:
    pat = add_user(app, "pat", "player")
    olga = client_as(app, add_user(app, "olga", "operator"))
    made = olga.post(
        "/operator/alerts/rules",
        data={
            "csrf_token": CSRF,
            "kind": "player_adjustments",
            "currency": "sweets",
            "threshold": "20",
            "period_hours": "24",
        },
        follow_redirects=True,
    )
    assert "adjustments of one player total more than 20\u00a0sweets" in made.get_data(as_text=True)
    for _ in range(3):
        olga.post(
            f"/operator/players/{pat}/adjust",
            data={"csrf_token": CSRF, "currency": "sweets", "amount": "10", "reason": "bonus"},
        )
    page = olga.get("/operator/alerts").get_data(as_text=True)
    assert "adjustments to pat reached 30\u00a0sweets" in page
    assert 'data-testid="nav-alerts"' in page and '<span class="badge bad">1</span>' in page
    refused = olga.post(
        "/operator/alerts/rules",
        data={
            "csrf_token": CSRF,
            "kind": "large_win",
            "currency": "chips",
            "threshold": "-5",
            "period_hours": "24",
        },
    )
    assert refused.status_code == 422


def test_people_by_name_and_times_in_the_readers_zone_with_utc_beside(app: Flask) -> None:
    pat = add_user(app, "pat", "player")
    olga_id = add_user(app, "olga", "operator")
    auditor = client_as(app, add_user(app, "audrey", "auditor"))
    olga = client_as(app, olga_id)
    olga.post(
        f"/operator/players/{pat}/adjust",
        data={"csrf_token": CSRF, "currency": "sweets", "amount": "3", "reason": "welcome"},
    )
    page = auditor.get("/operator/audit?action=money.adjust").get_data(as_text=True)
    assert f"olga <code>user:{olga_id}</code>" in page
    assert " UTC</time>" in page
    # An auditor changes nothing of the casino, but chooses the zone times are shown in.
    chosen = auditor.post(
        "/operator/me/time-zone", data={"csrf_token": CSRF, "time_zone": "Asia/Tokyo"}
    )
    assert chosen.status_code == 303
    page = auditor.get("/operator/audit?action=money.adjust").get_data(as_text=True)
    assert " JST (" in page and " UTC)</time>" in page
    bad = auditor.post(
        "/operator/me/time-zone", data={"csrf_token": CSRF, "time_zone": "Mars/Olympus"}
    )
    assert bad.status_code == 422


def test_every_list_pages_and_downloads_on_the_console(app: Flask) -> None:
    pat = add_user(app, "pat", "player")
    olga = client_as(app, add_user(app, "olga", "operator"))
    for n in range(1, 4):
        olga.post(
            f"/operator/players/{pat}/adjust",
            data={"csrf_token": CSRF, "currency": "sweets", "amount": str(n), "reason": f"n{n}"},
        )
    oldest = olga.get(f"/operator/players/{pat}/lists/transfers?order=oldest").get_data(
        as_text=True
    )
    assert oldest.index("n1") < oldest.index("n3")
    newest = olga.get(f"/operator/players/{pat}/lists/transfers").get_data(as_text=True)
    assert newest.index("n3") < newest.index("n1")
    download = olga.get(f"/operator/players/{pat}/lists/transfers/export?format=csv")
    rows = list(csv.DictReader(io.StringIO(download.get_data(as_text=True))))
    assert [r["memo"] for r in rows if r["kind"] == "adjust"] == ["n1", "n2", "n3"]
    assert olga.get(f"/operator/players/{pat}/lists/rounds?until=tomorrow").status_code == 422
    players = olga.get("/operator/players/export?format=jsonl&q=pa").get_data(as_text=True)
    assert [json.loads(line)["username"] for line in players.splitlines()] == ["pat"]
    listing = olga.get("/operator/players?order=oldest").get_data(as_text=True)
    listing = listing.split("users-table")[1]
    assert listing.index(">pat<") < listing.index(">olga<")

    session = db(app)
    try:
        audit.checkpoint(session)
    finally:
        session.close()
    ranged = olga.get("/operator/audit/range-export?from_seq=2&to_seq=4")
    parsed = audit_chain.parse_export_text(ranged.get_data(as_text=True))
    assert [e["seq"] for e in parsed.entries] == [2, 3, 4]
    assert parsed.proofs[0]["seq"] == 4 and len(parsed.checkpoints) == 1
    assert olga.get("/operator/audit/range-export?from_seq=9999").status_code == 404


def _operator_after_a_checkpoint(app: Flask) -> tuple[FlaskClient, int]:
    """A new operator's console, and the size of a checkpoint signed after they were made."""
    olga = client_as(app, add_user(app, "olga", "operator"))
    session = db(app)
    try:
        return olga, audit.checkpoint(session)["document"]["size"]
    finally:
        session.close()


def test_the_console_s_range_export_takes_kept_sizes_as_the_api_does(app: Flask) -> None:
    olga, size = _operator_after_a_checkpoint(app)
    assert size > 1
    ranged = olga.get(f"/operator/audit/range-export?from_seq=1&to_seq=2&kept=1,{size}")
    assert ranged.status_code == 200, ranged.get_data(as_text=True)
    parsed = audit_chain.parse_export_text(ranged.get_data(as_text=True))
    assert [(c["old_size"], c["new_size"]) for c in parsed.consistency] == [
        (1, size),
        (size, size),
    ]
    for kept in ("x", "1;2", "0", str(size + 100)):
        refused = olga.get(f"/operator/audit/range-export?from_seq=1&kept={kept}")
        assert refused.status_code == 422, (kept, refused.get_data(as_text=True))
    # Said in words, not as the pattern ("kept: string should match pattern '^[0-9]{1,19}...").
    refused = olga.get("/operator/audit/range-export?from_seq=1&kept=abc").get_data(as_text=True)
    assert "kept must be the sizes of the checkpoints you kept, as whole numbers" in refused
    assert "pattern" not in refused


def test_the_console_s_range_form_asks_for_the_kept_sizes(app: Flask) -> None:
    """The form had no field for them: the address was edited by hand."""
    olga, size = _operator_after_a_checkpoint(app)
    page = olga.get("/operator/audit").get_data(as_text=True)
    form = page.split('aria-label="range export"')[1].split("</form>")[0]
    assert 'name="kept"' in form and 'for="r-kept"' in form
    blank = olga.get("/operator/audit/range-export?from_seq=1&to_seq=1&since=&until=&kept=")
    assert blank.status_code == 200  # the form sends its blank fields
    assert not audit_chain.parse_export_text(blank.get_data(as_text=True)).consistency
    typed = olga.get(f"/operator/audit/range-export?from_seq=1&to_seq=1&kept=1,+{size}")
    assert typed.status_code == 200, typed.get_data(as_text=True)
    consistency = audit_chain.parse_export_text(typed.get_data(as_text=True)).consistency
    assert [(c["old_size"], c["new_size"]) for c in consistency] == [(1, size), (size, size)]


def test_a_range_whose_first_entry_is_after_its_last_is_a_422_saying_so(app: Flask) -> None:
    """It was a 404, "no entries in that range", as if the log were too short."""
    olga = client_as(app, add_user(app, "olga", "operator"))
    page = olga.get("/operator/audit/range-export?from_seq=5&to_seq=2")
    assert page.status_code == 422
    assert "from_seq 5 is after to_seq 2: give the range&#39;s first entry first" in page.get_data(
        as_text=True
    )
    token = staff_bearer(app, "olga")
    api = app.test_client().get(
        "/api/v1/operator/audit/range-export?from_seq=5&to_seq=2", headers=token
    )
    assert api.status_code == 422 and api.get_json()["error"]["field"] == "from_seq"


def test_a_refused_time_zone_shows_its_form_again_with_the_reason(app: Flask) -> None:
    olga = client_as(app, add_user(app, "olga", "operator"))
    olga.set_cookie("lang", "nb")
    refused = olga.post(
        "/operator/me/time-zone",
        data={"csrf_token": CSRF, "time_zone": "Mars/Olympus", "next": "/operator/ledger"},
    )
    assert refused.status_code == 422
    page = refused.get_data(as_text=True)
    assert 'data-testid="time-zone-error"' in page
    assert "tidssonen må være et steds sone, som Europe/Paris eller America/New_York" in page
    assert 'value="Mars/Olympus"' in page and 'aria-invalid="true"' in page
    assert 'name="next" value="/operator/ledger"' in page
    assert page.count('id="time_zone"') == 1  # the navigation's own form is left out here
    chosen = olga.post(
        "/operator/me/time-zone",
        data={"csrf_token": CSRF, "time_zone": "Europe/Oslo", "next": "/operator/ledger"},
    )
    assert (chosen.status_code, chosen.headers["Location"]) == (303, "/operator/ledger")


def test_a_refused_alert_rule_shows_its_form_again_with_what_was_typed(app: Flask) -> None:
    olga = client_as(app, add_user(app, "olga", "operator"))
    form = {"kind": "large_win", "currency": "sweets", "threshold": "abc", "period_hours": "12"}
    refused = olga.post("/operator/alerts/rules", data={"csrf_token": CSRF, **form})
    assert refused.status_code == 422
    page = refused.get_data(as_text=True)
    assert 'data-testid="rule-error"' in page
    assert "Type the threshold as a whole number of sweets." in page
    assert '<option value="large_win" selected>' in page
    assert '<option value="sweets" selected>' in page
    assert re.search(r'id="threshold"[^>]*value="abc"[^>]*aria-invalid="true"', page)
    assert 'value="12"' in page
    assert "error-page" not in page  # the alerts page, not a dead end


def test_the_checkpoint_and_the_standing_checks_are_timed_in_the_reader_s_zone(
    app: Flask,
) -> None:
    olga = client_as(app, add_user(app, "olga", "operator"))
    olga.post("/operator/audit/checkpoint", data={"csrf_token": CSRF})
    run_checks(app, whole=True)
    olga.post("/operator/me/time-zone", data={"csrf_token": CSRF, "time_zone": "Asia/Tokyo"})
    page = olga.get("/operator/audit").get_data(as_text=True)
    checkpoint = page.split('data-testid="checkpoint"')[1].split("</dl>")[0]
    # The date in a span that keeps it on one line.
    shown = (
        r"<time datetime=\"[^\"]+Z\"><span class=\"date\">\d{4}-\d\d-\d\d</span>"
        r" \d\d:\d\d:\d\d JST \("
    )
    assert re.search(shown, checkpoint)
    checked = page.split('data-testid="audit-checked"')[1].split("</p>")[0]
    assert not re.search(r"\dT\d", re.sub(r"<[^>]*>", "", checked))  # no ISO text shown
    assert checked.count(" JST (") == 2  # the last check, and the last whole one
    ledger = olga.get("/operator/ledger").get_data(as_text=True)
    assert ledger.split('data-testid="ledger-checked"')[1].split("</p>")[0].count(" JST (") == 2


def test_a_table_form_whose_drawn_settings_nest_without_end_is_refused_and_saves_nothing(
    app: Flask,
) -> None:
    """Only a request made by hand sends such a field; JSON nested deeper than the parser
    recurses is as garbled as any other, a 422 on the form, never a 500."""
    olga = client_as(app, add_user(app, "olga", "operator"))
    before, size = _war_table(app), audit_size(app)
    for drawn in ("[" * 20_000, '{"a":' * 5_000):
        refused = olga.post(
            "/operator/tables/casino_war", data={**WAR_TABLE_CHANGE, "drawn": drawn}
        )
        assert refused.status_code == 422, drawn[:8]
    assert _war_table(app) == before
    assert audit_size(app) == size


@pytest.mark.parametrize(("lang", "typed"), [("en", "0.00"), ("fi", "0,00"), ("pt", "0,0")])
def test_a_zero_threshold_is_read_as_the_page_language_writes_it(
    app: Flask, lang: str, typed: str
) -> None:
    """A threshold of nothing (every adjustment raises an alert) is typed as the page writes
    numbers, like any other amount."""
    olga = client_as(app, add_user(app, "olga", "operator"))
    olga.set_cookie("lang", lang)
    form = {"kind": "player_adjustments", "currency": "chips", "threshold": typed}
    added = olga.post(
        "/operator/alerts/rules", data={"csrf_token": CSRF, **form, "period_hours": "1"}
    )
    assert added.status_code == 303
    session = db(app)
    try:
        assert [rule.threshold for rule in alerts.rules(session).rules] == [0]
    finally:
        session.close()


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "olga, who proposed this change, is no operator now"),
        ("fi", "olga, joka ehdotti tätä muutosta, ei ole nyt ylläpitäjä"),
    ],
)
def test_approving_a_proposal_of_one_locked_out_since_is_refused_on_the_page_and_it_waits(
    app: Flask, lang: str, said: str
) -> None:
    """Olga proposes a credit and is then locked out: otto's Approve is refused in his page's
    language, naming her; the money stays, the proposal still waits, and Reject clears it."""
    pat = add_user(app, "pat", "player")
    olga_id = add_user(app, "olga", "operator")
    olga = client_as(app, olga_id)
    otto = client_as(app, add_user(app, "otto", "operator"))
    otto.set_cookie("lang", lang)
    form = {"csrf_token": CSRF, "currency": "chips", "amount": "250000", "reason": "prize"}
    assert olga.post(f"/operator/players/{pat}/adjust", data=form).status_code == 303
    locked = otto.post(
        f"/operator/players/{olga_id}/lock", data={"csrf_token": CSRF, "locked": "1"}
    )
    assert locked.status_code == 303
    held, size = _balance(app, pat, "chips"), audit_size(app)
    listed = otto.get("/operator/approvals").get_data(as_text=True)
    approval_id = listed.split('data-approval="')[1].split('"')[0]
    refused = otto.post(f"/operator/approvals/{approval_id}/approve", data={"csrf_token": CSRF})
    assert refused.status_code == 409
    assert said in html.unescape(refused.get_data(as_text=True))
    assert (_balance(app, pat, "chips"), audit_size(app)) == (held, size)
    waiting = otto.get("/operator/approvals").get_data(as_text=True)
    assert f'data-approval="{approval_id}"' in waiting
    rejected = otto.post(
        f"/operator/approvals/{approval_id}/reject",
        data={"csrf_token": CSRF, "note": "olga left"},
        follow_redirects=True,
    )
    assert rejected.status_code == 200
    assert f'data-approval="{approval_id}"' not in otto.get("/operator/approvals").get_data(
        as_text=True
    )
    assert _balance(app, pat, "chips") == held
