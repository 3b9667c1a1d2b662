"""Tests for acdb_gym.core.stats: hand cases, agreement with direct computations, errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from acdb_gym.core.stats import (
    IndependenceTest,
    correlation,
    fisher_z_test,
    partial_correlation,
)

TOL = 1e-10


def _residual_partial_correlation(data: np.ndarray, i: int, j: int, cond: list[int]) -> float:
    """Direct definition: correlate the least-squares residuals (with intercept)."""
    design = np.column_stack([np.ones(data.shape[0]), data[:, cond]])
    targets = data[:, [i, j]]
    coefficients, *_ = np.linalg.lstsq(design, targets, rcond=None)
    residuals = targets - design @ coefficients
    a, b = residuals[:, 0], residuals[:, 1]
    return float(a @ b / math.sqrt((a @ a) * (b @ b)))


def _precision_partial_correlation(data: np.ndarray, i: int, j: int, cond: list[int]) -> float:
    """Textbook formula from the inverse covariance of the submatrix."""
    precision = np.linalg.inv(np.cov(data[:, [i, j, *cond]], rowvar=False))
    return float(-precision[0, 1] / math.sqrt(precision[0, 0] * precision[1, 1]))


def _random_data(seed: int, n: int = 200, d: int = 6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mixing = rng.normal(size=(d, d))
    return rng.normal(size=(n, d)) @ mixing + rng.normal(size=d) * 10.0


# --------------------------------------------------------------------------- hand cases


def test_correlation_hand_case() -> None:
    # Deviations (-1, 0, 1) and (-1, 1, 0): cross product 1, squares 2 and 2 ⇒ r = 1/2.
    data = np.array([[1.0, 1.0], [2.0, 3.0], [3.0, 2.0]])
    assert correlation(data, 0, 1) == pytest.approx(0.5, abs=1e-15)
    assert correlation(data, 1, 0) == pytest.approx(0.5, abs=1e-15)


def test_correlation_perfect_and_anti() -> None:
    x = np.array([0.0, 1.0, 2.0, 5.0])
    data = np.column_stack([x, 3.0 * x + 1.0, -2.0 * x])
    assert correlation(data, 0, 1) == pytest.approx(1.0, abs=1e-15)
    assert correlation(data, 0, 2) == pytest.approx(-1.0, abs=1e-15)


def test_partial_correlation_hand_cases() -> None:
    # z, a, c are mutually orthogonal, centred, each of squared norm 4.
    z = np.array([1.0, -1.0, 1.0, -1.0])
    a = np.array([1.0, 1.0, -1.0, -1.0])
    c = np.array([1.0, -1.0, -1.0, 1.0])
    x = z + a
    y = z + c
    w = z + a + c
    data = np.column_stack([x, y, z, w])
    # corr(x, y) = <z+a, z+c> / (|z+a| |z+c|) = 4 / 8.
    assert correlation(data, 0, 1) == pytest.approx(0.5, abs=1e-14)
    # Residuals on z are a and c, orthogonal ⇒ 0.
    assert partial_correlation(data, 0, 1, [2]) == pytest.approx(0.0, abs=1e-14)
    # Residuals on z are a and a+c ⇒ 4 / (2 · sqrt 8) = 1/sqrt 2.
    assert partial_correlation(data, 0, 3, [2]) == pytest.approx(1 / math.sqrt(2), abs=1e-14)


def test_fisher_z_hand_case() -> None:
    # r = 0.5 on 7 samples with |cond| = 0: z = sqrt(4) · atanh(0.5) = 2 · 0.5493061443340549.
    x = np.array([-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0])
    noise = x**2 - 4.0  # orthogonal to x and to ones
    scale = math.sqrt((x @ x) / (noise @ noise) * 3.0)  # makes r = 1/2
    data = np.column_stack([x, x + scale * noise])
    assert correlation(data, 0, 1) == pytest.approx(0.5, abs=1e-14)
    result = fisher_z_test(data, 0, 1)
    assert result.statistic == pytest.approx(2.0 * math.atanh(0.5), abs=1e-13)
    assert result.p_value == pytest.approx(2.0 * (1.0 - sps.norm.cdf(2.0 * math.atanh(0.5))))
    assert result.p_value == pytest.approx(0.27194, abs=1e-5)  # normal table: Φ(1.0986) ≈ 0.86403
    assert result.independent is True
    assert result.n_samples == 7
    assert result.cond == ()
    assert result.alpha == 0.05


def test_fisher_z_decisions_on_a_chain() -> None:
    # X0 -> X1 -> X2: X0 and X2 are dependent but independent given X1.
    rng = np.random.default_rng(0)
    n = 5000
    x0 = rng.normal(size=n)
    x1 = 1.5 * x0 + rng.normal(size=n)
    x2 = -1.2 * x1 + rng.normal(size=n)
    data = np.column_stack([x0, x1, x2])
    marginal = fisher_z_test(data, 0, 2)
    assert not marginal.independent and marginal.p_value < 1e-10
    given_middle = fisher_z_test(data, 0, 2, [1], alpha=0.01)
    assert given_middle.independent
    assert given_middle.cond == (1,)
    assert given_middle.alpha == 0.01


def test_fisher_z_decision_boundary_is_strict() -> None:
    # independent means p > alpha: at alpha = p exactly, independence is rejected.
    data = _random_data(11, n=40, d=3)
    p_value = fisher_z_test(data, 0, 1).p_value
    assert 0.0 < p_value < 1.0
    assert fisher_z_test(data, 0, 1, alpha=p_value).independent is False
    assert fisher_z_test(data, 0, 1, alpha=np.nextafter(p_value, 0.0)).independent is True


def test_fisher_z_perfect_correlation_is_finite() -> None:
    x = np.arange(10.0)
    result = fisher_z_test(np.column_stack([x, 2 * x + 1]), 0, 1)
    assert math.isfinite(result.statistic) and result.statistic > 0
    assert result.p_value == 0.0
    assert not result.independent


def test_independence_test_is_frozen() -> None:
    result = fisher_z_test(_random_data(1), 0, 1)
    assert isinstance(result, IndependenceTest)
    with pytest.raises(AttributeError):
        result.p_value = 1.0  # type: ignore[misc]


# --------------------------------------------------------------------------- direct computations


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(12, 300),
    data=st.data(),
)
def test_partial_correlation_matches_regression_residuals(
    seed: int, n: int, data: st.DataObject
) -> None:
    d = 7
    matrix = _random_data(seed, n=n, d=d)
    i, j = data.draw(st.lists(st.integers(0, d - 1), min_size=2, max_size=2, unique=True))
    others = [v for v in range(d) if v not in (i, j)]
    cond = data.draw(st.lists(st.sampled_from(others), max_size=4, unique=True))
    expected = _residual_partial_correlation(matrix, i, j, cond)
    assert partial_correlation(matrix, i, j, cond) == pytest.approx(expected, abs=TOL)
    assert partial_correlation(matrix, i, j, cond) == pytest.approx(
        _precision_partial_correlation(matrix, i, j, cond), abs=1e-9
    )
    # Symmetric in (i, j) and invariant to the order of the conditioning set.
    assert partial_correlation(matrix, j, i, cond[::-1]) == pytest.approx(expected, abs=TOL)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 200))
def test_correlation_matches_numpy(seed: int, n: int) -> None:
    matrix = _random_data(seed, n=n, d=3)
    expected = np.corrcoef(matrix[:, 0], matrix[:, 2])[0, 1]
    assert correlation(matrix, 0, 2) == pytest.approx(expected, abs=TOL)
    assert partial_correlation(matrix, 0, 2) == correlation(matrix, 0, 2)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(8, 400),
    k=st.integers(0, 3),
    alpha=st.floats(0.001, 0.5),
)
def test_fisher_z_recomputed(seed: int, n: int, k: int, alpha: float) -> None:
    matrix = _random_data(seed, n=n, d=6)
    cond = list(range(2, 2 + k))
    result = fisher_z_test(matrix, 0, 1, cond, alpha=alpha)
    r = _residual_partial_correlation(matrix, 0, 1, cond)
    z = math.sqrt(n - k - 3) * math.atanh(r)
    p = 2.0 * (1.0 - sps.norm.cdf(abs(z)))
    assert result.statistic == pytest.approx(z, abs=TOL, rel=TOL)
    assert result.p_value == pytest.approx(p, abs=TOL)
    assert result.independent == (result.p_value > alpha)
    assert result.n_samples == n
    assert result.cond == tuple(cond)


def test_large_offsets_are_stable() -> None:
    base = _random_data(3, n=500, d=4)
    shifted = base + 1e7
    for cond in ([], [2], [2, 3]):
        assert partial_correlation(shifted, 0, 1, cond) == pytest.approx(
            partial_correlation(base, 0, 1, cond), abs=1e-7
        )


def test_accepts_lists_and_numpy_indices() -> None:
    matrix = _random_data(4, n=50, d=4)
    expected = partial_correlation(matrix, 0, 1, [2, 3])
    assert partial_correlation(matrix.tolist(), np.int64(0), np.int32(1), np.array([2, 3])) == (
        pytest.approx(expected, abs=1e-15)
    )


def test_inputs_are_not_modified() -> None:
    matrix = _random_data(5, n=40, d=4)
    copy = matrix.copy()
    fisher_z_test(matrix, 0, 1, [2, 3])
    np.testing.assert_array_equal(matrix, copy)


# --------------------------------------------------------------------------- errors


@pytest.fixture
def matrix() -> np.ndarray:
    return _random_data(7, n=30, d=5)


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        ((5, 1, ()), r"i must be in \[0, 5\), got 5"),
        ((-1, 1, ()), r"i must be in \[0, 5\), got -1"),
        ((0, 9, ()), r"j must be in \[0, 5\), got 9"),
        ((0, 1, (7,)), r"cond entries must be in \[0, 5\), got 7"),
        ((2, 2, ()), r"i and j must differ, got i = j = 2"),
        ((0, 1, (2, 0)), r"must not contain i or j, got X0 in cond \[2, 0\]"),
        ((0, 1, (3, 1)), r"must not contain i or j, got X1"),
        ((0, 1, (3, 2, 3)), r"duplicate entry X3"),
        ((1.5, 0, ()), r"i must be an integer node index, got 1.5"),
        ((True, 0, ()), r"i must be an integer node index, got True"),
    ],
)
def test_bad_indices_are_named(matrix: np.ndarray, args: tuple, pattern: str) -> None:
    i, j, cond = args
    for call in (
        lambda: partial_correlation(matrix, i, j, cond),
        lambda: fisher_z_test(matrix, i, j, cond),
    ):
        with pytest.raises(ValueError, match=pattern):
            call()


def test_correlation_checks_indices(matrix: np.ndarray) -> None:
    with pytest.raises(ValueError, match=r"j must be in \[0, 5\), got 5"):
        correlation(matrix, 0, 5)
    with pytest.raises(ValueError, match="i and j must differ"):
        correlation(matrix, 3, 3)


@pytest.mark.parametrize("shape", [(10,), (2, 3, 4), ()])
def test_non_2d_data_is_rejected(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=rf"2-D array .* got shape {re.escape(str(shape))}"):
        correlation(np.zeros(shape), 0, 1)


def test_non_numeric_data_is_rejected() -> None:
    with pytest.raises(ValueError, match="numeric"):
        correlation([["a", "b"], ["c", "d"]], 0, 1)


def test_non_finite_data_is_named(matrix: np.ndarray) -> None:
    bad = matrix.copy()
    bad[4, 3] = np.nan
    with pytest.raises(ValueError, match="non-finite values in X3"):
        partial_correlation(bad, 0, 1, [3])
    # A non-finite value in an unused column does not matter.
    assert math.isfinite(partial_correlation(bad, 0, 1, [2]))


def test_too_few_samples(matrix: np.ndarray) -> None:
    # n - |cond| - 3 = 0 for the Fisher-z test.
    with pytest.raises(ValueError, match=r"n - \|cond\| - 3 > 0.*\|cond\| = 2.*got n = 5"):
        fisher_z_test(matrix[:5], 0, 1, [2, 3])
    with pytest.raises(ValueError, match=r"needs at least 4 samples, got n = 3"):
        fisher_z_test(matrix[:3], 0, 1)
    with pytest.raises(ValueError, match=r"needs at least 4 samples, got n = 3"):
        partial_correlation(matrix[:3], 0, 1, [2, 3])
    with pytest.raises(ValueError, match=r"needs at least 2 samples, got n = 1"):
        correlation(matrix[:1], 0, 1)
    # Six rows are enough for |cond| = 2.
    assert math.isfinite(fisher_z_test(matrix[:6], 0, 1, [2, 3]).statistic)


@pytest.mark.parametrize("column", [0, 1, 3])
def test_constant_column_is_named(matrix: np.ndarray, column: int) -> None:
    # The target of a hard intervention do(X_c = 0.1) is constant.
    data = matrix.copy()
    data[:, column] = 0.1
    with pytest.raises(ValueError, match=rf"X{column} is constant in these samples"):
        fisher_z_test(data, 0, 1, [3])
    with pytest.raises(ValueError, match=rf"X{column} is constant in these samples"):
        partial_correlation(data, 0, 1, [2, 3])


def test_all_zero_column_is_constant(matrix: np.ndarray) -> None:
    data = matrix.copy()
    data[:, 2] = 0.0
    with pytest.raises(ValueError, match="X2 is constant"):
        correlation(data, 2, 4)


def test_linear_function_of_conditioning_set_is_named(matrix: np.ndarray) -> None:
    data = matrix.copy()
    data[:, 0] = 2.0 * data[:, 2] - data[:, 3] + 1.0
    with pytest.raises(ValueError, match=r"X0 is a linear function of the conditioning set"):
        partial_correlation(data, 0, 1, [2, 3])
    with pytest.raises(ValueError, match=r"X0 is a linear function of the conditioning set"):
        partial_correlation(data, 1, 0, [2, 3])
    data[:, 4] = data[:, 2] + data[:, 3]
    with pytest.raises(ValueError, match=r"collinear .* X4 is a linear function of \{X2, X3\}"):
        partial_correlation(data, 1, 0, [2, 3, 4])


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 2.0, float("nan")])
def test_bad_alpha(matrix: np.ndarray, alpha: float) -> None:
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        fisher_z_test(matrix, 0, 1, alpha=alpha)
