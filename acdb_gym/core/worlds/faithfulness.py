"""Population partial correlations and the instance acceptance check (DESIGN §3, step 4).

The v0 check (the paper's "relevant partial correlations"): for every true edge ``i -> j``,
``|rho(i, j | Pa(j) \\ {i})| >= eps`` and ``|rho(i, j | V \\ {i, j})| >= eps``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from itertools import combinations

import numpy as np
from scipy import sparse

from acdb_gym.core.graphs import DAG
from acdb_gym.core.types import FloatArray, IntArray, readonly

__all__ = [
    "faithful_draws",
    "is_faithful",
    "min_relevant_partial_correlation",
    "partial_correlation_from_covariance",
    "weak_edges",
]


def partial_correlation_from_covariance(
    cov: FloatArray, i: int, j: int, cond: Sequence[int] = ()
) -> float:
    """``rho(i, j | cond)`` from a population covariance matrix.

    >>> partial_correlation_from_covariance(np.array([[1.0, 0.5], [0.5, 1.0]]), 0, 1)
    0.5
    """
    index = [i, j, *cond]
    precision = np.linalg.inv(cov[np.ix_(index, index)])
    return float(-precision[0, 1] / np.sqrt(precision[0, 0] * precision[1, 1]))


def _parent_partial_correlations(dag: DAG, cov: FloatArray) -> FloatArray:
    """For each edge ``i -> j`` (row-major), ``rho(i, j | Pa(j) \\ {i})``.

    Each node's block ``[Pa(j), j]`` is inverted on its own, but the nodes with the same number
    of parents go through one stacked ``np.linalg.inv`` (the same LAPACK call per block, so the
    same bits as one call per node).
    """
    child, parent = np.nonzero(dag.adjacency.T)  # by child, parents ascending
    if child.size == 0:
        return np.zeros(0)
    counts = np.bincount(child, minlength=dag.n_nodes)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rho = np.empty(child.size)
    for size in np.unique(counts[counts > 0]):
        nodes = np.flatnonzero(counts == size)
        slots = starts[nodes, None] + np.arange(size)  # each node's edges, in order
        index = np.column_stack([parent[slots], nodes])
        precision = np.linalg.inv(cov[index[:, :, None], index[:, None, :]])
        diag = np.sqrt(np.diagonal(precision, axis1=1, axis2=2))
        rho[slots] = -precision[:, :-1, -1] / (diag[:, :-1] * diag[:, -1:])
    order = np.lexsort((child, parent))  # row-major: by parent, then child
    return np.asarray(rho[order], dtype=np.float64)


def _full_partial_correlations(
    dag: DAG, cov: FloatArray, precision: FloatArray | sparse.sparray | None = None
) -> FloatArray:
    """For each edge ``i -> j`` (row-major), ``rho(i, j | V \\ {i, j})``, from ``precision``
    (dense or sparse) when given, else from the inverse of ``cov``."""
    if precision is None:
        precision = np.linalg.inv(cov)
    source, target = np.nonzero(dag.adjacency)
    diag = np.sqrt(precision.diagonal())
    at_edges = np.asarray(precision[source, target], dtype=np.float64).reshape(-1)
    return np.asarray(-at_edges / (diag[source] * diag[target]), dtype=np.float64)


def faithful_draws(dags: Sequence[DAG], covs: Sequence[FloatArray], eps: float) -> list[bool]:
    """:func:`is_faithful` of each ``(dag, cov)``, the worlds' inversions stacked: every full
    covariance of one size in one ``np.linalg.inv`` call, then, for the worlds that pass the
    full-set half, every parent block of one size across all of them in one call (the same
    LAPACK call per matrix as one world at a time, and every later step elementwise, so the
    same decisions)."""
    verdicts = [dag.n_edges == 0 for dag in dags]
    by_size: dict[int, list[int]] = {}
    for k, verdict in enumerate(verdicts):
        if not verdict:
            by_size.setdefault(dags[k].n_nodes, []).append(k)
    for members in by_size.values():
        adjacency = np.stack([dags[k].adjacency for k in members])
        stacked = np.stack([covs[k] for k in members])
        full = _stacked_full_partials(adjacency, stacked)
        passing = np.flatnonzero(_min_abs_by_world(full, len(members)) >= eps)
        if passing.size == 0:
            continue
        parent = _stacked_parent_partials(adjacency[passing], stacked[passing])
        parent_ok = _min_abs_by_world(parent, passing.size) >= eps
        for position, ok in zip(passing.tolist(), parent_ok.tolist(), strict=True):
            verdicts[members[position]] = ok
    return verdicts


def _min_abs_by_world(values: tuple[IntArray, FloatArray], count: int) -> FloatArray:
    """``min |rho|`` of each of ``count`` worlds (each with one value at least), given each
    value's world and the values: the same minimum as ``np.abs(rho).min()`` of each alone."""
    world, rho = values
    lowest = np.full(count, np.inf)
    np.minimum.at(lowest, world, np.abs(rho))
    return lowest


def _stacked_full_partials(adjacency: np.ndarray, covs: FloatArray) -> tuple[IntArray, FloatArray]:
    """:func:`_full_partial_correlations` of every world of a ``(K, d, d)`` stack (each world's
    edges in row-major order): each edge's world and its value, from one stacked inverse."""
    precision = np.linalg.inv(covs)
    world, source, target = np.nonzero(adjacency)
    diag = np.sqrt(np.diagonal(precision, axis1=1, axis2=2))
    rho = -precision[world, source, target] / (diag[world, source] * diag[world, target])
    return world, rho


