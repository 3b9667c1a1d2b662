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
  :func:`acdb_gym.discovery.combine_shift_evidence`).
* :class:`BICActiveAgent` (``bic_active``; ``gies_active`` before, still available as the
  deprecated :class:`GIESActiveAgent`): a greedy search over DAGs on all data pooled with the
  interventional Gaussian BIC (:func:`acdb_gym.discovery.greedy_interventional_search`; GIES's
  score, not GIES's search), returning the interventional essential graph of the best DAG found.

Targeting is greedy on the current estimate: the node with the most undirected edges (ties: the
lowest index), never the same node twice, and only among the nodes an experiment exists for
where the level restricts them (``info["experiment_targets"]``). Intervening on a node orients every edge at it, and
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
from collections.abc import Mapping
from typing import Any, Literal, get_args

import numpy as np

from acdb_gym.baselines.classical import InterveneThenSubmit, experiment_mask
from acdb_gym.core.graphs import DAG, PDAG, cpdag
from acdb_gym.core.types import BoolMatrix, FloatArray
from acdb_gym.discovery import (
    ShiftEvidence,
    combine_shift_evidence,
    greedy_interventional_search,
    shared_pc_cpdag,
    shift_evidence,
)
from acdb_gym.envs.actions import VALUE_BOUND

__all__ = [
    "AdaptiveAgent",
    "BICActiveAgent",
    "GIESActiveAgent",
    "Leftover",
    "PCActiveAgent",
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
  ``t`` is how ``pc_active`` finds the children of ``t`` that PC missed; ``bic_active`` gets
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
        self._allowed = experiment_mask(info, self._observational.shape[1])
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
        if (
            int(observation["budget_remaining"][0]) <= 0
            or int(observation["steps_remaining"][0]) <= 1
        ):
            return None
        priority = self._priorities()
        priority[[*self.targets, *self._refused]] = 0.0
        priority[~self._allowed] = 0.0
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


class PCActiveAgent(AdaptiveAgent):
    """PC, then adaptive experiments whose shift tests correct and complete PC's graph.

    After PC on the observational data, every experiment ``do(X_t)`` is tested against the
    observational data at every variable (:func:`acdb_gym.discovery.shift_evidence`), and the
    graph is rebuilt from PC's graph and all experiments so far
    (:func:`acdb_gym.discovery.combine_shift_evidence`: skeleton repair,
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
        self._pc_graph = self._start_graph(observation["observational"])
        self._evidence: list[ShiftEvidence] = []
        super().reset(observation, info)

    def _start_graph(self, observational: FloatArray) -> PDAG:
        """The observational estimate the experiments correct: PC's CPDAG."""
        return shared_pc_cpdag(observational, alpha=self.pc_alpha)

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


# --------------------------------------------------------------------------- bic_active


class BICActiveAgent(AdaptiveAgent):
    """Greedy search on the interventional Gaussian BIC of all data pooled, with adaptive
    experiments.

    Every estimate maximises the interventional BIC (GIES's score, not GIES's search: hard
    interventions drop the target's own likelihood term in its intervened rows) over all data
    seen so far with
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

    name = "bic_active"

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


class GIESActiveAgent(BICActiveAgent):
    """Deprecated alias of :class:`BICActiveAgent` under its former name ``gies_active``.

    The agent never ran GIES's search (only its score), hence the new name. Constructing this
    class warns; its episodes are exactly those of :class:`BICActiveAgent` with the same
    arguments.
    """

    name = "gies_active"

    def __init__(self, **arguments: Any) -> None:
        warnings.warn(
            "GIESActiveAgent (gies_active) is deprecated: it is BICActiveAgent (bic_active), "
            "a greedy search on GIES's score, not GIES",
            DeprecationWarning,
            stacklevel=2,
        )
        super().__init__(**arguments)
