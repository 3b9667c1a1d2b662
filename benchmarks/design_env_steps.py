"""InterventionDesignEnv steps per second with estimator "pc" and "true_cpdag" (reset apart).

For each v0 level and each estimator, episodes run with a fixed policy: intervene on nodes
0, 1, 2, ... while the budget lasts, then "stop". Timed separately: ``reset()`` (draws a fresh
instance; with ``"pc"`` it also runs PC on the observational data), each intervention step (a
new experiment, orientation tests, Meek closure) and the final "stop" step (scores the
estimate). "steps/s" counts intervention and stop steps, without resets. For scale, the same
machine's Gymnasium ``CartPole-v1`` step (a trivial env: Gymnasium's own per-step floor) is
timed in the same run.

A second table times **fresh steps** (issue 40's measure): episodes of uniformly random valid
actions where every reset is ``reset()`` without a seed, so each episode is a new world
(generation, its sample, PC, the summaries) and the resets' time counts: steps per wall second
and per CPU second (``time.process_time``, which other processes on a busy machine inflate
less), over ``--fresh-episodes`` episodes per level, beside CartPole's steps (its resets
included) in the same run.

Run: ``python benchmarks/design_env_steps.py [--smoke] [--repeats N] [--fresh-episodes N]
[--levels L1,L2]``
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _common import Timing, base_parser, markdown_table, measure, print_header

from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.envs.design.env import InterventionDesignEnv


def run_episodes(env: InterventionDesignEnv, episodes: int) -> tuple[Timing, Timing, Timing]:
    """Reset, intervention-step and stop-step timings over ``episodes`` episodes."""
    resets: list[float] = []
    steps: list[float] = []
    stops: list[float] = []
    env.reset(seed=0)
    for _ in range(episodes):
        start = time.perf_counter()
        env.reset()
        resets.append(time.perf_counter() - start)
        target = 0
        while True:
            mask = env.action_masks()
            action = target if target < env.n_nodes and mask[target] else env.n_nodes
            start = time.perf_counter()
            _, _, terminated, _, _ = env.step(action)
            elapsed = time.perf_counter() - start
            if terminated:
                stops.append(elapsed)
                break
            steps.append(elapsed)
            target += 1
    if not steps:  # a budget of 0 everywhere: no intervention steps
        steps.append(float("nan"))
    return Timing(tuple(resets)), Timing(tuple(steps)), Timing(tuple(stops))


def fresh_rates(env: InterventionDesignEnv, episodes: int, seed: int = 0) -> tuple[float, float]:
    """Steps per wall second and per CPU second of ``episodes`` fresh episodes (random valid
    actions; every ``reset()`` unseeded, so every episode is a new world; resets timed)."""
    policy = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(episodes):
        env.reset()
        terminated = False
        while not terminated:
            mask = env.action_masks()
            _, _, terminated, _, _ = env.step(int((policy.random(mask.shape) * mask).argmax()))
            steps += 1
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def cartpole_rates(steps: int) -> tuple[float, float]:
    """CartPole-v1's steps per wall and CPU second under random actions, resets included."""
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def cartpole_step(repeats: int) -> Timing:
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    env.reset(seed=0)

    def step() -> None:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()

    return measure(step, repeats=repeats)


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--episodes", type=int, default=None, help="episodes per cell")
    parser.add_argument(
        "--fresh-episodes", type=int, default=None, help="episodes per level, fresh table"
    )
    parser.add_argument("--levels", default=None, help="comma-separated v0 levels (default all)")
    args = parser.parse_args()
    episodes = args.episodes or args.repeats or (3 if args.smoke else 30)
    warnings.filterwarnings("ignore")

    print_header(
        "InterventionDesignEnv steps per second",
        "Median wall time per call (IQR, fastest run, calls).",
    )
    rows = []
    levels = list(LADDERS["v0"].values())[: 1 if args.smoke else None]
    if args.levels:
        levels = [LADDERS["v0"][name] for name in args.levels.split(",")]
    for level in levels:
        for estimator in ("true_cpdag", "pc"):
            env = InterventionDesignEnv(level.name, ladder="v0", estimator=estimator)
            reset, step, stop = run_episodes(env, episodes)
            n_steps = len(step.times) + len(stop.times)
            total = sum(step.times) + sum(stop.times)
            rows.append(
                [
                    level.name,
                    estimator,
                    reset.cell(),
                    step.cell(),
                    stop.cell(),
                    f"{n_steps / total:,.0f}",
                ]
            )
    cartpole = cartpole_step(200 if not args.smoke else 20)
    rows.append(["CartPole-v1", "–", "–", cartpole.cell(), "–", f"{1 / cartpole.median:,.0f}"])
    headers = ["level", "estimator", "reset", "intervene step", "stop step", "steps/s"]
    print(markdown_table(headers, rows))

    fresh_episodes = args.fresh_episodes or (20 if args.smoke else 1000)
    wall_peer, cpu_peer = cartpole_rates(2000 if args.smoke else 50_000)
    fresh_rows = []
    for level in levels:
        env = InterventionDesignEnv(level.name, ladder="v0")
        wall, cpu = fresh_rates(env, fresh_episodes)
        fresh_rows.append(
            [
                level.name,
                f"{wall:,.0f} ({cpu:,.0f})",
                f"{wall_peer:,.0f} ({cpu_peer:,.0f})",
                f"{cpu / cpu_peer:.4f}",
            ]
        )
    print(
        f"\nFresh steps: every episode a new world, resets included ({fresh_episodes} episodes "
        "of random valid actions per level, estimator pc); steps per wall second (per CPU "
        "second). Goal (issue 40): 2,000 on L1."
    )
    print(
        markdown_table(
            ["level", "fresh steps/s", "CartPole-v1 steps/s (same run)", "CPU rate / CartPole's"],
            fresh_rows,
        )
    )


if __name__ == "__main__":
    main()
