"""Meek's closure of many consistent PDAGs at once, and the interventional essential graphs
of many (DAG, target set) pairs built on it (DESIGN §6, ``essential_f1``).

:func:`close_consistent_many` runs :func:`~acdb_gym.core.graphs.meek.meek_closure`'s loop
(R1, R2, R3, R4, again while anything changed) on ``k`` stacked PDAGs in lockstep: each rule's
mask is the same boolean matrix the one-graph rule computes (R3 and R4 check their middle
nodes for every pair at once instead of looping over candidates), so each graph goes through
the same states and ends in the same closure. It is for PDAGs with a consistent extension,
where no orientation closes a directed cycle (the one-graph closure's cycle-skipping branch
never runs): a true DAG's CPDAG with true orientations added, as
:func:`essential_graphs_many` builds. The work per graph grows as ``d^4``, so it is meant for
small graphs (:data:`MANY_MAX_NODES`). :func:`close_many` takes any PDAGs (noisy orientations
included): a graph whose lockstep closure holds a directed cycle is closed again on its own.
"""

from __future__ import annotations

import numpy as np

from acdb_gym.core.graphs.dag import find_cycle
from acdb_gym.core.graphs.meek import _ALL_RULES, _close
from acdb_gym.core.types import BoolMatrix

__all__ = ["MANY_MAX_NODES", "close_consistent_many", "close_many", "essential_graphs_many"]

MANY_MAX_NODES = 16
"""Largest ``d`` the stacked closure is meant for (its R3/R4 checks hold ``(k, d, d, d)``
arrays)."""


def essential_graphs_many(
    adjacency: BoolMatrix,
    cpdag_directed: BoolMatrix,
    cpdag_undirected: BoolMatrix,
    touched: BoolMatrix,
) -> tuple[BoolMatrix, BoolMatrix]:
    """:func:`~acdb_gym.core.graphs.equivalence.essential_graph` of ``k`` DAGs, each with its
    own non-empty target set, at once: the CPDAG with every edge incident to a target
    oriented as in the DAG, closed under Meek's rules.

    Args:
        adjacency: ``(k, d, d)`` true DAGs.
        cpdag_directed: their CPDAGs' directed parts.
        cpdag_undirected: their CPDAGs' undirected parts.
        touched: ``(k, d)`` booleans, each row's targets (at least one per row).

    Returns:
        ``(directed, undirected)``, ``(k, d, d)`` each: graph ``i`` equals
        ``essential_graph(DAG(adjacency[i]), np.flatnonzero(touched[i]))``.
    """
    incident = touched[:, :, None] | touched[:, None, :]
    newly = cpdag_undirected & incident & adjacency
    directed = cpdag_directed | newly
    undirected = cpdag_undirected & ~(newly | newly.transpose(0, 2, 1))
    return close_consistent_many(directed, undirected)


def close_consistent_many(
    directed: BoolMatrix, undirected: BoolMatrix
) -> tuple[BoolMatrix, BoolMatrix]:
    """Meek's rules R1–R4 to closure on ``k`` stacked PDAGs with consistent extensions (new
    arrays; the inputs are not changed)."""
    directed = directed.copy()
    undirected = undirected.copy()
    changed = True
    while changed:
        changed = False
        for rule in (_rule1, _rule2, _rule3, _rule4):
            mask = rule(directed, undirected)
            mask &= ~mask.transpose(0, 2, 1)
            if mask.any():
                directed |= mask
                undirected &= ~(mask | mask.transpose(0, 2, 1))
                changed = True
    return directed, undirected


def close_many(directed: BoolMatrix, undirected: BoolMatrix) -> list[tuple[BoolMatrix, BoolMatrix]]:
    """Meek's rules R1–R4 to closure on ``k`` stacked PDAGs, each result equal to
    :func:`~acdb_gym.core.graphs.meek.meek_closure`'s arrays of that graph (the inputs are not
    changed).

    Closures only add directed edges, so a graph whose lockstep closure is acyclic never met
    an orientation that would close a cycle: the one-graph closure went through the same
    states (its cycle-skipping branch never ran). A graph whose lockstep closure holds a
    cycle is closed again on its own, skipping those orientations as the one-graph closure
    does.
    """
    closed_directed, closed_undirected = close_consistent_many(directed, undirected)
    return [
        (closed_directed[k], closed_undirected[k])
        if find_cycle(closed_directed[k]) is None
        else _close(directed[k], undirected[k], _ALL_RULES)
        for k in range(directed.shape[0])
    ]


def _product(left: BoolMatrix, right: BoolMatrix) -> np.ndarray:
    """``left @ right`` per graph as counts (float32, exact far below ``2**24``)."""
    return left.astype(np.float32) @ right.astype(np.float32)


def _adjacent(directed: BoolMatrix, undirected: BoolMatrix) -> BoolMatrix:
    return directed | directed.transpose(0, 2, 1) | undirected


def _rule1(directed: BoolMatrix, undirected: BoolMatrix) -> BoolMatrix:
    """R1: ``a -> b - c`` with ``a``, ``c`` non-adjacent orients ``b -> c``."""
    away = ~_adjacent(directed, undirected)
    return undirected & (_product(directed.transpose(0, 2, 1), away) >= 1)


def _rule2(directed: BoolMatrix, undirected: BoolMatrix) -> BoolMatrix:
    """R2: ``a -> c -> b`` with ``a - b`` orients ``a -> b``."""
    return undirected & (_product(directed, directed) >= 1)


def _rule3(directed: BoolMatrix, undirected: BoolMatrix) -> BoolMatrix:
    """R3: ``a - c -> b`` and ``a - e -> b`` with ``c``, ``e`` non-adjacent and ``a - b``
    orients ``a -> b``: among the middle nodes ``M = {c: a - c -> b}``, the non-adjacent
    ordered pairs (each node with itself included) outnumber ``|M|``."""
    middle = (undirected[:, :, None, :] & directed.transpose(0, 2, 1)[:, None, :, :]).astype(
        np.float32
    )  # [g, a, b, c]
    away = (~_adjacent(directed, undirected)).astype(np.float32)[:, None, :, :]
    pairs = ((middle @ away) * middle).sum(axis=-1)
    return undirected & (pairs > middle.sum(axis=-1))


def _rule4(directed: BoolMatrix, undirected: BoolMatrix) -> BoolMatrix:
    """R4: ``a - b``, ``e -> c -> b``, ``a - e``, ``a`` adjacent to ``c``, and ``b``, ``e``
    non-adjacent orients ``a -> b``."""
    adjacent = _adjacent(directed, undirected)
    d = directed.shape[-1]
    # sources[g, a, b, e]: a - e, e not adjacent to b, e != b.
    sources = undirected[:, :, None, :] & ~adjacent[:, None, :, :] & ~np.eye(d, dtype=np.bool_)
    # middle[g, a, b, c]: a adjacent to c, c -> b.
    middle = adjacent[:, :, None, :] & directed.transpose(0, 2, 1)[:, None, :, :]
    reach = sources.astype(np.float32) @ directed.astype(np.float32)[:, None, :, :]
    return undirected & ((reach * middle).sum(axis=-1) > 0)
