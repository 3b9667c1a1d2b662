"""Input checks and the per-dataset memo shared by the discovery algorithms (private)."""

from __future__ import annotations

import contextlib
import hashlib
import operator
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.types import FloatArray

_Result = TypeVar("_Result")


def as_data_matrix(data: ArrayLike, name: str, *, n_columns: int | None = None) -> FloatArray:
    """Return ``data`` as a private float64 ``(n_samples, d)`` copy, checking shape and values.

    Raises:
        ValueError: not two-dimensional, the wrong number of columns, or non-finite entries.
    """
    array = np.array(data, dtype=np.float64, copy=True)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (n_samples, d) array, got shape {array.shape}")
    if n_columns is not None and array.shape[1] != n_columns:
        raise ValueError(f"{name} must have {n_columns} columns, got shape {array.shape}")
    if not np.isfinite(array).all():
        rows, cols = np.nonzero(~np.isfinite(array))
        raise ValueError(
            f"{name} must be finite; got {array[rows[0], cols[0]]} at row {rows[0]}, "
            f"column X{cols[0]}"
        )
    return array


def checked_node(node: int, n_nodes: int) -> int:
    """``node`` as an int in ``[0, n_nodes)``.

    Raises:
        ValueError: outside the range.
    """
    node = operator.index(node)
    if not 0 <= node < n_nodes:
        raise ValueError(f"node must be in [0, {n_nodes}), got {node}")
    return node


def check_experiment(
    item: tuple[int, ArrayLike], index: int, n_nodes: int
) -> tuple[int, FloatArray]:
    """The ``index``-th ``(target, samples)`` experiment of a score over ``n_nodes`` variables,
    checked: an integer target in ``[0, n_nodes)`` and a data matrix of ``n_nodes`` columns.

    Raises:
        ValueError: not a pair, a target out of range, or samples that are not such a matrix.
    """
    try:
        target_raw, samples_raw = item
        target = operator.index(target_raw)
    except (TypeError, ValueError):
        raise ValueError(
            f"experiments[{index}] must be a (target, samples) pair with an integer target, "
            f"got {item!r}"
        ) from None
    if not 0 <= target < n_nodes:
        raise ValueError(f"experiments[{index}] target must be in [0, {n_nodes}), got {target}")
    samples = as_data_matrix(samples_raw, f"experiments[{index}] samples", n_columns=n_nodes)
    return target, samples


def check_min_rows(data: FloatArray, name: str, min_rows: int) -> None:
    """Raise ValueError unless ``data`` has at least ``min_rows`` rows."""
    if data.shape[0] < min_rows:
        raise ValueError(
            f"{name} needs at least {min_rows} samples for {data.shape[1]} variables, "
            f"got {data.shape[0]}"
        )


def check_no_constant_column(data: FloatArray, name: str) -> None:
    """Raise ValueError naming the first column of ``data`` whose values are all equal."""
    if data.shape[0] == 0:
        return
    constant = np.flatnonzero(data.min(axis=0) == data.max(axis=0))
    if constant.size:
        column = int(constant[0])
        raise ValueError(
            f"{name} column X{column} is constant (every value is {data[0, column]}); "
            "its correlations are undefined"
        )


def check_full_rank_data(data: FloatArray, name: str) -> None:
    """Raise ValueError unless ``data`` (``(n, d)``) has at least ``d + 1`` rows and no constant
    column: what correlation tests conditioning on up to ``d - 2`` variables and regressions of a
    variable on all the others need."""
    check_min_rows(data, name, data.shape[1] + 1)
    check_no_constant_column(data, name)


def check_probability(value: float, name: str) -> None:
    """Raise ValueError unless ``0 < value < 1``."""
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value}")


def memo_by_data(
    memo: OrderedDict[tuple[object, ...], _Result],
    size: int,
    data: ArrayLike,
    alpha: float,
    compute: Callable[[FloatArray, float], _Result],
) -> _Result:
    """``compute(data, alpha)`` once per dataset in ``memo`` (at most ``size`` entries, least
    recently used first out), keyed by the data's shape, a SHA-256 of its float64 bytes and
    ``alpha``: equal data gives the identical result, different data never shares one."""
    array = np.ascontiguousarray(data, dtype=np.float64)
    key = (array.shape, hashlib.sha256(array.tobytes()).digest(), float(alpha))
    found = memo.get(key)
    if found is not None:
        memo.move_to_end(key)
        return found
    result = compute(array, alpha)
    memo[key] = result
    if len(memo) > size:
        memo.popitem(last=False)
    return result


_CAUSALLEARN_HASHES = threading.Lock()


@contextlib.contextmanager
def stable_causallearn_hashes() -> Iterator[None]:
    """Within the block, causal-learn's graph nodes and edges hash by a CRC-32 of their names
    instead of ``hash(str)``, and only one thread is inside such a block at a time.

    causal-learn keeps nodes and edges in sets whose iteration order follows their hashes; with
    Python's per-process string hashing (``PYTHONHASHSEED``), FCI's output on the same data then
    differs between processes on a few datasets (2 of 36 v1-latent test instances tried). With
    these hashes it is the same in every process (DESIGN §5, "Determinism").
    """
    from causallearn.graph.Edge import Edge
    from causallearn.graph.GraphNode import GraphNode

    with _CAUSALLEARN_HASHES:
        saved = GraphNode.__hash__, Edge.__hash__
        GraphNode.__hash__ = _name_crc
        Edge.__hash__ = _name_crc
        try:
            yield
        finally:
            GraphNode.__hash__, Edge.__hash__ = saved


def _name_crc(item: object) -> int:
    """A hash of ``str(item)`` (a node's name, an edge's text) that no process salts."""
    return zlib.crc32(str(item).encode())
