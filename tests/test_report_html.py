"""report.html, the episode pages and the leaderboard, on real sweeps of a tiny level."""

from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from acdb_gym.cli import main as cli_main
from acdb_gym.core.graphs import DAG, PDAG
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.report import write_report
from acdb_gym.report.edges import classify_edges, submission_of
from acdb_gym.report.episodes import episode_order
from acdb_gym.report.html import EPISODE_HEADERS, prose_html
from acdb_gym.report.leaderboard import merge_runs, write_leaderboard
from acdb_gym.report.revision import shift_effects_of
from acdb_gym.results import example_row, read_results
from acdb_gym.sweep.run import SweepConfig, run_sweep
from tests.test_report import typed


class _Tables(HTMLParser):
    """Tables (their class, id and cell texts), images and every URL-bearing attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, object]] = []
        self.urls: list[tuple[str, str, str]] = []
        self.tags: list[str] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        for name in ("src", "href", "action", "data", "poster"):
            if values.get(name):
                self.urls.append((tag, name, str(values[name])))
        if tag == "table":
            self.tables.append(
                {"class": values.get("class") or "", "id": values.get("id") or "", "rows": []}
            )
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            rows = self.tables[-1]["rows"]
            assert isinstance(rows, list)
            rows.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _parse(path: Path) -> _Tables:
    parser = _Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _md_tables(text: str) -> list[list[list[str]]]:
    """The Markdown tables of a report: rows of cells, the separator line left out."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if not all(set(c) <= {"-", ":"} and c for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def _sweep(out: Path, agents: tuple[str, ...], seeds: int = 2) -> Path:
    run_sweep(SweepConfig(out=out, levels=("L0",), seeds=seeds, agents=agents, progress=False))
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = _sweep(tmp_path_factory.mktemp("html") / "run", ("pc_greedy", "pc", "random"))
    write_report(out)
    return out


@pytest.mark.slow
def test_every_markdown_table_is_a_sortable_html_table_with_the_same_cells(run: Path) -> None:
    page = _parse(run / "report.html")
    md = _md_tables((run / "report.md").read_text(encoding="utf-8"))
    html_tables = [t for t in page.tables if t["id"] != "episodes"]
    assert len(md) >= 5 and len(html_tables) == len(md)
    for expected, table in zip(md, html_tables, strict=True):
        assert table["class"] == "sortable"
        assert table["rows"] == expected


def test_report_html_is_self_contained(run: Path) -> None:
    text = (run / "report.html").read_text(encoding="utf-8")
    page = _parse(run / "report.html")
    md = (run / "report.md").read_text(encoding="utf-8")
    images = [url for tag, name, url in page.urls if tag == "img"]
    assert len(images) == md.count("![") >= 2
    assert all(url.startswith("data:image/png;base64,") for url in images)
    fetched = [u for u in page.urls if u[0] in ("script", "link", "iframe", "img", "object")]
    assert all(not re.match(r"[a-z]+:", url) or url.startswith("data:") for *_, url in fetched)
    assert "link" not in page.tags and "http://" not in text and "https://" not in text
    assert "@import" not in text and "url(" not in text.replace("url(#", "")


def test_the_viewer_lists_every_row_and_each_page_shows_its_episode(run: Path) -> None:
    # The viewer numbers the rows in its own order (ladder, level, index, agent), not the file's.
    rows = episode_order(read_results(run / "results.jsonl", mode="strict").rows)
    viewer = next(t for t in _parse(run / "report.html").tables if t["id"] == "episodes")
    body = viewer["rows"]
    assert isinstance(body, list) and body[0] == list(EPISODE_HEADERS)
    assert len(body) == len(rows) + 1 == len(list((run / "episodes").glob("e*.html"))) + 1
    for index, row in enumerate(rows):
        page = (run / "episodes" / f"e{index}.html").read_text(encoding="utf-8")
        assert f"Episode {index}: {row.agent} ({row.panel})" in page
        assert "http://" not in page and "https://" not in page and "<script" not in page
        if row.draws > 1:
            assert "a mean over several draws" in page
            continue
        assert row.submission is not None
        counts = next(t for t in _parse(run / "episodes" / f"e{index}.html").tables
                      if t["class"] == "edge-counts")["rows"]  # fmt: skip
        assert isinstance(counts, list)
        named = dict(zip(counts[0][1:], map(int, counts[1][1:]), strict=True))
        # The edge classes count what the score counts.
        assert named["missing"] == row.shd_missing
        assert named["reversed"] == row.shd_reversed
        assert named["extra"] == row.shd_extra
        assert named["unresolved"] == row.shd_unresolved
        assert page.count('class="edge edge-') >= named["correct"] * 2
    greedy = next(i for i, r in enumerate(rows) if r.agent == "pc_greedy")
    page = (run / "episodes" / f"e{greedy}.html").read_text(encoding="utf-8")
    experiments = page.split('<table class="experiments">')[1].split("</table>")[0]
    assert experiments.count("<tr>") - 1 == rows[greedy].interventions_used > 0
    assert "do(X" in experiments
    # Each descendant with the size of its shift (the v0 SCMs are linear).
    assert re.search(r"X\d+ \([+−]\d\.\d\d\)", experiments)


