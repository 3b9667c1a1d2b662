"""Tests for acdb_gym.discovery.shift: the shift tests and pc_active's evidence combination."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats

from acdb_gym.core.graphs import PDAG
from acdb_gym.discovery import (
    ShiftEvidence,
    combine_shift_evidence,
    distribution_shift_pvalue,
    shift_evidence,
    shift_pvalues,
)

# --------------------------------------------------------------------------- shift p-values


def test_shift_pvalues_are_the_bonferroni_combination_per_column() -> None:
    rng = np.random.default_rng(4)
    observational = rng.normal(size=(80, 3))
    samples = rng.normal([0.0, 0.3, 0.0], [1.0, 1.0, 2.0], size=(40, 3))
    p_mean = stats.ttest_ind(observational, samples, axis=0, equal_var=False).pvalue
    p_var = stats.levene(observational, samples, center="median", axis=0).pvalue
    expected = np.minimum(1.0, 2 * np.minimum(p_mean, p_var))
    assert shift_pvalues(observational, samples) == pytest.approx(expected, rel=1e-12)


def test_one_variable_is_a_view_of_the_column_wise_test() -> None:
    # The scalar entry point is the vectorised one on a single column, bit for bit.
    rng = np.random.default_rng(5)
    obs, inter = rng.normal(size=50), rng.normal(0.2, 1.4, size=30)
    assert distribution_shift_pvalue(obs, inter) == shift_pvalues(obs[:, None], inter[:, None])[0]


def test_shift_pvalues_are_exact_on_constant_columns() -> None:
    observational = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])
    samples = np.array([[1.0, 5.0], [1.0, 5.0]])
    assert shift_pvalues(observational, samples).tolist() == [1.0, 0.0]


@pytest.mark.parametrize(
    ("observational", "samples", "message"),
    [
        (np.zeros(4), np.zeros((3, 1)), r"observational must be a 2-D .* got shape \(4,\)"),
        (np.zeros((4, 2)), np.zeros((3, 3)), r"samples must have 2 columns, got shape \(3, 3\)"),
        (np.zeros((1, 2)), np.zeros((3, 2)), "observational needs at least 2 samples"),
        (np.zeros((4, 2)), np.zeros((1, 2)), "samples needs at least 2 samples"),
        (np.zeros((4, 2)), np.full((3, 2), np.nan), "samples must be finite; got nan at row 0"),
    ],
)
def test_shift_pvalues_reject_bad_input(observational: Any, samples: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        shift_pvalues(observational, samples)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy on the constant columns
def test_shift_pvalues_match_distribution_shift_pvalue_column_by_column() -> None:
    rng = np.random.default_rng(0)
    observational = rng.normal(size=(60, 5))
    samples = rng.normal(0.4, 1.5, size=(25, 5))
    samples[:, 1] = 3.0  # the intervened column is constant
    observational[:, 4] = samples[:, 4] = 2.0  # constant everywhere, same value
    expected = [distribution_shift_pvalue(observational[:, j], samples[:, j]) for j in range(5)]
    assert shift_pvalues(observational, samples) == pytest.approx(expected, rel=1e-9)


def chain_samples(n: int, rng: np.random.Generator, do0: float | None = None) -> np.ndarray:
    """X0 -> X1 -> X2 and an isolated X3, unit weights and noise."""
    noise = rng.normal(size=(n, 4))
    x0 = noise[:, 0] if do0 is None else np.full(n, do0)
    x1 = x0 + noise[:, 1]
    return np.column_stack([x0, x1, x1 + noise[:, 2], noise[:, 3]])


def test_shift_evidence_separates_children_from_indirect_descendants() -> None:
    rng = np.random.default_rng(1)
    observational, samples = chain_samples(2000, rng), chain_samples(400, rng, do0=4.0)
    evidence = shift_evidence(observational, 0, samples, direct_for=np.ones(4, dtype=np.bool_))
    assert np.isnan(evidence.shift[0]) and np.isnan(evidence.direct[0])
    assert evidence.shift[1] < 1e-6 and evidence.shift[2] < 1e-6 and evidence.shift[3] > 0.01
    assert evidence.direct[1] < 1e-6  # X1 is a child of X0
    assert evidence.direct[2] > 0.01  # X2 shifts only through X1


def test_direct_effect_test_is_calibrated_under_the_null() -> None:
    rng = np.random.default_rng(2)
    p_values = [
        shift_evidence(
            chain_samples(50, rng), 0, chain_samples(20, rng, do0=4.0), direct_for=np.ones(4, bool)
        ).direct[2]
        for _ in range(200)
    ]
    assert 0.01 < np.mean(np.array(p_values) < 0.05) < 0.10


# --------------------------------------------------------------------------- combination


def evidence(target: int, shift: list[float], direct: list[float] | None = None) -> ShiftEvidence:
    shift_array = np.array(shift, dtype=float)
    shift_array[target] = np.nan
    direct_array = np.full(len(shift), np.nan) if direct is None else np.array(direct, float)
    return ShiftEvidence(target, shift_array, direct_array)


def test_experiment_orients_incident_edges_and_overrides_pc() -> None:
    # PC: X0 - X1 <- X2 (the collider orientation is wrong). do(X1): X2 shifts, X0 does not.
    pc = PDAG.from_edges(3, directed=[(2, 1)], undirected=[(0, 1)])
    combined = combine_shift_evidence(pc, [evidence(1, [0.6, 0, 1e-8])])
    assert combined.graph == PDAG.from_edges(3, directed=[(0, 1), (1, 2)])
    assert combined.settled[0, 1] and combined.settled[1, 2]


def test_weak_evidence_abstains_even_against_pc() -> None:
    pc = PDAG.from_edges(3, directed=[(0, 1)], undirected=[(1, 2)])
    combined = combine_shift_evidence(pc, [evidence(1, [0.03, 0, 1e-8])])
    assert combined.graph == PDAG.from_edges(3, directed=[(1, 2)], undirected=[(0, 1)])


def test_pc_orientations_fill_in_where_experiments_are_silent() -> None:
    # do(X3) leaves X2 alone, so X2 -> X3; the collider at X2 is PC's alone and is kept.
    pc = PDAG.from_edges(4, directed=[(0, 2), (1, 2)], undirected=[(2, 3)])
    combined = combine_shift_evidence(pc, [evidence(3, [0.9, 0.9, 0.9, 0])])
    assert combined.graph == PDAG.from_edges(4, directed=[(0, 2), (1, 2), (2, 3)])
    assert combined.settled[2, 3] and not combined.settled[0, 2]


def test_contradictory_experiments_abstain() -> None:
    pc = PDAG.from_edges(2, undirected=[(0, 1)])
    both_shift = [evidence(0, [0, 1e-9]), evidence(1, [1e-9, 0])]
    assert combine_shift_evidence(pc, both_shift).graph == pc


def test_two_clean_experiments_remove_an_edge() -> None:
    pc = PDAG.from_edges(2, undirected=[(0, 1)])
    neither = [evidence(0, [0, 0.8]), evidence(1, [0.7, 0])]
    assert combine_shift_evidence(pc, neither).graph == PDAG.empty(2)
    assert combine_shift_evidence(pc, neither, repair_skeleton=False).graph == pc


def test_direct_effects_add_missing_edges_but_indirect_ones_do_not() -> None:
    pc = PDAG.from_edges(3, undirected=[(1, 2)])
    direct = evidence(0, [0, 1e-9, 1e-9], direct=[np.nan, 1e-9, 0.4])
    combined = combine_shift_evidence(pc, [direct])
    assert combined.graph == PDAG.from_edges(3, directed=[(0, 1), (1, 2)])
    without = combine_shift_evidence(pc, [direct], repair_skeleton=False)
    assert without.graph == pc


def test_descendant_cut_orients_edges_away_from_the_target() -> None:
    # do(X0) shifts X1 but clearly not X2, so the undirected X1 - X2 must be X2 -> X1.
    pc = PDAG.from_edges(3, undirected=[(0, 1), (1, 2)])
    combined = combine_shift_evidence(pc, [evidence(0, [0, 1e-9, 0.9])])
    assert combined.graph == PDAG.from_edges(3, directed=[(0, 1), (2, 1)])


def test_combination_rejects_bad_thresholds() -> None:
    pc = PDAG.empty(2)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\), got 0.0"):
        combine_shift_evidence(pc, [], alpha=0.0)
    with pytest.raises(ValueError, match=r"no_shift_threshold must be in \[alpha, 1\)"):
        combine_shift_evidence(pc, [], alpha=0.05, no_shift_threshold=0.01)


def _scipy_shift_pvalues(obs: np.ndarray, inter: np.ndarray) -> np.ndarray:
    """The shift test as scipy computes it (the reference of the private fast path)."""
    import warnings

    from scipy import stats

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p_mean = stats.ttest_ind(obs, inter, axis=0, equal_var=False).pvalue
        deviations = [np.abs(group - np.median(group, axis=0)) for group in (obs, inter)]
        p_var = stats.f_oneway(*deviations, axis=0).pvalue
    p_mean = np.where(np.isfinite(p_mean), p_mean, 1.0)
    p_var = np.where(np.isfinite(p_var), p_var, 1.0)
    combined = np.minimum(1.0, 2.0 * np.minimum(p_mean, p_var))
    both_constant = (obs.min(axis=0) == obs.max(axis=0)) & (inter.min(axis=0) == inter.max(axis=0))
    return np.where(both_constant, np.where(obs[0] == inter[0], 1.0, 0.0), combined)


@pytest.mark.slow
def test_shift_pvalues_are_scipys_to_the_last_bit() -> None:
    rng = np.random.default_rng(7)
    for trial in range(300):
        d = int(rng.integers(1, 9))
        obs = rng.normal(size=(int(rng.integers(2, 400)), d)) * rng.uniform(0.1, 5, d)
        inter = rng.normal(size=(int(rng.integers(2, 200)), d)) + rng.normal(size=d)
        if trial % 5 == 0:
            inter[:, 0] = 2.5  # the target's own column, constant under do()
        if trial % 7 == 0:
            obs[:, -1] = inter[:, -1] = 1.0  # constant in both samples
        # The whole matrix, as shift_pvalues sees it, and each column alone, as the
        # orientation tests see it: numpy sums the two layouts in different orders.
        assert np.array_equal(shift_pvalues(obs, inter), _scipy_shift_pvalues(obs, inter))
        for j in range(d):
            expected = _scipy_shift_pvalues(obs[:, [j]].copy(), inter[:, [j]].copy())[0]
            assert distribution_shift_pvalue(obs[:, j], inter[:, j]) == expected


def test_stacked_pvalues_equal_each_reference_bit_for_bit() -> None:
    from acdb_gym.discovery._two_sample import ShiftReference, stacked_pvalues

    rng = np.random.default_rng(4)
    references, blocks = [], []
    for k in range(5):
        obs = rng.normal(size=(6, 200))
        inter = rng.normal(loc=0.3 * k, size=(6, 50))
        obs[2] = 1.5  # constant rows take the documented degenerate branches
        inter[2] = 1.5 if k % 2 else 2.0
        references.append(ShiftReference(obs))
        blocks.append(inter)
    stacked = stacked_pvalues(references, np.stack(blocks))
    for reference, block, row in zip(references, blocks, stacked, strict=True):
        assert np.array_equal(reference.pvalues(block), row)
    with pytest.raises(ValueError, match="expected 5 references"):
        stacked_pvalues(references[:4], np.stack(blocks))


def test_reference_rows_test_chosen_rows_bit_for_bit() -> None:
    """ReferenceRows: the tests of chosen (world, variable) rows equal each reference's own
    p-values of those variables, constant and degenerate rows included; a record of another
    sample size is refused."""
    from acdb_gym.discovery._two_sample import ReferenceRows, ShiftReference

    rng = np.random.default_rng(9)
    slots, d = 7, 6
    table = ReferenceRows(slots, d, 200)
    references, experiments = [], []
    for k in range(slots):
        obs = rng.normal(size=(d, 200)) * rng.uniform(0.5, 3.0)
        inter = rng.normal(loc=0.4 * k, size=(d, 50))
        obs[2] = 1.5
        inter[2] = 1.5 if k % 2 else 2.0
        obs[4, ::2] = 0.0  # deviations from the median constant on half the rows
        references.append(ShiftReference(obs))
        experiments.append(inter)
    order = rng.permutation(slots)
    table.put(order, [ReferenceRows.record(reference) for reference in references])
    worlds = rng.integers(slots, size=40)
    variables = rng.integers(d, size=40)
    rows = np.stack([experiments[w][v] for w, v in zip(worlds, variables, strict=True)])
    got = table.pvalues(order[worlds], variables, rows)  # slot order[k] holds reference k
    for i, (w, v) in enumerate(zip(worlds, variables, strict=True)):
        assert got[i].tobytes() == references[w].pvalues(experiments[w])[v].tobytes()
    with pytest.raises(ValueError):
        table.put(np.array([0]), [ReferenceRows.record(ShiftReference(rng.normal(size=(d, 90))))])
