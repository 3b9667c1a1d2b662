"""Random DAGs for the benchmarks (not part of the package).

Two generators, both over a uniform random node order so that node indices carry no topology:
a dense one (each forward pair an edge with probability ``p``, drawn as a ``d x d`` mask) and a
sparse one (``Binomial(M, p)`` distinct forward pairs drawn by index, memory linear in the edge
count, usable at ``d = 10,000``).
"""

from __future__ import annotations

import numpy as np


def random_dag_adjacency(rng: np.random.Generator, n_nodes: int, edge_prob: float) -> np.ndarray:
    """Boolean adjacency of a random DAG: every forward pair of a random order is an edge with
    probability ``edge_prob``."""
    if n_nodes * n_nodes > 4_000_000 and edge_prob * n_nodes < 20:
        return random_sparse_adjacency(rng, n_nodes, edge_prob * (n_nodes - 1))
    upper = np.triu(rng.random((n_nodes, n_nodes)) < edge_prob, k=1)
    order = rng.permutation(n_nodes)
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    rows, cols = np.nonzero(upper)
    adjacency[order[rows], order[cols]] = True
    return adjacency


def random_sparse_adjacency(
    rng: np.random.Generator, n_nodes: int, expected_degree: float
) -> np.ndarray:
    """Boolean adjacency of a random DAG with ``Binomial(M, p)`` edges, ``p = degree / (d - 1)``,
    placed uniformly among the ``M = d (d - 1) / 2`` forward pairs of a random node order (so a
    node has ``expected_degree`` neighbours on average)."""
    n_pairs = n_nodes * (n_nodes - 1) // 2
    n_edges = int(rng.binomial(n_pairs, min(1.0, expected_degree / max(1, n_nodes - 1))))
    codes = np.empty(0, dtype=np.int64)
    while codes.size < n_edges:
        # Draw positions in the order, keep distinct unordered pairs, top up until enough.
        a = rng.integers(0, n_nodes, size=2 * n_edges)
        b = rng.integers(0, n_nodes, size=2 * n_edges)
        keep = a != b
        low, high = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
        codes = np.unique(np.concatenate([codes, low * n_nodes + high]))
    codes = rng.permutation(codes)[:n_edges]
    order = rng.permutation(n_nodes)
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    adjacency[order[codes // n_nodes], order[codes % n_nodes]] = True
    return adjacency
