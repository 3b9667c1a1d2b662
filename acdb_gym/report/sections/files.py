"""The list of the files the report wrote beside ``report.md``: the CSVs, then the plots."""

from __future__ import annotations

from acdb_gym.report.document import Part
from acdb_gym.report.section import ReportContext, SectionFiles, Slot

__all__ = ["FileList"]


class FileList:
    """The "Files" section."""

    name = "files"
    slot: Slot = "run"
    files_order = 0

    def compute(self, context: ReportContext) -> bool:
        return True

    def write(self, result: bool, context: ReportContext) -> SectionFiles:
        return SectionFiles()

    def parts(self, result: bool, context: ReportContext, ladder: str | None) -> list[Part]:
        assert context.files is not None
        paths = (*context.files.csvs, *context.files.plots)
        return ["## Files", "", *(f"- [{path.name}]({path.name})" for path in paths)]
