"""The time zones offered are places (and UTC), one list for the console's picker and the API;
a zone chosen before that is no longer offered keeps working."""

from __future__ import annotations

import html
import re
from zoneinfo import ZoneInfo

from flask import Flask
from operator_support import CSRF
from operator_support import add_user
from operator_support import audit_size
from operator_support import bearer
from operator_support import client_as
from operator_support import db
from operator_support import last_entry

from sota_casino.models import User
from sota_casino.services import accounts
from sota_casino.web.openapi import openapi_document

NOT_PLACES = (
    "EST5EDT",
    "CST6CDT",
    "Factory",
    "posixrules",
    "localtime",
    "Etc/GMT+5",
    "Etc/UTC",
    "GMT",
    "US/Eastern",
    "GB",
    "Asia/Calcutta",
    "Europe/Kiev",
    "America/Buenos_Aires",
)


def test_the_zones_offered_are_places_by_their_present_names() -> None:
    offered = accounts.time_zones()
    for place in ("Europe/Oslo", "Europe/Helsinki", "America/Sao_Paulo", "Asia/Kolkata"):
        assert place in offered
    assert "America/Argentina/Buenos_Aires" in offered and "Europe/Kyiv" in offered
    assert not set(NOT_PLACES) & set(offered)
    assert all(zone.split("/")[0] in accounts.AREAS and "/" in zone for zone in offered)
    assert len(offered) > 300 and list(offered) == sorted(offered)
    for zone in offered:
        ZoneInfo(zone)  # each one loads


def test_the_console_and_the_api_offer_the_same_zones(app: Flask) -> None:
    olga = client_as(app, add_user(app, "olga", "operator"))
    page = olga.get("/operator/audit").get_data(as_text=True)
    listed = page.split('<datalist id="time-zones">')[1].split("</datalist>")[0]
    assert re.findall(r'<option value="([^"]+)">', listed) == ["UTC", *accounts.time_zones()]
    schema = openapi_document(app)["components"]["schemas"]["TimeZoneChange"]
    assert schema["properties"]["time_zone"]["enum"] == ["", "UTC", *accounts.time_zones()]


def test_a_name_that_is_no_place_is_refused_by_the_api_and_the_console(app: Flask) -> None:
    add_user(app, "olga", "operator")
    headers = bearer(app, "olga")
    olga = client_as(app, accounts.find_users(db(app), "olga")[0].id)
    client = app.test_client()
    before = audit_size(app)
    for zone in NOT_PLACES:
        answer = client.put(
            "/api/v1/operator/me/time-zone", json={"time_zone": zone}, headers=headers
        )
        assert answer.status_code == 422, zone
        page = olga.post("/operator/me/time-zone", data={"csrf_token": CSRF, "time_zone": zone})
        assert page.status_code == 422, zone
        assert "time zone must be a place&#39;s zone such as Europe/Paris" in page.get_data(
            as_text=True
        )
    assert audit_size(app) == before
    chosen = client.put(
        "/api/v1/operator/me/time-zone", json={"time_zone": "Europe/Oslo"}, headers=headers
    )
    assert chosen.status_code == 200 and chosen.get_json() == {"time_zone": "Europe/Oslo"}


def _store_zone(app: Flask, user_id: int, zone: str) -> None:
    """Store a zone as a release that offered it did (the service now refuses it)."""
    session = db(app)
    try:
        with session.begin():
            user = session.get(User, user_id)
            assert user is not None
            user.time_zone = zone
    finally:
        session.close()


def test_a_zone_chosen_before_that_is_no_longer_offered_keeps_working(app: Flask) -> None:
    olga_id = add_user(app, "olga", "operator")
    olga = client_as(app, olga_id)
    olga.post("/operator/audit/checkpoint", data={"csrf_token": CSRF})
    _store_zone(app, olga_id, "US/Eastern")
    page = olga.get("/operator/audit")
    assert page.status_code == 200
    shown = page.get_data(as_text=True)
    assert re.search(r"\d\d:\d\d:\d\d E[SD]T \(", shown)  # times in it, UTC beside them
    assert "Times: US/Eastern" in shown
    assert re.search(r'id="time_zone"[^>]*value="US/Eastern"', shown)  # the picker shows it
    # A name gone from the machine's zone database altogether: UTC alone, not an error.
    _store_zone(app, olga_id, "Mars/Olympus")
    gone = olga.get("/operator/audit")
    assert gone.status_code == 200 and " UTC</time>" in gone.get_data(as_text=True)


