"""The report's statistics on plain arrays: bootstrap CIs and the sign-flip test.

:func:`bootstrap_ci` (stratified percentile bootstrap of a mean) and :func:`sign_flip_pvalue`
(two-sided paired sign-flip permutation test of a mean difference: exact enumeration up to
:data:`MAX_EXACT_N` differences, :data:`N_SIGN_FLIPS` random patterns beyond) know nothing of
result rows; :mod:`acdb_gym.report.aggregation`
and :mod:`acdb_gym.report.comparison` apply them to agent rows. Both are deterministic: each call
seeds its own generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from acdb_gym.report.types import Estimate

__all__ = [
    "CI_LEVEL",
    "MAX_EXACT_N",
    "N_BOOTSTRAP",
    "N_SIGN_FLIPS",
    "bootstrap_ci",
    "sign_flip_is_exact",
    "sign_flip_pvalue",
]

N_BOOTSTRAP: Final = 2000
CI_LEVEL: Final = 0.95
N_SIGN_FLIPS: Final = 200_000
"""Random sign patterns of a Monte Carlo sign-flip test: its smallest p-value is 1/200,001,
so p-values below 1e-4 are resolved (10,000 floored every p-value at 1e-4)."""
MAX_EXACT_N: Final = 20
"""Up to this many paired differences the sign-flip test enumerates all 2^n patterns."""


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


def sign_flip_is_exact(n: int, *, max_exact_n: int = MAX_EXACT_N) -> bool:
    """Whether :func:`sign_flip_pvalue` enumerates every sign pattern of ``n`` differences."""
    return n <= max_exact_n


def sign_flip_pvalue(
    differences: np.ndarray,
    *,
    n_resamples: int = N_SIGN_FLIPS,
    max_exact_n: int = MAX_EXACT_N,
    seed: int = 0,
) -> float:
    """Two-sided paired sign-flip p-value of the mean of ``differences``.

    Under the null every difference's sign is exchangeable, so the p-value is the share of the
    ``2**n`` sign patterns whose flipped sum is at least as far from zero as the observed one.
    Up to ``max_exact_n`` differences every pattern is enumerated (the p-value is exact and
    at least ``2 / 2**n``). Beyond that ``n_resamples`` random patterns are drawn from
    ``np.random.default_rng(seed)`` and ``p = (1 + as extreme) / (1 + n_resamples)``: the
    observed pattern counts as one of the draws, so a Monte Carlo p-value is never 0 and its
    smallest value is ``1 / (1 + n_resamples)`` (about 5e-6 with the default 200,000).
    Sums within a relative ``1e-10`` of the observed one count as ties (as extreme).

    >>> sign_flip_pvalue(np.array([1.0, 2.0, 3.0]))  # the largest of 8 equally likely patterns
    0.25

    Args:
        differences: the per-seed differences ``a - b``.
        n_resamples: random sign patterns drawn when exact enumeration is too large.
        max_exact_n: the largest count of differences that is enumerated exactly.
        seed: the generator seed of the random patterns.

    Returns:
        The p-value; 1.0 for fewer than two differences or all-zero differences.

    Raises:
        ValueError: ``n_resamples`` below 1 or non-finite differences.
    """
    values = np.asarray(differences, dtype=np.float64).ravel()
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"differences must be finite, got {values.tolist()}")
    if values.size < 2 or not values.any():
        return 1.0
    tables = _byte_tables(values)
    total = float(values.sum())
    threshold = abs(total) - 1e-10 * float(np.abs(values).sum())
    if sign_flip_is_exact(values.size, max_exact_n=max_exact_n):
        return _exact_share(tables, values.size, total, threshold)
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, n_resamples, _CHUNK):
        count = min(_CHUNK, n_resamples - start)
        patterns = rng.integers(0, 256, size=(count, tables.shape[0]), dtype=np.uint8)
        extreme += _count_extreme(tables, patterns, total, threshold)
    return (1 + extreme) / (1 + n_resamples)


_CHUNK: Final = 25_000
# _BYTE_BITS[b, k] is bit k of the byte b: a byte of a sign pattern flips up to 8 differences.
_BYTE_BITS: Final = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)


def _byte_tables(values: np.ndarray) -> np.ndarray:
    """``tables[j, b]``: the sum of the differences ``8j .. 8j+7`` whose bit is set in byte ``b``.

    A sign pattern is a row of bytes; the sum of the differences it flips is one table lookup
    per byte instead of one multiply per difference, which makes 200,000 patterns of hundreds
    of differences cheap. Bits past the last difference select nothing.
    """
    n_bytes = (values.size + 7) // 8
    padded = np.zeros(8 * n_bytes)
    padded[: values.size] = values
    return np.ascontiguousarray((_BYTE_BITS @ padded.reshape(n_bytes, 8).T).T)


def _count_extreme(tables: np.ndarray, patterns: np.ndarray, total: float, threshold: float) -> int:
    """How many of ``patterns`` (rows of bytes) give a sum at least ``threshold`` from zero."""
    columns = np.ascontiguousarray(patterns.T)  # one byte of every pattern a row: fast gathers
    flipped = _row_sums([table[column] for table, column in zip(tables, columns, strict=True)])
    return int(np.count_nonzero(np.abs(total - 2.0 * flipped) >= threshold))


def _row_sums(columns: list[np.ndarray]) -> np.ndarray:
    """``np.stack(columns, axis=1).sum(axis=1)``, bit for bit, one column at a time.

    NumPy sums a row of ``n`` values in order below 8, with 8 running sums combined pairwise
    up to 128 and by halves (cut at a multiple of 8) above; the same additions on whole
    columns give the same floats without the per-row cost of a reduction over a short axis
    (5x faster at 48 differences).
    """
    count = len(columns)
    if count < 8:
        total = columns[0]
        for column in columns[1:]:
            total = total + column
        return total
    if count <= 128:
        sums = list(columns[:8])
        start = 8
        while start + 8 <= count:
            sums = [sums[k] + columns[start + k] for k in range(8)]
            start += 8
        total = ((sums[0] + sums[1]) + (sums[2] + sums[3])) + (
            (sums[4] + sums[5]) + (sums[6] + sums[7])
        )
        for column in columns[start:]:
            total = total + column
        return total
    half = count // 2 - (count // 2) % 8
    return _row_sums(columns[:half]) + _row_sums(columns[half:])


def _exact_share(tables: np.ndarray, n: int, total: float, threshold: float) -> float:
    """The share of all ``2**n`` sign patterns as extreme as the observed one.

    A pattern and its mirror image have opposite sums, so only the ``2**(n-1)`` patterns that
    keep the last difference's sign are enumerated.
    """
    half = 2 ** (n - 1)
    extreme = 0
    for start in range(0, half, _CHUNK):
        codes = np.arange(start, min(half, start + _CHUNK), dtype=np.int64)
        shifts = 8 * np.arange(tables.shape[0], dtype=np.int64)
        patterns = ((codes[:, None] >> shifts) & 0xFF).astype(np.uint8)
        extreme += _count_extreme(tables, patterns, total, threshold)
    return extreme / half
