"""The report's tables as text: cell formatting, Markdown and terminal tables, and the CSV files.

Cells show fractions in % like the paper (:data:`PERCENT_METRICS`) and counts with two decimals;
a missing value is "—". The table bodies (Table 2, Table 3, random floor, ladders side by side)
are built once and rendered as Markdown by the sections (:mod:`acdb_gym.report.sections`) or as aligned plain
text by :func:`format_terminal`. :func:`write_csv`, which every section's CSV goes through,
keeps raw units (fractions in [0, 1], SHD in edges) with empty cells for NaN.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.core.types import PANEL_OBSERVATIONAL
from acdb_gym.report.aggregation import TABLE2_METRICS, sort_value
from acdb_gym.report.types import (
    Estimate,
    LadderSummary,
    PairedTest,
    Summary,
)

__all__ = [
    "COMPARISON_METRICS",
    "FLOOR_HEADERS",
    "METRIC_TITLES",
    "PAIRED_TEST_HEADERS",
    "PERCENT_METRICS",
    "TABLE2_HEADERS",
    "comparison_body",
    "estimate_cells",
    "floor_body",
    "floor_measured",
    "floor_unmeasured_note",
    "format_difference",
    "format_difference_ci",
    "format_mdd",
    "format_number",
    "format_p_value",
    "format_percent",
    "format_percent_ci",
    "format_seeds_for_target",
    "format_terminal",
    "md_cell",
    "md_table",
    "paired_test_cells",
    "skeleton_body",
    "table2_body",
    "table3_body",
    "write_csv",
]

METRIC_TITLES: Final = {
    "skeleton_f1": "Skel F1",
    "compelled_f1": "Comp F1",
    "directed_precision": "Dir P",
    "directed_recall": "Dir R",
    "directed_f1": "Dir F1",
    "shd": "SHD",
    "anytime_f1": "Anytime F1",
    "efficiency": "η (paper)",
    "essential_f1": "Ess F1",
}
# Fractions in [0, 1], shown in % like the paper; every other numeric field is a count or time.
PERCENT_METRICS: Final = frozenset(
    name for name in SCORE_FIELDS if name.endswith(("precision", "recall", "f1", "efficiency"))
)
COMPARISON_METRICS: Final = ("directed_f1", "shd", "skeleton_f1")


# ----------------------------------------------------------------------------- cells and tables


def _is_percent(metric: str) -> bool:
    return metric in PERCENT_METRICS


def _scaled(value: float, metric: str) -> float:
    return 100.0 * value if _is_percent(metric) else value


def format_number(value: float, metric: str) -> str:
    if not math.isfinite(value):
        return "—"
    return f"{_scaled(value, metric):.1f}" if _is_percent(metric) else f"{value:.2f}"


def _with_ci(estimate: Estimate, metric: str) -> str:
    if estimate.n == 0:
        return "—"
    return (
        f"{format_number(estimate.mean, metric)} "
        f"[{format_number(estimate.low, metric)}, {format_number(estimate.high, metric)}]"
    )


def format_percent(value: float) -> str:
    """A fraction as a percentage with one decimal; "—" for NaN or infinity."""
    return f"{100 * value:.1f}" if math.isfinite(value) else "—"


def format_percent_ci(estimate: Estimate) -> str:
    """``mean [low, high]`` as percentages (:func:`format_percent`); "—" without values."""
    if estimate.n == 0:
        return "—"
    low, high = format_percent(estimate.low), format_percent(estimate.high)
    return f"{format_percent(estimate.mean)} [{low}, {high}]"


def format_p_value(p: float, *, exact: bool = False) -> str:
    """A p-value as printed: 3 significant places, and a bound below 1e-4.

    An exact (enumerated) p-value below 1e-4 is printed as its value (``"2.0e-06"``); a Monte
    Carlo one as ``"< 1e-4"``, since its value there rests on a handful of draws (it is never
    printed as 0).
    """
    if not math.isfinite(p):
        return "—"
    if p < 1e-4:
        return f"{p:.1e}" if exact else "< 1e-4"
    return f"{p:.4f}" if p < 0.01 else f"{p:.3f}"


def _difference(value: float, metric: str, *, signed: bool = True) -> str:
    if not math.isfinite(value):
        return "—"
    sign = "+" if signed else ""
    if _is_percent(metric):
        return f"{100.0 * value:{sign}.1f}"
    return f"{value:{sign}.2f}"


def format_difference(test: PairedTest) -> str:
    if not math.isfinite(test.mean_difference):
        return "—"
    unit = " pts" if _is_percent(test.metric) else ""
    return _difference(test.mean_difference, test.metric) + unit


def format_difference_ci(test: PairedTest) -> str:
    """The mean difference's CI, ``[low, high]``, in the difference's units."""
    if not math.isfinite(test.ci_low + test.ci_high):
        return "—"
    return f"[{_difference(test.ci_low, test.metric)}, {_difference(test.ci_high, test.metric)}]"


def format_mdd(test: PairedTest) -> str:
    """The minimum detectable difference (80% power), unsigned, in the difference's units; "∞"
    when the seeds are too few for the sign-flip test to reach its level at all."""
    return "∞" if test.mdd == math.inf else _difference(test.mdd, test.metric, signed=False)


def format_seeds_for_target(test: PairedTest) -> str:
    """The paired seeds a difference of ``test.target`` needs, or "—"."""
    return "—" if test.seeds_for_target is None else str(test.seeds_for_target)


PAIRED_TEST_HEADERS: Final = (
    "A",
    "B",
    "metric",
    "n",
    "mean A",
    "mean B",
    "A − B",
    "95% CI",
    "p",
    "MDD",
    "seeds for 5 pts",
)


def paired_test_cells(test: PairedTest) -> list[str]:
    """One paired test's cells, in :data:`PAIRED_TEST_HEADERS` order."""
    return [
        test.agent_a,
        test.agent_b,
        test.metric,
        str(test.n),
        format_number(test.mean_a, test.metric),
        format_number(test.mean_b, test.metric),
        format_difference(test),
        format_difference_ci(test),
        format_p_value(test.p_value, exact=test.p_exact),
        format_mdd(test),
        format_seeds_for_target(test),
    ]


