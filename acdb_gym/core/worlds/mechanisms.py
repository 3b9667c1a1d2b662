"""SCMs beyond linear-Gaussian: linear with non-Gaussian noise, and nonlinear additive-noise models
(DESIGN §3.1).

Both follow :class:`~acdb_gym.core.worlds.linear.LinearGaussianSCM`'s interface (``n_nodes``, ``dag``,
``weights``, ``sample``, ``sample_do``), draw one row of noise per sample from the generator as
it does (``(n, d)`` values per call, column ``var`` unused under ``do(X_var = value)``), and set
the intervened column to ``value`` exactly.

>>> linear = LinearGaussianSCM(np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([1.0, 1.0]))
>>> scm = LinearNonGaussianSCM(linear, ("uniform", "laplace"))
>>> bool((scm.sample_do(0, 2.0, 3, np.random.default_rng(0))[:, 0] == 2.0).all())
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

from acdb_gym.core.graphs import DAG
from acdb_gym.core.types import FloatArray, readonly
from acdb_gym.core.worlds.checks import check_intervention, check_samples
from acdb_gym.core.worlds.fitted import FittedSCM
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.core.worlds.normal_scores import NormalScoreMap
from acdb_gym.core.worlds.soft import SoftKind, into, linear_soft, scale_factor

__all__ = [
    "NOISE_KINDS",
    "SCM",
    "SHAPES",
    "AdditiveMechanism",
    "LinearNonGaussianSCM",
    "Mechanism",
    "NetworkMechanism",
    "NoiseKind",
    "NonlinearSCM",
    "NormalScoreMap",
    "Shape",
    "apply_shape",
    "standardized_noise",
]

NoiseKind = Literal["uniform", "laplace", "gumbel"]
"""A non-Gaussian noise distribution, always scaled to mean 0 and variance 1."""
NOISE_KINDS: tuple[NoiseKind, ...] = get_args(NoiseKind)

Shape = Literal["tanh", "sin", "softplus", "square"]
"""A per-parent function of an additive mechanism: two bounded, two unbounded."""
SHAPES: tuple[Shape, ...] = get_args(Shape)

_EULER_GAMMA = 0.5772156649015329


def standardized_noise(kinds: Sequence[NoiseKind], n: int, rng: np.random.Generator) -> FloatArray:
    """``(n, len(kinds))`` independent noise, column ``j`` of kind ``kinds[j]``, each with mean 0
    and variance 1, by inverse CDFs of one ``rng.random((n, d))`` draw (so every kind consumes
    the generator alike)."""
    u = rng.random((n, len(kinds)))
    noise = np.empty_like(u)
    for j, kind in enumerate(kinds):
        column = u[:, j]
        if kind == "uniform":
            noise[:, j] = np.sqrt(3.0) * (2.0 * column - 1.0)
        elif kind == "laplace":
            centred = column - 0.5
            # Laplace(0, b) has variance 2 b^2; b = 1/sqrt(2). 1 - 2|c| > 0 as u < 1.
            noise[:, j] = -np.sign(centred) * np.log1p(-2.0 * np.abs(centred)) / np.sqrt(2.0)
        elif kind == "gumbel":
            # u = 0 has probability 2^-53 per value; clip it so the log stays finite.
            gumbel = -np.log(-np.log(np.maximum(column, 1e-300)))
            noise[:, j] = (gumbel - _EULER_GAMMA) / (np.pi / np.sqrt(6.0))
        else:
            raise ValueError(f"noise kind must be one of {list(NOISE_KINDS)}, got {kind!r}")
    return noise


@dataclass(frozen=True, eq=False)
class LinearNonGaussianSCM:
    """``X_j = sum_i W[i, j] X_i + noise_std[j] e_j`` with ``e_j`` of kind ``noise_kinds[j]``
    (mean 0, variance 1): the weights and noise scales of ``linear``, so the covariance, and
    every population partial correlation, are those of ``linear``.

    Args:
        linear: the linear-Gaussian SCM whose weights and noise scales are used.
        noise_kinds: one :data:`NoiseKind` per variable.
    """

    linear: LinearGaussianSCM
    noise_kinds: tuple[NoiseKind, ...]

    def __post_init__(self) -> None:
        if len(self.noise_kinds) != self.linear.n_nodes:
            raise ValueError(f"need {self.linear.n_nodes} noise kinds, got {len(self.noise_kinds)}")
        for kind in self.noise_kinds:
            if kind not in NOISE_KINDS:
                raise ValueError(f"noise kind must be one of {list(NOISE_KINDS)}, got {kind!r}")

    @property
    def n_nodes(self) -> int:
        """Number of variables ``d``."""
        return self.linear.n_nodes

    @property
    def dag(self) -> DAG:
        """The causal graph."""
        return self.linear.dag

    @property
    def weights(self) -> FloatArray:
        """The weight matrix (read-only)."""
        return self.linear.weights

    @property
    def noise_std(self) -> FloatArray:
        """The noise scales (read-only)."""
        return self.linear.noise_std

    def covariance(self) -> FloatArray:
        """Population covariance (that of :attr:`linear`)."""
        return self.linear.covariance()

    def parameters(self) -> FloatArray:
        """Every generated number, for the instance digest (the noise kinds are coded 0, 1, 2)."""
        codes = np.array([NOISE_KINDS.index(kind) for kind in self.noise_kinds], dtype=np.float64)
        return np.concatenate([self.weights.ravel(), self.noise_std, codes])

    def sample(self, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` i.i.d. observational rows, shape ``(n, d)``."""
        check_samples(n)
        noise = standardized_noise(self.noise_kinds, n, rng) * self.noise_std
        return noise @ self.linear.mixing

    def sample_do(
        self,
        var: int,
        value: float,
        n: int,
        rng: np.random.Generator,
        *,
        out: FloatArray | None = None,
    ) -> FloatArray:
        """``n`` rows under ``do(X_var = value)``: the noise with column ``var`` set to ``value``,
        times the linear SCM's :meth:`~acdb_gym.core.worlds.linear.LinearGaussianSCM.do_matrix`."""
        check_intervention(var, value, d=self.n_nodes, n=n)
        noise = standardized_noise(self.noise_kinds, n, rng)
        noise[:, var] = float(value)
        return np.dot(noise, self.linear.do_matrix(var), out=out)

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
        """``n`` rows under a soft intervention (:mod:`acdb_gym.core.worlds.soft`): the
        observational draw, plus the change of ``X_var``'s noise carried to its descendants."""
        noise = standardized_noise(self.noise_kinds, n, rng) * self.noise_std
        return linear_soft(noise, self.linear.mixing, self.weights, kind, var, value, out)


