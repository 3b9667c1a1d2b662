"""The episode viewer's pages: one static HTML page per result row, in ``RUN/episodes/``.

A page shows what an agent did on one instance: the true graph and the submitted graph side
by side (inline SVG drawn here, nodes on a circle), every edge marked by its class (below), the
experiments in order with what each changed in the agent's stated graph, the revision record,
the score, and, for rows with a transcript (``RUN/transcripts/<job_id>.jsonl``: LLM, MCP and
inspect rows), the transcript turn by turn with tokens and, given a price table, cost.

Edge classes (the conventions of :func:`acdb_gym.core.scoring.score`, so the counts equal the
row's ``shd_*`` fields): a true edge ``i -> j`` is **correct** when submitted as ``i -> j``,
**reversed** as ``j -> i``, **unresolved** as ``i - j`` and **missing** when the pair is not
adjacent in the submission; a submitted edge between a non-adjacent true pair is **extra**.

The truth is regenerated from the row's ladder, level and seed
(:func:`acdb_gym.report.revision.true_dag_of`). The submitted graph is the row's
``submission`` when it has one, else its revision record's ``final`` graph; a row of several
draws (``random``) records neither. A page is plain HTML and SVG (no script), so it reads with
JavaScript off; the report page loads it into its viewer frame.
"""

from __future__ import annotations

import html
import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np

from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.scoring import SCORE_FIELDS
from acdb_gym.envs.hypotheses import RevisionRecord, graph_from_text, graph_to_text
from acdb_gym.report.cost import Price, job_costs
from acdb_gym.report.revision import episode_revision, true_dag_of
from acdb_gym.report.types import Row

__all__ = [
    "EDGE_CLASSES",
    "EDGE_STYLES",
    "EPISODES_DIR",
    "EdgeClass",
    "EdgeClassification",
    "classify_edges",
    "episode_page",
    "episode_path",
    "graph_svg",
    "legend_svg",
    "submission_of",
    "write_episode_pages",
]

EPISODES_DIR: Final = "episodes"
"""The folder of the episode pages, beside ``report.html``."""

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

MAX_TEXT: Final = 4000
"""Longest transcript text shown whole on a page; the rest is cut with a note."""


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
    graph), or None.

    Raises:
        ValueError: a recorded graph that does not parse.
    """
    revision = row.get("revision")
    n_nodes = revision.get("n_nodes") if isinstance(revision, Mapping) else None
    text = row.get("submission")
    if isinstance(text, Mapping):
        return graph_from_text(str(text["graph"]), n_nodes=int(text["n_nodes"]))
    if isinstance(revision, Mapping) and isinstance(n_nodes, int):
        final = revision.get("final")
        if isinstance(final, str):
            return graph_from_text(final, n_nodes=n_nodes)
    return None


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
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" width="{size:.0f}" '
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
        f'<svg xmlns="http://www.w3.org/2000/svg" class="legend" role="img" width="200" '
        f'height="{height}" viewBox="0 0 200 {height}"><title>edge legend</title>'
        + "".join(rows)
        + "</svg>"
    )


# ----------------------------------------------------------------------------- the page


def episode_path(index: int) -> str:
    """The page of the ``index``-th row, relative to ``report.html``."""
    return f"{EPISODES_DIR}/e{index}.html"


def row_label(row: Row) -> str:
    """``"agent (panel)"``, the episode's agent as the viewer names it."""
    return f"{row.get('agent', '?')} ({row.get('panel', '?')})"


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "—" if not math.isfinite(value) else f"{value:.4g}"
    return "—" if value is None else str(value)


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
    where = f"{row.get('ladder')} {row.get('level')} #{row.get('manifest_index')}"
    fields = [
        ("agent", row_label(row)),
        ("tools", row.get("tools")),
        ("instance", f"{where} (seed {row.get('seed')})"),
        ("job", row.get("job_id")),
        ("repeat", row.get("repeat")),
        ("status", row.get("status")),
        ("steps", row.get("steps")),
        ("interventions used", row.get("interventions_used")),
        ("truncated", row.get("truncated")),
        ("draws", row.get("draws")),
        ("tokens in / out", f"{row.get('tokens_in')} / {row.get('tokens_out')}"),
        ("wall time (s)", row.get("wall_time")),
    ]
    if row.get("error"):
        fields.append(("error", row.get("error")))
    if row.get("agent_config"):
        fields.append(("agent config", json.dumps(row.get("agent_config"), sort_keys=True)))
    body = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(_cell(v))}</td></tr>" for k, v in fields)
    title = f"Episode {index}: {row_label(row)} on {where}"
    return f'<h1>{_esc(title)}</h1><table class="facts"><tbody>{body}</tbody></table>'


