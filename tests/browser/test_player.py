"""The player's side in a real browser against gunicorn: sign up, Casino War through ties with
each choice (keyboard), a Sota game with the replay controls, history, and rotating the seed
pair then verifying its rounds in the page with WebCrypto. Saves a screenshot of each page into
``docs/screenshots/``."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from browser_support import PASSWORD
from browser_support import fresh_name
from browser_support import sign_up

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
from web_support import plant_server_seed  # noqa: E402

from sota_casino.services import accounts  # noqa: E402
from sota_casino.services import money  # noqa: E402

pytestmark = pytest.mark.browser


def play_round(page: Any, choice: str = "surrender") -> None:
    """Deal one Casino War round from the table (no page load) and meet a tie with ``choice``."""
    page.wait_for_selector("#deal:not([disabled])")
    # textContent on both sides: innerText puts line breaks between the spans, so comparing
    # it with textContent would call the summary changed before the deal is even answered.
    summary = "document.getElementById('bet-summary').textContent"
    before = page.evaluate(summary)
    page.click("#deal")
    # Each round's summary names its own round id, so it changes once this deal is drawn.
    page.wait_for_function(f"before => {summary} !== before", arg=before)
    if page.locator("#decision").count():
        page.click(f"#decision button[value={choice}]")
    page.wait_for_selector("#bet-form:not([hidden]) #deal:not([disabled])")


def test_a_visitor_signs_up_and_sees_the_lobby(tab: Any, shoot: Any) -> None:
    tab.goto("/")
    assert "Casino War and Sota, provably fair" in tab.inner_text("h1")
    shoot(tab, "player-landing")
    tab.goto("/auth/register")
    shoot(tab, "player-register")
    sign_up(tab, "visitor")
    assert tab.inner_text(".tile.money .big >> nth=0") == "1,000"
    assert tab.inner_text(".tile.money .big >> nth=1") == "100"
    shoot(tab, "player-lobby")


def test_casino_war_through_a_tie_with_each_choice_from_the_keyboard(
    tab: Any, live_server: Any, shoot: Any
) -> None:
    username = sign_up(tab, "warrior")
    plant_server_seed(live_server.app, username, {0: True, 1: True})
    tab.goto("/casino-war")
    shoot(tab, "player-casino-war-table")
    tab.fill("#bet", "")
    tab.click("button.chip.c5")
    tab.click("button.chip.c5")
    assert tab.input_value("#bet") == "10"
    tab.click("#chips-to-tie")
    tab.click("button.chip.c1")
    assert tab.input_value("#tie_bet") == "1"
    tab.locator("body").press("d")
    tab.wait_for_selector("#go-to-war")
    assert "A tie!" in tab.inner_text(".result-banner")
    assert "raise 10" in tab.inner_text("#go-to-war")
    shoot(tab, "player-casino-war-tie")
    tab.locator("body").press("w")
    tab.wait_for_selector("[data-testid=result]")
    result = tab.inner_text("[data-testid=result]")
    assert re.search(r"You won the war|War tied: you win|Dealer won the war", result)
    assert "Tie bet 1: won 10\u00a0chips!" in result
    assert tab.locator(".war-zone .card.mini").count() == 3
    shoot(tab, "player-casino-war-war")

    tab.fill("#bet", "20")
    tab.fill("#tie_bet", "0")
    tab.locator("#deal").focus()
    tab.keyboard.press("Enter")
    tab.wait_for_selector("#surrender")
    tab.locator("body").press("s")
    tab.wait_for_selector("[data-testid=result]")
    assert "You surrendered" in tab.inner_text("[data-testid=result]")
    assert tab.inner_text("[data-testid=net]") == "−10"
    shoot(tab, "player-casino-war-surrender")


def test_a_sota_game_replays_with_play_pause_step_speed_and_end(tab: Any, shoot: Any) -> None:
    sign_up(tab, "sota")
    tab.goto("/sota")
    tab.select_option("#seats", "3")
    shoot(tab, "player-sota-table")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    assert tab.locator(".seat").count() == 3
    assert tab.is_hidden("#game-result")
    tricks = int(tab.get_attribute("#scrub", "max"))
    assert "dealt: 17\u00a0cards each" in tab.inner_text("#trick-what")
    tab.click("#step")
    assert "Trick 1" in tab.inner_text("#trick-what")
    assert tab.locator(".seat .card").count() >= 3
    tab.select_option("#speed", "10")
    tab.click("#play-pause")
    assert tab.inner_text("#play-pause") == "Pause"
    tab.wait_for_function("() => window.SotaReplay.position() > 3")
    tab.click("#play-pause")
    assert tab.inner_text("#play-pause") == "Play"
    paused_at = tab.evaluate("window.SotaReplay.position()")
    tab.wait_for_timeout(300)
    assert tab.evaluate("window.SotaReplay.position()") == paused_at
    shoot(tab, "player-sota-game", full_page=False)
    tab.click("#to-end")
    assert tab.is_visible("#game-result")
    assert tab.inner_text("#trick-no") == f"{tricks} / {tricks}"
    counts = [int(c) for c in tab.locator(".seat [data-count]").all_inner_texts()]
    assert sum(counts) <= 52 and max(counts) > 0
    shoot(tab, "player-sota-game-end")
    tab.keyboard.press("Home")
    assert tab.inner_text("#trick-no") == f"0 / {tricks}"


def test_a_war_round_is_highlighted_in_the_replay(tab: Any, shoot: Any) -> None:
    sign_up(tab, "wars")
    for _ in range(5):
        tab.goto("/sota")
        tab.click("#play")
        tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
        frames = tab.evaluate(
            "JSON.parse(document.getElementById('game-data').textContent).tricks"
            ".findIndex(t => t.wars > 0)"
        )
        if frames >= 0:
            break
    assert frames >= 0, "five games without a single war"
    tab.evaluate(f"document.getElementById('scrub').value = {frames}")
    tab.dispatch_event("#scrub", "input")
    tab.click("#step")
    tab.click("#step")
    assert tab.locator(".war-flag").count() == 1
    assert tab.locator(".seat.in-war").count() >= 2
    shoot(tab, "player-sota-war", full_page=False)


def test_history_lists_the_rounds_and_a_round_shows_its_receipt(tab: Any, shoot: Any) -> None:
    sign_up(tab, "history")
    tab.goto("/casino-war")
    for _ in range(3):
        play_round(tab)
    tab.goto("/history")
    assert tab.locator("[data-round]").count() >= 3
    shoot(tab, "player-history")
    tab.click("[data-round] a >> nth=0")
    tab.wait_for_selector("[data-testid=receipt]")
    assert '"type": "round"' in tab.inner_text("[data-testid=receipt]")
    # Read by a player: the time as history shows it, the receipt's hundredths explained.
    played = tab.inner_text("dl.facts time")
    assert re.fullmatch(r"[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d\s[AP]M UTC", played), played
    assert "hundredths" in tab.inner_text("[data-testid=receipt-units]")
    assert tab.is_visible("#verify-round")
    shoot(tab, "player-round-receipt")


def test_rotating_reveals_the_seed_and_the_browser_verifies_every_round(
    tab: Any, live_server: Any, shoot: Any
) -> None:
    username = sign_up(tab, "verifier")
    plant_server_seed(live_server.app, username, {0: True, 1: True})
    tab.goto("/casino-war")
    play_round(tab, "war")
    play_round(tab, "surrender")
    for _ in range(3):
        play_round(tab, "war")
    tab.goto("/sota")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))

    tab.goto("/fairness")
    commitment = tab.inner_text("[data-testid=commitment]")
    # The first pair's client seed was the casino's; the suggestion for the next is this
    # browser's own (the page as served suggests nothing), new on every load.
    assert "made by the casino" in tab.inner_text("[data-testid=first-client-seed]")
    served = tab.evaluate("async () => (await (await fetch('/fairness')).text())")
    assert re.search(r'<input id="client_seed"[^>]*data-client-seed[^>]*>', served)
    assert not re.search(r'<input id="client_seed"[^>]*value=', served)
    suggested = tab.input_value("#client_seed")
    assert re.fullmatch(r"[0-9a-f]{16}", suggested)
    tab.reload()
    assert tab.input_value("#client_seed") != suggested
    tab.fill("#client_seed", "browser seed")
    tab.click("#rotate")
    tab.wait_for_selector("[data-verify]")
    assert "its server seed was" in tab.inner_text(".flash.ok")
    assert tab.inner_text("[data-testid=client-seed]") == "browser seed"
    assert tab.locator("[data-testid=first-client-seed]").count() == 0
    pair = tab.locator(".revealed-pair").first
    assert commitment in pair.inner_text()
    pair.locator("[data-verify]").click()
    summary = pair.locator("[data-testid=verify-summary]")
    summary.wait_for()
    # The verdict's line, then what it means.
    assert summary.inner_text().startswith("✓ All 6\u00a0rounds verified.\n")
    assert "\nAll 6\u00a0rounds verified against the key pinned" in summary.inner_text()
    # Both games were replayed whole, and the page says what it compared with the records.
    verdict = summary.inner_text()
    assert "Sota: the deck, every trick, the winner" in verdict
    assert "The commitment equals the one this browser was shown before play" in verdict
    rows = pair.locator("tr[data-round]")
    assert rows.count() == 6
    assert pair.locator("tr[data-ok='1']").count() == 6
    war_row = pair.locator("tr[data-nonce='0']").inner_text()
    assert re.search(r"You won the war|War tied: you win|Dealer won the war", war_row)
    assert re.search(r"\b(15|0)\u00a0chips", war_row)  # a won war pays 3 × the 5-chip ante
    assert "You surrendered" in pair.locator("tr[data-nonce='1']").inner_text()
    shoot(tab, "player-fairness-verified")

    # The page's own replay equals the server's receipts, card for card.
    bundle = tab.evaluate(
        "async url => (await fetch(url)).json()",
        pair.locator("[data-verify]").get_attribute("data-bundle-url"),
    )
    for signed in bundle["rounds"]:
        doc = signed["document"]
        row = pair.locator(f"tr[data-round='{doc['round_id']}']")
        shown = row.locator(".card-text").all_inner_texts()
        assert len(shown) == min(8, len(doc["cards"]))
    key = tab.inner_text("[data-testid=public-key]")
    command = pair.locator("[data-testid=pair-verifier-command]").inner_text()
    assert command.startswith(f"python3 verify.pyz --public-key {key} ")
    assert command.endswith(f"bundle-{pair.get_attribute('data-seed-pair')}.json")


def test_a_tampered_bundle_fails_in_the_browser_verifier(tab: Any, live_server: Any) -> None:
    sign_up(tab, "tamper")
    tab.goto("/casino-war")
    play_round(tab)
    tab.goto("/fairness")
    tab.click("#rotate")
    tab.wait_for_selector("[data-verify]")
    url = tab.locator("[data-verify]").first.get_attribute("data-bundle-url")
    verdict = tab.evaluate(
        """async url => {
            const bundle = await (await fetch(url)).json();
            const good = await window.SotaVerify.verifyBundle(bundle);
            bundle.rounds[0].document.payout += 100;
            const bad = await window.SotaVerify.verifyBundle(bundle);
            return [good.problems.length, bad.problems.join(' '), good.problems.join(' | ')];
        }""",
        url,
    )
    assert verdict[0] == 0, verdict
    assert "signature" in verdict[1] and "payout" in verdict[1]


def test_the_lobby_and_both_tables_fit_a_phone(phone: Any, shoot: Any) -> None:
    sign_up(phone, "phone")
    shoot(phone, "phone-lobby")
    phone.goto("/casino-war")
    phone.fill("#bet", "")
    phone.tap("button.chip.c5")
    assert phone.input_value("#bet") == "5"
    shoot(phone, "phone-casino-war-table", full_page=False)
    play_round(phone)
    shoot(phone, "phone-casino-war-result", full_page=False)
    phone.goto("/history")
    # Narrow screens list rounds as cards, each with its result and net in view.
    row = phone.locator("[data-round]").first
    for cell in ("result", "net"):
        box = row.locator(f"[data-testid={cell}]").bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, cell
    shoot(phone, "phone-history", full_page=False)
    phone.goto("/sota")
    shoot(phone, "phone-sota-table")
    phone.tap("#play")
    phone.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    phone.tap("#step")
    shoot(phone, "phone-sota-game")
    for url in ("/lobby", "/casino-war", "/sota", phone.url, "/history", "/fairness"):
        phone.goto(url)
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{url} scrolls sideways ({width} px wide)"


def focused_id(tab: Any) -> str:
    """The id of the focused field, once the browser has applied the page's ``autofocus``
    (Chromium does that at a rendering step after the load, not at once)."""
    tab.wait_for_function("() => document.activeElement !== document.body")
    return str(tab.evaluate("document.activeElement.id"))


def submit_and_load(tab: Any) -> None:
    """Submit the page's form and wait for the answer's page to load: until then its style
    sheet may not have capitalized a refusal's first letter (``.flash::first-letter``)."""
    with tab.expect_navigation(wait_until="load"):
        tab.click("main button[type=submit]")


