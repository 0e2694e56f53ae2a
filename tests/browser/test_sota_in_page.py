"""Sota in the page: games dealt and dealt again without page loads, a replay every card of which
is visible at 10×, the summary at the end, the player's exit, skipping to wars, and a Prisoners
of War game played without page loads."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_support import LiveServer
from browser_support import deal_on_prisoners_of_war
from browser_support import lay_move
from browser_support import open_tab
from flask import Flask
from move_support import PRISONERS
from seed_support import candidate_seeds
from test_layout import LANGUAGES
from test_layout import a_new_player
from test_narrow_phones import NARROW
from test_narrow_phones import SCRUB_TO
from test_narrow_phones import WAR_GAMES
from test_narrow_phones import deal_a_sota_game
from test_narrow_phones import plant_a_double_war
from test_play_in_page import MARK_PAGE
from test_play_in_page import SAME_PAGE
from test_player import leave_balance
from test_player import sign_up
from web_support import plant_chosen_seed
from web_support import plant_seed_repeating_a_move
from web_support import plant_sota_winner

from sota_casino.core import fairness
from sota_casino.core import sota

pytestmark = pytest.mark.browser


def game_json(page: Any) -> dict[str, Any]:
    return dict(page.evaluate("JSON.parse(document.getElementById('game-data').textContent)"))


def deal_sota(page: Any, seats: str = "2", preset: str = "nordic") -> None:
    page.goto("/sota")
    page.select_option("#seats", seats)
    page.check(f"input[name=preset][value={preset}]")
    page.click("#play")
    page.wait_for_url(re.compile(r".*/sota/games/\d+$"))


def api_sweets(page: Any) -> int:
    me = page.evaluate("async () => (await fetch('/api/v1/me')).json()")
    return int(me["balances"]["sweets"])


def header_sweets(page: Any) -> int:
    return int(page.inner_text("[data-header-sweets]").replace(",", ""))


def test_games_are_dealt_and_dealt_again_in_the_page(tab: Any) -> None:
    sign_up(tab, "inplace")
    tab.goto("/sota")
    # Each rule set's line says something its title does not.
    for preset in tab.locator(".preset").all():
        title = preset.locator("strong").inner_text()
        about = preset.locator("small").inner_text()
        assert about and title.lower() not in about.lower(), (title, about)
    tab.evaluate(MARK_PAGE)
    tab.fill("#stake", "7")
    tab.select_option("#seats", "3")
    tab.check("input[name=preset][value=english]")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    first = game_json(tab)
    assert tab.evaluate(SAME_PAGE), "dealing the game loaded a page"
    assert first["stake"] == 7 and first["rules"] == (
        sota.SotaRules.from_dict({**sota.PRESETS["english"], "seats": 3}).to_dict()
    )
    assert tab.locator("#seats .seat").count() == 3
    # While the game is replayed, the header shows the balance as the stake left it; the ledger
    # holds the balance after the game.
    assert api_sweets(tab) == 100 - 7 + first["payout"]
    assert header_sweets(tab) == 100 - 7
    tab.click("#step")
    assert tab.evaluate("window.SotaReplay.position()") == 1
    assert header_sweets(tab) == 100 - 7
    tab.click("#deal-again")
    tab.wait_for_function(
        "id => JSON.parse(document.getElementById('game-data').textContent).id !== id",
        arg=first["id"],
    )
    second = game_json(tab)
    assert tab.url.endswith(f"/sota/games/{second['id']}")
    assert second["stake"] == 7 and second["rules"] == first["rules"]
    # Each game's bet is recorded with the stake it was sent with, dealt again too.
    bets = {b["round_id"]: b for b in tab.evaluate("window.SotaRecords.exportDocument().bets")}
    assert bets[first["id"]]["stake"] == bets[second["id"]]["stake"] == 7
    assert tab.evaluate("window.SotaReplay.position()") == 0  # the new game from its start
    # The first game's result was not replayed to its end: the header holds both back.
    assert header_sweets(tab) == api_sweets(tab) - first["payout"] - second["payout"]
    # The keys play the game on screen, once: P deals a third game, End shows its result.
    tab.locator("body").press("p")
    tab.wait_for_function(
        "id => JSON.parse(document.getElementById('game-data').textContent).id !== id",
        arg=second["id"],
    )
    tab.locator("body").press("ArrowRight")
    assert tab.evaluate("window.SotaReplay.position()") == 1
    unseen = first["payout"] + second["payout"] + game_json(tab)["payout"]
    assert header_sweets(tab) == api_sweets(tab) - unseen
    tab.locator("body").press("End")
    assert tab.is_visible("#game-result")
    assert tab.evaluate(SAME_PAGE), "dealing again loaded a page"
    assert header_sweets(tab) == api_sweets(tab)
    # A named rule set on two seats is dealt again by its name.
    tab.goto("/sota")
    tab.check("input[name=preset][value=rauha]")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    assert game_json(tab)["rules"] == sota.SotaRules.from_preset("rauha").to_dict()
    body = tab.get_attribute("#deal-again-form", "data-body")
    assert body is not None and '"preset": "rauha"' in body.replace('":"', '": "')


def test_a_game_the_api_refuses_is_refused_in_the_forms_words(tab: Any) -> None:
    sign_up(tab, "refused")
    tab.goto("/sota")
    tab.select_option("#seats", "4")
    tab.click("#custom-rules summary")
    tab.check("input[name=rule_teams]")
    tab.evaluate("document.getElementById('rule_lead').min = 0")  # past the field's own check
    tab.fill("#rule_lead", "0")
    tab.expected_refusals += [422]  # the API call; the form it falls back to goes back (303)
    tab.click("#play")
    tab.wait_for_selector(".flash.error")
    message = tab.inner_text(".flash.error")
    assert message.startswith("Winning lead must be"), message
    assert tab.expected_refusals == []
    assert api_sweets(tab) == 100


#: The bets this browser recorded (docs/fairness.md, the player's records).
RECORDED_BETS = "window.SotaRecords.exportDocument().bets"


def is_game_page(url: str) -> bool:
    return re.search(r"/sota/games/\d+$", url) is not None and "/api/" not in url


def test_a_game_dealt_by_the_plain_form_the_page_fell_back_to_records_the_bet_sent(
    tab: Any,
) -> None:
    """The API could not be reached, so the page sent its plain form: the page that answers
    it is the dealt game's, and the bet is recorded with that round as a game dealt in the page
    is. A refused form, or a round's page opened by a link, records nothing."""
    sign_up(tab, "plainbet")
    tab.route("**/api/v1/sota/games", lambda route: route.abort())
    tab.expected_failures.append("/api/v1/sota/games")
    tab.goto("/sota")
    tab.fill("#stake", "4")
    tab.check("input[name=preset][value=english]")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    game = game_json(tab)
    placed = {"round_id": game["id"], "seed_pair_id": game["seed_pair_id"], "nonce": game["nonce"]}
    assert tab.evaluate(RECORDED_BETS) == [
        {**placed, "game": "sota", "stake": 4, "preset": "english"}
    ]

    tab.goto("/sota")
    tab.fill("#stake", str(api_sweets(tab) + 1))  # refused by the form's page too
    tab.evaluate("document.getElementById('stake').removeAttribute('max')")
    tab.click("#play")
    tab.wait_for_selector(".flash.error")
    # The refusal is shown as the page is parsed, before the scripts at its end run.
    tab.wait_for_function("() => window.SotaRecords !== undefined")
    kept = "bet => window.SotaRecords.keepPendingBet(bet)"
    tab.evaluate(kept, {"game": "sota", "stake": 9, "preset": "nordic"})
    tab.goto(f"/sota/games/{game['id']}")  # no answer to a post: a link
    tab.wait_for_selector("[data-dealt-round]", state="attached")
    assert len(tab.evaluate(RECORDED_BETS)) == 1


