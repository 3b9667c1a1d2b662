"""Paper-style report of a sweep run directory (DESIGN §10; paper §5, Tables 2 and 3).

The sweep writes ``RUN_DIR/results.jsonl``, one JSON object per finished job. This module reads
it and produces the paper's tables, the random floor, paired tests and plots:

- **Agent row**: one ``(agent, panel, tools)`` group, labelled ``"pc_greedy (active)"``; the
  tools variant joins the label (``"llm (active, stats)"``) only when the agent was run with more
  than one tools variant.
- **Per-seed unit**: the repeats of one group on one instance ``(ladder, level, manifest_index)``
  are averaged into one value per metric; seeds are the unit of every statistic below. (The
  random baseline's rows are already averages over its draws; each row is one episode.)
- **Table 2**: per ladder and agent row, the mean over all per-seed values of all levels (so
  levels are weighted by their episode counts) with a 95% percentile-bootstrap CI over seeds.
  The bootstrap resamples seeds within each level, keeping the level composition fixed as the
  design does (:func:`bootstrap_ci`).
- **Table 3**: directed F1 per level and agent row (mean and CI over that level's seeds).
- **Random floor**: per level, the measured directed F1 of the ``random`` agent next to the
  closed form ``LADDERS[ladder][level].spec.random_floor``, and overall.
- **Paired tests**: sign-flip permutation tests on the per-seed differences of two agent rows on
  the same instances (:func:`paired_test`).

The module needs numpy and scipy only; matplotlib is imported inside the plotting functions.

>>> row = {"job_id": "a", "status": "ok", "ladder": "v0", "level": "L0", "manifest_index": 0,
...        "agent": "oracle", "panel": "active", "tools": "raw", "directed_f1": 1.0, "shd": 0}
>>> table = summarize([row]).ladder("v0")
>>> table.rows[0].label, table.rows[0].metrics["directed_f1"].mean
('oracle (active)', 1.0)
"""

from __future__ import annotations

import csv
import json
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from scipy import stats

from acdb_gym.core.ladder import LADDERS, LEVEL_NAMES
from acdb_gym.core.scoring import SCORE_FIELDS

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "SCORE_FIELDS",
    "TABLE2_METRICS",
    "AgentRow",
    "Estimate",
    "FailedJob",
    "FloorRow",
    "LadderSummary",
    "PairedTest",
    "ReportFiles",
    "Summary",
    "bootstrap_ci",
    "compare_agents",
    "format_terminal",
    "load_results",
    "paired_test",
    "plot_f1_per_level",
    "plot_precision_recall",
    "summarize",
    "write_report",
]

Row = Mapping[str, Any]
GroupKey = tuple[str, str, str]  # (agent, panel, tools)
InstanceKey = tuple[str, str, int]  # (ladder, level, manifest_index)

RESULTS_FILE: Final = "results.jsonl"
NUMERIC_FIELDS: Final = (
    *SCORE_FIELDS,
    "steps",
    "invalid_actions",
    "wall_time",
    "tokens_in",
    "tokens_out",
)
TABLE2_METRICS: Final = (
    "skeleton_f1",
    "compelled_f1",
    "directed_precision",
    "directed_recall",
    "directed_f1",
    "shd",
    "efficiency",
    "essential_f1",
)
METRIC_TITLES: Final = {
    "skeleton_f1": "Skel F1",
    "compelled_f1": "Comp F1",
    "directed_precision": "Dir P",
    "directed_recall": "Dir R",
    "directed_f1": "Dir F1",
    "shd": "SHD",
    "efficiency": "η",
    "essential_f1": "Ess F1",
}
# Fractions in [0, 1], shown in % like the paper; every other numeric field is a count or time.
PERCENT_METRICS: Final = frozenset(
    name for name in SCORE_FIELDS if name.endswith(("precision", "recall", "f1", "efficiency"))
)
DEFAULT_TEST_METRICS: Final = ("directed_f1", "shd")
COMPARISON_METRICS: Final = ("directed_f1", "shd", "skeleton_f1")
REQUIRED_KEYS: Final = ("job_id", "status", "ladder", "level", "manifest_index", "agent")
ORACLE_AGENT: Final = "oracle"
RANDOM_AGENT: Final = "random"
N_BOOTSTRAP: Final = 2000
CI_LEVEL: Final = 0.95
N_PERMUTATIONS: Final = 10_000
# |P - R| below this (in fraction units) counts as balanced in the precision-vs-recall paragraph.
BALANCE_TOLERANCE: Final = 0.01
_DIRECTED_F1: Final = NUMERIC_FIELDS.index("directed_f1")


