"""``report.html``: the report's document as one self-contained page, with an episode viewer.

The page renders the same :mod:`~acdb_gym.report.document` parts as ``report.md``: every table
is an HTML table built from the same cells (sortable by clicking a header, by a few lines of
inline script), every plot is its PNG embedded as a base64 ``data:`` URI, and the prose lines
are rendered from the few Markdown forms the report writes (``#`` headings, ``-`` bullets,
``**bold**``, ``code`` and ``[name](file)`` links). Nothing is fetched at view time.

The episode viewer is a table of every result row (sortable like the others) whose links open
the row's static page (:mod:`acdb_gym.report.episodes`, in ``episodes/``) in a frame beside it.
The page therefore carries one table row per episode, not the episodes themselves, and works
with JavaScript off: the tables and plots are static, and a link loads its episode page into the
frame without any script. Script adds sorting, a filter box and previous/next keys.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from acdb_gym.report.cost import Price
from acdb_gym.report.document import Image, Part, Table
from acdb_gym.report.episodes import (
    episode_order,
    episode_path,
    row_label,
    write_episode_pages,
)
from acdb_gym.report.types import Row

__all__ = [
    "EPISODE_HEADERS",
    "HTML_FILE",
    "LINK_SCHEMES",
    "document_page",
    "episode_rows",
    "html_page",
    "html_table",
    "is_relative_link",
    "prose_html",
    "write_html_report",
]

HTML_FILE: Final = "report.html"

EPISODE_HEADERS: Final = (
    "#",
    "agent",
    "ladder",
    "level",
    "index",
    "repeat",
    "status",
    "Dir F1",
    "SHD",
    "interventions",
    "steps",
    "episode",
)

STYLE: Final = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#24292f;line-height:1.4}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:13px}
th,td{border:1px solid #d0d7de;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f6f8fa;white-space:nowrap}
table.sortable th{cursor:pointer}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
img.plot{max-width:100%;height:auto;border:1px solid #d0d7de}
code{background:#f6f8fa;padding:0 3px}
.table-wrap{overflow-x:auto;max-width:100%}
td.ci{white-space:nowrap}
#viewer{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
#episode-list{max-height:80vh;overflow:auto;flex:0 0 auto;max-width:100%;content-visibility:auto}
#episodes td{white-space:nowrap}
#episodes tr.current{background:#ddf4ff}
#episode-frame{flex:1 1 420px;min-width:min(420px,100%);height:80vh;border:1px solid #d0d7de}
.note{color:#57606a}
"""

SCRIPT: Final = """
(function(){
function key(text){var t=text.trim();var m=t.match(/^[<>]?\\s*[+\\u2212-]?[0-9.]+(e[+-]?[0-9]+)?/i);
if(m&&t.charAt(0)!=='['){var v=parseFloat(m[0].replace(/^[<>]\\s*/,'').replace('\\u2212','-'));
if(!isNaN(v))return[0,v,''];}if(t==='\\u2014'||t==='\\u2013'||t===''||t==='\\u221e')return[2,0,t];
return[1,0,t.toLowerCase()];}
function sortBy(th){var table=th.closest('table');var col=Array.prototype.indexOf.call(th.parentNode.children,th);
var dir=th.getAttribute('aria-sort')==='ascending'?-1:1;
Array.prototype.forEach.call(th.parentNode.children,function(h){h.removeAttribute('aria-sort');});
th.setAttribute('aria-sort',dir===1?'ascending':'descending');var body=table.tBodies[0];
var rows=Array.prototype.map.call(body.rows,function(r,i){return[key(r.cells[col]?r.cells[col].textContent:''),i,r];});
rows.sort(function(a,b){var x=a[0],y=b[0];if(x[0]!==y[0])return x[0]-y[0];
if(x[0]===0&&x[1]!==y[1])return dir*(x[1]-y[1]);if(x[2]!==y[2])return dir*(x[2]<y[2]?-1:1);return a[1]-b[1];});
var frag=document.createDocumentFragment();rows.forEach(function(r){frag.appendChild(r[2]);});body.appendChild(frag);}
document.addEventListener('click',function(e){var th=e.target.closest('table.sortable thead th');if(th)sortBy(th);});
var box=document.getElementById('episode-filter');
if(box){box.hidden=false;box.addEventListener('input',function(){var q=box.value.toLowerCase();
var rows=document.querySelectorAll('#episodes tbody tr');for(var i=0;i<rows.length;i++){
rows[i].hidden=q&&rows[i].textContent.toLowerCase().indexOf(q)<0;}});}
var frame=document.getElementById('episode-frame');
document.addEventListener('keydown',function(e){if(!frame||e.target===box)return;
if(e.key!=='j'&&e.key!=='k')return;
var rows=Array.prototype.slice.call(document.querySelectorAll('#episodes tbody tr:not([hidden])'));
var cur=rows.findIndex(function(r){return r.classList.contains('current');});
var next=rows[Math.max(0,Math.min(rows.length-1,cur+(e.key==='j'?1:-1)))];
if(next){next.querySelector('td:last-child a').click();}});
document.addEventListener('click',function(e){var a=e.target.closest('#episodes a');if(!a)return;
var old=document.querySelector('#episodes tr.current');if(old)old.classList.remove('current');
a.closest('tr').classList.add('current');});
})();
"""

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


