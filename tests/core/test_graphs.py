"""Tests for ``acdb_gym.core.graphs``.

The equivalence-class algorithms are held against independent truth on hundreds of random DAGs:
brute-force enumeration of the (interventional) Markov equivalence class (``_graph_oracles``),
causal-learn's ``dag2cpdag``, networkx's d-separation, and König's theorem for the minimum
intervention set on large graphs. Hand-built cases pin down each Meek rule and covered edges.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType

import networkx as nx
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from acdb_gym.core.graphs import (
    DAG,
    PDAG,
    CycleError,
    apply_meek_rule1,
    apply_meek_rule2,
    apply_meek_rule3,
    apply_meek_rule4,
    covered_edges,
    cpdag,
    essential_graph,
    find_cycle,
    meek_closure,
    minimum_intervention_set,
    minimum_intervention_subset,
    topological_order,
)
from acdb_gym.core.graphs.equivalence import _cpdag_by_edge_labels, _cpdag_by_meek_rules


def _load_oracles() -> ModuleType:
    # Tests run with --import-mode=importlib, so sibling modules are not on sys.path.
    name = "_graph_oracles"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


oracles = _load_oracles()
EquivalenceClass = oracles.EquivalenceClass

ALL_RULES = (apply_meek_rule1, apply_meek_rule2, apply_meek_rule3, apply_meek_rule4)
BRUTE_FORCE_SEEDS = range(300)


# --------------------------------------------------------------------------- helpers


def _random_dag(seed: int, *, max_nodes: int = 7, max_edges: int = 14) -> DAG:
    """A DAG with 2..max_nodes nodes and a uniformly drawn edge count (sparse to complete)."""
    rng = np.random.default_rng(seed)
    n_nodes = int(rng.integers(2, max_nodes + 1))
    n_pairs = n_nodes * (n_nodes - 1) // 2
    n_edges = int(rng.integers(0, min(n_pairs, max_edges) + 1))
    return DAG(oracles.random_dag_matrix(rng, n_nodes, n_edges))


@functools.cache
def _case(seed: int) -> tuple[DAG, EquivalenceClass]:
    dag = _random_dag(seed)
    return dag, EquivalenceClass.enumerate(np.array(dag.adjacency))


def _random_targets(rng: np.random.Generator, n_nodes: int) -> list[int]:
    size = int(rng.integers(0, n_nodes + 1))
    return sorted(rng.choice(n_nodes, size=size, replace=False).tolist())


def _assert_pdag_equals(pdag: PDAG, directed: np.ndarray, undirected: np.ndarray) -> None:
    expected = PDAG(directed, undirected)
    assert pdag == expected, f"got {pdag}, expected {expected}"


def _assert_real_cycle(adjacency: np.ndarray, cycle: tuple[int, ...]) -> None:
    assert len(cycle) >= 1
    assert len(set(cycle)) == len(cycle), f"cycle repeats a node: {cycle}"
    for u, v in zip(cycle, (*cycle[1:], cycle[0]), strict=True):
        assert adjacency[u, v], f"{cycle} uses a missing edge {u} -> {v}"


def _sparse_dag(rng: np.random.Generator, n_nodes: int, expected_degree: float) -> DAG:
    order = rng.permutation(n_nodes)
    upper = np.triu(rng.random((n_nodes, n_nodes)) < expected_degree / (n_nodes - 1), k=1)
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    adjacency[np.ix_(order, order)] = upper
    return DAG(adjacency)


def _covered_by_definition(dag: DAG) -> set[tuple[int, int]]:
    parents = {v: set(dag.parents(v).tolist()) for v in range(dag.n_nodes)}
    return {(u, v) for u, v in dag.edges() if parents[v] == parents[u] | {u}}


def _chain_component_bound(undirected: np.ndarray) -> int:
    """Squires et al. (2020): sum over chain components of floor(largest clique / 2)."""
    graph = nx.from_numpy_array(undirected.astype(int))
    bound = 0
    for component in nx.connected_components(graph):
        cliques = nx.find_cliques(graph.subgraph(component))
        bound += max(len(clique) for clique in cliques) // 2
    return bound


def _causallearn_cpdag(dag: DAG) -> PDAG:
    """causal-learn's CPDAG, decoded from its matrix (``g[j, i] = 1, g[i, j] = -1`` is
    ``i -> j``; both -1 is ``i - j``)."""
    from causallearn.graph.Dag import Dag
    from causallearn.graph.GraphNode import GraphNode
    from causallearn.utils.DAG2CPDAG import dag2cpdag

    nodes = [GraphNode(f"X{i}") for i in range(dag.n_nodes)]
    graph = Dag(nodes)
    for i, j in dag.edges():
        graph.add_directed_edge(nodes[i], nodes[j])
    matrix = dag2cpdag(graph).graph
    directed = (matrix.T == 1) & (matrix == -1)
    undirected = (matrix == -1) & (matrix.T == -1)
    assert not (matrix == 1).sum() - directed.sum(), "unexpected endpoint codes"
    return PDAG(directed, undirected)


# --------------------------------------------------------------------------- value types


def test_dag_stores_a_read_only_copy() -> None:
    source = np.zeros((3, 3), dtype=np.bool_)
    source[0, 1] = True
    dag = DAG(source)
    source[1, 2] = True
    assert dag.edges() == [(0, 1)]
    with pytest.raises(ValueError, match="read-only"):
        dag.adjacency[1, 2] = True


def test_pdag_and_accessor_matrices_are_read_only() -> None:
    pdag = PDAG.from_edges(3, directed=[(0, 1)], undirected=[(1, 2)])
    dag = DAG.from_edges(3, [(0, 1), (1, 2)])
    for matrix in (pdag.directed, pdag.undirected, pdag.skeleton(), dag.skeleton()):
        with pytest.raises(ValueError, match="read-only"):
            matrix[0, 2] = True
    with pytest.raises(ValueError, match="read-only"):
        covered_edges(dag)[1, 2] = True


def test_dag_accepts_integer_matrix_and_rejects_bad_ones() -> None:
    assert DAG(np.array([[0, 1], [0, 0]])) == DAG.from_edges(2, [(0, 1)])
    with pytest.raises(ValueError, match="square"):
        DAG(np.zeros((2, 3), dtype=np.bool_))
    with pytest.raises(ValueError, match="0/1"):
        DAG(np.array([[0, 2], [0, 0]]))
    with pytest.raises(ValueError, match="X1"):
        DAG(np.diag([False, True, False]))
    with pytest.raises(ValueError, match=r"\[0, 2\), got 5"):
        DAG.from_edges(2, [(0, 5)])


def test_dag_equality_and_hash() -> None:
    first = DAG.from_edges(3, [(0, 1), (1, 2)])
    same = DAG(np.array(first.adjacency))
    other = DAG.from_edges(3, [(0, 1), (2, 1)])
    assert first == same and hash(first) == hash(same)
    assert first != other
    assert first != DAG.from_edges(4, [(0, 1), (1, 2)])
    assert first != first.to_pdag()
    assert len({first, same, other}) == 2


def test_pdag_equality_and_hash() -> None:
    first = PDAG.from_edges(3, directed=[(0, 1)], undirected=[(1, 2)])
    same = PDAG.from_edges(3, directed=[(0, 1)], undirected=[(2, 1)])
    flipped = PDAG.from_edges(3, directed=[(0, 1), (1, 2)])
    assert first == same and hash(first) == hash(same)
    assert first != flipped
    assert len({first, same, flipped}) == 2


def test_pdag_dag_conversions() -> None:
    dag = DAG.from_edges(3, [(0, 1), (2, 1)])
    assert dag.to_pdag().to_dag() == dag
    assert dag.to_pdag().is_fully_directed
    with pytest.raises(ValueError, match="X1 - X2"):
        PDAG.from_edges(3, undirected=[(2, 1)]).to_dag()


@pytest.mark.parametrize(
    ("directed", "undirected", "message"),
    [
        ([], [(1, 2)], r"symmetric.*X1 - X2"),
        ([(0, 1)], [(0, 1), (1, 0)], r"both directed and undirected: X0 - X1"),
        ([(2, 0), (0, 2)], [], r"directed both ways: X0 <-> X2"),
        ([(1, 1)], [], r"self-loops.*X1"),
        ([], [(2, 2)], r"self-loops.*X2"),
    ],
    ids=["asymmetric-undirected", "directed-and-undirected", "both-ways", "loop", "loop-u"],
)
def test_pdag_validation_names_the_edge(
    directed: list[tuple[int, int]], undirected: list[tuple[int, int]], message: str
) -> None:
    d = np.zeros((3, 3), dtype=np.bool_)
    u = np.zeros((3, 3), dtype=np.bool_)
    for i, j in directed:
        d[i, j] = True
    for i, j in undirected:
        u[i, j] = True
    with pytest.raises(ValueError, match=message) as info:
        PDAG(d, u)
    assert not isinstance(info.value, CycleError)


def test_pdag_rejects_shape_mismatch() -> None:
    with pytest.raises(ValueError, match="shapes differ"):
        PDAG(np.zeros((2, 2), dtype=np.bool_), np.zeros((3, 3), dtype=np.bool_))


def test_cycle_error_carries_a_real_cycle() -> None:
    adjacency = np.zeros((5, 5), dtype=np.bool_)
    for u, v in [(0, 1), (1, 2), (2, 3), (3, 1), (3, 4)]:
        adjacency[u, v] = True
    with pytest.raises(CycleError) as info:
        DAG(adjacency)
    assert set(info.value.cycle) == {1, 2, 3}
    _assert_real_cycle(adjacency, info.value.cycle)
    for node in info.value.cycle:
        assert f"X{node}" in str(info.value)
    with pytest.raises(CycleError) as pdag_info:
        PDAG(adjacency, np.zeros_like(adjacency))
    _assert_real_cycle(adjacency, pdag_info.value.cycle)


@st.composite
def _digraphs(draw: st.DrawFn) -> np.ndarray:
    n_nodes = draw(st.integers(1, 7))
    bits = draw(st.lists(st.booleans(), min_size=n_nodes**2, max_size=n_nodes**2))
    matrix = np.array(bits, dtype=np.bool_).reshape(n_nodes, n_nodes)
    np.fill_diagonal(matrix, False)
    return matrix


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_digraphs())
def test_cycle_detection_agrees_with_networkx(matrix: np.ndarray) -> None:
    acyclic = nx.is_directed_acyclic_graph(nx.from_numpy_array(matrix, create_using=nx.DiGraph))
    cycle = find_cycle(matrix)
    order = topological_order(matrix)
    if acyclic:
        assert cycle is None
        assert order is not None
        assert sorted(order.tolist()) == list(range(len(matrix)))
        position = np.argsort(order)
        assert all(position[i] < position[j] for i, j in zip(*np.nonzero(matrix), strict=True))
        assert DAG(matrix).topological_order().tolist() == order.tolist()
    else:
        assert order is None
        assert cycle is not None
        _assert_real_cycle(matrix, cycle)
        with pytest.raises(CycleError) as info:
            DAG(matrix)
        _assert_real_cycle(matrix, info.value.cycle)


@pytest.mark.parametrize("seed", range(20))
def test_networkx_round_trip(seed: int) -> None:
    dag = _random_dag(seed, max_nodes=9, max_edges=36)
    graph = dag.to_networkx()
    assert sorted(graph.nodes) == list(range(dag.n_nodes))
    assert sorted(graph.edges) == dag.edges()
    assert DAG.from_networkx(graph) == dag


def test_from_networkx_rejects_foreign_node_labels() -> None:
    graph = nx.DiGraph([(0, 2)])
    with pytest.raises(ValueError, match=r"0\.\.1"):
        DAG.from_networkx(graph)


# --------------------------------------------------------------------------- Meek rules
# Node roles of the rules' docstrings: a = 0, b = 1, c = 2, e = 3.

MEEK_FIRING_CASES = {
    "rule1": (apply_meek_rule1, 3, [(0, 1)], [(1, 2)], (1, 2)),
    "rule2": (apply_meek_rule2, 3, [(0, 2), (2, 1)], [(0, 1)], (0, 1)),
    "rule3": (apply_meek_rule3, 4, [(2, 1), (3, 1)], [(0, 1), (0, 2), (0, 3)], (0, 1)),
    "rule4": (apply_meek_rule4, 4, [(3, 2), (2, 1)], [(0, 1), (0, 2), (0, 3)], (0, 1)),
}

MEEK_SILENT_CASES = {
    # a -> b - c with a, c adjacent.
    "rule1-shielded": (apply_meek_rule1, 3, [(0, 1), (0, 2)], [(1, 2)]),
    # a -> c - b with a - b: no directed path a -> c -> b.
    "rule2-no-path": (apply_meek_rule2, 3, [(0, 2)], [(0, 1), (1, 2)]),
    # As rule 3 but the two middle nodes c, e are adjacent.
    "rule3-adjacent-middles": (
        apply_meek_rule3,
        4,
        [(2, 1), (3, 1)],
        [(0, 1), (0, 2), (0, 3), (2, 3)],
    ),
    # As rule 4 but a is not adjacent to c.
    "rule4-a-not-adjacent-c": (apply_meek_rule4, 4, [(3, 2), (2, 1)], [(0, 1), (0, 3)]),
}


@pytest.mark.parametrize("name", sorted(MEEK_FIRING_CASES))
def test_meek_rule_fires_alone(name: str) -> None:
    rule, n_nodes, directed, undirected, oriented = MEEK_FIRING_CASES[name]
    pdag = PDAG.from_edges(n_nodes, directed=directed, undirected=undirected)
    expected = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    expected[oriented] = True
    np.testing.assert_array_equal(rule(pdag.directed, pdag.undirected), expected)
    for other in ALL_RULES:
        if other is not rule:
            assert not other(pdag.directed, pdag.undirected).any(), other.__name__
    remaining = [edge for edge in undirected if set(edge) != set(oriented)]
    closed = PDAG.from_edges(n_nodes, directed=[*directed, oriented], undirected=remaining)
    assert meek_closure(pdag) == closed


@pytest.mark.parametrize("name", sorted(MEEK_SILENT_CASES))
def test_meek_rule_stays_silent(name: str) -> None:
    rule, n_nodes, directed, undirected = MEEK_SILENT_CASES[name]
    pdag = PDAG.from_edges(n_nodes, directed=directed, undirected=undirected)
    assert not rule(pdag.directed, pdag.undirected).any()


def test_meek_closure_can_be_restricted_to_some_rules() -> None:
    pdag = PDAG.from_edges(3, directed=[(0, 1)], undirected=[(1, 2)])
    assert meek_closure(pdag, rules=[apply_meek_rule2]) == pdag
    assert meek_closure(pdag, rules=[apply_meek_rule1]).directed_edges() == [(0, 1), (1, 2)]


def test_meek_closure_survives_contradictory_input() -> None:
    # 0 -> 1 - 2 with 0, 2 non-adjacent: R1 orients 1 -> 2; 2 -> 3 -> 1: R2 orients 2 -> 1.
    # The input is a valid PDAG without a consistent extension. R1's orientation would close
    # the cycle 1 -> 2 -> 3 -> 1, so it is skipped (alone, R1 leaves the pair undirected);
    # R2's orientation closes no cycle and stands.
    pdag = PDAG.from_edges(4, directed=[(0, 1), (2, 3), (3, 1)], undirected=[(1, 2)])
    assert meek_closure(pdag, rules=[apply_meek_rule1]) == pdag
    closed = meek_closure(pdag)
    assert closed == PDAG.from_edges(4, directed=[(0, 1), (2, 1), (2, 3), (3, 1)])


def test_meek_closure_leaves_a_pair_contested_by_one_rule_undirected() -> None:
    # 0 -> 1 - 2 <- 3 with 0, 2 and 1, 3 non-adjacent: R1 orients 1 -> 2 and 2 -> 1 at once.
    pdag = PDAG.from_edges(4, directed=[(0, 1), (3, 2)], undirected=[(1, 2)])
    contested = apply_meek_rule1(pdag.directed, pdag.undirected)
    assert contested[1, 2] and contested[2, 1]
    assert meek_closure(pdag) == pdag


def test_meek_rule4_needs_only_adjacency_between_a_and_c() -> None:
    # The rule-4 configuration with c -> a instead of a - c still orients a -> b.
    pdag = PDAG.from_edges(4, directed=[(3, 2), (2, 1), (2, 0)], undirected=[(0, 1), (0, 3)])
    assert apply_meek_rule4(pdag.directed, pdag.undirected)[0, 1]


@st.composite
def _arbitrary_pdags(draw: st.DrawFn) -> PDAG:
    """Valid PDAGs with no promise of a consistent extension (like noisy orientations)."""
    n_nodes = draw(st.integers(2, 7))
    pairs = list(itertools.combinations(range(n_nodes), 2))
    kinds = draw(st.lists(st.integers(0, 3), min_size=len(pairs), max_size=len(pairs)))
    directed = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    undirected = np.zeros_like(directed)
    for (i, j), kind in zip(pairs, kinds, strict=True):
        if kind == 1:
            undirected[i, j] = undirected[j, i] = True
        elif kind == 2:
            directed[i, j] = True
        elif kind == 3:
            directed[j, i] = True
    acyclic = nx.is_directed_acyclic_graph(nx.from_numpy_array(directed, create_using=nx.DiGraph))
    assume(acyclic)
    return PDAG(directed, undirected)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_arbitrary_pdags())
def test_meek_closure_on_arbitrary_pdags_only_adds_orientations(pdag: PDAG) -> None:
    closed = meek_closure(pdag)  # PDAG() re-validates: no cycle, no pair both ways
    np.testing.assert_array_equal(closed.skeleton(), pdag.skeleton())
    assert (closed.directed | ~pdag.directed).all(), "an input orientation was lost"
    assert (pdag.undirected | ~closed.undirected).all(), "an edge became undirected"
    assert meek_closure(closed) == closed


# --------------------------------------------------------------------------- covered edges


COVERED_CASES = {
    "chain": (3, [(0, 1), (1, 2)], {(0, 1)}, 1),
    "triangle": (3, [(0, 1), (0, 2), (1, 2)], {(0, 1), (1, 2)}, 1),
    "v-structure": (3, [(0, 2), (1, 2)], set(), 0),
    "out-star": (4, [(0, 1), (0, 2), (0, 3)], {(0, 1), (0, 2), (0, 3)}, 1),
    "in-star": (4, [(1, 0), (2, 0), (3, 0)], set(), 0),
    "two-chains": (4, [(0, 1), (2, 3)], {(0, 1), (2, 3)}, 2),
    "empty": (3, [], set(), 0),
}


@pytest.mark.parametrize("name", sorted(COVERED_CASES))
def test_covered_edges_hand_cases(name: str) -> None:
    n_nodes, edges, covered, mis_size = COVERED_CASES[name]
    dag = DAG.from_edges(n_nodes, edges)
    assert set(map(tuple, np.argwhere(covered_edges(dag)).tolist())) == covered
    mis = minimum_intervention_set(dag)
    assert len(mis) == mis_size
    assert all(u in mis or v in mis for u, v in covered)
    assert essential_graph(dag, mis).is_fully_directed


def test_minimum_intervention_set_of_tiny_graphs() -> None:
    assert minimum_intervention_set(DAG.empty(1)) == frozenset()
    assert minimum_intervention_set(DAG.from_edges(3, [(0, 1), (0, 2), (1, 2)])) == {1}


def test_minimum_intervention_set_of_the_empty_graph() -> None:
    assert minimum_intervention_set(DAG.empty(0)) == frozenset()


@pytest.mark.parametrize("seed", range(100))
def test_covered_edges_are_the_reversible_ones(seed: int) -> None:
    # Chickering (1995): reversing u -> v gives a Markov-equivalent DAG iff u -> v is covered.
    dag, klass = _case(seed)
    covered = covered_edges(dag)
    assert {tuple(e) for e in np.argwhere(covered).tolist()} == _covered_by_definition(dag)
    for u, v in dag.edges():
        reversed_ = np.array(dag.adjacency)
        reversed_[u, v], reversed_[v, u] = False, True
        assert covered[u, v] == klass.contains(reversed_), (u, v)


def test_covered_edges_on_large_graphs() -> None:
    # Large enough that covered_edges compares parent sets in several chunks.
    n_nodes = 3000
    rng = np.random.default_rng(n_nodes)
    dag = _sparse_dag(rng, n_nodes, expected_degree=3.0)
    assert set(map(tuple, np.argwhere(covered_edges(dag)).tolist())) == _covered_by_definition(dag)
    star = DAG.from_edges(n_nodes, [(0, v) for v in range(1, n_nodes)])
    assert covered_edges(star).sum() == n_nodes - 1
    assert minimum_intervention_set(star) == {0}


def test_the_small_graph_minimum_intervention_set_equals_the_array_route(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Up to 16 nodes I* is computed from Python lists; on 1,500 random DAGs (every density,
    1 to 16 nodes) it is the set the array route (numpy edges, Kahn's order) finds."""
    from acdb_gym.core.graphs import interventions

    rng = np.random.default_rng(43)
    dags = []
    for _ in range(1500):
        n_nodes = int(rng.integers(1, 17))
        adjacency = np.triu(rng.random((n_nodes, n_nodes)) < rng.uniform(0.0, 1.0), k=1)
        order = rng.permutation(n_nodes)
        dags.append(DAG(adjacency[np.ix_(order, order)]))
    small = [interventions._compute_minimum_intervention_set(dag) for dag in dags]
    monkeypatch.setattr(interventions, "_LIST_MAX_NODES", 0)
    assert small == [interventions._compute_minimum_intervention_set(dag) for dag in dags]


