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

_MIXING = -1
"""Key of ``(I - W)^{-1}`` in the SCM's matrix cache."""
_DO_BLOCK_MAX_D = 32
"""Largest ``d`` whose do-matrices are made all at once (the block is ``8 d^3`` bytes)."""


@dataclass(frozen=True, eq=False)
class LinearGaussianSCM:
    """``X_j = sum_i W[i, j] X_i + e_j`` with independent ``e_j ~ N(0, noise_std[j]**2)``.

    Args:
        weights: ``(d, d)`` float matrix whose support is a DAG (``W[i, j] != 0`` iff ``i -> j``).
        noise_std: ``(d,)`` positive noise standard deviations.
    """

    weights: FloatArray
    noise_std: FloatArray
    _mixing: dict[int, FloatArray] = field(default_factory=dict, init=False, repr=False)
    _do_matrices: list[FloatArray | None] = field(default_factory=list, init=False, repr=False)
    """Each target's do-matrix (see :meth:`_do_matrix`), or None until made."""

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

    def _mixing_matrix(self) -> FloatArray:
        """``(I - W)^{-1}``: row ``i`` holds the total effects of ``X_i`` on every variable."""
        cached = self._mixing.get(_MIXING)
        if cached is None:
            cached = readonly(np.linalg.inv(np.eye(self.n_nodes) - self.weights))
            self._mixing[_MIXING] = cached
        return cached

    def prepare_interventions(self) -> None:
        """Make the matrices :meth:`sample_do` needs now rather than on its first call (for
        ``d <= 32``, every target's at once; above that, each is made on its first use)."""
        if self.n_nodes <= _DO_BLOCK_MAX_D:
            self._do_matrix(0)

    def _do_matrix(self, var: int) -> FloatArray:
        """The ``(d, d)`` matrix ``A`` with ``samples = z @ A`` under ``do(X_var = value)``, where
        ``z`` is standard normal noise whose column ``var`` was overwritten with ``value``.

        Cutting the in-edges of ``var`` changes ``M = (I - W)^{-1}`` by a rank-one term:
        ``M_cut = M - M[:, var] M[var, :]`` off row ``var``, and ``M_cut[var] = M[var]``. So row
        ``k != var`` of ``A`` is ``noise_std[k] * M_cut[k]``, and row ``var`` is ``M[var]`` (it
        multiplies ``value``). With the diagonal of ``M`` set to exactly 1, column ``var`` is the
        unit vector, so the intervened column equals ``value`` exactly. No inverse per target:
        for ``d <= 32`` every target's matrix is made at once on first use (one ``(d, d, d)``
        block), above that one at a time.
        """
        matrices = self._do_matrices
        if matrices and matrices[var] is not None:
            return matrices[var]  # type: ignore[return-value]
        d = self.n_nodes
        if not matrices:
            matrices.extend([None] * d)
        mixing = self._mixing_matrix().copy()
        mixing.reshape(-1)[:: d + 1] = 1.0  # the exact diagonal (inv may be off by an ulp)
        scaled = self.noise_std[:, None] * mixing
        if d <= _DO_BLOCK_MAX_D:
            # block[v] = scaled - scaled[:, v] (outer) mixing[v]. Column v is then exactly 0 and
            # so is row v (scaled[v] - scaled[v, v] mixing[v], with mixing[v, v] = 1), which
            # becomes mixing[v]: rows (v, v) of the (d*d, d) view, a plain strided slice.
            block = np.empty((d, d, d))  # C order, so the reshape below is a view
            np.multiply(scaled.T[:, :, None], mixing[:, None, :], out=block)
            np.subtract(scaled[None, :, :], block, out=block)
            block.reshape(d * d, d)[:: d + 1] = mixing
            matrices[:] = list(readonly(block))
            return matrices[var]  # type: ignore[return-value]
        matrix = scaled - np.outer(scaled[:, var], mixing[var])
        matrix[var] = mixing[var]
        matrices[var] = readonly(matrix)
        return matrix

    def covariance(self) -> FloatArray:
        """Population covariance ``(I - W)^{-T} diag(noise_std**2) (I - W)^{-1}``."""
        mixing = self._mixing_matrix()
        return readonly((mixing.T * self.noise_std**2) @ mixing)

    def sample(self, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` i.i.d. observational rows, shape ``(n, d)``."""
        _check_n(n)
        noise = rng.standard_normal((n, self.n_nodes)) * self.noise_std
        return noise @ self._mixing_matrix()

    def sample_do(
        self,
        var: int,
        value: float,
        n: int,
        rng: np.random.Generator,
        *,
        out: FloatArray | None = None,
    ) -> FloatArray:
        """``n`` rows under the hard intervention ``do(X_var = value)``, shape ``(n, d)``.

        The in-edges of ``var`` are cut and its column equals ``value`` exactly. ``out``: a
        writable C-contiguous float64 ``(n, d)`` array to write the rows into (returned).
        """
        _check_n(n)
        if not 0 <= var < self.n_nodes:
            raise ValueError(f"var must be in [0, {self.n_nodes}), got {var}")
        if not np.isfinite(value):
            raise ValueError(f"value must be finite, got {value}")
        return self._draw_do(var, float(value), n, rng, out)

    def _draw_do(
        self, var: int, value: float, n: int, rng: np.random.Generator, out: FloatArray | None
    ) -> FloatArray:
        """:meth:`sample_do` without the argument checks (the session has made them)."""
        # The cached matrix read here, not through _do_matrix: one call fewer per step.
        matrices = self._do_matrices
        matrix = matrices[var] if matrices else None
        noise = rng.standard_normal((n, len(self.noise_std)))
        noise[:, var] = value
        # np.dot, not matmul: half the call overhead at the ladder's small sizes.
        return np.dot(noise, self._do_matrix(var) if matrix is None else matrix, out=out)


def _check_n(n: int) -> None:
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
