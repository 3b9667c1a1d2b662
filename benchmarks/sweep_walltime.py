"""Wall time of the full offline v0 sweep with 1 and 2 workers (`acdb sweep`).

Runs ``acdb sweep --ladder v0 --workers N --out <fresh tmp dir> --no-report --no-progress``
(all levels, all 8 manifest seeds, the default offline agents: random, pc, pc_greedy, oracle,
sortnregress; both panels) as a subprocess, once per worker count and repeat, each into a new
directory so nothing is skipped as already done. Reports wall time, the CPU time the sweep's
processes used (user + system, from ``getrusage(RUSAGE_CHILDREN)``), CPU / wall (the parallelism
actually obtained) and the load average seen before and after each run: other processes on the
machine compete for the same cores, and a load average above the core count means they did.

Run: ``python benchmarks/sweep_walltime.py [--smoke] [--repeats N] [--workers 1 2]``
(``--smoke``: one worker count, level L0, one seed, the oracle and random agents).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Timing, base_parser, load_average, markdown_table, print_header


def sweep_command(workers: int, out: Path, smoke: bool) -> list[str]:
    """The ``acdb sweep`` command line (through this interpreter's ``acdb_gym.cli``)."""
    command = [
        sys.executable,
        "-c",
        "import sys; from acdb_gym.cli import main; sys.exit(main())",
        "sweep",
        "--ladder",
        "v0",
        "--workers",
        str(workers),
        "--out",
        str(out),
        "--no-report",
        "--no-progress",
    ]
    if smoke:
        command += ["--levels", "L0", "--seeds", "1", "--agents", "oracle,random"]
    return command


def timed_sweep(workers: int, smoke: bool) -> tuple[float, float, str, str]:
    """Wall time, children's CPU time, and the load average before and after one sweep."""
    root = Path(tempfile.mkdtemp(prefix="acdb-bench-sweep-"))
    try:
        before = load_average()
        usage_start = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            sweep_command(workers, root / "run", smoke),
            check=True,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "MPLBACKEND": "Agg"},
            # Not the caller's directory: `python -c` puts the working directory first on
            # sys.path, which would shadow a PYTHONPATH-selected acdb_gym with a checkout's.
            cwd=root,
        )
        wall = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (usage.ru_utime - usage_start.ru_utime) + (usage.ru_stime - usage_start.ru_stime)
        return wall, cpu, before, load_average()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    repeats = args.repeats or (1 if args.smoke else 3)
    worker_counts = args.workers[:1] if args.smoke else args.workers

    print_header(
        "Offline v0 sweep wall time",
        f"Median of {repeats} run(s) per worker count, each into a fresh --out directory. "
        f"Machine: {os.cpu_count()} logical cores.",
    )
    rows = []
    walls: dict[int, Timing] = {}
    for workers in worker_counts:
        results = [timed_sweep(workers, args.smoke) for _ in range(repeats)]
        wall = Timing(tuple(r[0] for r in results))
        cpu = Timing(tuple(r[1] for r in results))
        walls[workers] = wall
        loads = "; ".join(f"{r[2]} → {r[3]}" for r in results)
        rows.append([workers, wall.cell(), cpu.cell(), f"{cpu.median / wall.median:.2f}", loads])
    print(
        markdown_table(
            [
                "workers",
                "wall time",
                "CPU time (user + sys)",
                "CPU / wall",
                "load avg before → after",
            ],
            rows,
        )
    )
    if 1 in walls and len(walls) > 1:
        print()
        for workers, wall in walls.items():
            if workers != 1:
                speedup = walls[1].median / wall.median
                print(f"Speed-up of {workers} workers over 1: {speedup:.2f}×.")


if __name__ == "__main__":
    main()
