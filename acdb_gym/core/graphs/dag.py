"""Graph value types (DAG, PDAG, CycleError) and their traversals.

The bottom of :mod:`acdb_gym.core.graphs`: it imports none of the sibling modules that derive
graphs (Meek rules, equivalence classes, intervention design), so they can all build on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from acdb_gym.core.graphs._matrix import (
    _check_node,
    _children_lists,
    _count,
    _edge_list,
    _nonzero,
    _topological_order,
)
from acdb_gym.core.types import BoolMatrix, Edge, IntArray, readonly

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

__all__ = [
    "DAG",
    "PDAG",
    "CycleError",
    "find_cycle",
    "has_directed_path",
    "reachability",
    "topological_order",
]

_T = TypeVar("_T")


class CycleError(ValueError):
    """A graph that must be acyclic has a directed cycle.

    Attributes:
        cycle: the nodes of one directed cycle, in order (``cycle[-1] -> cycle[0]`` closes it).
    """

    def __init__(self, cycle: Sequence[int]) -> None:
        self.cycle: tuple[int, ...] = tuple(int(v) for v in cycle)
        path = " -> ".join(f"X{v}" for v in (*self.cycle, self.cycle[0]))
        super().__init__(f"graph has a directed cycle: {path}")


def _as_square_bool(matrix: Any, name: str) -> BoolMatrix:
    array = np.array(matrix, copy=True)
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {array.shape}")
    if array.dtype != np.bool_:
        if not np.isin(array, (0, 1)).all():
            raise ValueError(f"{name} must hold only 0/1 or booleans")
        array = array.astype(np.bool_)
    return array


def topological_order(adjacency: BoolMatrix) -> IntArray | None:
    """Kahn's algorithm; returns a topological order, or None when there is a directed cycle.

    Ties are broken by the smallest index, so the order is deterministic. Linear in the number
    of edges after one scan of the matrix (a heap holds the ready nodes).
    """
    return _topological_order(adjacency.shape[0], *_nonzero(adjacency))


def find_cycle(adjacency: BoolMatrix) -> tuple[int, ...] | None:
    """Return the nodes of one directed cycle of ``adjacency``, or None when it is acyclic."""
    n = adjacency.shape[0]
    children, start, indegree = _children_lists(n, *_nonzero(adjacency))
    stack = [v for v in range(n) if indegree[v] == 0]
    removed = 0
    while stack:
        node = stack.pop()
        removed += 1
        for child in children[start[node] : start[node + 1]]:
            indegree[child] -= 1
            if indegree[child] == 0:
                stack.append(child)
    if removed == n:
        return None
    # The nodes never removed (positive in-degree left) all have a surviving parent: walk
    # parents until a node repeats.
    alive = np.asarray(indegree) > 0
    node = int(np.flatnonzero(alive)[0])
    seen: dict[int, int] = {}
    walk: list[int] = []
    while node not in seen:
        seen[node] = len(walk)
        walk.append(node)
        node = int(np.flatnonzero(adjacency[:, node] & alive)[0])
    return tuple(reversed(walk[seen[node] :]))


def has_directed_path(directed: BoolMatrix, source: int, target: int) -> bool:
    """Whether a directed path (possibly empty) leads from ``source`` to ``target``."""
    seen = np.zeros(directed.shape[0], dtype=np.bool_)
    frontier = np.zeros_like(seen)
    frontier[source] = True
    while frontier.any():
        if frontier[target]:
            return True
        seen |= frontier
        frontier = directed[frontier].any(axis=0) & ~seen
    return False


def reachability(adjacency: BoolMatrix) -> BoolMatrix:
    """The transitive closure: ``reach[a, b]`` iff a directed path of length >= 1 leads from
    ``a`` to ``b`` (so ``reach[a, a]`` only on a cycle through ``a``).

    Args:
        adjacency: square boolean matrix, ``adjacency[i, j]`` iff ``i -> j``; any digraph.

    Returns:
        A new boolean matrix of the same shape.

    Raises:
        ValueError: ``adjacency`` is not a square matrix.

    >>> reachability(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=bool)).astype(int)
    array([[0, 1, 1],
           [0, 0, 1],
           [0, 0, 0]])
    """
    if adjacency.ndim != 2 or adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError(f"adjacency must be a square matrix, got shape {adjacency.shape}")
    reach = np.asarray(adjacency, dtype=np.bool_).copy()
    # Squaring doubles the path lengths covered, so about log2(d) products reach the fixpoint.
    while True:
        grown = reach | (_count(reach, reach) > 0)
        if np.array_equal(grown, reach):
            return reach
        reach = grown


@dataclass(frozen=True, eq=False)
class DAG:
    """A directed acyclic graph over nodes ``0..d-1``.

    Args:
        adjacency: square boolean (or 0/1) matrix, ``adjacency[i, j]`` iff ``i -> j``. It is
            copied and stored read-only.

    Raises:
        ValueError: not square, self-loops, or non-boolean entries.
        CycleError: the graph has a directed cycle.

    >>> DAG.from_edges(2, [(0, 1)])
    DAG(n_nodes=2, edges=[(0, 1)])
    """

    adjacency: BoolMatrix

    def __post_init__(self) -> None:
        adjacency = _as_square_bool(self.adjacency, "adjacency")
        loops = np.flatnonzero(np.diag(adjacency))
        if loops.size:
            raise ValueError(f"a DAG has no self-loops, got them at {[f'X{v}' for v in loops]}")
        cycle = find_cycle(adjacency)
        if cycle is not None:
            raise CycleError(cycle)
        object.__setattr__(self, "adjacency", readonly(adjacency))

    @classmethod
    def _valid(cls, adjacency: BoolMatrix) -> DAG:
        """A DAG from a fresh boolean matrix that is acyclic by construction (the forward pairs
        of an order), without the checks, which cost more than drawing a small DAG."""
        dag = object.__new__(cls)
        object.__setattr__(dag, "adjacency", readonly(adjacency))
        return dag

    @classmethod
    def from_edges(cls, n_nodes: int, edges: Iterable[Edge]) -> DAG:
        """Build a DAG from ``(i, j)`` pairs meaning ``i -> j``."""
        adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
        for i, j in edges:
            _check_node(i, n_nodes)
            _check_node(j, n_nodes)
            adjacency[i, j] = True
        return cls(adjacency)

    @classmethod
    def empty(cls, n_nodes: int) -> DAG:
        """The DAG with ``n_nodes`` nodes and no edges."""
        return cls(np.zeros((n_nodes, n_nodes), dtype=np.bool_))

    @property
    def n_nodes(self) -> int:
        """Number of nodes ``d``."""
        return int(self.adjacency.shape[0])

    @property
    def n_edges(self) -> int:
        """Number of edges."""
        return int(np.count_nonzero(self.adjacency))

    def edges(self) -> list[Edge]:
        """All edges ``(i, j)`` meaning ``i -> j``, in row-major order."""
        return _edge_list(self.adjacency)

    def parents(self, node: int) -> IntArray:
        """Indices of the parents of ``node``, ascending."""
        return np.flatnonzero(self.adjacency[:, node])

    def children(self, node: int) -> IntArray:
        """Indices of the children of ``node``, ascending."""
        return np.flatnonzero(self.adjacency[node])

    def topological_order(self) -> IntArray:
        """A topological order (smallest ready index first)."""
        order = topological_order(self.adjacency)
        assert order is not None  # acyclic by construction
        return order

    def _derived(self, compute: Callable[[DAG], _T]) -> _T:
        """``compute(self)``, computed on first use and kept with this object.

        The DAG is immutable, so what is derived from it (its CPDAG, its minimum intervention
        set) never goes stale. The modules that derive them pass their function here, which
        keeps this module free of imports from them. Use ``cpdag(dag)`` and
        ``minimum_intervention_set(dag)``.
        """
        memo: dict[Callable[[DAG], Any], Any] = self.__dict__.setdefault("_memo", {})
        if compute not in memo:
            memo[compute] = compute(self)
        return memo[compute]

    def skeleton(self) -> BoolMatrix:
        """Symmetric adjacency of the undirected skeleton."""
        return readonly(self.adjacency | self.adjacency.T)

    def to_pdag(self) -> PDAG:
        """The same graph as a fully directed :class:`PDAG`."""
        # The adjacency is a valid DAG's (read-only, so it can be shared): no checks to redo.
        return PDAG._valid(self.adjacency, np.zeros_like(self.adjacency))

    def to_networkx(self) -> nx.DiGraph:
        """A ``networkx.DiGraph`` with nodes ``0..d-1``."""
        import networkx as nx

        graph = nx.DiGraph()
        graph.add_nodes_from(range(self.n_nodes))
        graph.add_edges_from(self.edges())
        return graph

    @classmethod
    def from_networkx(cls, graph: nx.DiGraph) -> DAG:
        """Build from a ``networkx.DiGraph`` whose nodes are ``0..d-1``."""
        n = graph.number_of_nodes()
        if set(graph.nodes) != set(range(n)):
            raise ValueError(f"nodes must be 0..{n - 1}, got {sorted(graph.nodes)}")
        return cls.from_edges(n, graph.edges)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DAG):
            return NotImplemented
        return np.array_equal(self.adjacency, other.adjacency)

    def __hash__(self) -> int:
        return hash((self.adjacency.shape, self.adjacency.tobytes()))

    def __repr__(self) -> str:
        return f"DAG(n_nodes={self.n_nodes}, edges={self.edges()})"


@dataclass(frozen=True, eq=False)
class PDAG:
    """A mixed graph of directed and undirected edges (a submission, a CPDAG, an essential graph).

    Args:
        directed: square boolean matrix, ``directed[i, j]`` iff ``i -> j``.
        undirected: symmetric boolean matrix, ``undirected[i, j]`` iff ``i - j``.

    Raises:
        ValueError: shapes differ, self-loops, asymmetric ``undirected``, a pair that is both
            directed and undirected, or a pair directed both ways; the message names the edges.
        CycleError: the directed edges form a directed cycle.

    >>> PDAG.from_edges(3, directed=[(0, 1)], undirected=[(1, 2)])
    PDAG(n_nodes=3, directed=[(0, 1)], undirected=[(1, 2)])
    """

    directed: BoolMatrix
    undirected: BoolMatrix

    def __post_init__(self) -> None:
        directed = _as_square_bool(self.directed, "directed")
        undirected = _as_square_bool(self.undirected, "undirected")
        if directed.shape != undirected.shape:
            raise ValueError(
                f"directed and undirected shapes differ: {directed.shape} vs {undirected.shape}"
            )
        loops = np.flatnonzero(np.diag(directed) | np.diag(undirected))
        if loops.size:
            raise ValueError(f"self-loops are not allowed, got them at {[f'X{v}' for v in loops]}")
        if not np.array_equal(undirected, undirected.T):
            bad = _edge_list(undirected & ~undirected.T)
            raise ValueError(f"undirected must be symmetric; missing mirror of {_fmt(bad, '-')}")
        # Both matrices below are symmetric with an empty diagonal (no loops, undirected
        # symmetric), so any entry means an offending pair; the upper triangle names each once.
        both_ways = directed & directed.T
        if both_ways.any():
            bad = _edge_list(np.triu(both_ways))
            raise ValueError(f"pairs directed both ways: {_fmt(bad, '<->')}")
        mixed = (directed | directed.T) & undirected
        if mixed.any():
            bad = _edge_list(np.triu(mixed))
            raise ValueError(f"pairs both directed and undirected: {_fmt(bad, '-')}")
        cycle = find_cycle(directed)
        if cycle is not None:
            raise CycleError(cycle)
        object.__setattr__(self, "directed", readonly(directed))
        object.__setattr__(self, "undirected", readonly(undirected))

    @classmethod
    def _valid(cls, directed: BoolMatrix, undirected: BoolMatrix) -> PDAG:
        """A PDAG from fresh boolean matrices that are valid by construction (a CPDAG made
        here), without the checks: they cost more than making a small CPDAG."""
        pdag = object.__new__(cls)
        object.__setattr__(pdag, "directed", readonly(directed))
        object.__setattr__(pdag, "undirected", readonly(undirected))
        return pdag

    @classmethod
    def from_edges(
        cls,
        n_nodes: int,
        *,
        directed: Iterable[Edge] = (),
        undirected: Iterable[Edge] = (),
    ) -> PDAG:
        """Build from edge lists; ``(i, j)`` in ``undirected`` may be given in either order."""
        d = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
        u = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
        for i, j in directed:
            _check_node(i, n_nodes)
            _check_node(j, n_nodes)
            d[i, j] = True
        for i, j in undirected:
            _check_node(i, n_nodes)
            _check_node(j, n_nodes)
            u[i, j] = u[j, i] = True
        return cls(d, u)

    @classmethod
    def empty(cls, n_nodes: int) -> PDAG:
        """The graph with ``n_nodes`` nodes and no edges."""
        zeros = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
        return cls(zeros, zeros)

    @property
    def n_nodes(self) -> int:
        """Number of nodes ``d``."""
        return int(self.directed.shape[0])

    def skeleton(self) -> BoolMatrix:
        """Symmetric adjacency of all edges, directed or not."""
        return readonly(self.directed | self.directed.T | self.undirected)

    def directed_edges(self) -> list[Edge]:
        """Directed edges ``(i, j)`` meaning ``i -> j``, row-major."""
        return _edge_list(self.directed)

    def undirected_edges(self) -> list[Edge]:
        """Undirected edges as ``(i, j)`` with ``i < j``, row-major."""
        return _edge_list(np.triu(self.undirected))

    @property
    def is_fully_directed(self) -> bool:
        """True when no edge is undirected."""
        return not self.undirected.any()

    def to_dag(self) -> DAG:
        """The directed part as a :class:`DAG`; raises ValueError if any edge is undirected."""
        if not self.is_fully_directed:
            raise ValueError(f"graph has undirected edges: {_fmt(self.undirected_edges(), '-')}")
        return DAG(self.directed)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PDAG):
            return NotImplemented
        return np.array_equal(self.directed, other.directed) and np.array_equal(
            self.undirected, other.undirected
        )

    def __hash__(self) -> int:
        return hash((self.directed.shape, self.directed.tobytes(), self.undirected.tobytes()))

    def __repr__(self) -> str:
        return (
            f"PDAG(n_nodes={self.n_nodes}, directed={self.directed_edges()}, "
            f"undirected={self.undirected_edges()})"
        )


def _fmt(edges: Sequence[Edge], arrow: str) -> str:
    return ", ".join(f"X{i} {arrow} X{j}" for i, j in edges)
