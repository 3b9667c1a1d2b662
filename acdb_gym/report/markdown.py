"""The report's document (:func:`report_parts`; ``report.md`` and ``report.html`` both render
it): run header, per-ladder sections, tests, the Revision section (:mod:`acdb_gym.report.revision`, when rows carry revision records), failures, files.

Each ladder section holds Table 2, Table 3, the headroom per level
(:mod:`acdb_gym.report.headroom`) and the random floor (rendered from the bodies of
:mod:`acdb_gym.report.tables`), a precision-vs-recall paragraph per agent row, the
benchmark-design shortcut checks (var- and R²-sortability of the instances, each sort baseline
against its random-order control, density leakage, the marginal-order audit of
:mod:`acdb_gym.report.order_audit`) and the plots' links. The paired tests
follow, per ladder: pooled over levels, then level by level, each with its CI, p-value and
power (minimum detectable difference, seeds a 5-point difference needs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from acdb_gym.report.document import Image, Part, Table
from acdb_gym.report.headroom import HeadroomRow, headroom_parts
from acdb_gym.report.load import RESULTS_FILE
from acdb_gym.report.order_audit import order_audit_parts
from acdb_gym.report.power import POWER, POWER_ALPHA, TARGET_DIFFERENCE, min_sign_flip_seeds
from acdb_gym.report.revision import RevisionSummary, revision_markdown
from acdb_gym.report.shortcuts import SORT_BASELINES, by_ladder
from acdb_gym.report.statistics import MAX_EXACT_N, N_BOOTSTRAP, N_SIGN_FLIPS
from acdb_gym.report.tables import (
    FLOOR_HEADERS,
    PAIRED_TEST_HEADERS,
    TABLE2_HEADERS,
    comparison_body,
    floor_body,
    floor_measured,
    floor_unmeasured_note,
    format_difference_ci,
    format_mdd,
    format_number,
    format_p_value,
    format_seeds_for_target,
    md_cell,
    paired_test_cells,
    skeleton_body,
    table2_body,
    table3_body,
)
from acdb_gym.report.types import (
    AgentRow,
    Estimate,
    LadderSummary,
    MarginalOrderRow,
    PairedTest,
    ReportFiles,
    SortabilityRow,
    Summary,
)

__all__ = ["paired_test_parts", "report_parts"]

CORRELATION_PROBE: Final = "llm_corr_obs"
MIN_SEEDS: Final = min_sign_flip_seeds(POWER_ALPHA)
# |P - R| below this (in fraction units) counts as balanced in the precision-vs-recall paragraph.
BALANCE_TOLERANCE: Final = 0.01


def report_parts(
    run_dir: Path,
    summary: Summary,
    tests: Sequence[PairedTest],
    problems: Sequence[str],
    files: ReportFiles,
    sortability: Sequence[SortabilityRow] = (),
    *,
    revisions: Sequence[RevisionSummary] = (),
    order_audit: Sequence[MarginalOrderRow] = (),
    headroom: Sequence[HeadroomRow] = (),
) -> list[Part]:
    """The report's document (:mod:`acdb_gym.report.document`), which ``report.md`` and
    ``report.html`` both render.

    Args:
        run_dir: the run directory (its name titles the report).
        summary: the run's :class:`~acdb_gym.report.types.Summary`.
        tests: the paired tests to list.
        problems: the problems met reading the results file, listed in the header.
        files: the CSVs and plots written next to it, linked at the end.
        sortability: the instances' sortability rows
            (:func:`~acdb_gym.report.shortcuts.sortability_rows`).
        revisions: the revision analysis (:mod:`acdb_gym.report.revision`); its section
            follows the paired tests when there is one.
        order_audit: the marginal-order audit rows
            (:func:`~acdb_gym.report.order_audit.order_audit_rows`), shown in each ladder's
            shortcut checks.
        headroom: the headroom rows (:func:`~acdb_gym.report.headroom.headroom_rows`), shown
            after each ladder's Table 3.

    Returns:
        The parts, in document order.
    """
    lines = _md_header(run_dir, summary, problems)
    sortable = by_ladder(sortability)
    for table in summary.ladders:
        mine = [test for test in tests if test.ladder == table.ladder]
        audit = [row for row in order_audit if row.ladder == table.ladder]
        room = [row for row in headroom if row.ladder == table.ladder]
        lines += _md_ladder(table, mine, sortable.get(table.ladder, ()), audit, room)
    lines += paired_test_parts(tests)
    lines += revision_markdown(revisions)
    if len(summary.ladders) > 1:
        headers, body = comparison_body(summary)
        lines += ["## Ladders side by side", ""]
        lines += ["Means over seeds; values in % except SHD.", ""]
        lines.append(Table.of(headers, body))
    lines += _md_failures(summary)
    lines += ["## Files", ""]
    lines += [f"- [{path.name}]({path.name})" for path in (*files.csvs, *files.plots)]
    return lines


def _md_header(run_dir: Path, summary: Summary, problems: Sequence[str]) -> list[Part]:
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


def _md_ladder(
    table: LadderSummary,
    tests: Sequence[PairedTest],
    sortability: Sequence[SortabilityRow],
    order_audit: Sequence[MarginalOrderRow] = (),
    headroom: Sequence[HeadroomRow] = (),
) -> list[Part]:
    lines: list[Part] = [f"## Ladder {table.ladder}", "", "### Table 2: average across levels", ""]
    lines += [
        "Weighted by episodes per level (the mean over every per-seed value of every level). "
        "Values in %; SHD is a mean edge count; brackets: 95% CI.",
        "",
    ]
    lines.append(Table.of(TABLE2_HEADERS, table2_body(table, ci=True)))
    lines += ["### Table 3: directed F1 per level", "", "Values in %; brackets: 95% CI.", ""]
    lines.append(Table.of(["agent", *table.levels, "overall"], table3_body(table, ci=True)))
    lines += headroom_parts(headroom)
    lines += _md_skeleton(table)
    lines += ["### Random floor (directed F1, %)", ""]
    if floor_measured(table):
        lines += [
            "Closed form: the expectation of the structure-blind random DAG baseline; "
            "overall weighted by instances per level. Measured: the `random` agent.",
            "",
        ]
        lines.append(Table.of(FLOOR_HEADERS, floor_body(table, ci=True)))
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
    lines += ["", *_md_shortcuts(table, tests, sortability)]
    lines += order_audit_parts(order_audit)
    lines.append(Image(f"f1_per_level_{table.ladder}.png", "directed F1 per level"))
    lines.append(Image(f"precision_recall_{table.ladder}.png", "precision vs recall"))
    return lines


def _md_skeleton(table: LadderSummary) -> list[Part]:
    """The observational rows by skeleton F1, when the correlation-only probe ran."""
    if not any(row.agent.startswith(CORRELATION_PROBE) for row in table.rows):
        return []
    lines: list[Part] = ["### Observational rows by skeleton F1", ""]
    lines += [
        f"`{CORRELATION_PROBE}` sees only the standard deviations and correlations of the "
        "observational sample and is told to orient only what the data clearly support, so "
        "its directed F1 is near 0 by design: compare it with the other observational rows "
        "on skeleton F1 (adjacencies, orientation ignored). Values in %; brackets: 95% CI.",
        "",
    ]
    headers = ["agent", *(f"Skel F1 {level}" for level in table.levels), "Skel F1", "Dir F1"]
    return [*lines, Table.of(headers, skeleton_body(table, ci=True))]


def _md_shortcuts(
    table: LadderSummary, tests: Sequence[PairedTest], sortability: Sequence[SortabilityRow]
) -> list[Part]:
    """The benchmark-design checks: sortability, sort baselines against control, density."""
    overall = table.random_floor[-1] if table.random_floor else None
    sort_lines = _sort_baseline_lines(table, tests)
    if not sortability and not sort_lines and overall is None:
        return []
    lines: list[Part] = ["### Shortcut checks", ""]
    if sortability:
        lines += [
            "**Sortability** of the instances' observational samples: the share of "
            "path-joined pairs i ⇝ j whose marginal variance (var-sortability, Reisach et al. "
            "2021) or R² on all other variables (R²-sortability, Reisach et al. 2023) rises "
            "from i to j; 0.5 is chance, near 1 the score sorts the causal order. Values in %; "
            "brackets: 95% CI over instances.",
            "",
        ]
        headers = ("level", "var-sortability", "R²-sortability", "instances")
        body = [
            [row.level, _percent_ci(row.var), _percent_ci(row.r2), str(row.var.n)]
            for row in sortability
        ]
        lines.append(Table.of(headers, body))
    lines += sort_lines
    if overall is not None and not math.isnan(overall.closed_form):
        lines.append(
            f"- **Density leakage**: a structure-blind random DAG scores "
            f"{format_number(overall.closed_form, 'directed_f1')}% directed F1 in expectation "
            f"(closed form{'; measured above' if floor_measured(table) else ''}); results "
            "near it carry no evidence of discovery."
        )
    return [*lines, ""]


def _percent_ci(estimate: Estimate) -> str:
    if estimate.n == 0:
        return "—"
    return f"{100 * estimate.mean:.1f} [{100 * estimate.low:.1f}, {100 * estimate.high:.1f}]"


def _sort_baseline_lines(table: LadderSummary, tests: Sequence[PairedTest]) -> list[Part]:
    """One line per sort baseline: its paired test against randregress, or what to run."""
    lines: list[Part] = []
    control = next((row for row in table.rows if row.agent == "randregress"), None)
    for agent, order in SORT_BASELINES.items():
        row = next((row for row in table.rows if row.agent == agent), None)
        if row is None:
            continue
        f1 = format_number(row.metrics["directed_f1"].mean, "directed_f1")
        line = (
            f"- **{order} order**: {agent} (variables sorted by {order}, then regressed) "
            f"reaches directed F1 {f1}%"
        )
        test = None
        if control is not None:
            test = next(
                (
                    t
                    for t in tests
                    if (t.agent_a, t.agent_b) == (row.label, control.label)
                    and t.level is None
                    and t.metric == "directed_f1"
                ),
                None,
            )
        if test is None:
            line += f"; run `randregress` too to measure what the {order} order alone is worth."
        else:
            line += "; " + _order_worth(test, order)
        lines.append(line)
    return lines


def _order_worth(test: PairedTest, order: str) -> str:
    if test.mdd == math.inf:
        power = f"too few seeds for the test to detect any difference (it needs {MIN_SEEDS})"
    else:
        power = (
            f"minimum detectable difference {format_mdd(test)} points; a 5-point difference "
            f"needs {format_seeds_for_target(test)} seeds"
        )
    text = (
        f"the same regressions in a random order (randregress) reach "
        f"{format_number(test.mean_b, 'directed_f1')}%, so the {order} order is worth "
        f"{100 * test.mean_difference:+.1f} points (95% CI {format_difference_ci(test)}, "
        f"p {_p_phrase(test)}, {test.n} paired seeds; {power}): "
    )
    if test.p_value < POWER_ALPHA:
        verdict = "a shortcut" if test.mean_difference > 0 else "worse than a random order"
        return text + f"{verdict} on this ladder."
    if math.isfinite(test.mdd) and test.mdd <= TARGET_DIFFERENCE:
        return text + "no shortcut of 5 points or more on this ladder."
    return text + "not resolved at these seeds."


def _p_phrase(test: PairedTest) -> str:
    printed = format_p_value(test.p_value, exact=test.p_exact)
    return printed if printed.startswith("<") else f"= {printed}"


def paired_test_parts(tests: Sequence[PairedTest]) -> list[Part]:
    """The paired-tests section: how the tests are made, then per ladder the pooled and the
    per-level tables."""
    lines: list[Part] = ["## Paired sign-flip tests", ""]
    if not tests:
        return [*lines, "No pairs of agent rows with shared seeds.", ""]
    lines += [
        "Same-seed per-seed differences A − B. p: two-sided sign-flip permutation test of the "
        f"mean difference, exact (all 2^n sign patterns) up to n = {MAX_EXACT_N}, otherwise "
        f"from {N_SIGN_FLIPS:,} random patterns (such a p is never 0; below 1e-4 it is printed "
        "as < 1e-4). 95% CI: percentile bootstrap of the mean difference, seeds resampled "
        f"within levels. MDD: the minimum difference detected with {100 * POWER:.0f}% power "
        f"at two-sided α = {POWER_ALPHA} given the observed spread of the differences; "
        "seeds for 5 pts: the paired seeds that would detect a 5-point difference with that "
        f"power (in a table pooled over levels, seeds over all levels together); MDD ∞: fewer than {MIN_SEEDS} seeds, too few for the test to reach α at all. "
        "F1 differences in percentage points, SHD in edges.",
        "",
    ]
    for ladder in dict.fromkeys(test.ladder for test in tests):
        mine = [test for test in tests if test.ladder == ladder]
        pooled = [test for test in mine if test.level is None]
        per_level = [test for test in mine if test.level is not None]
        name = ladder or "all ladders"
        if pooled:
            lines += [f"### {name}: pooled over levels", ""]
            lines.append(Table.of(PAIRED_TEST_HEADERS, [paired_test_cells(t) for t in pooled]))
        if per_level:
            lines += [f"### {name}: per level", ""]
            headers = ("level", *PAIRED_TEST_HEADERS)
            lines.append(
                Table.of(headers, [[t.level or "", *paired_test_cells(t)] for t in per_level])
            )
    return lines


def _md_failures(summary: Summary) -> list[Part]:
    lines: list[Part] = ["## Failed jobs", ""]
    if not summary.failures:
        return [*lines, "None.", ""]
    headers = ("job", "ladder", "level", "manifest index", "agent", "error")
    body = [
        [f.job_id, f.ladder, f.level, str(f.manifest_index), f.label, f.error[:300]]
        for f in summary.failures
    ]
    return [*lines, Table.of(headers, body)]


def _commitment(row: AgentRow) -> str:
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
