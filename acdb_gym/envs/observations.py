"""The data part of :class:`~acdb_gym.envs.acdb_env.ACDBEnv`'s observation, in either mode.

``observation="raw"`` carries the samples: the observational sample and a zero-padded block of
every experiment's samples. ``observation="stats"`` carries, per regime (the observational data,
then one slot per experiment), the sufficient statistics of a Gaussian sample: its size, mean
vector and covariance matrix.

Both modes hand out their large blocks through a :class:`SlotBlocks`: each observation gets its
own read-only block (no two observations the caller holds share memory, as Gymnasium requires),
and the memory of blocks the caller has let go of is reused, so a step writes only the slots
filled since that block was last handed out instead of allocating and zeroing the whole block.
Large worlds' blocks of :data:`SHARED_MIN_BYTES` and more come from a :class:`SharedSlots`
instead: every observation a read-only mapping of one file whose slots are written once, so a
step writes only its new slot and no slot is held twice (:func:`slot_pool`).

Levels above ``d = 40`` (:data:`~acdb_gym.core.worlds.linear.DO_MATRIX_MAX_D`; no published result and no
trained policy has one) are sized to what an episode can hold (DESIGN §8): their experiment
slots are the bound :func:`observation_slots` proves for every budget, their unbounded ``Box``es
keep no bound arrays (:class:`RealBox`), and the raw mode hands out the observational sample
from a pool (:func:`sample_pool`; read-only, copied once an episode) instead of a copy per step.
"""

from __future__ import annotations

from typing import Literal, TypedDict, get_args

import numpy as np
from gymnasium import spaces

from acdb_gym.core.types import FloatArray, IntArray
from acdb_gym.core.worlds.linear import DO_MATRIX_MAX_D
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.envs import shared_slots
from acdb_gym.envs.shared_slots import SharedSlots
from acdb_gym.envs.slot_blocks import SlotBlocks

SlotPool = SlotBlocks | SharedSlots
"""Where an observer's slot block comes from: a pool of copies, or (the stats mode's
covariances on large worlds) read-only mappings of one file (:func:`slot_pool`)."""

__all__ = [
    "COMPACT_KEYS",
    "OBSERVATION_MODES",
    "SHARED_MIN_BYTES",
    "CompactObserver",
    "DataObserver",
    "ObservationMode",
    "RawObserver",
    "RealBox",
    "SharedSlots",
    "SlotBlocks",
    "SlotPool",
    "StatsObservation",
    "StatsObserver",
    "block_shape",
    "data_keys",
    "data_spaces",
    "is_large",
    "make_observer",
    "mean_pool",
    "observation_slots",
    "regime_statistics",
    "sample_pool",
    "slot_pool",
]

ObservationMode = Literal["raw", "stats", "compact"]
OBSERVATION_MODES: tuple[ObservationMode, ...] = get_args(ObservationMode)


class StatsObservation(TypedDict):
    """One observation of :class:`~acdb_gym.envs.acdb_env.ACDBEnv` with ``observation="stats"``."""

    sample_size: IntArray
    mean: FloatArray
    covariance: FloatArray
    targets: IntArray
    intervention_values: FloatArray
    budget_remaining: IntArray
    steps_remaining: IntArray
    tool_result: FloatArray


_RAW_KEYS = ("observational", "interventional")
_STATS_KEYS = ("sample_size", "mean", "covariance")
COMPACT_KEYS = ("correlation", "scale", "shift", "spread")
"""The data keys of ``observation="compact"`` (:class:`CompactObserver`)."""
_DATA_KEYS: dict[str, tuple[str, ...]] = {
    "raw": _RAW_KEYS,
    "stats": _STATS_KEYS,
    "compact": COMPACT_KEYS,
}

SHIFT_CLIP = 10.0
"""``shift``: standardized mean shifts are clipped to this many standard deviations."""
SPREAD_CLIP = 5.0
"""``spread``: log ratios of standard deviations are clipped to this magnitude."""


def data_keys(mode: ObservationMode) -> tuple[str, ...]:
    """The observation keys that carry data in ``mode`` (the other keys are the same in all)."""
    return _DATA_KEYS[mode]


def is_large(spec: LevelSpec) -> bool:
    """Whether a level is sized by the large-world rules (``d > 40``, see the module docstring)."""
    return spec.d > DO_MATRIX_MAX_D


