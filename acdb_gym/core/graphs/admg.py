"""Graphs with hidden variables: ADMGs, latent projections and MAGs (DESIGN §4.1); the PAG of a
MAG's equivalence class is :mod:`acdb_gym.core.graphs.pag`.

A world with latent variables is a DAG over observed and latent nodes. What an agent that sees
only the observed nodes can know about it is carried by three derived graphs, all over the
observed nodes (renumbered ``0..p-1`` in ascending order of their DAG index):

* the **latent projection** (Verma & Pearl 1990; Richardson, Evans, Robins & Shpitser 2017,
  "Nested Markov properties for ADMGs", §2.4), an ADMG: ``i -> j`` iff the DAG has a directed
  path ``i -> ... -> j`` whose intermediate nodes are all latent; ``i <-> j`` iff the DAG has a
  path ``i <- ... <- u -> ... -> j`` without colliders whose intermediate nodes (``u``
  included) are all latent, i.e. a latent ``u`` with latent-only directed paths to ``i`` and
  to ``j``. An ADMG may hold both ``i -> j`` and ``i <-> j`` (a "bow").
* the **MAG** (Richardson & Spirtes 2002): ``i`` and ``j`` are adjacent iff no set of other
  observed nodes m-separates them, i.e. iff the ADMG has an *inducing path* between them (every
  intermediate node a collider and an ancestor of ``i`` or ``j``); an adjacent pair is
  ``i -> j`` when ``i`` is an ancestor of ``j``, ``i <-> j`` when neither is an ancestor of the
  other (no selection variables, so no undirected edges).
Every graph is a frozen value over read-only boolean matrices.

>>> dag = DAG.from_edges(5, [(0, 1), (4, 1), (4, 2), (3, 2)])  # X4 hidden, causes X1 and X2
>>> admg = latent_projection(dag, latent=[4])
>>> admg.directed_edges(), admg.bidirected_edges()
([(0, 1), (3, 2)], [(1, 2)])
>>> mag(admg).bidirected_edges()
[(1, 2)]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from acdb_gym.core.graphs._matrix import _check_node, _edge_list
from acdb_gym.core.graphs.dag import DAG, CycleError, _as_square_bool, find_cycle, reachability
from acdb_gym.core.types import BoolMatrix, Edge, readonly

__all__ = [
    "ADMG",
    "inducing_path_adjacency",
    "is_mag",
    "latent_projection",
    "mag",
]


def _check_bidirected(bidirected: BoolMatrix, n: int) -> None:
    if bidirected.shape != (n, n):
        raise ValueError(f"bidirected must have shape {(n, n)}, got {bidirected.shape}")
    if not np.array_equal(bidirected, bidirected.T):
        rows, cols = np.nonzero(bidirected != bidirected.T)
        raise ValueError(f"bidirected must be symmetric, differs at (X{rows[0]}, X{cols[0]})")
    loops = np.flatnonzero(np.diag(bidirected))
    if loops.size:
        raise ValueError(f"no node has a bidirected self-loop, got X{loops[0]}")


@dataclass(frozen=True, eq=False)
class ADMG:
    """An acyclic directed mixed graph over nodes ``0..p-1``.

    Args:
        directed: ``directed[i, j]`` iff ``i -> j``; must be acyclic.
        bidirected: symmetric, ``bidirected[i, j]`` iff ``i <-> j``.

    Raises:
        ValueError: shapes differ, self-loops, an asymmetric ``bidirected``, non-0/1 entries.
        CycleError: the directed part has a cycle.

    >>> ADMG.from_edges(3, directed=[(0, 1)], bidirected=[(1, 2)])
    ADMG(n_nodes=3, directed=[(0, 1)], bidirected=[(1, 2)])
    """

    directed: BoolMatrix
    bidirected: BoolMatrix

    def __post_init__(self) -> None:
        directed = _as_square_bool(self.directed, "directed")
        bidirected = _as_square_bool(self.bidirected, "bidirected")
        n = directed.shape[0]
        _check_bidirected(bidirected, n)
        loops = np.flatnonzero(np.diag(directed))
        if loops.size:
            raise ValueError(f"an ADMG has no self-loops, got X{loops[0]} -> X{loops[0]}")
        cycle = find_cycle(directed)
        if cycle is not None:
            raise CycleError(cycle)
        object.__setattr__(self, "directed", readonly(directed))
        object.__setattr__(self, "bidirected", readonly(bidirected))

    @classmethod
    def from_edges(
        cls, n_nodes: int, *, directed: Iterable[Edge] = (), bidirected: Iterable[Edge] = ()
    ) -> ADMG:
        """Build an ADMG from ``(i, j)`` pairs: ``i -> j`` in ``directed``, ``i <-> j`` in
        ``bidirected`` (either order)."""
        d_matrix = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
        b_matrix = np.zeros_like(d_matrix)
        for i, j in directed:
            _check_node(i, n_nodes)
            _check_node(j, n_nodes)
            d_matrix[i, j] = True
        for i, j in bidirected:
            _check_node(i, n_nodes)
            _check_node(j, n_nodes)
            b_matrix[i, j] = b_matrix[j, i] = True
        return cls(d_matrix, b_matrix)

    @classmethod
    def from_dag(cls, dag: DAG) -> ADMG:
        """The ADMG with ``dag``'s edges and no bidirected edge."""
        return cls(dag.adjacency, np.zeros_like(dag.adjacency))

    @property
    def n_nodes(self) -> int:
        """Number of nodes ``p``."""
        return int(self.directed.shape[0])

    @property
    def skeleton(self) -> BoolMatrix:
        """Symmetric adjacency (a directed or a bidirected edge), read-only."""
        return readonly(self.directed | self.directed.T | self.bidirected)

    def directed_edges(self) -> list[Edge]:
        """All ``(i, j)`` with ``i -> j``, row-major."""
        return _edge_list(self.directed)

    def bidirected_edges(self) -> list[Edge]:
        """All ``(i, j)`` with ``i <-> j`` and ``i < j``, row-major."""
        return _edge_list(np.triu(self.bidirected))

    def ancestors_matrix(self) -> BoolMatrix:
        """``anc[a, b]`` iff ``a`` is a proper ancestor of ``b`` (a directed path a -> ... -> b)."""
        return readonly(reachability(self.directed))

    def is_dag(self) -> bool:
        """Whether there is no bidirected edge (the world is causally sufficient)."""
        return not bool(self.bidirected.any())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ADMG):
            return NotImplemented
        return np.array_equal(self.directed, other.directed) and np.array_equal(
            self.bidirected, other.bidirected
        )

    def __hash__(self) -> int:
        return hash((self.directed.tobytes(), self.bidirected.tobytes(), self.n_nodes))

    def __repr__(self) -> str:
        return (
            f"ADMG(n_nodes={self.n_nodes}, directed={self.directed_edges()}, "
            f"bidirected={self.bidirected_edges()})"
        )