def apply_shape(kind: str, x: FloatArray) -> FloatArray:
    """The :data:`Shape` ``kind`` applied to ``x``."""
    if kind == "tanh":
        return np.tanh(2.0 * x)
    if kind == "sin":
        return np.sin(2.0 * x)
    if kind == "softplus":
        return np.logaddexp(0.0, 2.0 * x)
    if kind == "square":
        return x * x
    raise ValueError(f"shape must be one of {list(SHAPES)}, got {kind!r}")


@dataclass(frozen=True, eq=False)
class AdditiveMechanism:
    """``f(x) = sum_p weights[p] (g_p(x_parents[p]) - centers[p]) / spreads[p]``, each ``g_p`` a
    :data:`Shape`; ``centers``/``spreads`` make each term mean 0 and variance ``weights[p]**2``
    on the calibration sample."""

    parents: tuple[int, ...]
    shapes: tuple[Shape, ...]
    weights: FloatArray
    centers: FloatArray
    spreads: FloatArray

    def __call__(self, data: FloatArray) -> FloatArray:
        """The mechanism's value on every row of the full ``(n, d)`` ``data``."""
        total = np.zeros(data.shape[0])
        terms = zip(
            self.shapes,
            self.parents,
            self.centers.tolist(),
            self.spreads.tolist(),
            self.weights.tolist(),
            strict=True,
        )
        for shape, parent, center, spread, weight in terms:
            term = apply_shape(shape, data[:, parent])  # a new array, scaled in place
            term -= center
            term /= spread
            term *= weight
            total += term
        return total

    def parameters(self) -> FloatArray:
        """Every number, for the instance digest."""
        codes = np.array([SHAPES.index(shape) for shape in self.shapes], dtype=np.float64)
        return np.concatenate([codes, self.weights, self.centers, self.spreads])

    @classmethod
    def from_parameters(cls, parents: tuple[int, ...], values: FloatArray) -> AdditiveMechanism:
        """The mechanism on ``parents`` whose :meth:`parameters` are ``values``."""
        p = len(parents)
        shapes = tuple(SHAPES[int(code)] for code in values[:p])
        weights, centers, spreads = (
            readonly_copy(values[(1 + i) * p : (2 + i) * p]) for i in range(3)
        )
        return cls(parents, shapes, weights, centers, spreads)


