"""Benchmark instances and their generator (DESIGN §3).

An :class:`Instance` is fully determined by ``(spec, seed)``: the seed is split with
``np.random.SeedSequence(seed).spawn(...)`` into independent streams for the graph, the weights,
the observational sample, the interventions and a family's calibration
(:class:`~acdb_gym.core.worlds.kinds.base.SeedStreams`), so the same seed gives bit-identical
instances and data in any process. :func:`generate_instance` orchestrates: it asks the world
kind the spec asks for (:func:`~acdb_gym.core.worlds.kinds.kind_of`, one module per kind) to draw
and accept the world on those streams, then finishes the instance: the observational sample
(the observational stream), ``I*`` over the nodes the level lets agents target, and the budget.

>>> from acdb_gym.core.worlds.spec import LevelSpec
>>> spec = LevelSpec(d=4, k=3, n_obs=50, n_int=10, noise_var=1.0, slack=1)
>>> a, b = generate_instance(spec, 7), generate_instance(spec, 7)
>>> a.digest() == b.digest() and a.dag.n_edges == 3
True
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import cast

import numpy as np

from acdb_gym.core.graphs import (
    ADMG,
    DAG,
    LatentTruth,
    latent_truth,
    minimum_intervention_set,
    minimum_intervention_subset,
)
from acdb_gym.core.types import FloatArray, readonly
from acdb_gym.core.worlds.acceptance import PARTIAL_CORRELATION
from acdb_gym.core.worlds.faithfulness import min_relevant_partial_correlation
from acdb_gym.core.worlds.fitted import FittedSCM
from acdb_gym.core.worlds.kinds import kind_of
from acdb_gym.core.worlds.kinds.base import (
    INTERVENTIONS,
    MAX_ATTEMPTS,
    OBSERVATIONAL,
    SLACK,
    DrawnWorld,
    GenerationDeadlineError,
    InstanceGenerationError,
    OutOfBandError,
    RealData,
    SeedStreams,
    World,
    stream_generators,
)
from acdb_gym.core.worlds.kinds.family import FAMILY_REDRAWS
from acdb_gym.core.worlds.kinds.linear import EDGE_REDRAW_ROUNDS, degree_scales, draw_graph
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.core.worlds.real_experiments import EXPERIMENT_PROTEINS
from acdb_gym.core.worlds.sortability import r2_sortability_of
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = [
    "EDGE_REDRAW_ROUNDS",
    "FAMILY_REDRAWS",
    "MAX_ATTEMPTS",
    "WORLD_SEED_BOUND",
    "GenerationDeadlineError",
    "Instance",
    "InstanceGenerationError",
    "OutOfBandError",
    "RealData",
    "World",
    "allowed_targets",
    "cached_generation",
    "degree_scales",
    "draw_graph",
    "draw_instance",
    "draw_seed",
    "generate_instance",
    "generate_instances",
    "instance_slack",
    "instances_from",
    "keep_instance",
    "seeds_known_ahead",
]


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
        return SeedStreams(self.seed).rng(INTERVENTIONS)

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
    stream = np.random.SeedSequence(seed).spawn(SLACK + 1)[SLACK]
    return int(np.random.default_rng(stream).integers(spec.slack, spec.slack_max + 1))


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

    On a level with an R²-sortability band (:attr:`LevelSpec.r2_sortability_band`) a
    Generator is consumed for as many seeds as it takes to draw one whose instance exists
    (:data:`MAX_BAND_SEEDS` at most).

    Instances are immutable, so the most recent ones of ladder-sized specs are kept and the
    same ``(spec, seed)`` returns the same object again without regenerating it.

    Raises:
        InstanceGenerationError: no draw passed the faithfulness check in ``MAX_ATTEMPTS``, or
            (:class:`OutOfBandError`) an integer seed's sample lies outside the level's band.
        GenerationDeadlineError: ``deadline`` passed first.
    """
    if isinstance(seed, np.random.Generator):
        return draw_instance(spec, seed, deadline=deadline)
    if int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    seed = int(seed)
    if deadline is not None:
        return _generate(spec, seed, deadline)
    if cached_generation(spec):
        return _generate_cached(spec, seed)
    return _generate(spec, seed)


WORLD_SEED_BOUND = 2**63 - 1
"""Every world seed drawn from a Generator is below it (:func:`draw_seed`)."""