def _observed_nodes(n: int, latent: Iterable[int]) -> np.ndarray:
    hidden = np.zeros(n, dtype=np.bool_)
    for node in latent:
        _check_node(node, n)
        hidden[node] = True
    return np.flatnonzero(~hidden)


def latent_projection(dag: DAG, *, latent: Iterable[int]) -> ADMG:
    """The latent projection of ``dag`` onto its observed nodes (module docstring).

    Args:
        dag: the DAG over observed and latent nodes.
        latent: the indices of the latent nodes.

    Returns:
        An ADMG over the observed nodes, renumbered ``0..p-1`` in ascending order of their
        index in ``dag``.

    Raises:
        ValueError: a latent index is out of range.

    >>> latent_projection(DAG.from_edges(3, [(0, 1), (1, 2)]), latent=[1])
    ADMG(n_nodes=2, directed=[(0, 1)], bidirected=[])
    """
    adjacency = dag.adjacency
    n = adjacency.shape[0]
    observed = _observed_nodes(n, latent)
    hidden = np.ones(n, dtype=np.bool_)
    hidden[observed] = False
    # reach_h[u, v]: a directed path u -> ... -> v (length >= 1) whose intermediate nodes are
    # all latent: the edge u -> v, or u -> w1 ~> w2 -> v with w1 ~> w2 a latent-only path.
    a_int = adjacency.astype(np.int64)
    among_latent = reachability(adjacency[np.ix_(hidden, hidden)]) | np.eye(
        int(hidden.sum()), dtype=np.bool_
    )
    into_latent = (a_int[:, hidden] @ among_latent.astype(np.int64)) > 0
    reach_h = adjacency | ((into_latent.astype(np.int64) @ a_int[hidden]) > 0)
    directed = reach_h[np.ix_(observed, observed)].copy()
    np.fill_diagonal(directed, False)
    # A latent source u with latent-only paths to both i and j (u -> i counts).
    sources = reach_h[np.ix_(hidden, observed)].astype(np.int64)
    bidirected = (sources.T @ sources) > 0
    np.fill_diagonal(bidirected, False)
    return ADMG(directed, bidirected)


