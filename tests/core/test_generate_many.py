"""Worlds drawn together (generate_instances, faithful_draws) equal worlds drawn one at a time."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.worlds import instance as instance_module
from acdb_gym.core.worlds.faithfulness import faithful_draws, is_faithful
from acdb_gym.core.worlds.instance import generate_instance, generate_instances
from acdb_gym.core.worlds.kinds.linear import build_scm, draw_graph, draw_weights


@pytest.mark.parametrize(
    ("ladder", "level"),
    [("v0", "L1"), ("v0", "L4"), ("v1", "L0"), ("v1", "L3"), ("v1-nonlinear", "L1")],
)
def test_instances_drawn_together_equal_one_at_a_time(ladder: str, level: str) -> None:
    spec = get_level(ladder, level).spec
    seeds = [8_100_000 + i for i in range(10)]
    instance_module._generate_cached.cache_clear()
    kept = generate_instance(spec, seeds[3])  # one already kept: served, not redrawn
    together = generate_instances(spec, [*seeds, seeds[0]])
    assert together[3] is kept and together[-1] is together[0]
    # Drawn together, they are kept as generate_instance keeps them.
    assert all(
        generate_instance(spec, seed) is instance
        for seed, instance in zip(seeds, together[:-1], strict=True)
    )
    instance_module._generate_cached.cache_clear()
    for seed, instance in zip(seeds, together[:-1], strict=True):
        alone = instance_module._generate(spec, seed)
        assert instance.digest() == alone.digest()
        assert instance.d_obs.tobytes() == alone.d_obs.tobytes()
        assert (instance.attempts, instance.budget, instance.i_star) == (
            alone.attempts,
            alone.budget,
            alone.i_star,
        )


def test_refuses_negative_seeds() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        generate_instances(get_level("v0", "L1").spec, [3, -1])


@pytest.mark.parametrize("levels", [[("v0", "L2")], [("v0", "L1"), ("v0", "L4"), ("v1", "L3")]])
def test_stacked_faithfulness_checks_decide_as_one_at_a_time(levels: list[tuple[str, str]]) -> None:
    """Rejected draws included: the first draw of many seeds, faithful or not, of worlds of one
    size or of several sizes interleaved in one call."""
    specs = [get_level(ladder, level).spec for ladder, level in levels]
    rng = np.random.default_rng(4)
    dags, covs = [], []
    for draw in range(300):
        spec = specs[draw % len(specs)]
        dag, _ = draw_graph(spec, rng)
        dags.append(dag)
        covs.append(build_scm(spec, draw_weights(spec, dag, rng)).covariance())
    eps = specs[0].faithfulness_eps
    verdicts = faithful_draws(dags, covs, eps)
    expected = [is_faithful(dag, cov, eps) for dag, cov in zip(dags, covs, strict=True)]
    assert verdicts == expected
    assert 0 < sum(verdicts) < len(verdicts)


def test_stream_generators_start_where_each_seed_stream_starts() -> None:
    """The hashing of many seed sequences at once gives every generator the state of its own
    ``SeedSequence(seed, spawn_key=(index,))``, seeds of one and two 32-bit words and the
    edges included, and draws the same numbers; below the stacked size, or with a seed of
    three words, each is made alone."""
    from acdb_gym.core.worlds.kinds.base import SeedStreams, stream_generators

    rng = np.random.default_rng(40)
    edges = [0, 1, 2**32 - 1, 2**32, 2**63 - 2, 2**64 - 1]
    seeds = [int(seed) for seed in rng.integers(2**63 - 1, size=500)] + edges
    for group in (seeds, seeds[:3], [*seeds[:20], 2**64]):
        made = stream_generators(group, range(6))
        for index, generators in enumerate(made):
            for seed, generator in zip(group, generators, strict=True):
                alone = SeedStreams(seed).rng(index)
                assert generator.bit_generator.state == alone.bit_generator.state
        assert made[2][-1].standard_normal(3).tolist() == (
            SeedStreams(group[-1]).rng(2).standard_normal(3).tolist()
        )
