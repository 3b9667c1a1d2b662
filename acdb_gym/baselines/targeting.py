"""Targeting baselines on the intervention-design env, and a paired comparison of targeters.

The design env (:class:`~acdb_gym.envs.design.env.InterventionDesignEnv`) fixes the estimator
(PC or the true CPDAG, then orientation tests and Meek's rules); an agent only chooses where to
intervene and when to stop. These agents share the env's estimator by reading its observation
(:class:`~acdb_gym.envs.design.env.DesignObservation`: the current estimate, the intervened
nodes and the budget fraction, which gives exactly the env's ``action_masks()``), so they are
the references an RL policy has to beat:

* :class:`RandomTargeting`: a uniformly random node not yet intervened on, until the budget is
  spent (or every node was tried), then stop.
* :class:`GreedyTargeting`: the node with the most undirected edges in the current estimate
  (ties: lowest index; intervened nodes excluded); stop when no candidate has one.
* :class:`PCActiveTargeting`: ``pc_active``'s rule (:mod:`acdb_gym.baselines.active`, with
  its default ``leftover="explore"``) on the design env's estimate: greedy while an edge is
  undirected, then the node with the most edges no experiment has settled, then any untried
  node (highest degree first), until the budget is spent.
* :class:`ParentRichTargeting` (privileged): the untried node with the most undirected
  neighbours that are its true parents: the targeter that profits most from an estimator that
  reads a test finding nothing as "the neighbour is a parent" (the shortcut gate's probe,
  DESIGN §8).
* :class:`OracleTargeting` (privileged): the minimum intervention set ``I*`` of the hidden
  DAG in ascending order, then stop. With ``estimator="true_cpdag"`` it identifies the whole
  DAG up to test errors: an upper bound on targeting. With PC's errors in the starting graph it
  is a reference, not a bound.

:func:`evaluate_targeting` runs several targeters on the same held-out instances and
:func:`sign_flip_p_value` tests paired differences.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from acdb_gym.agents.base import Agent, run_episode
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.envs.design.observation import DesignObservation

__all__ = [
    "GreedyTargeting",
    "OracleTargeting",
    "PCActiveTargeting",
    "ParentRichTargeting",
    "RandomTargeting",
    "TargetingResult",
    "evaluate_targeting",
    "sign_flip_p_value",
    "stratified_sign_flip_p_value",
]


def _candidates(decoded: DesignObservation) -> np.ndarray:
    """Valid intervention targets not yet intervened on (boolean, length ``d``)."""
    n_nodes = decoded.intervened.size
    return decoded.action_mask[:n_nodes] & ~decoded.intervened


class RandomTargeting:
    """Intervenes on uniformly random untried nodes until the budget is spent, then stops.

    Args:
        seed: seed of the agent's own generator (episodes draw from it in sequence).
    """

    name = "random_targeting"

    def __init__(self, *, seed: int = 0) -> None:
        self._rng = np.random.default_rng(seed)

    def reset(self, observation: Any, info: Mapping[str, Any]) -> None:
        """Nothing to prepare: every decision reads the current observation."""

    def act(self, observation: Any, info: Mapping[str, Any]) -> np.int64:
        """A random untried valid target, or "stop" (``d``) when there is none."""
        decoded = DesignObservation.decode(observation)
        candidates = np.flatnonzero(_candidates(decoded))
        if candidates.size == 0:
            return np.int64(decoded.intervened.size)
        return np.int64(self._rng.choice(candidates))


class GreedyTargeting:
    """Intervenes on the untried node with the most undirected edges in the current estimate
    (ties: lowest index) and stops when no candidate has an undirected edge or the budget is
    spent: ``pc_greedy``'s targeting rule on the design env's estimator."""

    name = "greedy_targeting"

    def reset(self, observation: Any, info: Mapping[str, Any]) -> None:
        """Nothing to prepare: every decision reads the current observation."""

    def act(self, observation: Any, info: Mapping[str, Any]) -> np.int64:
        """The candidate of highest undirected degree, or "stop" (``d``)."""
        decoded = DesignObservation.decode(observation)
        degree = decoded.estimate.undirected.sum(axis=1)
        degree[~_candidates(decoded)] = 0
        if degree.max(initial=0) == 0:
            return np.int64(decoded.intervened.size)
        return np.int64(np.argmax(degree))  # argmax returns the lowest index among ties


class PCActiveTargeting:
    """``pc_active``'s targeting rule on the design env: the untried node with the most
    undirected edges; when none has one, the most edges not settled by an experiment (no
    intervened endpoint); then one plus its degree, so any untried node; ties: lowest index.
    Stops only when the budget is spent or every node was tried."""

    name = "pc_active_targeting"

    def reset(self, observation: Any, info: Mapping[str, Any]) -> None:
        """Nothing to prepare: every decision reads the current observation."""

    def act(self, observation: Any, info: Mapping[str, Any]) -> np.int64:
        """The candidate of highest priority, or "stop" (``d``)."""
        decoded = DesignObservation.decode(observation)
        graph = decoded.estimate
        skeleton = graph.directed | graph.directed.T | graph.undirected
        touched = decoded.intervened
        unsettled = skeleton & ~(touched[:, None] | touched[None, :])
        candidates = _candidates(decoded)
        for priority in (
            graph.undirected.sum(axis=1),
            unsettled.sum(axis=1),
            1 + skeleton.sum(axis=1),
        ):
            priority = np.where(candidates, priority, 0)
            if priority.max(initial=0) > 0:
                return np.int64(np.argmax(priority))
        return np.int64(decoded.intervened.size)


class ParentRichTargeting:
    """Intervenes on the untried node whose undirected neighbours in the current estimate are
    most often its true parents (ties: more undirected edges, then the lowest index), until the
    budget is spent or no untried node has an undirected edge.

    Privileged (it reads the hidden DAG): a probe, not a policy. An experiment on a node whose
    neighbours are its parents moves none of them, so an estimator that orients "neighbour ->
    target" whenever a test sees nothing scores such experiments as right at any sample size;
    this targeter is the upper bound of what a policy can gain from that default. Under an
    estimator that orients only on evidence it should gain nothing over the reference rules.
    """

    name = "parent_rich_targeting"
    privileged = True

    def __init__(self) -> None:
        self._parents: np.ndarray | None = None

    def observe_instance(self, instance: Instance) -> None:
        """Receive the hidden instance (before :meth:`reset`)."""
        self._parents = np.asarray(instance.dag.adjacency).T  # [t, j]: j is a parent of t

    def reset(self, observation: Any, info: Mapping[str, Any]) -> None:
        """Check that the instance was handed over."""
        if self._parents is None:
            raise RuntimeError("the probe needs the instance: run it through run_episode")

    def act(self, observation: Any, info: Mapping[str, Any]) -> np.int64:
        """The candidate with the most undirected parent-neighbours, or "stop" (``d``)."""
        assert self._parents is not None
        decoded = DesignObservation.decode(observation)
        undirected = decoded.estimate.undirected
        candidates = _candidates(decoded) & undirected.any(axis=1)
        if not candidates.any():
            return np.int64(decoded.intervened.size)
        parents = (undirected & self._parents).sum(axis=1)
        degree = undirected.sum(axis=1)
        key = np.where(candidates, parents * (degree.max() + 1) + degree, -1)
        return np.int64(np.argmax(key))


class OracleTargeting:
    """Intervenes on the hidden minimum intervention set ``I*`` (ascending), then stops.

    Privileged: :func:`~acdb_gym.agents.base.run_episode` hands it the hidden instance (from
    :func:`~acdb_gym.envs.privileged.hidden_instance_of`), whose ``i_star`` it reads. The budget
    ``|I*| + slack`` always covers ``I*``.
    """

    name = "oracle_targeting"
    privileged = True

    def __init__(self) -> None:
        self._i_star: tuple[int, ...] | None = None

    def observe_instance(self, instance: Instance) -> None:
        """Receive the hidden instance (before :meth:`reset`)."""
        self._i_star = tuple(sorted(instance.i_star))

    def reset(self, observation: Any, info: Mapping[str, Any]) -> None:
        """Check that the instance was handed over."""
        if self._i_star is None:
            raise RuntimeError("the oracle needs the instance: run it through run_episode")

    def act(self, observation: Any, info: Mapping[str, Any]) -> np.int64:
        """The next node of ``I*`` not yet intervened on, or "stop" (``d``)."""
        assert self._i_star is not None
        decoded = DesignObservation.decode(observation)
        candidates = _candidates(decoded)
        for node in self._i_star:
            if candidates[node]:
                return np.int64(node)
        return np.int64(decoded.intervened.size)


# --------------------------------------------------------------------------- comparison
@dataclass(frozen=True)
class TargetingResult:
    """Per-instance outcomes of one targeter, in the order of the instances.

    Attributes:
        rewards: terminal rewards (the env's score, ``directed_f1`` by default).
        interventions: interventions used.
        seeds: the instances' seeds.
    """

    rewards: np.ndarray
    interventions: np.ndarray
    seeds: tuple[int, ...]

    @property
    def mean_reward(self) -> float:
        """Mean terminal reward."""
        return float(self.rewards.mean())

    @property
    def standard_error(self) -> float:
        """Standard error of the mean reward (0 for a single instance)."""
        n = self.rewards.size
        return float(self.rewards.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0


def evaluate_targeting(
    env: gym.Env[Any, Any], agents: Mapping[str, Agent], instances: Sequence[Instance]
) -> dict[str, TargetingResult]:
    """Run every agent for one episode on each instance (injected through ``reset``).

    Args:
        env: a design env (possibly wrapped); its estimator is shared by all agents.
        agents: targeters by label (privileged ones receive the instance).
        instances: the evaluation instances, e.g. held-out seeds.

    Returns:
        One :class:`TargetingResult` per label, paired by instance.
    """
    results = {}
    seeds = tuple(instance.seed for instance in instances)
    for label, agent in agents.items():
        episodes = [run_episode(env, agent, instance=instance) for instance in instances]
        results[label] = TargetingResult(
            rewards=np.array([episode.reward for episode in episodes]),
            interventions=np.array([episode.interventions for episode in episodes]),
            seeds=seeds,
        )
    return results


def _mean(sample: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(sample, axis=axis)


def sign_flip_p_value(
    a: np.ndarray, b: np.ndarray, *, n_resamples: int = 10_000, seed: int = 0
) -> float:
    """Two-sided paired sign-flip test of ``mean(a - b) = 0``.

    ``scipy.stats.permutation_test`` with ``permutation_type="samples"`` on the per-instance
    differences (exact when ``2**n <= n_resamples``); all-zero differences give 1.

    Raises:
        ValueError: ``a`` and ``b`` differ in length or are empty.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"a and b must be non-empty 1-D of one length, got {a.shape}, {b.shape}")
    differences = a - b
    if differences.size == 1 or not differences.any():
        return 1.0
    from scipy import stats  # imported when used: it costs a few tenths of a second

    result = stats.permutation_test(
        (differences,),
        _mean,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        random_state=seed,
    )
    return float(result.pvalue)


