"""Tests for acdb_gym.discovery.orientation: shift tests and orientation from experiments."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from scipy import stats

from acdb_gym.core.graphs import (
    PDAG,
    cpdag,
    essential_graph,
    minimum_intervention_set,
    random_order_dag,
)
from acdb_gym.discovery import (
    distribution_shift_pvalue,
    orient_by_mean_shift,
    orient_from_interventions,
)
from acdb_gym.discovery.orientation import DETECTABLE_SHIFT, MIN_POWER, no_shift_power

ORIENTERS = [orient_from_interventions, orient_by_mean_shift]


def readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def world(
    sem: SimpleNamespace, edges: list[tuple[int, int]], n_nodes: int, targets: list[int], seed: int
) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:
    """Observational and interventional samples of a unit-weight SCM, do(X_t = 4) per target."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((n_nodes, n_nodes))
    for i, j in edges:
        weights[i, j] = 1.0
    observational = readonly(sem.sample(weights, 1000, rng))
    experiments = [(t, readonly(sem.sample(weights, 200, rng, do={t: 4.0}))) for t in targets]
    return observational, experiments


# --------------------------------------------------------------------------- shift test


def test_shift_pvalue_detects_a_mean_shift() -> None:
    rng = np.random.default_rng(0)
    assert distribution_shift_pvalue(rng.normal(size=300), rng.normal(1.0, 1.0, size=300)) < 1e-6


def test_shift_pvalue_detects_a_variance_shift_without_a_mean_shift() -> None:
    rng = np.random.default_rng(0)
    obs, inter = rng.normal(size=300), rng.normal(0.0, 3.0, size=300)
    assert stats.ttest_ind(obs, inter, equal_var=False).pvalue > 0.01
    assert distribution_shift_pvalue(obs, inter) < 1e-6


def test_shift_pvalue_is_the_bonferroni_combination() -> None:
    rng = np.random.default_rng(3)
    obs, inter = rng.normal(size=80), rng.normal(0.3, 1.2, size=60)
    p_mean = stats.ttest_ind(obs, inter, equal_var=False).pvalue
    p_var = stats.levene(obs, inter, center="median").pvalue
    expected = min(1.0, 2 * min(p_mean, p_var))
    assert distribution_shift_pvalue(obs, inter) == pytest.approx(expected, rel=1e-12)


def test_shift_pvalue_is_large_without_a_shift() -> None:
    rng = np.random.default_rng(0)
    assert distribution_shift_pvalue(rng.normal(size=300), rng.normal(size=300)) > 0.2


@pytest.mark.parametrize(
    ("obs", "inter", "expected"),
    [
        ([2.0, 2.0, 2.0], [2.0, 2.0], 1.0),
        ([2.0, 2.0, 2.0], [3.0, 3.0], 0.0),
    ],
)
def test_shift_pvalue_on_two_constant_samples_is_exact(
    obs: list[float], inter: list[float], expected: float
) -> None:
    assert distribution_shift_pvalue(obs, inter) == expected


def test_shift_pvalue_with_one_constant_sample_is_a_valid_probability() -> None:
    rng = np.random.default_rng(0)
    p_value = distribution_shift_pvalue(np.full(100, 0.0), rng.normal(size=100))
    assert 0.0 <= p_value < 1e-3  # the spread vanished: a clear change


