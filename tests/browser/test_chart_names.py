"""What a screen reader finds of the console ledger's small charts, read from Chromium's own
accessibility tree."""

from __future__ import annotations

from typing import Any

import pytest
from browser_support import LiveServer
from test_languages_in_the_browser import words
from test_layout import operator_in

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
