"""The paper's baselines, each acting only through env.step (DESIGN §9)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import acdb_gym  # noqa: F401  (registers the env ids)
from acdb_gym.agents.base import run_episode
from acdb_gym.baselines import (
    OracleAgent,
    PCAgent,
    PCGreedyAgent,
    R2SortnregressAgent,
    RandomDAGAgent,
    SortnregressAgent,
)
from acdb_gym.baselines.classical import random_forward_dag
from acdb_gym.core.graphs import PDAG, cpdag
from acdb_gym.core.ladders.shipped import LADDERS, LevelSpec
from acdb_gym.core.scoring import score
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.discovery import orient_by_mean_shift, pc_cpdag, r2sortnregress
from acdb_gym.envs import actions


@pytest.mark.slow
def test_random_dag_is_a_forward_dag_with_uniform_edge_count() -> None:
    rng = np.random.default_rng(0)
    counts = [random_forward_dag(5, rng).directed.sum() for _ in range(11_000)]
    hist = np.bincount(counts, minlength=11)
    assert hist.size == 11 and (np.abs(hist / 11_000 - 1 / 11) < 0.012).all()


@pytest.mark.slow
@pytest.mark.parametrize("level", ["L0", "L3", "L5"])
def test_random_baseline_matches_the_closed_form(level: str) -> None:
    spec = LADDERS["v0"][level].spec
    truth = LADDERS["v0"][level].instance(0)
    rng = np.random.default_rng(1)
    f1 = [score(truth, random_forward_dag(spec.d, rng)).directed_f1 for _ in range(6000)]
    # The standard error of the mean is below 0.003 here; allow about 4 of them.
    assert abs(np.mean(f1) - spec.random_floor) < 0.012


@pytest.mark.slow
def test_random_agent_through_the_env_matches_the_closed_form() -> None:
    spec = LADDERS["v0"]["L0"].spec
    env = gym.make("ACDB-L0-v0")
    agent = RandomDAGAgent(seed=2)
    f1 = [run_episode(env, agent, manifest_index=1).score.directed_f1 for _ in range(400)]
    assert abs(np.mean(f1) - spec.random_floor) < 0.04


def test_random_baseline_is_structure_blind() -> None:
    """Same seed, different data: the same graphs (it uses only d)."""
    graphs = []
    for index in (0, 1):
        env = gym.make("ACDB-L1-v0")
        result = run_episode(env, RandomDAGAgent(seed=7), manifest_index=index)
        graphs.append(result.trajectory[0].action)
    assert graphs[0] == graphs[1]


def test_pc_agent_submits_pc_of_the_observational_data() -> None:
    env = gym.make("ACDB-L1-v0")
    result = run_episode(env, PCAgent(), manifest_index=2)
    inst = LADDERS["v0"]["L1"].instance(2)
    expected = score(inst, pc_cpdag(inst.d_obs, alpha=0.05))
    assert result.score == expected
    assert result.interventions == 0 and result.steps == 1


def test_oracle_recovers_the_dag_and_needs_the_instance() -> None:
    env = gym.make("ACDB-L3-v0")
    result = run_episode(env, OracleAgent(), manifest_index=0)
    assert result.score.directed_f1 == 1.0 and result.score.shd == 0
    agent = OracleAgent()
    obs, info = env.reset(options={"manifest_index": 0})
    with pytest.raises(RuntimeError, match="run_episode"):
        agent.reset(obs, info)


def test_sortnregress_exploits_variance_sortability_on_v0() -> None:
    env = gym.make("ACDB-L1-v0")
    sortn = [run_episode(env, SortnregressAgent(), manifest_index=i).score for i in range(4)]
    assert np.mean([s.directed_f1 for s in sortn]) > 0.6


class _Recorder:
    """Wraps an env to record every action the agent sends."""

    def __init__(self) -> None:
        self.actions: list[Any] = []


def test_pc_greedy_follows_the_paper_rule_exactly() -> None:
    level = LADDERS["v0"]["L0"]
    env = gym.make("ACDB-L0-v0")
    agent = PCGreedyAgent()
    for index in range(8):
        obs, info = env.reset(options={"manifest_index": index})
        agent.reset(obs, info)
        inst = level.instance(index)
        graph = pc_cpdag(inst.d_obs, alpha=0.05)
        tried: set[int] = set()
        done = False
        while not done:
            action = agent.act(obs, info)
            typed = actions.decode(action, n_nodes=inst.n_nodes)
            degree = graph.undirected.sum(axis=1)
            degree[list(tried)] = 0
            if isinstance(typed, actions.Submit):
                assert int(obs["budget_remaining"][0]) == 0 or degree.max() == 0
                assert typed.graph == graph
            else:
                assert isinstance(typed, actions.Intervene)
                assert typed.var == int(np.argmax(degree)) and degree.max() > 0
                assert typed.value == pytest.approx(inst.d_obs[:, typed.var].mean() + 3.0)
                tried.add(typed.var)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            if isinstance(typed, actions.Intervene):
                slot = int(np.flatnonzero(obs["targets"] == typed.var)[-1])
                samples = obs["interventional"][slot]
                graph = orient_by_mean_shift(graph, inst.d_obs, [(typed.var, samples)])
        assert env.unwrapped.session.interventions_used <= inst.budget


def test_pc_greedy_orients_a_two_node_world() -> None:
    """X0 -> X1 with a strong weight: one intervention on the hub orients it."""
    spec = LADDERS["v0"]["L0"].spec
    inst = generate_instance(spec, 0)
    pdag = cpdag(inst.dag)
    if pdag.undirected.any():
        target = int(np.argmax(pdag.undirected.sum(axis=1)))
        data = inst.scm.sample_do(
            target, inst.d_obs[:, target].mean() + 3.0, 2000, np.random.default_rng(0)
        )
        oriented = orient_by_mean_shift(pdag, inst.d_obs, [(target, data)])
        for j in np.flatnonzero(pdag.undirected[target]):
            assert oriented.directed[target, j] == inst.dag.adjacency[target, j]


def test_active_baseline_beats_pc_and_random_on_the_ladder() -> None:
    means: dict[str, list[float]] = {"random": [], "pc": [], "pc_greedy": []}
    for level in ("L0", "L1", "L3"):
        env = gym.make(f"ACDB-{level}-v0")
        for index in range(8):
            means["random"].append(
                run_episode(env, RandomDAGAgent(seed=index), manifest_index=index).score.directed_f1
            )
            means["pc"].append(run_episode(env, PCAgent(), manifest_index=index).score.directed_f1)
            means["pc_greedy"].append(
                run_episode(env, PCGreedyAgent(), manifest_index=index).score.directed_f1
            )
    assert np.mean(means["pc_greedy"]) > np.mean(means["pc"]) > np.mean(means["random"])


def test_pc_greedy_in_the_observational_panel_is_pc() -> None:
    env = gym.make("ACDB-L1-v0", panel="observational")
    greedy = run_episode(env, PCGreedyAgent(), manifest_index=1)
    pc = run_episode(env, PCAgent(), manifest_index=1)
    assert greedy.score == pc.score and greedy.interventions == 0


def test_tiny_world_spec_fits_baselines() -> None:
    spec = LevelSpec(d=3, k=2, n_obs=300, n_int=100, noise_var=1.0, slack=1)
    inst = generate_instance(spec, 4)
    assert isinstance(pc_cpdag(inst.d_obs), PDAG)


def test_r2sortnregress_agent_submits_the_r2_order_regressions() -> None:
    env = gym.make("ACDB-Calibrated-L1-v1")
    for index in range(3):
        result = run_episode(env, R2SortnregressAgent(), manifest_index=index)
        instance = LADDERS["v1"]["L1"].instance(index)
        expected = score(instance.dag, r2sortnregress(instance.d_obs))
        assert result.score.directed_f1 == expected.directed_f1
        assert result.interventions == 0 and result.steps == 1