def _collider_reach(admg: ADMG, allowed: np.ndarray, a: int, b: int) -> bool:
    """Whether a path ``a *-> v1 <-> ... <-> vk <-* b`` (k >= 1) runs through ``allowed``
    nodes only: the inducing paths of length >= 2."""
    into = admg.directed | admg.bidirected  # into[x, v]: an edge x *-> v
    start = into[a] & allowed
    start[[a, b]] = False
    seen = start.copy()
    frontier = start
    target = into[b]
    while frontier.any():
        if (frontier & target).any():
            return True
        grown = admg.bidirected[frontier].any(axis=0) & allowed & ~seen
        grown[[a, b]] = False
        seen |= grown
        frontier = grown
    return False


def inducing_path_adjacency(admg: ADMG) -> BoolMatrix:
    """``adj[i, j]`` iff ``i`` and ``j`` are adjacent in the MAG of ``admg``: an edge, or a
    collider path between them whose intermediate nodes are ancestors of ``i`` or ``j``
    (Richardson & Spirtes 2002, Theorem 4.2; equivalently, no set of the other nodes
    m-separates them)."""
    n = admg.n_nodes
    anc = admg.ancestors_matrix()
    adjacent = np.array(admg.skeleton, copy=True)
    for i in range(n):
        for j in range(i + 1, n):
            if adjacent[i, j]:
                continue
            allowed = anc[:, i] | anc[:, j]
            if _collider_reach(admg, allowed, i, j):
                adjacent[i, j] = adjacent[j, i] = True
    return readonly(adjacent)


def mag(admg: ADMG) -> ADMG:
    """The maximal ancestral graph of ``admg`` (equivalently of the DAG it projects).

    Adjacencies by inducing paths; ``i -> j`` when ``i`` is an ancestor of ``j``, else
    ``i <-> j``. The result is an ADMG with at most one edge per pair.

    >>> mag(ADMG.from_edges(3, directed=[(0, 1)], bidirected=[(0, 1), (1, 2)]))
    ADMG(n_nodes=3, directed=[(0, 1)], bidirected=[(1, 2)])
    """
    adjacent = inducing_path_adjacency(admg)
    anc = admg.ancestors_matrix()
    directed = adjacent & anc
    bidirected = adjacent & ~anc & ~anc.T
    return ADMG(directed, bidirected)


def is_mag(graph: ADMG) -> bool:
    """Whether ``graph`` is a MAG: at most one edge per pair, ancestral (no ``i <-> j`` with
    ``i`` an ancestor of ``j``), and maximal (every inducing path is an edge)."""
    if (graph.bidirected & (graph.directed | graph.directed.T)).any():
        return False
    anc = graph.ancestors_matrix()
    if (graph.bidirected & (anc | anc.T)).any():
        return False
    return bool(np.array_equal(inducing_path_adjacency(graph), graph.skeleton))
