"""Additive-noise-model orientation (``discovery/anm.py``): HSIC is calibrated under
independence, ANM orients nonlinear additive-noise pairs the right way, and ``anm_graph``
orients every adjacency without closing a cycle."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.graphs import DAG
from acdb_gym.discovery.anm import anm_direction, anm_graph, hsic_test, kernel_residuals


def test_hsic_rejects_at_about_its_level_under_independence() -> None:
    rng = np.random.default_rng(1)
    p_values = [hsic_test(rng.normal(size=150), rng.normal(size=150))[1] for _ in range(200)]
    assert 0.02 <= np.mean(np.array(p_values) < 0.05) <= 0.09


def test_hsic_sees_a_dependence_without_correlation() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=300)
    y = x**2 + 0.1 * rng.normal(size=300)
    assert abs(np.corrcoef(x, y)[0, 1]) < 0.2
    assert hsic_test(x, y)[1] < 1e-6


@pytest.mark.slow
def test_the_regression_removes_a_smooth_mean() -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, 400)
    residual = kernel_residuals(x, np.sin(2 * x) + 0.1 * rng.normal(size=400))
    assert np.std(residual) < 0.2  # of the standardized y


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_anm_orients_nonlinear_additive_noise_pairs(seed: int) -> None:
    rng = np.random.default_rng([seed, 7])
    x = rng.uniform(-2, 2, 250)
    y = x**3 / 3 + 0.4 * rng.uniform(-1, 1, 250)
    assert anm_direction(x, y).forward
    assert not anm_direction(y, x).forward


def test_anm_refuses_constant_or_tiny_data() -> None:
    with pytest.raises(ValueError, match="constant"):
        anm_direction(np.ones(20), np.arange(20.0))
    with pytest.raises(ValueError):
        anm_direction(np.arange(4.0), np.arange(4.0) ** 2)


@pytest.mark.slow
def test_anm_graph_orients_a_pair_always_and_larger_graphs_without_cycles() -> None:
    rng = np.random.default_rng(4)
    x = rng.uniform(-2, 2, 200)
    pair = anm_graph(np.column_stack([x**3 / 3 + 0.3 * rng.uniform(-1, 1, 200), x]))
    assert pair.directed_edges() == [(1, 0)]
    chain = np.column_stack([x, np.tanh(2 * x) + 0.2 * rng.uniform(-1, 1, 200)])
    z = chain[:, 1] + 0.3 * rng.uniform(-1, 1, 200)
    graph = anm_graph(np.column_stack([chain, z]))
    assert DAG(graph.directed).n_nodes == 3  # acyclic by construction
    assert graph.skeleton()[0, 1] and graph.skeleton()[1, 2]
