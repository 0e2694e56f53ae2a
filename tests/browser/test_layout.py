"""Layout on a small phone (375 x 740, touch) and a laptop (1280 x 800), in every language: no
page is wider than the screen, nothing spills out of its panel, touch targets are big enough,
and a round's next actions stay on the screen."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlencode

import pytest
from browser_support import FORGET_WITNESS
from browser_support import LiveServer
from browser_support import fresh_name
from browser_support import open_tab
from browser_support import sign_up
from browser_support import wait_for_round
from sqlalchemy import select
from test_accessibility import CONTRAST
from test_languages_in_the_browser import choose_language
from test_languages_in_the_browser import open_the_menu
from test_languages_in_the_browser import words
from test_operator_console import PASSWORD
from test_operator_console import seed_a_player
from web_support import plant_server_seed

from sota_casino.models import User
from sota_casino.services import accounts
from sota_casino.services import alerts
from sota_casino.services import approvals
from sota_casino.services import fairness
from sota_casino.services import money
from sota_casino.services import rounds
from sota_casino.services import settings

pytestmark = pytest.mark.browser

SIZES = {
    "phone": {
        "viewport": {"width": 375, "height": 740},
        "is_mobile": True,
        "has_touch": True,
        "device_scale_factor": 2,
    },
    "desktop": {"viewport": {"width": 1280, "height": 800}},
}
LANGUAGES = ("en", "fi", "nb", "pt")
PHONE_360 = {"width": 360, "height": 740}


def a_360_px_phone(chromium: Any, live_server: LiveServer, **options: Any) -> Iterator[Any]:
    """A tab the size of a 360 x 740 phone (as :func:`open_tab`: ``next`` once more closes it
    and fails the test on its problems), with the browser context's ``options``."""
    return open_tab(chromium, live_server, **{**SIZES["phone"], "viewport": PHONE_360}, **options)


def sign_up_in(page: Any, prefix: str, language: str) -> str:
    """Sign a new player up in ``page`` and pick ``language`` in the header; the username."""
    username = sign_up(page, prefix)
    if language != "en":
        choose_language(page, language)
    return username


#: Forget what the site keeps in this browser (its records, a pending play, the log witness's
#: checkpoint), as a browser the site never saw has nothing.
FORGET_THE_SITE = f"""async () => {{
  localStorage.clear();
  sessionStorage.clear();
  await ({FORGET_WITNESS})();
}}"""


def a_new_player(page: Any, prefix: str, language: str) -> str:
    """Sign a new player up in ``page`` as in a browser the site never saw: no cookie (no
    log-in, no language chosen) and nothing kept; then pick ``language``. Cheaper than a new tab
    for each player; the player's pages draw nothing of the last one's (its last round, its
    last game's seats)."""
    # The last player's page stops first: a request its scripts still had to send (the keys it
    # lists on load) would go without the cookie cleared, a 401 the test did not make.
    page.goto("about:blank")
    page.context.clear_cookies()
    page.goto("/auth/register")
    page.evaluate(FORGET_THE_SITE)
    username = sign_up(page, prefix)
    if language != "en":
        choose_language(page, language)
    return username


def a_new_players_sota_game(page: Any, prefix: str, language: str) -> str:
    """Deal a Sota game under the table's first preset to :func:`a_new_player`; its URL."""
    a_new_player(page, prefix, language)
    page.goto("/sota")
    page.click("#play")
    page.wait_for_url("**/sota/games/*")
    return str(page.url)


def sign_up_without_javascript_in(page: Any, prefix: str, language: str) -> str:
    """:func:`sign_up_in` for a page without JavaScript: the picker's own button sends the
    choice."""
    username = sign_up(page, prefix)
    if language != "en":
        choose_language_without_javascript(page, language)
    return username


def choose_language_without_javascript(page: Any, language: str) -> None:
    """:func:`choose_language` for a page without JavaScript: the picker's own button sends the
    choice."""
    open_the_menu(page)
    page.select_option("#language-choice", language)
    with page.expect_navigation():
        page.click(".language-picker button[type=submit]")


#: What sticks out: the page's sideways scroll, and every panel, list or form wider than its box.
OVERFLOW = """() => {
  const problems = [];
  const page = document.scrollingElement;
  if (page.scrollWidth > innerWidth) problems.push(`page ${page.scrollWidth} > ${innerWidth}`);
  for (const box of document.querySelectorAll("main .panel, main .tile, main .felt, main form")) {
    const scrolls = ["auto", "scroll"].includes(getComputedStyle(box).overflowX);
    if (box.checkVisibility() && !scrolls && box.scrollWidth > box.clientWidth + 1) {
      const name = box.id || box.getAttribute("aria-labelledby") || box.className;
      const edge = box.getBoundingClientRect().right;
      // A bar fixed to the screen's foot spans the screen: it does not widen its form.
      const all = [...box.querySelectorAll("*")];
      const out = all.filter(e => e.getBoundingClientRect().right > edge + 1);
      if (out.length && out.every(e => getComputedStyle(e).position === "fixed"
          || e.parentElement.closest("[class]") && getComputedStyle(e).position !== "fixed"
          && all.some(f => getComputedStyle(f).position === "fixed" && f.contains(e)))) continue;
      const last = out.length ? out[out.length - 1] : box;
      const what = `${last.tagName}#${last.id}.${last.className}`;
      problems.push(`${box.tagName} ${name}: ${box.scrollWidth} > ${box.clientWidth} (${what})`);
    }
  }
  return problems;
}"""


@pytest.fixture(params=sorted(SIZES))
def screen(request: Any, chromium: Any, live_server: LiveServer) -> Iterator[Any]:
    """A fresh tab at the phone's or the laptop's size."""
    page_iter = open_tab(chromium, live_server, **SIZES[request.param])
    page = next(page_iter)
    page.size = request.param
    yield page
    next(page_iter, None)


@pytest.fixture
def small_phone(chromium: Any, live_server: LiveServer) -> Iterator[Any]:
    yield from open_tab(chromium, live_server, **SIZES["phone"])


@pytest.fixture
def laptop(chromium: Any, live_server: LiveServer) -> Iterator[Any]:
    yield from open_tab(chromium, live_server, **SIZES["desktop"])


def overflow(page: Any, path: str) -> list[str]:
    page.goto(path)
    return [f"{path}: {problem}" for problem in page.evaluate(OVERFLOW)]


def play_a_round(page: Any, nonce: int = 0, ante: str = "5", tie_bet: str | None = None) -> None:
    """Play the round of ``nonce`` at the table, going to war on a tie."""
    page.goto("/casino-war")
    page.fill("#bet", ante)
    if tie_bet is not None:
        page.fill("#tie_bet", tie_bet)
    page.click("#deal")
    wait_for_round(page, nonce)
    if page.locator("#go-to-war").is_visible():
        page.click("#go-to-war")
    page.wait_for_selector("[data-testid=result]")


def box(page: Any, selector: str) -> dict[str, float]:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not shown"
    return dict(found)


def test_no_player_page_is_wider_than_the_screen(screen: Any) -> None:
    """No page of a player who has played a round runs past the screen, nor anything in it
    past its panel: in every language, each picked in turn in the one tab."""
    sign_up(screen, "layout")
    play_a_round(screen)
    problems: list[str] = []
    for language in LANGUAGES:
        choose_language(screen, language)
        for path in (
            "/lobby",
            "/casino-war",
            "/casino-war/odds",
            "/rules/casino-war",
            "/rules/sota",
            "/sota",
            "/stats",
            "/history",
            "/fairness",
        ):
            problems += [f"{language} {problem}" for problem in overflow(screen, path)]
    assert problems == [], problems


def test_a_revealed_seed_breaks_in_the_flash_and_the_verification_fits_its_panel(
    small_phone: Any, laptop: Any, live_server: LiveServer
) -> None:
    sign_up(small_phone, "reveal")
    play_a_round(small_phone)
    small_phone.goto("/fairness")
    small_phone.click("#rotate")
    small_phone.wait_for_selector("[data-verify]")
    assert small_phone.evaluate(OVERFLOW) == []
    verify = box(small_phone, "[data-verify]")
    small_phone.locator("[data-verify]").first.scroll_into_view_if_needed()
    on_top = small_phone.evaluate(
        "() => { const b = document.querySelector('[data-verify]').getBoundingClientRect();"
        " return document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2)"
        "?.closest('[data-verify]') !== null; }"
    )
    assert on_top and verify["x"] + verify["width"] <= 375

    sign_up(laptop, "verified")
    for nonce in range(3):
        play_a_round(laptop, nonce)
    laptop.goto("/fairness")
    laptop.click("#rotate")
    laptop.locator("[data-verify]").first.click()
    laptop.wait_for_selector(".revealed-pair table.data")
    assert laptop.evaluate(OVERFLOW) == []
    results, panel = box(laptop, ".verify-results"), box(laptop, "#revealed")
    assert results["x"] + results["width"] <= panel["x"] + panel["width"]


