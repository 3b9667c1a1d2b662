"""Fixed wirings of real systems: the Sachs signalling network and the DREAM4 gene networks
(DESIGN §3.3).

The source files ship as package data under ``core/data/real/`` (taken unchanged from the
``cdt`` wheel, version 0.6.0, the cytometry file gzip-compressed; licence and attribution in
``core/data/real/NOTICE``):

- ``sachs_consensus.csv``: the 18-edge consensus graph over 11 proteins (Sachs et al. 2005),
  which holds the 3-cycle ``PIP3 -> plcg -> PIP2 -> PIP3``; the Sachs topology is it without
  ``PIP2 -> PIP3`` (17 arcs; not bnlearn's 17-arc ``sachs`` DAG, which differs in several arcs);
- ``dream4_insilico100_{1..5}.csv``: the five 100-gene DREAM4 in-silico networks (Marbach et
  al. 2009), 176 to 249 edges, each with feedback cycles.

Each is made acyclic by one rule, :func:`minimum_feedback_arc_set`: remove a smallest set of
edges that leaves no directed cycle, and among the smallest sets the one that keeps the
earliest edges in file order. The removed edges are recorded in :data:`REMOVED_EDGES` (a test
recomputes them from the source files), so a topology's DAG is the source network minus exactly
those edges. Node ``i`` of a topology is the ``i``-th name of :attr:`Topology.names` (the
Sachs proteins in the cytometry file's column order, ``G1..G100`` for DREAM4).

>>> sachs = topology("sachs")
>>> sachs.dag.n_nodes, sachs.dag.n_edges, sachs.removed
(11, 17, (('PIP2', 'PIP3'),))
"""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable

import numpy as np

from acdb_gym.core.graphs.dag import DAG, find_cycle

__all__ = [
    "FIXED_GRAPHS",
    "REMOVED_EDGES",
    "SACHS_PROTEINS",
    "TOPOLOGY_SIZES",
    "Topology",
    "data_file",
    "minimum_feedback_arc_set",
    "read_edge_list",
    "topology",
]

SACHS_PROTEINS: tuple[str, ...] = (
    "praf",
    "pmek",
    "plcg",
    "PIP2",
    "PIP3",
    "p44/42",
    "pakts473",
    "PKA",
    "PKC",
    "P38",
    "pjnk",
)
"""The 11 proteins, in the column order of the cytometry file (node ``i`` is the ``i``-th)."""

FIXED_GRAPHS: tuple[str, ...] = ("sachs", *(f"dream4-{i}" for i in range(1, 6)))
"""The :attr:`~acdb_gym.core.worlds.spec.LevelSpec.graph` values of the fixed topologies."""

_SOURCES = {
    "sachs": "sachs_consensus.csv",
    **{f"dream4-{i}": f"dream4_insilico100_{i}.csv" for i in range(1, 6)},
}

REMOVED_EDGES: dict[str, tuple[tuple[str, str], ...]] = {
    "sachs": (("PIP2", "PIP3"),),
    "dream4-1": (
        ("G12", "G8"),
        ("G34", "G33"),
        ("G55", "G6"),
        ("G55", "G83"),
        ("G6", "G52"),
        ("G65", "G33"),
        ("G95", "G74"),
    ),
    "dream4-2": (
        ("G23", "G10"),
        ("G23", "G13"),
        ("G39", "G5"),
        ("G52", "G40"),
        ("G55", "G13"),
        ("G80", "G33"),
        ("G86", "G6"),
    ),
    "dream4-3": (
        ("G100", "G47"),
        ("G45", "G32"),
        ("G52", "G51"),
        ("G53", "G38"),
        ("G56", "G97"),
        ("G82", "G25"),
        ("G94", "G34"),
    ),
    "dream4-4": (
        ("G17", "G8"),
        ("G3", "G24"),
        ("G37", "G75"),
        ("G38", "G22"),
        ("G38", "G8"),
        ("G56", "G58"),
        ("G72", "G58"),
    ),
    "dream4-5": (("G69", "G10"), ("G69", "G53"), ("G74", "G8"), ("G92", "G59")),
}
"""The edges :func:`minimum_feedback_arc_set` removes from each source network, sorted."""

TOPOLOGY_SIZES: dict[str, tuple[int, int]] = {
    "sachs": (11, 17),
    "dream4-1": (100, 169),
    "dream4-2": (100, 242),
    "dream4-3": (100, 188),
    "dream4-4": (100, 204),
    "dream4-5": (100, 189),
}
"""``(d, k)`` of each fixed topology's DAG (source edges minus :data:`REMOVED_EDGES`)."""


def data_file(name: str) -> Traversable:
    """A shipped file of ``core/data/real/``."""
    return files("acdb_gym.core").joinpath("data", "real", name)


def read_edge_list(graph: str) -> tuple[tuple[str, str], ...]:
    """The source network of ``graph`` as ``(cause, effect)`` name pairs, in file order."""
    if graph not in _SOURCES:
        raise ValueError(f"graph must be one of {list(_SOURCES)}, got {graph!r}")
    text = data_file(_SOURCES[graph]).read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    return tuple((cause, effect) for cause, effect in rows[1:])


