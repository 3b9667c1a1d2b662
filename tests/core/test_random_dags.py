"""Tests for ``acdb_gym.core.graphs.random_dags``: the one random-order DAG draw behind the
instance generator (exact edge count) and the random baseline (uniform edge count).

The draws are part of the benchmark's contract (manifest digests, random-baseline rows), so the
tests hold the function against the inline code it replaced, draw for draw, including the
generator state it leaves behind.
"""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.graphs import DAG, random_order_dag


def _generator_draw_before(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """The instance generator's former ``_draw_dag``: permutation, then choice."""
    order = rng.permutation(d)
    rows, cols = np.triu_indices(d, k=1)
    chosen = rng.choice(rows.size, size=k, replace=False)
    adjacency = np.zeros((d, d), dtype=np.bool_)
    adjacency[order[rows[chosen]], order[cols[chosen]]] = True
    return adjacency


def _baseline_draw_before(d: int, rng: np.random.Generator) -> np.ndarray:
    """The random baseline's former ``random_forward_dag``: permutation, integers, choice."""
    order = rng.permutation(d)
    rows, cols = np.triu_indices(d, k=1)
    m = int(rng.integers(0, rows.size + 1))
    chosen = rng.choice(rows.size, size=m, replace=False)
    adjacency = np.zeros((d, d), dtype=np.bool_)
    adjacency[order[rows[chosen]], order[cols[chosen]]] = True
    return adjacency


@pytest.mark.parametrize("d", [2, 3, 6, 10, 30])
def test_exact_count_draws_like_the_former_generator(d: int) -> None:
    for seed in range(40):
        k = seed % (d * (d - 1) // 2 + 1)
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        for _ in range(3):  # rejection sampling draws again from the same stream
            dag = random_order_dag(d, n_edges=k, rng=ours)
            np.testing.assert_array_equal(dag.adjacency, _generator_draw_before(d, k, theirs))
            assert dag.n_edges == k
        assert ours.bit_generator.state == theirs.bit_generator.state


@pytest.mark.parametrize("d", [2, 5, 8, 12, 30])
def test_uniform_count_draws_like_the_former_baseline(d: int) -> None:
    ours, theirs = np.random.default_rng(d), np.random.default_rng(d)
    for _ in range(50):
        dag = random_order_dag(d, n_edges="uniform", rng=ours)
        np.testing.assert_array_equal(dag.adjacency, _baseline_draw_before(d, theirs))
    assert ours.bit_generator.state == theirs.bit_generator.state


def test_numpy_integer_counts_are_accepted() -> None:
    a = random_order_dag(5, n_edges=np.int64(4), rng=np.random.default_rng(1))
    assert a == random_order_dag(5, n_edges=4, rng=np.random.default_rng(1))


def test_extreme_counts_give_the_empty_and_a_complete_dag() -> None:
    rng = np.random.default_rng(0)
    assert random_order_dag(6, n_edges=0, rng=rng) == DAG.empty(6)
    complete = random_order_dag(6, n_edges=15, rng=rng)
    assert complete.n_edges == 15
    assert (complete.skeleton() | np.eye(6, dtype=bool)).all()
    assert random_order_dag(1, n_edges="uniform", rng=rng) == DAG.empty(1)


def test_node_order_is_random() -> None:
    # With one edge on two nodes, both directions must occur: names leak nothing.
    rng = np.random.default_rng(3)
    edges = {random_order_dag(2, n_edges=1, rng=rng).edges()[0] for _ in range(64)}
    assert edges == {(0, 1), (1, 0)}


@pytest.mark.parametrize(
    ("n_nodes", "n_edges", "match"),
    [
        (4, 7, r"n_edges must be in \[0, 6\] for 4 nodes, got 7"),
        (4, -1, r"n_edges must be in \[0, 6\] for 4 nodes, got -1"),
        (4, "all", r"n_edges must be an integer or 'uniform', got 'all'"),
        (-1, 0, r"n_nodes must be non-negative, got -1"),
    ],
)
def test_bad_arguments_are_named(n_nodes: int, n_edges: int | str, match: str) -> None:
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=match):
        random_order_dag(n_nodes, n_edges=n_edges, rng=rng)  # type: ignore[arg-type]
    assert rng.bit_generator.state == state  # nothing drawn
