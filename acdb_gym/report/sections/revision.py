"""How agents that state hypotheses revise them, experiment by experiment
(:mod:`acdb_gym.report.revision`); only when rows carry revision records. File:
``revision.csv``."""

from __future__ import annotations

from acdb_gym.report.document import Part
from acdb_gym.report.revision import (
    RevisionSummary,
    revision_markdown,
    summarize_revisions,
    write_revision_csv,
)
from acdb_gym.report.section import ReportContext, SectionFiles, Slot

__all__ = ["Revision"]


class Revision:
    """The "Revision" section."""

    name = "revision"
    slot: Slot = "run"
    files_order = 50

    def compute(self, context: ReportContext) -> tuple[RevisionSummary, ...] | None:
        prepared = context.prepared
        return summarize_revisions(prepared.ok, labels=prepared.labels) or None

    def write(self, result: tuple[RevisionSummary, ...], context: ReportContext) -> SectionFiles:
        path = context.run_dir / "revision.csv"
        return SectionFiles(csvs=(write_revision_csv(path, result),))

    def parts(
        self, result: tuple[RevisionSummary, ...], context: ReportContext, ladder: str | None
    ) -> list[Part]:
        return revision_markdown(result)
