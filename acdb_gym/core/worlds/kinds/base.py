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
from typing import Any, Protocol, TypeAlias, cast

import numpy as np
from numpy.random.bit_generator import ISeedSequence

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


STREAMS_TOGETHER_MIN = 16
"""At least this many generators are worth :func:`stream_generators`' stacked hashing (about 60
numpy calls); fewer are made one at a time."""

# numpy's SeedSequence hashing constants (numpy/random/bit_generator.pyx).
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715


def _hash_constants(count: int, init: int, mult: int) -> np.ndarray:
    """The hash constant before each of ``count`` successive hashing steps (it starts at
    ``init`` and is multiplied by ``mult`` modulo 2**32 at every step)."""
    constants = [init]
    for _ in range(count - 1):
        constants.append(constants[-1] * mult & 0xFFFFFFFF)
    return np.array(constants, dtype=np.uint32)


_A = _hash_constants(21, _INIT_A, _MULT_A)  # 20 hashmix steps of a five-word entropy
_B = _hash_constants(9, _INIT_B, _MULT_B)  # 8 output words (4 uint64)


def _hashmix(values: np.ndarray, step: int, count: int) -> np.ndarray:
    """numpy's ``hashmix`` at the ``count`` successive steps from ``step``, one row per step:
    of ``values`` (one row) at each, or of row ``i`` of ``values`` at step ``step + i``."""
    mixed = values ^ _A[step : step + count, None]
    mixed = mixed * _A[step + 1 : step + count + 1, None]
    return mixed ^ (mixed >> np.uint32(16))


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """numpy's ``mix`` of two pool words (elementwise, modulo 2**32)."""
    result: np.ndarray = np.uint32(_MIX_MULT_L) * x - np.uint32(_MIX_MULT_R) * y
    return result ^ (result >> np.uint32(16))


def _pcg64_seeds(seeds: Sequence[int], indices: Sequence[int]) -> np.ndarray:
    """``SeedSequence(seeds[r], spawn_key=(indices[r],)).generate_state(4, np.uint64)`` of every
    row ``r`` (each seed below 2**64), as a ``(rows, 4)`` array: numpy's hashing steps on all
    rows at once. The entropy words of such a seed are its low and high 32 bits, two zeros (a
    spawned sequence pads its run entropy to the pool size) and the index; every hash
    constant depends on the step alone."""
    wide = np.array(seeds, dtype=np.uint64)
    entropy = np.zeros((5, wide.size), dtype=np.uint32)
    entropy[0] = wide & np.uint64(0xFFFFFFFF)
    entropy[1] = wide >> np.uint64(32)
    entropy[4] = indices
    pool = _hashmix(entropy[:4], 0, 4)
    step = 4
    for source in range(4):
        others = [target for target in range(4) if target != source]
        pool[others] = _mix(pool[others], _hashmix(pool[source], step, 3))
        step += 3
    pool = _mix(pool, _hashmix(entropy[4], step, 4))
    words = pool[[0, 1, 2, 3, 0, 1, 2, 3]] ^ _B[:8, None]
    words *= _B[1:, None]
    words ^= words >> np.uint32(16)
    # Little-endian pairs of 32-bit words, as generate_state views them.
    return np.ascontiguousarray(words.T).astype("<u4").view("<u8").astype(np.uint64)


class _KnownState(ISeedSequence):
    """A seed sequence whose ``generate_state(4, np.uint64)`` was computed ahead (what
    ``PCG64`` reads of it)."""

    def __init__(self, words: np.ndarray) -> None:
        self._words = words

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        assert n_words == 4 and np.dtype(dtype) == np.uint64
        return self._words


def stream_generators(
    seeds: Sequence[int], indices: Sequence[int]
) -> list[list[np.random.Generator]]:
    """``[[SeedStreams(seed).rng(index) for seed in seeds] for index in indices]``: generators
    in the same states, the seed sequences' hashing computed for all of them at once when
    there are :data:`STREAMS_TOGETHER_MIN` or more (each generator's
    ``bit_generator.seed_seq`` is then not a ``SeedSequence``: for generators that stay inside
    generation)."""
    rows = [(seed, index) for index in indices for seed in seeds]
    if len(rows) < STREAMS_TOGETHER_MIN or any(not 0 <= seed < 2**64 for seed in seeds):
        return [[SeedStreams(seed).rng(index) for seed in seeds] for index in indices]
    words = _pcg64_seeds([seed for seed, _ in rows], [index for _, index in rows])
    made = [np.random.Generator(np.random.PCG64(cast(Any, _KnownState(row)))) for row in words]
    return [made[i * len(seeds) : (i + 1) * len(seeds)] for i in range(len(indices))]


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
