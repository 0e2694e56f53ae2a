"""Statistics for the simulations: means and proportions with intervals, and chi-square tests.

Pure functions of counts and sums, so the commands can stream millions of rounds through running
totals and the arithmetic is tested on small inputs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

#: The two-sided 95 % quantile of the standard normal distribution.
Z_95: Final = 1.959963984540054

_GAMMA_EPSILON: Final = 1e-15
_GAMMA_MAX_STEPS: Final = 10_000
_TINY: Final = 1e-300


@dataclass(frozen=True, slots=True)
class Estimate:
    """An estimate from ``n`` observations, with a confidence interval ``[low, high]``."""

    value: float
    low: float
    high: float
    n: int

    def contains(self, truth: float) -> bool:
        """Tell whether ``truth`` lies inside the interval."""
        return self.low <= truth <= self.high


def mean_estimate(total: float, total_of_squares: float, n: int, z: float = Z_95) -> Estimate:
    """Return the mean of ``n`` values, given their sum and sum of squares, with a normal interval.

    :raises ValueError: if there are fewer than two values (no spread to estimate).
    """
    if n < 2:
        raise ValueError("a mean interval needs at least two values")
    mean = total / n
    # max(): rounding can push a zero variance a hair below zero
    variance = max(0.0, (total_of_squares - n * mean * mean) / (n - 1))
    half_width = z * math.sqrt(variance / n)
    return Estimate(mean, mean - half_width, mean + half_width, n)


def ratio_estimate(
    sum_x: float,
    sum_a: float,
    sum_xx: float,
    sum_xa: float,
    sum_aa: float,
    n: int,
    z: float = Z_95,
) -> Estimate:
    """Return ``sum(x) / sum(a)`` over ``n`` pairs, with its normal (delta-method) interval.

    The house's edge is its result per unit staked, and stakes differ from round to round:
    a ratio of two sums, not a mean. Its variance is that of the residuals ``x - R·a``
    divided by ``n`` and by the mean stake squared; the sums are all it takes, so a report
    adds them up in the database.

    :raises ValueError: with fewer than two pairs or nothing staked.
    """
    if n < 2 or sum_a <= 0:
        raise ValueError("a ratio interval needs at least two pairs and something staked")
    ratio = sum_x / sum_a
    residuals = max(0.0, sum_xx - 2 * ratio * sum_xa + ratio * ratio * sum_aa)
    mean_a = sum_a / n
    half_width = z * math.sqrt(residuals / (n - 1) / n) / mean_a
    return Estimate(ratio, ratio - half_width, ratio + half_width, n)


def proportion_estimate(count: int, n: int, z: float = Z_95) -> Estimate:
    """Return ``count / n`` with its Wilson score interval (sound near 0 and 1, unlike Wald's).

    :raises ValueError: if ``n`` is not positive or ``count`` is outside ``0..n``.
    """
    if n < 1 or not 0 <= count <= n:
        raise ValueError(f"need 0 <= count <= n and n >= 1, got count={count}, n={n}")
    p = count / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half_width = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return Estimate(p, max(0.0, centre - half_width), min(1.0, centre + half_width), n)


def chi_square(
    observed: Mapping[str, int], probabilities: Mapping[str, float]
) -> tuple[float, int]:
    """Return Pearson's statistic and its degrees of freedom for counts against probabilities.

    Categories of probability 0 take no part (a count in one makes the statistic infinite).

    :raises ValueError: if a category has no probability, or fewer than two are possible.
    """
    unknown = set(observed) - set(probabilities)
    if unknown:
        raise ValueError(f"no probability for {sorted(unknown)}")
    n = sum(observed.values())
    statistic = 0.0
    possible = 0
    for category, probability in probabilities.items():
        count = observed.get(category, 0)
        if probability <= 0:
            if count:
                return math.inf, max(possible, 1)
            continue
        possible += 1
        expected = n * probability
        statistic += (count - expected) ** 2 / expected
    if possible < 2:
        raise ValueError("a chi-square test needs at least two possible categories")
    return statistic, possible - 1


def chi_square_p_value(statistic: float, degrees_of_freedom: int) -> float:
    """Return the probability that a chi-square variable exceeds ``statistic`` (upper tail).

    This is the regularized upper incomplete gamma function ``Q(df/2, statistic/2)``.
    """
    if degrees_of_freedom < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if statistic <= 0:
        return 1.0
    if math.isinf(statistic):
        return 0.0
    return _upper_regularized_gamma(degrees_of_freedom / 2, statistic / 2)


def _upper_regularized_gamma(a: float, x: float) -> float:
    """Return ``Q(a, x)``: by its series below ``a + 1``, by a continued fraction above.

    The two expansions converge fast on their sides (Numerical Recipes, §6.2), and the continued
    fraction keeps tiny tail probabilities accurate instead of rounding ``1 - P`` to zero.
    """
    log_prefactor = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1 / a
        denominator = a
        for _ in range(_GAMMA_MAX_STEPS):
            denominator += 1
            term *= x / denominator
            total += term
            if abs(term) < abs(total) * _GAMMA_EPSILON:
                break
        return max(0.0, 1 - total * math.exp(log_prefactor))
    # Lentz's method for the continued fraction of Q(a, x)
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    fraction = d
    for i in range(1, _GAMMA_MAX_STEPS):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        step = d * c
        fraction *= step
        if abs(step - 1) < _GAMMA_EPSILON:
            break
    return math.exp(log_prefactor) * fraction
