"""Real experiments on the Sachs cells (DESIGN §3.5): the pooled cytometry file split into its
nine conditions, and a world whose interventions return the cells of a real perturbation.

The shipped file (``core/data/real/sachs_cytometry.csv.gz``, 7,466 cells) is the nine standard
conditions of Sachs et al. (2005) one after another, in the published order and sizes
(:data:`SACHS_CONDITIONS`): :func:`split_conditions` cuts it there, :func:`mean_change_points`
finds where its column means change (the test compares the two), and each condition's
``signature`` says which proteins its reagent moves and which way, as the study describes it.

:class:`SachsCells` is a world of measured cells, not a model: its observational sample is
cells of the baseline condition (anti-CD3/CD28), and an intervention on a protein returns cells
of the condition whose reagent targets it (:data:`EXPERIMENT_PROTEINS`), drawn without
replacement, so an episode never sees a cell twice (:class:`CellSampler`, one per session).
A reagent is not a ``do()``: it changes its target's activity (not necessarily its measured
phosphorylation), and it may act elsewhere too. The truth is the consensus DAG of §3.3.

>>> [condition.cells for condition in SACHS_CONDITIONS]
[853, 902, 911, 723, 810, 799, 848, 913, 707]
>>> [block.shape[0] for block in split_conditions(sachs_log_cells())][:3]
[853, 902, 911]
"""

from __future__ import annotations

import functools
import gzip
import io
import itertools
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from acdb_gym.core.graphs import DAG, SACHS_PROTEINS, data_file, topology
from acdb_gym.core.types import FloatArray, IntArray, readonly
from acdb_gym.core.worlds.soft import SoftKind, measured_data_refuses

__all__ = [
    "BASELINE",
    "EXPERIMENT_PROTEINS",
    "SACHS_CONDITIONS",
    "CellSampler",
    "Condition",
    "SachsCells",
    "baseline_standardization",
    "condition_shifts",
    "mean_change_points",
    "sachs_log_cells",
    "split_conditions",
]

Action = Literal["baseline", "co-stimulus", "inhibitor", "activator"]
"""What a condition's reagent does: the baseline stimulation itself, a co-stimulus without a
target among the eleven proteins, or an inhibitor or activator of its target's activity."""


@dataclass(frozen=True)
class Condition:
    """One of the nine conditions of the pooled file.

    Attributes:
        number: its place in the published order (1 to 9), which is the file's.
        name: the condition as the study names it.
        action: what its reagent does (:data:`Action`).
        target: the protein (a name of ``SACHS_PROTEINS``) the reagent acts on, which an
            intervention on that protein picks; None for the baseline and the co-stimulus.
        stimulated: the cells also got the baseline's anti-CD3/CD28 (PMA and beta2cAMP were
            given alone, so their contrast with the baseline mixes the reagent with the absent
            stimulation).
        cells: its number of cells (rows of the file).
        signature: ``(protein, direction)`` pairs the study's description predicts, ``+1`` a
            rise and ``-1`` a fall of the log mean against the baseline.
        evidence: why those proteins move, in one sentence.
    """

    number: int
    name: str
    action: Action
    target: str | None
    stimulated: bool
    cells: int
    signature: tuple[tuple[str, int], ...]
    evidence: str


