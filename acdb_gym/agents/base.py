"""The agent protocol and the episode runner (DESIGN §9).

Every policy — classical, LLM or RL — is an :class:`Agent` and acts only through ``env.step``.
A privileged agent (the oracle) declares ``privileged = True`` and receives the hidden instance
from :func:`run_episode` through :meth:`PrivilegedAgent.observe_instance`; nothing else hands
the instance to an agent.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.scoring import ScoreReport
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.envs.hypotheses import RevisionRecord
from acdb_gym.envs.privileged import hidden_instance_of

__all__ = [
    "Agent",
    "AsyncAgent",
    "EpisodeResult",
    "PrivilegedAgent",
    "StepRecord",
    "agent_info",
    "run_episode",
    "run_episode_async",
]


@runtime_checkable
class Agent(Protocol):
    """A policy for :class:`~acdb_gym.envs.acdb_env.ACDBEnv` (or the design env).

    An agent that states its current graph with each experiment
    (``actions.intervene(var, value, hypothesis=graph)``) also sets a class attribute
    ``states_hypotheses = True``; the sweep then writes the episode's
    :class:`~acdb_gym.envs.hypotheses.RevisionRecord` into its result row.

    Attributes:
        name: short name used in result files (``"pc_greedy"``).
    """

    name: str

    def reset(self, observation: Any, info: Mapping[str, Any]) -> None:
        """Start a new episode from the first observation."""
        ...

    def act(self, observation: Any, info: Mapping[str, Any]) -> Any:
        """Return the next action (an element of the env's action space)."""
        ...


@runtime_checkable
class AsyncAgent(Agent, Protocol):
    """An agent that can also choose its action from an event loop (LLM agents waiting on HTTP),
    so that :func:`run_episode_async` can run many episodes at once."""

    async def act_async(self, observation: Any, info: Mapping[str, Any]) -> Any:
        """:meth:`act`, awaiting instead of blocking; the same action for the same history."""
        ...


@runtime_checkable
class PrivilegedAgent(Agent, Protocol):
    """An agent that is given the hidden instance (an upper-bound reference, never a policy)."""

    privileged: bool

    def observe_instance(self, instance: Instance) -> None:
        """Receive the hidden instance before :meth:`reset`."""
        ...


@dataclass(frozen=True)
class StepRecord:
    """One step of a trajectory: the typed action (as text), reward and any error."""

    action: str
    reward: float
    error: str | None


@dataclass(frozen=True)
class EpisodeResult:
    """The outcome of one episode.

    Attributes:
        score: the final :class:`~acdb_gym.core.scoring.ScoreReport` (``score.directed_f1``;
            the env's ``info["score"]`` dict read back once, :meth:`ScoreReport.from_dict`).
        reward: the final reward.
        steps: steps taken.
        interventions: interventions used.
        invalid_actions: steps whose action was invalid.
        truncated: the step limit ended the episode (the empty graph was scored).
        trajectory: every step, in order.
        wall_time: seconds from reset to the last step.
        extra: agent-specific statistics (e.g. LLM token counts).
        revision: the hypotheses stated with each experiment and the submission (the final
            ``info["revision"]``); None for an env that keeps no such record.
        submission: the scored graph (the final ``info["submission"]``); None for an env that
            does not report it.
    """

    score: ScoreReport
    reward: float
    steps: int
    interventions: int
    invalid_actions: int
    truncated: bool
    trajectory: tuple[StepRecord, ...]
    wall_time: float
    extra: dict[str, Any] = field(default_factory=dict)
    revision: RevisionRecord | None = None
    submission: PDAG | None = None


def agent_info(env: gym.Env[Any, Any], info: Mapping[str, Any]) -> dict[str, Any]:
    """What an agent is given beside the observation: the env's ``info`` (numbers, the same keys
    at every step) and, for an env that has them, its :meth:`details` (the error text, the
    variant's names and, at the end, the scored graph and the report; DESIGN §8, "info").

    ``env`` may be wrapped; an env without ``details()`` gives its ``info`` alone.
    """
    details = getattr(env.unwrapped, "details", None)
    return {**info, **details()} if callable(details) else dict(info)


def _describe(env: gym.Env[Any, Any], action: Any) -> str:
    from acdb_gym.envs import actions

    base = env.unwrapped
    decoded_action = getattr(base, "decoded_action", None)
    decoded = decoded_action(action) if callable(decoded_action) else None
    if decoded is not None:  # the env decoded this very action in its step: not twice
        return repr(decoded)
    n_nodes = getattr(base, "n_nodes", None)
    if isinstance(action, tuple) and n_nodes is not None:
        try:
            return repr(actions.decode(action, n_nodes=n_nodes))
        except (ValueError, KeyError, TypeError):
            pass
    return repr(action)


def run_episode(
    env: gym.Env[Any, Any],
    agent: Agent,
    *,
    seed: int | None = None,
    manifest_index: int | None = None,
    instance: Instance | None = None,
) -> EpisodeResult:
    """Run ``agent`` for one episode of ``env`` and return the result.

    Args:
        env: an ACDB environment (possibly wrapped).
        agent: the policy.
        seed: seed for ``env.reset``.
        manifest_index: use the level's preflighted instance of this index.
        instance: inject this instance instead.
    """
    episode = _episode(env, agent, seed, manifest_index, instance)
    request = next(episode)
    while True:
        try:
            request = episode.send(agent.act(*request))
        except StopIteration as stop:
            result: EpisodeResult = stop.value
            return result


async def run_episode_async(
    env: gym.Env[Any, Any],
    agent: AsyncAgent,
    *,
    seed: int | None = None,
    manifest_index: int | None = None,
    instance: Instance | None = None,
) -> EpisodeResult:
    """:func:`run_episode` awaiting ``agent.act_async``: the same episode, step for step, while
    other episodes of the event loop run during the agent's waits. The env steps themselves
    run in the loop (they take microseconds to milliseconds)."""
    episode = _episode(env, agent, seed, manifest_index, instance)
    request = next(episode)
    while True:
        try:
            request = episode.send(await agent.act_async(*request))
        except StopIteration as stop:
            result: EpisodeResult = stop.value
            return result


def _episode(
    env: gym.Env[Any, Any],
    agent: Agent,
    seed: int | None,
    manifest_index: int | None,
    instance: Instance | None,
) -> Generator[tuple[Any, dict[str, Any]], Any, EpisodeResult]:
    """One episode as a generator: it yields ``(observation, info)`` for the agent to act on and
    receives the action, so the blocking and the async runner share every step."""
    start = time.perf_counter()
    observation, info = _begin(env, agent, seed, manifest_index, instance)
    trajectory: list[StepRecord] = []
    reward = 0.0
    terminated = truncated = False
    while not (terminated or truncated):
        action = yield observation, info
        observation, step_reward, terminated, truncated, info = env.step(action)
        info = agent_info(env, info)
        reward = float(step_reward)
        trajectory.append(StepRecord(_describe(env, action), reward, info.get("error")))
    return _finish(agent, info, reward, trajectory, truncated, start)


def _begin(
    env: gym.Env[Any, Any],
    agent: Agent,
    seed: int | None,
    manifest_index: int | None,
    instance: Instance | None,
) -> tuple[Any, dict[str, Any]]:
    """Reset the env, hand a privileged agent its instance, reset the agent."""
    options: dict[str, Any] = {}
    if manifest_index is not None:
        options["manifest_index"] = manifest_index
    if instance is not None:
        options["instance"] = instance
    observation, info = env.reset(seed=seed, options=options or None)
    info = agent_info(env, info)
    if getattr(agent, "privileged", False):
        if not isinstance(agent, PrivilegedAgent):
            raise TypeError(
                f"agent {agent.name!r} declares privileged = True but has no observe_instance()"
            )
        agent.observe_instance(hidden_instance_of(env))
    agent.reset(observation, info)
    return observation, info


def _finish(
    agent: Agent,
    info: dict[str, Any],
    reward: float,
    trajectory: list[StepRecord],
    truncated: bool,
    start: float,
) -> EpisodeResult:
    wall_time = time.perf_counter() - start
    stats = getattr(agent, "episode_stats", None)
    extra = dict(stats()) if callable(stats) else {}
    report = ScoreReport.from_dict(info["score"])
    return EpisodeResult(
        score=report,
        reward=reward,
        steps=len(trajectory),
        interventions=report.interventions_used,
        invalid_actions=sum(1 for s in trajectory if s.error is not None),
        truncated=bool(truncated),
        trajectory=tuple(trajectory),
        wall_time=wall_time,
        extra=extra,
        revision=info.get("revision"),
        submission=info.get("submission"),
    )
