"""The report's entry point: :func:`write_report` writes every file of a run directory's report.

It reads the results file through :func:`~acdb_gym.report.load.read_rows` (typed rows, one per
job id), aggregates once and runs the paired tests (:class:`~acdb_gym.report.section.ReportContext`),
then iterates the sections (:data:`~acdb_gym.report.sections.SECTIONS`): computes each, writes
their CSVs and plots, and composes ``report.md`` and ``report.html`` from their parts.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from fnmatch import fnmatch
from pathlib import Path
from typing import Any, Final

from acdb_gym.core.untrusted import UntrustedInputError
from acdb_gym.report.aggregation import group_rows, summarize_prepared
from acdb_gym.report.audit_cache import AUDIT_CACHE_FILE
from acdb_gym.report.comparison import compare_agents
from acdb_gym.report.document import markdown_text
from acdb_gym.report.episodes import EPISODES_DIR
from acdb_gym.report.html import HTML_FILE, write_html_report
from acdb_gym.report.load import RESULTS_FILE, read_rows
from acdb_gym.report.markdown import compose
from acdb_gym.report.section import ReportContext, Section, SectionFiles
from acdb_gym.report.sections import SECTIONS
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

    Every section of :data:`~acdb_gym.report.sections.SECTIONS` that applies to the run writes
    its files: ``table2_<ladder>.csv``, ``table3_<ladder>.csv``, ``random_floor.csv``,
    ``paired_tests.csv``, ``sortability.csv``, ``order_audit.csv`` (the marginal-order audit,
    :mod:`acdb_gym.report.order_audit`; raw units: fractions in [0, 1], SHD in edges; empty
    cells are NaN); ``f1_per_level_<ladder>.png`` and ``precision_recall_<ladder>.png``;
    ``revision.csv`` when rows carry revision records (:mod:`acdb_gym.report.revision`), and
    then the anytime section with ``anytime.csv`` and ``anytime_<ladder>.png``
    (:mod:`acdb_gym.report.anytime`); ``costs.csv`` and a cost section when ``prices`` is given
    (:mod:`acdb_gym.report.cost`). ``report.md`` holds every section's parts (with the transfer
    table across SCM families when the rows span several, :mod:`acdb_gym.report.transfer`);
    ``report.html`` is the same document as one self-contained page with an episode viewer,
    and one page per episode in ``episodes/`` (:mod:`acdb_gym.report.html`,
    :mod:`acdb_gym.report.episodes`). Unreadable lines of ``results.jsonl`` are skipped with a
    warning and listed in the report.

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
    context = _context(run, compare, prices)
    results = {}
    for section in SECTIONS:
        result = section.compute(context)
        if result is not None:
            results[section.name] = result
    written = _write_files(SECTIONS, results, context)
    files = ReportFiles(
        run / "report.md",
        tuple(path for done in written for path in done.csvs),
        tuple(path for done in written for path in done.plots),
        context.summary,
        context.problems,
        run / HTML_FILE,
    )
    context = replace(context, files=files)
    parts = compose(context, SECTIONS, results)
    files.markdown.write_text(markdown_text(parts), encoding="utf-8")
    write_html_report(run, parts, context.rows, prices=context.prices)
    return files


def _context(
    run: Path, compare: Iterable[tuple[str, str]], prices: str | Path | None
) -> ReportContext:
    """The run's rows read once, grouped, summarized and tested; the price table loaded."""
    rows, problems = read_rows(run / RESULTS_FILE)
    for problem in problems:
        warnings.warn(problem, stacklevel=3)
    prepared = group_rows(rows)
    summary = summarize_prepared(prepared)
    tests = compare_agents(rows, pairs=compare, summary=summary, prepared=prepared)
    price_table = None
    if prices is not None:
        from acdb_gym.report.cost import load_prices

        price_table = load_prices(prices)
    return ReportContext(run, tuple(rows), prepared, summary, tests, tuple(problems), price_table)


def _write_files(
    sections: Sequence[Section[Any]], results: Mapping[str, Any], context: ReportContext
) -> list[SectionFiles]:
    """Every applying section's files, in the order of their ``files_order``."""
    ordered = sorted(
        (section for section in sections if section.name in results),
        key=lambda section: section.files_order,
    )
    return [section.write(results[section.name], context) for section in ordered]
