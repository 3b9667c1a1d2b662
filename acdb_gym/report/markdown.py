"""The report's document (``report.md`` and ``report.html`` both render it): the run's header,
then each ladder's block (its heading and the parts of every ``"ladder"`` section), then the
parts of every ``"run"`` section, each in the order of
:data:`~acdb_gym.report.sections.SECTIONS`.

:func:`compose` only orders: every table, paragraph and image comes from a section
(:mod:`acdb_gym.report.sections`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from acdb_gym.report.document import Part
from acdb_gym.report.load import RESULTS_FILE
from acdb_gym.report.section import ReportContext, Section
from acdb_gym.report.sections.paired_tests import paired_test_parts
from acdb_gym.report.statistics import N_BOOTSTRAP
from acdb_gym.report.tables import md_cell
from acdb_gym.report.types import Summary

__all__ = ["compose", "header_parts", "paired_test_parts"]


def compose(
    context: ReportContext,
    sections: Sequence[Section[Any]],
    results: Mapping[str, Any],
) -> list[Part]:
    """The report's document.

    Args:
        context: the run (with ``files`` set: the file list links them).
        sections: the sections, in document order within each slot.
        results: each applying section's result, by section name (a section that does not
            apply has none and gives no parts).

    Returns:
        The parts, in document order.
    """
    parts = header_parts(context.run_dir, context.summary, context.problems)
    applying = [section for section in sections if section.name in results]
    for table in context.summary.ladders:
        parts += [f"## Ladder {table.ladder}", ""]
        for section in applying:
            if section.slot == "ladder":
                parts += section.parts(results[section.name], context, table.ladder)
    for section in applying:
        if section.slot == "run":
            parts += section.parts(results[section.name], context, None)
    return parts


def header_parts(run_dir: Path, summary: Summary, problems: Sequence[str]) -> list[Part]:
    """The run's header: ladders, levels, agent rows, episodes, versions, the unit of
    analysis, and the lines skipped reading the results file."""
    levels = "; ".join(f"{t.ladder}: {', '.join(t.levels)}" for t in summary.ladders)
    lines: list[Part] = [
        f"# ACDB sweep report: `{run_dir.name}`",
        "",
        f"- **ladders**: {', '.join(t.ladder for t in summary.ladders) or '—'}",
        f"- **levels**: {levels or '—'}",
        f"- **agent rows**: {', '.join(summary.labels) or '—'}",
        f"- **episodes**: {summary.n_ok} successful, {summary.n_failed} failed jobs",
        f"- **package versions**: {', '.join(summary.versions) or 'unknown'}",
        "- **unit of analysis**: the seed; repeats of an agent row on one instance "
        "(ladder, level, manifest index) are averaged first. CIs are 95% percentile-bootstrap "
        f"intervals over seeds ({N_BOOTSTRAP} resamples, seeds resampled within levels).",
    ]
    if summary.mixed_configs:
        lines.append(
            f"- **warning**: {', '.join(summary.mixed_configs)} pool rows with different "
            "`agent_config` values."
        )
    if problems:
        lines.append(f"- **skipped lines of {RESULTS_FILE}**: {len(problems)}")
        lines += [f"  - {md_cell(problem)}" for problem in problems]
    return [*lines, ""]
