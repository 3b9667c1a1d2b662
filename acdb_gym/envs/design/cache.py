"""What a design episode derives from its instance alone, computed once per instance (private).

An RL run resets the design env thousands of times, often on the same instances (a finite
training pool, the manifest seeds, a validation set). Before the first step a reset computes
the estimator's starting graph (PC on the observational sample: most of a reset's cost) and
the sample's summaries (means, standard deviations, correlations, the observational half of
the shift tests). They depend only on the sample, never on the episode, so they are kept in
two small least-recently-used caches. Entries are keyed by a hash of the sample's bytes (with
the level spec and seed for PC), so an injected instance with other data never meets another
instance's entry, and hold no reference to an instance.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from acdb_gym.core.graphs import PDAG, cpdag
from acdb_gym.core.types import FloatArray, readonly
from acdb_gym.core.worlds.instance import Instance, keep_instance
from acdb_gym.discovery import (
    ShiftOrienter,
    greedy_interventional_search,
    pc_cpdag,
    pc_cpdag_many,
)
from acdb_gym.discovery._two_sample import ShiftReference
from acdb_gym.discovery.orientation import DETECTABLE_SHIFT, OrientationRule
from acdb_gym.discovery.pc_many import stacked_correlations

__all__ = [
    "Prepared",
    "Summary",
    "bic_start",
    "clear",
    "fingerprint",
    "moments",
    "prepare",
    "restore",
    "stacked_moment_arrays",
    "stacked_moments",
    "starting_graph",
    "starting_graphs",
    "summary_of",
]

_V = TypeVar("_V")

_MAX_CACHED_VALUES = 20_000
"""Samples with more values than this (no ladder level has them) are summarised every time,
so the summaries' cache stays under about 256 x 4 x 160 kB."""


class _LRU(Generic[_V]):
    """A bounded mapping that forgets the least recently used entry first."""

    def __init__(self, maxsize: int) -> None:
        self._maxsize = maxsize
        self._entries: OrderedDict[Hashable, _V] = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], _V]) -> _V:
        """The entry for ``key``, computed by ``compute()`` on a miss."""
        if key in self._entries:
            self._entries.move_to_end(key)
            return self._entries[key]
        value = compute()
        self._entries[key] = value
        if len(self._entries) > self._maxsize:
            self._entries.popitem(last=False)
        return value

    def find(self, key: Hashable) -> _V | None:
        """The entry for ``key`` (now the most recently used), or None."""
        if key not in self._entries:
            return None
        self._entries.move_to_end(key)
        return self._entries[key]

    def put(self, key: Hashable, value: _V) -> None:
        """Keep ``value`` for ``key`` as the most recently used entry."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self._maxsize:
            self._entries.popitem(last=False)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()


_STARTS: _LRU[PDAG] = _LRU(maxsize=4096)
_SUMMARIES: _LRU[Summary] = _LRU(maxsize=256)


def fingerprint(data: FloatArray) -> tuple[tuple[int, ...], bytes]:
    """The sample's shape and a 256-bit hash of its bytes (SHA-256). The last
    :data:`_FINGERPRINTS_KEPT` read-only samples of cached size are remembered by identity
    (each held, so its identity is not reused): a reset, and a batch prepared ahead of its
    resets, ask several times about the same sample."""
    kept = _fingerprints.get(id(data))
    if kept is not None and kept[0] is data:
        return kept[1]
    digest = hashlib.sha256(np.ascontiguousarray(data).data).digest()  # SHA-NI: 2x BLAKE2b
    result = (data.shape, digest)
    # A writable array could change under the same identity; a large one is not held.
    if not data.flags.writeable and data.size <= _MAX_CACHED_VALUES:
        _fingerprints[id(data)] = (data, result)
        if len(_fingerprints) > _FINGERPRINTS_KEPT:
            _fingerprints.popitem(last=False)
    return result


_FINGERPRINTS_KEPT = 128
"""Samples whose fingerprint :func:`fingerprint` remembers (a vector env's resets of one step,
a look-ahead batch)."""

_fingerprints: OrderedDict[int, tuple[FloatArray, tuple[tuple[int, ...], bytes]]] = OrderedDict()


def starting_graph(instance: Instance, estimator: str) -> PDAG:
    """The estimator's starting graph: ``pc_cpdag(instance.d_obs)`` for ``"pc"``, the pooled
    BIC search on the observational sample alone for ``"bic"``, else the true CPDAG
    (remembered by the DAG itself). PC's and the search's graphs are cached per (spec, seed,
    sample)."""
    if estimator == "true_cpdag":
        return cpdag(instance.dag)
    if estimator == "bic":
        return _STARTS.get(("bic", _start_key(instance)), lambda: bic_start(instance.d_obs))
    return _STARTS.get(_start_key(instance), lambda: pc_cpdag(instance.d_obs))


def bic_start(data: FloatArray) -> PDAG:
    """The ``"bic"`` estimator's graph of an observational sample: the CPDAG of the greedy
    search's best DAG on the BIC (penalty 2, ``bic_active``'s)."""
    return greedy_interventional_search(data, [], penalty=2.0).essential_graph


def starting_graphs(
    instances: Sequence[Instance], estimator: str, *, correlations: FloatArray | None = None
) -> list[PDAG]:
    """:func:`starting_graph` of every instance, in order: for ``"pc"``, the samples whose
    graph is not cached run PC together (:func:`~acdb_gym.discovery.pc_cpdag_many`, the same
    graphs as one at a time), and the cache then serves and keeps each as one call would.
    ``correlations``: the samples' stacked correlations, if the caller has them (row ``k``
    instance ``k``'s; :func:`~acdb_gym.discovery.pc_many.pc_batched_many`)."""
    if estimator != "pc" or len(instances) < 2:
        return [starting_graph(instance, estimator) for instance in instances]
    keys = [_start_key(instance) for instance in instances]
    missing: dict[Hashable, int] = {}
    for k, key in enumerate(keys):
        if key not in _STARTS and key not in missing:
            missing[key] = k
    rows = list(missing.values())
    graphs = pc_cpdag_many(
        [instances[k].d_obs for k in rows],
        correlations=None if correlations is None else correlations[rows],
    )
    computed = dict(zip(missing, graphs, strict=True))

    def start(key: Hashable, instance: Instance) -> PDAG:
        # An entry seen above may have left the cache since (it was the least recent one).
        graph = computed.get(key)
        return _STARTS.get(key, lambda: pc_cpdag(instance.d_obs) if graph is None else graph)

    return [start(key, instance) for key, instance in zip(keys, instances, strict=True)]


