"""The batched PC (``pc_cpdag(backend="batched")``) vs causal-learn's ``pc`` on the same data.

Both run PC-stable with Fisher-z tests at ``alpha = 0.05`` and causal-learn's orientation
(``uc_rule=0``, ``uc_priority=2``); the batched one tests every conditioning set of one size in
one numpy batch. For each size ``d`` one instance of a synthetic level is drawn with
``generate_instance`` (``LevelSpec(d, k = 1.5 d, n_obs = 500, standardized, faithfulness_eps =
0)``, seed ``--seed``) and both are timed on its observational sample:

* causal-learn: ``pc(data, 0.05, "fisherz", show_progress=False)`` in a forked child with a
  ``--cap`` s limit per call (one timed run from d = 50 on, where a call takes seconds);
* batched: ``acdb_gym.discovery.pc_batched.pc_batched(data)``, which ``pc_cpdag`` decodes.

"identical" says whether causal-learn's output equals ours: the same skeleton, the same
separating sets (``cg.sepset``, entry for entry) and the same edge marks. "tests" counts the
conditional-independence tests of one run, both sides of a pair counted (as causal-learn calls
them). Times: median (IQR, fastest, runs); CPU: median process time of our runs.

Run: ``python benchmarks/pc_batched_vs_causallearn.py [--smoke] [--repeats N]
[--sizes 10 20 50 100] [--seed 0] [--cap 30]``
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as bench

from acdb_gym.core.worlds.instance import generate_instance
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.discovery.pc_batched import BatchedPCResult, pc_batched

ALPHA = 0.05
N_OBS = 500

Outcome = tuple[np.ndarray, np.ndarray, dict[tuple[int, int], tuple[frozenset[int], ...]]]
"""Directed edges, undirected edges and separating sets, comparable across processes."""


def make_data(d: int, seed: int) -> np.ndarray:
    """The observational sample of a synthetic level with ``1.5 d`` edges."""
    spec = LevelSpec(
        d=d,
        k=(3 * d) // 2,
        n_obs=N_OBS,
        n_int=4,
        noise_var=1.0,
        slack=0,
        faithfulness_eps=0.0,
        standardized=True,
    )
    return np.array(generate_instance(spec, seed).d_obs)


def run_causallearn(data: np.ndarray) -> Any:
    """causal-learn's PC as ``pc_cpdag`` calls it."""
    from causallearn.search.ConstraintBased.PC import pc

    return pc(np.ascontiguousarray(data), ALPHA, "fisherz", show_progress=False)


def causallearn_outcome(cg: Any) -> Outcome:
    """causal-learn's marks and separating sets in our terms."""
    marks = cg.G.graph
    sepsets = {
        (a, b): tuple(frozenset(int(v) for v in s) for s in cg.sepset[a, b])
        for a, b in itertools.combinations(range(marks.shape[0]), 2)
        if cg.sepset[a, b] is not None
    }
    return (marks == -1) & (marks.T == 1), (marks == -1) & (marks.T == -1), sepsets


def identical(ours: BatchedPCResult, theirs: Outcome) -> str:
    """``yes`` when every part agrees, else the parts that differ."""
    directed, undirected, sepsets = theirs
    skeleton = directed | directed.T | undirected
    parts = {
        "skeleton": np.array_equal(ours.skeleton, skeleton),
        "sepsets": dict(ours.sepsets) == sepsets,
        "marks": np.array_equal(ours.directed, directed)
        and np.array_equal(ours.undirected, undirected),
    }
    failed = [name for name, same in parts.items() if not same]
    return "yes" if not failed else "NO: " + ", ".join(failed)


def main() -> None:
    parser = bench.base_parser(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 50, 100])
    parser.add_argument("--seed", type=int, default=0, help="instance seed")
    parser.add_argument("--cap", type=float, default=30.0, help="seconds per causal-learn call")
    args = parser.parse_args()
    sizes = [10] if args.smoke else args.sizes
    repeats = args.repeats or (1 if args.smoke else 5)
    have_peer = bench.peer_available("causallearn.search.ConstraintBased.PC")

    bench.print_header(
        "Batched PC vs causal-learn's pc",
        f"Fisher-z PC-stable at alpha = {ALPHA} on the observational sample (n = {N_OBS}) of "
        "one synthetic instance per size (k = 1.5 d edges). Ratio = causal-learn / batched.",
    )
    rows = []
    skipped: bench.Skipped | None = None
    for d in sizes:
        data = make_data(d, args.seed)
        result = pc_batched(data)
        ours = bench.measure(lambda x=data: pc_batched(x), repeats=repeats)
        theirs: bench.Timing | bench.Skipped | str
        same = "–"
        if not have_peer:
            theirs = bench.PEER_MISSING
        elif skipped is not None:
            theirs = skipped
        else:
            theirs, outcome = bench.run_capped(
                lambda x=data: x,
                run_causallearn,
                repeats=1 if d >= 50 else repeats,
                cap=args.cap,
                check=causallearn_outcome,
            )
            if isinstance(theirs, bench.Skipped):
                skipped = theirs
            else:
                same = identical(result, outcome)  # type: ignore[arg-type]
        rows.append(
            [
                d,
                int(result.skeleton.sum()) // 2,
                result.n_tests,
                theirs if isinstance(theirs, str) else theirs.cell(),
                ours.cell(),
                ours.cpu_cell(),
                bench.ratio(theirs, ours),
                same,
            ]
        )
    headers = ["d", "edges found", "tests", "causal-learn", "batched", "batched CPU", "bench.ratio"]
    print(bench.markdown_table([*headers, "identical"], rows))


if __name__ == "__main__":
    main()
