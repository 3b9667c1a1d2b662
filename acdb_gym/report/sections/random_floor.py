"""The random floor of each ladder: the closed-form expectation of the structure-blind random
DAG baseline per level and overall, next to the measured ``random`` agent. File:
``random_floor.csv`` (every ladder)."""

from __future__ import annotations

from pathlib import Path

from acdb_gym.report.document import Part, Table
from acdb_gym.report.section import ReportContext, SectionFiles, Slot
from acdb_gym.report.tables import (
    FLOOR_HEADERS,
    estimate_cells,
    floor_body,
    floor_measured,
    floor_unmeasured_note,
    write_csv,
)
from acdb_gym.report.types import Summary

__all__ = ["RandomFloor", "write_floor_csv"]


class RandomFloor:
    """The random floor table in each ladder's block."""

    name = "random_floor"
    slot: Slot = "ladder"
    files_order = 10

    def compute(self, context: ReportContext) -> Summary:
        return context.summary

    def write(self, result: Summary, context: ReportContext) -> SectionFiles:
        return SectionFiles(csvs=(write_floor_csv(context.run_dir / "random_floor.csv", result),))

    def parts(self, result: Summary, context: ReportContext, ladder: str | None) -> list[Part]:
        assert ladder is not None
        table = result.ladder(ladder)
        lines: list[Part] = ["### Random floor (directed F1, %)", ""]
        if not floor_measured(table):
            return [*lines, f"Random floor {floor_unmeasured_note(table)}.", ""]
        lines += [
            "Closed form: the expectation of the structure-blind random DAG baseline; "
            "overall weighted by instances per level. Measured: the `random` agent.",
            "",
        ]
        return [*lines, Table.of(FLOOR_HEADERS, floor_body(table, ci=True))]


def write_floor_csv(path: Path, summary: Summary) -> Path:
    header = ["ladder", "level", "closed_form", "measured_mean", "measured_low", "measured_high"]
    body = [
        [
            table.ladder,
            floor.level,
            floor.closed_form,
            *estimate_cells(floor.measured),
            floor.measured.n,
        ]
        for table in summary.ladders
        for floor in table.random_floor
    ]
    return write_csv(path, [*header, "measured_n_seeds"], body)
