"""Several episodes of one agent on one instance, averaged into one result row (the random
baseline's 100 draws, DESIGN §9).

:func:`run_draws` runs ``draws`` episodes of an agent on the same instance. For an agent that
submits a DAG drawn from ``d`` alone at its first step, without reading the data or
experimenting (a :class:`BlindAgent`: the random baseline), every episode of the loop would be
a reset, one ``submit`` step and its score: the env is reset once, the agent draws all its
submissions at once (the same draws, from the same generator, in the same order as its
``act`` would) and :func:`~acdb_gym.core.many_scores.score_dags` scores them in one pass. Each
result equals the one :func:`~acdb_gym.agents.base.run_episode` returns for that draw, score
for score, apart from its trajectory and submitted graph (neither is kept: a row of several
draws records neither) and its wall time. A single draw, draws without a manifest index (each
reset then draws its own instance), a world with hidden confounders, an env without privileged
access, or any other agent runs the episodes one by one.
"""

from __future__ import annotations

import time
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from acdb_gym.agents.base import Agent, EpisodeResult, run_episode
from acdb_gym.core.many_scores import score_dags
from acdb_gym.envs.episode_rules import RewardName, reward_of
from acdb_gym.envs.privileged import hidden_instance_of

__all__ = ["BlindAgent", "run_draws"]


@runtime_checkable
class BlindAgent(Agent, Protocol):
    """An agent whose every episode submits, at its first step, a DAG drawn from the node count
    alone (its :meth:`act` ignores the observation)."""

    def draw_adjacencies(self, n_nodes: int, count: int) -> np.ndarray:
        """The adjacencies (boolean ``(count, n_nodes, n_nodes)``) of the DAGs the next
        ``count`` episodes would submit, drawn exactly as those episodes' :meth:`act` would."""
        ...


def run_draws(
    env: gym.Env[Any, Any], agent: Agent, *, draws: int, manifest_index: int | None = None
) -> list[EpisodeResult]:
    """``draws`` episodes of ``agent`` on the instance of ``manifest_index`` (see the module
    docstring): one pass for several draws of a :class:`BlindAgent` on a causally sufficient
    world, else :func:`~acdb_gym.agents.base.run_episode` ``draws`` times (without a
    manifest index, every episode on the instance its reset draws).

    Raises:
        ValueError: ``draws`` is below 1.
    """
    if draws < 1:
        raise ValueError(f"draws must be at least 1, got {draws}")
    # Without a manifest index every reset draws another instance: the loop's episodes then
    # play different worlds, so only a fixed instance's draws are scored at once.
    if draws > 1 and manifest_index is not None and isinstance(agent, BlindAgent):
        results = _drawn_at_once(env, agent, draws, manifest_index)
        if results is not None:
            return results
    return [run_episode(env, agent, manifest_index=manifest_index) for _ in range(draws)]


def _drawn_at_once(
    env: gym.Env[Any, Any], agent: BlindAgent, draws: int, manifest_index: int
) -> list[EpisodeResult] | None:
    """The draws scored in one pass, or None where they must run one by one."""
    start = time.perf_counter()
    _, info = env.reset(options={"manifest_index": manifest_index})
    try:
        instance = hidden_instance_of(env)
    except TypeError:
        return None
    if getattr(instance, "latent_truth", None) is not None:
        return None
    reports = score_dags(instance, agent.draw_adjacencies(int(info["n_nodes"]), draws))
    reward_name: RewardName = getattr(env.unwrapped, "reward_name", "directed_f1")
    stats = getattr(agent, "episode_stats", None)
    wall_time = (time.perf_counter() - start) / draws
    return [
        EpisodeResult(
            score=report,
            reward=reward_of(report, reward_name),
            steps=1,
            interventions=0,
            invalid_actions=0,
            truncated=False,
            trajectory=(),
            wall_time=wall_time,
            extra=dict(stats()) if callable(stats) else {},
        )
        for report in reports
    ]
