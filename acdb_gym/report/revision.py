"""The report's revision analysis: how agents change their stated graph as experiments come in.

Rows of agents that state hypotheses carry a ``revision`` record
(:class:`acdb_gym.envs.hypotheses.RevisionRecord`): the hypothesis stated with each experiment
and the submission. The hypothesis *after* ``k`` experiments is the one stated with experiment
``k + 1``, or the submission after the last experiment.

Definitions (per agent row and level):

- **Directed F1 after k experiments**: :func:`acdb_gym.core.scoring.score`'s ``directed_f1`` of
  the hypothesis after ``k`` experiments against the instance's true DAG, averaged over the
  episodes that made at least ``k`` experiments (their number is printed with it).
- **Flips**: each unordered pair of variables is in one of four states in a graph: no edge,
  ``i -> j``, ``j -> i``, undirected. Experiment ``k`` flips a pair when its state differs
  between the hypotheses after ``k - 1`` and after ``k`` experiments. A flip is *toward* the
  truth when the new state is the pair's true state (no edge or the true direction), *away*
  when the old one was, and *sideways* otherwise (e.g. a true edge turned from reversed to
  undirected). An undirected pair is never in its true state. The table gives the mean counts
  per experiment, pooled over all experiments of the agent row and level.
- **Unchanged**: the share of experiments after which the hypothesis is identical to the one
  before.

Experiments whose hypothesis before or after was not stated (a None in the record) are left out
of the flip counts, and the indices without a stated hypothesis out of the F1 means.

The truth is regenerated from the row: ``generate_instance(spec of (ladder, level), seed)``
(a few milliseconds per instance, cached), the same instance the sweep ran (the manifest holds
its digest); a custom level's within the bounded time of
:func:`acdb_gym.core.ladders.custom.regenerate_instance` (a row whose world is not
regenerated has no truth: ``LookupError``). Rows are not deduplicated here beyond what :func:`~acdb_gym.report.aggregation.prepare`
does; each row is one episode.
"""

from __future__ import annotations

import csv
import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar

import numpy as np

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.ladders.custom import parse_level_spec, regenerate_instance
from acdb_gym.core.ladders.shipped import ALL_LADDERS, get_level
from acdb_gym.core.scoring import score
from acdb_gym.core.types import FloatArray, IntArray
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.envs.hypotheses import RevisionRecord
from acdb_gym.report.aggregation import group_of
from acdb_gym.report.document import Part, Table
from acdb_gym.report.types import GroupKey, Row

__all__ = [
    "EpisodeRevision",
    "ExperimentChange",
    "RevisionSummary",
    "episode_revision",
    "experiment_change",
    "revised_episodes",
    "revision_markdown",
    "shift_effects_of",
    "summarize_revisions",
    "true_dag_of",
    "truth_and_budget",
    "write_revision_csv",
]

MAX_INDEX_COLUMNS: Final = 16
"""Experiment indices shown in the report's F1 table (0 .. 15); the CSV holds them all."""

_NO_EDGE, _FORWARD, _BACKWARD, _UNDIRECTED = 0, 1, 2, 3


@dataclass(frozen=True)
class ExperimentChange:
    """What one experiment changed in the stated graph (see the module docstring)."""

    toward: int
    away: int
    sideways: int

    @property
    def unchanged(self) -> bool:
        """No pair changed state."""
        return self.toward + self.away + self.sideways == 0


@dataclass(frozen=True)
class EpisodeRevision:
    """One episode's revision analysis.

    Attributes:
        f1_after: directed F1 of the hypothesis after ``k`` experiments, ``k = 0 .. n``
            (None where no hypothesis was stated).
        changes: per experiment ``k = 1 .. n``, what it changed (None where the hypothesis
            before or after it was not stated).
    """

    f1_after: tuple[float | None, ...]
    changes: tuple[ExperimentChange | None, ...]


