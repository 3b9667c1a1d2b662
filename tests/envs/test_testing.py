"""The shipped conformance check: it passes on the real env and catches each kind of breakage."""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.core.graphs import DAG
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.envs.episode_rules import UNSCORED
from acdb_gym.testing import OBSERVATION_KEYS, SCORE_FIELDS, check_acdb_env, find_hidden_leak

STEPS = 20


def base_env() -> gym.Env[Any, Any]:
    """A small env whose 12-step limit the 20 random steps are sure to reach."""
    return gym.make("ACDB-L0-v0", tools="stats", max_steps=12, render_mode="ansi")


def hidden(env: gym.Env[Any, Any]) -> Any:
    base = env.unwrapped
    assert isinstance(base, ACDBEnv)
    return base.hidden_instance()


class AddToInfo(gym.Wrapper[Any, Any, Any, Any]):
    """Adds ``extra(env)`` to every info dict."""

    def __init__(self, env: gym.Env[Any, Any], extra: Any) -> None:
        super().__init__(env)
        self.extra = extra

    def reset(self, **kwargs: Any) -> Any:
        observation, info = self.env.reset(**kwargs)
        return observation, {**info, **self.extra(self.env)}

    def step(self, action: Any) -> Any:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, reward, terminated, truncated, {**info, **self.extra(self.env)}


class ScoreEveryStep(gym.Wrapper[Any, Any, Any, Any]):
    def step(self, action: Any) -> Any:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, reward, terminated, truncated, {**info, "scored": True}


class LeakyRender(gym.Wrapper[Any, Any, Any, Any]):
    def render(self) -> Any:
        edges = ", ".join(f"X{i}->X{j}" for i, j in hidden(self.env).dag.edges())
        return f"{self.env.render()}debug: {edges}\n"


class NeverEnds(gym.Wrapper[Any, Any, Any, Any]):
    def step(self, action: Any) -> Any:
        observation, _, _, _, info = self.env.step(action)
        unscored = {**info, "scored": False, "score": np.full_like(info["score"], UNSCORED)}
        return observation, 0.0, False, False, unscored


