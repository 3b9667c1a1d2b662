"""The claims about measured data: real against fitted Sachs experiments, and the cause-effect
pairs (DESIGN §3.5, §3.6, §7).

    python experiments/measured_claims.py              # run (or resume) the sweeps, write the blocks
    python experiments/readme_claims.py --only real-experiments tuebingen-pairs --no-sweep --paste

Two sweeps into ``runs/claims/`` (resumable; ``experiments/readme_claims.py`` runs them too):

* ``sachs-experiments``: the real-experiment level ``Cells`` and the fitted Sachs worlds
  ``Fitted`` and ``Fitted-Spline`` with the same targets allowed, same sample sizes and the
  same labelling per manifest index, on the test split (indices 100-199), for pc, pc_greedy,
  pc_active, bic_active, fci_active, the strongest marginal order on ``Cells``'s development
  indices 0-99 (``msort:abs_skew:desc``, +14.2 points over a random order there; ``python
  benchmarks/marginal_orders.py --ladders sachs-experiments:Cells --seeds 100``), random and
  the oracle.
* ``tuebingen``: every pair of ``Pairs`` (99, 94 rows each) and of ``Pairs-1000`` (36, 1,000
  rows each), one manifest index per pair, for the data-only orientation methods. The pairs
  have no development split: no method here was tuned on them, and the table is over all pairs.

Each block is built from the rows with the report's functions (bootstrap CIs of
:func:`acdb_gym.report.summarize`, paired sign-flip tests of :func:`acdb_gym.report.paired_test`,
the pairs section's weighted accuracy) and written to ``docs/claims/<name>.md``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from acdb_gym.core.ladders.shipped import SACHS_EXPERIMENT_LADDER, TUEBINGEN_LADDER
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.report import load_results, paired_test, summarize
from acdb_gym.report.load import as_rows
from acdb_gym.report.pairs import pair_accuracies
from acdb_gym.report.tables import format_p_value, md_table
from acdb_gym.report.types import PairedTest
from acdb_gym.sweep.run import SweepConfig, run_sweep

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "runs" / "claims"
CLAIMS = ROOT / "docs" / "claims"
FIRST, COUNT = 100, 100
"""The test split of the real-experiment ladder: manifest indices 100-199."""

BEST_ORDER = "msort:abs_skew:desc"
"""The strongest marginal order on ``Cells``'s development indices 0-99."""
EXPERIMENT_AGENTS = (
    "pc",
    "pc_greedy",
    "pc_active",
    "bic_active",
    "fci_active",
    BEST_ORDER,
    "random",
    "oracle",
)
EXPERIMENT_LEVELS = tuple(SACHS_EXPERIMENT_LADDER)
PAIR_AGENTS = (
    "anm",
    "lingam",
    "sortnregress",
    "r2sortnregress",
    "randregress",
    BEST_ORDER,
    "pc",
    "random",
    "oracle",
)

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Run:
    """One sweep into ``runs/claims/<run>``."""

    run: str
    ladder: str
    levels: tuple[str, ...]
    agents: tuple[str, ...]
    first: int
    count: int


RUNS_NEEDED = (
    Run(
        "sachs-experiments", "sachs-experiments", EXPERIMENT_LEVELS, EXPERIMENT_AGENTS, FIRST, COUNT
    ),
    *(
        Run("tuebingen", "tuebingen", (name,), PAIR_AGENTS, 0, len(level.manifest))
        for name, level in TUEBINGEN_LADDER.items()
    ),
)


def run_sweeps(workers: int) -> None:
    """Run (or resume) every sweep the two blocks need."""
    for run in RUNS_NEEDED:
        config = SweepConfig(
            RUNS / run.run,
            run.ladder,
            run.levels,
            seeds=run.count,
            first_index=run.first,
            agents=run.agents,
            workers=workers,
            progress=False,
        )
        summary = run_sweep(config)
        print(
            f"{run.run} {','.join(run.levels)}: {summary.finished} run, {summary.skipped} done, "
            f"{summary.failed} failed",
            flush=True,
        )
        if summary.failed or summary.not_run:
            raise SystemExit(f"jobs of {run} failed or did not run; rerun to retry them")


