"""Large worlds at the floor (d = 100 to 2,000): reset, the intervene step and memory per env,
each row a ratio against its floor and peer measured in the same run.

Every world is the large ladder's level at that ``d`` (standardized, ``k = 1.5 d``, redraw
failing edges' weights; ``n_obs = 1000`` up to d = 500, ``2 d`` at d = 1,000 and 2,000 with
``n_int = 10``); another ``d`` takes L4's spec at that size (``n_int = 10``).

* **reset**: CPU time of ``env.reset(seed=s)`` on new seeds (each generates a world:
  faithfulness check, ``I*``, the observational sample). Two references, run interleaved with
  ours so they see the same load: the **numpy floor** (a random DAG with ``k`` edges in a random
  order, ``±U[0.5, 2]`` weights, ``(I - W)^{-1}``, ``n_obs`` rows) and **gCastle**'s
  ``IIDSimulation`` (``DAG.erdos_renyi`` then a linear-Gaussian simulation, the same sizes).
  Ratios are of the medians.
* **intervene**: ``env.step(actions.intervene(...))`` over the whole budget of a preflighted
  world (targets cycling through the nodes), each step paired with the numpy floor of the same
  draw (``n_int`` rows of standard normal noise times the precomputed mixing matrix); the ratio
  of the medians.
* **PC**: CPU time of the batched PC (``pc_batched``, alpha 0.05, the estimator the baselines
  use) on the level's manifest world 0, and its ratio to that world's reset.
* **memory**: peak resident memory (``VmHWM``) gained by a fresh child process (after its
  imports) that makes one env, resets it on a preflighted world and spends the budget on
  interventions keeping the last observation, against a fresh child doing the same work in
  numpy with the least memory (the world's ``(I - W)^{-1}`` and observational sample; per step
  a new zero-padded observation holding every experiment's samples, raw, or every regime's
  covariance, stats, copied from the previous one, which the caller then drops: two
  observations at the peak). In stats mode above d = 500 both spend ``--stats-steps``
  interventions instead of the budget (each regime's covariance is 8 d² bytes: 32 MB at
  d = 2,000). The fixed overhead (an env at d = 20 less its floor) is printed too.

Run: ``python benchmarks/large_worlds.py [--smoke] [--repeats N] [--sizes 100,200,500,1000,2000]``
"""

from __future__ import annotations

import dataclasses
import functools
import multiprocessing as mp
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    PEER_MISSING,
    base_parser,
    fmt_seconds,
    markdown_table,
    peer_available,
    print_header,
)

from acdb_gym.core.ladders.custom import CustomLevel
from acdb_gym.core.ladders.shipped import LARGE_LADDER, Level
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.discovery.pc_batched import pc_batched
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.envs.observations import ObservationMode
from acdb_gym.envs.slot_blocks import _zero_block

MIB = 1024 * 1024
SIZES = (100, 200, 500, 1000, 2000)