def a_verified_pair(page: Any, live_server: LiveServer, prefix: str, language: str) -> None:
    """Sign a player up in ``language``, play a war (a decision) and a round with none, reveal
    the pair and verify it in the page."""
    username = sign_up_in(page, prefix, language)
    plant_server_seed(live_server.app, username, {0: True, 1: False})
    play_a_round(page, 0)
    play_a_round(page, 1)
    page.goto("/fairness")
    page.click("#rotate")
    page.locator("[data-verify]").first.click()
    page.wait_for_selector(".verify-results tr[data-round]")


#: Each verified round's verdict (the cell under the column ``heading``) and its cells, where
#: they are on the screen.
VERDICTS = """heading => {
  const results = document.querySelector(".verify-results").getBoundingClientRect();
  const edge = Math.min(innerWidth, results.right);
  const onScreen = cell => cell.getBoundingClientRect().right <= edge;
  const headings = [...document.querySelectorAll(".verify-results thead th")];
  const column = headings.findIndex(th => th.textContent === heading);
  return [...document.querySelectorAll(".verify-results tr[data-round]")].map(row => ({
    verdict: row.cells[column].innerText.trim(),
    verdictOnScreen: onScreen(row.cells[column]),
    labels: [...row.cells].map(cell => cell.dataset.label),
    cellsOnScreen: [...row.cells].every(onScreen),
  }));
}"""


def verified_in(
    page: Any, live_server: LiveServer, prefix: str, languages: tuple[str, ...]
) -> Iterator[tuple[str, Callable[[str], str]]]:
    """Verify a pair (:func:`a_verified_pair`) in the first of ``languages``, then again in each
    other, picked in the same tab; yield each language and its words, once the verdict is
    shown in it."""
    a_verified_pair(page, live_server, prefix, languages[0])
    for language in languages:
        if language != languages[0]:
            choose_language(page, language)  # the fairness page comes back in it
            page.locator("[data-verify]").first.click()
            page.wait_for_selector(".verify-results tr[data-round]")
        yield language, words(language).gettext


def test_the_verifications_verdict_of_each_round_reads_without_scrolling_sideways(
    screen: Any, live_server: LiveServer
) -> None:
    """Its fourteen columns were 1,221 px wide in English and 1,493 in Portuguese, the verdict
    last: past a laptop's panel, and a phone saw four of them. The verdict follows the round,
    and on a phone each round is a card of every column, named. The pair is verified in
    English, then again in Portuguese picked in the same tab."""
    problems = []
    for language, said in verified_in(screen, live_server, "verdict", ("en", "pt")):
        rows = screen.evaluate(VERDICTS, said("Verdict"))
        verified = said("verified")
        verdicts = [(row["verdict"], row["verdictOnScreen"]) for row in rows]
        if verdicts != [(verified, True)] * 2:
            problems.append((language, "verdicts", verdicts))
        if not all(len(row["labels"]) == 14 and all(row["labels"]) for row in rows):
            problems.append((language, "labels", rows))
        if screen.size == "phone" and not all(row["cellsOnScreen"] for row in rows):
            problems.append((language, "cells off the screen", rows))
        problems += [(language, found) for found in screen.evaluate(OVERFLOW)]
    assert problems == [], problems


def test_the_verification_calls_a_round_unsigned_only_if_it_had_a_choice_to_sign(
    laptop: Any, live_server: LiveServer
) -> None:
    """A round with no decision or move was called "unsigned" under "Your signature", as if
    the player had failed to sign something. Verified in English, then again in Finnish picked
    in the same tab."""
    problems = []
    for language, said in verified_in(laptop, live_server, "nothingtosign", ("en", "fi")):
        war = laptop.locator(".verify-results tr[data-nonce='0'] [data-testid=player-signed]")
        plain = laptop.locator(".verify-results tr[data-nonce='1'] [data-testid=player-signed]")
        dash = plain.locator("[role=img]")
        shown = (
            war.inner_text().strip(),
            plain.inner_text().strip(),
            dash.get_attribute("title"),
            dash.get_attribute("aria-label"),
        )
        nothing = said("nothing to sign")
        if shown != (said("unsigned"), "—", nothing, nothing):
            problems.append((language, shown))
    assert problems == [], problems


def test_a_labels_value_list_fits_a_phone(small_phone: Any) -> None:
    sign_up(small_phone, "facts")
    play_a_round(small_phone)
    for path in ("/stats", "/casino-war/odds", "/rules/casino-war"):
        small_phone.goto(path)
        rights = small_phone.locator("dl.facts dd").evaluate_all(
            "dds => dds.map(dd => dd.getBoundingClientRect().right)"
        )
        assert rights and max(rights) <= 375, path


#: The buttons ``ids`` name whose words run past their box: the box's width and the words'.
WORDS_CUT = """ids => ids.map(id => document.getElementById(id))
  .filter(button => button.scrollWidth > button.clientWidth)
  .map(button => [button.id, button.clientWidth, button.scrollWidth])"""


def test_the_rebet_button_of_a_tie_bet_stays_on_a_phone_in_portuguese(small_phone: Any) -> None:
    """Rebet's words for a tie bet too ("Repetir aposta 5 + empate 5") took Deal's room:
    "Distribuir" ran 10 px past its button, its last letters cut off."""
    sign_up(small_phone, "rebet")
    choose_language(small_phone, "pt")
    play_a_round(small_phone, tie_bet="5")
    rebet = box(small_phone, "#rebet")
    assert rebet["x"] + rebet["width"] <= 375
    assert small_phone.evaluate(OVERFLOW) == []
    assert small_phone.evaluate(WORDS_CUT, ["deal", "rebet"]) == []


def test_after_a_war_in_finnish_deal_and_rebet_are_on_the_phone_screen(
    small_phone: Any, live_server: LiveServer
) -> None:
    username = sign_up(small_phone, "warfi")
    plant_server_seed(live_server.app, username, {0: True})
    choose_language(small_phone, "fi")
    play_a_round(small_phone)
    small_phone.evaluate("scrollTo(0, 0)")
    for button in ("#deal", "#rebet"):
        found = box(small_phone, button)
        assert found["y"] + found["height"] <= 740, button


#: The bottom of the round's result (its last line: the balance and the receipt) and of Deal.
RESULT_AND_DEAL = """() => [document.querySelector("[data-testid=result]"),
  document.getElementById("deal")].map(e => Math.round(e.getBoundingClientRect().bottom))"""


def test_after_a_war_its_whole_result_is_on_a_laptops_screen(
    laptop: Any, live_server: LiveServer
) -> None:
    """After a war on a 1280 x 800 laptop the result ran past the foot of the screen: in
    English its last line (the balance and the receipt) was cut in half, in Finnish and
    Portuguese, where the war's titles take two and three lines, the net as well. The war's
    cards and titles on a laptop are as compact as the result needs: the whole result shows,
    the page where it stands. Checked in English, Finnish and Portuguese, after a war won or
    lost and after one with a tie bet's line."""
    problems = []
    for language in ("en", "fi", "pt"):
        username = a_new_player(laptop, "warlaptop", language)
        plant_server_seed(live_server.app, username, {0: True, 1: True})
        for nonce, tie_bet in ((0, None), (1, "5")):
            play_a_round(laptop, nonce, tie_bet=tie_bet)
            laptop.evaluate("scrollTo(0, 0)")
            result, deal = laptop.evaluate(RESULT_AND_DEAL)
            if max(result, deal) > 800:
                problems.append((language, nonce, result, deal))
    assert problems == [], problems


#: The room between the bet panel's balances and what shows under them, in px.
ROOM_UNDER_THE_BALANCES = """() => {
  const balances = document.querySelector(".bet-panel .balances");
  let next = balances.nextElementSibling;
  while (!next.checkVisibility()) next = next.nextElementSibling;
  return next.getBoundingClientRect().top - balances.getBoundingClientRect().bottom;
}"""


