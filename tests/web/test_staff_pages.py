"""Staff land in the console and are not offered player pages; a player page tells them plainly
that staff accounts do not play (docs/operator.md: the console is for staff, play for players)."""

from __future__ import annotations

import pytest
from flask import Flask
from operator_support import CSRF
from operator_support import PASSWORD
from operator_support import add_user
from operator_support import client_as

PLAYER_PAGES = ("/lobby", "/casino-war", "/sota", "/history", "/stats")


@pytest.mark.parametrize("role", ["operator", "auditor"])
def test_staff_land_in_the_console_after_logging_in(app: Flask, role: str) -> None:
    add_user(app, "boss", role)
    client = client_as(app, None)
    answer = client.post(
        "/auth/login", data={"csrf_token": CSRF, "username": "boss", "password": PASSWORD}
    )
    assert answer.status_code == 303 and answer.headers["Location"] == "/operator/audit"
    assert client.get("/").headers["Location"] == "/operator/audit"


def test_a_player_still_lands_in_the_lobby(app: Flask) -> None:
    add_user(app, "alice", "player")
    client = client_as(app, None)
    answer = client.post(
        "/auth/login", data={"csrf_token": CSRF, "username": "alice", "password": PASSWORD}
    )
    assert answer.headers["Location"] == "/lobby"


@pytest.mark.parametrize("path", PLAYER_PAGES)
def test_player_pages_tell_staff_they_do_not_play(app: Flask, path: str) -> None:
    page = client_as(app, add_user(app, "boss", "operator"))
    answer = page.get(path)
    text = answer.get_data(as_text=True)
    assert answer.status_code == 403
    assert "Staff accounts do not play" in text
    assert 'name="stake"' not in text and 'name="bet"' not in text  # no form to fill in first
    assert 'href="/operator/audit"' in text


def test_the_header_offers_staff_no_player_only_links(app: Flask) -> None:
    page = client_as(app, add_user(app, "boss", "operator"))
    text = page.get("/operator/audit").get_data(as_text=True)
    header = text.split("</nav>")[0]
    assert not [path for path in PLAYER_PAGES if f'href="{path}"' in header]
