"""The Sachs world fitted to the real cytometry data (DESIGN §3.4).

Each protein's mechanism is fitted on the log cytometry data (``core/data/real/``, all 7,466
rows, each column centred and scaled to unit variance after the log) given its parents in the
Sachs DAG (:func:`~acdb_gym.core.graphs.topology`), by least squares with an intercept:

- ``"linear"``: ``X_j = b_j + sum_i w_ij X_i + r_j``;
- ``"spline"``: an additive regression spline, ``X_j = b_j + sum_i g_ij(X_i) + r_j`` with each
  ``g_ij`` piecewise linear (the parent itself and hinges ``max(0, X_i - t)`` at its 10, 25, 50,
  75 and 90 % quantiles; a ridge of :data:`RIDGE` per row keeps the fit stable), linear beyond
  the data, so interventions outside the observed range extrapolate linearly.

The noise is the data's: ``r_j`` is resampled, independently per variable, from the fit's real
residuals (a root's residuals are its centred values), so it is neither Gaussian nor
homoscedastic by construction. A world samples by ancestral order with resampled residuals;
``do(X_v = value)`` cuts ``v``'s mechanism and sets it to ``value``.

The fit is fixed: what a seed changes is the labelling of the variables (a uniform
permutation, as on every fixed topology) and the samples.

>>> fit = sachs_fit("linear")
>>> fit.dag.n_edges, fit.residuals.shape
(17, (7466, 11))
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

from acdb_gym.core.graphs import DAG, SACHS_PROTEINS, topology
from acdb_gym.core.types import FloatArray, IntArray, readonly
from acdb_gym.core.worlds.checks import check_intervention, check_samples
from acdb_gym.core.worlds.real_experiments import sachs_log_cells
from acdb_gym.core.worlds.soft import SoftKind, into, scale_factor

__all__ = [
    "FIT_KINDS",
    "KNOT_QUANTILES",
    "RIDGE",
    "Fit",
    "FitKind",
    "FittedSCM",
    "fit_quality",
    "sachs_fit",
    "sachs_log_data",
]

FitKind = Literal["linear", "spline"]
"""How each mechanism is fitted: ordinary least squares, or an additive regression spline."""
FIT_KINDS: tuple[FitKind, ...] = get_args(FitKind)

KNOT_QUANTILES = (0.10, 0.25, 0.50, 0.75, 0.90)
"""Where the spline's hinges sit, as quantiles of the parent's data."""

RIDGE = 1e-3
"""The spline fit's ridge penalty per row (on the hinge coefficients, not the intercept)."""


@functools.cache
def sachs_log_data() -> FloatArray:
    """The 7,466 x 11 cytometry matrix, logged and standardized per column (read-only; columns
    in :data:`~acdb_gym.core.graphs.SACHS_PROTEINS` order). Every raw value is at least 1."""
    logged = sachs_log_cells()
    return readonly((logged - logged.mean(axis=0)) / logged.std(axis=0))


def _basis(kind: FitKind, x: FloatArray, knots: FloatArray) -> FloatArray:
    """The design columns of one parent: ``x`` (linear), or ``x`` and its hinges (spline)."""
    if kind == "linear":
        return x[:, None]
    return np.column_stack([x, np.maximum(0.0, x[:, None] - knots[None, :])])


@dataclass(frozen=True, eq=False)
class _Mechanism:
    """One fitted ``X_j = intercept + sum_p basis_p(X_parent_p) . coefficients_p``."""

    parents: tuple[int, ...]
    intercept: float
    knots: FloatArray
    """``(len(parents), K)`` hinge locations (``K = 0`` for a linear fit)."""
    coefficients: FloatArray
    """``(len(parents), K + 1)``: the slope, then one coefficient per hinge."""

    def __call__(self, kind: FitKind, data: FloatArray) -> FloatArray:
        total = np.full(data.shape[0], self.intercept)
        for p, parent in enumerate(self.parents):
            total += _basis(kind, data[:, parent], self.knots[p]) @ self.coefficients[p]
        return total


