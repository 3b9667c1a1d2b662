"""Power of a paired comparison: the minimum detectable difference and the seeds a target needs.

A paired test on ``n`` seeds whose differences have standard deviation ``s`` detects a true mean
difference ``delta`` with power ``1 - beta`` at two-sided level ``alpha`` when

    ``|delta| >= (t[1 - alpha/2, n-1] + t[1 - beta, n-1]) * s / sqrt(n)``

(the usual approximation to the paired t-test's power, which the sign-flip test matches for
all but the smallest ``n``; :func:`paired_t_power` gives the exact t-test power to check it).
The right-hand side is the **minimum detectable difference** (MDD); the smallest ``n`` that
brings it down to a target is the number of seeds that target needs. ``s`` is the spread
observed in the run, so both figures say what the run could and could not have detected.

The sign-flip test has a floor the t-test has not: its smallest p-value is ``2 / 2**n`` (all
differences of one sign), so with fewer than :func:`min_sign_flip_seeds` pairs (6 at
``alpha = 0.05``) it detects nothing, however large and consistent the difference. The MDD is
then infinite and the seeds a target needs are never fewer than that.
"""

from __future__ import annotations

import math
from typing import Final

from scipy import special

__all__ = [
    "POWER",
    "POWER_ALPHA",
    "TARGET_DIFFERENCE",
    "min_sign_flip_seeds",
    "minimum_detectable_difference",
    "paired_t_power",
    "seeds_to_detect",
]

POWER: Final = 0.8
POWER_ALPHA: Final = 0.05
TARGET_DIFFERENCE: Final = 0.05
"""The difference the report asks about: 5 points of a metric in [0, 1]."""

_MAX_SEEDS: Final = 10**7


def _check(power: float, alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")


def min_sign_flip_seeds(alpha: float = POWER_ALPHA) -> int:
    """The fewest pairs whose two-sided sign-flip test can reach ``p <= alpha``.

    >>> min_sign_flip_seeds(0.05)  # 2 / 2**6 = 0.031; 2 / 2**5 = 0.0625
    6

    Raises:
        ValueError: ``alpha`` outside ``(0, 1)``.
    """
    _check(POWER, alpha)
    return max(2, math.ceil(1.0 - math.log2(alpha)))


def _multiplier(n: int, power: float, alpha: float) -> float:
    dof = n - 1
    # scipy.stats.t.ppf(q, dof), bit for bit, without importing scipy.stats.
    return float(special.stdtrit(dof, 1.0 - alpha / 2.0) + special.stdtrit(dof, power))


def minimum_detectable_difference(
    sd: float, n: int, *, power: float = POWER, alpha: float = POWER_ALPHA
) -> float:
    """The smallest true mean difference a paired test on ``n`` seeds detects with ``power``.

    >>> round(minimum_detectable_difference(0.1, 16), 4)  # (2.1314 + 0.8662) * 0.1 / 4
    0.0749

    Args:
        sd: the standard deviation of the paired differences (``ddof=1``).
        n: the number of paired seeds.
        power: the probability of detection, in ``(0, 1)``.
        alpha: the two-sided level of the test, in ``(0, 1)``.

    Returns:
        The MDD in the differences' units; ``inf`` when ``n`` is below
        :func:`min_sign_flip_seeds` (the sign-flip test cannot reach ``alpha``); NaN when ``sd``
        is not finite.

    Raises:
        ValueError: ``power`` or ``alpha`` outside ``(0, 1)``, or a negative ``sd``.
    """
    _check(power, alpha)
    if sd < 0:
        raise ValueError(f"sd must be non-negative, got {sd}")
    if n < min_sign_flip_seeds(alpha):
        return math.inf
    if not math.isfinite(sd):
        return math.nan
    return _multiplier(n, power, alpha) * sd / math.sqrt(n)


def seeds_to_detect(
    difference: float,
    sd: float,
    *,
    power: float = POWER,
    alpha: float = POWER_ALPHA,
) -> int | None:
    """The fewest paired seeds whose MDD (at this ``sd``) is at most ``difference``.

    >>> seeds_to_detect(0.05, 0.1)  # 34 seeds: (2.0345 + 0.8526) * 0.1 / sqrt(34) = 0.0495
    34

    Args:
        difference: the true mean difference to detect (its sign is ignored).
        sd: the standard deviation of the paired differences.
        power: the probability of detection, in ``(0, 1)``.
        alpha: the two-sided level of the test, in ``(0, 1)``.

    Returns:
        The number of seeds (at least :func:`min_sign_flip_seeds`); ``None`` when ``sd`` is not finite or ``difference``
        is 0 (no number of seeds suffices).

    Raises:
        ValueError: ``power`` or ``alpha`` outside ``(0, 1)``, or a negative ``sd``.
    """
    _check(power, alpha)
    if sd < 0:
        raise ValueError(f"sd must be non-negative, got {sd}")
    target = abs(difference)
    if not math.isfinite(sd) or not math.isfinite(target) or target == 0.0:
        return None
    floor = min_sign_flip_seeds(alpha)
    if sd == 0.0:
        return floor

    def detects(n: int) -> bool:
        return _multiplier(n, power, alpha) * sd / math.sqrt(n) <= target

    # The MDD falls monotonically in n: double to bracket the answer, then bisect.
    high = 2
    while not detects(high):
        if high >= _MAX_SEEDS:
            return None
        high *= 2
    low = high // 2
    while high - low > 1:
        middle = (low + high) // 2
        if detects(middle):
            high = middle
        else:
            low = middle
    return max(high, floor)


def paired_t_power(difference: float, sd: float, n: int, *, alpha: float = POWER_ALPHA) -> float:
    """The exact power of the two-sided paired t-test (noncentral t), to check the MDD against.

    Args:
        difference: the true mean difference.
        sd: the standard deviation of the paired differences (positive).
        n: the number of paired seeds (at least 2).
        alpha: the two-sided level, in ``(0, 1)``.

    Returns:
        ``P(|T| > t[1 - alpha/2, n-1])`` with ``T`` noncentral t of noncentrality
        ``difference * sqrt(n) / sd``.

    Raises:
        ValueError: ``n < 2`` or ``sd <= 0``.
    """
    if n < 2 or sd <= 0:
        raise ValueError(f"need n >= 2 and sd > 0, got n={n}, sd={sd}")
    from scipy import stats  # the noncentral t; imported when used

    dof = n - 1
    critical = float(special.stdtrit(dof, 1.0 - alpha / 2.0))
    shift = difference * math.sqrt(n) / sd
    return float(stats.nct.sf(critical, dof, shift) + stats.nct.cdf(-critical, dof, shift))
