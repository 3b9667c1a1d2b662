"""Vectorized use: Gymnasium's async vector env with OneOf actions, SB3's SubprocVecEnv."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.envs import actions

N_ENVS = 4
D = 6  # v0 L1


def test_async_vector_env_takes_a_tuple_of_oneof_actions() -> None:
    envs = gym.make_vec("ACDB-L1-v0", num_envs=N_ENVS, vectorization_mode="async")
    try:
        # Gymnasium batches OneOf as a Tuple: one typed action per sub-environment.
        assert isinstance(envs.single_action_space, gym.spaces.OneOf)
        assert envs.action_space == gym.spaces.Tuple([envs.single_action_space] * N_ENVS)
        observation, info = envs.reset(seed=0)
        assert observation["observational"].shape == (N_ENVS, 200, D)
        assert observation["interventional"].shape == (N_ENVS, D, 50, D)
        budgets = observation["budget_remaining"][:, 0].copy()
        assert np.array_equal(budgets, info["budget"])

        batch = tuple(actions.intervene(k, float(k)) for k in range(N_ENVS))
        assert envs.action_space.contains(batch)
        observation, reward, terminated, truncated, info = envs.step(batch)
        assert np.array_equal(observation["targets"][:, 0], np.arange(N_ENVS))
        assert np.array_equal(observation["budget_remaining"][:, 0], budgets - 1)
        assert not (terminated.any() or truncated.any()) and not reward.any()

        # Different kinds in one batch; only the submitting env ends.
        mixed = (
            actions.submit(PDAG.empty(D)),
            actions.correlation(0, 1),  # invalid with tools="raw"
            actions.intervene(5, -1.0),
            actions.submit(PDAG.from_edges(D, directed=[(0, 1)])),
        )
        observation, reward, terminated, truncated, info = envs.step(mixed)
        assert terminated.tolist() == [True, False, False, True]
        assert info["scored"].tolist() == [True, False, False, True]
        assert info["score"][0, SCORE_FIELDS.index("directed_f1")] == 0.0
        assert info["invalid_actions"].tolist() == [0, 1, 0, 0]
        assert "tools='raw'" in envs.call("details")[1]["error"]
        assert observation["steps_remaining"][:, 0].tolist() == [14, 14, 14, 14]

        # Next-step autoreset: the ended envs start afresh and ignore this step's action.
        observation, *_ = envs.step(tuple(actions.intervene(0, 1.0) for _ in range(N_ENVS)))
        assert observation["steps_remaining"][:, 0].tolist() == [16, 13, 13, 16]
        assert envs.action_space.contains(envs.action_space.sample())
    finally:
        envs.close()


@pytest.mark.slow
def test_sb3_subproc_vec_env_on_the_design_env() -> None:
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    # "module:id" makes each fresh worker process import acdb_gym, which registers the ids.
    envs = make_vec_env(
        "acdb_gym:ACDB-Design-L1-v0",
        n_envs=2,
        seed=0,
        vec_env_cls=SubprocVecEnv,
        env_kwargs={"estimator": "true_cpdag"},
    )
    try:
        observation = envs.reset()
        assert isinstance(observation, np.ndarray)
        size = D * (D - 1) // 2 + 2 * D * D + D + 1
        assert observation.shape == (2, size)
        masks = envs.env_method("action_masks")
        assert all(mask.shape == (D + 1,) and mask.all() for mask in masks)
        observation, reward, done, info = envs.step(np.array([0, D]))
        assert isinstance(observation, np.ndarray)
        assert done.tolist() == [False, True]
        assert reward[1] == info[1]["score"][SCORE_FIELDS.index("directed_f1")]
        assert info[1]["terminal_observation"].shape == (size,)
        assert observation.shape == (2, size)
    finally:
        envs.close()


@pytest.mark.slow
def test_maskable_ppo_trains_a_few_steps_on_the_design_env() -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    env = gym.make("ACDB-Design-L0-v0", estimator="true_cpdag")
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, n_epochs=1, seed=0)
    model.learn(total_timesteps=32)
    observation, _ = env.reset(seed=1)
    action, _ = model.predict(observation, action_masks=env.unwrapped.action_masks())  # type: ignore[attr-defined]
    assert env.action_space.contains(int(action))
