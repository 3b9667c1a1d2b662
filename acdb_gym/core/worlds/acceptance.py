"""Worlds of the SCM families beyond linear-Gaussian and their acceptance rules (DESIGN §3.1).

:func:`draw_world` turns one drawn graph and weight matrix into a family's SCM and decides
whether the world is faithful enough to keep, as the linear-Gaussian generator does with
partial correlations (DESIGN §3, step 4):

- ``linear_nongaussian``: the linear-Gaussian SCM of the same weights (standardized like v1 when
  the spec says so) with each variable's noise drawn from uniform, Laplace or Gumbel (one kind
  per variable, uniformly, all of mean 0 and variance 1). The covariance is the Gaussian one, so
  the acceptance rule is the linear rule on the same population partial correlations.
- ``nonlinear``: an additive-noise model ``X_j = f_j(pa_j) + e_j``, Gaussian ``e_j``, where each
  non-root ``f_j`` is, with probability 1/2 each, a random one-hidden-layer tanh network or a sum
  of per-parent shapes (``tanh``, ``sin`` bounded; ``softplus``, ``square`` unbounded). Each
  per-parent term (or the network) is scaled by the drawn edge weights, so parents contribute
  about as much variance as in the linear worlds, and every variable is standardized as it is
  generated with the mean and standard deviation of a fixed-seed calibration sample of
  :data:`CALIBRATION_SIZE` rows.

The nonlinear acceptance rule reads two dependences per true edge ``i -> j`` on that sample,
both on the scale of a correlation (they equal ``|rho|`` and the standardized weight for a linear
world): the **correlation ratio** ``eta(X_j | X_i) = sqrt(Var E[X_j | X_i] / Var X_j)`` (Pearson's
eta, estimated with :data:`ETA_BINS` equal-count bins of ``X_i`` and adjusted for the number of
bins like an adjusted R^2), which sees any dependence of the mean, not only linear; and the
**unique contribution** ``sqrt(Var(f_j(x) - f_j(x with x_i replaced by an independent
copy)) / 2)`` of ``X_i`` to standardized ``X_j``, which is small when the mechanism barely uses
``X_i`` given the other parents. A world is accepted when both are at least
``spec.faithfulness_eps`` on every edge; the instance records the smallest as its covariate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from acdb_gym.core.graphs import DAG
from acdb_gym.core.types import FloatArray, IntArray
from acdb_gym.core.worlds.faithfulness import is_faithful, min_relevant_partial_correlation
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.core.worlds.mechanisms import (
    NOISE_KINDS,
    SCM,
    SHAPES,
    AdditiveMechanism,
    LinearNonGaussianSCM,
    Mechanism,
    NetworkMechanism,
    NonlinearSCM,
    apply_shape,
    readonly_copy,
)
from acdb_gym.core.worlds.spec import LINEAR_NONGAUSSIAN, NONLINEAR, LevelSpec

__all__ = [
    "CALIBRATION_SIZE",
    "CORRELATION_RATIO",
    "ETA_BINS",
    "HIDDEN_UNITS",
    "PARTIAL_CORRELATION",
    "Acceptance",
    "World",
    "correlation_ratio",
    "draw_world",
    "linear_acceptance",
    "nonlinear_acceptance",
    "unique_contribution",
]

PARTIAL_CORRELATION = "partial_correlation"
"""The linear families' covariate: smallest PC-relevant population ``|rho|``."""
CORRELATION_RATIO = "correlation_ratio"
"""The nonlinear family's covariate: smallest per-edge correlation ratio or unique contribution."""

CALIBRATION_SIZE = 1000
"""Rows of the nonlinear generator's fixed-seed calibration sample."""
ETA_BINS = 16
"""Equal-count bins of the correlation ratio's estimate."""
HIDDEN_UNITS = 8
"""Hidden units of a random network mechanism."""
UNIQUE_ROWS = 500
"""Calibration rows a network mechanism's unique contributions are estimated on."""


@dataclass(frozen=True)
class Acceptance:
    """An acceptance rule's decision on one world and the covariate it read."""

    accepted: bool
    measure: str
    min_dependence: float


@dataclass(frozen=True)
class World:
    """A drawn SCM and the acceptance rule's decision on it."""

    scm: SCM | None
    """None for a nonlinear world abandoned at its first failing edge."""
    acceptance: Acceptance


def draw_world(
    spec: LevelSpec,
    dag: DAG,
    weights: FloatArray,
    rng: np.random.Generator,
    calibration_rng: np.random.Generator,
) -> World:
    """The ``spec.family`` world over ``dag`` with the drawn ``weights`` (DESIGN §3.1).

    Args:
        spec: the level; ``spec.family`` must not be ``"linear_gaussian"`` (the instance
            generator's own path).
        dag: the drawn graph.
        weights: the drawn signed edge weights (zero off the graph).
        rng: the weight stream, for the family's further choices (noise kinds, mechanisms).
        calibration_rng: the nonlinear family's calibration-sample stream.
    """
    if spec.family == LINEAR_NONGAUSSIAN:
        linear = _linear_scm(spec, weights)
        kinds = tuple(NOISE_KINDS[k] for k in rng.integers(len(NOISE_KINDS), size=spec.d))
        scm = LinearNonGaussianSCM(linear, kinds)
        return World(scm, linear_acceptance(dag, linear.covariance(), spec.faithfulness_eps))
    if spec.family == NONLINEAR:
        nonlinear, acceptance = _nonlinear_scm(spec, dag, weights, rng, calibration_rng)
        return World(nonlinear, acceptance)
    raise ValueError(f"draw_world draws the families beyond linear-Gaussian, got {spec.family!r}")