def stratified_sign_flip_p_value(
    differences: Sequence[np.ndarray], *, n_resamples: int = 10_000, seed: int = 0
) -> float:
    """Two-sided paired test that the sum over strata (levels) of mean differences is 0.

    Each instance's difference keeps or flips its sign at random, independently (the null:
    within every stratum, the two targeters' outcomes are exchangeable); the statistic is
    ``sum_s mean(differences[s])``, so each stratum weighs the same whatever its size. The
    p-value is ``(1 + #{|resampled| >= |observed|}) / (1 + n_resamples)``.

    Raises:
        ValueError: no strata, or an empty or non-1-D stratum.
    """
    strata = [np.asarray(d, dtype=np.float64) for d in differences]
    if not strata or any(d.ndim != 1 or d.size == 0 for d in strata):
        raise ValueError("differences must be a non-empty list of non-empty 1-D arrays")
    observed = sum(float(d.mean()) for d in strata)
    if all(not d.any() for d in strata):
        return 1.0
    rng = np.random.default_rng(seed)
    resampled = np.zeros(n_resamples)
    for d in strata:
        signs = rng.integers(0, 2, size=(n_resamples, d.size)) * 2 - 1
        resampled += (signs * d).mean(axis=1)
    extreme = np.count_nonzero(np.abs(resampled) >= abs(observed) - 1e-12)
    return float((1 + extreme) / (1 + n_resamples))