def test_refused_forms_say_why_keep_what_was_typed_and_focus_the_field_to_fix(
    tab: Any, shoot: Any
) -> None:
    taken = sign_up(tab, "taken")
    tab.click("header button:has-text('Log out')")
    tab.get_by_text("You are logged out").wait_for()  # before leaving: the session has ended
    tab.goto("/auth/register")
    tab.expected_refusals += [409, 422]
    tab.fill("#username", taken)
    tab.fill("#password", PASSWORD)
    tab.fill("#confirm", PASSWORD)
    submit_and_load(tab)
    assert f"The username '{taken}' is taken; choose another" in tab.inner_text("[role=alert]")
    assert tab.input_value("#username") == taken
    assert focused_id(tab) == "username"
    shoot(tab, "player-register-taken")
    tab.fill("#username", f"{taken}x")
    tab.fill("#password", "aaaaaaaaaaaa")
    tab.fill("#confirm", "aaaaaaaaaaaa")
    submit_and_load(tab)
    assert "Password is too weak" in tab.inner_text("[role=alert]")
    assert focused_id(tab) == "password"
    assert tab.input_value("#username") == f"{taken}x"
    # Two passwords that differ come back empty, both: the first is the one to type again (the
    # second was focused, its empty first above it).
    tab.expected_refusals += [422]
    tab.fill("#password", PASSWORD)
    tab.fill("#confirm", PASSWORD + "!")
    submit_and_load(tab)
    assert "The two passwords differ" in tab.inner_text("[role=alert]")
    assert tab.input_value("#password") == tab.input_value("#confirm") == ""
    assert focused_id(tab) == "password"
    assert tab.expected_refusals == []


