"""The hidden-confounder section (:mod:`acdb_gym.report.latent`): the further score fields of
latent levels, per ladder and agent row; only when rows score such a world."""

from __future__ import annotations

from acdb_gym.report.document import Part
from acdb_gym.report.latent import latent_parts
from acdb_gym.report.section import ReportContext, SectionFiles, Slot

__all__ = ["HiddenConfounders"]


class HiddenConfounders:
    """The "Hidden confounders" section."""

    name = "latent"
    slot: Slot = "run"
    files_order = 0

    def compute(self, context: ReportContext) -> list[Part] | None:
        return latent_parts(context.rows) or None

    def write(self, result: list[Part], context: ReportContext) -> SectionFiles:
        return SectionFiles()

    def parts(self, result: list[Part], context: ReportContext, ladder: str | None) -> list[Part]:
        return ["", *result]
