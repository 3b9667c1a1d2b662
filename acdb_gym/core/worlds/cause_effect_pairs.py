"""Real cause-effect pairs (DESIGN §3.6): the bivariate Tübingen pairs as two-variable worlds.

The shipped file (``core/data/real/tuebingen_pairs.csv.gz``, from ``cdt``) holds 99 bivariate
pairs, each with its cause in column ``A`` and its effect in column ``B``
(``tuebingen_targets.csv`` labels every pair 1, "A causes B"). ``tuebingen_pairs_meta.csv``
gives each pair its number in the original database and that database's dataset weight
(pairs from one dataset share a total weight of at most 1, so one dataset's many pairs do not
dominate an average; :func:`pair_table`).

A :class:`CauseEffectPair` world is one pair under a labelling (which of the two is ``X0``,
drawn per seed), with each column standardized over all of the pair's rows. Its observational
sample is ``n`` of the pair's rows drawn without replacement; no experiment exists. A level with
``n_obs`` rows plays the pairs with at least ``n_obs`` rows (:func:`pairs_with_rows`), the
seed's pair being ``seed mod`` their number.

>>> table = pair_table()
>>> len(table), table[0].original, table[0].rows
(99, 1, 349)
>>> len(pairs_with_rows(94)), len(pairs_with_rows(1000))
(99, 36)
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
from dataclasses import dataclass, field

import numpy as np

from acdb_gym.core.graphs import DAG, data_file
from acdb_gym.core.types import FloatArray, IntArray, readonly
from acdb_gym.core.worlds.soft import SoftKind, measured_data_refuses

__all__ = [
    "MAX_PAIR_ROWS",
    "MIN_PAIR_ROWS",
    "CauseEffectPair",
    "PairInfo",
    "pair_data",
    "pair_for_seed",
    "pair_table",
    "pairs_with_rows",
]

MIN_PAIR_ROWS = 94
"""Rows of the smallest pair (pair 93 of the file): a level with at most this many rows per
sample plays every pair."""

MAX_PAIR_ROWS = 16382
"""Rows of the largest pair (pair 65)."""


@dataclass(frozen=True)
class PairInfo:
    """One pair of the shipped file.

    Attributes:
        index: its position in the file (0-based; the file names it ``pair{index + 1}``).
        name: the file's name for it (``pair1`` ...).
        original: its number in the Tübingen database (``pair0001`` ... ``pair0104``).
        weight: its dataset weight in that database.
        rows: its number of rows.
    """

    index: int
    name: str
    original: int
    weight: float
    rows: int


@functools.cache
def pair_table() -> tuple[PairInfo, ...]:
    """The 99 pairs with their original numbers, weights and sizes (the meta file)."""
    text = data_file("tuebingen_pairs_meta.csv").read_text(encoding="utf-8")
    records = list(csv.DictReader(io.StringIO(text)))
    return tuple(
        PairInfo(index, r["pair"], int(r["original_pair"]), float(r["weight"]), int(r["rows"]))
        for index, r in enumerate(records)
    )


@functools.cache
def _raw_pairs() -> tuple[FloatArray, ...]:
    """Each pair as an ``(rows, 2)`` array, cause then effect, in file order."""
    text = gzip.decompress(data_file("tuebingen_pairs.csv.gz").read_bytes()).decode()
    csv.field_size_limit(max(csv.field_size_limit(), len(text)))
    records = list(csv.reader(io.StringIO(text)))[1:]
    pairs = []
    for _, cause, effect in records:
        pair = np.column_stack([np.array(cause.split(), float), np.array(effect.split(), float)])
        pairs.append(readonly(pair))
    return tuple(pairs)


@functools.cache
def pair_data(index: int) -> FloatArray:
    """Pair ``index`` standardized per column over all its rows (cause, effect), read-only.

    Raises:
        ValueError: ``index`` outside the file's 99 pairs.
    """
    pairs = _raw_pairs()
    if not 0 <= index < len(pairs):
        raise ValueError(f"pair index must be in [0, {len(pairs)}), got {index}")
    raw = pairs[index]
    return readonly((raw - raw.mean(axis=0)) / raw.std(axis=0))


def pairs_with_rows(n_obs: int) -> tuple[int, ...]:
    """The indices of the pairs with at least ``n_obs`` rows, in file order."""
    return tuple(info.index for info in pair_table() if info.rows >= n_obs)


def pair_for_seed(seed: int, n_obs: int) -> int:
    """The pair a seed plays on a level of ``n_obs`` rows: ``seed mod`` the number of pairs
    with that many rows, counted in file order.

    Raises:
        ValueError: no pair has ``n_obs`` rows.
    """
    usable = pairs_with_rows(n_obs)
    if not usable:
        raise ValueError(f"no pair has {n_obs} rows (the largest has {MAX_PAIR_ROWS})")
    return usable[seed % len(usable)]


@dataclass(frozen=True, eq=False)
class CauseEffectPair:
    """One pair under a labelling: the cause is variable ``order[0]``, the effect
    ``order[1]``.

    It has the SCMs' interface (``n_nodes``, ``dag``, ``weights``, ``sample``, ``sample_do``,
    ``parameters``, ``covariance``), but it is data, and no experiment exists: ``sample_do``
    refuses every request.

    Attributes:
        index: the pair (its index in :func:`pair_table`).
        order: the labelling, a permutation of ``(0, 1)``.
        dag: ``X_order[0] -> X_order[1]``.
        weights: the edge's least-squares slope of the standardized effect on the cause
            (descriptive; nothing samples from it).
    """

    index: int
    order: IntArray
    dag: DAG = field(init=False)
    weights: FloatArray = field(init=False)

    def __post_init__(self) -> None:
        order = np.asarray(self.order, dtype=np.int64)
        if sorted(order.tolist()) != [0, 1]:
            raise ValueError(f"order must be a permutation of (0, 1), got {order.tolist()}")
        data = pair_data(self.index)
        cause, effect = int(order[0]), int(order[1])
        weights = np.zeros((2, 2))
        weights[cause, effect] = float(np.mean(data[:, 0] * data[:, 1]))
        object.__setattr__(self, "order", readonly(order))
        object.__setattr__(self, "dag", DAG.from_edges(2, [(cause, effect)]))
        object.__setattr__(self, "weights", readonly(weights))

    @property
    def n_nodes(self) -> int:
        """Number of variables ``d`` (2)."""
        return 2

    @property
    def info(self) -> PairInfo:
        """The pair's entry of :func:`pair_table`."""
        return pair_table()[self.index]

    def sample(self, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` distinct rows of the pair, shape ``(n, 2)``, in the labelling.

        Raises:
            ValueError: ``n`` not in ``[1, rows]``.
        """
        data = pair_data(self.index)
        if not 1 <= n <= data.shape[0]:
            raise ValueError(
                f"n must be in [1, {data.shape[0]}] rows of pair {self.index}, got {n}"
            )
        out = np.empty((n, 2))
        out[:, self.order] = data[rng.choice(data.shape[0], size=n, replace=False)]
        return out

    def sample_do(
        self,
        var: int,
        value: float,
        n: int,
        rng: np.random.Generator,
        *,
        out: FloatArray | None = None,
    ) -> FloatArray:
        """Always refused: a cause-effect pair has no experiment.

        Raises:
            ValueError: always.
        """
        raise ValueError(f"X{var} has no experiment: a cause-effect pair is observational only")

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
        """Always refused: measured data have no model to intervene on softly.

        Raises:
            ValueError: always.
        """
        raise measured_data_refuses(kind)

    def parameters(self) -> FloatArray:
        """The pair and the labelling, for the instance digest."""
        return np.array([self.index, *self.order.tolist()], dtype=np.float64)

    def covariance(self) -> FloatArray:
        """The covariance of all the pair's standardized rows, in the labelling."""
        cov = np.cov(pair_data(self.index).T)
        back = np.argsort(self.order)
        return cov[np.ix_(back, back)]
