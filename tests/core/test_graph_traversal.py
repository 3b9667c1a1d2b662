"""Tests for the traversals of ``acdb_gym.core.graphs.dag`` that the value-type tests in
``test_graphs.py`` do not cover: :func:`reachability` (the transitive closure)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acdb_gym.core.graphs import DAG, has_directed_path, random_order_dag, reachability


@st.composite
def _digraphs(draw: st.DrawFn) -> np.ndarray:
    """Any digraph on up to 8 nodes, cycles and self-loops included."""
    n_nodes = draw(st.integers(0, 8))
    bits = draw(st.lists(st.booleans(), min_size=n_nodes**2, max_size=n_nodes**2))
    return np.array(bits, dtype=np.bool_).reshape(n_nodes, n_nodes)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_digraphs())
def test_reachability_is_networkx_transitive_closure(matrix: np.ndarray) -> None:
    graph = nx.from_numpy_array(matrix, create_using=nx.DiGraph)
    # reflexive=False: a node reaches itself only along a cycle, as in reachability().
    closure = nx.transitive_closure(graph, reflexive=False)
    expected = nx.to_numpy_array(closure, nodelist=range(len(matrix)), dtype=bool)
    np.testing.assert_array_equal(reachability(matrix), expected)


@pytest.mark.parametrize("seed", range(10))
def test_reachability_agrees_with_has_directed_path_on_dags(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dag = random_order_dag(12, n_edges="uniform", rng=rng)
    reach = reachability(dag.adjacency)
    assert not reach.diagonal().any()  # a DAG has no cycle
    for a in range(12):
        for b in range(12):
            if a != b:
                assert reach[a, b] == has_directed_path(dag.adjacency, a, b)


def test_reachability_of_a_long_chain_and_a_fresh_array() -> None:
    n_nodes = 40
    chain = DAG.from_edges(n_nodes, [(v, v + 1) for v in range(n_nodes - 1)])
    reach = reachability(chain.adjacency)
    np.testing.assert_array_equal(reach, np.triu(np.ones((n_nodes, n_nodes), dtype=bool), 1))
    assert reach.flags.writeable and not np.shares_memory(reach, chain.adjacency)
    assert not chain.adjacency[0, 2]  # the input is left alone


def test_reachability_rejects_non_square_input() -> None:
    with pytest.raises(ValueError, match=r"square matrix, got shape \(2, 3\)"):
        reachability(np.zeros((2, 3), dtype=bool))
