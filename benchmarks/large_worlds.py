"""Scaling of the large ladder (d = 20, 50, 100, 200, 500): reset, intervene, score, PC episodes
and memory per env, with the whole-world faithfulness rule as the baseline of reset.

For each level of ``ALL_LADDERS["large"]``:

* **reset, fresh worlds**: ``env.reset(seed=s)`` on new seeds, so every reset generates a world
  under the level's rule (``faithfulness_rule="redraw_edges"``: only failing edges' weights are
  redrawn). The baseline is the same spec under the default rule (``"reject_world"``: whole
  worlds redrawn until every edge passes), timed in a forked child and abandoned when one world
  takes over the cap.
* **intervene**: ``env.step(actions.intervene(...))`` on the level's first manifest world over
  the whole budget (targets cycling through the nodes), each step paired with the numpy floor
  of the same draw (``standard_normal`` noise times the precomputed mixing matrix).
* **score**: ``core.scoring.score`` of PC's graph against the world (cold: a new report each
  call, the true CPDAG cached as in episodes).
* **pc / pc_greedy episode**: one whole episode of the agent (``run_episode``, reset included)
  on manifest worlds, PC's shared result cleared before each, so each episode runs PC.
* **memory per env**: resident memory (``VmRSS``) gained by a forked child that makes one env,
  resets it on a manifest world and spends the whole budget on interventions, keeping the last
  observation (as an agent does); the observation size of both modes is computed from the
  spaces.

Run: ``python benchmarks/large_worlds.py [--smoke] [--repeats N] [--levels L0,L1]``
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Timing,
    base_parser,
    fmt_seconds,
    markdown_table,
    measure,
    print_header,
    run_capped,
)

from acdb_gym.agents.base import run_episode
from acdb_gym.core.ladders.shipped import LARGE_LADDER, Level
from acdb_gym.core.scoring import score
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.discovery import pc, pc_cpdag
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv, observation_space
from acdb_gym.registry import get_agent

MIB = 1024 * 1024


def _rss() -> int:
    with open("/proc/self/status", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0  # pragma: no cover


def reset_fresh(level: Level, repeats: int) -> Timing:
    env = ACDBEnv(level.name, ladder="large")
    seeds = iter(range(900_000, 901_000))
    return measure(lambda: env.reset(seed=next(seeds)), repeats=repeats, warmup=1, budget=8.0)


def reset_whole_world(level: Level, repeats: int, cap: float) -> Any:
    spec = dataclasses.replace(level.spec, faithfulness_rule="reject_world")
    seeds = iter(range(900_000, 901_000))
    timing, _ = run_capped(
        lambda: None,
        lambda _: generate_instance(spec, next(seeds)),
        repeats=min(repeats, 5),
        cap=cap,
    )
    return timing


def intervene_paired(level: Level) -> tuple[float, float]:
    env = ACDBEnv(level.name, ladder="large", max_steps=100_000)
    steps: list[float] = []
    floors: list[float] = []
    for index in range(2):
        env.reset(options={"manifest_index": index})
        scm = env.level.instance(index).scm
        mixing, noise_std = scm.mixing, scm.noise_std
        rng = np.random.default_rng(index)
        n_int, d = level.spec.n_int, level.spec.d
        for slot in range(env.session.budget):
            action = actions.intervene(slot % d, 1.0)
            start = time.perf_counter()
            env.step(action)
            middle = time.perf_counter()
            noise = rng.standard_normal((n_int, d)) * noise_std
            noise[:, slot % d] = 1.0
            np.dot(noise, mixing)
            floors.append(time.perf_counter() - middle)
            steps.append(middle - start)
    return float(np.median(steps)), float(np.median(floors))


def score_timing(level: Level, repeats: int) -> Timing:
    instance = level.instance(0)
    estimate = pc_cpdag(instance.d_obs)
    return measure(lambda: score(instance, estimate), repeats=repeats, budget=3.0)


def episode_timing(level: Level, agent_name: str, repeats: int) -> Timing:
    env = ACDBEnv(level.name, ladder="large", max_steps=100_000)
    indices = iter(range(len(level.manifest)))

    def episode() -> None:
        pc._SHARED.clear()
        run_episode(env, get_agent(agent_name).build(0, {}), manifest_index=next(indices))

    return measure(episode, repeats=repeats, warmup=1, budget=20.0, min_repeats=2)


def _memory_child(name: str, connection: Any) -> None:
    before = _rss()
    env = ACDBEnv(name, ladder="large", max_steps=100_000)
    env.reset(options={"manifest_index": 0})
    observation: Any = None
    for slot in range(env.session.budget):
        observation = env.step(actions.intervene(slot % env.n_nodes, 1.0))[0]
    connection.send((_rss() - before, observation is not None))


def memory_per_env(level: Level) -> int:
    context = mp.get_context("fork")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_memory_child, args=(level.name, child))
    process.start()
    grown, _ = parent.recv()
    process.join()
    return int(grown)


def observation_mib(level: Level, mode: str) -> float:
    space = observation_space(level, 16, mode)  # type: ignore[arg-type]
    return sum(int(np.prod(box.shape)) * box.dtype.itemsize for box in space.values()) / MIB  # type: ignore[attr-defined]


def _with_cpu(timing: Timing) -> str:
    """The wall-time cell and the median CPU time (which a busy machine inflates less)."""
    return f"{timing.cell()}; CPU {timing.cpu_cell()}"


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--levels", default=",".join(LARGE_LADDER), help="large-ladder levels")
    parser.add_argument("--cap", type=float, default=20.0, help="seconds per whole-world draw")
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.smoke else 9)
    names = ["L0"] if args.smoke else args.levels.split(",")
    print_header(
        "Large worlds: the large ladder from d = 20 to 500",
        "Medians (IQR, fastest, runs). Reset baseline: the same spec with whole worlds redrawn.",
    )
    rows = []
    for name in names:
        level = LARGE_LADDER[name]
        spec = level.spec
        fresh = reset_fresh(level, repeats)
        whole = reset_whole_world(level, repeats, args.cap)
        step, floor = intervene_paired(level)
        rows.append(
            [
                name,
                spec.d,
                spec.k,
                f"{spec.n_obs} / {spec.n_int}",
                f"{fresh.cell()}; CPU {fresh.cpu_cell()}",
                whole.cell(),
                f"{fmt_seconds(step)} / {fmt_seconds(floor)} = {step / floor:.2f}×",
                _with_cpu(score_timing(level, repeats)),
                _with_cpu(episode_timing(level, "pc", repeats)),
                _with_cpu(episode_timing(level, "pc_greedy", repeats)),
                f"{memory_per_env(level) / MIB:.1f} MiB",
                f"{observation_mib(level, 'raw'):.2f} / {observation_mib(level, 'stats'):.2f} MiB",
            ]
        )
        print("| " + " | ".join(str(cell) for cell in rows[-1]) + " |", file=sys.stderr, flush=True)
    print(
        markdown_table(
            [
                "level",
                "d",
                "k",
                "n_obs / n_int",
                "reset (fresh world)",
                "reset, whole-world rule (baseline)",
                "intervene step / paired numpy floor",
                "score",
                "pc episode",
                "pc_greedy episode",
                "memory per env (RSS)",
                "observation raw / stats",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
