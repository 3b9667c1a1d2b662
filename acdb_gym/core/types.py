"""Shared type aliases for the whole package."""

from __future__ import annotations

from typing import Any, Final, Literal, TypeGuard, get_args

import numpy as np
from numpy.typing import NDArray

BoolMatrix = NDArray[np.bool_]
"""A square boolean matrix; ``m[i, j]`` concerns the ordered pair ``(i, j)``."""

FloatArray = NDArray[np.float64]
"""A float64 array (data, weights, covariances)."""

IntArray = NDArray[np.int64]
"""An int64 array (node indices)."""

Edge = tuple[int, int]
"""An ordered pair of node indices; ``(i, j)`` means ``i -> j`` (or ``i - j`` when undirected)."""

Panel = Literal["active", "observational"]
"""Which data an agent may gather: ``active`` (interventions allowed) or ``observational``."""

PANELS: tuple[Panel, ...] = get_args(Panel)
"""The values of :data:`Panel`, in order."""

PANEL_ACTIVE: Final[Panel] = "active"
PANEL_OBSERVATIONAL: Final[Panel] = "observational"


def is_integer(value: object) -> TypeGuard[int | np.integer[Any]]:
    """An ``int`` or NumPy integer, and not a bool: what node indices and counts must be.

    >>> is_integer(3), is_integer(np.int64(3)), is_integer(True), is_integer(3.0)
    (True, True, False, False)
    """
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def readonly(array: np.ndarray) -> np.ndarray:
    """Return ``array`` itself after clearing its write flag (callers pass a private copy)."""
    array.setflags(write=False)  # as ``flags.writeable = False``, without the flags object
    return array
