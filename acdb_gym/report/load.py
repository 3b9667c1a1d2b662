"""Reading a sweep's results file for the report: the one seam between the report and the file.

:func:`read_rows` is the only function the rest of the report calls to read
``RUN_DIR/results.jsonl``. It reads through :func:`acdb_gym.results.read_results` in lenient
mode (the reader the sweep uses too, strictly, for resume), so the report skips exactly the
lines a resume would refuse, each named by file and line: the file is hostile input, parsed
within the bounds of :mod:`acdb_gym.core.untrusted` and range-checked by
:mod:`acdb_gym.row_values`, so every row the report sees has safe names and values in their
ranges. :func:`load_results` is the public
wrapper that turns the problems into warnings. :func:`deduplicate` is the rule that picks one
row per job id, shared with rows passed to :func:`~acdb_gym.report.summarize` directly.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acdb_gym.report.types import Row
from acdb_gym.results import RESULTS_FILE, read_results

__all__ = ["RESULTS_FILE", "deduplicate", "load_results", "read_rows"]


def load_results(run_dir: str | Path) -> list[dict[str, Any]]:
    """Read ``RUN_DIR/results.jsonl``: successful and failed rows.

    A line that is not a result row (a torn last line of an interrupted sweep, invalid JSON or
    UTF-8, NUL bytes, JSON that is not a row) is skipped with a warning naming the file and the
    line. When a ``job_id`` occurs more than once (a resumed sweep retried it), its last
    ``"ok"`` row is kept, or its last row if none succeeded.

    Args:
        run_dir: the sweep's run directory.

    Returns:
        The rows as dicts, in file order of the kept occurrences.

    Raises:
        FileNotFoundError: the run directory has no ``results.jsonl``.
    """
    rows, problems = read_rows(Path(run_dir) / RESULTS_FILE)
    for problem in problems:
        warnings.warn(problem, stacklevel=2)
    return rows


def read_rows(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
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
    kept, duplicates = deduplicate(read.as_dicts())
    return kept, [*read.problems, *duplicates]


def deduplicate(rows: Sequence[Row]) -> tuple[list[dict[str, Any]], list[str]]:
    """Keep one row per job id: the last ``ok`` one, else the last one.

    Args:
        rows: rows with a ``job_id`` and a ``status``.

    Returns:
        ``(kept, problems)``: the kept rows in their original order, and one line per job id
        with more than one successful row.
    """
    chosen: dict[str, int] = {}
    ok_counts: dict[str, int] = {}
    for index, row in enumerate(rows):
        job = str(row["job_id"])
        ok = row["status"] == "ok"
        ok_counts[job] = ok_counts.get(job, 0) + ok
        if job not in chosen or ok or rows[chosen[job]]["status"] != "ok":
            chosen[job] = index
    problems = [
        f"job {job!r} has {count} successful rows; kept the last"
        for job, count in ok_counts.items()
        if count > 1
    ]
    return [dict(rows[index]) for index in sorted(chosen.values())], problems
