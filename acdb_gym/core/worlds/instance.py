"""Benchmark instances and their generator (DESIGN §3).

Over 500 lines because every kind of world (linear-Gaussian with either faithfulness rule, the
paired families, hidden confounders, the fitted Sachs world, the real Sachs cells and the
cause-effect pairs) is drawn here from the same seed streams in a fixed order that the manifest
digests pin; the kinds' parts (mechanisms, latent graphs, fits, measured data) live in their
own modules, and keeping the draws together keeps that order readable in one place.

An :class:`Instance` is fully determined by ``(spec, seed)``: the seed is split with
``np.random.SeedSequence(seed).spawn(4)`` into independent streams for the graph, the weights,
the observational sample and the interventions, so the same seed gives bit-identical instances
and data in any process.

>>> from acdb_gym.core.worlds.spec import LevelSpec
>>> spec = LevelSpec(d=4, k=3, n_obs=50, n_int=10, noise_var=1.0, slack=1)
>>> a, b = generate_instance(spec, 7), generate_instance(spec, 7)
>>> a.digest() == b.digest() and a.dag.n_edges == 3
True
"""

from __future__ import annotations

import functools
import hashlib
import math
import time
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from acdb_gym.core.graphs import (
    ADMG,
    DAG,
    LatentTruth,
    latent_truth,
    minimum_intervention_set,
    minimum_intervention_subset,
    orient_by_order,
    random_order_dag,
    scale_free_dag,
)
from acdb_gym.core.graphs.real import topology
from acdb_gym.core.types import FloatArray, readonly
from acdb_gym.core.worlds.acceptance import PARTIAL_CORRELATION, Acceptance, draw_world
from acdb_gym.core.worlds.cause_effect_pairs import CauseEffectPair, pair_for_seed
from acdb_gym.core.worlds.faithfulness import (
    _full_partial_correlations,
    is_faithful,
    min_relevant_partial_correlation,
    weak_edges,
)
from acdb_gym.core.worlds.fitted import FittedSCM, sachs_fit
from acdb_gym.core.worlds.latent import (
    LatentSCM,
    draw_latent_graph,
    full_spec,
    min_relevant_latent_correlation,
    passes_observed_rule,
)
from acdb_gym.core.worlds.linear import STANDARDIZE_BY_NODE_MAX_D, LinearGaussianSCM
from acdb_gym.core.worlds.mechanisms import SCM
from acdb_gym.core.worlds.real_experiments import EXPERIMENT_PROTEINS, SachsCells
from acdb_gym.core.worlds.spec import LINEAR_GAUSSIAN, LevelSpec

__all__ = [
    "EDGE_REDRAW_ROUNDS",
    "FAMILY_REDRAWS",
    "MAX_ATTEMPTS",
    "GenerationDeadlineError",
    "Instance",
    "InstanceGenerationError",
    "RealData",
    "World",
    "allowed_targets",
    "degree_scales",
    "draw_graph",
    "generate_instance",
    "instance_slack",
]

MAX_ATTEMPTS = 10_000
"""Rejection-sampling attempts before :class:`InstanceGenerationError`."""

EDGE_REDRAW_ROUNDS = 5
"""Redraws of the failing edges' weights under ``faithfulness_rule="redraw_edges"``."""

_GRAPH, _WEIGHTS, _OBSERVATIONAL, _INTERVENTIONS, _CALIBRATION, _SLACK = range(6)
"""Streams of ``SeedSequence(seed).spawn(6)``; the first four equal ``spawn(4)``'s, which the
linear-Gaussian generator uses, only the nonlinear family reads the calibration stream, and
only a level with a hidden slack (``LevelSpec.slack_max``) the slack stream."""

RealData = SachsCells | CauseEffectPair
"""The worlds of measured data (DESIGN §3.5, §3.6): they sample like SCMs but are data."""

World = SCM | LatentSCM | RealData
"""What an instance's ``scm`` is: a model, or measured data."""

