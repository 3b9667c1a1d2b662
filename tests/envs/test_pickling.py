"""Envs pickle mid-episode and continue exactly as the original (checkpoints, worker shipping)."""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import data_equivalence

from acdb_gym.core.graphs import PDAG
from acdb_gym.envs import actions


def _same_step(left: tuple[Any, ...], right: tuple[Any, ...]) -> None:
    observation, reward, terminated, truncated, info = left
    assert data_equivalence(observation, right[0])
    assert (reward, terminated, truncated) == right[1:4]
    assert data_equivalence(info, right[4])


def _round_trip_then_continue(env: gym.Env[Any, Any], plan: list[Any]) -> gym.Env[Any, Any]:
    """Play ``plan[0]``, pickle, then play the rest on both envs and compare every step."""
    env.reset(seed=3)
    env.step(plan[0])
    copy = pickle.loads(pickle.dumps(env))
    for action in plan[1:]:
        _same_step(env.step(action), copy.step(action))
    return copy


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("ACDB-L1-v0", {}),
        ("ACDB-Calibrated-L1-v1", {"tools": "stats", "observation": "stats"}),
        ("ACDB-Calibrated-L1-v1", {"interventions": "mixed"}),
        ("ACDB-NonGaussian-L1-v2", {}),
        ("ACDB-Nonlinear-L1-v2", {}),
        ("ACDB-Large-L0-v0", {}),
    ],
)
def test_full_env_pickles_after_reset_and_continues_identically(
    env_id: str, kwargs: dict[str, Any]
) -> None:
    env = gym.make(env_id, **kwargs)
    d = env.unwrapped.n_nodes
    plan = [
        actions.intervene(0, 1.5),
        actions.intervene(2, 3.0),  # drawn after the round trip: the same random stream
        actions.submit(PDAG.empty(d)),
    ]
    copy = _round_trip_then_continue(env, plan)
    assert copy.unwrapped.session.interventions_used == 2
    # The copy is a separate env: stepping it leaves the original alone.
    copy.reset(seed=4)
    assert env.unwrapped.session.sealed and not copy.unwrapped.session.sealed


@pytest.mark.parametrize("observation", ["flat", "graph"])
def test_design_env_pickles_after_reset_and_continues_identically(observation: str) -> None:
    env = gym.make("ACDB-Design-L1-v0", observation=observation)
    stop = env.action_space.n - 1
    copy = _round_trip_then_continue(env, [0, 1, stop])
    assert copy.unwrapped.session.interventions_used == 2


def test_pickled_env_before_reset_works() -> None:
    copy = pickle.loads(pickle.dumps(gym.make("ACDB-L1-v0")))
    observation, _ = copy.reset(seed=0)
    assert observation["observational"].shape == (200, 6)
