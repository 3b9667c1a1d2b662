"""The PAG of a MAG's Markov equivalence class and what a world with hidden variables is scored
against (DESIGN §4.1, §6.3).

The **PAG** has the MAG's skeleton (:mod:`acdb_gym.core.graphs.admg`) with a mark at an
endpoint that is an arrowhead (tail) in every MAG of the class, and a circle otherwise.
:func:`pag` computes it with FCI's orientation rules R0-R4 and R8-R10 (Zhang 2008, "On the
completeness of orientation rules for causal discovery in the presence of latent confounders
and selection bias", complete without selection bias), with the MAG as the independence
oracle: an unshielded or discriminated triple is a collider exactly when it is one in the MAG.
A :class:`PAG` holds its marks as two read-only boolean matrices: ``arrowhead[i, j]``
(``tail[i, j]``) iff the edge between ``i`` and ``j`` has an arrowhead (a tail) at ``j``; an
adjacent endpoint with neither is a circle.

>>> from acdb_gym.core.graphs import DAG, latent_projection
>>> admg = latent_projection(DAG.from_edges(5, [(0, 1), (4, 1), (4, 2), (3, 2)]), latent=[4])
>>> pag(mag(admg)).edge_strings()
['X0 o-> X1', 'X1 <-> X2', 'X2 <-o X3']
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from acdb_gym.core.graphs._matrix import _edge_list
from acdb_gym.core.graphs.admg import ADMG, _check_bidirected, is_mag, mag
from acdb_gym.core.graphs.dag import _as_square_bool
from acdb_gym.core.types import BoolMatrix, readonly

__all__ = ["PAG", "LatentTruth", "latent_truth", "pag"]


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
