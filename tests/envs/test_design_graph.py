"""The design env's size-free graph observation: layout, masks, padding, custom sizes."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from acdb_gym.agents.rl.training_worlds import UNSEEN_SIZE_LEVEL
from acdb_gym.core.graphs import cpdag
from acdb_gym.core.ladders.shipped import LADDERS, Level
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.envs.design.graph_obs import NODE_FEATURES, PAIR_FEATURES
from acdb_gym.envs.registration import DESIGN_IDS

D40 = UNSEEN_SIZE_LEVEL


def graph_env(level: str | Level = "L1", **kwargs: Any) -> InterventionDesignEnv:
    return InterventionDesignEnv(level, observation="graph", **kwargs)


@pytest.mark.parametrize("env_id", DESIGN_IDS)
def test_every_design_id_gives_a_padded_graph_observation_in_its_space(env_id: str) -> None:
    env = gym.make(env_id, observation="graph", estimator="true_cpdag")
    base = env.unwrapped
    assert isinstance(base, InterventionDesignEnv)
    observation, _ = env.reset(seed=3)
    d = base.n_nodes
    assert env.observation_space.contains(observation)
    assert observation["nodes"].shape == (64, len(NODE_FEATURES))
    assert observation["pairs"].shape == (64, 64, len(PAIR_FEATURES))
    assert observation["node_mask"].tolist() == [1] * d + [0] * (64 - d)
    assert not observation["nodes"][d:].any() and not observation["pairs"][d:].any()
    assert np.array_equal(observation["action_mask"].astype(bool), base.action_masks())
    assert env.action_space == gym.spaces.Discrete(65)


@pytest.mark.parametrize(("level", "ladder"), [("L1", "v0"), ("L5", "v1")])
def test_gymnasium_check_env_passes_on_the_graph_mode(level: str, ladder: str) -> None:
    check_env(graph_env(level, ladder=ladder, estimator="true_cpdag"), skip_render_check=True)


def test_features_hold_what_the_docs_say() -> None:
    env = graph_env("L5", ladder="v0", estimator="true_cpdag", max_nodes=12)
    instance = generate_instance(LADDERS["v0"]["L5"].spec, 10**9 + 5)
    observation, _ = env.reset(options={"instance": instance})
    truth = cpdag(instance.dag)
    d = 10
    nodes, pairs = observation["nodes"][:d], observation["pairs"][:d, :d]
    assert np.array_equal(pairs[..., 0], truth.directed)
    assert np.array_equal(pairs[..., 1], truth.directed.T)
    assert np.array_equal(pairs[..., 2], truth.undirected)
    assert np.allclose(nodes[:, 1], truth.undirected.sum(axis=1) / (d - 1))
    correlation = np.corrcoef(instance.d_obs, rowvar=False)
    np.fill_diagonal(correlation, 0.0)
    assert np.allclose(pairs[..., 3], correlation, atol=1e-6)
    assert np.allclose(observation["budget"], [1.0, instance.budget / d, 1.0])
    target = int(np.argmax(truth.undirected.sum(axis=1)))
    observation, *_ = env.step(target)
    nodes, pairs = observation["nodes"][:d], observation["pairs"][:d, :d]
    assert nodes[target, 0] == 1 and nodes[:, 0].sum() == 1
    assert not pairs[target, :, 2].any()  # every edge at the target is oriented now
    assert np.array_equal(pairs[..., 4], pairs[..., 5].T)
    assert nodes[target, 4] == pairs[target, :, 4].max() > 0


def test_graph_and_flat_modes_play_the_same_episode() -> None:
    instance = generate_instance(LADDERS["v1"]["L1"].spec, 10**9)
    flat = InterventionDesignEnv("L1", ladder="v1", estimator="pc")
    graph = graph_env("L1", ladder="v1", estimator="pc")
    flat.reset(options={"instance": instance})
    graph.reset(options={"instance": instance})
    for target in (0, 5, 7):
        flat.step(target)
        graph.step(target)
    _, flat_reward, *_ = flat.step(12)
    _, graph_reward, done, _, _ = graph.step(64)
    assert done and flat_reward == graph_reward


def test_padding_actions_and_stop_end_the_episode() -> None:
    env = graph_env("L1", estimator="true_cpdag", max_nodes=10)
    env.reset(seed=0)
    assert env.action_masks().tolist() == [True] * 6 + [False] * 4 + [True]
    _, _, terminated, _, info = env.step(8)  # padding, masked out: acts as stop
    assert terminated and info["interventions_used"] == 0
    with pytest.raises(ValueError, match=r"\[0, 10\]"):
        env.step(11)


def test_a_custom_level_of_unseen_size_runs_in_both_modes() -> None:
    instance = generate_instance(D40.spec, 10**9 + 10**6 + 1)
    for env in (graph_env(D40, estimator="pc"), InterventionDesignEnv(D40, estimator="pc")):
        observation, _ = env.reset(options={"instance": instance})
        assert env.observation_space.contains(observation)
        _, _, terminated, _, _ = env.step(0)
        assert not terminated


def test_max_nodes_below_d_is_refused() -> None:
    with pytest.raises(ValueError, match=r"max_nodes must be an integer >= d = 40, got 30"):
        graph_env(D40, max_nodes=30)
    with pytest.raises(ValueError, match="observation must be one of"):
        InterventionDesignEnv("L1", observation="image")  # type: ignore[arg-type]
