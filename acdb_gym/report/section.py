"""What a report section is: the :class:`Section` protocol and the :class:`ReportContext` every
section reads.

A section is one module of :mod:`acdb_gym.report.sections` and one line of its table
(:data:`~acdb_gym.report.sections.SECTIONS`). It owns its whole path from the rows to the
report: :meth:`Section.compute` (the run's rows to its result, or None when the run holds
nothing for it), :meth:`Section.write` (its CSVs and plots beside ``report.md``) and
:meth:`Section.parts` (its prose, tables and images as :data:`~acdb_gym.report.document.Part`
values, which ``report.md`` and ``report.html`` both render). :func:`~acdb_gym.report.write_report`
computes every section, writes their files, then composes the document
(:mod:`acdb_gym.report.markdown`).

Where a section stands: its :attr:`Section.slot` says whether its parts go inside each ladder's
block (``"ladder"``: :meth:`Section.parts` is called once per ladder) or after the ladder blocks
(``"run"``); within a slot, the table's order is the document's. :attr:`Section.files_order`
orders the files it writes in the report's file list (smaller first).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, TypeVar

from acdb_gym.report.aggregation import Prepared
from acdb_gym.report.cost import Price
from acdb_gym.report.document import Part
from acdb_gym.report.types import PairedTest, ReportFiles, Summary
from acdb_gym.results import ResultRow

__all__ = ["ReportContext", "Section", "SectionFiles", "Slot"]

Slot = Literal["ladder", "run"]
"""Where a section's parts go: inside each ladder's block, or after the ladder blocks."""

ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class ReportContext:
    """What every section may read: the run's rows and what several sections share.

    Attributes:
        run_dir: the run directory (the report is written into it).
        rows: the kept rows (one per job id), in file order.
        prepared: the rows grouped and averaged per seed
            (:func:`~acdb_gym.report.aggregation.prepare`).
        summary: Tables 2 and 3 and the random floor of every ladder.
        tests: the paired tests (:func:`~acdb_gym.report.comparison.compare_agents`).
        problems: the lines skipped reading the results file and the duplicated job ids.
        prices: the price table, when one was given.
        files: every file the report wrote (set once the sections' files are written, for
            the parts that list or link them).
    """

    run_dir: Path
    rows: tuple[ResultRow, ...]
    prepared: Prepared
    summary: Summary
    tests: tuple[PairedTest, ...]
    problems: tuple[str, ...] = ()
    prices: Mapping[str, Price] | None = None
    files: ReportFiles | None = None


@dataclass(frozen=True)
class SectionFiles:
    """The files a section wrote, in the order it wrote them."""

    csvs: tuple[Path, ...] = ()
    plots: tuple[Path, ...] = ()


class Section(Protocol[ResultT]):
    """One section of the report (module docstring).

    Attributes:
        name: a short name, unique in the table (``"anytime"``).
        slot: ``"ladder"`` (parts per ladder) or ``"run"`` (parts once, after the ladders).
        files_order: where its files stand in the report's file list (smaller first).
    """

    name: str
    slot: Slot
    files_order: int

    def compute(self, context: ReportContext) -> ResultT | None:
        """The section's result, or None when the run holds nothing for it (no parts, no
        files)."""
        ...

    def write(self, result: ResultT, context: ReportContext) -> SectionFiles:
        """Write the section's CSVs and plots into ``context.run_dir``."""
        ...

    def parts(self, result: ResultT, context: ReportContext, ladder: str | None) -> list[Part]:
        """The section's document parts; ``ladder`` names the ladder's block for a
        ``"ladder"`` section and is None for a ``"run"`` section."""
        ...