def test_a_ties_notice_stands_apart_from_the_balances_on_a_laptop(
    laptop: Any, live_server: LiveServer
) -> None:
    """At a tie the notice "Decide the tie first" touched the balances above it (0 px), as the
    tie came and on the table drawn again; the bet form under them had room."""
    username = sign_up(laptop, "tienotice")
    plant_server_seed(live_server.app, username, {0: True})
    laptop.goto("/casino-war")
    room = [laptop.evaluate(ROOM_UNDER_THE_BALANCES)]
    laptop.click("#deal")
    laptop.wait_for_selector("#go-to-war")
    room.append(laptop.evaluate(ROOM_UNDER_THE_BALANCES))
    laptop.reload()
    room.append(laptop.evaluate(ROOM_UNDER_THE_BALANCES))
    assert laptop.locator("#decide-first").is_visible()
    assert min(room) >= 6, room


#: Where the replay's speed field stands from its label: the label's middle against the field's
#: top and bottom, and the gap from the label's right to the field's left.
SPEED_AND_LABEL = """() => {
  const label = document.querySelector("label[for=speed]").getBoundingClientRect();
  const field = document.getElementById("speed").getBoundingClientRect();
  const middle = (label.top + label.bottom) / 2;
  return {beside: middle > field.top && middle < field.bottom, gap: field.left - label.right};
}"""


def test_a_replays_speed_stands_beside_its_label(screen: Any) -> None:
    """The replay's "Speed" ended one row of its controls and its field began the next: in
    Finnish on a laptop ("Nopeus" after "Seuraavaan sotaan »") and in Portuguese on a phone
    ("Velocidade" beside "Guerra »"), the word read as a button's and the field had no name
    beside it. The two wrap together. Checked in every language."""
    sign_up(screen, "speed")
    screen.goto("/sota")
    screen.click("#play")
    screen.wait_for_url("**/sota/games/*")
    game = screen.url
    problems = []
    for language in LANGUAGES:
        choose_language(screen, language)
        screen.goto(game)
        found = screen.evaluate(SPEED_AND_LABEL)
        if not (found["beside"] and 0 <= found["gap"] <= 16):
            problems.append((language, found))
    assert problems == [], problems


#: The ante's and the tie bet's fields, and the top of the Deal row, as the page first shows.
BET_FIELDS = """() => {
  const box = selector => document.querySelector(selector).getBoundingClientRect();
  return {ante: [box("#bet").top, box("#bet").bottom], tie: [box("#tie_bet").top,
    box("#tie_bet").bottom], deal: box("#bet-form .deal-row").top};
}"""


def test_the_sota_tables_stake_and_seats_stand_level_on_a_laptop(laptop: Any) -> None:
    """Side by side on a laptop, the stake field and the seats list stood 18 px apart in
    height, each label with them: the row lined its fields up by their bottoms, and the seats'
    help runs a line longer than the stake's. Fields of one row start level."""
    sign_up(laptop, "level")
    uneven = []
    for language in LANGUAGES:
        if language != "en":
            choose_language(laptop, language)
        laptop.goto("/sota")
        tops = {
            selector: round(box(laptop, selector)["y"])
            for selector in ("label[for=stake]", "label[for=seats]", "#stake", "#seats")
        }
        if tops["label[for=stake]"] != tops["label[for=seats]"] or tops["#stake"] != tops["#seats"]:
            uneven.append(f"{language}: {tops}")
    assert uneven == []


def test_a_new_table_shows_both_bet_fields_above_deal_on_a_360_px_phone(
    chromium: Any, live_server: LiveServer, laptop: Any
) -> None:
    """On a 360 x 740 phone the Deal row, kept at the foot of the screen, covered the ante and
    tie bet fields in Finnish and Portuguese before the first round (only their top edges
    showed), and in Norwegian the tie bet's two-line label set its field lower than the ante's,
    on a laptop too. The fields stand level, whole, above Deal: every language is picked in
    turn in one phone's tab and one laptop's."""
    tabs = a_360_px_phone(chromium, live_server)
    phone = next(tabs)
    problems = []
    for name, page in (("phone", phone), ("laptop", laptop)):
        sign_up(page, "fields")
        for language in LANGUAGES:
            if language != "en":
                choose_language(page, language)
            page.goto("/casino-war")
            shown = page.evaluate(BET_FIELDS)
            if shown["ante"] != shown["tie"]:
                problems.append((name, language, "not level", shown))
            if name == "phone" and shown["ante"][1] > shown["deal"]:
                problems.append((name, language, "under Deal", shown))
    next(tabs, None)
    assert problems == [], problems


#: The space above each part of the Casino War felt's head that starts below all before it.
HEAD_GAPS = """() => [...document.querySelectorAll(".table-felt .table-head > *")]
  .map(part => part.getBoundingClientRect())
  .flatMap((part, i, parts) => {
    const above = Math.max(...parts.slice(0, i).map(before => before.bottom));
    return i && part.top >= above ? [Math.round(part.top - above)] : [];
  })"""


def test_the_casino_war_felt_s_head_reads_as_one_block_on_a_laptop(laptop: Any) -> None:
    """On a 1280 px screen the table's title, its limits and its rules link stood 44 to 52 px
    apart (in Portuguese each on a line of its own), the margins of each adding up in the
    wrapping row: three loose lines, the link nearer the cards than the title it belongs to.
    Every language is picked in turn in the one tab."""
    sign_up(laptop, "head")
    loose = []
    for language in LANGUAGES:
        if language != "en":
            choose_language(laptop, language)
        laptop.goto("/casino-war")
        gaps = laptop.evaluate(HEAD_GAPS)
        if not gaps or max(gaps) > 8:
            loose.append((language, gaps))
    assert loose == [], loose


#: The top of each full-size card a round's page shows.
CARD_TOPS = """() => [...document.querySelectorAll(".panel .card-row > div > .card")]
  .map(card => Math.round(card.getBoundingClientRect().top))"""


def test_a_rounds_two_war_cards_stand_side_by_side_on_a_360_px_phone(
    chromium: Any, live_server: LiveServer
) -> None:
    """In Portuguese the dealer's war card took a line of its own, under the player's, its
    caption ("Carta de guerra do crupiê") as wide as the screen left; a caption now wraps to
    its card's width. Every language's new player goes to war in turn in the one tab."""
    tabs = a_360_px_phone(chromium, live_server)
    phone = next(tabs)
    problems = []
    for language in LANGUAGES:
        username = a_new_player(phone, "warcards", language)
        plant_server_seed(live_server.app, username, {0: True})
        play_a_round(phone)
        phone.goto("/history")
        phone.goto(f"/history/{phone.get_attribute('[data-round]', 'data-round')}")
        tops = phone.evaluate(CARD_TOPS)
        # The first cards, then the war's: the war's two level.
        if len(tops) != 4 or tops[2] != tops[3]:
            problems.append((language, tops))
    next(tabs, None)
    assert problems == [], problems


def test_the_clear_chip_holds_its_word(small_phone: Any) -> None:
    """In Finnish and Portuguese, picked in turn in the one tab."""
    sign_up(small_phone, "clear")
    spilled = []
    for language in ("fi", "pt"):
        small_phone.goto("/casino-war")
        choose_language(small_phone, language)
        inside = small_phone.evaluate(
            "() => { const chip = document.getElementById('clear-bet');"
            " return chip.scrollWidth <= chip.clientWidth; }"
        )
        if not inside:
            spilled.append(language)
    assert spilled == [], spilled


#: Each seat's team label: its lines, and whether it and the seat's count stay inside the seat.
TEAM_LABELS = """() => [...document.querySelectorAll(".seat")].map(seat => {
  const label = seat.querySelector(".team");
  const edge = seat.getBoundingClientRect().right;
  const inside = [label, seat.querySelector(".count")]
    .every(part => part.getBoundingClientRect().right <= edge);
  return [label.getClientRects().length, inside];
})"""
#: What the war button keeps on a phone, where its leading "next" is hidden: the word for war.
WAR_BUTTON_ON_A_PHONE = {"en": "War »", "fi": "Sotaan »", "nb": "Krig »", "pt": "Guerra »"}


def test_a_team_game_on_a_phone_names_its_war_button_and_keeps_each_team_label_whole(
    small_phone: Any,
) -> None:
    """On a phone the replay's buttons keep their symbols, and the war button the words outside
    its hidden part: those named nothing in Bokmål ("Neste »"). A seat's team label wrapped its
    last word alone onto the next line; kept whole beside the count, it pushed the count out of
    the seat. Every language's new player deals a team game in turn in the one tab."""
    problems = []
    for language in LANGUAGES:
        a_new_player(small_phone, "teamphone", language)
        small_phone.goto("/sota")
        small_phone.select_option("#seats", "4")
        small_phone.click("#custom-rules summary")
        small_phone.check("#rule_teams")
        small_phone.click("#play")
        small_phone.wait_for_url("**/sota/games/*")
        war = small_phone.inner_text("#next-war").strip()
        if war != WAR_BUTTON_ON_A_PHONE[language]:
            problems.append((language, "war button", war))
        labels = small_phone.evaluate(TEAM_LABELS)
        if labels != [[1, True]] * 4:
            problems.append((language, "team labels", labels))
    assert problems == [], problems