def test_a_bet_over_the_balance_is_explained_on_the_table(
    tab: Any, live_server: Any, shoot: Any
) -> None:
    username = sign_up(tab, "short")
    leave_chips(live_server.app, username, 1_200)
    tab.goto("/casino-war")
    tab.expected_refusals += [409]
    tab.fill("#bet", "")
    tab.click("button.chip.c25")
    tab.click("#deal")
    tab.wait_for_selector("#form-error")
    message = tab.inner_text(".flash.error")
    assert message == (
        "You have 12\u00a0chips, not enough for this bet of 25\u00a0chips. Bet less, or top up in "
        "the lobby once you are below 100\u00a0chips."
    )
    assert tab.url.endswith("/casino-war") and tab.input_value("#bet") == "25"
    shoot(tab, "player-casino-war-short")
    tab.fill("#bet", "900")  # past the table's limit: the browser's own check speaks first
    tab.click("#deal")
    assert tab.evaluate("document.getElementById('bet').validity.rangeOverflow")
    assert tab.url.endswith("/casino-war")


def leave_chips(app: Any, username: str, chips: int) -> None:
    """Take a player's chips down to ``chips`` (hundredths) with an operator adjustment."""
    leave_balance(app, username, "chips", chips)


def leave_balance(app: Any, username: str, currency: str, amount: int) -> None:
    """Bring a player's ``currency`` ("chips" in hundredths, or "sweets") to ``amount`` with an
    operator adjustment."""
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        player = accounts.find_users(session, username)[0].id
        operator = accounts.create_operator(session, fresh_name("op"), PASSWORD).id
        held = getattr(money.balances(session, player), currency)
        money.adjust(session, operator, player, currency, amount - held, "browser test")
    finally:
        session.close()


