"""Sample statistics offered to agents as tools: correlation, partial correlation, Fisher-z.

Every function takes a data matrix ``(n_samples, n_variables)`` and node indices; variables are
named ``X0..X{d-1}`` in messages (DESIGN §2); indices may be Python or numpy integers (not
bools). Degenerate inputs (a constant column, such as the
target of a hard intervention, or a variable that is an exact linear function of the
conditioning set) raise ``ValueError`` naming the variable instead of returning NaN.

Partial correlations are computed from one Householder QR factorization of the centred,
unit-scaled columns ``[cond..., i, j]``: the last two rows of ``R`` hold the residuals of ``X_i``
and ``X_j`` after regression on the conditioning set (with intercept), so no covariance matrix is
formed or inverted.

>>> data = np.array([[1.0, 1.0], [2.0, 3.0], [3.0, 2.0]])
>>> round(correlation(data, 0, 1), 12)
0.5
>>> fisher_z_test(np.arange(12.0).reshape(6, 2) ** 2, 0, 1).independent
False
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, SupportsIndex

import numpy as np
from scipy import special

from acdb_gym.core.types import FloatArray

__all__ = ["IndependenceTest", "correlation", "fisher_z_test", "partial_correlation"]

_CONSTANT_RTOL = 1e-12
"""A column whose range is at most this fraction of its largest magnitude is constant."""

_COLLINEAR_RTOL = 1e-8
"""A unit-norm column whose residual norm is at most this is a linear function of the others."""

_R_LIMIT = 1.0 - np.finfo(np.float64).eps
"""``|r|`` is clipped to this before ``atanh`` so the Fisher-z statistic stays finite."""


@dataclass(frozen=True)
class IndependenceTest:
    """The result of a Fisher-z test of ``X_i ⫫ X_j | X_cond``.

    Attributes:
        statistic: ``sqrt(n - |cond| - 3) * atanh(r)``, with ``r`` the sample partial correlation.
        p_value: two-sided p-value under the standard normal null.
        independent: the decision, ``p_value > alpha`` (independence is not rejected).
        alpha: the significance level used.
        n_samples: number of rows ``n`` the test used.
        cond: the conditioning set, in the order given.
    """

    statistic: float
    p_value: float
    independent: bool
    alpha: float
    n_samples: int
    cond: tuple[int, ...]


def correlation(data: Any, i: SupportsIndex, j: SupportsIndex) -> float:
    """Pearson correlation of columns ``i`` and ``j``.

    Args:
        data: array-like of shape ``(n_samples, n_variables)``.
        i: first variable.
        j: second variable, different from ``i``.

    Returns:
        The sample correlation, in ``[-1, 1]``.

    Raises:
        ValueError: ``data`` is not 2-D or has non-finite entries in the columns used; an index
            is out of range or not an integer; ``i == j``; fewer than 2 samples; a column is
            constant.
    """
    return partial_correlation(data, i, j, ())


def partial_correlation(
    data: Any, i: SupportsIndex, j: SupportsIndex, cond: Iterable[SupportsIndex] = ()
) -> float:
    """Sample partial correlation of ``X_i`` and ``X_j`` given ``X_cond``.

    Equals the correlation of the residuals of ``X_i`` and ``X_j`` after least-squares
    regression (with intercept) on the conditioning variables; with ``cond`` empty it is the
    Pearson correlation.

    Args:
        data: array-like of shape ``(n_samples, n_variables)``.
        i: first variable.
        j: second variable, different from ``i``.
        cond: conditioning variables: distinct, and neither ``i`` nor ``j``.

    Returns:
        The sample partial correlation, in ``[-1, 1]``.

    Raises:
        ValueError: as :func:`correlation`, plus a bad ``cond`` (out of range, duplicates,
            containing ``i`` or ``j``), fewer than ``|cond| + 2`` samples, a constant
            conditioning variable, collinear conditioning variables, or ``X_i`` / ``X_j`` an
            exact linear function of the conditioning set.
    """
    matrix, i_index, j_index, cond_tuple = _validated(data, i, j, cond)
    _require_samples(matrix.shape[0], len(cond_tuple) + 2, "a partial correlation", cond_tuple)
    return _partial_correlation(matrix, i_index, j_index, cond_tuple)


def fisher_z_test(
    data: Any,
    i: SupportsIndex,
    j: SupportsIndex,
    cond: Iterable[SupportsIndex] = (),
    *,
    alpha: float = 0.05,
) -> IndependenceTest:
    """Fisher-z test of ``X_i ⫫ X_j | X_cond`` (the test PC uses for Gaussian data).

    With ``r`` the sample partial correlation and ``n`` the number of rows, the statistic is
    ``z = sqrt(n - |cond| - 3) * atanh(r)`` (``|r|`` clipped to ``1 - eps`` so ``z`` is finite)
    and the p-value is ``2 * (1 - Phi(|z|))``. Independence is accepted when ``p > alpha``.

    Args:
        data: array-like of shape ``(n_samples, n_variables)``.
        i: first variable.
        j: second variable, different from ``i``.
        cond: conditioning variables: distinct, and neither ``i`` nor ``j``.
        alpha: significance level, in ``(0, 1)``.

    Returns:
        An :class:`IndependenceTest`.

    Raises:
        ValueError: as :func:`partial_correlation`; ``n - |cond| - 3 <= 0``; ``alpha`` outside
            ``(0, 1)``.
    """
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    matrix, i_index, j_index, cond_tuple = _validated(data, i, j, cond)
    n = matrix.shape[0]
    _require_samples(n, len(cond_tuple) + 4, "the Fisher-z test (n - |cond| - 3 > 0)", cond_tuple)
    r = _partial_correlation(matrix, i_index, j_index, cond_tuple)
    clipped = min(max(r, -_R_LIMIT), _R_LIMIT)
    statistic = math.sqrt(n - len(cond_tuple) - 3) * math.atanh(clipped)
    # scipy.stats.norm.sf(x) is special.ndtr(-x), bit for bit, without importing scipy.stats.
    p_value = float(2.0 * special.ndtr(-abs(statistic)))
    return IndependenceTest(
        statistic=statistic,
        p_value=p_value,
        independent=p_value > alpha,
        alpha=alpha,
        n_samples=n,
        cond=cond_tuple,
    )


# --------------------------------------------------------------------------- validation


def _validated(
    data: Any, i_arg: SupportsIndex, j_arg: SupportsIndex, cond: Iterable[SupportsIndex]
) -> tuple[FloatArray, int, int, tuple[int, ...]]:
    matrix = _as_data_matrix(data)
    d = matrix.shape[1]
    i = _node_index(i_arg, d, "i")
    j = _node_index(j_arg, d, "j")
    if i == j:
        raise ValueError(f"i and j must differ, got i = j = {i}")
    cond_tuple = tuple(_node_index(c, d, "cond entries") for c in cond)
    seen: set[int] = set()
    for c in cond_tuple:
        if c in (i, j):
            raise ValueError(f"cond must not contain i or j, got X{c} in cond {list(cond_tuple)}")
        if c in seen:
            raise ValueError(f"cond has a duplicate entry X{c}: {list(cond_tuple)}")
        seen.add(c)
    columns = [*cond_tuple, i, j]
    bad = [c for c in columns if not np.isfinite(matrix[:, c]).all()]
    if bad:
        raise ValueError(f"data has non-finite values in {', '.join(f'X{c}' for c in bad)}")
    return matrix, i, j, cond_tuple


def _as_data_matrix(data: Any) -> FloatArray:
    try:
        matrix = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"data must be a numeric array: {error}") from None
    if matrix.ndim != 2:
        raise ValueError(
            f"data must be a 2-D array (n_samples, n_variables), got shape {matrix.shape}"
        )
    return matrix


def _node_index(value: Any, d: int, name: str) -> int:
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be an integer node index, got {value!r}")
    try:
        index = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer node index, got {value!r}") from None
    if not 0 <= index < d:
        raise ValueError(f"{name} must be in [0, {d}), got {index}")
    return index


def _require_samples(n: int, needed: int, what: str, cond: tuple[int, ...]) -> None:
    if n < needed:
        raise ValueError(
            f"{what} with |cond| = {len(cond)} needs at least {needed} samples, got n = {n}"
        )


# --------------------------------------------------------------------------- computation


def _partial_correlation(matrix: FloatArray, i: int, j: int, cond: tuple[int, ...]) -> float:
    columns = [*cond, i, j]
    block = matrix[:, columns]
    _reject_constant(block, columns)
    centred = block - block.mean(axis=0)
    scaled = centred / np.linalg.norm(centred, axis=0)
    r_factor = np.asarray(np.linalg.qr(scaled, mode="r"), dtype=np.float64)
    k = len(cond)
    diagonal = np.abs(np.diag(r_factor))
    # R[t, t] is the norm of column t's residual on the columns before it (all unit norm).
    for t in range(k):
        if diagonal[t] <= _COLLINEAR_RTOL:
            raise ValueError(
                f"conditioning variables are collinear in these samples: X{cond[t]} is a linear "
                f"function of {_names(cond[:t])}"
            )
    x_residual = float(r_factor[k, k])
    cross = float(r_factor[k, k + 1])
    if abs(x_residual) <= _COLLINEAR_RTOL:
        raise ValueError(
            f"X{i} is a linear function of the conditioning set {_names(cond)} in these samples"
        )
    y_residual = math.hypot(cross, float(r_factor[k + 1, k + 1]))
    if y_residual <= _COLLINEAR_RTOL:
        raise ValueError(
            f"X{j} is a linear function of the conditioning set {_names(cond)} in these samples"
        )
    # <res_i, res_j> = R[k, k] R[k, k+1]; |res_i| = |R[k, k]|; |res_j| = y_residual.
    r = math.copysign(1.0, x_residual) * cross / y_residual
    return min(max(r, -1.0), 1.0)


def _reject_constant(block: FloatArray, columns: list[int]) -> None:
    spread = np.ptp(block, axis=0)
    scale = np.abs(block).max(axis=0)
    constant = spread <= _CONSTANT_RTOL * scale
    if constant.any():
        names = [f"X{columns[t]}" for t in np.flatnonzero(constant)]
        verb = "is" if len(names) == 1 else "are"
        raise ValueError(f"{', '.join(names)} {verb} constant in these samples")


def _names(nodes: tuple[int, ...]) -> str:
    return "{" + ", ".join(f"X{v}" for v in nodes) + "}"