class NoisyObservations(gym.Wrapper[Any, Any, Any, Any]):
    """Adds noise from a generator that ignores the seed."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.rng = np.random.default_rng()

    def step(self, action: Any) -> Any:
        observation, *rest = self.env.step(action)
        observation["observational"] = observation["observational"] + self.rng.normal()
        return (observation, *rest)


class RaisesOnCorrelation(gym.Wrapper[Any, Any, Any, Any]):
    def step(self, action: Any) -> Any:
        if isinstance(action, tuple) and action[0] == 1:
            raise RuntimeError("correlation is broken")
        return self.env.step(action)


class SwallowsBadActions(gym.Wrapper[Any, Any, Any, Any]):
    def step(self, action: Any) -> Any:
        try:
            return self.env.step(action)
        except ValueError:
            return self.env.step((1, {"i": np.int64(0), "j": np.int64(0), "regime": np.int64(0)}))


class NegativeSteps(gym.Wrapper[Any, Any, Any, Any]):
    def step(self, action: Any) -> Any:
        observation, *rest = self.env.step(action)
        observation["steps_remaining"] = np.array([-1], dtype=np.int64)
        return (observation, *rest)


class DropsValues(gym.ObservationWrapper[Any, Any, Any]):
    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        spaces = dict(env.observation_space.spaces)  # type: ignore[attr-defined]
        del spaces["intervention_values"]
        self.observation_space = gym.spaces.Dict(spaces)

    def observation(self, observation: Any) -> Any:
        return {key: value for key, value in observation.items() if key != "intervention_values"}


class FourKinds(gym.ActionWrapper[Any, Any, Any]):
    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.action_space = gym.spaces.OneOf(env.action_space.spaces[:4])  # type: ignore[attr-defined]

    def action(self, action: Any) -> Any:
        return action


def test_passes_on_the_real_env(strict_warnings: None) -> None:
    check_acdb_env(base_env(), seed=3, n_random_steps=STEPS)


BROKEN = [
    (
        "adjacency in info",
        lambda env: AddToInfo(env, lambda e: {"graph": hidden(e).dag.adjacency.copy()}),
        "info after reset reveals the hidden world: value['graph'] has the true adjacency",
    ),
    (
        "weights printed in info",
        lambda env: AddToInfo(env, lambda e: {"note": str(np.round(hidden(e).weights, 3))}),
        "values are not numbers: ['note']",
    ),
    (
        "a key that appears late",
        lambda env: AddToInfo(env, lambda e: {"late": 1} if e.unwrapped.steps_taken else {}),
        "the same keys at every step",
    ),
    (
        "an observation key in info",
        lambda env: AddToInfo(env, lambda e: {"targets": 0}),
        "shares keys with the observation: ['targets']",
    ),
    ("edges in the render", LeakyRender, "the ansi render after reset reveals the hidden world"),
    ("score after reset", lambda env: AddToInfo(env, lambda e: {"scored": True}), "after reset"),
    ("score before the end", ScoreEveryStep, "scored before the end"),
    ("never ends", NeverEnds, "did not end at its step limit"),
    ("nondeterministic", NoisyObservations, "the same seed gave different trajectories"),
    ("raises on a valid action", RaisesOnCorrelation, "raised RuntimeError"),
    ("swallows out-of-space actions", SwallowsBadActions, "did not raise ValueError"),
    ("observation outside its space", NegativeSteps, "not in the observation space"),
    ("missing observation key", DropsValues, "observation keys must be"),
    ("four action kinds", FourKinds, "action_space must have 5 kinds"),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("wrap", "message"),
    [(wrap, message) for _, wrap, message in BROKEN],
    ids=[name for name, _, _ in BROKEN],
)
def test_catches_a_broken_variant(wrap: Any, message: str) -> None:
    with pytest.raises(AssertionError, match=re.escape(message)):
        check_acdb_env(wrap(base_env()), seed=3, n_random_steps=STEPS)


def test_rejects_an_env_that_is_not_acdb() -> None:
    with pytest.raises(AssertionError, match="no 'hidden_instance'"):
        check_acdb_env(gym.make("CartPole-v1"))


def test_needs_at_least_one_random_step() -> None:
    with pytest.raises(ValueError, match="n_random_steps must be at least 1, got 0"):
        check_acdb_env(base_env(), n_random_steps=0)


def test_public_constants() -> None:
    assert len(SCORE_FIELDS) == 19 and SCORE_FIELDS[0] == "skeleton_precision"
    assert SCORE_FIELDS[-1] == "anytime_f1"
    assert set(OBSERVATION_KEYS) == set(base_env().observation_space.spaces)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- find_hidden_leak

INSTANCE = LADDERS["v0"]["L1"].instance(0)
WEIGHTS = INSTANCE.weights[INSTANCE.dag.adjacency]


@pytest.mark.parametrize(
    ("value", "where"),
    [
        (INSTANCE, "is the hidden Instance"),
        (INSTANCE.scm, "is the hidden LinearGaussianSCM"),
        ({"dag": INSTANCE.dag}, "is the true graph"),
        ([INSTANCE.dag.to_pdag()], "is the true graph"),
        (INSTANCE.dag.adjacency.astype(np.float64), "true adjacency"),
        (INSTANCE.dag.adjacency.T.copy(), "true adjacency"),
        (INSTANCE.dag.adjacency.ravel().astype(np.int8), "true adjacency"),
        (np.array([0.3, WEIGHTS[2]]), "holds a true edge weight"),
        (float(WEIGHTS[0]), "holds a true edge weight"),
        (f"w = {WEIGHTS[1]:.6f}", "prints a true edge weight"),
        (f"w = {-abs(WEIGHTS[1]):.8f}", "prints a true edge weight"),
        (repr(INSTANCE.weights), "prints a true edge weight"),
        (" ".join(f"{w:.3f}" for w in WEIGHTS), "prints every true edge weight"),
        (str(INSTANCE.dag.edges()), "true edge list"),
        (", ".join(f"X{i} -> X{j}" for i, j in INSTANCE.dag.edges()), "true edge list"),
        ({"text": str(INSTANCE.dag.adjacency.astype(int))}, "true edge list"),
    ],
)
def test_find_hidden_leak_finds(value: Any, where: str) -> None:
    found = find_hidden_leak(value, INSTANCE)
    assert found is not None and where in found


@pytest.mark.parametrize(
    "value",
    [
        {"budget": 3, "error": "pairs directed both ways: X0 <-> X1"},
        "graph has a directed cycle: X1 -> X2 -> X0 -> X1",
        np.zeros((6, 6)),
        np.ones((6, 6)) - np.eye(6),
        INSTANCE.d_obs,
        DAG.empty(6),
        f"w = {WEIGHTS[1]:.3f}",  # one weight to 3 decimals happens by chance
        " ".join(f"{w:.3f}" for w in WEIGHTS[:-1]),
        None,
        True,
    ],
)
def test_find_hidden_leak_passes_innocent_values(value: Any) -> None:
    assert find_hidden_leak(value, INSTANCE) is None