def test_a_game_dealt_is_never_dealt_again_when_its_page_cannot_be_fetched(tab: Any) -> None:
    """The deal was answered but the game's page could not be fetched in place: the browser
    goes to the game's page instead of sending the form (a second game) as a refusal would."""
    sign_up(tab, "dealtonce")
    failed: list[str] = []

    def fail_the_first_fetch(route: Any) -> None:
        if route.request.resource_type == "fetch" and not failed:
            failed.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    tab.route(is_game_page, fail_the_first_fetch)
    tab.expected_failures.append("/sota/games/")
    deal_sota(tab)
    assert failed, "the game's page was never fetched in place"
    rounds = tab.evaluate("async () => (await (await fetch('/api/v1/rounds')).json()).rounds")
    assert [r["id"] for r in rounds] == [game_json(tab)["id"]]
    assert [b["round_id"] for b in tab.evaluate(RECORDED_BETS)] == [game_json(tab)["id"]]


#: Speeds and the shortest frame each shows (a war frame lasts longer), in ms.
FRAMES = {"0.5": 1800, "1": 900, "2": 450, "4": 225, "10": 90}


def test_at_10x_every_card_of_the_replay_is_fully_shown(tab: Any) -> None:
    sign_up(tab, "tenx")
    deal_sota(tab)
    for speed, frame in FRAMES.items():
        tab.select_option("#speed", speed)
        tab.click("#step")
        # The last card's animation, its delay included, ends well within the frame.
        longest = tab.evaluate(
            "Math.max(...Array.from(document.querySelectorAll('#seats .dealt'),"
            " c => c.getAnimations()[0].effect.getComputedTiming().endTime))"
        )
        assert 0 < longest <= 0.7 * frame, (speed, longest)
    # Watched at 10×: once each step's animations have run (their length is checked above),
    # every card is fully opaque, but for a war's face-down cards, drawn at .85 on purpose.
    tab.select_option("#speed", "10")
    for _ in range(12):
        tab.click("#step")
        opacities = tab.evaluate(
            """async () => {
                const shown = '#seats .card:not(.face-down-shown)';
                const cards = Array.from(document.querySelectorAll(shown));
                await Promise.all(cards.flatMap(c => c.getAnimations().map(a => a.finished)));
                return cards.map(c => Number(getComputedStyle(c).opacity));
            }"""
        )
        assert opacities and min(opacities) == 1, opacities