LINK_SCHEMES: Final[frozenset[str]] = frozenset()
"""The URL schemes a link of the report may have: none, since the report links only its own
files; a target is a link only when it is a relative path (:func:`is_relative_link`)."""

_C0_AND_SPACE: Final = "".join(chr(code) for code in range(0x21))
_SCHEME: Final = re.compile(r"([a-z][a-z0-9+.-]*):")


def is_relative_link(target: str) -> bool:
    """Whether a link target (as written in the page, HTML-escaped) is a relative path once
    normalized as a browser does before it looks for a scheme: character references decoded,
    leading and trailing C0 controls and spaces stripped, tabs and newlines removed anywhere,
    backslashes read as slashes, letters case-folded. Any other control character, a
    network-path reference (``//host``) or a scheme outside :data:`LINK_SCHEMES` is refused.

    >>> is_relative_link("table2_v0.csv"), is_relative_link("\\x01javascript:alert(1)")
    (True, False)
    >>> is_relative_link("java\\tscript:x"), is_relative_link("\\\\\\\\host/x")
    (False, False)
    """
    url = html.unescape(target).strip(_C0_AND_SPACE)
    url = re.sub("[\t\n\r]", "", url).replace("\\", "/").casefold()
    if any(ord(char) < 0x20 or char == "\x7f" for char in url) or url.startswith("//"):
        return False
    scheme = _SCHEME.match(url)
    return scheme is None or scheme.group(1) in LINK_SCHEMES


def _link(match: re.Match[str]) -> str:
    """A Markdown link as an anchor when its target is a relative path (the report links only
    its own files, :func:`is_relative_link`); any other target stays text."""
    text, target = match.group(1), match.group(2)
    if not is_relative_link(target):
        return match.group(0)
    return f'<a href="{target}">{text}</a>'


def _inline(text: str) -> str:
    """A prose line's inline forms: code spans, bold, links (all escaped first)."""
    pieces = _CODE.split(text)
    out = []
    for index, piece in enumerate(pieces):
        if index % 2:
            out.append(f"<code>{html.escape(piece)}</code>")
            continue
        escaped = html.escape(piece)
        escaped = _BOLD.sub(r"<strong>\1</strong>", escaped)
        escaped = _LINK.sub(_link, escaped)
        out.append(escaped)
    return "".join(out)


def prose_html(lines: Sequence[str]) -> str:
    """HTML of consecutive prose lines: headings, nested bullets and paragraphs."""
    out: list[str] = []
    depth = 0
    for line in lines:
        stripped = line.lstrip(" ")
        indent = (len(line) - len(stripped)) // 2
        if stripped.startswith("- "):
            level = indent + 1
            while depth < level:
                out.append("<ul>")
                depth += 1
            while depth > level:
                out.append("</ul>")
                depth -= 1
            out.append(f"<li>{_inline(stripped[2:])}</li>")
            continue
        while depth:
            out.append("</ul>")
            depth -= 1
        heading = re.match(r"(#{1,6}) (.*)", stripped)
        if heading:
            n = len(heading.group(1))
            out.append(f"<h{n}>{_inline(heading.group(2))}</h{n}>")
        elif stripped:
            out.append(f"<p>{_inline(stripped)}</p>")
    out.extend("</ul>" for _ in range(depth))
    return "\n".join(out)


_ESTIMATE_CELL = re.compile(r"^[<>]?\s*[+\u2212-]?[0-9][0-9.,]*%?\s*\[[^\]]*\]$")
"""A value with its interval (``55.5 [47.1, 68.3]``): kept on one line (class ``ci``)."""


def _cell(cell: str) -> str:
    kind = ' class="ci"' if _ESTIMATE_CELL.match(cell) else ""
    return f"<td{kind}>{html.escape(cell)}</td>"


