"""Worlds with hidden common causes (DESIGN §3.2): ``LevelSpec(latent=L)``.

The world is a DAG over ``d`` observed nodes ``0..d-1`` and ``L`` latent nodes ``d..d+L-1``:

1. the observed part is drawn exactly as a causally sufficient level's graph
   (``random_order_dag(d, k)`` on the graph stream);
2. each latent is a root with exactly two observed children, a pair of observed nodes not adjacent
   in the observed graph, the ``L`` pairs drawn without replacement from the non-adjacent pairs
   (row-major) on the graph stream, so no two latents confound the same pair and there is no
   bow (``i -> j`` with ``i <-> j``);
3. the edge weights of the whole graph are drawn as on every level (magnitude, then sign,
   row-major over the ``d + L`` nodes) and the family's SCM is built over all ``d + L`` nodes
   (standardized ones standardize the latents too).

The agent sees the observed nodes only: :class:`LatentSCM` samples the whole world and returns
the observed columns, and a hard intervention on an observed node cuts every edge into it,
latent ones included. The truth is the latent projection (an ADMG whose directed part is the
observed graph and whose bidirected edges are the latents' pairs), with its MAG and PAG.

Acceptance: the family's rule on the whole world (latent edges included) and, for the linear
families, the observed rule (:func:`passes_observed_rule`), v0's rule carried to the MAG: every
pair ``i, j`` adjacent in the MAG has a population ``|rho(i, j | S)| >= eps`` for ``S`` the
observed parents of ``i`` and ``j`` and for ``S`` all other observed nodes. The instance records
:func:`min_relevant_latent_correlation` as its difficulty covariate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np

from acdb_gym.core.graphs import ADMG, DAG, latent_projection, mag, random_order_dag
from acdb_gym.core.types import FloatArray, readonly
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.core.worlds.mechanisms import SCM, LinearNonGaussianSCM
from acdb_gym.core.worlds.soft import SoftKind, into
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = [
    "LatentSCM",
    "draw_latent_graph",
    "full_spec",
    "min_relevant_latent_correlation",
    "passes_observed_rule",
]


@dataclass(frozen=True, eq=False)
class LatentSCM:
    """A world over observed and latent nodes, seen through its first ``n_observed`` columns.

    Attributes:
        full: the SCM over all ``d + L`` nodes, latents last.
        n_observed: ``d``.
    """

    full: SCM
    n_observed: int

    def __post_init__(self) -> None:
        if not 1 <= self.n_observed <= self.full.n_nodes:
            raise ValueError(
                f"n_observed must be in [1, {self.full.n_nodes}], got {self.n_observed}"
            )

    @property
    def n_nodes(self) -> int:
        """Number of observed variables ``d`` (what an agent sees)."""
        return self.n_observed

    @property
    def n_latent(self) -> int:
        """Number of latent variables ``L``."""
        return self.full.n_nodes - self.n_observed

    @property
    def weights(self) -> FloatArray:
        """The observed-to-observed block of the full weight matrix (read-only)."""
        p = self.n_observed
        return readonly(np.array(self.full.weights[:p, :p]))

    @property
    def dag(self) -> DAG:
        """The observed part of the graph (the ADMG's directed edges)."""
        return DAG(self.weights != 0)

    def parameters(self) -> FloatArray:
        """Every drawn parameter of the full world (what an instance digest hashes)."""
        full = self.full
        return full.weights if isinstance(full, LinearGaussianSCM) else full.parameters()

    def covariance(self) -> FloatArray:
        """The observed block of the population covariance (linear families)."""
        linear = self._linear()
        p = self.n_observed
        return readonly(np.array(linear.covariance()[:p, :p]))

    def _linear(self) -> LinearGaussianSCM:
        full = self.full
        if isinstance(full, LinearGaussianSCM):
            return full
        if isinstance(full, LinearNonGaussianSCM):
            return full.linear
        raise TypeError("a nonlinear world has no closed-form covariance")

    def sample(self, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` observational rows of the observed variables, ``(n, d)``."""
        return np.ascontiguousarray(self.full.sample(n, rng)[:, : self.n_observed])

    def sample_do(
        self,
        var: int,
        value: float,
        n: int,
        rng: np.random.Generator,
        out: FloatArray | None = None,
    ) -> FloatArray:
        """``n`` rows of the observed variables under ``do(X_var = value)`` (``var`` observed);
        the whole world is sampled, so the latent edges into ``var`` are cut too."""
        if not 0 <= var < self.n_observed:
            raise ValueError(f"var must be an observed node in [0, {self.n_observed}), got {var}")
        observed = self.full.sample_do(var, value, n, rng)[:, : self.n_observed]
        if out is None:
            return np.ascontiguousarray(observed)
        out[...] = observed
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
        """``n`` rows of the observed variables under a soft intervention on the whole world
        (:mod:`acdb_gym.core.worlds.soft`)."""
        observed = self.full.sample_soft(kind, var, value, n, rng)[:, : self.n_observed]
        return into(np.ascontiguousarray(observed), out)


def draw_latent_graph(spec: LevelSpec, rng: np.random.Generator) -> tuple[DAG, ADMG]:
    """Steps 1-2 of the module docstring: the DAG over ``d + L`` nodes and its projection.

    Raises:
        ValueError: fewer non-adjacent observed pairs than latents (the spec checks this).
    """
    d, n_latent = spec.d, spec.latent
    observed = random_order_dag(d, n_edges=spec.k, rng=rng)
    skeleton = observed.skeleton()
    candidates = [(i, j) for i, j in combinations(range(d), 2) if not skeleton[i, j]]
    if len(candidates) < n_latent:
        raise ValueError(f"{n_latent} latents need as many non-adjacent pairs, got {candidates}")
    chosen = rng.choice(len(candidates), size=n_latent, replace=False)
    adjacency = np.zeros((d + n_latent, d + n_latent), dtype=np.bool_)
    adjacency[:d, :d] = observed.adjacency
    for offset, index in enumerate(chosen):
        i, j = candidates[int(index)]
        adjacency[d + offset, [i, j]] = True
    full = DAG(adjacency)
    return full, latent_projection(full, latent=range(d, d + n_latent))


def full_spec(spec: LevelSpec, full: DAG) -> LevelSpec:
    """The spec of the whole world (``d + L`` nodes, all its edges, no latents): what the
    family's SCM builder and acceptance rule read."""
    return replace(spec, d=full.n_nodes, k=full.n_edges, latent=0)


def min_relevant_latent_correlation(admg: ADMG, cov: FloatArray, *, max_size: int = 2) -> float:
    """The observed acceptance covariate (module docstring): the smallest population
    ``|rho(i, j | S)|`` over MAG-adjacent pairs and subsets ``S`` of at most ``max_size`` of
    their MAG neighbours; ``inf`` without adjacencies."""
    skeleton = mag(admg).skeleton
    p = admg.n_nodes
    by_size: dict[int, set[tuple[int, ...]]] = {}
    for i, j in combinations(range(p), 2):
        if not skeleton[i, j]:
            continue
        for end, other in ((i, j), (j, i)):
            neighbours = [int(v) for v in np.flatnonzero(skeleton[end]) if v != other]
            for size in range(min(max_size, len(neighbours)) + 1):
                for cond in combinations(neighbours, size):
                    by_size.setdefault(size, set()).add((i, j, *cond))
    smallest = np.inf
    for index_sets in by_size.values():
        index = np.array(sorted(index_sets))
        blocks = cov[index[:, :, None], index[:, None, :]]
        precision = np.linalg.inv(blocks)
        rho = precision[:, 0, 1] / np.sqrt(precision[:, 0, 0] * precision[:, 1, 1])
        smallest = min(smallest, float(np.abs(rho).min()))
    return float(smallest)


def passes_observed_rule(admg: ADMG, cov: FloatArray, eps: float) -> bool:
    """The observed acceptance rule (module docstring) on the observed covariance ``cov``."""
    skeleton = mag(admg).skeleton
    p = admg.n_nodes
    precision = np.linalg.inv(cov)
    diag = np.sqrt(np.diag(precision))
    full = np.abs(precision / np.outer(diag, diag))
    if (full[np.triu(skeleton, 1)] < eps).any():
        return False
    directed = admg.directed
    for i, j in combinations(range(p), 2):
        if not skeleton[i, j]:
            continue
        parents = np.flatnonzero(directed[:, i] | directed[:, j])
        cond = [int(v) for v in parents if v not in (i, j)]
        index = [i, j, *cond]
        block = np.linalg.inv(cov[np.ix_(index, index)])
        if abs(block[0, 1]) / np.sqrt(block[0, 0] * block[1, 1]) < eps:
            return False
    return True
