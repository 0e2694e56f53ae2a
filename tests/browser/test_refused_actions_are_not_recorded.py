"""The player's records in Chromium keep only the decisions and moves the casino accepted.

A record of one it refused (a second tab sending a choice the first one already made, a raise the
balance cannot cover) would make the page's verifier report that the casino signed something
other than what the player sent: a false accusation. Each game is tried with its page script
sending the form and with the form posted plainly, as without that script.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import pytest
from browser_support import deal_on_prisoners_of_war
from browser_support import lay_the_dealers_choices
from browser_support import sign_up
from seed_support import candidate_seeds
from test_player import leave_chips

from sota_casino.core import fairness
from sota_casino.core import sota
from sota_casino.web.sota import suggested_move

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
from web_support import plant_chosen_seed  # noqa: E402
from web_support import plant_server_seed  # noqa: E402

pytestmark = pytest.mark.browser

#: The Prisoners of War games played here, short enough to play to the end.
RULES: dict[str, Any] = {"prisoners_of_war": True, "max_tricks": 40}

#: The records of one round, as "My records" exports them.
RECORDED = """roundId => window.SotaRecords.exportDocument().actions
    .filter(a => a.round_id === roundId)"""

#: What the page's verifier finds wrong with the round's receipt, by the records (the round's
#: own problems only: the pair's commitment is not what is tried here).
RECEIPT_PROBLEMS = """async roundId => {
    const receipt = await (await fetch(`/api/v1/rounds/${roundId}/receipt`)).json();
    const bundle = {commitment: {document: {seed_pair_id: receipt.document.seed_pair_id}},
                    rounds: [receipt]};
    return window.SotaRecords.compareBundle(bundle).problems
        .filter(p => p.startsWith(`round ${roundId}:`));
}"""


def without_page_script(page: Any, script: str) -> None:
    """Serve ``page`` an empty ``script``: its forms are posted plainly, as without it."""
    page.route(
        f"**/static/js/{script}*",
        lambda route: route.fulfill(body="", content_type="text/javascript"),
    )


def seed_offering_a_choice(client_seed: str) -> bytes:
    """Return the first server seed whose game (:data:`RULES`) waits first for a move that
    can be answered in two ways, and still waits for a move once the dealer's choice is laid."""
    rules = sota.SotaRules.from_dict(RULES)
    for seed in itertools.islice(candidate_seeds("choice"), 10_000):

        def played(moves: list[list[str]], seed: bytes = seed) -> sota.GameResult:
            stream = fairness.Stream(fairness.Seeds(seed, client_seed, 0))
            return sota.play_game(rules, stream=stream, choices=moves)

        first = played([]).pending
        if first is None or len(first["options"]) < 2:
            continue
        dealers = suggested_move(RULES, list(first["options"]), first["count"])
        if played([[*dealers["down"], dealers["up"]]]).pending is not None:
            return seed
    raise AssertionError("no seed offers a choice")


def deal_prisoners_of_war(page: Any, live_server: Any) -> int:
    """Sign up in ``page`` and deal a game that waits for move 0, which can be answered in
    two ways; return its round id."""
    username = sign_up(page, "refused")
    plant_chosen_seed(live_server.app, username, seed_offering_a_choice)
    deal_on_prisoners_of_war(page, rule_max_tricks=str(RULES["max_tricks"]))
    game = page.evaluate("JSON.parse(document.getElementById('game-data').textContent)")
    assert game["rules"] == sota.SotaRules.from_dict(RULES).to_dict()
    assert game["pending"]["move"] == 0
    return int(game["id"])


def pick_other_cards(page: Any) -> None:
    """Pick, in ``page``'s move form, another card to lay face up than the dealer's choice
    (picked when the form is drawn), the other cards as many as before."""
    dealer_up = page.locator("#up-options input:checked").get_attribute("value")
    other = page.locator("#up-options input:not(:checked)").first
    up = other.get_attribute("value")
    other.check()
    down = page.locator(f"#down-options input[value='{up}']")
    if down.count() and down.is_checked():
        down.set_checked(False)
        page.locator(f"#down-options input[value='{dealer_up}']").check()


def lay_first_move_in(first: Any, tab: Any, round_id: int) -> list[dict[str, Any]]:
    """Lay the dealer's choice for move 0 in the tab ``first``, then go back to ``tab``; return
    the records of the round (``tab`` shares them), which hold that move alone.

    Going back shows ``tab`` again: Chromium runs a hidden tab's timers and animation frames
    seldom, and its replay took up to a minute to reach the next move."""
    first.click("#submit-move")
    first.wait_for_function(
        "() => !document.getElementById('move-form')"
        " || document.getElementById('move-form').dataset.move === '1'"
    )
    tab.bring_to_front()
    laid: list[dict[str, Any]] = tab.evaluate(RECORDED, round_id)
    assert [a["move"] for a in laid] == [0]
    return laid


