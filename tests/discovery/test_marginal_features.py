"""Tests for the marginal features of the order audit and msortnregress."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from acdb_gym.core.ladders.shipped import LADDERS, LEVEL_NAMES
from acdb_gym.discovery import (
    MARGINAL_FEATURES,
    feature_order,
    feature_sortability,
    marginal_scores,
    msortnregress,
    r2_scores,
    r2_sortability,
    r2sortnregress,
    sortnregress,
    var_sortability,
)

# Column 0: 0, 0, 0, 4 (skewed, heavy-tailed); column 1: -1, 1, -1, 1 (two-point, symmetric).
TINY = np.array([[0.0, -1.0], [0.0, 1.0], [0.0, -1.0], [4.0, 1.0]])


def test_features_of_a_tiny_sample_by_hand() -> None:
    # Column 0 has mean 1, deviations -1, -1, -1, 3: m2 = 12/4 = 3, m3 = 24/4 = 6,
    # m4 = 84/4 = 21; median 0, absolute deviations 0, 0, 0, 4, so MAD = 0.
    # Column 1 has mean 0, deviations +-1: m2 = 1, m3 = 0, m4 = 1; median 0, MAD = 1.
    assert marginal_scores(TINY, "variance").tolist() == [3.0, 1.0]
    assert marginal_scores(TINY, "range").tolist() == [4.0, 2.0]
    assert marginal_scores(TINY, "mad").tolist() == [0.0, 1.0]
    np.testing.assert_allclose(marginal_scores(TINY, "kurtosis"), [21 / 9 - 3, 1.0 - 3.0])
    np.testing.assert_allclose(marginal_scores(TINY, "abs_skew"), [6 / 3**1.5, 0.0])
    np.testing.assert_array_equal(marginal_scores(TINY, "r2"), r2_scores(TINY))


def test_skewness_is_absolute() -> None:
    np.testing.assert_allclose(
        marginal_scores(-TINY, "abs_skew"), marginal_scores(TINY, "abs_skew")
    )


def test_features_agree_with_scipy_on_random_data() -> None:
    from scipy import stats

    data = np.random.default_rng(3).exponential(size=(500, 4))
    np.testing.assert_allclose(marginal_scores(data, "kurtosis"), stats.kurtosis(data), rtol=1e-12)
    np.testing.assert_allclose(
        marginal_scores(data, "abs_skew"), np.abs(stats.skew(data)), rtol=1e-12
    )
    np.testing.assert_allclose(
        marginal_scores(data, "mad"), stats.median_abs_deviation(data), rtol=1e-12
    )


def test_unknown_feature_and_constant_column_are_refused() -> None:
    with pytest.raises(ValueError, match=r"feature must be one of .* got 'skew'"):
        marginal_scores(TINY, "skew")
    constant = np.column_stack([np.ones(4), TINY[:, 1]])
    with pytest.raises(ValueError, match="constant"):
        marginal_scores(constant, "kurtosis")
    with pytest.raises(ValueError, match="direction must be 'asc' or 'desc', got 'up'"):
        feature_order(TINY, feature="range", direction="up")  # type: ignore[arg-type]


def test_feature_order_directions_and_ties() -> None:
    assert feature_order(TINY, feature="variance", direction="asc").tolist() == [1, 0]
    assert feature_order(TINY, feature="variance", direction="desc").tolist() == [0, 1]
    tied = np.column_stack([TINY[:, 1], -TINY[:, 1], TINY[:, 1]])
    assert feature_order(tied, feature="variance", direction="asc").tolist() == [0, 1, 2]
    assert feature_order(tied, feature="variance", direction="desc").tolist() == [0, 1, 2]


@pytest.mark.parametrize("seed", range(4))
def test_feature_sortability_generalizes_var_and_r2(sem: SimpleNamespace, seed: int) -> None:
    rng = np.random.default_rng(seed)
    dag = sem.random_dag(6, 0.5, rng)
    data = sem.sample(sem.random_weights(dag, rng), 400, rng)
    assert feature_sortability(data, dag.adjacency, "variance") == var_sortability(
        data, dag.adjacency
    )
    assert feature_sortability(data, dag.adjacency, "r2") == r2_sortability(data, dag.adjacency)
    for feature in MARGINAL_FEATURES:
        value = feature_sortability(data, dag.adjacency, feature)
        assert math.isnan(value) or 0.0 <= value <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("ladder", ["v0", "v1"])
@pytest.mark.parametrize("level", [0, 3])
def test_msort_reproduces_sortnregress_and_r2sortnregress(ladder: str, level: int) -> None:
    for seed in range(3):
        data = np.asarray(LADDERS[ladder][LEVEL_NAMES[level]].instance(seed).d_obs)
        assert msortnregress(data, feature="variance", direction="asc") == sortnregress(data)
        assert msortnregress(data, feature="r2", direction="asc") == r2sortnregress(data)
        assert msortnregress(data, feature="variance", direction="asc", alpha=0.2) == sortnregress(
            data, alpha=0.2
        )


def test_descending_kurtosis_finds_a_uniform_root() -> None:
    rng = np.random.default_rng(0)
    root = rng.uniform(-1.0, 1.0, size=3000)
    child = root + 0.7 * rng.uniform(-1.0, 1.0, size=3000) + 0.7 * rng.uniform(-1, 1, size=3000)
    data = np.column_stack([child, root])
    # The root is the most platykurtic (-1.2); the child is closer to Gaussian.
    assert msortnregress(data, feature="kurtosis", direction="asc").directed_edges() == [(1, 0)]
    assert msortnregress(data, feature="kurtosis", direction="desc").directed_edges() == [(0, 1)]
