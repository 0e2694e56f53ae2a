"""The charts as Chromium draws and names them: each drawing shows the data sent once, and a
screen reader finds a small chart's caption once (read from Chromium's accessibility tree)."""

from __future__ import annotations

from typing import Any

import pytest
from browser_support import LiveServer
from browser_support import open_tab
from test_languages_in_the_browser import words
from test_layout import operator_in
from test_narrow_phones import a_player_with_rounds

pytestmark = pytest.mark.browser

TITLES = ("Casino War: house result by day (chips)", "Sota: house result by day (sweets)")


def spoken(page: Any, phrase: str) -> list[tuple[str, str]]:
    """Each part of the page's accessibility tree that says ``phrase``, as its name or its
    description: ``(role, "name" or "description")`` (a text's line boxes are its parts)."""
    tree = page.context.new_cdp_session(page).send("Accessibility.getFullAXTree")["nodes"]
    return [
        (node["role"]["value"], field)
        for node in tree
        if not node.get("ignored") and node["role"]["value"] != "InlineTextBox"
        for field in ("name", "description")
        if phrase in str(node.get(field, {}).get("value", ""))
    ]


@pytest.mark.parametrize("language", ("en", "fi", "nb", "pt"))
def test_a_small_chart_is_named_once_by_its_caption(
    tab: Any, live_server: LiveServer, language: str
) -> None:
    """The visible caption and the drawing's SVG title said the same words, so a screen reader
    read them twice: the caption names the drawing, and is not read again as text."""
    operator_in(tab, live_server, language)
    for width in (360, 1600):  # the narrow drawing, then the wide one
        tab.set_viewport_size({"width": width, "height": 900})
        tab.goto("/operator/ledger")
        for title in TITLES:
            assert spoken(tab, words(language).gettext(title)) == [("image", "name")], width


#: For each chart shown: how many of its bars and dots (drawn once, in the wide drawing) are
#: under the screen point where the drawing shown puts them, and how many there are.
MARKS_HIT = """() => [...document.querySelectorAll("svg.chart")]
  .filter(svg => svg.checkVisibility())
  .map(svg => {
    svg.scrollIntoView({block: "center"});
    const use = svg.querySelector("use");
    const data = use ? document.querySelector(use.getAttribute("href"))
                     : svg.querySelector("g[id]");
    const placed = (use || data.parentNode).getScreenCTM();
    const marks = [...data.querySelectorAll("rect.bar, g.series path")]
      .filter(mark => mark.tagName !== "rect" || Number(mark.getAttribute("height")) > 2);
    const hit = marks.filter(mark => {
      const [x, y] = mark.tagName === "rect"
        ? [Number(mark.getAttribute("x")) + Number(mark.getAttribute("width")) / 2,
           Number(mark.getAttribute("y")) + Number(mark.getAttribute("height")) / 2]
        : mark.getAttribute("d").slice(1, -2).split(" ").map(Number);
      const point = new DOMPoint(x, y).matrixTransform(placed);
      const found = document.elementFromPoint(point.x, point.y);
      return use ? found === use : data.contains(found);
    });
    return {name: svg.getAttribute("aria-label") || svg.getAttribute("aria-labelledby"),
            variant: svg.classList.contains("wide") ? "wide" : "narrow",
            marks: marks.length, hit: hit.length};
  })"""


@pytest.mark.parametrize("width", (360, 1280))
def test_each_drawing_shows_the_data_sent_once(
    chromium: Any, live_server: LiveServer, width: int
) -> None:
    """The page sends a chart's bars and dots once, in its wide drawing; the narrow one shows
    them by reference (``<use>``), also where the wide one is hidden, as on a phone."""
    drawn: list[dict[str, Any]] = []
    viewport = {"width": width, "height": 740}
    for staff in (False, True):
        tabs = open_tab(chromium, live_server, viewport=viewport)
        page = next(tabs)
        if staff:
            operator_in(page, live_server, "en")
            page.goto("/operator/ledger")
        else:
            a_player_with_rounds(page, live_server, "en")
            page.goto("/stats")
        drawn += page.evaluate(MARKS_HIT)
        next(tabs, None)
    marks = {chart["variant"]: 0 for chart in drawn}
    for chart in drawn:  # a bar of nought has no height to find
        marks[chart["variant"]] += chart["marks"]
    assert list(marks) == (["narrow"] if width == 360 else ["wide", "narrow"]), drawn
    assert all(count > 0 for count in marks.values()), drawn
    assert [chart for chart in drawn if chart["hit"] != chart["marks"]] == []