@dataclass(frozen=True, eq=False)
class NetworkMechanism:
    """A random one-hidden-layer tanh network,
    ``f(x) = gain (tanh(x_parents A + b) v - center) / spread``."""

    parents: tuple[int, ...]
    hidden_weights: FloatArray
    hidden_bias: FloatArray
    output_weights: FloatArray
    center: float
    spread: float
    gain: float

    def __call__(self, data: FloatArray) -> FloatArray:
        """The mechanism's value on every row of the full ``(n, d)`` ``data``."""
        return self.of_parents(data[:, list(self.parents)])

    def of_parents(self, values: FloatArray) -> FloatArray:
        """The mechanism's value on ``(n, len(parents))`` parent ``values`` (C-ordered, the
        layout ``data[:, parents]`` has, so the products are those of a call on ``data``)."""
        hidden = np.tanh(values @ self.hidden_weights + self.hidden_bias)
        return np.asarray(
            self.gain * (hidden @ self.output_weights - self.center) / self.spread,
            dtype=np.float64,
        )

    def parameters(self) -> FloatArray:
        """Every number, for the instance digest."""
        scalars = np.array([self.center, self.spread, self.gain])
        return np.concatenate(
            [self.hidden_weights.ravel(), self.hidden_bias, self.output_weights, scalars]
        )

    @classmethod
    def from_parameters(cls, parents: tuple[int, ...], values: FloatArray) -> NetworkMechanism:
        """The mechanism on ``parents`` whose :meth:`parameters` are ``values``."""
        p = len(parents)
        hidden = (values.size - 3) // (p + 2)
        if hidden * (p + 2) + 3 != values.size:
            raise ValueError(f"{values.size} network parameters do not fit {p} parents")
        return cls(
            parents,
            readonly_copy(values[: p * hidden].reshape(p, hidden)),
            readonly_copy(values[p * hidden : (p + 1) * hidden]),
            readonly_copy(values[(p + 1) * hidden : (p + 2) * hidden]),
            center=float(values[-3]),
            spread=float(values[-2]),
            gain=float(values[-1]),
        )


Mechanism = AdditiveMechanism | NetworkMechanism


