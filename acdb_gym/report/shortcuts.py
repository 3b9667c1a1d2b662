"""The benchmark-design shortcut checks measured on the instances themselves: sortability.

A ladder leaks the causal order when a simple per-variable score sorts the variables along the
true DAG's paths: marginal variance on raw SCMs (var-sortability, Reisach et al. 2021), R² of
each variable regressed on all others even after standardization (R²-sortability, Reisach et
al. 2023). :func:`sortability_rows` regenerates every instance a run holds (from its ladder,
level and manifest index; generation is deterministic), computes both sortabilities on the
observational sample an agent sees (:mod:`acdb_gym.discovery.sortability`) and summarizes them
per level and overall with bootstrap CIs over instances. The agents that exploit the two orders
(``sortnregress``, ``r2sortnregress``) are tested against their random-order control
(``randregress``) with the report's other paired tests (:mod:`acdb_gym.report.comparison`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

import numpy as np

from acdb_gym.core.ladders.shipped import (
    FRONTIER,
    FRONTIER_LADDER,
    LADDERS,
    REAL,
    REAL_LADDER,
    SACHS_EXPERIMENT_LADDER,
    SACHS_EXPERIMENTS,
)
from acdb_gym.discovery.sortability import r2_sortability, var_sortability
from acdb_gym.report.aggregation import Prepared
from acdb_gym.report.statistics import bootstrap_ci
from acdb_gym.report.types import InstanceKey, SortabilityRow

__all__ = [
    "AUDITED_LADDERS",
    "SORT_BASELINES",
    "by_ladder",
    "instance_sortability",
    "sortability_rows",
]

AUDITED_LADDERS: Final = {
    **LADDERS,
    REAL: REAL_LADDER,
    SACHS_EXPERIMENTS: SACHS_EXPERIMENT_LADDER,
    FRONTIER: FRONTIER_LADDER,
}
"""The ladders whose instances the sortability audit reads (the large ladder's d = 500 worlds
are left out for their cost; the cause-effect pairs have one pair of variables, nothing to
sort)."""

SORT_BASELINES: Final = {"sortnregress": "variance", "r2sortnregress": "R²"}
"""The sort baselines of the shortcut section and the order each sorts by; their control is
``randregress``."""


def instance_sortability(ladder: str, level: str, index: int) -> tuple[float, float]:
    """Var- and R²-sortability of one manifest instance's observational sample.

    Raises:
        KeyError: an unknown ladder or level.
        ValueError: a manifest index outside the manifest.
    """
    instance = AUDITED_LADDERS[ladder][level].instance(index)
    adjacency = np.asarray(instance.dag.adjacency)
    return (
        var_sortability(instance.d_obs, adjacency),
        r2_sortability(instance.d_obs, adjacency),
    )


def sortability_rows(prepared: Prepared) -> tuple[SortabilityRow, ...]:
    """Var- and R²-sortability per ladder and level of every known instance in a run.

    Instances are those of every row (successful or failed) whose ladder and level the package
    knows; each is counted once, whatever ran on it. Graphs without edges (sortability
    undefined) are left out of the means.

    Args:
        prepared: the run's prepared rows.

    Returns:
        Per ladder (in name order): one row per level in ladder order, then ``"overall"``
        (instances of every level pooled, the bootstrap resampling within levels).
    """
    values: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for ladder, level, index in sorted(_known_instances(prepared)):
        values.setdefault(ladder, {}).setdefault(level, []).append(
            instance_sortability(ladder, level, index)
        )
    rows: list[SortabilityRow] = []
    for ladder, levels in sorted(values.items()):
        ordered = [level for level in AUDITED_LADDERS[ladder] if level in levels]
        for level in ordered:
            rows.append(_row(ladder, level, [levels[level]]))
        rows.append(_row(ladder, "overall", [levels[level] for level in ordered]))
    return tuple(rows)


def _known_instances(prepared: Prepared) -> set[InstanceKey]:
    keys = set()
    for row in (*prepared.ok, *prepared.failed):
        ladder, level, index = row.instance_key
        known = AUDITED_LADDERS.get(ladder, {}).get(level)
        if known is not None and 0 <= index < len(known.manifest):
            keys.add((ladder, level, index))
    return keys


def _row(ladder: str, level: str, strata: Iterable[list[tuple[float, float]]]) -> SortabilityRow:
    groups = list(strata)
    var = [[pair[0] for pair in group] for group in groups]
    r2 = [[pair[1] for pair in group] for group in groups]
    return SortabilityRow(ladder, level, bootstrap_ci(var), bootstrap_ci(r2))


def by_ladder(rows: Iterable[SortabilityRow]) -> Mapping[str, tuple[SortabilityRow, ...]]:
    """The rows of each ladder."""
    grouped: dict[str, list[SortabilityRow]] = {}
    for row in rows:
        grouped.setdefault(row.ladder, []).append(row)
    return {ladder: tuple(group) for ladder, group in grouped.items()}
