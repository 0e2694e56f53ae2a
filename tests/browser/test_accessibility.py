"""What a screen reader, a voice control or a keyboard user meets, read from the page itself:
contrast, names that contain the words shown, heading order, the game's end announced, and the
language picker stepped through with the arrow keys."""

from __future__ import annotations

import itertools
import re
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from browser_support import LiveServer
from browser_support import fresh_name
from browser_support import sign_up
from browser_support import wait_for_round
from test_languages_in_the_browser import choose_language
from test_operator_console import seed_a_player
from test_player import focused_id
from test_player import submit_and_load

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
from web_support import PASSWORD  # noqa: E402
from web_support import plant_server_seed  # noqa: E402

pytestmark = pytest.mark.browser

#: The WCAG contrast ratio of an element's text colour against the page behind it, or with
#: ``true`` as the argument against the element's own background (both opaque).
CONTRAST = """(element, own) => {
  const channels = colour => colour.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const luminance = colour => {
    const [r, g, b] = channels(colour).map(value => {
      const c = value / 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const text = luminance(getComputedStyle(element).color);
  const behind = luminance(getComputedStyle(own ? element : document.body).backgroundColor);
  return (Math.max(text, behind) + 0.05) / (Math.min(text, behind) + 0.05);
}"""


def luminance(red: float, green: float, blue: float) -> float:
    """WCAG's relative luminance of an sRGB colour given in 0-255 channels."""

    def linear(value: float) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else float(((c + 0.055) / 1.055) ** 2.4)

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def contrast(one: float, other: float) -> float:
    """WCAG's contrast ratio of two luminances."""
    return (max(one, other) + 0.05) / (min(one, other) + 0.05)


