"""Our greedy search on the interventional BIC vs GIES (PyPI ``gies``) on the same data.

``acdb_gym.discovery.greedy_interventional_search`` (the estimator of ``bic_active``) scores
DAGs with the interventional Gaussian BIC of GIES but searches over DAGs (hill climbing, a tabu
phase, perturbed restarts). ``gies.fit_bic`` is Gamella's Python port of GIES (Hauser &
Bühlmann 2012): forward, backward and turning phases over interventional essential graphs.
This script runs both on the same data and scores their interventional essential graphs against
the true DAG.

Instances: the manifest instances of a ladder (default v0, every level). Data per instance: its
observational sample plus, for every node of ``I*`` (ascending), ``n_int`` rows of
``do(X_t = mean_obs + 4 sd_obs)`` (the agents' intervention rule), drawn from the instance's
SCM with a generator seeded by ``(--seed, instance seed)``. Both sides get exactly these arrays.

The scores are close but not identical: ours fits one intercept per node on the rows where the
node was not intervened and penalises ``log(n_j) / 2`` per parameter, times ``penalty``;
``gies.fit_bic`` centres every environment separately and penalises ``log(N) / 2`` per edge
and node (``N`` all rows). Ours runs at penalty 1 (the plain BIC, as GIES) and at 2 (the
default of ``bic_active``).

Columns: mean directed F1 and mean SHD over the level's instances (``acdb_gym.core.scoring``),
and the wall time per instance: median over instances of each instance's median run (IQR,
fastest, instance count). A GIES call over ``--cap`` seconds skips the rest of its level.

Run: ``python benchmarks/bic_search_vs_gies.py [--smoke] [--repeats N] [--ladder v0]
[--levels L0 L2] [--instances 8]``
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as bench

from acdb_gym.core.graphs import PDAG
from acdb_gym.core.ladders.shipped import LADDERS
from acdb_gym.core.scoring import score
from acdb_gym.core.worlds.instance import Instance
from acdb_gym.discovery import greedy_interventional_search

SHIFT = 4.0
"""Intervention value in observational standard deviations above the mean (as the agents)."""

Experiments = list[tuple[int, np.ndarray]]


def make_experiments(instance: Instance, seed: int) -> Experiments:
    """``n_int`` rows of ``do(X_t = mean + SHIFT * sd)`` for every ``t`` in ``I*``."""
    rng = np.random.default_rng([seed, instance.seed])
    mean, sd = instance.d_obs.mean(axis=0), instance.d_obs.std(axis=0)
    return [
        (t, instance.scm.sample_do(t, float(mean[t] + SHIFT * sd[t]), instance.spec.n_int, rng))
        for t in sorted(instance.i_star)
    ]


def ours(penalty: float) -> Callable[[np.ndarray, Experiments], PDAG]:
    """Our search at ``penalty``, returning its interventional essential graph."""

    def run(observational: np.ndarray, experiments: Experiments) -> PDAG:
        return greedy_interventional_search(
            observational, experiments, penalty=penalty
        ).essential_graph

    return run


def run_gies(observational: np.ndarray, experiments: Experiments) -> PDAG:
    """``gies.fit_bic`` on one environment per regime, decoded to a PDAG (``A[i, j]`` and
    ``A[j, i]`` both set is ``i - j``)."""
    import gies

    data = [observational, *(samples for _, samples in experiments)]
    targets = [[], *([t] for t, _ in experiments)]
    estimate, _ = gies.fit_bic(data, targets)
    adjacency = np.asarray(estimate) != 0
    return PDAG(adjacency & ~adjacency.T, adjacency & adjacency.T)


@dataclass
class Side:
    """What one method achieved on a level: per-instance times and scores."""

    times: list[float]
    f1: list[float]
    shd: list[float]
    skipped: bench.Skipped | None = None

    def cells(self) -> list[str]:
        """The F1, SHD and time cells."""
        if self.skipped is not None:
            return ["–", "–", self.skipped.cell()]
        return [
            f"{statistics.fmean(self.f1):.3f}",
            f"{statistics.fmean(self.shd):.2f}",
            bench.Timing(tuple(self.times)).cell(),
        ]

    def timing(self) -> bench.Timing | None:
        """Per-instance median times as a :class:`bench.Timing` (None when skipped)."""
        return None if self.skipped is not None else bench.Timing(tuple(self.times))


def _score(instance: Instance, graph: PDAG) -> tuple[float, float]:
    report: Any = score(instance.dag, graph)
    return float(report.directed_f1), float(report.shd)


def run_ours(
    method: Callable[[np.ndarray, Experiments], PDAG],
    instances: Sequence[tuple[Instance, Experiments]],
    repeats: int,
) -> Side:
    """Time and score one of our configurations on every instance."""
    side = Side([], [], [])
    for instance, experiments in instances:

        def call(i: Instance = instance, e: Experiments = experiments) -> PDAG:
            return method(i.d_obs, e)

        side.times.append(bench.measure(call, repeats=repeats, warmup=0, min_repeats=1).median)
        f1, shd = _score(instance, call())
        side.f1.append(f1)
        side.shd.append(shd)
    return side


def _gies_on(data: tuple[Instance, Experiments]) -> PDAG:
    return run_gies(data[0].d_obs, data[1])


def run_peer(instances: Sequence[tuple[Instance, Experiments]], repeats: int, cap: float) -> Side:
    """Time and score GIES on every instance, each call in a child capped at ``cap`` s."""
    side = Side([], [], [])
    for instance, experiments in instances:

        def setup(
            i: Instance = instance, e: Experiments = experiments
        ) -> tuple[Instance, Experiments]:
            return i, e

        def check(graph: Any, i: Instance = instance) -> tuple[float, float]:
            return _score(i, graph)

        timing, scores = bench.run_capped(setup, _gies_on, repeats=repeats, cap=cap, check=check)
        if isinstance(timing, bench.Skipped):
            return Side([], [], [], skipped=timing)
        side.times.append(timing.median)
        f1, shd = cast(tuple[float, float], scores)
        side.f1.append(f1)
        side.shd.append(shd)
    return side


def main() -> None:
    parser = bench.base_parser(__doc__)
    parser.add_argument("--ladder", default="v0", choices=sorted(LADDERS))
    parser.add_argument("--levels", nargs="+", default=None, help="default: every level")
    parser.add_argument("--instances", type=int, default=8, help="manifest instances per level")
    parser.add_argument("--seed", type=int, default=0, help="seed of the interventional data")
    parser.add_argument("--cap", type=float, default=30.0, help="seconds per GIES call")
    args = parser.parse_args()
    ladder = LADDERS[args.ladder]
    levels = args.levels or sorted(ladder)
    n_instances = args.instances
    if args.smoke:
        levels, n_instances = levels[:1], 1
    repeats = args.repeats or (1 if args.smoke else 3)
    have_peer = bench.peer_available("gies")

    bench.print_header(
        f"Greedy interventional-BIC search vs GIES, ladder {args.ladder}",
        "Observational data plus n_int rows per I* target, the same arrays for every method. "
        "F1 and SHD: means over the instances; time per instance: median over instances "
        "(IQR, fastest, instances). Ratio = GIES / ours at penalty 1.",
    )
    rows = []
    for name in levels:
        level = ladder[name]
        count = min(n_instances, len(level.manifest))
        instances = [
            (instance, make_experiments(instance, args.seed))
            for instance in (level.instance(index) for index in range(count))
        ]
        plain = run_ours(ours(1.0), instances, repeats)
        sparse = run_ours(ours(2.0), instances, repeats)
        peer = run_peer(instances, repeats, args.cap) if have_peer else None
        i_star = statistics.fmean(len(instance.i_star) for instance, _ in instances)
        rows.append(
            [
                f"{name} (d={level.spec.d}, n_obs={level.spec.n_obs}, n_int={level.spec.n_int})",
                count,
                f"{i_star:.1f}",
                *plain.cells(),
                *sparse.cells(),
                *(peer.cells() if peer is not None else [bench.PEER_MISSING] * 3),
                bench.ratio(peer.timing(), plain.timing()) if peer is not None else "–",
            ]
        )
    headers = [
        "level",
        "instances",
        "mean size of I*",
        "ours p=1 F1",
        "ours p=1 SHD",
        "ours p=1 time",
        "ours p=2 F1",
        "ours p=2 SHD",
        "ours p=2 time",
        "GIES F1",
        "GIES SHD",
        "GIES time",
        "GIES / ours p=1",
    ]
    print(bench.markdown_table(headers, rows))


if __name__ == "__main__":
    main()
