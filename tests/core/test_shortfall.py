"""Budgets below |I*| (``LevelSpec.shortfall``, DESIGN §3 step 7), the best experiments such a
budget affords (``best_intervention_set``) and the score against what they identify
(``core/identifiable.py``, DESIGN §6)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from acdb_gym.core.graphs import (
    DAG,
    best_intervention_set,
    essential_graph,
    minimum_intervention_set,
    random_order_dag,
)
from acdb_gym.core.identifiable import identifiable_f1, identifiable_graph
from acdb_gym.core.ladders.custom import format_level_spec, parse_level_spec
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.worlds.spec import LevelSpec

BASE = LevelSpec(12, 12, 200, 20, 1.0, 0, standardized=True)


def test_the_default_leaves_every_repr_and_so_every_digest_unchanged() -> None:
    assert "shortfall" not in repr(BASE)
    assert "shortfall=2" in repr(LevelSpec(12, 12, 200, 20, 1.0, 0, shortfall=2))
    level = LADDERS["v1"]["L4"]
    assert level.instance(0).digest() == level.manifest[0].digest


@pytest.mark.parametrize(
    "fields",
    [{"shortfall": -1}, {"shortfall": 1, "slack": 1}, {"shortfall": 1, "slack_max": 2}],
)
def test_bad_shortfalls_are_refused_with_the_value_named(fields: dict[str, int]) -> None:
    values = {"d": 6, "k": 6, "n_obs": 50, "n_int": 10, "noise_var": 1.0, "slack": 0, **fields}
    with pytest.raises(ValueError, match=r"shortfall|slack"):
        LevelSpec(**values)  # type: ignore[arg-type]


def test_the_budget_is_i_star_less_the_shortfall_and_never_negative() -> None:
    spec = LevelSpec(12, 12, 200, 20, 1.0, 0, standardized=True, shortfall=2)
    budgets = []
    for seed in range(40):
        full = generate_instance(BASE, seed)
        short = generate_instance(spec, seed)
        # The same world: only the budget differs.
        assert np.array_equal(full.dag.adjacency, short.dag.adjacency)
        assert short.i_star == full.i_star
        assert short.budget == max(0, len(full.i_star) - 2)
        budgets.append(short.budget)
    assert min(budgets) >= 0 and max(budgets) >= 1
    assert spec.slack_text == "-2"


def test_a_custom_level_takes_the_shortfall() -> None:
    spec = parse_level_spec("d=12,k=12,n_obs=200,n_int=20,slack=0,shortfall=1")
    assert spec.shortfall == 1
    assert "shortfall=1" in format_level_spec(spec)


def _oriented(dag: DAG, targets: tuple[int, ...]) -> int:
    return int(essential_graph(dag, list(targets)).directed.sum())


@pytest.mark.parametrize("seed", range(12))
def test_the_best_set_orients_as_much_as_any_set_of_its_size(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dag = random_order_dag(7, n_edges=int(rng.integers(4, 9)), rng=rng)
    star = minimum_intervention_set(dag)
    for size in range(len(star) + 2):
        best = best_intervention_set(dag, size)
        assert len(best) <= size
        most = max(_oriented(dag, s) for s in itertools.combinations(range(7), min(size, 7)))
        assert _oriented(dag, tuple(sorted(best))) == most
        if size >= len(star):
            assert best == star


def test_the_best_set_refuses_what_it_cannot_search() -> None:
    with pytest.raises(ValueError, match="size must be non-negative"):
        best_intervention_set(DAG.from_edges(3, [(0, 1)]), -1)
    with pytest.raises(ValueError, match="allowed targets"):
        best_intervention_set(DAG.from_edges(3, [(0, 1)]), 1, [5])


def test_the_identifiable_graph_and_its_score() -> None:
    chains = DAG.from_edges(5, [(0, 1), (1, 2), (3, 4)])
    graph = identifiable_graph(chains, 1)
    assert graph.directed_edges() == [(0, 1), (1, 2)]
    assert identifiable_f1(graph, chains) == 1.0
    assert identifiable_f1(graph, graph) == 1.0
    reversed_chain = DAG.from_edges(5, [(1, 0), (2, 1), (4, 3)])
    assert identifiable_f1(graph, reversed_chain) == 0.0
    # With the budget of I*, the identifiable graph is the DAG itself.
    full = identifiable_graph(chains, 2)
    assert full.directed_edges() == chains.edges() and not full.undirected_edges()
    with pytest.raises(ValueError, match="nodes"):
        identifiable_f1(graph, DAG.from_edges(3, []))