SACHS_CONDITIONS: tuple[Condition, ...] = (
    Condition(
        1,
        "anti-CD3/CD28",
        "baseline",
        None,
        True,
        853,
        (),
        "the general stimulation every other condition is compared with",
    ),
    Condition(
        2,
        "anti-CD3/CD28 + ICAM-2",
        "co-stimulus",
        None,
        True,
        902,
        (),
        "a co-stimulus of the T-cell receptor with no target among the eleven proteins",
    ),
    Condition(
        3,
        "anti-CD3/CD28 + Akt inhibitor",
        "inhibitor",
        "pakts473",
        True,
        911,
        (),
        "inhibits Akt's activity, not its S473 phosphorylation, and Akt has no child in the "
        "consensus graph: no protein is predicted to fall",
    ),
    Condition(
        4,
        "anti-CD3/CD28 + G06976",
        "inhibitor",
        "PKC",
        True,
        723,
        (
            ("PKA", -1),
            ("praf", 1),
            ("pmek", 1),
            ("p44/42", 1),
            ("pakts473", 1),
            ("P38", 1),
            ("pjnk", 1),
        ),
        "a PKC inhibitor; the study infers PKC -> PKA, so PKA falls and the six proteins PKA "
        "inhibits (its children in the consensus graph) rise",
    ),
    Condition(
        5,
        "anti-CD3/CD28 + psitectorigenin",
        "inhibitor",
        "PIP2",
        True,
        810,
        (("PIP2", -1),),
        "inhibits PIP2 production: PIP2 falls",
    ),
    Condition(
        6,
        "anti-CD3/CD28 + U0126",
        "inhibitor",
        "pmek",
        True,
        799,
        (("p44/42", -1), ("pmek", 1)),
        "inhibits MEK's kinase activity: its substrate ERK (p44/42) falls, and MEK's own "
        "phosphorylation rises without ERK's negative feedback",
    ),
    Condition(
        7,
        "anti-CD3/CD28 + LY294002",
        "inhibitor",
        "PIP3",
        True,
        848,
        (("PIP3", -1), ("pakts473", -1)),
        "inhibits PI3K, which makes PIP3 and through it activates Akt: PIP3 and Akt S473 fall",
    ),
    Condition(
        8,
        "PMA",
        "activator",
        "PKC",
        False,
        913,
        (("p44/42", 1), ("pjnk", 1), ("praf", -1)),
        "activates PKC (without anti-CD3/CD28): ERK and JNK rise, and Raf loses its inhibitory "
        "S259 phosphorylation (the praf readout)",
    ),
    Condition(
        9,
        "beta2cAMP",
        "activator",
        "PKA",
        False,
        707,
        (("pmek", -1), ("P38", -1), ("pjnk", -1)),
        "activates PKA (without anti-CD3/CD28), which inhibits its children: MEK, P38 and JNK fall",
    ),
)
"""The nine conditions in the file's (the published) order; the file holds 7,466 cells."""

BASELINE: Condition = SACHS_CONDITIONS[0]
"""The observational condition of the real-experiment level: anti-CD3/CD28 alone."""

EXPERIMENT_PROTEINS: tuple[str, ...] = tuple(
    sorted({c.target for c in SACHS_CONDITIONS if c.target is not None}, key=SACHS_PROTEINS.index)
)
"""The proteins an experiment exists for, in ``SACHS_PROTEINS`` order: pmek, PIP2, PIP3,
pakts473, PKA, PKC (PKC has two: G06976 inhibits it, PMA activates it)."""


@functools.cache
def sachs_log_cells() -> FloatArray:
    """The 7,466 x 11 log cytometry values (read-only; columns in ``SACHS_PROTEINS`` order,
    conditions in :data:`SACHS_CONDITIONS` order). Every raw value is at least 1."""
    raw = gzip.decompress(data_file("sachs_cytometry.csv.gz").read_bytes())
    values = np.loadtxt(io.BytesIO(raw), delimiter=",", skiprows=1, dtype=np.float64)
    return readonly(np.log(values))


def split_conditions(data: FloatArray) -> tuple[FloatArray, ...]:
    """The rows of the pooled file cut into its nine conditions (views of ``data``, in
    :data:`SACHS_CONDITIONS` order).

    Raises:
        ValueError: ``data`` has not the file's 7,466 rows.
    """
    sizes = [condition.cells for condition in SACHS_CONDITIONS]
    if data.shape[0] != sum(sizes):
        raise ValueError(f"the pooled file has {sum(sizes)} rows, got {data.shape[0]}")
    bounds = np.cumsum([0, *sizes])
    return tuple(data[a:b] for a, b in itertools.pairwise(bounds))


def _best_split(data: FloatArray) -> tuple[int, float]:
    """The split of ``data`` into ``[:k]`` and ``[k:]`` that most reduces the within-part sum
    of squares (a change of the mean vector), and that reduction."""
    n = data.shape[0]
    left = np.cumsum(data, axis=0)[:-1]
    right = data.sum(axis=0) - left
    sizes = np.arange(1, n)
    gain = (left**2).sum(axis=1) / sizes + (right**2).sum(axis=1) / (n - sizes)
    k = int(np.argmax(gain))
    return k + 1, float(gain[k] - (data.sum(axis=0) ** 2).sum() / n)