@dataclass(frozen=True, eq=False)
class Fit:
    """A fitted Sachs model in the proteins' own labelling (node ``i`` is ``SACHS_PROTEINS[i]``).

    Attributes:
        kind: ``"linear"`` or ``"spline"``.
        dag: the Sachs DAG.
        mechanisms: one per protein.
        residuals: ``(7466, 11)`` real residuals (read-only), resampled as the noise.
        r_squared: the in-sample ``R^2`` of each protein's fit (0 for a root).
    """

    kind: FitKind
    dag: DAG
    mechanisms: tuple[_Mechanism, ...]
    residuals: FloatArray
    r_squared: FloatArray
    order: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "order", tuple(int(j) for j in self.dag.topological_order()))

    def linear_weights(self) -> FloatArray:
        """``(d, d)``: each edge's slope term (the whole coefficient of a linear fit)."""
        weights = np.zeros((self.dag.n_nodes,) * 2)
        for j, mechanism in enumerate(self.mechanisms):
            for p, parent in enumerate(mechanism.parents):
                weights[parent, j] = mechanism.coefficients[p, 0]
        return weights

    def parameters(self) -> FloatArray:
        """Every fitted number, for the instance digest."""
        parts = [np.array([m.intercept]) for m in self.mechanisms]
        parts += [m.knots.ravel() for m in self.mechanisms]
        parts += [m.coefficients.ravel() for m in self.mechanisms]
        return np.concatenate(parts)

    def simulate(
        self, n: int, rng: np.random.Generator, *, target: int | None = None, value: float = 0.0
    ) -> FloatArray:
        """``n`` rows in the proteins' labelling; with ``target``, under ``do(target = value)``.

        Draws ``rng.integers(n_real, size=(n, d))`` once (one residual row index per variable
        and sample; the target's column is drawn and unused)."""
        n_real, d = self.residuals.shape
        rows = rng.integers(n_real, size=(n, d))
        noise = self.residuals[rows, np.arange(d)]
        return self.propagate(noise, target=target, value=value)

    def propagate(
        self, noise: FloatArray, *, target: int | None = None, value: float = 0.0
    ) -> FloatArray:
        """Ancestral sampling in place: ``noise`` (residual draws) becomes the samples."""
        for j in self.order:
            if j == target:
                noise[:, j] = value
                continue
            noise[:, j] += self.mechanisms[j](self.kind, noise)
        return noise


def _fit_one(
    kind: FitKind, data: FloatArray, j: int, parents: tuple[int, ...]
) -> tuple[_Mechanism, FloatArray, float]:
    y = data[:, j]
    n_knots = 0 if kind == "linear" else len(KNOT_QUANTILES)
    knots = np.zeros((len(parents), n_knots))
    columns = [np.ones(y.size)]
    for p, parent in enumerate(parents):
        if n_knots:
            knots[p] = np.quantile(data[:, parent], KNOT_QUANTILES)
        columns.extend(_basis(kind, data[:, parent], knots[p]).T)
    design = np.column_stack(columns)
    penalty = np.full(design.shape[1], RIDGE * y.size if kind == "spline" else 0.0)
    penalty[0] = 0.0
    gram = design.T @ design + np.diag(penalty)
    solution = np.linalg.solve(gram, design.T @ y)
    residuals = y - design @ solution
    r_squared = 1.0 - residuals.var() / y.var() if parents else 0.0
    coefficients = solution[1:].reshape(len(parents), n_knots + 1)
    mechanism = _Mechanism(parents, float(solution[0]), readonly(knots), readonly(coefficients))
    return mechanism, residuals, float(r_squared)


@functools.cache
def sachs_fit(kind: FitKind) -> Fit:
    """The Sachs model fitted by ``kind`` (computed once per process, in well under a second)."""
    if kind not in FIT_KINDS:
        raise ValueError(f"fit must be one of {list(FIT_KINDS)}, got {kind!r}")
    data = sachs_log_data()
    dag = topology("sachs").dag
    mechanisms, residuals, r_squared = [], [], []
    for j in range(len(SACHS_PROTEINS)):
        mechanism, residual, r2 = _fit_one(kind, data, j, tuple(int(p) for p in dag.parents(j)))
        mechanisms.append(mechanism)
        residuals.append(residual)
        r_squared.append(r2)
    return Fit(
        kind=kind,
        dag=dag,
        mechanisms=tuple(mechanisms),
        residuals=readonly(np.column_stack(residuals)),
        r_squared=readonly(np.array(r_squared)),
    )


