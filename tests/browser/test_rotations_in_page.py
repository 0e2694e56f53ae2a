"""Rotations in Chromium: the fairness page shows the next pair's signed commitment before the
player chooses the client seed that starts it, records both, and checks at once that the
rotation started that very pair with that seed. An operator holding the key and the database
that starts instead a pair it made once the seed arrived (a server seed chosen to make the
player lose, everything signed and logged) is named right away, in a warning that lasts, and
again in the pair's bundle, by the page's verifier and the offline one reading the records.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from browser_support import sign_up
from browser_support import wait_for_round
from rotation_support import losing_seed
from rotation_support import rotate_onto_a_pair_made_now
from sqlalchemy import select
from test_fairness_records import RECORD_FIELDS
from test_fairness_records import VERIFY

from sota_casino.models import User
from sota_casino.verify import Records
from sota_casino.verify import verify_bundle

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
from web_support import plant_server_seed  # noqa: E402

pytestmark = pytest.mark.browser

SEED = "my own seed"
RECORDS = "window.SotaRecords.exportDocument()"
SEED_PAIR = "async () => (await fetch('/api/v1/fairness/seed-pair')).json()"


def rotate_in_page(tab: Any, client_seed: str) -> None:
    tab.goto("/fairness")
    tab.fill("#client_seed", client_seed)
    with tab.expect_navigation():
        tab.click("#rotate")


def user_id(app: Any, username: str) -> int:
    with app.app_context():
        session = app.extensions["sota_casino.sessionmaker"]()
        try:
            return int(session.scalars(select(User.id).where(User.username == username)).one())
        finally:
            session.close()


def test_the_page_records_the_next_commitment_and_the_seed_sent_and_confirms_the_pair_started(
    tab: Any, live_server: Any
) -> None:
    username = sign_up(tab, "rotator")
    plant_server_seed(live_server.app, username, {0: True})
    tab.goto("/fairness")
    before = tab.evaluate(SEED_PAIR)
    upcoming = {
        "document": before["next_commitment_document"],
        "signature": before["next_signature"],
    }
    form = tab.locator("form[data-record-rotation]")
    assert form.get_attribute("data-record-rotation") == str(before["next_seed_pair_id"])
    assert upcoming in tab.evaluate(RECORDS)["commitments"]  # kept before any seed is sent

    # Refused while a round waits for the player: no alarm, and the seed sent next counts.
    tab.goto("/casino-war")
    tab.click("#deal")
    tab.locator("#go-to-war").wait_for()
    rotate_in_page(tab, "first try")
    assert "still open" in tab.inner_text("main")
    assert tab.locator("[data-testid=rotation-mismatch]").count() == 0
    assert tab.inner_text("[data-testid=rotation-check]") == ""
    tab.goto("/casino-war")
    tab.click("#go-to-war")
    tab.wait_for_selector("[data-testid=result]")

    rotate_in_page(tab, SEED)
    assert tab.inner_text("[data-testid=rotation-check]") == (
        f"✓ Seed pair #{before['next_seed_pair_id']} is active with the client seed you sent and "
        "the signed commitment this browser recorded before you sent it."
    )
    assert tab.locator("[data-testid=rotation-mismatch]").count() == 0
    records = tab.evaluate(RECORDS)
    assert records["rotations"] == [
        {"seed_pair_id": before["next_seed_pair_id"], "client_seed": SEED}
    ]
    assert set(records) == RECORD_FIELDS
    tab.reload()  # checked once: nothing pending is left
    assert tab.inner_text("[data-testid=rotation-check]") == ""

    # The pair started dealing another client seed than the one sent for it fails (a).
    dealt = tab.evaluate(
        """([doc, seed]) => window.SotaRecords.compareBundle({commitment: {document: doc},
            reveal: null, rounds: [{document: {client_seed: seed}}]})""",
        [before["next_commitment_document"], "the casino's choice"],
    )
    assert dealt["commitment"] is False
    assert dealt["problems"] == [
        f"seed pair #{before['next_seed_pair_id']} deals with the client seed \"the casino's "
        'choice", but you sent "my own seed" to start it (recorded)'
    ]


def test_a_pair_made_once_the_seed_arrived_is_named_at_once_and_in_its_bundle(
    tab: Any, live_server: Any
) -> None:
    app = live_server.app
    username = sign_up(tab, "cheated")
    player = user_id(app, username)
    tab.goto("/fairness")
    committed = tab.evaluate(SEED_PAIR)["next_seed_pair_id"]
    made: list[int] = []

    def cheat(route: Any) -> None:
        """Between the submit and the next page: the operator makes a pair for the seed."""
        with app.app_context():
            session = app.extensions["sota_casino.sessionmaker"]()
            try:
                made.append(
                    rotate_onto_a_pair_made_now(session, player, SEED, losing_seed(SEED, 2))
                )
            finally:
                session.close()
        route.fulfill(status=303, headers={"Location": "/fairness"})

    tab.route("**/fairness/rotate", cheat)
    rotate_in_page(tab, SEED)
    tab.unroute("**/fairness/rotate")
    (pair,) = made
    warning = tab.locator("[data-testid=rotation-mismatch]")
    expected = (
        f'You sent the client seed "{SEED}" to start seed pair #{committed}, but the casino '
        f"activated seed pair #{pair}, not seed pair #{committed}, whose signed commitment this "
        "browser recorded before you sent your client seed."
    )
    assert "The casino did not start the seed pair you chose your client seed for" in (
        warning.inner_text()
    )
    assert expected in warning.inner_text()
    assert tab.get_attribute("[data-testid=rotation-mismatch]", "role") == "alert"
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:", warning.inner_text())  # a time as pages write it
    for url in ("/fairness", "/lobby"):  # it lasts
        tab.goto(url)
        assert expected in tab.inner_text("[data-testid=rotation-mismatch]")

    # The player plays on (and loses, as chosen), then rotates again: the operator still offers
    # the committed pair, and the seed first sent for it stays recorded.
    tab.goto("/casino-war")
    for nonce in range(2):  # the made pair's first rounds
        tab.click("#deal")
        wait_for_round(tab, nonce)
    rotate_in_page(tab, "second seed")
    records = tab.evaluate(RECORDS)
    assert records["rotations"] == [{"seed_pair_id": committed, "client_seed": SEED}]

    # The made pair's bundle, caught by the page's verifier and by the offline one.
    caught = (
        f"seed pair #{pair} deals with the client seed you sent to start seed pair "
        f"#{committed} (whose commitment you recorded before play): a pair committed after "
        "your client seed was known"
    )
    article = tab.locator(f".revealed-pair[data-seed-pair='{pair}']")
    url = article.locator("[data-verify]").get_attribute("data-bundle-url")
    bundle = tab.evaluate("async url => (await fetch(url)).json()", url)
    assert tab.evaluate(VERIFY, bundle) == caught
    article.locator("[data-verify]").click()
    verdict = article.locator("[data-testid=verify-summary]")
    verdict.wait_for()
    assert verdict.inner_text().startswith("✗ 0\u00a0of 2\u00a0rounds verified") and caught in (
        verdict.inner_text()
    )
    # The warning stays until the player hides it.
    assert tab.locator("[data-testid=rotation-mismatch]").count() == 1
    tab.get_by_role("button", name="Hide this warning").click()
    tab.reload()
    assert tab.locator("[data-testid=rotation-mismatch]").count() == 0
    report = verify_bundle(bundle, bundle["public_key_hex"], records=Records.parse(records))
    assert [f.text() for f in report.failures] == [
        f"commitment document: records: seed pair {pair} deals with the client seed you sent "
        f"to start seed pair {committed} (whose commitment you recorded before play): a pair "
        "committed after your client seed was known"
    ]
