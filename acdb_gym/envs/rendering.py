"""Text and picture renders of an ACDB episode.

Before the episode ends a render shows only what the agent could see (budget, experiments,
the last tool result); afterwards it shows the submission against the true graph. matplotlib
and networkx are imported lazily, only for pictures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.scoring import ScoreReport
from acdb_gym.envs import actions

__all__ = [
    "EDGE_COLOURS",
    "RenderState",
    "classify_edges",
    "describe_action",
    "render_rgb",
    "render_text",
]

INTERVENED_COLOUR = "#ffd54f"

EDGE_COLOURS = {
    "correct": "#2e7d32",
    "reversed": "#ef6c00",
    "unresolved": "#1565c0",
    "extra": "#c62828",
    "missing": "#9e9e9e",
}


@dataclass(frozen=True)
class RenderState:
    """What a render may show; ``truth``, ``submission`` and ``report`` only once ended.

    ``tool_result`` is None for envs without statistics tools (the design env), and
    ``estimate`` is the design env's current graph, which its observations show too.
    """

    title: str
    n_nodes: int
    budget: int
    budget_remaining: int
    steps: int
    max_steps: int
    experiments: list[tuple[int, float]]
    last_action: str | None
    last_error: str | None
    tool_result: tuple[float, float, float] | None
    estimate: PDAG | None = None
    submission: PDAG | None = None
    truth: DAG | None = None
    report: ScoreReport | None = None


def classify_edges(truth: DAG, submission: PDAG) -> dict[str, list[tuple[int, int]]]:
    """Split the union of true and submitted edges into the SHD classes (and ``correct``).

    Directed classes are ``(i, j)`` for ``i -> j`` as drawn (submitted direction for
    ``reversed`` and ``extra``, true direction for ``missing`` and ``unresolved``).
    """
    true_adj = truth.adjacency
    sub_skel = submission.skeleton()
    classes: dict[str, list[tuple[int, int]]] = {name: [] for name in EDGE_COLOURS}
    for i, j in zip(*np.nonzero(true_adj), strict=True):
        i, j = int(i), int(j)
        if submission.directed[i, j]:
            classes["correct"].append((i, j))
        elif submission.directed[j, i]:
            classes["reversed"].append((j, i))
        elif submission.undirected[i, j]:
            classes["unresolved"].append((i, j))
        else:
            classes["missing"].append((i, j))
    extra = np.triu(sub_skel & ~(true_adj | true_adj.T))
    for i, j in zip(*np.nonzero(extra), strict=True):
        i, j = int(i), int(j)
        classes["extra"].append((j, i) if submission.directed[j, i] else (i, j))
    return classes


def describe_action(action: Any, *, n_nodes: int) -> str:
    """How a render names an action of the action space: its typed form, generated for
    statistics tools from their specs (``Correlation(i=0, j=1, regime=None)``), or, when it
    does not decode, its kind and why (``invalid submit_graph action (...)``)."""
    try:
        return repr(actions.decode(action, n_nodes=n_nodes))
    except ValueError as error:
        kind = actions.kind_names()[int(action[0])]
        return f"invalid {kind} action ({error})"


def _edges_text(graph: PDAG) -> str:
    parts = [f"X{i}->X{j}" for i, j in graph.directed_edges()]
    parts += [f"X{i}-X{j}" for i, j in graph.undirected_edges()]
    return ", ".join(parts) if parts else "(none)"


def render_text(state: RenderState) -> str:
    """The ``ansi`` render."""
    lines = [
        state.title,
        f"step {state.steps}/{state.max_steps}   "
        f"{state.budget_remaining} of {state.budget} interventions left",
    ]
    if state.experiments:
        done = ", ".join(f"do(X{t}={v:.3g})" for t, v in state.experiments)
        lines.append(f"experiments: {done}")
    else:
        lines.append("experiments: none")
    if state.last_action is not None:
        lines.append(f"last action: {state.last_action}")
    if state.last_error is not None:
        lines.append(f"error: {state.last_error}")
    if state.tool_result is not None:
        stat, p_value, valid = state.tool_result
        lines.append(f"tool result: statistic={stat:.4g} p={p_value:.4g} valid={int(valid)}")
    if state.estimate is not None:
        lines.append(f"current estimate: {_edges_text(state.estimate)}")
    if state.submission is not None and state.truth is not None and state.report is not None:
        lines.append(f"submitted: {_edges_text(state.submission)}")
        lines.append(f"true DAG:  {_edges_text(state.truth.to_pdag())}")
        report = state.report
        lines.append(
            f"directed F1 {report.directed_f1:.3f} (P {report.directed_precision:.3f}, "
            f"R {report.directed_recall:.3f})  skeleton F1 {report.skeleton_f1:.3f}  "
            f"SHD {report.shd}  efficiency {report.efficiency:.3f}"
        )
    return "\n".join(lines) + "\n"


def render_rgb(state: RenderState) -> np.ndarray:
    """The ``rgb_array`` render: an ``(H, W, 3)`` uint8 picture.

    Before the end: the variables and the experiments so far. After: the submitted graph over
    the true one, edges coloured correct / reversed / unresolved / extra / missing.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import networkx as nx

    fig, ax = plt.subplots(figsize=(8.0, 4.8), dpi=100)
    fig.subplots_adjust(left=0.02, right=0.8, top=0.85, bottom=0.02)  # room for the legend
    try:
        graph = nx.DiGraph()
        graph.add_nodes_from(range(state.n_nodes))
        pos = nx.circular_layout(graph)
        targets = {t for t, _ in state.experiments}
        node_colours = [
            INTERVENED_COLOUR if v in targets else "#e3f2fd" for v in range(state.n_nodes)
        ]
        nx.draw_networkx_nodes(
            graph, pos, ax=ax, node_color=node_colours, edgecolors="#37474f", node_size=700
        )
        nx.draw_networkx_labels(graph, pos, {v: f"X{v}" for v in range(state.n_nodes)}, ax=ax)
        if state.submission is not None and state.truth is not None:
            _draw_scored_edges(ax, pos, state.truth, state.submission)
        subtitle = (
            f"step {state.steps}/{state.max_steps}, "
            f"{state.budget_remaining} of {state.budget} interventions left"
        )
        if state.report is not None:
            subtitle += f"\ndirected F1 {state.report.directed_f1:.2f}, SHD {state.report.shd}"
        ax.set_title(f"{state.title}\n{subtitle}", fontsize=9)
        ax.set_axis_off()
        ax.margins(0.15)  # keep the node circles inside the picture
        fig.canvas.draw()
        image = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()  # type: ignore[attr-defined]
    finally:
        plt.close(fig)
    return image


