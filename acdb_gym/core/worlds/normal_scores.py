"""Normal-score maps: the monotone maps that make each nonlinear variable's marginal standard
normal (DESIGN §3.1, "Gaussianized marginals"), fitted on the generator's calibration columns and
applied at every sample.

Both directions are on the reset's hot path (a fit per node at generation, a map per node and
sample), so each has a fast path that computes numpy's own values bit for bit: a fit maps its
own sample in rank order, a long column is mapped in sorted order (``np.interp``'s binary search
mispredicts its branches on a column in random order).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from acdb_gym.core.types import FloatArray, IntArray, readonly

__all__ = ["NORMAL_SCORE_KNOTS", "NormalScoreMap"]

NORMAL_SCORE_KNOTS = 101
"""Knots of a :class:`NormalScoreMap`: order statistics at evenly spaced ranks of the fitting
sample, its smallest and largest included."""
_TAIL_KNOTS = 5
"""Knot intervals over which a map's slope beyond its outermost knots is measured."""


@functools.lru_cache(maxsize=8)
def _knot_ranks(n: int, n_knots: int) -> tuple[IntArray, FloatArray]:
    """The knots' ranks in a sorted sample of ``n`` and their normal scores (read-only)."""
    ranks = np.round(np.linspace(0, n - 1, n_knots)).astype(np.int64)
    return readonly(ranks), readonly(ndtri((ranks + 0.5) / n))


@functools.lru_cache(maxsize=8)
def _knot_intervals(n: int, n_knots: int) -> tuple[IntArray, FloatArray, IntArray, FloatArray]:
    """The knots' ranks and scores (:func:`_knot_ranks`), and per rank of a sorted sample of
    ``n`` the knot interval it falls in (``j`` with ``ranks[j] <= rank < ranks[j + 1]``; the
    last interval for the largest) and that interval's left score (read-only)."""
    ranks, scores = _knot_ranks(n, n_knots)
    interval = np.minimum(np.searchsorted(ranks, np.arange(n), side="right") - 1, n_knots - 2)
    return ranks, scores, readonly(interval), readonly(scores[interval])


_SORTED_MAP_SIZE = 64
"""Values from which a :class:`NormalScoreMap` maps ``x`` in sorted order."""


