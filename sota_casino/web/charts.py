"""Small server-rendered SVG charts: no JavaScript, no inline ``style`` attributes.

The Content-Security-Policy forbids inline scripts and styles, so every colour and stroke is an
SVG presentation attribute (``fill``, ``stroke``), which CSP does not govern. Charts are pure
functions of their data: the same data gives the same bytes, which keeps them testable.

An SVG scales its text with its width, so one drawing cannot suit both a laptop and a phone: a
720-unit chart shrunk to a 360 px phone drew its 12-unit labels 6 px high. :func:`both_sizes`
draws a chart twice, for a wide panel and a narrow one, and the stylesheet shows the one that
fits its figure (a container query), so the labels stay 11 px high or more on a phone. Only the
axes, labels and legend are drawn twice: the data (lines, dots, bars and their tooltips, most of
a chart's bytes) is drawn once, and each drawing stretches it onto its own plot area.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from fractions import Fraction
from typing import Final

from markupsafe import Markup
from markupsafe import escape

from .format import percent
from .format import whole_number

#: The widest a character of an axis label is drawn at 12 px, and the room between labels.
LABEL_CHARACTER = Fraction(15, 2)
LABEL_GAP = 8

#: Colours of the series, in order (colour-blind-safe Okabe–Ito palette).
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9")

Number = int | Fraction
Format = Callable[[Number], str]
Scale = Callable[[Number], Fraction]


@dataclass(frozen=True, slots=True)
class Series:
    """One line of a chart: a name and its ``(x label, value)`` points, in x order.

    A value of ``None`` leaves a gap (no data that day). A label may come again in one series:
    that is a point of its own, after the first (two money moves in one second), which the
    axis leaves unlabelled and its tooltip names.
    """

    name: str
    points: tuple[tuple[str, Number | None], ...]


@dataclass(frozen=True, slots=True)
class Reference:
    """A horizontal dashed line across the chart, such as a theoretical value."""

    name: str
    value: Number
    colour_of: str = ""  # the series whose colour it takes; "" for grey


@dataclass(frozen=True, slots=True)
class Frame:
    """The drawing area of a chart, in SVG user units."""

    width: int = 720
    height: int = 280
    left: int = 84
    right: int = 16
    top: int = 16
    bottom: int = 56
    ticks: int = 5
    #: The class the stylesheet picks a drawing by (``"wide"`` or ``"narrow"``), or ``""``.
    variant: str = ""

    @property
    def plot_width(self) -> int:
        return self.width - self.left - self.right

    @property
    def plot_height(self) -> int:
        return self.height - self.top - self.bottom


#: The drawings :func:`both_sizes` makes: the wide one for a laptop's panel; the narrow one,
#: nearly as wide in units as a phone's panel is in pixels, for a phone or half a laptop's panel.
WIDE: Final = Frame(variant="wide")
NARROW: Final = Frame(
    width=320, height=260, left=64, right=12, top=12, bottom=72, ticks=4, variant="narrow"
)


def both_sizes(draw: Callable[..., Markup]) -> Markup:
    """Return the chart ``draw(frames=...)`` makes in :data:`WIDE` and :data:`NARROW` (``draw``
    is :func:`line_chart` or :func:`bar_chart` with all but the frames given).

    The stylesheet shows one of the two, by the width of the figure holding them.
    """
    return draw(frames=(WIDE, NARROW))


#: The data of a chart is drawn once, in whole units of a square this many units a side (the
#: plot area, top down), and each drawing stretches that square onto its own plot area.
UNIT: Final = 10_000
#: A stroke of the data keeps its width on the screen however a drawing stretches the data.
_UNSTRETCHED: Final = 'vector-effect="non-scaling-stroke"'


@dataclass(frozen=True, slots=True)
class _Extent:
    """The values a chart's data spans (and 0), which the data's square spans top to bottom."""

    low: Fraction
    high: Fraction

    @classmethod
    def of(cls, values: Sequence[Fraction]) -> _Extent:
        low, high = min([Fraction(0), *values]), max([Fraction(0), *values])
        return cls(low, high if high > low else low + 1)

    def y(self, value: Number) -> Fraction:
        """The height of ``value`` in the data's square (from its top)."""
        return UNIT * (self.high - Fraction(value)) / (self.high - self.low)


