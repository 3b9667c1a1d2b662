"""report.html and an episode page in a real browser: headless Chromium, driven over the
DevTools protocol (``--remote-debugging-pipe``, no package beyond the standard library).

The test opens the report of a tiny real sweep, checks the DOM (the tables, the viewer's row
count, a real mouse click on a header that sorts the rows, an episode page in the viewer's frame
and on its own) and saves screenshots; then it opens the report with JavaScript off and checks
that the tables are there and the plots decoded; and it opens a leaderboard of the run. Skipped when ``/usr/bin/chromium`` is absent
(Debian: ``apt-get install -y chromium``; ``.ci/run`` installs it). Set ``ACDB_SCREENSHOTS`` to a
folder to keep the screenshots.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acdb_gym.integrations.episode import ToolEpisode, episode_record, result_row
from acdb_gym.report import write_report
from acdb_gym.report.leaderboard import write_leaderboard
from acdb_gym.results import RESULTS_FILE, ResultsAppender
from acdb_gym.sweep.run import SweepConfig, run_sweep

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = pytest.mark.skipif(
    not CHROMIUM.is_file(),
    reason="headless Chromium not installed (/usr/bin/chromium): apt-get install -y chromium",
)


class Browser:
    """Headless Chromium with one page, spoken to over the DevTools pipe (fds 3 and 4)."""

    def __init__(self, profile: Path) -> None:
        to_child, self._writer = os.pipe()
        self._reader, from_child = os.pipe()
        # The child expects to read commands on fd 3 and write replies on fd 4.
        high_in = os.dup(to_child)
        high_out = os.dup(from_child)
        self.process = subprocess.Popen(
            [
                str(CHROMIUM),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--allow-file-access-from-files",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "--window-size=1280,1000",
                "about:blank",
            ],
            # dup2 leaves fds 3 and 4 inheritable; subprocess would close them again after
            # preexec_fn if it closed the parent's fds (its own fds are never inheritable).
            close_fds=False,
            preexec_fn=lambda: (os.dup2(high_in, 3), os.dup2(high_out, 4)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for fd in (to_child, from_child, high_in, high_out):
            os.close(fd)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)[
            "sessionId"
        ]
        self.call("Page.enable", session=True)

    def call(self, method: str, *, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its reply (events meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._writer, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply["result"]
                return result
            self.events.append(reply)
        raise TimeoutError(method)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._reader, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def open(self, path: Path) -> float:
        """Load a file and wait for its load event; the seconds it took."""
        self.events.clear()
        start = time.perf_counter()
        self.call("Page.navigate", session=True, url=path.resolve().as_uri())
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._read())
        return time.perf_counter() - start

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        reply = self.call(
            "Runtime.evaluate",
            session=True,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
        )
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) at the middle of the element."""
        box = self.js(
            f"(() => {{const e = document.querySelector({json.dumps(selector)});"
            "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            "return [r.x + r.width / 2, r.y + r.height / 2];})()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                session=True,
                type=kind,
                x=box[0],
                y=box[1],
                button="left",
                clickCount=1,
            )

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._writer)
        os.close(self._reader)


EMPTY_MODELS = ("empty-a", "empty-b")
"""Two agent rows that submit the empty graph: both sit at P = R = 0 on the precision-recall
plot (their labels must not overprint) and must not be called balanced."""


def _empty_submissions(out: Path) -> None:
    """Episodes played through the tool path (as MCP and inspect play them) that submit the
    empty graph at once, appended to the run's results file."""
    for model in EMPTY_MODELS:
        for index in range(2):
            episode = ToolEpisode(ladder="v0", level="L0", manifest_index=index)
            episode.call("submit_graph", {"directed_edges": [], "undirected_edges": []})
            row = result_row(
                episode_record(episode),
                agent="mcp:llm_raw",
                agent_config={"model": model},
                wall_time=0.0,
            )
            with ResultsAppender(out / RESULTS_FILE) as appender:
                appender.append(row)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("browser") / "run"
    config = SweepConfig(
        out=out,
        levels=("L0", "L1"),
        seeds=2,
        agents=("pc_greedy", "random", "oracle"),
        progress=False,
    )
    run_sweep(config)
    _empty_submissions(out)
    write_report(out)
    return out


@pytest.fixture
def browser() -> Iterator[Browser]:
    with tempfile.TemporaryDirectory(prefix="acdb-chromium-") as profile:
        chromium = Browser(Path(profile))
        try:
            yield chromium
        finally:
            chromium.close()


def _shots(tmp_path: Path) -> Path:
    folder = os.environ.get("ACDB_SCREENSHOTS")
    target = Path(folder) if folder else tmp_path
    target.mkdir(parents=True, exist_ok=True)
    return target


def _is_png_with_content(path: Path) -> bool:
    from matplotlib.image import imread

    image = imread(path)
    return image.shape[0] > 200 and image.shape[1] > 200 and float(image[..., :3].std()) > 0.02


