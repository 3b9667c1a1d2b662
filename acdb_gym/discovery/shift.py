"""Distribution-shift statistics of single-node interventions, and their combination with PC.

Under a hard intervention ``do(X_t = v)`` the distribution of ``X_j`` changes only if ``X_j`` is
a descendant of ``t``. This module turns samples into that evidence and the evidence into a
graph:

* :func:`shift_pvalues`: one p-value per variable for "same distribution as observationally"
  (Welch's t-test on the means, the Brown–Forsythe test on the spreads, Bonferroni-combined),
  computed for all columns at once; :func:`distribution_shift_pvalue` is its one-column view.
* :func:`shift_evidence`: the shift p-values of one experiment plus a test for a *direct*
  effect of the target (:class:`ShiftEvidence`).
* :func:`combine_shift_evidence`: PC's graph corrected and completed by the evidence of every
  experiment (:class:`CombinedGraph`), the estimator of the ``pc_active`` agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from acdb_gym.core.graphs import PDAG, has_directed_path, meek_closure
from acdb_gym.core.types import BoolMatrix, FloatArray
from acdb_gym.discovery._common import as_data_matrix, check_min_rows
from acdb_gym.discovery._two_sample import ShiftReference

__all__ = [
    "CombinedGraph",
    "ShiftEvidence",
    "combine_shift_evidence",
    "distribution_shift_pvalue",
    "shift_evidence",
    "shift_pvalues",
]


def shift_pvalues(observational: ArrayLike, samples: ArrayLike) -> FloatArray:
    """P-value of "the column comes from the same distribution in both samples" for every
    column, sensitive to a change of mean or of spread.

    Combines Welch's t-test on the means and the Brown–Forsythe test (one-way ANOVA on the
    absolute deviations from each group's median) on the spreads with a Bonferroni correction:
    ``p = min(1, 2 * min(p_mean, p_var))``, column by column.

    Degenerate columns: when a column is constant in both samples the answer is exact (1 if
    both hold the same value, else 0). A test that is undefined for a column (e.g. the spread
    test when every absolute deviation equals its group mean, or the target's own column,
    constant under its intervention) contributes no evidence (its p-value counts as 1).

    Args:
        observational: ``(n_obs, d)`` samples, ``n_obs >= 2``, finite.
        samples: ``(n_int, d)`` samples of the same variables, ``n_int >= 2``, finite.

    Returns:
        ``(d,)`` p-values in ``[0, 1]``.

    Raises:
        ValueError: an input that is not 2-D, has fewer than 2 rows or non-finite values, or
            column counts that differ.

    >>> rng = np.random.default_rng(0)
    >>> obs = rng.normal(size=(200, 2))
    >>> shifted = np.column_stack([rng.normal(3.0, 1.0, 200), rng.normal(size=200)])
    >>> p_values = shift_pvalues(obs, shifted)
    >>> bool(p_values[0] < 1e-6), bool(p_values[1] > 0.01)
    (True, True)
    """
    obs = as_data_matrix(observational, "observational")
    inter = as_data_matrix(samples, "samples", n_columns=obs.shape[1])
    check_min_rows(obs, "observational", 2)
    check_min_rows(inter, "samples", 2)
    # The transposed views keep scipy's layout on the whole matrix, so the p-values are the
    # ones scipy.stats.ttest_ind and f_oneway give, to the last bit (see _two_sample).
    return ShiftReference(obs.T).pvalues(inter.T)


def distribution_shift_pvalue(obs_col: ArrayLike, int_col: ArrayLike) -> float:
    """:func:`shift_pvalues` of one variable: observational values against interventional ones.

    Args:
        obs_col: observational values of one variable, 1-D, at least 2 finite values.
        int_col: values of the same variable under an intervention, same requirements.

    Returns:
        A p-value in ``[0, 1]``.

    Raises:
        ValueError: an input that is not 1-D, has fewer than 2 values or non-finite values.

    >>> rng = np.random.default_rng(0)
    >>> distribution_shift_pvalue(rng.normal(size=200), rng.normal(3.0, 1.0, size=200)) < 1e-6
    True
    >>> distribution_shift_pvalue([1.0, 1.0, 1.0], [1.0, 1.0])
    1.0
    """
    obs = _as_sample(obs_col, "obs_col")
    inter = _as_sample(int_col, "int_col")
    return float(shift_pvalues(obs[:, None], inter[:, None])[0])


def _as_sample(values: ArrayLike, name: str) -> FloatArray:
    sample = np.array(values, dtype=np.float64, copy=True)
    if sample.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {sample.shape}")
    if sample.size < 2:
        raise ValueError(f"{name} needs at least 2 values, got {sample.size}")
    if not np.isfinite(sample).all():
        index = int(np.flatnonzero(~np.isfinite(sample))[0])
        raise ValueError(f"{name} must be finite, got {sample[index]} at index {index}")
    return sample


@dataclass(frozen=True)
class ShiftEvidence:
    """What one experiment ``do(X_target = v)`` says about every variable.

    Attributes:
        target: the intervened node.
        shift: p-value of "``X_j`` has the same distribution as observationally"
            (:func:`shift_pvalues`); NaN at the target.
        direct: p-value of "the residual of ``X_j`` regressed on every variable except ``X_j``
            and the target keeps its mean" (small: the target is in ``X_j``'s Markov
            blanket); NaN where it was not computed.
    """

    target: int
    shift: FloatArray
    direct: FloatArray


def shift_evidence(
    observational: FloatArray,
    target: int,
    samples: FloatArray,
    *,
    direct_for: BoolMatrix | None = None,
) -> ShiftEvidence:
    """Test every variable for a shift under ``do(X_target)``, and the nodes of ``direct_for``
    for a direct effect of the target.

    The shift test is :func:`shift_pvalues` (Welch's t-test on the means and the
    Brown–Forsythe test on the spreads, Bonferroni-combined), computed for all variables at once.

    The direct-effect test uses that under a hard intervention on ``t`` the conditional law of
    ``X_j`` given its Markov blanket is unchanged unless ``t`` is in that blanket. Regressing
    ``X_j`` on every other variable but ``X_t`` (on the observational rows) gives that
    conditional when ``t`` is not in the blanket, so its residual keeps mean zero under
    ``do(X_t)``; Welch's t-test compares the residuals. A shifted ``X_j`` (so ``t`` is an
    ancestor of ``j``) whose residual shifts too is most likely a child of ``t``, not an
    indirect descendant.

    Args:
        observational: observational samples ``(n_obs, d)``, ``n_obs > d``.
        target: the intervened node.
        samples: the experiment's samples ``(n_int, d)``.
        direct_for: boolean mask ``(d,)`` of nodes for the direct-effect test (default: none).

    Returns:
        The :class:`ShiftEvidence`.
    """
    shift = shift_pvalues(observational, samples)
    shift[target] = np.nan
    direct = np.full(observational.shape[1], np.nan)
    if direct_for is not None:
        wanted = np.array(direct_for, dtype=np.bool_)
        wanted[target] = False
        if wanted.any():
            direct[wanted] = _residual_shift_pvalues(observational, samples, target)[wanted]
    return ShiftEvidence(target, shift, direct)


def _residual_shift_pvalues(
    observational: FloatArray, samples: FloatArray, target: int
) -> FloatArray:
    """P-values that the residual of every ``X_j`` given all variables but ``X_j`` and
    ``X_target`` keeps mean zero under the experiment; NaN at the target.

    A predictive-failure t-test: the regression is fitted on the observational rows, and the
    standard error of the experiment's mean residual includes the uncertainty of the fitted
    coefficients at the experiment's mean (large interventions move the regressors far from
    the observational data, where that uncertainty dominates). All regressions come from one
    inverse scatter matrix ``P``: the residual of ``X_j`` is ``(x P)_j / P_jj``, its residual
    sum of squares ``1 / P_jj``, and the leverage of a mean shift ``m`` is
    ``m' P m - (P m)_j^2 / P_jj``.
    """
    n_obs, n_nodes = observational.shape
    keep = np.flatnonzero(np.arange(n_nodes) != target)
    mean = observational[:, keep].mean(axis=0)
    precision = np.linalg.pinv((observational[:, keep] - mean).T @ (observational[:, keep] - mean))
    scale = np.diag(precision)
    shift = samples[:, keep].mean(axis=0) - mean
    moved = precision @ shift
    leverage = shift @ moved - moved**2 / scale
    dof = n_obs - keep.size
    result = np.full(n_nodes, np.nan)
    if dof < 1:
        return result
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_residual = moved / scale
        noise_var = 1.0 / (scale * dof)
        std_error = np.sqrt(noise_var * (1.0 / samples.shape[0] + 1.0 / n_obs + leverage))
        # scipy.stats.t.sf(x, dof), bit for bit, without importing scipy.stats.
        p_value = 2.0 * special.stdtr(dof, -np.abs(mean_residual / std_error))
    result[keep] = np.where(np.isfinite(p_value), p_value, 1.0)
    return result


@dataclass(frozen=True)
class CombinedGraph:
    """The result of :func:`combine_shift_evidence`.

    Attributes:
        graph: the estimate to submit.
        settled: symmetric mask of the pairs whose orientation (or absence) follows from the
            experiments and Meek's rules alone, without PC's orientations.
    """

    graph: PDAG
    settled: BoolMatrix


def combine_shift_evidence(
    pc_graph: PDAG,
    evidence: Sequence[ShiftEvidence],
    *,
    alpha: float = 0.01,
    no_shift_threshold: float = 0.05,
    repair_skeleton: bool = True,
) -> CombinedGraph:
    """Combine PC's graph with the shift tests of every experiment.

    Interventional evidence comes first because it is far more reliable than PC's collider
    orientations at small samples (on the v0 ladder PC reverses about as many edges as it gets
    right). In order:

    1. Skeleton repair (``repair_skeleton``): a node ``j`` not adjacent to ``t`` in PC's graph
       that both shifts and shows a direct effect under ``do(X_t)``, each at the Bonferroni level
       ``alpha / (d - 1)``, gains the edge ``t -> j``; a pair whose endpoints were both
       intervened on and neither shifted the other (``p > no_shift_threshold`` both ways) loses
       its edge.
    2. Incident edges: ``t - j`` becomes ``t -> j`` if ``X_j`` shifts (``p < alpha``) and
       ``j -> t`` if it clearly does not (``p > no_shift_threshold``); in between, or when two
       experiments contradict each other, the pair is left undirected (abstention). Stronger
       evidence is applied first and an orientation that would close a directed cycle is
       skipped.
    3. Descendant cut: if ``X_a`` shifts under ``do(X_t)`` (or ``a = t``) and ``X_b`` clearly does
       not, an undirected ``a - b`` must be ``b -> a`` (``a -> b`` would make ``b`` a descendant
       of ``t``); pairs with contradictory evidence stay undirected.
    4. Meek's rules; the pairs oriented so far are the *settled* ones.
    5. PC's own orientations fill in pairs that are still undirected and had no inconclusive
       experimental evidence, then Meek's rules run again.

    Args:
        pc_graph: PC's estimate from the observational data.
        evidence: one :class:`ShiftEvidence` per experiment.
        alpha: significance level of "shifted", in ``(0, 1)``.
        no_shift_threshold: p-value above which "not shifted" is accepted, in ``[alpha, 1)``.
        repair_skeleton: apply step 1.

    Returns:
        The :class:`CombinedGraph`.

    Raises:
        ValueError: thresholds out of range.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not alpha <= no_shift_threshold < 1.0:
        raise ValueError(
            f"no_shift_threshold must be in [alpha, 1) = [{alpha}, 1), got {no_shift_threshold}"
        )
    n = pc_graph.n_nodes
    skeleton = np.array(pc_graph.skeleton())
    if repair_skeleton:
        _add_direct_effects(skeleton, evidence, alpha / max(1, n - 1))
    votes = _incident_votes(skeleton, evidence, alpha, no_shift_threshold)
    abstained = np.zeros((n, n), dtype=np.bool_)
    for (a, b), key in list(votes.items()):
        if (b, a) in votes:
            if repair_skeleton and key[0] == 1 and votes[(b, a)][0] == 1:
                skeleton[a, b] = skeleton[b, a] = False
            abstained[a, b] = abstained[b, a] = True
    directed = np.zeros((n, n), dtype=np.bool_)
    for _, (a, b) in sorted((key, edge) for edge, key in votes.items()):
        if skeleton[a, b] and not abstained[a, b]:
            _orient_if_acyclic(directed, a, b)
    for item in evidence:
        _apply_descendant_cut(directed, skeleton & ~abstained, item, alpha, no_shift_threshold)
    for item in evidence:  # inconclusive incident pairs stay undirected unless Meek decides
        j = np.flatnonzero(skeleton[item.target] & (item.shift >= alpha))
        inconclusive = j[item.shift[j] <= no_shift_threshold]
        abstained[item.target, inconclusive] = abstained[inconclusive, item.target] = True
    evidence_graph = meek_closure(PDAG(directed, skeleton & ~directed & ~directed.T))
    settled = np.array(evidence_graph.directed | evidence_graph.directed.T)
    directed = np.array(evidence_graph.directed)
    for a, b in pc_graph.directed_edges():
        if evidence_graph.undirected[a, b] and not abstained[a, b]:
            _orient_if_acyclic(directed, a, b)
    graph = meek_closure(PDAG(directed, skeleton & ~directed & ~directed.T))
    return CombinedGraph(graph, settled)


