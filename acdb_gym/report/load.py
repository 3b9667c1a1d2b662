"""Reading a sweep's results file for the report: the one seam between the report and the file.

:func:`read_rows` is the only function the rest of the report calls to read
``RUN_DIR/results.jsonl``. It reads through :func:`acdb_gym.results.read_results` in lenient
mode (the reader the sweep uses too, strictly, for resume), so the report skips exactly the
lines a resume would refuse, each named by file and line: the file is hostile input, parsed
within the bounds of :mod:`acdb_gym.core.untrusted` and range-checked by
:mod:`acdb_gym.row_values`, so every row the report sees is a typed
:class:`~acdb_gym.results.ResultRow` with safe names and values in their ranges.

:func:`as_rows` is the report's other entry: rows handed to the public functions
(:func:`~acdb_gym.report.summarize`, :func:`~acdb_gym.report.paired_test`, ...) as plain
mappings become typed rows there, once, under the same checks. :func:`deduplicate` is the rule
that picks one row per job id. :func:`load_results` is the public wrapper that turns the
problems into warnings and gives the rows as the file's dicts; :func:`load_rows` gives them
typed.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from acdb_gym.results import RESULTS_FILE, Location, ResultRow, read_results

__all__ = [
    "RESULTS_FILE",
    "RowLike",
    "as_rows",
    "deduplicate",
    "load_results",
    "load_rows",
    "read_rows",
]

RowLike: TypeAlias = ResultRow | Mapping[str, Any]
"""What the report's public functions accept: a typed row, or a row as the file's dict."""


def as_rows(rows: Iterable[RowLike]) -> list[ResultRow]:
    """The rows typed: a :class:`ResultRow` as it is, a mapping checked as the results file's
    reader checks a line (:meth:`ResultRow.parse`: its keys and types, then its values'
    ranges).

    Raises:
        ResultsFileError: a mapping that is not a valid row (a ``ValueError``), naming its
            position (``<rows>:N``, 1-based) and what is wrong.
    """
    typed = []
    for number, row in enumerate(rows, start=1):
        if isinstance(row, ResultRow):
            typed.append(row)
        else:
            typed.append(ResultRow.parse(row, where=Location(Path("<rows>"), number)))
    return typed


def load_results(run_dir: str | Path) -> list[dict[str, Any]]:
    """Read ``RUN_DIR/results.jsonl``: successful and failed rows, as the file's dicts.

    A line that is not a result row (a torn last line of an interrupted sweep, invalid JSON or
    UTF-8, NUL bytes, JSON that is not a row) is skipped with a warning naming the file and the
    line. When a ``job_id`` occurs more than once (a resumed sweep retried it), its last
    ``"ok"`` row is kept, or its last row if none succeeded.

    Args:
        run_dir: the sweep's run directory.

    Returns:
        The rows as dicts, in file order of the kept occurrences (:func:`load_rows` gives them
        typed).

    Raises:
        FileNotFoundError: the run directory has no ``results.jsonl``.
    """
    return [row.to_dict() for row in _warned(Path(run_dir))]


def load_rows(run_dir: str | Path) -> list[ResultRow]:
    """:func:`load_results` as typed rows (:class:`~acdb_gym.results.ResultRow`).

    Raises:
        FileNotFoundError: the run directory has no ``results.jsonl``.
    """
    return _warned(Path(run_dir))


def _warned(run_dir: Path) -> list[ResultRow]:
    rows, problems = read_rows(run_dir / RESULTS_FILE)
    for problem in problems:
        warnings.warn(problem, stacklevel=3)
    return rows


def read_rows(path: Path) -> tuple[list[ResultRow], list[str]]:
    """The kept rows of a results file and the problems met reading it.

    Args:
        path: the ``results.jsonl`` file.

    Returns:
        ``(rows, problems)``: the rows as :func:`load_results` describes them, and one readable
        line per skipped line or duplicated job id.

    Raises:
        FileNotFoundError: ``path`` is not a file.
    """
    if not path.is_file():
        raise FileNotFoundError(f"no {RESULTS_FILE} in {path.parent}")
    read = read_results(path, mode="lenient")
    kept, duplicates = deduplicate(read.rows)
    return kept, [*read.problems, *duplicates]


def deduplicate(rows: Sequence[ResultRow]) -> tuple[list[ResultRow], list[str]]:
    """Keep one row per job id: the last ``ok`` one, else the last one.

    Args:
        rows: typed rows.

    Returns:
        ``(kept, problems)``: the kept rows in their original order, and one line per job id
        with more than one successful row.
    """
    chosen: dict[str, int] = {}
    ok_counts: dict[str, int] = {}
    for index, row in enumerate(rows):
        ok_counts[row.job_id] = ok_counts.get(row.job_id, 0) + row.ok
        if row.job_id not in chosen or row.ok or not rows[chosen[row.job_id]].ok:
            chosen[row.job_id] = index
    problems = [
        f"job {job!r} has {count} successful rows; kept the last"
        for job, count in ok_counts.items()
        if count > 1
    ]
    return [rows[index] for index in sorted(chosen.values())], problems
