"""Graphs with hidden variables: ADMGs, latent projections, MAGs and PAGs (DESIGN §4.1).

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
* the **PAG** of the MAG's Markov equivalence class: the MAG's skeleton with a mark at an
  endpoint that is an arrowhead (tail) in every MAG of the class, and a circle otherwise.
  :func:`pag` computes it with FCI's orientation rules R0-R4 and R8-R10 (Zhang 2008, "On the
  completeness of orientation rules for causal discovery in the presence of latent confounders
  and selection bias", complete without selection bias), with the MAG as the independence
  oracle: an unshielded or discriminated triple is a collider exactly when it is one in the MAG.

Every graph is a frozen value over read-only boolean matrices. A :class:`PAG` holds its marks as
two boolean matrices: ``arrowhead[i, j]`` (``tail[i, j]``) iff the edge between ``i`` and ``j``
has an arrowhead (a tail) at ``j``; an adjacent endpoint with neither is a circle.

>>> dag = DAG.from_edges(5, [(0, 1), (4, 1), (4, 2), (3, 2)])  # X4 hidden, causes X1 and X2
>>> admg = latent_projection(dag, latent=[4])
>>> admg.directed_edges(), admg.bidirected_edges()
([(0, 1), (3, 2)], [(1, 2)])
>>> pag(mag(admg)).edge_strings()
['X0 o-> X1', 'X1 <-> X2', 'X2 <-o X3']
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from acdb_gym.core.graphs._matrix import _check_node, _edge_list
from acdb_gym.core.graphs.dag import DAG, CycleError, _as_square_bool, find_cycle, reachability
from acdb_gym.core.types import BoolMatrix, Edge, readonly

__all__ = [
    "ADMG",
    "PAG",
    "LatentTruth",
    "inducing_path_adjacency",
    "is_mag",
    "latent_projection",
    "latent_truth",
    "mag",
    "pag",
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


@dataclass(frozen=True, eq=False)
class PAG:
    """A partial ancestral graph: a skeleton with an endpoint mark at each end of each edge.

    Args:
        arrowhead: ``arrowhead[i, j]`` iff the edge ``i *-* j`` has an arrowhead at ``j``.
        tail: ``tail[i, j]`` iff it has a tail at ``j``.
        adjacent: the symmetric skeleton; every mark sits on one of its edges.

    An adjacent endpoint with neither mark is a circle. A MAG is a PAG without circles
    (:meth:`from_mag`).

    Raises:
        ValueError: shapes differ, an asymmetric skeleton, a mark off the skeleton or an endpoint
            that is both a tail and an arrowhead.
    """

    adjacent: BoolMatrix
    arrowhead: BoolMatrix
    tail: BoolMatrix

    def __post_init__(self) -> None:
        adjacent = _as_square_bool(self.adjacent, "adjacent")
        arrowhead = _as_square_bool(self.arrowhead, "arrowhead")
        tail = _as_square_bool(self.tail, "tail")
        n = adjacent.shape[0]
        _check_bidirected(adjacent, n)
        for name, marks in (("arrowhead", arrowhead), ("tail", tail)):
            if marks.shape != (n, n):
                raise ValueError(f"{name} must have shape {(n, n)}, got {marks.shape}")
            off = marks & ~adjacent
            if off.any():
                i, j = np.argwhere(off)[0]
                raise ValueError(f"{name} mark at X{j} on X{i} *-* X{j}, which is not an edge")
        both = arrowhead & tail
        if both.any():
            i, j = np.argwhere(both)[0]
            raise ValueError(f"the mark at X{j} on X{i} *-* X{j} is both a tail and an arrowhead")
        object.__setattr__(self, "adjacent", readonly(adjacent))
        object.__setattr__(self, "arrowhead", readonly(arrowhead))
        object.__setattr__(self, "tail", readonly(tail))

    @classmethod
    def from_mag(cls, graph: ADMG) -> PAG:
        """The PAG whose marks are all those of the MAG ``graph`` (no circles)."""
        adjacent = graph.skeleton
        arrowhead = graph.directed | graph.bidirected
        tail = graph.directed.T & ~graph.bidirected
        return cls(adjacent, arrowhead, tail)

    @property
    def n_nodes(self) -> int:
        """Number of nodes ``p``."""
        return int(self.adjacent.shape[0])

    @property
    def circle(self) -> BoolMatrix:
        """``circle[i, j]`` iff the edge ``i *-* j`` has a circle at ``j``, read-only."""
        return readonly(self.adjacent & ~self.arrowhead & ~self.tail)

    def mark(self, i: int, j: int) -> str:
        """The mark at ``j`` on the edge between ``i`` and ``j``: ``">"``, ``"-"`` or ``"o"``."""
        if not self.adjacent[i, j]:
            raise ValueError(f"X{i} and X{j} are not adjacent")
        return ">" if self.arrowhead[i, j] else "-" if self.tail[i, j] else "o"

    def edge_strings(self) -> list[str]:
        """Every edge as ``"Xi <mark>-<mark> Xj"`` with ``i < j``, row-major: ``-->``, ``<->``,
        ``o->``, ``o-o``, ``<-o``, ``---``..."""
        left = {">": "<", "-": "-", "o": "o"}
        return [
            f"X{i} {left[self.mark(j, i)]}-{self.mark(i, j)} X{j}"
            for i, j in _edge_list(np.triu(self.adjacent))
        ]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PAG):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, name), getattr(other, name))
            for name in ("adjacent", "arrowhead", "tail")
        )

    def __hash__(self) -> int:
        return hash((self.adjacent.tobytes(), self.arrowhead.tobytes(), self.tail.tobytes()))

    def __repr__(self) -> str:
        return f"PAG(n_nodes={self.n_nodes}, edges={self.edge_strings()})"


class _Marks:
    """The mutable mark state of :func:`pag` while its rules run (private)."""

    def __init__(self, adjacent: BoolMatrix) -> None:
        self.adj = np.array(adjacent, copy=True)
        self.arrow = np.zeros_like(self.adj)
        self.tail = np.zeros_like(self.adj)
        self.changed = False

    def circle(self, i: int, j: int) -> bool:
        return bool(self.adj[i, j] and not self.arrow[i, j] and not self.tail[i, j])

    def set_arrow(self, i: int, j: int) -> None:
        """An arrowhead at ``j`` on ``i *-* j``."""
        if not self.arrow[i, j]:
            assert not self.tail[i, j], f"arrowhead over a tail at X{j} on X{i}-X{j}"
            self.arrow[i, j] = True
            self.changed = True

    def set_tail(self, i: int, j: int) -> None:
        """A tail at ``j`` on ``i *-* j``."""
        if not self.tail[i, j]:
            assert not self.arrow[i, j], f"tail over an arrowhead at X{j} on X{i}-X{j}"
            self.tail[i, j] = True
            self.changed = True

    def directed(self, i: int, j: int) -> bool:
        """``i -> j``."""
        return bool(self.adj[i, j] and self.arrow[i, j] and self.tail[j, i])

    def neighbours(self, v: int) -> list[int]:
        return np.flatnonzero(self.adj[v]).tolist()


def _rule0(marks: _Marks, truth: ADMG) -> None:
    """R0: an unshielded triple ``a *-* b *-* c`` gets ``a *-> b <-* c`` iff it is a collider
    in the MAG (b is in no separating set of a and c)."""
    into = truth.directed | truth.bidirected
    for b in range(marks.adj.shape[0]):
        nbrs = marks.neighbours(b)
        for x, a in enumerate(nbrs):
            for c in nbrs[x + 1 :]:
                if not marks.adj[a, c] and into[a, b] and into[c, b]:
                    marks.set_arrow(a, b)
                    marks.set_arrow(c, b)


def _rule1(marks: _Marks, a: int, b: int, c: int) -> None:
    """R1: ``a *-> b o-* c``, a and c not adjacent => ``b -> c``."""
    if marks.arrow[a, b] and marks.circle(c, b) and not marks.adj[a, c]:
        marks.set_arrow(b, c)
        marks.set_tail(c, b)


def _rule2(marks: _Marks, a: int, b: int, c: int) -> None:
    """R2: ``a -> b *-> c`` or ``a *-> b -> c``, and ``a *-o c`` => ``a *-> c``."""
    if not (marks.adj[a, c] and marks.circle(a, c)):
        return
    if (marks.directed(a, b) and marks.arrow[b, c]) or (marks.arrow[a, b] and marks.directed(b, c)):
        marks.set_arrow(a, c)


def _rule3(marks: _Marks, a: int, b: int, c: int) -> None:
    """R3: ``a *-> b <-* c``, a and c not adjacent, ``a *-o d o-* c``, ``d *-o b`` =>
    ``d *-> b``."""
    if not (marks.arrow[a, b] and marks.arrow[c, b]) or marks.adj[a, c] or a == c:
        return
    for d in marks.neighbours(b):
        if d in (a, c) or not marks.circle(d, b):
            continue
        if marks.adj[a, d] and marks.adj[c, d] and marks.circle(a, d) and marks.circle(c, d):
            marks.set_arrow(d, b)


def _rule4(marks: _Marks, truth: ADMG, b: int, c: int) -> None:
    """R4: on a discriminating path ``<d, ..., a, b, c>`` for ``b`` with ``b o-* c``: ``b -> c``
    when b is a non-collider on it in the MAG, else ``a <-> b <-> c``."""
    if not marks.circle(c, b):
        return
    into = truth.directed | truth.bidirected
    for a in marks.neighbours(b):
        if a == c or not (marks.arrow[b, a] and marks.directed(a, c)):
            continue
        if not _discriminated(marks, a, b, c):
            continue
        if into[a, b] and into[c, b]:
            marks.set_arrow(a, b)
            marks.set_arrow(b, a)
            marks.set_arrow(c, b)
            marks.set_arrow(b, c)
        else:
            marks.set_arrow(b, c)
            marks.set_tail(c, b)
        return


def _discriminated(marks: _Marks, a: int, b: int, c: int) -> bool:
    """Whether some ``d`` closes a discriminating path ``<d, ..., v, a, b, c>``: every node from
    ``a`` back to d's successor is a collider and a parent of ``c``, and d is not adjacent to c.
    ``a`` already has ``a <-* b`` and ``a -> c``."""
    seen = {a, b, c}
    queue = deque([a])
    while queue:
        v = queue.popleft()
        for w in marks.neighbours(v):
            if w in seen or not marks.arrow[w, v]:
                continue
            if not marks.adj[w, c]:
                return True
            if marks.arrow[v, w] and marks.directed(w, c):
                seen.add(w)
                queue.append(w)
    return False


def _uncovered_pd_paths(marks: _Marks, start: int, first: int, end: int) -> Iterator[list[int]]:
    """Uncovered potentially directed paths ``<start, first, ..., end>``: each edge
    ``u *-* v`` along it has no arrowhead at u and no tail at v; each consecutive triple is
    unshielded."""

    def pd_edge(u: int, v: int) -> bool:
        return bool(marks.adj[u, v] and not marks.arrow[v, u] and not marks.tail[u, v])

    if not pd_edge(start, first):
        return
    stack: list[list[int]] = [[start, first]]
    while stack:
        path = stack.pop()
        last = path[-1]
        if last == end:
            yield path
            continue
        for nxt in marks.neighbours(last):
            if nxt in path or marks.adj[path[-2], nxt] or not pd_edge(last, nxt):
                continue
            stack.append([*path, nxt])


def _rule8(marks: _Marks, a: int, b: int, c: int) -> None:
    """R8: ``a -> b -> c`` or ``a -o b -> c``, and ``a o-> c`` => ``a -> c``."""
    if not (marks.adj[a, c] and marks.arrow[a, c] and marks.circle(c, a)):
        return
    if marks.directed(b, c) and marks.tail[b, a] and not marks.tail[a, b]:
        # a -> b (tail at a, arrowhead at b) or a -o b (tail at a, circle at b)
        marks.set_tail(c, a)


def _rule9(marks: _Marks, a: int, c: int) -> None:
    """R9: ``a o-> c`` and an uncovered p.d. path ``<a, b, ..., c>`` with b, c not adjacent
    => ``a -> c``."""
    if not (marks.arrow[a, c] and marks.circle(c, a)):
        return
    for b in marks.neighbours(a):
        if b == c or marks.adj[b, c]:
            continue
        for _ in _uncovered_pd_paths(marks, a, b, c):
            marks.set_tail(c, a)
            return


def _rule10(marks: _Marks, a: int, c: int) -> None:
    """R10: ``a o-> c``, ``b -> c <- d``, uncovered p.d. paths from a to b and from a to d whose
    second nodes are distinct and not adjacent => ``a -> c``."""
    if not (marks.arrow[a, c] and marks.circle(c, a)):
        return
    parents = [v for v in marks.neighbours(c) if v != a and marks.directed(v, c)]
    firsts = {
        target: {
            first
            for first in marks.neighbours(a)
            if next(_uncovered_pd_paths(marks, a, first, target), None) is not None
        }
        for target in parents
    }
    for x, b in enumerate(parents):
        for d in parents[x + 1 :]:
            for mu in firsts[b]:
                for omega in firsts[d]:
                    if mu != omega and not marks.adj[mu, omega]:
                        marks.set_tail(c, a)
                        return


def pag(truth: ADMG) -> PAG:
    """The PAG of the Markov equivalence class of the MAG ``truth`` (module docstring).

    Args:
        truth: a MAG (:func:`mag` of an ADMG); it answers the independence queries.

    Returns:
        The PAG over the same nodes.

    Raises:
        ValueError: ``truth`` is not a MAG.
    """
    if not is_mag(truth):
        raise ValueError(f"pag() needs a maximal ancestral graph, got {truth!r}")
    marks = _Marks(truth.skeleton)
    _rule0(marks, truth)
    n = truth.n_nodes
    marks.changed = True
    while marks.changed:
        marks.changed = False
        for b in range(n):
            nbrs = marks.neighbours(b)
            for a in nbrs:
                for c in nbrs:
                    if a != c:
                        _rule1(marks, a, b, c)
                        _rule2(marks, a, b, c)
                        _rule3(marks, a, b, c)
                        _rule8(marks, a, b, c)
            for c in nbrs:
                _rule4(marks, truth, b, c)
        if marks.changed:
            continue
        for a in range(n):
            for c in marks.neighbours(a):
                _rule9(marks, a, c)
                _rule10(marks, a, c)
    return PAG(marks.adj, marks.arrow, marks.tail)


@dataclass(frozen=True, eq=False)
class LatentTruth:
    """What a world with hidden variables is scored against (DESIGN §6.3), over the observed
    nodes: the ADMG, the adjacencies of its MAG and the PAG of its MAG."""

    admg: ADMG
    mag_adjacent: BoolMatrix
    pag: PAG


def latent_truth(admg: ADMG) -> LatentTruth:
    """The :class:`LatentTruth` of ``admg``."""
    truth_mag = mag(admg)
    return LatentTruth(admg, truth_mag.skeleton, pag(truth_mag))