def _add_direct_effects(
    skeleton: BoolMatrix, evidence: Sequence[ShiftEvidence], level: float
) -> None:
    for item in evidence:
        t = item.target
        with np.errstate(invalid="ignore"):
            found = ~skeleton[t] & (item.shift < level) & (item.direct < level)
        found[t] = False
        skeleton[t, found] = skeleton[found, t] = True


def _incident_votes(
    skeleton: BoolMatrix,
    evidence: Sequence[ShiftEvidence],
    alpha: float,
    no_shift_threshold: float,
) -> dict[tuple[int, int], tuple[int, float]]:
    """Orientation votes ``(tail, head) -> sort key``: shifts (key ``(0, p)``) before clear
    non-shifts (key ``(1, -p)``), the strongest first; one vote per ordered pair."""
    votes: dict[tuple[int, int], tuple[int, float]] = {}
    for item in evidence:
        t = item.target
        for j in (int(v) for v in np.flatnonzero(skeleton[t])):
            p = float(item.shift[j])
            if p < alpha:
                edge, key = (t, j), (0, p)
            elif p > no_shift_threshold:
                edge, key = (j, t), (1, -p)
            else:
                continue
            votes[edge] = min(votes.get(edge, key), key)
    return votes


def _apply_descendant_cut(
    directed: BoolMatrix,
    skeleton: BoolMatrix,
    item: ShiftEvidence,
    alpha: float,
    no_shift_threshold: float,
) -> None:
    with np.errstate(invalid="ignore"):
        inside = item.shift < alpha
        outside = item.shift > no_shift_threshold
    inside[item.target] = True
    crossing = skeleton & outside[:, None] & inside[None, :]
    for tail, head in zip(*np.nonzero(crossing), strict=True):
        if not (directed[tail, head] or directed[head, tail]):
            _orient_if_acyclic(directed, int(tail), int(head))


def _orient_if_acyclic(directed: BoolMatrix, tail: int, head: int) -> None:
    if not has_directed_path(directed, head, tail):
        directed[tail, head] = True
