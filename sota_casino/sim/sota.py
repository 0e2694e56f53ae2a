"""``flask simulate sota``: many whole games of Sota through the real stream and engine.

Each game is played as the service plays it, from a fresh server seed (nonce 0), with the trick
log turned off and the player's seat following the dealer's policy under Prisoners of War. The
report gives game length (mean with its 95 % interval, median, p90, maximum), wars per game,
the win rate of each seat (or team), the draw rate, the share of games that ``max_tricks``
stopped and the player's net result per unit staked (the house's edge with its sign turned: the
payouts are fair only where every seat is as likely to win, which a fixed gather order can
break), and a histogram of game length is written as an SVG.
"""

from __future__ import annotations

import json
import math
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from fractions import Fraction
from math import prod
from pathlib import Path
from typing import Any
from typing import Final
from xml.sax.saxutils import escape

import click

from ..core.errors import InvalidRules
from ..core.fairness import Seeds
from ..core.fairness import Stream
from ..core.fairness import new_server_seed
from ..core.sota import DRAW
from ..core.sota import MAX_TRICKS
from ..core.sota import PRESETS
from ..core.sota import TEAM_0
from ..core.sota import TEAM_1
from ..core.sota import GameResult
from ..core.sota import SotaRules
from ..core.sota import payout
from ..core.sota import play_game
from .stats import Estimate
from .stats import mean_estimate
from .stats import proportion_estimate

CLIENT_SEED: Final = "simulate-sota"
PROGRESS_STEP: Final = 100
DEFAULT_PLOT: Final = "sota-lengths.svg"
HISTOGRAM_BINS: Final = 40


@dataclass
class SotaTally:
    """What many games came to: each game's length, the wars, winners and endings."""

    lengths: list[int] = field(default_factory=list)
    wars: int = 0
    wars_squares: int = 0
    winners: Counter[int | str] = field(default_factory=Counter)
    endings: Counter[str] = field(default_factory=Counter)

    @property
    def games(self) -> int:
        return len(self.lengths)

    def add(self, result: GameResult) -> None:
        """Count one settled game."""
        self.lengths.append(result.trick_count)
        self.wars += result.wars
        self.wars_squares += result.wars * result.wars
        self.winners[result.winner if result.winner is not None else "open"] += 1
        self.endings[result.ended_by or "open"] += 1


@dataclass(frozen=True, slots=True)
class SotaStats:
    """The figures of a tally."""

    games: int
    mean_tricks: Estimate
    median_tricks: float
    p90_tricks: int
    max_tricks: int
    wars_per_game: Estimate
    win_rates: dict[int | str, Estimate]  # per seat, or per team
    draw_rate: Estimate
    stopped_by_max_tricks: Estimate
    #: What the player (seat 0, or team 0) nets per unit staked, as the service pays.
    player_net: Estimate


def simulate(
    rules: SotaRules,
    games: int,
    *,
    seed_source: Callable[[], bytes] = new_server_seed,
    progress: Callable[[int], None] | None = None,
) -> SotaTally:
    """Play ``games`` whole games, each on a fresh server seed.

    :param seed_source: gives each game's server seed (the CSPRNG; tests pass their own).
    :param progress: called with the number of games played since its last call.
    """
    tally = SotaTally()
    for played in range(1, games + 1):
        stream = Stream(Seeds(seed_source(), CLIENT_SEED, 0))
        tally.add(play_game(rules, stream=stream, log=False, autoplay=True))
        if progress is not None and played % PROGRESS_STEP == 0:
            progress(PROGRESS_STEP)
    if progress is not None and games % PROGRESS_STEP:
        progress(games % PROGRESS_STEP)
    return tally


def percentile(values: Sequence[int], share: float) -> int:
    """Return the nearest-rank percentile: the smallest value with ``share`` of them at or below.

    :raises ValueError: if there are no values or ``share`` is not in ``(0, 1]``.
    """
    if not values or not 0 < share <= 1:
        raise ValueError("a percentile needs values and a share in (0, 1]")
    ordered = sorted(values)
    return ordered[math.ceil(share * len(ordered)) - 1]


def sides(rules: SotaRules) -> list[int | str]:
    """Return who can win a game: the seats, or the two teams."""
    return [TEAM_0, TEAM_1] if rules.teams else list(range(rules.seats))


def summarize(tally: SotaTally, rules: SotaRules) -> SotaStats:
    """Return the figures of a tally of at least two games.

    :raises ValueError: with fewer than two games (no spread to estimate).
    """
    games = tally.games
    lengths = tally.lengths
    total = sum(lengths)
    squares = sum(length * length for length in lengths)
    return SotaStats(
        games=games,
        mean_tricks=mean_estimate(total, squares, games),
        median_tricks=statistics.median(lengths),
        p90_tricks=percentile(lengths, 0.9),
        max_tricks=max(lengths),
        wars_per_game=mean_estimate(tally.wars, tally.wars_squares, games),
        win_rates={side: proportion_estimate(tally.winners[side], games) for side in sides(rules)},
        draw_rate=proportion_estimate(tally.winners[DRAW], games),
        stopped_by_max_tricks=proportion_estimate(tally.endings[MAX_TRICKS], games),
        player_net=_player_net(tally, rules),
    )