@dataclass(frozen=True, eq=False)
class NormalScoreMap:
    """A monotone map that makes a variable's marginal standard normal (DESIGN §3.1).

    Fitted on a sample: the knots are order statistics of the sample and ``scores`` their
    normal scores ``Phi^-1((rank + 1/2) / n)``; between knots the map interpolates linearly,
    beyond the outermost knots it continues with the slope of the outermost
    :data:`_TAIL_KNOTS` knot intervals (strictly increasing everywhere, so it keeps every
    conditional independence and the causal graph of the variables it transforms).

    >>> z = np.random.default_rng(0).exponential(size=1000)  # skewed
    >>> y = NormalScoreMap.fit(z)(np.random.default_rng(1).exponential(size=4000))
    >>> bool(abs(np.mean(y**3)) < 0.2 and abs(np.mean(y**4) - 3) < 0.4)
    True
    """

    knots: FloatArray
    scores: FloatArray

    @classmethod
    def fit(cls, sample: FloatArray, *, n_knots: int = NORMAL_SCORE_KNOTS) -> NormalScoreMap:
        """The map of ``sample`` (at least ``n_knots`` values, no ties among the knots)."""
        return cls._of_ordered(np.sort(np.asarray(sample, dtype=np.float64)), n_knots)

    @classmethod
    def _of_ordered(cls, ordered: FloatArray, n_knots: int) -> NormalScoreMap:
        n = ordered.size
        if n < n_knots:
            raise ValueError(f"need at least {n_knots} values to fit the map, got {n}")
        ranks, scores = _knot_ranks(n, n_knots)
        knots = ordered[ranks]
        if not (np.diff(knots) > 0).all():
            raise ValueError("the sample has ties among its knots; the map must be increasing")
        return cls(readonly(knots), scores)

    @classmethod
    def fit_and_map(cls, sample: FloatArray) -> tuple[NormalScoreMap, FloatArray]:
        """The map of ``sample`` and ``sample``'s normal scores under it, bit for bit
        ``(fit(sample), fit(sample)(sample))``.

        Each value's knot interval follows from its rank, so the values are interpolated in
        sorted order with ``np.interp``'s arithmetic (``slope * (x - knot) + score``, the
        knot's own score at a knot) instead of by ``np.interp``'s binary search, whose
        branches a fresh sample mispredicts (about three times the cost of the sort); with
        ties in the sample, ``np.interp`` itself.
        """
        x = np.asarray(sample, dtype=np.float64)
        order = np.argsort(x)
        ordered = x[order]
        if x.size < NORMAL_SCORE_KNOTS or not (ordered[1:] > ordered[:-1]).all():
            normal_scores = cls._of_ordered(ordered, NORMAL_SCORE_KNOTS)
            return normal_scores, np.interp(x, normal_scores.knots, normal_scores.scores)
        ranks, scores, interval, interval_scores = _knot_intervals(x.size, NORMAL_SCORE_KNOTS)
        knots = readonly(ordered[ranks])  # increasing, as the whole sample is
        normal_scores = cls(knots, scores)
        slopes = (scores[1:] - scores[:-1]) / (knots[1:] - knots[:-1])
        mapped = slopes[interval] * (ordered - knots[interval]) + interval_scores
        mapped[ranks] = scores
        unsorted = np.empty_like(mapped)
        unsorted[order] = mapped
        return normal_scores, unsorted

    def __call__(self, x: FloatArray) -> FloatArray:
        """The normal scores of ``x``.

        A long 1-D ``x`` is mapped in sorted order and scattered back, the same values as
        :meth:`_map`'s: np.interp's binary search follows its guess from the previous value,
        whose branches a random order mispredicts (an argsort and a scatter cost less than
        those misses from about a hundred values on), and the tails are the sorted ends.
        """
        if x.ndim == 1 and x.size >= _SORTED_MAP_SIZE:
            order = np.argsort(x)
            ordered = x[order]
            if not math.isnan(ordered[-1]):
                y = np.empty(x.shape)
                y[order] = self._map_sorted(ordered)
                return y
        return self._map(x)

    def _map(self, x: FloatArray) -> FloatArray:
        knots, scores, t = self.knots, self.scores, _TAIL_KNOTS
        y = np.interp(x, knots, scores)
        if x.min() < knots[0]:
            below = x < knots[0]
            slope = (scores[t] - scores[0]) / (knots[t] - knots[0])
            y[below] = scores[0] + (x[below] - knots[0]) * slope
        if x.max() > knots[-1]:
            above = x > knots[-1]
            slope = (scores[-1] - scores[-1 - t]) / (knots[-1] - knots[-1 - t])
            y[above] = scores[-1] + (x[above] - knots[-1]) * slope
        return y

    def _map_sorted(self, ordered: FloatArray) -> FloatArray:
        """:meth:`_map` of an ascending ``ordered`` (no NaN): the values below the first knot
        and above the last are its two ends."""
        knots, scores, t = self.knots, self.scores, _TAIL_KNOTS
        y = np.interp(ordered, knots, scores)
        if ordered[0] < knots[0]:
            below = int(np.searchsorted(ordered, knots[0], side="left"))
            slope = (scores[t] - scores[0]) / (knots[t] - knots[0])
            y[:below] = scores[0] + (ordered[:below] - knots[0]) * slope
        if ordered[-1] > knots[-1]:
            above = int(np.searchsorted(ordered, knots[-1], side="right"))
            slope = (scores[-1] - scores[-1 - t]) / (knots[-1] - knots[-1 - t])
            y[above:] = scores[-1] + (ordered[above:] - knots[-1]) * slope
        return y

    def parameters(self) -> FloatArray:
        """Every number, for the instance digest."""
        return np.concatenate([self.knots, self.scores])
