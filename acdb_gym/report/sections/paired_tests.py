"""The paired sign-flip tests (:mod:`acdb_gym.report.comparison`): how they are made, then per
ladder the tests pooled over levels and level by level, each with its CI, p-value and power.
File: ``paired_tests.csv``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from acdb_gym.report.document import Part, Table
from acdb_gym.report.power import POWER, POWER_ALPHA
from acdb_gym.report.section import ReportContext, SectionFiles, Slot
from acdb_gym.report.sections.shortcuts import MIN_SEEDS
from acdb_gym.report.statistics import MAX_EXACT_N, N_SIGN_FLIPS
from acdb_gym.report.tables import PAIRED_TEST_HEADERS, paired_test_cells, write_csv
from acdb_gym.report.types import PairedTest

__all__ = ["PairedTests", "paired_test_parts", "write_tests_csv"]


class PairedTests:
    """The "Paired sign-flip tests" section."""

    name = "paired_tests"
    slot: Slot = "run"
    files_order = 20

    def compute(self, context: ReportContext) -> tuple[PairedTest, ...]:
        return context.tests

    def write(self, result: tuple[PairedTest, ...], context: ReportContext) -> SectionFiles:
        return SectionFiles(csvs=(write_tests_csv(context.run_dir / "paired_tests.csv", result),))

    def parts(
        self, result: tuple[PairedTest, ...], context: ReportContext, ladder: str | None
    ) -> list[Part]:
        return paired_test_parts(result)


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


def write_tests_csv(path: Path, tests: Sequence[PairedTest]) -> Path:
    header = ["ladder", "level", "agent_a", "agent_b", "metric", "n", "mean_a", "mean_b"]
    header += ["mean_difference", "ci_low", "ci_high", "p_value", "p_exact", "n_higher"]
    header += ["n_lower", "sd_difference", "mdd", "target", "seeds_for_target"]
    body = [
        [
            t.ladder,
            t.level or "all",
            t.agent_a,
            t.agent_b,
            t.metric,
            t.n,
            t.mean_a,
            t.mean_b,
            t.mean_difference,
            t.ci_low,
            t.ci_high,
            t.p_value,
            t.p_exact,
            t.n_higher,
            t.n_lower,
            t.sd_difference,
            t.mdd,
            t.target,
            t.seeds_for_target,
        ]
        for t in tests
    ]
    return write_csv(path, header, body)
