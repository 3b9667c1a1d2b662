"""Stronger classical active agents than the paper's PC + greedy (DESIGN §9, "beyond the paper").

Both agents share one adaptive loop (:class:`AdaptiveAgent`): estimate a graph from the
observational data, then repeatedly intervene on the node with the most undirected edges in the
*current* estimate, at ``do(X_t = mean_obs(X_t) + shift * sd_obs(X_t))``, re-estimate from all
data seen so far, and submit once the budget is spent or nothing is left to resolve (by
default, budget left once nothing is undirected goes to checking orientations no experiment has
settled and then to nodes not yet intervened on; see :data:`Leftover`). They differ in the
estimator:

* :class:`PCActiveAgent` (``pc_active``): PC's skeleton and orientations from the observational
  data, corrected and completed by every experiment's distribution-shift tests (see
  :func:`combine_shift_evidence`).
* :class:`GIESActiveAgent` (``gies_active``): a score-based search over all data pooled with the
  interventional BIC (:func:`acdb_gym.discovery.greedy_interventional_search`), returning the
  interventional essential graph of the best DAG found.

Targeting is greedy on the current estimate: the node with the most undirected edges (ties: the
lowest index), never the same node twice. Intervening on a node orients every edge at it, and
Meek's rules carry that further, so the undirected degree is the number of edges an experiment
is sure to settle. A clique-separator rule (pick a node that splits the chain components into
small pieces) has better worst-case guarantees on a *correct* essential graph, but it needs a
clique tree of the estimate, and the estimates here are noisy (missing and extra edges make
the chain components non-chordal); maximum degree degrades gracefully, is the paper's rule, and
re-applying it after every re-estimate makes it adaptive. Both agents act only through
``env.step`` with the typed actions of :mod:`acdb_gym.envs.actions`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
from scipy import stats

from acdb_gym.baselines.classical import InterveneThenSubmit
from acdb_gym.core.graphs import DAG, PDAG, cpdag, has_directed_path, meek_closure
from acdb_gym.core.types import BoolMatrix, FloatArray
from acdb_gym.discovery import greedy_interventional_search, pc_cpdag
from acdb_gym.envs.actions import VALUE_BOUND

__all__ = [
    "AdaptiveAgent",
    "CombinedGraph",
    "GIESActiveAgent",
    "Leftover",
    "PCActiveAgent",
    "ShiftEvidence",
    "combine_shift_evidence",
    "shift_evidence",
    "shift_pvalues",
]

Observation = Mapping[str, Any]

Leftover = Literal["stop", "verify", "explore"]
"""What an agent does with budget left once its estimate has no undirected edge.

