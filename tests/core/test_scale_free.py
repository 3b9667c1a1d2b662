"""Tests for the scale-free graph model (``LevelSpec(graph="sf")``, DESIGN §3 step 1): exact
edge count, acyclicity, determinism, hubs, its use by every SCM family, and ER levels left
drawing exactly as before."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from acdb_gym.core.graphs import parent_quotas, random_order_dag, scale_free_dag
from acdb_gym.core.ladders.custom import parse_custom_level
from acdb_gym.core.worlds.instance import draw_graph, generate_instance
from acdb_gym.core.worlds.spec import FAMILIES, LevelSpec
from acdb_gym.envs.registration import make_custom


@pytest.mark.parametrize(("d", "k"), [(2, 1), (5, 0), (5, 10), (12, 12), (20, 30), (30, 45)])
def test_exact_edge_count_and_acyclic(d: int, k: int) -> None:
    for seed in range(5):
        dag = scale_free_dag(d, n_edges=k, rng=np.random.default_rng(seed))
        assert dag.n_edges == k
        assert dag.topological_order().size == d


def test_quotas_sum_to_the_edge_count_and_respect_the_positions() -> None:
    for d in (2, 5, 9):
        for k in range(d * (d - 1) // 2 + 1):
            quotas = parent_quotas(d, k)
            assert quotas.sum() == k
            assert all(0 <= quotas[a] <= a for a in range(d))
    with pytest.raises(ValueError, match=r"n_edges must be in \[0, 10\]"):
        parent_quotas(5, 11)


def test_same_seed_same_graph_and_the_draw_order_is_documented() -> None:
    a = scale_free_dag(15, n_edges=20, rng=np.random.default_rng(4))
    b = scale_free_dag(15, n_edges=20, rng=np.random.default_rng(4))
    assert np.array_equal(a.adjacency, b.adjacency)
    # Rebuilt from the docstring's recipe, draw by draw.
    rng = np.random.default_rng(4)
    order = rng.permutation(15)
    quotas = parent_quotas(15, 20)
    degree = np.zeros(15)
    adjacency = np.zeros((15, 15), dtype=bool)
    for position in range(1, 15):
        if quotas[position]:
            weights = 1.0 + degree[:position]
            parents = rng.choice(
                position, size=quotas[position], replace=False, p=weights / weights.sum()
            )
            degree[parents] += 1
            degree[position] += quotas[position]
            adjacency[order[parents], order[position]] = True
    assert np.array_equal(adjacency, a.adjacency)


def test_scale_free_graphs_have_hubs_that_er_graphs_lack() -> None:
    sf_max, er_max = [], []
    for seed in range(30):
        sf = scale_free_dag(50, n_edges=75, rng=np.random.default_rng(seed)).adjacency
        er = random_order_dag(50, n_edges=75, rng=np.random.default_rng(seed)).adjacency
        sf_max.append(int((sf.sum(0) + sf.sum(1)).max()))
        er_max.append(int((er.sum(0) + er.sum(1)).max()))
    assert np.mean(sf_max) > 1.5 * np.mean(er_max)


def test_er_draws_are_unchanged_by_the_graph_field() -> None:
    spec = LevelSpec(d=8, k=13, n_obs=200, n_int=50, noise_var=2.0, slack=1)
    dag, names = draw_graph(spec, np.random.default_rng(3))
    assert names is None
    before = random_order_dag(8, n_edges=13, rng=np.random.default_rng(3))
    assert np.array_equal(dag.adjacency, before.adjacency)
    assert repr(spec) == repr(LevelSpec(8, 13, 200, 50, 2.0, 1, graph="er"))
    assert "graph" not in repr(spec) and "graph='sf'" in repr(
        LevelSpec(8, 13, 200, 50, 2.0, 1, graph="sf")
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_draws_and_plays_on_scale_free_graphs(family: str) -> None:
    level = parse_custom_level(
        f"sf:d=8,k=10,n_obs=200,n_int=50,slack=1,standardized=true,family={family},graph=sf"
    ).level(2)
    instance = level.instance(1)
    assert instance.dag.n_edges == 10 and instance.spec.graph == "sf"
    again = generate_instance(level.spec, level.manifest_seed(1))
    assert again.digest() == instance.digest()
    env = make_custom(level)
    _observation, info = env.reset(options={"manifest_index": 0})
    assert info["budget"] >= 1
    env.close()
    assert isinstance(env, gym.Env)


def test_bad_graph_names_are_refused() -> None:
    with pytest.raises(ValueError, match="graph must be one of"):
        LevelSpec(d=8, k=10, n_obs=200, n_int=50, noise_var=1.0, slack=1, graph="ba")