# --------------------------------------------------------------------------- equivalence classes


@pytest.mark.parametrize("seed", BRUTE_FORCE_SEEDS)
def test_cpdag_matches_enumerated_equivalence_class(seed: int) -> None:
    dag, klass = _case(seed)
    _assert_pdag_equals(cpdag(dag), *klass.essential_matrices())


@pytest.mark.parametrize("seed", BRUTE_FORCE_SEEDS)
def test_edge_labelling_matches_enumerated_equivalence_class(seed: int) -> None:
    """cpdag() labels the edges of large sparse graphs (Chickering's algorithm) and runs Meek's
    rules on the rest; the labelling is checked here on the small brute-force cases too."""
    dag, klass = _case(seed)
    labelled = _cpdag_by_edge_labels(dag.n_nodes, *np.nonzero(dag.adjacency))
    _assert_pdag_equals(labelled, *klass.essential_matrices())
    # The unchecked constructor only ever holds a valid PDAG.
    assert PDAG(np.array(labelled.directed), np.array(labelled.undirected)) == labelled


@pytest.mark.parametrize("seed", range(12))
def test_both_cpdag_routes_agree_on_large_graphs(seed: int) -> None:
    rng = np.random.default_rng([seed, 7])
    n_nodes = int(rng.integers(100, 400))
    per_node = [0.5, 1.5, 3.0, 7.9][seed % 4]
    adjacency = np.triu(rng.random((n_nodes, n_nodes)) < 2 * per_node / (n_nodes - 1), k=1)
    order = rng.permutation(n_nodes)
    dag = DAG(adjacency[np.ix_(order, order)])
    by_rules = _cpdag_by_meek_rules(dag.adjacency)
    assert cpdag(dag) == by_rules
    assert _cpdag_by_edge_labels(n_nodes, *np.nonzero(dag.adjacency)) == by_rules