def _draw_scored_edges(
    ax: object, pos: dict[int, np.ndarray], truth: DAG, submission: PDAG
) -> None:
    import networkx as nx
    from matplotlib.lines import Line2D

    graph = nx.DiGraph()
    graph.add_nodes_from(pos)
    classes = classify_edges(truth, submission)
    for name, edges in classes.items():
        # Edges the submission left undirected (unresolved, undirected extras) are plain lines;
        # arrow options only go with arrows.
        plain = [e for e in edges if name != "missing" and submission.undirected[e]]
        arrowed = [e for e in edges if e not in plain]
        for group, options in (
            (plain, {"arrows": False}),
            (arrowed, {"arrows": True, "arrowstyle": "-|>", "arrowsize": 18}),
        ):
            if group:
                nx.draw_networkx_edges(
                    graph,
                    pos,
                    edgelist=group,
                    ax=ax,
                    edge_color=EDGE_COLOURS[name],
                    style="dashed" if name == "missing" else "solid",
                    width=2.2,
                    node_size=700,
                    **options,
                )
    handles = [
        Line2D([0], [0], color=colour, lw=2.2, label=f"{name} ({len(classes[name])})")
        for name, colour in EDGE_COLOURS.items()
    ]
    handles.append(
        Line2D([0], [0], marker="o", color="none", markerfacecolor=INTERVENED_COLOUR,
               markeredgecolor="#37474f", markersize=9, label="intervened node")
    )  # fmt: skip
    ax.legend(  # type: ignore[attr-defined]
        handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False
    )
