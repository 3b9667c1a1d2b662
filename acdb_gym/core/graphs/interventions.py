"""Intervention design: covered edges and the minimum intervention set of a DAG, over every
node or over the nodes an experiment exists for.

>>> from acdb_gym.core.graphs import DAG
>>> sorted(minimum_intervention_set(DAG.from_edges(3, [(0, 1), (1, 2)])))
[0]
>>> sorted(minimum_intervention_subset(DAG.from_edges(3, [(0, 1), (1, 2)]), [1, 2]))
[1]
>>> sorted(best_intervention_set(DAG.from_edges(5, [(0, 1), (1, 2), (3, 4)]), 1))
[0]
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterable

import numpy as np

from acdb_gym.core.graphs._matrix import _nonzero, _topological_order
from acdb_gym.core.graphs.dag import DAG
from acdb_gym.core.graphs.equivalence import cpdag, essential_graph
from acdb_gym.core.types import BoolMatrix, IntArray, readonly

__all__ = [
    "MAX_BEST_SET_CANDIDATES",
    "MAX_SUBSET_TARGETS",
    "best_intervention_set",
    "covered_edges",
    "minimum_intervention_set",
    "minimum_intervention_subset",
]

MAX_SUBSET_TARGETS = 16
"""The most allowed targets :func:`minimum_intervention_subset` searches (it enumerates their
subsets, ``2**16`` essential graphs at most)."""

_MASK_MAX_NODES = 64
"""Up to this many nodes, :func:`minimum_intervention_set` finds the covered edges with parent
sets as Python bit masks (the same edges as :func:`_covered_from_edges`, without its numpy
calls' fixed cost)."""

MAX_BEST_SET_CANDIDATES = 200_000
"""The most target sets :func:`best_intervention_set` compares (one essential graph each)."""


def _covered_from_edges(
    adjacency: BoolMatrix, tails: IntArray, heads: IntArray
) -> tuple[IntArray, IntArray]:
    """The covered edges ``u -> v`` as two index arrays, in row-major order, given all edges
    ``tails[e] -> heads[e]`` in row-major order.

    ``Pa(v) = Pa(u) ∪ {u}`` holds iff ``|Pa(v)| = |Pa(u)| + 1`` and ``Pa(u) ⊆ Pa(v)`` (``u`` is
    already a parent of ``v``). After the cheap size filter only the parents of ``u`` are looked
    up, never whole rows of length ``d``, so the work is linear in the edges.
    """
    n = adjacency.shape[0]
    n_parents = np.bincount(heads, minlength=n)
    keep = n_parents[heads] == n_parents[tails] + 1
    us, vs = tails[keep], heads[keep]
    # Parent lists grouped by child: the parents of w are parents[first[w] : first[w + 1]].
    parents = tails[np.argsort(heads, kind="stable")]
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_parents, out=first[1:])
    # One row per (candidate edge, parent of its tail): is that parent also a parent of v?
    sizes = n_parents[us]
    candidate = np.repeat(np.arange(us.size), sizes)
    offset = np.arange(candidate.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    shared = adjacency[parents[first[us][candidate] + offset], vs[candidate]]
    covered = np.bincount(candidate[shared], minlength=us.size) == sizes
    return us[covered], vs[covered]


def covered_edges(dag: DAG) -> BoolMatrix:
    """Mask of covered edges: ``u -> v`` is covered iff ``Pa(v) = Pa(u) ∪ {u}``.

    >>> covered_edges(DAG.from_edges(3, [(0, 1), (1, 2), (0, 2)])).nonzero()
    (array([0, 1]), array([1, 2]))
    """
    us, vs = _covered_from_edges(dag.adjacency, *_nonzero(dag.adjacency))
    covered = np.zeros_like(dag.adjacency)
    covered[us, vs] = True
    return readonly(covered)


def minimum_intervention_set(dag: DAG) -> frozenset[int]:
    """The minimum set of single-node interventions that, with observational data, orients every
    CPDAG-undirected edge: a minimum vertex cover of the covered edges (Choo, Shiragur &
    Bhattacharyya, NeurIPS 2022).

    Each node has at most one covered in-edge, so covered edges form a forest; the leaf rule
    (visit nodes in reverse topological order; an uncovered edge into a node outside the cover
    puts its parent in the cover) is exact and linear. The result is deterministic, and
    computed once per ``DAG`` object.
    """
    return dag._derived(_compute_minimum_intervention_set)


def _compute_minimum_intervention_set(dag: DAG) -> frozenset[int]:
    n = dag.n_nodes
    if n == 0:
        return frozenset()
    if n <= _LIST_MAX_NODES:
        return _small_minimum_intervention_set(dag.adjacency.tolist())
    tails, heads = _nonzero(dag.adjacency)
    order = _topological_order(n, tails, heads)
    assert order is not None  # a DAG
    covered_parent = [-1] * n
    if n <= _MASK_MAX_NODES:
        # Parent sets as bit masks: u -> v is covered iff Pa(v) == Pa(u) | {u}.
        tail_list, head_list = tails.tolist(), heads.tolist()
        parents = [0] * n
        for u, v in zip(tail_list, head_list, strict=True):
            parents[v] |= 1 << u
        for u, v in zip(tail_list, head_list, strict=True):
            if parents[v] == parents[u] | (1 << u):
                covered_parent[v] = u  # at most one covered in-edge per node
    else:
        us, vs = _covered_from_edges(dag.adjacency, tails, heads)
        for u, v in zip(us.tolist(), vs.tolist(), strict=True):
            covered_parent[v] = u
    in_cover = [False] * n
    for v in reversed(order.tolist()):
        u = covered_parent[v]
        if u >= 0 and not in_cover[v] and not in_cover[u]:
            in_cover[u] = True
    return frozenset(v for v in range(n) if in_cover[v])


_LIST_MAX_NODES = 16
"""Up to this many nodes, :func:`minimum_intervention_set` reads the DAG as Python lists."""


def _small_minimum_intervention_set(rows: list[list[bool]]) -> frozenset[int]:
    """:func:`_compute_minimum_intervention_set` on the DAG with adjacency rows ``rows``,
    without a numpy call: the same covered edges (on parent bit masks) and the same order
    (Kahn's, smallest ready index first)."""
    n = len(rows)
    parents = [0] * n
    children: list[list[int]] = [[] for _ in range(n)]
    indegree = [0] * n
    for u, row in enumerate(rows):
        bit = 1 << u
        into = children[u]
        for v in range(n):
            if row[v]:
                parents[v] |= bit
                indegree[v] += 1
                into.append(v)
    covered_parent = [-1] * n
    for u in range(n):
        mask = parents[u] | (1 << u)
        for v in children[u]:
            if parents[v] == mask:
                covered_parent[v] = u  # at most one covered in-edge per node
    ready = [v for v in range(n) if not indegree[v]]  # ascending: already a heap
    order: list[int] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for child in children[node]:
            indegree[child] -= 1
            if not indegree[child]:
                heapq.heappush(ready, child)
    in_cover = [False] * n
    for v in reversed(order):
        u = covered_parent[v]
        if u >= 0 and not in_cover[v] and not in_cover[u]:
            in_cover[u] = True
    return frozenset(v for v in range(n) if in_cover[v])


def minimum_intervention_subset(dag: DAG, allowed: Iterable[int]) -> frozenset[int]:
    """The smallest set of single-node interventions drawn from ``allowed`` that, with
    observational data, identifies as much as all of ``allowed`` together: the smallest
    ``S`` within ``allowed`` whose interventional essential graph (Hauser & Bühlmann 2012)
    equals that of ``allowed``.

    It is ``I*`` of a level where experiments exist only on some nodes (DESIGN §3, step 6): an
    agent cannot orient more than ``allowed`` identifies, and needs ``|S|`` experiments for
    that. With every node allowed its size is :func:`minimum_intervention_set`'s. Exact, by
    enumeration in increasing size; among the smallest sets, the first in the order of
    ``itertools.combinations`` over the sorted allowed nodes.

    Raises:
        ValueError: a node outside ``0..d-1``, or more than :data:`MAX_SUBSET_TARGETS`
            allowed nodes.

    >>> chain = DAG.from_edges(3, [(0, 1), (1, 2)])
    >>> sorted(minimum_intervention_subset(chain, [2])), sorted(minimum_intervention_subset(chain, []))
    ([2], [])
    """
    nodes = sorted({int(v) for v in allowed})
    if any(not 0 <= v < dag.n_nodes for v in nodes):
        raise ValueError(f"allowed targets must be in [0, {dag.n_nodes}), got {nodes}")
    if len(nodes) > MAX_SUBSET_TARGETS:
        raise ValueError(
            f"at most {MAX_SUBSET_TARGETS} allowed targets are searched, got {len(nodes)}"
        )
    goal = essential_graph(dag, nodes)
    for size in range(len(nodes) + 1):
        for subset in itertools.combinations(nodes, size):
            found = essential_graph(dag, list(subset))
            if np.array_equal(found.directed, goal.directed):
                return frozenset(subset)
    raise AssertionError("the allowed set itself identifies what it identifies")


def best_intervention_set(
    dag: DAG, size: int, allowed: Iterable[int] | None = None
) -> frozenset[int]:
    """The at most ``size`` single-node interventions that identify the most of ``dag``: the
    targets whose interventional essential graph (with observational data) has the most
    directed edges.

    What the best experiments of a budget below ``|I*|`` can identify (DESIGN §6, "Budgets
    below |I*|"): with ``size`` at least the minimum intervention set's size (over ``allowed``
    when given), that set, which identifies everything the allowed nodes can. Otherwise an
    exact search over the sets of ``size`` nodes among those with an undirected CPDAG edge
    (an intervention elsewhere orients nothing new), first best in the order of
    ``itertools.combinations`` over them, sorted.

    Raises:
        ValueError: a negative ``size``, an allowed node outside ``0..d-1``, or more than
            :data:`MAX_BEST_SET_CANDIDATES` sets to compare.

    >>> chains = DAG.from_edges(5, [(0, 1), (1, 2), (3, 4)])  # I* = {0, 3}
    >>> sorted(best_intervention_set(chains, 1)), sorted(best_intervention_set(chains, 0))
    ([0], [])
    """
    if size < 0:
        raise ValueError(f"size must be non-negative, got {size}")
    nodes = range(dag.n_nodes) if allowed is None else sorted({int(v) for v in allowed})
    if any(not 0 <= v < dag.n_nodes for v in nodes):
        raise ValueError(f"allowed targets must be in [0, {dag.n_nodes}), got {list(nodes)}")
    full = (
        minimum_intervention_set(dag)
        if allowed is None
        else minimum_intervention_subset(dag, nodes)
    )
    if size >= len(full):
        return full
    degree = np.asarray(cpdag(dag).undirected, dtype=np.int64).sum(axis=1)
    candidates = [v for v in nodes if degree[v] > 0]
    count = math.comb(len(candidates), size)
    if count > MAX_BEST_SET_CANDIDATES:
        raise ValueError(
            f"{count} target sets of size {size} among {len(candidates)} nodes exceed "
            f"MAX_BEST_SET_CANDIDATES = {MAX_BEST_SET_CANDIDATES}"
        )
    best: tuple[int, ...] = ()
    most = -1
    for subset in itertools.combinations(candidates, size):
        oriented = int(essential_graph(dag, list(subset)).directed.sum())
        if oriented > most:
            best, most = subset, oriented
    return frozenset(best)