@dataclass(frozen=True, eq=False)
class NonlinearSCM:
    """``X_j = g_j((f_j(X_pa(j)) + noise_std[j] e_j - loc[j]) / scale[j])``, ``e_j ~ N(0, 1)``,
    generated in topological order (``f_j`` is None for a root; ``g_j`` is the identity unless
    ``normal_scores`` holds a :class:`NormalScoreMap` for ``j``).

    ``loc``/``scale`` standardize each variable as it is generated (estimated on the generator's
    calibration sample), so marginal scale carries no order information; the normal-score maps
    (v2 of the family) make each marginal standard normal, so marginal shape (range, kurtosis,
    skewness) carries none either.

    Args:
        dag: the causal graph; ``mechanisms[j].parents`` must equal its parents of ``j``.
        mechanisms: one per variable.
        noise_std, loc, scale: ``(d,)`` arrays; ``noise_std`` and ``scale`` positive.
        weights: ``(d, d)``, the signed per-edge magnitudes the mechanisms were drawn with
            (zero off the graph); a record for leak checks, not used to sample.
        normal_scores: one :class:`NormalScoreMap` per variable, or None (the identity).
    """

    dag: DAG
    mechanisms: tuple[Mechanism | None, ...]
    noise_std: FloatArray
    loc: FloatArray
    scale: FloatArray
    weights: FloatArray
    normal_scores: tuple[NormalScoreMap, ...] | None = None
    _order: tuple[int, ...] = field(init=False, repr=False)
    """The topological order sampling follows, derived once."""

    def __post_init__(self) -> None:
        d = self.dag.n_nodes
        for j, (mechanism, column) in enumerate(
            zip(self.mechanisms, self.dag.adjacency.T, strict=True)
        ):
            parents = tuple(np.flatnonzero(column).tolist())
            got = () if mechanism is None else tuple(mechanism.parents)
            if got != parents:
                raise ValueError(f"mechanism {j} reads {got}, but the parents of {j} are {parents}")
        for name in ("noise_std", "loc", "scale"):
            if np.shape(getattr(self, name)) != (d,):
                raise ValueError(f"{name} must have shape ({d},)")
        if (np.asarray(self.scale) <= 0).any() or (np.asarray(self.noise_std) <= 0).any():
            raise ValueError("noise_std and scale must be positive")
        if self.normal_scores is not None and len(self.normal_scores) != d:
            raise ValueError(f"need {d} normal-score maps, got {len(self.normal_scores)}")
        object.__setattr__(self, "_order", tuple(int(j) for j in self.dag.topological_order()))

    @property
    def n_nodes(self) -> int:
        """Number of variables ``d``."""
        return self.dag.n_nodes

    def parameters(self) -> FloatArray:
        """Every generated number, for the instance digest."""
        parts = [self.weights.ravel(), self.noise_std, self.loc, self.scale]
        parts += [m.parameters() for m in self.mechanisms if m is not None]
        parts += [g.parameters() for g in self.normal_scores or ()]
        return np.concatenate(parts)

    def propagate(
        self,
        noise: FloatArray,
        *,
        target: int | None = None,
        shift: tuple[int, float] | None = None,
    ) -> FloatArray:
        """Ancestral sampling in place: ``noise`` ``(n, d)`` standard normal becomes the samples;
        column ``target`` (already holding its value) is left as it is, and ``shift = (j,
        delta)`` adds ``delta`` to ``X_j`` as it is generated (after its normal-score map, so
        its children see the moved value)."""
        for j in self._order:
            if j == target:
                continue
            mechanism = self.mechanisms[j]
            raw = noise[:, j] * self.noise_std[j]
            if mechanism is not None:
                raw += mechanism(noise)
            standardized = (raw - self.loc[j]) / self.scale[j]
            if self.normal_scores is not None:
                standardized = self.normal_scores[j](standardized)
            if shift is not None and shift[0] == j:
                standardized += shift[1]
            noise[:, j] = standardized
        return noise

    def sample(self, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` i.i.d. observational rows, shape ``(n, d)``."""
        check_samples(n)
        return self.propagate(rng.standard_normal((n, self.n_nodes)))

    def sample_do(
        self,
        var: int,
        value: float,
        n: int,
        rng: np.random.Generator,
        *,
        out: FloatArray | None = None,
    ) -> FloatArray:
        """``n`` rows under ``do(X_var = value)`` by ancestral sampling with ``f_var`` cut."""
        check_intervention(var, value, d=self.n_nodes, n=n)
        noise = rng.standard_normal((n, self.n_nodes))
        noise[:, var] = float(value)
        samples = self.propagate(noise, target=var)
        if out is None:
            return samples
        out[...] = samples
        return out

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
        """``n`` rows under a soft intervention (:mod:`acdb_gym.core.worlds.soft`): ancestral
        sampling with ``X_var`` shifted as it is generated, or its noise scaled."""
        noise = rng.standard_normal((n, self.n_nodes))
        if kind == "shift":
            return into(self.propagate(noise, shift=(var, value)), out)
        noise[:, var] *= scale_factor(value)
        return into(self.propagate(noise), out)


SCM = LinearGaussianSCM | LinearNonGaussianSCM | NonlinearSCM | FittedSCM
"""Any family's SCM (DESIGN §3.1), or the fitted Sachs world (§3.4)."""


def readonly_copy(array: FloatArray) -> FloatArray:
    """A read-only float64 copy (mechanism arrays are frozen once drawn)."""
    return readonly(np.array(array, dtype=np.float64, copy=True))
