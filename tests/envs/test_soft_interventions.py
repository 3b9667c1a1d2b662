"""``ACDBEnv(interventions=...)``: soft interventions as an env option beside hard ones."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from acdb_gym.agents.base import run_episode
from acdb_gym.baselines.classical import PCGreedyAgent
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.worlds.soft import episode_kinds, sample_soft
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import KINDS_KEY, OBSERVATION_KEYS, STATS_OBSERVATION_KEYS, ACDBEnv
from acdb_gym.testing import check_acdb_env

INFINITE_BOUNDS = r".*A Box (observation|action) space (minimum|maximum) value is -?infinity"


def _rollout(env: gym.Env[Any, Any], steps: list[tuple[int, float]]) -> list[Any]:
    observation, _ = env.reset(seed=5, options={"manifest_index": 2})
    trajectory = [observation]
    for var, value in steps:
        observation, *_ = env.step(actions.intervene(var, value))
        trajectory.append(observation)
    return trajectory


@pytest.mark.parametrize("observation", ["raw", "stats"])
def test_the_default_is_hard_and_its_observations_are_unchanged(observation: str) -> None:
    default = ACDBEnv("L2", ladder="v1", observation=observation)  # type: ignore[arg-type]
    hard = gym.make(
        "ACDB-Calibrated-L2-v1", observation=observation, interventions="hard"
    ).unwrapped
    keys = OBSERVATION_KEYS if observation == "raw" else STATS_OBSERVATION_KEYS
    assert default.interventions == "hard"
    assert set(default.observation_space.spaces) == set(keys)  # type: ignore[attr-defined]
    assert default.observation_space == hard.observation_space
    steps = [(0, 1.0), (3, -2.0), (5, 0.5)]
    for got, want in zip(_rollout(default, steps), _rollout(hard, steps), strict=True):
        assert KINDS_KEY not in got and set(got) == set(want)
        for key in got:
            assert np.array_equal(got[key], want[key])


@pytest.mark.parametrize("mode", ["shift", "scale", "mixed"])
def test_a_soft_env_says_each_experiments_kind(mode: str) -> None:
    env = gym.make("ACDB-Calibrated-L2-v1", interventions=mode)
    space = env.observation_space
    assert set(space.spaces) == {*OBSERVATION_KEYS, KINDS_KEY}  # type: ignore[attr-defined]
    observation, _ = env.reset(seed=0, options={"manifest_index": 0})
    m = env.unwrapped.max_interventions  # type: ignore[attr-defined]
    assert observation[KINDS_KEY].tolist() == [3] * m  # unused slots
    for var in range(3):
        observation, *_ = env.step(actions.intervene(var, 2.0))
        assert observation in space
    instance = env.unwrapped.hidden_instance()  # type: ignore[attr-defined]
    expected = episode_kinds(mode, instance.seed, 3)  # type: ignore[arg-type]
    codes = {"hard": 0, "shift": 1, "scale": 2}
    assert observation[KINDS_KEY][:3].tolist() == [codes[k] for k in expected]
    assert observation[KINDS_KEY][3:].tolist() == [3] * (m - 3)
    assert env.unwrapped.session.kinds == expected  # type: ignore[attr-defined]


def test_a_shift_envs_samples_are_the_shift_of_the_instance() -> None:
    env = gym.make("ACDB-Calibrated-L2-v1", interventions="shift")
    observation, _ = env.reset(seed=0, options={"manifest_index": 1})
    observation, *_ = env.step(actions.intervene(4, 1.5))
    instance = env.unwrapped.hidden_instance()  # type: ignore[attr-defined]
    expected = sample_soft(
        instance.scm, "shift", 4, 1.5, instance.spec.n_int, instance.intervention_rng()
    )
    assert np.array_equal(observation["interventional"][0], expected)
    assert observation["intervention_values"][0] == 1.5 and observation["targets"][0] == 4
    # Unlike do(X4 = 1.5), the target varies: its mechanism and noise are kept.
    assert observation["interventional"][0][:, 4].std() > 0.1


@pytest.mark.parametrize("mode", ["shift", "scale", "mixed"])
def test_same_seed_gives_the_same_soft_episode(mode: str) -> None:
    steps = [(1, 2.0), (2, -1.0), (1, 0.3)]
    first = _rollout(gym.make("ACDB-Calibrated-L1-v1", interventions=mode), steps)
    second = _rollout(gym.make("ACDB-Calibrated-L1-v1", interventions=mode), steps)
    for got, want in zip(first, second, strict=True):
        for key in got:
            assert np.array_equal(got[key], want[key])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env_id", "mode", "observation"),
    [
        ("ACDB-Calibrated-L1-v1", "shift", "raw"),
        ("ACDB-L1-v0", "scale", "stats"),
        ("ACDB-Calibrated-L1-v1", "mixed", "raw"),
        ("ACDB-NonGaussian-L1-v2", "mixed", "raw"),
        ("ACDB-Nonlinear-L1-v2", "mixed", "stats"),
    ],
)
def test_both_checkers_pass_with_soft_interventions(
    env_id: str, mode: str, observation: str
) -> None:
    env = gym.make(env_id, interventions=mode, observation=observation, render_mode="ansi")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=INFINITE_BOUNDS)
        check_env(env.unwrapped)
    check_acdb_env(env, n_random_steps=40)


def test_an_unknown_mode_names_the_bad_value() -> None:
    with pytest.raises(ValueError, match=r"interventions must be one of .* got 'soft'"):
        gym.make("ACDB-Calibrated-L1-v1", interventions="soft")


@pytest.mark.parametrize("mode", ["shift", "scale"])
def test_pc_greedy_plays_soft_episodes(mode: str) -> None:
    """pc_greedy reads mean shifts. Its value ``mean + 3`` moves a child's mean by ``3 w``
    under a hard and a shift intervention alike, so it scores the same; a scale intervention
    moves no mean, so it orients the edges it tests backwards and scores lower."""
    env = gym.make("ACDB-L3-v0", interventions=mode)
    hard = gym.make("ACDB-L3-v0")
    soft_scores, hard_scores = [], []
    for index in range(8):
        result = run_episode(env, PCGreedyAgent(), manifest_index=index)
        assert result.interventions >= 1 and not result.truncated
        assert set(env.unwrapped.session.kinds) == {mode}  # type: ignore[attr-defined]
        soft_scores.append(result.score.directed_f1)
        hard_scores.append(
            run_episode(hard, PCGreedyAgent(), manifest_index=index).score.directed_f1
        )
    if mode == "shift":
        assert soft_scores == hard_scores
    else:
        assert np.mean(soft_scores) < np.mean(hard_scores) - 0.05


def test_the_design_level_spec_is_untouched() -> None:
    level = LADDERS["v1"]["L2"]
    env = ACDBEnv(level, interventions="mixed")
    assert env.level is level and env.observation_space != ACDBEnv(level).observation_space