@dataclass(frozen=True, slots=True)
class _Layout:
    """One drawing's frame and its value axis, from ``low`` to ``high`` in ticks of ``step``."""

    frame: Frame
    low: Fraction
    high: Fraction
    step: Fraction

    @classmethod
    def of(cls, frame: Frame, values: Sequence[Fraction], fmt: Format) -> _Layout:
        low, high, step = _nice_range(values, frame.ticks, fmt)
        return cls(_room_for_values(frame, low, high, step, fmt), low, high, step)

    def x(self, unit: Fraction) -> Fraction:
        """Where a point ``unit`` across the data's square stands in this drawing."""
        return self.frame.left + self.frame.plot_width * unit / UNIT

    def y(self, value: Number) -> Fraction:
        share = (Fraction(value) - self.low) / (self.high - self.low)
        return self.frame.top + self.frame.plot_height * (1 - share)

    def transform(self, extent: _Extent) -> str:
        """The matrix that lays the data's square onto this drawing's plot area."""
        across = Fraction(self.frame.plot_width, UNIT)
        down = (self.y(extent.low) - self.y(extent.high)) / UNIT
        numbers = (across, 0, 0, down, self.frame.left, self.y(extent.high))
        # Six places: the data's square is ten thousand units a side, and a scale rounded to
        # four put a bar's far end a third of a pixel off its tick.
        return "matrix(" + " ".join(_coordinate(Fraction(n), 6) for n in numbers) + ")"


def _drawings(
    layouts: Sequence[_Layout],
    extent: _Extent,
    data: str,
    around: Callable[[_Layout], tuple[list[str], list[str]]],
    title: str,
    caption_id: str,
) -> Markup:
    """Return a drawing per layout: ``around(layout)`` gives what goes under the data (axes,
    reference lines) and over it (the legend).

    The first drawing holds the data, drawn once; the others show it by reference (``<use>``),
    so a page that sends a chart in two sizes sends its points and their tooltips once.
    """
    name = "chart-" + hashlib.sha256(f"{title}\n{data}".encode()).hexdigest()[:12]
    drawings: list[str] = []
    for index, layout in enumerate(layouts):
        under, over = around(layout)
        placed = f'transform="{layout.transform(extent)}"'
        if index == 0:
            shown = f'<g {placed}><g id="{name}">{data}</g></g>'
        else:
            shown = f'<use href="#{name}" {placed}/>'
        drawings += [_open_svg(layout.frame, title, caption_id), *under, shown, *over, "</svg>"]
    return Markup("".join(drawings))


def _formatter(value_format: str | Format) -> Format:
    """The formatter named (``"percent"`` or ``"plain"``: the site's own, in the request's
    language), or the one given, such as the console's way of writing chips."""
    if callable(value_format):
        return value_format
    return percent if value_format == "percent" else whole_number


def _coordinate(value: Fraction, places: int = 1) -> str:
    """Write a coordinate with ``places`` decimals: enough for the eye, stable for tests."""
    if places == 0:
        return str(round(value))
    scaled = round(value * 10**places)
    sign = "-" if scaled < 0 else ""
    whole, part = divmod(abs(scaled), 10**places)
    return f"{sign}{whole}.{part:0{places}d}"


#: The decades of round steps :func:`_nice_range` tries: up to a million times the plainest
#: step, which writes apart percentages of two decimals over a range of a millionth.
_STEP_DECADES: Final = 7