FAMILY_REDRAWS = 1000
"""Draws of a family's own parts (noise kinds, mechanisms) on one accepted linear world before
:class:`InstanceGenerationError`."""


class InstanceGenerationError(RuntimeError):
    """No faithful instance was found for ``spec`` within ``attempts`` draws."""

    def __init__(self, spec: LevelSpec, seed: int, attempts: int) -> None:
        self.spec = spec
        self.seed = seed
        self.attempts = attempts
        super().__init__(
            f"no instance passed the faithfulness check after {attempts} attempts "
            f"(seed {seed}, spec {spec})"
        )


class GenerationDeadlineError(RuntimeError):
    """Generation passed its ``deadline`` (a :func:`time.monotonic` time) before any draw was
    accepted. Unlike :class:`InstanceGenerationError` it says nothing about the seed (a slower
    machine gets further), so a preflight gives up on the spec rather than skipping the seed."""

    def __init__(self, spec: LevelSpec, seed: int, attempts: int) -> None:
        self.spec = spec
        self.seed = seed
        self.attempts = attempts
        super().__init__(
            f"seed {seed}: no draw accepted in {attempts} attempts before the deadline"
        )


def _check_deadline(deadline: float | None, spec: LevelSpec, seed: int, attempts: int) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise GenerationDeadlineError(spec, seed, attempts)


