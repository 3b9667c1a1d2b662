"""The observation modes: per-regime statistics (``observation="stats"``) and the raw mode's
reused, read-only slot blocks."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from acdb_gym.core.graphs import PDAG
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import STATS_OBSERVATION_KEYS, ACDBEnv
from acdb_gym.envs.observations import SlotBlocks, regime_statistics
from acdb_gym.testing import check_acdb_env

PLAN = [(0, 1.0), (3, -2.0), (0, 0.5)]


def _play(env: ACDBEnv, seed: int) -> list[dict[str, np.ndarray]]:
    observation, _ = env.reset(seed=seed)
    seen = [observation]
    for var, value in PLAN:
        observation, *_ = env.step(actions.intervene(var, value))
        seen.append(observation)
    return seen


@pytest.mark.parametrize(("ladder", "level"), [("v0", "L3"), ("v1", "L2")])
def test_stats_are_the_statistics_of_the_raw_samples_bit_for_bit(ladder: str, level: str) -> None:
    raw = _play(ACDBEnv(level, ladder=ladder), seed=5)[-1]
    stats = _play(ACDBEnv(level, ladder=ladder, observation="stats"), seed=5)[-1]
    assert set(stats) == set(STATS_OBSERVATION_KEYS)
    used = int((raw["targets"] < raw["observational"].shape[1]).sum())
    assert used >= 1
    regimes = [raw["observational"], *raw["interventional"][:used]]
    for regime, samples in enumerate(regimes):
        mean, covariance = regime_statistics(samples)
        assert stats["sample_size"][regime] == len(samples)
        assert stats["mean"][regime].tobytes() == mean.tobytes()
        assert stats["covariance"][regime].tobytes() == covariance.tobytes()
    np.testing.assert_allclose(stats["covariance"][0], np.cov(raw["observational"], rowvar=False))
    unused = slice(len(regimes), None)
    assert not stats["sample_size"][unused].any() and not stats["mean"][unused].any()
    assert not stats["covariance"][unused].any()
    for key in (
        "targets",
        "intervention_values",
        "budget_remaining",
        "steps_remaining",
        "tool_result",
    ):
        np.testing.assert_array_equal(stats[key], raw[key], err_msg=key)


def test_an_intervened_node_has_its_value_as_mean_and_no_variance() -> None:
    stats = _play(ACDBEnv("L1", observation="stats"), seed=2)[1]
    assert stats["mean"][1][0] == 1.0
    assert not stats["covariance"][1][0].any() and not stats["covariance"][1][:, 0].any()


def test_a_stats_env_keeps_the_gymnasium_and_acdb_contracts() -> None:
    env = gym.make("ACDB-L2-v0", observation="stats", tools="stats", render_mode="ansi")
    check_acdb_env(env, n_random_steps=30)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(infinity|alternative render modes)")
        check_env(ACDBEnv("L1", ladder="v1", observation="stats"))


def test_an_unknown_observation_mode_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="observation must be one of"):
        ACDBEnv("L1", observation="samples")  # type: ignore[arg-type]


def test_a_block_let_go_of_is_reused_and_only_new_slots_are_written() -> None:
    blocks = SlotBlocks((4, 2, 3), pool_size=2)
    slots = [np.full((2, 3), float(k + 1)) for k in range(4)]
    first = blocks.snapshot(slots[:1])
    memory = first.__array_interface__["data"][0]
    del first
    second = blocks.snapshot(slots[:2])
    assert second.__array_interface__["data"][0] == memory  # the dropped block, reused
    assert second[1].tolist() == slots[1].tolist() and not second[2:].any()
    third = blocks.snapshot(slots[:3])  # second is held: a new block
    assert not np.shares_memory(second, third)
    assert second[2].sum() == 0 and third[2].tolist() == slots[2].tolist()


def test_a_new_episode_clears_a_reused_block() -> None:
    blocks = SlotBlocks((3, 2), pool_size=1)
    blocks.snapshot([np.ones(2), np.ones(2)])  # dropped at once
    blocks.new_episode()
    again = blocks.snapshot([np.full(2, 5.0)])
    assert again.tolist() == [[5.0, 5.0], [0.0, 0.0], [0.0, 0.0]]


def test_a_kept_slice_keeps_its_block_from_reuse() -> None:
    blocks = SlotBlocks((2, 2), pool_size=1)
    kept = blocks.snapshot([np.ones(2)])[0]
    blocks.new_episode()
    blocks.snapshot([np.full(2, 9.0)])
    assert kept.tolist() == [1.0, 1.0]


def test_raw_episode_observations_match_an_episode_that_keeps_every_observation() -> None:
    """Dropping observations (reuse) and keeping them (fresh blocks) give the same values."""
    kept = _play(ACDBEnv("L3"), seed=9)
    env = ACDBEnv("L3")
    env.reset(seed=9)
    for step, (var, value) in enumerate(PLAN, start=1):
        observation, *_ = env.step(actions.intervene(var, value))
        assert observation["interventional"].tobytes() == kept[step]["interventional"].tobytes()
        del observation
    env.step(actions.submit(PDAG.empty(env.n_nodes)))
