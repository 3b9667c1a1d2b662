"""Generation of worlds from d = 500 up: standardization a generation at a time, the closed-form
precision and the batched parent-set check give the node-by-node values (the same bits where
every shipped manifest needs them)."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.graphs import DAG, random_order_dag
from acdb_gym.core.worlds.faithfulness import (
    _full_partial_correlations,
    _parent_partial_correlations,
    weak_edges,
)
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.worlds.linear import (
    STANDARDIZE_BY_NODE_MAX_D,
    LinearGaussianSCM,
    generations,
    standardize_by_generation,
)
from acdb_gym.core.worlds.spec import LevelSpec


def _raw_world(d: int, k: int, seed: int) -> tuple[DAG, np.ndarray]:
    rng = np.random.default_rng(seed)
    dag = random_order_dag(d, n_edges=k, rng=rng)
    signs = rng.choice([-1.0, 1.0], size=(d, d))
    return dag, np.where(dag.adjacency, rng.uniform(0.5, 2.0, (d, d)) * signs, 0.0)


def _parent_partial_correlations_node_by_node(dag: DAG, cov: np.ndarray) -> np.ndarray:
    """The one-inversion-per-node computation the batched one replaced."""
    values = []
    for j in range(dag.n_nodes):
        parents = dag.parents(j)
        if parents.size:
            index = np.append(parents, j)
            precision = np.linalg.inv(cov[np.ix_(index, index)])
            diag = np.sqrt(np.diag(precision))
            rho = -precision[:-1, -1] / (diag[:-1] * diag[-1])
            values.append(np.column_stack([parents, np.full(parents.size, j), rho]))
    table = np.vstack(values)
    return np.asarray(table[np.lexsort((table[:, 1], table[:, 0])), 2])


def test_generations_put_every_parent_in_an_earlier_generation() -> None:
    dag, _ = _raw_world(80, 200, 0)
    depth = generations(dag)
    source, target = np.nonzero(dag.adjacency)
    assert (depth[source] < depth[target]).all()
    has_parent = dag.adjacency.any(axis=0)
    assert (depth[~has_parent] == 0).all()
    # Not deeper than needed: every non-root sits right after its latest parent.
    for node in np.flatnonzero(has_parent):
        assert depth[node] == depth[dag.parents(node)].max() + 1


@pytest.mark.parametrize(("d", "k"), [(1, 0), (6, 0), (30, 45), (120, 400)])
def test_standardizing_by_generation_gives_the_node_by_node_world(d: int, k: int) -> None:
    dag, raw = _raw_world(d, k, d + k)
    by_node = LinearGaussianSCM.standardized(raw, 0.7)  # d < 500: node by node
    weights, noise_std, cov = standardize_by_generation(raw, dag, 0.7)
    np.testing.assert_allclose(weights, by_node.weights, rtol=1e-12, atol=0)
    np.testing.assert_allclose(noise_std, by_node.noise_std, rtol=1e-12)
    np.testing.assert_allclose(cov, by_node.covariance(), atol=1e-12)
    np.testing.assert_allclose(np.diag(cov), 1.0, rtol=1e-12)


def test_the_closed_form_precision_inverts_the_covariance() -> None:
    dag, raw = _raw_world(60, 90, 5)
    scm = LinearGaussianSCM.standardized(raw, 1.0)
    cov = scm.covariance()
    np.testing.assert_allclose(scm.precision().toarray(), np.linalg.inv(cov), atol=1e-9)
    np.testing.assert_allclose(
        _full_partial_correlations(dag, cov, scm.precision()),
        _full_partial_correlations(dag, cov),
        atol=1e-12,
    )


@pytest.mark.parametrize(("d", "k"), [(5, 10), (40, 60), (40, 300), (200, 300)])
def test_batched_parent_set_correlations_keep_the_node_by_node_bits(d: int, k: int) -> None:
    dag, raw = _raw_world(d, k, 7 * d + k)
    cov = LinearGaussianSCM.standardized(raw, 1.0).covariance()
    batched = _parent_partial_correlations(dag, cov)
    assert batched.tobytes() == _parent_partial_correlations_node_by_node(dag, cov).tobytes()


@pytest.mark.slow
def test_a_world_above_the_threshold_is_standardized_and_checked_in_closed_form() -> None:
    d = STANDARDIZE_BY_NODE_MAX_D + 20
    spec = LevelSpec(
        d, 3 * d // 2, 30, 5, 1.0, 1, standardized=True, faithfulness_rule="redraw_edges"
    )
    instance = generate_instance(spec, 3)
    scm = instance.scm
    assert isinstance(scm, LinearGaussianSCM)
    # The covariance the standardization computes is the population covariance (unit
    # diagonal), and the check on it agrees with the check on the dense covariance.
    rebuilt, cov = LinearGaussianSCM.standardized_with_covariance(_unscaled(scm), 1.0)
    dense = scm.covariance()
    np.testing.assert_allclose(rebuilt.weights, scm.weights, rtol=1e-12)
    np.testing.assert_allclose(cov, dense, atol=1e-9)
    np.testing.assert_allclose(np.diag(dense), 1.0, rtol=1e-9)
    weak = weak_edges(instance.dag, dense, spec.faithfulness_eps)
    assert int(weak.sum()) == instance.weak_edges
    assert generate_instance(spec, 3).digest() == instance.digest()


def _unscaled(scm: LinearGaussianSCM) -> np.ndarray:
    """Raw weights whose standardization is ``scm`` (a standardized world is its own raw
    world up to each node's scale: ``W_raw[:, j] = W[:, j] / noise_std[j]``)."""
    return np.asarray(scm.weights / scm.noise_std[None, :])