def test_the_sota_replay_is_played_from_the_keyboard_alone(tab: Any) -> None:
    sign_up(tab, "keys")
    tab.goto("/sota")
    tab.focus("#stake")
    tab.keyboard.press("Tab")  # the seat count
    tab.keyboard.press("Tab")  # how seats play, on the rules page
    tab.keyboard.press("Tab")  # the rule set: arrow keys pick a preset
    tab.keyboard.press("ArrowRight")
    assert tab.evaluate("document.activeElement.value") == "english"
    tab.locator("body").press("p")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    assert "52 cards · 1\u00a0card face down in a war" in tab.inner_text("[data-testid=game-rules]")
    body = tab.locator("body")
    body.press("ArrowRight")
    body.press("ArrowRight")
    assert tab.evaluate("window.SotaReplay.position()") == 2
    body.press("ArrowLeft")
    assert tab.evaluate("window.SotaReplay.position()") == 1
    body.press("+")
    assert tab.input_value("#speed") == "2"
    body.press("End")
    assert tab.is_visible("#game-result")
    body.press(" ")
    assert tab.inner_text("#play-pause") == "Pause"
    body.press(" ")
    assert tab.inner_text("#play-pause") == "Play"
    # Every control is reached with Tab and has a name a screen reader can say.
    names = tab.evaluate(
        "Array.from(document.querySelectorAll('.controls button'))"
        ".map(b => b.getAttribute('aria-label') || b.textContent.trim())"
    )
    assert names == [
        "Start again",
        "Back one step",
        "Play",
        "Step forward",
        "To the end",
        "Skip to the next war",
    ]
    tab.focus("#to-start")
    tab.keyboard.press("Enter")
    assert tab.evaluate("window.SotaReplay.position()") == 0
