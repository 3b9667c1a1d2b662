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
from itertools import pairwise

import numpy as np

from acdb_gym.core.graphs import DAG
from acdb_gym.core.types import FloatArray, readonly
from acdb_gym.core.worlds.dependence import (
    ETA_BINS,
    Calibration,
    correlation_ratio,
    edge_dependences,
    mean_variance,
    unique_contribution,
)
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
    NormalScoreMap,
    apply_shape,
    readonly_copy,
)
from acdb_gym.core.worlds.spec import LINEAR_NONGAUSSIAN, NONLINEAR, LevelSpec

__all__ = [
    "CALIBRATION_SIZE",
    "CORRELATION_RATIO",
    "ETA_BINS",
    "HIDDEN_UNITS",
    "NODE_REDRAWS",
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
HIDDEN_UNITS = 8
"""Hidden units of a random network mechanism."""
NODE_REDRAWS = 20
"""Draws of one node's mechanism, on the accepted nodes before it, before a nonlinear world is
abandoned."""


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
    *,
    accepted_linear: tuple[LinearGaussianSCM, FloatArray] | None = None,
) -> World:
    """The ``spec.family`` world over ``dag`` with the drawn ``weights`` (DESIGN §3.1).

    Args:
        spec: the level; ``spec.family`` must not be ``"linear_gaussian"`` (the instance
            generator's own path).
        dag: the drawn graph.
        weights: the drawn signed edge weights (zero off the graph).
        rng: the weight stream, for the family's further choices (noise kinds, mechanisms).
        calibration_rng: the nonlinear family's calibration-sample stream.
        accepted_linear: the linear-Gaussian SCM of ``weights`` and its covariance when they
            were already built and accepted under the linear rule (the paired generator passes
            the linear-Gaussian instance's), so the non-Gaussian family, whose covariance and
            rule they are, neither rebuilds nor re-checks them.
    """
    if spec.family == LINEAR_NONGAUSSIAN:
        linear, cov = accepted_linear or (_linear_scm(spec, weights), None)
        kinds = tuple(NOISE_KINDS[k] for k in rng.integers(len(NOISE_KINDS), size=spec.d))
        scm = LinearNonGaussianSCM(linear, kinds)
        if cov is None:
            return World(scm, linear_acceptance(dag, linear.covariance(), spec.faithfulness_eps))
        smallest = min_relevant_partial_correlation(dag, cov)
        return World(scm, Acceptance(True, PARTIAL_CORRELATION, smallest))
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
    calibration sample: a node's mechanism is redrawn (at most :data:`NODE_REDRAWS` times)
    until every edge into it passes, else the world is abandoned (None)."""
    d = spec.d
    calibration = Calibration(calibration_rng.standard_normal((CALIBRATION_SIZE, d)), {})
    noise_std = np.full(d, np.sqrt(spec.noise_var))
    loc, scale = np.zeros(d), np.ones(d)
    maps: list[NormalScoreMap | None] = [None] * d
    mechanisms: list[Mechanism | None] = [None] * d
    smallest = math.inf
    parents = _parents_of_each(dag)
    for j in dag.topological_order().tolist():
        node = _accepted_node(spec, parents[j], weights, j, noise_std[j], calibration, rng)
        if node is None:
            return None, Acceptance(False, CORRELATION_RATIO, math.nan)
        mechanisms[j], loc[j], scale[j], maps[j], dependence = node
        smallest = min(smallest, dependence)
    scm = NonlinearSCM(
        dag=dag,
        mechanisms=tuple(mechanisms),
        noise_std=readonly_copy(noise_std),
        loc=readonly_copy(loc),
        scale=readonly_copy(scale),
        weights=readonly_copy(weights),
        normal_scores=_all_maps(maps) if spec.standardized else None,
    )
    return scm, Acceptance(True, CORRELATION_RATIO, smallest)


_Node = tuple[Mechanism | None, float, float, NormalScoreMap | None, float]
"""A node's accepted mechanism, ``loc``, ``scale``, normal-score map and smallest dependence."""


def _parents_of_each(dag: DAG) -> list[tuple[int, ...]]:
    """Every node's parents, ascending (``dag.parents(j)`` for each ``j``, in one pass)."""
    children, parents = np.nonzero(dag.adjacency.T)
    bounds = np.searchsorted(children, np.arange(dag.n_nodes + 1)).tolist()
    flat = parents.tolist()
    return [tuple(flat[start:stop]) for start, stop in pairwise(bounds)]


