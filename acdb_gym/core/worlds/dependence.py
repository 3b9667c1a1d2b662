"""The nonlinear acceptance rule's dependence measures on a calibration sample (DESIGN §3.1).

Per true edge ``i -> j``: the correlation ratio ``eta(X_j | X_i)`` (:func:`correlation_ratio`)
and the unique contribution of ``X_i`` to ``X_j`` (:func:`unique_contribution`); the module
docstring of :mod:`~acdb_gym.core.worlds.acceptance` defines both.
:func:`edge_dependences` reads them for one node as the generator accepts it, on a
:class:`Calibration` that keeps each parent's bins.

Generation is the hot path of a nonlinear reset (about 30 nodes at v1 L5, each checked on 1,000
rows), so every value is computed once (a column's bins and counts per parent, a child's mean
and total sum of squares per node, a mean shared by its variance, a network's shifted blocks in
one stacked pass) with numpy's own operations on the same shapes: each value is bit for bit
what the plain expression (``x.mean()``, ``x.var()``, one evaluation per parent) gives, so the
drawn worlds, and the ladders' manifest digests, do not move. ``tests/core/
test_nonlinear_generation.py`` pins each shortcut to its plain expression.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from acdb_gym.core.types import FloatArray, IntArray
from acdb_gym.core.worlds.mechanisms import (
    AdditiveMechanism,
    Mechanism,
    NetworkMechanism,
    NonlinearSCM,
)

__all__ = [
    "ETA_BINS",
    "UNIQUE_ROWS",
    "Calibration",
    "correlation_ratio",
    "edge_dependences",
    "mean_variance",
    "unique_contribution",
]

ETA_BINS = 16
"""Equal-count bins of the correlation ratio's estimate."""
UNIQUE_ROWS = 500
"""Calibration rows a network mechanism's unique contributions are estimated on."""


@dataclass(frozen=True)
class _Bins:
    """A column's :data:`ETA_BINS` bins, their counts and how many are non-empty (what the
    correlation ratio reads of the conditioning variable, shared by all its children)."""

    groups: IntArray
    counts: FloatArray
    """The counts as floats (exact), the type ``counts @ x`` casts them to."""
    divisor: IntArray
    used: int

    @classmethod
    def of(cls, x: FloatArray, bins: int) -> _Bins:
        groups = _bin_groups(x, bins)
        counts = np.bincount(groups, minlength=bins)
        divisor = np.maximum(counts, 1)
        return cls(groups, counts.astype(np.float64), divisor, int(np.count_nonzero(counts)))


@dataclass
class Calibration:
    """The calibration sample as the generator fills it (column ``j`` holds ``X_j`` once node
    ``j`` is accepted, its noise before) and the bins of the accepted columns."""

    sample: FloatArray
    bins: dict[int, _Bins]

    def bins_of(self, i: int) -> _Bins:
        if i not in self.bins:
            self.bins[i] = _Bins.of(self.sample[:, i], ETA_BINS)
        return self.bins[i]


def mean_variance(x: FloatArray) -> tuple[float, float]:
    """``x.mean()`` and ``x.var()`` of a 1-D float64 ``x`` with the mean summed once: numpy's own
    steps (a sum divided by the count; the deviations from it squared, summed and divided by
    the count), so both are bit for bit numpy's, and ``np.sqrt`` of the variance is
    ``x.std()``."""
    count = x.size
    mean = np.add.reduce(x) / count
    deviations = x - mean
    np.square(deviations, out=deviations)
    return mean, np.add.reduce(deviations) / count


def _bin_groups(x: FloatArray, bins: int) -> IntArray:
    """Bins of the standardized ``x``: ``bins - 2`` of equal width over ``[-2, 2]`` and the two
    tails (no sort, unlike equal-count bins; each holds about 2% or more of a unit-variance
    sample)."""
    mean, variance = mean_variance(x)
    spread = math.sqrt(variance)
    z = (x - mean) / (spread if spread > 0 else 1.0)
    z += 2.0
    z *= (bins - 2) / 4.0
    index = np.floor(z, out=z)
    index += 1.0
    # np.clip(index, 0, bins - 1) without its wrappers.
    np.maximum(index, 0.0, out=index)
    np.minimum(index, bins - 1.0, out=index)
    return index.astype(np.int64)


def _eta(bins: _Bins, y: FloatArray, mean: float, total: float) -> float:
    """The adjusted correlation ratio of ``y`` (mean ``mean``, total sum of squares ``total``)
    on ``bins``."""
    if total == 0.0:
        return 0.0
    n = len(y)
    means = np.bincount(bins.groups, weights=y, minlength=len(bins.counts)) / bins.divisor
    means -= mean
    between = float(bins.counts @ np.square(means, out=means))
    adjusted = 1.0 - (1.0 - between / total) * (n - 1) / (n - bins.used)
    return math.sqrt(max(adjusted, 0.0))


def _total(y: FloatArray) -> tuple[float, float]:
    """``y``'s mean (``y.mean()``) and total sum of squares about it."""
    mean = np.add.reduce(y) / y.size
    return mean, float(np.dot(y - mean, y - mean))


