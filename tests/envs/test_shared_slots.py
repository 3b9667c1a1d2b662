"""The stats mode's covariance slots on large worlds (``envs/shared_slots.py``): each
observation a read-only mapping of one file, sharing no address with another, never changing
while held, and a step writing only its new slot."""

from __future__ import annotations

import gc
import os
import pickle
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from acdb_gym.core.ladders.shipped import LARGE_LADDER
from acdb_gym.envs import actions, observations, shared_slots
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.envs.observations import regime_statistics
from acdb_gym.envs.shared_slots import SharedSlots
from acdb_gym.envs.slot_blocks import SlotBlocks

pytestmark = pytest.mark.skipif(not shared_slots.available(), reason="Linux memfd only")

SHAPE = (6, 3, 7)  # a slot of 168 bytes: slots end inside pages


def _values(slot: int) -> np.ndarray:
    return np.random.default_rng(slot).standard_normal(SHAPE[1:])


class _Writer:
    """``fill`` that records which slots it wrote."""

    def __init__(self, offset: float = 0.0) -> None:
        self.written: list[int] = []
        self.offset = offset

    def __call__(self, slot: int, out: np.ndarray) -> None:
        self.written.append(slot)
        out[...] = _values(slot) + self.offset


def test_each_slot_is_written_once_and_every_observation_is_its_own_read_only_array() -> None:
    slots, fill = SharedSlots(SHAPE), _Writer()
    first = slots.fill_snapshot(1, fill)
    second = slots.fill_snapshot(3, fill)
    third = slots.fill_snapshot(3, fill)
    assert fill.written == [0, 1, 2]
    for held, count in ((first, 1), (second, 3), (third, 3)):
        assert held.shape == SHAPE and held.dtype == np.float64
        assert all((held[k] == _values(k)).all() for k in range(count))
        assert not held[count:].any()
        assert not held.flags.writeable
        with pytest.raises(ValueError, match="WRITEABLE"):
            held.flags.writeable = True
    assert not np.shares_memory(first, second) and not np.shares_memory(second, third)


def test_a_held_observation_never_changes() -> None:
    """Later slots (one starts on the page where the held observation's last slot ends) and a
    new episode's slots are written while an observation is held: it keeps its values."""
    slots = SharedSlots(SHAPE)
    held = slots.fill_snapshot(2, _Writer())
    before = held.tobytes()
    slots.fill_snapshot(5, _Writer())
    slots.new_episode()
    slots.fill_snapshot(4, _Writer(offset=100.0))
    assert held.tobytes() == before
    row = held[1]
    del held
    gc.collect()
    assert (row == _values(1)).all()  # a view keeps its observation's mapping


def test_a_new_episode_reuses_a_file_nobody_holds() -> None:
    slots = SharedSlots(SHAPE)
    held = slots.fill_snapshot(2, _Writer())
    slots.new_episode()
    slots.fill_snapshot(1, _Writer())  # the first file is held: a second one
    assert len(slots._files) == 2
    first_file = slots._files[0]
    del held
    slots.new_episode()
    fill = _Writer(offset=1.0)
    again = slots.fill_snapshot(2, fill)
    assert slots._file is first_file and fill.written == [0, 1]
    assert (again[1] == _values(1) + 1.0).all() and not again[2:].any()


