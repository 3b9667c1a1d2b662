"""Time ``minimum_intervention_set`` on large sparse random DAGs.

For each size ``d`` it draws one random DAG (uniform random node order, each forward pair an edge
with probability ``expected_degree / (d - 1)``, so a node has ``expected_degree`` neighbours on
average), then reports the median wall time of ``repeats`` calls, measured with
``time.perf_counter``. Building the DAG (which validates acyclicity) is timed separately.

Run: ``.venv/bin/python benchmarks/mis_timing.py [--sizes 1000 10000] [--repeats 5]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from acdb_gym.core.graphs import DAG, covered_edges, minimum_intervention_set


def random_sparse_adjacency(
    rng: np.random.Generator, n_nodes: int, expected_degree: float
) -> np.ndarray:
    """Boolean adjacency of a random DAG with ``Binomial(M, p)`` edges, ``p = degree/(d-1)``,
    placed uniformly among the ``M = d(d-1)/2`` forward pairs of a random node order."""
    n_pairs = n_nodes * (n_nodes - 1) // 2
    n_edges = int(rng.binomial(n_pairs, expected_degree / max(1, n_nodes - 1)))
    codes = np.empty(0, dtype=np.int64)
    while codes.size < n_edges:
        # Draw positions in the order, keep distinct unordered pairs, top up until enough.
        a = rng.integers(0, n_nodes, size=2 * n_edges)
        b = rng.integers(0, n_nodes, size=2 * n_edges)
        keep = a != b
        low, high = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
        codes = np.unique(np.concatenate([codes, low * n_nodes + high]))
    codes = rng.permutation(codes)[:n_edges]
    order = rng.permutation(n_nodes)
    adjacency = np.zeros((n_nodes, n_nodes), dtype=np.bool_)
    adjacency[order[codes // n_nodes], order[codes % n_nodes]] = True
    return adjacency


def median_seconds(function: object, repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``function()``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--expected-degree", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(args.seed).spawn(3)]
    print(f"minimum_intervention_set, median of {args.repeats} runs, time.perf_counter")
    for n_nodes, rng in zip(args.sizes, rngs, strict=False):
        adjacency = random_sparse_adjacency(rng, n_nodes, args.expected_degree)
        start = time.perf_counter()
        dag = DAG(adjacency)
        build = time.perf_counter() - start
        mis = minimum_intervention_set(dag)
        n_covered = int(covered_edges(dag).sum())
        seconds = median_seconds(lambda dag=dag: minimum_intervention_set(dag), args.repeats)
        print(
            f"d={n_nodes:>6}  edges={dag.n_edges:>6}  covered={n_covered:>5}  |MIS|={len(mis):>5}  "
            f"MIS median={seconds * 1e3:9.2f} ms  (DAG build {build * 1e3:8.2f} ms)"
        )


if __name__ == "__main__":
    main()