@dataclass(frozen=True, eq=False)
class Instance:
    """One hidden world: the true DAG, its SCM, the observational sample and the budget.

    Attributes:
        spec: the level it was drawn for.
        seed: the integer seed that fully determines it.
        dag: the true causal graph.
        scm: the SCM over ``dag`` of the spec's family (``scm.weights`` are the effective
            weights of a linear family, the drawn edge magnitudes of a nonlinear one, the
            fitted slopes of a fitted Sachs world).
        d_obs: the observational sample, ``(n_obs, d)``, read-only.
        i_star: the minimum intervention set (DESIGN §3, step 6).
        budget: ``|I*| + slack``: ``spec.slack``, or the instance's own draw when the level
            hides its slack (:func:`instance_slack`); ``max(0, |I*| - spec.shortfall)`` on a
            level whose budget is below ``|I*|``.
        attempts: draws rejection sampling needed (1 = the first draw was accepted); under
            ``faithfulness_rule="redraw_edges"``, weight draws (the first plus each redraw).
        dependence_measure: ``"partial_correlation"`` or ``"correlation_ratio"``.
        weak_edges: edges that fail the faithfulness check in the accepted world (0 unless
            ``faithfulness_rule="redraw_edges"`` gave up redrawing them).
        admg: on a latent level (``spec.latent > 0``), the latent projection the agent is scored
            against; ``dag`` is then its directed part and ``scm`` a
            :class:`~acdb_gym.core.worlds.latent.LatentSCM`. None on a causally sufficient level.
        variable_names: on a fixed real topology, the real name of each variable in this
            instance's labelling (kept from agents; prompts show ``X0..`` unless asked for
            names); None on a random graph.
        measured_dependence: :attr:`min_relevant_abs_rho` when the acceptance step measured it
            (the other families, hidden confounders) or the data give it (the real-data
            worlds); None on a linear-Gaussian world, whose covariate is computed on first read
            instead of at every reset.
        intervention_targets: the nodes an intervention may target when the level restricts
            them (``LevelSpec.targets``; ``I*`` and the budget are then over these nodes,
            DESIGN §3 step 6); None when every node may be targeted.
    """

    spec: LevelSpec
    seed: int
    dag: DAG
    scm: World
    d_obs: FloatArray
    i_star: frozenset[int]
    budget: int
    attempts: int
    dependence_measure: str = PARTIAL_CORRELATION
    weak_edges: int = 0
    admg: ADMG | None = None
    variable_names: tuple[str, ...] | None = None
    measured_dependence: float | None = None
    intervention_targets: frozenset[int] | None = None

    @cached_property
    def min_relevant_abs_rho(self) -> float:
        """The acceptance covariate named by ``dependence_measure``: the smallest population
        ``|rho|`` over PC-relevant conditioning sets for the linear families, the smallest
        per-edge correlation ratio or unique contribution for the nonlinear one
        (:mod:`acdb_gym.core.worlds.acceptance`). A linear-Gaussian world's is computed here,
        on first read, from its population covariance (a reset need not pay for it: at
        d = 100 on a DREAM4 wiring it costs more than the rest of the world)."""
        if self.measured_dependence is not None:
            return self.measured_dependence
        assert isinstance(self.scm, LinearGaussianSCM | FittedSCM), "a family measures its own"
        return min_relevant_partial_correlation(self.dag, self.scm.covariance())

    @cached_property
    def latent_truth(self) -> LatentTruth | None:
        """The ADMG, its MAG and its PAG on a latent level; None on a sufficient one."""
        return None if self.admg is None else latent_truth(self.admg)

    @property
    def n_nodes(self) -> int:
        """Number of variables ``d``."""
        return self.dag.n_nodes

    @property
    def slack(self) -> int:
        """The budget beyond ``|I*|`` (privileged when the level hides it; negative when the
        budget is below ``|I*|``)."""
        return self.budget - len(self.i_star)

    @property
    def weights(self) -> FloatArray:
        """The SCM's weight matrix (read-only)."""
        return self.scm.weights

    def intervention_rng(self) -> np.random.Generator:
        """A fresh generator on this instance's intervention stream (same seed, same draws)."""
        # ``SeedSequence(seed).spawn(4)[k]`` is ``SeedSequence(seed, spawn_key=(k,))``: the same
        # stream without building the other three.
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(_INTERVENTIONS,)))

    def digest(self) -> str:
        """A short hash of everything generated, used by the ladder manifests to catch drift.

        Floats are rounded (weights to 12, data to 8 decimals) so the hash does not depend on
        last-bit differences between BLAS builds.
        """
        return self._digest

    @cached_property
    def _digest(self) -> str:
        sha = hashlib.sha256()
        sha.update(repr((self.spec, self.seed, sorted(self.i_star), self.budget)).encode())
        sha.update(self.dag.adjacency.tobytes())
        scm = self.scm
        parameters = scm.weights if isinstance(scm, LinearGaussianSCM) else scm.parameters()
        sha.update(np.round(parameters, 12).tobytes())
        sha.update(np.round(self.d_obs, 8).tobytes())
        return sha.hexdigest()[:16]

    def __repr__(self) -> str:
        return (
            f"Instance(seed={self.seed}, d={self.n_nodes}, k={self.dag.n_edges}, "
            f"budget={self.budget}, digest={self.digest()})"
        )


def _streams(seed: int) -> list[np.random.SeedSequence]:
    return np.random.SeedSequence(seed).spawn(4)


def instance_slack(spec: LevelSpec, seed: int) -> int:
    """The slack of the instance of ``spec`` drawn from ``seed``: ``spec.slack``, or with a
    hidden slack (``spec.slack_max``) a uniform draw from ``slack .. slack_max`` on the seed's
    own slack stream, which no other draw of the instance reads (so the graph, weights and data
    are those of the same spec without ``slack_max``).

    >>> spec = LevelSpec(d=4, k=3, n_obs=50, n_int=10, noise_var=1.0, slack=1, slack_max=3)
    >>> sorted({instance_slack(spec, seed) for seed in range(40)})
    [1, 2, 3]
    """
    if spec.slack_max is None:
        return spec.slack
    stream = np.random.SeedSequence(seed).spawn(_SLACK + 1)[_SLACK]
    return int(np.random.default_rng(stream).integers(spec.slack, spec.slack_max + 1))


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


def _draw_weights(spec: LevelSpec, dag: DAG, rng: np.random.Generator) -> FloatArray:
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


