"""Targeting baselines on the intervention-design env, and the paired comparison helpers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import acdb_gym  # noqa: F401  (registers the env ids)
from acdb_gym.agents.base import run_episode
from acdb_gym.baselines.targeting import (
    GreedyTargeting,
    OracleTargeting,
    PCActiveTargeting,
    RandomTargeting,
    evaluate_targeting,
    sign_flip_p_value,
    stratified_sign_flip_p_value,
)
from acdb_gym.core.graphs import cpdag
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.worlds.instance import Instance, generate_instance
from acdb_gym.envs.design.env import DesignObservation, InterventionDesignEnv, observation_size

SPEC = LADDERS["v0"]["L1"].spec
HELD_OUT = [generate_instance(SPEC, 10**9 + 10**6 + i) for i in range(12)]


def _play(env: InterventionDesignEnv, agent: Any, instance: Instance) -> list[int]:
    """Run one episode by hand, checking every action against the env's own mask."""
    observation, info = env.reset(options={"instance": instance})
    if getattr(agent, "privileged", False):
        agent.observe_instance(env.hidden_instance())
    agent.reset(observation, info)
    actions = []
    terminated = False
    while not terminated:
        mask = env.action_masks()
        decoded = DesignObservation.decode(observation)
        assert np.array_equal(decoded.action_mask, mask)
        assert decoded.estimate == env.estimate
        action = agent.act(observation, info)
        assert env.action_space.contains(action) and mask[action], (action, mask)
        actions.append(int(action))
        observation, _, terminated, truncated, info = env.step(action)
        assert not truncated
    return actions


@pytest.mark.slow
@pytest.mark.parametrize("estimator", ["true_cpdag", "pc"])
@pytest.mark.parametrize(
    "make",
    [lambda: RandomTargeting(seed=3), GreedyTargeting, PCActiveTargeting, OracleTargeting],
    ids=["random", "greedy", "pc_active", "oracle"],
)
def test_targeters_respect_the_mask_and_never_repeat(estimator: str, make: Any) -> None:
    env = InterventionDesignEnv("L1", estimator=estimator)  # type: ignore[arg-type]
    for instance in HELD_OUT[: 6 if estimator == "pc" else 12]:
        actions = _play(env, make(), instance)
        targets = actions[:-1]
        assert actions[-1] == SPEC.d  # every episode ends with an explicit stop
        assert len(targets) == len(set(targets)) <= instance.budget


def test_random_targeting_spends_the_budget_on_distinct_nodes() -> None:
    env = InterventionDesignEnv("L1", estimator="true_cpdag")
    for instance in HELD_OUT:
        actions = _play(env, RandomTargeting(seed=1), instance)
        assert len(actions) - 1 == min(instance.budget, SPEC.d)


def test_oracle_intervenes_exactly_on_i_star_and_recovers_the_dag() -> None:
    env = InterventionDesignEnv("L1", estimator="true_cpdag")
    rewards = []
    for instance in HELD_OUT:
        actions = _play(env, OracleTargeting(), instance)
        assert actions[:-1] == sorted(instance.i_star)
        rewards.append(run_episode(env, OracleTargeting(), instance=instance).reward)
    # Only the orientation tests can err once I* is intervened on with the true CPDAG.
    assert np.mean(rewards) > 0.95


def test_oracle_needs_the_instance() -> None:
    env = InterventionDesignEnv("L1", estimator="true_cpdag")
    observation, info = env.reset(options={"instance": HELD_OUT[0]})
    with pytest.raises(RuntimeError, match="run_episode"):
        OracleTargeting().reset(observation, info)


def test_greedy_picks_the_node_of_highest_undirected_degree_first() -> None:
    env = InterventionDesignEnv("L1", estimator="true_cpdag")
    checked = 0
    for instance in HELD_OUT:
        degree = cpdag(instance.dag).undirected.sum(axis=1)
        actions = _play(env, GreedyTargeting(), instance)
        if degree.max() == 0:
            assert actions == [SPEC.d]
            continue
        assert actions[0] == int(np.argmax(degree))
        checked += 1
    assert checked > 0


@pytest.mark.parametrize(
    "make",
    [lambda: RandomTargeting(), GreedyTargeting, OracleTargeting],
    ids=["random", "greedy", "oracle"],
)
def test_no_interventions_in_the_observational_panel(make: Any) -> None:
    env = InterventionDesignEnv("L1", estimator="true_cpdag", panel="observational")
    assert _play(env, make(), HELD_OUT[0]) == [SPEC.d]


def test_design_observation_decodes_and_infers_the_size() -> None:
    env = InterventionDesignEnv("L0", estimator="true_cpdag")
    observation, _ = env.reset(seed=4)
    decoded = DesignObservation.decode(observation)
    assert decoded.intervened.size == 5 and decoded.budget_fraction == 1.0
    assert decoded.estimate == env.estimate
    with pytest.raises(ValueError, match="must have 94 entries"):
        DesignObservation.decode(np.zeros(observation_size(5)), 6)


def test_evaluate_targeting_pairs_agents_by_instance() -> None:
    env = InterventionDesignEnv("L1", estimator="true_cpdag")
    agents: dict[str, Any] = {"random": RandomTargeting(seed=0), "oracle": OracleTargeting()}
    results = evaluate_targeting(env, agents, HELD_OUT[:5])
    assert set(results) == {"random", "oracle"}
    for result in results.values():
        assert result.rewards.shape == result.interventions.shape == (5,)
        assert result.seeds == tuple(i.seed for i in HELD_OUT[:5])
        assert 0 <= result.mean_reward <= 1 and result.standard_error >= 0
    assert results["oracle"].interventions.tolist() == [len(i.i_star) for i in HELD_OUT[:5]]


def test_sign_flip_p_value_is_exact_for_small_samples() -> None:
    a = np.arange(1.0, 11.0)
    # All ten differences positive: only the all-plus and all-minus patterns are as extreme.
    assert sign_flip_p_value(a, np.zeros(10)) == pytest.approx(2 / 2**10)
    assert sign_flip_p_value(a, a) == 1.0
    assert sign_flip_p_value(np.array([1.0]), np.array([0.0])) == 1.0
    with pytest.raises(ValueError, match="one length"):
        sign_flip_p_value(a, a[:-1])


def test_pc_active_targeting_follows_greedy_then_spends_the_budget() -> None:
    env = InterventionDesignEnv("L1", estimator="true_cpdag")
    for instance in HELD_OUT:
        greedy = _play(env, GreedyTargeting(), instance)[:-1]
        active = _play(env, PCActiveTargeting(), instance)[:-1]
        assert active[: len(greedy)] == greedy
        assert len(active) == min(instance.budget, SPEC.d)


def test_stratified_sign_flip_weighs_every_stratum_alike() -> None:
    rng = np.random.default_rng(0)
    better = [rng.normal(0.05, 0.02, 40), rng.normal(0.02, 0.02, 10)]
    assert stratified_sign_flip_p_value(better, n_resamples=2000) < 0.001
    noise = [rng.normal(0.0, 0.02, 40), rng.normal(0.0, 0.02, 10)]
    assert stratified_sign_flip_p_value(noise, n_resamples=2000) > 0.05
    # A large gain in a small stratum against a small loss in a big one: the sum decides.
    mixed = [np.full(100, -0.001), np.full(5, 0.5)]
    assert stratified_sign_flip_p_value(mixed, n_resamples=2000) < 0.1
    assert stratified_sign_flip_p_value([np.zeros(3)]) == 1.0
    with pytest.raises(ValueError, match="non-empty"):
        stratified_sign_flip_p_value([np.zeros(0)])