@pytest.mark.slow
def test_the_report_and_an_episode_page_in_headless_chromium(
    run: Path, browser: Browser, tmp_path: Path
) -> None:
    shots = _shots(tmp_path)
    n_rows = len((run / "results.jsonl").read_text().splitlines())
    browser.open(run / "report.html")
    md_tables = sum(
        1
        for line, after in zip(
            (run / "report.md").read_text().splitlines(),
            (run / "report.md").read_text().splitlines()[1:],
            strict=False,
        )
        if line.startswith("|") and after.startswith("|---")
    )
    assert browser.js("document.querySelectorAll('table.sortable').length") == md_tables + 1
    assert browser.js("document.querySelectorAll('#episodes tbody tr').length") == n_rows
    # Every plot decoded (an <img> that failed to load has no natural width).
    widths = browser.js("[...document.images].map(i => i.complete && i.naturalWidth)")
    assert len(widths) >= 2 and all(w > 100 for w in widths)
    assert _is_png_with_content(browser.screenshot(shots / "report.png"))

    # A value with its interval stays on one line (Table 2's cells wrapped before), and a table
    # wider than the page scrolls inside its wrapper instead.
    lines_per_ci_cell = browser.js(
        "[...document.querySelectorAll('td.ci')].map(td => {const r = document.createRange();"
        "r.selectNodeContents(td); return new Set([...r.getClientRects()].map(x => x.top)).size;})"
    )
    assert len(lines_per_ci_cell) >= 20 and set(lines_per_ci_cell) == {1}
    assert browser.js("document.documentElement.scrollWidth <= window.innerWidth")
    # The episode list is never clipped: every column is inside its box (no sideways scroll).
    assert browser.js(
        "(() => {const l = document.getElementById('episode-list');"
        "return l.scrollWidth <= l.clientWidth;})()"
    )
    # Rows come in ladder, level, index, agent order, not in the order jobs finished.
    order = browser.js(
        "[...document.querySelectorAll('#episodes tbody tr')].map(r => "
        "[r.cells[3].textContent, Number(r.cells[4].textContent), r.cells[1].textContent])"
    )
    assert order == sorted(order, key=lambda cells: (cells[0], cells[1], cells[2]))
    # An empty submission (P = R = 0) is not called balanced.
    text = browser.js("document.body.innerText")
    assert "orients almost no true edge" in text
    assert not any(
        "balanced" in line for line in text.splitlines() if line.startswith("mcp:llm_raw")
    )

    # A real click on the "Dir F1" header sorts the viewer's rows by it, then reversed.
    column = browser.js(
        "[...document.querySelectorAll('#episodes thead th')].findIndex("
        "h => h.textContent === 'Dir F1')"
    )
    cells = (
        "[...document.querySelectorAll('#episodes tbody tr')].map("
        f"r => r.cells[{column}].textContent)"
    )
    before = browser.js(cells)
    values = [float(v) for v in before]
    assert values != sorted(values)
    browser.click(f"#episodes thead th:nth-child({column + 1})")
    assert [float(v) for v in browser.js(cells)] == sorted(values)
    assert browser.js(f"document.querySelector('#episodes thead th:nth-child({column + 1})')"
                      ".getAttribute('aria-sort')") == "ascending"  # fmt: skip
    browser.click(f"#episodes thead th:nth-child({column + 1})")
    assert [float(v) for v in browser.js(cells)] == sorted(values, reverse=True)

    # The filter box hides the rows that do not match.
    browser.js(
        "(() => {const box = document.getElementById('episode-filter'); box.value = 'pc_greedy';"
        "box.dispatchEvent(new Event('input'));})()"
    )
    shown = browser.js("document.querySelectorAll('#episodes tbody tr:not([hidden])').length")
    assert 0 < shown < n_rows

    # "view" on the first shown row (a pc_greedy episode) loads its page into the frame.
    browser.click("#episodes tbody tr:not([hidden]) a")
    deadline = time.monotonic() + 20
    title = ""
    while time.monotonic() < deadline and "pc_greedy" not in title:
        time.sleep(0.1)
        title = browser.js(
            "(() => {const d = document.getElementById('episode-frame').contentDocument;"
            "return d && d.readyState === 'complete' ? d.title : '';})()"
        )
    assert "pc_greedy (active)" in title
    # Key j moves to the next shown row and opens its page.
    first = browser.js("document.querySelector('#episodes tr.current td').textContent")
    browser.call("Input.dispatchKeyEvent", session=True, type="keyDown", key="j", text="j")
    browser.call("Input.dispatchKeyEvent", session=True, type="keyUp", key="j")
    shown_numbers = browser.js(
        "[...document.querySelectorAll('#episodes tbody tr:not([hidden])')]"
        ".map(r => r.cells[0].textContent)"
    )
    now = browser.js("document.querySelector('#episodes tr.current td').textContent")
    assert now == shown_numbers[shown_numbers.index(first) + 1]

    # The episode page on its own: both graphs, the edge legend, the experiments.
    page = (
        run
        / "episodes"
        / browser.js(
            "document.querySelector('#episodes tr.current td:last-child a').getAttribute('href')"
        ).split("/")[-1]
    )
    browser.open(page)
    assert browser.js("document.querySelectorAll('svg.graph').length") == 2
    assert browser.js("document.querySelectorAll('svg.legend').length") == 1
    drawn = browser.js("document.querySelectorAll('svg.graph line.edge').length")
    assert drawn >= 2
    counts = browser.js(
        "[...document.querySelectorAll('table.edge-counts tbody td')].slice(1).map(td => Number(td.textContent))"
    )
    correct, reversed_, unresolved, missing, extra = counts
    # Each true edge is drawn once on the left, each submitted one once on the right.
    assert drawn == (correct + reversed_ + unresolved + missing) + (
        correct + reversed_ + unresolved + extra
    )
    assert browser.js("document.querySelectorAll('table.experiments tbody tr').length") > 0
    assert _is_png_with_content(browser.screenshot(shots / "episode.png"))


