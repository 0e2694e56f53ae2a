"""The Casino War simulation: its totals, its seeds and nonces, its report and its command."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from click.testing import CliRunner

from sota_casino.core.casino_war import TableRules
from sota_casino.core.casino_war import play
from sota_casino.core.fairness import Seeds
from sota_casino.core.fairness import Stream
from sota_casino.sim import casino_war as sim
from sota_casino.sim.casino_war import WarTally
from sota_casino.sim.casino_war import casino_war_command
from sota_casino.sim.casino_war import format_report
from sota_casino.sim.casino_war import house_edge_estimate
from sota_casino.sim.casino_war import simulate


def shoe(cards: str):
    dealt = tuple(cards.split())
    return lambda k: dealt[:k]


def test_the_tally_keeps_the_ante_and_the_tie_bet_apart() -> None:
    rules = TableRules(burn=0, tie_payout=10)
    tally = WarTally()
    tally.add(play(rules, shoe("KS 9H"), 100, 100))  # ante +100, tie bet -100
    tally.add(play(rules, shoe("5C 5D 2C 9C"), 100, 100, "war"))  # ante -200, tie bet +1000
    tally.add(play(rules, shoe("5C 5D"), 100, 0, "surrender"))  # ante -50, no tie bet
    assert tally.rounds == 3
    assert tally.outcomes == {"win": 1, "war_lose": 1, "surrender": 1}
    assert (tally.ante_net, tally.ante_net_squares) == (-150, 100**2 + 200**2 + 50**2)
    assert (tally.tie_bets, tally.tie_bet_net, tally.tie_bet_net_squares) == (2, 900, 1_010_000)


def test_house_edge_is_minus_the_players_mean_net_per_unit_staked() -> None:
    nets = [-100, 100, -100, -200]  # per chip: -1, 1, -1, -2 -> mean -0.75
    edge = house_edge_estimate(sum(nets), sum(n * n for n in nets), len(nets), 100)
    assert edge.value == pytest.approx(0.75)
    assert edge.low < 0.75 < edge.high
    assert edge.high - 0.75 == pytest.approx(0.75 - edge.low)


def test_simulate_plays_each_round_on_a_fresh_stream_with_rotating_seeds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[Seeds] = []

    class RecordingStream(Stream):
        def __init__(self, seeds: Seeds) -> None:
            seen.append(seeds)
            super().__init__(seeds)

    monkeypatch.setattr(sim, "Stream", RecordingStream)
    monkeypatch.setattr(sim, "ROUNDS_PER_SEED", 10)
    steps: list[int] = []
    tally = simulate(TableRules(decks=1), 25, progress=steps.append)
    assert tally.rounds == 25 == sum(tally.outcomes.values()) == sum(steps)
    assert [s.nonce for s in seen] == [*range(10), *range(10), *range(5)]
    server_seeds = [s.server_seed for s in seen]
    assert len(set(server_seeds)) == 3
    assert all(len(seed) == 32 for seed in server_seeds)
    assert server_seeds[:10] == [server_seeds[0]] * 10


def test_always_surrender_never_goes_to_war() -> None:
    tally = simulate(TableRules(decks=1), 400, strategy="surrender")
    assert not {"war_win", "war_tie", "war_lose"} & set(tally.outcomes)
    assert tally.outcomes["surrender"] > 0


def report_lines(outcomes: dict[str, int], ante_nets: Sequence[int]) -> list[str]:
    tally = WarTally(
        rounds=len(ante_nets),
        ante_net=sum(ante_nets),
        ante_net_squares=sum(n * n for n in ante_nets),
    )
    tally.outcomes.update(outcomes)
    return format_report(tally, TableRules(), "war").splitlines()


def test_the_report_puts_the_realized_edge_beside_the_exact_one() -> None:
    nets = [100] * 50 + [-100] * 46 + [-200] * 4  # edge 4 %
    lines = report_lines({"win": 50, "lose": 46, "war_lose": 4}, nets)
    edge_row = next(line for line in lines if line.startswith("| house edge (ante)"))
    assert "| 4.0000 % |" in edge_row and "| 2.8771 % |" in edge_row
    assert edge_row.endswith("| yes |")
    assert any(line.startswith("| war_lose | 4 | 0.040000 |") for line in lines)
    assert any(line.endswith("| 0.502735 |") for line in lines if line.startswith("| all wins"))
    assert "chi-square" in lines[-1]


def test_the_report_says_when_the_exact_edge_is_outside_the_interval() -> None:
    nets = [-100] * 99 + [100]
    lines = report_lines({"lose": 99, "win": 1}, nets)
    assert next(line for line in lines if "house edge" in line).endswith("| no |")
    assert lines[-1].endswith("p = 3.164e-23")


def test_the_command_reports_the_edge_and_the_tie_bet() -> None:
    result = CliRunner().invoke(
        casino_war_command, ["--rounds", "2000", "--decks", "2", "--tie-bet", "--bonus", "ante"]
    )
    assert result.exit_code == 0, result.output
    assert "2,000 rounds, 2 decks, bonus ante, always war" in result.output
    assert "| house edge (ante) |" in result.output
    assert "| house edge (tie bet 10 to 1) |" in result.output
    assert "rounds per second" in result.output


def test_the_command_refuses_a_tie_bet_where_none_is_offered() -> None:
    result = CliRunner().invoke(casino_war_command, ["--tie-bet", "--tie-payout", "0"])
    assert result.exit_code == 2
    assert "--tie-bet" in result.output