def _nice_range(
    values: Sequence[Fraction], ticks: int, fmt: Format
) -> tuple[Fraction, Fraction, Fraction]:
    """Return ``(low, high, step)``: a range covering ``values`` (and 0) on round tick steps.

    The step is the finest round one that gives about ``ticks`` ticks and writes no two ticks
    alike: a whole-number axis over 0 to 1 in steps of 0.2 read "0, 0, 0, 1, 1, 1", two
    heights named the same value, so it steps by whole numbers instead."""
    extent = _Extent.of(values)
    low, high = extent.low, extent.high
    raw = (high - low) / ticks
    magnitude = Fraction(1)
    while magnitude * 10 <= raw:
        magnitude *= 10
    while magnitude > raw:
        magnitude /= 10
    steps = [
        m * magnitude * 10**decade
        for decade in range(_STEP_DECADES)
        for m in (1, 2, 5)
        if m * magnitude * 10**decade >= raw
    ]
    ranges = [((low / s).__floor__() * s, (high / s).__ceil__() * s, s) for s in steps]
    # A format that writes every value alike keeps the plainest step.
    return next((r for r in ranges if _written_apart(_ticks(*r), fmt)), ranges[0])


def _written_apart(ticks: Sequence[Fraction], fmt: Format) -> bool:
    """Whether ``fmt`` writes each of ``ticks`` differently."""
    labels = [fmt(tick) for tick in ticks]
    return len(set(labels)) == len(labels)


def _ticks(low: Fraction, high: Fraction, step: Fraction) -> list[Fraction]:
    count = int((high - low) / step)
    return [low + step * i for i in range(count + 1)]


def _room_for_values(
    frame: Frame, low: Fraction, high: Fraction, step: Fraction, fmt: Format
) -> Frame:
    """Widen the left margin where the widest value label needs it (``−100.00 %`` in the
    narrow drawing), so no label is cut at the chart's left edge."""
    widest = max(len(fmt(tick)) for tick in _ticks(low, high, step))
    need = math.ceil(widest * LABEL_CHARACTER) + 8
    return replace(frame, left=need) if need > frame.left else frame


def _colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    references: Sequence[Reference] = (),
    value_format: str | Format = "percent",
    frames: Sequence[Frame] = (Frame(),),
    caption_id: str = "",
) -> Markup:
    """Render ``series`` as an SVG line chart with a legend and optional reference lines, a
    drawing per frame (see :func:`_drawings`).

    :param title: the accessible name of the chart (``<title>`` and ``aria-label``).
    :param value_format: ``"percent"`` for ratios, ``"plain"`` for whole numbers.
    :param caption_id: the id of a caption shown with the chart that names it instead of
        ``title`` (see :func:`_open_svg`).
    """
    fmt = _formatter(value_format)
    keys = _x_keys(series)
    values = [Fraction(v) for s in series for _, v in s.points if v is not None]
    values += [Fraction(r.value) for r in references]
    extent = _Extent.of(values)
    colours = {s.name: _colour(i) for i, s in enumerate(series)}

    def across(index: int) -> Fraction:
        if len(keys) == 1:
            return Fraction(UNIT, 2)
        return Fraction(UNIT * index, len(keys) - 1)

    data = "".join(
        part for s in series for part in _polyline(s, keys, across, extent.y, colours[s.name], fmt)
    )

    def around(layout: _Layout) -> tuple[list[str], list[str]]:
        frame = layout.frame
        labels = [name if not before else "" for name, before in keys]
        under = _y_axis(layout, fmt) + _x_axis(frame, labels, lambda i: layout.x(across(i)))
        for ref in references:
            colour = colours.get(ref.colour_of, "#777777")
            y = _coordinate(layout.y(ref.value))
            under.append(
                f'<line class="reference" x1="{frame.left}" y1="{y}" '
                f'x2="{frame.left + frame.plot_width}" y2="{y}" stroke="{colour}" '
                f'stroke-width="1.5" stroke-dasharray="6 4"><title>{escape(ref.name)}: '
                f"{escape(fmt(ref.value))}</title></line>"
            )
        return under, _legend(frame, series, references, colours)

    layouts = [_Layout.of(frame, values, fmt) for frame in frames]
    return _drawings(layouts, extent, data, around, title, caption_id)


#: A bar's widest, in units of the narrowest drawing it is shown in.
BAR_WIDTH: Final = 48


