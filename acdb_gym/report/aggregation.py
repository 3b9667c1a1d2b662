"""Aggregation of result rows: agent rows, per-seed matrices, Tables 2 and 3, the random floor.

:func:`prepare` types rows (a plain mapping becomes a :class:`~acdb_gym.results.ResultRow` once,
:func:`~acdb_gym.report.load.as_rows`), keeps one per job id, labels each ``(agent, panel, tools)`` group and
averages its repeats on each instance into one per-seed vector over :data:`NUMERIC_FIELDS`.
:func:`summarize` turns that into one :class:`~acdb_gym.report.types.LadderSummary` per ladder:
Table 2 (every metric over all levels' seeds, levels weighted by their episodes), Table 3
(directed F1 per level) and the closed-form and measured random floor, with the bootstrap CIs of
:mod:`acdb_gym.report.statistics`.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

import numpy as np

from acdb_gym.core.ladders.custom import parse_level_spec
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.core.scoring import LATENT_SCORE_FIELDS
from acdb_gym.report.load import RowLike, as_rows, deduplicate
from acdb_gym.report.order import level_order
from acdb_gym.report.statistics import bootstrap_ci
from acdb_gym.report.types import (
    AgentRow,
    Estimate,
    FailedJob,
    FloorRow,
    GroupKey,
    LadderSummary,
    Row,
    Summary,
)
from acdb_gym.results import NUMERIC_COLUMNS, NumericField

__all__ = [
    "NUMERIC_FIELDS",
    "ORACLE_AGENT",
    "RANDOM_AGENT",
    "TABLE2_METRICS",
    "Prepared",
    "group_of",
    "group_rows",
    "prepare",
    "sort_value",
    "summarize",
    "summarize_prepared",
]

NUMERIC_FIELDS: Final[tuple[NumericField, ...]] = tuple(
    name for name in NUMERIC_COLUMNS if name not in LATENT_SCORE_FIELDS
)
"""The per-seed vector's columns: the score fields (:data:`SCORE_FIELDS`), steps, invalid
actions, the wall time and the token counts."""
TABLE2_METRICS: Final = (
    "skeleton_f1",
    "compelled_f1",
    "directed_precision",
    "directed_recall",
    "directed_f1",
    "shd",
    "anytime_f1",
    "efficiency",
    "essential_f1",
)
ORACLE_AGENT: Final = "oracle"
RANDOM_AGENT: Final = "random"
_DIRECTED_F1: Final = NUMERIC_FIELDS.index("directed_f1")
_SKELETON_F1: Final = NUMERIC_FIELDS.index("skeleton_f1")


# ----------------------------------------------------------------------------- preparation


@dataclass(frozen=True)
class Prepared:
    """Rows split by status, agent-row labels and the per-seed values of every group."""

    ok: tuple[Row, ...]
    failed: tuple[Row, ...]
    labels: Mapping[GroupKey, str]
    # (ladder, group) -> {(level, manifest_index): vector over NUMERIC_FIELDS}
    per_seed: Mapping[tuple[str, GroupKey], Mapping[tuple[str, int], np.ndarray]]


def prepare(rows: Iterable[RowLike]) -> Prepared:
    """Type rows (:func:`~acdb_gym.report.load.as_rows`), keep one per job id (warning on
    repeated successes) and group them.

    Raises:
        ValueError: a row that is not a valid result row (a missing key, a value of the wrong
            type or out of its range), naming its position.
    """
    kept, duplicates = deduplicate(as_rows(rows))
    for problem in duplicates:
        warnings.warn(problem, stacklevel=3)
    return group_rows(kept)


def group_rows(kept: Sequence[Row]) -> Prepared:
    """:func:`prepare` of rows already typed and kept one per job id (as
    :func:`~acdb_gym.report.load.read_rows` gives them): split by status, labelled and
    averaged per seed, without deduplicating again."""
    ok = tuple(row for row in kept if row.ok)
    failed = tuple(row for row in kept if not row.ok)
    return Prepared(ok, failed, _labels(kept), _per_seed(ok))


def group_of(row: Row) -> GroupKey:
    """(agent, panel, tools); an agent configured with a model (LLMs) is named with it, so two
    backbones of ``llm_raw`` are two agent rows."""
    agent = f"{row.agent}[{row.model}]" if row.model else row.agent
    return (agent, row.panel, row.tools)


def _labels(rows: Iterable[Row]) -> dict[GroupKey, str]:
    groups = {group_of(row) for row in rows}
    tools_of: dict[str, set[str]] = {}
    for agent, _, tools in groups:
        tools_of.setdefault(agent, set()).add(tools)
    return {
        (agent, panel, tools): (
            f"{agent} ({panel}, {tools})" if len(tools_of[agent]) > 1 else f"{agent} ({panel})"
        )
        for agent, panel, tools in groups
    }


def _per_seed(
    ok_rows: Iterable[Row],
) -> dict[tuple[str, GroupKey], dict[tuple[str, int], np.ndarray]]:
    """Average the repeats of each group on each instance (NaN fields ignored)."""
    collected: dict[tuple[str, GroupKey], dict[tuple[str, int], list[list[float]]]] = {}
    for row in ok_rows:
        ladder, level, index = row.instance_key
        vectors = collected.setdefault((ladder, group_of(row)), {}).setdefault((level, index), [])
        vectors.append([row.value(name) for name in NUMERIC_FIELDS])
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


def _closed_form(ladder: str, level: str, level_spec: str | None) -> float:
    """The level's closed-form random floor: from the spec a custom level's rows carry, or the
    shipped level's; NaN for a level the package does not know."""
    if level_spec:
        return parse_level_spec(level_spec).random_floor
    known = ALL_LADDERS.get(ladder, {}).get(level)
    return known.spec.random_floor if known is not None else math.nan