def _names(graph: str) -> tuple[str, ...]:
    if graph == "sachs":
        return SACHS_PROTEINS
    return tuple(f"G{i}" for i in range(1, 101))


def _has_cycle(n_nodes: int, edges: list[tuple[int, int]]) -> list[int] | None:
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    for i, j in edges:
        adjacency[i, j] = True
    cycle = find_cycle(adjacency)
    return None if cycle is None else list(cycle)


def _fewest_removals(
    n_edges: int, cycles: list[list[int]], fixed: dict[int, int]
) -> tuple[int, list[int]]:
    """The exact minimum number of edges hitting every cycle (edge-index lists), with the
    edges in ``fixed`` forced kept (0) or removed (1): a set-cover integer program."""
    from scipy.optimize import Bounds, LinearConstraint, milp  # only when recomputing

    lower = np.zeros(n_edges)
    upper = np.ones(n_edges)
    for index, value in fixed.items():
        lower[index] = upper[index] = value
    rows = np.zeros((len(cycles), n_edges))
    for row, cycle in enumerate(cycles):
        rows[row, cycle] = 1.0
    result = milp(
        c=np.ones(n_edges),
        constraints=LinearConstraint(rows, lb=1.0, ub=np.inf),
        integrality=np.ones(n_edges),
        bounds=Bounds(lower, upper),
    )
    if not result.success:
        return n_edges + 1, []
    chosen = [int(i) for i in np.flatnonzero(np.round(result.x) == 1)]
    return len(chosen), chosen


def _feedback_set(
    n_nodes: int, edges: list[tuple[int, int]], cycles: list[list[int]], fixed: dict[int, int]
) -> tuple[int, list[int]]:
    """:func:`_fewest_removals` with cycles added until the removal leaves no cycle (row
    generation: the integer program over all cycles found so far is exact once its solution
    is acyclic). ``cycles`` grows in place."""
    index = {edge: position for position, edge in enumerate(edges)}
    while True:
        size, chosen = _fewest_removals(len(edges), cycles, fixed)
        if size > len(edges):
            return size, chosen
        removed = set(chosen)
        kept = [edge for position, edge in enumerate(edges) if position not in removed]
        cycle = _has_cycle(n_nodes, kept)
        if cycle is None:
            return size, chosen
        cycles.append([index[(a, b)] for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True)])


def minimum_feedback_arc_set(
    n_nodes: int, edges: list[tuple[int, int]]
) -> tuple[tuple[int, int], ...]:
    """The edges to remove from a directed graph to make it acyclic: a smallest such set, and
    among the smallest sets the one that keeps the earliest edges of ``edges``.

    Exact, by integer programming (scipy's HiGHS): the smallest size ``m`` is found first;
    then each edge on a cycle, in list order, is kept if some set of size ``m`` still exists
    with it and the edges decided before it as decided, and removed otherwise. (A minimum
    feedback arc set is NP-hard in general; the networks here have at most a few dozen
    edges on cycles, where this takes well under a second.)

    >>> minimum_feedback_arc_set(3, [(0, 1), (1, 2), (2, 0)])
    ((2, 0),)
    """
    cycles: list[list[int]] = []
    size, _ = _feedback_set(n_nodes, edges, cycles, {})
    if size == 0:
        return ()
    fixed: dict[int, int] = {}
    while True:
        pending = sorted({p for cycle in cycles for p in cycle} - set(fixed))
        if not pending:
            # Every edge on a known cycle is decided; the last solve may still find a cycle
            # through undecided edges, which are then decided in turn.
            _, chosen = _feedback_set(n_nodes, edges, cycles, fixed)
            if not set({p for cycle in cycles for p in cycle}) - set(fixed):
                break
            continue
        fixed[pending[0]] = 0
        kept_size, _ = _feedback_set(n_nodes, edges, cycles, fixed)
        if kept_size != size:
            fixed[pending[0]] = 1
    return tuple(edges[position] for position in sorted(chosen))


@dataclass(frozen=True)
class Topology:
    """A fixed real wiring made acyclic.

    Attributes:
        graph: its :data:`FIXED_GRAPHS` name.
        names: the variable names, node ``i`` is ``names[i]``.
        dag: the source network minus :attr:`removed`.
        removed: the edges removed to break its cycles, as name pairs.
    """

    graph: str
    names: tuple[str, ...]
    dag: DAG
    removed: tuple[tuple[str, str], ...]


@functools.cache
def topology(graph: str) -> Topology:
    """The acyclic topology ``graph`` (:data:`FIXED_GRAPHS`), read from the shipped files."""
    names = _names(graph)
    node = {name: position for position, name in enumerate(names)}
    removed = REMOVED_EDGES[graph]
    kept = [edge for edge in read_edge_list(graph) if edge not in set(removed)]
    dag = DAG.from_edges(len(names), [(node[a], node[b]) for a, b in kept])
    return Topology(graph=graph, names=names, dag=dag, removed=removed)
