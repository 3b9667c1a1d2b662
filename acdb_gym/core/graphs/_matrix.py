"""Boolean-matrix kernels shared by the graph modules (private to :mod:`acdb_gym.core.graphs`).

Fast nonzero scans, adjacency lists, Kahn's order on edge arrays, and exact path counts
``(left @ right)[rows, cols]`` evaluated only where they are needed: the rules and derived
graphs of the sibling modules are written as such counts.
"""

from __future__ import annotations

import heapq

import numpy as np

from acdb_gym.core.types import BoolMatrix, Edge, IntArray


def _nonzero(mask: BoolMatrix) -> tuple[IntArray, IntArray]:
    """``np.nonzero`` of a square matrix, in the same row-major order.

    Beyond small sizes, ``np.flatnonzero`` plus ``divmod`` is many times faster than the 2-D
    ``np.nonzero``, which bookkeeps a multi-index per element (2 ms vs 0.2 ms at ``d = 1000``).
    """
    if mask.size < 4096:
        rows, cols = np.nonzero(mask)
        return rows, cols
    rows, cols = np.divmod(np.flatnonzero(mask), mask.shape[1])
    return rows, cols


def _edge_list(mask: BoolMatrix) -> list[Edge]:
    """The ``(row, col)`` pairs of the ones of ``mask``, row-major, as Python ints."""
    rows, cols = _nonzero(mask)
    return list(zip(rows.tolist(), cols.tolist(), strict=True))


def _children_lists(
    n: int, tails: IntArray, heads: IntArray
) -> tuple[list[int], list[int], list[int]]:
    """Adjacency lists of the edges ``tails[e] -> heads[e]`` (row-major, as from
    :func:`_nonzero`): ``children[start[v]:start[v + 1]]`` are the children of ``v`` in ascending
    order, and ``indegree[v]`` counts its parents."""
    heads_list = heads.tolist()
    if len(heads_list) > _LIST_MAX_EDGES:
        start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(tails, minlength=n), out=start[1:])
        return heads_list, start.tolist(), np.bincount(heads, minlength=n).tolist()
    # Few edges: Python lists cost less than the numpy calls' fixed cost (the same lists).
    start_list = [0] * (n + 1)
    for tail in tails.tolist():
        start_list[tail + 1] += 1
    for v in range(n):
        start_list[v + 1] += start_list[v]
    indegree = [0] * n
    for head in heads_list:
        indegree[head] += 1
    return heads_list, start_list, indegree


_LIST_MAX_EDGES = 64
"""Up to this many edges, :func:`_children_lists` counts in Python lists."""


def _topological_order(n: int, tails: IntArray, heads: IntArray) -> IntArray | None:
    """Kahn's algorithm on the edges ``tails[e] -> heads[e]`` (row-major), smallest ready index
    first; None when they form a directed cycle."""
    children, start, indegree = _children_lists(n, tails, heads)
    ready = [v for v in range(n) if indegree[v] == 0]  # ascending: already a heap
    order: list[int] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for child in children[start[node] : start[node + 1]]:
            indegree[child] -= 1
            if indegree[child] == 0:
                heapq.heappush(ready, child)
    if len(order) < n:
        return None
    return np.asarray(order, dtype=np.int64)


def _check_node(node: int, n_nodes: int) -> None:
    """Raise ValueError naming ``node`` unless it is in ``[0, n_nodes)``."""
    if not 0 <= node < n_nodes:
        raise ValueError(f"node index must be in [0, {n_nodes}), got {node}")


# --------------------------------------------------------------------------- path counts

_SPARSE_MIN_NODES = 64
"""Below this many nodes, whole-matrix BLAS products are always the cheaper way to count."""

_BLAS_WORK_RATIO = 512
"""Visiting one list entry costs about as much as this many multiply-adds in a BLAS product."""


def _count(left: BoolMatrix, right: BoolMatrix) -> np.ndarray:
    """``left @ right`` as counts, in float32 BLAS; counts stay far below ``2**24``, so exact."""
    return left.astype(np.float32) @ right.astype(np.float32)


def _row_lists(mask: BoolMatrix) -> tuple[IntArray, IntArray]:
    """``(start, index)``: the columns of the ones of row ``x`` are
    ``index[start[x] : start[x + 1]]``, ascending."""
    rows, cols = _nonzero(mask)
    start = np.zeros(mask.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=mask.shape[0]), out=start[1:])
    return start, cols


def _expand(start: IntArray, index: IntArray, xs: IntArray) -> tuple[IntArray, IntArray]:
    """For every ``p`` and every ``z`` in row ``xs[p]`` of the lists, the pair ``(p, z)``."""
    sizes = start[xs + 1] - start[xs]
    owner = np.repeat(np.arange(xs.size), sizes)
    offset = np.arange(owner.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return owner, index[start[xs][owner] + offset]


def _product_at(left: BoolMatrix, right: BoolMatrix, rows: IntArray, cols: IntArray) -> IntArray:
    """Exact counts ``(left @ right)[rows, cols]``.

    On sparse graphs only the ones of ``left``'s rows are visited (work: the ones in the rows
    that are asked for); when that would exceed a whole BLAS product, the product is formed.
    """
    n = left.shape[0]
    start, index = _row_lists(left)
    work = int((start[rows + 1] - start[rows]).sum())
    if work * _BLAS_WORK_RATIO >= n**3:
        return np.asarray(_count(left, right)[rows, cols], dtype=np.int64)
    owner, middle = _expand(start, index, rows)
    hits = right[middle, cols[owner]]
    return np.bincount(owner[hits], minlength=rows.size)
