"""Paired comparisons of agent rows: sign-flip tests, CIs and power on same-seed differences.

:func:`paired_test` matches two agent rows' per-seed values on ``(ladder, level, manifest_index)``
and reports their mean difference with its bootstrap CI, the sign-flip p-value of
:func:`~acdb_gym.report.statistics.sign_flip_pvalue`, and the power figures of
:mod:`~acdb_gym.report.power` (the minimum detectable difference at 80% power and the seeds a
5-point difference needs). :func:`compare_agents` chooses the pairs the report tests: the best
non-oracle row against every other row of each ladder, the reference pairs
(:data:`REFERENCE_PAIRS`: the paper's pc_greedy vs pc and each sort baseline vs its random-order
control), and any pairs asked for; pooled over each ladder's levels and per level.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Final

import numpy as np

from acdb_gym.report.aggregation import (
    NUMERIC_FIELDS,
    ORACLE_AGENT,
    Prepared,
    prepare,
    sort_value,
    summarize_prepared,
)
from acdb_gym.report.load import RowLike
from acdb_gym.report.power import TARGET_DIFFERENCE, minimum_detectable_difference, seeds_to_detect
from acdb_gym.report.statistics import (
    N_SIGN_FLIPS,
    bootstrap_ci,
    sign_flip_is_exact,
    sign_flip_pvalue,
)
from acdb_gym.report.tables import PERCENT_METRICS
from acdb_gym.report.types import InstanceKey, LadderSummary, PairedTest, Summary

__all__ = [
    "DEFAULT_LEVEL_METRICS",
    "DEFAULT_TEST_METRICS",
    "REFERENCE_PAIRS",
    "compare_agents",
    "paired_test",
]

DEFAULT_TEST_METRICS: Final = ("directed_f1", "shd")
DEFAULT_LEVEL_METRICS: Final = ("directed_f1",)
"""The metrics also tested level by level (the pooled tests cover every metric)."""
REFERENCE_PAIRS: Final = (
    ("pc_greedy", "pc"),
    ("sortnregress", "randregress"),
    ("r2sortnregress", "randregress"),
)
"""Agent-name pairs tested whenever both ran: the paper's own comparison (PC + greedy against
PC) and each sort baseline against the same regressions in a random order."""


def paired_test(
    rows: Iterable[RowLike],
    agent_a_label: str,
    agent_b_label: str,
    metric: str = "directed_f1",
    *,
    ladder: str | None = None,
    level: str | None = None,
    n_resamples: int = N_SIGN_FLIPS,
) -> PairedTest:
    """Paired sign-flip test of two agent rows on the instances both have a per-seed value for.

    Seeds are matched on ``(ladder, level, manifest_index)``; repeats are averaged first. The
    test is :func:`~acdb_gym.report.statistics.sign_flip_pvalue` on the per-seed differences
    ``a - b``: two-sided, the mean difference as statistic, exact up to 20 pairs and
    ``n_resamples`` random sign patterns beyond. The CI of the mean difference is the
    percentile bootstrap with seeds resampled within levels; the minimum detectable difference
    and the seeds a 5-point difference needs use the differences' standard deviation
    (:mod:`acdb_gym.report.power`; for metrics in [0, 1] only).

    Args:
        rows: result rows, typed or as the file's dicts (e.g. from :func:`load_rows`).
        agent_a_label: the label of side ``a`` (e.g. ``"pc_greedy (active)"``).
        agent_b_label: the label of side ``b``.
        metric: a score field (or ``steps``, ``invalid_actions``, ``wall_time``, ``tokens_*``).
        ladder: restrict to one ladder; ``None`` pools every ladder.
        level: restrict to one level; ``None`` pools every level.
        n_resamples: random sign patterns when the test is not exact.

    Returns:
        The :class:`PairedTest`; ``n == 0`` and NaNs when no instance is shared.

    Raises:
        ValueError: an unknown label or metric.
    """
    prepared = prepare(rows)
    return _paired(prepared, agent_a_label, agent_b_label, metric, ladder, level, n_resamples)


def _paired(
    prepared: Prepared,
    label_a: str,
    label_b: str,
    metric: str,
    ladder: str | None,
    level: str | None = None,
    n_resamples: int = N_SIGN_FLIPS,
) -> PairedTest:
    if metric not in NUMERIC_FIELDS:
        raise ValueError(f"metric must be one of {NUMERIC_FIELDS}, got {metric!r}")
    column = NUMERIC_FIELDS.index(metric)
    side_a = _values_of(prepared, label_a, column, ladder, level)
    side_b = _values_of(prepared, label_b, column, ladder, level)
    shared = sorted(
        key for key in side_a.keys() & side_b.keys() if np.isfinite(side_a[key] + side_b[key])
    )
    target = TARGET_DIFFERENCE if metric in PERCENT_METRICS else math.nan
    if not shared:
        nan = math.nan
        return PairedTest(
            ladder, label_a, label_b, metric, 0, nan, nan, nan, nan, level=level, target=target
        )
    values_a = np.array([side_a[key] for key in shared])
    values_b = np.array([side_b[key] for key in shared])
    differences = values_a - values_b
    estimate = bootstrap_ci(_strata(shared, differences))
    sd = float(differences.std(ddof=1)) if differences.size > 1 else math.nan
    return PairedTest(
        ladder=ladder,
        agent_a=label_a,
        agent_b=label_b,
        metric=metric,
        n=len(shared),
        mean_a=float(values_a.mean()),
        mean_b=float(values_b.mean()),
        mean_difference=float(differences.mean()),
        p_value=sign_flip_pvalue(differences, n_resamples=n_resamples),
        n_higher=int((differences > 0).sum()),
        n_lower=int((differences < 0).sum()),
        level=level,
        ci_low=estimate.low,
        ci_high=estimate.high,
        sd_difference=sd,
        mdd=minimum_detectable_difference(sd, len(shared)),
        seeds_for_target=seeds_to_detect(target, sd) if math.isfinite(sd + target) else None,
        target=target,
        p_exact=sign_flip_is_exact(len(shared)),
    )


def _strata(keys: Sequence[InstanceKey], differences: np.ndarray) -> list[np.ndarray]:
    """The differences grouped by (ladder, level), in key order, for the stratified bootstrap."""
    groups: dict[tuple[str, str], list[float]] = {}
    for (ladder, level, _), difference in zip(keys, differences.tolist(), strict=True):
        groups.setdefault((ladder, level), []).append(difference)
    return [np.array(values) for values in groups.values()]


def _values_of(
    prepared: Prepared, label: str, column: int, ladder: str | None, level: str | None = None
) -> dict[InstanceKey, float]:
    groups = [group for group, name in prepared.labels.items() if name == label]
    if not groups:
        raise ValueError(f"unknown agent row {label!r}; known: {sorted(prepared.labels.values())}")
    return {
        (run_ladder, run_level, index): float(vector[column])
        for (run_ladder, group), seeds in prepared.per_seed.items()
        if group == groups[0] and ladder in (None, run_ladder)
        for (run_level, index), vector in seeds.items()
        if level in (None, run_level)
    }


def compare_agents(
    rows: Iterable[RowLike],
    *,
    pairs: Iterable[tuple[str, str]] = (),
    metrics: Sequence[str] = DEFAULT_TEST_METRICS,
    level_metrics: Sequence[str] = DEFAULT_LEVEL_METRICS,
    summary: Summary | None = None,
    prepared: Prepared | None = None,
) -> tuple[PairedTest, ...]:
    """The report's paired tests, per ladder (pooled over levels) and per level.

    The pairs of each ladder: its best non-oracle agent row (highest directed F1) against every
    other agent row with results on it, the :data:`REFERENCE_PAIRS` whose agents both ran, and
    each of ``pairs`` where both rows have results. Every pair is tested pooled over the
    ladder's levels on each of ``metrics``, then on each level on each of ``level_metrics``
    (levels where the two rows share no seed are left out).

    Args:
        rows: result rows.
        pairs: extra ``(label_a, label_b)`` pairs.
        metrics: the metrics tested pooled over levels.
        level_metrics: the metrics tested level by level.
        summary: ``summarize(rows)`` if already computed.
        prepared: ``prepare(rows)`` if already computed.

    Returns:
        The tests: every ladder's pooled tests (defaults, reference pairs, then ``pairs``),
        then its per-level tests, without duplicates.

    Raises:
        ValueError: a label of ``pairs`` names no agent row.
    """
    prepared = prepared if prepared is not None else prepare(rows)
    summary = summary if summary is not None else summarize_prepared(prepared)
    wanted = list(pairs)
    for label in {label for pair in wanted for label in pair}:
        if label not in summary.labels:
            raise ValueError(f"unknown agent row {label!r}; known: {list(summary.labels)}")
    tests: list[PairedTest] = []
    for table in summary.ladders:
        plan = [*_default_pairs(table), *_reference_pairs(table)]
        plan += [(a, b) for a, b in wanted if _has_results(table, a, b)]
        unique = list(dict.fromkeys(plan))
        tests += [
            _paired(prepared, a, b, metric, table.ladder) for a, b in unique for metric in metrics
        ]
        per_level = [
            _paired(prepared, a, b, metric, table.ladder, level)
            for a, b in unique
            for metric in level_metrics
            for level in table.levels
        ]
        tests += [test for test in per_level if test.n > 0]
    return tuple(tests)


def _default_pairs(table: LadderSummary) -> list[tuple[str, str]]:
    scored = [row for row in table.rows if row.n_seeds > 0]
    candidates = [row for row in scored if row.agent != ORACLE_AGENT]
    if not candidates:
        return []
    best = max(candidates, key=lambda row: sort_value(row.metrics["directed_f1"].mean))
    return [(best.label, row.label) for row in scored if row.label != best.label]


def _reference_pairs(table: LadderSummary) -> list[tuple[str, str]]:
    scored = [row for row in table.rows if row.n_seeds > 0]
    return [
        (row_a.label, row_b.label)
        for agent_a, agent_b in REFERENCE_PAIRS
        for row_a in scored
        if row_a.agent == agent_a
        for row_b in scored
        if row_b.agent == agent_b
    ]


def _has_results(table: LadderSummary, label_a: str, label_b: str) -> bool:
    rows = (table.row(label_a), table.row(label_b))
    return all(row is not None and row.n_seeds > 0 for row in rows)
