"""The report's value types: the rows it reads and the frozen results it computes.

Every other module of :mod:`acdb_gym.report` builds or reads these: :class:`Estimate` (a mean with
its bootstrap CI), the Table 2/3 rows (:class:`AgentRow`, :class:`FloorRow`,
:class:`LadderSummary`, :class:`Summary`, :class:`FailedJob`), :class:`PairedTest`,
:class:`SortabilityRow`, the marginal-order audit's :class:`MarginalOrderRow` and
:class:`OrderGain`, and :class:`ReportFiles`, and the type aliases for a result row (the results file's
:class:`~acdb_gym.results.ResultRow`) and its grouping keys.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TypeAlias

from acdb_gym.results import ResultRow

__all__ = [
    "AgentRow",
    "Estimate",
    "FailedJob",
    "FloorRow",
    "GroupKey",
    "InstanceKey",
    "LadderSummary",
    "MarginalOrderRow",
    "OrderGain",
    "PairedTest",
    "ReportFiles",
    "Row",
    "SortabilityRow",
    "Summary",
]

Row: TypeAlias = ResultRow
"""The report's row: the results file's typed row, from the worker to the report."""
GroupKey = tuple[str, str, str]  # (agent, panel, tools)
InstanceKey = tuple[str, str, int]  # (ladder, level, manifest_index)


@dataclass(frozen=True)
class Estimate:
    """A mean over per-seed values with its 95% bootstrap confidence interval.

    ``n`` is the number of per-seed values; with ``n == 0`` every number is NaN.
    """

    mean: float
    low: float
    high: float
    n: int

    @classmethod
    def empty(cls) -> Estimate:
        """The estimate of no values."""
        return cls(math.nan, math.nan, math.nan, 0)


@dataclass(frozen=True)
class AgentRow:
    """One agent row of Tables 2 and 3 on one ladder.

    Attributes:
        label: the readable label, e.g. ``"pc_greedy (active)"``.
        agent, panel, tools: the group key.
        n_seeds: per-seed units (instances with at least one successful episode).
        n_episodes: successful episodes (rows with status ``"ok"``), repeats included.
        n_failed: failed jobs.
        n_truncated: successful episodes that ended by truncation.
        metrics: Table 2: metric name -> estimate over all levels' per-seed values.
        per_level: Table 3: level -> directed-F1 estimate over that level's seeds.
        per_level_skeleton: level -> skeleton-F1 estimate over that level's seeds (the
            measure of agents that orient nothing, such as the correlation-only probe).
    """

    label: str
    agent: str
    panel: str
    tools: str
    n_seeds: int
    n_episodes: int
    n_failed: int
    n_truncated: int
    metrics: Mapping[str, Estimate]
    per_level: Mapping[str, Estimate]
    per_level_skeleton: Mapping[str, Estimate] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class FloorRow:
    """The random floor of one level (or ``level == "overall"``) of a ladder.

    Attributes:
        level: a level name or ``"overall"``.
        closed_form: ``spec.random_floor`` (overall: weighted by instances per level); NaN for a
            level the ladder module does not know.
        measured: directed F1 of the ``random`` agent (``n == 0`` when it was not run).
    """

    level: str
    closed_form: float
    measured: Estimate


@dataclass(frozen=True)
class LadderSummary:
    """Tables 2 and 3 and the random floor of one ladder.

    Attributes:
        ladder: ``"v0"`` or ``"v1"``.
        levels: the levels present, in ladder order.
        rows: the agent rows, best directed F1 first.
        random_floor: one :class:`FloorRow` per level, then ``"overall"``.
    """

    ladder: str
    levels: tuple[str, ...]
    rows: tuple[AgentRow, ...]
    random_floor: tuple[FloorRow, ...]

    def row(self, label: str) -> AgentRow | None:
        """The agent row with this label, or ``None`` if the agent was not run on this ladder."""
        return next((row for row in self.rows if row.label == label), None)


@dataclass(frozen=True)
class FailedJob:
    """A job whose status is ``"failed"``."""

    job_id: str
    ladder: str
    level: str
    manifest_index: int
    label: str
    error: str


@dataclass(frozen=True)
class Summary:
    """Everything :func:`~acdb_gym.report.summarize` computes from a run's rows.

    Attributes:
        ladders: one :class:`LadderSummary` per ladder present, in name order.
        labels: every agent-row label, sorted.
        n_ok: successful episodes.
        n_failed: failed jobs.
        failures: the failed jobs.
        versions: the package versions that wrote the rows.
        mixed_configs: labels whose rows carry more than one distinct ``agent_config`` (they are
            pooled into one agent row; give such agents distinct names to separate them).
    """

    ladders: tuple[LadderSummary, ...]
    labels: tuple[str, ...]
    n_ok: int
    n_failed: int
    failures: tuple[FailedJob, ...]
    versions: tuple[str, ...]
    mixed_configs: tuple[str, ...]

    def ladder(self, name: str) -> LadderSummary:
        """The summary of one ladder.

        Raises:
            KeyError: the ladder has no rows.
        """
        for ladder in self.ladders:
            if ladder.ladder == name:
                return ladder
        raise KeyError(f"no rows for ladder {name!r}; present: {[s.ladder for s in self.ladders]}")


@dataclass(frozen=True)
class PairedTest:
    """A paired sign-flip test of ``agent_a - agent_b`` on one metric.

    Attributes:
        ladder: the ladder tested, or ``None`` when pooled over ladders.
        agent_a, agent_b: the agent-row labels.
        metric: the row field compared.
        n: matched per-seed pairs.
        mean_a, mean_b: the means of each side over the matched seeds.
        mean_difference: the mean of ``a - b`` (``mean_a - mean_b``).
        p_value: two-sided permutation p-value (NaN when ``n == 0``).
        n_higher, n_lower: matched pairs where ``a`` is above / below ``b`` (the rest are ties).
        level: the level tested, or ``None`` when pooled over the ladder's levels.
        ci_low, ci_high: the 95% bootstrap CI of the mean difference (seeds resampled within
            levels).
        sd_difference: the standard deviation of the per-seed differences (``ddof=1``).
        mdd: the minimum detectable difference at 80% power, two-sided alpha 0.05, given
            ``sd_difference`` and ``n`` (:mod:`acdb_gym.report.power`).
        seeds_for_target: the paired seeds that would detect a difference of
            ``target`` at that power (``None``: not computable or no target for this metric).
        target: the difference ``seeds_for_target`` refers to (0.05 for metrics in [0, 1];
            NaN for counts such as SHD).
        p_exact: whether ``p_value`` enumerated every sign pattern (otherwise Monte Carlo).
    """

    ladder: str | None
    agent_a: str
    agent_b: str
    metric: str
    n: int
    mean_a: float
    mean_b: float
    mean_difference: float
    p_value: float
    n_higher: int = 0
    n_lower: int = 0
    level: str | None = None
    ci_low: float = math.nan
    ci_high: float = math.nan
    sd_difference: float = math.nan
    mdd: float = math.nan
    seeds_for_target: int | None = None
    target: float = math.nan
    p_exact: bool = True


@dataclass(frozen=True)
class SortabilityRow:
    """The sortability shortcut checks of one level (or ``level == "overall"``) of a ladder.

    Attributes:
        ladder: the ladder.
        level: a level name or ``"overall"`` (levels weighted by their instances).
        var: var-sortability over the level's instances (mean and 95% bootstrap CI).
        r2: R²-sortability over the same instances.
    """

    ladder: str
    level: str
    var: Estimate
    r2: Estimate


@dataclass(frozen=True)
class OrderGain:
    """What regressing in one direction of a feature's order buys over a random order.

    Attributes:
        direction: ``"asc"`` (smallest value first) or ``"desc"``.
        f1: the mean directed F1 of the regressions in this order.
        random_f1: the mean directed F1 of the same regressions in random orders, on the same
            instances.
        gain: the mean of the per-instance differences ``f1 - random_f1`` with its 95%
            bootstrap CI (instances resampled within levels).
        p_value: the two-sided paired sign-flip p-value of the mean difference.
        p_exact: whether ``p_value`` enumerated every sign pattern (otherwise Monte Carlo).
    """

    direction: str
    f1: float
    random_f1: float
    gain: Estimate
    p_value: float
    p_exact: bool


@dataclass(frozen=True)
class MarginalOrderRow:
    """The marginal-order audit of one feature on one level (or ``"overall"``) of a ladder.

    Attributes:
        ladder: the ladder.
        level: a level name or ``"overall"`` (levels weighted by their instances).
        feature: one of :data:`~acdb_gym.discovery.sortability.MARGINAL_FEATURES`.
        sortability: the feature's sortability over the instances (mean and 95% CI); below
            0.5 the feature falls along the causal order.
        gains: one :class:`OrderGain` per direction, ascending first.
        families: the SCM families of the instances it covers (sorted).
    """

    ladder: str
    level: str
    feature: str
    sortability: Estimate
    gains: tuple[OrderGain, ...]
    families: tuple[str, ...] = ()

    def gain(self, direction: str) -> OrderGain:
        """The gain of one direction.

        Raises:
            KeyError: no gain for that direction.
        """
        for gain in self.gains:
            if gain.direction == direction:
                return gain
        raise KeyError(
            f"no gain for direction {direction!r}; present: {[g.direction for g in self.gains]}"
        )


@dataclass(frozen=True)
class ReportFiles:
    """The files :func:`~acdb_gym.report.write_report` wrote, and the summary they show.

    Attributes:
        markdown: ``report.md``.
        csvs: the CSV tables.
        plots: the PNG plots.
        summary: the aggregated results the files were written from.
        problems: the unreadable lines skipped and the duplicated job ids, as listed in
            ``report.md``.
        html: ``report.html`` (:mod:`acdb_gym.report.html`), whose episode pages are in
            ``episodes/`` beside it; None when it was not written.
    """

    markdown: Path
    csvs: tuple[Path, ...]
    plots: tuple[Path, ...]
    summary: Summary
    problems: tuple[str, ...] = ()
    html: Path | None = None

    @property
    def all(self) -> tuple[Path, ...]:
        """Every written file but the episode pages."""
        html = () if self.html is None else (self.html,)
        return (self.markdown, *self.csvs, *self.plots, *html)
