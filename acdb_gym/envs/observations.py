"""The data part of :class:`~acdb_gym.envs.acdb_env.ACDBEnv`'s observation, in either mode.

``observation="raw"`` carries the samples: the observational sample and a zero-padded block of
every experiment's samples. ``observation="stats"`` carries, per regime (the observational data,
then one slot per experiment), the sufficient statistics of a Gaussian sample: its size, mean
vector and covariance matrix.

Both modes hand out their large blocks through a :class:`SlotBlocks`: each observation gets its
own read-only block (no two observations the caller holds share memory, as Gymnasium requires),
and the memory of blocks the caller has let go of is reused, so a step writes only the slots
filled since that block was last handed out instead of allocating and zeroing the whole block.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Literal, TypedDict, get_args

import numpy as np
from gymnasium import spaces

from acdb_gym.core.types import FloatArray, IntArray
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = [
    "OBSERVATION_MODES",
    "DataObserver",
    "ObservationMode",
    "RawObserver",
    "SlotBlocks",
    "StatsObservation",
    "StatsObserver",
    "block_shape",
    "data_keys",
    "data_spaces",
    "make_observer",
    "regime_statistics",
]

ObservationMode = Literal["raw", "stats"]
OBSERVATION_MODES: tuple[ObservationMode, ...] = get_args(ObservationMode)


class StatsObservation(TypedDict):
    """One observation of :class:`~acdb_gym.envs.acdb_env.ACDBEnv` with ``observation="stats"``."""

    sample_size: IntArray
    mean: FloatArray
    covariance: FloatArray
    targets: IntArray
    values: FloatArray
    budget_remaining: IntArray
    steps_remaining: IntArray
    tool_result: FloatArray


_RAW_KEYS = ("observational", "interventional")
_STATS_KEYS = ("sample_size", "mean", "covariance")


def data_keys(mode: ObservationMode) -> tuple[str, ...]:
    """The observation keys that carry data in ``mode`` (the other keys are the same in both)."""
    return _RAW_KEYS if mode == "raw" else _STATS_KEYS


def data_spaces(spec: LevelSpec, mode: ObservationMode) -> dict[str, spaces.Box]:
    """The Boxes of :func:`data_keys` for a level (``m = spec.max_interventions``)."""
    d, m = spec.d, spec.max_interventions
    if mode == "raw":
        return {
            "observational": spaces.Box(-np.inf, np.inf, (spec.n_obs, d), np.float64),
            "interventional": spaces.Box(-np.inf, np.inf, (m, spec.n_int, d), np.float64),
        }
    return {
        "sample_size": spaces.Box(0, max(spec.n_obs, spec.n_int), (m + 1,), np.int64),
        "mean": spaces.Box(-np.inf, np.inf, (m + 1, d), np.float64),
        "covariance": spaces.Box(-np.inf, np.inf, (m + 1, d, d), np.float64),
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


class SlotBlocks:
    """Read-only copies of a write-once, zero-padded block of slots, one per observation.

    Within an episode slot ``k`` is filled once and never changes, so a block handed out earlier
    and since let go of by the caller differs from the current state only in the slots filled
    after it: :meth:`snapshot` reuses such a block and writes just those. A block is let go of
    when nothing but this pool refers to it (each handed-out array is a view of its block, so a
    caller who keeps the observation, or any slice of it, keeps the block). Blocks are
    read-only outside :meth:`snapshot` and so are their views, so a caller cannot change a block
    the pool will reuse.

    Args:
        shape: the block's shape; slot ``k`` is ``block[k]``.
        pool_size: blocks kept for reuse (a caller who drops each observation at the next step
            leaves one free at every step with 3).
    """

    def __init__(self, shape: tuple[int, ...], *, pool_size: int = 3) -> None:
        self._shape = shape
        self._pool_size = pool_size
        self._episode = 0
        # Each entry: [block, slots filled in it, episode they belong to].
        self._entries: list[list[object]] = []

    def new_episode(self) -> None:
        """Forget the episode's slots: a reused block is cleared of them before it is reused."""
        self._episode += 1

    def snapshot(self, filled: Sequence[FloatArray]) -> FloatArray:
        """A read-only array equal to the block with ``filled[k]`` in slot ``k`` and zeros in
        the other slots, sharing memory with no array handed out earlier that is still held."""
        entry = self._free_entry()
        if entry is None:
            block = np.zeros(self._shape)
            start = 0
            entry = [block, 0, self._episode]
            if len(self._entries) >= self._pool_size:
                self._entries.pop(0)  # the oldest is still held; the caller keeps it
            self._entries.append(entry)
        else:
            block = entry[0]  # type: ignore[assignment]
            start = int(entry[1])  # type: ignore[call-overload]
            block.flags.writeable = True
            if entry[2] != self._episode or start > len(filled):
                block[:start] = 0.0
                start = 0
        for slot in range(start, len(filled)):
            block[slot] = filled[slot]
        block.flags.writeable = False
        entry[1] = len(filled)
        entry[2] = self._episode
        return block[...]

    def _free_entry(self) -> list[object] | None:
        """The pooled block no caller holds with the most slots of this episode, if any."""
        best: list[object] | None = None
        for entry in self._entries:
            # References: the entry's list and getrefcount's own argument.
            if sys.getrefcount(entry[0]) > _UNHELD_REFCOUNT:
                continue
            if best is None or _reuse_rank(entry, self._episode) > _reuse_rank(best, self._episode):
                best = entry
        return best