def draw_seed(rng: np.random.Generator, low: int = 0) -> int:
    """The next world seed ``rng`` gives: ``rng.integers(low, WORLD_SEED_BOUND)`` (with
    ``low = 0`` the same draw as ``rng.integers(WORLD_SEED_BOUND)``). Every fresh draw takes its
    seeds here: :func:`draw_instance`, the vector env's batched draws and the single env's
    look-ahead, which reads them from a twin generator."""
    return int(rng.integers(low, WORLD_SEED_BOUND))


MAX_BAND_SEEDS = 1000
"""The most seeds :func:`generate_instance` draws from a Generator for one instance of a level
with an R²-sortability band (the frontier's NL20 accepts about half of its seeds)."""


def seeds_known_ahead(spec: LevelSpec) -> bool:
    """Whether a Generator's next draws of ``spec``'s worlds use one seed each, its next
    :func:`draw_seed`, so a caller may read them ahead from a copy of the
    generator; not on a level with an R²-sortability band, where a draw takes seeds until one
    has an instance."""
    return not spec.r2_sortability_band


def draw_instance(
    spec: LevelSpec, rng: np.random.Generator, *, low: int = 0, deadline: float | None = None
) -> Instance:
    """The instance of the first seed drawn from ``rng`` (each ``draw_seed(rng, low)``) that
    has one: the first seed on a level without an R²-sortability
    band, else the first whose sample lies in the band (:data:`MAX_BAND_SEEDS` at most).
    ``generate_instance(spec, rng)`` is ``draw_instance(spec, rng)``; a trainer that must never
    meet a held-out seed draws above them with ``low``.

    Raises:
        InstanceGenerationError: no seed of :data:`MAX_BAND_SEEDS` had an instance, or a draw
            failed the faithfulness check in ``MAX_ATTEMPTS``.
        GenerationDeadlineError: ``deadline`` passed first.
    """
    for _ in range(1 if seeds_known_ahead(spec) else MAX_BAND_SEEDS):
        seed = draw_seed(rng, low)
        try:
            return generate_instance(spec, seed, deadline=deadline)
        except OutOfBandError as error:
            last = error
    raise InstanceGenerationError(spec, last.seed, MAX_BAND_SEEDS) from last


def instances_from(spec: LevelSpec, base: int, count: int) -> list[Instance]:
    """The instances of the first ``count`` seeds from ``base`` up that have one: seeds
    ``base .. base + count - 1`` on a level without an R²-sortability band; on a level with
    one, the seeds whose sample lies outside it are passed over (as a manifest's preflight
    passes over them).

    Raises:
        InstanceGenerationError: :data:`MAX_BAND_SEEDS` seeds in a row had no instance.
    """
    instances: list[Instance] = []
    seed, misses = base, 0
    while len(instances) < count:
        try:
            instances.append(generate_instance(spec, seed))
            misses = 0
        except OutOfBandError as error:
            misses += 1
            if misses == MAX_BAND_SEEDS:
                raise InstanceGenerationError(spec, error.seed, MAX_BAND_SEEDS) from error
        seed += 1
    return instances


_CACHE_MAX_SAMPLE_SIZE = 20_000
"""Instances with at most this many observational values (every ladder level) are cached."""


def cached_generation(spec: LevelSpec) -> bool:
    """Whether :func:`generate_instance` keeps the recent instances of ``spec`` (those with at
    most 20,000 observational values: every ladder level)."""
    return spec.n_obs * spec.d <= _CACHE_MAX_SAMPLE_SIZE


class _RecentInstances:
    """The most recent instances by ``(spec, seed)``, least recently used out first.

    The same (spec, seed) always gives the same immutable instance, and sweeps regenerate
    each manifest instance for every episode (the random baseline runs 100 per instance), so
    recent instances are kept: about 128 x 0.2 MB at most. Calling it is
    ``functools.lru_cache(maxsize=128)(_generate)``'s behaviour; :meth:`put` lets instances
    drawn together (:func:`generate_instances`) join."""

    def __init__(self, maxsize: int) -> None:
        self._maxsize = maxsize
        self._entries: OrderedDict[tuple[LevelSpec, int], Instance] = OrderedDict()

    def __call__(self, spec: LevelSpec, seed: int) -> Instance:
        instance = self.get(spec, seed)
        if instance is None:
            instance = _generate(spec, seed)
            self.put(instance)
        return instance

    def get(self, spec: LevelSpec, seed: int) -> Instance | None:
        """The kept instance of ``(spec, seed)`` (now the most recent), or None."""
        instance = self._entries.get((spec, seed))
        if instance is not None:
            self._entries.move_to_end((spec, seed))
        return instance

    def put(self, instance: Instance) -> None:
        """Keep ``instance`` as the most recent."""
        self._entries[(instance.spec, instance.seed)] = instance
        self._entries.move_to_end((instance.spec, instance.seed))
        while len(self._entries) > self._maxsize:
            self._entries.popitem(last=False)

    def cache_clear(self) -> None:
        """Forget every kept instance (``functools.lru_cache``'s name, for the benchmarks)."""
        self._entries.clear()


