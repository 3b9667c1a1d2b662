"""Reset time per SCM family: ACDBEnv.reset on each v1 level and its non-Gaussian and nonlinear
twins, on preflighted seeds, against today's linear-Gaussian reset in the same run.

Each timed call is ``env.reset(options={"manifest_index": i})`` for the next manifest index,
with the instance cache cleared first, so every reset generates its world from the seed
(rejection sampling, acceptance rule, observational sample, minimum intervention set) as the
first reset on a seed does. The three families of one level are measured interleaved, index by
index, so a busier moment of the machine hits all three alike. The target: under 10 ms median
for every new family's level; the ratio column is each family's median over the linear one's.

Run: ``python benchmarks/family_reset.py [--smoke] [--repeats N]``
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Timing, base_parser, fmt_seconds, markdown_table, print_header, timed_cold_reset

from acdb_gym.core.ladders.shipped import LADDERS, LEVEL_NAMES
from acdb_gym.envs.acdb_env import ACDBEnv

LADDER_NAMES = ("v1", "v1-nongaussian", "v1-nonlinear")
TARGET = 0.010


def measure_level(level: str, repeats: int) -> dict[str, Timing]:
    """Timings of ``repeats`` cold resets per family on ``level``, interleaved."""
    envs = {ladder: ACDBEnv(level, ladder=ladder) for ladder in LADDER_NAMES}
    for env in envs.values():
        env.reset(seed=0)  # warm-up: imports, first allocations
    walls: dict[str, list[float]] = {ladder: [] for ladder in LADDER_NAMES}
    cpus: dict[str, list[float]] = {ladder: [] for ladder in LADDER_NAMES}
    for index in range(repeats):
        for ladder, env in envs.items():
            wall, cpu = timed_cold_reset(env, index)
            walls[ladder].append(wall)
            cpus[ladder].append(cpu)
    return {ladder: Timing(tuple(walls[ladder]), tuple(cpus[ladder])) for ladder in LADDER_NAMES}


def main() -> None:
    parser = base_parser(__doc__)
    args = parser.parse_args()
    repeats = 5 if args.smoke else (args.repeats or 60)
    levels = LEVEL_NAMES[:1] if args.smoke else LEVEL_NAMES
    print_header(
        "ACDBEnv.reset per SCM family (cold, preflighted seeds)",
        f"{repeats} manifest seeds per level and family, interleaved; instance cache cleared "
        "before each reset. Median wall time (IQR), median CPU time, ratio of medians against "
        "the linear-Gaussian v1 level in the same run.",
    )
    rows = []
    for level in levels:
        timings = measure_level(level, repeats)
        linear = timings["v1"]
        spec = LADDERS["v1"][level].spec
        for ladder, timing in timings.items():
            q1, q3 = timing.quartiles
            family = LADDERS[ladder][level].spec.family
            meets = "–" if ladder == "v1" else ("yes" if timing.median < TARGET else "no")
            rows.append(
                [
                    LADDERS[ladder][level].env_id,
                    family,
                    f"{spec.d}/{spec.k}/{spec.n_obs}",
                    f"{fmt_seconds(timing.median)} ({fmt_seconds(q1)}–{fmt_seconds(q3)})",
                    timing.cpu_cell(),
                    f"{timing.median / linear.median:.2f}×",
                    f"{statistics.median(timing.cpu) / statistics.median(linear.cpu):.2f}×",
                    meets,
                ]
            )
    headers = ["env id", "family", "d/k/n_obs", "reset wall", "CPU", "wall ÷ linear"]
    headers += ["CPU ÷ linear", "< 10 ms"]
    print(markdown_table(headers, rows))


if __name__ == "__main__":
    main()
