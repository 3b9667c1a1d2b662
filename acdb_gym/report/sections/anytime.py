"""The anytime directed F1 (:mod:`acdb_gym.report.anytime`): per ladder, agent row and level,
the stated graph's directed F1 after each experiment and its area beside η; only when rows
carry revision records. Files: ``anytime.csv`` and ``anytime_<ladder>.png``."""

from __future__ import annotations

from acdb_gym.report.anytime import (
    AnytimeRow,
    anytime_parts,
    anytime_rows,
    plot_anytime,
    write_anytime_csv,
)
from acdb_gym.report.document import Part
from acdb_gym.report.section import ReportContext, SectionFiles, Slot

__all__ = ["Anytime"]


class Anytime:
    """The "Anytime directed F1" section."""

    name = "anytime"
    slot: Slot = "run"
    files_order = 60

    def compute(self, context: ReportContext) -> tuple[AnytimeRow, ...] | None:
        prepared = context.prepared
        return anytime_rows(prepared.ok, labels=prepared.labels) or None

    def write(self, result: tuple[AnytimeRow, ...], context: ReportContext) -> SectionFiles:
        run = context.run_dir
        plots = tuple(
            plot_anytime(_of(result, ladder), run / _plot_name(ladder))
            for ladder in _ladders(result)
        )
        return SectionFiles(csvs=(write_anytime_csv(run / "anytime.csv", result),), plots=plots)

    def parts(
        self, result: tuple[AnytimeRow, ...], context: ReportContext, ladder: str | None
    ) -> list[Part]:
        lines: list[Part] = ["", "## Anytime directed F1", ""]
        for name in _ladders(result):
            lines += anytime_parts(_of(result, name), plot=_plot_name(name))
        return lines


def _ladders(rows: tuple[AnytimeRow, ...]) -> list[str]:
    return sorted({row.ladder for row in rows})


def _of(rows: tuple[AnytimeRow, ...], ladder: str) -> list[AnytimeRow]:
    return [row for row in rows if row.ladder == ladder]


def _plot_name(ladder: str) -> str:
    return f"anytime_{ladder}.png"