def _score(row: Row) -> str:
    body = [[name, row.get(name)] for name in SCORE_FIELDS if name in row]
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
        reason = "a mean over several draws" if (row.get("draws") or 1) > 1 else "not recorded"
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
    data = row.get("revision")
    out = ["<h2>Experiments</h2>"]
    if not isinstance(data, Mapping):
        used = row.get("interventions_used")
        return out[0] + (
            f'<p class="note">This row records no experiment sequence ({_esc(_cell(used))} '
            "interventions used); a transcript below, when there is one, shows each "
            "experiment's result as the agent saw it.</p>"
        )
    record = RevisionRecord.from_dict(data)
    revision = None
    if truth is not None and truth.n_nodes == record.n_nodes:
        revision = episode_revision(record, truth)
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
                ", ".join(f"X{v}" for v in shifted) or "none",
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
        "true shifts (descendants)",
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
        "descendants (what a shift test should flag) and children (direct effects); then what "
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


# ----------------------------------------------------------------------------- transcripts


def _clip(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT} more characters in the transcript)"


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _event_content(event: Mapping[str, Any]) -> str:
    kind = event.get("event")
    if kind == "reply":
        calls = event.get("tool_calls") or []
        lines = [_as_text(event.get("text") or "")]
        lines += [f"→ {c.get('name')}({_as_text(c.get('arguments'))})" for c in calls]
        return "\n".join(line for line in lines if line)
    if kind == "request":
        payload = event.get("payload") or {}
        messages = payload.get("messages") if isinstance(payload, Mapping) else None
        return f"request of {len(messages) if isinstance(messages, list) else '?'} messages"
    if kind == "response":
        cached = "from the cache" if event.get("cached") else f"{event.get('latency_s')} s"
        return f"response ({cached})"
    if kind == "tool_result" or kind == "call":
        name = (
            f"{event.get('name')}({_as_text(event.get('arguments'))})\n" if kind == "call" else ""
        )
        error = " [error]" if event.get("is_error") else ""
        return f"{name}{_as_text(event.get('text') or '')}{error}"
    if kind == "action":
        return _as_text(event.get("action") or event.get("error") or "")
    if kind == "episode_start":
        return _as_text({k: event.get(k) for k in ("env", "max_steps")})
    rest = {k: v for k, v in event.items() if k not in ("event", "time")}
    return _as_text(rest)


def _turn_cost(row: Row, usage: Mapping[str, Any], prices: Mapping[str, Price] | None) -> str:
    if not prices:
        return "—"
    fake = {
        **row,
        "status": "ok",
        **{
            k: usage.get(k, 0)
            for k in ("tokens_in", "tokens_out", "tokens_cached_in", "tokens_cache_write")
        },
    }
    costs = job_costs([fake], prices)
    return f"{costs[0].cost:.5f}" if costs else "—"


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """The events of a transcript file, skipping lines that are not JSON objects."""
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _transcript(row: Row, run_dir: Path, prices: Mapping[str, Price] | None) -> str:
    path = run_dir / "transcripts" / f"{row.get('job_id')}.jsonl"
    if not path.is_file():
        return ""
    events = read_transcript(path)
    body = []
    for number, event in enumerate(events):
        raw_usage = event.get("usage")
        usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, Mapping) else {}
        body.append(
            "<tr>"
            f"<td>{number}</td><td>{_esc(event.get('event'))}</td>"
            f"<td>{_esc(_cell(event.get('turn')))}</td>"
            f"<td><pre>{_esc(_clip(_event_content(event)))}</pre></td>"
            f"<td>{_esc(_cell(usage.get('tokens_in')))}</td>"
            f"<td>{_esc(_cell(usage.get('tokens_out')))}</td>"
            f"<td>{_esc(_turn_cost(row, usage, prices) if usage else '—')}</td>"
            "</tr>"
        )
    total = ""
    if prices:
        costs = job_costs([row], prices)
        total = f" Episode cost: {costs[0].cost:.5f} USD." if costs else ""
    head = "".join(
        f"<th>{h}</th>"
        for h in ("#", "event", "turn", "content", "tokens in", "tokens out", "cost (USD)")
    )
    return (
        f'<h2>Transcript</h2><p class="note">{len(events)} events from '
        f"<code>transcripts/{_esc(path.name)}</code>; tokens in: {_esc(_cell(row.get('tokens_in')))}, "
        f"out: {_esc(_cell(row.get('tokens_out')))}.{_esc(total)}</p>"
        f'<table class="transcript"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


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
        _transcript(row, run_dir, prices),
    ]
    title = f"Episode {index}: {row_label(row)}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{_esc(title)}</title><style>{_PAGE_CSS}</style></head><body>"
        + "".join(body)
        + "</body></html>\n"
    )


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
