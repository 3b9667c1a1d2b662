"""minimum_intervention_set() vs a brute-force verifying-set search, and its scaling in d.

Table 1 (d <= 10): for each size, ``graphs`` random DAGs (edge probability 0.5 over a random
order). The peer is the textbook search: subsets of nodes in increasing size until one whose
interventional essential graph (``essential_graph(dag, subset)``) is fully directed. Both sides
are timed over the same DAGs (median [IQR] per DAG), and the table checks that the brute force
finds the same minimum size and that our set is itself verifying.

Table 2: ``minimum_intervention_set`` on large sparse random DAGs (about 3 neighbours per
node) up to ``d = 10,000``, with its two stages (``covered_edges`` and the topological order)
timed separately. Building the ``DAG`` (which validates acyclicity) is not included; it is
reported in its own column.

``minimum_intervention_set(dag)`` remembers its result per ``DAG`` object, so "ours" is timed
through the uncached ``_compute_minimum_intervention_set(dag)`` it calls the first time.

Run: ``python benchmarks/mis_timing.py [--smoke] [--repeats N] [--sizes 1000 10000]``
"""

from __future__ import annotations

import sys
from itertools import combinations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Timing, base_parser, markdown_table, measure, print_header, ratio
from _graphs import random_dag_adjacency, random_sparse_adjacency

from acdb_gym.core.graphs import (
    DAG,
    covered_edges,
    essential_graph,
    minimum_intervention_set,
    topological_order,
)

try:  # graphs as a package (older revisions: one module; before the memoization: no such function)
    from acdb_gym.core.graphs.interventions import (
        _compute_minimum_intervention_set as compute_mis,
    )
except ImportError:  # pragma: no cover
    try:
        from acdb_gym.core.graphs import (
            _compute_minimum_intervention_set as compute_mis,
        )
    except ImportError:
        compute_mis = minimum_intervention_set


def brute_force_verifying_set(dag: DAG) -> frozenset[int]:
    """The first subset, in increasing size, whose essential graph is fully directed."""
    nodes = range(dag.n_nodes)
    for size in range(dag.n_nodes + 1):
        for subset in combinations(nodes, size):
            if essential_graph(dag, subset).is_fully_directed:
                return frozenset(subset)
    raise AssertionError("intervening on every node always orients every edge")


def _pooled(timings: list[Timing]) -> Timing:
    """One Timing per graph (its median), pooled over graphs."""
    return Timing(tuple(t.median for t in timings))


def small_table(sizes: list[int], graphs: int, repeats: int, seed: int) -> str:
    rows = []
    for d in sizes:
        rng = np.random.default_rng([seed, d])
        dags = [DAG(random_dag_adjacency(rng, d, 0.5)) for _ in range(graphs)]
        ours, brute, agree, star = [], [], 0, []
        for dag in dags:
            mis = minimum_intervention_set(dag)
            found = brute_force_verifying_set(dag)
            agree += len(found) == len(mis) and essential_graph(dag, mis).is_fully_directed
            star.append(len(mis))
            ours.append(measure(lambda dag=dag: compute_mis(dag), repeats=repeats))
            brute.append(
                measure(lambda dag=dag: brute_force_verifying_set(dag), repeats=repeats, budget=2.0)
            )
        ours_t, brute_t = _pooled(ours), _pooled(brute)
        rows.append(
            [
                d,
                graphs,
                f"{np.mean(star):.2g}",
                ours_t.cell(),
                brute_t.cell(),
                ratio(brute_t, ours_t),
                f"{agree}/{graphs}",
            ]
        )
    headers = [
        "d",
        "DAGs",
        "mean I* size",
        "ours (median over DAGs)",
        "brute force",
        "brute / ours",
        "same size and verifying",
    ]
    return markdown_table(headers, rows)


def scaling_table(sizes: list[int], repeats: int, seed: int) -> str:
    rows = []
    for d in sizes:
        rng = np.random.default_rng([seed, d, 1])
        adjacency = random_sparse_adjacency(rng, d, 3.0)
        build = measure(lambda a=adjacency: DAG(a), repeats=min(repeats, 5), warmup=0)
        dag = DAG(adjacency)
        mis = minimum_intervention_set(dag)
        total = measure(lambda dag=dag: compute_mis(dag), repeats=repeats)
        covered = measure(lambda dag=dag: covered_edges(dag), repeats=repeats)
        order = measure(lambda dag=dag: topological_order(dag.adjacency), repeats=repeats)
        rows.append(
            [
                d,
                dag.n_edges,
                int(covered_edges(dag).sum()),
                len(mis),
                total.cell(),
                covered.cell(),
                order.cell(),
                build.cell(),
            ]
        )
    headers = [
        "d",
        "edges",
        "covered",
        "I* size",
        "minimum_intervention_set",
        "covered_edges",
        "topological_order",
        "DAG(adjacency) (validation)",
    ]
    return markdown_table(headers, rows)


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--small-sizes", type=int, nargs="+", default=[4, 6, 8, 10])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10_000])
    parser.add_argument("--graphs", type=int, default=10, help="DAGs per small size")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    small = args.small_sizes[:1] if args.smoke else args.small_sizes
    large = args.sizes[:1] if args.smoke else args.sizes
    graphs = 2 if args.smoke else args.graphs
    repeats = args.repeats or (3 if args.smoke else 15)

    print_header(
        "minimum_intervention_set vs brute-force verifying-set search",
        "Median wall time (IQR, fastest run, runs). Table 1 pools the per-DAG medians over the DAGs of a size.",
    )
    print(small_table(small, graphs, repeats, args.seed))
    print("\nScaling on sparse random DAGs (about 3 neighbours per node):\n")
    print(scaling_table(large, repeats, args.seed))


if __name__ == "__main__":
    main()
