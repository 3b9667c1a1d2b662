"""The report's plots: directed F1 per level and directed precision against recall.

matplotlib is imported only inside the functions that draw, so importing :mod:`acdb_gym.report`
costs no matplotlib import (and needs no display). Figures are drawn on the Agg canvas without
pyplot, in a fixed layout (:mod:`acdb_gym.report.figures`). Both plots go through :func:`_plot`, which owns the steps they share: the agent rows
with scored episodes, one figure with one axes, and saving.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from acdb_gym.report.figures import Margins, fixed_figure
from acdb_gym.report.png_cache import plot_key, save_png
from acdb_gym.report.types import AgentRow, Estimate, LadderSummary

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["f1_figure", "plot_f1_per_level", "plot_precision_recall", "precision_recall_figure"]

Size = Callable[[LadderSummary, int], tuple[float, float, Margins]]
"""The figure's width and height in inches and its fixed layout (:mod:`acdb_gym.report.figures`)
for a ladder and its number of plotted rows."""
Draw = Callable[["Figure", "Axes", LadderSummary, Sequence[AgentRow]], None]
"""Draws a ladder's plotted rows on the axes (and figure-level parts such as a legend)."""


def plot_f1_per_level(table: LadderSummary, path: str | Path) -> Path:
    """Grouped bars of directed F1 per level and agent row with CI error bars.

    The closed-form random floor of each level is a dashed line across its group of bars.

    Args:
        table: one ladder's summary; its levels are the groups of bars, one bar per agent row
            with scored episodes.
        path: the PNG to write.

    Returns:
        The written path.
    """
    return _plot(table, path, size=_f1_size, draw=_draw_f1_bars)


def plot_precision_recall(table: LadderSummary, path: str | Path) -> Path:
    """Directed precision against recall per agent row, with the diagonal ``P = R``.

    Points above the diagonal under-commit (orient fewer edges than the truth has), points below
    over-commit. Error bars are the 95% CIs.

    Args:
        table: one ladder's summary; each agent row with scored episodes is one labelled point.
        path: the PNG to write.

    Returns:
        The written path.
    """
    return _plot(table, path, size=_precision_recall_size, draw=_draw_precision_recall)


def _plot(table: LadderSummary, path: str | Path, *, size: Size, draw: Draw) -> Path:
    """Draw the agent rows with scored episodes on a new figure and save it as a PNG, unless
    the PNG there already shows this table (:func:`~acdb_gym.report.png_cache.save_png`)."""
    key = plot_key(f"{draw.__name__}:{size.__name__}", table)
    return save_png(path, key, lambda: _figure(table, size=size, draw=draw, drawn=False), dpi=110)


def _figure(table: LadderSummary, *, size: Size, draw: Draw, drawn: bool = True) -> Figure:
    """The figure :func:`_plot` saves; with ``drawn``, its layout drawn, so its artists have
    their places (saving draws it anyway)."""
    rows = [row for row in table.rows if row.n_seeds > 0]
    width, height, margins = size(table, len(rows))
    figure = fixed_figure(width, height, margins)
    axes = figure.add_subplot()
    draw(figure, axes, table, rows)
    if drawn:
        figure.canvas.draw()
    return figure


def f1_figure(table: LadderSummary) -> Figure:
    """The figure :func:`plot_f1_per_level` saves."""
    return _figure(table, size=_f1_size, draw=_draw_f1_bars)


def precision_recall_figure(table: LadderSummary) -> Figure:
    """The figure :func:`plot_precision_recall` saves."""
    return _figure(table, size=_precision_recall_size, draw=_draw_precision_recall)


LEGEND_COLUMNS = 3
"""Columns of the bar chart's legend, which sits below the axes (beside them it met the title)."""


def _f1_size(table: LadderSummary, n_rows: int) -> tuple[float, float, Margins]:
    # Wide enough for every level's group of bars; taller by the legend's lines below the axes.
    legend_lines = math.ceil((n_rows + 1) / LEGEND_COLUMNS)
    width = max(7.0, 1.5 + len(table.levels) * (0.9 + 0.06 * n_rows))
    margins = Margins(left=0.65, right=0.2, top=0.4, bottom=0.45 + 0.2 * legend_lines)
    return width, 4.2 + 0.25 * legend_lines, margins


def _draw_f1_bars(
    figure: Figure, axes: Axes, table: LadderSummary, rows: Sequence[AgentRow]
) -> None:
    levels = list(table.levels)
    centres = np.arange(len(levels), dtype=np.float64)
    width = 0.8 / max(len(rows), 1)
    colours = _colours(len(rows))
    for index, row in enumerate(rows):
        estimates = [row.per_level[level] for level in levels]
        heights = [100.0 * e.mean if e.n else 0.0 for e in estimates]
        axes.bar(
            centres - 0.4 + width * (index + 0.5),
            heights,
            width,
            yerr=_error_bars(estimates),
            capsize=2,
            color=colours[index],
            label=row.label,
        )
    _draw_floors(axes, table, centres)
    axes.set_xticks(centres, levels)
    axes.set_ylim(0, 105)
    axes.set_ylabel("directed F1 (%)")
    axes.set_title(f"Directed F1 per level — ladder {table.ladder} (95% CI over seeds)")
    axes.grid(axis="y", alpha=0.3)
    figure.legend(loc="lower center", ncols=LEGEND_COLUMNS, fontsize="small", borderaxespad=0.3)


