"""The ladders side by side: each agent row's directed F1, SHD and skeleton F1 on every ladder
of the run, when it has more than one."""

from __future__ import annotations

from acdb_gym.report.document import Part, Table
from acdb_gym.report.section import ReportContext, SectionFiles, Slot
from acdb_gym.report.tables import comparison_body
from acdb_gym.report.types import Summary

__all__ = ["SideBySide"]


class SideBySide:
    """The "Ladders side by side" section."""

    name = "side_by_side"
    slot: Slot = "run"
    files_order = 0

    def compute(self, context: ReportContext) -> Summary | None:
        return context.summary if len(context.summary.ladders) > 1 else None

    def write(self, result: Summary, context: ReportContext) -> SectionFiles:
        return SectionFiles()

    def parts(self, result: Summary, context: ReportContext, ladder: str | None) -> list[Part]:
        headers, body = comparison_body(result)
        return [
            "## Ladders side by side",
            "",
            "Means over seeds; values in % except SHD.",
            "",
            Table.of(headers, body),
        ]
