"""The few-sample ladder v1-n3: v1's and v1-nonlinear's worlds with 3 samples per experiment."""

from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.env_checker import check_env

from acdb_gym.core.ladders.custom import parse_level_spec
from acdb_gym.core.ladders.shipped import (
    ALL_LADDERS,
    FEW_SAMPLE,
    FEW_SAMPLE_LADDER,
    FEW_SAMPLE_N_INT,
    FEW_SAMPLE_SOURCES,
    LADDERS,
    MANIFEST_SIZE,
    get_level,
)
from acdb_gym.core.session import Session
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.envs.registration import (
    DESIGN_IDS,
    ENV_IDS,
    FEW_SAMPLE_DESIGN_IDS,
    FEW_SAMPLE_IDS,
)
from acdb_gym.testing import check_acdb_env


def _parameters(instance: object) -> np.ndarray:
    scm = instance.scm  # type: ignore[attr-defined]
    return np.asarray(scm.parameters() if hasattr(scm, "parameters") else scm.weights)


def test_the_ladder_is_its_sources_levels_with_three_samples_per_experiment() -> None:
    assert list(FEW_SAMPLE_LADDER) == [
        "L1",
        "L2",
        "L4",
        "Nonlinear-L1",
        "Nonlinear-L2",
        "Nonlinear-L4",
    ]
    assert ALL_LADDERS[FEW_SAMPLE] is FEW_SAMPLE_LADDER and FEW_SAMPLE not in LADDERS
    for name, level in FEW_SAMPLE_LADDER.items():
        source = get_level(*FEW_SAMPLE_SOURCES[name])
        assert level.spec == replace(source.spec, n_int=FEW_SAMPLE_N_INT) and source.spec.n_int > 3
        assert len(level.manifest) == MANIFEST_SIZE
        assert [e.seed for e in level.manifest] == [e.seed for e in source.manifest]
        assert level.env_id == f"ACDB-FewSample-{name}-v0"


@pytest.mark.parametrize("name", ["L2", "Nonlinear-L4"])
def test_generation_does_not_read_n_int_so_each_world_is_its_sources(name: str) -> None:
    level, source = FEW_SAMPLE_LADDER[name], get_level(*FEW_SAMPLE_SOURCES[name])
    for index in (0, 1, 150, MANIFEST_SIZE - 1):
        ours, theirs = level.instance(index), source.instance(index)
        assert ours.digest() == level.manifest[index].digest
        assert ours.digest() != theirs.digest()  # the spec is hashed
        assert np.array_equal(ours.dag.adjacency, theirs.dag.adjacency)
        assert np.array_equal(_parameters(ours), _parameters(theirs))
        assert np.array_equal(ours.d_obs, theirs.d_obs)
        assert (ours.i_star, ours.budget) == (theirs.i_star, theirs.budget)


def test_an_experiment_draws_three_samples_and_the_spec_takes_no_fewer() -> None:
    session = Session(FEW_SAMPLE_LADDER["L1"].instance(0))
    assert session.intervene(0, 1.0).shape == (FEW_SAMPLE_N_INT, 12)
    spec = FEW_SAMPLE_LADDER["L1"].spec
    with pytest.raises(ValueError, match="n_int must be at least 3, got 2"):
        replace(spec, n_int=2)
    with pytest.raises(ValueError, match="n_obs must be at least 4, got 3"):
        replace(spec, n_obs=3)
    assert parse_level_spec("d=12,k=12,n_obs=100,n_int=3,slack=1").n_int == 3
    assert generate_instance(spec, 5).d_obs.shape == (spec.n_obs, spec.d)


def test_the_ladder_is_registered_as_full_and_design_ids() -> None:
    assert tuple(f"ACDB-FewSample-{name}-v0" for name in FEW_SAMPLE_LADDER) == FEW_SAMPLE_IDS
    assert (
        tuple(f"ACDB-Design-FewSample-{name}-v0" for name in FEW_SAMPLE_LADDER)
        == FEW_SAMPLE_DESIGN_IDS
    )
    assert not set(FEW_SAMPLE_IDS) & set(ENV_IDS)
    assert not set(FEW_SAMPLE_DESIGN_IDS) & set(DESIGN_IDS)
    assert set(FEW_SAMPLE_IDS + FEW_SAMPLE_DESIGN_IDS) <= set(gym.registry)
    env = gym.make("ACDB-Design-FewSample-Nonlinear-L2-v0")
    _, info = env.reset(options={"manifest_index": 7})
    assert info["total_budget"] == FEW_SAMPLE_LADDER["Nonlinear-L2"].instance(7).budget
    assert env.unwrapped.level is FEW_SAMPLE_LADDER["Nonlinear-L2"]  # type: ignore[attr-defined]
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.slow
@pytest.mark.parametrize("tools", ["raw", "stats"])
def test_a_few_sample_full_env_passes_the_conformance_checks(tools: str) -> None:
    env = gym.make("ACDB-FewSample-L2-v0", tools=tools, render_mode="ansi")
    check_acdb_env(env, seed=3, n_random_steps=30)
