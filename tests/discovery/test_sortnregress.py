"""Tests for acdb_gym.discovery.sortnregress."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.discovery import sortnregress


def raw_chain(seed: int, n_nodes: int = 5) -> tuple[DAG, np.ndarray]:
    """A chain through a random node order with weights +-U[1, 2] (variance grows along it)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n_nodes)
    weights = np.zeros((n_nodes, n_nodes))
    for parent, child in itertools.pairwise(order):
        weights[parent, child] = rng.uniform(1.0, 2.0) * rng.choice([-1.0, 1.0])
    return DAG(weights != 0), weights


@pytest.mark.parametrize("seed", range(5))
def test_raw_chain_is_recovered_exactly(sem: SimpleNamespace, seed: int) -> None:
    dag, weights = raw_chain(seed)
    data = sem.sample(weights, 2000, np.random.default_rng(100 + seed))
    assert sortnregress(data) == dag.to_pdag()


def test_raw_random_dag_gets_the_order_right(sem: SimpleNamespace) -> None:
    # Weights +-U[0.5, 2]: variance sorting need not be perfect, but every estimated edge that
    # is a true adjacency should point the right way on this seed.
    rng = np.random.default_rng(7)
    dag = sem.random_dag(6, 0.5, rng)
    weights = sem.random_weights(dag, rng)
    result = sortnregress(sem.sample(weights, 5000, rng))
    assert result.is_fully_directed
    reversed_edges = [(i, j) for i, j in result.directed_edges() if dag.adjacency[j, i]]
    assert reversed_edges == []


def test_independent_variables_give_no_edges() -> None:
    data = np.random.default_rng(0).normal(size=(1000, 4)) * np.array([1.0, 2.0, 3.0, 4.0])
    assert sortnregress(data) == PDAG.empty(4)


def test_ties_in_variance_keep_index_order() -> None:
    # Columns that are permutations of the same integers have bit-identical variances, so the
    # stable sort keeps index order and every edge points from a lower to a higher index.
    rng = np.random.default_rng(0)
    values = np.repeat(np.arange(-3.0, 4.0), 20)
    base = rng.permutation(values)
    data = np.column_stack([base, base[::-1], np.sort(base), base])  # X3 = X0 exactly
    result = sortnregress(data)
    assert all(i < j for i, j in result.directed_edges())
    assert (0, 3) in result.directed_edges()


def test_output_is_a_full_dag_and_input_is_untouched(sem: SimpleNamespace) -> None:
    dag, weights = raw_chain(0)
    data = sem.sample(weights, 300, np.random.default_rng(1))
    data.flags.writeable = False
    before = data.copy()
    result = sortnregress(data, alpha=0.05)
    assert isinstance(result, PDAG) and result.n_nodes == dag.n_nodes
    assert result.is_fully_directed
    result.to_dag()  # acyclic
    np.testing.assert_array_equal(data, before)
    assert sortnregress(data, alpha=0.05) == result  # deterministic


@pytest.mark.parametrize("n_nodes", [0, 1])
def test_fewer_than_two_variables_is_empty(n_nodes: int) -> None:
    data = np.arange(10.0)[:, None] * np.ones((1, n_nodes))
    assert sortnregress(data) == PDAG.empty(n_nodes)


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        (np.arange(12.0).reshape(4, 3) ** 2, {"alpha": 1.0}, "alpha must be in"),
        (np.arange(9.0).reshape(3, 3) ** 2, {}, "at least 4 samples for 3 variables, got 3"),
        (np.c_[np.arange(5.0), np.full(5, 2.0)], {}, r"column X1 is constant"),
        (np.array([[1.0, np.inf], [2.0, 1.0], [0.0, 3.0]]), {}, "finite; got inf"),
    ],
)
def test_bad_input_is_rejected(data: np.ndarray, kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sortnregress(data, **kwargs)
