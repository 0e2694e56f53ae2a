"""``flask simulate casino-war``: many rounds through the real stream and engine, against the odds.

Rounds are played as the service plays them: a fresh server seed every
:data:`ROUNDS_PER_SEED` rounds (as if the seed pair were rotated), the nonce counting up from 0
on each pair, and each round's cards from ``PartialShuffle(...).prefix`` of its own stream.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Final

import click

from ..core import casino_war
from ..core.cards import canonical_shoe
from ..core.casino_war import BONUS_MODES
from ..core.casino_war import CHOICES
from ..core.casino_war import OUTCOMES
from ..core.casino_war import TableRules
from ..core.casino_war import WarRound
from ..core.errors import InvalidRules
from ..core.fairness import PartialShuffle
from ..core.fairness import Seeds
from ..core.fairness import Stream
from ..core.fairness import new_client_seed
from ..core.fairness import new_server_seed
from ..core.odds import casino_war_odds
from ..core.odds import outcome_probabilities
from .stats import Estimate
from .stats import chi_square
from .stats import chi_square_p_value
from .stats import mean_estimate
from .stats import proportion_estimate

ROUNDS_PER_SEED: Final = 10_000
PROGRESS_STEP: Final = 1_000
ANTE: Final = casino_war.CHIP  # one chip; results are reported per unit staked


@dataclass
class WarTally:
    """Running totals of simulated rounds: outcome counts and sums of the nets, in minor units."""

    rounds: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    ante_net: int = 0
    ante_net_squares: int = 0
    tie_bet_net: int = 0
    tie_bet_net_squares: int = 0
    tie_bets: int = 0

    def add(self, round_: WarRound) -> None:
        """Count one settled round."""
        tie_net = round_.tie_bet_payout - round_.tie_bet
        ante_net = round_.net - tie_net
        self.rounds += 1
        self.outcomes[round_.outcome or "open"] += 1
        self.ante_net += ante_net
        self.ante_net_squares += ante_net * ante_net
        if round_.tie_bet:
            self.tie_bets += 1
            self.tie_bet_net += tie_net
            self.tie_bet_net_squares += tie_net * tie_net


def house_edge_estimate(net: int, net_squares: int, bets: int, stake: int) -> Estimate:
    """Return the realized house edge per unit staked: minus the mean net, with its interval.

    :param net: the sum of the player's nets over ``bets`` bets of ``stake`` each.
    :param net_squares: the sum of the squared nets.
    """
    player = mean_estimate(net / stake, net_squares / stake**2, bets)
    return Estimate(-player.value, -player.high, -player.low, player.n)


def simulate(
    rules: TableRules,
    rounds: int,
    *,
    strategy: str = casino_war.WAR,
    tie_bet: bool = False,
    progress: Callable[[int], None] | None = None,
) -> WarTally:
    """Play ``rounds`` rounds of one chip (and a one-chip tie bet if asked) on fresh seeds.

    :param progress: called with the number of rounds played since its last call.
    """
    shoe = canonical_shoe("standard52", rules.decks)
    tally = WarTally()
    tie_stake = ANTE if tie_bet else 0
    server_seed, client_seed = b"", ""
    for played in range(rounds):
        nonce = played % ROUNDS_PER_SEED
        if nonce == 0:
            server_seed, client_seed = new_server_seed(), new_client_seed()
        stream = Stream(Seeds(server_seed, client_seed, nonce))
        draw = PartialShuffle(shoe, stream).prefix
        tally.add(casino_war.play(rules, draw, ANTE, tie_stake, strategy))
        if progress is not None and (played + 1) % PROGRESS_STEP == 0:
            progress(PROGRESS_STEP)
    if progress is not None and rounds % PROGRESS_STEP:
        progress(rounds % PROGRESS_STEP)
    return tally


def format_report(tally: WarTally, rules: TableRules, strategy: str) -> str:
    """Return the realized figures beside the exact ones of :mod:`sota_casino.core.odds`."""
    odds = casino_war_odds(rules)
    exact_edge = odds.house_edge_war if strategy == casino_war.WAR else odds.house_edge_surrender
    edge = house_edge_estimate(tally.ante_net, tally.ante_net_squares, tally.rounds, ANTE)
    lines = [
        f"Casino War: {tally.rounds:,} rounds, {rules.decks} decks, bonus {rules.bonus}, "
        f"always {strategy}",
        "",
        "| figure | realized | 95 % interval | exact | exact inside |",
        "| --- | ---: | ---: | ---: | :---: |",
        _edge_row("house edge (ante)", edge, float(exact_edge)),
    ]
    if tally.tie_bets >= 2 and odds.house_edge_tie_bet is not None:
        tie_edge = house_edge_estimate(
            tally.tie_bet_net, tally.tie_bet_net_squares, tally.tie_bets, ANTE
        )
        label = f"house edge (tie bet {rules.tie_payout} to 1)"
        lines.append(_edge_row(label, tie_edge, float(odds.house_edge_tie_bet)))
    exact = {o: float(p) for o, p in outcome_probabilities(rules.decks, strategy).items()}
    lines += [
        "",
        "| outcome | rounds | frequency | 95 % interval | exact probability |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for outcome in OUTCOMES:
        count = tally.outcomes[outcome]
        share = proportion_estimate(count, tally.rounds)
        lines.append(
            f"| {outcome} | {count:,} | {share.value:.6f} "
            f"| {share.low:.6f} – {share.high:.6f} | {exact[outcome]:.6f} |"
        )
    wins = sum(tally.outcomes[o] for o in ("win", "war_win", "war_tie"))
    all_wins = proportion_estimate(wins, tally.rounds)
    lines.append(
        f"| all wins | {wins:,} | {all_wins.value:.6f} | {all_wins.low:.6f} – "
        f"{all_wins.high:.6f} | {exact['win'] + exact['war_win'] + exact['war_tie']:.6f} |"
    )
    statistic, df = chi_square(tally.outcomes, exact)
    lines += [
        "",
        f"Outcomes against the exact probabilities: chi-square {statistic:.2f} with {df} degrees "
        f"of freedom, p = {chi_square_p_value(statistic, df):.4g}",
    ]
    return "\n".join(lines)


def _edge_row(label: str, estimate: Estimate, exact: float) -> str:
    inside = "yes" if estimate.contains(exact) else "no"
    return (
        f"| {label} | {_percent(estimate.value)} | {_percent(estimate.low)} – "
        f"{_percent(estimate.high)} | {_percent(exact)} | {inside} |"
    )


def _percent(value: float) -> str:
    return f"{value * 100:.4f} %"


@click.command("casino-war")
@click.option("--rounds", type=click.IntRange(min=2), default=100_000, show_default=True)
@click.option("--decks", type=click.IntRange(1, 8), default=6, show_default=True)
@click.option("--tie-payout", type=click.IntRange(0, 30), default=10, show_default=True)
@click.option("--bonus", type=click.Choice(BONUS_MODES), default="none", show_default=True)
@click.option("--tie-bet", is_flag=True, help="Also place a tie bet equal to the ante.")
@click.option("--strategy", type=click.Choice(CHOICES), default="war", show_default=True)
def casino_war_command(
    rounds: int, decks: int, tie_payout: int, bonus: str, tie_bet: bool, strategy: str
) -> None:
    """Play ROUNDS rounds of one chip and compare the results with the exact odds."""
    try:
        rules = TableRules(decks=decks, tie_payout=tie_payout, bonus=bonus)
    except InvalidRules as exc:
        raise click.UsageError(exc.message) from exc
    if tie_bet and not tie_payout:
        raise click.UsageError("--tie-bet needs a table that offers one (--tie-payout 1 to 30)")
    started = time.perf_counter()
    with click.progressbar(length=rounds, label="playing") as bar:
        tally = simulate(rules, rounds, strategy=strategy, tie_bet=tie_bet, progress=bar.update)
    elapsed = time.perf_counter() - started
    click.echo(format_report(tally, rules, strategy))
    click.echo(f"\n{rounds / elapsed:,.0f} rounds per second ({elapsed:.1f} s)")
