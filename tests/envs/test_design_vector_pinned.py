"""The vectorized design env's trajectories on fixed seeds, pinned bit for bit.

The digests below were computed before the fresh resets were batched (PC's skeleton searches
of the worlds that reset together stacked into one array program, the worlds' setup stacked).
They cover every observation, reward, termination and info array of 120 vector steps of 16
worlds on fresh worlds (each reset a new world), of the same on a bank, and of a single env
playing fresh episodes; any change, even in the last bit of one float, changes a digest.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.discovery._two_sample import ShiftReference
from acdb_gym.envs.design import cache
from acdb_gym.envs.design.bank import build_bank
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.envs.design.vector import DesignVectorEnv

PINNED = {
    "vector_fresh": "24f9c29a8fa90d737f4d",
    "vector_bank": "1823b2839f0427b6cb84",
    "single_fresh": "b656b86a9e04d47aa65b",
}
"""sha256 prefixes of the trajectories (see :func:`vector_digest`, :func:`single_digest`)."""


def _update(sha: Any, value: Any) -> None:
    if isinstance(value, dict):
        for key in sorted(value):
            sha.update(key.encode())
            _update(sha, value[key])
    else:
        array = np.asarray(value)
        sha.update(str(array.dtype).encode())
        sha.update(array.tobytes())


def vector_digest(venv: DesignVectorEnv, *, steps: int = 120) -> str:
    """Digest of ``steps`` vector steps of seeded random valid actions after ``reset(seed=7)``."""
    policy = np.random.default_rng(2024)
    sha = hashlib.sha256()
    observation, info = venv.reset(seed=7)
    _update(sha, observation)
    _update(sha, info)
    for _ in range(steps):
        masks = venv.action_masks()
        actions = (policy.random(masks.shape) * masks).argmax(axis=1)
        observation, reward, terminated, truncated, info = venv.step(actions)
        for value in (observation, reward, terminated, truncated, info):
            _update(sha, value)
    return sha.hexdigest()[:20]


def single_digest(*, episodes: int = 60) -> str:
    """Digest of ``episodes`` fresh episodes of the single env (one ``reset(seed=3)``, then
    ``reset()`` draws every world) under seeded random valid actions."""
    env = InterventionDesignEnv("L1", ladder="v0")
    policy = np.random.default_rng(99)
    sha = hashlib.sha256()
    env.reset(seed=3)
    for _ in range(episodes):
        observation, info = env.reset()
        _update(sha, observation)
        _update(sha, info)
        terminated = False
        while not terminated:
            mask = env.action_masks()
            action = int((policy.random(mask.shape) * mask).argmax())
            observation, reward, terminated, truncated, info = env.step(action)
            for value in (observation, reward, terminated, truncated, info):
                _update(sha, value)
    return sha.hexdigest()[:20]


@pytest.fixture(autouse=True)
def _cold_caches() -> None:
    cache.clear()


def test_fresh_vector_trajectories_match_the_pinned_digest() -> None:
    assert vector_digest(DesignVectorEnv(16, "L1", ladder="v0")) == PINNED["vector_fresh"]


def test_bank_vector_trajectories_match_the_pinned_digest(tmp_path: Path) -> None:
    bank = build_bank(tmp_path / "b", ladder="v0", level="L1", seeds=range(700_000, 700_040))
    venv = DesignVectorEnv(16, "L1", ladder="v0", bank=bank)
    assert vector_digest(venv) == PINNED["vector_bank"]


def test_fresh_single_trajectories_match_the_pinned_digest() -> None:
    assert single_digest() == PINNED["single_fresh"]


@pytest.mark.parametrize(("ladder", "level"), [("v0", "L1"), ("v0", "L5"), ("v1", "L2")])
def test_stacked_world_summaries_equal_one_at_a_time(ladder: str, level: str) -> None:
    """What a batch of fresh resets computes stacked (moments, the shift tests' observational
    half) is, bit for bit, what one world alone gets."""
    spec = get_level(ladder, level).spec
    instances = [generate_instance(spec, 910_000 + i) for i in range(12)]
    data = np.stack([instance.d_obs for instance in instances])
    stacked = zip(
        cache.stacked_moments(data),
        ShiftReference.many(np.ascontiguousarray(data.transpose(0, 2, 1))),
        strict=True,
    )
    for instance, (parts, reference) in zip(instances, stacked, strict=True):
        for part, alone in zip(parts, cache.moments(instance.d_obs), strict=True):
            assert part.tobytes() == alone.tobytes() and part.dtype == alone.dtype
        rows = np.ascontiguousarray(instance.d_obs.T)
        experiment = rows[:, ::4] * 1.5 + 0.25
        np.testing.assert_array_equal(
            reference.pvalues(experiment), ShiftReference(rows).pvalues(experiment)
        )


@pytest.mark.parametrize(("ladder", "level"), [("v0", "L1"), ("v0", "L5"), ("v1", "L2")])
def test_stacked_world_records_equal_one_at_a_time(ladder: str, level: str) -> None:
    """The records a batch of fresh worlds gets stacked (floats, flags, integers, the shift
    tests' record, the truth's CPDAG) are, bit for bit, what each world alone gets."""
    from acdb_gym.discovery._two_sample import ReferenceRows
    from acdb_gym.envs.design.vector import _new_worlds, _World

    spec = get_level(ladder, level).spec
    instances = [generate_instance(spec, 920_000 + i) for i in range(9)]
    starts = cache.starting_graphs(instances, "pc")
    assert all(
        start.directed.tobytes() == cache.starting_graph(instance, "pc").directed.tobytes()
        and start.undirected.tobytes() == cache.starting_graph(instance, "pc").undirected.tobytes()
        for instance, start in zip(instances, starts, strict=True)
    )
    for instance, start, world in zip(
        instances, starts, _new_worlds(instances, starts), strict=True
    ):
        alone = _World(instance, start)
        for name in ("floats", "flags", "ints", "scale", "mean", "sd", "correlations"):
            got, want = getattr(world, name), getattr(alone, name)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), name
        for name in ("base_directed", "base_undirected", "start_directed", "start_undirected"):
            assert getattr(world, name).tobytes() == getattr(alone, name).tobytes(), name
        assert world.rng_state == alone.rng_state
        if alone.reference_record is None:
            assert world.reference_record is None
        else:
            assert world.reference_record is not None
            for got, want in zip(world.reference_record, alone.reference_record, strict=True):
                assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
        assert all(
            got.tobytes() == want.tobytes()
            for got, want in zip(
                ReferenceRows.record(world.reference),
                ReferenceRows.record(alone.reference),
                strict=True,
            )
        )


@pytest.mark.parametrize("limit", ["_STACKED_MAX_VALUES", "STACKED_MAX_NODES"])
def test_the_per_world_paths_match_the_pinned_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: str
) -> None:
    """The paths larger worlds take (shift tests one world at a time; or samples, tests and
    orientations all one world at a time) give the same trajectories on the small worlds."""
    from acdb_gym.envs.design import vector

    monkeypatch.setattr(vector, limit, 0)
    bank = build_bank(tmp_path / "b", ladder="v0", level="L1", seeds=range(700_000, 700_040))
    venv = DesignVectorEnv(16, "L1", ladder="v0", bank=bank)
    assert (venv._references is None) and (venv._stacked == (limit != "STACKED_MAX_NODES"))
    assert vector_digest(venv) == PINNED["vector_bank"]
    assert venv._references is None
