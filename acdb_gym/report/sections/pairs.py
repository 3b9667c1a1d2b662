"""The cause-effect pairs section (:mod:`acdb_gym.report.pairs`): orientation accuracy, plain
and with the Tübingen dataset weights; only when rows ran on a pairs level."""

from __future__ import annotations

from acdb_gym.report.document import Part
from acdb_gym.report.pairs import PairAccuracy, accuracy_parts, pair_accuracies
from acdb_gym.report.section import ReportContext, SectionFiles, Slot

__all__ = ["CauseEffectPairs"]


class CauseEffectPairs:
    """The "Cause-effect pairs" section."""

    name = "pairs"
    slot: Slot = "run"
    files_order = 0

    def compute(self, context: ReportContext) -> list[PairAccuracy] | None:
        return pair_accuracies(context.rows) or None

    def write(self, result: list[PairAccuracy], context: ReportContext) -> SectionFiles:
        return SectionFiles()

    def parts(
        self, result: list[PairAccuracy], context: ReportContext, ladder: str | None
    ) -> list[Part]:
        return ["", *accuracy_parts(result)]
