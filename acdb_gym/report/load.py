"""Reading a sweep's results file for the report: the one seam between the report and the file.

:func:`read_rows` is the only function the rest of the package calls to read
``RUN_DIR/results.jsonl``: it returns the kept rows as dicts and the problems met as readable
strings (skipped lines, duplicate job ids), and never raises on a bad line. :func:`load_results`
is the public wrapper that turns those problems into warnings. :func:`deduplicate` is the rule
that picks one row per job id, shared with rows passed to :func:`~acdb_gym.report.summarize`
directly.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from acdb_gym.report.types import Row

__all__ = ["REQUIRED_KEYS", "RESULTS_FILE", "deduplicate", "load_results", "read_rows"]

RESULTS_FILE: Final = "results.jsonl"
REQUIRED_KEYS: Final = ("job_id", "status", "ladder", "level", "manifest_index", "agent")


def load_results(run_dir: str | Path) -> list[dict[str, Any]]:
    """Read ``RUN_DIR/results.jsonl``: successful and failed rows.

    A line that is not a JSON object (e.g. the torn last line of an interrupted sweep), or lacks
    one of the keys ``job_id, status, ladder, level, manifest_index, agent``, or has a status
    other than ``"ok"``/``"failed"``, is skipped with a warning naming its line number. When a
    ``job_id`` occurs more than once (a resumed sweep retried it), its last ``"ok"`` row is kept,
    or its last row if none succeeded.

    Args:
        run_dir: the sweep's run directory.

    Returns:
        The rows as parsed dicts, in file order of the kept occurrences.

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
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            row, problem = _parse_line(line)
            if problem:
                problems.append(f"{path.name} line {number}: {problem}; skipped")
            else:
                rows.append(row)
    kept, duplicates = deduplicate(rows)
    problems.extend(duplicates)
    return kept, problems


def _parse_line(line: str) -> tuple[dict[str, Any], str]:
    torn = "" if line.endswith("\n") else " (torn last line without a newline)"
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        return {}, f"invalid JSON{torn}: {error.msg} (column {error.colno})"
    if not isinstance(row, dict):
        return {}, f"not a JSON object but {type(row).__name__}"
    missing = [key for key in REQUIRED_KEYS if key not in row]
    if missing:
        return {}, f"missing keys {missing}"
    if row["status"] not in ("ok", "failed"):
        return {}, f"status must be 'ok' or 'failed', got {row['status']!r}"
    return row, ""


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