@dataclass(frozen=True)
class RevisionSummary:
    """The revision analysis of one agent row on one level of one ladder.

    Attributes:
        ladder, level, label: where, and which agent row.
        episodes: episodes with a revision record.
        experiments: experiments with both hypotheses stated (the flip counts' denominator).
        f1_after: per index ``k``, the mean directed F1 after ``k`` experiments and the number
            of episodes it averages.
        toward, away, sideways: mean flips per experiment.
        unchanged: share of experiments that changed nothing (NaN without experiments).
    """

    ladder: str
    level: str
    label: str
    episodes: int
    experiments: int
    f1_after: tuple[tuple[float, int], ...]
    toward: float
    away: float
    sideways: float
    unchanged: float


# ----------------------------------------------------------------------------- one episode


def _pair_states(graph: PDAG | DAG) -> IntArray:
    """The state of every pair ``i < j``, row-major over the upper triangle."""
    if isinstance(graph, DAG):
        directed, undirected = graph.adjacency, np.zeros_like(graph.adjacency)
    else:
        directed, undirected = graph.directed, graph.undirected
    upper = np.triu_indices(directed.shape[0], k=1)
    states = np.full(upper[0].size, _NO_EDGE, dtype=np.int64)
    states[directed[upper]] = _FORWARD
    states[directed.T[upper]] = _BACKWARD
    states[undirected[upper]] = _UNDIRECTED
    return states


def experiment_change(before: PDAG, after: PDAG, truth: DAG) -> ExperimentChange:
    """The flips from ``before`` to ``after`` relative to ``truth`` (module docstring).

    >>> truth = DAG.from_edges(3, [(0, 1), (1, 2)])
    >>> before = PDAG.from_edges(3, directed=[(1, 0)], undirected=[(1, 2)])
    >>> experiment_change(before, PDAG.from_edges(3, directed=[(0, 1), (2, 1)]), truth)
    ExperimentChange(toward=1, away=0, sideways=1)
    """
    old, new, true = _pair_states(before), _pair_states(after), _pair_states(truth)
    changed = old != new
    toward = int(np.count_nonzero(changed & (new == true)))
    away = int(np.count_nonzero(changed & (old == true)))
    return ExperimentChange(toward, away, int(np.count_nonzero(changed)) - toward - away)


def episode_revision(record: RevisionRecord, truth: DAG) -> EpisodeRevision:
    """The directed F1 after each experiment and each experiment's flips.

    Raises:
        ValueError: ``truth`` and the record have different numbers of nodes.
    """
    if truth.n_nodes != record.n_nodes:
        raise ValueError(
            f"the revision record has {record.n_nodes} nodes, the true DAG {truth.n_nodes}"
        )
    after = [record.after(k) for k in range(record.n_experiments + 1)]
    f1 = tuple(None if g is None else float(score(truth, g).directed_f1) for g in after)
    changes = tuple(
        None if old is None or new is None else experiment_change(old, new, truth)
        for old, new in itertools.pairwise(after)
    )
    return EpisodeRevision(f1, changes)


# ----------------------------------------------------------------------------- the truth


@functools.lru_cache(maxsize=4096)
def _true_world(
    ladder: str, level: str, seed: int, level_spec: str | None
) -> tuple[DAG, int, FloatArray | None]:
    spec = parse_level_spec(level_spec) if level_spec else get_level(ladder, level).spec
    # Bounded for a custom spec a row carries; RegenerationError is a LookupError.
    instance = regenerate_instance(spec, seed)
    linear = getattr(instance.scm, "linear", instance.scm)
    effects = None
    if isinstance(linear, LinearGaussianSCM):
        sd = np.sqrt(np.diag(linear.covariance()))
        effects = linear.mixing * sd[:, None] / sd[None, :]
        effects.flags.writeable = False
    return instance.dag, instance.budget, effects


def _world_of(row: Row) -> tuple[DAG, int, FloatArray | None]:
    ladder, level, spec = row.ladder, row.level, row.level_spec
    if not spec and level not in ALL_LADDERS.get(ladder, {}):
        raise LookupError(f"no level {ladder} {level} to regenerate the instance from")
    return _true_world(ladder, level, row.seed, spec or None)


