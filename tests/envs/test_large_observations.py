"""Observations of levels above d = 40: slots bounded by what an episode can hold, Boxes without
bound arrays, the observational sample handed out once; levels up to d = 40 keep their shapes."""

from __future__ import annotations

import mmap
import pickle
import warnings

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from acdb_gym.core.graphs import minimum_intervention_set, random_order_dag
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.envs.actions import TernaryGrid
from acdb_gym.envs.observations import RealBox, observation_slots, regime_statistics
from acdb_gym.envs.slot_blocks import _zero_block


@pytest.mark.parametrize(("d", "k"), [(41, 60), (50, 75), (60, 600), (80, 3000), (120, 180)])
def test_the_slots_bound_the_budget_of_every_graph(d: int, k: int) -> None:
    """Sparse and dense graphs: |I*| + slack never exceeds the slots (a proof, checked here)."""
    spec = LevelSpec(d=d, k=k, n_obs=10, n_int=10, noise_var=1.0, slack=1)
    slots = observation_slots(spec)
    assert slots < spec.max_interventions
    rng = np.random.default_rng(d + k)
    budgets = [
        len(minimum_intervention_set(random_order_dag(d, n_edges=k, rng=rng))) + spec.slack
        for _ in range(40)
    ]
    assert max(budgets) <= slots


def test_levels_up_to_d_40_keep_their_shapes_and_plain_boxes() -> None:
    for ladder in ("v0", "v1"):
        for level in ALL_LADDERS[ladder].values():
            assert observation_slots(level.spec) == level.spec.max_interventions
    env = ACDBEnv("L5", ladder="v1", observation="stats")
    covariance = env.observation_space["covariance"]  # type: ignore[index]
    assert type(covariance) is spaces.Box and covariance.shape == (30, 30, 30)


def test_a_real_box_keeps_no_bound_arrays_and_behaves_as_a_box() -> None:
    box = RealBox((300, 500, 500))
    assert box.low.strides == (0, 0, 0) and box.high.strides == (0, 0, 0)
    assert box.shape == (300, 500, 500) and not box.is_bounded("below")
    small = RealBox((2, 3))
    sample = small.sample()
    assert sample.shape == (2, 3) and small.contains(sample)
    assert not small.contains(np.zeros((3, 2)))
    assert pickle.loads(pickle.dumps(small)) == small
    assert small == spaces.Box(-np.inf, np.inf, (2, 3), np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["raw", "stats"])
def test_a_large_env_is_sized_by_its_slots(mode: str) -> None:
    env = ACDBEnv("L4", ladder="large", observation=mode)  # type: ignore[arg-type]
    assert env.max_interventions == 500 // 2 + 1
    observation, _ = env.reset(options={"manifest_index": 0})
    assert env.observation_space.contains(observation)
    assert len(observation["targets"]) == env.max_interventions


def test_a_large_raw_env_pools_its_observational_sample_read_only() -> None:
    env = ACDBEnv("L1", ladder="large")
    first, _ = env.reset(options={"manifest_index": 1})
    second, *_ = env.step(actions.intervene(2, 1.0))
    # Two held observations share no memory (Gymnasium's checker compares memory, not objects).
    assert not np.shares_memory(first["observational"], second["observational"])
    assert not first["observational"].flags.writeable
    assert first["observational"].tobytes() == env.level.instance(1).d_obs.tobytes()
    assert second["observational"].tobytes() == first["observational"].tobytes()
    assert not np.shares_memory(first["interventional"], second["interventional"])
    # A caller that lets go of each observation gets the same block back: no copy per step.
    address = second["observational"].__array_interface__["data"][0]
    del first, second
    third, *_ = env.step(actions.intervene(3, 1.0))
    fourth, *_ = env.step(actions.intervene(4, 1.0))
    addresses = {o["observational"].__array_interface__["data"][0] for o in (third, fourth)}
    assert len(addresses) == 2 and address in addresses


def test_a_large_env_passes_gymnasiums_checker() -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(infinity|alternative render modes)")
        check_env(ACDBEnv("L1", ladder="large", observation="stats"))


