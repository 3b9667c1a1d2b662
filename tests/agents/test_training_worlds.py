"""Training and held-out worlds of the RL trainer (``agents/rl/training_worlds.py``): seeds
above every held-out seed, drawn the same way on every level, and on a level with an
R²-sortability band only seeds that have an instance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from acdb_gym.agents.rl.training_worlds import (
    TRAIN_SEED_LOW,
    VALIDATION_SEED_BASE,
    TrainingInstances,
    held_out_instances,
)
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.worlds.instance import OutOfBandError, generate_instance
from acdb_gym.core.worlds.sortability import r2_sortability_of
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.envs.design.vector import DesignVectorEnv


def _in_band(instance: object, band: float) -> bool:
    return abs(r2_sortability_of(instance.d_obs, instance.dag.adjacency) - 0.5) <= band  # type: ignore[attr-defined]


def test_training_seeds_on_a_plain_level_are_the_streams_draws() -> None:
    # Every draw is used: rng.integers(2**32, 2**63 - 1), as the trainer has always drawn them
    # (the shipped policy's training reproduces).
    env = TrainingInstances(InterventionDesignEnv("L1", estimator="true_cpdag"), seed=3)
    probe = np.random.default_rng(3)
    for _ in range(4):
        env.reset()
        expected = int(probe.integers(TRAIN_SEED_LOW, 2**63 - 1))
        assert env.unwrapped.hidden_instance().seed == expected  # type: ignore[attr-defined]


def test_training_on_a_banded_level_takes_the_first_drawn_seed_with_an_instance() -> None:
    level = get_level("frontier", "NL20")
    band = level.spec.r2_sortability_band
    env = TrainingInstances(InterventionDesignEnv("NL20", ladder="frontier"), seed=0)
    probe = np.random.default_rng(0)
    skipped = 0
    for _ in range(4):
        env.reset()  # raised OutOfBandError on the first out-of-band seed before
        instance = env.unwrapped.hidden_instance()  # type: ignore[attr-defined]
        assert instance.seed >= TRAIN_SEED_LOW and _in_band(instance, band)
        while int(probe.integers(TRAIN_SEED_LOW, 2**63 - 1)) != instance.seed:
            skipped += 1
    assert skipped > 0  # about half of the seeds have no instance on this level


def test_held_out_worlds_pass_over_seeds_without_an_instance() -> None:
    plain = held_out_instances("L1", VALIDATION_SEED_BASE, 3)
    assert [instance.seed for instance in plain] == [VALIDATION_SEED_BASE + i for i in range(3)]
    level = get_level("frontier", "NL20")
    banded = held_out_instances("NL20", VALIDATION_SEED_BASE, 3, ladder="frontier")
    seeds = [instance.seed for instance in banded]
    assert seeds == sorted(set(seeds)) and seeds[0] >= VALIDATION_SEED_BASE
    assert all(_in_band(instance, level.spec.r2_sortability_band) for instance in banded)
    for seed in range(VALIDATION_SEED_BASE, seeds[-1]):
        if seed not in seeds:  # a seed passed over is one without an instance
            try:
                generate_instance(level.spec, seed)
            except OutOfBandError:
                continue
            raise AssertionError(f"seed {seed} has an instance but was passed over")


def test_the_vector_envs_generated_worlds_can_be_drawn_above_the_held_out_seeds() -> None:
    envs = DesignVectorEnv(4, "L1", estimator="true_cpdag", min_world_seed=TRAIN_SEED_LOW)
    envs.reset(seed=0)
    first = [instance.seed for instance in envs.call("hidden_instance")]
    # World i draws from its own generator (seed 0 + i), each seed from [low, 2**63 - 1).
    assert first == [
        int(np.random.default_rng(i).integers(TRAIN_SEED_LOW, 2**63 - 1)) for i in range(4)
    ]
    seeds = set(first)
    rng = np.random.default_rng(1)
    for _ in range(30):
        masks = envs.action_masks()
        envs.step((rng.random(masks.shape) * masks).argmax(axis=1))
        seeds |= {instance.seed for instance in envs.call("hidden_instance")}
    assert len(seeds) > 4 and min(seeds) >= TRAIN_SEED_LOW
    # The default draws as the single env does: from [0, 2**63 - 1).
    plain = DesignVectorEnv(2, "L1", estimator="true_cpdag")
    plain.reset(seed=0)
    assert [instance.seed for instance in plain.call("hidden_instance")] == [
        int(np.random.default_rng(i).integers(2**63 - 1)) for i in range(2)
    ]


def test_a_seed_floor_must_be_a_seed_and_needs_generated_worlds(tmp_path: Path) -> None:
    from acdb_gym.envs.design.bank import build_bank

    for bad in (-1, 2**63, 1.5):
        with pytest.raises(ValueError, match="min_world_seed must be an integer"):
            DesignVectorEnv(2, "L1", min_world_seed=bad)  # type: ignore[arg-type]
    bank = build_bank(tmp_path / "b", ladder="v0", level="L1", seeds=range(2**32, 2**32 + 3))
    with pytest.raises(ValueError, match="a bank's are its own"):
        DesignVectorEnv(2, "L1", bank=bank, min_world_seed=TRAIN_SEED_LOW)
