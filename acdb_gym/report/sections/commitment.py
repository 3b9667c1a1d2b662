"""Precision against recall of each agent row's directed edges: whether it orients fewer edges
than the truth has (under-commits) or more (over-commits)."""

from __future__ import annotations

import math
from typing import Final

from acdb_gym.report.document import Part
from acdb_gym.report.section import ReportContext, SectionFiles, Slot
from acdb_gym.report.types import AgentRow, Summary

__all__ = ["BALANCE_TOLERANCE", "Commitment", "commitment_line"]

BALANCE_TOLERANCE: Final = 0.01
"""|P - R| below this (in fraction units) counts as balanced."""


class Commitment:
    """One line per agent row in each ladder's block."""

    name = "commitment"
    slot: Slot = "ladder"
    files_order = 0

    def compute(self, context: ReportContext) -> Summary:
        return context.summary

    def write(self, result: Summary, context: ReportContext) -> SectionFiles:
        return SectionFiles()

    def parts(self, result: Summary, context: ReportContext, ladder: str | None) -> list[Part]:
        assert ladder is not None
        lines: list[Part] = ["### Precision vs recall (directed edges)", ""]
        lines += [
            "Precision / recall = true edges / oriented edges per episode, so precision above "
            "recall means an agent orients fewer edges than the truth has (under-commits), and "
            "below means more (over-commits).",
            "",
        ]
        return [*lines, *(commitment_line(row) for row in result.ladder(ladder).rows), ""]


def commitment_line(row: AgentRow) -> str:
    """The agent row's precision-vs-recall bullet."""
    precision, recall = row.metrics["directed_precision"], row.metrics["directed_recall"]
    if precision.n == 0 or not math.isfinite(precision.mean + recall.mean):
        return f"- **{row.label}**: no scored episodes."
    gap = precision.mean - recall.mean
    numbers = f"precision {100 * precision.mean:.1f}% vs recall {100 * recall.mean:.1f}%"
    if max(precision.mean, recall.mean) < BALANCE_TOLERANCE:
        verdict = (
            "orients almost no true edge (an empty or wrong submission), so the balance of "
            "precision and recall says nothing"
        )
    elif abs(gap) < BALANCE_TOLERANCE:
        verdict = "balanced: about as many oriented edges as true edges"
    elif gap > 0:
        verdict = "precision exceeds recall: under-commits (fewer oriented edges than true edges)"
    else:
        verdict = "recall exceeds precision: over-commits (more oriented edges than true edges)"
    return f"- **{row.label}**: {numbers} — {verdict}."
