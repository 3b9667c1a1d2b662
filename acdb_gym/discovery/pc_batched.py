"""PC-stable with Fisher-z tests, batched, reproducing causal-learn's ``pc`` decision for decision.

:func:`pc_batched` runs the same algorithm as causal-learn's
``pc(data, alpha, "fisherz", show_progress=False)`` with its defaults (``stable=True``,
``uc_rule=0``, ``uc_priority=2``) and returns the same skeleton, separating sets and oriented
graph, but tests every conditioning set of one size in one numpy batch instead of one Python call
per test. Being the same algorithm means copying causal-learn's choices, including the odd ones:

* **Tests.** Each depth ``l`` tests, for every ordered adjacent pair ``(x, y)`` of the graph at
  the start of the depth, every ``S`` of ``l`` other neighbours of ``x``. The p-value is
  causal-learn's, operation for operation: the inverse of the correlation submatrix over
  ``[min(x, y), max(x, y), *sorted(S)]`` (``np.linalg.inv``, which runs the same LAPACK routine
  on each matrix of a stack as on a single one), ``r = -P01 / sqrt(|P00 P11|)`` clipped to
  ``±(1 - eps)``, ``z = atanh`` written as ``0.5 log((1 + r) / (1 - r))`` with ``math.log``
  (numpy's vectorized log may differ in the last bit), and ``p = 2 (1 - Phi(sqrt(n - l - 3)
  |z|))``. So p-values are bit-identical, and an edge is removed when ``p > alpha`` (strictly),
  as in causal-learn.
* **Separating sets.** PC-stable tests every set (no early stop) and records, per side, the
  *union* of all sets that passed from that side. For a pair ``a < b`` removed at depth ``l``,
  ``a`` appends its union if one of its sets passed; ``b``, visited later, appends its union
  (empty when none of its own sets passed) whenever the pair goes, unless ``b`` has fewer than
  ``l - 1`` neighbours, which causal-learn skips. :attr:`BatchedPCResult.sepsets` keeps exactly
  these lists.
* **Colliders** (``uc_priority=2``, "prioritize existing colliders"): unshielded triples
  ``x - y - z`` (``x < z``) are visited by ``y``, then ``x``, then ``z``; ``y`` is a collider
  when it is in none of the recorded sets of ``(x, z)``, and is oriented ``x -> y <- z`` only if
  neither edge already points away from ``y``. A later conflicting collider therefore loses.
* **Meek** rules 1-3 in causal-learn's visiting order (its triple lists are built once, from the
  graph after the colliders), each orientation refused when the head is already an "ancestor"
  of the tail in causal-learn's incremental ancestor matrix, which is not a full transitive
  closure and depends on the order edges were oriented; :class:`_Orientation` keeps the same
  matrix with the same updates.

Where floating point could still disagree: nowhere in the arithmetic above (IEEE operations in
the same order, the same LAPACK and ``ndtr`` calls), provided numpy's ``corrcoef`` and
``linalg.inv`` give the same bits in this process as in causal-learn's, which they do when both
run in one process on one BLAS. A decision can only flip if a p-value differed, and then only
when it lies within that difference of ``alpha``.

The adjacency search is :class:`_Skeleton`, one depth per step, so that
:func:`~acdb_gym.discovery.pc_many.pc_batched_many` can run several in lockstep and pool their
tests.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr

from acdb_gym.core.types import BoolMatrix, FloatArray, IntArray
from acdb_gym.discovery._common import (
    as_data_matrix,
    check_full_rank_data,
    check_probability,
)

__all__ = ["BatchedPCResult", "fisher_z_pvalues", "pc_batched"]

_MAX_BATCH = 1 << 16
"""Tests per call of the batched inverse: bounds memory (about 8 MB of matrices at depth 3)."""


@dataclass(frozen=True)
class BatchedPCResult:
    """What PC found, in causal-learn's terms.

    Attributes:
        skeleton: symmetric adjacency after the skeleton phase.
        sepsets: for each removed pair ``(a, b)`` with ``a < b``, the sets causal-learn appends
            to ``cg.sepset[a, b]``, in order (each the union of the passing conditioning sets
            from one side).
        directed: ``directed[i, j]`` for an edge oriented ``i -> j`` (may hold a directed cycle
            on unfaithful data, as causal-learn's output may).
        undirected: symmetric matrix of the edges left unoriented.
        n_tests: conditional-independence tests run, counting both sides of a pair as
            causal-learn's calls do (it answers the second from its cache).
    """

    skeleton: BoolMatrix
    sepsets: Mapping[tuple[int, int], tuple[frozenset[int], ...]]
    directed: BoolMatrix
    undirected: BoolMatrix
    n_tests: int


def pc_batched(data: ArrayLike, *, alpha: float = 0.05) -> BatchedPCResult:
    """Run PC-stable with Fisher-z tests and causal-learn's orientation (see the module doc).

    Args:
        data: observational samples, shape ``(n_samples, d)``, finite, no constant column,
            ``n_samples >= d + 1``. Copied; never modified.
        alpha: significance level in ``(0, 1)``; a pair is separated when ``p > alpha``.

    Returns:
        The skeleton, separating sets and orientation.

    Raises:
        ValueError: ``alpha`` outside ``(0, 1)``; ``data`` of the wrong shape, with too few rows,
            non-finite values or a constant column; or a singular correlation submatrix.
    """
    check_probability(alpha, "alpha")
    array = as_data_matrix(data, "data")
    n_samples, n_nodes = array.shape
    if n_nodes < 2:
        nothing = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
        return BatchedPCResult(nothing, {}, nothing, nothing.copy(), 0)
    check_full_rank_data(array, "data")
    corr = _correlation(array)
    search = _Skeleton(n_nodes, alpha)
    while (tests := search.next_tests()) is not None:
        pairs, conditions = tests
        search.record(_depth_pvalues(corr, n_samples, pairs, conditions))
    return search.result()


# --------------------------------------------------------------------------- tests


def _correlation(array: FloatArray) -> FloatArray:
    """The data's correlation matrix: the same call on the same contiguous array as
    causal-learn's FisherZ, for the same bits."""
    return np.asarray(np.corrcoef(np.ascontiguousarray(array).T), dtype=np.float64)


def fisher_z_pvalues(
    corr: FloatArray, n_samples: int, pairs: IntArray, conditions: IntArray
) -> FloatArray:
    """Fisher-z p-values of ``X_a _||_ X_b | X_S`` for a batch of tests, as causal-learn computes
    them.

    Args:
        corr: the ``(d, d)`` correlation matrix of the data.
        n_samples: rows of the data.
        pairs: ``(T, 2)`` with ``a < b`` in each row.
        conditions: ``(T, l)``, each row sorted ascending, disjoint from its pair.

    Returns:
        ``(T,)`` p-values.

    Raises:
        ValueError: a correlation submatrix is singular.
    """
    return _fisher_z(
        _blocks(corr, pairs, conditions), math.sqrt(n_samples - conditions.shape[1] - 3)
    )


def _blocks(corr: FloatArray, pairs: IntArray, conditions: IntArray) -> FloatArray:
    """``(T, l + 2, l + 2)``: each test's correlation submatrix over ``[a, b, *S]``."""
    variables = np.concatenate([pairs, conditions], axis=1)
    blocks: FloatArray = corr[variables[:, :, None], variables[:, None, :]]
    return blocks


def _fisher_z(blocks: FloatArray, root_dof: float | FloatArray) -> FloatArray:
    """The p-values of a stack of submatrices; ``root_dof`` is ``sqrt(n - l - 3)``, one for
    all or one per block (the same IEEE product either way)."""
    try:
        precision = np.linalg.inv(blocks)
    except np.linalg.LinAlgError:
        raise ValueError(
            "the data's correlation matrix is singular: cannot run the Fisher-z test"
        ) from None
    r = -precision[:, 0, 1] / np.sqrt(np.abs(precision[:, 0, 0] * precision[:, 1, 1]))
    clip = np.abs(r) >= 1
    r[clip] = (1.0 - np.finfo(float).eps) * np.sign(r[clip])
    ratio = (1 + r) / (1 - r)
    z = 0.5 * np.fromiter(map(math.log, ratio.tolist()), dtype=np.float64, count=ratio.size)
    statistic = root_dof * np.abs(z)
    pvalues: FloatArray = 2 * (1 - ndtr(np.abs(statistic)))
    return pvalues


@functools.lru_cache(maxsize=256)
def _combinations(n_items: int, size: int) -> IntArray:
    """All ``size``-subsets of ``range(n_items)`` in itertools order, one per row."""
    rows = list(itertools.combinations(range(n_items), size))
    return np.array(rows, dtype=np.int64).reshape(len(rows), size)


@functools.lru_cache(maxsize=256)
def _others(n_items: int) -> IntArray:
    """Row ``k``: ``range(n_items)`` without ``k``."""
    full = np.arange(n_items, dtype=np.int64)
    return np.array([np.delete(full, k) for k in range(n_items)], dtype=np.int64).reshape(
        n_items, max(n_items - 1, 0)
    )


def _depth_tests(
    neighbours: list[IntArray], depth: int
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Every test of one depth in causal-learn's order.

    Returns:
        ``xs`` and ``ys`` of the ordered pairs that get at least one test, the pair index of each
        test, and the ``(T, depth)`` conditioning sets.
    """
    xs: list[IntArray] = []
    ys: list[IntArray] = []
    conditions: list[IntArray] = []
    counts: list[int] = []
    for x, nbrs in enumerate(neighbours):
        degree = nbrs.size
        if degree - 1 < depth:
            continue
        combos = _combinations(degree - 1, depth)
        positions = _others(degree)[:, combos]  # (degree, C, depth)
        conditions.append(nbrs[positions].reshape(degree * combos.shape[0], depth))
        xs.append(np.full(degree, x, dtype=np.int64))
        ys.append(nbrs)
        counts.extend([combos.shape[0]] * degree)
    if not xs:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, np.zeros((0, depth), dtype=np.int64)
    pair_of_test = np.repeat(np.arange(len(counts)), counts)
    return np.concatenate(xs), np.concatenate(ys), pair_of_test, np.concatenate(conditions)


def _depth_pvalues(
    corr: FloatArray, n_samples: int, pairs: IntArray, conditions: IntArray
) -> FloatArray:
    """The p-value of every test of one depth, in chunks of :data:`_MAX_BATCH`."""
    chunks = [
        fisher_z_pvalues(corr, n_samples, pairs[s : s + _MAX_BATCH], conditions[s : s + _MAX_BATCH])
        for s in range(0, len(pairs), _MAX_BATCH)
    ]
    return np.concatenate(chunks) if chunks else np.zeros(0)


class _Skeleton:
    """PC-stable's adjacency search on one dataset, one depth at a time: :meth:`next_tests`
    gives the next depth's tests, :meth:`record` takes their p-values and removes the pairs
    they separate, and :meth:`result` orients the final skeleton."""

    def __init__(self, n_nodes: int, alpha: float) -> None:
        self.n_nodes = n_nodes
        self.alpha = alpha
        self.adjacent = ~np.eye(n_nodes, dtype=np.bool_)
        self.sepsets: dict[tuple[int, int], list[frozenset[int]]] = {}
        self.n_tests = 0
        self.depth = -1
        self._neighbours: list[IntArray] = []
        self._degrees = np.zeros(n_nodes, dtype=np.int64)
        empty = np.zeros(0, dtype=np.int64)
        self._tests: tuple[IntArray, IntArray, IntArray, IntArray] = (empty,) * 3 + (
            empty.reshape(0, 0),
        )

    def next_tests(self) -> tuple[IntArray, IntArray] | None:
        """The next depth's tests, ``(T, 2)`` pairs ``a < b`` and ``(T, depth)`` sets, in
        causal-learn's order; None when no node has enough neighbours left to go deeper."""
        degrees = self.adjacent.sum(axis=1)
        if int(degrees.max()) - 1 <= self.depth:
            return None
        self.depth += 1
        # Row x's neighbours, ascending: the columns of one nonzero() cut at the row ends.
        columns = np.nonzero(self.adjacent)[1]
        self._neighbours = np.split(columns, np.cumsum(degrees)[:-1].tolist())
        self._degrees = degrees
        xs, ys, pair, cond = _depth_tests(self._neighbours, self.depth)
        self.n_tests += pair.size
        self._tests = xs, ys, pair, cond
        return np.stack([np.minimum(xs, ys), np.maximum(xs, ys)], axis=1)[pair], cond

    def record(self, pvalues: FloatArray) -> None:
        """Remove the pairs whose tests of this depth passed and append their separating sets."""
        xs, ys, pair, cond = self._tests
        n_nodes, depth = self.n_nodes, self.depth
        passed = pvalues > self.alpha
        if not passed.any():
            return
        separated = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
        separated[xs[pair[passed]], ys[pair[passed]]] = True
        unions = _passing_unions(xs, ys, pair[passed], cond[passed], n_nodes)
        removed = separated | separated.T
        skipped = self._degrees < depth - 1
        lows, highs = np.nonzero(removed)
        lows, highs = lows[lows < highs], highs[lows < highs]
        from_low = separated[lows, highs].tolist()
        from_high = (~skipped[highs]).tolist()
        for a, b, low_side, high_side in zip(
            lows.tolist(), highs.tolist(), from_low, from_high, strict=True
        ):
            entries = self.sepsets.setdefault((a, b), [])
            if low_side:
                entries.append(unions.get((a, b), _EMPTY))
            if high_side:
                entries.append(unions.get((b, a), _EMPTY))
        self.adjacent &= ~removed

    def result(self) -> BatchedPCResult:
        """The skeleton and separating sets so far, oriented as causal-learn orients them."""
        return oriented_result(self.adjacent, self.sepsets, self.n_tests)


def oriented_result(
    skeleton: BoolMatrix, sepsets: Mapping[tuple[int, int], list[frozenset[int]]], n_tests: int
) -> BatchedPCResult:
    """A finished adjacency search (its skeleton, separating sets and test count) oriented as
    causal-learn orients it."""
    sets = {pair: tuple(entries) for pair, entries in sepsets.items()}
    orientation = _Orientation(skeleton)
    orientation.orient_colliders(sets)
    orientation.apply_meek_rules()
    directed = orientation.directed_matrix()
    undirected = skeleton & ~directed & ~directed.T
    return BatchedPCResult(skeleton, sets, directed, undirected, n_tests)


_EMPTY: frozenset[int] = frozenset()


def _passing_unions(
    xs: IntArray, ys: IntArray, passed_pairs: IntArray, passed_sets: IntArray, n_nodes: int
) -> dict[tuple[int, int], frozenset[int]]:
    """For each ordered pair ``(x, y)`` with a passing test, the union of its passing sets; a
    pair with none (or only empty sets, at depth 0) has the empty union and no entry. Only the
    pairs with a passing test get a row, so depth 0 over ``d (d - 1)`` pairs allocates nothing."""
    depth = passed_sets.shape[1]
    if depth == 0 or passed_pairs.size == 0:
        return {}
    rows, row_of_test = np.unique(passed_pairs, return_inverse=True)
    union = np.zeros((rows.size, n_nodes), dtype=np.bool_)
    union[np.repeat(row_of_test, depth), passed_sets.ravel()] = True
    return {
        (int(xs[row]), int(ys[row])): frozenset(np.flatnonzero(members).tolist())
        for row, members in zip(rows.tolist(), union, strict=True)
    }


# --------------------------------------------------------------------------- orientation


class _Orientation:
    """causal-learn's graph state during orientation: directed edges among the skeleton and
    its ancestor matrix ``dpath`` (``dpath[j, i]`` when ``i`` counts as an ancestor of ``j``),
    updated exactly as causal-learn's ``GeneralGraph`` updates it."""

    def __init__(self, skeleton: BoolMatrix) -> None:
        self.n_nodes = skeleton.shape[0]
        self.adjacent: list[list[bool]] = skeleton.tolist()
        self.directed: list[list[bool]] = [[False] * self.n_nodes for _ in range(self.n_nodes)]
        self._dpath = np.eye(self.n_nodes, dtype=np.bool_)
        # The matrix is brought up to date only when read (Meek's rules read it; the colliders
        # only write it): the orientations since it was last current, and whether one of them
        # replaced a directed edge, after which causal-learn rebuilds it from scratch.
        self._pending: list[tuple[int, int]] = []
        self._rebuild = False

    @property
    def dpath(self) -> BoolMatrix:
        """causal-learn's ancestor matrix after every orientation so far.

        Deferring the updates gives the same matrix: after the last rebuild (the last time a
        directed edge was replaced) every orientation met an undirected edge, so the edges
        directed at that rebuild are today's directed edges less the later orientations, and
        the rebuild followed by those orientations' updates, in order, is what causal-learn's
        graph did one step at a time."""
        if self._rebuild:
            later = set(self._pending)
            self._dpath = np.eye(self.n_nodes, dtype=np.bool_)
            edges = np.argwhere(np.triu(np.array(self.adjacent, dtype=np.bool_)))
            for a, b in edges[::-1].tolist():
                if self.directed[a][b] and (a, b) not in later:
                    self._adjust_dpath(a, b)
                elif self.directed[b][a] and (b, a) not in later:
                    self._adjust_dpath(b, a)
            self._rebuild = False
        for tail, head in self._pending:
            self._adjust_dpath(tail, head)
        self._pending = []
        return self._dpath

    def directed_matrix(self) -> BoolMatrix:
        """The directed edges as a boolean matrix."""
        return np.array(self.directed, dtype=np.bool_).reshape(self.n_nodes, self.n_nodes)

    def is_undirected(self, i: int, j: int) -> bool:
        """``i - j`` is an edge with no orientation."""
        return self.adjacent[i][j] and not self.directed[i][j] and not self.directed[j][i]

    def _adjust_dpath(self, i: int, j: int) -> None:
        # causal-learn's one-step update for a new edge i -> j: ancestors of i become ancestors
        # of j and i becomes an ancestor of j's descendants (ancestors of i are not linked to
        # descendants of j). For i != j no cell it writes is one it reads later in its loop.
        dpath = self._dpath
        ancestors_of_i = dpath[i].copy()
        descendants_of_j = dpath[:, j].copy()
        dpath[j, i] = True
        dpath[j, ancestors_of_i] = True
        dpath[descendants_of_j, i] = True

    def orient(self, tail: int, head: int) -> None:
        """Remove the edge and add ``tail -> head`` as causal-learn's graph does: replacing a
        directed edge rebuilds the ancestor matrix from scratch (adding the remaining directed
        edges in reverse ``(min, max)`` order), then the new edge updates it."""
        was_directed = self.directed[tail][head] or self.directed[head][tail]
        self.directed[tail][head] = self.directed[head][tail] = False
        if was_directed:
            self._rebuild = True
            self._pending = []
        self.directed[tail][head] = True
        self._pending.append((tail, head))

    def orient_colliders(
        self, sepsets: Mapping[tuple[int, int], tuple[frozenset[int], ...]]
    ) -> None:
        """``uc_sepset`` with priority 2: earlier colliders win over conflicting later ones."""
        for y in range(self.n_nodes):
            neighbours = [v for v in range(self.n_nodes) if self.adjacent[y][v]]
            for x, z in itertools.combinations(neighbours, 2):
                if self.adjacent[x][z] or any(y in s for s in sepsets[(x, z)]):
                    continue
                if not self.directed[y][x] and not self.directed[y][z]:
                    self.orient(x, y)
                    self.orient(z, y)

    def _adjacency_list(self) -> list[tuple[int, int]]:
        """causal-learn's ``find_adj`` order: tail marks, then arrowhead marks, row by row."""
        n, adj, out = self.n_nodes, self.adjacent, self.directed
        if n <= 16:  # small: the same pairs read off the lists, without numpy's fixed cost
            marks = [(c, r) for r in range(n) for c in range(n) if adj[r][c] and not out[c][r]]
            return marks + [(c, r) for r in range(n) for c in range(n) if out[c][r]]
        adjacent = np.array(self.adjacent, dtype=np.bool_).reshape(self.n_nodes, self.n_nodes)
        directed = self.directed_matrix()
        tails = np.nonzero(adjacent & ~directed.T)
        arrows = np.nonzero(directed.T)
        return [(c, r) for r, c in zip(*(t.tolist() for t in tails), strict=True)] + [
            (c, r) for r, c in zip(*(a.tolist() for a in arrows), strict=True)
        ]

    def _triples(self) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        """Unshielded triples and triangles in causal-learn's order."""
        pairs = self._adjacency_list()
        by_first: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for a, b in pairs:
            by_first[a].append(b)
        unshielded: list[tuple[int, int, int]] = []
        triangles: list[tuple[int, int, int]] = []
        for a, b in pairs:
            for c in by_first[b]:
                if c != a:
                    (triangles if self.adjacent[a][c] else unshielded).append((a, b, c))
        return unshielded, triangles

    def _kites(self, triangles: list[tuple[int, int, int]]) -> list[tuple[int, int, int, int]]:
        """causal-learn's kites ``(i, j, k, m)`` in its order: triangles ``i, j, m`` and
        ``i, k, m`` with ``j < k`` not adjacent."""
        groups: dict[tuple[int, int], list[int]] = {}
        for i, j, m in triangles:
            groups.setdefault((i, m), []).append(j)
        return [
            (i, j, k, m)
            for i, j, m in triangles
            for k in groups[(i, m)]
            if j < k and not self.adjacent[j][k]
        ]

    def _try_orient(self, tail: int, head: int) -> bool:
        """Orient ``tail -> head`` unless ``head`` counts as an ancestor of ``tail``."""
        if self.dpath[tail, head]:
            return False
        self.orient(tail, head)
        return True

    def apply_meek_rules(self) -> None:
        """Meek rules 1-3, repeated until nothing changes, over lists built once."""
        unshielded, triangles = self._triples()
        kites = self._kites(triangles)
        directed = self.directed
        changed = True
        while changed:
            changed = False
            for i, j, k in unshielded:
                if directed[i][j] and self.is_undirected(j, k):
                    changed |= self._try_orient(j, k)
            for i, j, k in triangles:
                if directed[i][j] and directed[j][k] and self.is_undirected(i, k):
                    changed |= self._try_orient(i, k)
            for i, j, k, m in kites:
                if (
                    self.is_undirected(i, j)
                    and self.is_undirected(i, k)
                    and directed[j][m]
                    and directed[k][m]
                    and self.is_undirected(i, m)
                ):
                    changed |= self._try_orient(i, m)
