"""The anytime measure: directed F1 after each experiment, as a curve per agent, and its area.

Efficiency η rewards stopping at ``|I*|`` experiments whatever the graph is worth then; the
anytime curve shows what each experiment bought. Rows of agents that state hypotheses carry a
revision record (:mod:`acdb_gym.report.revision`), from which the directed F1 of the stated
graph after ``k`` experiments is known. Definitions, per episode with budget ``B`` (the
instance's, regenerated from the row like the truth):

- **The episode's curve** ``F1_k`` for ``k = 0 .. B``: the directed F1 after ``k`` experiments;
  after the episode's last experiment, its submission's (an agent that stops early keeps what it
  submitted); a hypothesis not stated takes the last stated one's value. Episodes without a
  stated graph before the first experiment are left out.
- **The anytime area** ``(F1_0 + ... + F1_B) / (B + 1)``: the mean of the curve over the whole
  budget, in ``[0, 1]``. Spending experiments only pays if they raise the graph's F1 early;
  stopping at ``|I*|`` keeps the final F1 for the remaining steps, so stopping costs nothing
  when the graph is already right and keeps a low F1 when it is not.

:func:`anytime_rows` summarizes per ladder, agent row and level: the mean curve (episodes with
a smaller budget carried at their last value), the mean area with its bootstrap CI over
episodes, and the mean η of the same episodes. :func:`plot_anytime` draws one panel per level.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from acdb_gym.core.graphs import DAG
from acdb_gym.report.document import Image, Part, Table
from acdb_gym.report.figures import Margins, fixed_figure
from acdb_gym.report.order import level_order
from acdb_gym.report.png_cache import plot_key, save_png
from acdb_gym.report.revision import revised_episodes, truth_and_budget
from acdb_gym.report.statistics import bootstrap_ci
from acdb_gym.report.tables import format_percent, format_percent_ci
from acdb_gym.report.types import Estimate, GroupKey, Row

__all__ = [
    "CSV_HEADERS",
    "AnytimeRow",
    "anytime_area",
    "anytime_curve",
    "anytime_figure",
    "anytime_parts",
    "anytime_rows",
    "plot_anytime",
    "write_anytime_csv",
]


@dataclass(frozen=True)
class AnytimeRow:
    """The anytime measure of one agent row on one level of a ladder.

    Attributes:
        ladder, level, label: where, and which agent row.
        curve: the mean directed F1 after ``k`` experiments, ``k = 0 .. max budget``.
        area: the mean anytime area with its 95% bootstrap CI over episodes.
        efficiency: the mean η of the same episodes (NaN when no row has one).
    """

    ladder: str
    level: str
    label: str
    curve: tuple[float, ...]
    area: Estimate
    efficiency: float


def anytime_curve(f1_after: Sequence[float | None], budget: int) -> tuple[float, ...] | None:
    """An episode's directed F1 after ``k = 0 .. budget`` experiments (module docstring).

    >>> anytime_curve([0.2, None, 0.6], budget=4)
    (0.2, 0.2, 0.6, 0.6, 0.6)
    >>> anytime_curve([None, 0.5], budget=1) is None
    True

    Raises:
        ValueError: a negative budget, or more experiments than the budget.
    """
    if budget < 0 or len(f1_after) > budget + 1:
        raise ValueError(
            f"need 0 <= experiments <= budget, got {len(f1_after) - 1} experiments and "
            f"budget {budget}"
        )
    if not f1_after or f1_after[0] is None:
        return None
    values: list[float] = []
    for value in f1_after:
        values.append(values[-1] if value is None else float(value))
    return tuple(values + [values[-1]] * (budget + 1 - len(values)))


def anytime_area(curve: Sequence[float]) -> float:
    """The mean of a curve over its ``B + 1`` points.

    >>> anytime_area((0.0, 0.5, 1.0, 1.0))
    0.625
    """
    return float(np.mean(curve))


Episode = tuple[tuple[float, ...], float]
"""An episode's curve and its η (NaN when the row has none)."""


def anytime_rows(
    rows: Iterable[Row],
    *,
    labels: Mapping[GroupKey, str] | None = None,
    instance: Callable[[Row], tuple[DAG, int]] = truth_and_budget,
) -> tuple[AnytimeRow, ...]:
    """The anytime measure of every (ladder, agent row, level) whose rows carry revisions.

    Args:
        rows: result rows; rows without ``status == "ok"`` or a revision record are ignored,
            and so are rows whose instance raises ``LookupError``.
        labels: agent-row labels by group (``prepare(rows).labels``); by default the agent
            and panel, as ``"pc_active (active)"``.
        instance: the true DAG and budget of a row's instance (default: regenerated).

    Returns:
        One row per (ladder, label, level), sorted by ladder, level (L0, L1, ... first) and
        label.

    Raises:
        ValueError: a revision record that cannot be read, naming the row's job id.
    """
    episodes: dict[tuple[str, str, str], list[Episode]] = {}
    revised = revised_episodes(rows, instance, lambda world: world[0], labels=labels)
    for key, row, (_, budget), revision in revised:
        try:
            curve = anytime_curve(revision.f1_after, budget)
        except ValueError as error:
            raise ValueError(f"row {row.job_id!r}: bad revision record: {error}") from None
        if curve is None:
            continue
        episodes.setdefault(key, []).append((curve, row.value("efficiency")))
    order = sorted(episodes, key=lambda key: (key[0], level_order(key[2]), key[1]))
    return tuple(_summary(key, episodes[key]) for key in order)


