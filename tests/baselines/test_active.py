"""The stronger active agents (pc_active, bic_active and its deprecated alias gies_active)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import acdb_gym  # noqa: F401  (registers the env ids)
from acdb_gym.agents.base import Agent, run_episode
from acdb_gym.baselines.active import BICActiveAgent, GIESActiveAgent, PCActiveAgent
from acdb_gym.core.graphs import minimum_intervention_set
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.discovery import greedy_interventional_search, pc_cpdag
from acdb_gym.envs import actions

AGENTS = [PCActiveAgent, BICActiveAgent]


def tiny_world(edges: list[tuple[int, int]], seed: int, *, budget: int = 2) -> Instance:
    """A unit-weight, unit-noise SCM on 5 nodes with the shape of v0 L0 (500 + 100 rows)."""
    spec = LADDERS["v0"]["L0"].spec
    weights = np.zeros((spec.d, spec.d))
    for i, j in edges:
        weights[i, j] = 1.0
    scm = LinearGaussianSCM(weights, np.ones(spec.d))
    d_obs = scm.sample(spec.n_obs, np.random.default_rng(seed))
    d_obs.flags.writeable = False
    dag = scm.dag
    return Instance(spec, seed, dag, scm, d_obs, minimum_intervention_set(dag), budget, 1)


class RecordingEnv(gym.Wrapper[Any, Any, Any, Any]):
    """Records every action and checks it is an element of the action space."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.actions: list[Any] = []

    def step(self, action: Any) -> Any:
        assert self.env.action_space.contains(action), action
        self.actions.append(action)
        return self.env.step(action)


# --------------------------------------------------------------------------- tiny worlds

CHAIN = [(0, 1), (1, 2)]
COLLIDER = [(0, 2), (1, 2)]


@pytest.mark.slow
@pytest.mark.parametrize("agent_class", AGENTS)
@pytest.mark.parametrize(("edges", "seeds"), [(CHAIN, (1, 2, 3)), (COLLIDER, (0, 1, 2))])
def test_agents_recover_three_node_worlds(
    agent_class: type[Agent], edges: list[tuple[int, int]], seeds: tuple[int, ...]
) -> None:
    # X3 and X4 are isolated. (For pc_active the seeds avoid PC's occasional 5%-level false
    # edge between independent nodes; bic_active recovers every seed tried.)
    env = gym.make("ACDB-L0-v0")
    for seed in seeds:
        result = run_episode(env, agent_class(), instance=tiny_world(edges, seed))
        assert result.score.shd == 0, (seed, result.trajectory[-1].action)
        assert result.score.directed_f1 == 1.0


def test_the_chain_needs_an_experiment_and_one_suffices() -> None:
    env = gym.make("ACDB-L0-v0")
    instance = tiny_world(CHAIN, 2, budget=1)
    for agent in (PCActiveAgent(), BICActiveAgent()):
        result = run_episode(env, agent, instance=instance)
        assert result.interventions == 1 and result.score.shd == 0
        assert agent.targets in ((0,), (1,), (2,))


# --------------------------------------------------------------------------- protocol


@pytest.mark.slow
@pytest.mark.parametrize("agent_class", AGENTS)
@pytest.mark.parametrize(("ladder", "level"), [("v0", "L2"), ("v0", "L5"), ("v1", "L4")])
def test_agents_stay_within_budget_and_act_only_through_step(
    agent_class: type[Agent], ladder: str, level: str
) -> None:
    env = RecordingEnv(gym.make(LADDERS[ladder][level].env_id))
    for index in (0, 1):
        instance = LADDERS[ladder][level].instance(index)
        result = run_episode(env, agent_class(), manifest_index=index)
        assert result.interventions <= instance.budget
        assert result.invalid_actions == 0 and not result.truncated
        assert result.steps == result.interventions + 1
        kinds = [actions.decode(a, n_nodes=instance.n_nodes) for a in env.actions[-result.steps :]]
        assert all(isinstance(k, actions.Intervene) for k in kinds[:-1])
        assert isinstance(kinds[-1], actions.Submit)
        targets = [k.var for k in kinds[:-1] if isinstance(k, actions.Intervene)]
        assert len(set(targets)) == len(targets)


@pytest.mark.slow
@pytest.mark.parametrize("agent_class", AGENTS)
def test_agents_are_deterministic(agent_class: type[Agent]) -> None:
    env = gym.make("ACDB-Calibrated-L2-v1")
    first = run_episode(env, agent_class(), manifest_index=3)
    second = run_episode(env, agent_class(), manifest_index=3)
    assert first.trajectory == second.trajectory and first.score == second.score


