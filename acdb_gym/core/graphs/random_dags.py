"""Random DAGs over a uniform random order: the benchmark's graph model (DESIGN §3, step 1) and
the structure-blind random baseline's guess (DESIGN §9) are the same draw with a different
edge count. :func:`scale_free_dag` is the scale-free graph model (DESIGN §3, step 1, ``graph="sf"``),
and :func:`orient_by_order` re-orients a graph's skeleton by an order (``orientation="uniform"``).

>>> rng = np.random.default_rng(0)
>>> random_order_dag(4, n_edges=3, rng=rng).n_edges
3
>>> scale_free_dag(6, n_edges=7, rng=rng).n_edges
7
"""

from __future__ import annotations

import functools
import operator
from typing import Literal

import numpy as np

from acdb_gym.core.graphs.dag import DAG
from acdb_gym.core.types import IntArray, readonly

__all__ = ["EdgeCount", "orient_by_order", "parent_quotas", "random_order_dag", "scale_free_dag"]

EdgeCount = int | Literal["uniform"]
"""An exact number of edges, or ``"uniform"``: a count drawn uniformly from ``0..d(d-1)/2``."""


_CACHED_PAIRS_MAX_D = 500
"""Largest ``d`` whose forward pairs are cached (2 MB at 500; 32 MB at 2,000, kept for good)."""


def _forward_pairs(d: int) -> tuple[IntArray, IntArray]:
    """``np.triu_indices(d, k=1)`` (read-only; cached per ``d`` up to ``_CACHED_PAIRS_MAX_D``)."""
    if d <= _CACHED_PAIRS_MAX_D:
        return _cached_forward_pairs(d)
    rows, cols = np.triu_indices(d, k=1)
    return readonly(rows), readonly(cols)


@functools.lru_cache(maxsize=64)
def _cached_forward_pairs(d: int) -> tuple[IntArray, IntArray]:
    rows, cols = np.triu_indices(d, k=1)
    return readonly(rows), readonly(cols)


def random_order_dag(n_nodes: int, *, n_edges: EdgeCount, rng: np.random.Generator) -> DAG:
    """A DAG whose edges are forward pairs of a uniform random order of the nodes.

    The draws from ``rng`` are, in this order: a uniform permutation ``order`` (its forward
    pairs are ``(order[a], order[b])`` with ``a < b``, so node indices say nothing about the
    topology); with ``n_edges="uniform"``, an edge count ``m ~ U{0..M}``, ``M = d(d-1)/2``;
    then ``m`` of the ``M`` forward pairs uniformly without replacement. The order of these
    draws is part of the contract: the ladder manifests' digests and the random baseline's
    results depend on it.

    Args:
        n_nodes: number of nodes ``d``.
        n_edges: the exact edge count (in ``[0, M]``), or ``"uniform"``.
        rng: the generator all draws come from.

    Raises:
        ValueError: ``n_nodes`` is negative, or ``n_edges`` is neither ``"uniform"`` nor in
            ``[0, M]``.
    """
    if n_nodes < 0:
        raise ValueError(f"n_nodes must be non-negative, got {n_nodes}")
    n_pairs = n_nodes * (n_nodes - 1) // 2
    if isinstance(n_edges, str):
        if n_edges != "uniform":
            raise ValueError(f"n_edges must be an integer or 'uniform', got {n_edges!r}")
    elif not 0 <= operator.index(n_edges) <= n_pairs:
        raise ValueError(f"n_edges must be in [0, {n_pairs}] for {n_nodes} nodes, got {n_edges}")
    order = rng.permutation(n_nodes)
    rows, cols = _forward_pairs(n_nodes)
    if isinstance(n_edges, str):
        count = int(rng.integers(0, n_pairs + 1))
    else:
        count = operator.index(n_edges)
    chosen = rng.choice(n_pairs, size=count, replace=False)
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    adjacency[order[rows[chosen]], order[cols[chosen]]] = True
    return DAG._valid(adjacency)  # forward pairs of an order: acyclic, no loops


