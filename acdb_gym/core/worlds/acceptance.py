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
from acdb_gym.core.types import FloatArray, IntArray, readonly
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
ETA_BINS = 16
"""Equal-count bins of the correlation ratio's estimate."""
HIDDEN_UNITS = 8
"""Hidden units of a random network mechanism."""
NODE_REDRAWS = 20
"""Draws of one node's mechanism, on the accepted nodes before it, before a nonlinear world is
abandoned."""
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
#
# Generation is the hot path of a nonlinear reset (about 30 nodes at v1 L5, each with a mechanism
# drawn, calibrated, mapped and checked on 1,000 rows), so the helpers below compute each value
# once (a column's bins and counts per parent, a child's mean and total sum of squares per node,
# a mean shared by its standard deviation) with numpy's own operations on the same shapes:
# every value is bit for bit what ``x.mean()``, ``x.std()`` and a whole-row re-evaluation give,
# so the drawn worlds, and the ladders' manifest digests, do not move.


@dataclass(frozen=True)
class _Bins:
    """A column's :data:`ETA_BINS` bins, their counts and how many are non-empty (what the
    correlation ratio reads of the conditioning variable, shared by all its children)."""

    groups: IntArray
    counts: FloatArray
    """The counts as floats (exact), the type ``counts @ x`` casts them to."""
    divisor: IntArray
    used: int

    @classmethod
    def of(cls, x: FloatArray, bins: int) -> _Bins:
        groups = _bin_groups(x, bins)
        counts = np.bincount(groups, minlength=bins)
        divisor = np.maximum(counts, 1)
        return cls(groups, counts.astype(np.float64), divisor, int(np.count_nonzero(counts)))