def correlation_ratio(x: FloatArray, y: FloatArray, *, bins: int = ETA_BINS) -> float:
    """Pearson's correlation ratio ``eta(y | x)``: ``sqrt(Var E[y | x] / Var y)`` with
    ``E[y | x]`` estimated by the means of ``y`` over ``bins`` bins of standardized ``x``
    (``bins - 2`` of equal width over ``[-2, 2]`` and the two tails), adjusted for the number
    ``b`` of non-empty bins like an adjusted R^2 (``1 - (1 - eta^2) (n - 1) / (n - b)``,
    floored at 0).

    >>> x = np.linspace(-1, 1, 1000)
    >>> noise = np.random.default_rng(0).normal(size=1000)
    >>> round(correlation_ratio(x, x**2), 2), correlation_ratio(x, noise) < 0.1
    (0.98, True)
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    return _eta(_Bins.of(x, bins), y, *_total(y))


def edge_dependences(
    mechanism: Mechanism,
    scale: float,
    calibration: Calibration,
    j: int,
    *,
    stop_below: float = -math.inf,
) -> FloatArray:
    """Per parent of ``j``, the smaller of ``eta(X_j | X_i)`` and the unique contribution;
    the values up to the first one below ``stop_below`` when one is."""
    sample = calibration.sample
    y = np.ascontiguousarray(sample[:, j])  # the same values and sums, read faster
    mean, total = _total(y)
    unique = _UniqueContributions(mechanism, scale, sample)
    values = np.empty(len(mechanism.parents))
    for index, i in enumerate(mechanism.parents):
        eta = _eta(calibration.bins_of(i), y, mean, total)
        values[index] = eta if eta < stop_below else min(eta, unique(index))
        if values[index] < stop_below:
            return values[: index + 1]
    return values


class _UniqueContributions:
    """The unique contribution of each parent of ``mechanism`` on ``sample`` (module
    docstring), ``scale`` the child's standard deviation before standardization."""

    def __init__(self, mechanism: Mechanism, scale: float, sample: FloatArray) -> None:
        self.mechanism, self.scale, self.sample = mechanism, scale, sample
        self.variances: FloatArray | None = None

    def __call__(self, index: int) -> float:
        mechanism = self.mechanism
        if isinstance(mechanism, AdditiveMechanism):
            # Each term has variance weights[p]**2 on the sample, and an independent copy of
            # the parent doubles it in the difference: sqrt(Var / 2) = |weight|, no evaluation.
            return float(abs(mechanism.weights[index])) / self.scale
        if self.variances is None:
            self.variances = _network_differences(mechanism, self.sample)
        return math.sqrt(self.variances[index] / 2.0) / self.scale


def _network_differences(network: NetworkMechanism, sample: FloatArray) -> FloatArray:
    """Per parent ``i`` of ``network``, ``Var(f(x) - f(x'))`` over the first
    :data:`UNIQUE_ROWS` rows of ``sample`` (enough for a variance, relative error about 6%),
    ``x'`` with ``X_i`` replaced by an independent copy.

    All parents at once: the unshifted rows and each parent's shifted copy are stacked
    ``(1 + p, rows, p)``, and numpy evaluates a stack block by block with the products,
    elementwise steps and per-row sums of one block, so each variance is bit for bit that of
    evaluating its blocks alone.
    """
    parents = network.parents
    rows = sample[:UNIQUE_ROWS][:, list(parents)]
    blocks = np.empty((1 + len(parents), *rows.shape))
    blocks[:] = rows
    for index, parent in enumerate(parents):
        blocks[1 + index, :, index] = _independent_copy(sample[:, parent], len(rows))
    values = network.of_parents(blocks)
    differences = values[0] - values[1:]
    count = differences.shape[1]
    means = np.add.reduce(differences, axis=1) / count
    deviations = differences - means[:, None]
    np.square(deviations, out=deviations)
    return np.asarray(np.add.reduce(deviations, axis=1) / count, dtype=np.float64)


def _independent_copy(x: FloatArray, rows: int) -> FloatArray:
    """The first ``rows`` values of ``x`` rolled by half its length (``np.roll(x, len(x) //
    2)[:rows]``, a slice when the roll does not wrap within them): the values an independent
    copy of the variable takes on those rows."""
    n = len(x)
    shift = n // 2
    if rows <= shift:
        return x[n - shift : n - shift + rows]
    return np.roll(x, shift)[:rows]


def unique_contribution(scm: NonlinearSCM, sample: FloatArray, i: int, j: int) -> float:
    """``sqrt(Var(f_j(x) - f_j(x')) / 2) / scale_j`` where ``x'`` has column ``i`` replaced by an
    independent copy (the column rolled by half the sample; for an additive term, exactly the
    term's weight): the standard deviation of standardized ``X_j`` that ``X_i`` alone moves
    given the other parents."""
    mechanism = scm.mechanisms[j]
    if mechanism is None or i not in mechanism.parents:
        return 0.0
    unique = _UniqueContributions(mechanism, float(scm.scale[j]), sample)
    return unique(mechanism.parents.index(i))
