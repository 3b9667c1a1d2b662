"""The transfer table across SCM families (:mod:`acdb_gym.report.transfer`); only when the rows
span v1 and at least one of its family ladders."""

from __future__ import annotations

from acdb_gym.report.document import Part
from acdb_gym.report.section import ReportContext, SectionFiles, Slot
from acdb_gym.report.transfer import transfer_parts

__all__ = ["Transfer"]


class Transfer:
    """The "Transfer across SCM families" section."""

    name = "transfer"
    slot: Slot = "run"
    files_order = 0

    def compute(self, context: ReportContext) -> list[Part] | None:
        return transfer_parts(context.rows) or None

    def write(self, result: list[Part], context: ReportContext) -> SectionFiles:
        return SectionFiles()

    def parts(self, result: list[Part], context: ReportContext, ladder: str | None) -> list[Part]:
        return ["", *result]