def _accepted_node(
    spec: LevelSpec,
    parents: tuple[int, ...],
    weights: FloatArray,
    j: int,
    noise_std: float,
    calibration: Calibration,
    rng: np.random.Generator,
) -> _Node | None:
    """Node ``j``'s first mechanism (on ``parents``) whose edges all pass the rule, with column
    ``j`` of the calibration sample (its noise on entry) replaced by the node's values; None when
    :data:`NODE_REDRAWS` draws all fail."""
    sample = calibration.sample
    noise = sample[:, j] * noise_std
    for _ in range(NODE_REDRAWS if parents else 1):
        raw = noise
        mechanism = None
        if parents:
            mechanism, values = _draw_mechanism(parents, weights[list(parents), j], rng, sample)
            raw = noise + values
        loc, scale = 0.0, 1.0
        if spec.standardized:
            mean, variance = mean_variance(raw)
            loc, scale = float(mean), math.sqrt(variance)
        column = (raw - loc) / scale
        normal_scores = None
        if spec.standardized:
            normal_scores, column = NormalScoreMap.fit_and_map(column)
        sample[:, j] = column
        if mechanism is None:
            return None, loc, scale, normal_scores, math.inf
        # The rule needs every edge to pass: the first failing edge decides a rejection, and
        # no random number is drawn while the edges are read.
        values = edge_dependences(
            mechanism, scale, calibration, j, stop_below=spec.faithfulness_eps
        )
        dependence = float(values.min())
        if dependence >= spec.faithfulness_eps:
            return mechanism, loc, scale, normal_scores, dependence
    return None


def _all_maps(maps: list[NormalScoreMap | None]) -> tuple[NormalScoreMap, ...]:
    """Every node's map (each node of a standardized world has one)."""
    if any(m is None for m in maps):
        raise AssertionError("a standardized nonlinear world has a map per node")
    return tuple(m for m in maps if m is not None)


def _row_moments(rows: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per row of ``rows`` (one term per row), its mean, its variance and the row minus its
    mean: bit for bit what ``terms.mean(axis=0)``, ``terms.var(axis=0)`` and ``terms -
    terms.mean(axis=0)`` give for the ``(n, p)`` C-ordered ``terms = rows.T``, where numpy
    sums each column row after row (one row at a time for ``p >= 2``, pairwise for ``p = 1``,
    whose single column is contiguous); a running sum along each contiguous row is that same
    sequence of additions without the strided walk."""
    count = rows.shape[1]

    def sums(x: FloatArray) -> FloatArray:
        if len(x) == 1:
            return np.add.reduce(x, axis=1)
        return np.add.accumulate(x, axis=1)[:, -1]

    mean = sums(rows) / count
    centred = rows - mean[:, None]
    return mean, sums(np.square(centred)) / count, centred


def _draw_mechanism(
    parents: tuple[int, ...],
    edge_weights: FloatArray,
    rng: np.random.Generator,
    sample: FloatArray,
) -> tuple[Mechanism, FloatArray]:
    """An additive or network mechanism, centred and scaled on the calibration ``sample``, and
    its values there."""
    if rng.random() < 0.5:
        shapes = tuple(SHAPES[k] for k in rng.integers(len(SHAPES), size=len(parents)).tolist())
        terms = np.empty((len(parents), len(sample)))
        for row, p, s in zip(terms, parents, shapes, strict=True):
            row[:] = apply_shape(s, sample[:, p])
        centers, variances, centred = _row_moments(terms)
        spreads = np.maximum(np.sqrt(variances), 1e-12)
        additive = AdditiveMechanism(
            parents,
            shapes,
            readonly(edge_weights),
            readonly(centers),
            readonly(spreads),
        )
        return additive, np.ascontiguousarray(centred.T) @ (edge_weights / spreads)
    hidden_weights = rng.normal(0.0, 1.5 / np.sqrt(len(parents)), (len(parents), HIDDEN_UNITS))
    hidden_bias = rng.uniform(-1.0, 1.0, HIDDEN_UNITS)
    output_weights = rng.normal(0.0, 1.0, HIDDEN_UNITS)
    output = np.tanh(sample[:, list(parents)] @ hidden_weights + hidden_bias) @ output_weights
    center, variance = mean_variance(output)
    network = NetworkMechanism(
        parents,
        readonly(hidden_weights),
        readonly(hidden_bias),
        readonly(output_weights),
        center=float(center),
        spread=max(math.sqrt(variance), 1e-12),
        gain=math.sqrt(np.sum(edge_weights**2)),
    )
    return network, network.gain * (output - network.center) / network.spread


def nonlinear_acceptance(scm: NonlinearSCM, sample: FloatArray, eps: float) -> Acceptance:
    """The nonlinear rule (module docstring) on a whole SCM and a sample of it: every edge's
    correlation ratio and unique contribution are at least ``eps`` (the generator applies the
    same rule node by node as it draws)."""
    calibration = Calibration(sample, {})
    smallest = math.inf
    for j, mechanism in enumerate(scm.mechanisms):
        if mechanism is not None:
            values = edge_dependences(mechanism, float(scm.scale[j]), calibration, j)
            smallest = min(smallest, float(values.min()))
    return Acceptance(bool(smallest >= eps), CORRELATION_RATIO, smallest)