def test_the_end_shows_a_summary_with_a_chart(tab: Any) -> None:
    sign_up(tab, "summary")
    deal_sota(tab, seats="3")
    game = game_json(tab)
    assert tab.is_hidden("[data-testid=summary]")
    tab.click("#to-end")
    assert tab.is_visible("[data-testid=summary]")
    tricks = len(game["tricks"])
    wars = sum(t["wars"] for t in game["tricks"])
    longest = max(t["wars"] for t in game["tricks"])
    # Counts are written as English writes them: a long game's "1,340" tricks.
    assert tab.inner_text("[data-testid=summary-tricks]") == f"{tricks:,}"
    assert tab.inner_text("[data-testid=summary-wars]") == f"{wars:,}"
    assert tab.inner_text("[data-testid=summary-longest]").startswith(
        f"{longest}\u00a0war" if longest else "no war"
    )
    assert tab.locator(".count-chart polyline").count() == 3
    box = tab.locator(".count-chart").bounding_box()
    assert box["width"] > 200 and box["height"] > 50


def test_the_replay_says_when_you_are_out_and_offers_the_result(tab: Any) -> None:
    sign_up(tab, "out")
    # The player goes out first in about a third of 3-seat games: forty tries fail once in
    # some ten million runs, where ten failed once in sixty.
    for _ in range(40):
        deal_sota(tab, seats="3", preset="english")
        counts = [t["counts"][0] for t in game_json(tab)["tricks"]]
        out = counts.index(0) if 0 in counts else -1
        if 0 <= out < len(counts) - 1:
            break
    else:
        pytest.fail("forty 3-seat games and the player never went out before the end")
    tab.evaluate(f"document.getElementById('scrub').value = {out}")
    tab.dispatch_event("#scrub", "input")
    assert tab.is_hidden("#you-out")
    # After the trick that takes the player's last card:
    tab.evaluate(f"document.getElementById('scrub').value = {out + 1}")
    tab.dispatch_event("#scrub", "input")
    tab.wait_for_selector("#you-out", state="visible")
    assert f"at trick {out + 1}" in tab.inner_text("#you-out")
    tab.click("#show-result")
    assert tab.is_visible("#game-result") and tab.is_hidden("#you-out")


def test_next_war_skips_to_the_next_war_and_icons_need_no_emoji_font(tab: Any) -> None:
    sign_up(tab, "skip")
    for _ in range(5):
        deal_sota(tab)
        if any(t["wars"] for t in game_json(tab)["tricks"]):
            break
    tab.click("#next-war")
    assert tab.locator(".war-flag").count() == 1
    assert tab.locator(".seat.in-war").count() >= 2
    tab.locator("body").press("n")  # the next one, or the end when there is no other
    assert tab.locator(".war-flag").count() == 1 or tab.is_visible("#game-result")
    tab.click("#to-start")
    tab.click("#play-pause")
    label = tab.inner_text("#play-pause")
    assert label == "Pause" and "⏸" not in label
    icon = tab.locator("#play-pause .icon.pause").bounding_box()
    assert icon["width"] >= 8 and icon["height"] >= 8
    tab.click("#play-pause")
    assert tab.inner_text("#play-pause") == "Play"


def strength(card: str, peace: bool) -> int:
    value = "23456789TJQKAX".index(card[0])
    return -value if peace else value


def test_prisoners_of_war_is_played_in_the_page_with_four_seats(tab: Any) -> None:
    sign_up(tab, "pow")
    tab.goto("/sota")
    tab.select_option("#seats", "4")  # the one seat count, for custom rules too
    tab.click("#custom-rules summary")
    tab.check("input[name=rule_prisoners_of_war]")
    tab.fill("#stake", "1")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    # A hand can be out before its pile ever runs dry: deal again until a move is asked for.
    for _ in range(10):
        if tab.locator("#move-form").count():
            break
        before = game_json(tab)["id"]
        tab.click("#deal-again")
        tab.wait_for_function(
            "id => JSON.parse(document.getElementById('game-data').textContent).id !== id",
            arg=before,
        )
    assert tab.locator(".seat").count() == 4
    tab.evaluate(MARK_PAGE)
    moves = 0
    while tab.locator("#move-form").count() and moves < 400:
        tricks = tab.inner_text("#trick-no").split(" / ")
        assert tricks[0] == tricks[1], "the replay is not where the table is"
        names = tab.locator("#on-table .seat-name").all_inner_texts()
        assert names == ["You", "Dealer", "CPU 1", "CPU 2"]
        shown = tab.locator("#up-options input").evaluate_all("inputs => inputs.map(i => i.value)")
        strengths = [strength(c, False) for c in shown]
        assert strengths == sorted(strengths, reverse=True), shown
        assert tab.locator("#up-options input:checked").get_attribute("value") == shown[0]
        lay_move(tab)
        moves += 1
    assert moves >= 1, "no move was asked for"
    assert tab.locator("#move-form").count() == 0
    tab.click("#to-end")
    assert tab.is_visible("#game-result")
    assert tab.evaluate(SAME_PAGE), "a move loaded a page"
    assert tab.locator("[data-testid=summary]").is_visible()


