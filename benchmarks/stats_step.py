"""The stats-mode intervene step against the raw-mode step on the same world, at d = 1,000.

Two envs on the large ladder's world at ``d`` (manifest instance 0; ``n_int = 10``), one with
``observation="stats"`` and one with ``observation="raw"``, reset once each (untimed). Then
their intervene steps alternate, one of each per target (targets cycling through the nodes),
so both see the same load; each step's observation replaces the previous one, as an agent
that keeps its latest observation does (the previous one is still held while the step runs).
Two episodes are run: the first writes the envs' slot blocks fresh (their pages are faulted in),
the second reuses them (what every later episode of an env does). Reported per episode: median
wall and CPU time of a step per mode and the stats / raw ratio (the goal: at most 2×). The
script runs on any revision of the package (``PYTHONPATH=DIR``), to compare revisions.

Run: ``python benchmarks/stats_step.py [--smoke] [--d 1000] [--steps 40]``
(``--smoke``: d = 60, 10 steps).
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, fmt_seconds, load_average, markdown_table, print_header

from acdb_gym.core.ladders.custom import CustomLevel
from acdb_gym.core.ladders.shipped import LARGE_LADDER, Level
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv

MODES = ("stats", "raw")


def level_for(d: int) -> Level:
    """The large ladder's level at ``d``, or its L4 generator at ``d`` as a one-seed level (as
    ``large_worlds.py`` picks them)."""
    for level in LARGE_LADDER.values():
        if level.spec.d == d:
            return level
    spec = dataclasses.replace(LARGE_LADDER["L4"].spec, d=d, k=3 * d // 2, n_int=10)
    return CustomLevel(f"d{d}", spec).level(1)


def timed_step(env: ACDBEnv, action: Any, held: list[Any]) -> tuple[float, float]:
    """Wall and CPU seconds of one step; its observation replaces the one in ``held``."""
    wall, cpu = time.perf_counter(), time.process_time()
    observation = env.step(action)[0]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    held[0] = observation
    return wall, cpu


def episode(envs: dict[str, ACDBEnv], steps: int) -> dict[str, list[tuple[float, float]]]:
    """One episode of each env on manifest instance 0, their steps alternating."""
    held = {mode: [env.reset(options={"manifest_index": 0})[0]] for mode, env in envs.items()}
    d = envs["raw"].n_nodes
    steps = min(steps, envs["raw"].session.budget)
    times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in envs}
    for step in range(steps):
        action = actions.intervene(step % d, 1.0)
        for mode, env in envs.items():
            times[mode].append(timed_step(env, action, held[mode]))
    return times


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--d", type=int, default=1000, help="number of variables")
    parser.add_argument("--steps", type=int, default=None, help="timed steps per episode")
    args = parser.parse_args()
    d = 60 if args.smoke else args.d
    steps = args.steps or (10 if args.smoke else 40)
    level = level_for(d)
    print_header(
        f"Stats-mode intervene step against the raw step at d = {d}",
        f"Two episodes of up to {steps} steps per mode, the modes alternating step by step; "
        f"n_int = {level.spec.n_int}. Load average at the start: {load_average()}.",
    )
    envs = {mode: ACDBEnv(level, observation=mode, max_steps=100_000) for mode in MODES}
    rows = []
    for name in ("first (fresh blocks)", "second (blocks reused)"):
        times = episode(envs, steps)
        medians = {
            mode: (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
            for mode, values in times.items()
        }
        stats, raw = medians["stats"], medians["raw"]
        rows.append(
            [
                name,
                f"{fmt_seconds(stats[0])} / {fmt_seconds(stats[1])}",
                f"{fmt_seconds(raw[0])} / {fmt_seconds(raw[1])}",
                f"{stats[0] / raw[0]:.2f}×",
                f"{stats[1] / raw[1]:.2f}×",
                str(len(times["raw"])),
            ]
        )
    print(
        markdown_table(
            [
                "episode",
                "stats step wall / CPU",
                "raw step wall / CPU",
                "stats / raw wall",
                "stats / raw CPU",
                "steps",
            ],
            rows,
        )
    )
    print(f"\nGoal: stats / raw at most 2×. Load average at the end: {load_average()}.")


if __name__ == "__main__":
    main()