def test_a_pickled_pool_and_a_forked_child_write_their_own_files() -> None:
    slots = SharedSlots(SHAPE)
    slots.fill_snapshot(2, _Writer())
    copy = pickle.loads(pickle.dumps(slots))
    assert copy._files == [] and copy._file is None
    assert (copy.fill_snapshot(1, _Writer(offset=2.0))[0] == _values(0) + 2.0).all()
    held = slots.fill_snapshot(2, _Writer())
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        slots.fill_snapshot(3, _Writer(offset=5.0))
        own = slots._file is not None and slots._file.pid == os.getpid()
        os._exit(0 if own else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert slots._file is not None and not slots._file.block[2].any()  # not the child's
    assert (held[1] == _values(1)).all() and not held[2].any()


@pytest.fixture
def shared_from_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large worlds' blocks of every size handed out as mappings (the large ladder's L1 has
    blocks under :data:`~acdb_gym.envs.observations.SHARED_MIN_BYTES`)."""
    monkeypatch.setattr(observations, "SHARED_MIN_BYTES", 0)


@pytest.mark.usefixtures("shared_from_any_size")
def test_a_large_stats_env_writes_only_the_new_regime_a_step() -> None:
    """Steps of a large world in stats mode: the observer computes each regime's covariance
    once (never copied from an earlier observation), every value is ``regime_statistics``'
    bit for bit, and two held observations share no memory."""
    env = ACDBEnv("L1", ladder="large", observation="stats")
    assert isinstance(env._blocks, SharedSlots)
    computed: list[int] = []
    observation, _ = env.reset(options={"manifest_index": 0})
    real = env._data._fill  # type: ignore[attr-defined]

    def spy(regime: int, out: np.ndarray) -> None:
        computed.append(regime)
        real(regime, out)

    env._data._fill = spy  # type: ignore[attr-defined]
    held = [observation]
    for slot in range(4):
        held.append(env.step(actions.intervene(slot, 1.0))[0])
    assert computed == [1, 2, 3, 4] and len(env._blocks._files) == 1
    samples = [env.session.observe(), *(e.samples for e in env.session.experiments)]
    for index, observation in enumerate(held):
        for regime, data in enumerate(samples[: index + 1]):
            covariance = regime_statistics(data)[1]
            assert observation["covariance"][regime].tobytes() == covariance.tobytes()
        assert not observation["covariance"][index + 1 :].any()
    assert not np.shares_memory(held[-1]["covariance"], held[-2]["covariance"])


@pytest.mark.usefixtures("shared_from_any_size")
def test_a_large_raw_env_maps_its_sample_and_experiments_from_one_file_each() -> None:
    """The raw mode: the observational sample written once an episode, each experiment's
    samples once; every observation its own read-only arrays with the true values."""
    env = ACDBEnv("L1", ladder="large")
    first, _ = env.reset(options={"manifest_index": 1})
    pool, blocks = env._sample_blocks, env._blocks
    assert isinstance(pool, SharedSlots) and isinstance(blocks, SharedSlots)
    pool._files[0].block.flags.writeable = False  # a second write of the sample would raise
    held = [first]
    for slot in range(3):
        held.append(env.step(actions.intervene(slot, 1.0))[0])
    sample = env.level.instance(1).d_obs.tobytes()
    experiments = [e.samples for e in env.session.experiments]
    for index, observation in enumerate(held):
        assert observation["observational"].tobytes() == sample
        assert not observation["observational"].flags.writeable
        for slot, samples in enumerate(experiments[:index]):
            assert observation["interventional"][slot].tobytes() == samples.tobytes()
        assert not observation["interventional"][index:].any()
    for key in ("observational", "interventional"):
        assert not np.shares_memory(held[0][key], held[1][key])
    assert len(pool._files) == 1 and len(blocks._files) == 1


@pytest.mark.usefixtures("shared_from_any_size")
def test_a_large_env_with_mapped_blocks_passes_gymnasiums_checker() -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(infinity|alternative render modes)")
        for mode in ("raw", "stats"):
            check_env(ACDBEnv("L1", ladder="large", observation=mode))  # type: ignore[arg-type]


def test_only_large_blocks_are_mapped() -> None:
    """Under :data:`~acdb_gym.envs.observations.SHARED_MIN_BYTES` (the large ladder's L1, the
    raw blocks of d = 1,000) and on small worlds, blocks are copied; the stats covariances of
    d = 1,000 and the raw blocks of d = 2,000 are mapped."""
    assert isinstance(ACDBEnv("L1", ladder="large", observation="stats")._blocks, SlotBlocks)
    assert isinstance(ACDBEnv("L1", observation="stats")._blocks, SlotBlocks)
    spec = LARGE_LADDER["L5"].spec  # d = 1,000
    assert isinstance(observations.slot_pool(spec, "stats"), SharedSlots)
    assert isinstance(observations.slot_pool(spec, "raw"), SlotBlocks)
    assert isinstance(observations.sample_pool(spec, "raw"), SlotBlocks)
    assert observations.sample_pool(spec, "stats") is None
    spec = LARGE_LADDER["L6"].spec  # d = 2,000
    assert isinstance(observations.slot_pool(spec, "raw"), SharedSlots)
    assert isinstance(observations.sample_pool(spec, "raw"), SharedSlots)


@pytest.mark.usefixtures("shared_from_any_size")
def test_a_pickled_large_stats_env_goes_on_with_the_same_statistics() -> None:
    """A pickled env keeps no file: its next observation writes every regime again, from the
    covariances the observer handed out last, and a reset reuses the env's file."""
    env = ACDBEnv("L1", ladder="large", observation="stats")
    env.reset(options={"manifest_index": 0})
    for slot in range(2):
        env.step(actions.intervene(slot, 1.0))
    copy = pickle.loads(pickle.dumps(env))
    observation = copy.step(actions.intervene(2, 1.0))[0]
    samples = [copy.session.observe(), *(e.samples for e in copy.session.experiments)]
    for regime, data in enumerate(samples):
        assert observation["covariance"][regime].tobytes() == regime_statistics(data)[1].tobytes()
    del observation
    files = list(copy._blocks._files)
    copy.reset(options={"manifest_index": 0})
    copy.step(actions.intervene(0, 1.0))
    assert copy._blocks._files == files
