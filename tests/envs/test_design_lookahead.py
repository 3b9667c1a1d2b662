"""The single design env's fresh resets prepared in batches (acdb_gym.envs.design.lookahead):
the same worlds, starts and generator states as one at a time, and no work ahead when the env
is reseeded at every reset."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.utils import seeding

from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.worlds import instance as instance_module
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.discovery import pc_cpdag
from acdb_gym.envs.design import cache, lookahead
from acdb_gym.envs.design.env import InterventionDesignEnv


@pytest.fixture(autouse=True)
def _cold_caches() -> None:
    cache.clear()


def _prepared(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """Record the seed batches the lookahead prepares."""
    batches: list[list[int]] = []
    original = lookahead.FreshLookahead._prepare

    def record(self: lookahead.FreshLookahead, seeds: list[int]) -> list[cache.Prepared]:
        batches.append(list(seeds))
        return original(self, seeds)

    monkeypatch.setattr(lookahead.FreshLookahead, "_prepare", record)
    return batches


def test_fresh_resets_draw_the_worlds_and_states_of_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    batches = _prepared(monkeypatch)
    env = InterventionDesignEnv("L1", ladder="v0")
    env.reset(seed=5)
    twin = seeding.np_random(5)[0]
    spec = get_level("v0", "L1").spec
    generate_instance(spec, twin)  # the seeded reset's own world
    for _ in range(40):
        observation, _ = env.reset()
        expected = generate_instance(spec, twin)
        assert env.hidden_instance() is expected
        assert env.np_random.bit_generator.state == twin.bit_generator.state
        start = pc_cpdag(expected.d_obs)
        np.testing.assert_array_equal(env.estimate.directed, start.directed)
        np.testing.assert_array_equal(env.estimate.undirected, start.undirected)
        assert observation.shape == env.observation_space.shape
    # Batches of 2, 4, 8, 16, 32 worlds, each used up before the next was drawn.
    assert [len(batch) for batch in batches] == [2, 4, 8, 16, 32]
    seeds = [seed for batch in batches for seed in batch]
    assert len(set(seeds)) == len(seeds) == 62


def test_seeded_resets_prepare_nothing_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _prepared(monkeypatch)
    env = InterventionDesignEnv("L1", ladder="v0")
    for seed in range(6):
        env.reset(seed=seed)
        env.reset(options={"manifest_index": seed})
    assert batches == []
    # One fresh reset after a seeded one prepares two worlds; reseeding drops them, and the
    # next fresh reset starts over at two.
    env.reset()
    env.reset(seed=100)
    env.reset()
    assert [len(batch) for batch in batches] == [2, 2]


def test_a_changed_generator_is_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drawing from the env's generator between resets changes the next seed: the batch is
    dropped and the reset still gets the world its generator says."""
    batches = _prepared(monkeypatch)
    env = InterventionDesignEnv("L1", ladder="v0")
    env.reset(seed=9)
    env.reset()
    env.np_random.random()
    twin = np.random.Generator(type(env.np_random.bit_generator)())
    twin.bit_generator.state = env.np_random.bit_generator.state
    env.reset()
    assert env.hidden_instance() is generate_instance(get_level("v0", "L1").spec, twin)
    assert [len(batch) for batch in batches] == [2, 2]


def test_other_estimators_do_not_look_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _prepared(monkeypatch)
    env = InterventionDesignEnv("L1", ladder="v0", estimator="true_cpdag")
    env.reset(seed=1)
    for _ in range(5):
        env.reset()
    assert batches == []


def test_prepared_summaries_equal_those_computed_one_at_a_time() -> None:
    spec = get_level("v0", "L2").spec
    instances = [generate_instance(spec, 920_000 + i) for i in range(6)]
    samples = [instance.d_obs for instance in instances]
    starts = [pc_cpdag(sample) for sample in samples]
    prepared = cache.prepare(instances, 0.01, "power", 1.0)
    assert all(ready.start == start for ready, start in zip(prepared, starts, strict=True))
    summaries = [
        cache.summary_of(sample, start, 0.01, "power", 1.0)
        for sample, start in zip(samples, starts, strict=True)
    ]
    assert summaries == [ready.summary for ready in prepared]
    cache.clear()
    for sample, start, summary in zip(samples, starts, summaries, strict=True):
        alone = cache.summary_of(sample, start, 0.01, "power", 1.0)
        assert alone is not summary
        for name in ("mean", "sd", "correlations"):
            assert getattr(summary, name).tobytes() == getattr(alone, name).tobytes()
        experiment = sample[::4] * 1.5 + 0.5
        twin, own = summary.orienter.copy(), alone.orienter.copy()
        for target in range(spec.d):
            twin.add(target, experiment)
            own.add(target, experiment)
            np.testing.assert_array_equal(twin.graph.directed, own.graph.directed)
            np.testing.assert_array_equal(twin.graph.undirected, own.graph.undirected)


def test_prepared_worlds_survive_caches_emptied_by_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Other envs in the process may push the prepared worlds out of the shared caches: each
    reset puts its world back, so nothing is generated or run through PC twice."""
    generated: list[int] = []
    original_generate = instance_module._generate

    def counting(spec: Any, seed: int, deadline: float | None = None) -> Any:
        generated.append(seed)
        return original_generate(spec, seed, deadline)

    monkeypatch.setattr(instance_module, "_generate", counting)
    pc_runs: list[int] = []
    original_pc = cache.pc_cpdag

    def counting_pc(data: Any) -> Any:
        pc_runs.append(1)
        return original_pc(data)

    monkeypatch.setattr(cache, "pc_cpdag", counting_pc)
    env = InterventionDesignEnv("L1", ladder="v0")
    env.reset(seed=21)
    generated.clear()
    pc_runs.clear()
    seeds = seeding.np_random(21)[0]
    seeds.integers(2**63 - 1)  # the seeded reset's own world
    for _ in range(12):
        cache.clear()
        instance_module._generate_cached.cache_clear()
        env.reset()
        assert env.hidden_instance().seed == int(seeds.integers(2**63 - 1))
    # Generated ahead in lockstep batches (2 + 4 + 8 seeds), never one at a time; PC never alone.
    assert sorted(set(generated)) == sorted(generated) and pc_runs == []
