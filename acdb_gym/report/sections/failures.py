"""The failed jobs: id, instance, agent row and the error (cut to 300 characters)."""

from __future__ import annotations

from acdb_gym.report.document import Part, Table
from acdb_gym.report.section import ReportContext, SectionFiles, Slot
from acdb_gym.report.types import Summary

__all__ = ["Failures"]


class Failures:
    """The "Failed jobs" section ("None." without one)."""

    name = "failures"
    slot: Slot = "run"
    files_order = 0

    def compute(self, context: ReportContext) -> Summary:
        return context.summary

    def write(self, result: Summary, context: ReportContext) -> SectionFiles:
        return SectionFiles()

    def parts(self, result: Summary, context: ReportContext, ladder: str | None) -> list[Part]:
        lines: list[Part] = ["## Failed jobs", ""]
        if not result.failures:
            return [*lines, "None.", ""]
        headers = ("job", "ladder", "level", "manifest index", "agent", "error")
        body = [
            [f.job_id, f.ladder, f.level, str(f.manifest_index), f.label, f.error[:300]]
            for f in result.failures
        ]
        return [*lines, Table.of(headers, body)]
