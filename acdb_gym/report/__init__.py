"""Paper-style report of a sweep run directory (DESIGN §10; paper §5, Tables 2 and 3).

The sweep writes ``RUN_DIR/results.jsonl``, one JSON object per finished job. This module reads
it and produces the paper's tables, the random floor, paired tests and plots:

- **Agent row**: one ``(agent, panel, tools)`` group, labelled ``"pc_greedy (active)"``; the
  tools variant joins the label (``"llm (active, stats)"``) only when the agent was run with more
  than one tools variant.
- **Per-seed unit**: the repeats of one group on one instance ``(ladder, level, manifest_index)``
  are averaged into one value per metric; seeds are the unit of every statistic below. (The
  random baseline's rows are already averages over its draws; each row is one episode.)
- **Table 2**: per ladder and agent row, the mean over all per-seed values of all levels (so
  levels are weighted by their episode counts) with a 95% percentile-bootstrap CI over seeds.
  The bootstrap resamples seeds within each level, keeping the level composition fixed as the
  design does (:func:`bootstrap_ci`).
- **Table 3**: directed F1 per level and agent row (mean and CI over that level's seeds).
- **Random floor**: per level, the measured directed F1 of the ``random`` agent next to the
  closed form ``LADDERS[ladder][level].spec.random_floor``, and overall.
- **Paired tests**: sign-flip permutation tests on the per-seed differences of two agent rows on
  the same instances (:func:`paired_test`), pooled over each ladder's levels and per level, with
  the CI of the mean difference, the minimum detectable difference at 80% power and the seeds a
  5-point difference needs.
- **Shortcut checks**: var- and R²-sortability of the instances the run holds, and each sort
  baseline against its random-order control; the marginal-order audit (sortability of six
  marginal features and the directed-F1 gain of regressing in each one's order over a random
  order, with its paired test).
- **Anytime**: for agents that state hypotheses, directed F1 after each experiment up to the
  budget, as a curve per agent row and level, and its area beside η.

The report is a list of sections (:mod:`~acdb_gym.report.sections`, one module each and one
line of :data:`~acdb_gym.report.sections.SECTIONS`), each meeting the protocol of
:mod:`~acdb_gym.report.section`: rows to its result, its CSVs and plots, and its document parts;
:mod:`~acdb_gym.report.write` (:func:`write_report`) iterates them and
:mod:`~acdb_gym.report.markdown` orders their parts. Below the sections, one module per
concern: :mod:`~acdb_gym.report.load` (reading ``results.jsonl`` into typed rows),
:mod:`~acdb_gym.report.types` (the frozen results), :mod:`~acdb_gym.report.aggregation`
(per-seed values, Tables 2 and 3, the random floor), :mod:`~acdb_gym.report.statistics`
(bootstrap CIs, the sign-flip test), :mod:`~acdb_gym.report.power` (minimum detectable
differences), :mod:`~acdb_gym.report.comparison` (paired tests of agent rows),
:mod:`~acdb_gym.report.shortcuts` (sortability of the instances),
:mod:`~acdb_gym.report.order_audit` (the marginal-order audit), :mod:`~acdb_gym.report.revision`
(how agents that state hypotheses revise them, experiment by experiment),
:mod:`~acdb_gym.report.anytime` (directed F1 after each experiment, its curve and area),
:mod:`~acdb_gym.report.order` (the one level order), :mod:`~acdb_gym.report.tables` (cells,
table bodies, terminal tables, the CSV writer), :mod:`~acdb_gym.report.document` (the parts
both renderings share) and :mod:`~acdb_gym.report.plots`. The package needs numpy and scipy
(and regenerates instances through :mod:`acdb_gym.core`); matplotlib is imported when a plot
is drawn.

Rows are the results file's typed rows (:class:`~acdb_gym.results.ResultRow`); the public
functions also take them as the file's dicts, typed once where they enter
(:func:`~acdb_gym.report.load.as_rows`):

>>> from acdb_gym.results import example_row
>>> row = example_row(agent="oracle", panel="active", directed_f1=1.0)
>>> table = summarize([row]).ladder("v0")
>>> table.rows[0].label, table.rows[0].metrics["directed_f1"].mean
('oracle (active)', 1.0)
"""

from __future__ import annotations

from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.report.aggregation import NUMERIC_FIELDS, TABLE2_METRICS, summarize
from acdb_gym.report.anytime import anytime_rows
from acdb_gym.report.comparison import compare_agents, paired_test
from acdb_gym.report.load import RESULTS_FILE, load_results, load_rows
from acdb_gym.report.order_audit import order_audit_rows
from acdb_gym.report.plots import plot_f1_per_level, plot_precision_recall
from acdb_gym.report.power import minimum_detectable_difference, seeds_to_detect
from acdb_gym.report.shortcuts import sortability_rows
from acdb_gym.report.statistics import bootstrap_ci, sign_flip_pvalue
from acdb_gym.report.tables import format_terminal
from acdb_gym.report.types import (
    AgentRow,
    Estimate,
    FailedJob,
    FloorRow,
    LadderSummary,
    MarginalOrderRow,
    PairedTest,
    ReportFiles,
    SortabilityRow,
    Summary,
)
from acdb_gym.report.write import write_report

__all__ = [
    "NUMERIC_FIELDS",
    "RESULTS_FILE",
    "SCORE_FIELDS",
    "TABLE2_METRICS",
    "AgentRow",
    "Estimate",
    "FailedJob",
    "FloorRow",
    "LadderSummary",
    "MarginalOrderRow",
    "PairedTest",
    "ReportFiles",
    "SortabilityRow",
    "Summary",
    "anytime_rows",
    "bootstrap_ci",
    "compare_agents",
    "format_terminal",
    "load_results",
    "load_rows",
    "minimum_detectable_difference",
    "order_audit_rows",
    "paired_test",
    "plot_f1_per_level",
    "plot_precision_recall",
    "seeds_to_detect",
    "sign_flip_pvalue",
    "sortability_rows",
    "summarize",
    "write_report",
]
