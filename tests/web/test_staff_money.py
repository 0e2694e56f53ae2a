"""Staff accounts run the casino and have no play money: no top-up, no bet, nothing moved."""

from __future__ import annotations

import pytest
from flask import Flask
from operator_support import add_user
from operator_support import bearer
from operator_support import db

from sota_casino.services import money
from sota_casino.services.results import Balances


@pytest.mark.parametrize("role", ["operator", "auditor"])
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/me/topup", {"currency": "chips"}),
        ("/api/v1/casino-war/rounds", {"bet": 100}),
        ("/api/v1/sota/games", {"stake": 1, "preset": "nordic"}),
        ("/api/v1/me/keys", {"public_key_hex": "ab" * 32}),
    ],
)
def test_staff_cannot_top_up_or_bet(app: Flask, role: str, path: str, body: dict) -> None:
    staff = add_user(app, f"staff{role}", role)
    response = app.test_client().post(path, json=body, headers=bearer(app, f"staff{role}"))
    assert response.status_code == 403, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == "staff_no_play_money"
    # The refusal names each thing staff may not do, registering a player's key among them.
    assert "bet, top up or register a player's key" in error["message"]
    session = db(app)
    try:
        assert money.balances(session, staff) == Balances(chips=0, sweets=0)
        assert money.topup_status(session, staff) == {"chips": False, "sweets": False}
    finally:
        session.close()