def mean_change_points(data: FloatArray, count: int) -> tuple[int, ...]:
    """``count`` rows where the mean vector of ``data`` changes: binary segmentation on the
    least-squares cost (repeatedly split the segment whose best split reduces the within-segment
    sum of squares most), then each point re-placed at the best split between its neighbours
    until none moves. Each column is standardized first, so every protein weighs alike.

    Raises:
        ValueError: ``count`` is not in ``[1, rows - 1]``.
    """
    n = data.shape[0]
    if not 1 <= count < n:
        raise ValueError(f"count must be in [1, {n - 1}], got {count}")
    scaled = (data - data.mean(axis=0)) / np.where(data.std(axis=0) > 0, data.std(axis=0), 1.0)
    points: list[int] = []
    segments = [(0, n)]
    for _ in range(count):
        splits = [(_best_split(scaled[a:b]), a, b) for a, b in segments if b - a >= 2]
        (k, _), a, b = max(splits, key=lambda item: item[0][1])
        points.append(a + k)
        segments.remove((a, b))
        segments += [(a, a + k), (a + k, b)]
    points.sort()
    for _ in range(20):
        moved = False
        for i in range(len(points)):
            a = points[i - 1] if i else 0
            b = points[i + 1] if i + 1 < len(points) else n
            k = a + _best_split(scaled[a:b])[0]
            moved |= k != points[i]
            points[i] = k
        if not moved:
            break
    return tuple(points)


def condition_shifts() -> FloatArray:
    """``(9, 11)``: each condition's mean log value minus the baseline's, in the baseline's
    standard deviations (the evidence table of DESIGN §3.5; row 0 is all zeros)."""
    blocks = split_conditions(sachs_log_cells())
    base = blocks[0]
    return np.array([(b.mean(axis=0) - base.mean(axis=0)) / base.std(axis=0) for b in blocks])


@functools.cache
def baseline_standardization() -> tuple[FloatArray, FloatArray]:
    """The baseline condition's mean and standard deviation of each log protein: every cell
    the world shows is ``(log value - mean) / sd``, so the observational sample has about unit
    variance and experiments are in the same units."""
    base = split_conditions(sachs_log_cells())[0]
    return readonly(base.mean(axis=0)), readonly(base.std(axis=0))


@functools.cache
def _standardized_blocks() -> tuple[FloatArray, ...]:
    mean, sd = baseline_standardization()
    return tuple(readonly((b - mean) / sd) for b in split_conditions(sachs_log_cells()))


@functools.cache
def _baseline_slopes() -> FloatArray:
    """Each consensus edge's least-squares slope (with an intercept) of the child on its
    parents in the standardized baseline cells; descriptive only (``Instance.weights``)."""
    dag = topology("sachs").dag
    cells = _standardized_blocks()[0]
    slopes = np.zeros((dag.n_nodes, dag.n_nodes))
    for j in range(dag.n_nodes):
        parents = [int(p) for p in dag.parents(j)]
        if parents:
            design = np.column_stack([np.ones(cells.shape[0]), cells[:, parents]])
            solution = np.linalg.lstsq(design, cells[:, j], rcond=None)[0]
            slopes[parents, j] = solution[1:]
    return readonly(slopes)