* ``"stop"``: submit (the rule of the paper's ``pc_greedy``).
* ``"verify"``: intervene on the node with the most edges whose orientation no experiment has
  settled (e.g. edges oriented only by observational v-structures, which at small samples are
  often wrong), until none is left or the budget is spent.
* ``"explore"``: verify, then intervene on the remaining nodes (highest degree first) until the
  budget is spent. Missing edges are the largest error at small samples, and an experiment at
  ``t`` is how ``pc_active`` finds the children of ``t`` that PC missed; ``gies_active`` gets
  more rows for the score.

The two later options trade efficiency (more interventions than ``|I*|``) for accuracy.
"""


def _check_positive(name: str, value: float) -> None:
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be positive and finite, got {value}")


class AdaptiveAgent(InterveneThenSubmit):
    """The shared adaptive loop. Subclasses implement :meth:`_estimate` and may refine
    :meth:`_priorities` (which node to intervene on next) and :meth:`_on_experiment`.

    Args:
        shift: intervention value in observational standard deviations above the mean;
            finite and non-zero.
        leftover: what to do with budget left once nothing is undirected (see
            :data:`Leftover`).
    """

    name = "adaptive"

    def __init__(self, *, shift: float = 4.0, leftover: Leftover = "explore") -> None:
        if not (np.isfinite(shift) and shift != 0.0):
            raise ValueError(f"shift must be finite and non-zero, got {shift}")
        if leftover not in get_args(Leftover):
            raise ValueError(
                f"leftover must be one of {list(get_args(Leftover))}, got {leftover!r}"
            )
        self.shift = shift
        self.leftover: Leftover = leftover

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._observational: FloatArray = np.array(observation["observational"], dtype=float)
        self._experiments: list[tuple[int, FloatArray]] = []
        self._refused: set[int] = set()
        self._pending: int | None = None
        self._graph = self._estimate()

    def _intervention_value(self, target: int) -> float:
        column = self._observational[:, target]
        return float(np.clip(column.mean() + self.shift * column.std(), -VALUE_BOUND, VALUE_BOUND))

    @property
    def graph(self) -> PDAG:
        """The current estimate: what :meth:`act` would submit now."""
        return self._graph

    @property
    def targets(self) -> tuple[int, ...]:
        """The nodes intervened on so far, in order."""
        return tuple(t for t, _ in self._experiments)

    def _estimate(self) -> PDAG:
        raise NotImplementedError

    def _on_experiment(self, target: int, samples: FloatArray) -> None:
        """Called once per absorbed experiment, before re-estimating."""

    def _settled(self) -> BoolMatrix:
        """Symmetric mask of the pairs whose orientation rests on experiments (by default:
        the pairs at an intervened node)."""
        touched = np.zeros(self._graph.n_nodes, dtype=np.bool_)
        touched[list(self.targets)] = True
        return touched[:, None] | touched[None, :]

    def _priorities(self) -> FloatArray:
        """How much an experiment at each node would settle; 0 means nothing to gain.

        The number of undirected edges at the node. When no edge is undirected: with
        ``leftover="verify"`` or ``"explore"`` the number of its edges that experiments have
        not settled; when those are settled too, with ``"explore"`` one plus its degree, so
        every node not yet intervened on is a candidate.
        """
        skeleton = np.array(self._graph.skeleton())
        priority = self._graph.undirected.sum(axis=1).astype(float)
        if self.leftover != "stop" and priority.max(initial=0.0) <= 0.0:
            priority = (skeleton & ~self._settled()).sum(axis=1).astype(float)
        if self.leftover == "explore" and priority.max(initial=0.0) <= 0.0:
            priority = 1.0 + skeleton.sum(axis=1)
        return priority

    def _next_target(self, observation: Observation) -> int | None:
        # Keep the last step for the submission: the env scores the empty graph on truncation.
        if int(observation["budget_remaining"]) <= 0 or int(observation["steps_remaining"]) <= 1:
            return None
        priority = self._priorities()
        priority[[*self.targets, *self._refused]] = 0.0
        if priority.max(initial=0.0) <= 0.0:
            return None
        return int(np.argmax(priority))  # the lowest index among ties

    def _absorb(self, observation: Observation, target: int) -> None:
        slot = len(self._experiments)
        targets = observation["targets"]
        if slot >= targets.size or int(targets[slot]) != target:
            self._refused.add(target)  # the env refused it; do not ask again
            return
        samples = np.array(observation["interventional"][slot], dtype=float)
        self._experiments.append((target, samples))
        self._on_experiment(target, samples)
        self._graph = self._estimate()


# --------------------------------------------------------------------------- pc_active


@dataclass(frozen=True)
class ShiftEvidence:
    """What one experiment ``do(X_target = v)`` says about every variable.

    Attributes:
        target: the intervened node.
        shift: p-value of "``X_j`` has the same distribution as observationally"
            (:func:`acdb_gym.discovery.distribution_shift_pvalue`); NaN at the target.
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

    The shift test is :func:`acdb_gym.discovery.distribution_shift_pvalue` (Welch's t-test on
    the means and the Brown–Forsythe test on the spreads, Bonferroni-combined), computed for all
    variables at once.

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


def shift_pvalues(observational: FloatArray, samples: FloatArray) -> FloatArray:
    """:func:`acdb_gym.discovery.distribution_shift_pvalue` of every column, vectorised.

    Args:
        observational: ``(n_obs, d)`` samples, ``n_obs >= 2``.
        samples: ``(n_int, d)`` samples, ``n_int >= 2``.

    Returns:
        ``(d,)`` p-values, equal to calling ``distribution_shift_pvalue`` column by column.
    """
    # The target's column is constant under its own intervention: scipy warns, the p-value is
    # undefined (NaN) and counts as no evidence, exactly as in distribution_shift_pvalue.
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p_mean = stats.ttest_ind(observational, samples, axis=0, equal_var=False).pvalue
        deviations = [
            np.abs(group - np.median(group, axis=0)) for group in (observational, samples)
        ]
        p_var = stats.f_oneway(*deviations, axis=0).pvalue
    p_mean = np.where(np.isfinite(p_mean), p_mean, 1.0)
    p_var = np.where(np.isfinite(p_var), p_var, 1.0)
    combined = np.minimum(1.0, 2.0 * np.minimum(p_mean, p_var))
    obs_constant = observational.min(axis=0) == observational.max(axis=0)
    int_constant = samples.min(axis=0) == samples.max(axis=0)
    both = obs_constant & int_constant
    same = observational[0] == samples[0]
    return np.where(both, np.where(same, 1.0, 0.0), combined)


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
        p_value = 2.0 * stats.t.sf(np.abs(mean_residual / std_error), dof)
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


class PCActiveAgent(AdaptiveAgent):
    """PC, then adaptive experiments whose shift tests correct and complete PC's graph.

    After PC on the observational data, every experiment ``do(X_t)`` is tested against the
    observational data at every variable (:func:`shift_evidence`), and the graph is rebuilt
    from PC's graph and all experiments so far (:func:`combine_shift_evidence`: skeleton repair,
    orientation of the edges at each target with abstention, the descendant cut, Meek's rules,
    then PC's orientations where the experiments say nothing). The next target has the most
    undirected edges; what happens once nothing is undirected is set by ``leftover``. The
    episode ends when the budget is spent or nothing is left to do.

    Defaults were chosen on generated instances outside the ladder manifests: ``pc_alpha``
    0.05 (0.1 and 0.2 add more false edges than they recover on v1), ``no_shift_threshold``
    0.05 (a wider abstention band leaves too much undirected at ``n_int = 20``).

    Args:
        pc_alpha: significance level of PC's independence tests, in ``(0, 1)``.
        alpha: significance level of "shifted", in ``(0, 1)``.
        no_shift_threshold: p-value above which "not shifted" is accepted, in ``[alpha, 1)``.
        shift: intervention value in observational standard deviations above the mean.
        repair_skeleton: add edges with a detected direct effect, remove edges refuted by two
            experiments.
        leftover: what to do with budget left once nothing is undirected (:data:`Leftover`);
            the settled pairs are those oriented by experiments (and Meek's rules from them),
            not by PC alone.
    """

    name = "pc_active"

    def __init__(
        self,
        *,
        pc_alpha: float = 0.05,
        alpha: float = 0.01,
        no_shift_threshold: float = 0.05,
        shift: float = 4.0,
        repair_skeleton: bool = True,
        leftover: Leftover = "explore",
    ) -> None:
        super().__init__(shift=shift, leftover=leftover)
        if not 0.0 < pc_alpha < 1.0:
            raise ValueError(f"pc_alpha must be in (0, 1), got {pc_alpha}")
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if not alpha <= no_shift_threshold < 1.0:
            raise ValueError(
                f"no_shift_threshold must be in [alpha, 1) = [{alpha}, 1), got {no_shift_threshold}"
            )
        self.pc_alpha = pc_alpha
        self.alpha = alpha
        self.no_shift_threshold = no_shift_threshold
        self.repair_skeleton = repair_skeleton

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._pc_graph = pc_cpdag(observation["observational"], alpha=self.pc_alpha)
        self._evidence: list[ShiftEvidence] = []
        super().reset(observation, info)

    def _on_experiment(self, target: int, samples: FloatArray) -> None:
        direct_for = ~self._pc_graph.skeleton()[target] if self.repair_skeleton else None
        self._evidence.append(
            shift_evidence(self._observational, target, samples, direct_for=direct_for)
        )

    def _estimate(self) -> PDAG:
        combined = combine_shift_evidence(
            self._pc_graph,
            self._evidence,
            alpha=self.alpha,
            no_shift_threshold=self.no_shift_threshold,
            repair_skeleton=self.repair_skeleton,
        )
        self._settled_pairs = combined.settled
        return combined.graph

    def _settled(self) -> BoolMatrix:
        return self._settled_pairs


# --------------------------------------------------------------------------- gies_active


class GIESActiveAgent(AdaptiveAgent):
    """Score-based search on all data pooled, with adaptive experiments.

    Every estimate maximises the interventional BIC (GIES's score: hard interventions drop the
    target's own likelihood term in its intervened rows) over all data seen so far with
    :func:`acdb_gym.discovery.greedy_interventional_search`, warm-started from the previous
    estimate's DAG, and is the interventional essential graph of the best DAG for the targets so
    far. The next target has the most undirected edges in that graph; what happens once nothing
    is undirected is set by ``leftover``. The episode ends when the budget is spent or nothing
    is left to do.

    The default ``penalty`` of 2 was chosen on generated instances outside the ladder
    manifests: the plain BIC (1) adds false edges at small samples and at ``d = 30``.

    Args:
        penalty: BIC penalty multiplier (1 is the BIC; larger gives sparser graphs).
        shift: intervention value in observational standard deviations above the mean.
        tabu_steps: worsening moves the search may take to leave a local optimum.
        restarts: perturbed restarts of the search per estimate.
        leftover: what to do with budget left once nothing is undirected (:data:`Leftover`);
            the unsettled pairs are those oriented by observational v-structures alone.
    """

    name = "gies_active"

    def __init__(
        self,
        *,
        penalty: float = 2.0,
        shift: float = 4.0,
        tabu_steps: int = 30,
        restarts: int = 3,
        leftover: Leftover = "explore",
    ) -> None:
        super().__init__(shift=shift, leftover=leftover)
        _check_positive("penalty", penalty)
        if tabu_steps < 0 or restarts < 0:
            raise ValueError(
                f"tabu_steps and restarts must be >= 0, got {tabu_steps} and {restarts}"
            )
        self.penalty = penalty
        self.tabu_steps = tabu_steps
        self.restarts = restarts

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._dag: DAG | None = None
        super().reset(observation, info)

    def _estimate(self) -> PDAG:
        result = greedy_interventional_search(
            self._observational,
            self._experiments,
            penalty=self.penalty,
            tabu_steps=self.tabu_steps,
            restarts=self.restarts,
            start=self._dag,
        )
        self._dag = result.dag
        return result.essential_graph

    def _settled(self) -> BoolMatrix:
        # Pairs at a target, and pairs the targets oriented through Meek's rules (directed in
        # the interventional essential graph, undirected in the DAG's CPDAG). What stays
        # unsettled rests on observational v-structures alone.
        assert self._dag is not None
        directed = self._graph.directed | self._graph.directed.T
        return super()._settled() | (directed & cpdag(self._dag).undirected)
