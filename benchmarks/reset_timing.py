"""Instance generation: ACDBEnv.reset per ladder level and generate_instance scaling in d, vs
gCastle's simulator.

Table 1: for every level of both ladders, ``ACDBEnv(level, ladder=...).reset()`` with a fresh
instance each call (drawn from the env's ``np_random``; the first reset is seeded once), next
to ``generate_instance`` alone and the mean number of rejection-sampling draws per accepted
instance. The peer is gCastle's data simulator on the same ``(d, k, n_obs)``:
``castle.datasets.DAG.erdos_renyi(d, k, weight_range=(0.5, 2))`` then
``IIDSimulation(W, n=n_obs, method="linear", sem_type="gauss")``. gCastle does less work: no
faithfulness check, no rejection, no minimum intervention set, no Gymnasium observation.

Table 2: ``generate_instance`` on a ``LevelSpec`` sweep over ``d`` with ``k = 1.5 d``
(``n_obs = 500``), with the same peer. Each generation is capped at 30 s (run in a forked
child); the acceptance rate of the v0 faithfulness check falls quickly with ``k``, so the
number of draws, not the cost of one draw, decides the large sizes.

Run: ``python benchmarks/reset_timing.py [--smoke] [--repeats N] [--sizes 10 20 50 100 200]``
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as bench

from acdb_gym.core.ladders.shipped import LADDERS, LevelSpec
from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.envs.acdb_env import ACDBEnv

CAP = 30.0


def gcastle_simulation(spec: LevelSpec, seed: int) -> np.ndarray:
    """gCastle's linear-Gaussian simulation of an Erdős–Rényi DAG with ``spec``'s sizes."""
    from castle import datasets

    weights = datasets.DAG.erdos_renyi(
        n_nodes=spec.d,
        n_edges=spec.k,
        weight_range=(spec.weight_low, spec.weight_high),
        seed=seed,
    )
    simulation = datasets.IIDSimulation(
        W=weights,
        n=spec.n_obs,
        method="linear",
        sem_type="gauss",
        noise_scale=float(np.sqrt(spec.noise_var)),
    )
    return np.asarray(simulation.X)


def _peer_timing(spec: LevelSpec, repeats: int, have_peer: bool) -> bench.Timing | str:
    if not have_peer:
        return bench.PEER_MISSING
    seeds = iter(range(10**6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bench.measure(lambda: gcastle_simulation(spec, next(seeds)), repeats=repeats)


def _cell(timing: bench.Timing | bench.Skipped | str) -> str:
    return timing if isinstance(timing, str) else timing.cell()


def ladder_table(repeats: int, smoke: bool, have_peer: bool) -> str:
    rows = []
    for ladder_name in ("v0", "v1"):  # the family ladders: family_reset.py
        levels = LADDERS[ladder_name]
        for level in list(levels.values())[: 1 if smoke else None]:
            spec = level.spec
            env = ACDBEnv(level.name, ladder=ladder_name)
            env.reset(seed=0)
            reset = bench.measure(env.reset, repeats=repeats)
            seeds = iter(range(10**6))
            attempts: list[int] = []

            def generate(spec: LevelSpec = spec, seeds: Any = seeds, out: Any = attempts) -> None:
                out.append(generate_instance(spec, next(seeds)).attempts)

            generation = bench.measure(generate, repeats=repeats)
            peer = _peer_timing(spec, repeats, have_peer)
            rows.append(
                [
                    ladder_name,
                    level.name,
                    spec.d,
                    spec.k,
                    spec.n_obs,
                    reset.cell(),
                    reset.cpu_cell(),
                    generation.cell(),
                    f"{np.mean(attempts):.2g}",
                    _cell(peer),
                    bench.ratio(reset, peer),
                ]
            )
    headers = [
        "ladder",
        "level",
        "d",
        "k",
        "n_obs",
        "env.reset",
        "env.reset CPU (median)",
        "generate_instance",
        "mean draws",
        "gCastle ER + IIDSimulation",
        "reset / gCastle",
    ]
    return bench.markdown_table(headers, rows)


def scaling_table(sizes: list[int], repeats: int, have_peer: bool) -> str:
    rows = []
    given_up = False
    for d in sizes:
        spec = LevelSpec(d=d, k=round(1.5 * d), n_obs=500, n_int=100, noise_var=1.0, slack=1)
        ours: bench.Timing | bench.Skipped
        if given_up:
            ours, draws = bench.Skipped(CAP), None
        else:

            def setup(spec: LevelSpec = spec) -> Any:
                return spec, iter(range(10**6)), []

            def call(argument: Any) -> list[int]:
                spec, seeds, draws = argument
                draws.append(generate_instance(spec, next(seeds)).attempts)
                return draws

            ours, mean_draws = bench.run_capped(
                setup, call, repeats=repeats, cap=CAP, check=lambda draws: float(np.mean(draws))
            )
            draws = mean_draws if isinstance(mean_draws, float) else None
            given_up = isinstance(ours, bench.Skipped)
        per_draw = (
            f"{ours.median / draws * 1e3:.3g} ms"
            if isinstance(ours, bench.Timing) and draws
            else "–"
        )
        peer = _peer_timing(spec, repeats, have_peer)
        rows.append(
            [
                d,
                spec.k,
                ours.cell(),
                f"{draws:.3g}" if draws is not None else "–",
                per_draw,
                _cell(peer),
            ]
        )
    headers = [
        "d",
        "k",
        "generate_instance",
        "mean draws",
        "median / mean draws",
        "gCastle ER + IIDSimulation",
    ]
    return bench.markdown_table(headers, rows)


def main() -> None:
    parser = bench.base_parser(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 50, 100, 200])
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.smoke else 30)
    sizes = args.sizes[:1] if args.smoke else args.sizes
    have_peer = bench.peer_available("castle.datasets")

    bench.print_header(
        "Instance generation (ACDBEnv.reset) vs gCastle's simulator",
        "Median wall time (IQR, fastest run, runs); every run draws a fresh instance. The CPU "
        "column is the median process time of the same runs: on a machine whose cores other "
        "processes keep busy, a run is often paused for a scheduler slice of several ms, which "
        "wall time counts and CPU time does not.",
    )
    print(ladder_table(repeats, args.smoke, have_peer))
    print("\nScaling in d (k = 1.5 d, n_obs = 500), generate_instance:\n")
    print(scaling_table(sizes, min(repeats, 10), have_peer))


if __name__ == "__main__":
    main()