def test_touch_targets_on_a_phone_are_big_enough(small_phone: Any) -> None:
    sign_up(small_phone, "touch")
    play_a_round(small_phone)
    targets = {
        "/casino-war": [
            "header nav a",
            "header nav button.link",
            "#language-choice",
            ".chip-target label",
        ],
        "/sota": ["#custom-rules summary"],
        "/fairness": ["main details > summary"],
    }
    targets["/sota"].append(".rule .opt")
    short = []
    for path, selectors in targets.items():
        small_phone.goto(path)
        if path == "/sota":
            small_phone.click("#custom-rules summary")
        for selector in selectors:
            heights = small_phone.locator(selector).evaluate_all(
                "els => els.filter(e => e.getClientRects().length)"
                ".map(e => e.getBoundingClientRect().height)"
            )
            assert heights, selector
            if min(heights) < 44:
                short.append(f"{path} {selector}: {min(heights):.0f}px")
    assert short == []


def test_the_headers_links_are_a_fingers_height_on_a_phone(small_phone: Any) -> None:
    """The brand, the way back to the lobby from every page, was 23 px high on a phone: under
    the 24 px a finger needs, as the balance beside it is given."""
    sign_up(small_phone, "brand")
    heights = small_phone.locator("header.top :is(.brand, .header-balance)").evaluate_all(
        "links => links.map(link => link.getBoundingClientRect().height)"
    )
    assert len(heights) == 2 and min(heights) >= 24, heights


def operator_in(page: Any, live_server: LiveServer, language: str) -> int:
    """Log an operator in ``page`` in ``language``; return the id of a player with rounds."""
    player, operator = fresh_name("layoutp"), fresh_name("layouto")
    seed_a_player(live_server.app, player)
    created = live_server.app.test_cli_runner().invoke(
        args=["create-operator", operator], input=f"{PASSWORD}\n"
    )
    assert created.exit_code == 0, created.output
    log_in_to_the_console(page, operator, language)
    return player_id(live_server.app, player)


