"""What a world kind is: the :class:`WorldKind` protocol, the seed streams it draws from, the
accepted world it returns (:class:`DrawnWorld`) and the errors of a draw that fails.

A kind draws the hidden world of a level from an instance's seed streams and accepts or
rejects it (its faithfulness or family rule), writes its worlds to an instance bank and reads
them back, and may check the finished instance. Sampling (observational, ``do`` and soft
interventions) belongs to the world objects it draws, which all meet :class:`WorldModel`.
:func:`~acdb_gym.core.worlds.instance.generate_instance` splits the streams, asks the table
(:data:`~acdb_gym.core.worlds.kinds.KINDS`) for the kind the spec asks for, and finishes the
instance: the observational sample, ``I*`` and the budget.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias

import numpy as np

from acdb_gym.core.graphs import ADMG, DAG
from acdb_gym.core.types import FloatArray
from acdb_gym.core.worlds.acceptance import PARTIAL_CORRELATION
from acdb_gym.core.worlds.cause_effect_pairs import CauseEffectPair
from acdb_gym.core.worlds.latent import LatentSCM
from acdb_gym.core.worlds.mechanisms import SCM
from acdb_gym.core.worlds.real_experiments import SachsCells
from acdb_gym.core.worlds.soft import SoftKind
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = [
    "CALIBRATION",
    "GRAPH",
    "INTERVENTIONS",
    "MAX_ATTEMPTS",
    "OBSERVATIONAL",
    "SLACK",
    "WEIGHTS",
    "DrawnWorld",
    "GenerationDeadlineError",
    "InstanceGenerationError",
    "OutOfBandError",
    "RealData",
    "SeedStreams",
    "Unbankable",
    "World",
    "WorldKind",
    "WorldModel",
    "check_deadline",
    "no_bank",
]

GRAPH, WEIGHTS, OBSERVATIONAL, INTERVENTIONS, CALIBRATION, SLACK = range(6)
"""The streams of ``SeedSequence(seed).spawn(6)``, by index: the first four equal
``spawn(4)``'s (the linear-Gaussian worlds read only those), the families and hidden
confounders read the calibration stream too, and only a level with a hidden slack
(``LevelSpec.slack_max``) the slack stream."""

MAX_ATTEMPTS = 10_000
"""Rejection-sampling attempts before :class:`InstanceGenerationError`."""

RealData: TypeAlias = SachsCells | CauseEffectPair
"""The worlds of measured data (DESIGN §3.5, §3.6): they sample like SCMs but are data."""

World: TypeAlias = SCM | LatentSCM | RealData
"""What an instance's ``scm`` is: a model, or measured data."""