def html_table(table: Table, *, table_id: str = "") -> str:
    """A sortable HTML table of a document table (every cell escaped), in a wrapper that
    scrolls sideways when the table is wider than the page; a value with its interval never
    wraps."""
    ident = f' id="{html.escape(table_id)}"' if table_id else ""
    head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in table.headers)
    rows = "".join("<tr>" + "".join(_cell(cell) for cell in row) + "</tr>" for row in table.body)
    return (
        f'<div class="table-wrap"><table class="sortable"{ident}><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def _image(image: Image, run_dir: Path) -> str:
    path = run_dir / image.src
    alt = html.escape(image.alt)
    if not path.is_file():
        return f'<p class="note">({alt}: {html.escape(image.src)} is missing)</p>'
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<p><img class="plot" alt="{alt}" src="data:image/png;base64,{data}"></p>'


def _document_html(parts: Sequence[Part], run_dir: Path) -> str:
    out: list[str] = []
    prose: list[str] = []
    for part in parts:
        if isinstance(part, str):
            prose.append(part)
            continue
        out.append(prose_html(prose))
        prose = []
        out.append(html_table(part) if isinstance(part, Table) else _image(part, run_dir))
    out.append(prose_html(prose))
    return "\n".join(out)


def _number(value: float, *, percent: bool = False) -> str:
    if not math.isfinite(value):
        return "—"
    return f"{100 * value:.1f}" if percent else f"{value:.4g}"


def episode_rows(rows: Sequence[Row]) -> Table:
    """The viewer's table: one row per result row, in :data:`EPISODE_HEADERS` order (the last
    cell is the page's path)."""
    body = [
        (
            str(index),
            row_label(row),
            row.ladder,
            row.level,
            str(row.manifest_index),
            str(row.repeat),
            row.status,
            _number(row.value("directed_f1"), percent=True),
            _number(row.value("shd")),
            _number(row.value("interventions_used")),
            _number(row.value("steps")),
            episode_path(index),
        )
        for index, row in enumerate(rows)
    ]
    return Table.of(EPISODE_HEADERS, body)


def _viewer(rows: Sequence[Row]) -> str:
    table = episode_rows(rows)
    head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in table.headers)
    lines = []
    for cells in table.body:
        link = html.escape(cells[-1])
        # The number links too, so a narrow window that hides the last column still opens it.
        number = f'<td><a href="{link}" target="episode-frame">{html.escape(cells[0])}</a></td>'
        tds = number + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells[1:-1])
        lines.append(f'<tr>{tds}<td><a href="{link}" target="episode-frame">view</a></td></tr>')
    first = html.escape(table.body[0][-1]) if table.body else "about:blank"
    return (
        '<h2 id="episode-viewer">Episodes</h2>'
        f'<p class="note">{len(rows)} result rows. "view" opens an episode\'s page (true and '
        "submitted graphs, experiments, revisions, score, transcript) in the frame; each page "
        "is also a file of its own in <code>episodes/</code>; the row's number opens it too. Click "
        "a header to sort; keys "
        "j / k step through the rows.</p>"
        '<input id="episode-filter" type="search" placeholder="filter episodes" hidden>'
        '<div id="viewer"><div id="episode-list">'
        f'<table class="sortable" id="episodes"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(lines)}</tbody></table></div>"
        f'<iframe id="episode-frame" name="episode-frame" title="episode" src="{first}">'
        "</iframe></div>"
    )


def document_page(title: str, parts: Sequence[Part], base_dir: Path, *, after: str = "") -> str:
    """A self-contained page of a document: its parts (images embedded from ``base_dir``),
    then the HTML ``after``, with the sorting script."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        '<noscript><p class="note">JavaScript is off: the tables do not sort; '
        "everything else reads as it is.</p></noscript>"
        f"{_document_html(parts, base_dir)}\n{after}"
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def html_page(parts: Sequence[Part], run_dir: Path, rows: Sequence[Row]) -> str:
    """The text of ``report.html``: the document, then the episode viewer."""
    return document_page(f"ACDB sweep report: {run_dir.name}", parts, run_dir, after=_viewer(rows))


def write_html_report(
    run_dir: Path,
    parts: Sequence[Part],
    rows: Sequence[Row],
    *,
    prices: Mapping[str, Price] | None = None,
) -> Path:
    """Write ``report.html`` and the episode pages (``episodes/``) of a run directory.

    Args:
        run_dir: the run directory.
        parts: the report's document (the parts ``report.md`` renders).
        rows: the result rows (one episode page each, numbered in :func:`episode_order`).
        prices: a price table for the transcripts' cost column, or None.

    Returns:
        The path of ``report.html``.
    """
    rows = episode_order(rows)
    write_episode_pages(run_dir, rows, prices=prices)
    path = run_dir / HTML_FILE
    path.write_text(html_page(parts, run_dir, rows), encoding="utf-8")
    return path