def sort_value(value: float) -> float:
    """``value`` for sorting best-first; NaN sorts last."""
    return value if math.isfinite(value) else -math.inf


# ----------------------------------------------------------------------------- summary


def summarize(rows: Iterable[RowLike]) -> Summary:
    """Tables 2 and 3 and the random floor of every ladder in ``rows``.

    Args:
        rows: result rows, typed or as the file's dicts (e.g. from :func:`load_rows` or
            :func:`load_results`); failed rows are counted and listed.

    Returns:
        The :class:`Summary`.

    Raises:
        ValueError: a row that is not a valid result row, naming its position.
    """
    return summarize_prepared(prepare(rows))


def summarize_prepared(prepared: Prepared) -> Summary:
    """:func:`summarize` of rows already prepared (so a caller can reuse the preparation)."""
    everything = (*prepared.ok, *prepared.failed)
    ladders = sorted({row.ladder for row in everything})
    failures = tuple(
        FailedJob(
            job_id=row.job_id,
            ladder=row.ladder,
            level=row.level,
            manifest_index=row.manifest_index,
            label=prepared.labels[group_of(row)],
            error=row.error or "(no error message)",
        )
        for row in prepared.failed
    )
    return Summary(
        ladders=tuple(_ladder_summary(prepared, ladder) for ladder in ladders),
        labels=tuple(sorted(prepared.labels.values())),
        n_ok=len(prepared.ok),
        n_failed=len(prepared.failed),
        failures=failures,
        versions=tuple(sorted({row.version for row in everything if row.version})),
        mixed_configs=_mixed_configs(prepared),
    )


def _mixed_configs(prepared: Prepared) -> tuple[str, ...]:
    configs: dict[GroupKey, set[str]] = {}
    for row in (*prepared.ok, *prepared.failed):
        text = json.dumps(dict(row.agent_config), sort_keys=True, default=str)
        configs.setdefault(group_of(row), set()).add(text)
    mixed = sorted(prepared.labels[group] for group, seen in configs.items() if len(seen) > 1)
    for label in mixed:
        warnings.warn(
            f"agent row {label!r} pools rows with different agent_config values; "
            "give them distinct agent names to report them separately",
            stacklevel=4,
        )
    return tuple(mixed)


