"""Random DAGs over a uniform random order: the benchmark's graph model (DESIGN §3, step 1) and
the structure-blind random baseline's guess (DESIGN §9) are the same draw with a different
edge count.

>>> rng = np.random.default_rng(0)
>>> random_order_dag(4, n_edges=3, rng=rng).n_edges
3
"""

from __future__ import annotations

import functools
import operator
from typing import Literal

import numpy as np

from acdb_gym.core.graphs.dag import DAG
from acdb_gym.core.types import IntArray, readonly

__all__ = ["EdgeCount", "random_order_dag"]

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
    return DAG(adjacency)
