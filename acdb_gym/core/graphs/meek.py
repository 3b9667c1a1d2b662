"""Meek's orientation rules R1-R4 and their closure (Meek 1995).

Each rule takes the current directed matrix D and undirected matrix U and returns the mask of
undirected pairs it orients (``mask[a, b]`` means orient ``a -> b``). The rules count paths
with boolean matrix products, evaluated only where they are needed (see
:func:`acdb_gym.core.graphs._matrix._product_at`).

>>> from acdb_gym.core.graphs import PDAG
>>> meek_closure(PDAG.from_edges(3, directed=[(0, 1)], undirected=[(1, 2)])).directed_edges()
[(0, 1), (1, 2)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from acdb_gym.core.graphs._matrix import (
    _BLAS_WORK_RATIO,
    _SPARSE_MIN_NODES,
    _count,
    _expand,
    _nonzero,
    _product_at,
    _row_lists,
)
from acdb_gym.core.graphs.dag import PDAG, find_cycle, has_directed_path
from acdb_gym.core.types import BoolMatrix

__all__ = [
    "MeekRule",
    "apply_meek_rule1",
    "apply_meek_rule2",
    "apply_meek_rule3",
    "apply_meek_rule4",
    "meek_closure",
]


def _undirected_with_paths(
    undirected: BoolMatrix, left: BoolMatrix, right: BoolMatrix, minimum: int
) -> BoolMatrix:
    """Mask of the undirected pairs ``(a, b)`` with ``(left @ right)[a, b] >= minimum``."""
    if undirected.shape[0] < _SPARSE_MIN_NODES:
        return undirected & (_count(left, right) >= minimum)
    rows, cols = _nonzero(undirected)
    keep = _product_at(left, right, rows, cols) >= minimum
    mask = np.zeros_like(undirected)
    mask[rows[keep], cols[keep]] = True
    return mask


def _reaches(left: BoolMatrix, right: BoolMatrix) -> BoolMatrix:
    """``(left @ right) > 0``: pairs joined by a ``left`` step then a ``right`` step."""
    n = left.shape[0]
    if n < _SPARSE_MIN_NODES:
        return _count(left, right) > 0
    rows, middles = _nonzero(left)
    start, index = _row_lists(right)
    if int((start[middles + 1] - start[middles]).sum()) * _BLAS_WORK_RATIO >= n**3:
        return _count(left, right) > 0
    owner, ends = _expand(start, index, middles)
    reach = np.zeros((n, n), dtype=np.bool_)
    reach[rows[owner], ends] = True
    return reach


def apply_meek_rule1(directed: BoolMatrix, undirected: BoolMatrix) -> BoolMatrix:
    """R1: ``a -> b - c`` with ``a``, ``c`` non-adjacent orients ``b -> c``."""
    adjacent = directed | directed.T | undirected
    return _undirected_with_paths(undirected, directed.T, ~adjacent, 1)


def apply_meek_rule2(directed: BoolMatrix, undirected: BoolMatrix) -> BoolMatrix:
    """R2: ``a -> c -> b`` with ``a - b`` orients ``a -> b``."""
    return _undirected_with_paths(undirected, directed, directed, 1)


def apply_meek_rule3(directed: BoolMatrix, undirected: BoolMatrix) -> BoolMatrix:
    """R3: ``a - c -> b`` and ``a - e -> b`` with ``c``, ``e`` non-adjacent and ``a - b``
    orients ``a -> b``."""
    candidates = _undirected_with_paths(undirected, undirected, directed, 2)
    adjacent = directed | directed.T | undirected
    mask = np.zeros_like(undirected)
    for a, b in zip(*_nonzero(candidates), strict=True):
        middle = np.flatnonzero(undirected[a] & directed[:, b])
        # Some pair of distinct middle nodes is non-adjacent.
        if (~adjacent[np.ix_(middle, middle)]).sum() > middle.size:
            mask[a, b] = True
    return mask


def apply_meek_rule4(directed: BoolMatrix, undirected: BoolMatrix) -> BoolMatrix:
    """R4: ``a - b``, ``e -> c -> b``, ``a - e``, ``a`` adjacent to ``c``, and ``b``, ``e``
    non-adjacent orients ``a -> b``."""
    candidates = _undirected_with_paths(undirected, _reaches(undirected, directed), directed, 1)
    adjacent = directed | directed.T | undirected
    mask = np.zeros_like(undirected)
    for a, b in zip(*_nonzero(candidates), strict=True):
        middle = adjacent[a] & directed[:, b]
        sources = undirected[a] & ~adjacent[b]
        sources[b] = False
        if directed[np.ix_(sources, middle)].any():
            mask[a, b] = True
    return mask


MeekRule = Callable[[BoolMatrix, BoolMatrix], BoolMatrix]
_ALL_RULES: tuple[MeekRule, ...] = (
    apply_meek_rule1,
    apply_meek_rule2,
    apply_meek_rule3,
    apply_meek_rule4,
)


def _orient(directed: BoolMatrix, undirected: BoolMatrix, mask: BoolMatrix) -> bool:
    """Orient the pairs of ``mask`` in place; returns whether anything changed.

    On a PDAG with a consistent extension no Meek orientation closes a directed cycle. On an
    inconsistent one (noisy orientations), orientations that would close a cycle are skipped,
    one edge at a time in row-major order.
    """
    if find_cycle(directed | mask) is None:
        directed |= mask
        undirected &= ~(mask | mask.T)
        return True
    changed = False
    for tail, head in zip(*_nonzero(mask), strict=True):
        if not has_directed_path(directed, int(head), int(tail)):
            directed[tail, head] = True
            undirected[tail, head] = undirected[head, tail] = False
            changed = True
    return changed


def _close(
    directed: BoolMatrix, undirected: BoolMatrix, rules: Sequence[MeekRule]
) -> tuple[BoolMatrix, BoolMatrix]:
    directed = directed.copy()
    undirected = undirected.copy()
    changed = True
    while changed:
        changed = False
        for rule in rules:
            mask = rule(directed, undirected)
            # Two sound inferences never disagree on a consistent PDAG; on an inconsistent
            # input, leave a contested pair undirected instead of inventing a direction.
            mask &= ~mask.T
            if mask.any():
                changed |= _orient(directed, undirected, mask)
    return directed, undirected


def meek_closure(pdag: PDAG, *, rules: Sequence[MeekRule] = _ALL_RULES) -> PDAG:
    """Apply Meek's rules (R1–R4 by default) until no undirected edge can be oriented.

    On a PDAG without a consistent extension (e.g. noisy orientations from data), an
    orientation that would close a directed cycle is skipped; the pair stays undirected unless
    a later rule orients it the other way. The result is always acyclic.
    """
    directed, undirected = _close(pdag.directed, pdag.undirected, rules)
    return PDAG(directed, undirected)
