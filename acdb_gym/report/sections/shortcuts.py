"""The benchmark-design shortcut checks of each ladder: var- and R²-sortability of the run's
instances (:mod:`acdb_gym.report.shortcuts`), each sort baseline against its random-order
control (its paired test), and the density leakage of the random floor. File:
``sortability.csv``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from acdb_gym.report.document import Part, Table
from acdb_gym.report.power import POWER_ALPHA, TARGET_DIFFERENCE, min_sign_flip_seeds
from acdb_gym.report.section import ReportContext, SectionFiles, Slot
from acdb_gym.report.shortcuts import SORT_BASELINES, by_ladder, sortability_rows
from acdb_gym.report.tables import (
    estimate_cells,
    floor_measured,
    format_difference_ci,
    format_mdd,
    format_number,
    format_p_value,
    format_seeds_for_target,
    write_csv,
)
from acdb_gym.report.types import Estimate, LadderSummary, PairedTest, SortabilityRow

__all__ = ["MIN_SEEDS", "ShortcutChecks", "write_sortability_csv"]

MIN_SEEDS: Final = min_sign_flip_seeds(POWER_ALPHA)
"""The fewest paired seeds with which the sign-flip test can reach its level at all."""


class ShortcutChecks:
    """The "Shortcut checks" of each ladder's block."""

    name = "shortcuts"
    slot: Slot = "ladder"
    files_order = 30

    def compute(self, context: ReportContext) -> tuple[SortabilityRow, ...]:
        return sortability_rows(context.prepared)

    def write(self, result: tuple[SortabilityRow, ...], context: ReportContext) -> SectionFiles:
        path = context.run_dir / "sortability.csv"
        return SectionFiles(csvs=(write_sortability_csv(path, result),))

    def parts(
        self, result: tuple[SortabilityRow, ...], context: ReportContext, ladder: str | None
    ) -> list[Part]:
        assert ladder is not None
        table = context.summary.ladder(ladder)
        tests = [test for test in context.tests if test.ladder == ladder]
        return shortcut_parts(table, tests, by_ladder(result).get(ladder, ()))


def shortcut_parts(
    table: LadderSummary, tests: Sequence[PairedTest], sortability: Sequence[SortabilityRow]
) -> list[Part]:
    """The benchmark-design checks: sortability, sort baselines against control, density."""
    overall = table.random_floor[-1] if table.random_floor else None
    sort_lines = _sort_baseline_lines(table, tests)
    if not sortability and not sort_lines and overall is None:
        return []
    lines: list[Part] = ["### Shortcut checks", ""]
    if sortability:
        lines += [
            "**Sortability** of the instances' observational samples: the share of "
            "path-joined pairs i ⇝ j whose marginal variance (var-sortability, Reisach et al. "
            "2021) or R² on all other variables (R²-sortability, Reisach et al. 2023) rises "
            "from i to j; 0.5 is chance, near 1 the score sorts the causal order. Values in %; "
            "brackets: 95% CI over instances.",
            "",
        ]
        headers = ("level", "var-sortability", "R²-sortability", "instances")
        body = [
            [row.level, _percent_ci(row.var), _percent_ci(row.r2), str(row.var.n)]
            for row in sortability
        ]
        lines.append(Table.of(headers, body))
    lines += sort_lines
    if overall is not None and not math.isnan(overall.closed_form):
        lines.append(
            f"- **Density leakage**: a structure-blind random DAG scores "
            f"{format_number(overall.closed_form, 'directed_f1')}% directed F1 in expectation "
            f"(closed form{'; measured above' if floor_measured(table) else ''}); results "
            "near it carry no evidence of discovery."
        )
    return [*lines, ""]


def _percent_ci(estimate: Estimate) -> str:
    if estimate.n == 0:
        return "—"
    return f"{100 * estimate.mean:.1f} [{100 * estimate.low:.1f}, {100 * estimate.high:.1f}]"


def _sort_baseline_lines(table: LadderSummary, tests: Sequence[PairedTest]) -> list[Part]:
    """One line per sort baseline: its paired test against randregress, or what to run."""
    lines: list[Part] = []
    control = next((row for row in table.rows if row.agent == "randregress"), None)
    for agent, order in SORT_BASELINES.items():
        row = next((row for row in table.rows if row.agent == agent), None)
        if row is None:
            continue
        f1 = format_number(row.metrics["directed_f1"].mean, "directed_f1")
        line = (
            f"- **{order} order**: {agent} (variables sorted by {order}, then regressed) "
            f"reaches directed F1 {f1}%"
        )
        test = None
        if control is not None:
            test = next(
                (
                    t
                    for t in tests
                    if (t.agent_a, t.agent_b) == (row.label, control.label)
                    and t.level is None
                    and t.metric == "directed_f1"
                ),
                None,
            )
        if test is None:
            line += f"; run `randregress` too to measure what the {order} order alone is worth."
        else:
            line += "; " + _order_worth(test, order)
        lines.append(line)
    return lines


def _order_worth(test: PairedTest, order: str) -> str:
    if test.mdd == math.inf:
        power = f"too few seeds for the test to detect any difference (it needs {MIN_SEEDS})"
    else:
        power = (
            f"minimum detectable difference {format_mdd(test)} points; a 5-point difference "
            f"needs {format_seeds_for_target(test)} seeds"
        )
    text = (
        f"the same regressions in a random order (randregress) reach "
        f"{format_number(test.mean_b, 'directed_f1')}%, so the {order} order is worth "
        f"{100 * test.mean_difference:+.1f} points (95% CI {format_difference_ci(test)}, "
        f"p {_p_phrase(test)}, {test.n} paired seeds; {power}): "
    )
    if test.p_value < POWER_ALPHA:
        verdict = "a shortcut" if test.mean_difference > 0 else "worse than a random order"
        return text + f"{verdict} on this ladder."
    if math.isfinite(test.mdd) and test.mdd <= TARGET_DIFFERENCE:
        return text + "no shortcut of 5 points or more on this ladder."
    return text + "not resolved at these seeds."


def _p_phrase(test: PairedTest) -> str:
    printed = format_p_value(test.p_value, exact=test.p_exact)
    return printed if printed.startswith("<") else f"= {printed}"


def write_sortability_csv(path: Path, rows: Sequence[SortabilityRow]) -> Path:
    header = ["ladder", "level", "n_instances"]
    header += [f"{name}_{part}" for name in ("var", "r2") for part in ("mean", "low", "high")]
    body = [
        [row.ladder, row.level, row.var.n, *estimate_cells(row.var), *estimate_cells(row.r2)]
        for row in rows
    ]
    return write_csv(path, header, body)
