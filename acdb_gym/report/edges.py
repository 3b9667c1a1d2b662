"""The episode viewer's graphs: edges classified against the truth, drawn as inline SVG.

Edge classes (the conventions of :func:`acdb_gym.core.scoring.score`, so the counts equal a
row's ``shd_*`` fields): a true edge ``i -> j`` is **correct** when submitted as ``i -> j``,
**reversed** as ``j -> i``, **unresolved** as ``i - j`` and **missing** when the pair is not
adjacent in the submission; a submitted edge between a non-adjacent true pair is **extra**.
Each class has a colour and a dash pattern, so a drawing reads without colour too.

The submitted graph of a row is its ``submission`` (single-draw jobs), else its revision
record's ``final`` graph (:func:`submission_of`).
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.report.types import Row

__all__ = [
    "EDGE_CLASSES",
    "EDGE_STYLES",
    "EdgeClass",
    "EdgeClassification",
    "classify_edges",
    "graph_svg",
    "legend_svg",
    "submission_of",
]

EdgeClass = Literal["correct", "reversed", "unresolved", "missing", "extra"]
EDGE_CLASSES: Final[tuple[EdgeClass, ...]] = (
    "correct",
    "reversed",
    "unresolved",
    "missing",
    "extra",
)

EDGE_STYLES: Final[Mapping[EdgeClass, tuple[str, str]]] = {
    "correct": ("#1a7f37", ""),
    "reversed": ("#bc4c00", "9 4 2 4"),
    "unresolved": ("#0969da", "2 3"),
    "missing": ("#6e7781", "8 5"),
    "extra": ("#cf222e", "14 3 3 3 3 3"),
}
"""Each class's colour and SVG dash pattern (solid, dash-dot, dotted, dashed, dash-dot-dot):
the patterns tell the classes apart without colour."""

PLAIN_STYLE: Final = ("#24292f", "")
"""An unclassified edge (the truth drawn alone): black, solid."""

# ----------------------------------------------------------------------------- classification


@dataclass(frozen=True)
class EdgeClassification:
    """Every edge of a truth and a submission, classified.

    Attributes:
        truth: the true edges ``(i, j, class)`` for ``i -> j``; class is correct, reversed,
            unresolved or missing.
        submitted: the submitted edges ``(i, j, directed, class)`` (``i < j`` for undirected
            ones); class is correct, reversed, unresolved or extra.
    """

    truth: tuple[tuple[int, int, EdgeClass], ...]
    submitted: tuple[tuple[int, int, bool, EdgeClass], ...]

    @property
    def counts(self) -> dict[EdgeClass, int]:
        """Edges per class: the truth side's classes, and extra from the submission."""
        counts: Counter[EdgeClass] = Counter(kind for _, _, kind in self.truth)
        counts["extra"] = sum(kind == "extra" for *_, kind in self.submitted)
        return {kind: counts[kind] for kind in EDGE_CLASSES}


def classify_edges(truth: DAG, submission: PDAG) -> EdgeClassification:
    """Classify every true and every submitted edge (see the module docstring).

    Raises:
        ValueError: the graphs have different numbers of nodes.

    >>> truth = DAG.from_edges(3, [(0, 1), (1, 2)])
    >>> classify_edges(truth, PDAG.from_edges(3, directed=[(1, 0)], undirected=[])).counts
    {'correct': 0, 'reversed': 1, 'unresolved': 0, 'missing': 1, 'extra': 0}
    """
    if truth.n_nodes != submission.n_nodes:
        raise ValueError(
            f"the truth has {truth.n_nodes} nodes, the submission {submission.n_nodes}"
        )
    adjacency, directed, undirected = truth.adjacency, submission.directed, submission.undirected
    true_edges: list[tuple[int, int, EdgeClass]] = []
    for i, j in zip(*np.nonzero(adjacency), strict=True):
        kind: EdgeClass = (
            "correct"
            if directed[i, j]
            else "reversed"
            if directed[j, i]
            else "unresolved"
            if undirected[i, j]
            else "missing"
        )
        true_edges.append((int(i), int(j), kind))
    submitted: list[tuple[int, int, bool, EdgeClass]] = []
    for i, j in zip(*np.nonzero(directed), strict=True):
        kind = "correct" if adjacency[i, j] else "reversed" if adjacency[j, i] else "extra"
        submitted.append((int(i), int(j), True, kind))
    for i, j in zip(*np.nonzero(np.triu(undirected)), strict=True):
        adjacent = adjacency[i, j] or adjacency[j, i]
        submitted.append((int(i), int(j), False, "unresolved" if adjacent else "extra"))
    return EdgeClassification(tuple(true_edges), tuple(submitted))


