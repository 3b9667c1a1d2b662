"""The stats-mode intervene step against the raw-mode step on the same world, at d = 1,000.

Two envs on the large ladder's world at ``d`` (manifest instance 0; ``n_int = 10``), one with
``observation="stats"`` and one with ``observation="raw"``, reset once each (untimed). Then
their intervene steps alternate, one of each per target (targets cycling through the nodes),
so both see the same load; each step's observation replaces the previous one, as an agent
that keeps its latest observation does (the previous one is still held while the step runs).
Every ``--steps`` steps both envs are reset on the same instance (untimed) so that an episode's
budget never runs out. Reported: median wall and CPU time of a step per mode and the stats /
raw ratio (the goal: at most 2×).

Run: ``python benchmarks/stats_step.py [--smoke] [--d 1000] [--steps 40]``
(``--smoke``: d = 60, 10 steps).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, fmt_seconds, load_average, markdown_table, print_header
from large_worlds import level_for

from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv


def timed_step(env: ACDBEnv, action: Any, held: list[Any]) -> tuple[float, float]:
    """Wall and CPU seconds of one step; its observation replaces the one in ``held``."""
    wall, cpu = time.perf_counter(), time.process_time()
    observation = env.step(action)[0]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    held[0] = observation
    return wall, cpu


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--d", type=int, default=1000, help="number of variables")
    parser.add_argument("--steps", type=int, default=None, help="timed steps per mode")
    args = parser.parse_args()
    d = 60 if args.smoke else args.d
    steps = args.steps or (10 if args.smoke else 40)
    level = level_for(d)
    print_header(
        f"Stats-mode intervene step against the raw step at d = {d}",
        f"{steps} steps per mode, alternating; n_int = {level.spec.n_int}. "
        f"Load average at the start: {load_average()}.",
    )
    envs = {mode: ACDBEnv(level, observation=mode, max_steps=100_000) for mode in ("stats", "raw")}
    held: dict[str, list[Any]] = {mode: [None] for mode in envs}
    times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in envs}
    budget = 0
    for step in range(steps):
        if step % max(budget, 1) == 0 or step == 0:
            for mode, env in envs.items():
                held[mode][0] = env.reset(options={"manifest_index": 0})[0]
            budget = envs["raw"].session.budget
        action = actions.intervene(step % d, 1.0)
        for mode, env in envs.items():
            times[mode].append(timed_step(env, action, held[mode]))
    rows = []
    for mode, values in times.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        rows.append([mode, fmt_seconds(wall), fmt_seconds(cpu), str(len(values))])
    ratio_wall = statistics.median(v[0] for v in times["stats"]) / statistics.median(
        v[0] for v in times["raw"]
    )
    ratio_cpu = statistics.median(v[1] for v in times["stats"]) / statistics.median(
        v[1] for v in times["raw"]
    )
    print(markdown_table(["mode", "step wall (median)", "step CPU (median)", "steps"], rows))
    print(f"\nstats / raw: {ratio_wall:.2f}× wall, {ratio_cpu:.2f}× CPU (goal: at most 2×).")
    print(f"Load average at the end: {load_average()}.")


if __name__ == "__main__":
    main()
