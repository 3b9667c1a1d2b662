"""PC on several datasets at once: :func:`pc_batched` with the tests of one depth pooled.

A vectorized env that resets several worlds in one step needs PC on each of their samples.
Run one after another, every depth of every dataset pays numpy's fixed cost per call (an
inverse, a log, a normal tail) on a few dozen tests; :func:`pc_batched_many` runs the skeleton
searches side by side, depth by depth, and sends the tests of every dataset still searching
at that depth through one batched Fisher-z computation. Each dataset then records its own
decisions and is oriented on its own, by the same code as :func:`pc_batched`.

Datasets of up to :data:`STACKED_MAX_NODES` variables (every level a design env trains on) go
further: their searches are one array program (:func:`_stacked_searches`). Every candidate test
of a depth for ``d`` variables (each ordered pair and each set of ``depth`` other variables, in
causal-learn's order) is listed once; a ``(datasets, candidates)`` mask picks the tests each
search runs (the pair still adjacent, the set among the first variable's neighbours), all of
them are computed in one batch, and the removals and the separating sets' unions of every
dataset are written by a few indexed assignments, with no Python loop over datasets or nodes
but the one that appends each removed pair's sets.

The results equal ``[pc_batched(data, alpha=alpha) for data in datasets]`` exactly (skeleton,
separating sets, orientation, test counts): the searches advance in lockstep, so the blocks of
one call all have the size ``depth + 2``, and ``np.linalg.inv`` runs the same LAPACK routine on
each matrix of a stack as on a matrix alone; every later step is elementwise. The stacked
searches run the same tests (a test's p-value does not depend on the others in its batch) and
record the same unions, in the same order.
"""

from __future__ import annotations

import functools
import itertools
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
    oriented_result,
    pc_batched,
)

__all__ = ["STACKED_MAX_NODES", "pc_batched_many", "stacked_correlations"]

STACKED_MAX_NODES = 12
"""Datasets with at most this many variables run the stacked search: its list of candidate
tests at a depth has ``d (d - 1) C(d - 2, depth)`` rows (at most 33,264 for ``d = 12``)."""


def pc_batched_many(
    datasets: Sequence[ArrayLike],
    *,
    alpha: float = 0.05,
    correlations: FloatArray | None = None,
) -> list[BatchedPCResult]:
    """:func:`pc_batched` on every dataset, with the Fisher-z tests of one depth pooled.

    Args:
        datasets: observational samples, each as :func:`pc_batched` takes them (the number
            of variables and of samples may differ between datasets). Copied; never modified.
        alpha: significance level in ``(0, 1)``; a pair is separated when ``p > alpha``.
        correlations: optionally, ``stacked_correlations`` of the datasets stacked (one
            matrix per dataset), when the caller has it: the datasets are checked as without
            it, and a stacked group's matrices are taken from it instead of computed again.

    Returns:
        One result per dataset, in order, equal to ``pc_batched(data, alpha=alpha)``.

    Raises:
        ValueError: ``alpha`` outside ``(0, 1)``; a dataset that :func:`pc_batched` refuses
            (named by its index: ``datasets[k]``); or a singular correlation submatrix in any
            dataset.
    """
    check_probability(alpha, "alpha")
    arrays = [as_data_matrix(data, f"datasets[{k}]") for k, data in enumerate(datasets)]
    corrs = _checked_correlations(arrays, correlations)
    stacked: dict[int, BatchedPCResult] = {}
    by_size: dict[int, list[int]] = {}
    for k, corr in corrs.items():
        if corr.shape[0] <= STACKED_MAX_NODES:
            by_size.setdefault(corr.shape[0], []).append(k)
    for members in by_size.values():
        found = _stacked_searches(
            np.stack([corrs[k] for k in members]), [arrays[k].shape[0] for k in members], alpha
        )
        stacked.update(zip(members, found, strict=True))
    searches = {k: _Skeleton(corr.shape[0], alpha) for k, corr in corrs.items() if k not in stacked}
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
        stacked[k]
        if k in stacked
        else searches[k].result()
        if k in searches
        else pc_batched(array, alpha=alpha)
        for k, array in enumerate(arrays)
    ]