def _reuse_rank(entry: list[object], episode: int) -> int:
    return int(entry[1]) if entry[2] == episode else -1  # type: ignore[call-overload]


def _refcount_of_a_list_item() -> int:
    entry = [np.zeros(1)]
    return sys.getrefcount(entry[0])


_UNHELD_REFCOUNT = _refcount_of_a_list_item()
"""``sys.getrefcount`` of an array referred to only by one list (measured, not assumed)."""


class DataObserver:
    """The data entries of one episode's observations (a subclass per mode)."""

    def observe(self) -> dict[str, np.ndarray]:
        """The data entries of the current observation."""
        raise NotImplementedError

    def add_experiment(self, samples: FloatArray) -> None:
        """Record the next experiment's samples (the slot after the last one)."""
        raise NotImplementedError


class RawObserver(DataObserver):
    """``observational``: a fresh copy of the sample; ``interventional``: a :class:`SlotBlocks`
    snapshot of the experiments' samples so far."""

    def __init__(self, blocks: SlotBlocks, observational: FloatArray) -> None:
        self._blocks = blocks
        self._observational = observational
        self._experiments: list[FloatArray] = []

    def observe(self) -> dict[str, np.ndarray]:
        return {
            "observational": self._observational.copy(),
            "interventional": self._blocks.snapshot(self._experiments),
        }

    def add_experiment(self, samples: FloatArray) -> None:
        self._experiments.append(samples)


class StatsObserver(DataObserver):
    """Per regime (0: observational, ``k``: experiment ``k``): sample size, mean, covariance.

    Each regime's statistics are computed once, when its data arrives.
    """

    def __init__(self, blocks: SlotBlocks, observational: FloatArray, n_regimes: int) -> None:
        self._blocks = blocks
        self._sizes = np.zeros(n_regimes, dtype=np.int64)
        self._means = np.zeros((n_regimes, observational.shape[1]))
        self._covariances: list[FloatArray] = []
        self._add(observational)

    def observe(self) -> dict[str, np.ndarray]:
        return {
            "sample_size": self._sizes.copy(),
            "mean": self._means.copy(),
            "covariance": self._blocks.snapshot(self._covariances),
        }

    def add_experiment(self, samples: FloatArray) -> None:
        self._add(samples)

    def _add(self, samples: FloatArray) -> None:
        regime = len(self._covariances)
        mean, covariance = regime_statistics(samples)
        self._sizes[regime] = len(samples)
        self._means[regime] = mean
        self._covariances.append(covariance)


def make_observer(
    mode: ObservationMode, blocks: SlotBlocks, observational: FloatArray, spec: LevelSpec
) -> DataObserver:
    """The observer of a new episode in ``mode`` (``blocks`` from :func:`block_shape`)."""
    blocks.new_episode()
    if mode == "raw":
        return RawObserver(blocks, observational)
    return StatsObserver(blocks, observational, spec.max_interventions + 1)


def block_shape(spec: LevelSpec, mode: ObservationMode) -> tuple[int, ...]:
    """The shape of ``mode``'s slot block: experiments' samples, or regimes' covariances."""
    if mode == "raw":
        return (spec.max_interventions, spec.n_int, spec.d)
    return (spec.max_interventions + 1, spec.d, spec.d)