def test_under_rauha_the_move_form_says_it_picks_the_lowest_card_face_up(tab: Any) -> None:
    """The page picks the dealer's choice, under Rauha the lowest card face up (docs/rules.md,
    rule 5), and says so on each move it draws itself, as the server's page does."""
    sign_up(tab, "rauha")
    deal_on_prisoners_of_war(tab, "peace", stake="1")
    tab.evaluate(MARK_PAGE)
    said = []
    while tab.locator("#move-form").count() and len(said) < 6:
        shown = tab.locator("#up-options input").evaluate_all("inputs => inputs.map(i => i.value)")
        up = tab.locator("#up-options input:checked").get_attribute("value")
        assert up is not None and strength(up, True) == max(strength(c, True) for c in shown)
        words = tab.inner_text("#move-about")
        said.append(words)
        assert "the lowest face up" in words and "the highest face up" not in words, words
        lay_move(tab)
    assert len(said) >= 2, "the page drew no move of its own"
    assert tab.evaluate(SAME_PAGE), "a move loaded a page"


def test_court_cards_have_figures_and_small_cards_are_readable(tab: Any) -> None:
    sign_up(tab, "courts")
    tab.goto("/casino-war")
    sizes = tab.evaluate(
        """() => {
            const out = {};
            for (const code of ['KS', 'QH', 'JD', 'TC']) {
                const card = window.SotaCards.card(code, '');
                document.querySelector('main').append(card);
                const figure = card.querySelector('.court .figure');
                out[code] = figure ? {
                    width: figure.getBoundingClientRect().width,
                    mask: getComputedStyle(figure).maskImage
                        || getComputedStyle(figure).webkitMaskImage,
                    letter: card.querySelector('.court .letter').textContent,
                } : null;
            }
            const mini = window.SotaCards.card('8H', 'mini');
            document.querySelector('main').append(mini);
            out.mini = parseFloat(getComputedStyle(mini.querySelector('.rank')).fontSize);
            return out;
        }"""
    )
    for code in ("KS", "QH", "JD"):
        assert sizes[code]["width"] > 20 and sizes[code]["mask"].startswith("url("), code
        assert sizes[code]["letter"] == code[0]
    assert sizes["KS"]["mask"] != sizes["QH"]["mask"] != sizes["JD"]["mask"]
    assert sizes["TC"] is None  # pips stay pips
    assert sizes["mini"] >= 14


def test_a_move_laid_in_one_tab_is_refused_in_another_which_then_shows_the_table(
    tab: Any, live_server: Any
) -> None:
    """Two tabs on one choice: the second tab's move named the choice the first one answered,
    so it is refused (its cards fit the next choice too: without the number they were laid
    again), and the second tab then shows the choice the game waits for."""
    move = plant_seed_repeating_a_move(live_server.app, sign_up(tab, "tabs"))
    deal_on_prisoners_of_war(tab)
    game = game_json(tab)
    assert game["status"] == "awaiting_move" and game["pending"]["move"] == 0
    other = tab.context.new_page()
    other.goto(tab.url)
    for page in (tab, other):
        page.check(f'#up-options input[value="{move[-1]}"]')  # "8C" is no CSS name: quoted
        for box in page.locator("#down-options input").all():
            box.set_checked(box.get_attribute("value") in move[:-1])
    tab.click("#submit-move")
    tab.wait_for_function("() => document.getElementById('move-form').dataset.move === '1'")
    other.click("#submit-move")
    other.wait_for_selector("#move-error:not([hidden])")
    assert other.inner_text("#move-error") == f"Game {game['id']} waits for move 1, not move 0"
    other.wait_for_function("() => document.getElementById('move-form').dataset.move === '1'")
    assert other.evaluate("document.querySelector('#move-form [name=move]').value") == "1"
    laid = tab.evaluate(f"async () => (await fetch('/api/v1/sota/games/{game['id']}')).json()")
    assert laid["pending"]["move"] == 1
    other.close()


#: The screens a game ends on: a laptop, a phone and the smallest phone still in use.
END_SCREENS = {
    "1280x800": {"viewport": {"width": 1280, "height": 800}},
    "390x844": {"viewport": {"width": 390, "height": 844}, **NARROW},
    "320x568": {"viewport": {"width": 320, "height": 568}, **NARROW},
}

#: Each of ``selectors`` not wholly on the screen where the page stands (or not shown at all),
#: with its top and bottom.
OFF_THE_SCREEN = """selectors => selectors.flatMap(selector => {
  const found = document.querySelector(selector);
  if (!found || !found.checkVisibility()) return [[selector, "not shown"]];
  const box = found.getBoundingClientRect();
  const whole = box.top >= 0 && box.bottom <= innerHeight && box.height > 0;
  return whole ? [] : [[selector, Math.round(box.top), Math.round(box.bottom), innerHeight]];
})"""


#: Resolves once the page stands still (its scroll unchanged over two frames).
STANDING = """() => new Promise(done => {
  let last = null;
  const look = () => {
    if (scrollY === last) done(scrollY);
    else { last = scrollY; requestAnimationFrame(() => requestAnimationFrame(look)); }
  };
  requestAnimationFrame(look);
})"""


