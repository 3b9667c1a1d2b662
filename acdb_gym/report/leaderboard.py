"""``acdb leaderboard RUN...``: several runs of one ladder merged into one page and one CSV.

The runs' rows are pooled and aggregated like one run's (:mod:`acdb_gym.report.aggregation`):
per ladder, every agent row × level with its 95% bootstrap CI over seeds, the averages across
levels (Table 2), and the paired sign-flip tests (:func:`acdb_gym.report.compare_agents`), which
pair two agent rows only on the seeds both played, whichever runs they came from.

Merging rules, so that pooled rows mean one thing:

- every run must cover the same ladders, and an instance (ladder, level, manifest index) must
  have the same seed in every run that played it (else the runs used different manifests);
- an agent row (agent, panel, tools) is taken from the first run, in the order given, that has
  it; the same agent row in a later run is left out and listed on the page, so no episode is
  counted twice.

Files written into the output folder: ``leaderboard.html`` (self-contained, sortable tables,
:func:`acdb_gym.report.html.document_page`), ``leaderboard.md`` (the same document) and
``leaderboard.csv`` (one line per ladder × agent row × level and ``overall``: the directed-F1
estimate and its CI, raw fractions).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from acdb_gym.report.aggregation import group_of, group_rows, summarize_prepared
from acdb_gym.report.comparison import compare_agents
from acdb_gym.report.document import Part, Table, markdown_text
from acdb_gym.report.html import HTML_FILE, document_page
from acdb_gym.report.load import RESULTS_FILE, read_rows
from acdb_gym.report.markdown import paired_test_parts
from acdb_gym.report.statistics import N_BOOTSTRAP
from acdb_gym.report.tables import TABLE2_HEADERS, table2_body, table3_body, write_csv
from acdb_gym.report.types import GroupKey, Summary
from acdb_gym.results import ResultRow

__all__ = [
    "LEADERBOARD_CSV_HEADERS",
    "Leaderboard",
    "LeaderboardFiles",
    "leaderboard_parts",
    "merge_runs",
    "write_leaderboard",
]

LEADERBOARD_CSV_HEADERS: Final = (
    "ladder",
    "label",
    "agent",
    "panel",
    "tools",
    "run",
    "level",
    "n_seeds",
    "directed_f1_mean",
    "directed_f1_low",
    "directed_f1_high",
)


@dataclass(frozen=True)
class Leaderboard:
    """Runs merged for a leaderboard.

    Attributes:
        runs: the run directories, in the order given.
        rows: the pooled rows (each agent row from one run only).
        source: each agent row's label -> the name of the run it was taken from.
        left_out: one line per agent row of a later run that an earlier run already had.
    """

    runs: tuple[Path, ...]
    rows: tuple[ResultRow, ...]
    source: dict[str, str]
    left_out: tuple[str, ...]


@dataclass(frozen=True)
class LeaderboardFiles:
    """What :func:`write_leaderboard` wrote, and the summary it shows."""

    html: Path
    markdown: Path
    csv: Path
    summary: Summary


def _run_name(run: Path) -> str:
    return run.resolve().name


def merge_runs(run_dirs: Sequence[str | Path]) -> Leaderboard:
    """Pool the rows of several runs (see the module docstring for the rules).

    Raises:
        ValueError: no run; a run given twice; runs with different ladders; an instance with
            different seeds in two runs; a run without result rows.
        FileNotFoundError: a run without ``results.jsonl``.
    """
    runs = tuple(Path(run) for run in run_dirs)
    if not runs:
        raise ValueError("a leaderboard needs at least one run directory")
    names = [_run_name(run) for run in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"run directories given twice or with the same name: {names}")
    pooled: list[ResultRow] = []
    source: dict[GroupKey, str] = {}
    left_out: list[str] = []
    ladders: dict[str, set[str]] = {}
    seeds: dict[tuple[str, str, int], tuple[int, str]] = {}
    for run, name in zip(runs, names, strict=True):
        path = run / RESULTS_FILE
        if not path.is_file():
            raise FileNotFoundError(f"no {RESULTS_FILE} in {run}")
        rows, problems = read_rows(path)
        for problem in problems:
            warnings.warn(f"{name}: {problem}", stacklevel=2)
        if not rows:
            raise ValueError(f"{path} holds no result rows")
        ladders[name] = {row.ladder for row in rows}
        mine: set[GroupKey] = set()
        for row in rows:
            key, seed = row.instance_key, row.seed
            known = seeds.setdefault(key, (seed, name))
            if known[0] != seed:
                raise ValueError(
                    f"instance {key} has seed {known[0]} in run {known[1]!r} but {seed} in "
                    f"{name!r}: the runs used different manifests"
                )
            group = group_of(row)
            if group in source and group not in mine:
                continue
            mine.add(group)
            source.setdefault(group, name)
            pooled.append(row)
        left_out += [
            f"{'/'.join(group)} of {name} (taken from {source[group]})"
            for group in sorted({group_of(row) for row in rows} - mine)
        ]
    first = names[0]
    for name in names[1:]:
        if ladders[name] != ladders[first]:
            raise ValueError(
                f"runs cover different ladders: {first}: {sorted(ladders[first])}, "
                f"{name}: {sorted(ladders[name])}"
            )
    labels = group_rows(pooled).labels
    return Leaderboard(
        runs=runs,
        rows=tuple(pooled),
        source={labels[group]: name for group, name in source.items() if group in labels},
        left_out=tuple(left_out),
    )


def leaderboard_parts(board: Leaderboard, summary: Summary, out_dir: Path) -> list[Part]:
    """The leaderboard's document: the runs, then per ladder agents × levels and the averages,
    then the paired tests.

    Args:
        board: the merged runs.
        summary: ``summarize(board.rows)``.
        out_dir: where the page is written (the runs' reports are linked relative to it).
    """
    tests = compare_agents(board.rows, summary=summary, prepared=group_rows(board.rows))
    parts: list[Part] = ["# ACDB leaderboard", "", "## Runs", ""]
    for run in board.runs:
        name = _run_name(run)
        link = Path(os.path.relpath(run.resolve() / HTML_FILE, out_dir.resolve())).as_posix()
        rows = [label for label, source in board.source.items() if source == name]
        parts.append(
            f"- [{name}]({link}): {', '.join(rows) or 'no agent row of its own'}"
            if (run / HTML_FILE).is_file()
            else f"- `{name}`: {', '.join(rows) or 'no agent row of its own'}"
        )
    if board.left_out:
        parts += ["", "Agent rows left out because an earlier run already has them:", ""]
        parts += [f"- {line}" for line in board.left_out]
    parts += [
        "",
        "Unit of analysis: the seed (repeats averaged first); CIs are 95% percentile-bootstrap "
        f"intervals over seeds ({N_BOOTSTRAP} resamples, within levels). Values in %; SHD is a "
        "mean edge count.",
        "",
    ]
    for table in summary.ladders:
        parts += [f"## Ladder {table.ladder}: directed F1 per level", ""]
        body = [
            [row[0], board.source.get(row[0], "?"), *row[1:]] for row in table3_body(table, ci=True)
        ]
        parts.append(Table.of(["agent", "run", *table.levels, "overall"], body))
        parts += [f"## Ladder {table.ladder}: average across levels", ""]
        parts.append(Table.of(TABLE2_HEADERS, table2_body(table, ci=True)))
    parts += paired_test_parts(tests)
    return parts


def write_leaderboard(run_dirs: Sequence[str | Path], out_dir: str | Path) -> LeaderboardFiles:
    """Merge runs and write ``leaderboard.html``, ``leaderboard.md`` and ``leaderboard.csv``
    into ``out_dir`` (created if needed).

    Raises:
        ValueError, FileNotFoundError: as :func:`merge_runs`.
    """
    out = Path(out_dir)
    board = merge_runs(run_dirs)
    summary = summarize_prepared(group_rows(board.rows))
    out.mkdir(parents=True, exist_ok=True)
    parts = leaderboard_parts(board, summary, out)
    markdown = out / "leaderboard.md"
    markdown.write_text(markdown_text(parts), encoding="utf-8")
    page = out / "leaderboard.html"
    page.write_text(document_page("ACDB leaderboard", parts, out), encoding="utf-8")
    body = [
        [
            table.ladder,
            row.label,
            row.agent,
            row.panel,
            row.tools,
            board.source.get(row.label, ""),
            level,
            estimate.n,
            estimate.mean,
            estimate.low,
            estimate.high,
        ]
        for table in summary.ladders
        for row in table.rows
        for level, estimate in [*row.per_level.items(), ("overall", row.metrics["directed_f1"])]
    ]
    csv = write_csv(out / "leaderboard.csv", LEADERBOARD_CSV_HEADERS, body)
    return LeaderboardFiles(page, markdown, csv, summary)