def test_the_small_graph_cpdag_route_agrees_with_the_matrix_routes() -> None:
    """Up to 16 nodes cpdag() labels the edges on bit masks; on 1,500 random DAGs (every
    density, 1 to 17 nodes) it equals both array routes, as read-only boolean matrices."""
    rng = np.random.default_rng(41)
    for _ in range(1500):
        n_nodes = int(rng.integers(1, 18))
        adjacency = np.triu(rng.random((n_nodes, n_nodes)) < rng.uniform(0.0, 1.0), k=1)
        order = rng.permutation(n_nodes)
        dag = DAG(adjacency[np.ix_(order, order)])
        got = cpdag(dag)
        by_rules = _cpdag_by_meek_rules(dag.adjacency)
        assert got == by_rules
        assert got.directed.dtype == np.bool_ and got.directed.shape == (n_nodes, n_nodes)
        assert not got.directed.flags.writeable and not got.undirected.flags.writeable
        if dag.n_edges <= 4 * n_nodes:
            assert _cpdag_by_edge_labels(n_nodes, *np.nonzero(dag.adjacency)) == by_rules


def test_edge_labelling_matches_causallearn_on_a_large_sparse_graph() -> None:
    rng = np.random.default_rng(11)
    adjacency = np.triu(rng.random((120, 120)) < 3.0 / 119, k=1)
    dag = DAG(adjacency)
    assert cpdag(dag) == _causallearn_cpdag(dag)


