"""The README's main command and `acdb report`, this checkout against peer checkouts, paired.

Each round runs, for this checkout and for every peer (another revision's checkout, e.g.
``git worktree add /tmp/base <commit>``, given as ``--peer LABEL=DIR``; its package is imported
through ``PYTHONPATH=DIR``), in an order that rotates from round to round:

- **main command**: ``acdb sweep --ladder v0 --workers 2 --out <fresh dir>`` (the full offline
  v0 sweep, 240 jobs, and its report), as a subprocess;
- **report, first**: ``acdb report`` on a fresh directory holding only a copy of one shared
  ``results.jsonl`` (written by this checkout's first sweep, so every side reports the same
  rows);
- **report, again**: ``acdb report`` once more on that directory (a rerun over a written report).

Bytecode (``--bytecode``): ``cached`` (the default) runs every side as an installed package
runs, its modules' bytecode compiled once: each side writes it under its own
``PYTHONPYCACHEPREFIX`` in the scratch directory (the checkouts stay untouched) during one
untimed warm-up (a one-seed sweep of L0 with the same agents and its report) before the rounds;
``none`` sets ``PYTHONDONTWRITEBYTECODE=1``, so every process compiles every module it imports
from source (a machine that never writes bytecode; the package's size then counts).

Wall time and the CPU time of the command's whole process tree (user + system: the command
runs under a small subreaper that reaps the sweep's workers, then reads
``getrusage(RUSAGE_CHILDREN)``) are recorded for every run; the table gives medians and, per peer, the median over rounds of the
paired ratio this / peer (below 1: this checkout is faster). Load on a shared machine inflates
wall time far more than CPU time, so both are shown.

Run: ``python benchmarks/main_command.py --peer base=/tmp/base [--peer old=/tmp/old]
[--rounds 4] [--bytecode cached|none]`` (``--smoke``: level L0, one seed, the oracle and random agents, one round).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, load_average, markdown_table, print_header

THIS = Path(__file__).resolve().parent.parent
"""This checkout's root (its ``acdb_gym`` is the measured package)."""

MEASURES = ("main command", "report, first", "report, again")


# A child that becomes a subreaper (Linux's PR_SET_CHILD_SUBREAPER), runs the command, then
# reaps every orphan left behind (the sweep's forkserver and workers), so that the CPU time of
# the whole process tree is in its RUSAGE_CHILDREN; it prints that CPU time.
_REAPER = """
import ctypes, os, resource, subprocess, sys
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(usage.ru_utime + usage.ru_stime)
sys.exit(code)
"""


def acdb(root: Path, arguments: list[str], cwd: Path, bytecode: Path | None) -> tuple[float, float]:
    """Run ``acdb ARGUMENTS`` with the package of checkout ``root``; wall seconds and the CPU
    seconds of its whole process tree (workers included). ``bytecode``: the side's
    ``PYTHONPYCACHEPREFIX`` (None: no bytecode written or read from a prefix)."""
    command = [sys.executable, "-c", "import sys; from acdb_gym.cli import main; sys.exit(main())"]
    environment = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(root)}
    if bytecode is None:
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        environment["PYTHONPYCACHEPREFIX"] = str(bytecode)
    start = time.perf_counter()
    finished = subprocess.run(
        [sys.executable, "-c", _REAPER, *command, *arguments],
        check=True,
        capture_output=True,
        text=True,
        env=environment,
        # Not a checkout: `python -c` puts the working directory first on sys.path.
        cwd=cwd,
    )
    wall = time.perf_counter() - start
    return wall, float(finished.stdout.split()[-1])


def sweep_arguments(out: Path, smoke: bool) -> list[str]:
    """The README's main command (with ``--no-progress``; smoke: a small slice of it)."""
    arguments = ["sweep", "--ladder", "v0", "--workers", "2", "--out", str(out), "--no-progress"]
    if smoke:
        arguments += ["--levels", "L0", "--seeds", "1", "--agents", "oracle,random"]
    return arguments


def one_side(
    root: Path, scratch: Path, results: Path | None, smoke: bool, bytecode: Path | None
) -> dict[str, tuple]:
    """The three measures of one checkout in one round (``results``: the shared rows, or None
    to report on this side's own sweep)."""
    scratch.mkdir(parents=True)
    run = scratch / "run"
    times = {"main command": acdb(root, sweep_arguments(run, smoke), scratch, bytecode)}
    rows = results if results is not None else run / "results.jsonl"
    report_dir = scratch / "report"
    report_dir.mkdir()
    shutil.copyfile(rows, report_dir / "results.jsonl")
    times["report, first"] = acdb(root, ["report", str(report_dir)], scratch, bytecode)
    times["report, again"] = acdb(root, ["report", str(report_dir)], scratch, bytecode)
    return times