def observation_slots(spec: LevelSpec) -> int:
    """The experiment slots of an observation: ``spec.max_interventions`` (``d - 1 + slack``)
    up to ``d = 40``, above that ``min(d - 1, k, d // 2) + slack``.

    The second is a bound on every budget too: ``I*`` is a minimum vertex cover of the covered
    edges, which form a forest (DESIGN §3, step 6), so by König's theorem ``|I*|`` is the size of
    a largest matching of at most ``k`` edges, which holds at most ``d // 2``.

    >>> observation_slots(LevelSpec(d=500, k=750, n_obs=10, n_int=10, noise_var=1.0, slack=1))
    251
    """
    if not is_large(spec):
        return spec.max_interventions
    return min(spec.d - 1, spec.k, spec.d // 2) + spec.slack


class RealBox(spaces.Box):
    """``Box(-inf, inf, shape, float64)`` whose bounds take no memory.

    ``gymnasium.spaces.Box`` stores ``low``, ``high`` and two boolean masks of the full shape
    (18 bytes a value: 2.25 GB for the stats covariance block at ``d = 500``); here they are
    read-only broadcast views of one value each. It is a ``Box`` in every other respect
    (``contains``, ``sample``, flattening); a pickled one is rebuilt from its shape.

    Args:
        shape: the shape of the space.
    """

    def __init__(self, shape: tuple[int, ...]) -> None:
        super().__init__(-np.inf, np.inf, (1,), np.float64)
        self._shape = tuple(int(n) for n in shape)
        self.low = np.broadcast_to(np.float64(-np.inf), self._shape)
        self.high = np.broadcast_to(np.float64(np.inf), self._shape)
        self.bounded_below = np.broadcast_to(np.False_, self._shape)
        self.bounded_above = np.broadcast_to(np.False_, self._shape)
        self.low_repr = self.high_repr = None

    def __repr__(self) -> str:
        return f"Box(-inf, inf, {self._shape}, float64)"

    def __eq__(self, other: object, /) -> bool:
        if isinstance(other, RealBox):
            return self._shape == other._shape
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[RealBox], tuple[tuple[int, ...]]]:
        return (RealBox, (self._shape,))


def _real_box(spec: LevelSpec, shape: tuple[int, ...]) -> spaces.Box:
    return RealBox(shape) if is_large(spec) else spaces.Box(-np.inf, np.inf, shape, np.float64)


