"""The large ladder and its faithfulness rule, which redraws failing edges' weights instead of
whole worlds."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.core.graphs import random_order_dag
from acdb_gym.core.ladders.shipped import (
    ALL_LADDERS,
    LADDERS,
    LARGE_LADDER,
    LARGE_MANIFEST_SIZE,
    get_level,
)
from acdb_gym.core.worlds.faithfulness import is_faithful, weak_edges
from acdb_gym.core.worlds.instance import EDGE_REDRAW_ROUNDS, generate_instance
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.envs.registration import ENV_IDS, LARGE_IDS
from acdb_gym.sweep.run import SweepConfig

SPEC = LevelSpec(d=40, k=60, n_obs=100, n_int=20, noise_var=1.0, slack=1, standardized=True)
REDRAW = dataclasses.replace(SPEC, faithfulness_rule="redraw_edges")


def test_the_large_ladder_spans_d_20_to_2000_with_full_manifests() -> None:
    assert [level.spec.d for level in LARGE_LADDER.values()] == [20, 50, 100, 200, 500, 1000, 2000]
    # PC's tests need more rows than variables: n_obs = 2 d from d = 1,000 up.
    assert all(level.spec.n_obs > level.spec.d for level in LARGE_LADDER.values())
    for level in LARGE_LADDER.values():
        assert level.spec.faithfulness_rule == "redraw_edges"
        assert len(level.manifest) == LARGE_MANIFEST_SIZE
    assert "large" not in LADDERS and ALL_LADDERS["large"] is LARGE_LADDER
    assert get_level("large", "L4").env_id == "ACDB-Large-L4-v0"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LARGE_LADDER))
def test_large_manifest_seeds_regenerate_their_digests(name: str) -> None:
    level = LARGE_LADDER[name]
    for index in (0,) if level.spec.d > 100 else (0, 1, 2):
        assert level.instance(index).digest() == level.manifest[index].digest


def test_the_default_rule_leaves_the_spec_repr_and_so_the_digests_unchanged() -> None:
    assert "faithfulness_rule" not in repr(SPEC)
    assert "faithfulness_rule='redraw_edges'" in repr(REDRAW)
    with pytest.raises(ValueError, match="faithfulness_rule must be one of"):
        dataclasses.replace(SPEC, faithfulness_rule="reject")


def test_weak_edges_are_exactly_the_edges_the_whole_world_check_rejects() -> None:
    rng = np.random.default_rng(3)
    seen_weak = seen_faithful = False
    for seed in range(60):
        instance = generate_instance(dataclasses.replace(REDRAW, d=8, k=14), seed)
        dag = instance.dag
        weights = np.where(dag.adjacency, rng.uniform(0.1, 2.0, dag.adjacency.shape), 0.0)
        cov = type(instance.scm).standardized(weights, 1.0).covariance()
        weak = weak_edges(dag, cov, 0.1)
        assert not (weak & ~dag.adjacency).any()
        assert (not weak.any()) == is_faithful(dag, cov, 0.1)
        seen_weak |= bool(weak.any())
        seen_faithful |= not weak.any()
    assert seen_weak and seen_faithful


def test_the_rule_keeps_the_first_graph_and_accepts_a_faithful_world() -> None:
    for seed in range(5):
        instance = generate_instance(REDRAW, seed)
        graph_stream = np.random.SeedSequence(seed).spawn(4)[0]
        first = random_order_dag(40, n_edges=60, rng=np.random.default_rng(graph_stream))
        assert instance.dag == first
        if instance.weak_edges == 0:
            assert is_faithful(instance.dag, instance.scm.covariance(), REDRAW.faithfulness_eps)
        assert generate_instance(REDRAW, seed).digest() == instance.digest()
    assert generate_instance(SPEC, 0).weak_edges == 0


def test_a_world_that_cannot_pass_is_accepted_after_the_last_redraw_with_its_weak_edges() -> None:
    hopeless = dataclasses.replace(REDRAW, faithfulness_eps=0.95)
    instance = generate_instance(hopeless, 1)
    assert instance.attempts == EDGE_REDRAW_ROUNDS + 1
    assert 0 < instance.weak_edges <= instance.dag.n_edges
    assert instance.min_relevant_abs_rho < 0.95


def test_large_ids_are_registered_apart_from_the_benchmark_ids() -> None:
    assert set(LARGE_IDS).isdisjoint(ENV_IDS)
    env = gym.make("ACDB-Large-L0-v0")
    observation, _ = env.reset(options={"manifest_index": 0})
    assert observation["observational"].shape == (1000, 20)
    assert env.unwrapped.level.ladder == "large"  # type: ignore[attr-defined]


def test_the_sweep_accepts_the_large_ladder(tmp_path: object) -> None:
    config = SweepConfig(out=tmp_path, ladder="large", levels=("L0", "L4"), seeds=50)  # type: ignore[arg-type]
    assert config.levels == ("L0", "L4")
    with pytest.raises(ValueError, match="seeds must be in"):
        SweepConfig(out=tmp_path, ladder="large", levels=("L0",), seeds=51)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="level must be one of"):
        SweepConfig(out=tmp_path, ladder="large", levels=("L7",))  # type: ignore[arg-type]