@pytest.mark.slow
@pytest.mark.parametrize("seed", BRUTE_FORCE_SEEDS)
def test_essential_graph_matches_interventional_class(seed: int) -> None:
    dag, klass = _case(seed)
    rng = np.random.default_rng([seed, 1])
    assert essential_graph(dag, []) == cpdag(dag)
    for _ in range(3):
        targets = _random_targets(rng, dag.n_nodes)
        _assert_pdag_equals(essential_graph(dag, targets), *klass.essential_matrices(targets))


@pytest.mark.slow
@pytest.mark.parametrize("seed", BRUTE_FORCE_SEEDS)
def test_meek_closure_matches_class_under_background_knowledge(seed: int) -> None:
    # Meek (1995): R1-R4 are complete for a CPDAG plus correct background orientations.
    dag, klass = _case(seed)
    rng = np.random.default_rng([seed, 2])
    directed, undirected = klass.essential_matrices()
    known = np.triu(undirected) & (rng.random(undirected.shape) < 0.4)
    known = (known | known.T) & dag.adjacency
    start = PDAG(directed | known, undirected & ~(known | known.T))
    closed = meek_closure(start)
    _assert_pdag_equals(closed, *klass.closure_matrices(start.directed))
    assert meek_closure(closed) == closed


def test_meek_closure_leaves_complete_graphs_alone() -> None:
    dag = _random_dag(7)
    assert meek_closure(dag.to_pdag()) == dag.to_pdag()
    assert meek_closure(PDAG.empty(4)) == PDAG.empty(4)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(200))