# ----------------------------------------------------------------------------- result types


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
    """Everything :func:`summarize` computes from a run's rows.

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


@dataclass(frozen=True)
class ReportFiles:
    """The files :func:`write_report` wrote."""

    markdown: Path
    csvs: tuple[Path, ...]
    plots: tuple[Path, ...]

    @property
    def all(self) -> tuple[Path, ...]:
        """Every written file."""
        return (self.markdown, *self.csvs, *self.plots)


# ----------------------------------------------------------------------------- loading


def load_results(run_dir: str | Path) -> list[dict[str, Any]]:
    """Read ``RUN_DIR/results.jsonl``: successful and failed rows.

    A line that is not a JSON object (e.g. the torn last line of an interrupted sweep), or lacks
    one of the keys ``job_id, status, ladder, level, manifest_index, agent``, or has a status
    other than ``"ok"``/``"failed"``, is skipped with a warning naming its line number. When a
    ``job_id`` occurs more than once (a resumed sweep retried it), its last ``"ok"`` row is kept,
    or its last row if none succeeded.

    Args:
        run_dir: the sweep's run directory.

    Returns:
        The rows as parsed dicts, in file order of the kept occurrences.

    Raises:
        FileNotFoundError: the run directory has no ``results.jsonl``.
    """
    rows, problems = _read_results(Path(run_dir) / RESULTS_FILE)
    for problem in problems:
        warnings.warn(problem, stacklevel=2)
    return rows


def _read_results(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    if not path.is_file():
        raise FileNotFoundError(f"no {RESULTS_FILE} in {path.parent}")
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            row, problem = _parse_line(line)
            if problem:
                problems.append(f"{path.name} line {number}: {problem}; skipped")
            else:
                rows.append(row)
    kept, duplicates = _deduplicate(rows)
    problems.extend(duplicates)
    return kept, problems


def _parse_line(line: str) -> tuple[dict[str, Any], str]:
    torn = "" if line.endswith("\n") else " (torn last line without a newline)"
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        return {}, f"invalid JSON{torn}: {error.msg} (column {error.colno})"
    if not isinstance(row, dict):
        return {}, f"not a JSON object but {type(row).__name__}"
    missing = [key for key in REQUIRED_KEYS if key not in row]
    if missing:
        return {}, f"missing keys {missing}"
    if row["status"] not in ("ok", "failed"):
        return {}, f"status must be 'ok' or 'failed', got {row['status']!r}"
    return row, ""


def _deduplicate(rows: Sequence[Row]) -> tuple[list[dict[str, Any]], list[str]]:
    """Keep one row per job id: the last ``ok`` one, else the last one."""
    chosen: dict[str, int] = {}
    ok_counts: dict[str, int] = {}
    for index, row in enumerate(rows):
        job = str(row["job_id"])
        ok = row["status"] == "ok"
        ok_counts[job] = ok_counts.get(job, 0) + ok
        if job not in chosen or ok or rows[chosen[job]]["status"] != "ok":
            chosen[job] = index
    problems = [
        f"job {job!r} has {count} successful rows; kept the last"
        for job, count in ok_counts.items()
        if count > 1
    ]
    return [dict(rows[index]) for index in sorted(chosen.values())], problems


# ----------------------------------------------------------------------------- preparation


@dataclass(frozen=True)
class _Prepared:
    """Rows split by status, agent-row labels and the per-seed values of every group."""

    ok: tuple[Row, ...]
    failed: tuple[Row, ...]
    labels: Mapping[GroupKey, str]
    # (ladder, group) -> {(level, manifest_index): vector over NUMERIC_FIELDS}
    per_seed: Mapping[tuple[str, GroupKey], Mapping[tuple[str, int], np.ndarray]]


def _prepare(rows: Iterable[Row]) -> _Prepared:
    kept, duplicates = _deduplicate([_checked(row) for row in rows])
    for problem in duplicates:
        warnings.warn(problem, stacklevel=3)
    ok = tuple(row for row in kept if row["status"] == "ok")
    failed = tuple(row for row in kept if row["status"] == "failed")
    return _Prepared(ok, failed, _labels(kept), _per_seed(ok))


def _checked(row: Row) -> Row:
    missing = [key for key in REQUIRED_KEYS if key not in row]
    if missing:
        raise ValueError(f"row {row.get('job_id')!r} lacks keys {missing}")
    if row["status"] not in ("ok", "failed"):
        raise ValueError(
            f"row {row['job_id']!r}: status must be 'ok' or 'failed', got {row['status']!r}"
        )
    return row


def _group(row: Row) -> GroupKey:
    """(agent, panel, tools); an agent configured with a model (LLMs) is named with it, so two
    backbones of ``llm_raw`` are two agent rows."""
    agent = str(row["agent"])
    config = row.get("agent_config")
    if isinstance(config, dict) and config.get("model"):
        agent = f"{agent}[{config['model']}]"
    return (agent, str(row.get("panel", "active")), str(row.get("tools", "raw")))


def _instance(row: Row) -> InstanceKey:
    return (str(row["ladder"]), str(row["level"]), int(row["manifest_index"]))


def _labels(rows: Iterable[Row]) -> dict[GroupKey, str]:
    groups = {_group(row) for row in rows}
    tools_of: dict[str, set[str]] = {}
    for agent, _, tools in groups:
        tools_of.setdefault(agent, set()).add(tools)
    return {
        (agent, panel, tools): (
            f"{agent} ({panel}, {tools})" if len(tools_of[agent]) > 1 else f"{agent} ({panel})"
        )
        for agent, panel, tools in groups
    }


def _as_float(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _per_seed(
    ok_rows: Iterable[Row],
) -> dict[tuple[str, GroupKey], dict[tuple[str, int], np.ndarray]]:
    """Average the repeats of each group on each instance (NaN fields ignored)."""
    collected: dict[tuple[str, GroupKey], dict[tuple[str, int], list[list[float]]]] = {}
    for row in ok_rows:
        ladder, level, index = _instance(row)
        vectors = collected.setdefault((ladder, _group(row)), {}).setdefault((level, index), [])
        vectors.append([_as_float(row.get(name)) for name in NUMERIC_FIELDS])
    return {
        key: {seed: _nanmean(np.array(vectors)) for seed, vectors in seeds.items()}
        for key, seeds in collected.items()
    }


def _nanmean(matrix: np.ndarray) -> np.ndarray:
    """Column means ignoring NaN; NaN where a column has no finite value (and no warning)."""
    finite = np.isfinite(matrix)
    counts = finite.sum(axis=0)
    totals = np.where(finite, matrix, 0.0).sum(axis=0)
    means: np.ndarray = np.full(matrix.shape[1], np.nan)
    np.divide(totals, counts, out=means, where=counts > 0)
    return means


def _level_order(level: str) -> tuple[int, str]:
    return (LEVEL_NAMES.index(level) if level in LEVEL_NAMES else len(LEVEL_NAMES), level)


def _closed_form(ladder: str, level: str) -> float:
    known = LADDERS.get(ladder, {}).get(level)
    return known.spec.random_floor if known is not None else math.nan


# ----------------------------------------------------------------------------- statistics


def bootstrap_ci(
    strata: Sequence[Sequence[float] | np.ndarray],
    *,
    n_resamples: int = N_BOOTSTRAP,
    confidence: float = CI_LEVEL,
    seed: int = 0,
) -> Estimate:
    """Mean and percentile-bootstrap CI of values grouped into strata (e.g. levels).

    Each resample draws, within every stratum, as many values as it holds, with replacement, and
    takes the mean of all drawn values; so the strata keep their weights, as in the design
    (episodes per level). One stratum is the ordinary bootstrap. NaNs are dropped. The generator
    is ``np.random.default_rng(seed)`` per call, so the result does not depend on call order.
    The interval is widened to include the mean when rounding puts it a hair outside (all
    resampled means equal).

    >>> estimate = bootstrap_ci([[0.2, 0.4], [1.0]])
    >>> round(estimate.mean, 4), estimate.n, estimate.low <= estimate.mean <= estimate.high
    (0.5333, 3, True)

    Args:
        strata: the per-seed values of each stratum.
        n_resamples: bootstrap resamples.
        confidence: the interval's coverage.
        seed: the generator seed.

    Returns:
        The :class:`Estimate` (``Estimate.empty()`` when there are no finite values).
    """
    arrays = [np.asarray(values, dtype=np.float64).ravel() for values in strata]
    arrays = [values[np.isfinite(values)] for values in arrays]
    arrays = [values for values in arrays if values.size]
    total = sum(values.size for values in arrays)
    if total == 0:
        return Estimate.empty()
    mean = float(np.concatenate(arrays).mean())
    rng = np.random.default_rng(seed)
    sums = np.zeros(n_resamples)
    for values in arrays:
        sums += values[rng.integers(0, values.size, size=(n_resamples, values.size))].sum(axis=1)
    tail = 50.0 * (1.0 - confidence)
    low, high = np.percentile(sums / total, [tail, 100.0 - tail])
    return Estimate(mean, min(float(low), mean), max(float(high), mean), total)


def _mean_statistic(sample: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(sample, axis=axis)


def _sign_flip_p(differences: np.ndarray) -> float:
    """Two-sided sign-flip p-value of the mean difference (exact when ``2**n <= 10000``)."""
    if differences.size == 1:
        # Both sign patterns are as extreme as the observed one; scipy needs two observations.
        return 1.0
    result = stats.permutation_test(
        (differences,),
        _mean_statistic,
        permutation_type="samples",
        vectorized=True,
        n_resamples=N_PERMUTATIONS,
        alternative="two-sided",
        random_state=0,
    )
    return float(result.pvalue)


def paired_test(
    rows: Iterable[Row],
    agent_a_label: str,
    agent_b_label: str,
    metric: str = "directed_f1",
    *,
    ladder: str | None = None,
) -> PairedTest:
    """Paired sign-flip test of two agent rows on the instances both have a per-seed value for.

    Seeds are matched on ``(ladder, level, manifest_index)``; repeats are averaged first. The
    test is ``scipy.stats.permutation_test`` with ``permutation_type="samples"`` on the per-seed
    differences ``a - b``: under the null every difference's sign is exchangeable. The statistic
    is the mean difference, the alternative two-sided, with 10 000 resamples (exact enumeration
    when ``2**n`` is at most that) and a fixed ``random_state``.

    Args:
        rows: result rows (e.g. from :func:`load_results`).
        agent_a_label: the label of side ``a`` (e.g. ``"pc_greedy (active)"``).
        agent_b_label: the label of side ``b``.
        metric: a score field (or ``steps``, ``invalid_actions``, ``wall_time``, ``tokens_*``).
        ladder: restrict to one ladder; ``None`` pools every ladder.

    Returns:
        The :class:`PairedTest`; ``n == 0`` and NaNs when no instance is shared.

    Raises:
        ValueError: an unknown label or metric.
    """
    return _paired(_prepare(rows), agent_a_label, agent_b_label, metric, ladder)


def _paired(
    prepared: _Prepared, label_a: str, label_b: str, metric: str, ladder: str | None
) -> PairedTest:
    if metric not in NUMERIC_FIELDS:
        raise ValueError(f"metric must be one of {NUMERIC_FIELDS}, got {metric!r}")
    column = NUMERIC_FIELDS.index(metric)
    side_a = _values_of(prepared, label_a, column, ladder)
    side_b = _values_of(prepared, label_b, column, ladder)
    shared = sorted(
        key for key in side_a.keys() & side_b.keys() if np.isfinite(side_a[key] + side_b[key])
    )
    if not shared:
        return PairedTest(ladder, label_a, label_b, metric, 0, *([math.nan] * 4))
    values_a = np.array([side_a[key] for key in shared])
    values_b = np.array([side_b[key] for key in shared])
    differences = values_a - values_b
    return PairedTest(
        ladder=ladder,
        agent_a=label_a,
        agent_b=label_b,
        metric=metric,
        n=len(shared),
        mean_a=float(values_a.mean()),
        mean_b=float(values_b.mean()),
        mean_difference=float(differences.mean()),
        p_value=_sign_flip_p(differences),
    )


def _values_of(
    prepared: _Prepared, label: str, column: int, ladder: str | None
) -> dict[InstanceKey, float]:
    groups = [group for group, name in prepared.labels.items() if name == label]
    if not groups:
        raise ValueError(f"unknown agent row {label!r}; known: {sorted(prepared.labels.values())}")
    return {
        (run_ladder, level, index): float(vector[column])
        for (run_ladder, group), seeds in prepared.per_seed.items()
        if group == groups[0] and ladder in (None, run_ladder)
        for (level, index), vector in seeds.items()
    }


def compare_agents(
    rows: Iterable[Row],
    *,
    pairs: Iterable[tuple[str, str]] = (),
    metrics: Sequence[str] = DEFAULT_TEST_METRICS,
    summary: Summary | None = None,
) -> tuple[PairedTest, ...]:
    """The report's paired tests, per ladder.

    By default the best non-oracle agent row of each ladder (highest directed F1) is tested
    against every other agent row with results on that ladder; each of ``pairs`` is tested on
    every ladder where both rows have results. Every test is run for each of ``metrics``.

    Args:
        rows: result rows.
        pairs: extra ``(label_a, label_b)`` pairs.
        metrics: the metrics to test.
        summary: ``summarize(rows)`` if already computed.

    Returns:
        The tests, defaults first, without duplicates.

    Raises:
        ValueError: a label of ``pairs`` names no agent row.
    """
    prepared = _prepare(rows)
    summary = summary if summary is not None else _summarize(prepared)
    wanted = list(pairs)
    for label in {label for pair in wanted for label in pair}:
        if label not in summary.labels:
            raise ValueError(f"unknown agent row {label!r}; known: {list(summary.labels)}")
    plan: list[tuple[str, str, str]] = []
    for table in summary.ladders:
        plan.extend((table.ladder, a, b) for a, b in _default_pairs(table))
        plan.extend((table.ladder, a, b) for a, b in wanted if _has_results(table, a, b))
    unique = list(dict.fromkeys(plan))
    return tuple(
        _paired(prepared, a, b, metric, ladder) for ladder, a, b in unique for metric in metrics
    )


def _default_pairs(table: LadderSummary) -> list[tuple[str, str]]:
    scored = [row for row in table.rows if row.n_seeds > 0]
    candidates = [row for row in scored if row.agent != ORACLE_AGENT]
    if not candidates:
        return []
    best = max(candidates, key=lambda row: _sort_value(row.metrics["directed_f1"].mean))
    return [(best.label, row.label) for row in scored if row.label != best.label]


def _has_results(table: LadderSummary, label_a: str, label_b: str) -> bool:
    rows = (table.row(label_a), table.row(label_b))
    return all(row is not None and row.n_seeds > 0 for row in rows)


def _sort_value(value: float) -> float:
    return value if math.isfinite(value) else -math.inf


# ----------------------------------------------------------------------------- summary


def summarize(rows: Iterable[Row]) -> Summary:
    """Tables 2 and 3 and the random floor of every ladder in ``rows``.

    Args:
        rows: result rows (e.g. from :func:`load_results`); failed rows are counted and listed.

    Returns:
        The :class:`Summary`.

    Raises:
        ValueError: a row lacks a required key or has an unknown status.
    """
    return _summarize(_prepare(rows))


def _summarize(prepared: _Prepared) -> Summary:
    everything = (*prepared.ok, *prepared.failed)
    ladders = sorted({str(row["ladder"]) for row in everything})
    failures = tuple(
        FailedJob(
            job_id=str(row["job_id"]),
            ladder=str(row["ladder"]),
            level=str(row["level"]),
            manifest_index=int(row["manifest_index"]),
            label=prepared.labels[_group(row)],
            error=str(row.get("error") or "(no error message)"),
        )
        for row in prepared.failed
    )
    return Summary(
        ladders=tuple(_ladder_summary(prepared, ladder) for ladder in ladders),
        labels=tuple(sorted(prepared.labels.values())),
        n_ok=len(prepared.ok),
        n_failed=len(prepared.failed),
        failures=failures,
        versions=tuple(sorted({str(row["version"]) for row in everything if row.get("version")})),
        mixed_configs=_mixed_configs(prepared),
    )


def _mixed_configs(prepared: _Prepared) -> tuple[str, ...]:
    configs: dict[GroupKey, set[str]] = {}
    for row in (*prepared.ok, *prepared.failed):
        text = json.dumps(row.get("agent_config"), sort_keys=True, default=str)
        configs.setdefault(_group(row), set()).add(text)
    mixed = sorted(prepared.labels[group] for group, seen in configs.items() if len(seen) > 1)
    for label in mixed:
        warnings.warn(
            f"agent row {label!r} pools rows with different agent_config values; "
            "give them distinct agent names to report them separately",
            stacklevel=4,
        )
    return tuple(mixed)


def _ladder_summary(prepared: _Prepared, ladder: str) -> LadderSummary:
    rows = [row for row in (*prepared.ok, *prepared.failed) if row["ladder"] == ladder]
    levels = tuple(sorted({str(row["level"]) for row in rows}, key=_level_order))
    agent_rows = [
        _agent_row(prepared, ladder, levels, group, rows) for group in {_group(row) for row in rows}
    ]
    agent_rows.sort(key=lambda row: (-_sort_value(row.metrics["directed_f1"].mean), row.label))
    return LadderSummary(ladder, levels, tuple(agent_rows), _random_floor(prepared, ladder, rows))


def _agent_row(
    prepared: _Prepared,
    ladder: str,
    levels: Sequence[str],
    group: GroupKey,
    ladder_rows: Sequence[Row],
) -> AgentRow:
    seeds = prepared.per_seed.get((ladder, group), {})
    strata = _by_level(seeds, levels)
    mine = [row for row in ladder_rows if _group(row) == group]
    ok = [row for row in mine if row["status"] == "ok"]
    metrics = {
        name: bootstrap_ci([values[:, NUMERIC_FIELDS.index(name)] for values in strata.values()])
        for name in TABLE2_METRICS
    }
    per_level = {level: bootstrap_ci([strata[level][:, _DIRECTED_F1]]) for level in levels}
    return AgentRow(
        label=prepared.labels[group],
        agent=group[0],
        panel=group[1],
        tools=group[2],
        n_seeds=len(seeds),
        n_episodes=len(ok),
        n_failed=len(mine) - len(ok),
        n_truncated=sum(bool(row.get("truncated")) for row in ok),
        metrics=MappingProxyType(metrics),
        per_level=MappingProxyType(per_level),
    )


def _by_level(
    seeds: Mapping[tuple[str, int], np.ndarray], levels: Sequence[str]
) -> dict[str, np.ndarray]:
    """The per-seed vectors of each level as a ``(n_seeds, n_fields)`` matrix."""
    return {
        level: np.array(
            [vector for (name, _), vector in sorted(seeds.items(), key=_key) if name == level]
        ).reshape(-1, len(NUMERIC_FIELDS))
        for level in levels
    }


def _key(item: tuple[tuple[str, int], np.ndarray]) -> tuple[str, int]:
    return item[0]


def _random_floor(prepared: _Prepared, ladder: str, rows: Sequence[Row]) -> tuple[FloorRow, ...]:
    """Closed-form and measured random floor per level and overall.

    Every ``random`` group counts (e.g. both panels); per instance their values are averaged.
    """
    measured: dict[str, dict[int, list[float]]] = {}
    for (run_ladder, group), seeds in prepared.per_seed.items():
        if run_ladder == ladder and group[0] == RANDOM_AGENT:
            for (level, index), vector in seeds.items():
                measured.setdefault(level, {}).setdefault(index, []).append(vector[_DIRECTED_F1])
    instances: dict[str, set[int]] = {}
    for row in rows:
        instances.setdefault(str(row["level"]), set()).add(int(row["manifest_index"]))
    levels = sorted(instances, key=_level_order)
    strata = {
        level: [float(np.mean(values)) for values in measured.get(level, {}).values()]
        for level in levels
    }
    floors = [
        FloorRow(level, _closed_form(ladder, level), bootstrap_ci([strata[level]]))
        for level in levels
    ]
    weights = np.array([len(instances[level]) for level in levels], dtype=np.float64)
    closed = float(np.average([floor.closed_form for floor in floors], weights=weights))
    floors.append(FloorRow("overall", closed, bootstrap_ci(list(strata.values()))))
    return tuple(floors)


# ----------------------------------------------------------------------------- formatting


def _is_percent(metric: str) -> bool:
    return metric in PERCENT_METRICS


def _scaled(value: float, metric: str) -> float:
    return 100.0 * value if _is_percent(metric) else value


def _number(value: float, metric: str) -> str:
    if not math.isfinite(value):
        return "—"
    return f"{_scaled(value, metric):.1f}" if _is_percent(metric) else f"{value:.2f}"


def _with_ci(estimate: Estimate, metric: str) -> str:
    if estimate.n == 0:
        return "—"
    return (
        f"{_number(estimate.mean, metric)} "
        f"[{_number(estimate.low, metric)}, {_number(estimate.high, metric)}]"
    )


def _p_value(p: float) -> str:
    if not math.isfinite(p):
        return "—"
    if p < 1e-4:
        return "<1e-4"
    return f"{p:.4f}" if p < 0.01 else f"{p:.3f}"


def _difference(test: PairedTest) -> str:
    if not math.isfinite(test.mean_difference):
        return "—"
    if _is_percent(test.metric):
        return f"{100.0 * test.mean_difference:+.1f} pts"
    return f"{test.mean_difference:+.2f}"


def _md_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _md_table(headers: Sequence[str], body: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines.extend("| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in body)
    return [*lines, ""]


def _text_table(headers: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    """An aligned plain-text table: first column left-aligned, the rest right-aligned."""
    table = [list(headers), *[list(row) for row in body]]
    widths = [max(len(row[column]) for row in table) for column in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [cells[0].ljust(widths[0])]
        parts.extend(cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return [line(table[0]), rule, *(line(row) for row in table[1:])]


def _table2_body(table: LadderSummary, *, ci: bool) -> list[list[str]]:
    body = []
    for row in table.rows:
        cells = [row.label, str(row.n_seeds), str(row.n_episodes), str(row.n_failed)]
        for metric in TABLE2_METRICS:
            estimate = row.metrics[metric]
            cells.append(_with_ci(estimate, metric) if ci else _number(estimate.mean, metric))
        body.append(cells)
    return body


def _table3_body(table: LadderSummary, *, ci: bool) -> list[list[str]]:
    body = []
    for row in table.rows:
        estimates = [*(row.per_level[level] for level in table.levels), row.metrics["directed_f1"]]
        cells = [
            _with_ci(e, "directed_f1") if ci else _number(e.mean, "directed_f1") for e in estimates
        ]
        body.append([row.label, *cells])
    return body


def _floor_body(table: LadderSummary, *, ci: bool) -> list[list[str]]:
    body = []
    for floor in table.random_floor:
        measured = (
            _with_ci(floor.measured, "directed_f1")
            if ci
            else _number(floor.measured.mean, "directed_f1")
        )
        body.append(
            [
                floor.level,
                _number(floor.closed_form, "directed_f1"),
                measured,
                str(floor.measured.n),
            ]
        )
    return body


TABLE2_HEADERS: Final = (
    "agent",
    "seeds",
    "episodes",
    "failed",
    *(METRIC_TITLES[metric] for metric in TABLE2_METRICS),
)
FLOOR_HEADERS: Final = ("level", "closed form", "measured (random)", "seeds")


def _comparison_body(summary: Summary) -> tuple[list[str], list[list[str]]]:
    names = [table.ladder for table in summary.ladders]
    headers = ["agent"]
    headers.extend(f"{METRIC_TITLES[m]} {name}" for m in COMPARISON_METRICS for name in names)
    body = []
    for label in summary.labels:
        cells = [label]
        for metric in COMPARISON_METRICS:
            for table in summary.ladders:
                row = table.row(label)
                mean = row.metrics[metric].mean if row is not None else math.nan
                cells.append(_number(mean, metric))
        body.append(cells)
    return headers, body


def format_terminal(summary: Summary) -> str:
    """Tables 2 and 3 (and the random floor) as aligned plain text, means only.

    When the summary spans more than one ladder, a final table puts every agent row's directed
    F1, SHD and skeleton F1 on each ladder side by side.

    Args:
        summary: from :func:`summarize`.

    Returns:
        The text, ending with a newline.
    """
    lines = [
        f"{summary.n_ok} episodes, {summary.n_failed} failed jobs; "
        "values in % except SHD (mean edge count); means over seeds"
    ]
    for table in summary.ladders:
        lines += ["", f"== ladder {table.ladder}: Table 2 (average across levels) =="]
        lines += _text_table(TABLE2_HEADERS, _table2_body(table, ci=False))
        lines += ["", f"== ladder {table.ladder}: Table 3 (directed F1 per level) =="]
        lines += _text_table(["agent", *table.levels, "overall"], _table3_body(table, ci=False))
        lines += ["", f"== ladder {table.ladder}: random floor (directed F1) =="]
        lines += _text_table(FLOOR_HEADERS, _floor_body(table, ci=False))
    if len(summary.ladders) > 1:
        headers, body = _comparison_body(summary)
        lines += ["", "== ladders side by side =="]
        lines += _text_table(headers, body)
    return "\n".join(lines) + "\n"


def _commitment(row: AgentRow) -> str:
    precision, recall = row.metrics["directed_precision"], row.metrics["directed_recall"]
    if precision.n == 0 or not math.isfinite(precision.mean + recall.mean):
        return f"- **{row.label}**: no scored episodes."
    gap = precision.mean - recall.mean
    numbers = f"precision {100 * precision.mean:.1f}% vs recall {100 * recall.mean:.1f}%"
    if abs(gap) < BALANCE_TOLERANCE:
        verdict = "balanced: about as many oriented edges as true edges"
    elif gap > 0:
        verdict = "precision exceeds recall: under-commits (fewer oriented edges than true edges)"
    else:
        verdict = "recall exceeds precision: over-commits (more oriented edges than true edges)"
    return f"- **{row.label}**: {numbers} — {verdict}."


# ----------------------------------------------------------------------------- Markdown


def _markdown(
    run_dir: Path,
    summary: Summary,
    tests: Sequence[PairedTest],
    problems: Sequence[str],
    files: ReportFiles,
) -> str:
    lines = _md_header(run_dir, summary, problems)
    for table in summary.ladders:
        lines += _md_ladder(table)
    lines += _md_tests(tests)
    if len(summary.ladders) > 1:
        headers, body = _comparison_body(summary)
        lines += ["## Ladders side by side", ""]
        lines += ["Means over seeds; values in % except SHD.", ""]
        lines += _md_table(headers, body)
    lines += _md_failures(summary)
    lines += ["## Files", ""]
    lines += [f"- [{path.name}]({path.name})" for path in (*files.csvs, *files.plots)]
    return "\n".join(lines) + "\n"


def _md_header(run_dir: Path, summary: Summary, problems: Sequence[str]) -> list[str]:
    levels = "; ".join(f"{t.ladder}: {', '.join(t.levels)}" for t in summary.ladders)
    lines = [
        f"# ACDB sweep report: `{run_dir.name}`",
        "",
        f"- **ladders**: {', '.join(t.ladder for t in summary.ladders) or '—'}",
        f"- **levels**: {levels or '—'}",
        f"- **agent rows**: {', '.join(summary.labels) or '—'}",
        f"- **episodes**: {summary.n_ok} successful, {summary.n_failed} failed jobs",
        f"- **package versions**: {', '.join(summary.versions) or 'unknown'}",
        "- **unit of analysis**: the seed; repeats of an agent row on one instance "
        "(ladder, level, manifest index) are averaged first. CIs are 95% percentile-bootstrap "
        f"intervals over seeds ({N_BOOTSTRAP} resamples, seeds resampled within levels).",
    ]
    if summary.mixed_configs:
        lines.append(
            f"- **warning**: {', '.join(summary.mixed_configs)} pool rows with different "
            "`agent_config` values."
        )
    if problems:
        lines.append(f"- **skipped lines of {RESULTS_FILE}**: {len(problems)}")
        lines += [f"  - {_md_cell(problem)}" for problem in problems]
    return [*lines, ""]


def _md_ladder(table: LadderSummary) -> list[str]:
    lines = [f"## Ladder {table.ladder}", "", "### Table 2: average across levels", ""]
    lines += [
        "Weighted by episodes per level (the mean over every per-seed value of every level). "
        "Values in %; SHD is a mean edge count; brackets: 95% CI.",
        "",
    ]
    lines += _md_table(TABLE2_HEADERS, _table2_body(table, ci=True))
    lines += ["### Table 3: directed F1 per level", "", "Values in %; brackets: 95% CI.", ""]
    lines += _md_table(["agent", *table.levels, "overall"], _table3_body(table, ci=True))
    lines += ["### Random floor (directed F1, %)", ""]
    lines += [
        "Closed form: the expectation of the structure-blind random DAG baseline; "
        "overall weighted by instances per level. Measured: the `random` agent.",
        "",
    ]
    lines += _md_table(FLOOR_HEADERS, _floor_body(table, ci=True))
    lines += ["### Precision vs recall (directed edges)", ""]
    lines += [
        "Precision / recall = true edges / oriented edges per episode, so precision above "
        "recall means an agent orients fewer edges than the truth has (under-commits), and "
        "below means more (over-commits).",
        "",
    ]
    lines += [_commitment(row) for row in table.rows]
    lines += ["", *_md_shortcuts(table)]
    lines += [f"![directed F1 per level](f1_per_level_{table.ladder}.png)", ""]
    lines += [f"![precision vs recall](precision_recall_{table.ladder}.png)", ""]
    return lines


def _agent_f1(table: LadderSummary, agent: str) -> Estimate | None:
    row = next((row for row in table.rows if row.agent == agent), None)
    return None if row is None else row.metrics["directed_f1"]


def _md_shortcuts(table: LadderSummary) -> list[str]:
    """The two benchmark-design checks: variance sortability and density leakage."""
    sortn, control = _agent_f1(table, "sortnregress"), _agent_f1(table, "randregress")
    overall = table.random_floor[-1] if table.random_floor else None
    if sortn is None and overall is None:
        return []
    lines = ["### Shortcut checks", ""]
    if sortn is not None:
        line = (
            f"- **Variance sortability**: sortnregress (variables sorted by variance, then "
            f"regressed) reaches directed F1 {_number(sortn.mean, 'directed_f1')}%"
        )
        if control is not None:
            gap = sortn.mean - control.mean
            line += (
                f"; the same regressions in a random order (randregress) reach "
                f"{_number(control.mean, 'directed_f1')}%, so the variance order is worth "
                f"{100 * gap:+.1f} points"
            )
            verdict = "a shortcut" if gap > 0.05 else "no shortcut"
            line += f" ({verdict} on this ladder)."
        else:
            line += "; run `randregress` too to measure what the variance order alone is worth."
        lines.append(line)
    if overall is not None and not math.isnan(overall.closed_form):
        lines.append(
            f"- **Density leakage**: a structure-blind random DAG scores "
            f"{_number(overall.closed_form, 'directed_f1')}% directed F1 in expectation "
            "(closed form; measured above); results near it carry no evidence of discovery."
        )
    return [*lines, ""]


def _md_tests(tests: Sequence[PairedTest]) -> list[str]:
    lines = ["## Paired sign-flip tests", ""]
    if not tests:
        return [*lines, "No pairs of agent rows with shared seeds.", ""]
    lines += [
        "Same-seed per-seed differences A − B; two-sided sign-flip permutation test of the mean "
        f"difference ({N_PERMUTATIONS} resamples, exact when 2^n ≤ {N_PERMUTATIONS}). "
        "F1 differences in percentage points, SHD in edges.",
        "",
    ]
    headers = ("ladder", "A", "B", "metric", "n", "mean A", "mean B", "A − B", "p")
    body = [
        [
            test.ladder or "all",
            test.agent_a,
            test.agent_b,
            test.metric,
            str(test.n),
            _number(test.mean_a, test.metric),
            _number(test.mean_b, test.metric),
            _difference(test),
            _p_value(test.p_value),
        ]
        for test in tests
    ]
    return lines + _md_table(headers, body)


def _md_failures(summary: Summary) -> list[str]:
    lines = ["## Failed jobs", ""]
    if not summary.failures:
        return [*lines, "None.", ""]
    headers = ("job", "ladder", "level", "manifest index", "agent", "error")
    body = [
        [f.job_id, f.ladder, f.level, str(f.manifest_index), f.label, f.error[:300]]
        for f in summary.failures
    ]
    return lines + _md_table(headers, body)


# ----------------------------------------------------------------------------- CSV


def _csv_value(value: object) -> str:
    if isinstance(value, float):
        return "" if not math.isfinite(value) else format(value, ".10g")
    return "" if value is None else str(value)


def _write_csv(path: Path, header: Sequence[str], body: Iterable[Sequence[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows([_csv_value(value) for value in row] for row in body)
    return path


def _estimate_cells(estimate: Estimate) -> list[object]:
    return [estimate.mean, estimate.low, estimate.high]


def _write_table2(path: Path, table: LadderSummary) -> Path:
    header = [
        "label",
        "agent",
        "panel",
        "tools",
        "n_seeds",
        "n_episodes",
        "n_failed",
        "n_truncated",
    ]
    header += [f"{m}_{part}" for m in TABLE2_METRICS for part in ("mean", "low", "high")]
    body = [
        [
            row.label,
            row.agent,
            row.panel,
            row.tools,
            row.n_seeds,
            row.n_episodes,
            row.n_failed,
            row.n_truncated,
            *(cell for m in TABLE2_METRICS for cell in _estimate_cells(row.metrics[m])),
        ]
        for row in table.rows
    ]
    return _write_csv(path, header, body)


def _write_table3(path: Path, table: LadderSummary) -> Path:
    header = ["label", "agent", "panel", "tools", "level", "n_seeds"]
    header += ["directed_f1_mean", "directed_f1_low", "directed_f1_high"]
    body = [
        [row.label, row.agent, row.panel, row.tools, level, estimate.n, *_estimate_cells(estimate)]
        for row in table.rows
        for level, estimate in [*row.per_level.items(), ("overall", row.metrics["directed_f1"])]
    ]
    return _write_csv(path, header, body)


def _write_floor(path: Path, summary: Summary) -> Path:
    header = ["ladder", "level", "closed_form", "measured_mean", "measured_low", "measured_high"]
    body = [
        [
            table.ladder,
            floor.level,
            floor.closed_form,
            *_estimate_cells(floor.measured),
            floor.measured.n,
        ]
        for table in summary.ladders
        for floor in table.random_floor
    ]
    return _write_csv(path, [*header, "measured_n_seeds"], body)


def _write_tests(path: Path, tests: Sequence[PairedTest]) -> Path:
    header = ["ladder", "agent_a", "agent_b", "metric", "n", "mean_a", "mean_b"]
    body = [
        [
            t.ladder,
            t.agent_a,
            t.agent_b,
            t.metric,
            t.n,
            t.mean_a,
            t.mean_b,
            t.mean_difference,
            t.p_value,
        ]
        for t in tests
    ]
    return _write_csv(path, [*header, "mean_difference", "p_value"], body)


# ----------------------------------------------------------------------------- plots


def _new_figure(width: float, height: float) -> Figure:
    """A figure on the Agg canvas, without pyplot (no global state, no GUI backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _error_bars(estimates: Sequence[Estimate]) -> np.ndarray:
    means = np.array([e.mean for e in estimates])
    spans = np.array([[e.mean - e.low for e in estimates], [e.high - e.mean for e in estimates]])
    return np.where(np.isfinite(spans) & np.isfinite(means), 100.0 * spans, 0.0)


def plot_f1_per_level(table: LadderSummary, path: str | Path) -> Path:
    """Grouped bars of directed F1 per level and agent row with CI error bars.

    The closed-form random floor of each level is a dashed line across its group of bars.

    Args:
        table: one ladder's summary.
        path: the PNG to write.

    Returns:
        The written path.
    """
    rows = [row for row in table.rows if row.n_seeds > 0]
    levels = list(table.levels)
    figure = _new_figure(2.5 + max(5.0, len(levels) * (0.9 + 0.06 * len(rows))), 4.5)
    axes = figure.add_subplot()
    centres = np.arange(len(levels), dtype=np.float64)
    width = 0.8 / max(len(rows), 1)
    colours = _colours(len(rows))
    for index, row in enumerate(rows):
        estimates = [row.per_level[level] for level in levels]
        heights = [100.0 * e.mean if e.n else 0.0 for e in estimates]
        axes.bar(
            centres - 0.4 + width * (index + 0.5),
            heights,
            width,
            yerr=_error_bars(estimates),
            capsize=2,
            color=colours[index],
            label=row.label,
        )
    _draw_floors(axes, table, centres)
    axes.set_xticks(centres, levels)
    axes.set_ylim(0, 105)
    axes.set_ylabel("directed F1 (%)")
    axes.set_title(f"Directed F1 per level — ladder {table.ladder} (95% CI over seeds)")
    axes.grid(axis="y", alpha=0.3)
    figure.legend(loc="outside right upper", fontsize="small")
    return _save(figure, path)


def _draw_floors(axes: Axes, table: LadderSummary, centres: np.ndarray) -> None:
    """The closed-form random floor of each level as a dashed segment over its bars."""
    floors = {floor.level: floor.closed_form for floor in table.random_floor}
    label: str | None = "random floor (closed form)"
    for centre, level in zip(centres, table.levels, strict=True):
        floor = floors.get(level, math.nan)
        if math.isfinite(floor):
            axes.hlines(
                100.0 * floor,
                centre - 0.45,
                centre + 0.45,
                colors="black",
                linestyles="--",
                linewidth=1.2,
                label=label or "_nolegend_",
            )
            label = None


def plot_precision_recall(table: LadderSummary, path: str | Path) -> Path:
    """Directed precision against recall per agent row, with the diagonal ``P = R``.

    Points above the diagonal under-commit (orient fewer edges than the truth has), points below
    over-commit. Error bars are the 95% CIs.

    Args:
        table: one ladder's summary.
        path: the PNG to write.

    Returns:
        The written path.
    """
    rows = [row for row in table.rows if row.n_seeds > 0]
    figure = _new_figure(6.5, 6.0)
    axes = figure.add_subplot()
    axes.plot([0, 100], [0, 100], linestyle="--", color="grey", linewidth=1)
    axes.text(60, 56, "P = R", fontsize="small", color="grey", rotation=45)
    for colour, row in zip(_colours(len(rows)), rows, strict=True):
        precision, recall = row.metrics["directed_precision"], row.metrics["directed_recall"]
        axes.errorbar(
            100.0 * recall.mean,
            100.0 * precision.mean,
            xerr=_error_bars([recall]),
            yerr=_error_bars([precision]),
            fmt="o",
            color=colour,
            capsize=2,
        )
        _annotate(axes, row.label, 100.0 * recall.mean, 100.0 * precision.mean)
    axes.text(3, 95, "under-commits (P > R)", fontsize="small", color="grey", va="top")
    axes.text(97, 3, "over-commits (R > P)", fontsize="small", color="grey", ha="right")
    axes.set_xlim(0, 100)
    axes.set_ylim(0, 100)
    axes.set_aspect("equal")
    axes.set_xlabel("directed recall (%)")
    axes.set_ylabel("directed precision (%)")
    axes.set_title(f"Directed precision vs recall — ladder {table.ladder}")
    axes.grid(alpha=0.3)
    return _save(figure, path)


def _annotate(axes: Axes, label: str, x: float, y: float) -> None:
    if math.isfinite(x) and math.isfinite(y):
        axes.annotate(label, (x, y), xytext=(5, 4), textcoords="offset points", fontsize="small")


def _colours(count: int) -> list[Any]:
    from matplotlib import colormaps

    palette = colormaps["tab10" if count <= 10 else "tab20"]
    return [palette(index % palette.N) for index in range(count)]


def _save(figure: Figure, path: str | Path) -> Path:
    target = Path(path)
    figure.savefig(target, dpi=110)
    return target


# ----------------------------------------------------------------------------- entry point


def write_report(run_dir: str | Path, *, compare: Iterable[tuple[str, str]] = ()) -> ReportFiles:
    """Write the paper-style report of a sweep run directory into that directory.

    Files: ``report.md``; ``table2_<ladder>.csv``, ``table3_<ladder>.csv``,
    ``random_floor.csv``, ``paired_tests.csv`` (raw units: fractions in [0, 1], SHD in edges;
    empty cells are NaN); ``f1_per_level_<ladder>.png`` and ``precision_recall_<ladder>.png``.
    Unreadable lines of ``results.jsonl`` are skipped with a warning and listed in the report.

    Args:
        run_dir: the sweep's run directory, holding ``results.jsonl``.
        compare: extra ``(label_a, label_b)`` pairs to test, e.g.
            ``[("llm_raw (active)", "llm_raw (observational)")]``.

    Returns:
        The written :class:`ReportFiles`.

    Raises:
        FileNotFoundError: no ``results.jsonl``.
        ValueError: a label in ``compare`` names no agent row.
    """
    run = Path(run_dir)
    rows, problems = _read_results(run / RESULTS_FILE)
    for problem in problems:
        warnings.warn(problem, stacklevel=2)
    prepared = _prepare(rows)
    summary = _summarize(prepared)
    tests = compare_agents(rows, pairs=compare, summary=summary)
    csvs = [_write_floor(run / "random_floor.csv", summary)]
    csvs.append(_write_tests(run / "paired_tests.csv", tests))
    plots = []
    for table in summary.ladders:
        csvs.append(_write_table2(run / f"table2_{table.ladder}.csv", table))
        csvs.append(_write_table3(run / f"table3_{table.ladder}.csv", table))
        plots.append(plot_f1_per_level(table, run / f"f1_per_level_{table.ladder}.png"))
        plots.append(plot_precision_recall(table, run / f"precision_recall_{table.ladder}.png"))
    files = ReportFiles(run / "report.md", tuple(csvs), tuple(plots))
    files.markdown.write_text(_markdown(run, summary, tests, problems, files), encoding="utf-8")
    return files
