"""cpdag() vs causal-learn's dag2cpdag and graphical_models' DAG.cpdag(), sparse and dense DAGs.

For each density and size ``d`` one random DAG is drawn (uniform random node order; sparse:
each forward pair an edge with probability ``3 / (d - 1)``, about 3 neighbours per node; dense:
probability 0.3). Timed, each on the same DAG:

* ours: ``acdb_gym.core.graphs.cpdag`` on a prebuilt ``DAG``. ``cpdag(dag)`` remembers its
  result per ``DAG`` object, so the computation is timed through the uncached
  ``_compute_cpdag(dag)`` that it calls the first time;
* causal-learn: ``causallearn.utils.DAG2CPDAG.dag2cpdag(g)`` on a ``GeneralGraph`` holding the
  DAG (built before timing; only the call is timed);
* graphical_models: ``graphical_models.DAG(nodes, arcs).cpdag()`` on a prebuilt DAG object.

Peers run in a forked child with a 30 s cap per call; a peer that exceeds it at one size is
reported as "skipped (> 30 s)" there and at every larger size of that density. The "agree"
column says whether each finished peer returned the same directed and undirected edges as ours.

Run: ``python benchmarks/cpdag_vs_peers.py [--smoke] [--repeats N] [--sizes 10 50 200 1000]``
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as bench
from _graphs import random_dag_adjacency

from acdb_gym.core.graphs import DAG, PDAG, cpdag

try:  # graphs as a package (older revisions: one module; before the memoization: no such function)
    from acdb_gym.core.graphs.equivalence import _compute_cpdag
except ImportError:  # pragma: no cover
    try:
        from acdb_gym.core.graphs import _compute_cpdag
    except ImportError:
        _compute_cpdag = cpdag

CAP = 30.0
DENSITIES = {"sparse": None, "dense": 0.3}


def _edge_prob(density: str, d: int) -> float:
    fixed = DENSITIES[density]
    return min(1.0, 3.0 / (d - 1)) if fixed is None else fixed


# --------------------------------------------------------------------------- causal-learn


def _causallearn_graph(adjacency: np.ndarray) -> Any:
    """A causal-learn ``GeneralGraph`` holding the DAG (``graph[j, i] = 1, graph[i, j] = -1``
    for ``i -> j``), filled through its matrix: ``add_directed_edge`` updates an ancestor
    matrix in pure Python per edge, which would take minutes at ``d = 1000``."""
    from causallearn.graph.GeneralGraph import GeneralGraph
    from causallearn.graph.GraphNode import GraphNode

    graph = GeneralGraph([GraphNode(f"X{i}") for i in range(adjacency.shape[0])])
    matrix = np.zeros(adjacency.shape, dtype=int)
    matrix[adjacency.T] = 1
    matrix[adjacency] = -1
    graph.graph = matrix
    return graph


def _causallearn_call(graph: Any) -> Any:
    from causallearn.utils.DAG2CPDAG import dag2cpdag

    return dag2cpdag(graph)


def _causallearn_agrees(expected: PDAG) -> Any:
    def check(result: Any) -> bool:
        g = result.graph
        directed = (g == -1) & (g.T == 1)
        undirected = (g == -1) & (g.T == -1)
        return bool(
            np.array_equal(directed, expected.directed)
            and np.array_equal(undirected, expected.undirected)
        )

    return check


# --------------------------------------------------------------------------- graphical_models


def _gm_dag(adjacency: np.ndarray) -> Any:
    import graphical_models

    rows, cols = np.nonzero(adjacency)
    arcs = {(int(i), int(j)) for i, j in zip(rows, cols, strict=True)}
    return graphical_models.DAG(nodes=set(range(adjacency.shape[0])), arcs=arcs)


def _gm_call(dag: Any) -> Any:
    return dag.cpdag()


def _gm_agrees(expected: PDAG) -> Any:
    def check(result: Any) -> bool:
        directed = set(expected.directed_edges())
        undirected = {frozenset(e) for e in expected.undirected_edges()}
        arcs = {(int(i), int(j)) for i, j in result.arcs}
        edges = {frozenset(int(v) for v in e) for e in result.edges}
        return arcs == directed and edges == undirected

    return check


PEERS = {
    "causal-learn dag2cpdag": (
        "causallearn.utils.DAG2CPDAG",
        _causallearn_graph,
        _causallearn_call,
        _causallearn_agrees,
    ),
    "graphical_models DAG.cpdag": ("graphical_models", _gm_dag, _gm_call, _gm_agrees),
}


def _peer_cell(result: bench.Timing | bench.Skipped | str | None) -> str:
    if result is None:
        return "–"
    if isinstance(result, str):
        return result
    return result.cell()


def main() -> None:
    parser = bench.base_parser(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 200, 1000])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = args.sizes[:1] if args.smoke else args.sizes
    repeats = args.repeats or (3 if args.smoke else 15)

    bench.print_header(
        "cpdag vs causal-learn dag2cpdag and graphical_models DAG.cpdag",
        "Median wall time (IQR, fastest run, runs); ratio = peer median / our median. Peers capped at "
        f"{CAP:g} s per call.",
    )
    available = {name: bench.peer_available(spec[0]) for name, spec in PEERS.items()}
    rows = []
    for density in DENSITIES:
        given_up = dict.fromkeys(PEERS, False)
        for d in sizes:
            rng = np.random.default_rng([args.seed, d, len(density)])
            adjacency = random_dag_adjacency(rng, d, _edge_prob(density, d))
            dag = DAG(adjacency)
            ours_result = cpdag(dag)
            ours = bench.measure(lambda dag=dag: _compute_cpdag(dag), repeats=repeats)
            cells: list[str] = []
            ratios: list[str] = []
            agree: list[str] = []
            for name, (_, setup, call, checker) in PEERS.items():
                peer: bench.Timing | bench.Skipped | str
                if not available[name]:
                    peer = bench.PEER_MISSING
                elif given_up[name]:
                    peer = bench.Skipped(CAP)
                else:
                    peer, same = bench.run_capped(
                        lambda a=adjacency, s=setup: s(a),
                        call,
                        repeats=repeats,
                        cap=CAP,
                        check=checker(ours_result),
                    )
                    if isinstance(peer, bench.Skipped):
                        given_up[name] = True
                    else:
                        agree.append(f"{name.split()[0]}: {'yes' if same else 'NO'}")
                cells.append(_peer_cell(peer))
                ratios.append(bench.ratio(peer, ours))
            rows.append(
                [density, d, dag.n_edges, ours.cell(), *cells, *ratios, "; ".join(agree) or "–"]
            )
    headers = [
        "graph",
        "d",
        "edges",
        "ours cpdag",
        *PEERS,
        *(f"{name.split()[0]} / ours" for name in PEERS),
        "agree",
    ]
    print(bench.markdown_table(headers, rows))


if __name__ == "__main__":
    main()
