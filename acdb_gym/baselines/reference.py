"""The reachability reference (DESIGN §7, "Frontier ladder"): an agent that keeps a level's
budget and samples but is given what today's agents lack, to show the level's headroom is in
what an agent can collect.

:class:`ClassReferenceAgent` (``class_reference``, privileged) is told two things an agent is
not: the **mechanism class** of the level's family (it scores graphs with
:class:`~acdb_gym.discovery.class_bic.FeatureBIC` on the family's features,
:data:`~acdb_gym.discovery.class_bic.CLASS_FEATURES`, instead of ``bic_active``'s linear
regressions) and the **best experiments** of the budget (the minimum intervention set ``I*``,
or :func:`~acdb_gym.core.graphs.best_intervention_set` where the budget is below ``|I*|``).
It runs them in order through ``env.step`` at ``mean + 4 sd`` as ``bic_active`` does, re-fits
after each, spends what the budget has left as ``bic_active`` would (the node with the most
undirected edges of its estimate, then the rest), and submits the interventional essential
graph of the best DAG found. It never
reads the true graph, weights or data beyond what the env returns; where it reaches a score,
an agent with the same data could, given a better model and better design.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from acdb_gym.baselines.active import AdaptiveAgent
from acdb_gym.core.graphs import DAG, PDAG, best_intervention_set
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.discovery.class_bic import CLASS_FEATURES, class_interventional_search

__all__ = ["ClassReferenceAgent", "reference_targets"]

Observation = Mapping[str, Any]

Design = Literal["best", "adaptive"]
"""How the reference picks its experiments: ``"best"``, the budget's best targets first
(privileged), then ``bic_active``'s rule for what the budget has left; ``"adaptive"``,
``bic_active``'s rule throughout (an ablation: the mechanism class without the design)."""


def reference_targets(instance: Instance) -> tuple[int, ...]:
    """The experiments the reference runs on ``instance``, ascending: the at most ``budget``
    targets that identify the most (``I*`` when the budget allows it)."""
    chosen = best_intervention_set(instance.dag, instance.budget, instance.intervention_targets)
    return tuple(sorted(chosen))


class ClassReferenceAgent(AdaptiveAgent):
    """The interventional BIC on the level's mechanism class, on the best experiments of the
    budget (privileged: the family and the instance's best target set).

    Args:
        penalty: the BIC penalty multiplier of :class:`~acdb_gym.discovery.class_bic.FeatureBIC`
            (1 is the BIC; chosen on generated seeds, never on a manifest index).
        shift: intervention value in observational standard deviations above the mean.
        tabu_steps: worsening moves the search may take (see ``hill_climb``).
        restarts: perturbed restarts of the search per estimate.
        design: ``"best"`` or ``"adaptive"`` (:data:`Design`).
    """

    name = "class_reference"
    privileged = True

    def __init__(
        self,
        *,
        penalty: float = 1.0,
        shift: float = 4.0,
        tabu_steps: int = 30,
        restarts: int = 3,
        design: Design = "best",
    ) -> None:
        if design not in get_args(Design):
            raise ValueError(f"design must be one of {list(get_args(Design))}, got {design!r}")
        super().__init__(shift=shift, leftover="explore")
        self.design: Design = design
        self.penalty = penalty
        self.tabu_steps = tabu_steps
        self.restarts = restarts
        self._plan: tuple[int, ...] | None = None
        self._features: tuple[str, ...] = CLASS_FEATURES["linear_gaussian"]

    def observe_instance(self, instance: Instance) -> None:
        """Take the family's mechanism class and the budget's best targets (never the graph
        itself: the search starts from the empty graph and sees only the env's data)."""
        self._features = CLASS_FEATURES[instance.spec.family]
        self._plan = reference_targets(instance)

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        if self._plan is None:
            raise RuntimeError("class_reference needs the instance: run it through run_episode")
        self._dag: DAG | None = None
        super().reset(observation, info)

    def _estimate(self) -> PDAG:
        result = class_interventional_search(
            self._observational,
            self._experiments,
            features=self._features,
            penalty=self.penalty,
            start=self._dag,
            tabu_steps=self.tabu_steps,
            restarts=self.restarts,
        )
        self._dag = result.dag
        return result.essential_graph

    def _next_target(self, observation: Observation) -> int | None:
        if self.design == "best" and (
            int(observation["budget_remaining"][0]) > 0
            and int(observation["steps_remaining"][0]) > 1
        ):
            assert self._plan is not None
            done = {*self.targets, *self._refused}
            planned = next((t for t in self._plan if t not in done), None)
            if planned is not None:
                return planned
        return super()._next_target(observation)