def _checked_correlations(
    arrays: list[FloatArray], given: FloatArray | None = None
) -> dict[int, FloatArray]:
    """The correlation matrix of every dataset of two variables or more, by index, each
    checked as :func:`pc_batched` checks it (the first refused one named); datasets of one
    shape and at most :data:`STACKED_MAX_NODES` variables checked and summarized stacked
    (:func:`stacked_correlations`, or ``given``'s matrices of them)."""
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for k, array in enumerate(arrays):
        if 2 <= array.shape[1] <= STACKED_MAX_NODES and array.shape[0] > array.shape[1]:
            by_shape.setdefault(array.shape, []).append(k)
    stacks = {
        shape: np.stack([arrays[k] for k in members])
        for shape, members in by_shape.items()
        if len(members) > 1
    }
    if any((data.min(axis=1) == data.max(axis=1)).any() for data in stacks.values()):
        stacks = {}  # a constant column: the checks below name the first one
    corrs: dict[int, FloatArray] = {}
    for shape, data in stacks.items():
        members = by_shape[shape]
        stacked = stacked_correlations(data) if given is None else [given[k] for k in members]
        corrs.update(zip(members, stacked, strict=True))
    for k, array in enumerate(arrays):
        if array.shape[1] >= 2 and k not in corrs:
            check_full_rank_data(array, f"datasets[{k}]")
            corrs[k] = _correlation(array)
    return dict(sorted(corrs.items()))


def stacked_correlations(data: FloatArray) -> FloatArray:
    """``[_correlation(sample) for sample in data]`` (causal-learn's FisherZ correlations) (``data``: ``(K, n, d)``), bit for bit:
    ``np.corrcoef``'s steps on every sample at once but the product, which stays one
    ``np.dot`` per sample on the same memory layout as ``np.cov``'s."""
    # Each sample (d, n) in Fortran order, as np.cov copies a transposed C-ordered sample.
    centred = np.ascontiguousarray(data, dtype=np.float64).transpose(0, 2, 1).copy(order="K")
    centred -= centred.mean(axis=2)[:, :, None]
    corr = np.stack([np.dot(sample, sample.T) for sample in centred])
    corr *= np.true_divide(1, data.shape[1] - 1)
    sd = np.sqrt(np.diagonal(corr, axis1=1, axis2=2))
    corr /= sd[:, :, None]
    corr /= sd[:, None, :]
    np.clip(corr, -1, 1, out=corr)
    return corr


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


@functools.lru_cache(maxsize=64)
def _candidates(n_nodes: int, depth: int) -> tuple[IntArray, IntArray, IntArray]:
    """Every test a depth could run on ``n_nodes`` variables, in causal-learn's order:
    ``xs``, ``ys`` (each ordered pair ``x != y``) and the ``(T, depth)`` sets of ``depth`` other
    variables, ascending and in :func:`itertools.combinations` order. Restricted to ``x``'s
    neighbours, the sets keep that order, which is the order :func:`_depth_tests` lists."""
    rows = [
        (x, y, subset)
        for x in range(n_nodes)
        for y in range(n_nodes)
        if y != x
        for subset in itertools.combinations([v for v in range(n_nodes) if v not in (x, y)], depth)
    ]
    xs = np.array([row[0] for row in rows], dtype=np.int64)
    ys = np.array([row[1] for row in rows], dtype=np.int64)
    sets = np.array([row[2] for row in rows], dtype=np.int64).reshape(len(rows), depth)
    return xs, ys, sets


@functools.lru_cache(maxsize=64)
def _twins(n_nodes: int, depth: int) -> IntArray:
    """For each candidate test of :func:`_candidates`, the index of the test over the same
    pair with ``x < y`` and the same set (itself when ``x < y``)."""
    xs, ys, sets = _candidates(n_nodes, depth)
    rows = list(zip(xs.tolist(), ys.tolist(), sets.tolist(), strict=True))
    index = {(x, y, *row): k for k, (x, y, row) in enumerate(rows)}
    return np.array(
        [index[(min(x, y), max(x, y), *row)] for x, y, row in rows],
        dtype=np.int64,
    )