def warm_up(root: Path, scratch: Path, bytecode: Path) -> None:
    """Compile a side's bytecode into its prefix: a one-seed sweep of L0 with the same agents
    (the same modules, in the command and its workers) and its report, untimed."""
    scratch.mkdir(parents=True)
    run = scratch / "run"
    arguments = ["sweep", "--ladder", "v0", "--levels", "L0", "--seeds", "1", "--workers", "2"]
    acdb(root, [*arguments, "--out", str(run), "--no-progress"], scratch, bytecode)
    acdb(root, ["report", str(run)], scratch, bytecode)


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument(
        "--peer",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="a peer checkout (its root, holding acdb_gym/); repeatable",
    )
    parser.add_argument("--rounds", type=int, default=None, help="paired rounds (default 4)")
    parser.add_argument(
        "--bytecode",
        choices=("cached", "none"),
        default="cached",
        help="cached: modules compiled once per side (as installed); none: every process "
        "compiles from source (PYTHONDONTWRITEBYTECODE=1)",
    )
    args = parser.parse_args()
    rounds = args.rounds or args.repeats or (1 if args.smoke else 4)
    sides = {"this": THIS}
    for text in args.peer:
        label, _, directory = text.partition("=")
        if not directory or not (Path(directory) / "acdb_gym").is_dir():
            parser.error(f"--peer wants LABEL=DIR with DIR/acdb_gym, got {text!r}")
        sides[label] = Path(directory).resolve()
    print_header(
        "The README's main command and `acdb report`, paired against peer checkouts",
        f"{rounds} round(s); sides: "
        + ", ".join(f"{label} = {root}" for label, root in sides.items())
        + f"; bytecode {args.bytecode}. Load average at the start: {load_average()}.",
    )
    root = Path(tempfile.mkdtemp(prefix="acdb-bench-main-"))
    prefixes: dict[str, Path | None] = {
        label: None if args.bytecode == "none" else root / f"pycache-{label}" for label in sides
    }
    measured: dict[str, dict[str, list[tuple[float, float]]]] = {
        label: {measure: [] for measure in MEASURES} for label in sides
    }
    shared: Path | None = None
    try:
        for label, prefix in prefixes.items():
            if prefix is not None:
                warm_up(sides[label], root / f"warm-{label}", prefix)
        labels = list(sides)
        for number in range(rounds):
            order = labels[number % len(labels) :] + labels[: number % len(labels)]
            if shared is None:  # this checkout's first sweep gives the shared rows
                order = ["this", *[label for label in order if label != "this"]]
            for label in order:
                scratch = root / f"{number}-{label}"
                times = one_side(sides[label], scratch, shared, args.smoke, prefixes[label])
                if shared is None:
                    shared = root / "results.jsonl"
                    shutil.copyfile(scratch / "run" / "results.jsonl", shared)
                for measure, value in times.items():
                    measured[label][measure].append(value)
                shutil.rmtree(scratch, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(
        markdown_table(
            ["measure", "side", "wall (median)", "CPU (median)", "runs"], _rows(measured)
        )
    )
    peers = [label for label in sides if label != "this"]
    if peers:
        print()
        print(
            markdown_table(
                ["measure", "this / peer", "wall ratio", "CPU ratio"], _ratios(measured, peers)
            )
        )
    print(f"\nLoad average at the end: {load_average()}.")


def _rows(measured: dict[str, dict[str, list[tuple[float, float]]]]) -> list[list[str]]:
    rows = []
    for measure in MEASURES:
        for label, by_measure in measured.items():
            values = by_measure[measure]
            wall = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[1] for v in values)
            rows.append([measure, label, f"{wall:.2f} s", f"{cpu:.2f} s", str(len(values))])
    return rows


def _ratios(
    measured: dict[str, dict[str, list[tuple[float, float]]]], peers: list[str]
) -> list[list[str]]:
    """Per measure and peer: the median over rounds of this / peer, with the range."""
    rows = []
    for measure in MEASURES:
        for peer in peers:
            pairs = list(zip(measured["this"][measure], measured[peer][measure], strict=True))
            cells = []
            for index in (0, 1):
                ratios = [mine[index] / theirs[index] for mine, theirs in pairs]
                cells.append(
                    f"{statistics.median(ratios):.2f}× ({min(ratios):.2f}–{max(ratios):.2f})"
                )
            rows.append([measure, f"this / {peer}", *cells])
    return rows


if __name__ == "__main__":
    main()
