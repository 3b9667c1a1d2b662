"""PC on several datasets at once: :func:`pc_batched` with the tests of one depth pooled.

A vectorized env that resets several worlds in one step needs PC on each of their samples.
Run one after another, every depth of every dataset pays numpy's fixed cost per call (an
inverse, a log, a normal tail) on a few dozen tests; :func:`pc_batched_many` runs the skeleton
searches side by side, depth by depth, and sends the tests of every dataset still searching
at that depth through one batched Fisher-z computation. Each dataset then records its own
decisions and is oriented on its own, by the same code as :func:`pc_batched`.

The results equal ``[pc_batched(data, alpha=alpha) for data in datasets]`` exactly (skeleton,
separating sets, orientation, test counts): the searches advance in lockstep, so the blocks of
one call all have the size ``depth + 2``, and ``np.linalg.inv`` runs the same LAPACK routine on
each matrix of a stack as on a matrix alone; every later step is elementwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.types import FloatArray, IntArray
from acdb_gym.discovery._common import (
    as_data_matrix,
    check_full_rank_data,
    check_probability,
)
from acdb_gym.discovery.pc_batched import (
    _MAX_BATCH,
    BatchedPCResult,
    _blocks,
    _correlation,
    _fisher_z,
    _Skeleton,
    pc_batched,
)

__all__ = ["pc_batched_many"]


def pc_batched_many(datasets: Sequence[ArrayLike], *, alpha: float = 0.05) -> list[BatchedPCResult]:
    """:func:`pc_batched` on every dataset, with the Fisher-z tests of one depth pooled.

    Args:
        datasets: observational samples, each as :func:`pc_batched` takes them (the number
            of variables and of samples may differ between datasets). Copied; never modified.
        alpha: significance level in ``(0, 1)``; a pair is separated when ``p > alpha``.

    Returns:
        One result per dataset, in order, equal to ``pc_batched(data, alpha=alpha)``.

    Raises:
        ValueError: ``alpha`` outside ``(0, 1)``; a dataset that :func:`pc_batched` refuses
            (named by its index: ``datasets[k]``); or a singular correlation submatrix in any
            dataset.
    """
    check_probability(alpha, "alpha")
    arrays = [as_data_matrix(data, f"datasets[{k}]") for k, data in enumerate(datasets)]
    corrs: dict[int, FloatArray] = {}
    for k, array in enumerate(arrays):
        if array.shape[1] >= 2:
            check_full_rank_data(array, f"datasets[{k}]")
            corrs[k] = _correlation(array)
    searches = {k: _Skeleton(corr.shape[0], alpha) for k, corr in corrs.items()}
    active = list(searches)
    while active:
        tests: list[tuple[int, tuple[IntArray, IntArray]]] = []
        for k in active:
            request = searches[k].next_tests()
            if request is not None:
                tests.append((k, request))
        active = [k for k, _ in tests]
        if not tests:
            break
        pvalues = _pooled_pvalues(
            [(corrs[k], arrays[k].shape[0], *request) for k, request in tests]
        )
        bounds = np.cumsum([len(pairs) for _, (pairs, _) in tests])[:-1]
        for (k, _), part in zip(tests, np.split(pvalues, bounds), strict=True):
            searches[k].record(part)
    return [
        searches[k].result() if k in searches else pc_batched(array, alpha=alpha)
        for k, array in enumerate(arrays)
    ]


def _pooled_pvalues(tests: list[tuple[FloatArray, int, IntArray, IntArray]]) -> FloatArray:
    """The p-values of several datasets' tests of one depth, concatenated in order; each entry
    is ``(corr, n_samples, pairs, conditions)``. In chunks of the single search's size."""
    blocks = np.concatenate([_blocks(corr, pairs, cond) for corr, _, pairs, cond in tests])
    roots = np.concatenate(
        [
            np.full(len(pairs), math.sqrt(n_samples - cond.shape[1] - 3))
            for _, n_samples, pairs, cond in tests
        ]
    )
    return np.concatenate(
        [
            _fisher_z(blocks[s : s + _MAX_BATCH], roots[s : s + _MAX_BATCH])
            for s in range(0, len(blocks), _MAX_BATCH)
        ]
    )
