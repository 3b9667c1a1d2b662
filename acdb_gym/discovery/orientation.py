"""Orienting undirected edges from single-node interventional samples.

Under a hard intervention ``do(X_t = v)`` the distribution of ``X_j`` changes only if ``X_j`` is
a descendant of ``t``. For an undirected edge ``t - j`` that means: ``X_j`` shifts iff
``t -> j``. Two rules turn that into orientations:

* :func:`orient_from_interventions` tests for a shift in mean or variance
  (:func:`acdb_gym.discovery.shift.distribution_shift_pvalue`) and then applies Meek's rules;
  :class:`ShiftOrienter` computes the same graph one experiment at a time;
* :func:`orient_by_mean_shift` is the paper's ``pc_greedy`` heuristic (a fixed threshold on the
  change of the mean, no Meek closure).

Both consider only edges that are undirected in the input and incident to an intervened node,
visit experiments in the given order (an edge oriented by an earlier experiment is not revisited)
and neighbours in ascending order, and skip any orientation that would close a directed cycle,
leaving that edge undirected. Inputs are never modified.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.graphs import (
    PDAG,
    has_directed_path,
    meek_closure,
)
from acdb_gym.core.types import BoolMatrix, FloatArray, IntArray
from acdb_gym.discovery._common import as_data_matrix, check_min_rows, check_probability
from acdb_gym.discovery._two_sample import ShiftReference

__all__ = [
    "Experiment",
    "ShiftOrienter",
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
    orienter = ShiftOrienter(
        pdag, observational, alpha=alpha, abstain=abstain, no_shift_threshold=no_shift_threshold
    )
    checked = [
        _check_experiment(item, index, pdag.n_nodes, min_rows=2)
        for index, item in enumerate(experiments)
    ]
    for target, samples in checked:
        orienter._add_checked(target, samples)
    return orienter.graph


class ShiftOrienter:
    """:func:`orient_from_interventions`, one experiment at a time.

    After experiments ``e_1 ... e_k`` were added, :attr:`graph` is
    ``orient_from_interventions(pdag, observational, [e_1, ..., e_k], ...)``, bit for bit, but
    each experiment is tested once (all its incident edges in one batch of shift tests) instead
    of at every call, the observational half of the tests is computed once, and Meek's rules
    run only when an orientation changed. An environment that adds one experiment per step
    keeps one orienter per episode.

    Args:
        pdag: starting graph over ``d`` nodes, e.g. PC's CPDAG.
        observational: observational samples, shape ``(n_obs, d)``, ``n_obs >= 2``.
        alpha, abstain, no_shift_threshold: as :func:`orient_from_interventions`.

    Raises:
        ValueError: as :func:`orient_from_interventions`.
    """

    def __init__(
        self,
        pdag: PDAG,
        observational: ArrayLike,
        *,
        alpha: float = 0.01,
        abstain: bool = False,
        no_shift_threshold: float = 0.2,
    ) -> None:
        check_probability(alpha, "alpha")
        if abstain and not alpha <= no_shift_threshold < 1.0:
            raise ValueError(
                f"no_shift_threshold must be in [alpha, 1) = [{alpha}, 1), got {no_shift_threshold}"
            )
        obs = as_data_matrix(observational, "observational", n_columns=pdag.n_nodes)
        check_min_rows(obs, "observational", 2)
        self._alpha = alpha
        self._no_shift = no_shift_threshold if abstain else None
        # One contiguous row per variable: the layout of a one-column test, which
        # orient_from_interventions always ran (see acdb_gym.discovery._two_sample).
        self._reference = ShiftReference(np.ascontiguousarray(obs.T))
        self._directed = pdag.directed.copy()
        self._undirected = pdag.undirected.copy()
        self._graph: PDAG | None = None

    @property
    def graph(self) -> PDAG:
        """The experiments' orientations closed under Meek's rules (the starting graph closed
        under Meek's rules before any experiment)."""
        if self._graph is None:
            self._graph = meek_closure(PDAG(self._directed, self._undirected))
        return self._graph

    def copy(self) -> ShiftOrienter:
        """An independent orienter in the same state (the observational half of the tests,
        which never changes, is shared)."""
        twin = copy.copy(self)
        twin._directed = self._directed.copy()
        twin._undirected = self._undirected.copy()
        return twin

    def add(self, target: int, samples: ArrayLike) -> None:
        """Test and orient the undirected edges at ``target`` with one experiment's samples
        ``(n_int, d)``, ``n_int >= 2``.

        Raises:
            ValueError: a target outside ``[0, d)`` or samples of the wrong shape, with too
                few rows or non-finite values.
        """
        checked = _check_experiment((target, samples), 0, self._directed.shape[0], min_rows=2)
        self._add_checked(*checked)

    def _add_checked(self, target: int, samples: FloatArray) -> None:
        neighbours = np.flatnonzero(self._undirected[target])
        if neighbours.size == 0:
            return
        p_values = self._reference.pvalues(np.ascontiguousarray(samples.T))[neighbours]
        decisions = [self._decide(float(p)) for p in p_values]
        if _orient_at(self._directed, self._undirected, target, neighbours, decisions):
            self._graph = None

    def _decide(self, p_value: float) -> Decision:
        if p_value < self._alpha:
            return "forward"
        if self._no_shift is None or p_value > self._no_shift:
            return "backward"
        return None


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

    n_nodes = pdag.n_nodes
    obs = as_data_matrix(observational, "observational", n_columns=n_nodes)
    check_min_rows(obs, "observational", 1)
    checked = [
        _check_experiment(item, index, n_nodes, min_rows=1)
        for index, item in enumerate(experiments)
    ]
    directed = pdag.directed.copy()
    undirected = pdag.undirected.copy()
    for target, samples in checked:
        neighbours = np.flatnonzero(undirected[target])
        decisions: list[Decision] = [
            "forward"
            if abs(float(samples[:, j].mean()) - float(obs[:, j].mean())) > threshold
            else "backward"
            for j in neighbours
        ]
        _orient_at(directed, undirected, target, neighbours, decisions)
    return PDAG(directed, undirected)


def _orient_at(
    directed: BoolMatrix,
    undirected: BoolMatrix,
    target: int,
    neighbours: IntArray,
    decisions: Sequence[Decision],
) -> bool:
    """Orient the undirected edges ``target - j`` for ``j`` in ``neighbours`` as decided, in
    place, skipping an orientation that would close a directed cycle; True if any changed."""
    changed = False
    for j, decision in zip(neighbours, decisions, strict=True):
        if decision is None:
            continue
        tail, head = (target, int(j)) if decision == "forward" else (int(j), target)
        if has_directed_path(directed, head, tail):
            continue  # tail -> head would close a directed cycle
        directed[tail, head] = True
        undirected[tail, head] = undirected[head, tail] = False
        changed = True
    return changed


def _check_experiment(
    item: Experiment, index: int, n_nodes: int, *, min_rows: int
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