def _start_key(instance: Instance) -> Hashable:
    return (instance.spec, instance.seed, fingerprint(instance.d_obs))


@dataclass(frozen=True, eq=False)
class Summary:
    """The observational sample's summaries a design state starts from (read-only).

    Attributes:
        mean: per-variable means.
        sd: per-variable standard deviations (``ddof=1``).
        correlations: the correlation matrix's upper triangle, row-major, as float32 in
            ``[-1, 1]`` (0 where undefined).
        orienter: a :class:`~acdb_gym.discovery.ShiftOrienter` at the starting graph with no
            experiment; copy it, never add to it.
    """

    mean: FloatArray
    sd: FloatArray
    correlations: np.ndarray
    orienter: ShiftOrienter


def summary_of(
    data: FloatArray,
    start: PDAG,
    alpha: float,
    rule: OrientationRule = "power",
    detectable_shift: float = DETECTABLE_SHIFT,
) -> Summary:
    """The :class:`Summary` of ``data`` (``(n_obs, d)``, checked by the caller) with the
    orientation tests at ``alpha`` under ``rule`` from ``start``, cached for samples of ladder
    size."""
    if data.size > _MAX_CACHED_VALUES:
        return _summarize(data, start, alpha, rule, detectable_shift)
    key = _summary_key(data, start, alpha, rule, detectable_shift)
    return _SUMMARIES.get(key, lambda: _summarize(data, start, alpha, rule, detectable_shift))


def _summary_key(
    data: FloatArray, start: PDAG, alpha: float, rule: OrientationRule, detectable_shift: float
) -> Hashable:
    return (
        fingerprint(data),
        start.directed.tobytes(),
        start.undirected.tobytes(),
        alpha,
        rule,
        detectable_shift,
    )


def moments(data: FloatArray) -> tuple[FloatArray, FloatArray, np.ndarray]:
    """The sample's means, standard deviations (``ddof=1``) and float32 correlations (upper
    triangle, row-major, 0 where undefined), read-only: the parts of :class:`Summary` that
    need no starting graph."""
    n_nodes = data.shape[1]
    corr = np.atleast_2d(np.corrcoef(data, rowvar=False))
    upper = corr[np.triu_indices(n_nodes, 1)]
    return (
        readonly(data.mean(axis=0)),
        readonly(data.std(axis=0, ddof=1)),
        readonly(np.clip(np.nan_to_num(upper), -1.0, 1.0).astype(np.float32)),
    )