def log_in_to_the_console(page: Any, staff: str, language: str) -> None:
    """Log ``staff`` in ``page`` and show the console in ``language``."""
    page.goto("/auth/login")
    page.fill("input[name=username]", staff)
    page.fill("input[name=password]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url("**/operator/audit")  # staff start in the console
    choose_language(page, language)


#: The room above each form of a player's account panel on the console (Lock account, Role),
#: from the list or the form above it.
ROOM_ABOVE_THE_ACCOUNTS_FORMS = """() => {
  const panel = document.querySelector("[aria-labelledby=account-title]");
  const parts = [...panel.querySelectorAll(":scope > dl, :scope > form")];
  return parts.slice(1).map((part, i) => Math.round(
    part.getBoundingClientRect().top - parts[i].getBoundingClientRect().bottom));
}"""


def test_the_operator_console_fits_the_screen(
    small_phone: Any, laptop: Any, live_server: LiveServer
) -> None:
    """Finnish and then Norwegian, picked in turn in one phone's tab and one laptop's. A player's
    Lock account button stood flush under the balances and over the Role form, a finger's slip
    from the other: each has room around it."""
    problems: list[Any] = []
    for page, paths in (
        (small_phone, ("/operator/tables", "/operator/alerts")),
        (laptop, ("/operator/ledger", "/operator/players/{player}/lists/rounds")),
    ):
        player = operator_in(page, live_server, "fi")
        for language in ("fi", "nb"):
            if language != "fi":
                choose_language(page, language)
            for path in paths:
                found = overflow(page, path.format(player=player))
                problems += [f"{language} {problem}" for problem in found]
        page.goto(f"/operator/players/{player}")
        room = page.evaluate(ROOM_ABOVE_THE_ACCOUNTS_FORMS)
        if len(room) != 2 or min(room) < 12:
            problems.append(("room above the account's forms", page.viewport_size, room))
    assert problems == [], problems


#: The console's time-zone form, open: the screen's width, and each control's box and whether
#: its text fits inside it.
TIME_ZONE_FORM = """() => {
  const form = document.querySelector("details.time-zone form");
  const shown = e => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, width: r.width, height: r.height,
            fits: e.scrollWidth <= e.clientWidth}; };
  return {
    screen: document.documentElement.clientWidth,
    summary: shown(document.querySelector("details.time-zone summary")),
    field: shown(form.querySelector("#time_zone")),
    button: shown(form.querySelector("button[type=submit]")),
  };
}"""


def test_the_consoles_time_zone_form_fits_and_shows_the_longest_zone(
    screen: Any, live_server: LiveServer
) -> None:
    """The zone field and its button in the console's bar, open: on the screen, the longest
    zone name whole in the field, the button's words inside it, nothing wider than the page;
    on a phone each control, and the bar's links, 44 px tall. Every language's new operator
    (whose bar names no zone yet) logs in in turn in the one tab."""
    longest = max(accounts.time_zones(), key=len)
    problems: list[Any] = []
    for language in LANGUAGES:
        screen.context.clear_cookies()  # the last operator's log-in
        operator_in(screen, live_server, language)
        screen.goto("/operator/tables")
        screen.click("details.time-zone summary")
        screen.fill("#time_zone", longest)
        found = screen.evaluate(TIME_ZONE_FORM)
        problems += [(language, wide) for wide in screen.evaluate(OVERFLOW)]
        for name in ("summary", "field", "button"):
            control = found[name]
            if not (0 <= control["left"] and control["right"] <= found["screen"]):
                problems.append((language, name, "off the screen", found))
            if not control["fits"]:
                problems.append((language, name, "its text does not fit", found))
        if screen.size == "phone":
            heights = screen.locator(
                "nav.console-nav a, details.time-zone summary, #time_zone, .time-zone-form button"
            ).evaluate_all("els => els.map(e => [e.textContent.trim() || e.id, e.offsetHeight])")
            problems += [(language, what, height) for what, height in heights if height < 44]
        screen.click(".time-zone-form button[type=submit]")
        if longest not in screen.inner_text("details.time-zone summary"):
            problems.append((language, "the zone chosen is not shown"))
    assert problems == [], problems


#: Each shown table of the page that runs past its panel's inner edge or scrolls inside it.
TABLES_PAST_THEIR_PANEL = """() => [...document.querySelectorAll("main .panel > table")]
  .filter(table => table.checkVisibility())
  .map(table => {
    const panel = table.parentElement;
    const inner = panel.getBoundingClientRect().right
      - parseFloat(getComputedStyle(panel).paddingRight);
    return [table.className, Math.round(table.getBoundingClientRect().right - inner),
            panel.scrollWidth - panel.clientWidth];
  })
  .filter(([, past, scrolled]) => past > 1 || scrolled > 1)"""


def test_the_ledgers_tables_fit_a_laptops_screen(laptop: Any, live_server: LiveServer) -> None:
    """The ledger's math table ran 230 px (Finnish: 460 px) past its panel on a 1280 px screen,
    its surrendered ties and tie bet columns cut at the panel's edge. Checked at 1024 and
    1280 px, the page resized in place, every language picked in turn in the one tab."""
    operator_in(laptop, live_server, "en")
    problems = []
    for language in LANGUAGES:
        if language != "en":
            choose_language(laptop, language)
        laptop.goto("/operator/ledger")
        for width in (1024, 1280):  # the console's pages size nothing in script: CSS lays them out
            laptop.set_viewport_size({"width": width, "height": 800})
            assert laptop.locator("[data-testid=math-table]").is_visible(), (language, width)
            past = laptop.evaluate(TABLES_PAST_THEIR_PANEL)
            problems += [(language, width, *found) for found in past]
    assert problems == [], problems


@pytest.mark.parametrize("path", ["/operator/ledger", "/operator/audit"])
def test_a_forms_download_links_read_on_one_line(
    chromium: Any, live_server: LiveServer, path: str
) -> None:
    """The links “CSV · JSON Lines” beside a console form's button stood one above the other,
    the dot on a line of its own: each piece of the links' box was a row of the form's grid."""
    tabs = open_tab(chromium, live_server, viewport={"width": 1280, "height": 800})
    laptop = next(tabs)
    operator_in(laptop, live_server, "en")
    laptop.goto(path)
    form = laptop.locator("form.form-row", has=laptop.locator("a[download]"))
    tops = [
        round(box["y"])
        for box in (link.bounding_box() for link in form.locator("a[download]").all())
        if box is not None
    ]
    next(tabs, None)
    assert len(tops) == 2 and tops[0] == tops[1], tops


def _widen_the_rows_of(app: Any, player: int) -> None:
    """Give ``player`` the widest rows a player's lists hold: a credit and a debit in the tens of
    thousands of chips, and (most likely) a tied round left waiting for its decision."""
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        first, second = (
            accounts.create_operator(session, fresh_name("adjuster"), PASSWORD).id for _ in "12"
        )
        for amount in (1_234_567, -1_000_050):  # above the four-eyes threshold: proposed
            proposed = money.propose_adjustment(session, first, player, "chips", amount, "goodwill")
            approvals.decide(session, second, proposed.id, True)
        for _ in range(100):  # a tie comes every 13 rounds or so
            if rounds.place_casino_war_bet(session, player, 100).status == "awaiting_decision":
                break
    finally:
        session.close()


#: A client seed as long as one may be, with no space to break a line at.
LONG_CLIENT_SEED = "0123456789abcdef" * 4


def play_on_a_long_client_seed(page: Any) -> str:
    """Sign a new player up in ``page`` who rotates onto :data:`LONG_CLIENT_SEED` twice, playing
    a round on each pair, so that the seed shows on the active pair and on a revealed one; return
    the username."""
    username = sign_up(page, "longseed")
    for _ in range(2):
        page.goto("/fairness")
        page.fill("#client_seed", LONG_CLIENT_SEED)
        with page.expect_navigation():
            page.click("#rotate")
        play_a_round(page)
    return username


def player_id(app: Any, username: str) -> int:
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        return int(session.scalars(select(User.id).where(User.username == username)).one())
    finally:
        session.close()


@pytest.mark.parametrize("width", (768, 1024))
def test_a_64_character_client_seed_keeps_the_consoles_seed_pairs_in_their_panel(
    chromium: Any, live_server: LiveServer, width: int
) -> None:
    """The console wrote a client seed as plain text, which breaks only at a space: one of 64
    characters ran the seed pairs' table 240 px past its panel on a 768 px tablet and the seed
    pairs' list 400 px (143 px at 1024)."""
    tabs = open_tab(chromium, live_server, viewport={"width": width, "height": 800})
    page = next(tabs)
    player = player_id(live_server.app, play_on_a_long_client_seed(page))
    page.context.clear_cookies()
    operator_in(page, live_server, "en")
    problems = []
    for path, table in (
        (f"/operator/players/{player}", "seeds-table"),
        (f"/operator/players/{player}/lists/seed_pairs", "player-list"),
    ):
        page.goto(path)
        assert LONG_CLIENT_SEED in page.inner_text(f"table.{table}"), path
        past = page.evaluate(TABLES_PAST_THEIR_PANEL)
        problems += [(path, *found) for found in past if table in found[0].split()]
        problems += [f"{path}: {problem}" for problem in page.evaluate(OVERFLOW)]
    next(tabs, None)
    assert problems == [], problems


def test_a_player_s_tables_on_the_console_fit_a_laptops_screen(
    laptop: Any, live_server: LiveServer
) -> None:
    """A player's rounds, money moves and seed pairs, on the player's page and as lists: in
    Finnish and Norwegian at 1024 px (the rounds in Finnish at 1280 px too) they ran 17 to 200 px
    past their panel, which scrolled them sideways; an amount with its word was the widest cell,
    and a time in the operator's zone beside UTC as wide. Checked at 1024 and 1280 px (each page
    resized in place), in UTC and then in the longest zone, every language picked in turn in
    each, in one tab."""
    player = operator_in(laptop, live_server, "en")
    _widen_the_rows_of(live_server.app, player)
    problems = []
    for zone in ("", max(accounts.time_zones(), key=len)):
        if zone:
            laptop.set_viewport_size({"width": 1280, "height": 800})
            laptop.click("details.time-zone summary")
            laptop.fill("#time_zone", zone)
            laptop.click(".time-zone-form button[type=submit]")
            laptop.wait_for_selector(f"details.time-zone summary:has-text('{zone}')")
        for language in LANGUAGES:
            choose_language(laptop, language)
            for path in ("", "/lists/rounds", "/lists/transfers", "/lists/seed_pairs"):
                laptop.goto(f"/operator/players/{player}{path}")
                assert laptop.locator("main .panel > table").count(), (language, zone, path)
                for width in (1024, 1280):  # the console sizes nothing in script: CSS lays it out
                    laptop.set_viewport_size({"width": width, "height": 800})
                    past = laptop.evaluate(TABLES_PAST_THEIR_PANEL)
                    problems += [(language, zone or "UTC", width, path, *found) for found in past]
    assert problems == [], problems


def twenty_character_name(base: str) -> str:
    """A username of 20 characters, as long as real ones get, that no other test takes."""
    count = fresh_name("")
    return f"{base:_<20}"[: 20 - len(count)] + count


@pytest.fixture(scope="module")
def a_busy_console(live_server: LiveServer) -> tuple[str, int]:
    """Everything the console's tables show, with their longest realistic values: a player, two
    operators and names of 20 characters; adjustments of a million chips and more, approved,
    rejected and pending, with the alerts they raise; table changes approved (and undone: the
    other tests on this server play the tables as they are) and rejected; a 64-character client
    seed; a tied round waiting. Return the first operator's name and the player's id."""
    app = live_server.app
    player_name = twenty_character_name("margarida.fernandes")
    operator_name = twenty_character_name("henriksson.operator")
    seed_a_player(app, player_name)
    player = player_id(app, player_name)
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        first = accounts.create_operator(session, operator_name, PASSWORD).id
        second = accounts.create_operator(
            session, twenty_character_name("virtanen.approver"), PASSWORD
        ).id
        for kind in ("player_adjustments", "operator_adjustments"):
            alerts.create_rule(session, first, kind, "chips", 100_000, 24)
        reason = "refund after a long dispute about a lost round"
        for amount, approved in ((123_456_789, True), (-100_000_050, True), (9_876_543, False)):
            proposed = money.propose_adjustment(session, first, player, "chips", amount, reason)
            approvals.decide(session, second, proposed.id, approved, "checked against the ticket")
        money.propose_adjustment(session, second, player, "chips", 5_555_555, reason)
        played = settings.table_rules(session, "casino_war")
        for change in ({"decks": 8, "tie_payout": 30, "burn": 5, "bonus": "ante"}, played):
            proposed = settings.propose_table_change(session, first, "casino_war", change)
            approvals.decide(session, second, proposed.id, True)
        proposed = settings.propose_table_change(session, second, "sota", {"max_stake": 100_000})
        approvals.decide(session, first, proposed.id, False, "the stakes stay as they are")
        fairness.rotate(session, player, LONG_CLIENT_SEED)
        for _ in range(100):  # a tie comes every 13 rounds or so
            if rounds.place_casino_war_bet(session, player, 100).status == "awaiting_decision":
                break
    finally:
        session.close()
    return operator_name, player


def a_zone_on_another_day() -> str:
    """A zone whose date is not UTC's now, so a time shows beside UTC's whole date and time
    (``2026-12-05 11:22:13 +14 (2026-12-04 21:22:13 UTC)``), the widest a time gets."""
    return "Pacific/Kiritimati" if datetime.now(UTC).hour >= 10 else "Pacific/Pago_Pago"


#: Every console page with tables; {player} is a player's id.
CONSOLE_PAGES = (
    "/operator/audit",
    "/operator/ledger",
    "/operator/players",
    "/operator/players/{player}",
    "/operator/players/{player}/lists/rounds",
    "/operator/players/{player}/lists/transfers",
    "/operator/players/{player}/lists/seed_pairs",
    "/operator/tables",
    "/operator/alerts",
    "/operator/approvals?status=pending",
    "/operator/approvals?status=approved",
    "/operator/approvals?status=rejected",
)


def test_every_console_table_fits_its_panel_on_a_tablet_and_a_small_laptop(
    chromium: Any,
    live_server: LiveServer,
    a_busy_console: tuple[str, int],
) -> None:
    """On a 768 px tablet ten of the console's tables ran past their panel, which scrolled
    them sideways: the audit's entries 292 to 377 px in every language (a 20-character name, an
    action such as seed_pair.client_seed_set, a time in the reader's zone), the math 120 to
    225 px, a player's rounds list 58 to 239 px, and up to 45 px the seed pairs, balances, house
    result, alerts and proposals, a pending one's Note, Approve and Reject out of their cell. At
    1024 px a time beside UTC's on another day ran the audit's entries 36 to 121 px past. Both
    widths are checked in one tab, each page resized in place, every language picked in turn."""
    operator, player = a_busy_console
    tabs = open_tab(chromium, live_server, viewport={"width": 768, "height": 800})
    page = next(tabs)
    log_in_to_the_console(page, operator, "en")
    zone = a_zone_on_another_day()
    page.click("details.time-zone summary")
    page.fill("#time_zone", zone)
    page.click(".time-zone-form button[type=submit]")
    page.wait_for_selector(f"details.time-zone summary:has-text('{zone}')")
    problems = []
    for language in LANGUAGES:
        if language != "en":
            choose_language(page, language)
        for path in CONSOLE_PAGES:
            path = path.format(player=player)
            page.goto(path)
            assert page.locator("main .panel > table").count(), (language, path)
            for width in (768, 1024):  # the console sizes nothing in script: CSS lays it out
                page.set_viewport_size({"width": width, "height": 800})
                past = page.evaluate(TABLES_PAST_THEIR_PANEL)
                problems += [(language, width, path, *found) for found in past]
                problems += [(language, width, path, found) for found in page.evaluate(OVERFLOW)]
    next(tabs, None)
    assert problems == [], problems


def test_the_console_menus_counts_read_on_their_own_pages(
    laptop: Any, a_busy_console: tuple[str, int]
) -> None:
    """The count of proposals waiting, a pale yellow badge, took the white of its link when
    Approvals was the page shown: white on yellow, at a contrast of 1.1. Each count reads
    (a contrast of 4.5 or more against its badge) on its own page and on another."""
    operator, _ = a_busy_console
    log_in_to_the_console(laptop, operator, "en")
    contrasts = {}
    for path in ("/operator/audit", "/operator/approvals", "/operator/alerts"):
        laptop.goto(path)
        for badge in laptop.locator(".console-nav a .badge").all():
            contrasts[path, badge.evaluate("b => b.parentElement.dataset.testid")] = round(
                badge.evaluate(CONTRAST, True), 1
            )
    assert len(contrasts) == 6, contrasts
    assert {where: ratio for where, ratio in contrasts.items() if ratio < 4.5} == {}, contrasts


#: Full-size court cards drawn by the page's own code where the page shows cards (the felt, on
#: a phone smaller): each corner's rank or suit that overlaps the card's frame.
CORNERS_ON_THE_FRAME = """() => {
  const overlap = (a, b) => a.left < b.right && b.left < a.right
    && a.top < b.bottom && b.top < a.bottom;
  const found = [];
  for (const place of [document.querySelector("main"), document.querySelector(".table-felt")]) {
    for (const code of ["JC", "QD", "KH", "KS"]) {
      const card = window.SotaCards.card(code);
      place.prepend(card);
      const frame = card.querySelector(".court").getBoundingClientRect();
      for (const glyph of card.querySelectorAll(".corner > span")) {
        if (glyph.checkVisibility() && overlap(glyph.getBoundingClientRect(), frame)) {
          found.push(`${code} ${glyph.className} in ${place.className || place.tagName}`);
        }
      }
      card.remove();
    }
  }
  return found;
}"""


def test_a_full_size_court_cards_corners_stay_outside_its_frame(screen: Any) -> None:
    """A jack, queen or king at full size had its corner suits drawn over its frame's border."""
    sign_up(screen, "courts")
    screen.goto("/casino-war")
    assert screen.evaluate(CORNERS_ON_THE_FRAME) == []


#: The top of each chip of the bet's rack, the clear chip last.
CHIP_TOPS = """() => [...document.querySelectorAll("#bet-form .chip-rack .chip")]
  .map(chip => Math.round(chip.getBoundingClientRect().top))"""


def test_the_bet_chips_take_one_row_on_a_laptop_and_a_360_px_phone(
    chromium: Any, live_server: LiveServer, laptop: Any
) -> None:
    """At 1280 px the clear chip wrapped alone onto a line of its own, under the five chips, in
    every language: the bet panel's 22rem left the rack 8 px short in English ("clear") and
    35 px in Finnish ("tyhjennä"). On a 360 px phone, the chips 44 px wide, it would wrap too,
    pushing the bet fields under the Deal row. Every language is picked in turn in one phone's
    tab and one laptop's."""
    tabs = a_360_px_phone(chromium, live_server)
    phone = next(tabs)
    shown = {}
    for name, page in (("laptop", laptop), ("phone", phone)):
        sign_up(page, "chiprow")
        for language in LANGUAGES:
            if language != "en":
                choose_language(page, language)
            page.goto("/casino-war")
            shown[name, language] = page.evaluate(CHIP_TOPS)
    next(tabs, None)
    assert [(where, tops) for where, tops in shown.items() if len(set(tops)) != 1] == []
    assert [(where, tops) for where, tops in shown.items() if len(tops) != 6] == []


#: The vertical middle of each item the header shows: the brand, the balance, and each link,
#: button and field of its menu.
HEADER_ITEMS = """() => [...document.querySelectorAll(
    "header.top :is(.brand, .header-balance), header.top nav :is(a, button, select)")]
  .filter(item => item.checkVisibility() && item.closest("noscript") === null)
  .map(item => { const box = item.getBoundingClientRect();
                 return [item.textContent.trim().slice(0, 20), box.top + box.height / 2]; })"""


def one_line(items: list[tuple[str, float]]) -> bool:
    """Whether the header's items stand on one line: their middles level, to a pixel."""
    middles = [middle for _, middle in items]
    return bool(middles) and max(middles) - min(middles) <= 1


def test_the_header_takes_one_line_on_a_laptop(
    laptop: Any, chromium: Any, live_server: LiveServer
) -> None:
    """At 1280 px the Finnish and Norwegian player's header took two lines, the menu under the
    brand and the balance (a 20-character name took every language's to two): a 40 px band of
    the screen lost on every page. The brand, the balance and the whole menu share one line
    there, a player's as an operator's; every language is picked in turn in each's tab."""
    name = twenty_character_name("maria.virtanen.pelaa")
    laptop.goto("/auth/register")
    laptop.fill("#username", name)
    laptop.fill("#password", PASSWORD)
    laptop.fill("#confirm", PASSWORD)
    laptop.click("main button[type=submit]")
    laptop.wait_for_url("**/lobby")
    problems = []
    for language in LANGUAGES:
        if language != "en":
            choose_language(laptop, language)
        for path in ("/lobby", "/casino-war"):
            laptop.goto(path)
            items = laptop.evaluate(HEADER_ITEMS)
            if not one_line(items):
                problems.append((language, path, items))
    tabs = open_tab(chromium, live_server, **SIZES["desktop"])
    console = next(tabs)
    staff = twenty_character_name("henriksson.konsoli")
    created = live_server.app.test_cli_runner().invoke(
        args=["create-operator", staff], input=f"{PASSWORD}\n"
    )
    assert created.exit_code == 0, created.output
    for language in LANGUAGES:
        if language == "en":
            log_in_to_the_console(console, staff, language)
        else:
            choose_language(console, language)
        items = console.evaluate(HEADER_ITEMS)
        if not one_line(items):
            problems.append((language, "console", items))
    next(tabs, None)
    assert problems == [], problems


def give_chips(app: Any, player: int, hundredths: int) -> None:
    """Bring ``player``'s chips to ``hundredths`` of a chip, as two operators adjusting it do
    (four eyes)."""
    session = app.extensions["sota_casino.sessionmaker"]()
    try:
        first, second = (
            accounts.create_operator(session, fresh_name("topper"), PASSWORD).id for _ in "12"
        )
        held = money.balances(session, player).chips
        amount = hundredths - held
        proposed = money.propose_adjustment(session, first, player, "chips", amount, "a jackpot")
        approvals.decide(session, second, proposed.id, True)
    finally:
        session.close()


#: The header's boxes that must not overlap or leave the screen: the brand, the balance, and
#: the menu's button where the menu is folded.
HEADER_BOXES = """() => [...document.querySelectorAll(
    "header.top :is(.brand, .header-balance, details.menu > summary)")]
  .filter(item => item.checkVisibility())
  .map(item => { const r = item.getBoundingClientRect();
                 return [item.textContent.trim().slice(0, 20), r.left, r.top, r.right, r.bottom];
  })"""


def test_a_six_digit_balance_keeps_the_header_on_one_line_on_a_laptop(
    chromium: Any, live_server: LiveServer
) -> None:
    """In Norwegian at 1280 px the header of a player holding 123 456.50 chips (a surrendered
    war leaves half a chip; and a name of 20 characters) took two lines, the menu under the
    brand and the balance. It takes one on a laptop in every language; on a phone the brand,
    the balance and the Menu button stay whole on the screen, none over another. Every language
    is picked in turn in the one tab, resized to each screen."""
    tabs = open_tab(chromium, live_server, **SIZES["desktop"])
    laptop = next(tabs)
    laptop.goto("/auth/register")
    name = twenty_character_name("kristoffersen.spiller")
    laptop.fill("#username", name)
    laptop.fill("#password", PASSWORD)
    laptop.fill("#confirm", PASSWORD)
    laptop.click("main button[type=submit]")
    laptop.wait_for_url("**/lobby")
    give_chips(live_server.app, player_id(live_server.app, name), 12_345_650)
    problems = []
    for language in LANGUAGES:
        laptop.set_viewport_size(SIZES["desktop"]["viewport"])
        if language != "en":
            choose_language(laptop, language)
        for path in ("/lobby", "/sota"):
            laptop.goto(path)
            items = laptop.evaluate(HEADER_ITEMS)
            if not one_line(items):
                problems.append((language, path, items))
        if "123" not in laptop.inner_text("[data-header-chips]"):
            problems.append((language, "chips", laptop.inner_text("[data-header-chips]")))
        for width, height in ((390, 844), (360, 740)):
            laptop.set_viewport_size({"width": width, "height": height})
            laptop.goto("/lobby")
            boxes = laptop.evaluate(HEADER_BOXES)
            for index, (what, left, top, right, bottom) in enumerate(boxes):
                if left < 0 or right > width:
                    problems.append((language, width, what, "off the screen", left, right))
                for other in boxes[index + 1 :]:
                    if (
                        left < other[3]
                        and other[1] < right
                        and top < other[4]
                        and other[2] < bottom
                    ):
                        problems.append((language, width, what, "over", other[0]))
    next(tabs, None)
    assert problems == [], problems


#: Where a refused form stands on the screen: the focused field's id, the boxes (top, bottom)
#: of the field named and of the refusal's message, and the top of the row of buttons kept at
#: the screen's foot (Casino War's Deal row, Sota's Deal the game bar).
REFUSAL_SHOWN = """id => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; };
  const foot = document.querySelector("#bet-form .deal-row, #table-form .form-actions");
  return {
    focused: document.activeElement.id,
    field: box(document.getElementById(id)),
    message: box(document.querySelector(".flash.error")),
    foot: foot.getBoundingClientRect().top,
  };
}"""


def refusal_problems(page: Any, field: str, case: str) -> list[str]:
    """What keeps the player of ``page`` from seeing the refusal: the field not focused, or it
    or the message off the screen or under the row kept at its foot."""
    page.wait_for_selector(".flash.error")
    # Chromium applies a page's autofocus at a rendering step after the load, not at once, and
    # a loaded machine may take its time: the page has until it is still to show the field.
    page.wait_for_load_state("load")
    shown = page.evaluate(REFUSAL_SHOWN, field)
    for _ in range(30):
        page.wait_for_timeout(100)
        again = page.evaluate(REFUSAL_SHOWN, field)
        if again == shown and shown["focused"] == field:
            break
        shown = again
    if shown["focused"] != field:
        return [f"{case}: {shown['focused']!r} focused, not {field!r}"]
    top = min(shown["field"][0], shown["message"][0])
    bottom = max(shown["field"][1], shown["message"][1])
    return [] if 0 <= top and bottom <= shown["foot"] + 0.5 else [f"{case}: {shown}"]


def change_the_sent_form(page: Any, path: str, field: str, value: str) -> None:
    """Send ``field`` as ``value`` when the page's plain form is posted to ``path``, as a player
    may type it in a browser that checks no field."""

    def rewrite(route: Any) -> None:
        fields = parse_qs(route.request.post_data or "", keep_blank_values=True)
        fields[field] = [value]
        route.continue_(post_data=urlencode(fields, doseq=True))

    page.route(f"**{path}", rewrite)


def test_a_refused_bet_shows_its_field_focused_with_its_message_above_deal_on_a_phone(
    chromium: Any, live_server: LiveServer
) -> None:
    """On a 360 px phone a refused bet's message, drawn above the chips, pushed the field in
    error under the Deal row kept at the screen's foot, and nothing focused it or scrolled it
    into view: the player saw no field to fix. In Casino War (in the page, and in the page the
    server draws for its plain form, with or without JavaScript) and in Sota, the field is
    focused, whole on the screen above the row of buttons at its foot, its message too. Every
    language is picked in turn in one tab with JavaScript and one without."""
    problems: list[str] = []
    tabs = a_360_px_phone(chromium, live_server)
    phone = next(tabs)
    sign_up(phone, "refusal")
    for language in LANGUAGES:
        phone.goto("/casino-war")
        choose_language(phone, language)  # the table comes back in it
        # In the page: an ante over the table's maximum (past the field's own check) ...
        phone.evaluate("document.getElementById('bet').removeAttribute('max')")  # past its check
        phone.fill("#bet", "900")
        phone.expected_refusals += [422]
        phone.click("#deal")
        problems += refusal_problems(phone, "bet", f"{language}: ante in the page")
        # ... and a tie bet not a whole chip, which the page itself refuses.
        phone.goto("/casino-war")
        phone.evaluate("document.getElementById('tie_bet').step = 'any'")  # past its own check
        phone.fill("#tie_bet", "2.5")
        phone.click("#deal")
        problems += refusal_problems(phone, "tie_bet", f"{language}: tie bet in the page")
        # The plain form, drawn again by the server.
        phone.goto("/casino-war")
        change_the_sent_form(phone, "/casino-war/rounds", "tie_bet", "2.5")
        phone.expected_refusals += [422]
        with phone.expect_navigation():
            phone.evaluate("document.getElementById('bet-form').submit()")
        problems += refusal_problems(phone, "tie_bet", f"{language}: tie bet sent by the form")
        # A route turns the browser's cache off: with the cache on, the page had loaded before
        # the signing key's line above the form was drawn, which pushed Sota's stake under the
        # Deal bar.
        phone.unroute("**/casino-war/rounds")
        # Sota: a stake over the table's maximum; the page sends its form, which the server draws.
        phone.goto("/sota")
        phone.evaluate("document.getElementById('stake').removeAttribute('max')")
        phone.fill("#stake", "100000")
        phone.expected_refusals += [422]  # the API's answer; the form's goes back to the table
        with phone.expect_navigation(url="**/sota"):
            phone.click("#play")
        problems += refusal_problems(phone, "stake", f"{language}: Sota's stake")
        stake = (phone.input_value("#stake"), phone.get_attribute("#stake", "aria-invalid"))
        if stake != ("100000", "true"):
            problems.append(f"{language}: Sota's stake shown as {stake}, not as typed and invalid")
    next(tabs, None)
    # Without JavaScript the server's page alone focuses and shows the field.
    tabs = a_360_px_phone(chromium, live_server, java_script_enabled=False)
    plain = next(tabs)
    sign_up(plain, "refusalplain")
    for language in LANGUAGES:
        plain.goto("/casino-war")
        choose_language_without_javascript(plain, language)  # the table comes back in it
        change_the_sent_form(plain, "/casino-war/rounds", "bet", "900")
        plain.expected_refusals += [422]
        with plain.expect_navigation():
            plain.click("#deal")
        problems += refusal_problems(plain, "bet", f"{language}: ante without JavaScript")
        plain.unroute("**/casino-war/rounds")
    next(tabs, None)
    assert problems == [], problems


#: How the page marks the field named: invalid, and its message tied to it (described by it).
MARKED = """id => {
  const field = document.getElementById(id);
  return [field.getAttribute("aria-invalid"),
          (field.getAttribute("aria-describedby") || "").split(" ").includes("form-error")];
}"""


def sota_refusal_problems(page: Any, field: str, case: str) -> list[str]:
    """:func:`refusal_problems` for the Sota table's ``field``, and what keeps it from being
    marked: not invalid, or the message not tied to it."""
    problems = refusal_problems(page, field, case)
    marked = page.evaluate(MARKED, field)
    if marked != ["true", True]:
        problems.append(f"{case}: {field} marked {marked}, not invalid and described by it")
    return problems


def test_a_refused_sota_rule_shows_its_field_marked_and_focused_on_a_phone(
    chromium: Any, live_server: LiveServer
) -> None:
    """A refusal about one option of the rule set (teams on three seats, a trick limit out of
    range, a rule set the table does not offer) stood at the page's top, no field marked, and
    one's own rules were drawn back at their defaults: on a phone the player saw neither the
    option to fix nor what they had picked. The option's field is marked invalid, its message
    beside it and tied to it, focused and on the screen above the Deal bar, what was picked
    kept; in the page and without JavaScript alike, every language picked in turn in each."""
    problems: list[str] = []
    tabs = a_360_px_phone(chromium, live_server)
    phone = next(tabs)
    sign_up(phone, "rulerefusal")
    for language in LANGUAGES:
        phone.goto("/sota")
        choose_language(phone, language)  # the table comes back in it
        phone.select_option("#seats", "3")
        phone.click("#custom-rules summary")
        phone.check("#rule_teams")
        phone.expected_refusals += [422]  # the API's answer; the form's goes back to the table
        with phone.expect_navigation(url="**/sota"):
            phone.click("#play")
        case = f"{language}: teams on three seats"
        problems += sota_refusal_problems(phone, "rule_teams", case)
        picked = (phone.is_checked("#rule_teams"), phone.input_value("#seats"))
        if picked != (True, "3") or not phone.is_checked("#preset-custom"):
            problems.append(f"{language}: teams and seats shown as {picked}, not as picked")
    next(tabs, None)
    tabs = a_360_px_phone(chromium, live_server, java_script_enabled=False)
    plain = next(tabs)
    sign_up(plain, "rulerefusalplain")
    for language in LANGUAGES:
        plain.goto("/sota")
        choose_language_without_javascript(plain, language)  # the table comes back in it
        plain.check("#preset-custom")
        change_the_sent_form(plain, "/sota/games", "rule_max_tricks", "0")
        with plain.expect_navigation():
            plain.click("#play")
        case = f"{language}: a trick limit of 0"
        problems += sota_refusal_problems(plain, "rule_max_tricks", case)
        if plain.input_value("#rule_max_tricks") != "0":
            limit = plain.input_value("#rule_max_tricks")
            problems.append(f"{language}: the trick limit shown as {limit!r}")
        plain.unroute("**/sota/games")
        plain.goto("/sota")
        change_the_sent_form(plain, "/sota/games", "preset", "nope")
        with plain.expect_navigation():
            plain.click("#play")
        case = f"{language}: a rule set not offered"
        problems += sota_refusal_problems(plain, "preset-nordic", case)
        plain.unroute("**/sota/games")
    next(tabs, None)
    assert problems == [], problems


#: The verification's summary as shown: how many lines of bold words it takes on the screen
#: (its text nodes' lines whose weight is 600 or more), its first line's words, and its words
#: shown and held (innerText, textContent).
VERIFY_SUMMARY = """() => {
  const summary = document.querySelector(".revealed-pair [data-testid=verify-summary]");
  const lines = new Set();
  const walker = document.createTreeWalker(summary, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const parent = walker.currentNode.parentElement;
    if (!parent.checkVisibility() || parseInt(getComputedStyle(parent).fontWeight) < 600) continue;
    const range = document.createRange();
    range.selectNodeContents(walker.currentNode);
    for (const line of range.getClientRects()) if (line.width > 0) lines.add(Math.round(line.top));
  }
  return {bold: lines.size, first: summary.innerText.trim().split("\\n")[0],
          shown: summary.innerText, held: summary.textContent};
}"""


def test_the_verifications_summary_is_a_short_verdict_then_its_details(
    screen: Any, live_server: LiveServer
) -> None:
    """On a phone the verification's summary was one paragraph in bold, 21 lines of it at 375
    px in Norwegian ("✓ All 2 rounds verified against the key pinned in this browser: every
    signature, the seeds, ..."), and 6 on a laptop. Its first line is now the verdict, the
    only words in bold (two lines at most); the details follow in the text's weight, folded on
    a phone, open on a laptop, every word of them still in the page. Verified in English, then
    again in each other language picked in the same tab."""
    problems = []
    for language, said in verified_in(screen, live_server, "verdictline", LANGUAGES):
        found = screen.evaluate(VERIFY_SUMMARY)
        verdict = words(language).ngettext(
            "All %(num)s round verified.", "All %(num)s rounds verified.", 2
        ) % {"num": 2}
        if found["first"].replace("\u00a0", " ") != f"✓ {verdict}":
            problems.append((language, "first line", found["first"]))
        if found["bold"] > 2:
            problems.append((language, "bold lines", found["bold"]))
        details = said("The commitment equals the one this browser was shown before play")
        if details not in found["held"]:
            problems.append((language, "details", found["held"]))
        if screen.size == "desktop" and details not in found["shown"]:
            problems.append((language, "details not shown on a laptop", found["shown"]))
    assert problems == [], problems


#: The war tie's bonus as the console's table form shows it chosen: its words, the width they
#: need and the room they have (a select's box, its arrow aside; a choice's label), and the
#: right edges of its box and of its panel.
CHOSEN_BONUS = """() => {
  const fields = [...document.querySelectorAll("[name=bonus]")];
  const panel = fields[0].closest(".panel").getBoundingClientRect().right;
  if (fields[0].tagName === "SELECT") {
    const select = fields[0], style = getComputedStyle(select);
    const pen = document.createElement("canvas").getContext("2d");
    pen.font = style.font;
    const words = select.selectedOptions[0].text;
    const room = select.clientWidth - parseFloat(style.paddingLeft)
      - parseFloat(style.paddingRight) - 20;
    return {words, needs: Math.ceil(pen.measureText(words).width), room: Math.floor(room),
            right: select.getBoundingClientRect().right, panel};
  }
  const label = fields.find(field => field.checked).closest("label");
  return {words: label.textContent.trim(), needs: label.scrollWidth, room: label.clientWidth,
          right: label.getBoundingClientRect().right, panel};
}"""


def test_the_war_ties_bonus_reads_whole_on_the_consoles_phone(
    small_phone: Any, live_server: LiveServer
) -> None:
    """On a 375 px phone the console's Casino War form showed its bonus on a war tie cut: a
    select as wide as the panel, its chosen option's words longer ("ante (extra win equal to
    the", "aposta inicial (ganho extra igual"). Each choice, once chosen, reads whole inside its
    panel, in every language picked in turn in the one tab."""
    operator_in(small_phone, live_server, "en")
    problems = []
    for language in LANGUAGES:
        choose_language(small_phone, language)
        small_phone.goto("/operator/tables")
        for value in ("none", "ante"):
            if small_phone.locator("select[name=bonus]").count():
                small_phone.select_option("[name=bonus]", value)
            else:
                small_phone.check(f"[name=bonus][value={value}]")
            found = small_phone.evaluate(CHOSEN_BONUS)
            if found["needs"] > found["room"] or found["right"] > found["panel"]:
                problems.append((language, value, found))
    assert problems == [], problems


#: The widths of the tie's two choices, war and surrender.
CHOICE_WIDTHS = """() => ["go-to-war", "surrender"].map(id =>
  Math.round(document.getElementById(id).getBoundingClientRect().width * 10) / 10)"""


def test_war_and_surrender_are_as_wide_as_each_other(screen: Any, live_server: LiveServer) -> None:
    """On a laptop the tie's two buttons were each as wide as their words: "Go to war · raise
    5" 253 px and "Surrender · get 2.50 back" 325, 47 px apart in Finnish (one above the other)
    and 42 in Norwegian. The two choices are as wide as each other, on a laptop and on a phone,
    in every language: a new player in each deals a tie, shown in the page and drawn again."""
    problems = []
    for language in LANGUAGES:
        username = a_new_player(screen, "evenchoice", language)
        plant_server_seed(live_server.app, username, {0: True})
        screen.goto("/casino-war")
        screen.fill("#bet", "5")
        screen.click("#deal")
        screen.wait_for_selector("#go-to-war")
        war, surrender = screen.evaluate(CHOICE_WIDTHS)
        if abs(war - surrender) > 1:
            problems.append((language, war, surrender))
        screen.reload()  # as the server draws it
        war, surrender = screen.evaluate(CHOICE_WIDTHS)
        if abs(war - surrender) > 1:
            problems.append((language, "drawn", war, surrender))
        problems += [(language, found) for found in screen.evaluate(OVERFLOW)]
    assert problems == [], problems
