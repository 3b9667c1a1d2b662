"""ADMG, latent projection, MAG and PAG against brute-force references.

The references recompute every graph from its definition without the package's algorithms:
paths are enumerated with networkx, m-separation is networkx's d-separation in the DAG over
observed and latent nodes (or in the canonical DAG of a MAG, one latent parent per ``<->``), and
the PAG is the set of marks shared by every ancestral graph over the same skeleton with the same
independence model (the definition of the PAG).
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from acdb_gym.core.graphs import (
    ADMG,
    DAG,
    PAG,
    CycleError,
    inducing_path_adjacency,
    is_mag,
    latent_projection,
    mag,
    pag,
)
from tests.core._graph_oracles import random_dag_matrix

N_RANDOM = 1000


def _random_world(rng: np.random.Generator, n_max: int = 7) -> tuple[np.ndarray, list[int]]:
    n = int(rng.integers(3, n_max + 1))
    n_edges = int(rng.integers(0, n * (n - 1) // 2 + 1))
    adjacency = random_dag_matrix(rng, n, n_edges)
    n_latent = int(rng.integers(0, min(3, n - 2) + 1))
    latent = sorted(rng.choice(n, size=n_latent, replace=False).tolist())
    return adjacency, latent


def _projection_by_paths(adjacency: np.ndarray, latent: list[int]) -> tuple[set, set]:
    """Directed and bidirected edges of the latent projection, by enumerating every simple path
    of the skeleton whose intermediate nodes are latent (Verma & Pearl's definition)."""
    n = adjacency.shape[0]
    observed = [v for v in range(n) if v not in latent]
    index = {v: k for k, v in enumerate(observed)}
    skeleton = nx.Graph()
    skeleton.add_nodes_from(range(n))
    skeleton.add_edges_from(zip(*np.nonzero(adjacency), strict=True))
    directed, bidirected = set(), set()
    for i, j in itertools.combinations(observed, 2):
        for path in nx.all_simple_paths(skeleton, i, j):
            if any(v not in latent for v in path[1:-1]):
                continue
            forward = [bool(adjacency[a, b]) for a, b in itertools.pairwise(path)]
            colliders = any(not forward[k] and forward[k - 1] for k in range(1, len(forward)))
            if colliders:
                continue
            if all(forward):
                directed.add((index[i], index[j]))
            elif not any(forward):
                directed.add((index[j], index[i]))
            elif not forward[0] and forward[-1]:
                bidirected.add((index[i], index[j]))
    return directed, bidirected


def _d_separated(graph: nx.DiGraph, a: int, b: int, given: set[int]) -> bool:
    return bool(nx.is_d_separator(graph, {a}, {b}, given))


def _brute_mag(adjacency: np.ndarray, latent: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Adjacency of the MAG by trying every separating set; marks by ancestry in the DAG."""
    n = adjacency.shape[0]
    observed = [v for v in range(n) if v not in latent]
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(zip(*np.nonzero(adjacency), strict=True))
    p = len(observed)
    adjacent = np.zeros((p, p), dtype=bool)
    ancestor = np.zeros((p, p), dtype=bool)
    for x, y in itertools.permutations(range(p), 2):
        ancestor[x, y] = nx.has_path(graph, observed[x], observed[y])
    for x, y in itertools.combinations(range(p), 2):
        others = [observed[k] for k in range(p) if k not in (x, y)]
        separable = any(
            _d_separated(graph, observed[x], observed[y], set(subset))
            for size in range(len(others) + 1)
            for subset in itertools.combinations(others, size)
        )
        adjacent[x, y] = adjacent[y, x] = not separable
    return adjacent, ancestor


@pytest.mark.slow
def test_projection_and_mag_match_brute_force_on_random_graphs() -> None:
    rng = np.random.default_rng(2908)
    n_bidirected = n_inducing = 0
    for _ in range(N_RANDOM):
        adjacency, latent = _random_world(rng)
        admg = latent_projection(DAG(adjacency), latent=latent)
        directed, bidirected = _projection_by_paths(adjacency, latent)
        assert set(admg.directed_edges()) == directed, (adjacency, latent)
        assert set(admg.bidirected_edges()) == bidirected, (adjacency, latent)
        adjacent, ancestor = _brute_mag(adjacency, latent)
        truth_mag = mag(admg)
        assert np.array_equal(truth_mag.skeleton, adjacent), (adjacency, latent)
        assert np.array_equal(truth_mag.directed, adjacent & ancestor)
        assert np.array_equal(truth_mag.bidirected, adjacent & ~ancestor & ~ancestor.T)
        assert is_mag(truth_mag)
        n_bidirected += len(bidirected)
        n_inducing += int((adjacent & ~admg.skeleton).sum()) // 2
    # The sample exercises what it claims to: confounding and inducing paths of length >= 2.
    assert n_bidirected > 200 and n_inducing > 10


def _canonical_dag(graph: ADMG) -> nx.DiGraph:
    """The MAG's canonical DAG: one latent parent per bidirected edge."""
    p = graph.n_nodes
    dag = nx.DiGraph()
    dag.add_nodes_from(range(p))
    dag.add_edges_from(graph.directed_edges())
    for k, (i, j) in enumerate(graph.bidirected_edges()):
        dag.add_edges_from([(p + k, i), (p + k, j)])
    return dag


def _independence_model(graph: ADMG) -> frozenset:
    dag = _canonical_dag(graph)
    p = graph.n_nodes
    model = set()
    for x, y in itertools.combinations(range(p), 2):
        others = [k for k in range(p) if k not in (x, y)]
        for size in range(len(others) + 1):
            for subset in itertools.combinations(others, size):
                if _d_separated(dag, x, y, set(subset)):
                    model.add((x, y, subset))
    return frozenset(model)


def _brute_pag(truth: ADMG) -> PAG:
    """Marks shared by every ancestral graph on the skeleton with ``truth``'s independences."""
    pairs = truth.bidirected_edges() + [(min(i, j), max(i, j)) for i, j in truth.directed_edges()]
    target = _independence_model(truth)
    p = truth.n_nodes
    arrow_all = np.ones((p, p), dtype=bool)
    tail_all = np.ones((p, p), dtype=bool)
    for kinds in itertools.product(range(3), repeat=len(pairs)):
        directed = np.zeros((p, p), dtype=bool)
        bidirected = np.zeros((p, p), dtype=bool)
        for (i, j), kind in zip(pairs, kinds, strict=True):
            if kind == 0:
                directed[i, j] = True
            elif kind == 1:
                directed[j, i] = True
            else:
                bidirected[i, j] = bidirected[j, i] = True
        try:
            candidate = ADMG(directed, bidirected)
        except CycleError:
            continue
        anc = candidate.ancestors_matrix()
        if (bidirected & (anc | anc.T)).any():
            continue
        if _independence_model(candidate) != target:
            continue
        marks = PAG.from_mag(candidate)
        arrow_all &= marks.arrowhead
        tail_all &= marks.tail
    adjacent = truth.skeleton
    return PAG(adjacent, arrow_all & adjacent, tail_all & adjacent)


@pytest.mark.slow
def test_pag_matches_the_equivalence_class_by_enumeration() -> None:
    rng = np.random.default_rng(29)
    checked = circles = 0
    while checked < 80:
        adjacency, latent = _random_world(rng, n_max=7)
        truth = mag(latent_projection(DAG(adjacency), latent=latent))
        if truth.n_nodes > 5 or len(truth.bidirected_edges()) + len(truth.directed_edges()) > 6:
            continue
        expected = _brute_pag(truth)
        assert pag(truth) == expected, (adjacency, latent, truth, expected)
        checked += 1
        circles += int(expected.circle.sum())
    assert circles > 25


def _causallearn_pag(adjacency: np.ndarray, latent: list[int]) -> PAG:
    """causal-learn's FCI with a d-separation oracle on the DAG (observed nodes first)."""
    from causallearn.search.ConstraintBased.FCI import fci

    n = adjacency.shape[0]
    observed = [v for v in range(n) if v not in latent]
    order = observed + list(latent)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    position = {v: k for k, v in enumerate(order)}
    graph.add_edges_from(
        (position[int(a)], position[int(b)]) for a, b in zip(*np.nonzero(adjacency), strict=True)
    )
    p = len(observed)
    found, _ = fci(
        np.zeros((8, p)), "d_separation", true_dag=graph, show_progress=False, verbose=False
    )
    marks = found.graph  # marks[i, j]: the endpoint at i of the edge i *-* j
    adjacent = marks != 0
    return PAG(adjacent, (marks == 1).T, (marks == -1).T)


@pytest.mark.slow
def test_pag_agrees_with_causallearn_fci_with_a_d_separation_oracle() -> None:
    """Same skeleton and arrowheads; causal-learn's directed edges are a subset of ours.

    causal-learn's FCI allows selection bias (its R5-R7 turn circle paths into ``---``), so
    only its tails opposite an arrowhead are comparable. It also applies R9 less often than Zhang's rule allows: on
    ``X1 o-o X2 o-o X7 --> X3`` with ``X1 o-> X3`` (X1, X7 and X2, X3 not adjacent) it leaves
    ``X1 o-> X3`` although ``<X1, X2, X7, X3>`` is an uncovered potentially directed path. The
    enumeration test above is the exact reference; this one guards soundness on larger graphs.
    """
    rng = np.random.default_rng(1729)
    more_tails = 0
    for _ in range(100):
        adjacency, latent = _random_world(rng, n_max=8)
        ours = pag(mag(latent_projection(DAG(adjacency), latent=latent)))
        theirs = _causallearn_pag(adjacency, latent)
        assert np.array_equal(ours.adjacent, theirs.adjacent), (adjacency, latent)
        assert np.array_equal(ours.arrowhead, theirs.arrowhead), (adjacency, latent)
        theirs_directed = theirs.tail.T & theirs.arrowhead
        assert not (theirs_directed & ~(ours.tail.T & ours.arrowhead)).any(), (adjacency, latent)
        more_tails += int((ours.tail & ~theirs.tail).any())
    assert more_tails < 10


def test_hand_cases() -> None:
    # A latent common cause of X0 and X1 with X2 -> X0 and X3 -> X1: X2 o-> X0 <-> X1 <-o X3.
    dag = DAG.from_edges(5, [(4, 0), (4, 1), (2, 0), (3, 1)])
    admg = latent_projection(dag, latent=[4])
    assert admg.bidirected_edges() == [(0, 1)] and set(admg.directed_edges()) == {(2, 0), (3, 1)}
    assert pag(mag(admg)).edge_strings() == ["X0 <-> X1", "X0 <-o X2", "X1 <-o X3"]
    # An inducing path X0 -> X1 <-> X2 with X1 -> X2's ancestor... X1 an ancestor of X2 makes
    # X0 and X2 adjacent in the MAG although not in the ADMG.
    bow = ADMG.from_edges(3, directed=[(0, 1), (1, 2)], bidirected=[(1, 2)])
    assert inducing_path_adjacency(bow)[0, 2]
    assert mag(bow).directed_edges() == [(0, 1), (0, 2), (1, 2)]
    # No latents: the projection is the DAG itself.
    chain = DAG.from_edges(3, [(0, 1), (1, 2)])
    assert latent_projection(chain, latent=[]) == ADMG.from_dag(chain)


def test_invalid_values_are_refused_with_the_offending_value() -> None:
    with pytest.raises(ValueError, match="symmetric"):
        ADMG(np.zeros((2, 2), dtype=bool), np.array([[0, 1], [0, 0]], dtype=bool))
    with pytest.raises(CycleError):
        ADMG.from_edges(2, directed=[(0, 1), (1, 0)])
    with pytest.raises(ValueError, match="both a tail and an arrowhead"):
        one = np.array([[0, 1], [1, 0]], dtype=bool)
        PAG(one, one, one)
    with pytest.raises(ValueError, match="maximal ancestral"):
        pag(ADMG.from_edges(2, directed=[(0, 1)], bidirected=[(0, 1)]))
    with pytest.raises(ValueError, match="5"):
        latent_projection(DAG.empty(3), latent=[5])