@pytest.mark.slow
def test_the_report_reads_with_javascript_off(run: Path, browser: Browser, tmp_path: Path) -> None:
    browser.call("Emulation.setScriptExecutionDisabled", session=True, value=True)
    browser.open(run / "report.html")
    document = browser.call("DOM.getDocument", session=True, depth=0)["root"]["nodeId"]

    def count(selector: str) -> int:
        found = browser.call(
            "DOM.querySelectorAll", session=True, nodeId=document, selector=selector
        )
        return len(found["nodeIds"])

    n_rows = len((run / "results.jsonl").read_text().splitlines())
    assert count("table.sortable") >= 5
    assert count("#episodes tbody tr") == n_rows
    assert count("img.plot") >= 2
    # The page's script did not run: no header carries a sort mark, the filter stays hidden.
    assert count("th[aria-sort]") == 0 and count("#episode-filter[hidden]") == 1
    # The plots are drawn: their boxes have the PNGs' size, not a broken image's.
    boxes = [
        browser.call("DOM.getBoxModel", session=True, nodeId=node)["model"]
        for node in browser.call(
            "DOM.querySelectorAll", session=True, nodeId=document, selector="img.plot"
        )["nodeIds"]
    ]
    assert all(box["width"] > 300 and box["height"] > 200 for box in boxes)
    assert _is_png_with_content(browser.screenshot(_shots(tmp_path) / "report-no-js.png"))


@pytest.mark.slow
def test_the_leaderboard_page_in_headless_chromium(
    run: Path, browser: Browser, tmp_path: Path
) -> None:
    files = write_leaderboard([run], tmp_path / "board")
    md = files.markdown.read_text(encoding="utf-8").splitlines()
    n_tables = sum(1 for line in md if line.startswith("|---"))
    browser.open(files.html)
    assert browser.js("document.querySelectorAll('table.sortable').length") == n_tables >= 3
    assert browser.js("document.querySelectorAll('#episodes').length") == 0
    # The run's name links to its report, which opens.
    href = browser.js("document.querySelector('ul a').getAttribute('href')")
    assert (files.html.parent / href).resolve() == (run / "report.html").resolve()
    browser.click("ul a")
    deadline = time.monotonic() + 20
    title = ""
    while time.monotonic() < deadline and "sweep report" not in title:
        time.sleep(0.1)
        with contextlib.suppress(RuntimeError):  # the old page's context may be gone
            title = browser.js("document.title")
    assert title == f"ACDB sweep report: {run.name}"


def _overlap(a: Any, b: Any) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_the_plots_keep_their_labels_apart(run: Path) -> None:
    """What the PNGs show, read from the figures: the bar chart's legend clear of its title,
    no two precision-recall labels on top of each other (the two empty submissions share the
    point P = R = 0), and whole numbers of experiments on the anytime axes."""
    from acdb_gym.report.aggregation import summarize
    from acdb_gym.report.anytime import anytime_figure, anytime_rows
    from acdb_gym.report.load import as_rows, load_results
    from acdb_gym.report.plots import f1_figure, precision_recall_figure

    rows = load_results(run)
    [table] = summarize(rows).ladders
    bars = f1_figure(table)
    renderer = bars.canvas.get_renderer()
    [axes] = bars.axes
    [legend] = bars.legends
    title = axes.title.get_window_extent(renderer)
    assert not _overlap(legend.get_window_extent(renderer), title)
    assert not _overlap(legend.get_window_extent(renderer), axes.get_window_extent(renderer))

    scatter = precision_recall_figure(table)
    renderer = scatter.canvas.get_renderer()
    [axes] = scatter.axes
    labels = [t for t in axes.texts if "(" in t.get_text() and "commits" not in t.get_text()]
    assert {t.get_text() for t in labels} >= {f"mcp:llm_raw[{m}] (active)" for m in EMPTY_MODELS}
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert not any(_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]), [
        t.get_text() for t in labels
    ]
    title = axes.title.get_window_extent(renderer)
    assert not any(_overlap(box, title) for box in boxes)

    curves = anytime_figure(anytime_rows(as_rows(rows)))
    curves.canvas.draw()
    for panel in curves.axes:
        ticks = [
            tick
            for tick in panel.get_xticks()
            if panel.get_xlim()[0] <= tick <= panel.get_xlim()[1]
        ]
        assert ticks and all(float(tick).is_integer() for tick in ticks), ticks
