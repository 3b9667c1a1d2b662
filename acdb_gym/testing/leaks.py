"""The leak detector of the conformance checks: does a value reveal the hidden world?

:func:`find_hidden_leak` searches an observation, an info dict, a render or anything else shown
to an agent for the hidden graph or weights of an instance.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.worlds.cause_effect_pairs import CauseEffectPair
from acdb_gym.core.worlds.fitted import FittedSCM
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.core.worlds.mechanisms import LinearNonGaussianSCM, NonlinearSCM
from acdb_gym.core.worlds.real_experiments import SachsCells

__all__ = ["find_hidden_leak"]

_NUMBER = re.compile(r"-?\d+\.(\d+)(?:[eE]([-+]?\d+))?")


@dataclass(frozen=True)
class _Hidden:
    """What must not leak: the true adjacency, the nonzero weights and texts of the edge list."""

    instance: Instance
    adjacency: np.ndarray
    weights: np.ndarray
    edge_texts: tuple[str, ...]

    @classmethod
    def of(cls, instance: Instance) -> _Hidden:
        dag = instance.dag
        edges = dag.edges()
        texts: list[str] = []
        if edges:
            texts.append(", ".join(f"X{i}->X{j}" for i, j in edges))
            texts.append(str(dag.adjacency.astype(np.int64)))
            texts.append(str(dag.adjacency))
        if len(edges) >= 2:
            # Single spaced edges appear innocently in error messages about a submission.
            texts.append(", ".join(f"X{i} -> X{j}" for i, j in edges))
            texts.append(str(edges))
        weights = np.asarray(instance.weights)[np.asarray(dag.adjacency)]
        return cls(instance, np.asarray(dag.adjacency), weights, tuple(texts))


def find_hidden_leak(value: Any, instance: Instance) -> str | None:
    """Describe where ``value`` reveals the hidden graph or weights of ``instance``, or None.

    ``value`` is searched recursively through mappings, lists, tuples and arrays. It leaks when
    it holds the instance or any SCM; the true DAG (or its PDAG); an array whose nonzero pattern
    is the true adjacency (``(d, d)``, transposed, or flattened when ``d >= 3``); a float array
    or float holding a true weight exactly; or text (strings, and the ``repr`` of any other
    object) containing the true edge list (``"X2->X0, X3->X1"``, the adjacency matrix printed by
    numpy, ...), any true weight printed to 6 or more decimals, or, when there are several
    edges, every true weight printed to 3 or more decimals.

    Args:
        value: an observation, an info dict, a render, or anything else shown to an agent.
        instance: the hidden world.

    Returns:
        A description of the first leak found, or None.

    >>> from acdb_gym.core.ladders.shipped import LADDERS
    >>> instance = LADDERS["v0"]["L0"].instance(0)
    >>> find_hidden_leak({"budget": 3, "note": "X0 and X1"}, instance) is None
    True
    >>> find_hidden_leak({"graph": instance.dag.adjacency.astype(int)}, instance)
    "value['graph'] has the true adjacency as its nonzero pattern"
    """
    return _search(value, _hidden_of(instance), "value")


@functools.lru_cache(maxsize=8)
def _hidden_of(instance: Instance) -> _Hidden:
    # Printing a large adjacency matrix costs milliseconds; a rollout asks many times per world.
    return _Hidden.of(instance)


def _search(value: Any, hidden: _Hidden, path: str) -> str | None:
    if value is None or isinstance(value, bool | np.bool_):
        return None
    if isinstance(
        value,
        Instance
        | LinearGaussianSCM
        | LinearNonGaussianSCM
        | NonlinearSCM
        | FittedSCM
        | SachsCells
        | CauseEffectPair,
    ):
        return f"{path} is the hidden {type(value).__name__}"
    if isinstance(value, DAG | PDAG):
        truth = hidden.instance.dag
        if value == truth or value == truth.to_pdag():
            return f"{path} is the true graph"
        return _text_leak(repr(value), hidden, path)
    if isinstance(value, str):
        return _text_leak(value, hidden, path)
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _search(item, hidden, f"{path}[{key!r}]")
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _search(item, hidden, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if isinstance(value, np.ndarray | np.number | int | float):
        return _array_leak(np.asarray(value), hidden, path)
    return _text_leak(repr(value), hidden, path)


def _array_leak(array: np.ndarray, hidden: _Hidden, path: str) -> str | None:
    d = hidden.adjacency.shape[0]
    if array.dtype.kind == "O":
        return _search(array.tolist(), hidden, path)
    if array.dtype.kind in "biuf" and hidden.adjacency.any():
        square = array.shape == (d, d) or (d >= 3 and array.shape == (d * d,))
        if square:
            pattern = array.reshape(d, d) != 0
            if np.array_equal(pattern, hidden.adjacency) or np.array_equal(
                pattern, hidden.adjacency.T
            ):
                return f"{path} has the true adjacency as its nonzero pattern"
    # Exact matches only: data never equals a weight by chance, a copied weight always does.
    if array.dtype.kind == "f" and np.isin(array, hidden.weights.astype(array.dtype)).any():
        return f"{path} holds a true edge weight"
    return None


def _text_leak(text: str, hidden: _Hidden, path: str) -> str | None:
    for pattern in hidden.edge_texts:
        if pattern in text:
            return f"{path} contains the true edge list {pattern!r}"
    if not hidden.weights.size:
        return None
    numbers = _printed_numbers(text)
    magnitudes = np.abs(hidden.weights)
    precise = [(x, tol) for x, decimals, tol in numbers if decimals >= 6]
    for weight in magnitudes:
        if any(abs(x - weight) <= tol for x, tol in precise):
            return f"{path} prints a true edge weight ({weight:.6f})"
    if magnitudes.size >= 2:
        rounded = [(x, tol) for x, decimals, tol in numbers if decimals >= 3]
        if all(any(abs(x - weight) <= tol for x, tol in rounded) for weight in magnitudes):
            return f"{path} prints every true edge weight"
    return None


def _printed_numbers(text: str) -> list[tuple[float, int, float]]:
    """Each decimal number in ``text``: absolute value, decimals shown, rounding tolerance."""
    numbers = []
    for match in _NUMBER.finditer(text):
        exponent = int(match.group(2) or 0)
        decimals = len(match.group(1)) - exponent
        tolerance = 0.5 * 10.0**-decimals * (1 + 1e-9)
        numbers.append((abs(float(match.group(0))), decimals, tolerance))
    return numbers
