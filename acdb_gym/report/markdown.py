"""The report document ``report.md``: run header, per-ladder sections, tests, the Revision
section (:mod:`acdb_gym.report.revision`, when rows carry revision records), failures, files.

Each ladder section holds Table 2, Table 3 and the random floor (rendered from the bodies of
:mod:`acdb_gym.report.tables`), a precision-vs-recall paragraph per agent row, the two
benchmark-design shortcut checks (variance sortability, density leakage) and the plots' links.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from acdb_gym.report.load import RESULTS_FILE
from acdb_gym.report.revision import RevisionSummary, revision_markdown
from acdb_gym.report.statistics import N_BOOTSTRAP, N_PERMUTATIONS
from acdb_gym.report.tables import (
    FLOOR_HEADERS,
    TABLE2_HEADERS,
    comparison_body,
    floor_body,
    floor_measured,
    floor_unmeasured_note,
    format_difference,
    format_number,
    format_p_value,
    md_cell,
    md_table,
    table2_body,
    table3_body,
)
from acdb_gym.report.types import (
    AgentRow,
    Estimate,
    LadderSummary,
    PairedTest,
    ReportFiles,
    Summary,
)

__all__ = ["markdown_report"]

# |P - R| below this (in fraction units) counts as balanced in the precision-vs-recall paragraph.
BALANCE_TOLERANCE: Final = 0.01


def markdown_report(
    run_dir: Path,
    summary: Summary,
    tests: Sequence[PairedTest],
    problems: Sequence[str],
    files: ReportFiles,
    *,
    revisions: Sequence[RevisionSummary] = (),
) -> str:
    """The text of ``report.md``.

    Args:
        run_dir: the run directory (its name titles the report).
        summary: the run's :class:`~acdb_gym.report.types.Summary`.
        tests: the paired tests to list.
        problems: the problems met reading the results file, listed in the header.
        files: the CSVs and plots written next to it, linked at the end.
        revisions: the revision analysis (:mod:`acdb_gym.report.revision`); its section
            follows the paired tests when there is one.

    Returns:
        The Markdown text, ending with a newline.
    """
    lines = _md_header(run_dir, summary, problems)
    for table in summary.ladders:
        lines += _md_ladder(table)
    lines += _md_tests(tests)
    lines += revision_markdown(revisions)
    if len(summary.ladders) > 1:
        headers, body = comparison_body(summary)
        lines += ["## Ladders side by side", ""]
        lines += ["Means over seeds; values in % except SHD.", ""]
        lines += md_table(headers, body)
    lines += _md_failures(summary)
    lines += ["## Files", ""]
    lines += [f"- [{path.name}]({path.name})" for path in (*files.csvs, *files.plots)]
    return "\n".join(lines) + "\n"


def _md_header(run_dir: Path, summary: Summary, problems: Sequence[str]) -> list[str]:
    levels = "; ".join(f"{t.ladder}: {', '.join(t.levels)}" for t in summary.ladders)
    lines = [
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


def _md_ladder(table: LadderSummary) -> list[str]:
    lines = [f"## Ladder {table.ladder}", "", "### Table 2: average across levels", ""]
    lines += [
        "Weighted by episodes per level (the mean over every per-seed value of every level). "
        "Values in %; SHD is a mean edge count; brackets: 95% CI.",
        "",
    ]
    lines += md_table(TABLE2_HEADERS, table2_body(table, ci=True))
    lines += ["### Table 3: directed F1 per level", "", "Values in %; brackets: 95% CI.", ""]
    lines += md_table(["agent", *table.levels, "overall"], table3_body(table, ci=True))
    lines += ["### Random floor (directed F1, %)", ""]
    if floor_measured(table):
        lines += [
            "Closed form: the expectation of the structure-blind random DAG baseline; "
            "overall weighted by instances per level. Measured: the `random` agent.",
            "",
        ]
        lines += md_table(FLOOR_HEADERS, floor_body(table, ci=True))
    else:
        lines += [f"Random floor {floor_unmeasured_note(table)}.", ""]
    lines += ["### Precision vs recall (directed edges)", ""]
    lines += [
        "Precision / recall = true edges / oriented edges per episode, so precision above "
        "recall means an agent orients fewer edges than the truth has (under-commits), and "
        "below means more (over-commits).",
        "",
    ]
    lines += [_commitment(row) for row in table.rows]
    lines += ["", *_md_shortcuts(table)]
    lines += [f"![directed F1 per level](f1_per_level_{table.ladder}.png)", ""]
    lines += [f"![precision vs recall](precision_recall_{table.ladder}.png)", ""]
    return lines


def _agent_f1(table: LadderSummary, agent: str) -> Estimate | None:
    row = next((row for row in table.rows if row.agent == agent), None)
    return None if row is None else row.metrics["directed_f1"]


def _md_shortcuts(table: LadderSummary) -> list[str]:
    """The two benchmark-design checks: variance sortability and density leakage."""
    sortn, control = _agent_f1(table, "sortnregress"), _agent_f1(table, "randregress")
    overall = table.random_floor[-1] if table.random_floor else None
    if sortn is None and overall is None:
        return []
    lines = ["### Shortcut checks", ""]
    if sortn is not None:
        line = (
            f"- **Variance sortability**: sortnregress (variables sorted by variance, then "
            f"regressed) reaches directed F1 {format_number(sortn.mean, 'directed_f1')}%"
        )
        if control is not None:
            gap = sortn.mean - control.mean
            line += (
                f"; the same regressions in a random order (randregress) reach "
                f"{format_number(control.mean, 'directed_f1')}%, so the variance order is worth "
                f"{100 * gap:+.1f} points"
            )
            verdict = "a shortcut" if gap > 0.05 else "no shortcut"
            line += f" ({verdict} on this ladder)."
        else:
            line += "; run `randregress` too to measure what the variance order alone is worth."
        lines.append(line)
    if overall is not None and not math.isnan(overall.closed_form):
        lines.append(
            f"- **Density leakage**: a structure-blind random DAG scores "
            f"{format_number(overall.closed_form, 'directed_f1')}% directed F1 in expectation "
            f"(closed form{'; measured above' if floor_measured(table) else ''}); results "
            "near it carry no evidence of discovery."
        )
    return [*lines, ""]


def _md_tests(tests: Sequence[PairedTest]) -> list[str]:
    lines = ["## Paired sign-flip tests", ""]
    if not tests:
        return [*lines, "No pairs of agent rows with shared seeds.", ""]
    lines += [
        "Same-seed per-seed differences A − B; two-sided sign-flip permutation test of the mean "
        f"difference ({N_PERMUTATIONS} resamples, exact when 2^n ≤ {N_PERMUTATIONS}). "
        "F1 differences in percentage points, SHD in edges.",
        "",
    ]
    headers = ("ladder", "A", "B", "metric", "n", "mean A", "mean B", "A − B", "p")
    body = [
        [
            test.ladder or "all",
            test.agent_a,
            test.agent_b,
            test.metric,
            str(test.n),
            format_number(test.mean_a, test.metric),
            format_number(test.mean_b, test.metric),
            format_difference(test),
            format_p_value(test.p_value),
        ]
        for test in tests
    ]
    return lines + md_table(headers, body)


def _md_failures(summary: Summary) -> list[str]:
    lines = ["## Failed jobs", ""]
    if not summary.failures:
        return [*lines, "None.", ""]
    headers = ("job", "ladder", "level", "manifest index", "agent", "error")
    body = [
        [f.job_id, f.ladder, f.level, str(f.manifest_index), f.label, f.error[:300]]
        for f in summary.failures
    ]
    return lines + md_table(headers, body)


def _commitment(row: AgentRow) -> str:
    precision, recall = row.metrics["directed_precision"], row.metrics["directed_recall"]
    if precision.n == 0 or not math.isfinite(precision.mean + recall.mean):
        return f"- **{row.label}**: no scored episodes."
    gap = precision.mean - recall.mean
    numbers = f"precision {100 * precision.mean:.1f}% vs recall {100 * recall.mean:.1f}%"
    if abs(gap) < BALANCE_TOLERANCE:
        verdict = "balanced: about as many oriented edges as true edges"
    elif gap > 0:
        verdict = "precision exceeds recall: under-commits (fewer oriented edges than true edges)"
    else:
        verdict = "recall exceeds precision: over-commits (more oriented edges than true edges)"
    return f"- **{row.label}**: {numbers} — {verdict}."
