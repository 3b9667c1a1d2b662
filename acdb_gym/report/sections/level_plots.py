"""The plots of each ladder: directed F1 per level (bars with CIs and the random floor) and
precision against recall per agent row. Files: ``f1_per_level_<ladder>.png`` and
``precision_recall_<ladder>.png``."""

from __future__ import annotations

from acdb_gym.report.document import Image, Part
from acdb_gym.report.plots import plot_f1_per_level, plot_precision_recall
from acdb_gym.report.section import ReportContext, SectionFiles, Slot
from acdb_gym.report.types import Summary

__all__ = ["LevelPlots"]


class LevelPlots:
    """The two plots at the end of each ladder's block."""

    name = "level_plots"
    slot: Slot = "ladder"
    files_order = 80

    def compute(self, context: ReportContext) -> Summary:
        return context.summary

    def write(self, result: Summary, context: ReportContext) -> SectionFiles:
        run = context.run_dir
        plots = []
        for table in result.ladders:
            plots.append(plot_f1_per_level(table, run / f"f1_per_level_{table.ladder}.png"))
            plots.append(plot_precision_recall(table, run / f"precision_recall_{table.ladder}.png"))
        return SectionFiles(plots=tuple(plots))

    def parts(self, result: Summary, context: ReportContext, ladder: str | None) -> list[Part]:
        return [
            Image(f"f1_per_level_{ladder}.png", "directed F1 per level"),
            Image(f"precision_recall_{ladder}.png", "precision vs recall"),
        ]