def _stacked_searches(
    corrs: FloatArray, n_samples: Sequence[int], alpha: float
) -> list[BatchedPCResult]:
    """PC-stable's adjacency search on ``K`` datasets of ``d`` variables as one array program
    (``corrs``: ``(K, d, d)``), each result oriented on its own: equal to :class:`_Skeleton`
    run on each (module docstring)."""
    count, n_nodes = corrs.shape[0], corrs.shape[1]
    adjacent = np.broadcast_to(~np.eye(n_nodes, dtype=np.bool_), corrs.shape).copy()
    sepsets: list[dict[tuple[int, int], list[frozenset[int]]]] = [{} for _ in range(count)]
    n_tests = np.zeros(count, dtype=np.int64)
    samples = np.asarray(n_samples, dtype=np.int64)
    upper = np.triu(np.ones((n_nodes, n_nodes), dtype=np.bool_), 1)
    depth = 0
    while True:
        degrees = adjacent.sum(axis=2)
        if int(degrees.max()) - 1 < depth:
            break
        xs, ys, sets = _candidates(n_nodes, depth)
        runs = adjacent[:, xs, ys] & adjacent[:, xs[:, None], sets].all(axis=2)
        n_tests += runs.sum(axis=1)
        which, test = np.nonzero(runs)
        if which.size:
            # A test and its twin (x and y swapped, the same set) share their block over
            # [min(x, y), max(x, y), *S], so their p-value: computed once per dataset.
            twins = _twins(n_nodes, depth)
            needed = np.zeros_like(runs)
            needed[which, twins[test]] = True
            need_which, need_test = np.nonzero(needed)
            pvalues = np.empty(runs.shape)
            pvalues[need_which, need_test] = _stacked_pvalues(
                corrs, samples, need_which, xs[need_test], ys[need_test], sets[need_test]
            )
            _record_stacked(
                adjacent,
                sepsets,
                pvalues[which, twins[test]] > alpha,
                (which, xs[test], ys[test], sets[test]),
                degrees < depth - 1,
                upper,
            )
        depth += 1
    return [oriented_result(adjacent[k], sepsets[k], int(n_tests[k])) for k in range(count)]


def _stacked_pvalues(
    corrs: FloatArray,
    n_samples: IntArray,
    which: IntArray,
    xs: IntArray,
    ys: IntArray,
    sets: IntArray,
) -> FloatArray:
    """The p-values of tests of one depth across datasets (``which``: each test's dataset),
    on the blocks over ``[min(x, y), max(x, y), *S]``, in chunks of the single search's size."""
    variables = np.concatenate(
        [np.minimum(xs, ys)[:, None], np.maximum(xs, ys)[:, None], sets], axis=1
    )
    blocks = corrs[which[:, None, None], variables[:, :, None], variables[:, None, :]]
    roots = np.sqrt((n_samples - sets.shape[1] - 3).astype(np.float64))[which]
    return np.concatenate(
        [
            _fisher_z(blocks[s : s + _MAX_BATCH], roots[s : s + _MAX_BATCH])
            for s in range(0, len(blocks), _MAX_BATCH)
        ]
    )


def _record_stacked(
    adjacent: np.ndarray,
    sepsets: list[dict[tuple[int, int], list[frozenset[int]]]],
    passed: np.ndarray,
    tests: tuple[IntArray, IntArray, IntArray, IntArray],
    skipped: np.ndarray,
    upper: np.ndarray,
) -> None:
    """:meth:`_Skeleton.record` of every dataset: remove the separated pairs and append, per
    removed pair ``a < b`` in row-major order, ``a``'s union if one of its sets passed and
    ``b``'s union (empty when none of its own did) unless ``b`` is ``skipped``."""
    if not passed.any():
        return
    which, xs, ys, sets = (part[passed] for part in tests)
    count, n_nodes = adjacent.shape[0], adjacent.shape[1]
    separated = np.zeros_like(adjacent)
    separated[which, xs, ys] = True
    unions = np.zeros((count, n_nodes, n_nodes, n_nodes), dtype=np.bool_)
    depth = sets.shape[1]
    if depth:
        unions[
            np.repeat(which, depth), np.repeat(xs, depth), np.repeat(ys, depth), sets.ravel()
        ] = True
    removed = separated | separated.transpose(0, 2, 1)
    ks, lows, highs = np.nonzero(removed & upper)
    # Each union as a bit mask over the variables, then its frozenset (one per mask).
    bits = np.left_shift(1, np.arange(n_nodes, dtype=np.int64))
    low_unions = [_members(mask) for mask in (unions[ks, lows, highs] @ bits).tolist()]
    high_unions = [_members(mask) for mask in (unions[ks, highs, lows] @ bits).tolist()]
    from_low = separated[ks, lows, highs].tolist()
    from_high = (~skipped[ks, highs]).tolist()
    for k, a, b, low_side, high_side, low_union, high_union in zip(
        ks.tolist(),
        lows.tolist(),
        highs.tolist(),
        from_low,
        from_high,
        low_unions,
        high_unions,
        strict=True,
    ):
        entries = sepsets[k].setdefault((a, b), [])
        if low_side:
            entries.append(low_union)
        if high_side:
            entries.append(high_union)
    adjacent &= ~removed


@functools.lru_cache(maxsize=1 << STACKED_MAX_NODES)
def _members(mask: int) -> frozenset[int]:
    """The variables of a bit mask (bit ``v``: variable ``v``)."""
    return frozenset(v for v in range(mask.bit_length()) if mask >> v & 1)