@pytest.mark.parametrize("screen", END_SCREENS)
def test_when_a_game_ends_its_result_and_deal_again_are_on_the_screen(
    chromium: Any, live_server: LiveServer, screen: str
) -> None:
    """A game's end showed the summary first, and Deal again below it: at 1280 x 800 it ended
    at 1137 px, on phones further down, and the player scrolled to play on. Where the page
    stands when the game ends in the page, its result's headline and Deal again are both on the
    screen; shown again by its address, or drawn without JavaScript, Deal again is (with no
    replay controls drawn, which do nothing without it: in Norwegian they pushed it past 800).
    Every language's new player plays in turn in one tab with JavaScript and one without. No
    link of the result is split over two lines ("other rules or stake" was, at 390 px)."""
    tabs = open_tab(chromium, live_server, **END_SCREENS[screen])
    tab = next(tabs)
    plain = open_tab(chromium, live_server, java_script_enabled=False, **END_SCREENS[screen])
    without_script = next(plain)
    wanted = ["#game-result .headline", "#deal-again"]
    # The replay is the script's: without it its controls would do nothing, and are not shown.
    replay = ["#play-pause", "#scrub", ".shortcuts", "#trick-what"]
    shown = [part for part in replay if part != ".shortcuts"]  # a phone has no keys to show
    problems: list[tuple[Any, ...]] = []
    for language in LANGUAGES:
        a_new_player(tab, "again", language)
        deal_sota(tab)
        tab.click("#to-end")  # as the player does: the page stands where its controls are
        tab.wait_for_selector("#game-result .headline")
        tab.evaluate(STANDING)  # the page may glide to the result: where it comes to stand
        found = tab.evaluate(OFF_THE_SCREEN, wanted)
        problems += [(language, "in the page", *off) for off in found]
        split = tab.eval_on_selector_all(
            "#game-result a",
            "links => links.filter(a => a.getClientRects().length > 1).map(a => a.textContent)",
        )
        problems += [(language, "split over lines", link) for link in split]
        game = tab.url
        tab.goto(game)
        found = tab.evaluate(OFF_THE_SCREEN, wanted[1:])
        problems += [(language, "its address", *off) for off in found]
        without_script.context.clear_cookies()
        without_script.context.add_cookies(tab.context.cookies())
        without_script.goto(game)
        found = without_script.evaluate(OFF_THE_SCREEN, wanted[1:])
        problems += [(language, "no script", *off) for off in found]
        problems += [
            (language, "no script, shown", part)
            for part in replay
            if without_script.is_visible(part)
        ]
        problems += [
            (language, "script, not shown", part) for part in shown if not tab.is_visible(part)
        ]
    next(plain, None)
    next(tabs, None)
    assert problems == [], problems


#: The screens a war's badge is read on: a laptop, a 375 x 667 phone and the smallest phone.
BADGE_SCREENS = {
    "1280x800": {"viewport": {"width": 1280, "height": 800}},
    "375x667": {"viewport": {"width": 375, "height": 667}, **NARROW},
    "320x568": {"viewport": {"width": 320, "height": 568}, **NARROW},
}
#: Where the trick's words show a war's badge, with its pulse held at its largest: each word of
#: the words whose box meets the badge's, and the badge's or a word's box past the screen's
#: sides. Each box is rounded to a tenth of a pixel.
BADGE_MEETS_WORDS = """() => {
  const what = document.getElementById("trick-what");
  const badge = what.querySelector(".war-flag");
  if (!badge) return null;
  for (const pulse of badge.getAnimations()) {
    pulse.pause();
    pulse.currentTime = pulse.effect.getTiming().duration;  // alternate: the largest
  }
  const edges = box =>
    [box.left, box.top, box.right, box.bottom].map(edge => Math.round(edge * 10) / 10);
  const flag = badge.getBoundingClientRect();
  const words = [];
  const texts = document.createTreeWalker(what, NodeFilter.SHOW_TEXT);
  for (let text; (text = texts.nextNode());) {
    if (badge.contains(text)) continue;
    for (const word of text.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(text, word.index);
      range.setEnd(text, word.index + word[0].length);
      words.push(...[...range.getClientRects()].map(box => [word[0], box]));
    }
  }
  const meets = (a, b) =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const outside = box => box.left < 0 || box.right > innerWidth;
  return [
    ...words.filter(([, box]) => meets(box, flag))
      .map(([word, box]) => ["meets", badge.textContent, edges(flag), word, edges(box)]),
    ...[[badge.textContent, flag], ...words].filter(([, box]) => outside(box))
      .map(([word, box]) => ["past the side", word, edges(box), innerWidth]),
  ];
}"""


@pytest.mark.parametrize("screen", BADGE_SCREENS)
def test_a_wars_badge_stands_apart_from_the_tricks_words(
    chromium: Any, live_server: LiveServer, screen: str
) -> None:
    """A war's red badge pulses, growing by 8 %, and only a space stood it apart from the
    trick's words: at its largest it covered the first word after it (in Portuguese at 320 x
    568, "GUERRA ×2" took half a pixel of "Você", and on the next line, the badge taller than
    the words' lines, the top of "depois de 2 guerras") and met the trick's number before it.
    At each frame of a double war, the badge at its largest meets none of the words, and the
    badge and the words are within the screen's width: on a laptop and on two phones, in
    English and Portuguese (the longest words)."""
    tabs = open_tab(chromium, live_server, **BADGE_SCREENS[screen])
    tab = next(tabs)
    rules = WAR_GAMES["two seats"]
    problems = []
    for language in ("en", "pt"):
        username = a_new_player(tab, "badge", language)
        trick = plant_a_double_war(live_server.app, username, rules)
        deal_a_sota_game(tab, rules)
        tab.evaluate(SCRUB_TO, trick)
        badges = 0
        for frame in range(1 + 2):  # its first cards, then each war
            tab.evaluate("document.getElementById('step').click()")
            found = tab.evaluate(BADGE_MEETS_WORDS)
            badges += found is not None
            problems += [(language, f"frame {frame}", *each) for each in found or []]
        assert badges == 2, (language, badges)  # the badge of each war was measured
    next(tabs, None)
    assert problems == [], problems


