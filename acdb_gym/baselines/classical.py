"""The paper's baselines (DESIGN §9): random DAG, PC, PC + greedy, oracle, and sortnregress,
with the shortcut checks' r2sortnregress, msort (any marginal feature's order) and their
random-order control randregress."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from acdb_gym.core.graphs import PDAG, random_order_dag
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.discovery import (
    MARGINAL_FEATURES,
    orient_by_mean_shift,
    r2sortnregress,
    shared_pc_cpdag,
    sortnregress,
)
from acdb_gym.discovery.sortnregress import (
    SORT_DIRECTIONS,
    SortDirection,
    msortnregress,
    regress_in_order,
)
from acdb_gym.envs import actions

__all__ = [
    "HubOrderAgent",
    "InterveneThenSubmit",
    "MarginalSortRegressAgent",
    "OracleAgent",
    "PCAgent",
    "PCGreedyAgent",
    "R2SortnregressAgent",
    "RandomDAGAgent",
    "RandomOrderRegressAgent",
    "SortnregressAgent",
    "experiment_mask",
]

Observation = Mapping[str, Any]


def experiment_mask(info: Mapping[str, Any], n_nodes: int) -> np.ndarray:
    """Boolean ``(n_nodes,)`` of the nodes an experiment exists for: ``info["experiment_targets"]``
    on a level that restricts the targets (DESIGN §8), else every node."""
    targets = info.get("experiment_targets")
    mask = np.ones(n_nodes, dtype=bool)
    if targets is not None:
        mask[:] = False
        mask[list(targets)] = True
    return mask


def random_forward_dag(n_nodes: int, rng: np.random.Generator) -> PDAG:
    """The structure-blind random graph: a uniform random order, ``m ~ U{0..M}``, and ``m``
    of the order's forward pairs chosen uniformly (:func:`~acdb_gym.core.graphs.random_order_dag`
    with ``n_edges="uniform"``)."""
    return random_order_dag(n_nodes, n_edges="uniform", rng=rng).to_pdag()


class RandomDAGAgent:
    """Submits a random DAG drawn using only ``d`` (no data, no ``k``, no interventions).

    Args:
        seed: seed of the agent's own generator (episodes draw from it in sequence).
    """

    name = "random"

    def __init__(self, *, seed: int = 0) -> None:
        self._rng = np.random.default_rng(seed)

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._n_nodes = int(info["n_nodes"])

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        return actions.submit(random_forward_dag(self._n_nodes, self._rng))

    def draw_adjacencies(self, n_nodes: int, count: int) -> np.ndarray:
        """The next ``count`` episodes' submissions as one boolean ``(count, d, d)`` stack,
        drawn as ``count`` calls of :meth:`act` would (:class:`~acdb_gym.agents.draws.BlindAgent`:
        the sweep scores the random baseline's draws in one pass)."""
        stack = np.zeros((count, n_nodes, n_nodes), dtype=np.bool_)
        for draw in stack:
            draw[:] = random_order_dag(n_nodes, n_edges="uniform", rng=self._rng).adjacency
        return stack


class PCAgent:
    """Submits causal-learn PC's CPDAG of the observational data (Fisher-z, ``alpha``)."""

    name = "pc"

    def __init__(self, *, alpha: float = 0.05) -> None:
        self.alpha = alpha

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._graph = shared_pc_cpdag(observation["observational"], alpha=self.alpha)

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        return actions.submit(self._graph)


class SortnregressAgent:
    """Submits sortnregress's DAG (variance order + significant regression coefficients), the
    variance-sortability check: it should be no better than random on standardized SCMs."""

    name = "sortnregress"

    def __init__(self, *, alpha: float = 0.01) -> None:
        self.alpha = alpha

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._graph = sortnregress(observation["observational"], alpha=self.alpha)

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        return actions.submit(self._graph)


class R2SortnregressAgent:
    """Submits r2sortnregress's DAG (R² order + significant regression coefficients), the
    R²-sortability check (Reisach et al. 2023): unlike sortnregress it survives
    standardization, so on v1 it measures whether the order still leaks through R²."""

    name = "r2sortnregress"

    def __init__(self, *, alpha: float = 0.01) -> None:
        self.alpha = alpha

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._graph = r2sortnregress(observation["observational"], alpha=self.alpha)

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        return actions.submit(self._graph)


class MarginalSortRegressAgent:
    """Submits :func:`~acdb_gym.discovery.sortnregress.msortnregress`'s DAG: regressions in the
    order of a marginal feature of the observational sample (the agent ``msort:FEATURE:DIR``).

    With ``feature="variance", direction="asc"`` it submits sortnregress's graph; the other
    features and directions put the order audit's shortcuts (DESIGN §3.5) into any sweep.

    Args:
        feature: one of :data:`~acdb_gym.discovery.sortability.MARGINAL_FEATURES`.
        direction: ``"asc"`` (smallest value first) or ``"desc"``.
        alpha: significance level of the coefficient tests.

    Raises:
        ValueError: an unknown feature or direction.
    """

    def __init__(self, *, feature: str, direction: SortDirection, alpha: float = 0.01) -> None:
        if feature not in MARGINAL_FEATURES:
            raise ValueError(f"feature must be one of {list(MARGINAL_FEATURES)}, got {feature!r}")
        if direction not in SORT_DIRECTIONS:
            raise ValueError(f"direction must be 'asc' or 'desc', got {direction!r}")
        self.feature, self.direction, self.alpha = feature, direction, alpha
        self.name = f"msort:{feature}:{direction}"

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        self._graph = msortnregress(
            observation["observational"],
            feature=self.feature,
            direction=self.direction,
            alpha=self.alpha,
        )

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        return actions.submit(self._graph)


def hub_order(data: Any, *, alpha: float = 0.05) -> np.ndarray:
    """The nodes by descending degree in PC's skeleton of ``data`` (ties: lowest index first):
    the hub heuristic's causal order (hubs first, as parents)."""
    degree = np.asarray(shared_pc_cpdag(data, alpha=alpha).skeleton()).sum(axis=1)
    return np.argsort(-degree, kind="stable")


class HubOrderAgent:
    """The hub heuristic (the shortcut gate's, DESIGN §7 "Shortcut gate"): regressions in the
    order of descending degree in PC's skeleton, so hubs become parents.

    On scale-free graphs grown by preferential attachment the oldest nodes are both hubs and
    parents, so this order leaks the orientation; on a world whose orientation is independent
    of degree it should do no better than a random order (``randregress``).

    Args:
        pc_alpha: PC's significance level for the skeleton.
        alpha: significance level of the coefficient tests.
    """

    name = "hub"

    def __init__(self, *, pc_alpha: float = 0.05, alpha: float = 0.01) -> None:
        self.pc_alpha, self.alpha = pc_alpha, alpha

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        data = observation["observational"]
        order = hub_order(data, alpha=self.pc_alpha)
        self._graph = regress_in_order(data, order, alpha=self.alpha)

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        return actions.submit(self._graph)


class RandomOrderRegressAgent:
    """sortnregress's (and r2sortnregress's) control: the same regressions in a uniformly
    random order.

    Its regressions find adjacencies but its orientations are at chance, so the gap between
    sortnregress and this agent is what the variance order alone is worth (near zero on a
    ladder without variance sortability).

    Args:
        seed: seed of the agent's own generator for the random orders.
    """

    name = "randregress"

    def __init__(self, *, seed: int = 0, alpha: float = 0.01) -> None:
        self._rng = np.random.default_rng(seed)
        self.alpha = alpha

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        data = observation["observational"]
        order = self._rng.permutation(np.asarray(data).shape[1])
        self._graph = regress_in_order(data, order, alpha=self.alpha)

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        return actions.submit(self._graph)


class OracleAgent:
    """Submits the true DAG (the true ADMG on a level with hidden confounders); privileged (an
    upper bound, never a policy)."""

    name = "oracle"
    privileged = True

    def __init__(self) -> None:
        self._instance: Instance | None = None

    def observe_instance(self, instance: Instance) -> None:
        self._instance = instance

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        if self._instance is None:
            raise RuntimeError("the oracle needs the instance: run it through run_episode")

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        assert self._instance is not None
        admg = self._instance.admg
        return actions.submit(self._instance.dag if admg is None else admg)


class InterveneThenSubmit:
    """The act loop of the adaptive baselines: fold the last experiment into the estimate, then
    intervene on the next target, or submit the estimate when there is none.

    Subclasses keep the estimate in ``_graph`` and ``_pending = None`` from ``reset``, and
    implement :meth:`_next_target`, :meth:`_absorb` and :meth:`_intervention_value`. Every
    intervention states the current estimate as the agent's hypothesis (an annotation: the
    episode is the same without it).
    """

    states_hypotheses = True
    _graph: PDAG
    _pending: int | None

    def act(self, observation: Observation, info: Mapping[str, Any]) -> Any:
        if self._pending is not None:
            self._absorb(observation, self._pending)
            self._pending = None
        target = self._next_target(observation)
        if target is None:
            return actions.submit(self._graph)
        self._pending = target
        return actions.intervene(target, self._intervention_value(target), hypothesis=self._graph)

    def _next_target(self, observation: Observation) -> int | None:
        """The node to intervene on next, or None to submit."""
        raise NotImplementedError

    def _absorb(self, observation: Observation, target: int) -> None:
        """Take in the experiment on ``target`` that the last action asked for."""
        raise NotImplementedError

    def _intervention_value(self, target: int) -> float:
        """The value ``v`` of ``do(X_target = v)``."""
        raise NotImplementedError


class PCGreedyAgent(InterveneThenSubmit):
    """The paper's active baseline, exactly as DESIGN §9 states it.

    After PC, repeatedly intervene on the node with the most undirected edges (ties: lowest
    index; nodes already intervened on are not chosen again) at ``do(X_i = mean_obs(X_i) +
    shift)``; orient each undirected neighbour ``i -> j`` if ``|mean_int(X_j) - mean_obs(X_j)| >
    threshold``, else ``j -> i``, skipping orientations that would close a directed cycle; stop
    when the budget is spent or nothing is undirected, and submit. Where the level restricts
    the targets (``info["experiment_targets"]``) only those nodes are chosen.
    """

    name = "pc_greedy"

    def __init__(self, *, alpha: float = 0.05, shift: float = 3.0, threshold: float = 0.5) -> None:
        self.alpha = alpha
        self.shift = shift
        self.threshold = threshold

    def reset(self, observation: Observation, info: Mapping[str, Any]) -> None:
        data = observation["observational"]
        self._observational = np.asarray(data)
        self._graph = shared_pc_cpdag(data, alpha=self.alpha)
        self._pending: int | None = None
        self._tried: set[int] = set()
        self._allowed = experiment_mask(info, self._observational.shape[1])

    def _intervention_value(self, target: int) -> float:
        return float(self._observational[:, target].mean() + self.shift)

    def _next_target(self, observation: Observation) -> int | None:
        if int(observation["budget_remaining"][0]) <= 0:
            return None
        degree = self._graph.undirected.sum(axis=1)
        degree[list(self._tried)] = 0
        degree[~self._allowed] = 0
        if degree.max(initial=0) == 0:
            return None
        target = int(np.argmax(degree))  # argmax returns the lowest index among ties
        self._tried.add(target)  # every target returned is intervened on
        return target

    def _absorb(self, observation: Observation, target: int) -> None:
        slots = np.flatnonzero(observation["targets"] == target)
        if slots.size == 0:  # the intervention was refused; nothing to learn
            return
        samples = observation["interventional"][slots[-1]]
        self._graph = orient_by_mean_shift(
            self._graph, self._observational, [(target, samples)], threshold=self.threshold
        )
