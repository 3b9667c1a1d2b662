"""The episode viewer's pages: one static HTML page per result row, in ``RUN/episodes/``.

A page shows what an agent did on one instance: the true graph and the submitted graph side
by side (inline SVG drawn here, nodes on a circle), every edge marked by its class (below), the
experiments in order with what each changed in the agent's stated graph, the revision record,
the score, and, for rows with a transcript (``RUN/transcripts/<job_id>.jsonl``: LLM, MCP and
inspect rows), the transcript turn by turn with tokens and, given a price table, cost.

Edges are classified and drawn by :mod:`acdb_gym.report.edges`; transcripts are rendered by
:mod:`acdb_gym.report.transcripts`.

The truth is regenerated from the row's ladder, level and seed
(:func:`acdb_gym.report.revision.true_dag_of`). The submitted graph is the row's
``submission`` when it has one, else its revision record's ``final`` graph; a row of several
draws (``random``) records neither. A page is plain HTML and SVG (no script), so it reads with
JavaScript off; the report page loads it into its viewer frame.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import numpy as np

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.core.types import FloatArray
from acdb_gym.envs.hypotheses import graph_to_text
from acdb_gym.report.cost import Price
from acdb_gym.report.edges import (
    EDGE_CLASSES,
    EdgeClass,
    classify_edges,
    graph_svg,
    legend_svg,
    submission_of,
)
from acdb_gym.report.revision import episode_revision, shift_effects_of, true_dag_of
from acdb_gym.report.transcripts import cell_text, transcript_html
from acdb_gym.report.types import Row

__all__ = [
    "EPISODES_DIR",
    "episode_page",
    "episode_path",
    "row_label",
    "write_episode_pages",
]

EPISODES_DIR: Final = "episodes"
"""The folder of the episode pages, beside ``report.html``."""

# ----------------------------------------------------------------------------- the page


def episode_path(index: int) -> str:
    """The page of the ``index``-th row, relative to ``report.html``."""
    return f"{EPISODES_DIR}/e{index}.html"


def row_label(row: Row) -> str:
    """``"agent (panel)"``, the episode's agent as the viewer names it."""
    return f"{row.agent} ({row.panel})"


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _cell(value: object) -> str:
    return cell_text(value)


def _table(headers: Sequence[str], body: Sequence[Sequence[object]], css: str = "") -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    rows = "".join(
        "<tr>" + "".join(f"<td>{_esc(_cell(v))}</td>" for v in row) + "</tr>" for row in body
    )
    cls = f' class="{css}"' if css else ""
    return f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


_PAGE_CSS: Final = """
body{font-family:system-ui,sans-serif;margin:1em;color:#24292f;max-width:1100px}
table{border-collapse:collapse;margin:.5em 0;font-size:13px}
th,td{border:1px solid #d0d7de;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f6f8fa}.graphs{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
figure{margin:0}figcaption{font-weight:600;text-align:center}
pre{white-space:pre-wrap;margin:0;font-size:12px;max-width:700px}
.note{color:#57606a}
"""


def _header(index: int, row: Row) -> str:
    where = f"{row.ladder} {row.level} #{row.manifest_index}"
    fields: list[tuple[str, object]] = [
        ("agent", row_label(row)),
        ("tools", row.tools),
        ("instance", f"{where} (seed {row.seed})"),
        ("job", row.job_id),
        ("repeat", row.repeat),
        ("status", row.status),
        ("steps", row.steps),
        ("interventions used", row.interventions_used),
        ("truncated", row.truncated),
        ("draws", row.draws),
        ("tokens in / out", f"{_cell(row.tokens_in)} / {_cell(row.tokens_out)}"),
        ("wall time (s)", row.wall_time),
    ]
    if row.error:
        fields.append(("error", row.error))
    if row.agent_config:
        fields.append(("agent config", json.dumps(dict(row.agent_config), sort_keys=True)))
    body = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(_cell(v))}</td></tr>" for k, v in fields)
    title = f"Episode {index}: {row_label(row)} on {where}"
    return f'<h1>{_esc(title)}</h1><table class="facts"><tbody>{body}</tbody></table>'