@pytest.mark.parametrize(
    ("obs", "inter", "message"),
    [
        ([1.0], [1.0, 2.0], "obs_col needs at least 2 values, got 1"),
        ([1.0, 2.0], [[1.0, 2.0]], r"int_col must be one-dimensional, got shape \(1, 2\)"),
        ([1.0, np.inf], [1.0, 2.0], "obs_col must be finite, got inf at index 1"),
    ],
)
def test_shift_pvalue_rejects_bad_input(obs: Any, inter: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        distribution_shift_pvalue(obs, inter)


# --------------------------------------------------------------------------- tiny worlds


@pytest.mark.parametrize("orient", ORIENTERS)
@pytest.mark.parametrize(("cause", "effect"), [(0, 1), (1, 0)])
@pytest.mark.parametrize("intervene_on_cause", [True, False])
def test_two_node_world_is_oriented_from_either_end(
    sem: SimpleNamespace, orient: Any, cause: int, effect: int, intervene_on_cause: bool
) -> None:
    target = cause if intervene_on_cause else effect
    observational, experiments = world(sem, [(cause, effect)], 2, [target], seed=0)
    result = orient(PDAG.from_edges(2, undirected=[(0, 1)]), observational, experiments)
    assert result == PDAG.from_edges(2, directed=[(cause, effect)])


def test_chain_intervention_on_the_root_is_completed_by_meek(sem: SimpleNamespace) -> None:
    observational, experiments = world(sem, [(0, 1), (1, 2)], 3, [0], seed=1)
    chain = PDAG.from_edges(3, undirected=[(0, 1), (1, 2)])
    # 0 -> 1 from the experiment; Meek R1 (0 -> 1 - 2, 0 and 2 non-adjacent) adds 1 -> 2.
    assert orient_from_interventions(chain, observational, experiments) == PDAG.from_edges(
        3, directed=[(0, 1), (1, 2)]
    )
    # The paper's heuristic applies no Meek closure.
    assert orient_by_mean_shift(chain, observational, experiments) == PDAG.from_edges(
        3, directed=[(0, 1)], undirected=[(1, 2)]
    )


@pytest.mark.parametrize("orient", ORIENTERS)
def test_chain_intervention_on_the_sink_orients_towards_it(
    sem: SimpleNamespace, orient: Any
) -> None:
    observational, experiments = world(sem, [(0, 1), (1, 2)], 3, [2], seed=2)
    chain = PDAG.from_edges(3, undirected=[(0, 1), (1, 2)])
    assert orient(chain, observational, experiments) == PDAG.from_edges(
        3, directed=[(1, 2)], undirected=[(0, 1)]
    )


@pytest.mark.parametrize("orient", ORIENTERS)
def test_chain_intervention_on_the_middle_orients_both_edges(
    sem: SimpleNamespace, orient: Any
) -> None:
    observational, experiments = world(sem, [(0, 1), (1, 2)], 3, [1], seed=3)
    chain = PDAG.from_edges(3, undirected=[(0, 1), (1, 2)])
    assert orient(chain, observational, experiments) == PDAG.from_edges(
        3, directed=[(0, 1), (1, 2)]
    )


@pytest.mark.parametrize("seed", range(4))
def test_true_cpdag_plus_minimum_interventions_recovers_the_dag(
    sem: SimpleNamespace, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    dag = sem.random_dag(6, 0.5, rng)
    weights = sem.random_weights(dag, rng)
    targets = sorted(minimum_intervention_set(dag))
    observational = sem.sample(weights, 2000, rng)
    experiments = [(t, sem.sample(weights, 500, rng, do={t: 5.0})) for t in targets]
    result = orient_from_interventions(cpdag(dag), observational, experiments)
    assert result == essential_graph(dag, targets) == dag.to_pdag()


# --------------------------------------------------------------------------- cycles


def shifted_samples(shift: np.ndarray, seed: int, n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Independent normal observational samples and interventional ones shifted by ``shift``."""
    rng = np.random.default_rng(seed)
    d = shift.size
    return rng.normal(size=(n, d)), rng.normal(size=(n, d)) + shift


@pytest.mark.parametrize("orient", ORIENTERS)
def test_orientation_that_would_close_a_cycle_is_skipped(orient: Any) -> None:
    # Triangle 0 - 1 - 2 - 0. do(X0) shifts X1 only: 0 -> 1 and 2 -> 0. do(X1) shifts X2, which
    # asks for 1 -> 2 and would close 0 -> 1 -> 2 -> 0, so that edge is left alone.
    triangle = PDAG.from_edges(3, undirected=[(0, 1), (0, 2), (1, 2)])
    observational, first = shifted_samples(np.array([0.0, 5.0, 0.0]), seed=0)
    _, second = shifted_samples(np.array([0.0, 0.0, 5.0]), seed=1)
    result = orient(triangle, observational, [(0, first), (1, second)])
    assert {(0, 1), (2, 0)} <= set(result.directed_edges())
    assert (1, 2) not in result.directed_edges()
    if orient is orient_by_mean_shift:
        assert result.undirected_edges() == [(1, 2)]
    else:  # Meek R2 (2 -> 0 -> 1 with 2 - 1) orients the skipped edge the consistent way.
        assert result.directed_edges() == [(0, 1), (2, 0), (2, 1)]


def test_meek_closure_skips_a_rule_that_would_close_a_cycle() -> None:
    # An inconsistent input: 0 -> 1 -> 2 -> 3 and 3 - 0. Nothing shifts under do(X0), asking for
    # 3 -> 0 (a cycle: skipped); then Meek R1 (2 -> 3 - 0, 2 and 0 non-adjacent) asks for the
    # same orientation, which the closure skips too instead of raising.
    pdag = PDAG.from_edges(4, directed=[(0, 1), (1, 2), (2, 3)], undirected=[(0, 3)])
    observational, inter = shifted_samples(np.zeros(4), seed=0)
    result = orient_from_interventions(pdag, observational, [(0, inter)])
    assert result == pdag


# --------------------------------------------------------------------------- abstain


@pytest.mark.parametrize(
    ("delta", "plain", "abstaining"),
    [
        (0.0, "backward", "backward"),  # p = 1
        (0.2, "backward", None),  # p ~ 0.09, between alpha and the no-shift threshold
        (1.0, "forward", "forward"),  # p ~ 0
    ],
)
def test_abstain_leaves_inconclusive_edges_undirected(
    delta: float, plain: str, abstaining: str | None
) -> None:
    rng = np.random.default_rng(0)
    observational = rng.normal(size=(200, 2))
    # The same values shifted: the spread is identical, only the mean moves by delta.
    interventional = observational + np.array([0.0, delta])
    edge = PDAG.from_edges(2, undirected=[(0, 1)])
    expected = {
        "forward": PDAG.from_edges(2, directed=[(0, 1)]),
        "backward": PDAG.from_edges(2, directed=[(1, 0)]),
        None: edge,
    }
    experiments = [(0, interventional)]
    assert orient_from_interventions(edge, observational, experiments) == expected[plain]
    result = orient_from_interventions(edge, observational, experiments, rule="band")
    assert result == expected[abstaining]


def test_abstain_threshold_below_alpha_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"no_shift_threshold must be in \[alpha, 1\)"):
        orient_from_interventions(
            PDAG.empty(2), np.zeros((3, 2)), [], alpha=0.1, rule="band", no_shift_threshold=0.05
        )


# --------------------------------------------------------------------------- contract


@pytest.mark.parametrize("orient", ORIENTERS)
def test_inputs_are_not_modified_and_output_has_the_right_size(
    sem: SimpleNamespace, orient: Any
) -> None:
    observational, experiments = world(sem, [(0, 1), (1, 2), (0, 3)], 4, [0, 1], seed=4)
    before = [observational.copy(), *(samples.copy() for _, samples in experiments)]
    pdag = PDAG.from_edges(4, undirected=[(0, 1), (1, 2), (0, 3)])
    result = orient(pdag, observational, experiments)
    assert isinstance(result, PDAG) and result.n_nodes == 4
    assert pdag == PDAG.from_edges(4, undirected=[(0, 1), (1, 2), (0, 3)])
    for original, array in zip(before, [observational, *(s for _, s in experiments)], strict=True):
        np.testing.assert_array_equal(original, array)
    assert orient(pdag, observational, experiments) == result  # deterministic


@pytest.mark.parametrize("orient", ORIENTERS)
def test_no_experiments_leaves_the_graph_unchanged(orient: Any) -> None:
    pdag = PDAG.from_edges(3, directed=[(0, 1)], undirected=[(1, 2)])
    expected = PDAG.from_edges(3, directed=[(0, 1), (1, 2)])  # Meek R1 for the tested variant
    result = orient(pdag, np.random.default_rng(0).normal(size=(10, 3)), [])
    assert result == (expected if orient is orient_from_interventions else pdag)


@pytest.mark.parametrize("orient", ORIENTERS)
@pytest.mark.parametrize(
    ("observational", "experiments", "message"),
    [
        (np.zeros((5, 3)), [(0, np.zeros((5, 2)))], r"observational must have 2 columns"),
        (np.zeros((5, 2)), [(2, np.zeros((5, 2)))], r"experiments\[0\] target .* got 2"),
        (np.zeros((5, 2)), [(1.5, np.zeros((5, 2)))], r"target must be an integer, got 1.5"),
        (np.zeros((5, 2)), [(0, np.zeros((5, 3)))], r"experiments\[0\] samples must have 2"),
        (np.zeros((5, 2)), [(0,)], r"experiments\[0\] must be a \(target, samples\) pair"),
        (np.zeros((0, 2)), [], r"observational needs at least"),
    ],
)
def test_bad_experiments_are_rejected(
    orient: Any, observational: np.ndarray, experiments: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        orient(PDAG.from_edges(2, undirected=[(0, 1)]), observational, experiments)


def test_bad_thresholds_are_rejected() -> None:
    edge = PDAG.from_edges(2, undirected=[(0, 1)])
    with pytest.raises(ValueError, match="alpha must be in"):
        orient_from_interventions(edge, np.zeros((3, 2)), [], alpha=0.0)
    with pytest.raises(ValueError, match="threshold must be finite and >= 0, got -1"):
        orient_by_mean_shift(edge, np.zeros((3, 2)), [], threshold=-1.0)


def test_shift_orienter_adds_experiments_one_at_a_time_to_the_same_graph() -> None:
    from acdb_gym.core.graphs import cpdag, random_order_dag
    from acdb_gym.core.worlds.linear import LinearGaussianSCM
    from acdb_gym.discovery import ShiftOrienter

    rng = np.random.default_rng(3)
    for _ in range(20):
        dag = random_order_dag(6, n_edges=8, rng=rng)
        scm = LinearGaussianSCM(dag.adjacency * rng.uniform(0.5, 1.5, (6, 6)), np.ones(6))
        obs = scm.sample(200, rng)
        start = cpdag(dag)
        orienter = ShiftOrienter(start, obs, alpha=0.05)
        copy = orienter.copy()
        experiments: list[tuple[int, np.ndarray]] = []
        for target in rng.integers(0, 6, size=4):
            samples = obs[:50] + rng.normal(0, 1, (50, 6)) * (dag.adjacency[target] * 3)
            experiments.append((int(target), samples))
            orienter.add(int(target), samples)
            assert orienter.graph == orient_from_interventions(start, obs, experiments, alpha=0.05)
        assert copy.graph == orient_from_interventions(start, obs, [], alpha=0.05)


# --------------------------------------------------------------------------- the rules


def _silent_edge(n_int: int) -> tuple[PDAG, np.ndarray, list[tuple[int, np.ndarray]]]:
    """An edge ``0 - 1`` whose experiment on 0 leaves ``X_1``'s distribution unchanged."""
    rng = np.random.default_rng(1)
    observational = rng.normal(size=(1000, 2))
    interventional = rng.normal(size=(n_int, 2))
    return PDAG.from_edges(2, undirected=[(0, 1)]), observational, [(0, interventional)]


def test_a_test_too_small_to_see_a_shift_orients_nothing_by_default() -> None:
    edge, observational, experiments = _silent_edge(3)
    assert no_shift_power(3, 1000, detectable_shift=DETECTABLE_SHIFT, alpha=0.01) < MIN_POWER
    assert orient_from_interventions(edge, observational, experiments) == edge
    legacy = orient_from_interventions(edge, observational, experiments, rule="always")
    assert legacy == PDAG.from_edges(2, directed=[(1, 0)])


def test_a_powered_test_that_sees_nothing_orients_the_neighbour_as_a_parent() -> None:
    edge, observational, experiments = _silent_edge(200)
    assert no_shift_power(200, 1000, detectable_shift=DETECTABLE_SHIFT, alpha=0.01) >= MIN_POWER
    parent = PDAG.from_edges(2, directed=[(1, 0)])
    assert orient_from_interventions(edge, observational, experiments) == parent
    assert orient_from_interventions(edge, observational, experiments, rule="always") == parent
    assert orient_from_interventions(edge, observational, experiments, rule="significant") == edge
    # A larger shift to be seen needs more rows: 200 are too few for 0.25 sd.
    small = orient_from_interventions(edge, observational, experiments, detectable_shift=0.25)
    assert small == edge


@pytest.mark.parametrize("n_int", [3, 5, 8])
def test_the_power_rule_equals_significant_only_when_no_test_has_power(n_int: int) -> None:
    rng = np.random.default_rng(n_int)
    for _ in range(20):
        dag = random_order_dag(6, n_edges=8, rng=rng)
        start = cpdag(dag)
        obs = rng.normal(size=(500, 6))
        experiments = [
            (int(t), rng.normal(size=(n_int, 6)) + rng.normal() * (t % 2)) for t in range(6)
        ]
        power = orient_from_interventions(start, obs, experiments)
        significant = orient_from_interventions(start, obs, experiments, rule="significant")
        assert power == significant


def test_no_shift_power_grows_with_the_sample_and_the_shift() -> None:
    values = [no_shift_power(n, 1000, detectable_shift=1.0, alpha=0.01) for n in (3, 10, 30)]
    assert values == sorted(values) and values[0] < 0.2 < 0.9 < values[-1]
    assert no_shift_power(30, 1000, detectable_shift=0.0, alpha=0.01) < 0.01
    with pytest.raises(ValueError, match="detectable_shift"):
        no_shift_power(3, 10, detectable_shift=-1.0, alpha=0.01)
    with pytest.raises(ValueError, match="sample sizes"):
        no_shift_power(0, 10, detectable_shift=1.0, alpha=0.01)


def test_abstain_is_deprecated_and_keeps_its_meaning() -> None:
    edge, observational, experiments = _silent_edge(3)
    with pytest.warns(DeprecationWarning, match="rule='always'"):
        old = orient_from_interventions(edge, observational, experiments, abstain=False)
    assert old == orient_from_interventions(edge, observational, experiments, rule="always")
    with pytest.raises(ValueError, match="rule must be one of"):
        orient_from_interventions(edge, observational, experiments, rule="never")  # type: ignore[arg-type]