def shift_effects_of(row: Row) -> FloatArray | None:
    """The standardized total effects of a row's instance, or None for a nonlinear SCM.

    Entry ``[t, j]`` is the shift of the mean of ``X_j``, in its observational standard
    deviations, under ``do(X_t = x)`` with ``x`` one observational standard deviation of ``X_t``
    from its mean: the shift a test on an experiment on ``X_t`` has to detect (0 for a
    non-descendant). Linear SCMs only (Gaussian or not: the same weights and covariance).

    Raises:
        LookupError: as :func:`true_dag_of`.
    """
    return _world_of(row)[2]


def truth_and_budget(row: Row) -> tuple[DAG, int]:
    """The true DAG and the budget of a row's instance, regenerated from its ladder, level and
    seed (and a custom level's spec, which its rows carry).

    Raises:
        LookupError: a level this package does not know and the row carries no spec of.
    """
    dag, budget, _ = _world_of(row)
    return dag, budget


def true_dag_of(row: Row) -> DAG:
    """The true DAG of a row's instance (:func:`truth_and_budget`).

    Raises:
        LookupError: a level this package does not know and the row carries no spec of.
    """
    return truth_and_budget(row)[0]


# ----------------------------------------------------------------------------- aggregation


def summarize_revisions(
    rows: Iterable[Row],
    *,
    labels: Mapping[GroupKey, str] | None = None,
    truth: Callable[[Row], DAG] = true_dag_of,
) -> tuple[RevisionSummary, ...]:
    """The revision analysis of every (ladder, agent row, level) with revision records.

    Args:
        rows: result rows; rows without ``status == "ok"`` or a ``revision`` record
            are ignored, and so are rows whose truth raises ``LookupError`` (the default's, for
            a ladder or level the package does not know).
        labels: agent-row labels by group (``prepare(rows).labels``); by default the agent
            and panel, as ``"pc_greedy (active)"``.
        truth: the true DAG of a row's instance (default: regenerated, :func:`true_dag_of`).

    Returns:
        One summary per (ladder, label, level), sorted by ladder, label and level.

    Raises:
        ValueError: a revision record that cannot be read, naming the row's job id.
    """
    episodes: dict[tuple[str, str, str], list[EpisodeRevision]] = {}
    for key, _, _, analysis in revised_episodes(rows, truth, lambda dag: dag, labels=labels):
        episodes.setdefault(key, []).append(analysis)
    return tuple(_summary(key, episodes[key]) for key in sorted(episodes))


_World = TypeVar("_World")


def revised_episodes(
    rows: Iterable[Row],
    world: Callable[[Row], _World],
    dag_of: Callable[[_World], DAG],
    *,
    labels: Mapping[GroupKey, str] | None = None,
) -> Iterator[tuple[tuple[str, str, str], Row, _World, EpisodeRevision]]:
    """Each ok row with a revision record whose world is known (``world(row)``; a row whose
    world raises ``LookupError`` is skipped): its ``(ladder, label, level)`` key, the row, its
    world and the revision analysed against ``dag_of(world)``.

    Raises:
        ValueError: a revision record that cannot be read, naming the row's job id.
    """
    for row in rows:
        if not row.ok or row.revision is None:
            continue
        try:
            found = world(row)
        except LookupError:
            continue  # a ladder this package does not know: no truth to score against
        try:
            record = row.revision_record()
            assert record is not None
            analysis = episode_revision(record, dag_of(found))
        except ValueError as error:
            raise ValueError(f"row {row.job_id!r}: bad revision record: {error}") from None
        group = group_of(row)
        label = labels[group] if labels is not None else f"{group[0]} ({group[1]})"
        yield (row.ladder, label, row.level), row, found, analysis