@dataclass(frozen=True, eq=False)
class SachsCells:
    """The Sachs cells under a labelling: protein ``s`` is variable ``order[s]``.

    It has the SCMs' interface (``n_nodes``, ``dag``, ``weights``, ``sample``, ``sample_do``,
    ``parameters``, ``covariance``), but it is data: ``sample`` draws baseline cells and
    ``sample_do`` draws cells of the condition an intervention picks (:meth:`condition_for`).
    Sessions draw through :meth:`sampler`, which never returns a cell twice.

    Attributes:
        order: the labelling (a permutation of ``0..10``).
        dag: the consensus DAG (DESIGN §3.3) relabelled.
        weights: each edge's least-squares slope in the baseline cells, relabelled
            (descriptive; nothing samples from it).
    """

    order: IntArray
    dag: DAG = field(init=False)
    weights: FloatArray = field(init=False)
    _protein: IntArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        d = len(SACHS_PROTEINS)
        order = np.asarray(self.order, dtype=np.int64)
        if sorted(order.tolist()) != list(range(d)):
            raise ValueError(f"order must be a permutation of 0..{d - 1}, got {order.tolist()}")
        adjacency = np.zeros((d, d), dtype=np.bool_)
        adjacency[np.ix_(order, order)] = topology("sachs").dag.adjacency
        weights = np.zeros((d, d))
        weights[np.ix_(order, order)] = _baseline_slopes()
        object.__setattr__(self, "order", readonly(order))
        object.__setattr__(self, "dag", DAG(adjacency))
        object.__setattr__(self, "weights", readonly(weights))
        object.__setattr__(self, "_protein", readonly(np.argsort(order)))

    @property
    def n_nodes(self) -> int:
        """Number of variables ``d`` (11)."""
        return self.dag.n_nodes

    @property
    def variable_names(self) -> tuple[str, ...]:
        """Each variable's protein in this labelling."""
        return tuple(SACHS_PROTEINS[int(s)] for s in self._protein)

    @property
    def experiment_targets(self) -> frozenset[int]:
        """The variables an experiment exists for (the labelled :data:`EXPERIMENT_PROTEINS`)."""
        return frozenset(int(self.order[SACHS_PROTEINS.index(p)]) for p in EXPERIMENT_PROTEINS)

    @property
    def smallest_block(self) -> int:
        """The fewest cells of a condition an experiment draws from (707, beta2cAMP)."""
        return min(c.cells for c in SACHS_CONDITIONS if c.target is not None)

    def condition_for(self, var: int, value: float) -> Condition:
        """The condition an intervention on ``var`` with ``value`` runs: the one whose reagent
        targets ``var``'s protein; where there are two (PKC), a negative ``value`` picks the
        inhibitor and any other the activator. The value is otherwise ignored.

        Raises:
            ValueError: ``var`` out of range or without an experiment.
        """
        if not 0 <= var < self.n_nodes:
            raise ValueError(f"var must be in [0, {self.n_nodes}), got {var}")
        protein = SACHS_PROTEINS[int(self._protein[var])]
        found = [c for c in SACHS_CONDITIONS if c.target == protein]
        if not found:
            targets = ", ".join(f"X{v}" for v in sorted(self.experiment_targets))
            raise ValueError(f"X{var} has no real experiment; experiments exist for {targets}")
        if len(found) == 1:
            return found[0]
        wanted = "inhibitor" if value < 0 else "activator"
        return next(c for c in found if c.action == wanted)

    def cells(
        self, condition: Condition, rows: IntArray, out: FloatArray | None = None
    ) -> FloatArray:
        """The standardized cells ``rows`` of ``condition``, relabelled (written into ``out``
        when given)."""
        block = _standardized_blocks()[condition.number - 1]
        if out is None:
            out = np.empty((len(rows), self.n_nodes))
        out[:, self.order] = block[rows]
        return out

    def sample(self, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` distinct baseline cells, shape ``(n, d)``.

        Raises:
            ValueError: ``n`` not in ``[1, 853]``.
        """
        if not 1 <= n <= BASELINE.cells:
            raise ValueError(f"n must be in [1, {BASELINE.cells}] baseline cells, got {n}")
        return self.cells(BASELINE, rng.choice(BASELINE.cells, size=n, replace=False))

    def sample_do(
        self,
        var: int,
        value: float,
        n: int,
        rng: np.random.Generator,
        *,
        out: FloatArray | None = None,
    ) -> FloatArray:
        """``n`` distinct cells of the condition :meth:`condition_for` picks (one draw; a session
        draws through :meth:`sampler` instead, so that its experiments share no cell).

        Raises:
            ValueError: no experiment for ``var``, or ``n`` not in ``[1, cells]``.
        """
        condition = self.condition_for(var, value)
        if not 1 <= n <= condition.cells:
            raise ValueError(f"n must be in [1, {condition.cells}], got {n}")
        return self.cells(condition, rng.choice(condition.cells, size=n, replace=False), out)

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

    def sampler(self) -> CellSampler:
        """A fresh per-episode sampler (no cell twice)."""
        return CellSampler(self)

    def parameters(self) -> FloatArray:
        """The labelling, for the instance digest (the cells are fixed data)."""
        return np.asarray(self.order, dtype=np.float64)

    def covariance(self) -> FloatArray:
        """The covariance of all 853 standardized baseline cells, relabelled."""
        cov = np.cov(_standardized_blocks()[0].T)
        return cov[np.ix_(self._protein, self._protein)]


class CellSampler:
    """One episode's experiments on a :class:`SachsCells` world: each condition's cells are
    shuffled by the episode's generator when first used and handed out in that order, so no
    cell comes twice. A request it cannot serve (no experiment, too few unseen cells) raises
    before any random draw."""

    def __init__(self, world: SachsCells) -> None:
        self._world = world
        self._unseen: dict[int, IntArray] = {}

    def draw(
        self, var: int, value: float, n: int, rng: np.random.Generator, out: FloatArray | None
    ) -> FloatArray:
        """``n`` cells not drawn before in this episode, of the condition an intervention on
        ``var`` with ``value`` runs.

        Raises:
            ValueError: no experiment for ``var``, or fewer than ``n`` unseen cells left.
        """
        condition = self._world.condition_for(var, value)
        unseen = self._unseen.get(condition.number)
        left = condition.cells if unseen is None else unseen.size
        if n > left:
            raise ValueError(
                f"the experiment on X{var} ({condition.name}) has {left} unseen cells left, "
                f"{n} asked for"
            )
        if unseen is None:
            unseen = rng.permutation(condition.cells)
        self._unseen[condition.number] = unseen[n:]
        return self._world.cells(condition, unseen[:n], out)
