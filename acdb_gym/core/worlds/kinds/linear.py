"""The linear-Gaussian world (DESIGN §3, steps 1-4): a graph, signed weights, a linear-Gaussian
SCM over them (standardized or not), accepted by the faithfulness rule.

``faithfulness_rule="reject_world"`` redraws graph and weights until the world passes the check
(:func:`accepted_linear_world`, which the paired families draw their graph and weights with
too); ``"redraw_edges"`` keeps one graph and redraws only the failing edges' weights
(:func:`redraw_weak_edges`). The draw order on the graph and weight streams is what the
manifest digests pin. A bank holds its worlds as ``weights`` ``(n, d, d)`` and ``noise_std``
``(n, d)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from acdb_gym.core.graphs import DAG, orient_by_order, random_order_dag, scale_free_dag
from acdb_gym.core.graphs.real import topology
from acdb_gym.core.types import FloatArray
from acdb_gym.core.worlds.faithfulness import (
    _full_partial_correlations,
    _parent_partial_correlations,
    faithful_draws,
    weak_edges,
)
from acdb_gym.core.worlds.kinds.base import (
    GRAPH,
    MAX_ATTEMPTS,
    WEIGHTS,
    DrawnWorld,
    InstanceGenerationError,
    SeedStreams,
    World,
    check_deadline,
    stream_generators,
)
from acdb_gym.core.worlds.linear import STANDARDIZE_BY_NODE_MAX_D, LinearGaussianSCM
from acdb_gym.core.worlds.spec import LINEAR_GAUSSIAN, LevelSpec

__all__ = [
    "EDGE_REDRAW_ROUNDS",
    "LinearGaussianKind",
    "accepted_linear_world",
    "accepted_linear_worlds",
    "build_scm",
    "degree_scales",
    "draw_graph",
    "draw_weights",
    "passes_full_set_check",
    "passes_parent_set_check",
    "redraw_weak_edges",
]

EDGE_REDRAW_ROUNDS = 5
"""Redraws of the failing edges' weights under ``faithfulness_rule="redraw_edges"``."""


class LinearGaussianKind:
    """Linear-Gaussian worlds (the table's last line: what a spec asks for by default)."""

    name = "linear"
    worlds: tuple[type, ...] = (LinearGaussianSCM,)

    def matches(self, spec: LevelSpec) -> bool:
        return spec.family == LINEAR_GAUSSIAN

    def draw(self, spec: LevelSpec, streams: SeedStreams, deadline: float | None) -> DrawnWorld:
        graph_rng, weight_rng = streams.rng(GRAPH), streams.rng(WEIGHTS)
        if spec.faithfulness_rule == "redraw_edges":
            dag, scm, _, draws, n_weak, names = redraw_weak_edges(spec, graph_rng, weight_rng)
            return DrawnWorld(dag, scm, draws, weak_edges=n_weak, variable_names=names)
        dag, _, scm, _, attempts, names = accepted_linear_world(
            spec, streams.seed, graph_rng, weight_rng, deadline
        )
        return DrawnWorld(dag, scm, attempts, variable_names=names)

    def draw_many(self, spec: LevelSpec, streams: Sequence[SeedStreams]) -> list[DrawnWorld] | None:
        """:meth:`draw` of every seed's streams (no deadline), the faithfulness checks of
        each round of draws stacked (:func:`accepted_linear_worlds`); None where that path
        does not apply (``"redraw_edges"``), so the caller draws one at a time."""
        if spec.faithfulness_rule == "redraw_edges":
            return None
        accepted = accepted_linear_worlds(spec, streams)
        return [
            DrawnWorld(dag, scm, attempts, variable_names=names)
            for dag, _, scm, _, attempts, names in accepted
        ]

    def check(self, spec: LevelSpec, world: World, i_star: frozenset[int]) -> None:
        pass

    def to_bank(self, worlds: Sequence[World]) -> dict[str, np.ndarray]:
        linear = [cast(LinearGaussianSCM, world) for world in worlds]
        return {
            "weights": np.stack([scm.weights for scm in linear]),
            "noise_std": np.stack([scm.noise_std for scm in linear]),
        }

    def from_bank(
        self, spec: LevelSpec, dags: Sequence[DAG], arrays: dict[str, np.ndarray]
    ) -> list[World]:
        return list(linear_from_bank(dags, arrays))


def linear_from_bank(dags: Sequence[DAG], arrays: dict[str, np.ndarray]) -> list[LinearGaussianSCM]:
    """The linear-Gaussian worlds of a bank's ``weights`` and ``noise_std`` arrays."""
    weights, noise_std = arrays["weights"], arrays["noise_std"]
    return [LinearGaussianSCM(weights[k], noise_std[k]) for k in range(len(dags))]


