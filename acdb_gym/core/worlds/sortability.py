"""R²-sortability of a world's observational sample: the measure the marginal-order audit reads
(:mod:`acdb_gym.discovery.sortability`) and a level's acceptance rule
(:attr:`~acdb_gym.core.worlds.spec.LevelSpec.r2_sortability_band`, DESIGN §3,
"R²-sortability band") bounds.

It lives here, below the discovery algorithms, because generating an instance needs it; the
discovery module adds the validated entry points and the other marginal features.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from acdb_gym.core.types import FloatArray

__all__ = ["order_alignment", "r2_of_columns", "r2_sortability_of"]

_MAX_CONDITION: Final = 1e12
"""Past this condition number of the correlation matrix the inverse's diagonal is rounding
noise, not R²."""


def order_alignment(adjacency: ArrayLike, scores: ArrayLike) -> float:
    """The share of path-joined pairs ``i ⇝ j`` whose score rises from ``i`` to ``j``.

    >>> order_alignment([[0, 1, 0], [0, 0, 1], [0, 0, 0]], [0.1, 0.5, 0.9])  # a chain, sorted
    1.0
    >>> order_alignment([[0, 1], [0, 0]], [1.0, 1.0])  # a tie counts one half
    0.5

    Args:
        adjacency: a DAG's adjacency matrix, ``(d, d)``, nonzero ``[i, j]`` meaning ``i -> j``
            (boolean or weighted).
        scores: one score per variable, length ``d``.

    Returns:
        The alignment in ``[0, 1]``; NaN when the graph has no edge.

    Raises:
        ValueError: ``adjacency`` is not square or ``scores`` has the wrong length or is not
            finite.
    """
    edges: NDArray[np.bool_] = np.asarray(adjacency) != 0
    values = np.asarray(scores, dtype=np.float64).ravel()
    if edges.ndim != 2 or edges.shape[0] != edges.shape[1]:
        raise ValueError(f"adjacency must be square, got shape {edges.shape}")
    if values.shape != (edges.shape[0],) or not np.all(np.isfinite(values)):
        raise ValueError(f"scores must be {edges.shape[0]} finite values, got {values.tolist()}")
    rises = values[None, :] > values[:, None]  # rises[i, j]: the score grows from i to j
    ties = values[None, :] == values[:, None]
    walks = edges.copy()
    pairs = aligned = 0.0
    for _ in range(edges.shape[0] - 1):
        pairs += float(walks.sum())
        aligned += float((walks & rises).sum()) + 0.5 * float((walks & ties).sum())
        walks = (walks.astype(np.int64) @ edges.astype(np.int64)) > 0
    return aligned / pairs if pairs else math.nan


def r2_of_columns(array: NDArray[np.float64]) -> FloatArray | None:
    """R² of each column of ``array`` (``(n, d)``, finite, no constant column, ``d >= 2``)
    regressed with an intercept on all the others, ``1 - 1 / (C^-1)_jj`` from the sample
    correlation matrix ``C``, clipped to ``[0, 1]``; None when ``C`` is singular.

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(500, 1))
    >>> r2_of_columns(np.hstack([x, x + 0.1 * rng.normal(size=(500, 1))])).round(2).tolist()
    [0.99, 0.99]
    """
    correlation = np.corrcoef(array, rowvar=False)
    if not np.linalg.cond(correlation) < _MAX_CONDITION:
        return None
    precision = np.linalg.inv(correlation)
    scores: FloatArray = np.clip(1.0 - 1.0 / np.diag(precision), 0.0, 1.0)
    return scores


def r2_sortability_of(data: ArrayLike, adjacency: ArrayLike) -> float:
    """The R²-sortability of ``data`` on the DAG ``adjacency`` (:func:`order_alignment` of
    :func:`r2_of_columns`); NaN for a graph without edges, a constant column or a singular
    correlation matrix.

    >>> data = np.random.default_rng(1).normal(size=(100, 3))
    >>> r2_sortability_of(data, [[0, 0, 0], [0, 0, 1], [0, 0, 0]]) in (0.0, 1.0)
    True
    >>> math.isnan(r2_sortability_of(data, np.zeros((3, 3))))  # no edge
    True
    """
    array = np.asarray(data, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] < 2 or np.any(array.std(axis=0) == 0):
        return math.nan
    scores = r2_of_columns(array)
    return math.nan if scores is None else order_alignment(adjacency, scores)