def test_cpdag_matches_causallearn(seed: int) -> None:
    dag = _random_dag(10_000 + seed, max_nodes=12, max_edges=66)
    assert cpdag(dag) == _causallearn_cpdag(dag)


def test_essential_graph_targets_are_a_set() -> None:
    dag = DAG.from_edges(4, [(0, 1), (1, 2), (2, 3)])
    assert essential_graph(dag, [1, 1, np.int64(1)]) == essential_graph(dag, (1,))
    assert essential_graph(dag, iter([2])) == essential_graph(dag, [2])
    with pytest.raises(ValueError, match=r"\[0, 4\), got 4"):
        essential_graph(dag, [4])
    with pytest.raises(ValueError, match="got -1"):
        essential_graph(dag, [-1])


# --------------------------------------------------------------------------- d-separation


def _d_separations(adjacency: np.ndarray) -> frozenset[tuple[int, int, frozenset[int]]]:
    graph = nx.from_numpy_array(adjacency.astype(int), create_using=nx.DiGraph)
    n_nodes = adjacency.shape[0]
    statements = set()
    for i, j in itertools.combinations(range(n_nodes), 2):
        rest = [v for v in range(n_nodes) if v not in (i, j)]
        for size in range(len(rest) + 1):
            for given_set in itertools.combinations(rest, size):
                if nx.is_d_separator(graph, {i}, {j}, set(given_set)):
                    statements.add((i, j, frozenset(given_set)))
    return frozenset(statements)


