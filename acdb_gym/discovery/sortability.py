"""Sortability: how well a per-variable score orders the variables along the causal order.

Reisach, Seiler & Weichwald (2021, "Beware of the Simulated DAG!") call data *var-sortable*
when marginal variance tends to grow along directed paths; Reisach et al. (2023, "A
Scale-Invariant Sorting Criterion to Find a Causal Order in Additive Noise Models") show that
the coefficient of determination R² of each variable regressed on all others does the same on
standardized data, where variance no longer can. A sortability near 1 means sorting by the
score recovers the causal order (a shortcut a benchmark should not offer); 0.5 is chance.

:func:`order_alignment` (kept in :mod:`acdb_gym.core.worlds.sortability`, where a level's
acceptance rule reads it too) is the papers' measure: over every ordered pair ``(i, j)`` joined by a
directed path, counted once per path length ``k = 1 .. d-1`` that joins them (pairs of the
``k``-th power of the adjacency matrix), the share whose score rises from ``i`` to ``j``; a
tie counts one half. It agrees with the ``CausalDisco`` package of the same authors
(``CausalDisco.analytics``, tolerance 0), which the tests use as the reference; this module
needs only numpy.

Variance and R² are two of many marginal features that can leak the order. The audit (DESIGN
§3.5) checks every feature in :data:`MARGINAL_FEATURES`: :func:`marginal_scores` computes one
per column and :func:`feature_sortability` is its :func:`order_alignment` with the true DAG.
Range and MAD grow with scale as variance does; excess kurtosis and |skewness| move towards
those of a Gaussian as noises add up along a path (in non-Gaussian or nonlinear worlds the
roots carry the least mixed, most non-Gaussian marginals).
"""

from __future__ import annotations

from typing import Final, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.types import FloatArray
from acdb_gym.core.worlds.sortability import order_alignment, r2_of_columns
from acdb_gym.discovery._common import as_data_matrix, check_no_constant_column

__all__ = [
    "MARGINAL_FEATURES",
    "MarginalFeature",
    "feature_sortability",
    "marginal_scores",
    "order_alignment",
    "r2_scores",
    "r2_sortability",
    "var_sortability",
]

MarginalFeature = Literal["variance", "r2", "range", "mad", "kurtosis", "abs_skew"]
"""A marginal feature of one variable's observational sample (see :func:`marginal_scores`)."""

MARGINAL_FEATURES: Final[tuple[MarginalFeature, ...]] = get_args(MarginalFeature)
"""Every audited marginal feature, in the order the report lists them."""


def r2_scores(data: ArrayLike) -> FloatArray:
    """R² of each variable regressed (OLS with an intercept) on all the others.

    Computed from the inverse of the sample correlation matrix:
    ``R²_j = 1 - 1 / (C^-1)_jj``, which is scale-invariant.

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(1000, 1))
    >>> np.round(r2_scores(np.hstack([x, x + 0.1 * rng.normal(size=(1000, 1)),
    ...                               rng.normal(size=(1000, 1))])), 2)
    array([0.99, 0.99, 0.  ])

    Args:
        data: samples, ``(n_samples, d)``, finite, no constant column, ``d >= 2``.

    Returns:
        The ``d`` values of R², in ``[0, 1]``.

    Raises:
        ValueError: bad data, or a singular correlation matrix (a variable is an exact linear
            function of the others).
    """
    array = as_data_matrix(data, "data")
    if array.shape[1] < 2:
        raise ValueError(f"R² needs at least 2 variables, got {array.shape[1]}")
    check_no_constant_column(array, "data")
    scores = r2_of_columns(array)
    if scores is None:
        raise ValueError(
            "the correlation matrix of data is singular (a variable is a linear function of "
            "the others); R² is 1 for every such variable and cannot order them"
        )
    return scores


def var_sortability(data: ArrayLike, adjacency: ArrayLike) -> float:
    """:func:`order_alignment` of the sample variances (Reisach et al. 2021).

    Args:
        data: samples, ``(n_samples, d)``.
        adjacency: the true DAG's adjacency matrix, ``(d, d)``.

    Returns:
        The var-sortability in ``[0, 1]``; NaN for a graph without edges.
    """
    return order_alignment(adjacency, as_data_matrix(data, "data").var(axis=0))


def r2_sortability(data: ArrayLike, adjacency: ArrayLike) -> float:
    """:func:`order_alignment` of :func:`r2_scores` (Reisach et al. 2023).

    Args:
        data: samples, ``(n_samples, d)``.
        adjacency: the true DAG's adjacency matrix, ``(d, d)``.

    Returns:
        The R²-sortability in ``[0, 1]``; NaN for a graph without edges.
    """
    return order_alignment(adjacency, r2_scores(data))


def marginal_scores(data: ArrayLike, feature: str) -> FloatArray:
    """One value of a marginal feature per column of ``data``.

    The features (all population-style moments, divisor ``n``):

    ========== ===================================================================
    variance   the sample variance (as :func:`var_sortability` and sortnregress)
    r2         :func:`r2_scores`: R² of the column regressed on all the others
    range      ``max - min``
    mad        the median absolute deviation from the median (unscaled)
    kurtosis   excess kurtosis ``m4 / m2² - 3`` (0 for a Gaussian)
    abs_skew   absolute skewness ``|m3| / m2^1.5``
    ========== ===================================================================

    >>> marginal_scores([[0.0, 1.0], [1.0, 1.0], [2.0, 4.0]], "range").tolist()
    [2.0, 3.0]

    Args:
        data: samples, ``(n_samples, d)``, finite; no constant column for ``r2``,
            ``kurtosis`` and ``abs_skew`` (``r2`` also needs ``d >= 2``).
        feature: one of :data:`MARGINAL_FEATURES`.

    Returns:
        The ``d`` feature values.

    Raises:
        ValueError: an unknown feature, or data the feature cannot be computed on.
    """
    if feature not in MARGINAL_FEATURES:
        raise ValueError(f"feature must be one of {list(MARGINAL_FEATURES)}, got {feature!r}")
    array = as_data_matrix(data, "data")
    if feature == "r2":
        return r2_scores(array)
    if feature == "variance":
        variances: FloatArray = array.var(axis=0)
        return variances
    if feature == "range":
        ranges: FloatArray = array.max(axis=0) - array.min(axis=0)
        return ranges
    if feature == "mad":
        mads: FloatArray = np.median(np.abs(array - np.median(array, axis=0)), axis=0)
        return mads
    check_no_constant_column(array, "data")
    centered = array - array.mean(axis=0)
    m2 = np.mean(centered**2, axis=0)
    if feature == "kurtosis":
        kurtosis: FloatArray = np.mean(centered**4, axis=0) / m2**2 - 3.0
        return kurtosis
    skew: FloatArray = np.abs(np.mean(centered**3, axis=0)) / m2**1.5
    return skew


def feature_sortability(data: ArrayLike, adjacency: ArrayLike, feature: str) -> float:
    """:func:`order_alignment` of :func:`marginal_scores`: var-sortability for any feature.

    ``feature_sortability(data, adjacency, "variance")`` is :func:`var_sortability` and
    ``"r2"`` is :func:`r2_sortability`. Below 0.5 the feature falls along the causal order
    (its descending order is the shortcut).

    Args:
        data: samples, ``(n_samples, d)``.
        adjacency: the true DAG's adjacency matrix, ``(d, d)``.
        feature: one of :data:`MARGINAL_FEATURES`.

    Returns:
        The sortability in ``[0, 1]``; NaN for a graph without edges.
    """
    return order_alignment(adjacency, marginal_scores(data, feature))
