"""A DirectLiNGAM-style estimator for linear non-Gaussian data (Shimizu et al. 2011).

DirectLiNGAM finds a causal order one variable at a time: the most exogenous remaining variable
is the one whose pairwise likelihood ratios against every other remaining variable favour it as
the cause (the ``pwling`` measure of Hyvärinen & Smith, JMLR 2013, with the maximum-entropy
approximation of differential entropy of Hyvärinen 1998); its effect is then regressed out of
the others. The order becomes a DAG by :func:`~acdb_gym.discovery.sortnregress.regress_in_order`
(OLS on all predecessors, significant coefficients kept), the same pruning sortnregress uses, so
the two differ only in how the order is found.

With Gaussian noise the likelihood ratios are zero in the population and the order is noise;
with non-Gaussian noise the DAG is identifiable (the ``linear_nongaussian`` family).

The ``lingam`` package was not used: installing it would change the project's NumPy and SciPy
(measured with ``pip install --dry-run lingam``: numpy 2.2.6, scipy 1.13.1).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.types import FloatArray, IntArray
from acdb_gym.discovery._common import as_data_matrix, check_no_constant_column
from acdb_gym.discovery.sortnregress import regress_in_order

__all__ = ["direct_lingam", "direct_lingam_order"]

# Hyvärinen (1998), maximum-entropy approximation with G1 = log cosh, G2 = u exp(-u^2 / 2).
_K1, _K2, _GAMMA = 79.047, 7.4129, 0.37457
_GAUSSIAN_ENTROPY = 0.5 * (1.0 + np.log(2.0 * np.pi))


def _entropies(u: FloatArray) -> FloatArray:
    """Approximate differential entropy of each standardized column of ``u``."""
    log_cosh = np.log(np.cosh(u)).mean(axis=0)
    gauss = (u * np.exp(-(u**2) / 2.0)).mean(axis=0)
    return np.asarray(_GAUSSIAN_ENTROPY - _K1 * (log_cosh - _GAMMA) ** 2 - _K2 * gauss**2)


def _standardize(x: FloatArray) -> FloatArray:
    return np.asarray((x - x.mean(axis=0)) / x.std(axis=0))


def _most_exogenous(x: FloatArray) -> int:
    """Index (into the columns of ``x``) minimizing ``sum_j min(0, LR(i -> j))^2``."""
    z = _standardize(x)
    n_columns = z.shape[1]
    if n_columns == 1:
        return 0
    rho = (z.T @ z) / len(z)
    entropy = _entropies(z)
    scores = np.zeros(n_columns)
    for i in range(n_columns):
        others = [j for j in range(n_columns) if j != i]
        # Residuals of j on i and of i on j, each scaled to unit variance.
        r_ji = z[:, others] - z[:, [i]] * rho[i, others]
        r_ij = z[:, [i]] - z[:, others] * rho[i, others]
        spread = np.sqrt(np.maximum(1.0 - rho[i, others] ** 2, 1e-12))
        ratio = entropy[others] + _entropies(r_ij / spread) - entropy[i] - _entropies(r_ji / spread)
        scores[i] = float(np.sum(np.minimum(0.0, ratio) ** 2))
    return int(np.argmin(scores))


def direct_lingam_order(data: ArrayLike) -> IntArray:
    """The causal order DirectLiNGAM finds in ``data`` ``(n_samples, d)``, first cause first.

    >>> rng = np.random.default_rng(0)
    >>> x0 = rng.uniform(-1, 1, 2000)
    >>> x1 = 0.8 * x0 + rng.uniform(-1, 1, 2000)
    >>> direct_lingam_order(np.column_stack([x1, x0])).tolist()
    [1, 0]
    """
    x = as_data_matrix(data, "data").copy()
    check_no_constant_column(x, "data")
    remaining = list(range(x.shape[1]))
    order: list[int] = []
    while remaining:
        pick = _most_exogenous(x[:, remaining])
        root = remaining.pop(pick)
        order.append(root)
        if remaining:
            cause = x[:, root] - x[:, root].mean()
            block = x[:, remaining] - x[:, remaining].mean(axis=0)
            x[:, remaining] = block - np.outer(cause, cause @ block / (cause @ cause))
    return np.asarray(order, dtype=np.int64)


def direct_lingam(data: ArrayLike, *, alpha: float = 0.01) -> PDAG:
    """A fully directed DAG: :func:`direct_lingam_order`, then the significant coefficients of
    OLS on all predecessors (:func:`~acdb_gym.discovery.sortnregress.regress_in_order`)."""
    return regress_in_order(data, direct_lingam_order(data), alpha=alpha)
