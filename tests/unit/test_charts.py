"""The SVG charts: well-formed, CSP-safe, exact about their data."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from fractions import Fraction
from functools import partial

import pytest

from sota_casino.web.charts import NARROW
from sota_casino.web.charts import WIDE
from sota_casino.web.charts import Frame
from sota_casino.web.charts import Reference
from sota_casino.web.charts import Series
from sota_casino.web.charts import bar_chart
from sota_casino.web.charts import both_sizes
from sota_casino.web.charts import line_chart
from sota_casino.web.format import percent
from sota_casino.web.format import whole_number

SVG = "{http://www.w3.org/2000/svg}"


def _edges() -> list[Series]:
    return [
        Series(
            "casino_war",
            (("05-01", Fraction(3, 100)), ("05-02", None), ("05-03", Fraction(-1, 50))),
        ),
        Series("sota", (("05-01", Fraction(1, 10)), ("05-02", Fraction(0)))),
    ]


def test_line_chart_is_well_formed_svg_without_style_or_script() -> None:
    svg = str(
        line_chart(
            _edges(),
            title="Realized edge",
            references=[Reference("theory", Fraction(288, 10000), "casino_war")],
        )
    )
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert "style" not in svg and "<script" not in svg and "javascript:" not in svg
    assert root.find(f"{SVG}title").text == "Realized edge"


def test_line_chart_draws_one_dot_per_known_value_and_breaks_at_gaps() -> None:
    root = ET.fromstring(str(line_chart(_edges(), title="t")))
    groups = list(root.iter(f"{SVG}g"))
    war = next(g for g in groups if g.get("data-series") == "casino_war")
    assert len(war.findall(f"{SVG}path")) == 2  # a dot is the round cap of a stroke
    assert war.findall(f"{SVG}polyline") == []  # the gap leaves two lone points, no line
    sota = next(g for g in groups if g.get("data-series") == "sota")
    assert len(sota.findall(f"{SVG}polyline")) == 1


def test_higher_values_are_drawn_higher() -> None:
    root = ET.fromstring(str(line_chart(_edges(), title="t")))
    war = next(g for g in root.iter(f"{SVG}g") if g.get("data-series") == "casino_war")
    # A dot is drawn "M<x> <y>h0": a round cap of a stroke of no length.
    first, last = (float((dot.get("d") or "")[:-2].split()[1]) for dot in war.iter(f"{SVG}path"))
    assert first < last  # +3 % sits above −2 % (SVG y grows downwards)


def test_tooltips_carry_exact_values() -> None:
    svg = str(line_chart(_edges(), title="t"))
    assert "casino_war 05-01: 3.00\u00a0%" in svg
    assert "casino_war 05-03: −2.00\u00a0%" in svg


def test_names_are_escaped() -> None:
    svg = str(line_chart([Series("<b>&", (("a", 1),))], title="<x>", value_format="plain"))
    assert "<b>" not in svg and "&lt;b&gt;&amp;" in svg
    ET.fromstring(svg)


def test_bar_chart_colours_losses_red_and_wins_green() -> None:
    root = ET.fromstring(str(bar_chart([("05-01", 1500), ("05-02", -300)], title="House")))
    fills = [r.get("fill") for r in root.iter(f"{SVG}rect") if r.get("class") == "bar"]
    assert fills == ["#1b7f4b", "#c0262d"]


def test_empty_and_flat_data_still_render() -> None:
    ET.fromstring(str(line_chart([], title="nothing yet")))
    ET.fromstring(str(bar_chart([("only", 0)], title="flat")))


def test_the_named_formats_are_the_site_s_own_exact_ones() -> None:
    # Outside a request they speak English, the language the site falls back to.
    assert percent(Fraction(288, 10000)) == "2.88\u00a0%"
    assert percent(Fraction(-1, 3)) == "−33.33\u00a0%"
    assert whole_number(-1234567) == "−1,234,567"
    bars = ET.fromstring(str(bar_chart([("05-01", -1234567)], title="t")))
    assert "05-01: −1,234,567" in [title.text for title in bars.iter(f"{SVG}title")]


def _shown_x_labels(root: ET.Element, labels: set[str]) -> list[tuple[float, str]]:
    return [
        (float(text.get("x") or 0), text.text or "")
        for text in root.findall(f"{SVG}text")
        if text.text in labels
    ]


def test_time_labels_on_the_x_axis_never_overlap() -> None:
    labels = [f"09:31:{second:02d}" for second in range(40)]
    series = Series("balance", tuple((label, index) for index, label in enumerate(labels)))
    for frame in (WIDE, NARROW):
        root = ET.fromstring(str(line_chart([series], title="t", frames=(frame,))))
        shown = _shown_x_labels(root, set(labels))
        assert len(shown) >= 2
        for (x0, left), (x1, right) in zip(shown, shown[1:], strict=False):
            # At 12 px, no character of these labels is wider than 7.5 px.
            assert x1 - x0 >= 7.5 * (len(left) + len(right)) / 2, (left, right)


def test_points_that_share_a_label_are_each_drawn_and_the_label_is_shown_once() -> None:
    # Money moves in one second (a bet, then its settlement) were labelled "09:31:17 (2)" and
    # "(3)" on the axis, so that the chart could tell them apart.
    times = ["09:31:16", "09:31:17", "09:31:17", "09:31:17", "09:31:18"]
    series = Series("balance", tuple((time, index) for index, time in enumerate(times)))
    root = ET.fromstring(str(line_chart([series], title="t", value_format="plain")))
    assert [label for _, label in _shown_x_labels(root, set(times))] == sorted(set(times))
    assert "(2)" not in ET.tostring(root, encoding="unicode")
    tooltips = [t.text for t in root.iter(f"{SVG}title")][1:]
    assert tooltips == [f"balance {time}: {index}" for index, time in enumerate(times)]
    # Each move has a place of its own along the axis (they were stacked at their label's).
    line = root.find(f".//{SVG}polyline")
    assert line is not None
    xs = [float(point.split(",")[0]) for point in (line.get("points") or "").split()]
    assert len(xs) == len(times) and xs == sorted(set(xs))


def test_a_long_run_of_moves_in_few_minutes_is_labelled_across_the_axis() -> None:
    # 240 points, eight a minute: labelling every nth point, as the axis once did, would have
    # fallen on repeats (unlabelled) nearly every time.
    times = [f"12-01 09:{minute:02d}" for minute in range(30) for _ in range(8)]
    series = Series("balance", tuple((time, index) for index, time in enumerate(times)))
    for frame in (WIDE, NARROW):
        root = ET.fromstring(str(line_chart([series], title="t", frames=(frame,))))
        shown = [label for _, label in _shown_x_labels(root, set(times))]
        assert shown[0] == times[0] and shown[-1] == times[-1]
        assert len(shown) >= 3 and shown == sorted(set(shown)), shown


def test_values_take_the_format_given() -> None:
    series = Series("balance", (("a", 0), ("b", 1000)))
    svg = str(line_chart([series], title="t", value_format=lambda v: f"<{v}>"))
    assert "&lt;1000&gt;" in svg


def test_both_sizes_draws_the_chart_wide_and_narrow_with_its_data_sent_once() -> None:
    bars = [("05-01", 1500), ("05-02", -300)]
    svg = str(both_sizes(partial(bar_chart, bars, title="House")))
    wide, narrow = ET.fromstring(f"<both>{svg}</both>")
    assert (wide.get("class"), narrow.get("class")) == ("chart wide", "chart narrow")
    assert wide.get("viewBox") == f"0 0 {WIDE.width} {WIDE.height}"
    assert narrow.get("viewBox") == f"0 0 {NARROW.width} {NARROW.height}"
    tooltips = [[t.text for t in chart.iter(f"{SVG}title")] for chart in (wide, narrow)]
    assert tooltips == [["House", "05-01: 1,500", "05-02: −300"], ["House"]]
    # The narrow drawing shows the wide one's bars (each drawing has its own axes).
    data = next(g for g in wide.iter(f"{SVG}g") if g.get("id"))
    assert len(data.findall(f"{SVG}rect")) == 2
    shown = narrow.find(f"{SVG}use")
    assert shown is not None and shown.get("href") == f"#{data.get('id')}"
    labels = [[t.text for t in chart.iter(f"{SVG}text")] for chart in (wide, narrow)]
    assert "05-01" in labels[0] and "05-01" in labels[1]


@pytest.mark.parametrize("variant", ["wide", "narrow"])
def test_the_data_drawn_once_lands_on_each_drawing_s_own_axis(variant: str) -> None:
    # The data spans −300 to 1,500; the axes, −500 to 1,500 in steps of 500 (wide) or 1,000.
    svg = str(both_sizes(partial(bar_chart, [("05-01", 1500), ("05-02", -300)], title="House")))
    wide, narrow = ET.fromstring(f"<both>{svg}</both>")
    chart = wide if variant == "wide" else narrow
    placed = next(e.get("transform") or "" for e in chart.iter() if e.get("transform"))
    _, _, _, down, _, top = (float(n) for n in placed.removeprefix("matrix(")[:-1].split())
    tick = {t.text: float(t.get("y") or 0) for t in chart.iter(f"{SVG}text") if t.text}
    at_minus_300 = tick["0"] + (tick["−500"] - tick["0"]) * 300 / 500
    gain, loss = (bar for bar in wide.iter(f"{SVG}rect") if bar.get("class") == "bar")
    for bar, (high, low) in ((gain, (tick["1,500"], tick["0"])), (loss, (tick["0"], at_minus_300))):
        y, height = float(bar.get("y") or 0), float(bar.get("height") or 0)
        assert top + down * y == pytest.approx(high, abs=0.1)
        assert top + down * (y + height) == pytest.approx(low, abs=0.1)


def test_the_narrow_drawing_s_labels_are_readable_in_a_360_px_phone_s_panel() -> None:
    # A 360 px phone's panel is 308.8 px wide (main's and the panel's padding); the 720-unit
    # drawing shrunk into it drew its 12-unit labels 5 px high.
    root = ET.fromstring(str(bar_chart([("05-01", 1)], title="t", frames=(NARROW,))))
    assert float(root.get("font-size") or 0) * 308.8 / NARROW.width >= 11


@pytest.mark.parametrize("frame", [Frame(), NARROW])
def test_the_x_labels_at_either_end_are_drawn_whole(frame: Frame) -> None:
    labels = ["12-01 13:46", "12-01 13:47", "12-02 09:15"]
    series = Series("balance", tuple((label, index) for index, label in enumerate(labels)))
    root = ET.fromstring(
        str(line_chart([series], title="t", value_format="plain", frames=(frame,)))
    )
    drawn = _shown_x_labels(root, set(labels))
    assert drawn[0][1] == labels[0] and drawn[-1][1] == labels[-1]
    for x, label in drawn:
        half = 7.5 * len(label) / 2  # no character of these is wider than 7.5 units at 12
        assert 0 <= x - half and x + half <= frame.width, (label, x)


def test_the_legend_goes_on_to_a_new_row_instead_of_past_the_edge() -> None:
    svg = line_chart(
        _edges(),
        title="t",
        references=[Reference("Casino War theoretical", 0)],
        frames=(NARROW,),
    )
    names = {"casino_war", "sota", "Casino War theoretical"}
    legend = [t for t in ET.fromstring(str(svg)).findall(f"{SVG}text") if t.text in names]
    assert len(legend) == 3
    for text in legend:
        assert float(text.get("x") or 0) + 7 * len(text.text or "") <= NARROW.width, text.text
        assert float(text.get("y") or 0) <= NARROW.height
    assert len({text.get("y") for text in legend}) == 2


def test_the_value_labels_get_the_room_they_need_on_the_left() -> None:
    series = Series("edge", (("05-01", Fraction(-1)), ("05-02", Fraction(1, 2))))
    root = ET.fromstring(str(line_chart([series], title="t", frames=(NARROW,))))
    values = [t for t in root.findall(f"{SVG}text") if t.get("text-anchor") == "end"]
    assert "−100.00\u00a0%" in [t.text for t in values]
    for text in values:  # drawn right-aligned at x, so they start at x minus their width
        assert float(text.get("x") or 0) - 7.5 * len(text.text or "") >= 0, text.text


def test_a_chart_named_by_its_shown_caption_does_not_repeat_the_caption_s_words() -> None:
    root = ET.fromstring(str(bar_chart([("05-01", 1)], title="House", caption_id="house-title")))
    assert root.get("aria-labelledby") == "house-title" and root.get("aria-label") is None
    assert root.find(f"{SVG}title") is None  # it was read again as the image's description


def _value_labels(svg: str) -> list[list[str]]:
    """The value axis's labels of each drawing, bottom up."""
    drawings = ET.fromstring(f"<both>{svg}</both>")
    return [
        [t.text or "" for t in drawing.iter(f"{SVG}text") if t.get("text-anchor") == "end"]
        for drawing in drawings
    ]


