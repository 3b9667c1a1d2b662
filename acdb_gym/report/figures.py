"""The report's figures: on the Agg canvas without pyplot, with a fixed layout.

Every plot of the report is a grid of axes whose margins are known in advance (tick labels,
axis labels, a title above each axes, a legend below), so its layout is given in inches
(:class:`Margins`) instead of being solved at draw time: matplotlib's constrained layout
measures every text of the figure before it draws it, which cost as much as the drawing itself
(DESIGN §10, "Plots"). matplotlib is imported only when a figure is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["Margins", "fixed_figure"]


@dataclass(frozen=True)
class Margins:
    """A figure's fixed layout, in inches.

    Attributes:
        left: from the figure's left edge to the axes (the y tick labels and the axis label).
        right: from the last axes to the right edge.
        top: from the top edge to the first line of axes (its titles).
        bottom: from the last line of axes to the bottom edge (x labels and a legend).
        between_columns: between two axes side by side.
        between_lines: between two lines of axes (x labels above, titles below).
    """

    left: float
    right: float
    top: float
    bottom: float
    between_columns: float = 0.0
    between_lines: float = 0.0


def fixed_figure(
    width: float, height: float, margins: Margins, *, columns: int = 1, lines: int = 1
) -> Figure:
    """A ``width`` x ``height`` inch figure on the Agg canvas whose subplots (a ``lines`` x
    ``columns`` grid, added with ``figure.add_subplot(lines, columns, k)``) sit at ``margins``.

    Raises:
        ValueError: the margins leave no room for the axes.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    axes_width = width - margins.left - margins.right - (columns - 1) * margins.between_columns
    axes_height = height - margins.top - margins.bottom - (lines - 1) * margins.between_lines
    if axes_width <= 0 or axes_height <= 0:
        raise ValueError(f"margins {margins} leave no room in a {width} x {height} inch figure")
    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    figure.subplots_adjust(
        left=margins.left / width,
        right=1.0 - margins.right / width,
        bottom=margins.bottom / height,
        top=1.0 - margins.top / height,
        wspace=margins.between_columns / (axes_width / columns),
        hspace=margins.between_lines / (axes_height / lines),
    )
    return figure
