"""The simulations' statistics on small inputs worked out by hand."""

from __future__ import annotations

import math

import pytest

from sota_casino.sim.stats import Z_95
from sota_casino.sim.stats import Estimate
from sota_casino.sim.stats import chi_square
from sota_casino.sim.stats import chi_square_p_value
from sota_casino.sim.stats import mean_estimate
from sota_casino.sim.stats import proportion_estimate
from sota_casino.sim.stats import ratio_estimate


def test_the_mean_interval_uses_the_sample_standard_deviation() -> None:
    values = [0, 1, 2]  # mean 1, sample variance 1
    estimate = mean_estimate(sum(values), sum(v * v for v in values), len(values))
    half_width = Z_95 / math.sqrt(3)
    assert estimate.value == 1
    assert estimate.low == pytest.approx(1 - half_width)
    assert estimate.high == pytest.approx(1 + half_width)
    assert estimate.n == 3


def test_identical_values_give_a_zero_width_interval() -> None:
    assert mean_estimate(-10, 20, 5) == Estimate(-2.0, -2.0, -2.0, 5)


def test_a_mean_of_one_value_has_no_interval() -> None:
    with pytest.raises(ValueError):
        mean_estimate(1, 1, 1)


def test_the_wilson_interval_matches_worked_values() -> None:
    none = proportion_estimate(0, 10)
    assert none.value == 0 and none.low == 0
    assert none.high == pytest.approx(0.2775, abs=1e-4)
    half = proportion_estimate(5, 10)
    assert (half.low, half.high) == (
        pytest.approx(0.2366, abs=1e-4),
        pytest.approx(0.7634, abs=1e-4),
    )


@pytest.mark.parametrize(("count", "n"), [(-1, 10), (11, 10), (0, 0)])
def test_a_proportion_needs_a_count_within_its_total(count: int, n: int) -> None:
    with pytest.raises(ValueError):
        proportion_estimate(count, n)


def test_contains_includes_the_ends() -> None:
    estimate = Estimate(0.5, 0.4, 0.6, 100)
    assert estimate.contains(0.4) and estimate.contains(0.6) and not estimate.contains(0.61)


def test_chi_square_of_counts_against_probabilities() -> None:
    # expected 25 each: (30-25)^2/25 + (20-25)^2/25 + 0 + 0 = 2
    counts = {"a": 30, "b": 20, "c": 25, "d": 25}
    assert chi_square(counts, dict.fromkeys("abcd", 0.25)) == (pytest.approx(2.0), 3)


def test_chi_square_skips_impossible_categories_and_counts_missing_ones_as_zero() -> None:
    assert chi_square({"a": 10}, {"a": 0.5, "b": 0.5, "never": 0}) == (pytest.approx(10.0), 1)


def test_a_count_in_an_impossible_category_is_infinitely_unlikely() -> None:
    statistic, df = chi_square({"a": 5, "never": 1}, {"a": 0.5, "b": 0.5, "never": 0})
    assert statistic == math.inf and chi_square_p_value(statistic, df) == 0


def test_chi_square_refuses_categories_without_a_probability() -> None:
    with pytest.raises(ValueError):
        chi_square({"a": 1, "z": 1}, {"a": 0.5, "b": 0.5})


@pytest.mark.parametrize(
    ("statistic", "df", "p"),
    [
        (3.841458820694124, 1, 0.05),  # the 95 % quantile of chi-square with 1 df
        (2.0, 2, math.exp(-1)),  # with 2 df the tail is exp(-x/2)
        (10.0, 2, math.exp(-5)),
        (20.515, 5, 0.001),
        (0.0, 4, 1.0),
        (250.0, 5, 5.4969e-52),  # far tail: the continued fraction keeps it accurate
    ],
)
def test_chi_square_p_values_match_known_quantiles(statistic: float, df: int, p: float) -> None:
    assert chi_square_p_value(statistic, df) == pytest.approx(p, rel=1e-4)


def test_the_ratio_interval_of_equal_stakes_is_the_mean_interval() -> None:
    xs = [1.0, -1.0, -1.0, 2.0, 0.0, -1.0]
    stake = 5.0
    ratio = ratio_estimate(
        sum(x * stake for x in xs),
        stake * len(xs),
        sum((x * stake) ** 2 for x in xs),
        sum(x * stake * stake for x in xs),
        stake * stake * len(xs),
        len(xs),
    )
    mean = mean_estimate(sum(xs), sum(x * x for x in xs), len(xs))
    assert ratio.value == pytest.approx(mean.value)
    assert (ratio.low, ratio.high) == pytest.approx((mean.low, mean.high))


def test_a_ratio_interval_needs_two_pairs_and_a_stake() -> None:
    with pytest.raises(ValueError):
        ratio_estimate(1, 1, 1, 1, 1, 1)
    with pytest.raises(ValueError):
        ratio_estimate(0, 0, 0, 0, 0, 5)
