"""The time zones offered are places (and UTC), one list for the console's picker and the API;
a zone chosen before that is no longer offered keeps working."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

from flask import Flask
from operator_support import CSRF
from operator_support import add_user
from operator_support import audit_size
from operator_support import bearer
from operator_support import client_as
from operator_support import db

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