def _ladder_summary(prepared: Prepared, ladder: str) -> LadderSummary:
    rows = [row for row in (*prepared.ok, *prepared.failed) if row.ladder == ladder]
    levels = tuple(sorted({row.level for row in rows}, key=level_order))
    agent_rows = [
        _agent_row(prepared, ladder, levels, group, rows)
        for group in {group_of(row) for row in rows}
    ]
    agent_rows.sort(key=lambda row: (-sort_value(row.metrics["directed_f1"].mean), row.label))
    return LadderSummary(ladder, levels, tuple(agent_rows), _random_floor(prepared, ladder, rows))


def _agent_row(
    prepared: Prepared,
    ladder: str,
    levels: Sequence[str],
    group: GroupKey,
    ladder_rows: Sequence[Row],
) -> AgentRow:
    seeds = prepared.per_seed.get((ladder, group), {})
    strata = _by_level(seeds, levels)
    mine = [row for row in ladder_rows if group_of(row) == group]
    ok = [row for row in mine if row.ok]
    metrics = {
        name: bootstrap_ci([values[:, NUMERIC_FIELDS.index(name)] for values in strata.values()])
        for name in TABLE2_METRICS
    }
    # The anytime F1 of an agent row is its mean over every episode or nothing: an agent that
    # states graphs in some episodes only must not be averaged over those (DESIGN §6).
    if any(row.anytime_f1 is None for row in ok):
        metrics["anytime_f1"] = Estimate.empty()
    per_level = {level: bootstrap_ci([strata[level][:, _DIRECTED_F1]]) for level in levels}
    skeleton = {level: bootstrap_ci([strata[level][:, _SKELETON_F1]]) for level in levels}
    return AgentRow(
        label=prepared.labels[group],
        agent=group[0],
        panel=group[1],
        tools=group[2],
        n_seeds=len(seeds),
        n_episodes=len(ok),
        n_failed=len(mine) - len(ok),
        n_truncated=sum(bool(row.truncated) for row in ok),
        metrics=MappingProxyType(metrics),
        per_level=MappingProxyType(per_level),
        per_level_skeleton=MappingProxyType(skeleton),
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


def _random_floor(prepared: Prepared, ladder: str, rows: Sequence[Row]) -> tuple[FloorRow, ...]:
    """Closed-form and measured random floor per level and overall.

    Every ``random`` group counts (e.g. both panels); per instance their values are averaged.
    """
    measured: dict[str, dict[int, list[float]]] = {}
    for (run_ladder, group), seeds in prepared.per_seed.items():
        if run_ladder == ladder and group[0] == RANDOM_AGENT:
            for (level, index), vector in seeds.items():
                measured.setdefault(level, {}).setdefault(index, []).append(vector[_DIRECTED_F1])
    instances: dict[str, set[int]] = {}
    specs: dict[str, str | None] = {}
    for row in rows:
        instances.setdefault(row.level, set()).add(row.manifest_index)
        specs[row.level] = row.level_spec
    levels = sorted(instances, key=level_order)
    # In manifest order, not file order: a sweep with several workers writes rows in the order
    # jobs finish, and the bootstrap must not depend on that.
    strata = {
        level: [float(np.mean(values)) for _, values in sorted(measured.get(level, {}).items())]
        for level in levels
    }
    floors = [
        FloorRow(level, _closed_form(ladder, level, specs[level]), bootstrap_ci([strata[level]]))
        for level in levels
    ]
    weights = np.array([len(instances[level]) for level in levels], dtype=np.float64)
    closed = float(np.average([floor.closed_form for floor in floors], weights=weights))
    floors.append(FloorRow("overall", closed, bootstrap_ci(list(strata.values()))))
    return tuple(floors)