_generate_cached = _RecentInstances(maxsize=128)


def keep_instance(instance: Instance) -> None:
    """Keep ``instance`` among the recent instances :func:`generate_instance` serves (a
    world drawn ahead of its use), if its spec's instances are kept at all."""
    if cached_generation(instance.spec):
        _generate_cached.put(instance)


def generate_instances(spec: LevelSpec, seeds: Sequence[int]) -> list[Instance]:
    """``[generate_instance(spec, seed) for seed in seeds]`` (non-negative integer seeds), the
    worlds not kept already drawn together where their kind can (linear-Gaussian worlds under
    ``"reject_world"``: each round's faithfulness checks stacked, the same draws and decisions
    as one at a time) and kept as :func:`generate_instance` keeps them.

    Raises:
        InstanceGenerationError: as :func:`generate_instance`.
    """
    checked = [int(seed) for seed in seeds]
    if any(seed < 0 for seed in checked):
        raise ValueError(f"seeds must be non-negative integers, got {list(seeds)}")
    if not cached_generation(spec):
        return [_generate(spec, seed) for seed in checked]
    found = {seed: _generate_cached.get(spec, seed) for seed in checked}
    missing = list(dict.fromkeys(seed for seed, instance in found.items() if instance is None))
    draw_many = getattr(kind_of(spec), "draw_many", None)
    streams = [SeedStreams(seed) for seed in missing]
    drawn = draw_many(spec, streams) if draw_many is not None and len(missing) > 1 else None
    if drawn is None:
        for seed in missing:
            found[seed] = _generate_cached(spec, seed)
    else:
        kind = kind_of(spec)
        samplers = stream_generators(missing, (OBSERVATIONAL,))[0]
        for seed_streams, world, sampler in zip(streams, drawn, samplers, strict=True):
            instance = _finished(spec, seed_streams, world, sampler)
            kind.check(spec, world.world, instance.i_star)
            _generate_cached.put(instance)
            found[seed_streams.seed] = instance
    instances = [found[seed] for seed in checked]
    assert all(instance is not None for instance in instances)
    return cast(list[Instance], instances)


def _generate(spec: LevelSpec, seed: int, deadline: float | None = None) -> Instance:
    """The seed's streams, the world its kind draws on them, the finished instance."""
    streams = SeedStreams(seed)
    kind = kind_of(spec)
    drawn = kind.draw(spec, streams, deadline)
    instance = _finished(spec, streams, drawn)
    kind.check(spec, drawn.world, instance.i_star)
    return instance


def _finished(
    spec: LevelSpec,
    streams: SeedStreams,
    drawn: DrawnWorld,
    observational: np.random.Generator | None = None,
) -> Instance:
    """The :class:`Instance` of an accepted world: its observational sample (the observational
    stream; ``observational``, a new generator on it, when the caller made one), ``I*`` of its
    graph over the nodes the level lets agents target (:func:`allowed_targets`) and the budget
    ``|I*| + slack (+ the kind's extra budget)``, less the level's ``shortfall`` (never below
    0)."""
    sampler = streams.rng(OBSERVATIONAL) if observational is None else observational
    d_obs = drawn.world.sample(spec.n_obs, sampler)
    band = spec.r2_sortability_band
    if band:
        sortability = r2_sortability_of(d_obs, drawn.dag.adjacency)
        if not abs(sortability - 0.5) <= band:  # NaN (no edge, singular sample) is outside
            raise OutOfBandError(spec, streams.seed, sortability)
    allowed = allowed_targets(spec, drawn.variable_names)
    i_star = (
        minimum_intervention_set(drawn.dag)
        if allowed is None
        else minimum_intervention_subset(drawn.dag, allowed)
    )
    return Instance(
        spec=spec,
        seed=streams.seed,
        dag=drawn.dag,
        scm=drawn.world,
        d_obs=readonly(d_obs),
        i_star=i_star,
        budget=max(
            0,
            len(i_star) + instance_slack(spec, streams.seed) + drawn.extra_budget - spec.shortfall,
        ),
        attempts=drawn.attempts,
        dependence_measure=drawn.dependence_measure,
        weak_edges=drawn.weak_edges,
        admg=drawn.admg,
        variable_names=drawn.variable_names,
        measured_dependence=drawn.measured_dependence,
        intervention_targets=allowed,
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