def test_agents_keep_the_last_step_for_the_submission() -> None:
    env = gym.make("ACDB-L0-v0", max_steps=2)
    for agent in (PCActiveAgent(), BICActiveAgent()):
        result = run_episode(env, agent, manifest_index=0)
        assert not result.truncated and result.interventions == 1


def test_observational_panel_submits_the_observational_estimate() -> None:
    env = gym.make("ACDB-L1-v0", panel="observational")
    instance = LADDERS["v0"]["L1"].instance(2)
    pc = PCActiveAgent()
    result = run_episode(env, pc, manifest_index=2)
    assert result.interventions == 0 and pc.graph == pc_cpdag(instance.d_obs)
    bic = BICActiveAgent()
    result = run_episode(env, bic, manifest_index=2)
    expected = greedy_interventional_search(instance.d_obs, [], penalty=2.0)
    assert result.interventions == 0 and bic.graph == expected.essential_graph


@pytest.mark.slow
def test_stop_rule_submits_once_nothing_is_undirected() -> None:
    env = gym.make("ACDB-L0-v0")
    instance = tiny_world(CHAIN, 2, budget=4)
    explore = run_episode(env, BICActiveAgent(), instance=instance)
    stop = run_episode(env, BICActiveAgent(leftover="stop"), instance=instance)
    assert stop.interventions == 1 and explore.interventions == 4
    assert stop.score.shd == explore.score.shd == 0


def test_interventions_scale_with_the_observational_spread() -> None:
    instance = LADDERS["v0"]["L3"].instance(0)
    env = RecordingEnv(gym.make("ACDB-L3-v0"))
    run_episode(env, PCActiveAgent(shift=2.5), manifest_index=0)
    first = actions.decode(env.actions[0], n_nodes=instance.n_nodes)
    assert isinstance(first, actions.Intervene)
    column = instance.d_obs[:, first.var]
    assert first.value == pytest.approx(column.mean() + 2.5 * column.std())


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: PCActiveAgent(shift=0.0), "shift must be finite and non-zero, got 0.0"),
        (lambda: PCActiveAgent(pc_alpha=1.5), r"pc_alpha must be in \(0, 1\), got 1.5"),
        (lambda: PCActiveAgent(alpha=0.1, no_shift_threshold=0.05), "no_shift_threshold"),
        (lambda: BICActiveAgent(penalty=-1.0), "penalty must be positive and finite, got -1.0"),
        (lambda: BICActiveAgent(restarts=-1), "restarts must be >= 0"),
        (lambda: BICActiveAgent(leftover="later"), "leftover must be one of"),  # type: ignore[arg-type]
    ],
)
def test_agents_reject_bad_settings(factory: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()


@pytest.mark.slow
def test_bic_agent_beats_pc_greedy_on_v0_l3() -> None:
    from acdb_gym.baselines import PCGreedyAgent

    env = gym.make("ACDB-L3-v0")
    bic = [run_episode(env, BICActiveAgent(), manifest_index=i).score for i in range(3)]
    greedy = [run_episode(env, PCGreedyAgent(), manifest_index=i).score for i in range(3)]
    assert np.mean([s.directed_f1 for s in bic]) > np.mean([s.directed_f1 for s in greedy])
    assert np.mean([s.shd for s in bic]) < np.mean([s.shd for s in greedy])


# --------------------------------------------------------------------------- deprecated alias


def test_gies_active_is_a_deprecated_alias_of_bic_active() -> None:
    with pytest.deprecated_call(match="BICActiveAgent"):
        alias = GIESActiveAgent(penalty=3.0, leftover="verify")
    assert isinstance(alias, BICActiveAgent)
    assert (alias.name, BICActiveAgent.name) == ("gies_active", "bic_active")
    assert (alias.penalty, alias.leftover) == (3.0, "verify")
    import acdb_gym.baselines as baselines

    assert baselines.GIESActiveAgent is GIESActiveAgent
    assert baselines.BICActiveAgent is BICActiveAgent


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_gies_active_plays_the_episodes_of_bic_active() -> None:
    env = gym.make("ACDB-Calibrated-L2-v1")
    alias = run_episode(env, GIESActiveAgent(), manifest_index=1)
    renamed = run_episode(env, BICActiveAgent(), manifest_index=1)
    assert alias.trajectory == renamed.trajectory and alias.score == renamed.score


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_gies_active_rejects_bad_settings_as_bic_active_does() -> None:
    with pytest.raises(ValueError, match=r"penalty must be positive and finite, got -1\.0"):
        GIESActiveAgent(penalty=-1.0)
