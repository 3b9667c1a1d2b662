"""InterventionDesignEnv: observation layout, action masks, masked actions, the I* oracle."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

from acdb_gym.core.graphs import cpdag
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.envs.registration import DESIGN_IDS


def make(env_id: str = "ACDB-Design-L1-v0", **kwargs: Any) -> gym.Env[Any, Any]:
    return gym.make(env_id, **kwargs)


def unwrapped(env: gym.Env[Any, Any]) -> InterventionDesignEnv:
    base = env.unwrapped
    assert isinstance(base, InterventionDesignEnv)
    return base


def split(observation: np.ndarray, d: int) -> dict[str, np.ndarray]:
    """The documented slices: correlations, estimate, intervened, shifts, budget fraction."""
    m = d * (d - 1) // 2
    sizes = {"correlations": m, "estimate": d * d, "intervened": d, "shifts": d * d, "budget": 1}
    parts, start = {}, 0
    for name, size in sizes.items():
        parts[name] = observation[start : start + size]
        start += size
    assert start == observation.size
    parts["estimate"] = parts["estimate"].reshape(d, d)
    parts["shifts"] = parts["shifts"].reshape(d, d)
    return parts


@pytest.mark.parametrize("env_id", DESIGN_IDS)
def test_observation_has_the_documented_size_and_stays_in_its_box(env_id: str) -> None:
    env = make(env_id, estimator="true_cpdag")
    observation, _ = env.reset(seed=0)
    d = unwrapped(env).n_nodes
    size = d * (d - 1) // 2 + 2 * d * d + d + 1
    assert env.observation_space.shape == (size,)
    assert env.action_space == gym.spaces.Discrete(d + 1)
    terminated = False
    for action in (0, d - 1, 0, d):
        assert observation.shape == (size,) and observation.dtype == np.float32
        assert env.observation_space.contains(observation)
        observation, _, terminated, truncated, _ = env.step(action)
        assert not truncated
        if terminated:
            break
    assert terminated
    assert env.observation_space.contains(observation)


def test_observation_slices_hold_what_the_docstring_says() -> None:
    env = make(estimator="true_cpdag")
    observation, info = env.reset(options={"manifest_index": 0})
    base = unwrapped(env)
    instance = base.hidden_instance()
    d, budget = base.n_nodes, info["total_budget"]
    parts = split(observation, d)
    corr = np.asarray(np.corrcoef(instance.d_obs, rowvar=False))[np.triu_indices(d, 1)]
    assert parts["correlations"] == pytest.approx(corr, abs=1e-6)
    truth = cpdag(instance.dag)
    assert np.array_equal(parts["estimate"], truth.directed + 0.5 * truth.undirected)
    assert not parts["intervened"].any() and not parts["shifts"].any()
    assert parts["budget"][0] == 1.0

    target = 2
    observation, *_ = env.step(target)
    parts = split(observation, d)
    assert np.flatnonzero(parts["intervened"]).tolist() == [target]
    assert parts["budget"][0] == pytest.approx((budget - 1) / budget)
    assert parts["shifts"][target, target] == 0.0
    assert (np.delete(parts["shifts"][target], target) > 0).all()
    assert not np.delete(parts["shifts"], target, axis=0).any()
    estimate = base.estimate
    assert np.array_equal(parts["estimate"], estimate.directed + 0.5 * estimate.undirected)


def test_action_masks_follow_budget_panel_and_end() -> None:
    env = make(estimator="true_cpdag")
    env.reset(options={"manifest_index": 0})
    base = unwrapped(env)
    d = base.n_nodes
    only_stop = np.array([False] * d + [True])
    assert base.action_masks().all()
    for _ in range(base.session.budget):
        assert base.action_masks().all()
        env.step(1)
    assert np.array_equal(base.action_masks(), only_stop)
    env.step(d)
    assert np.array_equal(base.action_masks(), only_stop)

    observational = make(estimator="true_cpdag", panel="observational")
    observation, _ = observational.reset(options={"manifest_index": 0})
    assert np.array_equal(unwrapped(observational).action_masks(), only_stop)
    assert split(observation, d)["budget"][0] == 0.0


def stop_result(env: gym.Env[Any, Any], action: int) -> tuple[float, dict[str, Any]]:
    """Step ``action``, which must end the episode; the reward and the numeric info with the
    env's details (the report as a dict under ``score``)."""
    _, reward, terminated, truncated, info = env.step(action)
    assert (terminated, truncated) == (True, False)
    assert info["scored"] and info["instance_seed"] >= 0
    return float(reward), {**info, **env.unwrapped.details()}  # type: ignore[attr-defined]