def png_pixels(data: bytes) -> list[tuple[int, int, int]]:
    """The pixels of a PNG as Chromium writes screenshots (8-bit RGB or RGBA, not interlaced),
    as RGB: what the screen showed, to measure text against whatever is drawn behind it."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, packed, header = 8, b"", b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        header = body if kind == b"IHDR" else header
        packed += body if kind == b"IDAT" else b""
        at += length + 12
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour_type in (2, 6) and not interlace, header
    size = 4 if colour_type == 6 else 3
    raw, stride = zlib.decompress(packed), width * size
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = row[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            if kind == 1:
                row[i] = (row[i] + left) & 0xFF
            elif kind == 2:
                row[i] = (row[i] + up) & 0xFF
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                near = min((abs(guess - left), 0, left), (abs(guess - up), 1, up))
                near = min(near, (abs(guess - corner), 2, corner))
                row[i] = (row[i] + near[2]) & 0xFF
        rows.append(row)
        previous = row
    return [(r[x], r[x + 1], r[x + 2]) for r in rows for x in range(0, stride, size)]


def contrast_with_what_is_behind(element: Any) -> float:
    """The lowest WCAG contrast of ``element``'s text colour against the pixels drawn behind
    its text (a screenshot of its box with the text made transparent): a gradient or a
    translucent layer under it counts as the screen shows it, not as one colour in the CSS."""
    colour = element.evaluate("e => getComputedStyle(e).color")
    channels = [float(c) for c in re.findall(r"[\d.]+", colour)]
    assert len(channels) == 3 or channels[3] == 1, colour  # opaque text: its colour is shown
    text = luminance(*channels[:3])
    element.evaluate("e => { e.style.color = 'transparent'; e.style.textShadow = 'none'; }")
    try:
        behind = png_pixels(element.screenshot(animations="disabled", scale="css"))
    finally:
        element.evaluate("e => { e.style.color = ''; e.style.textShadow = ''; }")
    return min(contrast(text, luminance(*pixel)) for pixel in behind)


def spoken_words(text: str) -> list[str]:
    """The words of a text, as speech matches them: letters and digits, in lower case."""
    return re.findall(r"[^\W_]+", text.lower())


def says_what_it_shows(name: str, shown: str) -> bool:
    """Whether an accessible name holds the words shown on the control, in their order and
    together, so that a voice control user can say what they see (WCAG 2.5.3, label in name)."""
    name_words, shown_words = spoken_words(name), spoken_words(shown)
    width = len(shown_words)
    return any(
        name_words[start : start + width] == shown_words
        for start in range(len(name_words) - width + 1)
    )


def test_the_footer_text_is_readable_against_the_page(tab: Any) -> None:
    tab.goto("/")
    assert tab.locator("footer").evaluate(CONTRAST) >= 4.5


def test_the_header_balance_link_is_named_by_the_amounts_it_shows(tab: Any) -> None:
    sign_up(tab, "named")
    shown = " ".join(tab.inner_text("[data-testid=header-balance]").split())
    assert "1,000" in shown
    # Playwright matches the accessible name Chromium computed.
    assert tab.get_by_role("link", name=shown).count() == 1


@pytest.mark.parametrize("language", ["en", "fi", "nb", "pt"])
def test_the_replay_buttons_are_named_by_the_words_they_show(tab: Any, language: str) -> None:
    sign_up(tab, "replayer")
    tab.goto("/sota")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    choose_language(tab, language)
    for width in (1280, 360):  # phones show the symbols and the shortest words only
        tab.set_viewport_size({"width": width, "height": 800})
        for button in tab.locator(".controls button").all():
            name = button.get_attribute("aria-label") or button.inner_text()
            shown = button.inner_text()
            assert says_what_it_shows(name, shown), (language, width, name, shown)


def heading_levels(page: Any) -> list[int]:
    """The levels of the headings a screen reader lists, in page order."""
    return list(
        page.evaluate(
            "() => Array.from(document.querySelectorAll('h1, h2, h3, h4, h5, h6'))"
            ".filter(h => h.getClientRects().length && h.closest('[aria-hidden=true]') === null)"
            ".map(h => Number(h.tagName[1]))"
        )
    )


def assert_no_level_skipped(levels: list[int]) -> None:
    assert levels and levels[0] == 1, levels
    for before, after in itertools.pairwise(levels):
        assert after <= before + 1, levels


def test_the_casino_war_table_skips_no_heading_level(tab: Any, live_server: LiveServer) -> None:
    username = sign_up(tab, "outline")
    plant_server_seed(live_server.app, username, {0: True})
    tab.goto("/casino-war")
    assert_no_level_skipped(heading_levels(tab))
    tab.click("#deal")
    tab.wait_for_selector("#decision")
    assert_no_level_skipped(heading_levels(tab))
    tab.click("#decision button[value=war]")
    wait_for_round(tab, 0)
    tab.wait_for_selector("#war-zone:not([hidden])")
    assert_no_level_skipped(heading_levels(tab))


def test_the_end_of_a_sota_replay_is_announced(tab: Any) -> None:
    sign_up(tab, "listener")
    tab.goto("/sota")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    # A live region announces what appears in it, so it is on the page before the result is.
    region = tab.locator("#game-result").evaluate(
        """result => {
            const region = result.parentElement.closest('[aria-live], [role=status]');
            return region && {
                shown: region.getClientRects().length > 0,
                live: region.getAttribute('aria-live'),
            };
        }"""
    )
    assert tab.locator("#game-result").is_hidden()
    assert region == {"shown": True, "live": "polite"}
    tab.locator("body").press("End")
    assert tab.locator("#game-result").is_visible()


def test_the_language_picker_waits_for_enter_while_stepped_with_the_arrow_keys(tab: Any) -> None:
    tab.goto("/")
    tab.focus("#language-choice")
    # English, suomi, norsk bokmål: passing through suomi must not send the page there.
    tab.keyboard.press("ArrowDown")
    tab.keyboard.press("ArrowDown")
    with tab.expect_navigation():
        tab.keyboard.press("Enter")
    assert tab.get_attribute("html", "lang") == "nb"


def spoken_cards(page: Any, selector: str) -> list[str]:
    """The names a screen reader says for the cards ``selector`` finds, in page order."""
    return list(
        page.locator(selector).evaluate_all("cards => cards.map(c => c.getAttribute('aria-label'))")
    )


def test_the_focus_stays_on_deal_after_a_round_dealt_from_the_keyboard(
    tab: Any, live_server: LiveServer
) -> None:
    username = sign_up(tab, "focused")
    plant_server_seed(live_server.app, username, {0: False, 1: True})
    tab.goto("/casino-war")
    tab.locator("#deal").focus()
    tab.keyboard.press("Enter")
    wait_for_round(tab, 0)
    tab.wait_for_selector("[data-testid=result]")
    tab.wait_for_selector("#deal:not([disabled])")
    # Not lost to the page's body: the next Enter deals again, the next Tab goes on from Deal.
    assert tab.evaluate("document.activeElement.id") == "deal"
    tab.keyboard.press("Enter")
    tab.wait_for_selector("#decision")
    assert tab.evaluate("document.activeElement.id") == "go-to-war"
    tab.keyboard.press("s")
    tab.wait_for_selector("[data-testid=result]")
    tab.wait_for_selector("#deal:not([disabled])")
    assert tab.evaluate("document.activeElement.id") == "deal"


@pytest.mark.parametrize("language", ["en", "fi"])
def test_the_casino_war_result_says_the_cards_in_words(
    tab: Any, live_server: LiveServer, language: str
) -> None:
    username = sign_up(tab, "hearing")
    plant_server_seed(live_server.app, username, {0: True})
    choose_language(tab, language)
    tab.goto("/casino-war")
    tab.click("#deal")
    tab.wait_for_selector("#decision")
    # What the live region announces when the round is drawn names the cards shown.
    said = tab.text_content("#outcome") or ""
    dealt = spoken_cards(tab, "#dealer-card .card, #player-card .card")
    assert len(dealt) == 2 and all(name in said for name in dealt), (dealt, said)
    tab.click("#decision button[value=war]")
    tab.wait_for_selector("[data-testid=result]")
    said = tab.text_content("#outcome") or ""
    war = spoken_cards(tab, "#dealer-war-card .card, #player-war-card .card")
    assert len(war) == 2 and all(name in said for name in war), (war, said)
    # The round's page, drawn by the server, says them as the script does.
    scripted = spoken_words(tab.inner_text("#outcome"))
    receipt = tab.get_attribute("[data-testid=result] a", "href") or ""
    tab.goto("/casino-war/rounds/" + receipt.rsplit("/", 1)[1])
    drawn = tab.text_content("#outcome") or ""
    assert all(name in drawn for name in dealt + war), drawn
    # Word for word (the script's blocks have no white space between them, the template's do).
    assert spoken_words(tab.inner_text("#outcome")) == scripted


def test_each_step_of_a_sota_replay_says_the_cards_laid_face_up(tab: Any) -> None:
    sign_up(tab, "stepper")
    tab.goto("/sota")
    tab.select_option("#seats", "3")
    tab.click("#play")
    tab.wait_for_url(re.compile(r".*/sota/games/\d+$"))
    names = tab.locator(".seat [data-seat-name]").all_inner_texts()
    body = tab.locator("body")
    for _ in range(6):
        body.press("ArrowRight")
        said = tab.text_content("#trick-said") or ""
        laid = 0
        for seat, name in enumerate(names):
            # The cards of this step are the ones dealt in; the last of a seat's is face up.
            up = spoken_cards(
                tab, f".seat[data-seat='{seat}'] .step:has(> .dealt) > .card:last-child"
            )
            laid += len(up)
            assert all(f"{name}: {card}" in said for card in up), (name, up, said)
        assert laid >= 2, said


def test_the_balances_beside_a_table_are_a_group_named_for_screen_readers(tab: Any) -> None:
    sign_up(tab, "grouped")
    for url in ("/casino-war", "/sota"):
        tab.goto(url)
        # A name on a plain <div> is not read out: the group's role carries it.
        assert tab.get_by_role("group", name="your balances").count() == 1, url


def test_a_refused_password_change_marks_and_focuses_the_field_to_fix(tab: Any) -> None:
    sign_up(tab, "changer")
    tab.goto("/auth/password")
    tab.expected_refusals += [401, 422]
    new = "a new long passphrase"
    tab.fill("#old", "not the password at all")
    tab.fill("#new", new)
    tab.fill("#confirm", new)
    submit_and_load(tab)
    assert "current password is wrong" in tab.inner_text("[role=alert]")
    assert focused_id(tab) == "old"
    assert tab.get_attribute("#old", "aria-invalid") == "true"
    assert "form-error" in (tab.get_attribute("#old", "aria-describedby") or "").split()
    assert tab.get_attribute("#new", "aria-invalid") is None
    tab.fill("#old", PASSWORD)
    tab.fill("#new", "aaaaaaaaaaaa")
    tab.fill("#confirm", "aaaaaaaaaaaa")
    submit_and_load(tab)
    assert "Password is too weak" in tab.inner_text("[role=alert]")
    assert focused_id(tab) == "new"
    assert tab.get_attribute("#new", "aria-invalid") == "true"
    assert tab.get_attribute("#new", "aria-describedby") == "form-error new-help"
    assert tab.get_attribute("#old", "aria-invalid") is None
    assert tab.expected_refusals == []


def test_a_refused_adjustment_marks_and_focuses_the_field_to_fix(
    tab: Any, live_server: LiveServer
) -> None:
    player, operator = fresh_name("adjusted"), fresh_name("adjuster")
    seed_a_player(live_server.app, player)
    made = live_server.app.test_cli_runner().invoke(
        args=["create-operator", operator], input=f"{PASSWORD}\n"
    )
    assert made.exit_code == 0, made.output
    tab.goto("/auth/login")
    tab.fill("input[name=username]", operator)
    tab.fill("input[name=password]", PASSWORD)
    tab.click("main button[type=submit]")
    tab.goto(f"/operator/players?q={player}")
    tab.click(f"table.users-table >> text={player}")
    tab.expected_refusals += [422]
    tab.fill("#amount", "twelve")
    tab.fill("#reason", "goodwill")
    with tab.expect_navigation(wait_until="load"):
        tab.click("text=Review adjustment")
    assert "Type the amount in chips" in tab.inner_text("[role=alert]")
    assert focused_id(tab) == "amount"
    assert tab.get_attribute("#amount", "aria-invalid") == "true"
    assert tab.get_attribute("#amount", "aria-describedby") == "adjust-error"
    assert tab.get_attribute("#reason", "aria-invalid") is None
    assert tab.expected_refusals == []


def test_a_refused_decision_gives_the_focus_back_to_the_choice_pressed(
    tab: Any, live_server: LiveServer
) -> None:
    """The buttons are disabled while a decision is sent; refused (another tab decided first,
    the connection dropped), they were enabled again with the focus left on the page's body."""
    username = sign_up(tab, "refocused")
    plant_server_seed(live_server.app, username, {0: True})
    tab.goto("/casino-war")
    tab.click("#deal")
    tab.wait_for_selector("#decision")
    tab.expected_failures.append("/decision")
    refusal = {"error": {"code": "round_settled", "message": "the round is settled"}}
    tab.route(
        "**/decision",
        lambda route: route.fulfill(status=409, json=refusal),
    )
    tab.locator("#decision button[value=war]").focus()
    tab.keyboard.press("Enter")
    tab.wait_for_selector("#form-error:not([hidden])")
    tab.wait_for_selector("#decision button[value=war]:not([disabled])")
    assert tab.evaluate("document.activeElement.value") == "war"