def _dag_with_unshielded_triple(rng: np.random.Generator, n_nodes: int) -> np.ndarray:
    while True:
        adjacency = oracles.random_dag_matrix(rng, n_nodes, int(rng.integers(3, 7)))
        pairs = oracles.skeleton_pairs(adjacency)
        if len(oracles.unshielded_triples(adjacency, pairs)):
            return adjacency


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_markov_equivalence_is_d_separation_equivalence(seed: int) -> None:
    # Verma & Pearl: DAGs on one skeleton imply the same d-separations iff they share
    # v-structures. This validates the enumeration oracle itself against networkx.
    rng = np.random.default_rng([seed, 3])
    adjacency = _dag_with_unshielded_triple(rng, 5)
    klass = EquivalenceClass.enumerate(adjacency)
    pairs = klass.pairs
    batch = oracles.adjacency_batch(oracles.all_orientations(len(pairs)), pairs, 5)
    acyclic = batch[oracles.is_acyclic_batch(batch)]
    truth = _d_separations(adjacency)
    outsiders = 0
    for candidate in acyclic:
        same = _d_separations(candidate) == truth
        assert same == klass.contains(candidate)
        outsiders += not same
    assert outsiders > 0
    assert len(acyclic) == outsiders + len(klass.members)


# --------------------------------------------------------------------------- intervention design