def _score(row: Row) -> str:
    body = [[name, value] for name, value in row.score_columns()]
    return "<h2>Score</h2>" + _table(["metric", "value"], body, "score")


def _graphs(row: Row, truth: DAG | None, submission: PDAG | None) -> str:
    out = ["<h2>Graphs</h2>"]
    if truth is None:
        return out[0] + '<p class="note">The true graph could not be regenerated.</p>'
    if submission is None or submission.n_nodes != truth.n_nodes:
        edges: list[tuple[int, int, bool, EdgeClass | None]] = [
            (int(i), int(j), True, None) for i, j in zip(*np.nonzero(truth.adjacency), strict=True)
        ]
        svg = graph_svg(
            truth.n_nodes,
            edges,
            title="true graph",
            prefix="t",
        )
        reason = "a mean over several draws" if (row.draws or 1) > 1 else "not recorded"
        return (
            out[0]
            + f'<div class="graphs"><figure>{svg}<figcaption>true graph</figcaption></figure>'
            + f'<p class="note">The submitted graph of this row is {reason}; '
            + "the score below counts its edges.</p></div>"
        )
    classes = classify_edges(truth, submission)
    truth_svg = graph_svg(
        truth.n_nodes,
        [(i, j, True, kind) for i, j, kind in classes.truth],
        title="true graph",
        prefix="t",
    )
    sub_svg = graph_svg(truth.n_nodes, classes.submitted, title="submitted graph", prefix="s")
    counts = classes.counts
    out.append(
        f'<div class="graphs"><figure>{truth_svg}<figcaption>true graph</figcaption></figure>'
        f"<figure>{sub_svg}<figcaption>submitted graph</figcaption></figure>"
        f"<figure>{legend_svg(counts)}<figcaption>edges</figcaption></figure></div>"
    )
    out.append(
        _table(
            ["edges", *EDGE_CLASSES],
            [["count", *(counts[kind] for kind in EDGE_CLASSES)]],
            "edge-counts",
        )
    )
    out.append(f'<p class="note">Submitted: <code>{_esc(graph_to_text(submission))}</code></p>')
    return "".join(out)


def _descendants(truth: DAG, node: int) -> list[int]:
    reach = np.zeros(truth.n_nodes, dtype=bool)
    frontier = [node]
    while frontier:
        current = frontier.pop()
        for child in np.flatnonzero(truth.adjacency[current]):
            if not reach[child]:
                reach[child] = True
                frontier.append(int(child))
    return [int(v) for v in np.flatnonzero(reach)]


def _experiments(row: Row, truth: DAG | None) -> str:
    record = row.revision_record()
    out = ["<h2>Experiments</h2>"]
    if record is None:
        used = row.interventions_used
        return out[0] + (
            f'<p class="note">This row records no experiment sequence ({_esc(_cell(used))} '
            "interventions used); a transcript below, when there is one, shows each "
            "experiment's result as the agent saw it.</p>"
        )
    revision = None
    if truth is not None and truth.n_nodes == record.n_nodes:
        revision = episode_revision(record, truth)
    effects = _effects(row) if truth is not None and truth.n_nodes == record.n_nodes else None
    body = []
    for k, target in enumerate(record.targets):
        change = revision.changes[k] if revision else None
        f1 = revision.f1_after[k + 1] if revision else None
        children = (
            [] if truth is None else [int(v) for v in np.flatnonzero(truth.adjacency[target])]
        )
        shifted = [] if truth is None else _descendants(truth, target)
        stated = record.after(k + 1)
        body.append(
            [
                k + 1,
                f"do(X{target})",
                _shifts(shifted, None if effects is None else effects[target]),
                ", ".join(f"X{v}" for v in children) or "none",
                "—" if change is None else change.toward,
                "—" if change is None else change.away,
                "—" if change is None else change.sideways,
                "—" if f1 is None else f"{100 * f1:.1f}",
                "—" if stated is None else graph_to_text(stated),
            ]
        )
    headers = [
        "k",
        "experiment",
        "true shifts (descendants, mean shift in sd)",
        "direct effects (children)",
        "toward",
        "away",
        "sideways",
        "Dir F1 after (%)",
        "stated graph after",
    ]
    before = record.after(0)
    out.append(
        '<p class="note">The shift each experiment produces in the instance: the target\'s '
        "descendants (what a shift test should flag) and children (direct effects); for a "
        "linear SCM each descendant with the shift of its mean, in its standard deviations, "
        "when the target is moved by one of its own (the evidence an experiment can give: "
        "a shift of 0.05 is hard to see in a small sample, one of 1 is not); then what "
        "it changed in the agent's stated graph: pairs flipped toward the truth, away from it, "
        "or sideways. Before the first experiment: "
        f"<code>{_esc('—' if before is None else graph_to_text(before))}</code>"
        + (
            f" (Dir F1 {100 * revision.f1_after[0]:.1f}%)."
            if revision and revision.f1_after[0] is not None
            else "."
        )
        + "</p>"
    )
    out.append(_table(headers, body, "experiments"))
    return "".join(out)


