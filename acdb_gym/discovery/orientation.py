"""Orienting undirected edges from single-node interventional samples.

Under a hard intervention ``do(X_t = v)`` the distribution of ``X_j`` changes only if ``X_j`` is
a descendant of ``t``. For an undirected edge ``t - j`` that means: ``X_j`` shifts iff
``t -> j``. Two rules turn that into orientations:

* :func:`orient_from_interventions` tests for a shift in mean or variance
  (:func:`acdb_gym.discovery.shift.distribution_shift_pvalue`) and then applies Meek's rules;
* :func:`orient_by_mean_shift` is the paper's ``pc_greedy`` heuristic (a fixed threshold on the
  change of the mean, no Meek closure).

Both consider only edges that are undirected in the input and incident to an intervened node,
visit experiments in the given order (an edge oriented by an earlier experiment is not revisited)
and neighbours in ascending order, and skip any orientation that would close a directed cycle,
leaving that edge undirected. Inputs are never modified.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.graphs import (
    PDAG,
    has_directed_path,
    meek_closure,
)
from acdb_gym.core.types import BoolMatrix, FloatArray
from acdb_gym.discovery._common import as_data_matrix, check_min_rows, check_probability
from acdb_gym.discovery.shift import distribution_shift_pvalue

__all__ = [
    "Experiment",
    "orient_by_mean_shift",
    "orient_from_interventions",
]

Experiment = tuple[int, ArrayLike]
"""One single-node intervention: ``(target, samples)`` with samples of shape ``(n_int, d)``."""

Decision = Literal["forward", "backward"] | None
"""``"forward"`` orients ``target -> j``, ``"backward"`` orients ``j -> target``, None abstains."""


def orient_from_interventions(
    pdag: PDAG,
    observational: ArrayLike,
    experiments: Sequence[Experiment],
    *,
    alpha: float = 0.01,
    abstain: bool = False,
    no_shift_threshold: float = 0.2,
) -> PDAG:
    """Orient undirected edges at intervened nodes by testing for a distribution shift, then
    apply Meek's rules R1–R4.

    For each experiment ``(t, samples)`` and each undirected edge ``t - j``, let ``p`` be
    :func:`~acdb_gym.discovery.shift.distribution_shift_pvalue` of ``X_j`` observational vs interventional. Without
    ``abstain``: ``p < alpha`` orients ``t -> j``, otherwise ``j -> t``. With ``abstain``:
    ``p < alpha`` orients ``t -> j``, ``p > no_shift_threshold`` orients ``j -> t``, and anything
    in between leaves the edge undirected.

    Meek's rules then run to closure. If noisy orientations made the graph inconsistent, so that
    a Meek rule would close a directed cycle, that rule's orientation is skipped (the edge stays
    undirected) and the closure goes on.

    Args:
        pdag: current graph over ``d`` nodes, e.g. PC's CPDAG.
        observational: observational samples, shape ``(n_obs, d)``, ``n_obs >= 2``.
        experiments: ``(target, samples)`` pairs, samples of shape ``(n_int, d)``,
            ``n_int >= 2``.
        alpha: significance level for "the neighbour shifted", in ``(0, 1)``.
        abstain: leave an edge undirected when the evidence is inconclusive.
        no_shift_threshold: with ``abstain``, the p-value above which "no shift" is accepted;
            in ``[alpha, 1)``.

    Returns:
        A new PDAG over the same nodes.

    Raises:
        ValueError: a bad threshold, a target outside ``[0, d)``, or samples of the wrong shape,
            with too few rows or non-finite values.
    """
    check_probability(alpha, "alpha")
    if abstain and not alpha <= no_shift_threshold < 1.0:
        raise ValueError(
            f"no_shift_threshold must be in [alpha, 1) = [{alpha}, 1), got {no_shift_threshold}"
        )

    def decide(obs_col: FloatArray, int_col: FloatArray) -> Decision:
        p_value = distribution_shift_pvalue(obs_col, int_col)
        if p_value < alpha:
            return "forward"
        if not abstain or p_value > no_shift_threshold:
            return "backward"
        return None

    directed, undirected = _orient_incident_edges(
        pdag, observational, experiments, decide, min_rows=2
    )
    return meek_closure(PDAG(directed, undirected))


def orient_by_mean_shift(
    pdag: PDAG,
    observational: ArrayLike,
    experiments: Sequence[Experiment],
    *,
    threshold: float = 0.5,
) -> PDAG:
    """The paper's ``pc_greedy`` orientation rule: a fixed threshold on the shift of the mean.

    For each experiment ``(t, samples)`` and each undirected edge ``t - j``: orient ``t -> j`` if
    ``|mean_int(X_j) - mean_obs(X_j)| > threshold``, else ``j -> t``. No Meek closure follows,
    because the paper's heuristic does not apply one; call
    :func:`acdb_gym.core.graphs.meek_closure` on the result to add it.

    Args:
        pdag: current graph over ``d`` nodes.
        observational: observational samples, shape ``(n_obs, d)``, ``n_obs >= 1``.
        experiments: ``(target, samples)`` pairs, samples of shape ``(n_int, d)``,
            ``n_int >= 1``.
        threshold: the absolute mean shift above which the neighbour counts as affected;
            finite and ``>= 0``.

    Returns:
        A new PDAG over the same nodes.

    Raises:
        ValueError: a negative or non-finite threshold, a target outside ``[0, d)``, or samples
            of the wrong shape, with no rows or non-finite values.
    """
    if not (np.isfinite(threshold) and threshold >= 0.0):
        raise ValueError(f"threshold must be finite and >= 0, got {threshold}")

    def decide(obs_col: FloatArray, int_col: FloatArray) -> Decision:
        shift = abs(float(int_col.mean()) - float(obs_col.mean()))
        return "forward" if shift > threshold else "backward"

    directed, undirected = _orient_incident_edges(
        pdag, observational, experiments, decide, min_rows=1
    )
    return PDAG(directed, undirected)


def _orient_incident_edges(
    pdag: PDAG,
    observational: ArrayLike,
    experiments: Sequence[Experiment],
    decide: Callable[[FloatArray, FloatArray], Decision],
    *,
    min_rows: int,
) -> tuple[BoolMatrix, BoolMatrix]:
    """Apply ``decide`` to every undirected edge at every intervened node (see module doc)."""
    n_nodes = pdag.n_nodes
    obs = as_data_matrix(observational, "observational", n_columns=n_nodes)
    check_min_rows(obs, "observational", min_rows)
    checked = [
        _check_experiment(item, index, n_nodes, min_rows) for index, item in enumerate(experiments)
    ]
    directed = pdag.directed.copy()
    undirected = pdag.undirected.copy()
    for target, samples in checked:
        for j in np.flatnonzero(undirected[target]):
            decision = decide(obs[:, j], samples[:, j])
            if decision is None:
                continue
            tail, head = (target, int(j)) if decision == "forward" else (int(j), target)
            if has_directed_path(directed, head, tail):
                continue  # tail -> head would close a directed cycle
            directed[tail, head] = True
            undirected[tail, head] = undirected[head, tail] = False
    return directed, undirected


def _check_experiment(
    item: Experiment, index: int, n_nodes: int, min_rows: int
) -> tuple[int, FloatArray]:
    try:
        target_raw, samples_raw = item
    except (TypeError, ValueError):
        raise ValueError(
            f"experiments[{index}] must be a (target, samples) pair, got {item!r}"
        ) from None
    try:
        target = operator.index(target_raw)
    except TypeError:
        raise ValueError(
            f"experiments[{index}] target must be an integer, got {target_raw!r}"
        ) from None
    if not 0 <= target < n_nodes:
        raise ValueError(f"experiments[{index}] target must be in [0, {n_nodes}), got {target}")
    name = f"experiments[{index}] samples"
    samples = as_data_matrix(samples_raw, name, n_columns=n_nodes)
    check_min_rows(samples, name, min_rows)
    return target, samples