def bar_chart(
    bars: Sequence[tuple[str, Number]],
    *,
    title: str,
    value_format: str | Format = "plain",
    frames: Sequence[Frame] = (Frame(),),
    caption_id: str = "",
) -> Markup:
    """Render ``(label, value)`` bars, a drawing per frame; positive bars are green, negative
    ones red (``title`` and ``caption_id`` as for :func:`line_chart`)."""
    fmt = _formatter(value_format)
    labels = [name for name, _ in bars]
    values = [Fraction(v) for _, v in bars]
    extent = _Extent.of(values)
    layouts = [_Layout.of(frame, values, fmt) for frame in frames]
    slot = Fraction(UNIT, max(len(bars), 1))
    # Three quarters of its slot, but no wider than BAR_WIDTH where the plot is narrowest.
    narrowest = min(layout.frame.plot_width for layout in layouts)
    width = min(slot * 3 / 4, Fraction(BAR_WIDTH * UNIT, narrowest))

    def across(index: int) -> Fraction:
        return slot * index + slot / 2

    data: list[str] = []
    for index, (name, value) in enumerate(bars):
        top, bottom = sorted((extent.y(value), extent.y(0)))
        colour = "#1b7f4b" if value >= 0 else "#c0262d"
        data.append(
            f'<rect class="bar" x="{_coordinate(across(index) - width / 2, 0)}" '
            f'y="{_coordinate(top, 0)}" width="{_coordinate(width, 0)}" '
            f'height="{_coordinate(bottom - top, 0)}" fill="{colour}">'
            f"<title>{escape(name)}: {escape(fmt(value))}</title></rect>"
        )

    def around(layout: _Layout) -> tuple[list[str], list[str]]:
        def x_of(index: int) -> Fraction:
            return layout.x(across(index))

        return _y_axis(layout, fmt) + _x_axis(layout.frame, labels, x_of), []

    return _drawings(layouts, extent, "".join(data), around, title, caption_id)


#: A point's place on the x axis: its label, and how many points of its series had the label
#: before it.
XKey = tuple[str, int]


def _keyed(points: Sequence[tuple[str, Number | None]]) -> list[tuple[XKey, Number | None]]:
    """Key each point by its label and how many points before it had the label."""
    before: dict[str, int] = {}
    keyed = []
    for name, value in points:
        keyed.append(((name, before.get(name, 0)), value))
        before[name] = before.get(name, 0) + 1
    return keyed


def _x_keys(series: Sequence[Series]) -> list[XKey]:
    """Return every x key of ``series`` in first-seen order."""
    seen: dict[XKey, None] = {}
    for s in series:
        for key, _ in _keyed(s.points):
            seen.setdefault(key, None)
    return list(seen)


def _open_svg(frame: Frame, title: str, caption_id: str = "") -> str:
    """Open the drawing, named ``title``, or by the caption ``caption_id`` where one is shown:
    a screen reader then hears the caption's words once, as the image's name (an SVG title
    beside it was read again as the image's description)."""
    classes = f"chart {frame.variant}" if frame.variant else "chart"
    if caption_id:
        name = f'aria-labelledby="{escape(caption_id)}"'
    else:
        name = f'aria-label="{escape(title)}"'
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{classes}" role="img" '
        f'viewBox="0 0 {frame.width} {frame.height}" width="{frame.width}" '
        f'height="{frame.height}" {name} font-family="system-ui, sans-serif" font-size="12">'
        + ("" if caption_id else f"<title>{escape(title)}</title>")
        + f'<rect x="0" y="0" width="{frame.width}" height="{frame.height}" fill="#ffffff"/>'
    )


def _y_axis(layout: _Layout, fmt: Format) -> list[str]:
    frame = layout.frame
    parts: list[str] = []
    for tick in _ticks(layout.low, layout.high, layout.step):
        y = _coordinate(layout.y(tick))
        stroke = "#888888" if tick == 0 else "#e4e4e4"
        parts.append(
            f'<line x1="{frame.left}" y1="{y}" x2="{frame.left + frame.plot_width}" y2="{y}" '
            f'stroke="{stroke}" stroke-width="1"/>'
            f'<text x="{frame.left - 6}" y="{y}" text-anchor="end" dominant-baseline="middle" '
            f'fill="#444444">{escape(fmt(tick))}</text>'
        )
    return parts