#: The screens the header's balance is read on while a game is replayed: a laptop and the
#: smallest phone still in use.
BALANCE_SCREENS = {
    "1280x800": {"viewport": {"width": 1280, "height": 800}},
    "320x568": {"viewport": {"width": 320, "height": 568}, **NARROW},
}
#: The header's balance said by a screen reader at each change: in a live region, or one itself.
HEADER_IS_LIVE = """() => Boolean(document.querySelector("[data-testid=header-balance]")
  .closest("[aria-live], [role=status], [role=alert], [role=log], [role=timer], [role=marquee]"))"""
#: The result's banner, shown, in a live region (a screen reader says it as it is shown).
RESULT_IS_SAID = """() => {
  const result = document.getElementById("game-result");
  const region = result && result.closest("[aria-live]");
  return Boolean(result && result.checkVisibility() && region
    && region.getAttribute("aria-live") !== "off");
}"""


def shown_sweets(page: Any) -> int:
    """The sweets the header shows, as written in any of the site's languages."""
    return int(re.sub(r"\D", "", page.inner_text("[data-header-sweets]")))


def deal_a_game_that_pays(page: Any, stake: int) -> tuple[dict[str, Any], int, int]:
    """Deal games of :func:`deal_sota` at ``stake`` until one pays the player something (its
    result then changes the balance), each one checked at its replay's start: the header shows
    the balance less the stake, and no result. That game, the balance before it and after."""
    for _ in range(20):
        before = api_sweets(page)
        page.goto("/sota")
        page.fill("#stake", str(stake))
        page.click("#play")
        page.wait_for_url(re.compile(r".*/sota/games/\d+$"))
        game = game_json(page)
        after = api_sweets(page)
        assert after == before - stake + game["payout"]
        assert page.evaluate("window.SotaReplay.position()") == 0
        assert shown_sweets(page) == before - stake, (game["id"], before, after)
        assert page.is_hidden("#game-result")
        if game["payout"]:
            return game, before, after
    raise AssertionError("twenty games and none paid the player")


def plant_paying_games(app: Any, username: str, games: int, stake: int) -> None:
    """Plant a server seed whose first ``games`` games of the table's first rule set (the
    Nordic one, on two seats) each pay the player something at ``stake``: dealt at random, one
    game in two paid nothing, and :func:`deal_a_game_that_pays` dealt it for nothing."""
    rules = sota.SotaRules.from_dict({})

    def pays(seed: bytes, client_seed: str, nonce: int) -> bool:
        stream = fairness.Stream(fairness.Seeds(seed, client_seed, nonce))
        game = sota.play_game(rules, stream=stream)
        return game.status == "settled" and sota.payout(rules, game.winner, stake) > 0

    def choose(client_seed: str) -> bytes:
        for seed in candidate_seeds(f"paying sota games {client_seed}"):
            if all(pays(seed, client_seed, nonce) for nonce in range(games)):
                return seed
        raise AssertionError("unreachable")

    plant_chosen_seed(app, username, choose)


@pytest.mark.parametrize("screen", BALANCE_SCREENS)
def test_while_a_game_dealt_in_the_page_is_replayed_the_header_holds_its_result_back(
    chromium: Any, live_server: LiveServer, screen: str
) -> None:
    """A game is settled as it is dealt, and the page replays it trick by trick: the header
    showed the balance after it (105 sweets to 110, or to 100) while the replay stood at trick 0
    of 69, which gave away the result the replay hides. While a game dealt in the page is
    replayed, the header shows the balance as the stake left it; the balance after the game
    shows as the replay reaches its end, played, stepped or jumped to, and at once on the game's
    page reloaded or opened from the history. The header is no live region: the result's banner
    says the new balance, once. In English and Finnish, on a laptop and a 320 px phone."""
    tabs = open_tab(chromium, live_server, **BALANCE_SCREENS[screen])
    tab = next(tabs)
    for language in ("en", "fi"):
        username = a_new_player(tab, "held", language)
        plant_paying_games(live_server.app, username, 3, 5)
        for ending in ("played", "stepped", "jumped"):
            game, before, after = deal_a_game_that_pays(tab, 5)
            assert not tab.evaluate(HEADER_IS_LIVE)
            last = len(game["tricks"]) - 1
            tab.evaluate(SCRUB_TO, last)  # the last trick is next
            frames = tab.evaluate("window.SotaReplay.frames()")
            assert tab.evaluate("window.SotaReplay.position()") < frames - 1
            assert shown_sweets(tab) == before - 5, (language, ending)
            if ending == "played":
                tab.select_option("#speed", "10")
                tab.click("#play-pause")
                tab.wait_for_function(f"() => window.SotaReplay.position() === {frames - 1}")
            elif ending == "stepped":
                while tab.evaluate("window.SotaReplay.position()") < frames - 1:
                    assert shown_sweets(tab) == before - 5, (language, ending)
                    tab.click("#step")
            else:
                tab.click("#to-end")
            assert shown_sweets(tab) == after, (language, ending, before, after)
            assert tab.evaluate(RESULT_IS_SAID), (language, ending)
            banner = tab.inner_text("#game-result p:not(.net) strong")
            assert int(re.sub(r"\D", "", banner)) == after
            # Shown again once its result is known, the start keeps the balance after it.
            tab.click("#to-start")
            assert shown_sweets(tab) == after, (language, ending)
        # Reloaded, or opened from the history, the game's result is known: the header shows
        # the balance after it from the start of its replay.
        tab.reload()
        assert tab.evaluate("window.SotaReplay.position()") == 0
        assert shown_sweets(tab) == after
        tab.goto(f"/history/{game['id']}")
        tab.click(f"a[href='/sota/games/{game['id']}']")
        tab.wait_for_url(re.compile(rf".*/sota/games/{game['id']}$"))
        assert tab.evaluate("window.SotaReplay.position()") == 0
        assert shown_sweets(tab) == after
        assert not tab.evaluate(HEADER_IS_LIVE)
    next(tabs, None)