def _time_zone_form(page: str) -> dict[str, str]:
    """The fields of the console bar's time-zone form, as the page fills them in."""
    form = page.split('class="form-row time-zone-form">')[1].split("</form>")[0]
    inputs = re.findall(r"<input ([^>]*)>", form)
    fields = (dict(re.findall(r'(\w+)="([^"]*)"', attributes)) for attributes in inputs)
    return {field["name"]: html.unescape(field["value"]) for field in fields}


def _stored_zone(app: Flask, user_id: int) -> str | None:
    session = db(app)
    try:
        user = session.get(User, user_id)
        assert user is not None
        return user.time_zone
    finally:
        session.close()


def test_the_form_sent_unchanged_keeps_a_zone_no_longer_offered(app: Flask) -> None:
    """The picker shows a zone chosen before that is no longer offered; sent back as it is, it
    was refused as if it were a new choice."""
    olga_id = add_user(app, "olga", "operator")
    olga = client_as(app, olga_id)
    _store_zone(app, olga_id, "US/Eastern")
    form = _time_zone_form(olga.get("/operator/ledger").get_data(as_text=True))
    assert form == {"csrf_token": CSRF, "next": "/operator/ledger?", "time_zone": "US/Eastern"}
    before = audit_size(app)
    sent = olga.post("/operator/me/time-zone", data=form)
    assert (sent.status_code, sent.headers.get("Location")) == (303, "/operator/ledger")
    assert "Times are now shown in US/Eastern" in olga.get("/operator/ledger").get_data(
        as_text=True
    )
    assert _stored_zone(app, olga_id) == "US/Eastern"
    # Logged as every setting sent is, changed or not (a table's, a lock, a rule's switch).
    assert audit_size(app) == before + 1
    assert last_entry(app)["action"] == "user.time_zone"
    assert last_entry(app)["data"] == {"time_zone": "US/Eastern"}
    # Another zone no longer offered is a new choice, and refused.
    for zone in ("GB", "Asia/Calcutta"):
        refused = olga.post("/operator/me/time-zone", data={**form, "time_zone": zone})
        assert refused.status_code == 422, zone
    assert _stored_zone(app, olga_id) == "US/Eastern"
    # Once another is chosen, the old zone is no longer the one she has.
    olga.post("/operator/me/time-zone", data={**form, "time_zone": "America/New_York"})
    back = olga.post("/operator/me/time-zone", data=form)
    assert back.status_code == 422 and _stored_zone(app, olga_id) == "America/New_York"


def test_the_api_takes_only_the_zones_it_offers_even_ones_own(app: Flask) -> None:
    """The API's zones are the enum of its document, which every endpoint keeps both ways: the
    caller's own zone no longer offered is refused there, and nothing changes; one it has that
    is offered is taken back, and logged as on the page."""
    olga_id = add_user(app, "olga", "operator")
    headers = bearer(app, "olga")
    client = app.test_client()
    _store_zone(app, olga_id, "US/Eastern")
    before = audit_size(app)
    own = {"time_zone": "US/Eastern"}
    refused = client.put("/api/v1/operator/me/time-zone", json=own, headers=headers)
    assert refused.status_code == 422
    error = refused.get_json()["error"]
    assert error["code"] == "invalid_input" and error["message"].startswith("time_zone ")
    assert _stored_zone(app, olga_id) == "US/Eastern" and audit_size(app) == before
    _store_zone(app, olga_id, "Europe/Oslo")
    offered = {"time_zone": "Europe/Oslo"}
    kept = client.put("/api/v1/operator/me/time-zone", json=offered, headers=headers)
    assert kept.status_code == 200 and kept.get_json() == offered
    assert audit_size(app) == before + 1
