"""The headroom of every level: oracle − the best agent of the run, with its CI, naming the agent
(:mod:`acdb_gym.report.headroom`). File: ``headroom.csv`` (every ladder)."""

from __future__ import annotations

from acdb_gym.report.document import Part
from acdb_gym.report.headroom import HeadroomRow, headroom_parts, headroom_rows, write_headroom_csv
from acdb_gym.report.section import ReportContext, SectionFiles, Slot

__all__ = ["Headroom"]


class Headroom:
    """The headroom table in each ladder's block, after its Tables 2 and 3."""

    name = "headroom"
    slot: Slot = "ladder"
    files_order = 15

    def compute(self, context: ReportContext) -> tuple[HeadroomRow, ...]:
        return headroom_rows(context.prepared, context.summary)

    def write(self, result: tuple[HeadroomRow, ...], context: ReportContext) -> SectionFiles:
        return SectionFiles(csvs=(write_headroom_csv(context.run_dir / "headroom.csv", result),))

    def parts(
        self, result: tuple[HeadroomRow, ...], context: ReportContext, ladder: str | None
    ) -> list[Part]:
        assert ladder is not None
        return headroom_parts([row for row in result if row.ladder == ladder])
