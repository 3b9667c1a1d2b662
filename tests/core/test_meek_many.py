"""Stacked interventional essential graphs (acdb_gym/core/graphs/meek_many.py) against
essential_graph one (DAG, target set) at a time."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.graphs import cpdag, essential_graph, random_order_dag
from acdb_gym.core.graphs.meek_many import close_consistent_many, essential_graphs_many


@pytest.mark.parametrize("d", [2, 4, 6, 9, 12])
def test_essential_graphs_many_equal_essential_graph(d: int) -> None:
    rng = np.random.default_rng(40 + d)
    dags = [random_order_dag(d, n_edges="uniform", rng=rng) for _ in range(80)]
    touched = rng.random((len(dags), d)) < rng.uniform(0.05, 0.5, size=(len(dags), 1))
    touched[np.arange(len(dags)), rng.integers(d, size=len(dags))] = True
    bases = [cpdag(dag) for dag in dags]
    directed, undirected = essential_graphs_many(
        np.stack([dag.adjacency for dag in dags]),
        np.stack([base.directed for base in bases]),
        np.stack([base.undirected for base in bases]),
        touched,
    )
    oriented_by_rules = 0
    for i, dag in enumerate(dags):
        expected = essential_graph(dag, np.flatnonzero(touched[i]).tolist())
        np.testing.assert_array_equal(directed[i], expected.directed)
        np.testing.assert_array_equal(undirected[i], expected.undirected)
        incident = touched[i][:, None] | touched[i][None, :]
        oriented_by_rules += int((expected.directed & ~bases[i].directed & ~incident).sum())
    if d >= 6:
        assert oriented_by_rules > 0  # Meek's rules, not only the targets, oriented edges


@pytest.mark.parametrize("d", [3, 6, 10, 16])
def test_close_many_equals_meek_closure_on_any_pdag(d: int) -> None:
    """Noisy PDAGs (random orientations of a random skeleton, some closing cycles under
    Meek's rules, a few cyclic already) closed together equal each closed alone."""
    from acdb_gym.core.graphs.meek import _ALL_RULES, _close
    from acdb_gym.core.graphs.meek_many import close_many

    rng = np.random.default_rng([d, 40])
    k = 300
    skeleton = np.triu(rng.random((k, d, d)) < rng.uniform(0.2, 0.7, (k, 1, 1)), 1)
    skeleton |= skeleton.transpose(0, 2, 1)
    forward = np.triu(rng.random((k, d, d)) < 0.5, 1)
    forward |= ~forward.transpose(0, 2, 1) & np.tril(np.ones((d, d), dtype=bool), -1)
    oriented = skeleton & (rng.random((k, d, d)) < 0.35)
    oriented &= oriented.transpose(0, 2, 1)  # a pair oriented or not, both cells alike
    directed = oriented & forward
    undirected = skeleton & ~oriented
    closed = close_many(directed, undirected)
    fallbacks = 0
    for g in range(k):
        alone = _close(directed[g], undirected[g], _ALL_RULES)
        assert np.array_equal(closed[g][0], alone[0]) and np.array_equal(closed[g][1], alone[1])
        many_directed, _ = close_consistent_many(directed[g : g + 1], undirected[g : g + 1])
        fallbacks += not np.array_equal(many_directed[0], alone[0])
    if d >= 6:
        assert fallbacks > 0  # some graphs took the one-at-a-time branch
