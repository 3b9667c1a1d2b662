"""Linear-Gaussian structural causal models (DESIGN §3).

Row-vector convention: a sample is a row ``x`` with ``x = x W + e``, so ``W[i, j]`` is the effect
of ``X_i`` on ``X_j`` and a batch of samples is ``X = E (I - W)^{-1}``.

>>> scm = LinearGaussianSCM(np.array([[0.0, 2.0], [0.0, 0.0]]), np.array([1.0, 1.0]))
>>> scm.covariance().tolist()
[[1.0, 2.0], [2.0, 5.0]]
>>> data = scm.sample_do(0, 3.0, 4, np.random.default_rng(0))
>>> bool((data[:, 0] == 3.0).all())
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from acdb_gym.core.graphs import DAG
from acdb_gym.core.types import FloatArray, readonly

__all__ = ["LinearGaussianSCM"]


@dataclass(frozen=True, eq=False)
class LinearGaussianSCM:
    """``X_j = sum_i W[i, j] X_i + e_j`` with independent ``e_j ~ N(0, noise_std[j]**2)``.

    Args:
        weights: ``(d, d)`` float matrix whose support is a DAG (``W[i, j] != 0`` iff ``i -> j``).
        noise_std: ``(d,)`` positive noise standard deviations.
    """

    weights: FloatArray
    noise_std: FloatArray
    _mixing: FloatArray = field(init=False, repr=False)
    """``(I - W)^{-1}``, derived from ``weights`` once (see :attr:`mixing`)."""

    def __post_init__(self) -> None:
        weights = np.array(self.weights, dtype=np.float64, copy=True)
        noise_std = np.array(self.noise_std, dtype=np.float64, copy=True)
        d = weights.shape[0]
        if weights.shape != (d, d):
            raise ValueError(f"weights must be square, got shape {weights.shape}")
        if noise_std.shape != (d,):
            raise ValueError(f"noise_std must have shape ({d},), got {noise_std.shape}")
        if not (np.isfinite(weights).all() and np.isfinite(noise_std).all()):
            raise ValueError("weights and noise_std must be finite")
        if (noise_std <= 0).any():
            raise ValueError(f"noise_std must be positive, got {noise_std.tolist()}")
        DAG(weights != 0)  # raises CycleError / ValueError on a bad support
        object.__setattr__(self, "weights", readonly(weights))
        object.__setattr__(self, "noise_std", readonly(noise_std))
        mixing = np.linalg.inv(np.eye(d) - self.weights)
        object.__setattr__(self, "_mixing", readonly(mixing))

    @classmethod
    def standardized(cls, weights: FloatArray, noise_var: float) -> LinearGaussianSCM:
        """The internally standardized SCM of ``weights`` with noise variance ``noise_var``.

        Variables are generated in topological order and each is divided by its population
        standard deviation as it is generated, so every variable has unit variance and the
        variance ordering carries no information about the causal order. The result is again a
        linear-Gaussian SCM, with rescaled weights and noise.
        """
        raw = np.asarray(weights, dtype=np.float64)
        dag = DAG(raw != 0)
        d = dag.n_nodes
        scaled = np.zeros_like(raw)
        noise_std = np.zeros(d)
        cov = np.zeros((d, d))
        for j in dag.topological_order():
            column = raw[:, j]
            variance = float(column @ cov @ column) + noise_var
            scale = np.sqrt(variance)
            scaled[:, j] = column / scale
            noise_std[j] = np.sqrt(noise_var) / scale
            cross = scaled[:, j] @ cov
            cov[j, :] = cross
            cov[:, j] = cross
            cov[j, j] = 1.0
        return cls(scaled, noise_std)

    @property
    def n_nodes(self) -> int:
        """Number of variables ``d``."""
        return int(self.weights.shape[0])

    @property
    def dag(self) -> DAG:
        """The causal graph (support of ``weights``)."""
        return DAG(self.weights != 0)

    @property
    def mixing(self) -> FloatArray:
        """``(I - W)^{-1}`` (read-only): row ``i`` holds the total effects of ``X_i`` on every
        variable, and a batch of samples is ``E @ mixing``."""
        return self._mixing

    def do_matrix(self, var: int) -> FloatArray:
        """The ``(d, d)`` matrix ``A`` with ``samples = z @ A`` under ``do(X_var = value)``, where
        ``z`` is standard normal noise whose column ``var`` was overwritten with ``value``.

        Cutting the in-edges of ``var`` changes ``M = (I - W)^{-1}`` by a rank-one term:
        ``M_cut = M - M[:, var] M[var, :]`` off row ``var``, and ``M_cut[var] = M[var]``. So row
        ``k != var`` of ``A`` is ``noise_std[k] * M_cut[k]``, and row ``var`` is ``M[var]`` (it
        multiplies ``value``). With the diagonal of ``M`` set to exactly 1, column ``var`` is the
        unit vector, so the intervened column equals ``value`` exactly. No inverse per target.
        """
        if not 0 <= var < self.n_nodes:
            raise ValueError(f"var must be in [0, {self.n_nodes}), got {var}")
        mixing = self._mixing.copy()
        mixing.reshape(-1)[:: self.n_nodes + 1] = 1.0  # exact (inv may be off by an ulp)
        scaled = self.noise_std[:, None] * mixing
        matrix = scaled - np.outer(scaled[:, var], mixing[var])
        matrix[var] = mixing[var]
        return readonly(matrix)

    def covariance(self) -> FloatArray:
        """Population covariance ``(I - W)^{-T} diag(noise_std**2) (I - W)^{-1}``."""
        mixing = self._mixing
        return readonly((mixing.T * self.noise_std**2) @ mixing)

    def sample(self, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` i.i.d. observational rows, shape ``(n, d)``."""
        _check_n(n)
        noise = rng.standard_normal((n, self.n_nodes)) * self.noise_std
        return noise @ self._mixing

    def sample_do(self, var: int, value: float, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` rows under the hard intervention ``do(X_var = value)``, shape ``(n, d)``.

        The in-edges of ``var`` are cut and its column equals ``value`` exactly: standard normal
        noise with column ``var`` set to ``value``, times :meth:`do_matrix`. A session draws the
        same samples from the same generator (through matrices it keeps per SCM).
        """
        _check_n(n)
        if not 0 <= var < self.n_nodes:
            raise ValueError(f"var must be in [0, {self.n_nodes}), got {var}")
        if not np.isfinite(value):
            raise ValueError(f"value must be finite, got {value}")
        noise = rng.standard_normal((n, self.n_nodes))
        noise[:, var] = float(value)
        # np.dot, as the session's sampler, so both give the same bits.
        return np.dot(noise, self.do_matrix(var))


def _check_n(n: int) -> None:
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
