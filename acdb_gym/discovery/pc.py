"""The PC algorithm through causal-learn, with causal-learn's graph matrix decoded once into a PDAG.

causal-learn stores a graph as an integer matrix of endpoint marks: ``g[a, b]`` is the mark at
``a`` on the edge between ``a`` and ``b`` (``-1`` tail, ``1`` arrowhead, ``0`` no edge). So
``i -> j`` is ``g[i, j] = -1, g[j, i] = 1`` and ``i - j`` is ``g[i, j] = g[j, i] = -1``. This
module is the only place in the package that reads or writes that encoding.

>>> pdag = PDAG.from_edges(3, directed=[(0, 1)], undirected=[(1, 2)])
>>> pdag_to_causallearn(pdag)
array([[ 0, -1,  0],
       [ 1,  0, -1],
       [ 0, -1,  0]])
>>> pdag_from_causallearn(pdag_to_causallearn(pdag)) == pdag
True
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.graphs import PDAG, find_cycle
from acdb_gym.core.types import BoolMatrix, FloatArray, IntArray
from acdb_gym.discovery._common import (
    as_data_matrix,
    check_full_rank_data,
    check_probability,
    memo_by_data,
    stable_causallearn_hashes,
)
from acdb_gym.discovery.pc_batched import BatchedPCResult, pc_batched
from acdb_gym.discovery.pc_many import STACKED_MAX_NODES, pc_batched_many

__all__ = [
    "pc_cpdag",
    "pc_cpdag_many",
    "pdag_from_causallearn",
    "pdag_to_causallearn",
    "shared_pc_cpdag",
]

_TAIL = -1
_ARROW = 1


def pdag_from_causallearn(matrix: ArrayLike) -> PDAG:
    """Decode causal-learn's endpoint-mark matrix (``GeneralGraph.graph``) into a :class:`PDAG`.

    A pair with marks ``g[i, j] = -1, g[j, i] = 1`` becomes ``i -> j``. Every other adjacent pair
    becomes undirected: ``-1/-1`` (undirected), ``1/1`` (bidirected, which PC reports when two
    colliders disagree) and a half-marked pair (one mark 0, the other not).

    PC's orientation phase can, on unfaithful or finite-sample data, leave a directed cycle.
    The decoder then turns every edge of that cycle undirected and looks again, until the
    directed part is acyclic, so it always returns a valid PDAG.

    Args:
        matrix: square integer matrix with entries in ``{-1, 0, 1}`` and a zero diagonal.

    Returns:
        The decoded PDAG over ``matrix.shape[0]`` nodes.

    Raises:
        ValueError: the matrix is not square, has a non-zero diagonal, or holds another value
            (e.g. causal-learn's circle mark ``2`` from FCI).
    """
    marks = np.array(matrix, copy=True)
    if marks.ndim != 2 or marks.shape[0] != marks.shape[1]:
        raise ValueError(f"matrix must be square, got shape {marks.shape}")
    bad = ~np.isin(marks, (_TAIL, 0, _ARROW))
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"matrix entries must be -1, 0 or 1, got {marks[i, j]} at ({i}, {j})")
    if np.diag(marks).any():
        node = int(np.flatnonzero(np.diag(marks))[0])
        raise ValueError(f"matrix diagonal must be 0, got {marks[node, node]} at X{node}")
    marks = marks.astype(np.int64)
    adjacent = (marks != 0) | (marks.T != 0)
    directed = (marks == _TAIL) & (marks.T == _ARROW)
    undirected = adjacent & ~(directed | directed.T)
    directed, undirected = _undirect_cycles(directed, undirected)
    return PDAG(directed, undirected)


def _undirect_cycles(directed: BoolMatrix, undirected: BoolMatrix) -> tuple[BoolMatrix, BoolMatrix]:
    """Turn the edges of directed cycles undirected until the directed part is acyclic."""
    directed = directed.copy()
    undirected = undirected.copy()
    while (cycle := find_cycle(directed)) is not None:
        for a, b in zip(cycle, (*cycle[1:], cycle[0]), strict=True):
            directed[a, b] = directed[b, a] = False
            undirected[a, b] = undirected[b, a] = True
    return directed, undirected


def pdag_to_causallearn(pdag: PDAG) -> IntArray:
    """Encode ``pdag`` as causal-learn's endpoint-mark matrix (the inverse of
    :func:`pdag_from_causallearn`).

    Returns:
        A new int64 matrix: ``g[i, j] = -1, g[j, i] = 1`` for ``i -> j`` and
        ``g[i, j] = g[j, i] = -1`` for ``i - j``.
    """
    return _marks(pdag.directed, pdag.undirected)


def _marks(directed: BoolMatrix, undirected: BoolMatrix) -> IntArray:
    """causal-learn's mark matrix of directed and undirected edges (``directed`` may be cyclic)."""
    marks = np.zeros(directed.shape, dtype=np.int64)
    marks[directed] = _TAIL
    marks[directed.T] = _ARROW
    marks[undirected] = _TAIL
    return marks


