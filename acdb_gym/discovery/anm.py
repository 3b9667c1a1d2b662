"""Orientation by additive noise models (ANM; Hoyer et al. 2009, Mooij et al. 2016).

If ``Y = f(X) + E`` with ``E`` independent of ``X``, the backward model ``X = g(Y) + E'`` has, in
general, a residual that depends on ``Y``. :func:`anm_direction` fits a nonparametric regression
each way and measures how independent each residual is of its regressor with HSIC; the
direction whose residual is more independent wins (ANM-HSIC).

The regression is Gaussian-kernel ridge regression on standardized data: the bandwidth is the
median distance between the inputs (the median heuristic) and the ridge is chosen from
:data:`RIDGES` by exact leave-one-out error, computed from one eigendecomposition of the kernel.
HSIC uses Gaussian kernels of median bandwidth and Gretton et al.'s (2008) gamma approximation
of its null distribution for the p-value. Everything is deterministic.

>>> rng = np.random.default_rng(0)
>>> x = rng.uniform(-2, 2, 300)
>>> y = np.tanh(2 * x) + 0.2 * rng.uniform(-1, 1, 300)
>>> anm_direction(x, y).forward
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from acdb_gym.core.graphs import PDAG, has_directed_path
from acdb_gym.core.types import FloatArray
from acdb_gym.discovery._common import check_full_rank_data
from acdb_gym.discovery.pc import shared_pc_cpdag

__all__ = ["RIDGES", "AnmDecision", "anm_direction", "anm_graph", "hsic_test", "kernel_residuals"]

RIDGES: tuple[float, ...] = tuple(float(r) for r in np.logspace(-4, 1, 11))
"""The ridge penalties the regression chooses from (by leave-one-out error)."""

MAX_ROWS = 1000
"""Rows used at most (the first ``MAX_ROWS``; the samples are already random): the kernel's
eigendecomposition costs ``O(n^3)``."""


@dataclass(frozen=True)
class AnmDecision:
    """The two fits of a pair ``(x, y)``.

    Attributes:
        p_forward: HSIC p-value of the residual of ``y`` on ``x`` against ``x``.
        p_backward: HSIC p-value of the residual of ``x`` on ``y`` against ``y``.
        hsic_forward: the HSIC statistic of the forward fit (ties of p-values break on it).
        hsic_backward: the HSIC statistic of the backward fit.
    """

    p_forward: float
    p_backward: float
    hsic_forward: float
    hsic_backward: float

    @property
    def forward(self) -> bool:
        """Whether ``x -> y`` is chosen: the larger p-value, then the smaller statistic."""
        if self.p_forward != self.p_backward:
            return self.p_forward > self.p_backward
        return self.hsic_forward <= self.hsic_backward

    @property
    def confidence(self) -> float:
        """``|log p_forward - log p_backward|`` (0 when they tie)."""
        floor = 1e-300
        return abs(np.log(max(self.p_forward, floor)) - np.log(max(self.p_backward, floor)))


def _standardized(values: FloatArray) -> FloatArray:
    sd = values.std()
    return (values - values.mean()) / (sd if sd > 0 else 1.0)


def _gaussian_kernel(values: FloatArray) -> FloatArray:
    """The Gaussian kernel matrix of a 1-d sample with the median-distance bandwidth."""
    distances = np.abs(values[:, None] - values[None, :])
    positive = distances[distances > 0]
    width = float(np.median(positive)) if positive.size else 1.0
    return np.exp(-(distances**2) / (2.0 * width**2))


def kernel_residuals(x: FloatArray, y: FloatArray) -> FloatArray:
    """Residuals of Gaussian-kernel ridge regression of ``y`` on ``x`` (both standardized), the
    ridge chosen from :data:`RIDGES` by exact leave-one-out error."""
    x, y = _standardized(np.asarray(x, float)), _standardized(np.asarray(y, float))
    eigenvalues, vectors = np.linalg.eigh(_gaussian_kernel(x))
    eigenvalues = np.clip(eigenvalues, 0.0, None)
    projected = vectors.T @ y
    best, best_error = y, np.inf
    for ridge in RIDGES:
        shrink = eigenvalues / (eigenvalues + ridge)
        fitted = vectors @ (shrink * projected)
        leverage = (vectors**2) @ shrink
        loo = (y - fitted) / np.clip(1.0 - leverage, 1e-12, None)
        error = float(np.mean(loo**2))
        if error < best_error:
            best, best_error = y - fitted, error
    return best


def hsic_test(x: FloatArray, y: FloatArray) -> tuple[float, float]:
    """The HSIC statistic of two 1-d samples (Gaussian kernels, median bandwidths) and its
    p-value under independence by the gamma approximation (Gretton et al. 2008)."""
    n = x.shape[0]
    kx, ky = _gaussian_kernel(np.asarray(x, float)), _gaussian_kernel(np.asarray(y, float))
    kc, lc = _double_centred(kx), _double_centred(ky)
    statistic = float(np.sum(kc * lc)) / n
    mu_x = (kx.sum() - n) / (n * (n - 1))
    mu_y = (ky.sum() - n) / (n * (n - 1))
    mean = (1.0 + mu_x * mu_y - mu_x - mu_y) / n
    variance_terms = (kc * lc / 6.0) ** 2
    variance = (variance_terms.sum() - np.trace(variance_terms)) / (n * (n - 1))
    variance *= 72.0 * (n - 4) * (n - 5) / (n * (n - 1) * (n - 2) * (n - 3))
    if not (variance > 0 and mean > 0):
        return statistic, 1.0
    shape, scale = mean**2 / variance, n * variance / mean
    from scipy import stats  # imported when used: it costs a few tenths of a second

    return statistic, float(stats.gamma.sf(statistic, shape, scale=scale))


def _double_centred(kernel: FloatArray) -> FloatArray:
    """``H K H`` with ``H = I - 1/n``, from the row, column and grand means."""
    rows = kernel.mean(axis=0)
    return kernel - rows[None, :] - rows[:, None] + rows.mean()


def anm_direction(x: FloatArray, y: FloatArray) -> AnmDecision:
    """Fit ``y`` on ``x`` and ``x`` on ``y`` (the first :data:`MAX_ROWS` rows) and test each
    residual's independence of its regressor.

    Raises:
        ValueError: fewer than 6 rows, or a constant variable.
    """
    data = np.column_stack([np.asarray(x, float), np.asarray(y, float)])[:MAX_ROWS]
    check_full_rank_data(data, "anm data")
    if data.shape[0] < 6:
        raise ValueError(f"anm needs at least 6 rows, got {data.shape[0]}")
    a, b = _standardized(data[:, 0]), _standardized(data[:, 1])
    hsic_f, p_f = hsic_test(a, kernel_residuals(a, b))
    hsic_b, p_b = hsic_test(b, kernel_residuals(b, a))
    return AnmDecision(p_f, p_b, hsic_f, hsic_b)


def anm_graph(data: FloatArray, *, alpha: float = 0.05) -> PDAG:
    """A graph with every adjacency oriented by :func:`anm_direction`.

    With two variables the one pair is always an adjacency (a cause-effect pair is oriented,
    never tested for independence); with more, the adjacencies are PC's (Fisher-z at
    ``alpha``), oriented in decreasing :attr:`AnmDecision.confidence`, and an orientation
    that would close a directed cycle leaves its edge undirected.
    """
    array = np.asarray(data, dtype=np.float64)
    d = array.shape[1]
    skeleton = (
        np.ones((2, 2), dtype=bool) & ~np.eye(2, dtype=bool)
        if d == 2
        else np.asarray(shared_pc_cpdag(array, alpha=alpha).skeleton())
    )
    pairs = [(i, j) for i in range(d) for j in range(i + 1, d) if skeleton[i, j]]
    decisions = [(anm_direction(array[:, i], array[:, j]), i, j) for i, j in pairs]
    decisions.sort(key=lambda item: -item[0].confidence)
    directed = np.zeros((d, d), dtype=bool)
    undirected = np.zeros((d, d), dtype=bool)
    for decision, i, j in decisions:
        cause, effect = (i, j) if decision.forward else (j, i)
        if has_directed_path(directed, effect, cause):
            undirected[i, j] = undirected[j, i] = True
        else:
            directed[cause, effect] = True
    return PDAG(directed, undirected)