def _effects(row: Row) -> FloatArray | None:
    try:
        return shift_effects_of(row)
    except (LookupError, ValueError, KeyError, TypeError):
        return None


def _shifts(descendants: Sequence[int], effects: FloatArray | None) -> str:
    """The descendants, largest shift first with its size when the effects are known."""
    if not descendants:
        return "none"
    if effects is None:
        return ", ".join(f"X{v}" for v in descendants)
    ordered = sorted(descendants, key=lambda v: -abs(float(effects[v])))
    return ", ".join(f"X{v} ({float(effects[v]):+.2f})".replace("-", "−") for v in ordered)


def _truth(row: Row) -> DAG | None:
    try:
        return true_dag_of(row)
    except (LookupError, ValueError, KeyError, TypeError):
        return None


def episode_page(
    index: int,
    row: Row,
    run_dir: Path,
    *,
    total: int | None = None,
    prices: Mapping[str, Price] | None = None,
) -> str:
    """The HTML page of the ``index``-th row of a run.

    Args:
        index: the row's position among the run's rows (names the page).
        total: the number of rows (no "next" link on the last page); None: unknown.
        row: the result row.
        run_dir: the run directory (for the transcript).
        prices: a price table for the transcript's cost column, or None.
    """
    truth = _truth(row)
    try:
        submission = submission_of(row)
    except (ValueError, KeyError, TypeError):
        submission = None
    body = [
        '<p><a href="../report.html">report</a>'
        + (f' · <a href="e{index - 1}.html">previous</a>' if index > 0 else "")
        + (f' · <a href="e{index + 1}.html">next</a>' if total is None or index + 1 < total else "")
        + "</p>",
        _header(index, row),
        _graphs(row, truth, submission),
        _score(row),
        _experiments(row, truth),
        transcript_html(row, run_dir, prices),
    ]
    title = f"Episode {index}: {row_label(row)}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{_esc(title)}</title><style>{_PAGE_CSS}</style></head><body>"
        + "".join(body)
        + "</body></html>\n"
    )


def episode_order(rows: Sequence[Row]) -> list[Row]:
    """The rows in the viewer's order, whatever order the sweep finished them in: by ladder,
    level (in the ladder's order), manifest index, agent row and repeat."""

    def key(row: Row) -> tuple[str, int, str, int, str, int, str]:
        levels = list(ALL_LADDERS.get(row.ladder, {}))
        position = levels.index(row.level) if row.level in levels else len(levels)
        return (
            row.ladder,
            position,
            row.level,
            row.manifest_index,
            row_label(row),
            row.repeat,
            row.job_id,
        )

    return sorted(rows, key=key)


def write_episode_pages(
    run_dir: Path, rows: Sequence[Row], *, prices: Mapping[str, Price] | None = None
) -> list[Path]:
    """Write one page per row into ``run_dir/episodes/`` (old pages removed first).

    Returns:
        The written pages, in row order.
    """
    folder = run_dir / EPISODES_DIR
    folder.mkdir(exist_ok=True)
    for old in folder.glob("e*.html"):
        old.unlink()
    paths = []
    for index, row in enumerate(rows):
        path = run_dir / episode_path(index)
        page = episode_page(index, row, run_dir, total=len(rows), prices=prices)
        path.write_text(page, encoding="utf-8")
        paths.append(path)
    return paths
