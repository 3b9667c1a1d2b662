"""Stacked interventional essential graphs (acdb_gym/core/graphs/meek_many.py) against
essential_graph one (DAG, target set) at a time."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.graphs import cpdag, essential_graph, random_order_dag
from acdb_gym.core.graphs.meek_many import essential_graphs_many


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
