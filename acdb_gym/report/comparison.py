"""Paired comparisons of agent rows: the report's sign-flip tests on same-seed differences.

:func:`paired_test` matches two agent rows' per-seed values on ``(ladder, level, manifest_index)``
and tests their mean difference with :func:`~acdb_gym.report.statistics.sign_flip_pvalue`;
:func:`compare_agents` chooses the pairs the report tests (the best non-oracle row against every
other row of each ladder, plus any pairs asked for).
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
from acdb_gym.report.statistics import N_PERMUTATIONS, sign_flip_pvalue
from acdb_gym.report.types import InstanceKey, LadderSummary, PairedTest, Row, Summary

__all__ = ["DEFAULT_TEST_METRICS", "compare_agents", "paired_test"]

DEFAULT_TEST_METRICS: Final = ("directed_f1", "shd")


def paired_test(
    rows: Iterable[Row],
    agent_a_label: str,
    agent_b_label: str,
    metric: str = "directed_f1",
    *,
    ladder: str | None = None,
    n_resamples: int = N_PERMUTATIONS,
) -> PairedTest:
    """Paired sign-flip test of two agent rows on the instances both have a per-seed value for.

    Seeds are matched on ``(ladder, level, manifest_index)``; repeats are averaged first. The
    test is ``scipy.stats.permutation_test`` with ``permutation_type="samples"`` on the per-seed
    differences ``a - b``: under the null every difference's sign is exchangeable. The statistic
    is the mean difference, the alternative two-sided, with ``n_resamples`` resamples (exact
    enumeration when ``2**n`` is at most that) and a fixed ``random_state``.

    Args:
        rows: result rows (e.g. from :func:`load_results`).
        agent_a_label: the label of side ``a`` (e.g. ``"pc_greedy (active)"``).
        agent_b_label: the label of side ``b``.
        metric: a score field (or ``steps``, ``invalid_actions``, ``wall_time``, ``tokens_*``).
        ladder: restrict to one ladder; ``None`` pools every ladder.
        n_resamples: sign-flip resamples (the report uses the default, 10 000).

    Returns:
        The :class:`PairedTest`; ``n == 0`` and NaNs when no instance is shared.

    Raises:
        ValueError: an unknown label or metric.
    """
    prepared = prepare(rows)
    return _paired(prepared, agent_a_label, agent_b_label, metric, ladder, n_resamples)


def _paired(
    prepared: Prepared,
    label_a: str,
    label_b: str,
    metric: str,
    ladder: str | None,
    n_resamples: int = N_PERMUTATIONS,
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
        nan = math.nan
        return PairedTest(ladder, label_a, label_b, metric, 0, nan, nan, nan, nan, 0, 0)
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
        p_value=sign_flip_pvalue(differences, n_resamples=n_resamples),
        n_higher=int((differences > 0).sum()),
        n_lower=int((differences < 0).sum()),
    )


def _values_of(
    prepared: Prepared, label: str, column: int, ladder: str | None
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
    prepared = prepare(rows)
    summary = summary if summary is not None else summarize_prepared(prepared)
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
    best = max(candidates, key=lambda row: sort_value(row.metrics["directed_f1"].mean))
    return [(best.label, row.label) for row in scored if row.label != best.label]


def _has_results(table: LadderSummary, label_a: str, label_b: str) -> bool:
    rows = (table.row(label_a), table.row(label_b))
    return all(row is not None and row.n_seeds > 0 for row in rows)