def test_a_result_not_yet_replayed_stays_held_back_over_a_reload_and_a_deal_again(
    tab: Any,
) -> None:
    """The header held a game's payout back only while the game dealt in the page was on
    screen: reloaded (or opened again from the history) before its replay reached the end, the
    game's page showed the balance after it at trick 0; and "Deal again" pressed mid-replay
    showed the balance after the first game, whose result the player had not seen. A result
    not yet replayed is now held back until a replay reaches its end (the player may jump
    there); once shown, the game's page shows the balance after it from the start."""
    sign_up(tab, "unseen")
    game, before, after = deal_a_game_that_pays(tab, 5)
    held = before - 5
    tab.reload()
    assert tab.evaluate("window.SotaReplay.position()") == 0
    assert shown_sweets(tab) == held and tab.is_hidden("#game-result")
    tab.goto(f"/history/{game['id']}")
    tab.click(f"a[href='/sota/games/{game['id']}']")
    tab.wait_for_url(re.compile(rf".*/sota/games/{game['id']}$"))
    assert tab.evaluate("window.SotaReplay.position()") == 0
    assert shown_sweets(tab) == held and tab.is_hidden("#game-result")
    # Dealt again before the first game's replay ends: neither result shows until the second
    # game's replay reaches its end, which shows the ledger's balance.
    tab.click("#step")
    tab.click("#deal-again")
    tab.wait_for_function(
        "id => JSON.parse(document.getElementById('game-data').textContent).id !== id",
        arg=game["id"],
    )
    second = game_json(tab)
    assert api_sweets(tab) == after - 5 + second["payout"]
    assert shown_sweets(tab) == held - 5 and tab.is_hidden("#game-result")
    tab.reload()
    assert shown_sweets(tab) == held - 5
    tab.click("#to-end")
    assert shown_sweets(tab) == api_sweets(tab) and tab.is_visible("#game-result")
    tab.reload()  # its result shown, the game's page shows the balance after it
    assert tab.evaluate("window.SotaReplay.position()") == 0
    assert shown_sweets(tab) == api_sweets(tab)


#: How each language says a card lies face down (its catalogue's "card face down").
FACE_DOWN_WORDS = {
    "en": "face down",
    "fi": "kuvapuoli alaspäin",
    "nb": "med baksiden opp",
    "pt": "virada para baixo",
}
#: Each card of each seat's newest step, as a screen reader meets it: its seat's name, its own
#: name (what it shows), the name it is read by, whether it is drawn as laid face down, its
#: words on hover.
WAR_STEP_CARDS = """() => [...document.querySelectorAll("#seats .seat")].flatMap(seat => {
  const steps = seat.querySelectorAll(".step");
  return steps.length ? [...steps[steps.length - 1].querySelectorAll(".card")].map(card => ({
    seat: seat.querySelector("[data-seat-name]").textContent,
    own: window.SotaCards.name(card.dataset.card),
    said: card.getAttribute("aria-label"),
    down: card.classList.contains("face-down-shown"),
    hover: card.title,
  })) : [];
})"""