def _build_scm(spec: LevelSpec, weights: FloatArray) -> LinearGaussianSCM:
    if spec.standardized:
        return LinearGaussianSCM.standardized(weights, spec.noise_var)
    return LinearGaussianSCM(weights, np.full(spec.d, np.sqrt(spec.noise_var)))


def _build_scm_and_covariance(
    spec: LevelSpec, weights: FloatArray
) -> tuple[LinearGaussianSCM, FloatArray]:
    """:func:`_build_scm` and the world's population covariance (above
    ``STANDARDIZE_BY_NODE_MAX_D``, the one its standardization computed)."""
    if spec.standardized:
        return LinearGaussianSCM.standardized_with_covariance(weights, spec.noise_var)
    scm = _build_scm(spec, weights)
    return scm, scm.covariance()


def _passes_full_set_check(dag: DAG, cov: FloatArray, eps: float) -> bool:
    """The full-set half of :func:`is_faithful` (``|rho(i, j | V minus {i, j})| >= eps`` for every
    edge), computed exactly as there.

    It costs one inversion, against one per node for the parent-set half, and on every ladder
    level it alone rejects every draw that fails, so checking it first makes rejected draws
    cheap without changing any decision.
    """
    if dag.n_edges == 0:
        return True
    return bool(np.abs(_full_partial_correlations(dag, cov)).min() >= eps)


def generate_instance(
    spec: LevelSpec, seed: int | np.random.Generator, *, deadline: float | None = None
) -> Instance:
    """Draw the instance of ``spec`` determined by ``seed`` (DESIGN §3).

    Args:
        spec: the level specification.
        seed: a non-negative integer; a Generator is accepted too and consumed for one integer
            seed, which the instance records.
        deadline: a :func:`time.monotonic` time after which rejection sampling stops (checked
            between draws); ``None`` for none. It never changes an instance that is returned.

    Instances are immutable, so the most recent ones of ladder-sized specs are kept and the
    same ``(spec, seed)`` returns the same object again without regenerating it.

    Raises:
        InstanceGenerationError: no draw passed the faithfulness check in ``MAX_ATTEMPTS``.
        GenerationDeadlineError: ``deadline`` passed first.
    """
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(2**63 - 1))
    if int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    seed = int(seed)
    if deadline is not None:
        return _generate(spec, seed, deadline)
    if spec.n_obs * spec.d <= _CACHE_MAX_SAMPLE_SIZE:
        return _generate_cached(spec, seed)
    return _generate(spec, seed)


_CACHE_MAX_SAMPLE_SIZE = 20_000
"""Instances with at most this many observational values (every ladder level) are cached."""


@functools.lru_cache(maxsize=128)
def _generate_cached(spec: LevelSpec, seed: int) -> Instance:
    # The same (spec, seed) always gives the same immutable instance, and sweeps regenerate
    # each manifest instance for every episode (the random baseline runs 100 per instance),
    # so recent instances are kept: about 128 x 0.2 MB at most.
    return _generate(spec, seed)


def _redraw_weak_edges(
    spec: LevelSpec, graph_rng: np.random.Generator, weight_rng: np.random.Generator
) -> tuple[DAG, LinearGaussianSCM, FloatArray, int, int, tuple[str, ...] | None]:
    """``faithfulness_rule="redraw_edges"``: one graph; the weights of the edges that fail the
    check are redrawn (magnitude and sign, row-major) up to :data:`EDGE_REDRAW_ROUNDS` times,
    then the world is accepted as it is. Returns the graph, SCM, population covariance, weight
    draws, the edges still failing and the variable names."""
    dag, names = draw_graph(spec, graph_rng)
    weights = _draw_weights(spec, dag, weight_rng)
    draws = 1
    while True:
        scm, cov = _build_scm_and_covariance(spec, weights)
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