def _stacked_parent_partials(
    adjacency: np.ndarray, covs: FloatArray
) -> tuple[IntArray, FloatArray]:
    """:func:`_parent_partial_correlations`'s values of every world of a ``(K, d, d)`` stack
    (in no particular edge order): each value's world and the value, every ``[Pa(j), j]``
    block of one size across the worlds inverted at once."""
    in_degree = adjacency.sum(axis=1)  # (K, d): parents of each node
    worlds: list[IntArray] = []
    values: list[FloatArray] = []
    for size in np.unique(in_degree[in_degree > 0]).tolist():
        world, node = np.nonzero(in_degree == size)
        _, parent = np.nonzero(adjacency[world, :, node])  # by block, parents ascending
        index = np.column_stack([parent.reshape(-1, size), node])
        precision = np.linalg.inv(covs[world[:, None, None], index[:, :, None], index[:, None, :]])
        diag = np.sqrt(np.diagonal(precision, axis1=1, axis2=2))
        rho = -precision[:, :-1, -1] / (diag[:, :-1] * diag[:, -1:])
        worlds.append(np.repeat(world, size))
        values.append(rho.ravel())
    return np.concatenate(worlds), np.concatenate(values)


def is_faithful(dag: DAG, cov: FloatArray, eps: float) -> bool:
    """The v0 acceptance check: every edge's parent-set and full-set partial correlation has
    magnitude at least ``eps``."""
    if dag.n_edges == 0:
        return True
    parent = _parent_partial_correlations(dag, cov)
    full = _full_partial_correlations(dag, cov)
    return bool(np.abs(parent).min() >= eps and np.abs(full).min() >= eps)


def weak_edges(
    dag: DAG, cov: FloatArray, eps: float, *, precision: sparse.sparray | None = None
) -> FloatArray:
    """The ``(d, d)`` boolean mask of the edges that fail :func:`is_faithful`'s check: their
    parent-set or full-set partial correlation has magnitude below ``eps``.

    ``precision``, the inverse of ``cov`` if known (e.g.
    :meth:`~acdb_gym.core.worlds.linear.LinearGaussianSCM.precision`), spares inverting ``cov``.
    """
    mask = np.zeros(dag.adjacency.shape, dtype=bool)
    if dag.n_edges == 0:
        return mask
    parent = _parent_partial_correlations(dag, cov)
    full = _full_partial_correlations(dag, cov, precision)
    # Both lists are row-major over the edges, as boolean indexing with the adjacency is.
    mask[dag.adjacency] = (np.abs(parent) < eps) | (np.abs(full) < eps)
    return mask


def min_relevant_partial_correlation(dag: DAG, cov: FloatArray, *, max_size: int = 2) -> float:
    """Smallest population ``|rho(i, j | S)|`` over true edges ``i - j`` and PC-relevant
    conditioning sets: subsets ``S`` of ``Adj(i) \\ {j}`` or ``Adj(j) \\ {i}`` with
    ``|S| <= max_size`` (the tests PC runs before it can keep the edge).

    A difficulty covariate: the smaller it is, the more samples PC needs to keep every edge.
    Returns ``inf`` for a graph without edges. All sets of one size are built as integer
    arrays and evaluated in one batched matrix inversion (so a hub with dozens of neighbours,
    as in the DREAM4 networks, costs array operations, not Python tuples).
    """
    skeleton = dag.skeleton()
    # Per size: the conditioning sets, and the pair (i, j) with how many sets it heads.
    sets: dict[int, list[IntArray]] = {}
    heads: dict[int, list[tuple[int, int, int]]] = {}
    for i, j in dag.edges():
        for end, other in ((i, j), (j, i)):
            neighbours = np.flatnonzero(skeleton[end])
            neighbours = neighbours[neighbours != other].astype(np.int64)
            for size in range(min(max_size, neighbours.size) + 1):
                # Every size-``size`` subset in ascending order (as ``combinations`` gives it).
                # A set reached from both ends is evaluated twice, which leaves the minimum as
                # it is.
                subsets = _ascending_subsets(neighbours, size)
                sets.setdefault(size, []).append(subsets)
                heads.setdefault(size, []).append((i, j, subsets.shape[0]))
    smallest = np.inf
    for size, size_sets in sets.items():
        counts = np.array([count for _, _, count in heads[size]])
        pairs = np.repeat(np.array([(i, j) for i, j, _ in heads[size]], dtype=np.int64), counts, 0)
        index = np.hstack([pairs, np.vstack(size_sets)])
        blocks = cov[index[:, :, None], index[:, None, :]]
        precision = np.linalg.inv(blocks)
        rho = precision[:, 0, 1] / np.sqrt(precision[:, 0, 0] * precision[:, 1, 1])
        smallest = min(smallest, float(np.abs(rho).min()))
    return float(smallest)


def _ascending_subsets(values: IntArray, size: int) -> IntArray:
    """The ``size``-subsets of the sorted ``values`` as rows, each in ascending order
    (``size`` 0, 1 or 2)."""
    if size == 0:
        return np.zeros((1, 0), dtype=np.int64)
    if size == 1:
        return values[:, None]
    if size == 2:
        first, second = _upper_pairs(values.size)
        return np.column_stack([values[first], values[second]])
    return np.array(list(combinations(values.tolist(), size)), dtype=np.int64)


@functools.lru_cache(maxsize=256)
def _upper_pairs(n: int) -> tuple[IntArray, IntArray]:
    """``np.triu_indices(n, k=1)``, read-only, kept per ``n``."""
    first, second = np.triu_indices(n, k=1)
    return readonly(first), readonly(second)
