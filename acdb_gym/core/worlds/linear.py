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

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from acdb_gym.core.graphs import DAG
from acdb_gym.core.types import FloatArray, IntArray, readonly
from acdb_gym.core.worlds.checks import check_intervention, check_samples
from acdb_gym.core.worlds.soft import SoftKind, linear_soft

__all__ = [
    "DO_MATRIX_MAX_D",
    "STANDARDIZE_BY_NODE_MAX_D",
    "LinearGaussianSCM",
    "generations",
    "rank_one_do",
    "standardize_by_generation",
    "unit_scaled_mixing",
]

DO_MATRIX_MAX_D = 40
"""Largest ``d`` whose interventional samples are drawn through the target's do-matrix
(:meth:`LinearGaussianSCM.do_matrix`); larger worlds draw through :func:`rank_one_do`.

Both give the same samples in exact arithmetic but not the same bits, and every published result
(the v0 and v1 ladders, the family ladders, the d = 40 custom level) has ``d <= 40``, so those
keep their bits; above 40 no published row depends on them (DESIGN §3).
"""

STANDARDIZE_BY_NODE_MAX_D = 499
"""Largest ``d`` standardized node by node (:meth:`LinearGaussianSCM.standardized`); larger
worlds are standardized a generation at a time (:func:`standardize_by_generation`).

Both give the same weights in exact arithmetic, and about 5% of them differ in the last bit;
digests round the weights to 12 decimals, yet 1 of the large ladder's 150 manifest worlds at
d = 50 to 200 and 6 of the real ladder's 1,000 DREAM4 worlds (d = 100) would change, so every
shipped manifest below d = 500 keeps the node-by-node bits. At d = 500 (the large ladder's L4)
all 50 manifest digests are the same either way, so L4 takes the generation method (it was
node by node until the CHANGELOG's entry of issue 32, 2.5 times slower; weights may differ in the
last bit from then, digests do not).
"""


