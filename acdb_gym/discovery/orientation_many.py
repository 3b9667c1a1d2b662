"""The orienter's step for many worlds at once (private to the vectorized design env).

:func:`decision_codes` is :func:`~acdb_gym.discovery.orientation.decide_orientations` on an
array of p-values, and :func:`orient_many` is
:func:`~acdb_gym.discovery.orientation._orient_at` for one experiment in each of ``k`` worlds,
on stacked ``(N, d, d)`` state: the same orientations, the same skipped ones, bit for bit.

A tested edge ``t - j`` is oriented ``t -> j`` unless ``j`` reaches ``t`` and ``j -> t``
unless ``t`` reaches ``j``, in the graph as the earlier edges of the same experiment left it
(neighbours in ascending order). Every edge added is incident to ``t``, so only the ancestors
and descendants of ``t`` change: adding ``t -> j`` makes ``j``'s descendants ``t``'s, adding
``j -> t`` makes ``j``'s ancestors ``t``'s, and ``j``'s own ancestors and descendants are those
of the graph before the experiment (a path to ``j`` through ``t`` would mean ``t`` reaches
``j``, which ``j -> t`` excludes; likewise for ``t -> j``). One transitive closure per world
before the experiment, then a few array operations per neighbour column, decide them all.
"""

from __future__ import annotations

import numpy as np

from acdb_gym.core.types import BoolMatrix, FloatArray, IntArray
from acdb_gym.discovery.orientation import OrientationRule

__all__ = ["decision_codes", "orient_many"]


def decision_codes(
    p_values: FloatArray,
    *,
    rule: OrientationRule,
    alpha: float,
    no_shift_threshold: float,
    powered: bool,
) -> np.ndarray:
    """:func:`~acdb_gym.discovery.orientation.decide_orientations` of every p-value as an
    ``int8`` code: 1 ``"forward"``, -1 ``"backward"``, 0 None."""
    forward = p_values < alpha
    backward_ok = rule == "always" or rule == "band" or (rule == "power" and powered)
    threshold = alpha if rule == "always" else no_shift_threshold
    beyond = p_values > threshold if rule == "band" else p_values >= threshold
    backward = ~forward & beyond & backward_ok
    return forward.astype(np.int8) - backward.astype(np.int8)


def orient_many(
    directed: BoolMatrix,
    undirected: BoolMatrix,
    worlds: IntArray,
    targets: IntArray,
    codes: np.ndarray,
) -> np.ndarray:
    """Orient, in place, the tested edges ``targets[i] - j`` of world ``worlds[i]`` (the
    columns ``j`` where ``codes[i, j]`` is not 0) as :func:`_orient_at` would one world at a
    time, skipping an orientation that would close a directed cycle.

    Args:
        directed: ``(N, d, d)`` raw orientations of all worlds (changed in place).
        undirected: ``(N, d, d)`` undirected edges (changed in place).
        worlds: ``k`` distinct world indices.
        targets: each world's intervened node.
        codes: ``(k, d)`` :func:`decision_codes` of each tested edge, 0 elsewhere.

    Returns:
        ``(k,)`` booleans: whether any edge of that world changed.
    """
    k = len(codes)
    reach = _reflexive_closure(directed[worlds])
    rows = np.arange(k)
    ancestors = reach[rows, :, targets]  # nodes that reach t (t included)
    descendants = reach[rows, targets, :]  # nodes t reaches
    changed = np.zeros(k, dtype=np.bool_)
    # The decided edges in each world's order (row-major: world, then neighbour), taken
    # together by rank: the r-th decided edge of every world at once.
    owner, column = np.nonzero(codes)
    first = np.searchsorted(owner, owner)
    rank = np.arange(owner.size) - first
    for r in range(int(rank.max(initial=-1)) + 1):
        at = rank == r
        chosen, j = owner[at], column[at]
        forward = codes[chosen, j] > 0
        open_ = ~np.where(forward, ancestors[chosen, j], descendants[chosen, j])
        chosen, j, forward = chosen[open_], j[open_], forward[open_]
        if not chosen.size:
            continue
        world, target = worlds[chosen], targets[chosen]
        tail = np.where(forward, target, j)
        head = np.where(forward, j, target)
        directed[world, tail, head] = True
        undirected[world, tail, head] = False
        undirected[world, head, tail] = False
        changed[chosen] = True
        descendants[chosen[forward]] |= reach[chosen[forward], j[forward], :]
        ancestors[chosen[~forward]] |= reach[chosen[~forward], :, j[~forward]]
    return changed


def _reflexive_closure(directed: BoolMatrix) -> BoolMatrix:
    """``(k, d, d)``: ``[i, a, b]`` iff a directed path (possibly empty) leads from ``a`` to
    ``b`` in graph ``i`` (squaring counts in float32, exact far below ``2**24``)."""
    d = directed.shape[-1]
    reach = directed | np.eye(d, dtype=np.bool_)
    while True:
        counts = reach.astype(np.float32)
        longer = (counts @ counts) > 0
        if np.array_equal(longer, reach):
            return reach
        reach = longer