def test_masked_intervention_acts_as_stop() -> None:
    d = LADDERS["v0"]["L1"].spec.d
    reference = make(panel="observational")
    reference.reset(options={"manifest_index": 3})
    expected = stop_result(reference, d)

    masked = make(panel="observational")
    masked.reset(options={"manifest_index": 3})
    reward, info = stop_result(masked, 0)
    assert (reward, info["score"]) == (expected[0], expected[1]["score"])
    assert info["interventions_used"] == 0

    spent = make(estimator="true_cpdag")
    spent.reset(options={"manifest_index": 3})
    budget = unwrapped(spent).session.budget
    for _ in range(budget):
        _, _, terminated, _, _ = spent.step(4)
        assert not terminated
    _, info = stop_result(spent, 4)
    assert info["score"]["interventions_used"] == budget


@pytest.mark.slow
def test_true_cpdag_with_interventions_on_i_star_recovers_the_dag() -> None:
    env = make("ACDB-Design-L0-v0", estimator="true_cpdag")
    perfect = 0
    for index in range(len(LADDERS["v0"]["L0"].manifest)):
        env.reset(options={"manifest_index": index})
        instance = unwrapped(env).hidden_instance()
        for target in sorted(instance.i_star):
            _, _, terminated, _, _ = env.step(target)
            assert not terminated
        reward, info = stop_result(env, unwrapped(env).n_nodes)
        assert unwrapped(env).estimator == info["estimator"] == "true_cpdag"
        assert info["score"]["efficiency"] == 1.0
        assert reward == info["score"]["directed_f1"]
        perfect += reward == 1.0
    assert perfect >= 6, f"only {perfect} of 8 instances fully recovered"


@pytest.mark.parametrize("reward_name", ["directed_f1", "neg_shd", "skeleton_f1"])
def test_reward_options(reward_name: str) -> None:
    env = make(estimator="true_cpdag", reward=reward_name)
    env.reset(options={"manifest_index": 1})
    reward, info = stop_result(env, unwrapped(env).n_nodes)
    if reward_name == "neg_shd":
        assert reward == -info["score"]["shd"]
    else:
        assert reward == info["score"][reward_name]


def test_same_seed_same_episode() -> None:
    first, second = make(), make()
    obs_a, _ = first.reset(seed=42)
    obs_b, _ = second.reset(seed=42)
    assert np.array_equal(obs_a, obs_b)
    for action in (1, 3, 6):
        obs_a, reward_a, term_a, _, info_a = first.step(action)
        obs_b, reward_b, term_b, _, info_b = second.step(action)
        assert np.array_equal(obs_a, obs_b)
        assert (reward_a, term_a) == (reward_b, term_b)
        assert data_equivalence(info_a, info_b, exact=True)
        if term_a:
            break


def test_action_outside_the_space_raises() -> None:
    env = make(estimator="true_cpdag")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be in"):
        env.step(7)
    with pytest.raises(ValueError, match="action must be in"):
        env.step(-1)
    assert unwrapped(env).session.interventions_used == 0


def test_injected_instance_must_fit_the_level() -> None:
    env = make(estimator="true_cpdag")
    with pytest.raises(ValueError, match="does not fit"):
        env.reset(options={"instance": LADDERS["v0"]["L0"].instance(0)})


def test_injected_instance_must_be_an_instance() -> None:
    env = make(estimator="true_cpdag")
    with pytest.raises(ValueError, match="Instance"):
        env.reset(options={"instance": "not an instance"})