def level_for(d: int) -> Level:
    """The large ladder's level at ``d``, or its generator at ``d`` as a one-seed level."""
    for level in LARGE_LADDER.values():
        if level.spec.d == d:
            return level
    spec = dataclasses.replace(LARGE_LADDER["L4"].spec, d=d, k=3 * d // 2, n_int=10)
    return CustomLevel(f"d{d}", spec).level(1)


# --------------------------------------------------------------------------- reset


def numpy_floor_world(spec: LevelSpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The least work a world takes: DAG, weights, the inverse and ``n_obs`` rows (returned:
    the mixing matrix and the rows)."""
    d = spec.d
    upper = np.flatnonzero(np.triu(np.ones((d, d), dtype=bool), 1))
    chosen = rng.choice(upper, size=spec.k, replace=False)
    order = rng.permutation(d)
    weights = np.zeros((d, d))
    magnitudes = rng.uniform(spec.weight_low, spec.weight_high, spec.k)
    signs = np.where(rng.random(spec.k) < 0.5, -1.0, 1.0)
    weights[order[chosen // d], order[chosen % d]] = magnitudes * signs
    mixing = np.linalg.inv(np.eye(d) - weights)
    return mixing, np.asarray(rng.standard_normal((spec.n_obs, d)) @ mixing)


def gcastle_world(spec: LevelSpec, seed: int) -> np.ndarray:
    """gCastle's linear-Gaussian simulation of an Erdős–Rényi DAG with ``spec``'s sizes."""
    from castle import datasets

    weights = datasets.DAG.erdos_renyi(
        n_nodes=spec.d,
        n_edges=spec.k,
        weight_range=(spec.weight_low, spec.weight_high),
        seed=seed,
    )
    simulation = datasets.IIDSimulation(W=weights, n=spec.n_obs, method="linear", sem_type="gauss")
    return np.asarray(simulation.X)


def _cpu(call: Callable[[], object]) -> float:
    start = time.process_time()
    call()
    return time.process_time() - start


def reset_cpu(level: Level, repeats: int, with_peer: bool) -> tuple[float, float, float | None]:
    """Median CPU seconds of our reset, the numpy floor and gCastle, interleaved per repeat."""
    env = ACDBEnv(level, max_steps=100_000)
    rng = np.random.default_rng(0)
    ours: list[float] = []
    floor: list[float] = []
    peer: list[float] = []
    for repeat in range(repeats + 1):  # the first round warms up
        seed = 900_000 + repeat
        times = (
            _cpu(functools.partial(env.reset, seed=seed)),
            _cpu(functools.partial(numpy_floor_world, level.spec, rng)),
            _cpu(functools.partial(gcastle_world, level.spec, seed)) if with_peer else 0.0,
        )
        if repeat:
            ours.append(times[0])
            floor.append(times[1])
            peer.append(times[2])
    median = statistics.median
    return median(ours), median(floor), median(peer) if with_peer else None


# --------------------------------------------------------------------------- intervene


def intervene_paired(level: Level, max_steps: int) -> tuple[float, float]:
    """Median seconds of the env's intervene step and of the paired numpy draw."""
    env = ACDBEnv(level, max_steps=100_000)
    env.reset(options={"manifest_index": 0})
    scm = env.level.instance(0).scm
    mixing, noise_std = scm.mixing, scm.noise_std
    rng = np.random.default_rng(0)
    n_int, d = level.spec.n_int, level.spec.d
    steps: list[float] = []
    floors: list[float] = []
    for slot in range(min(env.session.budget, max_steps)):
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


# --------------------------------------------------------------------------- PC


def pc_cpu(level: Level) -> float:
    """CPU seconds of the batched PC on the level's manifest world 0."""
    data = level.instance(0).d_obs
    return _cpu(functools.partial(pc_batched, data, alpha=0.05))


# --------------------------------------------------------------------------- memory


def _status(field: str) -> int:
    with open("/proc/self/status", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0  # pragma: no cover


def _env_child(level: Level, mode: ObservationMode, steps: int) -> None:
    env = ACDBEnv(level, max_steps=100_000, observation=mode)
    observation, _ = env.reset(options={"manifest_index": 0})
    for slot in range(steps):
        observation = env.step(actions.intervene(slot % env.n_nodes, 1.0))[0]
    del observation


def _floor_child(level: Level, mode: ObservationMode, steps: int) -> None:
    """The least memory the same work takes: the world, and per step a new zero-padded
    observation of the experiments so far (the previous one's slots copied, the new one
    written), the caller keeping only the last; the data live only in the observations."""
    spec = level.spec
    rng = np.random.default_rng(0)
    mixing, observational = numpy_floor_world(spec, rng)
    if mode == "stats":
        shape: tuple[int, ...] = (steps + 1, spec.d, spec.d)
        filled = 1
        last = _zero_block(shape)
        last[0] = np.cov(observational, rowvar=False)
    else:
        shape, filled, last = (max(steps, 1), spec.n_int, spec.d), 0, None
    for slot in range(steps):
        noise = rng.standard_normal((spec.n_int, spec.d))
        noise[:, slot % spec.d] = 1.0
        samples = noise @ mixing
        observation = _zero_block(shape)
        if last is not None:
            observation[:filled] = last[:filled]
        observation[filled] = np.cov(samples, rowvar=False) if mode == "stats" else samples
        filled += 1
        last = observation
    del last


def _measured(child: Callable[..., None], args: tuple[Any, ...], pipe: Any) -> None:
    before = _status("VmRSS")
    child(*args)
    pipe.send(_status("VmHWM") - before)


def peak_memory(child: Callable[..., None], *args: Any) -> int:
    """Peak resident bytes a fresh child process gains doing ``child(*args)`` (spawned, not
    forked: a forked child would reuse memory this process freed and look smaller)."""
    context = mp.get_context("spawn")
    parent, pipe = context.Pipe(duplex=False)
    process = context.Process(target=_measured, args=(child, args, pipe))
    process.start()
    grown = parent.recv()
    process.join()
    return int(grown)


def memory_cell(level: Level, mode: ObservationMode, steps: int | None) -> tuple[str, float]:
    """``ours / floor = ratio (steps)`` over the budget of manifest world 0 (or ``steps``)."""
    budget = level.instance(0).budget
    count = budget if steps is None else min(steps, budget)
    ours = peak_memory(_env_child, level, mode, count)
    floor = peak_memory(_floor_child, level, mode, count)
    cell = f"{ours / MIB:.1f} / {floor / MIB:.1f} MiB = {ours / floor:.2f}× ({count} steps)"
    return cell, ours - floor


# --------------------------------------------------------------------------- table


def _ratio(ours: float, reference: float | None) -> str:
    return "–" if not reference else f"{ours / reference:.2f}×"


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="values of d")
    parser.add_argument(
        "--reset-max-d", type=int, default=2000, help="largest d whose reset is timed"
    )
    parser.add_argument(
        "--stats-steps", type=int, default=20, help="stats-mode steps above d = 500 (memory)"
    )
    parser.add_argument("--steps", type=int, default=100, help="intervene steps timed per d")
    parser.add_argument("--pc-max-d", type=int, default=2000, help="largest d whose PC is timed")
    args = parser.parse_args()
    repeats = args.repeats or (2 if args.smoke else 5)
    sizes = [50] if args.smoke else [int(size) for size in args.sizes.split(",")]
    with_peer = peer_available("castle")
    warnings.simplefilter("ignore")
    print_header(
        "Large worlds at the floor",
        "CPU medians (reset: "
        f"{repeats} fresh worlds each); every ratio is ours over a reference measured in the same "
        "run. gCastle: " + ("castle " + _castle_version() if with_peer else PEER_MISSING) + ".",
    )
    if not args.smoke:
        overhead_raw = memory_cell(level_for(20), "raw", None)[1]
        overhead_stats = memory_cell(level_for(20), "stats", None)[1]
        print(
            f"Fixed overhead (an env at d = 20 less its floor): raw {overhead_raw / MIB:.1f} "
            f"MiB, stats {overhead_stats / MIB:.1f} MiB.\n"
        )
    rows = []
    for d in sizes:
        level = level_for(d)
        spec = level.spec
        if d <= args.reset_max_d:
            ours, floor, peer = reset_cpu(level, repeats, with_peer)
            reset = [
                fmt_seconds(ours),
                fmt_seconds(floor),
                fmt_seconds(peer) if peer is not None else PEER_MISSING,
                _ratio(ours, floor),
                _ratio(ours, peer),
            ]
        else:
            reset = ["not run"] * 5
        step, step_floor = intervene_paired(level, args.steps)
        pc = ["not run"] * 2
        if d <= args.pc_max_d and d <= args.reset_max_d:
            pc_seconds = pc_cpu(level)
            pc = [fmt_seconds(pc_seconds), _ratio(pc_seconds, ours)]
        stats_steps = None if d <= 500 else args.stats_steps
        rows.append(
            [
                d,
                f"{spec.k} / {spec.n_obs} / {spec.n_int}",
                *reset,
                f"{fmt_seconds(step)} / {fmt_seconds(step_floor)} = {step / step_floor:.2f}×",
                *pc,
                memory_cell(level, "raw", None)[0],
                memory_cell(level, "stats", stats_steps)[0],
            ]
        )
        print("| " + " | ".join(str(cell) for cell in rows[-1]) + " |", file=sys.stderr, flush=True)
    print(
        markdown_table(
            [
                "d",
                "k / n_obs / n_int",
                "reset CPU",
                "numpy floor",
                "gCastle IIDSimulation",
                "reset ÷ floor",
                "reset ÷ gCastle",
                "intervene step / paired floor",
                "PC CPU (world 0)",
                "PC ÷ reset",
                "peak RSS raw / floor",
                "peak RSS stats / floor",
            ],
            rows,
        )
    )


def _castle_version() -> str:
    import castle

    return str(getattr(castle, "__version__", "?"))


if __name__ == "__main__":
    main()