def _rows(run: str, first: int, count: int, agents: Sequence[str]) -> Rows:
    return [
        row
        for row in load_results(RUNS / run)
        if row["status"] == "ok"
        and row["agent"] in agents
        and first <= int(row["manifest_index"]) < first + count
    ]


def _pts(value: float) -> str:
    return f"{100 * value:+.1f}".replace("-", "−")


def _across_levels(rows: Rows, agent: str, a: str, b: str) -> PairedTest:
    """``agent`` on level ``a`` minus on level ``b``, paired by manifest index."""
    mine = [
        {**row, "level": "x", "agent": f"{agent}@{row['level']}"}
        for row in rows
        if row["agent"] == agent and row["level"] in (a, b)
    ]
    panel = mine[0]["panel"]
    return paired_test(mine, f"{agent}@{a} ({panel})", f"{agent}@{b} ({panel})")


def block_real_experiments() -> str:
    """Directed F1 and SHD of every agent on the real experiments and the fitted worlds, and
    the paired real-minus-fitted differences."""
    rows = _rows("sachs-experiments", FIRST, COUNT, EXPERIMENT_AGENTS)
    table = summarize(rows).ladder("sachs-experiments")
    levels = [level for level in EXPERIMENT_LEVELS if level in table.levels]
    body = []
    for row in table.rows:
        cells = [row.label]
        for level in levels:
            f1 = row.per_level[level]
            mine = [
                r
                for r in rows
                if f"{r['agent']} ({r['panel']})" == row.label and r["level"] == level
            ]
            skeleton = 100 * np.mean([float(r["skeleton_f1"]) for r in mine])
            shd = np.mean([float(r["shd"]) for r in mine])
            cells.append(f"{100 * f1.mean:.1f} [{100 * f1.low:.1f}, {100 * f1.high:.1f}]")
            cells.append(f"{skeleton:.1f} / {shd:.1f}")
        body.append(cells)
    headers = ["agent"]
    for level in levels:
        headers += [f"{level} directed F1", "skeleton F1 / SHD"]
    lines = [
        f"On the test split (manifest indices {FIRST}–{FIRST + COUNT - 1}; the same labelling "
        "of the eleven proteins per index on the three levels). Directed F1 in % with its 95% "
        "bootstrap CI, skeleton F1 in % and the mean SHD in edges, against the 17-edge "
        "consensus graph; every level allows experiments on the same six proteins, with the "
        "same budget (|I*| = 3 over them, plus 1), 800 observational rows and 150 per "
        "experiment.",
        "",
        *md_table(headers, body),
    ]
    agents = [a for a in EXPERIMENT_AGENTS if a not in ("oracle",)]
    diff_body = []
    losses = []
    for agent in agents:
        cells = [agent]
        for fitted in levels[1:]:
            test = _across_levels(rows, agent, levels[0], fitted)
            cells.append(
                f"{_pts(test.mean_difference)} [{_pts(test.ci_low)}, {_pts(test.ci_high)}], "
                f"{_p_text(test)}"
            )
            if agent != "random":
                losses.append(test.mean_difference)
        diff_body.append(cells)
    lines += [
        f"Real minus fitted, paired by index (directed F1 in points, 95% CI, sign-flip p over "
        f"{COUNT} instances):",
        "",
        *md_table(["agent", *(f"{levels[0]} − {f}" for f in levels[1:])], diff_body),
        _summary(rows, levels[0], losses),
    ]
    return "\n".join(lines) + "\n"


