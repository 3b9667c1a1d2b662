"""Tests for acdb_gym.discovery.bic_search: the interventional BIC and the greedy search on it."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from acdb_gym.core.graphs import DAG, cpdag, essential_graph
from acdb_gym.core.ladders.shipped import LevelSpec
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.discovery import (
    InterventionalBIC,
    greedy_interventional_search,
    hill_climb,
)

LARGE = LevelSpec(d=6, k=7, n_obs=3000, n_int=1000, noise_var=1.0, slack=1)


def readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def chain_data(
    sem: SimpleNamespace, n_obs: int, do: dict[int, float], seed: int
) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:
    """Observational and interventional samples of X0 -> X1 -> X2 (unit weights)."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((3, 3))
    weights[0, 1] = weights[1, 2] = 1.0
    observational = sem.sample(weights, n_obs, rng)
    experiments = [(t, sem.sample(weights, n_obs // 2, rng, do={t: v})) for t, v in do.items()]
    return observational, experiments


def gaussian_bic_term(y: np.ndarray, x: np.ndarray, penalty: float = 1.0) -> float:
    """The BIC term computed the long way: OLS with an intercept, the Gaussian MLE variance."""
    n = y.size
    design = np.column_stack([np.ones(n), x]) if x.size else np.ones((n, 1))
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    variance = float(np.mean((y - design @ coef) ** 2))
    loglik = -0.5 * n * (np.log(2 * np.pi * variance) + 1.0)
    n_params = design.shape[1] + 1  # coefficients, intercept, noise variance
    return loglik - penalty * 0.5 * np.log(n) * n_params


# --------------------------------------------------------------------------- the score


def test_local_score_is_the_gaussian_bic_of_the_ols_fit() -> None:
    rng = np.random.default_rng(0)
    data = rng.normal(size=(200, 4))
    data[:, 3] += 0.8 * data[:, 0] - 0.5 * data[:, 2] + 2.0
    score = InterventionalBIC(data, [], penalty=1.5)
    for parents in ([], [0], [0, 2], [0, 1, 2]):
        expected = gaussian_bic_term(data[:, 3], data[:, parents], penalty=1.5)
        assert score.local_score(3, parents) == pytest.approx(expected, rel=1e-10)


def test_interventional_bic_ignores_the_intervened_rows_of_the_target(sem: SimpleNamespace) -> None:
    observational, experiments = chain_data(sem, 400, {1: 3.0}, seed=1)
    samples = experiments[0][1]
    score = InterventionalBIC(observational, [(1, samples)])
    assert score.rows_for(1) == 400
    assert score.rows_for(0) == score.rows_for(2) == 600
    # X1's term uses the observational rows only, whatever the experiment holds...
    altered = samples.copy()
    altered[:, 1] = -7.0
    altered[:, 0] += 5.0
    other = InterventionalBIC(observational, [(1, altered)])
    observational_only = InterventionalBIC(observational, [])
    for parents in ([], [0], [0, 2]):
        assert score.local_score(1, parents) == other.local_score(1, parents)
        assert score.local_score(1, parents) == pytest.approx(
            observational_only.local_score(1, parents), rel=1e-12
        )
    # ...while every other node's term pools the experiment's rows.
    pooled = np.vstack([observational, samples])
    assert score.local_score(2, [1]) == pytest.approx(
        gaussian_bic_term(pooled[:, 2], pooled[:, [1]]), rel=1e-10
    )
    assert score.local_score(2, [1]) != other.local_score(2, [1])


def test_score_is_the_sum_of_local_scores_and_score_equivalent_observationally() -> None:
    rng = np.random.default_rng(2)
    data = rng.normal(size=(300, 3))
    data[:, 1] += data[:, 0]
    data[:, 2] += data[:, 1]
    score = InterventionalBIC(data, [])
    forward = DAG.from_edges(3, [(0, 1), (1, 2)])
    backward = DAG.from_edges(3, [(2, 1), (1, 0)])
    collider = DAG.from_edges(3, [(0, 1), (2, 1)])
    total = score.local_score(0, []) + score.local_score(1, [0]) + score.local_score(2, [1])
    assert score.score(forward) == pytest.approx(total)
    assert score.score(forward) == pytest.approx(score.score(backward), rel=1e-12)
    assert score.score(collider) < score.score(forward) - 10


def test_interventions_break_score_equivalence(sem: SimpleNamespace) -> None:
    observational, experiments = chain_data(sem, 1000, {0: 3.0}, seed=3)
    score = InterventionalBIC(observational, experiments)
    forward = DAG.from_edges(3, [(0, 1), (1, 2)])
    backward = DAG.from_edges(3, [(2, 1), (1, 0)])
    assert score.score(forward) > score.score(backward) + 10


def test_move_gains_match_local_score_differences() -> None:
    rng = np.random.default_rng(4)
    data = rng.normal(size=(150, 6))
    data[:, 4] += data[:, 0] - data[:, 1]
    experiment = rng.normal(size=(40, 6))
    score = InterventionalBIC(data, [(2, experiment)])
    for node, parent_list in ((4, [0, 1]), (2, []), (5, [0, 1, 3])):
        parents = np.zeros(6, dtype=np.bool_)
        parents[parent_list] = True
        add, remove = score.move_gains(node, parents)
        base = score.local_score(node, parent_list)
        for i in range(6):
            if i == node:
                assert add[i] == remove[i] == -np.inf
            elif parents[i]:
                rest = [p for p in parent_list if p != i]
                assert remove[i] == pytest.approx(score.local_score(node, rest) - base)
                assert add[i] == -np.inf
            else:
                assert add[i] == pytest.approx(score.local_score(node, [*parent_list, i]) - base)
                assert remove[i] == -np.inf


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"penalty": 0.0}, "penalty must be positive and finite, got 0.0"),
        ({"penalty": float("inf")}, "penalty must be positive"),
        ({"experiments": [(3, np.zeros((5, 3)))]}, r"target must be in \[0, 3\), got 3"),
        ({"experiments": [(0, np.zeros((5, 2)))]}, "must have 3 columns"),
        ({"experiments": [("a", np.zeros((5, 3)))]}, "integer target"),
        ({"observational": np.zeros((2, 3))}, "X0 needs at least 3 rows"),
        ({"observational": np.full((5, 3), np.nan)}, "must be finite"),
    ],
)
def test_interventional_bic_rejects_bad_input(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {
        "observational": np.random.default_rng(0).normal(size=(20, 3)),
        "experiments": [],
    }
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        InterventionalBIC(**arguments)  # type: ignore[arg-type]


def test_local_score_rejects_bad_nodes() -> None:
    score = InterventionalBIC(np.random.default_rng(0).normal(size=(20, 3)), [])
    with pytest.raises(ValueError, match=r"node must be in \[0, 3\), got 3"):
        score.local_score(3, [])
    with pytest.raises(ValueError, match="X1 cannot be its own parent"):
        score.local_score(1, [1])
    with pytest.raises(ValueError, match="dag must have 3 nodes, got 2"):
        score.score(DAG.empty(2))


# --------------------------------------------------------------------------- the search


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_search_recovers_the_interventional_essential_graph(seed: int) -> None:
    instance = generate_instance(LARGE, seed)
    rng = np.random.default_rng(seed)
    targets = sorted(instance.i_star) or [0]
    experiments = [(t, instance.scm.sample_do(t, 3.0, LARGE.n_int, rng)) for t in targets]
    result = greedy_interventional_search(instance.d_obs, experiments)
    assert result.essential_graph == essential_graph(instance.dag, targets)
    assert result.targets == tuple(targets)
    assert result.score == pytest.approx(
        InterventionalBIC(instance.d_obs, experiments).score(result.dag)
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_search_recovers_the_cpdag_from_observational_data(seed: int) -> None:
    # Seed 0 is left out: its weights nearly cancel, and even with 20,000 rows a sparser wrong
    # DAG out-scores the true one (a property of the data, see the next test).
    instance = generate_instance(replace(LARGE, n_obs=20_000), seed)
    result = greedy_interventional_search(instance.d_obs, [])
    assert result.essential_graph == cpdag(instance.dag)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_search_scores_at_least_the_true_dag(seed: int) -> None:
    instance = generate_instance(replace(LARGE, n_obs=20_000), seed)
    score = InterventionalBIC(instance.d_obs, [])
    found = hill_climb(score)
    assert score.score(found) >= score.score(instance.dag) - 1e-6


def test_three_node_worlds(sem: SimpleNamespace) -> None:
    # A chain is undirected observationally and fully oriented by intervening on its middle.
    observational, experiments = chain_data(sem, 4000, {1: 3.0}, seed=5)
    chain = DAG.from_edges(3, [(0, 1), (1, 2)])
    assert greedy_interventional_search(observational, []).essential_graph == cpdag(chain)
    assert greedy_interventional_search(observational, experiments).dag == chain
    # A collider is identified from observational data alone.
    rng = np.random.default_rng(6)
    weights = np.zeros((3, 3))
    weights[0, 2] = weights[1, 2] = 1.0
    result = greedy_interventional_search(sem.sample(weights, 4000, rng), [])
    assert result.essential_graph.directed_edges() == [(0, 2), (1, 2)]


def test_search_is_deterministic_and_leaves_inputs_alone(sem: SimpleNamespace) -> None:
    observational, experiments = chain_data(sem, 300, {0: 2.0, 2: -1.0}, seed=7)
    observational = readonly(observational)
    experiments = [(t, readonly(x)) for t, x in experiments]
    copies = (observational.copy(), [x.copy() for _, x in experiments])
    first = greedy_interventional_search(observational, experiments, restarts=2)
    second = greedy_interventional_search(observational, experiments, restarts=2)
    assert first == second
    assert np.array_equal(observational, copies[0])
    assert all(np.array_equal(x, c) for (_, x), c in zip(experiments, copies[1], strict=True))


def test_tabu_and_restarts_never_lose_score() -> None:
    instance = generate_instance(
        LevelSpec(d=8, k=14, n_obs=80, n_int=20, noise_var=1.0, slack=0), 3
    )
    score = InterventionalBIC(instance.d_obs, [])
    plain = score.score(hill_climb(score, tabu_steps=0, restarts=0))
    tabu = score.score(hill_climb(score, tabu_steps=20, restarts=0))
    restarted = score.score(hill_climb(score, tabu_steps=20, restarts=3))
    assert plain <= tabu + 1e-9 <= restarted + 2e-9


def test_hill_climb_from_the_truth_keeps_a_local_optimum(sem: SimpleNamespace) -> None:
    observational, experiments = chain_data(sem, 5000, {0: 3.0}, seed=8)
    chain = DAG.from_edges(3, [(0, 1), (1, 2)])
    score = InterventionalBIC(observational, experiments)
    assert hill_climb(score, start=chain, tabu_steps=0, restarts=0) == chain


def test_move_gains_rejects_a_bad_mask() -> None:
    score = InterventionalBIC(np.random.default_rng(0).normal(size=(20, 3)), [])
    with pytest.raises(ValueError, match=r"parents must be a mask of shape \(3,\), got \(2,\)"):
        score.move_gains(0, np.zeros(2, dtype=np.bool_))


def test_hill_climb_rejects_bad_arguments() -> None:
    score = InterventionalBIC(np.random.default_rng(0).normal(size=(20, 3)), [])
    with pytest.raises(ValueError, match="tabu_steps must be >= 0, got -1"):
        hill_climb(score, tabu_steps=-1)
    with pytest.raises(ValueError, match="restarts must be >= 0, got -2"):
        hill_climb(score, restarts=-2)
    with pytest.raises(ValueError, match="start must have 3 nodes, got 4"):
        hill_climb(score, start=DAG.empty(4))
