"""Reset time on the real ladder's d = 100 DREAM4 levels, against the large ladder's d = 100
level (an ER graph with 150 edges, the same generator and faithfulness rule) in the same run.

Each timed call is ``env.reset(options={"manifest_index": i})`` for the next manifest index with
the instance cache cleared (worlds of 100,000 observational values are not cached anyway), so
every reset generates its world from the seed: graph relabelling, weight draws and edge redraws,
the observational sample and the minimum intervention set (the difficulty covariate is computed
when read, not at reset). The levels are measured interleaved, index by index. The issue's target is 50 ms at d = 100.

BLAS is pinned to one thread, as in a sweep worker (threads spinning on a loaded machine count
as CPU time), unless the caller set ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` or
``MKL_NUM_THREADS``.

Run: ``python benchmarks/real_reset.py [--smoke] [--repeats N]``
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Timing, base_parser, fmt_seconds, markdown_table, print_header, timed_cold_reset
from threadpoolctl import threadpool_limits

from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.envs.acdb_env import ACDBEnv

PEER = ("large", "L2")
LEVELS = (PEER, *(("real", f"DREAM4-{n}") for n in range(1, 6)))
TARGET = 0.050


def main() -> None:
    parser = base_parser(__doc__)
    args = parser.parse_args()
    repeats = 2 if args.smoke else (args.repeats or 10)
    print_header(
        "ACDBEnv.reset at d = 100: DREAM4 wirings against the large ladder's ER level",
        f"{repeats} manifest seeds per level, interleaved; cold resets. Median wall time (IQR), "
        "median CPU time, ratio of CPU medians against large L2 in the same run.",
    )
    pinned = not any(
        name in os.environ
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    )
    with threadpool_limits(1) if pinned else contextlib.nullcontext():
        rows = _measure(repeats)
    headers = ["env id", "d/k", "reset wall", "CPU", "CPU ÷ large L2", "CPU < 50 ms"]
    print(markdown_table(headers, rows))


def _measure(repeats: int) -> list[list[str]]:
    envs = {key: ACDBEnv(key[1], ladder=key[0]) for key in LEVELS}
    for env in envs.values():
        env.reset(options={"manifest_index": 0})  # warm-up: imports, first allocations
    walls: dict[tuple[str, str], list[float]] = {key: [] for key in LEVELS}
    cpus: dict[tuple[str, str], list[float]] = {key: [] for key in LEVELS}
    for index in range(repeats):
        for key, env in envs.items():
            wall, cpu = timed_cold_reset(env, index)
            walls[key].append(wall)
            cpus[key].append(cpu)
    timings = {key: Timing(tuple(walls[key]), tuple(cpus[key])) for key in LEVELS}
    peer_cpu = statistics.median(timings[PEER].cpu)
    rows = []
    for key, timing in timings.items():
        level = ALL_LADDERS[key[0]][key[1]]
        q1, q3 = timing.quartiles
        cpu = statistics.median(timing.cpu)
        rows.append(
            [
                level.env_id,
                f"{level.spec.d}/{level.spec.k}",
                f"{fmt_seconds(timing.median)} ({fmt_seconds(q1)}–{fmt_seconds(q3)})",
                timing.cpu_cell(),
                f"{cpu / peer_cpu:.2f}×",
                "yes" if cpu < TARGET else "no",
            ]
        )
    return rows


if __name__ == "__main__":
    main()