def draw_graph(spec: LevelSpec, rng: np.random.Generator) -> tuple[DAG, tuple[str, ...] | None]:
    """One graph draw of ``spec.graph`` from the graph stream (DESIGN §3, step 1), and the
    variable names of a fixed topology in the drawn labelling (None for a random graph).

    ``"er"`` is :func:`~acdb_gym.core.graphs.random_order_dag` (its draws unchanged),
    ``"sf"`` :func:`~acdb_gym.core.graphs.scale_free_dag`, then with
    ``orientation="uniform"`` its skeleton oriented by ``rng.permutation(d)``
    (:func:`~acdb_gym.core.graphs.orient_by_order`); a fixed topology's node ``s``
    becomes node ``order[s]`` for a uniform permutation ``order = rng.permutation(d)``.
    """
    if spec.graph == "er":
        return random_order_dag(spec.d, n_edges=spec.k, rng=rng), None
    if spec.graph == "sf":
        dag = scale_free_dag(spec.d, n_edges=spec.k, rng=rng)
        if spec.orientation == "uniform":
            dag = orient_by_order(dag, rng.permutation(spec.d))
        return dag, None
    source = topology(spec.graph)
    order = rng.permutation(spec.d)
    adjacency = np.zeros((spec.d, spec.d), dtype=np.bool_)
    adjacency[np.ix_(order, order)] = source.dag.adjacency
    names = [""] * spec.d
    for position, name in enumerate(source.names):
        names[int(order[position])] = name
    return DAG(adjacency), tuple(names)


def draw_weights(spec: LevelSpec, dag: DAG, rng: np.random.Generator) -> FloatArray:
    """Magnitudes ``U[weight_low, weight_high]``, signs +/-1 with probability 1/2, row-major;
    with ``edge_scale="degree"`` each times its edge's :func:`degree_scales` factor."""
    magnitude = rng.uniform(spec.weight_low, spec.weight_high, size=dag.n_edges)
    sign = np.where(rng.random(dag.n_edges) < 0.5, -1.0, 1.0)
    weights = np.zeros((spec.d, spec.d))
    weights[dag.adjacency] = magnitude * sign
    if spec.edge_scale == "degree":
        weights *= degree_scales(dag)
    return weights


def degree_scales(dag: DAG) -> FloatArray:
    """``edge_scale="degree"``'s factor of each edge ``i -> j`` (DESIGN §3 step 2):
    ``sqrt(mean_degree / (deg_i * deg_j))``, with degrees counted in and out and
    ``mean_degree = 2 k / d``; 0 off the edges.

    A node's precision diagonal, hence its R² from all the others, is one plus the squared
    unit-noise weights of its edges (plus its parents' covariances), so plain weights make R²
    a weighted degree; with these factors a node's edges weigh about as much together as one
    plain edge, whatever its degree.

    >>> degree_scales(DAG.from_edges(3, [(0, 1), (0, 2)]))[0].round(3).tolist()
    [0.0, 0.816, 0.816]
    """
    adjacency = dag.adjacency
    degree = (adjacency.sum(axis=0) + adjacency.sum(axis=1)).astype(np.float64)
    mean_degree = 2.0 * dag.n_edges / max(dag.n_nodes, 1)
    scales = np.sqrt(mean_degree / np.maximum(np.outer(degree, degree), 1.0))
    return np.where(adjacency, scales, 0.0)


def build_scm(spec: LevelSpec, weights: FloatArray) -> LinearGaussianSCM:
    """The SCM of ``weights`` drawn on a graph (:func:`draw_weights`): standardized, or with
    noise variance ``spec.noise_var`` everywhere (its support is the graph: no cycle check)."""
    if spec.standardized:
        return LinearGaussianSCM.standardized(weights, spec.noise_var)
    return LinearGaussianSCM._valid(weights, np.full(spec.d, np.sqrt(spec.noise_var)))


def build_scm_and_covariance(
    spec: LevelSpec, weights: FloatArray
) -> tuple[LinearGaussianSCM, FloatArray]:
    """:func:`_build_scm` and the world's population covariance (above
    ``STANDARDIZE_BY_NODE_MAX_D``, the one its standardization computed)."""
    if spec.standardized:
        return LinearGaussianSCM.standardized_with_covariance(weights, spec.noise_var)
    scm = build_scm(spec, weights)
    return scm, scm.covariance()


def passes_full_set_check(dag: DAG, cov: FloatArray, eps: float) -> bool:
    """The full-set half of :func:`is_faithful` (``|rho(i, j | V minus {i, j})| >= eps`` for every
    edge), computed exactly as there.

    It costs one inversion, against one per node for the parent-set half, and on every ladder
    level it alone rejects every draw that fails, so checking it first makes rejected draws
    cheap without changing any decision.
    """
    if dag.n_edges == 0:
        return True
    return bool(np.abs(_full_partial_correlations(dag, cov)).min() >= eps)


def passes_parent_set_check(dag: DAG, cov: FloatArray, eps: float) -> bool:
    """The parent-set half of :func:`is_faithful` (``|rho(i, j | Pa(j) minus {i})| >= eps`` for
    every edge ``i -> j``), computed exactly as there."""
    if dag.n_edges == 0:
        return True
    return bool(np.abs(_parent_partial_correlations(dag, cov)).min() >= eps)