def _generate(spec: LevelSpec, seed: int, deadline: float | None = None) -> Instance:
    if spec.world == "sachs-cells":
        return _generate_sachs_cells(spec, seed)
    if spec.world == "cause-effect-pairs":
        return _generate_pair(spec, seed)
    if spec.fit != "none":
        return _generate_fitted(spec, seed)
    if spec.latent:
        return _generate_latent(spec, seed, deadline)
    if spec.family != LINEAR_GAUSSIAN:
        return _generate_family(spec, seed, deadline)
    streams = _streams(seed)
    graph_rng = np.random.default_rng(streams[_GRAPH])
    weight_rng = np.random.default_rng(streams[_WEIGHTS])
    if spec.faithfulness_rule == "redraw_edges":
        dag, scm, _, draws, n_weak, names = _redraw_weak_edges(spec, graph_rng, weight_rng)
        return _finish(spec, seed, streams, dag, scm, draws, n_weak, names)
    dag, _, scm, _, attempts, names = _accepted_linear_world(
        spec, seed, graph_rng, weight_rng, deadline
    )
    return _finish(spec, seed, streams, dag, scm, attempts, 0, names)


def _accepted_linear_world(
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
        weights = _draw_weights(spec, dag, weight_rng)
        scm = _build_scm(spec, weights)
        cov = scm.covariance()
        if _passes_full_set_check(dag, cov, spec.faithfulness_eps) and is_faithful(
            dag, cov, spec.faithfulness_eps
        ):
            return dag, weights, scm, cov, attempts, names
        if attempts == MAX_ATTEMPTS:
            raise InstanceGenerationError(spec, seed, MAX_ATTEMPTS)
        _check_deadline(deadline, spec, seed, attempts)


def _finish(
    spec: LevelSpec,
    seed: int,
    streams: list[np.random.SeedSequence],
    dag: DAG,
    scm: LinearGaussianSCM | FittedSCM,
    attempts: int,
    weak: int,
    names: tuple[str, ...] | None = None,
) -> Instance:
    """The instance of an accepted linear world: its observational sample, I* and budget (its
    difficulty covariate is computed when read, :attr:`Instance.min_relevant_abs_rho`)."""
    return _sampled_instance(
        spec,
        seed,
        streams,
        dag,
        scm,
        attempts=attempts,
        weak_edges=weak,
        variable_names=names,
    )


def _sampled_instance(
    spec: LevelSpec,
    seed: int,
    streams: list[np.random.SeedSequence],
    dag: DAG,
    scm: World,
    *,
    extra_budget: int = 0,
    **fields: Any,
) -> Instance:
    """The :class:`Instance` of an accepted world: its observational sample (the observational
    stream), ``I*`` of ``dag`` over the nodes the level lets agents target
    (:func:`allowed_targets`) and the budget ``|I*| + slack (+ extra_budget)``, less the level's
    ``shortfall`` (never below 0); ``fields`` are the instance's remaining fields."""
    d_obs = scm.sample(spec.n_obs, np.random.default_rng(streams[_OBSERVATIONAL]))
    allowed = allowed_targets(spec, fields.get("variable_names"))
    i_star = (
        minimum_intervention_set(dag)
        if allowed is None
        else minimum_intervention_subset(dag, allowed)
    )
    return Instance(
        spec=spec,
        seed=seed,
        dag=dag,
        scm=scm,
        d_obs=readonly(d_obs),
        i_star=i_star,
        budget=max(0, len(i_star) + instance_slack(spec, seed) + extra_budget - spec.shortfall),
        intervention_targets=allowed,
        **fields,
    )


def allowed_targets(spec: LevelSpec, names: tuple[str, ...] | None) -> frozenset[int] | None:
    """The nodes an intervention may target on ``spec``'s level (``LevelSpec.targets``) in a
    world whose variables are ``names``: None for every node, the labelled
    ``EXPERIMENT_PROTEINS`` for ``"sachs-experiments"``, none for ``"none"``."""
    if spec.targets == "all":
        return None
    if spec.targets == "none":
        return frozenset()
    assert names is not None, "targets 'sachs-experiments' need graph 'sachs', which has names"
    return frozenset(names.index(protein) for protein in EXPERIMENT_PROTEINS)


def _generate_sachs_cells(spec: LevelSpec, seed: int) -> Instance:
    """The measured Sachs cells (DESIGN §3.5): the graph stream's permutation labels the
    proteins exactly as :func:`draw_graph` labels the Sachs topology, the observational stream
    draws the baseline cells, and each episode's experiments draw cells from its intervention
    stream. Nothing is accepted or rejected (``attempts`` is 1).

    Raises:
        ValueError: an episode could ask one condition for more cells than it has (``n_int``
            times the largest budget).
    """
    streams = _streams(seed)
    world = SachsCells(np.random.default_rng(streams[_GRAPH]).permutation(spec.d))
    instance = _sampled_instance(
        spec,
        seed,
        streams,
        world.dag,
        world,
        attempts=1,
        variable_names=world.variable_names,
        measured_dependence=min_relevant_partial_correlation(world.dag, world.covariance()),
    )
    most = len(instance.i_star) + spec.slack_high
    if spec.n_int * most > world.smallest_block:
        raise ValueError(
            f"n_int = {spec.n_int} times a budget of up to {most} exceeds the "
            f"{world.smallest_block} cells of the smallest experiment: lower n_int"
        )
    return instance


def _generate_pair(spec: LevelSpec, seed: int) -> Instance:
    """A cause-effect pair (DESIGN §3.6): the pair is ``seed mod`` the number of pairs with at
    least ``n_obs`` rows, the graph stream draws which variable is the cause, the
    observational stream the rows. ``I*`` is empty and the budget 0 (``targets="none"``)."""
    streams = _streams(seed)
    index = pair_for_seed(seed, spec.n_obs)
    world = CauseEffectPair(index, np.random.default_rng(streams[_GRAPH]).permutation(2))
    return _sampled_instance(
        spec,
        seed,
        streams,
        world.dag,
        world,
        attempts=1,
        measured_dependence=abs(float(world.weights.sum())),
    )


def _generate_fitted(spec: LevelSpec, seed: int) -> Instance:
    """The Sachs world fitted to its data (DESIGN §3.4): the graph stream's permutation
    relabels the proteins exactly as :func:`draw_graph` relabels the Sachs topology; the fit
    is fixed, so there is no acceptance step (``attempts`` is 1)."""
    streams = _streams(seed)
    graph_rng = np.random.default_rng(streams[_GRAPH])
    fit_kind = "linear" if spec.fit == "linear" else "spline"
    scm = FittedSCM(sachs_fit(fit_kind), graph_rng.permutation(spec.d))
    names = [""] * spec.d
    for protein, name in enumerate(topology("sachs").names):
        names[int(scm.order[protein])] = name
    return _finish(spec, seed, streams, scm.dag, scm, 1, 0, tuple(names))


def _generate_family(spec: LevelSpec, seed: int, deadline: float | None = None) -> Instance:
    """The other families (:mod:`acdb_gym.core.worlds.acceptance`), paired with the linear-Gaussian
    level: the graph and weights are those of the linear-Gaussian instance of the same spec and
    seed (drawn and accepted exactly as there, on the same streams), and only the family's own
    parts (noise kinds, mechanisms and their calibration sample) are redrawn, on the weight
    stream after that world's draws, until the family's acceptance rule holds."""
    streams = np.random.SeedSequence(seed).spawn(5)
    graph_rng = np.random.default_rng(streams[_GRAPH])
    weight_rng = np.random.default_rng(streams[_WEIGHTS])
    calibration_rng = np.random.default_rng(streams[_CALIBRATION])
    linear_spec = replace(spec, family=LINEAR_GAUSSIAN)
    try:
        dag, weights, linear, cov, attempts, names = _accepted_linear_world(
            linear_spec, seed, graph_rng, weight_rng, deadline
        )
    except InstanceGenerationError:
        raise InstanceGenerationError(spec, seed, MAX_ATTEMPTS) from None
    drawn = _family_world(
        spec, seed, dag, weights, (linear, cov), (weight_rng, calibration_rng), deadline
    )
    if drawn is None:
        raise InstanceGenerationError(spec, seed, attempts + FAMILY_REDRAWS)
    scm, acceptance, redraws = drawn
    return _sampled_instance(
        spec,
        seed,
        streams,
        dag,
        scm,
        measured_dependence=acceptance.min_dependence,
        attempts=attempts + redraws - 1,
        dependence_measure=acceptance.measure,
        variable_names=names,
    )


def _family_world(
    spec: LevelSpec,
    seed: int,
    dag: DAG,
    weights: FloatArray,
    linear: tuple[LinearGaussianSCM, FloatArray],
    rngs: tuple[np.random.Generator, np.random.Generator],
    deadline: float | None,
) -> tuple[SCM, Acceptance, int] | None:
    """The first accepted draw of the family's own parts on the fixed graph and weights (at
    most :data:`FAMILY_REDRAWS`; ``rngs`` are the weight and calibration streams): its SCM, the
    rule's decision and how many draws it took; None when none was accepted."""
    weight_rng, calibration_rng = rngs
    for redraws in range(1, FAMILY_REDRAWS + 1):
        world = draw_world(spec, dag, weights, weight_rng, calibration_rng, accepted_linear=linear)
        if world.scm is not None and world.acceptance.accepted:
            return world.scm, world.acceptance, redraws
        _check_deadline(deadline, spec, seed, redraws)
    return None


def _generate_latent(spec: LevelSpec, seed: int, deadline: float | None = None) -> Instance:
    """A world with ``spec.latent`` hidden common causes (:mod:`acdb_gym.core.worlds.latent`):
    the same streams as the family's generator; the whole world is drawn, then accepted by the
    family's rule on the whole world and, for the linear families, the observed rule.

    ``I*`` is the minimum intervention set of the observed graph (a lower bound on what
    identifies the ADMG, DESIGN §3.2) and the budget is ``|I*| + slack + latent`` (the slack
    hidden as for any level with ``slack_max``).
    """
    streams = np.random.SeedSequence(seed).spawn(5)
    graph_rng = np.random.default_rng(streams[_GRAPH])
    weight_rng = np.random.default_rng(streams[_WEIGHTS])
    calibration_rng = np.random.default_rng(streams[_CALIBRATION])
    attempts = 0
    while True:
        attempts += 1
        full, admg = draw_latent_graph(spec, graph_rng)
        whole = full_spec(spec, full)
        weights = _draw_weights(whole, full, weight_rng)
        scm: SCM | None
        if spec.family == LINEAR_GAUSSIAN:
            scm = _build_scm(whole, weights)
            cov = scm.covariance()
            accepted = _passes_full_set_check(full, cov, spec.faithfulness_eps) and is_faithful(
                full, cov, spec.faithfulness_eps
            )
            measure, smallest = PARTIAL_CORRELATION, math.nan
        else:
            world = draw_world(whole, full, weights, weight_rng, calibration_rng)
            scm, accepted = world.scm, world.acceptance.accepted
            measure, smallest = world.acceptance.measure, world.acceptance.min_dependence
        if scm is not None and accepted:
            latent_scm = LatentSCM(scm, spec.d)
            if measure != PARTIAL_CORRELATION:
                break
            observed_cov = latent_scm.covariance()
            if passes_observed_rule(admg, observed_cov, spec.faithfulness_eps):
                smallest = min_relevant_latent_correlation(admg, observed_cov)
                break
        if attempts == MAX_ATTEMPTS:
            raise InstanceGenerationError(spec, seed, MAX_ATTEMPTS)
        _check_deadline(deadline, spec, seed, attempts)
    return _sampled_instance(
        spec,
        seed,
        streams,
        DAG(admg.directed),
        latent_scm,
        extra_budget=spec.latent,
        measured_dependence=smallest,
        attempts=attempts,
        dependence_measure=measure,
        admg=admg,
    )