@pytest.mark.parametrize("values", [[0], [0, 0], [1], [0, 2], [-1, 1], [Fraction(1, 2), 2], [0, 3]])
def test_a_whole_number_axis_with_a_tiny_range_steps_by_whole_numbers(values: list[int]) -> None:
    # A day of 0 sweets on the ledger drew its axis "0, 0, 0, 1, 1, 1": steps of 0.2 and 0.5
    # written as whole numbers repeat, and say that two heights are the same value.
    bars = [(f"05-0{day}", value) for day, value in enumerate(values, 1)]
    series = Series("sweets", tuple(bars))
    for draw in (partial(bar_chart, bars), partial(line_chart, [series])):
        svg = str(both_sizes(partial(draw, title="t", value_format=whole_number)))
        for labels in _value_labels(svg):
            ticks = [int(label.replace("−", "-")) for label in labels]
            steps = {high - low for low, high in zip(ticks, ticks[1:], strict=False)}
            assert len(ticks) >= 2 and len(steps) == 1 and min(steps) >= 1, labels


def test_a_percent_axis_with_a_tiny_range_repeats_no_label() -> None:
    series = Series("edge", (("05-01", Fraction(1, 10**6)), ("05-02", Fraction(3, 10**6))))
    for labels in _value_labels(str(both_sizes(partial(line_chart, [series], title="t")))):
        assert len(set(labels)) == len(labels), labels
