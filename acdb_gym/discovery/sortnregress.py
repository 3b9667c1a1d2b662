"""sortnregress: the variance-sortability baseline of Reisach, Seiler & Weichwald (2021).

In a raw linear SCM with weights of magnitude ``>= 0.5`` and equal noise variances, variance
tends to grow along the causal order, so sorting variables by their marginal variance recovers
the order almost perfectly. sortnregress turns that order into a DAG by regressing each variable
on all earlier ones and keeping the significant coefficients. A good score from it means the
benchmark leaks the order through the scale of the variables (DESIGN §3.5, §9).

:func:`r2sortnregress` is the scale-invariant variant of Reisach et al. (2023): the same
regressions in the order of increasing R² (each variable regressed on all others), which can
still recover the order on standardized data, where variance says nothing.

Reisach et al. select parents with a BIC-tuned adaptive Lasso; this version keeps the
coefficients that pass an OLS t-test, as DESIGN §9 specifies ("keeps significant coefficients").

:func:`msortnregress` generalizes both to any marginal feature of
:data:`~acdb_gym.discovery.sortability.MARGINAL_FEATURES`, in either direction (the audit of
DESIGN §3.5 and the ``msort:<feature>:<asc|desc>`` agent).
"""

from __future__ import annotations

from typing import Final, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.types import FloatArray, IntArray
from acdb_gym.discovery._common import (
    as_data_matrix,
    check_full_rank_data,
    check_probability,
)
from acdb_gym.discovery.sortability import MARGINAL_FEATURES, marginal_scores, r2_scores

__all__ = [
    "SORT_DIRECTIONS",
    "SortDirection",
    "feature_order",
    "msortnregress",
    "r2sortnregress",
    "regress_in_order",
    "sortnregress",
]

SortDirection = Literal["asc", "desc"]
"""Which end of a feature order comes first: the smallest value (asc) or the largest (desc)."""

SORT_DIRECTIONS: Final[tuple[SortDirection, ...]] = get_args(SortDirection)
"""The two directions, for a parser's choices."""


def sortnregress(data: ArrayLike, *, alpha: float = 0.01) -> PDAG:
    """Estimate a DAG by sorting the variables by variance and regressing each on its predecessors.

    Variables are ordered by increasing sample variance (a stable sort, so ties keep index
    order). Each variable is regressed by ordinary least squares (with an intercept) on all the
    variables before it; a predecessor becomes a parent when the two-sided t-test of its
    coefficient has ``p < alpha``. The result is deterministic and fully directed.

    Args:
        data: observational samples, shape ``(n_samples, d)``, finite, no constant column,
            ``n_samples >= d + 1`` (the largest regression then keeps one residual degree of
            freedom).
        alpha: significance level of the coefficient tests, in ``(0, 1)``.

    Returns:
        A fully directed PDAG whose edges all point forward in the variance order.

    Raises:
        ValueError: ``alpha`` outside ``(0, 1)``, or ``data`` of the wrong shape, with too few
            rows, non-finite values or a constant column.

    >>> rng = np.random.default_rng(0)
    >>> x0 = rng.normal(size=500)
    >>> x1 = 2.0 * x0 + rng.normal(size=500)
    >>> sortnregress(np.column_stack([x1, x0])).directed_edges()
    [(1, 0)]
    """
    array = as_data_matrix(data, "data")
    return regress_in_order(array, np.argsort(array.var(axis=0), kind="stable"), alpha=alpha)


def r2sortnregress(data: ArrayLike, *, alpha: float = 0.01) -> PDAG:
    """Estimate a DAG by sorting the variables by R² and regressing each on its predecessors.

    Variables are ordered by increasing R² of each regressed on all the others
    (:func:`~acdb_gym.discovery.sortability.r2_scores`; a stable sort), then handled as in
    :func:`sortnregress`. R² does not change when a variable is rescaled, so this order can
    recover the causal order on standardized data (Reisach et al. 2023, "A Scale-Invariant
    Sorting Criterion to Find a Causal Order in Additive Noise Models").

    Args:
        data: observational samples, ``(n_samples, d)``, as for :func:`sortnregress`.
        alpha: significance level of the coefficient tests, in ``(0, 1)``.

    Returns:
        A fully directed PDAG whose edges all point forward in the R² order.

    Raises:
        ValueError: as :func:`sortnregress`, or a singular correlation matrix.

    Unlike :func:`sortnregress`, it gives the same graph when the variables are rescaled:

    >>> rng = np.random.default_rng(0)
    >>> data = rng.normal(size=(500, 3)) @ np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [0, 0, 1]])
    >>> graph = r2sortnregress(data).directed_edges()
    >>> graph == r2sortnregress(data * [100.0, 1.0, 0.01]).directed_edges(), len(graph) > 0
    (True, True)
    """
    array = as_data_matrix(data, "data")
    if array.shape[1] < 2:
        return regress_in_order(array, np.arange(array.shape[1]), alpha=alpha)
    return regress_in_order(array, np.argsort(r2_scores(array), kind="stable"), alpha=alpha)