def _p_text(test: PairedTest) -> str:
    text = format_p_value(test.p_value, exact=test.p_exact)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def _summary(rows: Rows, real: str, losses: Sequence[float]) -> str:
    """One sentence: how much the real experiments cost, who is best there, who falls below
    the random floor."""
    mean = {
        agent: 100
        * float(
            np.mean([r["directed_f1"] for r in rows if r["agent"] == agent and r["level"] == real])
        )
        for agent in EXPERIMENT_AGENTS
    }
    best = max((a for a in mean if a != "oracle"), key=lambda a: mean[a])
    below = [a for a in mean if a not in ("oracle", "random") and mean[a] < mean["random"]]
    text = (
        f"Every agent that reads data scores lower on the real experiments than on either fitted "
        f"world, by {-100 * max(losses):.1f} to {-100 * min(losses):.1f} points; on {real} the "
        f"best is {best} ({mean[best]:.1f}%)"
    )
    if below:
        text += f", and {', '.join(below)} fall below the random floor ({mean['random']:.1f}%)"
    return text + "."


def block_tuebingen_pairs() -> str:
    """Orientation accuracy of the data-only methods on every pair, plain and weighted."""
    rows: Rows = []
    for name, level in TUEBINGEN_LADDER.items():
        rows += [
            row
            for row in _rows("tuebingen", 0, len(level.manifest), PAIR_AGENTS)
            if row["level"] == name
        ]
    accuracies = pair_accuracies(as_rows(rows))
    levels = list(TUEBINGEN_LADDER)
    by_agent: dict[str, dict[str, Any]] = {}
    for a in accuracies:
        by_agent.setdefault(a.agent, {})[a.level] = a
    order = sorted(by_agent, key=lambda agent: -by_agent[agent][levels[0]].weighted)
    body = []
    for agent in order:
        cells = [agent]
        for level in levels:
            a = by_agent[agent][level]
            cells += [
                f"{100 * a.accuracy:.1f} [{100 * a.low:.1f}, {100 * a.high:.1f}]",
                f"{100 * a.weighted:.1f}",
                f"{100 * a.decided:.0f}",
            ]
        body.append(cells)
    headers = ["agent"]
    for level in levels:
        n = len(TUEBINGEN_LADDER[level].manifest)
        headers += [f"{level} ({n}) accuracy", "weighted", "oriented"]
    verdicts = []
    for level in levels:
        above = [a for a in order if "oracle" not in a and by_agent[a][level].low > 0.5]
        below = [a for a in order if "random" not in a and by_agent[a][level].high < 0.5]
        verdicts.append(
            f"on {level} the accuracy's CI lies above a coin flip's 50% for "
            f"{', '.join(above) or 'no method'} and below it for {', '.join(below) or 'none'}"
        )
    lines = [
        "On every pair (no development split: no method was tuned on these pairs). Accuracy: "
        "the share of pairs oriented right (directed F1 on one edge; an undirected or missing "
        "edge counts as wrong), in % with its 95% bootstrap CI; weighted: each pair with its "
        "Tübingen dataset weight; oriented: the share given a direction. Always guessing one "
        "direction scores 50%.",
        "",
        *md_table(headers, body),
        "Besides the oracle, " + "; ".join(verdicts) + ". The LLM agents run on these levels "
        "(tested against a local scripted server) but have no row here: no model was queried.",
    ]
    return "\n".join(lines) + "\n"


BLOCKS = {"real-experiments": block_real_experiments, "tuebingen-pairs": block_tuebingen_pairs}


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="sweep worker processes")
    parser.add_argument("--no-sweep", action="store_true", help="build from the rows present")
    parser.add_argument(
        "--sweeps-only", action="store_true", help="run (or resume) the sweeps, build nothing"
    )
    parser.add_argument(
        "--block", choices=list(BLOCKS), help="print this block only (from the rows present)"
    )
    args = parser.parse_args()
    if args.block:
        print(BLOCKS[args.block](), end="")
        return
    start = time.perf_counter()
    if not args.no_sweep:
        run_sweeps(args.workers)
    if args.sweeps_only:
        return
    CLAIMS.mkdir(parents=True, exist_ok=True)
    for name, build in BLOCKS.items():
        text = build()
        print(text)
        print(f"({name})", flush=True)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    run_script(main)
