"""report.html of a 10,000-episode run: time to write, size, and time to open in headless Chromium.

Runs a real offline sweep (v0, levels L0-L5, 10 seeds, agents pc_greedy, pc, random, oracle,
sortnregress: 300 episodes), then builds a 10,000-row run from its rows played as repeats (each
row's ``repeat`` and ``job_id`` changed; the episodes are the sweep's own) and writes both
reports with :func:`acdb_gym.report.write_report`. Reports the time to write each report (its
episode pages included), the size of ``report.html`` and of ``episodes/``, and the time headless
Chromium takes to open each ``report.html`` (``chromium --headless --dump-dom``, which returns
after the load event) minus the time it takes to open ``about:blank``, its start-up; the
300-episode report is the peer. The issue's targets: under 3 s and 20 MB for 10,000 episodes.

Run: ``python benchmarks/report_html.py [--smoke] [--repeats N] [--episodes N]``
(``--smoke``: level L0, 2 seeds, oracle and random, a 200-row run). Without
``/usr/bin/chromium`` (Debian: ``apt-get install -y chromium``) the open times are left out.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Timing, base_parser, markdown_table, print_header, ratio

from acdb_gym.report import write_report
from acdb_gym.sweep.run import SweepConfig, run_sweep

CHROMIUM = Path("/usr/bin/chromium")


def base_run(out: Path, smoke: bool) -> Path:
    """The real sweep whose rows the big run repeats."""
    if smoke:
        config = SweepConfig(
            out=out, levels=("L0",), seeds=2, agents=("oracle", "random"), progress=False
        )
    else:
        config = SweepConfig(
            out=out,
            levels=("L0", "L1", "L2", "L3", "L4", "L5"),
            seeds=10,
            agents=("pc_greedy", "pc", "random", "oracle", "sortnregress"),
            progress=False,
        )
    run_sweep(config)
    return out


def repeated_run(base: Path, out: Path, episodes: int) -> Path:
    """A run of ``episodes`` rows: the base run's rows again and again as further repeats."""
    rows = [json.loads(line) for line in (base / "results.jsonl").read_text().splitlines()]
    out.mkdir(parents=True)
    lines = []
    for number in range(episodes):
        row = dict(rows[number % len(rows)])
        repeat = number // len(rows)
        row["repeat"] = repeat
        row["job_id"] = f"{row['job_id']}-r{repeat}"
        lines.append(json.dumps(row))
    (out / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def timed_report(run: Path) -> float:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_report(run)
    return time.perf_counter() - start


def open_time(url: str, repeats: int) -> Timing:
    """Wall time of ``chromium --headless --dump-dom URL`` (start-up included)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(
            [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )
        times.append(time.perf_counter() - start)
    return Timing(tuple(times))


def _mb(size: int) -> str:
    return f"{size / 1e6:.2f} MB"


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--episodes", type=int, default=10_000, help="rows of the big run")
    args = parser.parse_args()
    repeats = args.repeats or (1 if args.smoke else 5)
    episodes = 200 if args.smoke else args.episodes
    print_header(
        "report.html: write, size, open in headless Chromium",
        "Open time: `chromium --headless --dump-dom` of the page minus that of about:blank "
        "(Chromium's start-up), medians.",
    )
    root = Path(tempfile.mkdtemp(prefix="acdb-bench-report-html-"))
    try:
        base = base_run(root / "base", args.smoke)
        big = repeated_run(base, root / "big", episodes)
        runs = {"base": base, "big": big}
        written = {name: timed_report(run) for name, run in runs.items()}
        blank = open_time("about:blank", repeats) if CHROMIUM.is_file() else None
        body = []
        opened: dict[str, Timing] = {}
        for name, run in runs.items():
            n_rows = len((run / "results.jsonl").read_text().splitlines())
            pages = list((run / "episodes").glob("e*.html"))
            page_bytes = sum(p.stat().st_size for p in pages)
            html = run / "report.html"
            open_cell = "chromium not installed"
            if blank is not None:
                raw = open_time(html.resolve().as_uri(), repeats)
                opened[name] = Timing(tuple(max(t - blank.median, 0.0) for t in raw.times))
                open_cell = f"{opened[name].median:.2f} s (with start-up {raw.median:.2f} s)"
            body.append(
                [
                    f"{n_rows:,}",
                    f"{written[name]:.1f} s",
                    _mb(html.stat().st_size),
                    f"{len(pages):,} pages, {_mb(page_bytes)} "
                    f"(largest {_mb(max(p.stat().st_size for p in pages))})",
                    open_cell,
                ]
            )
        print(
            markdown_table(
                ["episodes", "acdb report", "report.html", "episodes/", "open in Chromium"], body
            )
        )
        if blank is not None:
            print(
                f"\nChromium start-up (about:blank): {blank.cell()}. Open time "
                f"{episodes:,} vs {body[0][0]} episodes: {ratio(opened['big'], opened['base'])}."
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