def parent_quotas(n_nodes: int, n_edges: int) -> IntArray:
    """How many parents the node at each position of a scale-free draw receives.

    The ``n_edges`` edges are dealt one at a time to positions ``d - 1, d - 2, ..., 1``,
    cyclically, skipping a position ``a`` that already has ``a`` parents (all earlier nodes), so
    the quotas sum to ``n_edges`` exactly, differ by at most one between uncapped positions,
    and the later positions get the remainder.

    >>> parent_quotas(5, 6).tolist()
    [0, 1, 1, 2, 2]

    Raises:
        ValueError: ``n_edges`` is not in ``[0, d (d - 1) / 2]``.
    """
    n_pairs = n_nodes * (n_nodes - 1) // 2
    if not 0 <= n_edges <= n_pairs:
        raise ValueError(f"n_edges must be in [0, {n_pairs}] for {n_nodes} nodes, got {n_edges}")
    quotas = np.zeros(n_nodes, dtype=np.int64)
    left = n_edges
    while left:
        for position in range(n_nodes - 1, 0, -1):
            if left and quotas[position] < position:
                quotas[position] += 1
                left -= 1
    return quotas


def scale_free_dag(n_nodes: int, *, n_edges: int, rng: np.random.Generator) -> DAG:
    """A scale-free DAG by preferential attachment over a uniform random order.

    The draws from ``rng`` are, in this order: a uniform permutation ``order`` (the node at
    position ``a`` is ``order[a]``, so indices say nothing about the topology); then, for
    positions ``a = 1, ..., d - 1`` in turn, the node's ``m_a`` parents
    (:func:`parent_quotas`) among the ``a`` earlier positions, without replacement, with
    probabilities proportional to ``1 + degree`` (in- plus out-degree in the graph built so
    far; ``numpy``'s ``choice(a, m_a, replace=False, p=...)``). Edges point from earlier to
    later positions, so the graph is acyclic, has exactly ``n_edges`` edges, and early nodes
    become hubs with many children (Barabási and Albert's model with a per-node edge quota).

    Args:
        n_nodes: number of nodes ``d``.
        n_edges: the exact edge count, in ``[0, d (d - 1) / 2]``.
        rng: the generator all draws come from.

    Raises:
        ValueError: ``n_nodes`` is negative or ``n_edges`` is out of range.
    """
    if n_nodes < 0:
        raise ValueError(f"n_nodes must be non-negative, got {n_nodes}")
    quotas = parent_quotas(n_nodes, operator.index(n_edges))
    order = rng.permutation(n_nodes)
    degree = np.zeros(n_nodes, dtype=np.float64)
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    for position in range(1, n_nodes):
        quota = int(quotas[position])
        if quota == 0:
            continue
        weights = 1.0 + degree[:position]
        parents = rng.choice(position, size=quota, replace=False, p=weights / weights.sum())
        degree[parents] += 1.0
        degree[position] += quota
        adjacency[order[parents], order[position]] = True
    return DAG(adjacency)


def orient_by_order(dag: DAG, order: IntArray) -> DAG:
    """The skeleton of ``dag`` with every edge pointing from the node earlier in ``order`` to
    the later one (``order[0]`` comes first).

    Used with a uniform permutation drawn independently of the graph, it keeps a scale-free
    draw's wiring (who is joined to whom, hence its hubs) and makes every orientation of it by a
    uniform order equally likely, so a hub is a parent or a child of each neighbour with
    probability 1/2 (DESIGN §3 step 1, ``orientation="uniform"``).

    >>> orient_by_order(DAG.from_edges(3, [(0, 1), (1, 2)]), np.array([2, 0, 1])).edges()
    [(0, 1), (2, 1)]

    Raises:
        ValueError: ``order`` is not a permutation of the nodes.
    """
    n_nodes = dag.n_nodes
    order = np.asarray(order)
    if order.shape != (n_nodes,) or not np.array_equal(np.sort(order), np.arange(n_nodes)):
        raise ValueError(f"order must be a permutation of 0..{n_nodes - 1}, got {order.tolist()}")
    rank = np.empty(n_nodes, dtype=np.int64)
    rank[order] = np.arange(n_nodes)
    skeleton = dag.adjacency | dag.adjacency.T
    return DAG(skeleton & (rank[:, None] < rank[None, :]))