def accepted_linear_worlds(
    spec: LevelSpec, streams: Sequence[SeedStreams]
) -> list[tuple[DAG, FloatArray, LinearGaussianSCM, FloatArray, int, tuple[str, ...] | None]]:
    """:func:`accepted_linear_world` of every seed's streams, in lockstep: each round draws
    the graph and weights of every world not yet accepted from its own streams (the same draws
    in the same order), and the round's faithfulness checks run stacked
    (:func:`~acdb_gym.core.worlds.faithfulness.faithful_draws`, the same inverses and the same
    decisions as one world at a time).

    Raises:
        InstanceGenerationError: a seed's world failed the check ``MAX_ATTEMPTS`` times.
    """
    graph_rngs, weight_rngs = stream_generators([each.seed for each in streams], (GRAPH, WEIGHTS))
    rngs = list(zip(graph_rngs, weight_rngs, strict=True))
    accepted: dict[
        int, tuple[DAG, FloatArray, LinearGaussianSCM, FloatArray, int, tuple[str, ...] | None]
    ] = {}
    attempts = [0] * len(streams)
    pending = list(range(len(streams)))
    while pending:
        round_draws = []
        for k in pending:
            attempts[k] += 1
            graph_rng, weight_rng = rngs[k]
            dag, names = draw_graph(spec, graph_rng)
            weights = draw_weights(spec, dag, weight_rng)
            round_draws.append((k, dag, names, weights, build_scm(spec, weights)))
        LinearGaussianSCM.invert_together([scm for *_, scm in round_draws])
        drawn = [
            (k, dag, names, weights, scm, scm.covariance())
            for k, dag, names, weights, scm in round_draws
        ]
        passed = faithful_draws(
            [dag for _, dag, *_ in drawn], [cov for *_, cov in drawn], spec.faithfulness_eps
        )
        still = []
        for (k, dag, names, weights, scm, cov), ok in zip(drawn, passed, strict=True):
            if ok:
                accepted[k] = (dag, weights, scm, cov, attempts[k], names)
            elif attempts[k] == MAX_ATTEMPTS:
                raise InstanceGenerationError(spec, streams[k].seed, MAX_ATTEMPTS)
            else:
                still.append(k)
        pending = still
    return [accepted[k] for k in range(len(streams))]


def redraw_weak_edges(
    spec: LevelSpec, graph_rng: np.random.Generator, weight_rng: np.random.Generator
) -> tuple[DAG, LinearGaussianSCM, FloatArray, int, int, tuple[str, ...] | None]:
    """``faithfulness_rule="redraw_edges"``: one graph; the weights of the edges that fail the
    check are redrawn (magnitude and sign, row-major) up to :data:`EDGE_REDRAW_ROUNDS` times,
    then the world is accepted as it is. Returns the graph, SCM, population covariance, weight
    draws, the edges still failing and the variable names."""
    dag, names = draw_graph(spec, graph_rng)
    weights = draw_weights(spec, dag, weight_rng)
    draws = 1
    while True:
        scm, cov = build_scm_and_covariance(spec, weights)
        # Above STANDARDIZE_BY_NODE_MAX_D (the large ladder from L4) the precision in closed form
        # spares inverting the covariance every round.
        precision = scm.precision() if spec.d > STANDARDIZE_BY_NODE_MAX_D else None
        weak = weak_edges(dag, cov, spec.faithfulness_eps, precision=precision)
        n_weak = int(weak.sum())
        if n_weak == 0 or draws > EDGE_REDRAW_ROUNDS:
            return dag, scm, cov, draws, n_weak, names
        magnitude = weight_rng.uniform(spec.weight_low, spec.weight_high, size=n_weak)
        sign = np.where(weight_rng.random(n_weak) < 0.5, -1.0, 1.0)
        if spec.edge_scale == "degree":
            sign = sign * degree_scales(dag)[weak]
        weights = weights.copy()
        weights[weak] = magnitude * sign
        draws += 1


def accepted_linear_world(
    spec: LevelSpec,
    seed: int,
    graph_rng: np.random.Generator,
    weight_rng: np.random.Generator,
    deadline: float | None = None,
) -> tuple[DAG, FloatArray, LinearGaussianSCM, FloatArray, int, tuple[str, ...] | None]:
    """DESIGN §3, steps 1-4 under ``"reject_world"``: graphs and weights drawn until the world
    passes the faithfulness check. Returns the graph, the drawn weights, the SCM, its
    population covariance and the number of draws."""
    attempts = 0
    while True:
        attempts += 1
        # DESIGN §3, step 1; its draw order is fixed by the manifest digests.
        dag, names = draw_graph(spec, graph_rng)
        weights = draw_weights(spec, dag, weight_rng)
        scm = build_scm(spec, weights)
        cov = scm.covariance()
        # is_faithful's two halves, the full set first (it alone rejects on every level) and
        # computed once.
        if passes_full_set_check(dag, cov, spec.faithfulness_eps) and passes_parent_set_check(
            dag, cov, spec.faithfulness_eps
        ):
            return dag, weights, scm, cov, attempts, names
        if attempts == MAX_ATTEMPTS:
            raise InstanceGenerationError(spec, seed, MAX_ATTEMPTS)
        check_deadline(deadline, spec, seed, attempts)