@dataclass(frozen=True, eq=False)
class FittedSCM:
    """A fitted Sachs model under a labelling: protein ``s`` is variable ``order[s]``.

    Follows the other SCMs' interface (``n_nodes``, ``dag``, ``weights``, ``sample``,
    ``sample_do``, ``parameters``); ``weights`` holds the fit's per-edge slopes, relabelled.
    """

    fit: Fit
    order: IntArray
    dag: DAG = field(init=False)
    weights: FloatArray = field(init=False)
    _protein: IntArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        d = self.fit.dag.n_nodes
        order = np.asarray(self.order)
        if sorted(order.tolist()) != list(range(d)):
            raise ValueError(f"order must be a permutation of 0..{d - 1}")
        adjacency = np.zeros((d, d), dtype=np.bool_)
        adjacency[np.ix_(order, order)] = self.fit.dag.adjacency
        weights = np.zeros((d, d))
        weights[np.ix_(order, order)] = self.fit.linear_weights()
        object.__setattr__(self, "dag", DAG(adjacency))
        object.__setattr__(self, "weights", readonly(weights))
        object.__setattr__(self, "_protein", np.argsort(order))

    @property
    def n_nodes(self) -> int:
        """Number of variables ``d``."""
        return self.dag.n_nodes

    def parameters(self) -> FloatArray:
        """The fit's numbers and the labelling, for the instance digest."""
        return np.concatenate([self.fit.parameters(), np.asarray(self.order, dtype=np.float64)])

    def _relabel(self, samples: FloatArray, out: FloatArray | None) -> FloatArray:
        if out is None:
            out = np.empty_like(samples)
        out[:, self.order] = samples
        return out

    def sample(self, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` i.i.d. observational rows, shape ``(n, d)``."""
        check_samples(n)
        return self._relabel(self.fit.simulate(n, rng), None)

    def sample_do(
        self,
        var: int,
        value: float,
        n: int,
        rng: np.random.Generator,
        *,
        out: FloatArray | None = None,
    ) -> FloatArray:
        """``n`` rows under ``do(X_var = value)``."""
        check_intervention(var, value, d=self.n_nodes, n=n)
        protein = int(self._protein[var])
        return self._relabel(self.fit.simulate(n, rng, target=protein, value=float(value)), out)

    def sample_soft(
        self,
        kind: SoftKind,
        var: int,
        value: float,
        n: int,
        rng: np.random.Generator,
        *,
        out: FloatArray | None = None,
    ) -> FloatArray:
        """``n`` rows with ``var``'s residual shifted by ``value`` (``"shift"``) or multiplied by
        :func:`~acdb_gym.core.worlds.soft.scale_factor` of it (``"scale"``)."""
        check_intervention(var, value, d=self.n_nodes, n=n)
        change = float(value) if kind == "shift" else scale_factor(value)
        protein = int(self._protein[var])
        n_real, d = self.fit.residuals.shape
        rows = rng.integers(n_real, size=(n, d))
        noise = self.fit.residuals[rows, np.arange(d)]
        if kind == "shift":
            noise[:, protein] += change
        else:
            noise[:, protein] *= change
        return into(self._relabel(self.fit.propagate(noise), None), out)

    def covariance(self) -> FloatArray:
        """The covariance of a fixed 20,000-row sample (the world's stand-in for Sigma)."""
        return _calibration_covariance(self.fit.kind)[np.ix_(self._protein, self._protein)]


@functools.cache
def _calibration_covariance(kind: FitKind) -> FloatArray:
    return readonly(np.cov(sachs_fit(kind).simulate(20_000, np.random.default_rng(0)).T))


def fit_quality(kind: FitKind, n: int = 7466, seed: int = 0) -> dict[str, float]:
    """How well a fit reproduces the real data: ``n`` simulated observational rows against the
    7,466 real ones. Returns the largest gaps of the per-protein means and standard deviations,
    the mean and largest two-sample Kolmogorov-Smirnov distance of the 11 marginals, the mean
    and largest absolute gap of the 55 correlations, and the mean in-sample ``R^2`` of the
    proteins with parents."""
    real = np.asarray(sachs_log_data())
    simulated = sachs_fit(kind).simulate(n, np.random.default_rng(seed))
    upper = np.triu_indices(real.shape[1], k=1)
    real_corr = np.asarray(np.corrcoef(real.T))
    simulated_corr = np.asarray(np.corrcoef(simulated.T))
    corr_gap = np.abs(real_corr[upper] - simulated_corr[upper])
    ks = []
    for j in range(real.shape[1]):
        grid = np.sort(np.concatenate([real[:, j], simulated[:, j]]))
        a = np.searchsorted(np.sort(real[:, j]), grid, side="right") / real.shape[0]
        b = np.searchsorted(np.sort(simulated[:, j]), grid, side="right") / n
        ks.append(float(np.abs(a - b).max()))
    std_gap = np.abs(real.std(axis=0) - simulated.std(axis=0))
    return {
        "max_abs_mean_gap": float(np.abs(real.mean(axis=0) - simulated.mean(axis=0)).max()),
        "max_abs_std_gap": float(std_gap.max()),
        "mean_ks": float(np.mean(ks)),
        "max_ks": float(np.max(ks)),
        "mean_abs_corr_gap": float(corr_gap.mean()),
        "max_abs_corr_gap": float(corr_gap.max()),
        "mean_r_squared": float(sachs_fit(kind).r_squared[sachs_fit(kind).r_squared > 0].mean()),
    }