def test_a_wars_face_down_cards_are_named_face_down(tab: Any, live_server: LiveServer) -> None:
    """A war's face-down cards are shown face up (the replay and the rules' example let the
    player follow what they were) with a dashed edge, and were named as any card: a screen
    reader said "nine of spades" for a card laid face down and one laid face up alike. Each
    one's name says it was laid face down, in the page's language, and so do its words on
    hover (the dashed edge is explained only by the legend). The step's words, which named
    the face-up cards alone, say how many each seat laid face down before its face-up card."""
    rules = WAR_GAMES["two seats"]
    for language in ("en", "pt"):
        words = FACE_DOWN_WORDS[language]
        username = a_new_player(tab, "facedown", language)
        trick = plant_a_double_war(live_server.app, username, rules)
        deal_a_sota_game(tab, rules)
        tab.evaluate(SCRUB_TO, trick)
        tab.click("#step")  # the tied cards
        tab.click("#step")  # the war: each seat lays cards face down, then one face up
        cards = tab.evaluate(WAR_STEP_CARDS)
        down = [card for card in cards if card["down"]]
        assert down and len(down) < len(cards), (language, cards)
        for card in cards:
            assert card["own"] in card["said"], (language, card)
            assert (words in card["said"]) == card["down"], (language, card)
            assert card["hover"] == (card["said"] if card["down"] else ""), (language, card)
        if language == "en":
            said = (tab.text_content("#trick-said") or "").replace("\u00a0", " ")
            for seat in {card["seat"] for card in cards}:
                laid = [card for card in cards if card["seat"] == seat]
                up, under = laid[-1]["own"], len(laid) - 1
                assert f"{seat}: {up}, after {under} cards face down" in said, said
        tab.goto("/rules/sota")
        example = tab.evaluate(
            """() => [...document.querySelectorAll("[data-testid=war-example] .card")].map(
                card => ({said: card.getAttribute("aria-label"),
                          down: card.classList.contains("face-down-shown")}))"""
        )
        assert any(card["down"] for card in example), (language, example)
        assert all((words in card["said"]) == card["down"] for card in example), (
            language,
            example,
        )


#: The header's sweets at one and at eleven, as each language writes them.
ONE_AND_ELEVEN_SWEETS = {
    "en": (["1", "sweet"], ["11", "sweets"]),
    "fi": (["1", "karkki"], ["11", "karkkia"]),
    "nb": (["1", "godteri"], ["11", "godterier"]),
    "pt": (["1", "bala"], ["11", "balas"]),
}


def header_sweets_words(page: Any) -> list[str]:
    """The header's sweets and their unit, as shown (its last two words)."""
    return list(page.inner_text("[data-testid=header-balance]").split()[-2:])


def test_the_headers_sweets_take_the_plural_form_of_each_amount_shown(
    tab: Any, live_server: LiveServer
) -> None:
    """The page rewrote the header's number only, its unit left in the form of the balance the
    header was drawn with: while a game dealt in the page held its payout back, 6 sweets less
    a stake of 5 read "1 sweets" ("1 karkkia"), the form of the 11 after the game. Each amount
    shown takes its own form, in each language."""
    rules = sota.SotaRules.from_dict({})  # the Nordic rule set's, on two seats
    for language, (one, eleven) in ONE_AND_ELEVEN_SWEETS.items():
        username = a_new_player(tab, "units", language)
        leave_balance(live_server.app, username, "sweets", 6)
        plant_sota_winner(live_server.app, username, rules, 0)
        tab.goto("/sota")
        tab.check("input[name=preset][value=nordic]")
        tab.fill("#stake", "5")
        tab.click("#play")
        tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
        assert game_json(tab)["payout"] == 10
        assert header_sweets_words(tab) == one, language  # the payout held back
        tab.click("#to-end")
        assert header_sweets_words(tab) == eleven, language


def plant_a_won_prisoners_game(app: Flask, username: str) -> None:
    """Give ``username``'s seed pair a server seed whose first Prisoners of War game waits for
    the player's moves and, played with the dealer's choices the page picks, the player wins."""
    rules = sota.SotaRules.from_dict(PRISONERS)

    def choose(client_seed: str) -> bytes:
        for seed in candidate_seeds(f"won prisoners {client_seed}"):
            dealt = fairness.Stream(fairness.Seeds(seed, client_seed, 0))
            if sota.play_game(rules, stream=dealt).pending is None:
                continue
            played = fairness.Stream(fairness.Seeds(seed, client_seed, 0))
            if sota.play_game(rules, stream=played, autoplay=True).winner == 0:
                return seed
        raise AssertionError("unreachable")

    plant_chosen_seed(app, username, choose)


@pytest.mark.parametrize("language", ("en", "fi"))
def test_the_headers_sweets_after_a_prisoners_game_settled_by_a_move_are_the_new_balances(
    tab: Any, live_server: LiveServer, language: str
) -> None:
    """A game of Prisoners of War is settled by the player's last move, not as it is dealt: the
    page then shows the result and the header the balance after it, its unit in the form of
    that amount (6 sweets less a stake of 5 is "1 sweet" while the moves are laid, 11 "sweets"
    once the game is won)."""
    one, eleven = ONE_AND_ELEVEN_SWEETS[language]
    username = a_new_player(tab, "prisoner", language)
    leave_balance(live_server.app, username, "sweets", 6)
    plant_a_won_prisoners_game(live_server.app, username)
    deal_on_prisoners_of_war(tab, stake="5")
    tab.evaluate(MARK_PAGE)
    moves = 0
    while tab.locator("#move-form").count():
        assert header_sweets_words(tab) == one, (language, moves)
        lay_move(tab)
        moves += 1
    assert moves >= 1 and tab.evaluate(SAME_PAGE), "no move was laid in the page"
    assert tab.is_visible("#game-result")
    assert api_sweets(tab) == 11
    assert header_sweets_words(tab) == eleven, language
