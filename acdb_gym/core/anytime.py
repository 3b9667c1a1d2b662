"""The anytime F1 of an episode (DESIGN §6): the mean of its directed-F1 curve over the budget,
the headline efficiency that stopping early cannot raise.

:func:`anytime_area` is the definition on numbers; :func:`anytime_of` reads the graphs an agent
stated before each experiment against the truth's directed edges, as
:func:`~acdb_gym.core.scoring.score` calls it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.latent_scoring import prf, prf_columns
from acdb_gym.core.types import BoolMatrix, FloatArray, IntArray

__all__ = ["anytime_area", "anytime_areas", "anytime_of", "directed_f1_of", "directed_f1s"]


def anytime_area(f1_before: Sequence[float | None], final_f1: float, budget: int) -> float:
    """The anytime F1 of an episode (DESIGN §6): the mean of its directed-F1 curve over the
    budget, ``(F1_0 + ... + F1_B) / (B + 1)``.

    ``F1_k`` for ``k < u`` (``u = len(f1_before)`` experiments) is the directed F1 of the graph
    stated with experiment ``k + 1``, held before its result was seen (a graph not stated takes
    the last stated one's value); from ``k = u`` on, the submission's (``final_f1``), held flat
    to ``B = max(budget, u)``. Stopping early keeps the final F1 for the steps not spent, so a
    cap cannot raise the area unless later experiments would have lowered the F1.

    >>> anytime_area([0.2, None, 0.6], 0.8, budget=4)
    0.52
    >>> anytime_area([], 0.5, budget=3)
    0.5
    >>> math.isnan(anytime_area([None, 0.5], 0.9, budget=2))
    True

    Returns:
        The area in ``[0, 1]``, or NaN when experiments were spent and the first stated
        nothing.
    """
    used = len(f1_before)
    if not used:
        return float(final_f1)
    if f1_before[0] is None:
        return math.nan
    horizon = max(int(budget), used)
    total = 0.0
    last = 0.0
    for value in f1_before:
        last = last if value is None else float(value)
        total += last
    total += (horizon + 1 - used) * float(final_f1)
    return total / (horizon + 1)


def anytime_areas(
    f1_before: FloatArray, used: IntArray, final_f1: FloatArray, budget: IntArray
) -> FloatArray:
    """:func:`anytime_area` of ``k`` episodes at once, bit for bit: row ``i`` of ``f1_before``
    (``(k, m)``) holds in its first ``used[i]`` entries the directed F1 of the graph stated
    with each experiment (every one stated: no None), ``final_f1[i]`` the submission's and
    ``budget[i]`` its budget. The same additions in the same order, one column at a time."""
    total = np.zeros(len(used))
    for column in range(min(f1_before.shape[1], int(used.max(initial=0)))):
        total = np.where(column < used, total + f1_before[:, column], total)
    horizon = np.maximum(budget, used)
    total = total + (horizon + 1 - used) * final_f1
    areas: FloatArray = np.where(used == 0, final_f1, total / (horizon + 1))
    return areas


def directed_f1s(truth_directed: BoolMatrix, claimed: BoolMatrix) -> FloatArray:
    """:func:`directed_f1_of` of ``k`` pairs of stacked ``(k, d, d)`` matrices at once, bit for
    bit (:func:`prf`'s operations on arrays)."""
    k = len(claimed)
    true_positives = np.count_nonzero((truth_directed & claimed).reshape(k, -1), axis=1)
    n_claimed = np.count_nonzero(claimed.reshape(k, -1), axis=1)
    n_true = np.count_nonzero(truth_directed.reshape(k, -1), axis=1)
    return prf_columns(true_positives, n_claimed, n_true)[2]


def directed_f1_of(truth_directed: BoolMatrix, claimed: BoolMatrix) -> float:
    """The directed F1 of the ``claimed`` directed edges against ``truth_directed`` (the true
    DAG's adjacency, or an ADMG's directed part): :func:`score`'s ``directed_f1``."""
    return prf(_n(truth_directed & claimed), _n(claimed), _n(truth_directed))[2]


def anytime_of(
    truth_directed: BoolMatrix,
    final_f1: float,
    used: int,
    truth: object,
    stated: Sequence[PDAG | DAG | None] | None,
    budget: int | None,
) -> float:
    """``anytime_f1`` of a submission with directed F1 ``final_f1`` after ``used``
    experiments (:func:`~acdb_gym.core.scoring.score`): ``stated`` holds the graph held before
    each experiment (None where none was stated), ``budget`` the episode's budget (default: the
    truth's ``budget`` attribute, else ``used``).

    Raises:
        ValueError: ``stated`` does not hold one entry per experiment, or a negative budget.
    """
    if used == 0:
        return float(final_f1)
    if stated is None:
        return math.nan
    if len(stated) != used:
        raise ValueError(
            f"stated must hold one graph (or None) per experiment: {used}, got {len(stated)}"
        )
    if budget is None:
        horizon = int(getattr(truth, "budget", used))
    else:
        horizon = operator.index(budget)
        if horizon < 0:
            raise ValueError(f"budget must be a non-negative integer, got {budget}")
    f1_before = [
        None if g is None else directed_f1_of(truth_directed, _directed_part(g)) for g in stated
    ]
    return anytime_area(f1_before, final_f1, horizon)


def _directed_part(graph: PDAG | DAG) -> BoolMatrix:
    return graph.adjacency if isinstance(graph, DAG) else graph.directed


def _n(mask: BoolMatrix) -> int:
    return int(np.count_nonzero(mask))