def _player_net(tally: SotaTally, rules: SotaRules) -> Estimate:
    """The player's net per unit staked over the tally's games, as :func:`payout` pays."""
    nets = {winner: payout(rules, winner, 1) - 1 for winner in tally.winners}
    total = sum(nets[w] * n for w, n in tally.winners.items())
    squares = sum(nets[w] ** 2 * n for w, n in tally.winners.items())
    return mean_estimate(total, squares, tally.games)


def format_report(stats: SotaStats, rules: SotaRules, label: str) -> str:
    """Return the figures as Markdown."""
    mean, wars = stats.mean_tricks, stats.wars_per_game
    changed = {k: v for k, v in rules.to_dict().items() if v != SotaRules().to_dict()[k]}
    lines = [
        f"Sota: {stats.games:,} games, {label}",
        f"rules changed from the defaults: {json.dumps(changed) if changed else 'none'}",
        "",
        "| figure | value | 95 % interval |",
        "| --- | ---: | ---: |",
        f"| mean tricks | {mean.value:.2f} | {mean.low:.2f} – {mean.high:.2f} |",
        f"| median tricks | {stats.median_tricks:g} | |",
        f"| p90 tricks | {stats.p90_tricks} | |",
        f"| maximum tricks | {stats.max_tricks} | |",
        f"| wars per game | {wars.value:.3f} | {wars.low:.3f} – {wars.high:.3f} |",
    ]
    for side, rate in stats.win_rates.items():
        name = side if isinstance(side, str) else f"seat {side}"
        lines.append(f"| {name} wins | {_percent(rate)} | {_interval(rate)} |")
    lines += [
        f"| draws | {_percent(stats.draw_rate)} | {_interval(stats.draw_rate)} |",
        f"| stopped by max_tricks ({rules.max_tricks}) | "
        f"{_percent(stats.stopped_by_max_tricks)} | {_interval(stats.stopped_by_max_tricks)} |",
        f"| the player's net per stake | {_percent(stats.player_net, signed=True)} | "
        f"{_interval(stats.player_net, signed=True)} |",
    ]
    return "\n".join(lines)


def _percent(estimate: Estimate, *, signed: bool = False) -> str:
    return f"{estimate.value * 100:{'+' if signed else ''}.2f} %"


def _interval(estimate: Estimate, *, signed: bool = False) -> str:
    sign = "+" if signed else ""
    return f"{estimate.low * 100:{sign}.2f} – {estimate.high * 100:{sign}.2f} %"


# --- the histogram ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bin:
    """Games whose length is in ``low..high`` (both included)."""

    low: int
    high: int
    count: int


