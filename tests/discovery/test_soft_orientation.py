"""What single-node soft interventions identify, against hard ones (DESIGN §8).

With observational data and single-node targets, a mechanism change that really changes the
target's conditional law orients the same edges as ``do(X_t = v)``: the nodes whose law moves
are the target's descendants either way. The tests run the project's shift-based orientation
rules on constructed chains and forks, then show on samples where the two kinds differ.
"""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.core.graphs import DAG, PDAG, cpdag, essential_graph
from acdb_gym.core.stats import fisher_z_test
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.core.worlds.soft import sample_soft
from acdb_gym.discovery import orient_by_mean_shift, orient_from_interventions

N_OBS, N_INT = 2000, 500

CHAIN = [(0, 1), (1, 2)]
"""X0 -> X1 -> X2; its CPDAG is the undirected chain."""
FORK = [(0, 1), (0, 2)]
"""X1 <- X0 -> X2; its CPDAG is undirected too."""


def _scm(edges: list[tuple[int, int]], weight: float = 1.0) -> LinearGaussianSCM:
    weights = np.zeros((3, 3))
    for tail, head in edges:
        weights[tail, head] = weight
    return LinearGaussianSCM(weights, np.ones(3))


def _samples(scm: LinearGaussianSCM, kind: str, target: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "hard":
        return scm.sample_do(target, 3.0, N_INT, rng)
    return sample_soft(scm, kind, target, 3.0, N_INT, rng)  # type: ignore[arg-type]


def _oriented(rule: str, graph: PDAG, obs: np.ndarray, experiments: list) -> PDAG:  # type: ignore[type-arg]
    if rule == "mean_shift":
        return orient_by_mean_shift(graph, obs, experiments)
    return orient_from_interventions(graph, obs, experiments, alpha=0.01)


@pytest.mark.parametrize("edges", [CHAIN, FORK], ids=["chain", "fork"])
@pytest.mark.parametrize("target", [0, 1, 2])
@pytest.mark.parametrize("rule", ["shift_test", "mean_shift"])
def test_a_shift_orients_what_a_hard_intervention_orients(
    edges: list[tuple[int, int]], target: int, rule: str
) -> None:
    scm = _scm(edges)
    dag = DAG(scm.weights != 0)
    start = cpdag(dag)
    assert start.undirected.sum() == 4  # both edges reversible: only experiments orient them
    obs = scm.sample(N_OBS, np.random.default_rng(0))
    graphs = {
        kind: _oriented(rule, start, obs, [(target, _samples(scm, kind, target, seed=1))])
        for kind in ("hard", "shift")
    }
    assert graphs["hard"] == graphs["shift"]
    # Both rules orient every edge at the target as in the DAG; the Meek-closed rule reaches
    # the interventional essential graph of {target}, which is the same for both kinds.
    for j in np.flatnonzero(start.undirected[target]):
        assert graphs["shift"].directed[target, j] == dag.adjacency[target, j]
        assert graphs["shift"].directed[j, target] == dag.adjacency[j, target]
    if rule == "shift_test":
        assert graphs["shift"] == essential_graph(dag, [target])


@pytest.mark.parametrize("edges", [CHAIN, FORK], ids=["chain", "fork"])
@pytest.mark.parametrize("target", [0, 1, 2])
def test_a_scale_orients_the_same_edges_through_the_spread_test(
    edges: list[tuple[int, int]], target: int
) -> None:
    """A noise-scale change moves no mean but every descendant's spread: the mean-and-spread
    test orients as under a hard intervention, the mean-only rule does not."""
    scm = _scm(edges)
    dag = DAG(scm.weights != 0)
    obs = scm.sample(N_OBS, np.random.default_rng(0))
    scaled = [(target, _samples(scm, "scale", target, seed=2))]
    hard = [(target, _samples(scm, "hard", target, seed=2))]
    start = cpdag(dag)
    assert orient_from_interventions(start, obs, scaled) == essential_graph(dag, [target])
    assert orient_from_interventions(start, obs, hard) == essential_graph(dag, [target])
    by_mean = orient_by_mean_shift(start, obs, scaled)
    children = np.flatnonzero(dag.adjacency[target])
    # The mean-only rule sees no shift, so it points every child's edge into the target.
    assert all(by_mean.directed[child, target] for child in children)


def test_where_they_differ_a_shift_keeps_the_edges_into_the_target() -> None:
    """Chain X0 -> X1 -> X2, experiments on X1. ``do(X1 = 3)`` cuts X1 off its parent: X1 is
    constant and X0 becomes independent of X2. A shift keeps X1's equation, so X0 stays
    dependent on X1 and on X2 exactly as observationally; only the mean moves."""
    scm = _scm(CHAIN)
    obs = scm.sample(N_OBS, np.random.default_rng(0))
    hard = _samples(scm, "hard", 1, seed=3)
    shift = _samples(scm, "shift", 1, seed=3)
    assert hard[:, 1].std() == 0.0  # the hard target carries nothing of its parent
    assert fisher_z_test(hard, 0, 2).independent
    assert not fisher_z_test(shift, 0, 1).independent
    assert not fisher_z_test(shift, 0, 2).independent
    for i, j in [(0, 1), (0, 2)]:
        observational = np.corrcoef(obs[:, i], obs[:, j])[0, 1]
        assert np.corrcoef(shift[:, i], shift[:, j])[0, 1] == pytest.approx(observational, abs=0.1)
    assert shift[:, 1].mean() - obs[:, 1].mean() == pytest.approx(3.0, abs=0.2)


def test_an_ineffective_soft_intervention_identifies_nothing() -> None:
    """The condition of the equivalence: a zero shift (or a scale factor of 1) leaves the
    target's law unchanged, so no neighbour moves and the rule cannot orient by shift."""
    scm = _scm(CHAIN)
    dag = DAG(scm.weights != 0)
    obs = scm.sample(N_OBS, np.random.default_rng(0))
    for kind, value in [("shift", 0.0), ("scale", 1.0)]:
        samples = sample_soft(scm, kind, 1, value, N_INT, np.random.default_rng(4))  # type: ignore[arg-type]
        graph = orient_from_interventions(
            cpdag(dag), obs, [(1, samples)], rule="band", no_shift_threshold=0.01
        )
        # X2 does not shift, so 1 -> 2 is never found; the true orientation is missed.
        assert not graph.directed[1, 2]
