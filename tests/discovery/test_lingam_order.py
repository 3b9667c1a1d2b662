"""The DirectLiNGAM-style estimator: identifiable orders on non-Gaussian data only."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.scoring import score
from acdb_gym.discovery import direct_lingam, direct_lingam_order


def test_order_of_a_non_gaussian_chain_in_shuffled_columns() -> None:
    rng = np.random.default_rng(1)
    n = 3000
    x0 = rng.laplace(size=n)
    x1 = 0.9 * x0 + rng.uniform(-1, 1, n)
    x2 = -0.7 * x1 + rng.gumbel(size=n)
    data = np.column_stack([x2, x0, x1])  # true order: columns 1, 2, 0
    assert direct_lingam_order(data).tolist() == [1, 2, 0]
    assert sorted(direct_lingam(data).directed_edges()) == [(1, 2), (2, 0)]


def test_recovers_non_gaussian_worlds_and_not_gaussian_ones() -> None:
    def mean_f1(ladder: str) -> float:
        level = LADDERS[ladder]["L0"]
        return float(
            np.mean(
                [
                    score(level.instance(i), direct_lingam(level.instance(i).d_obs)).directed_f1
                    for i in range(6)
                ]
            )
        )

    nongaussian, gaussian = mean_f1("v1-nongaussian"), mean_f1("v1")
    assert nongaussian > 0.85
    assert nongaussian > gaussian + 0.3


def test_rejects_a_constant_column() -> None:
    data = np.column_stack([np.ones(50), np.arange(50.0)])
    with pytest.raises(ValueError, match="constant"):
        direct_lingam_order(data)


def test_rank_pc_finds_a_monotone_heavy_tailed_dependence() -> None:
    from acdb_gym.discovery import normal_scores, rank_pc_cpdag

    rng = np.random.default_rng(4)
    x = rng.standard_normal(400)
    y = np.exp(4.0 * x) + 0.05 * rng.standard_normal(400)  # monotone, heavy-tailed
    z = rng.standard_normal(400)
    data = np.column_stack([x, y, z])
    assert rank_pc_cpdag(data).skeleton()[0, 1]
    assert not rank_pc_cpdag(data).skeleton()[0, 2]
    scores = normal_scores(data)
    assert np.allclose(np.sort(scores[:, 0]), np.sort(scores[:, 1]))