class WorldModel(Protocol):
    """What every kind's world does: its graph, its numbers for the digest, and its samples
    (observational, under ``do(X_var = value)``, under a soft intervention)."""

    @property
    def n_nodes(self) -> int:
        """Number of variables ``d``."""
        ...

    @property
    def weights(self) -> FloatArray:
        """The world's weight matrix (read-only)."""
        ...

    def parameters(self) -> FloatArray:
        """Every generated number, for the instance digest."""
        ...

    def sample(self, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` observational rows."""
        ...

    def sample_do(
        self,
        var: int,
        value: float,
        n: int,
        rng: np.random.Generator,
        *,
        out: FloatArray | None = None,
    ) -> FloatArray:
        """``n`` rows under ``do(X_var = value)``."""
        ...

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
        """``n`` rows under a soft intervention."""
        ...


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


class OutOfBandError(InstanceGenerationError):
    """The seed's world was drawn, but the R²-sortability of its observational sample lies
    outside the level's band (:attr:`~acdb_gym.core.worlds.spec.LevelSpec.r2_sortability_band`):
    the seed has no instance of ``spec``, and a manifest skips it."""

    def __init__(self, spec: LevelSpec, seed: int, sortability: float) -> None:
        RuntimeError.__init__(
            self,
            f"seed {seed}: the R²-sortability of its observational sample ({sortability:.3f}) "
            f"is outside 0.5 ± {spec.r2_sortability_band} (r2_sortability_band); the seed has "
            f"no instance of this level",
        )
        self.spec, self.seed, self.attempts = spec, seed, 1
        self.sortability = sortability


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


def check_deadline(deadline: float | None, spec: LevelSpec, seed: int, attempts: int) -> None:
    """:class:`GenerationDeadlineError` once ``deadline`` has passed (checked between draws)."""
    if deadline is not None and time.monotonic() > deadline:
        raise GenerationDeadlineError(spec, seed, attempts)


@dataclass(frozen=True)
class SeedStreams:
    """The independent streams of an instance's seed: ``SeedSequence(seed).spawn(5)``, a
    fresh generator on stream ``i`` from :meth:`rng` (the same seed, the same draws)."""

    seed: int

    def sequence(self, index: int) -> np.random.SeedSequence:
        """Stream ``index``'s seed sequence (:data:`GRAPH` ... :data:`CALIBRATION`)."""
        # ``SeedSequence(seed).spawn(n)[k]`` is ``SeedSequence(seed, spawn_key=(k,))``: the
        # same stream without building the others.
        return np.random.SeedSequence(self.seed, spawn_key=(index,))

    def rng(self, index: int) -> np.random.Generator:
        """A new generator on stream ``index``."""
        return np.random.default_rng(self.sequence(index))


@dataclass(frozen=True, eq=False)
class DrawnWorld:
    """A kind's accepted world and what the instance records of how it was drawn.

    Attributes:
        dag: the graph the agent is scored against (a latent world's directed part).
        world: the world (a model, or measured data).
        attempts: draws rejection sampling needed (1: the first was accepted).
        weak_edges: edges still failing the faithfulness check (``"redraw_edges"`` only).
        variable_names: the real names of a fixed topology's variables, in this labelling.
        measured_dependence: the acceptance covariate when the kind measured it.
        dependence_measure: the measure it is of.
        admg: the latent projection of a world with hidden confounders.
        extra_budget: experiments added to ``|I*| + slack`` (one per hidden confounder).
    """

    dag: DAG
    world: World
    attempts: int
    weak_edges: int = 0
    variable_names: tuple[str, ...] | None = None
    measured_dependence: float | None = None
    dependence_measure: str = PARTIAL_CORRELATION
    admg: ADMG | None = None
    extra_budget: int = 0


class WorldKind(Protocol):
    """One kind of hidden world (module docstring); each is one module of
    :mod:`acdb_gym.core.worlds.kinds` and one line of its table.

    Attributes:
        name: a short name (``"linear"``).
        worlds: the classes of the worlds it draws (a bank is written by its worlds' kind).
    """

    name: str
    worlds: tuple[type, ...]

    def matches(self, spec: LevelSpec) -> bool:
        """Whether ``spec`` asks for this kind (the table's first match draws)."""
        ...

    def draw(self, spec: LevelSpec, streams: SeedStreams, deadline: float | None) -> DrawnWorld:
        """The accepted world of ``spec`` on ``streams``; its draw order is what the manifest
        digests pin.

        Raises:
            InstanceGenerationError: no draw accepted in :data:`MAX_ATTEMPTS`.
            GenerationDeadlineError: ``deadline`` passed first.
        """
        ...

    def check(self, spec: LevelSpec, world: World, i_star: frozenset[int]) -> None:
        """Refuse a finished instance the kind cannot serve (ValueError naming why)."""
        ...

    def to_bank(self, worlds: Sequence[World]) -> dict[str, np.ndarray]:
        """The arrays that hold ``worlds`` (one level's, so one kind's) in an instance bank.

        Raises:
            ValueError: a kind whose worlds a bank does not hold.
        """
        ...

    def from_bank(
        self, spec: LevelSpec, dags: Sequence[DAG], arrays: dict[str, np.ndarray]
    ) -> list[World]:
        """The worlds :meth:`to_bank` wrote as ``arrays``, over ``dags``.

        Raises:
            KeyError: an array is missing.
            ValueError: the arrays do not describe worlds over ``dags``.
        """
        ...


def no_bank(why: str) -> ValueError:
    """The error of a kind whose worlds an instance bank does not hold."""
    return ValueError(why)


class Unbankable:
    """The bank methods of a kind whose worlds an instance bank does not hold: both refuse with
    the kind's :attr:`unbankable` reason (:func:`no_bank`)."""

    unbankable: str = "an instance bank does not hold these worlds"

    def to_bank(self, worlds: Sequence[World]) -> dict[str, np.ndarray]:
        raise no_bank(self.unbankable)

    def from_bank(
        self, spec: LevelSpec, dags: Sequence[DAG], arrays: dict[str, np.ndarray]
    ) -> list[World]:
        raise no_bank(self.unbankable)