def test_stats_covariances_live_in_two_blocks_and_stay_true() -> None:
    """A caller keeping the last observation: the pool holds two blocks, and the covariances
    read back from the last block are each regime's own."""
    env = ACDBEnv("L1", ladder="large", observation="stats")
    observation, _ = env.reset(options={"manifest_index": 0})
    for slot in range(6):
        observation = env.step(actions.intervene(slot, 1.0))[0]
    assert len(env._blocks._entries) == 2
    covariance = observation["covariance"]
    samples = [env.session.observe(), *(e.samples for e in env.session.experiments)]
    for regime, data in enumerate(samples):
        np.testing.assert_array_equal(covariance[regime], regime_statistics(data)[1])
    assert not covariance[len(samples) :].any()


def test_a_block_larger_than_memory_is_mapped_lazily() -> None:
    block = _zero_block((1002, 2000, 2000))  # 30 GiB, never resident
    block[7] = 1.0
    assert block.base is not None and block[...].base is block
    assert block[7].sum() == 2000 * 2000 and not block[6].any()


def test_a_ternary_grid_keeps_no_arrays_and_behaves_as_a_multidiscrete() -> None:
    grid = TernaryGrid(6)
    plain = spaces.MultiDiscrete(np.full((6, 6), 3))
    assert grid.nvec.strides == (0, 0) and grid.start.strides == (0, 0)
    assert grid == plain and grid.shape == (6, 6)
    grid.seed(0)
    sample = grid.sample()
    assert sample.shape == (6, 6) and grid.contains(sample) and plain.contains(sample)
    assert not grid.contains(np.full((6, 6), 3)) and not grid.contains(np.zeros((5, 6)))
    assert pickle.loads(pickle.dumps(grid)) == grid
    large = ACDBEnv("L1", ladder="large")
    submit = large.action_space.spaces[int(actions.ActionKind.SUBMIT_GRAPH)]  # type: ignore[attr-defined]
    assert isinstance(submit["graph"], TernaryGrid)
    large.reset(options={"manifest_index": 0})
    held = large._data.observe()["observational"]
    assert not held.flags.writeable and held.tobytes() == large._instance.d_obs.tobytes()


def test_a_mapped_block_is_populated_once_and_filled_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lazily mapped pool block: slots written by ``fill`` straight into the block, the same
    values as copies, fresh slots populated once (never again once touched), zeros elsewhere."""
    from acdb_gym.envs import slot_blocks as observations

    monkeypatch.setattr(observations, "_LAZY_BLOCK_BYTES", 1)  # map every block
    populated: list[tuple[int, int]] = []
    real = observations._populate

    def spy(block: np.ndarray, start: int, stop: int) -> None:
        populated.append((start, stop))
        real(block, start, stop)

    monkeypatch.setattr(observations, "_populate", spy)
    blocks = observations.SlotBlocks((5, 3, 3), pool_size=2)
    values = [np.full((3, 3), float(k + 1)) for k in range(5)]

    def fill(slot: int, out: np.ndarray) -> None:
        out[...] = values[slot]

    first = blocks.fill_snapshot(2, fill)
    assert isinstance(first.base.base, mmap.mmap)
    second = blocks.fill_snapshot(3, fill)  # first is held: a second block
    del first
    third = blocks.fill_snapshot(4, fill)  # reuses the first block: slots 2 and 3 only
    assert [third[k].tolist() for k in range(4)] == [values[k].tolist() for k in range(4)]
    assert not third[4].any() and not np.shares_memory(second, third)
    assert populated == [(0, 2), (0, 3), (2, 4)]
    del second, third
    blocks.new_episode()
    again = blocks.fill_snapshot(1, fill)  # a reused block: its pages are resident already
    assert populated[-1][0] >= populated[-1][1]  # an empty range: nothing to fault in
    assert again[0].tolist() == values[0].tolist() and not again[1:].any()


def test_stats_observations_are_unchanged_bit_for_bit_across_episodes() -> None:
    """Covariances computed into reused blocks, and means from their pool, over two episodes
    whose caller keeps only the last observation: every regime's statistics exactly."""
    env = ACDBEnv("L1", ladder="large", observation="stats")
    for _ in range(2):
        observation, _ = env.reset(options={"manifest_index": 0})
        for slot in range(5):
            observation = env.step(actions.intervene(slot, 1.0))[0]
        samples = [env.session.observe(), *(e.samples for e in env.session.experiments)]
        for regime, data in enumerate(samples):
            mean, covariance = regime_statistics(data)
            assert observation["mean"][regime].tobytes() == mean.tobytes()
            assert observation["covariance"][regime].tobytes() == covariance.tobytes()
        assert not observation["mean"][len(samples) :].any()
        assert not observation["mean"].flags.writeable
