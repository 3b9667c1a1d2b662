"""The report's statistics on plain arrays: bootstrap CIs and the sign-flip test.

:func:`bootstrap_ci` (stratified percentile bootstrap of a mean) and :func:`sign_flip_pvalue`
(two-sided paired sign-flip permutation test of a mean difference, via
``scipy.stats.permutation_test``) know nothing of result rows; :mod:`acdb_gym.report.aggregation`
and :mod:`acdb_gym.report.comparison` apply them to agent rows. Both are deterministic: each call
seeds its own generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
from scipy import stats

from acdb_gym.report.types import Estimate

__all__ = ["CI_LEVEL", "N_BOOTSTRAP", "N_PERMUTATIONS", "bootstrap_ci", "sign_flip_pvalue"]

N_BOOTSTRAP: Final = 2000
CI_LEVEL: Final = 0.95
N_PERMUTATIONS: Final = 10_000


def bootstrap_ci(
    strata: Sequence[Sequence[float] | np.ndarray],
    *,
    n_resamples: int = N_BOOTSTRAP,
    confidence: float = CI_LEVEL,
    seed: int = 0,
) -> Estimate:
    """Mean and percentile-bootstrap CI of values grouped into strata (e.g. levels).

    Each resample draws, within every stratum, as many values as it holds, with replacement, and
    takes the mean of all drawn values; so the strata keep their weights, as in the design
    (episodes per level). One stratum is the ordinary bootstrap. NaNs are dropped. The generator
    is ``np.random.default_rng(seed)`` per call, so the result does not depend on call order.
    The interval is widened to include the mean when rounding puts it a hair outside (all
    resampled means equal).

    >>> estimate = bootstrap_ci([[0.2, 0.4], [1.0]])
    >>> round(estimate.mean, 4), estimate.n, estimate.low <= estimate.mean <= estimate.high
    (0.5333, 3, True)

    Args:
        strata: the per-seed values of each stratum.
        n_resamples: bootstrap resamples.
        confidence: the interval's coverage.
        seed: the generator seed.

    Returns:
        The :class:`Estimate` (``Estimate.empty()`` when there are no finite values).
    """
    arrays = [np.asarray(values, dtype=np.float64).ravel() for values in strata]
    arrays = [values[np.isfinite(values)] for values in arrays]
    arrays = [values for values in arrays if values.size]
    total = sum(values.size for values in arrays)
    if total == 0:
        return Estimate.empty()
    mean = float(np.concatenate(arrays).mean())
    rng = np.random.default_rng(seed)
    sums = np.zeros(n_resamples)
    for values in arrays:
        sums += values[rng.integers(0, values.size, size=(n_resamples, values.size))].sum(axis=1)
    tail = 50.0 * (1.0 - confidence)
    low, high = np.percentile(sums / total, [tail, 100.0 - tail])
    return Estimate(mean, min(float(low), mean), max(float(high), mean), total)


def _mean_statistic(sample: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(sample, axis=axis)


def sign_flip_pvalue(differences: np.ndarray, *, n_resamples: int = N_PERMUTATIONS) -> float:
    """Two-sided paired sign-flip p-value of the mean of ``differences``.

    Under the null every difference's sign is exchangeable. The test is
    ``scipy.stats.permutation_test`` with ``permutation_type="samples"``, the mean as statistic
    and a fixed ``random_state``; it enumerates all ``2**n`` sign patterns when that is at most
    ``n_resamples``.

    >>> sign_flip_pvalue(np.array([1.0, 2.0, 3.0]))  # the largest of 8 equally likely patterns
    0.25

    Args:
        differences: the per-seed differences ``a - b``.
        n_resamples: random sign patterns drawn when exact enumeration is too large.

    Returns:
        The p-value; 1.0 for a single difference (both of its sign patterns are as extreme as
        the observed one, and scipy needs two observations).
    """
    if differences.size == 1:
        return 1.0
    result = stats.permutation_test(
        (differences,),
        _mean_statistic,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        random_state=0,
    )
    return float(result.pvalue)