def histogram(values: Sequence[int], bins: int = HISTOGRAM_BINS) -> list[Bin]:
    """Split ``values`` into at most ``bins`` bins of equal whole-number width."""
    if not values:
        return []
    low, high = min(values), max(values)
    width = max(1, math.ceil((high - low + 1) / bins))
    counts = Counter((value - low) // width for value in values)
    return [
        Bin(low + i * width, low + (i + 1) * width - 1, counts[i])
        for i in range((high - low) // width + 1)
    ]


def histogram_svg(values: Sequence[int], title: str, bins: int = HISTOGRAM_BINS) -> str:
    """Return an SVG bar chart of the distribution of ``values`` (game lengths in tricks)."""
    width, height = 720, 400
    left, right, top, bottom = 70, 20, 40, 60
    plot_w, plot_h = width - left - right, height - top - bottom
    found = histogram(values, bins)
    tallest = max((b.count for b in found), default=0) or 1
    bar_w = plot_w / max(len(found), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>',
    ]
    for i, found_bin in enumerate(found):
        bar_h = plot_h * found_bin.count / tallest
        x, y = left + i * bar_w, top + plot_h - bar_h
        parts.append(
            f'<rect x="{x:.2f}" y="{y:.2f}" width="{max(bar_w - 1, 0.5):.2f}" '
            f'height="{bar_h:.2f}" fill="#3b6ea5"><title>{found_bin.low}–{found_bin.high} '
            f"tricks: {found_bin.count} games</title></rect>"
        )
    axis_y = top + plot_h
    parts += [
        f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="#000"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{axis_y}" stroke="#000"/>',
    ]
    for tick in range(5):
        count = round(tallest * tick / 4)
        y = axis_y - plot_h * count / tallest
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.2f}" text-anchor="end">{count}</text>'
            f'<line x1="{left - 3}" y1="{y:.2f}" x2="{left}" y2="{y:.2f}" stroke="#000"/>'
        )
    if found:
        for i in range(0, len(found), max(1, len(found) // 8)):
            x = left + i * bar_w
            parts.append(
                f'<text x="{x:.2f}" y="{axis_y + 16}" text-anchor="middle">{found[i].low}</text>'
            )
    parts += [
        f'<text x="{left + plot_w / 2}" y="{height - 18}" text-anchor="middle">'
        "game length (tricks)</text>",
        f'<text x="18" y="{top + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 18 {top + plot_h / 2})">games</text>',
        "</svg>",
    ]
    return "\n".join(parts) + "\n"


# --- a published figure, worked out exactly --------------------------------------------------


def first_pass_sweep_probability() -> Fraction:
    """Return the chance that a given player wins all 26 first flips of a 52-card game, no tie.

    A shuffle pairs the cards uniformly at random into 26 flips with a random side each, so the
    chance is (pairings with no two cards of a rank together) / (all pairings) / 2^26. The
    pairings with no same-rank pair are counted by inclusion–exclusion over the same-rank
    pairs chosen in each rank (0, 1 or 2 of 4 cards: 1, 6 or 3 ways). Norvig gives
    3.132436174322e-9.
    """
    per_rank = (1, 6, 3)
    weights = [1]  # weights[j]: signed ways to choose j same-rank pairs over the ranks so far
    for _ in range(13):
        grown = [0] * (len(weights) + 2)
        for j, weight in enumerate(weights):
            for extra, ways in enumerate(per_rank):
                grown[j + extra] += weight * ways
        weights = grown

    def pairings(cards: int) -> int:  # (cards - 1)!!: perfect matchings of `cards` cards
        return prod(range(cards - 1, 0, -2))

    distinct = sum((-1) ** j * weight * pairings(52 - 2 * j) for j, weight in enumerate(weights))
    return Fraction(distinct, pairings(52) * 2**26)


# --- the command -----------------------------------------------------------------------------


def parse_options(preset: str | None, options: Sequence[str]) -> SotaRules:
    """Return the preset's rule set (the defaults without one) changed by ``NAME=VALUE`` pairs.

    Values are read as JSON where they can be (``1``, ``true``, ``null``), else as text.

    :raises click.UsageError: on a malformed pair, an unknown option or a bad value.
    """
    data: dict[str, Any] = {}
    try:
        if preset is not None:
            data |= SotaRules.from_preset(preset).to_dict()
        for pair in options:
            name, sep, text = pair.partition("=")
            if not sep or not name:
                raise click.UsageError(f"--option takes NAME=VALUE, got {pair!r}")
            try:
                data[name.strip()] = json.loads(text)
            except json.JSONDecodeError:
                data[name.strip()] = text
        return SotaRules.from_dict(data)
    except InvalidRules as exc:
        raise click.UsageError(exc.message) from exc


def _writable_folder(ctx: click.Context, param: click.Parameter, path: Path) -> Path:
    """Check at once that a file can be made in ``path``'s folder, so a folder that is not
    there is said before the games are played, not after."""
    try:
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as exc:
        raise click.BadParameter(f"cannot write in {path.parent}: {exc.strerror}") from exc
    return path


@click.command("sota")
@click.option("--games", type=click.IntRange(min=2), default=10_000, show_default=True)
@click.option("--preset", type=click.Choice(sorted(PRESETS)), help="Start from a named rule set.")
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="NAME=VALUE",
    help="Change one rule option, e.g. gather=shuffled (repeatable).",
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=DEFAULT_PLOT,
    show_default=True,
    callback=_writable_folder,
    help="Where to write the histogram of game length (SVG).",
)
def sota_command(games: int, preset: str | None, options: tuple[str, ...], plot: Path) -> None:
    """Play GAMES whole games of Sota on fresh seeds and report their length and winners."""
    rules = parse_options(preset, options)
    label = f"preset {preset}" if preset else "custom rules" if options else "default rules"
    started = time.perf_counter()
    with click.progressbar(length=games, label="playing") as bar:
        tally = simulate(rules, games, progress=bar.update)
    elapsed = time.perf_counter() - started
    stats = summarize(tally, rules)
    click.echo(format_report(stats, rules, label))
    title = f"Sota game length, {games:,} games ({label})"
    try:
        plot.write_text(histogram_svg(tally.lengths, title), encoding="utf-8")
    except OSError as exc:  # the folder went, or the disk filled, while the games were played
        raise click.FileError(str(plot), exc.strerror) from exc
    click.echo(f"\nhistogram of game length: {plot}")
    click.echo(f"{games / elapsed:,.0f} games per second ({elapsed:.1f} s)")
