"""Tests for acdb_gym.discovery.pc_many: PC on several datasets at once equals PC on each.

:func:`pc_batched` is checked against causal-learn in ``test_pc_batched.py``; here every
result of :func:`pc_batched_many` must equal it exactly (skeleton, separating sets, both
orientation matrices, test counts) on groups of random small datasets of different sizes and
densities (so some searches end depths before others), on manifest instances of several
levels pooled together, and with the pooled tests cut into chunks across dataset boundaries.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.discovery import pc_batched as pc_batched_module
from acdb_gym.discovery import pc_cpdag, pc_cpdag_many
from acdb_gym.discovery import pc_many as pc_many_module
from acdb_gym.discovery.pc_batched import BatchedPCResult, pc_batched
from acdb_gym.discovery.pc_many import pc_batched_many


def assert_equal(result: BatchedPCResult, expected: BatchedPCResult) -> None:
    np.testing.assert_array_equal(result.skeleton, expected.skeleton)
    assert dict(result.sepsets) == dict(expected.sepsets)
    np.testing.assert_array_equal(result.directed, expected.directed)
    np.testing.assert_array_equal(result.undirected, expected.undirected)
    assert result.n_tests == expected.n_tests


def assert_same_as_one_at_a_time(datasets: list[np.ndarray], alpha: float) -> None:
    results = pc_batched_many(datasets, alpha=alpha)
    assert len(results) == len(datasets)
    for data, result in zip(datasets, results, strict=True):
        assert_equal(result, pc_batched(data, alpha=alpha))


def random_data(rng: np.random.Generator) -> np.ndarray:
    """A small level's sample: any density, as few samples as PC accepts at times."""
    d = int(rng.integers(2, 11))
    spec = LevelSpec(
        d=d,
        k=int(rng.integers(0, d * (d - 1) // 2 + 1)),
        n_obs=max(4, d + 1, int(rng.choice([d + 1, d + 3, 20, 50, 200]))),
        n_int=4,
        noise_var=float(rng.choice([1.0, 4.0])),
        slack=0,
        faithfulness_eps=0.0,
        standardized=bool(rng.integers(2)),
    )
    return generate_instance(spec, int(rng.integers(2**31))).d_obs


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_random_groups_equal_pc_on_each(chunk: int) -> None:
    rng = np.random.default_rng([31, chunk])
    for _ in range(20):
        group = [random_data(rng) for _ in range(int(rng.integers(1, 9)))]
        assert_same_as_one_at_a_time(group, float(rng.choice([0.01, 0.05, 0.2, 0.5])))


def test_searches_that_end_at_different_depths() -> None:
    rng = np.random.default_rng(5)
    centered = rng.normal(size=(200, 8))
    # Orthogonal centred columns: zero correlations, every pair separated at depth 0.
    independent = np.linalg.qr(centered - centered.mean(axis=0))[0]
    mixing = rng.normal(size=(8, 8)) + 2 * np.eye(8)
    dense = rng.normal(size=(500, 8)) @ mixing  # correlated everywhere: deep searches
    group = [dense, independent, rng.normal(size=(50, 1)), dense[:, :3], dense[:, :2]]
    shallow, deep = pc_batched(independent), pc_batched(dense)
    assert not shallow.skeleton.any()  # ended after depth 0
    assert deep.skeleton.sum(axis=1).max() >= 3  # ran depths 0, 1 and 2 at least
    assert_same_as_one_at_a_time(group, 0.05)
    assert_same_as_one_at_a_time(group[::-1], 0.05)


def test_manifest_instances_of_several_levels_pooled() -> None:
    levels = [level for ladder in LADDERS.values() for level in ladder.values()]
    small = [level for level in levels if level.spec.d <= 12][::3]
    group = [level.instance(index).d_obs for level in small for index in (0, 101)]
    assert len({data.shape[1] for data in group}) >= 3
    assert_same_as_one_at_a_time(group, 0.05)


def test_chunks_cut_across_datasets(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(9)
    group = [random_data(rng) for _ in range(6)]
    expected = pc_batched_many(group)
    monkeypatch.setattr(pc_many_module, "_MAX_BATCH", 7)
    for result, reference in zip(pc_batched_many(group), expected, strict=True):
        assert_equal(result, reference)


def test_pc_cpdag_many_equals_pc_cpdag() -> None:
    group = [level.instance(3).d_obs for level in LADDERS["v0"].values()]
    assert pc_cpdag_many(group) == [pc_cpdag(data) for data in group]
    assert pc_cpdag_many(group, alpha=0.2) == [pc_cpdag(data, alpha=0.2) for data in group]
    assert pc_cpdag_many([]) == []
    assert pc_cpdag_many([np.zeros((5, 1))]) == [pc_cpdag(np.zeros((5, 1)))]


def test_invalid_input_is_named_by_its_index() -> None:
    good = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match=re.escape("datasets[1] must be a 2-D")):
        pc_batched_many([good, np.arange(6.0)])
    with pytest.raises(ValueError, match=re.escape("datasets[2] needs at least 4 samples")):
        pc_batched_many([good, good, good[:2]])
    with pytest.raises(ValueError, match=re.escape("datasets[0]")):
        pc_batched_many([np.ones((10, 3)), good])
    with pytest.raises(ValueError, match="alpha"):
        pc_batched_many([good], alpha=1.0)
    column = np.random.default_rng(1).normal(size=(30, 1))
    singular = np.hstack([column, 2.0 * column, column**2])
    with pytest.raises(ValueError, match="singular"):
        pc_batched_many([good, singular])


def test_refused_datasets_are_named_in_order_when_stacked() -> None:
    good = np.random.default_rng(0).normal(size=(20, 3))
    constant = good.copy()
    constant[:, 1] = 2.5
    with pytest.raises(ValueError, match=re.escape("datasets[2] column X1 is constant")):
        pc_batched_many([good, good, constant, good])
    with pytest.raises(ValueError, match=re.escape("datasets[1] needs at least 4 samples")):
        pc_batched_many([good, good[:2], good, constant])


def test_stacked_correlations_equal_one_at_a_time() -> None:
    """The correlations of samples of one shape computed stacked, to the last bit."""
    rng = np.random.default_rng(40)
    for _ in range(200):
        count, d = int(rng.integers(2, 30)), int(rng.integers(2, 13))
        n = int(rng.integers(d + 1, 400))
        data = rng.normal(size=(count, n, d)) @ rng.normal(size=(d, d)) * rng.uniform(0.01, 100)
        data = np.ascontiguousarray(data)
        stacked = pc_many_module.stacked_correlations(data)
        alone = np.stack([pc_batched_module._correlation(sample) for sample in data])
        assert stacked.tobytes() == alone.tobytes()


def test_given_correlations_give_the_same_graphs_and_errors() -> None:
    """pc_batched_many(..., correlations=stacked_correlations(stacked data)): the same
    results, and a refused dataset still named as without them."""
    spec = LADDERS["v0"]["L1"].spec
    group = [generate_instance(spec, 930_000 + i).d_obs for i in range(10)]
    given = pc_many_module.stacked_correlations(np.stack(group))
    pairs = zip(pc_batched_many(group, correlations=given), pc_batched_many(group), strict=True)
    for got, want in pairs:
        assert got.skeleton.tobytes() == want.skeleton.tobytes()
        assert got.directed.tobytes() == want.directed.tobytes()
        assert (got.sepsets, got.n_tests) == (want.sepsets, want.n_tests)
    assert pc_cpdag_many(group, correlations=given) == [pc_cpdag(data) for data in group]
    good = np.random.default_rng(0).normal(size=(20, 3))
    constant = good.copy()
    constant[:, 1] = 2.5
    with np.errstate(all="ignore"):
        nan_given = pc_many_module.stacked_correlations(np.stack([good, constant, good]))
    with pytest.raises(ValueError, match=re.escape("datasets[1] column X1 is constant")):
        pc_batched_many([good, constant, good], correlations=nan_given)


def test_inputs_are_not_modified() -> None:
    group = [np.random.default_rng(k).normal(size=(30, 4)) for k in range(3)]
    before = [data.copy() for data in group]
    pc_batched_many(group)
    for data, copy in zip(group, before, strict=True):
        np.testing.assert_array_equal(data, copy)
