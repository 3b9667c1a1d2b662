"""score() vs gCastle's castle.metrics.MetricsDAG on the same true DAG and submission.

Inputs per size ``d``: a random DAG (about 3 neighbours per node, at least 0.3 density for
tiny ``d``) and a submission derived from its CPDAG with every kind of error (10 % of the edges
dropped, 10 % of the directed ones reversed, ``d / 5`` extra edges). gCastle receives them as
``B_true`` (0/1) and ``B_est`` (0/1, an undirected edge as 1 in both directions, its CPDAG
convention).

What each side computes. ``MetricsDAG(B_est, B_true)`` returns 9 numbers: fdr, tpr, fpr, shd,
nnz, precision, recall, F1, gscore; it validates and converts the matrices in pure-Python
``d x d`` loops and computes precision/recall/F1/gscore through pandas element-wise maps.
``score(dag, submission)`` returns the 18 fields of the ACDB contract, including the CPDAG-based
compelled metrics and ``|I*|``, which need the true graph's CPDAG and minimum intervention set.

Columns: "cold" gives ``score`` a new ``DAG`` object every call (built untimed), so it computes
the CPDAG and ``|I*|`` each time. "warm" reuses one ``DAG`` (and an instance-like truth with
``i_star``), so the truth-side graph algorithms are remembered; this is the fair comparison,
since MetricsDAG computes nothing about equivalence classes, and it is what repeated scoring of
the same world (the sweep's 100 random draws per instance, every env episode) pays.

Run: ``python benchmarks/score_vs_gcastle.py [--smoke] [--repeats N] [--sizes 10 30 100 300]``
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    PEER_MISSING,
    Timing,
    base_parser,
    markdown_table,
    measure,
    measure_with_setup,
    peer_available,
    print_header,
    ratio,
)
from _graphs import random_dag_adjacency

from acdb_gym.core.graphs import DAG, PDAG, cpdag, minimum_intervention_set
from acdb_gym.core.scoring import score


class _Truth:
    """An instance-like truth (``dag`` and ``i_star``), as ``score`` gets from the env."""

    def __init__(self, dag: DAG) -> None:
        self.dag = dag
        self.i_star = minimum_intervention_set(dag)


def make_submission(dag: DAG, rng: np.random.Generator) -> PDAG:
    """The CPDAG of ``dag`` with dropped, reversed and extra edges (still a valid PDAG)."""
    base = cpdag(dag)
    directed = np.array(base.directed)
    undirected = np.array(base.undirected)
    rows, cols = np.nonzero(directed | np.triu(undirected))
    drop = rng.random(rows.size) < 0.1
    directed[rows[drop], cols[drop]] = False
    undirected[rows[drop], cols[drop]] = undirected[cols[drop], rows[drop]] = False
    # Reverse some directed edges, then add extra edges along the true order: keeps it acyclic
    # only if the reversals do not close a cycle, so reverse edges whose pair has no other path
    # by trying and falling back.
    order = dag.topological_order()
    position = np.empty(dag.n_nodes, dtype=np.int64)
    position[order] = np.arange(dag.n_nodes)
    for i, j in zip(*np.nonzero(directed), strict=True):
        if rng.random() < 0.1:
            trial = directed.copy()
            trial[i, j], trial[j, i] = False, True
            try:
                PDAG(trial, undirected)
            except ValueError:
                continue
            directed = trial
    n_extra = max(1, dag.n_nodes // 5)
    skeleton = directed | directed.T | undirected
    while n_extra:
        a, b = rng.integers(0, dag.n_nodes, size=2)
        if a == b or skeleton[a, b]:
            continue
        tail, head = (a, b) if position[a] < position[b] else (b, a)
        trial = directed.copy()
        trial[tail, head] = True
        try:
            PDAG(trial, undirected)
        except ValueError:
            continue
        directed, skeleton[a, b], skeleton[b, a] = trial, True, True
        n_extra -= 1
    return PDAG(directed, undirected)


def gcastle_inputs(dag: DAG, submission: PDAG) -> tuple[np.ndarray, np.ndarray]:
    """``(B_est, B_true)`` as integer 0/1 matrices (undirected = 1 both ways)."""
    b_est = (submission.directed | submission.undirected).astype(int)
    return b_est, dag.adjacency.astype(int)


def main() -> None:
    parser = base_parser(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 30, 100, 300])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = args.sizes[:1] if args.smoke else args.sizes
    repeats = args.repeats or (5 if args.smoke else 50)
    have_peer = peer_available("castle.metrics")

    print_header(
        "score vs gCastle MetricsDAG",
        "Median wall time (IQR, fastest run, runs); ratio = MetricsDAG median / ours "
        "(and the ratio of the fastest runs).",
    )
    rows = []
    for d in sizes:
        rng = np.random.default_rng([args.seed, d])
        adjacency = random_dag_adjacency(
            rng, d, max(0.3, 3.0 / (d - 1)) if d < 10 else 3.0 / (d - 1)
        )
        dag = DAG(adjacency)
        submission = make_submission(dag, rng)
        truth = _Truth(dag)
        cold = measure_with_setup(
            lambda a=adjacency: DAG(a), lambda fresh, s=submission: score(fresh, s), repeats=repeats
        )
        warm_dag = measure(lambda g=dag, s=submission: score(g, s), repeats=repeats)
        warm = measure(lambda t=truth, s=submission: score(t, s), repeats=repeats)
        peer: Timing | str = PEER_MISSING
        if have_peer:
            from castle.metrics import MetricsDAG

            b_est, b_true = gcastle_inputs(dag, submission)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                peer = measure(lambda e=b_est, t=b_true: MetricsDAG(e, t).metrics, repeats=repeats)
        report: Any = score(truth, submission)
        rows.append(
            [
                d,
                dag.n_edges,
                f"{report.directed_f1:.2f} / {report.shd}",
                cold.cell(),
                warm_dag.cell(),
                warm.cell(),
                peer if isinstance(peer, str) else peer.cell(),
                ratio(peer, cold),
                ratio(peer, warm),
            ]
        )
    headers = [
        "d",
        "edges",
        "directed F1 / SHD",
        "score, cold (new DAG)",
        "score, warm DAG",
        "score, warm instance",
        "MetricsDAG",
        "MetricsDAG / cold",
        "MetricsDAG / warm instance",
    ]
    print(markdown_table(headers, rows))


if __name__ == "__main__":
    main()