def _draw_floors(axes: Axes, table: LadderSummary, centres: np.ndarray) -> None:
    """The closed-form random floor of each level as a dashed segment over its bars."""
    floors = {floor.level: floor.closed_form for floor in table.random_floor}
    label: str | None = "random floor (closed form)"
    for centre, level in zip(centres, table.levels, strict=True):
        floor = floors.get(level, math.nan)
        if math.isfinite(floor):
            axes.hlines(
                100.0 * floor,
                centre - 0.45,
                centre + 0.45,
                colors="black",
                linestyles="--",
                linewidth=1.2,
                label=label or "_nolegend_",
            )
            label = None


def _precision_recall_size(table: LadderSummary, n_rows: int) -> tuple[float, float, Margins]:
    return 6.5, 6.0, Margins(left=0.7, right=0.25, top=0.4, bottom=0.6)


def _draw_precision_recall(
    figure: Figure, axes: Axes, table: LadderSummary, rows: Sequence[AgentRow]
) -> None:
    axes.plot([0, 100], [0, 100], linestyle="--", color="grey", linewidth=1)
    axes.text(60, 56, "P = R", fontsize="small", color="grey", rotation=45)
    for colour, row in zip(_colours(len(rows)), rows, strict=True):
        precision, recall = row.metrics["directed_precision"], row.metrics["directed_recall"]
        axes.errorbar(
            100.0 * recall.mean,
            100.0 * precision.mean,
            xerr=_error_bars([recall]),
            yerr=_error_bars([precision]),
            fmt="o",
            color=colour,
            capsize=2,
        )
    points = [
        (
            100.0 * row.metrics["directed_recall"].mean,
            100.0 * row.metrics["directed_precision"].mean,
        )
        for row in rows
    ]
    for row, (x, y), offset in zip(rows, points, _label_offsets(points), strict=True):
        _annotate(axes, row.label, x, y, offset)
    axes.text(3, 95, "under-commits (P > R)", fontsize="small", color="grey", va="top")
    axes.text(97, 3, "over-commits (R > P)", fontsize="small", color="grey", ha="right")
    axes.set_xlim(0, 100)
    axes.set_ylim(0, 100)
    axes.set_aspect("equal")
    axes.set_xlabel("directed recall (%)")
    axes.set_ylabel("directed precision (%)")
    axes.set_title(f"Directed precision vs recall — ladder {table.ladder}")
    axes.grid(alpha=0.3)


def _error_bars(estimates: Sequence[Estimate]) -> np.ndarray:
    means = np.array([e.mean for e in estimates])
    spans = np.array([[e.mean - e.low for e in estimates], [e.high - e.mean for e in estimates]])
    return np.where(np.isfinite(spans) & np.isfinite(means), 100.0 * spans, 0.0)


LABEL_CLEARANCE = 4.0
"""Points closer than this (in percentage points on both axes) get stacked labels."""
LABEL_STEP = 11.0
"""Vertical step between stacked labels, in typographic points."""


def _label_offsets(points: Sequence[tuple[float, float]]) -> list[float]:
    """Each point's label's vertical offset in points: 4 above it (below it near the top
    edge, where the title is), and another :data:`LABEL_STEP` away for each earlier label near
    the same place, so labels of coinciding points (empty submissions all sit at P = R = 0)
    are stacked, not overprinted."""
    offsets: list[float] = []
    for index, (x, y) in enumerate(points):
        near = sum(
            1
            for (u, v) in points[:index]
            if abs(u - x) < LABEL_CLEARANCE and abs(v - y) < LABEL_CLEARANCE
        )
        top = y > 90.0
        first = -LABEL_STEP if top else 4.0
        offsets.append(first + (-LABEL_STEP * near if top or y >= 50 else LABEL_STEP * near))
    return offsets


def _annotate(axes: Axes, label: str, x: float, y: float, offset: float = 4.0) -> None:
    """A point's label beside it, on the side away from the nearer vertical edge."""
    if math.isfinite(x) and math.isfinite(y):
        right = x > 70.0
        axes.annotate(
            label,
            (x, y),
            xytext=(-5 if right else 5, offset),
            textcoords="offset points",
            fontsize="small",
            ha="right" if right else "left",
        )


def _colours(count: int) -> list[Any]:
    from matplotlib import colormaps

    palette = colormaps["tab10" if count <= 10 else "tab20"]
    return [palette(index % palette.N) for index in range(count)]