def _linear_scm(spec: LevelSpec, weights: FloatArray) -> LinearGaussianSCM:
    if spec.standardized:
        return LinearGaussianSCM.standardized(weights, spec.noise_var)
    return LinearGaussianSCM(weights, np.full(spec.d, np.sqrt(spec.noise_var)))


def linear_acceptance(dag: DAG, cov: FloatArray, eps: float) -> Acceptance:
    """The linear rule (:func:`~acdb_gym.core.worlds.faithfulness.is_faithful`) on a population
    covariance, with the smallest PC-relevant ``|rho|`` as covariate (computed when accepted)."""
    accepted = is_faithful(dag, cov, eps)
    smallest = min_relevant_partial_correlation(dag, cov) if accepted else math.nan
    return Acceptance(accepted, PARTIAL_CORRELATION, smallest)


# --------------------------------------------------------------------------- nonlinear worlds


def _nonlinear_scm(
    spec: LevelSpec,
    dag: DAG,
    weights: FloatArray,
    rng: np.random.Generator,
    calibration_rng: np.random.Generator,
) -> tuple[NonlinearSCM | None, Acceptance]:
    """The SCM and the rule's decision, made node by node in topological order on the
    calibration sample; a world is abandoned at the first edge that fails (None)."""
    d = spec.d
    sample = calibration_rng.standard_normal((CALIBRATION_SIZE, d))
    noise_std = np.full(d, np.sqrt(spec.noise_var))
    loc, scale = np.zeros(d), np.ones(d)
    mechanisms: list[Mechanism | None] = [None] * d
    groups: dict[int, IntArray] = {}
    smallest = math.inf
    for j in dag.topological_order():
        parents = tuple(int(p) for p in dag.parents(j))
        raw = sample[:, j] * noise_std[j]
        mechanism = None
        if parents:
            mechanism, values = _draw_mechanism(parents, weights[list(parents), j], rng, sample)
            raw += values
        if spec.standardized:
            loc[j], scale[j] = raw.mean(), raw.std()
        sample[:, j] = (raw - loc[j]) / scale[j]
        mechanisms[j] = mechanism
        if mechanism is not None:
            dependence = _edge_dependences(mechanism, float(scale[j]), sample, j, groups)
            smallest = min(smallest, float(dependence.min()))
            if smallest < spec.faithfulness_eps:
                return None, Acceptance(False, CORRELATION_RATIO, smallest)
    scm = NonlinearSCM(
        dag=dag,
        mechanisms=tuple(mechanisms),
        noise_std=readonly_copy(noise_std),
        loc=readonly_copy(loc),
        scale=readonly_copy(scale),
        weights=readonly_copy(weights),
    )
    return scm, Acceptance(True, CORRELATION_RATIO, smallest)


def _draw_mechanism(
    parents: tuple[int, ...],
    edge_weights: FloatArray,
    rng: np.random.Generator,
    sample: FloatArray,
) -> tuple[Mechanism, FloatArray]:
    """An additive or network mechanism, centred and scaled on the calibration ``sample``, and
    its values there."""
    if rng.random() < 0.5:
        shapes = tuple(SHAPES[k] for k in rng.integers(len(SHAPES), size=len(parents)))
        terms = np.column_stack(
            [apply_shape(s, sample[:, p]) for p, s in zip(parents, shapes, strict=True)]
        )
        centers = terms.mean(axis=0)
        spreads = np.maximum(terms.std(axis=0), 1e-12)
        additive = AdditiveMechanism(
            parents,
            shapes,
            readonly_copy(edge_weights),
            readonly_copy(centers),
            readonly_copy(spreads),
        )
        return additive, (terms - centers) @ (edge_weights / spreads)
    hidden_weights = rng.normal(0.0, 1.5 / np.sqrt(len(parents)), (len(parents), HIDDEN_UNITS))
    hidden_bias = rng.uniform(-1.0, 1.0, HIDDEN_UNITS)
    output_weights = rng.normal(0.0, 1.0, HIDDEN_UNITS)
    output = np.tanh(sample[:, list(parents)] @ hidden_weights + hidden_bias) @ output_weights
    network = NetworkMechanism(
        parents,
        readonly_copy(hidden_weights),
        readonly_copy(hidden_bias),
        readonly_copy(output_weights),
        center=float(output.mean()),
        spread=float(max(output.std(), 1e-12)),
        gain=float(np.sqrt(np.sum(edge_weights**2))),
    )
    return network, network.gain * (output - network.center) / network.spread