def submission_of(row: Row) -> PDAG | None:
    """The submitted graph a row records (``submission``, else the revision record's final
    graph), or None (:meth:`~acdb_gym.results.ResultRow.submitted_graph`).

    Raises:
        ValueError: a recorded graph that does not parse.
    """
    return row.submitted_graph()


# ----------------------------------------------------------------------------- drawing


def _positions(n_nodes: int, size: float) -> list[tuple[float, float]]:
    """Nodes on a circle, node 0 at the top, clockwise."""
    radius = size / 2 - 24
    centre = size / 2
    angles = [2 * math.pi * k / max(n_nodes, 1) - math.pi / 2 for k in range(n_nodes)]
    return [(centre + radius * math.cos(a), centre + radius * math.sin(a)) for a in angles]


def _markers(prefix: str) -> str:
    shapes = []
    colours: dict[str, str] = {kind: style[0] for kind, style in EDGE_STYLES.items()}
    colours["plain"] = PLAIN_STYLE[0]
    for kind, colour in colours.items():
        shapes.append(
            f'<marker id="{prefix}-{kind}" viewBox="0 0 10 10" refX="10" refY="5" '
            f'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
        )
    return "<defs>" + "".join(shapes) + "</defs>"


def _edge_line(
    start: tuple[float, float],
    end: tuple[float, float],
    *,
    kind: EdgeClass | None,
    directed: bool,
    node_radius: float,
    prefix: str,
    title: str,
) -> str:
    (x1, y1), (x2, y2) = start, end
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    gap = node_radius + 2
    colour, dash = PLAIN_STYLE if kind is None else EDGE_STYLES[kind]
    name = kind or "plain"
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    marker = f' marker-end="url(#{prefix}-{name})"' if directed else ""
    return (
        f'<line class="edge edge-{name}" x1="{x1 + ux * gap:.1f}" y1="{y1 + uy * gap:.1f}" '
        f'x2="{x2 - ux * gap:.1f}" y2="{y2 - uy * gap:.1f}" stroke="{colour}" '
        f'stroke-width="2"{dash_attr}{marker}><title>{html.escape(title)}</title></line>'
    )


def graph_svg(
    n_nodes: int,
    edges: Sequence[tuple[int, int, bool, EdgeClass | None]],
    *,
    title: str,
    prefix: str,
    size: float = 320.0,
) -> str:
    """An inline SVG of a graph: nodes ``X0 .. X{d-1}`` on a circle, each edge ``(i, j,
    directed, class)`` drawn in its class's colour and dash pattern (an arrow on directed ones).

    Args:
        n_nodes: the number of nodes.
        edges: the edges to draw (class None: an unclassified edge, drawn solid black).
        title: the drawing's accessible title.
        prefix: a prefix for the arrow markers' ids, unique within the page.
        size: the width and height in pixels.
    """
    positions = _positions(n_nodes, size)
    node_radius = 13.0 if n_nodes <= 30 else 5.0
    parts = [
        f'<svg class="graph" role="img" width="{size:.0f}" '
        f'height="{size:.0f}" viewBox="0 0 {size:.0f} {size:.0f}">',
        f"<title>{html.escape(title)}</title>",
        _markers(prefix),
    ]
    for i, j, directed, kind in edges:
        arrow = "→" if directed else "—"
        parts.append(
            _edge_line(
                positions[i],
                positions[j],
                kind=kind,
                directed=directed,
                node_radius=node_radius,
                prefix=prefix,
                title=f"X{i} {arrow} X{j}: {kind or 'true edge'}",
            )
        )
    for index, (x, y) in enumerate(positions):
        parts.append(
            f'<circle class="node" cx="{x:.1f}" cy="{y:.1f}" r="{node_radius:.0f}" '
            'fill="#ffffff" stroke="#24292f" stroke-width="1.5"/>'
        )
        if n_nodes <= 30:
            parts.append(
                f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" font-size="11" '
                f'font-family="sans-serif">X{index}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def legend_svg(counts: Mapping[EdgeClass, int] | None = None) -> str:
    """The edge legend: a line sample of each class (colour and dash pattern) and its name,
    with its count when ``counts`` is given."""
    rows = []
    for index, kind in enumerate(EDGE_CLASSES):
        colour, dash = EDGE_STYLES[kind]
        y = 14 + 20 * index
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        count = "" if counts is None else f" ({counts[kind]})"
        rows.append(
            f'<line x1="4" y1="{y}" x2="58" y2="{y}" stroke="{colour}" stroke-width="2.5"'
            f'{dash_attr}/><text x="66" y="{y + 4}" font-size="12" font-family="sans-serif">'
            f"{kind}{count}</text>"
        )
    height = 20 * len(EDGE_CLASSES) + 6
    return (
        f'<svg class="legend" role="img" width="200" '
        f'height="{height}" viewBox="0 0 200 {height}"><title>edge legend</title>'
        + "".join(rows)
        + "</svg>"
    )