@dataclass
class _Calibration:
    """The calibration sample as the generator fills it (column ``j`` holds ``X_j`` once node
    ``j`` is accepted, its noise before) and the bins of the accepted columns."""

    sample: FloatArray
    bins: dict[int, _Bins]

    def bins_of(self, i: int) -> _Bins:
        if i not in self.bins:
            self.bins[i] = _Bins.of(self.sample[:, i], ETA_BINS)
        return self.bins[i]


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
    calibration = _Calibration(calibration_rng.standard_normal((CALIBRATION_SIZE, d)), {})
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
    calibration: _Calibration,
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
            mean, variance = _mean_variance(raw)
            loc, scale = float(mean), float(np.sqrt(variance))
        column = (raw - loc) / scale
        normal_scores = None
        if spec.standardized:
            normal_scores, column = NormalScoreMap.fit_and_map(column)
        sample[:, j] = column
        if mechanism is None:
            return None, loc, scale, normal_scores, math.inf
        # The rule needs every edge to pass: the first failing edge decides a rejection, and
        # no random number is drawn while the edges are read.
        values = _edge_dependences(
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


def _mean_variance(x: FloatArray) -> tuple[float, float]:
    """``x.mean()`` and ``x.var()`` of a 1-D ``x`` with the mean summed once: numpy's own
    steps (a sum divided by the count; the deviations from it squared, summed and divided by
    the count), so both are bit for bit numpy's, and ``np.sqrt`` of the variance is
    ``x.std()``."""
    count = x.size
    mean = np.add.reduce(x) / count
    deviations = x - mean
    np.square(deviations, out=deviations)
    return mean, np.add.reduce(deviations) / count


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
        shapes = tuple(SHAPES[k] for k in rng.integers(len(SHAPES), size=len(parents)))
        terms = np.empty((len(parents), len(sample)))
        for row, p, s in zip(terms, parents, shapes, strict=True):
            row[:] = apply_shape(s, sample[:, p])
        centers, variances, centred = _row_moments(terms)
        spreads = np.maximum(np.sqrt(variances), 1e-12)
        additive = AdditiveMechanism(
            parents,
            shapes,
            readonly_copy(edge_weights),
            readonly(centers),
            readonly(spreads),
        )
        return additive, np.ascontiguousarray(centred.T) @ (edge_weights / spreads)
    hidden_weights = rng.normal(0.0, 1.5 / np.sqrt(len(parents)), (len(parents), HIDDEN_UNITS))
    hidden_bias = rng.uniform(-1.0, 1.0, HIDDEN_UNITS)
    output_weights = rng.normal(0.0, 1.0, HIDDEN_UNITS)
    output = np.tanh(sample[:, list(parents)] @ hidden_weights + hidden_bias) @ output_weights
    center, variance = _mean_variance(output)
    network = NetworkMechanism(
        parents,
        readonly_copy(hidden_weights),
        readonly_copy(hidden_bias),
        readonly_copy(output_weights),
        center=float(center),
        spread=float(max(np.sqrt(variance), 1e-12)),
        gain=float(np.sqrt(np.sum(edge_weights**2))),
    )
    return network, network.gain * (output - network.center) / network.spread


def _bin_groups(x: FloatArray, bins: int) -> IntArray:
    """Bins of the standardized ``x``: ``bins - 2`` of equal width over ``[-2, 2]`` and the two
    tails (no sort, unlike equal-count bins; each holds about 2% or more of a unit-variance
    sample)."""
    mean, variance = _mean_variance(x)
    spread = np.sqrt(variance)
    z = (x - mean) / (spread if spread > 0 else 1.0)
    index = np.floor((z + 2.0) * ((bins - 2) / 4.0)) + 1.0
    # np.clip(index, 0, bins - 1) without its wrappers.
    np.maximum(index, 0.0, out=index)
    np.minimum(index, bins - 1.0, out=index)
    return index.astype(np.int64)


def _eta(bins: _Bins, y: FloatArray, mean: float, total: float) -> float:
    """The adjusted correlation ratio of ``y`` (mean ``mean``, total sum of squares ``total``)
    on ``bins``."""
    if total == 0.0:
        return 0.0
    n = len(y)
    means = np.bincount(bins.groups, weights=y, minlength=len(bins.counts)) / bins.divisor
    between = float(bins.counts @ (means - mean) ** 2)
    adjusted = 1.0 - (1.0 - between / total) * (n - 1) / (n - bins.used)
    return float(np.sqrt(max(adjusted, 0.0)))


def _total(y: FloatArray) -> tuple[float, float]:
    """``y``'s mean (``y.mean()``) and total sum of squares about it."""
    mean = np.add.reduce(y) / y.size
    return mean, float(np.dot(y - mean, y - mean))


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
    return _eta(_Bins.of(x, bins), y, *_total(y))


def _edge_dependences(
    mechanism: Mechanism,
    scale: float,
    calibration: _Calibration,
    j: int,
    *,
    stop_below: float = -math.inf,
) -> FloatArray:
    """Per parent of ``j``, the smaller of ``eta(X_j | X_i)`` and the unique contribution;
    the values up to the first one below ``stop_below`` when one is."""
    sample = calibration.sample
    y = np.ascontiguousarray(sample[:, j])  # the same values and sums, read faster
    mean, total = _total(y)
    unique = _UniqueContributions(mechanism, scale, sample)
    values = np.empty(len(mechanism.parents))
    for index, i in enumerate(mechanism.parents):
        eta = _eta(calibration.bins_of(i), y, mean, total)
        values[index] = eta if eta < stop_below else min(eta, unique(index))
        if values[index] < stop_below:
            return values[: index + 1]
    return values


class _UniqueContributions:
    """The unique contribution of each parent of ``mechanism`` on ``sample`` (module
    docstring), ``scale`` the child's standard deviation before standardization."""

    def __init__(self, mechanism: Mechanism, scale: float, sample: FloatArray) -> None:
        self.mechanism, self.scale, self.sample = mechanism, scale, sample
        self.variances: FloatArray | None = None

    def __call__(self, index: int) -> float:
        mechanism = self.mechanism
        if isinstance(mechanism, AdditiveMechanism):
            # Each term has variance weights[p]**2 on the sample, and an independent copy of
            # the parent doubles it in the difference: sqrt(Var / 2) = |weight|, no evaluation.
            return float(abs(mechanism.weights[index])) / self.scale
        if self.variances is None:
            self.variances = _network_differences(mechanism, self.sample)
        return float(np.sqrt(self.variances[index] / 2.0)) / self.scale


def _network_differences(network: NetworkMechanism, sample: FloatArray) -> FloatArray:
    """Per parent ``i`` of ``network``, ``Var(f(x) - f(x'))`` over the first
    :data:`UNIQUE_ROWS` rows of ``sample`` (enough for a variance, relative error about 6%),
    ``x'`` with ``X_i`` replaced by an independent copy.

    All parents at once: the shifted parent blocks are stacked ``(p, rows, p)``, and numpy
    evaluates a stack block by block with the products, elementwise steps and per-row sums
    of one block, so each variance is bit for bit that of evaluating its block alone.
    """
    parents = network.parents
    rows = sample[:UNIQUE_ROWS][:, list(parents)]
    shifted = np.empty((len(parents), *rows.shape))
    shifted[:] = rows
    for index, parent in enumerate(parents):
        shifted[index, :, index] = _independent_copy(sample[:, parent], len(rows))
    differences = network.of_parents(rows) - network.of_parents(shifted)
    count = differences.shape[1]
    means = np.add.reduce(differences, axis=1) / count
    deviations = differences - means[:, None]
    np.square(deviations, out=deviations)
    return np.asarray(np.add.reduce(deviations, axis=1) / count, dtype=np.float64)


def _independent_copy(x: FloatArray, rows: int) -> FloatArray:
    """The first ``rows`` values of ``x`` rolled by half its length (``np.roll(x, len(x) //
    2)[:rows]``, a slice when the roll does not wrap within them): the values an independent
    copy of the variable takes on those rows."""
    n = len(x)
    shift = n // 2
    if rows <= shift:
        return x[n - shift : n - shift + rows]
    return np.roll(x, shift)[:rows]


def unique_contribution(scm: NonlinearSCM, sample: FloatArray, i: int, j: int) -> float:
    """``sqrt(Var(f_j(x) - f_j(x')) / 2) / scale_j`` where ``x'`` has column ``i`` replaced by an
    independent copy (the column rolled by half the sample; for an additive term, exactly the
    term's weight): the standard deviation of standardized ``X_j`` that ``X_i`` alone moves
    given the other parents."""
    mechanism = scm.mechanisms[j]
    if mechanism is None or i not in mechanism.parents:
        return 0.0
    unique = _UniqueContributions(mechanism, float(scm.scale[j]), sample)
    return unique(mechanism.parents.index(i))


def nonlinear_acceptance(scm: NonlinearSCM, sample: FloatArray, eps: float) -> Acceptance:
    """The nonlinear rule (module docstring) on a whole SCM and a sample of it: every edge's
    correlation ratio and unique contribution are at least ``eps`` (the generator applies the
    same rule node by node as it draws)."""
    calibration = _Calibration(sample, {})
    smallest = math.inf
    for j, mechanism in enumerate(scm.mechanisms):
        if mechanism is not None:
            values = _edge_dependences(mechanism, float(scm.scale[j]), calibration, j)
            smallest = min(smallest, float(values.min()))
    return Acceptance(bool(smallest >= eps), CORRELATION_RATIO, smallest)