def stacked_moments(data: FloatArray) -> list[tuple[FloatArray, FloatArray, np.ndarray]]:
    """:func:`moments` of ``k`` samples of one shape at once (``data``: ``(k, n_obs, d)``),
    equal to it bit for bit: the means and standard deviations reduce each sample's rows in
    the same order stacked as alone, and the correlation matrices are ``np.corrcoef``'s steps
    on all samples at once (:func:`~acdb_gym.discovery.pc_many.stacked_correlations`)."""
    means, sds, correlations = stacked_moment_arrays(data)
    return [
        (readonly(means[k]), readonly(sds[k]), readonly(correlations[k]))
        for k in range(data.shape[0])
    ]


def stacked_moment_arrays(
    data: FloatArray, correlations: FloatArray | None = None
) -> tuple[FloatArray, FloatArray, np.ndarray]:
    """:func:`stacked_moments` as three stacked arrays (row ``k`` of each: sample ``k``'s
    means, standard deviations and correlations' upper triangle), writable; ``correlations``:
    the full matrices, ``stacked_correlations(data)``, if the caller has them."""
    means = data.mean(axis=1)
    sds = data.std(axis=1, ddof=1)
    rows, columns = np.triu_indices(data.shape[2], 1)
    matrices = stacked_correlations(data) if correlations is None else correlations
    upper = np.clip(np.nan_to_num(matrices[:, rows, columns]), -1.0, 1.0).astype(np.float32)
    return means, sds, upper


@dataclass(frozen=True, eq=False)
class Prepared:
    """A world made ready ahead of its reset (:func:`prepare`): the instance, PC's start and
    the sample's summary under the key :func:`summary_of` looks it up by (None when it was not
    computed ahead)."""

    instance: Instance
    start: PDAG
    summary_key: Hashable
    summary: Summary | None


def prepare(
    instances: Sequence[Instance],
    alpha: float,
    rule: OrientationRule,
    detectable_shift: float,
) -> list[Prepared]:
    """PC's start of every instance (:func:`starting_graphs`: one stacked call) and the
    summary of its sample with that start, as :func:`summary_of` would compute them, the ones
    missing computed stacked: their moments (:func:`stacked_moments`) and their shift tests'
    observational half (:meth:`ShiftReference.many
    <acdb_gym.discovery._two_sample.ShiftReference.many>`), bit for bit as one at a time. All
    are kept in the caches; :func:`restore` puts one back if the caches have dropped it since
    (other envs in the process fill them too). Samples of different shapes or above the cached
    size get no summary ahead.

    Raises:
        ValueError: a sample PC refuses.
    """
    starts = starting_graphs(instances, "pc")
    samples = [instance.d_obs for instance in instances]
    keys = [
        _summary_key(data, start, alpha, rule, detectable_shift)
        for data, start in zip(samples, starts, strict=True)
    ]
    summaries = [_SUMMARIES.find(key) for key in keys]
    missing = [k for k, summary in enumerate(summaries) if summary is None]
    shapes = {samples[k].shape for k in missing}
    if missing and len(shapes) == 1 and samples[missing[0]].size <= _MAX_CACHED_VALUES:
        data = np.stack([samples[k] for k in missing])
        references = ShiftReference.many(np.ascontiguousarray(data.transpose(0, 2, 1)))
        for k, (mean, sd, correlations), reference in zip(
            missing, stacked_moments(data), references, strict=True
        ):
            orienter = ShiftOrienter(
                starts[k],
                samples[k],
                alpha=alpha,
                rule=rule,
                detectable_shift=detectable_shift,
                reference=reference,
            )
            summary = Summary(mean=mean, sd=sd, correlations=correlations, orienter=orienter)
            _SUMMARIES.put(keys[k], summary)
            summaries[k] = summary
    return [
        Prepared(instance, start, key, summary)
        for instance, start, key, summary in zip(instances, starts, keys, summaries, strict=True)
    ]


def restore(prepared: Prepared) -> None:
    """Put a prepared world's instance, start and summary back in the caches (the most recent
    entries), so its reset finds them whatever the caches dropped since :func:`prepare`."""
    instance = prepared.instance
    keep_instance(instance)
    _STARTS.put(_start_key(instance), prepared.start)
    if prepared.summary is not None:
        _SUMMARIES.put(prepared.summary_key, prepared.summary)


def _summarize(
    data: FloatArray, start: PDAG, alpha: float, rule: OrientationRule, detectable_shift: float
) -> Summary:
    mean, sd, correlations = moments(data)
    orienter = ShiftOrienter(start, data, alpha=alpha, rule=rule, detectable_shift=detectable_shift)
    return Summary(mean=mean, sd=sd, correlations=correlations, orienter=orienter)


def clear() -> None:
    """Forget every cached graph and summary (for tests and benchmarks)."""
    _STARTS.clear()
    _SUMMARIES.clear()
