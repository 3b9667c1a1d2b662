"""The shortcut agents of the gate: the capped-efficiency exploit (``cap:AGENT``), the hub order,
and the estimator-default probe on the design env."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import acdb_gym  # noqa: F401  (registers the env ids)
from acdb_gym.agents.base import run_episode
from acdb_gym.baselines.active import PCActiveAgent
from acdb_gym.baselines.capped import CappedAgent, predicted_i_star
from acdb_gym.baselines.classical import HubOrderAgent, PCAgent, hub_order
from acdb_gym.baselines.targeting import (
    ParentRichTargeting,
    PCActiveTargeting,
    evaluate_targeting,
)
from acdb_gym.core.graphs import DAG, PDAG, cpdag, minimum_intervention_set, random_order_dag
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.discovery import shared_pc_cpdag
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.registry import get_agent


def test_predicted_i_star_is_exact_on_true_cpdags() -> None:
    """From a true CPDAG the prediction is the |I*| of a DAG of the class; on these random
    graphs it is the true |I*| in most cases and never below 0."""
    rng = np.random.default_rng(0)
    exact = 0
    for _ in range(60):
        dag = random_order_dag(7, n_edges=9, rng=rng)
        predicted = predicted_i_star(cpdag(dag))
        exact += predicted == len(minimum_intervention_set(dag))
    assert exact >= 40
    chain = PDAG.from_edges(4, undirected=[(0, 1), (1, 2), (2, 3)])
    assert predicted_i_star(chain) == 1  # a chain has one source: intervening on it suffices
    assert predicted_i_star(DAG.from_edges(3, [(0, 2), (1, 2)]).to_pdag()) == 0


@pytest.mark.slow
def test_the_cap_stops_at_its_prediction_and_buys_eta_not_the_anytime_f1() -> None:
    env = gym.make("ACDB-Calibrated-L3-v1")
    capped_eta, plain_eta, capped_any, plain_any = [], [], [], []
    for index in range(8):
        plain = run_episode(env, PCActiveAgent(), manifest_index=index)
        agent = CappedAgent(PCActiveAgent())
        capped = run_episode(env, agent, manifest_index=index)
        assert capped.interventions <= agent._cap <= plain.interventions  # type: ignore[operator]
        plain_eta.append(plain.score.efficiency)
        capped_eta.append(capped.score.efficiency)
        plain_any.append(plain.score.anytime_f1)
        capped_any.append(capped.score.anytime_f1)
        # The cap submits what the agent held: its hypothesis after the same experiments.
        assert capped.revision is not None and capped.revision.stated
    assert np.mean(capped_eta) > np.mean(plain_eta) + 0.1
    assert np.mean(capped_any) <= np.mean(plain_any) + 0.01


def test_cap_is_registered_for_agents_that_state_hypotheses_only() -> None:
    entry = get_agent("cap:bic_active")
    assert entry.name == "cap:bic_active" and entry.panels == ("active",)
    agent = entry.build(0, {})
    assert agent.name == "cap:bic_active" and agent.inner.name == "bic_active"
    with pytest.raises(ValueError, match="INNER of agent cap must be one of"):
        get_agent("cap:random")
    with pytest.raises(ValueError, match="states its hypotheses"):
        CappedAgent(PCAgent())


@pytest.mark.slow
def test_the_hub_order_puts_high_degree_nodes_first_and_regresses_in_it() -> None:
    level = ALL_LADDERS["v1"]["L3"]
    instance = level.instance(0)
    order = hub_order(instance.d_obs)
    degree = np.asarray(shared_pc_cpdag(instance.d_obs).skeleton()).sum(axis=1)
    assert list(degree[order]) == sorted(degree, reverse=True)
    result = run_episode(gym.make("ACDB-Calibrated-L3-v1"), HubOrderAgent(), manifest_index=0)
    assert result.interventions == 0 and 0.0 <= result.score.directed_f1 <= 1.0
    assert get_agent("hub").constructor.endswith("HubOrderAgent")


@pytest.mark.slow
def test_the_parent_rich_probe_gains_only_from_the_old_estimator_default() -> None:
    """On the few-sample ladder a test of 3 rows cannot see a shift: the old rule ("always")
    scored the probe's silent experiments as right; the default ("power") does not."""
    level = ALL_LADDERS["v1-n3"]["L1"]
    instances = [level.instance(i) for i in range(12)]
    gains = {}
    for rule in ("always", "power"):
        env = InterventionDesignEnv("L1", ladder="v1-n3", estimator="true_cpdag", rule=rule)
        agents = {"probe": ParentRichTargeting(), "reference": PCActiveTargeting()}
        results = evaluate_targeting(env, agents, instances)
        gains[rule] = results["probe"].mean_reward - results["reference"].mean_reward
    assert gains["always"] > 0.05
    assert gains["power"] <= 0.0
    assert not math.isnan(gains["power"])