def pc_cpdag(
    data: ArrayLike,
    *,
    alpha: float = 0.05,
    backend: Literal["causal-learn", "batched"] = "batched",
) -> PDAG:
    """Estimate a CPDAG with PC and Fisher-z tests, exactly as causal-learn's ``pc`` does.

    The reference is ``pc(data, alpha, "fisherz", show_progress=False)`` with causal-learn's
    other defaults (stable skeleton, ``uc_rule=0``, ``uc_priority=2``), decoded with
    :func:`pdag_from_causallearn`. The default ``backend="batched"`` runs
    :func:`acdb_gym.discovery.pc_batched.pc_batched`: the same tests, in batches, with the same
    decisions, separating sets and orientations (checked against causal-learn on 1,050 instances
    of both ladders by the tests), 10-70x faster and without importing causal-learn.
    ``backend="causal-learn"`` runs causal-learn itself. ``data`` is copied; the caller's array
    is never touched.

    Args:
        data: observational samples, shape ``(n_samples, d)``, finite, no constant column,
            ``n_samples >= d + 1`` (Fisher-z needs ``n - |S| - 3 >= 0`` for every conditioning
            set ``S``, and PC may condition on up to ``d - 2`` variables).
        alpha: significance level of the independence tests, in ``(0, 1)``.
        backend: ``"batched"`` (default) or ``"causal-learn"`` (the reference).

    Returns:
        The estimated CPDAG over ``d`` nodes (the empty graph when ``d < 2``).

    Raises:
        ValueError: ``alpha`` outside ``(0, 1)``, ``backend`` unknown, or ``data`` of the wrong
            shape, with too few rows, non-finite values or a constant column.
    """
    if backend not in ("causal-learn", "batched"):
        raise ValueError(f"backend must be 'causal-learn' or 'batched', got {backend!r}")
    check_probability(alpha, "alpha")
    array = as_data_matrix(data, "data")
    n_nodes = array.shape[1]
    if n_nodes < 2:
        return PDAG.empty(n_nodes)
    check_full_rank_data(array, "data")
    if backend == "batched":
        # A small dataset runs the stacked search (pc_many), the same decisions in fewer calls.
        small = n_nodes <= STACKED_MAX_NODES
        return _pdag_of(
            pc_batched_many([array], alpha=alpha)[0] if small else pc_batched(array, alpha=alpha)
        )
    # Imported here: causal-learn pulls in scikit-learn and takes seconds to import, which
    # should not be paid by every user of acdb_gym.discovery.
    from causallearn.search.ConstraintBased.PC import pc

    with stable_causallearn_hashes():
        graph = pc(np.ascontiguousarray(array), alpha, "fisherz", show_progress=False)
    return pdag_from_causallearn(graph.G.graph)


def pc_cpdag_many(
    datasets: Sequence[ArrayLike],
    *,
    alpha: float = 0.05,
    correlations: FloatArray | None = None,
) -> list[PDAG]:
    """:func:`pc_cpdag` (batched backend) on several datasets, with the tests of one depth
    pooled across them (:func:`~acdb_gym.discovery.pc_many.pc_batched_many`, which takes
    ``correlations`` too).

    Returns:
        ``[pc_cpdag(data, alpha=alpha) for data in datasets]``, computed together.

    Raises:
        ValueError: as :func:`pc_cpdag`, naming the invalid dataset by its index.
    """
    results = pc_batched_many(datasets, alpha=alpha, correlations=correlations)
    return [_pdag_of(result) for result in results]


def _pdag_of(result: BatchedPCResult) -> PDAG:
    """The CPDAG a batched PC result decodes to, as :func:`pc_cpdag` returns it (the empty
    graph below two variables)."""
    n_nodes = result.skeleton.shape[0]
    if n_nodes < 2:
        return PDAG.empty(n_nodes)
    # What pdag_from_causallearn(_marks(directed, undirected)) decodes, without the encoding
    # and its checks: a pair directed both ways (two colliders disagreeing) is undirected,
    # every other edge of the skeleton keeps its state, and directed cycles are undirected.
    one_way = result.directed & ~result.directed.T
    directed, undirected = _undirect_cycles(one_way, result.skeleton & ~(one_way | one_way.T))
    return PDAG._valid(directed, undirected)


SHARED_PC_SIZE = 256
"""Datasets whose PC result :func:`shared_pc_cpdag` keeps (per process, least recently used
first out): more than a sweep worker meets between two agents' episodes on one instance."""

_SHARED: OrderedDict[tuple[object, ...], PDAG] = OrderedDict()


def shared_pc_cpdag(data: ArrayLike, *, alpha: float = 0.05) -> PDAG:
    """:func:`pc_cpdag` with the batched backend, computed once per dataset and process.

    The agents that start from PC (``pc``, ``pc_greedy``, ``pc_active``, ...) all run it on
    the same observational sample of an instance; a sweep worker that runs several of them
    on one instance computes it once. Results are keyed by the data's shape and a SHA-256 of
    its float64 bytes and by ``alpha``, so equal data gives the identical (immutable) PDAG
    that :func:`pc_cpdag` returns, and different data never shares a result.
    """
    return memo_by_data(
        _SHARED, SHARED_PC_SIZE, data, alpha, lambda array, a: pc_cpdag(array, alpha=a)
    )