def _summary(key: tuple[str, str, str], episodes: Sequence[Episode]) -> AnytimeRow:
    ladder, label, level = key
    longest = max(len(curve) for curve, _ in episodes)
    padded = np.array([[*curve, *[curve[-1]] * (longest - len(curve))] for curve, _ in episodes])
    etas = [eta for _, eta in episodes if math.isfinite(eta)]
    return AnytimeRow(
        ladder=ladder,
        level=level,
        label=label,
        curve=tuple(float(v) for v in padded.mean(axis=0)),
        area=bootstrap_ci([[anytime_area(curve) for curve, _ in episodes]]),
        efficiency=float(np.mean(etas)) if etas else math.nan,
    )


# ----------------------------------------------------------------------------- output

CSV_HEADERS: Final = ("ladder", "agent", "level", "k", "directed_f1")
"""``anytime.csv``: the mean curves, one line per index (the areas are in the report)."""


def write_anytime_csv(path: Path, rows: Sequence[AnytimeRow]) -> Path:
    """Write the mean curves (long format) to ``path``."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_HEADERS)
        for row in rows:
            for k, value in enumerate(row.curve):
                writer.writerow([row.ladder, row.label, row.level, k, repr(value)])
    return path


def plot_anytime(rows: Sequence[AnytimeRow], path: str | Path) -> Path:
    """One ladder's anytime curves: a panel per level, a line per agent row.

    Args:
        rows: the ladder's rows (:func:`anytime_rows`).
        path: the PNG to write.

    Returns:
        The written path.

    Raises:
        ValueError: no rows.
    """
    if not rows:
        raise ValueError("no anytime rows to plot")
    # Drawn once per content: a report rewritten over the same rows keeps the PNG.
    return save_png(path, plot_key("anytime", tuple(rows)), lambda: anytime_figure(rows), dpi=100)


def anytime_figure(rows: Sequence[AnytimeRow]) -> Any:
    """The figure :func:`plot_anytime` saves (a matplotlib ``Figure`` on the Agg canvas)."""
    if not rows:
        raise ValueError("no anytime rows to plot")
    from matplotlib.ticker import MaxNLocator

    levels = sorted({row.level for row in rows}, key=level_order)
    labels = sorted({row.label for row in rows})
    columns = min(3, len(levels))
    lines = math.ceil(len(levels) / columns)
    legend_columns = min(4, len(labels))
    legend = 0.3 * math.ceil(len(labels) / legend_columns)  # its lines below the axes
    # One y axis per line of panels (all run 0-100): labels on the first column only.
    margins = Margins(0.6, 0.15, 0.35, 0.5 + legend, between_columns=0.2, between_lines=0.8)
    height = 3.0 * lines + 0.35 + legend
    figure = fixed_figure(4.0 * columns, height, margins, columns=columns, lines=lines)
    for index, level in enumerate(levels):
        axes = figure.add_subplot(lines, columns, index + 1)
        for number, label in enumerate(labels):
            row = next((r for r in rows if (r.level, r.label) == (level, label)), None)
            if row is not None:
                axes.step(
                    range(len(row.curve)),
                    [100 * v for v in row.curve],
                    where="post",
                    color=f"C{number % 10}",
                    label=f"{label}" if index == 0 else None,
                )
        axes.set_title(level)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # k counts experiments
        axes.set_xlabel("experiments k")
        axes.set_ylim(0, 100)
        if index % columns:
            axes.tick_params(labelleft=False)
        else:
            axes.set_ylabel("directed F1 (%)")
    figure.legend(loc="lower center", ncols=legend_columns, fontsize="small", borderaxespad=0.3)
    return figure


def anytime_parts(rows: Sequence[AnytimeRow], plot: str | None = None) -> list[Part]:
    """One ladder's anytime section as report parts (:mod:`acdb_gym.report.document`; none
    without rows).

    Args:
        rows: the ladder's rows.
        plot: the curves' PNG file name, linked under the table.
    """
    if not rows:
        return []
    lines: list[Part] = [f"### Ladder {rows[0].ladder}: anytime directed F1", ""]
    lines += [
        "Directed F1 of the stated graph after each experiment k = 0 .. B (the instance's "
        "budget), the submission's after the last experiment; the area is the mean over the "
        "B + 1 points (in %, 95% CI over episodes). Read η with the area: an agent that stops "
        "early keeps its final F1 for the budget it left.",
        "",
    ]
    body = [
        [
            row.label,
            row.level,
            str(row.area.n),
            format_percent_ci(row.area),
            format_percent(row.curve[0]),
            format_percent(row.curve[-1]),
            format_percent(row.efficiency),
        ]
        for row in rows
    ]
    headers = ["agent", "level", "episodes", "area (%)", "F1 at k = 0", "final F1", "η (%)"]
    lines.append(Table.of(headers, body))
    if plot:
        lines.append(Image(plot, "anytime directed F1"))
    return lines