def data_spaces(spec: LevelSpec, mode: ObservationMode) -> dict[str, spaces.Box]:
    """The Boxes of :func:`data_keys` for a level (``m`` :func:`observation_slots`)."""
    d, m = spec.d, observation_slots(spec)
    if mode == "compact":
        return {
            "correlation": spaces.Box(-1.0, 1.0, (d * (d - 1) // 2,), np.float64),
            "scale": spaces.Box(-1.0, 1.0, (d,), np.float64),
            "shift": spaces.Box(-1.0, 1.0, (m, d), np.float64),
            "spread": spaces.Box(-1.0, 1.0, (m, d), np.float64),
        }
    if mode == "raw":
        return {
            "observational": _real_box(spec, (spec.n_obs, d)),
            "interventional": _real_box(spec, (m, spec.n_int, d)),
        }
    return {
        "sample_size": spaces.Box(0, max(spec.n_obs, spec.n_int), (m + 1,), np.int64),
        "mean": _real_box(spec, (m + 1, d)),
        "covariance": _real_box(spec, (m + 1, d, d)),
    }


def regime_statistics(samples: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The mean vector and the sample covariance matrix (divisor ``n - 1``) of ``(n, d)`` rows.

    The same arithmetic for every regime, so equal samples give bit-identical statistics.

    >>> mean, cov = regime_statistics(np.array([[0.0, 1.0], [2.0, 1.0]]))
    >>> mean.tolist(), cov.tolist()
    ([1.0, 1.0], [[2.0, 0.0], [0.0, 0.0]])
    """
    mean = samples.mean(axis=0)
    centered = samples - mean
    return mean, (centered.T @ centered) / (len(samples) - 1)


def _covariance_into(centered: FloatArray, out: FloatArray) -> None:
    """Write :func:`regime_statistics`'s covariance of the rows whose centred values are
    ``centered`` into ``out`` (the same products and division, so bit for bit the same)."""
    np.matmul(centered.T, centered, out=out)
    out /= len(centered) - 1


class DataObserver:
    """The data entries of one episode's observations (a subclass per mode)."""

    def observe(self) -> dict[str, np.ndarray]:
        """The data entries of the current observation."""
        raise NotImplementedError

    def add_experiment(self, samples: FloatArray) -> None:
        """Record the next experiment's samples (the slot after the last one)."""
        raise NotImplementedError


class RawObserver(DataObserver):
    """``observational``: a fresh copy of the sample (with ``sample_blocks``, a read-only
    :class:`SlotBlocks` copy of it, whose memory is reused once the caller lets go of it);
    ``interventional``: a :class:`SlotBlocks` snapshot of the experiments' samples so far."""

    def __init__(
        self,
        blocks: SlotPool,
        observational: FloatArray,
        *,
        sample_blocks: SlotPool | None = None,
    ) -> None:
        self._blocks = blocks
        self._observational = observational
        self._sample_blocks = sample_blocks
        self._experiments: list[FloatArray] = []

    def observe(self) -> dict[str, np.ndarray]:
        observational = self._observational
        # Large worlds: a pooled read-only block holding the sample, copied into a block once
        # per episode rather than per step (64 MB at d = 2,000) while the caller drops the
        # observations it is given, and never memory another held observation shares.
        pool = self._sample_blocks
        return {
            "observational": (
                observational.copy() if pool is None else pool.snapshot([observational])[0]
            ),
            "interventional": self._blocks.snapshot(self._experiments),
        }

    def add_experiment(self, samples: FloatArray) -> None:
        self._experiments.append(samples)


class StatsObserver(DataObserver):
    """Per regime (0: observational, ``k``: experiment ``k``): sample size, mean, covariance.

    Each regime's size and mean are computed when its data arrives; its covariance is computed
    once, straight into the slot of the block handed out next (:meth:`SlotBlocks.fill_snapshot`;
    until then the observer keeps the regime's centred rows, ``n_int x d``, not a ``d x d``
    matrix). With a :class:`SlotBlocks` the block handed out last holds it after that (the pool
    never reuses that block while this observer refers to it) and later blocks copy it from
    there: a step writes the new regime's covariance and copies those a reused block lacks.
    With a :class:`SharedSlots` (large worlds) the slot is written once and every later
    observation maps it: a step writes the new regime's covariance only. Neither allocates a
    covariance.
    """

    def __init__(
        self,
        blocks: SlotPool,
        observational: FloatArray,
        n_regimes: int,
        *,
        mean_blocks: SlotBlocks | None = None,
    ) -> None:
        self._blocks = blocks
        self._mean_blocks = mean_blocks
        self._sizes = np.zeros(n_regimes, dtype=np.int64)
        self._means = np.zeros((n_regimes, observational.shape[1]))
        self._latest: FloatArray | None = None
        self._count = 0
        self._pending: list[FloatArray] = []
        self._add(observational)

    def observe(self) -> dict[str, np.ndarray]:
        count = self._count + len(self._pending)
        covariance = self._blocks.fill_snapshot(count, self._fill)
        # Earlier regimes are copied from here into a block that lacks them (a pooled block
        # reused, a pool rebuilt after pickling or in a forked child).
        self._latest, self._count, self._pending = covariance, count, []
        means = self._means
        pool = self._mean_blocks
        return {
            "sample_size": self._sizes.copy(),
            # With a pool: a block whose rows of regimes added since it was last handed out
            # are the only ones written (a full copy is (m + 1) x d floats a step).
            "mean": means.copy() if pool is None else pool.fill_snapshot(count, self._fill_mean),
            "covariance": covariance,
        }

    def add_experiment(self, samples: FloatArray) -> None:
        self._add(samples)

    def _fill(self, regime: int, out: FloatArray) -> None:
        """Write regime ``regime``'s covariance into ``out``: copied from the block handed out
        last, or computed from the centred rows of a regime added since."""
        if regime < self._count:
            assert self._latest is not None
            out[...] = self._latest[regime]
        else:
            _covariance_into(self._pending[regime - self._count], out)

    def _fill_mean(self, regime: int, out: FloatArray) -> None:
        out[...] = self._means[regime]

    def _add(self, samples: FloatArray) -> None:
        regime = self._count + len(self._pending)
        mean = samples.mean(axis=0)  # regime_statistics' steps, the covariance left for later
        self._sizes[regime] = len(samples)
        self._means[regime] = mean
        self._pending.append(samples - mean)


class CompactObserver(DataObserver):
    """``observation="compact"``: what the data say about the graph, at a size that does not
    grow with the samples (DESIGN §8, "Observation modes"):

    * ``correlation``: the observational correlations, upper triangle row by row;
    * ``scale``: each variable's log observational standard deviation, clipped to
      :data:`SPREAD_CLIP` and divided by it (the marginal scales raw samples show);
    * ``shift``: per experiment slot, each variable's mean shift from its observational mean in
      observational standard deviations, clipped to :data:`SHIFT_CLIP` and divided by it;
    * ``spread``: per slot, the log ratio of each variable's standard deviation to its
      observational one, clipped to :data:`SPREAD_CLIP` and divided by it (a hard target is
      constant: -1; a scale intervention shows here, not in the mean).

    Unused slots are 0. Every observation gets its own copies.
    """

    def __init__(self, observational: FloatArray, n_slots: int) -> None:
        d = observational.shape[1]
        self._mean = observational.mean(axis=0)
        sd = observational.std(axis=0, ddof=1)
        self._sd = np.where(sd > 0, sd, 1.0)
        rows, columns = np.triu_indices(d, k=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            matrix = np.atleast_2d(np.corrcoef(observational, rowvar=False))
            correlations = matrix[rows, columns]
        self._correlation = np.clip(np.nan_to_num(correlations), -1.0, 1.0)
        with np.errstate(divide="ignore"):
            self._scale = np.clip(np.log(sd), -SPREAD_CLIP, SPREAD_CLIP) / SPREAD_CLIP
        self._shift = np.zeros((n_slots, d))
        self._spread = np.zeros((n_slots, d))
        self._used = 0

    def observe(self) -> dict[str, np.ndarray]:
        return {
            "correlation": self._correlation.copy(),
            "scale": self._scale.copy(),
            "shift": self._shift.copy(),
            "spread": self._spread.copy(),
        }

    def add_experiment(self, samples: FloatArray) -> None:
        slot = self._used
        shift = (samples.mean(axis=0) - self._mean) / self._sd
        self._shift[slot] = np.clip(shift, -SHIFT_CLIP, SHIFT_CLIP) / SHIFT_CLIP
        with np.errstate(divide="ignore"):
            ratio = np.log(samples.std(axis=0, ddof=1) / self._sd)
        self._spread[slot] = np.clip(ratio, -SPREAD_CLIP, SPREAD_CLIP) / SPREAD_CLIP
        self._used += 1


def slot_pool(spec: LevelSpec, mode: ObservationMode) -> SlotPool:
    """The pool of ``mode``'s slot block (:func:`block_shape`): for a large world's block of
    :data:`SHARED_MIN_BYTES` and more, where the platform has them, read-only mappings of one
    file (:class:`SharedSlots`: a step writes only its new slot, and the slots take memory
    once, not once per block), else a pool of blocks whose slots are copied
    (:class:`SlotBlocks`)."""
    return _pool(spec, block_shape(spec, mode), shared=mode != "compact")


def sample_pool(spec: LevelSpec, mode: ObservationMode) -> SlotPool | None:
    """The pool the raw mode hands out a large world's observational sample from (one slot of
    ``(n_obs, d)``), or None where the observation copies it (small worlds, other modes)."""
    if mode != "raw" or not is_large(spec):
        return None
    return _pool(spec, (1, spec.n_obs, spec.d), shared=True)


def mean_pool(spec: LevelSpec, mode: ObservationMode) -> SlotBlocks | None:
    """The pool of the stats mode's means (``(m + 1, d)``; a step writes the new row), or None."""
    return SlotBlocks((observation_slots(spec) + 1, spec.d)) if mode == "stats" else None


SHARED_MIN_BYTES = 48 << 20
"""Large worlds' slot blocks of at least this size (the whole block, every slot) are handed out
as mappings of one file (:class:`SharedSlots`). A step's mappings cost system calls and fresh
shared pages (tens to hundreds of microseconds), more than the copies they save in a small
block: the raw mode's blocks up to d = 1,000 (40 MB) stay copies. Mapped on the large ladder:
the stats covariances from d = 500 (2 GB), the raw sample and experiments at d = 2,000
(64 and 160 MB)."""


def _pool(spec: LevelSpec, shape: tuple[int, ...], *, shared: bool) -> SlotPool:
    big = int(np.prod(shape)) * 8 >= SHARED_MIN_BYTES
    if shared and big and is_large(spec) and shared_slots.available():
        return SharedSlots(shape)
    return SlotBlocks(shape)


def make_observer(
    mode: ObservationMode,
    blocks: SlotPool,
    observational: FloatArray,
    spec: LevelSpec,
    sample_blocks: SlotPool | None = None,
    *,
    mean_blocks: SlotBlocks | None = None,
) -> DataObserver:
    """The observer of a new episode in ``mode`` (``blocks`` from :func:`block_shape`;
    ``sample_blocks``, of shape ``(1, n_obs, d)``, pools the raw mode's observational sample
    on large worlds; ``mean_blocks``, of shape ``(m + 1, d)``, the stats mode's means)."""
    blocks.new_episode()
    for pool in (sample_blocks, mean_blocks):
        if pool is not None:
            pool.new_episode()
    if mode == "compact":
        return CompactObserver(observational, observation_slots(spec))
    if mode == "raw":
        return RawObserver(blocks, observational, sample_blocks=sample_blocks)
    return StatsObserver(
        blocks, observational, observation_slots(spec) + 1, mean_blocks=mean_blocks
    )


def block_shape(spec: LevelSpec, mode: ObservationMode) -> tuple[int, ...]:
    """The shape of ``mode``'s slot block: experiments' samples, or regimes' covariances (the
    compact mode keeps none: an empty shape)."""
    if mode == "compact":
        return (0,)
    if mode == "raw":
        return (observation_slots(spec), spec.n_int, spec.d)
    return (observation_slots(spec) + 1, spec.d, spec.d)