@dataclass(frozen=True, eq=False)
class LinearGaussianSCM:
    """``X_j = sum_i W[i, j] X_i + e_j`` with independent ``e_j ~ N(0, noise_std[j]**2)``.

    Args:
        weights: ``(d, d)`` float matrix whose support is a DAG (``W[i, j] != 0`` iff ``i -> j``).
        noise_std: ``(d,)`` positive noise standard deviations.
    """

    weights: FloatArray
    noise_std: FloatArray

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
    def _valid(cls, weights: FloatArray, noise_std: FloatArray) -> LinearGaussianSCM:
        """An SCM from fresh finite arrays whose support is a subgraph of a DAG and whose noise
        is positive by construction (a draw's weights on its graph), without the checks: the
        support's cycle check costs as much as drawing the weights."""
        scm = object.__new__(cls)
        object.__setattr__(scm, "weights", readonly(np.array(weights, dtype=np.float64)))
        object.__setattr__(scm, "noise_std", readonly(np.array(noise_std, dtype=np.float64)))
        return scm

    @cached_property
    def _mixing(self) -> FloatArray:
        """``(I - W)^{-1}``, inverted on first use (a world the faithfulness check rejects is
        never sampled from)."""
        return readonly(np.linalg.inv(np.eye(self.n_nodes) - self.weights))

    @staticmethod
    def invert_together(scms: Sequence[LinearGaussianSCM]) -> None:
        """Give every SCM without its ``(I - W)^{-1}`` yet that inverse, the SCMs of one size
        inverted in one stacked ``np.linalg.inv`` call: the same LAPACK call on each matrix, so
        the same bits as each inverting its own on first use."""
        by_size: dict[int, list[LinearGaussianSCM]] = {}
        for scm in scms:
            if "_mixing" not in scm.__dict__:
                by_size.setdefault(scm.n_nodes, []).append(scm)
        for members in by_size.values():
            cuts = np.eye(members[0].n_nodes) - np.stack([scm.weights for scm in members])
            for scm, mixing in zip(members, np.linalg.inv(cuts), strict=True):
                scm.__dict__["_mixing"] = readonly(mixing)

    @classmethod
    def standardized(cls, weights: FloatArray, noise_var: float) -> LinearGaussianSCM:
        """The internally standardized SCM of ``weights`` with noise variance ``noise_var``.

        Variables are generated in topological order and each is divided by its population
        standard deviation as it is generated, so every variable has unit variance and the
        variance ordering carries no information about the causal order. The result is again a
        linear-Gaussian SCM, with rescaled weights and noise.

        Worlds with ``d <= STANDARDIZE_BY_NODE_MAX_D`` are standardized node by node (the bits
        of every shipped manifest below d = 500); larger ones a generation at a time
        (:func:`standardize_by_generation`), the same values in exact arithmetic without a
        ``d x d`` product per node.
        """
        raw = np.asarray(weights, dtype=np.float64)
        dag = DAG(raw != 0)
        if dag.n_nodes > STANDARDIZE_BY_NODE_MAX_D:
            return cls(*standardize_by_generation(raw, dag, noise_var)[:2])
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

    @classmethod
    def standardized_with_covariance(
        cls, weights: FloatArray, noise_var: float
    ) -> tuple[LinearGaussianSCM, FloatArray]:
        """:meth:`standardized` and its population covariance: :meth:`covariance` up to
        ``STANDARDIZE_BY_NODE_MAX_D``, above it the covariance the standardization computed."""
        raw = np.asarray(weights, dtype=np.float64)
        if raw.shape[0] > STANDARDIZE_BY_NODE_MAX_D:
            scaled, noise_std, covariance = standardize_by_generation(raw, DAG(raw != 0), noise_var)
            return cls(scaled, noise_std), readonly(covariance)
        scm = cls.standardized(raw, noise_var)
        return scm, scm.covariance()

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

    def precision(self) -> sparse.csr_array:
        """Population precision ``(I - W) diag(noise_std**-2) (I - W)^T``, sparse: its entries
        are nonzero only on the diagonal, the edges and between co-parents, so it costs about
        ``O(k)`` where inverting the covariance costs ``O(d^3)``."""
        cut = sparse.csr_array(sparse.eye_array(self.n_nodes) - sparse.csr_array(self.weights))
        return sparse.csr_array((cut * self.noise_std**-2) @ cut.T)

    def sample(self, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` i.i.d. observational rows, shape ``(n, d)``."""
        check_samples(n)
        noise = rng.standard_normal((n, self.n_nodes)) * self.noise_std
        return noise @ self._mixing

    def sample_do(self, var: int, value: float, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` rows under the hard intervention ``do(X_var = value)``, shape ``(n, d)``.

        The in-edges of ``var`` are cut and its column equals ``value`` exactly: standard normal
        noise with column ``var`` set to ``value``, times :meth:`do_matrix` for
        ``d <= DO_MATRIX_MAX_D``, and :func:`rank_one_do` above. A session draws the same samples
        from the same generator (through matrices it keeps per SCM).
        """
        check_intervention(var, value, d=self.n_nodes, n=n)
        noise = rng.standard_normal((n, self.n_nodes))
        if self.n_nodes > DO_MATRIX_MAX_D:
            scaled = unit_scaled_mixing(self._mixing, self.noise_std)
            return rank_one_do(scaled, self._mixing, var, float(value), noise, None)
        noise[:, var] = float(value)
        # np.dot, as the session's sampler, so both give the same bits.
        return np.dot(noise, self.do_matrix(var))

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
        noise = rng.standard_normal((n, self.n_nodes)) * self.noise_std
        return linear_soft(noise, self.mixing, self.weights, kind, var, value, out)


def generations(dag: DAG) -> IntArray:
    """Each node's generation: 0 for a root, else one more than its latest parent's (the length
    of the longest directed path ending at it). Nodes of one generation are never adjacent.

    >>> generations(DAG.from_edges(3, [(0, 1), (1, 2), (0, 2)])).tolist()
    [0, 1, 2]
    """
    source, target = np.nonzero(dag.adjacency)
    depth = np.zeros(dag.n_nodes, dtype=np.int64)
    while True:  # one pass per generation: relax every edge at once
        deeper = depth.copy()
        np.maximum.at(deeper, target, depth[source] + 1)
        if np.array_equal(deeper, depth):
            return depth
        depth = deeper


def standardize_by_generation(
    raw: FloatArray, dag: DAG, noise_var: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The scaled weights, noise standard deviations and population covariance of
    :meth:`LinearGaussianSCM.standardized`, one generation (:func:`generations`) at a time.

    A generation's parents ``U`` are all standardized already, with covariance ``C_UU``, so its
    raw columns ``R = raw[U, G]`` have variances ``diag(R^T C_UU R) + noise_var``; the scaled
    columns ``S`` give the generation's covariances with every earlier node (``S^T C_U.``) and
    with each other (``S^T C_UU S``; their noises are independent). ``R`` and ``S`` are sparse
    (a column per node, a nonzero per parent), so the work is about ``O(k d)`` instead of the
    node-by-node ``O(d^3)``.
    """
    d = dag.n_nodes
    depth = generations(dag)
    scaled = np.zeros_like(raw)
    noise_std = np.zeros(d)
    cov = np.zeros((d, d))
    for level in range(int(depth.max()) + 1 if d else 0):
        nodes = np.flatnonzero(depth == level)
        parents = np.flatnonzero(dag.adjacency[:, nodes].any(axis=1))
        columns = sparse.csr_array(raw[np.ix_(parents, nodes)].T)  # a row per node
        among = columns @ cov[np.ix_(parents, parents)]
        scale = np.sqrt(np.asarray((columns * among).sum(axis=1)).reshape(-1) + noise_var)
        unit = sparse.csr_array(sparse.diags_array(1.0 / scale) @ columns)
        scaled[np.ix_(parents, nodes)] = unit.T.toarray()
        noise_std[nodes] = np.sqrt(noise_var) / scale
        cross = np.asarray(unit @ cov[parents])
        within = np.asarray(unit @ cross[:, parents].T).T
        within[np.diag_indices_from(within)] = 1.0
        cov[nodes] = cross
        cov[:, nodes] = cross.T
        cov[np.ix_(nodes, nodes)] = within
    return scaled, noise_std, cov


def unit_scaled_mixing(mixing: FloatArray, noise_std: FloatArray) -> FloatArray:
    """``diag(noise_std) M`` with the diagonal of ``M = (I - W)^{-1}`` set to exactly 1: the
    matrix :func:`rank_one_do` multiplies the noise with (made once per SCM by the sampler)."""
    unit = np.array(mixing, dtype=np.float64, copy=True)
    unit.reshape(-1)[:: unit.shape[0] + 1] = 1.0
    unit *= noise_std[:, None]
    return unit


def rank_one_do(
    scaled: FloatArray,
    mixing: FloatArray,
    var: int,
    value: float,
    noise: FloatArray,
    out: FloatArray | None,
) -> FloatArray:
    """``do(X_var = value)`` samples from standard normal ``noise`` (overwritten) without a
    matrix per target: ``O(n d^2)`` like an observational draw, plus ``O(n d)``.

    With column ``var`` of the noise zeroed, ``Y = noise @ scaled`` is the observational draw
    without ``var``'s own noise, and cutting ``var``'s in-edges changes only ``var``'s
    descendants: ``X = Y + (value - Y[:, var]) M[var]`` (``M[var, var] = 1``; the other entries
    of ``M[var]`` are the total effects of ``X_var``, 0 on non-descendants). Column ``var`` is
    then set to ``value`` exactly. The same samples as the do-matrix in exact arithmetic (see
    :data:`DO_MATRIX_MAX_D` for which worlds use which).

    Args:
        scaled: :func:`unit_scaled_mixing` of the SCM.
        mixing: the SCM's ``(I - W)^{-1}``.
        var: the target.
        value: the value it is set to.
        noise: ``(n, d)`` standard normal draws; column ``var`` is set to 0 here.
        out: a writable C-contiguous float64 ``(n, d)`` array for the result, or ``None``.
    """
    noise[:, var] = 0.0
    samples = np.dot(noise, scaled, out=out)
    effects = np.flatnonzero(mixing[var])
    shift = value - samples[:, var]
    samples[:, effects] += shift[:, None] * mixing[var, effects]
    samples[:, var] = value
    return samples