def _bin_groups(x: FloatArray, bins: int) -> IntArray:
    """Bins of the standardized ``x``: ``bins - 2`` of equal width over ``[-2, 2]`` and the two
    tails (no sort, unlike equal-count bins; each holds about 2% or more of a unit-variance
    sample)."""
    spread = x.std()
    z = (x - x.mean()) / (spread if spread > 0 else 1.0)
    index = np.floor((z + 2.0) * ((bins - 2) / 4.0)) + 1.0
    return np.clip(index, 0, bins - 1).astype(np.int64)


def _eta(groups: IntArray, y: FloatArray, bins: int) -> float:
    n = len(y)
    counts = np.bincount(groups, minlength=bins)
    means = np.bincount(groups, weights=y, minlength=bins) / np.maximum(counts, 1)
    mean = y.mean()
    total = float(np.dot(y - mean, y - mean))
    if total == 0.0:
        return 0.0
    between = float(counts @ (means - mean) ** 2)
    used = int(np.count_nonzero(counts))
    adjusted = 1.0 - (1.0 - between / total) * (n - 1) / (n - used)
    return float(np.sqrt(max(adjusted, 0.0)))


def correlation_ratio(x: FloatArray, y: FloatArray, *, bins: int = ETA_BINS) -> float:
    """Pearson's correlation ratio ``eta(y | x)``: ``sqrt(Var E[y | x] / Var y)`` with
    ``E[y | x]`` estimated by the means of ``y`` over ``bins`` bins of standardized ``x``
    (``bins - 2`` of equal width over ``[-2, 2]`` and the two tails), adjusted for the number
    ``b`` of non-empty bins like an adjusted R^2 (``1 - (1 - eta^2) (n - 1) / (n - b)``,
    floored at 0).

    >>> x = np.linspace(-1, 1, 1000)
    >>> noise = np.random.default_rng(0).normal(size=1000)
    >>> round(correlation_ratio(x, x**2), 2), correlation_ratio(x, noise) < 0.1
    (0.98, True)
    """
    return _eta(_bin_groups(x, bins), y, bins)


def _edge_dependences(
    mechanism: Mechanism, scale: float, sample: FloatArray, j: int, groups: dict[int, IntArray]
) -> FloatArray:
    """Per parent of ``j``, the smaller of ``eta(X_j | X_i)`` and the unique contribution."""
    values = np.empty(len(mechanism.parents))
    for index, i in enumerate(mechanism.parents):
        if i not in groups:
            groups[i] = _bin_groups(sample[:, i], ETA_BINS)
        eta = _eta(groups[i], sample[:, j], ETA_BINS)
        values[index] = min(eta, _unique(mechanism, scale, sample, index))
    return values


def _unique(mechanism: Mechanism, scale: float, sample: FloatArray, index: int) -> float:
    if isinstance(mechanism, AdditiveMechanism):
        # Each term has variance weights[p]**2 on the sample, and an independent copy of the
        # parent doubles it in the difference: sqrt(Var / 2) = |weight|, no evaluation needed.
        return float(abs(mechanism.weights[index])) / scale
    # The first UNIQUE_ROWS rows suffice for a variance (relative error about 6%).
    rows = sample[:UNIQUE_ROWS]
    shifted = rows.copy()
    parent = mechanism.parents[index]
    shifted[:, parent] = np.roll(sample[:, parent], len(sample) // 2)[:UNIQUE_ROWS]
    delta = mechanism(rows) - mechanism(shifted)
    return float(np.sqrt(delta.var() / 2.0)) / scale


def unique_contribution(scm: NonlinearSCM, sample: FloatArray, i: int, j: int) -> float:
    """``sqrt(Var(f_j(x) - f_j(x')) / 2) / scale_j`` where ``x'`` has column ``i`` replaced by an
    independent copy (the column rolled by half the sample; for an additive term, exactly the
    term's weight): the standard deviation of standardized ``X_j`` that ``X_i`` alone moves
    given the other parents."""
    mechanism = scm.mechanisms[j]
    if mechanism is None or i not in mechanism.parents:
        return 0.0
    return _unique(mechanism, float(scm.scale[j]), sample, mechanism.parents.index(i))


def nonlinear_acceptance(scm: NonlinearSCM, sample: FloatArray, eps: float) -> Acceptance:
    """The nonlinear rule (module docstring) on a whole SCM and a sample of it: every edge's
    correlation ratio and unique contribution are at least ``eps`` (the generator applies the
    same rule node by node as it draws)."""
    groups: dict[int, IntArray] = {}
    smallest = math.inf
    for j, mechanism in enumerate(scm.mechanisms):
        if mechanism is not None:
            values = _edge_dependences(mechanism, float(scm.scale[j]), sample, j, groups)
            smallest = min(smallest, float(values.min()))
    return Acceptance(bool(smallest >= eps), CORRELATION_RATIO, smallest)
