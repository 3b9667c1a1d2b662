"""The intervene step in each observation mode against its paired numpy floor, at d = 100.

Levels: the synthetic d = 100 world of the issue (1000 observational rows, 200 rows per
experiment, 101 slots: a 15.4 MiB zero-padded block) and v1 L3 (d = 20). Each episode is reset
on a new seed (untimed) and every intervention of the budget is one timed ``env.step``, paired
with the numpy floor of the same draw (standard normal noise times the precomputed mixing
matrix, timed right after). The step's result is dropped at once, as an agent that keeps only
its latest observation does. A revision without ``observation=`` (the previous one, run as a
baseline) is measured in its raw mode only.

Run: ``python benchmarks/observation_modes.py [--smoke] [--repeats N]``
"""

from __future__ import annotations

import inspect
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, fmt_seconds, make_env_for_spec, markdown_table, print_header

from acdb_gym.core.ladders.shipped import LevelSpec
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv

ISSUE_WORLD = LevelSpec(d=100, k=150, n_obs=1000, n_int=200, noise_var=1.0, slack=1)


def _has_modes() -> bool:
    return "observation" in inspect.signature(ACDBEnv.__init__).parameters


def paired(env: Any, episodes: int) -> tuple[float, float, int]:
    steps: list[float] = []
    floors: list[float] = []
    d = env.unwrapped.n_nodes
    for episode in range(episodes):
        env.reset(seed=episode)
        scm = env.unwrapped._instance.scm
        n_int = env.unwrapped.level.spec.n_int
        rng = np.random.default_rng(episode)
        for slot in range(env.unwrapped.session.budget):
            action = actions.intervene(slot % d, 1.0)
            start = time.perf_counter()
            env.step(action)
            middle = time.perf_counter()
            noise = rng.standard_normal((n_int, d)) * scm.noise_std
            noise[:, slot % d] = 1.0
            np.dot(noise, scm.mixing)
            floors.append(time.perf_counter() - middle)
            steps.append(middle - start)
    return float(np.median(steps)), float(np.median(floors)), len(steps)


def main() -> None:
    args = base_parser(__doc__).parse_args()
    episodes = args.repeats or (1 if args.smoke else 8)
    print_header("Intervene step per observation mode vs the numpy floor")
    modes = ["raw", "stats"] if _has_modes() else ["raw"]
    worlds: list[tuple[str, Any]] = [("v1 L3 (d = 20)", None)]
    if not args.smoke:
        worlds.insert(0, ("synthetic d = 100, n_int = 200", ISSUE_WORLD))
    rows = []
    for name, spec in worlds:
        for mode in modes:
            kwargs: dict[str, Any] = {"observation": mode} if _has_modes() else {}
            if spec is None:
                env = ACDBEnv("L3", ladder="v1", max_steps=10_000, **kwargs)
            else:
                env = make_env_for_spec(spec, max_steps=10_000, **kwargs)
            step, floor, n = paired(env, episodes)
            size = sum(np.asarray(a).nbytes for a in env.reset(seed=0)[0].values()) / 2**20
            rows.append(
                [
                    name,
                    mode,
                    f"{size:.2f} MiB",
                    fmt_seconds(step),
                    fmt_seconds(floor),
                    f"{step / floor:.2f}×",
                    n,
                ]
            )
    print(
        markdown_table(
            [
                "world",
                "mode",
                "observation",
                "step (median)",
                "paired floor",
                "step / floor",
                "steps",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
