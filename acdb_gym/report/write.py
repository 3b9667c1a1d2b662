"""The report's entry point: :func:`write_report` writes every file of a run directory's report.

It reads the results file through :func:`~acdb_gym.report.load.read_rows`, aggregates once,
runs the paired tests, and writes the CSVs, the plots and ``report.md`` next to
``results.jsonl``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from fnmatch import fnmatch
from pathlib import Path
from typing import Final

from acdb_gym.core.untrusted import UntrustedInputError
from acdb_gym.report.aggregation import prepare, summarize_prepared
from acdb_gym.report.anytime import (
    anytime_parts,
    anytime_rows,
    plot_anytime,
    write_anytime_csv,
)
from acdb_gym.report.audit_cache import AUDIT_CACHE_FILE
from acdb_gym.report.comparison import compare_agents
from acdb_gym.report.document import Part, markdown_text
from acdb_gym.report.episodes import EPISODES_DIR
from acdb_gym.report.headroom import headroom_rows, write_headroom_csv
from acdb_gym.report.html import HTML_FILE, write_html_report
from acdb_gym.report.latent import latent_parts
from acdb_gym.report.load import RESULTS_FILE, read_rows
from acdb_gym.report.markdown import report_parts
from acdb_gym.report.order_audit import order_audit_rows, write_order_audit_csv
from acdb_gym.report.pairs import pairs_parts
from acdb_gym.report.plots import plot_f1_per_level, plot_precision_recall
from acdb_gym.report.revision import summarize_revisions, write_revision_csv
from acdb_gym.report.shortcuts import sortability_rows
from acdb_gym.report.tables import (
    write_floor_csv,
    write_sortability_csv,
    write_table2_csv,
    write_table3_csv,
    write_tests_csv,
)
from acdb_gym.report.transfer import transfer_parts
from acdb_gym.report.types import ReportFiles

__all__ = ["OUTPUT_PATTERNS", "refuse_links", "write_report"]

OUTPUT_PATTERNS: Final = (
    "report.md",
    HTML_FILE,
    "*.csv",
    "*.png",
    EPISODES_DIR,
    AUDIT_CACHE_FILE,
    f"{AUDIT_CACHE_FILE}.partial",
)
"""What the report writes in a run directory (file names and patterns)."""


def refuse_links(run: Path) -> None:
    """Refuse a run directory where something the report writes is a symbolic link: the
    report would write through it, outside the directory.

    Raises:
        UntrustedInputError: naming the first such link.
    """
    if not run.is_dir():
        return
    for entry in sorted(run.iterdir()):
        if entry.is_symlink() and any(fnmatch(entry.name, p) for p in OUTPUT_PATTERNS):
            raise UntrustedInputError(
                f"{entry} is a symbolic link; the report does not write through links (remove it)"
            )


def write_report(
    run_dir: str | Path,
    *,
    compare: Iterable[tuple[str, str]] = (),
    prices: str | Path | None = None,
) -> ReportFiles:
    """Write the paper-style report of a sweep run directory into that directory.

    Files: ``report.md`` (with the transfer table across SCM families when the rows span
    several, :mod:`acdb_gym.report.transfer`); ``table2_<ladder>.csv``, ``table3_<ladder>.csv``,
    ``random_floor.csv``, ``headroom.csv`` (oracle − the best agent per level,
    :mod:`acdb_gym.report.headroom`), ``paired_tests.csv``, ``sortability.csv``, ``order_audit.csv`` (the
    marginal-order audit, :mod:`acdb_gym.report.order_audit`; raw units: fractions in
    [0, 1], SHD in edges; empty cells are NaN); ``f1_per_level_<ladder>.png`` and
    ``precision_recall_<ladder>.png``; ``revision.csv`` when rows carry revision records
    (:mod:`acdb_gym.report.revision`), and then the anytime section with ``anytime.csv`` and
    ``anytime_<ladder>.png`` (:mod:`acdb_gym.report.anytime`); ``costs.csv`` and a cost section
    when ``prices`` is given (:mod:`acdb_gym.report.cost`); ``report.html``, the same document
    as one self-contained page with an episode viewer, and one page per episode in
    ``episodes/`` (:mod:`acdb_gym.report.html`, :mod:`acdb_gym.report.episodes`).
    Unreadable lines of ``results.jsonl`` are skipped with a warning and listed in the report.

    Args:
        run_dir: the sweep's run directory, holding ``results.jsonl``.
        compare: extra ``(label_a, label_b)`` pairs to test, e.g.
            ``[("llm_raw (active)", "llm_raw (observational)")]``.
        prices: a price table (:func:`~acdb_gym.report.cost.load_prices`); adds ``costs.csv``
            and a cost section per agent.

    Returns:
        The written :class:`ReportFiles`.

    Raises:
        FileNotFoundError: no ``results.jsonl``.
        ValueError: a label in ``compare`` names no agent row, or a bad price table.
        UntrustedInputError: a file or folder the report writes is a symbolic link in the run
            directory (nothing is written).
    """
    run = Path(run_dir)
    refuse_links(run)
    rows, problems = read_rows(run / RESULTS_FILE)
    for problem in problems:
        warnings.warn(problem, stacklevel=2)
    prepared = prepare(rows)
    summary = summarize_prepared(prepared)
    tests = compare_agents(rows, pairs=compare, summary=summary, prepared=prepared)
    sortability = sortability_rows(prepared)
    csvs = [write_floor_csv(run / "random_floor.csv", summary)]
    headroom = headroom_rows(prepared, summary)
    csvs.append(write_headroom_csv(run / "headroom.csv", headroom))
    csvs.append(write_tests_csv(run / "paired_tests.csv", tests))
    csvs.append(write_sortability_csv(run / "sortability.csv", sortability))
    order_audit = order_audit_rows(prepared, cache=run / AUDIT_CACHE_FILE)
    csvs.append(write_order_audit_csv(run / "order_audit.csv", order_audit))
    revisions = summarize_revisions(prepared.ok, labels=prepared.labels)
    if revisions:
        csvs.append(write_revision_csv(run / "revision.csv", revisions))
    plots = []
    anytime = anytime_rows(prepared.ok, labels=prepared.labels)
    anytime_section: list[Part] = ["## Anytime directed F1", ""] if anytime else []
    for ladder in sorted({row.ladder for row in anytime}):
        mine = [row for row in anytime if row.ladder == ladder]
        plots.append(plot_anytime(mine, run / f"anytime_{ladder}.png"))
        anytime_section += anytime_parts(mine, plot=plots[-1].name)
    if anytime:
        csvs.append(write_anytime_csv(run / "anytime.csv", anytime))
    for table in summary.ladders:
        csvs.append(write_table2_csv(run / f"table2_{table.ladder}.csv", table))
        csvs.append(write_table3_csv(run / f"table3_{table.ladder}.csv", table))
        plots.append(plot_f1_per_level(table, run / f"f1_per_level_{table.ladder}.png"))
        plots.append(plot_precision_recall(table, run / f"precision_recall_{table.ladder}.png"))
    cost: list[Part] = []
    price_table = None
    if prices is not None:
        from acdb_gym.report.cost import (
            check_prices_cover,
            cost_parts,
            job_costs,
            load_prices,
            write_costs_csv,
        )

        price_table = load_prices(prices)
        check_prices_cover(rows, price_table)
        costs = job_costs(rows, price_table)
        csvs.append(write_costs_csv(run / "costs.csv", costs))
        cost = ["", *cost_parts(costs)]
    files = ReportFiles(
        run / "report.md", tuple(csvs), tuple(plots), summary, tuple(problems), run / HTML_FILE
    )
    parts = report_parts(
        run,
        summary,
        tests,
        problems,
        files,
        sortability,
        revisions=revisions,
        order_audit=order_audit,
        headroom=headroom,
    )
    if anytime_section:
        parts += ["", *anytime_section]
    latent = latent_parts(rows)
    if latent:
        parts += ["", *latent]
    pairs = pairs_parts(rows)
    if pairs:
        parts += ["", *pairs]
    transfer = transfer_parts(rows)
    if transfer:
        parts += ["", *transfer]
    parts += cost
    files.markdown.write_text(markdown_text(parts), encoding="utf-8")
    write_html_report(run, parts, rows, prices=price_table)
    return files