def feature_order(data: ArrayLike, *, feature: str, direction: SortDirection) -> IntArray:
    """The variables sorted by a marginal feature (a stable sort: ties keep index order).

    Args:
        data: samples, ``(n_samples, d)``.
        feature: one of :data:`~acdb_gym.discovery.sortability.MARGINAL_FEATURES`.
        direction: ``"asc"`` puts the smallest value first, ``"desc"`` the largest.

    Returns:
        A permutation of ``0..d-1``; the identity when ``d < 2``.

    Raises:
        ValueError: an unknown feature or direction, or data the feature cannot use.
    """
    if feature not in MARGINAL_FEATURES:
        raise ValueError(f"feature must be one of {list(MARGINAL_FEATURES)}, got {feature!r}")
    if direction not in ("asc", "desc"):
        raise ValueError(f"direction must be 'asc' or 'desc', got {direction!r}")
    array = as_data_matrix(data, "data")
    if array.shape[1] < 2:
        return np.arange(array.shape[1], dtype=np.int64)
    scores = marginal_scores(array, feature)
    order: IntArray = np.argsort(scores if direction == "asc" else -scores, kind="stable")
    return order


def msortnregress(
    data: ArrayLike, *, feature: str, direction: SortDirection, alpha: float = 0.01
) -> PDAG:
    """Regress each variable on its predecessors in the order of a marginal feature.

    ``msortnregress(data, feature="variance", direction="asc")`` is :func:`sortnregress` and
    ``feature="r2", direction="asc"`` is :func:`r2sortnregress` (the same graph). Any other
    feature or direction measures how much that marginal order leaks the causal order
    (``"desc"`` sorts by decreasing value, a stable sort of the negated scores).

    Args:
        data: observational samples, ``(n_samples, d)``, as for :func:`sortnregress`.
        feature: one of :data:`~acdb_gym.discovery.sortability.MARGINAL_FEATURES`.
        direction: ``"asc"`` or ``"desc"``.
        alpha: significance level of the coefficient tests, in ``(0, 1)``.

    Returns:
        A fully directed PDAG whose edges all point forward in the feature order.

    Raises:
        ValueError: an unknown feature or direction, or invalid data or ``alpha``.

    >>> rng = np.random.default_rng(0)
    >>> x0 = rng.uniform(-1.0, 1.0, size=2000)  # a uniform root: kurtosis -1.2
    >>> x1 = x0 + 0.5 * rng.normal(size=2000)  # closer to Gaussian
    >>> msortnregress(np.column_stack([x1, x0]), feature="kurtosis", direction="asc").directed_edges()
    [(1, 0)]
    """
    array = as_data_matrix(data, "data")
    order = feature_order(array, feature=feature, direction=direction)
    return regress_in_order(array, order, alpha=alpha)


def regress_in_order(data: ArrayLike, order: ArrayLike, *, alpha: float = 0.01) -> PDAG:
    """Regress each variable on all variables before it in ``order``; keep significant ones.

    With the variance order this is :func:`sortnregress`; with a random order it is the
    control that shows what the regressions alone recover (the skeleton, with orientations
    at chance), so that the variance order's own contribution can be read off.

    Args:
        data: samples, shape ``(n_samples, d)``, as for :func:`sortnregress`.
        order: a permutation of ``0..d-1``.
        alpha: significance level of the coefficient tests, in ``(0, 1)``.

    Raises:
        ValueError: ``order`` is not a permutation, or the data or ``alpha`` are invalid.
    """
    check_probability(alpha, "alpha")
    array = as_data_matrix(data, "data")
    n_nodes = array.shape[1]
    order = np.asarray(order, dtype=np.int64)
    if sorted(order.tolist()) != list(range(n_nodes)):
        raise ValueError(f"order must be a permutation of 0..{n_nodes - 1}, got {order.tolist()}")
    if n_nodes < 2:
        return PDAG.empty(n_nodes)
    check_full_rank_data(array, "data")
    centered = array - array.mean(axis=0)
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    for position in range(1, n_nodes):
        child = int(order[position])
        predecessors = order[:position]
        parents = _significant_regressors(centered[:, predecessors], centered[:, child], alpha)
        adjacency[predecessors[parents], child] = True
    # Edges only run forward along a permutation: acyclic by construction, no checks to redo.
    return PDAG._valid(adjacency, np.zeros_like(adjacency))


def _significant_regressors(design: FloatArray, response: FloatArray, alpha: float) -> IntArray:
    """Positions of the columns of ``design`` whose OLS coefficient has a t-test p below alpha.

    Both arguments are centred, which is OLS with an intercept; the intercept's degree of
    freedom is still subtracted. Coefficients with an undefined test (collinear columns, a
    perfect fit) do not count as significant.
    """
    n_samples, n_regressors = design.shape
    dof = n_samples - n_regressors - 1
    coefficients, *_ = np.linalg.lstsq(design, response, rcond=None)
    residuals = response - design @ coefficients
    noise_var = float(residuals @ residuals) / dof
    with np.errstate(divide="ignore", invalid="ignore"):
        std_errors = np.sqrt(noise_var * np.diag(np.linalg.pinv(design.T @ design)))
        t_values = coefficients / std_errors
    # special.stdtr(dof, -t) is what stats.t.sf(t, dof) computes (bit for bit), without the
    # distribution wrapper's argument checks, which cost more than the regression itself.
    p_values = 2.0 * special.stdtr(dof, -np.abs(t_values))
    return np.flatnonzero(np.isfinite(p_values) & (p_values < alpha))