@pytest.mark.slow
def test_shift_effects_are_the_mean_shifts_of_a_one_sd_experiment() -> None:
    instance = get_level("v0", "L2").instance(3)
    (row,) = typed(example_row(ladder="v0", level="L2", seed=instance.seed))
    effects = shift_effects_of(row)
    assert effects is not None
    sd = np.sqrt(np.diag(instance.scm.covariance()))
    rng = np.random.default_rng(0)
    for target in range(instance.dag.n_nodes):
        shift = instance.scm.sample_do(target, sd[target], 200_000, rng).mean(axis=0) / sd
        np.testing.assert_allclose(effects[target], shift, atol=0.01)
        descendants = set(np.flatnonzero(effects[target])) - {target}
        reach = {int(j) for j in np.flatnonzero(instance.dag.adjacency[target])}
        assert reach <= descendants


def test_edge_classes_cover_each_case() -> None:
    truth = DAG.from_edges(4, [(0, 1), (1, 2), (2, 3), (0, 3)])
    submitted = PDAG.from_edges(4, directed=[(0, 1), (2, 1), (0, 2)], undirected=[(2, 3)])
    classes = classify_edges(truth, submitted)
    assert classes.counts == {
        "correct": 1,
        "reversed": 1,
        "unresolved": 1,
        "missing": 1,
        "extra": 1,
    }
    assert (0, 3, "missing") in classes.truth and (0, 2, True, "extra") in classes.submitted
    with pytest.raises(ValueError, match="3 nodes"):
        classify_edges(DAG.from_edges(3, []), submitted)
    (row,) = typed(example_row(submission={"n_nodes": 4, "graph": "0>1,2>1,0>2,2-3"}))
    parsed = submission_of(row)
    assert parsed is not None and (parsed.directed == submitted.directed).all()


@pytest.mark.slow
def test_leaderboard_merges_runs_and_tests_shared_seeds(run: Path, tmp_path: Path) -> None:
    other = _sweep(tmp_path / "other", ("pc", "oracle"))
    write_report(other)
    out = tmp_path / "board"
    files = write_leaderboard([run, other], out)
    md = files.markdown.read_text(encoding="utf-8")
    assert "pc/observational/raw of other (taken from run)" in md
    with files.csv.open() as handle:
        lines = list(csv.DictReader(handle))
    labels = {line["label"]: line["run"] for line in lines}
    assert labels == {
        "pc_greedy (active)": "run",
        "pc (observational)": "run",
        "random (observational)": "run",
        "oracle (observational)": "other",
    }
    assert {line["level"] for line in lines} == {"L0", "overall"}
    oracle = next(x for x in lines if x["label"].startswith("oracle") and x["level"] == "L0")
    assert (oracle["n_seeds"], oracle["directed_f1_mean"]) == ("2", "1")
    # Paired tests pair rows of different runs on the seeds both played.
    assert "| pc_greedy (active) | oracle (observational) | directed_f1 | 2 |" in md
    page = _parse(files.html)
    links = [url for tag, _, url in page.urls if tag == "a"]
    assert [(out / link).resolve() for link in links] == [
        (run / "report.html").resolve(),
        (other / "report.html").resolve(),
    ]
    assert len([t for t in page.tables if t["class"] == "sortable"]) == len(_md_tables(md))


def test_leaderboard_refuses_runs_that_do_not_match(run: Path, tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    moved.mkdir()
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["seed"] += 1
    (moved / "results.jsonl").write_text(json.dumps(first) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="different manifests"):
        merge_runs([run, moved])
    first["ladder"] = "v1"
    # v1's L0 has another d than v0's: the row's recorded graphs would not fit its level.
    first.pop("revision", None), first.pop("submission", None)
    (moved / "results.jsonl").write_text(json.dumps(first) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="different ladders"):
        merge_runs([run, moved])
    with pytest.raises(ValueError, match="given twice"):
        merge_runs([run, run])
    assert cli_main(["leaderboard", str(run), str(tmp_path / "nowhere")]) == 2


def test_prose_links_only_relative_files() -> None:
    text = prose_html(["- [table](table2_v0.csv), [x](javascript:alert(1)), [y](https://a.b/c)"])
    assert '<a href="table2_v0.csv">table</a>' in text
    assert "<a href" not in text.replace('<a href="table2_v0.csv">', "")
    assert prose_html(["**<b>bold</b>** `<i>`"]) == (
        "<p><strong>&lt;b&gt;bold&lt;/b&gt;</strong> <code>&lt;i&gt;</code></p>"
    )


@pytest.mark.parametrize(
    "target",
    [
        "\x01javascript:alert%281%29",
        "\x00 javascript:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "java\nscript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "\x1fvbscript:x",
        "data:text/html,x",
        "//evil.example/x",
        "\\\\evil.example/x",
        "/\\evil.example/x",
        "\x0b//evil.example",
    ],
)
def test_a_link_target_is_a_relative_path_after_browser_normalization(target: str) -> None:
    """Browsers strip leading C0 controls and spaces, remove tabs and newlines anywhere and
    read a backslash as a slash before they look for a scheme: a target the report keeps as a
    link is a relative path after all of that."""
    text = prose_html([f"- **llm_raw[[x]({target})] (active)**"])
    assert "<a " not in text, text


@pytest.mark.slow
def test_a_model_name_cannot_smuggle_a_link_into_the_report(tmp_path: Path) -> None:
    run = _sweep(tmp_path / "run", ("pc",), seeds=1)
    path = run / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["agent_config"] = {"model": "m[[x](\x01javascript:alert%281%29)]"}
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    write_report(run)
    write_leaderboard([run], tmp_path / "board")
    assert "javascript" in (run / "report.html").read_text(encoding="utf-8")
    pages = [run / "report.html", tmp_path / "board" / "leaderboard.html"]
    for page in (*pages, *sorted((run / "episodes").glob("*.html"))):
        for _, _, url in _parse(page).urls:
            assert "javascript" not in url.lower(), (page, url)
