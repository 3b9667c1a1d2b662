"""The headroom of every level (DESIGN §10): how far the best agent of a run is from the oracle.

Per ladder and level, the **best agent** is the agent row with the highest mean directed F1
among the rows that are not privileged (the oracle, the reachability references and every other
agent that reads the hidden instance are upper bounds, not competitors). Its **headroom** is
the oracle's directed F1 minus its own, per instance, averaged over the instances it played,
with the 95% percentile-bootstrap CI of that mean. The oracle's per-instance value is its row's
where the run holds one, else 1 (the oracle submits the truth, which scores 100% on every
field; the table says which). A level where the best agent is within a few points of the oracle
cannot rank a strong agent against a stronger one.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from acdb_gym.report.aggregation import NUMERIC_FIELDS, ORACLE_AGENT, Prepared, group_of
from acdb_gym.report.document import Part, Table
from acdb_gym.report.statistics import bootstrap_ci
from acdb_gym.report.types import Estimate, GroupKey, Row, Summary

__all__ = [
    "HEADROOM_HEADERS",
    "HeadroomRow",
    "headroom_parts",
    "headroom_rows",
    "privileged_groups",
    "write_headroom_csv",
]

_F1: Final = NUMERIC_FIELDS.index("directed_f1")
OVERALL: Final = "overall"


@dataclass(frozen=True)
class HeadroomRow:
    """The headroom of one level (or ``"overall"``, the ladder's instances pooled).

    Attributes:
        ladder, level: where.
        best: the best non-privileged agent row's label (``""`` when none ran).
        best_f1: its mean directed F1 and CI.
        oracle_f1: the oracle's mean directed F1 on the same instances.
        oracle_measured: whether the oracle's values come from its rows (else 1 by
            construction).
        headroom: oracle minus best, per instance, mean and CI (in [0, 1] units).
    """

    ladder: str
    level: str
    best: str
    best_f1: Estimate
    oracle_f1: float
    oracle_measured: bool
    headroom: Estimate


def privileged_groups(rows: Iterable[Row]) -> frozenset[GroupKey]:
    """The agent rows that read the hidden instance (``privileged`` rows, and the oracle)."""
    return frozenset(group_of(row) for row in rows if row.privileged or row.agent == ORACLE_AGENT)


def headroom_rows(prepared: Prepared, summary: Summary) -> tuple[HeadroomRow, ...]:
    """Every level's headroom, in the summary's ladder and level order, then each ladder's
    ``"overall"`` (the best agent row over all its instances)."""
    privileged = privileged_groups(prepared.ok)
    result: list[HeadroomRow] = []
    for table in summary.ladders:
        ladder = table.ladder
        groups = {
            group: seeds
            for (run_ladder, group), seeds in prepared.per_seed.items()
            if run_ladder == ladder
        }
        oracle = next((seeds for group, seeds in groups.items() if group[0] == ORACLE_AGENT), None)
        for level in (*table.levels, OVERALL):
            row = _level_headroom(ladder, level, groups, oracle, privileged, prepared.labels)
            if row is not None:
                result.append(row)
    return tuple(result)


def _values(
    seeds: Mapping[tuple[str, int], np.ndarray], level: str
) -> dict[tuple[str, int], float]:
    return {
        key: float(vector[_F1])
        for key, vector in seeds.items()
        if (level == OVERALL or key[0] == level) and math.isfinite(float(vector[_F1]))
    }


def _level_headroom(
    ladder: str,
    level: str,
    groups: Mapping[GroupKey, Mapping[tuple[str, int], np.ndarray]],
    oracle: Mapping[tuple[str, int], np.ndarray] | None,
    privileged: frozenset[GroupKey],
    labels: Mapping[GroupKey, str],
) -> HeadroomRow | None:
    candidates = {
        group: values
        for group, seeds in groups.items()
        if group not in privileged and (values := _values(seeds, level))
    }
    if not candidates:
        return None
    best = max(candidates, key=lambda g: (float(np.mean(list(candidates[g].values()))), labels[g]))
    values = candidates[best]
    truth = _values(oracle, level) if oracle is not None else {}
    measured = bool(truth)
    keys = sorted(values)
    oracle_values = np.array([truth.get(key, 1.0) if measured else 1.0 for key in keys])
    best_values = np.array([values[key] for key in keys])
    strata = _by_level(keys, oracle_values - best_values)
    return HeadroomRow(
        ladder=ladder,
        level=level,
        best=labels[best],
        best_f1=bootstrap_ci(_by_level(keys, best_values)),
        oracle_f1=float(oracle_values.mean()),
        oracle_measured=measured,
        headroom=bootstrap_ci(strata),
    )


def _by_level(keys: Sequence[tuple[str, int]], values: np.ndarray) -> list[np.ndarray]:
    groups: dict[str, list[float]] = {}
    for (level, _), value in zip(keys, values.tolist(), strict=True):
        groups.setdefault(level, []).append(value)
    return [np.array(v) for v in groups.values()]


HEADROOM_HEADERS: Final = (
    "level",
    "best agent",
    "its directed F1",
    "oracle",
    "headroom (oracle − best)",
    "seeds",
)


def _ci(estimate: Estimate) -> str:
    if estimate.n == 0 or not math.isfinite(estimate.mean):
        return "—"
    return f"{100 * estimate.mean:.1f} [{100 * estimate.low:.1f}, {100 * estimate.high:.1f}]"


def headroom_parts(rows: Sequence[HeadroomRow]) -> list[Part]:
    """The headroom table of one ladder, for its report section."""
    if not rows:
        return []
    measured = all(row.oracle_measured for row in rows)
    lines: list[Part] = [
        "### Headroom: oracle − the best agent, per level",
        "",
        "The best agent is the non-privileged agent row with the highest mean directed F1 on "
        "the level (privileged rows, the oracle and the references, are bounds, not "
        "competitors); the headroom is the oracle's directed F1 minus its own, per instance, "
        "with a 95% bootstrap CI. Values in %"
        + (
            "."
            if measured
            else "; where the run has no oracle rows the oracle counts as 100% (it submits "
            "the truth)."
        ),
        "",
    ]
    body = [
        [
            row.level,
            row.best,
            _ci(row.best_f1),
            f"{100 * row.oracle_f1:.1f}" + ("" if row.oracle_measured else " (by construction)"),
            _ci(row.headroom),
            str(row.headroom.n),
        ]
        for row in rows
    ]
    lines.append(Table.of(HEADROOM_HEADERS, body))
    return lines


def write_headroom_csv(path: Path, rows: Sequence[HeadroomRow]) -> Path:
    """``headroom.csv``: one line per ladder and level (fractions in [0, 1])."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "ladder",
                "level",
                "best_agent",
                "best_f1",
                "best_f1_low",
                "best_f1_high",
                "oracle_f1",
                "oracle_measured",
                "headroom",
                "headroom_low",
                "headroom_high",
                "seeds",
            ]
        )
        for row in rows:
            writer.writerow(
                [
                    row.ladder,
                    row.level,
                    row.best,
                    *(_fraction(v) for v in (row.best_f1.mean, row.best_f1.low, row.best_f1.high)),
                    _fraction(row.oracle_f1),
                    row.oracle_measured,
                    *(
                        _fraction(v)
                        for v in (row.headroom.mean, row.headroom.low, row.headroom.high)
                    ),
                    row.headroom.n,
                ]
            )
    return path


def _fraction(value: float) -> str:
    return "" if not math.isfinite(value) else f"{value:.6g}"