@pytest.mark.slow
@pytest.mark.parametrize("seed", BRUTE_FORCE_SEEDS)
def test_minimum_intervention_set_matches_brute_force(seed: int) -> None:
    dag, klass = _case(seed)
    mis = minimum_intervention_set(dag)
    assert len(mis) == klass.minimum_verifying_size()
    assert klass.is_verifying(mis)
    _, undirected = klass.essential_matrices()
    assert _chain_component_bound(undirected) <= len(mis)
    assert minimum_intervention_set(DAG(np.array(dag.adjacency))) == mis


@pytest.mark.parametrize("seed", range(10))
def test_minimum_intervention_set_on_larger_graphs(seed: int) -> None:
    rng = np.random.default_rng([seed, 4])
    dag = _sparse_dag(rng, int(rng.integers(20, 40)), expected_degree=float(rng.uniform(1, 5)))
    mis = minimum_intervention_set(dag)
    assert essential_graph(dag, mis).is_fully_directed
    for dropped in mis:
        assert not essential_graph(dag, mis - {dropped}).is_fully_directed, dropped
    assert _chain_component_bound(cpdag(dag).undirected) <= len(mis)


@pytest.mark.parametrize("seed", range(5))
def test_minimum_intervention_set_is_a_minimum_cover_of_the_covered_forest(seed: int) -> None:
    # König: in a forest (bipartite), a minimum vertex cover has the size of a maximum matching.
    rng = np.random.default_rng([seed, 5])
    dag = _sparse_dag(rng, 600, expected_degree=3.0)
    covered = np.argwhere(covered_edges(dag)).tolist()
    forest = nx.Graph(covered)
    assert nx.is_forest(forest)
    matching = nx.bipartite.hopcroft_karp_matching(forest, top_nodes=_colour_class(forest))
    mis = minimum_intervention_set(dag)
    assert all(u in mis or v in mis for u, v in covered)
    assert len(mis) == len(matching) // 2
    assert len(mis) > 10


