"""PC on several datasets at once (``pc_batched_many``) against PC on each in turn, and what it
buys the vectorized design env on fresh worlds.

Part 1, PC alone: ``--groups`` groups of N observational samples of fresh ``v0 L1`` instances
(seeds from 10^7), for N in ``--sizes``; per group, ``pc_batched_many(group)`` against
``[pc_batched(data) for data in group]`` (the same results, checked), interleaved, CPU time per
dataset (process time: other processes on a busy machine inflate it less than wall time).

Part 2, the env: ``gym.make_vec("ACDB-Design-L1-v0", --envs, vectorization_mode=
"vector_entry_point")`` without a bank (every reset generates a world and runs PC) taking
uniformly random valid actions, with its starting graphs computed as shipped (the worlds that
reset in one vector step share one ``pc_cpdag_many`` call) and, as the peer, one
``starting_graph`` call per world (the code before). Rounds alternate between the two; each
round resets with a new seed, then times ``--steps`` vector steps, every cache a fresh run fills
cleared before each mode.
Both run the same worlds with the same actions, so the episodes are identical.

Run: ``PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/pc_many.py [--smoke]
[--sizes 2 8 64] [--envs 8] [--steps 300] [--repeats 5]``
"""

from __future__ import annotations

import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _common import base_parser, markdown_table, print_header

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.worlds.instance import Instance, generate_instance
from acdb_gym.discovery.pc_batched import pc_batched
from acdb_gym.discovery.pc_many import pc_batched_many

ENV_ID = "ACDB-Design-L1-v0"


def _cpu(call: Callable[[], object]) -> float:
    start = time.process_time()
    call()
    return time.process_time() - start


def _pc_rows(sizes: Sequence[int], groups: int) -> list[list[str]]:
    spec = get_level("v0", "L1").spec
    rows = []
    seed = 10**7
    for size in sizes:
        alone: list[float] = []
        pooled: list[float] = []
        for _ in range(groups):
            group = [generate_instance(spec, seed + k).d_obs for k in range(size)]
            seed += size
            one_by_one = [pc_batched(data) for data in group]
            together = pc_batched_many(group)
            assert all(
                a.n_tests == b.n_tests and dict(a.sepsets) == dict(b.sepsets)
                for a, b in zip(one_by_one, together, strict=True)
            )
            alone.append(_cpu(lambda g=group: [pc_batched(data) for data in g]) / size)
            pooled.append(_cpu(lambda g=group: pc_batched_many(g)) / size)
        a, p = statistics.median(alone), statistics.median(pooled)
        cells = [f"{p * 1e6:,.0f} µs", f"{a * 1e6:,.0f} µs", f"{a / p:.2f}×"]
        rows.append([f"PC per L1 dataset, groups of {size}", *cells])
    return rows


def _forget(cache: Any, vector: Any) -> None:
    """Clear every per-process cache a fresh run fills (starts, generated worlds, closures,
    bank worlds), so the second mode of a round does not find the first one's work."""
    from acdb_gym.core.worlds import instance

    cache.clear()
    instance._generate_cached.cache_clear()
    vector._CLOSURES.clear()
    vector._BANK_WORLDS.clear()


def _env_rows(n_envs: int, steps: int, repeats: int) -> list[list[str]]:
    import gymnasium as gym

    import acdb_gym  # noqa: F401  (registers the ids)
    from acdb_gym.envs.design import cache, vector

    shipped = vector.starting_graphs
    calls: list[int] = []

    def counted(
        instances: Sequence[Instance], estimator: str, *, correlations: Any = None
    ) -> list[PDAG]:
        if instances:
            calls.append(len(instances))
        return shipped(instances, estimator, correlations=correlations)

    def one_at_a_time(
        instances: Sequence[Instance], estimator: str, *, correlations: Any = None
    ) -> list[PDAG]:
        # One PC call per world, which computes its own correlations.
        return [cache.starting_graph(instance, estimator) for instance in instances]

    envs = gym.make_vec(ENV_ID, n_envs, vectorization_mode="vector_entry_point")
    rates: dict[str, list[float]] = {"pooled": [], "alone": []}
    modes = [("pooled", counted), ("alone", one_at_a_time)]
    for round_ in range(-1, repeats):  # round -1 warms both up, untimed
        for name, starts in modes if round_ % 2 else modes[::-1]:
            vector.starting_graphs = starts  # type: ignore[assignment]
            try:
                _forget(cache, vector)
                rng = np.random.default_rng(round_ + 1)
                envs.reset(seed=1000 * (round_ + 1))

                def run(rng: np.random.Generator = rng) -> None:
                    for _ in range(steps):
                        masks = envs.action_masks()
                        envs.step((rng.random(masks.shape) * masks).argmax(axis=1))

                seconds = _cpu(run)
                if round_ >= 0:
                    rates[name].append(steps * n_envs / seconds)
            finally:
                vector.starting_graphs = shipped  # type: ignore[assignment]
    pooled, alone = statistics.median(rates["pooled"]), statistics.median(rates["alone"])
    mean_group = sum(calls) / max(len(calls), 1)  # the first reset's call of N included
    return [
        [
            f"env steps/s, fresh worlds (N={n_envs}; {mean_group:.2f} worlds per PC call)",
            f"{pooled:,.0f}",
            f"{alone:,.0f}",
            f"{pooled / alone:.2f}×",
        ]
    ]


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 8, 64])
    parser.add_argument("--groups", type=int, default=None, help="groups per size")
    parser.add_argument("--envs", type=int, default=8, help="worlds of the vector env")
    parser.add_argument("--steps", type=int, default=None, help="vector steps per round")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    groups = args.groups or (2 if args.smoke else 15)
    repeats = args.repeats or (1 if args.smoke else 5)
    steps = args.steps or (20 if args.smoke else 300)
    print_header(
        "PC on several datasets at once",
        "CPU time; 'together' is pc_batched_many / the shipped vector env, 'one at a time' is "
        "pc_batched per dataset / one starting_graph call per world.",
    )
    rows = _pc_rows([2] if args.smoke else args.sizes, groups)
    rows += _env_rows(args.envs, steps, repeats)
    print(markdown_table(["measure", "together", "one at a time", "ratio"], rows))


if __name__ == "__main__":
    main()