def _x_axis(frame: Frame, labels: Sequence[str], x_of: Callable[[int], Fraction]) -> list[str]:
    """Label the first and the last point, and between them each that stands clear of the last
    one labelled and of the last point (every point still has its tooltip). An empty label (a
    point that repeats the one before) is never shown, so the next time along gets its room."""
    widest = max((len(name) for name in labels), default=1) * LABEL_CHARACTER + LABEL_GAP
    # A label at either end moves in just enough to be whole (the last one was cut off); the
    # room between labels is measured where they are drawn.
    places = [
        (min(max(x_of(index), half), frame.width - half), name)
        for index, name in enumerate(labels)
        if name
        for half in (Fraction(math.ceil(len(name) * LABEL_CHARACTER / 2)),)  # drawn rounded
    ]
    shown = places[:1]
    for x, name in places[1:-1]:
        if x - shown[-1][0] >= widest and places[-1][0] - x >= widest:
            shown.append((x, name))
    if len(places) > 1 and places[-1][0] - shown[-1][0] >= widest:
        shown.append(places[-1])
    base = frame.top + frame.plot_height
    return [
        f'<text x="{_coordinate(x)}" y="{base + 16}" text-anchor="middle" fill="#444444">'
        f"{escape(name)}</text>"
        for x, name in shown
    ]


def _polyline(
    series: Series,
    keys: Sequence[XKey],
    x_of: Callable[[int], Fraction],
    y_of: Scale,
    colour: str,
    fmt: Format,
) -> list[str]:
    """Draw one series as polylines broken at gaps, with a dot and tooltip per point.

    Each drawing stretches the data by its own width and height, so the strokes keep their
    width on the screen (``non-scaling-stroke``) and a dot is the round cap of a stroke of no
    length, which stays round where a circle would be drawn as an ellipse."""
    position = {key: i for i, key in enumerate(keys)}
    parts: list[str] = []
    run: list[str] = []
    dots: list[str] = []

    def flush() -> None:
        if len(run) > 1:
            parts.append(f'<polyline points="{" ".join(run)}" stroke-width="2" {_UNSTRETCHED}/>')
        run.clear()

    for (name, before), value in _keyed(series.points):
        if value is None:
            flush()
            continue
        x, y = _coordinate(x_of(position[name, before]), 0), _coordinate(y_of(value), 0)
        run.append(f"{x},{y}")
        dots.append(
            f'<path d="M{x} {y}h0" {_UNSTRETCHED}><title>{escape(series.name)} '
            f"{escape(name)}: {escape(fmt(value))}</title></path>"
        )
    flush()
    group = (
        f'<g class="series" data-series="{escape(series.name)}" fill="none" stroke="{colour}" '
        'stroke-width="6" stroke-linecap="round" stroke-linejoin="round">'
    )
    return [group, *parts, *dots, "</g>"]


def _legend(
    frame: Frame,
    series: Sequence[Series],
    references: Sequence[Reference],
    colours: dict[str, str],
) -> list[str]:
    """Name each line under the chart, going on to a new row where a name would pass the edge."""
    parts: list[str] = []
    x = frame.left
    y = frame.top + frame.plot_height + 44

    def place(name: str) -> tuple[int, int]:
        nonlocal x, y
        width = 28 + 7 * len(name)
        if x > frame.left and x + width - 8 > frame.width:
            x, y = frame.left, y + 18
        at = (x, y)
        x += width
        return at

    for s in series:
        left, base = place(s.name)
        parts.append(
            f'<rect x="{left}" y="{base - 9}" width="14" height="4" fill="{colours[s.name]}"/>'
            f'<text x="{left + 20}" y="{base - 4}" fill="#222222">{escape(s.name)}</text>'
        )
    for ref in references:
        colour = colours.get(ref.colour_of, "#777777")
        left, base = place(ref.name)
        parts.append(
            f'<line x1="{left}" y1="{base - 7}" x2="{left + 14}" y2="{base - 7}" '
            f'stroke="{colour}" stroke-width="1.5" stroke-dasharray="4 3"/>'
            f'<text x="{left + 20}" y="{base - 4}" fill="#222222">{escape(ref.name)}</text>'
        )
    return parts