def test_a_move_refused_in_a_second_tab_leaves_the_record_of_the_move_laid(
    tab: Any, live_server: Any
) -> None:
    """Two tabs on move 0: the first lays the dealer's choice, the second, drawn before,
    other cards, and is refused. The records keep the move laid, and the receipt agrees."""
    round_id = deal_prisoners_of_war(tab, live_server)
    first = tab.context.new_page()
    first.goto(tab.url)
    laid = lay_first_move_in(first, tab, round_id)

    pick_other_cards(tab)
    tab.expected_refusals += [409]
    tab.click("#submit-move")
    tab.wait_for_selector("#move-error:not([hidden])")
    assert tab.expected_refusals == []
    assert tab.inner_text("#move-error") == f"Game {round_id} waits for move 1, not move 0"
    assert tab.evaluate(RECORDED, round_id) == laid

    lay_the_dealers_choices(tab)
    assert tab.evaluate(RECEIPT_PROBLEMS, round_id) == []
    first.close()


def lay_plainly(page: Any) -> None:
    """Post ``page``'s move form as it stands and wait for the answer's page."""
    with page.expect_navigation(wait_until="load"):
        page.click("#submit-move")


def test_without_the_page_script_a_refused_move_is_not_recorded_and_a_laid_one_is(
    tab: Any, live_server: Any
) -> None:
    """The same two tabs, the second posting its move form plainly: the refusal it goes back
    with records nothing, and each move it lays afterwards is recorded once its page shows."""
    round_id = deal_prisoners_of_war(tab, live_server)
    first = tab.context.new_page()
    first.goto(tab.url)
    without_page_script(tab, "sota.js")
    tab.reload()
    laid = lay_first_move_in(first, tab, round_id)

    pick_other_cards(tab)
    lay_plainly(tab)
    assert tab.evaluate(RECORDED, round_id) == laid
    refusal = tab.locator("[data-refusal]").inner_text()
    assert refusal == f"Game {round_id} waits for move 1, not move 0"

    moves = 1
    while tab.locator("#move-form").count():
        lay_plainly(tab)
        moves += 1
        assert tab.locator("[data-refusal]").count() == 0
        assert [a["move"] for a in tab.evaluate(RECORDED, round_id)] == list(range(moves))
    assert tab.evaluate(RECEIPT_PROBLEMS, round_id) == []
    first.close()


def deal_a_tie(page: Any, live_server: Any) -> tuple[str, int]:
    """Sign up in ``page`` and deal a tie (a bet of 5 chips); return the username and the
    round id."""
    username = sign_up(page, "tie")
    plant_server_seed(live_server.app, username, {0: True})
    page.goto("/casino-war")
    page.fill("#bet", "5")
    page.click("#deal")
    page.wait_for_selector("#decision")
    return username, int(page.get_attribute("#decision", "data-round-id"))


def test_a_decision_refused_in_a_second_tab_leaves_the_record_of_the_decision_made(
    tab: Any, live_server: Any
) -> None:
    """The first tab goes to war; the second, drawn before, surrenders and is refused. The
    records keep the war, and the receipt agrees."""
    _, round_id = deal_a_tie(tab, live_server)
    first = tab.context.new_page()
    first.goto(f"/casino-war/rounds/{round_id}")
    first.click("#go-to-war")
    first.wait_for_selector("[data-testid=result]")

    tab.expected_refusals += [409]
    tab.click("#surrender")
    tab.wait_for_selector("#form-error:not([hidden])")
    assert tab.expected_refusals == []
    assert [a["action"] for a in tab.evaluate(RECORDED, round_id)] == ["war"]
    assert tab.evaluate(RECEIPT_PROBLEMS, round_id) == []
    first.close()


def test_without_the_page_script_a_refused_raise_is_not_recorded_and_the_surrender_is(
    tab: Any, live_server: Any
) -> None:
    """Posted plainly: a raise the balance no longer covers is refused and recorded nowhere;
    the surrender that counts is recorded once the round's page shows it."""
    without_page_script(tab, "casino_war.js")
    username, round_id = deal_a_tie(tab, live_server)
    leave_chips(live_server.app, username, 100)  # 1 chip: not the raise of 5
    with tab.expect_navigation(wait_until="load"):
        tab.click("#go-to-war")
    assert tab.evaluate(RECORDED, round_id) == []
    assert "not enough for the raise" in tab.locator("[data-refusal]").inner_text()

    with tab.expect_navigation(wait_until="load"):
        tab.click("#surrender")
    assert tab.locator("[data-testid=result]").count() == 1
    assert [a["action"] for a in tab.evaluate(RECORDED, round_id)] == ["surrender"]
    assert tab.evaluate(RECEIPT_PROBLEMS, round_id) == []
