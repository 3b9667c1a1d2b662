"""run_episode and the Agent protocol."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import acdb_gym  # noqa: F401
from acdb_gym.agents.base import Agent, PrivilegedAgent, run_episode
from acdb_gym.baselines import OracleAgent, PCGreedyAgent, RandomDAGAgent
from acdb_gym.core.graphs import PDAG
from acdb_gym.envs import actions


class _Snoop:
    """A non-privileged agent that would love to see the instance."""

    name = "snoop"

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def observe_instance(self, instance: Any) -> None:  # never called: not privileged
        self.seen.append(instance)

    def reset(self, observation: Any, info: Any) -> None:
        self.n = int(info["n_nodes"])

    def act(self, observation: Any, info: Any) -> Any:
        return actions.correlation(0, 0)  # invalid in the raw variant: costs a step


def test_protocols_are_met_by_the_baselines() -> None:
    assert isinstance(RandomDAGAgent(), Agent)
    assert isinstance(OracleAgent(), PrivilegedAgent)
    assert not isinstance(PCGreedyAgent(), PrivilegedAgent)


def test_only_privileged_agents_receive_the_instance() -> None:
    env = gym.make("ACDB-L0-v0")
    snoop = _Snoop()
    result = run_episode(env, snoop, manifest_index=0)
    assert snoop.seen == []
    assert result.truncated and result.steps == 16 and result.invalid_actions == 16
    assert result.score.shd == result.score.shd_missing  # the empty graph was scored


def test_episode_result_records_the_trajectory() -> None:
    env = gym.make("ACDB-L1-v0")
    result = run_episode(env, PCGreedyAgent(), manifest_index=0)
    assert result.steps == len(result.trajectory) == result.interventions + 1
    assert result.trajectory[-1].action.startswith("Submit(")
    assert all(step.action.startswith("Intervene(") for step in result.trajectory[:-1])
    assert result.reward == result.score.directed_f1
    assert result.wall_time > 0 and not result.truncated


def test_seeded_reset_without_manifest_is_reproducible() -> None:
    env = gym.make("ACDB-L2-v0")
    a = run_episode(env, RandomDAGAgent(seed=3), seed=11)
    b = run_episode(env, RandomDAGAgent(seed=3), seed=11)
    assert a.score == b.score and a.trajectory == b.trajectory


def test_injected_instance_is_used() -> None:
    env = gym.make("ACDB-L1-v0")
    inst = env.unwrapped.level.instance(5)
    result = run_episode(env, OracleAgent(), instance=inst)
    assert result.score.directed_f1 == 1.0
    assert PDAG.empty(6) != inst.dag.to_pdag()


class _PrivilegedWithoutInstanceSlot:
    """Declares privileged access but cannot receive the instance."""

    name = "half_oracle"
    privileged = True

    def reset(self, observation: Any, info: Any) -> None:
        pass

    def act(self, observation: Any, info: Any) -> Any:
        return actions.submit(PDAG.empty(5))


def test_a_privileged_agent_must_be_able_to_receive_the_instance() -> None:
    with pytest.raises(TypeError, match="'half_oracle' declares privileged = True"):
        run_episode(gym.make("ACDB-L0-v0"), _PrivilegedWithoutInstanceSlot(), manifest_index=0)


def test_the_oracle_receives_the_hidden_instance_of_a_wrapped_env() -> None:
    oracle = OracleAgent()
    result = run_episode(gym.make("ACDB-L1-v0"), oracle, manifest_index=3)
    assert result.score.shd == 0


def test_a_submission_is_described_from_the_env_s_own_decoding() -> None:
    """The runner describes a decoded action by the env's decoding of that very object (not a
    second decoding), with the same text a decoding gives; another object gets None."""
    env = gym.make("ACDB-L1-v0")
    env.reset(options={"manifest_index": 0})
    graph = PDAG.from_edges(6, directed=[(0, 1)], undirected=[(2, 3)])
    action = actions.submit(graph)
    env.step(action)
    decoded = env.unwrapped.decoded_action(action)
    assert repr(decoded) == repr(actions.decode(action, n_nodes=6))
    assert env.unwrapped.decoded_action(actions.submit(graph)) is None  # an equal, other object
    result = run_episode(env, RandomDAGAgent(seed=3), manifest_index=0)
    assert result.trajectory[-1].action == repr(actions.Submit(result.submission))