def _colour_class(forest: nx.Graph) -> set[int]:
    colours = nx.bipartite.color(forest)
    return {node for node, colour in colours.items() if colour == 0}


def test_essential_graph_remembers_each_target_set_with_its_dag() -> None:
    from acdb_gym.core.graphs import equivalence, random_order_dag

    dag = random_order_dag(8, n_edges=12, rng=np.random.default_rng(3))
    first = essential_graph(dag, [3, 1])
    assert essential_graph(dag, [1, 3, 3]) is first  # the same set, remembered
    twin = DAG(dag.adjacency.copy())  # an equal DAG computes its own, equal graph
    again = essential_graph(twin, [1, 3])
    assert again is not first
    assert np.array_equal(again.directed, first.directed)
    assert np.array_equal(again.undirected, first.undirected)
    for target_set in range(1, 256):
        essential_graph(dag, [v for v in range(8) if target_set >> v & 1])
    assert len(dag._derived(equivalence._essential_memo)) <= equivalence._ESSENTIAL_MEMO_SIZE


@pytest.mark.parametrize("seed", range(8))
def test_minimum_intervention_subset_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng([seed, 42])
    dag = _sparse_dag(rng, int(rng.integers(5, 9)), expected_degree=float(rng.uniform(1, 3)))
    everything = minimum_intervention_subset(dag, range(dag.n_nodes))
    assert len(everything) == len(minimum_intervention_set(dag))
    allowed = sorted(int(v) for v in rng.choice(dag.n_nodes, size=dag.n_nodes // 2, replace=False))
    found = minimum_intervention_subset(dag, allowed)
    goal = essential_graph(dag, allowed).directed
    assert found <= set(allowed)
    assert np.array_equal(essential_graph(dag, sorted(found)).directed, goal)
    for smaller in itertools.combinations(allowed, len(found) - 1) if found else ():
        assert not np.array_equal(essential_graph(dag, list(smaller)).directed, goal)


def test_minimum_intervention_subset_refuses_bad_targets() -> None:
    dag = DAG.from_edges(3, [(0, 1)])
    with pytest.raises(ValueError, match=r"allowed targets must be in \[0, 3\)"):
        minimum_intervention_subset(dag, [3])
    with pytest.raises(ValueError, match="at most 16 allowed targets"):
        minimum_intervention_subset(DAG.empty(20), range(17))


def test_small_graph_paths_equal_the_array_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bit-mask covered edges and the list-counted Kahn order of small graphs give the
    same minimum intervention sets and topological orders as the numpy paths."""
    from acdb_gym.core.graphs import _matrix, interventions, random_order_dag

    rng = np.random.default_rng(40)
    dags = []
    for _ in range(1500):
        d = int(rng.integers(1, 40))
        dags.append(random_order_dag(d, n_edges="uniform", rng=rng))
    small = [
        (interventions._compute_minimum_intervention_set(dag), dag.topological_order().tolist())
        for dag in dags
    ]
    monkeypatch.setattr(interventions, "_MASK_MAX_NODES", 0)
    monkeypatch.setattr(_matrix, "_LIST_MAX_EDGES", -1)
    arrays = [
        (interventions._compute_minimum_intervention_set(dag), dag.topological_order().tolist())
        for dag in dags
    ]
    assert small == arrays
    assert sum(len(found) for found, _ in small) > 1000
