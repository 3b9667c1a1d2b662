"""Can a weight rule stop the R² order from sorting a fixed real wiring? (DESIGN §3.3)

On the Sachs and DREAM4 wirings the regulators are the high-degree nodes, and a variable's R²
from all the others is a weighted degree (DESIGN §3 step 2), so the descending-R² order puts
parents first. This script draws standardized linear-Gaussian worlds on a wiring (relabelled
per seed; on Sachs the faithfulness check of step 4 enforced by redrawing the weights, on the
100-node DREAM4 wirings not checked, since whole-world redraws fail at that edge count, which
leaves each rule more freedom than a faithful world allows) under several weight rules and
prints the gain of the ascending and descending R² orders over random orders (directed F1 of
the same regressions, ``regress_in_order`` at alpha 0.01; the random orders of the report's
audit, ``random_orders``), and PC's directed F1 on the same data:

- ``plain``: step 2's weights, v1's (the shipped Sachs and DREAM4 levels);
- ``degree``: ``edge_scale="degree"`` (the shipped SF levels);
- ``r2-parents``: each non-root's R² given its parents drawn from U[0.1, 0.9], its drawn
  weights rescaled to it (an R²-controlled generator);
- ``equal-strength``: each edge's squared unit-noise weight chosen by non-negative least squares
  (at least 0.05) so that every node's edges sum to the same strength, the closest a weight rule
  comes to making R² from all the others the same for every node.

Usage:
    python benchmarks/wiring_weight_rules.py [--graph sachs] [--seeds 40] [--smoke]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Final

import numpy as np
from scipy.optimize import lsq_linear
from threadpoolctl import threadpool_limits

from acdb_gym.core.graphs import DAG
from acdb_gym.core.graphs.real import FIXED_GRAPHS, topology
from acdb_gym.core.scoring import score
from acdb_gym.core.worlds.faithfulness import is_faithful
from acdb_gym.core.worlds.instance import degree_scales
from acdb_gym.core.worlds.linear import LinearGaussianSCM
from acdb_gym.discovery.pc import shared_pc_cpdag
from acdb_gym.discovery.sortnregress import feature_order, regress_in_order
from acdb_gym.report.order_audit import random_orders
from acdb_gym.report.statistics import sign_flip_pvalue

ALPHA: Final = 0.01
N_OBS: Final = 1000
ATTEMPTS: Final = 1000
MAX_CHECKED_NODES: Final = 20
"""Wirings up to this size get the faithfulness check (Sachs); larger ones (DREAM4) do not."""

Rule = Callable[[DAG, np.random.Generator], LinearGaussianSCM]


def _plain(dag: DAG, rng: np.random.Generator) -> np.ndarray:
    magnitude = rng.uniform(0.5, 2.0, dag.n_edges)
    sign = np.where(rng.random(dag.n_edges) < 0.5, -1.0, 1.0)
    weights = np.zeros(dag.adjacency.shape)
    weights[dag.adjacency] = magnitude * sign
    return weights


def plain(dag: DAG, rng: np.random.Generator) -> LinearGaussianSCM:
    return LinearGaussianSCM.standardized(_plain(dag, rng), 1.0)


def degree(dag: DAG, rng: np.random.Generator) -> LinearGaussianSCM:
    return LinearGaussianSCM.standardized(_plain(dag, rng) * degree_scales(dag), 1.0)


def r2_parents(dag: DAG, rng: np.random.Generator) -> LinearGaussianSCM:
    raw = _plain(dag, rng)
    d = dag.n_nodes
    weights, noise, cov = np.zeros((d, d)), np.ones(d), np.zeros((d, d))
    for j in dag.topological_order():
        column = raw[:, j]
        if column.any():
            r2 = rng.uniform(0.1, 0.9)
            weights[:, j] = column * np.sqrt(r2 / float(column @ cov @ column))
            noise[j] = np.sqrt(1.0 - r2)
        cross = weights[:, j] @ cov
        cov[j, :], cov[:, j], cov[j, j] = cross, cross, 1.0
    return LinearGaussianSCM(weights, noise)


def equal_strength(dag: DAG, rng: np.random.Generator) -> LinearGaussianSCM:
    edges = np.argwhere(dag.adjacency)
    incidence = np.zeros((dag.n_nodes, len(edges)))
    incidence[edges[:, 0], np.arange(len(edges))] = 1.0
    incidence[edges[:, 1], np.arange(len(edges))] = 1.0
    strength = lsq_linear(incidence, np.ones(dag.n_nodes), bounds=(0.05, np.inf)).x
    sign = np.where(rng.random(len(edges)) < 0.5, -1.0, 1.0)
    weights = np.zeros(dag.adjacency.shape)
    weights[edges[:, 0], edges[:, 1]] = sign * np.sqrt(strength)
    return LinearGaussianSCM.standardized(weights, 1.0)


RULES: Final[dict[str, Rule]] = {
    "plain": plain,
    "degree": degree,
    "r2-parents": r2_parents,
    "equal-strength": equal_strength,
}


def _world(graph: str, rule: Rule, seed: int) -> tuple[DAG, LinearGaussianSCM, np.ndarray]:
    """A relabelled wiring, the first faithful world of ``rule`` on it, and its sample."""
    rng = np.random.default_rng([seed, 7])
    source = topology(graph).dag
    order = rng.permutation(source.n_nodes)
    adjacency = np.zeros_like(source.adjacency)
    adjacency[np.ix_(order, order)] = source.adjacency
    dag = DAG(adjacency)
    for _ in range(ATTEMPTS):
        scm = rule(dag, rng)
        if dag.n_nodes > MAX_CHECKED_NODES or is_faithful(dag, scm.covariance(), 0.1):
            return dag, scm, scm.sample(N_OBS, rng)
    raise RuntimeError(f"no faithful world in {ATTEMPTS} draws (seed {seed})")


def measure(graph: str, rule: Rule, seeds: int) -> dict[str, np.ndarray]:
    """Per seed: the R² orders' gains over the random orders and PC's directed F1."""
    columns: dict[str, list[float]] = {"r2 asc": [], "r2 desc": [], "pc": []}
    for seed in range(seeds):
        dag, _, data = _world(graph, rule, seed)

        def f1(order: np.ndarray, dag: DAG = dag, data: np.ndarray = data) -> float:
            return score(dag, regress_in_order(data, order, alpha=ALPHA)).directed_f1

        control = np.mean([f1(order) for order in random_orders(seed, dag.n_nodes)])
        for direction in ("asc", "desc"):
            order = feature_order(data, feature="r2", direction=direction)
            columns[f"r2 {direction}"].append(f1(order) - control)
        columns["pc"].append(score(dag, shared_pc_cpdag(data)).directed_f1)
    return {key: np.array(values) for key, values in columns.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="sachs", choices=FIXED_GRAPHS)
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--smoke", action="store_true", help="two seeds")
    args = parser.parse_args()
    seeds = 2 if args.smoke else args.seeds
    start = time.perf_counter()
    print(f"{args.graph}, {seeds} seeds (gains in points of directed F1 over random orders)\n")
    print("| weight rule | R² asc gain | R² desc gain (p) | PC directed F1 (%) |")
    print("|---|---|---|---|")
    with threadpool_limits(limits=1, user_api="blas"):
        for name, rule in RULES.items():
            result = measure(args.graph, rule, seeds)
            desc = 100 * result["r2 desc"]
            print(
                f"| {name} | {100 * result['r2 asc'].mean():+.1f} | {desc.mean():+.1f} "
                f"({sign_flip_pvalue(desc):.2g}) | {100 * result['pc'].mean():.1f} |",
                flush=True,
            )
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