def md_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def md_table(headers: Sequence[str], body: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines.extend("| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in body)
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


def table2_body(table: LadderSummary, *, ci: bool) -> list[list[str]]:
    body = []
    for row in table.rows:
        cells = [row.label, str(row.n_seeds), str(row.n_episodes), str(row.n_failed)]
        for metric in TABLE2_METRICS:
            estimate = row.metrics[metric]
            cells.append(_with_ci(estimate, metric) if ci else format_number(estimate.mean, metric))
        body.append(cells)
    return body


def table3_body(table: LadderSummary, *, ci: bool) -> list[list[str]]:
    body = []
    for row in table.rows:
        estimates = [*(row.per_level[level] for level in table.levels), row.metrics["directed_f1"]]
        cells = [
            _with_ci(e, "directed_f1") if ci else format_number(e.mean, "directed_f1")
            for e in estimates
        ]
        body.append([row.label, *cells])
    return body


def skeleton_body(table: LadderSummary, *, ci: bool) -> list[list[str]]:
    """Skeleton F1 per level and overall, then overall directed F1, of the observational rows
    (best skeleton F1 first)."""
    rows = [row for row in table.rows if row.panel == PANEL_OBSERVATIONAL]
    rows.sort(key=lambda row: -sort_value(row.metrics["skeleton_f1"].mean))
    body = []
    for row in rows:
        estimates = [
            *(row.per_level_skeleton.get(level, Estimate.empty()) for level in table.levels),
            row.metrics["skeleton_f1"],
            row.metrics["directed_f1"],
        ]
        cells = [
            _with_ci(e, "skeleton_f1") if ci else format_number(e.mean, "skeleton_f1")
            for e in estimates
        ]
        body.append([row.label, *cells])
    return body


def floor_body(table: LadderSummary, *, ci: bool) -> list[list[str]]:
    body = []
    for floor in table.random_floor:
        measured = (
            _with_ci(floor.measured, "directed_f1")
            if ci
            else format_number(floor.measured.mean, "directed_f1")
        )
        body.append(
            [
                floor.level,
                format_number(floor.closed_form, "directed_f1"),
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


def floor_measured(table: LadderSummary) -> bool:
    """Whether the run holds ``random`` rows to measure the floor with."""
    return any(floor.measured.n for floor in table.random_floor)


def floor_unmeasured_note(table: LadderSummary) -> str:
    """The one line that replaces the floor table when no ``random`` rows were run."""
    closed = ", ".join(
        f"{floor.level} {format_number(floor.closed_form, 'directed_f1')}"
        for floor in table.random_floor
    )
    return f"not measured: this run has no `random` rows (closed form, %: {closed})"


def comparison_body(summary: Summary) -> tuple[list[str], list[list[str]]]:
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
                cells.append(format_number(mean, metric))
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
        lines += _text_table(TABLE2_HEADERS, table2_body(table, ci=False))
        lines += ["", f"== ladder {table.ladder}: Table 3 (directed F1 per level) =="]
        lines += _text_table(["agent", *table.levels, "overall"], table3_body(table, ci=False))
        lines += ["", f"== ladder {table.ladder}: random floor (directed F1) =="]
        if floor_measured(table):
            lines += _text_table(FLOOR_HEADERS, floor_body(table, ci=False))
        else:
            lines.append(floor_unmeasured_note(table))
    if len(summary.ladders) > 1:
        headers, body = comparison_body(summary)
        lines += ["", "== ladders side by side =="]
        lines += _text_table(headers, body)
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- CSV


def _csv_value(value: object) -> str:
    if isinstance(value, float):
        return "" if not math.isfinite(value) else format(value, ".10g")
    return "" if value is None else str(value)


def write_csv(path: Path, header: Sequence[str], body: Iterable[Sequence[object]]) -> Path:
    """Write a CSV file (floats to 10 significant digits, NaN and None as empty cells)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows([_csv_value(value) for value in row] for row in body)
    return path


def estimate_cells(estimate: Estimate) -> list[object]:
    return [estimate.mean, estimate.low, estimate.high]