#: The gold words drawn between cards: "vs" between the two hands, "war" between the hands of
#: a Sota war's step, and the war's titles over the Casino War cards.
GOLD_BETWEEN_CARDS = ".arena > .versus, .war-zone :is(h2, h3)"
#: Those and the felt's other gold text: its links (the rules, a round's receipt).
GOLD_ON_THE_FELT = f"{GOLD_BETWEEN_CARDS}, .felt a"


def needed_contrast(element: Any) -> float:
    """WCAG AA's least contrast for the element's text: 3 for large text (24 px, or 18.66 px
    bold), 4.5 for the rest."""
    size, weight = element.evaluate(
        "e => [parseFloat(getComputedStyle(e).fontSize), Number(getComputedStyle(e).fontWeight)]"
    )
    return 3.0 if size >= 24 or (size >= 18.66 and weight >= 700) else 4.5


def test_the_gold_words_between_the_cards_are_readable_on_the_felt(
    tab: Any, live_server: LiveServer
) -> None:
    """The gold "vs", "war" and the war's titles read 2.6 to 3.4 against the felt's lighter
    middle, below the 4.5 their size needs, and the felt's links 4.3. Measured against the
    pixels behind them, on a laptop and a phone (the site has one colour scheme)."""
    username = sign_up(tab, "goldreader")
    plant_server_seed(live_server.app, username, {0: True})
    tab.goto("/casino-war")
    tab.click("#deal")
    tab.wait_for_selector("#decision")
    tab.click("#decision button[value=war]")
    wait_for_round(tab, 0)
    tab.wait_for_selector("[data-testid=result]")
    receipt = tab.get_attribute("[data-testid=result] a", "href") or ""
    war_round = "/casino-war/rounds/" + receipt.rsplit("/", 1)[1]
    found: dict[tuple[str, int, str], tuple[float, float]] = {}
    for path in (war_round, "/rules/casino-war", "/rules/sota", "/casino-war"):
        for width in (1280, 390):
            tab.set_viewport_size({"width": width, "height": 860})
            tab.goto(path)
            words = [w for w in tab.locator(GOLD_ON_THE_FELT).all() if w.is_visible()]
            assert words, (path, width)
            for word in words:
                shown = " ".join(word.inner_text().split())
                found[path, width, shown] = (
                    round(contrast_with_what_is_behind(word), 2),
                    needed_contrast(word),
                )
    shown_words = {shown for _, _, shown in found}
    assert {"vs", "war", "WAR!", "How to play: rules, payouts and the house edge"} <= shown_words
    unreadable = [
        f"{where}: {got[0]} < {got[1]}" for where, got in found.items() if got[0] < got[1]
    ]
    assert unreadable == [], "\n".join(unreadable)