def _summary(key: tuple[str, str, str], episodes: Sequence[EpisodeRevision]) -> RevisionSummary:
    ladder, label, level = key
    longest = max(len(e.f1_after) for e in episodes)
    f1_after = []
    for k in range(longest):
        values = [e.f1_after[k] for e in episodes if k < len(e.f1_after)]
        stated = [v for v in values if v is not None]
        f1_after.append((float(np.mean(stated)) if stated else float("nan"), len(stated)))
    changes = [c for e in episodes for c in e.changes if c is not None]
    n = len(changes)

    def per_experiment(total: int) -> float:
        return total / n if n else float("nan")

    return RevisionSummary(
        ladder=ladder,
        level=level,
        label=label,
        episodes=len(episodes),
        experiments=n,
        f1_after=tuple(f1_after),
        toward=per_experiment(sum(c.toward for c in changes)),
        away=per_experiment(sum(c.away for c in changes)),
        sideways=per_experiment(sum(c.sideways for c in changes)),
        unchanged=per_experiment(sum(c.unchanged for c in changes)),
    )


# ----------------------------------------------------------------------------- output


def _number(value: float, digits: int = 2) -> str:
    return "—" if not np.isfinite(value) else f"{value:.{digits}f}"


def _percent(value: float) -> str:
    return "—" if not np.isfinite(value) else f"{100 * value:.1f}"


def revision_markdown(summaries: Sequence[RevisionSummary]) -> list[Part]:
    """The report's "Revision" section (no lines when no row has a revision record)."""
    if not summaries:
        return []
    lines: list[Part] = ["## Revision", ""]
    lines += [
        "Agents that state their current graph with each experiment. After k experiments: the "
        "graph stated with experiment k + 1, or the submission after the last; directed F1 "
        "against the instance's true DAG (regenerated from the row's ladder, level and seed). "
        "A pair of variables flips when its state (no edge, i → j, j → i, undirected) differs "
        "before and after an experiment: toward the truth when the new state is the true one, "
        "away when the old one was, sideways otherwise. Flips are means per experiment; "
        "unchanged is the share of experiments after which the graph was identical.",
        "",
    ]
    for ladder in sorted({s.ladder for s in summaries}):
        rows = [s for s in summaries if s.ladder == ladder]
        lines += [f"### Ladder {ladder}: revisions per experiment", ""]
        headers = ("agent", "level", "episodes", "experiments", "toward", "away", "sideways")
        body = [
            [
                s.label,
                s.level,
                str(s.episodes),
                str(s.experiments),
                _number(s.toward),
                _number(s.away),
                _number(s.sideways),
            ]
            for s in rows
        ]
        lines.append(
            Table.of(
                [*headers, "unchanged (%)"],
                [[*b, _percent(s.unchanged)] for b, s in zip(body, rows, strict=True)],
            )
        )
        lines += _f1_table(ladder, rows)
    return lines


def _f1_table(ladder: str, rows: Sequence[RevisionSummary]) -> list[Part]:
    longest = max(len(s.f1_after) for s in rows)
    shown = min(longest, MAX_INDEX_COLUMNS)
    note = f" Indices above {shown - 1} are in revision.csv." if longest > shown else ""
    lines: list[Part] = [
        f"### Ladder {ladder}: directed F1 (%) after k experiments",
        "",
        "Mean over the episodes with at least k experiments; their number in brackets; k = 0 "
        f"is the graph before the first experiment.{note}",
        "",
    ]
    body = []
    for s in rows:
        cells = [f"{_percent(mean)} ({n})" if n else "—" for mean, n in s.f1_after[:shown]]
        body.append([s.label, s.level, *cells, *["—"] * (shown - len(cells))])
    return [*lines, Table.of(["agent", "level", *(str(k) for k in range(shown))], body)]


CSV_HEADERS: Final = ("ladder", "agent", "level", "k", "episodes", "directed_f1")


def write_revision_csv(path: Path, summaries: Sequence[RevisionSummary]) -> Path:
    """Write the directed F1 after every ``k`` (long format: one line per index) to ``path``."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_HEADERS)
        for s in summaries:
            for k, (mean, n) in enumerate(s.f1_after):
                writer.writerow([s.ladder, s.label, s.level, k, n, repr(mean)])
    return path
