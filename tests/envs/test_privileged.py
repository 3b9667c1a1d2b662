"""Privileged access (one protocol for both envs) and the one reward mapping they share."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import acdb_gym  # noqa: F401
from acdb_gym.core.graphs import PDAG
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.scoring import ScoreReport, score
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv, RewardName, reward_of
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.envs.privileged import HiddenInstanceAccess, PrivilegedEnv, hidden_instance_of

ENV_IDS = ["ACDB-L1-v0", "ACDB-Calibrated-L0-v1", "ACDB-Design-L1-v0"]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_hidden_instance_of_unwraps_any_acdb_env(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(options={"manifest_index": 2})
    level = env.unwrapped.level  # type: ignore[attr-defined]
    assert isinstance(env.unwrapped, PrivilegedEnv)
    assert hidden_instance_of(env) is level.instance(2)


def test_both_envs_share_one_accessor() -> None:
    assert ACDBEnv.hidden_instance is InterventionDesignEnv.hidden_instance
    assert ACDBEnv.hidden_instance is HiddenInstanceAccess.hidden_instance


@pytest.mark.parametrize("make", [lambda: ACDBEnv("L1"), lambda: InterventionDesignEnv("L1")])
def test_no_instance_before_reset(make: Any) -> None:
    with pytest.raises(RuntimeError, match=r"call reset\(\) before hidden_instance\(\)"):
        hidden_instance_of(make())


def test_an_env_without_privileged_access_is_a_clear_type_error() -> None:
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    assert not isinstance(env.unwrapped, PrivilegedEnv)
    with pytest.raises(TypeError, match="CartPoleEnv offers no privileged access"):
        hidden_instance_of(env)


# --------------------------------------------------------------------------- rewards


def test_reward_of_maps_each_name_to_its_score() -> None:
    truth = LADDERS["v0"]["L1"].instance(0).dag
    report = score(truth, PDAG.empty(truth.n_nodes))
    assert report.shd > 0
    assert reward_of(report, "neg_shd") == -float(report.shd)
    assert reward_of(report, "directed_f1") == report.directed_f1
    assert reward_of(report, "skeleton_f1") == report.skeleton_f1
    assert type(reward_of(report, "neg_shd")) is float


@pytest.mark.parametrize("reward", ["directed_f1", "neg_shd", "skeleton_f1"])
def test_both_envs_pay_reward_of_their_final_score(reward: RewardName) -> None:
    env = gym.make("ACDB-L1-v0", reward=reward)
    env.reset(options={"manifest_index": 0})
    env.step(actions.intervene(0, 1.0))
    _, paid, terminated, _, _ = env.step(actions.submit(PDAG.empty(6)))
    assert terminated and paid == reward_of(ScoreReport(**env.unwrapped.details()["score"]), reward)

    design = gym.make("ACDB-Design-L1-v0", estimator="true_cpdag", reward=reward)
    design.reset(options={"manifest_index": 0})
    _, paid, terminated, _, _ = design.step(np.int64(6))
    assert terminated and paid == reward_of(
        ScoreReport(**design.unwrapped.details()["score"]), reward
    )
