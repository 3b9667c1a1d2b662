"""Tables 2 and 3 of each ladder (paper §5): every metric over all levels' seeds, and directed
F1 level by level; the observational rows by skeleton F1 when the correlation-only probe ran.
Files: ``table2_<ladder>.csv`` and ``table3_<ladder>.csv`` (raw units)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from acdb_gym.report.aggregation import TABLE2_METRICS
from acdb_gym.report.document import Part, Table
from acdb_gym.report.section import ReportContext, SectionFiles, Slot
from acdb_gym.report.tables import (
    TABLE2_HEADERS,
    estimate_cells,
    skeleton_body,
    table2_body,
    table3_body,
    write_csv,
)
from acdb_gym.report.types import LadderSummary, Summary

__all__ = ["CORRELATION_PROBE", "LadderTables", "write_table2_csv", "write_table3_csv"]

CORRELATION_PROBE: Final = "llm_corr_obs"


class LadderTables:
    """Tables 2 and 3 (and the skeleton table) in each ladder's block."""

    name = "tables"
    slot: Slot = "ladder"
    files_order = 70

    def compute(self, context: ReportContext) -> Summary:
        return context.summary

    def write(self, result: Summary, context: ReportContext) -> SectionFiles:
        run = context.run_dir
        csvs = []
        for table in result.ladders:
            csvs.append(write_table2_csv(run / f"table2_{table.ladder}.csv", table))
            csvs.append(write_table3_csv(run / f"table3_{table.ladder}.csv", table))
        return SectionFiles(csvs=tuple(csvs))

    def parts(self, result: Summary, context: ReportContext, ladder: str | None) -> list[Part]:
        assert ladder is not None
        table = result.ladder(ladder)
        lines: list[Part] = ["### Table 2: average across levels", ""]
        lines += [
            "Weighted by episodes per level (the mean over every per-seed value of every "
            "level). Values in %; SHD is a mean edge count; brackets: 95% CI.",
            "",
        ]
        lines.append(Table.of(TABLE2_HEADERS, table2_body(table, ci=True)))
        lines += ["### Table 3: directed F1 per level", "", "Values in %; brackets: 95% CI.", ""]
        lines.append(Table.of(["agent", *table.levels, "overall"], table3_body(table, ci=True)))
        return lines + _skeleton(table)


def _skeleton(table: LadderSummary) -> list[Part]:
    """The observational rows by skeleton F1, when the correlation-only probe ran."""
    if not any(row.agent.startswith(CORRELATION_PROBE) for row in table.rows):
        return []
    lines: list[Part] = ["### Observational rows by skeleton F1", ""]
    lines += [
        f"`{CORRELATION_PROBE}` sees only the standard deviations and correlations of the "
        "observational sample and is told to orient only what the data clearly support, so "
        "its directed F1 is near 0 by design: compare it with the other observational rows "
        "on skeleton F1 (adjacencies, orientation ignored). Values in %; brackets: 95% CI.",
        "",
    ]
    headers = ["agent", *(f"Skel F1 {level}" for level in table.levels), "Skel F1", "Dir F1"]
    return [*lines, Table.of(headers, skeleton_body(table, ci=True))]


def write_table2_csv(path: Path, table: LadderSummary) -> Path:
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
            *(cell for m in TABLE2_METRICS for cell in estimate_cells(row.metrics[m])),
        ]
        for row in table.rows
    ]
    return write_csv(path, header, body)


def write_table3_csv(path: Path, table: LadderSummary) -> Path:
    header = ["label", "agent", "panel", "tools", "level", "n_seeds"]
    header += ["directed_f1_mean", "directed_f1_low", "directed_f1_high"]
    body = [
        [row.label, row.agent, row.panel, row.tools, level, estimate.n, *estimate_cells(estimate)]
        for row in table.rows
        for level, estimate in [*row.per_level.items(), ("overall", row.metrics["directed_f1"])]
    ]
    return write_csv(path, header, body)
