"""The frontier ladder's claims and every ladder's headroom, from the test split.

    python experiments/frontier_claims.py             # run (or resume) the sweeps, print the blocks
    python experiments/frontier_claims.py --count 20 --frontier-only  # the first 20 test indices
    python experiments/frontier_claims.py --no-sweep --paste  # blocks from the rows present
    python experiments/readme_claims.py --paste       # builds these blocks with the others

Manifest indices 100-199 of every frontier level (the test split; calibration used generated
seeds only, ``experiments/calibrate_frontier.py``). The sweep runs the frontier's agents
(:data:`acdb_gym.report.frontier.SWEEP_AGENTS`) into ``runs/claims/frontier``; the shortcut gate
(:func:`acdb_gym.report.gate.gate_levels`, with the estimator-default probe on the levels with a
design id) and the criteria (:func:`acdb_gym.report.frontier.frontier_levels`, the MDD at the
run's own 100 seeds) are computed on the same rows. ``block_ladder_headroom`` reads the sweeps of
``readme_claims.py`` and :data:`LADDER_SWEEPS` for every other ladder.

Blocks: ``frontier`` (README's first results table: every agent of the suite per level with CIs,
the headroom and the paired tests), ``frontier-criteria`` (the done-when of the ladder: best agent
far below the oracle, gate, MDD, reachability) and ``ladder-headroom`` (per ladder, the best known
agent and its headroom).
"""

from __future__ import annotations

import functools
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from acdb_gym.core.ladders.shipped import ALL_LADDERS, FRONTIER, FRONTIER_LADDER
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.report import load_results, paired_test
from acdb_gym.report.aggregation import prepare, summarize_prepared
from acdb_gym.report.frontier import (
    ABLATION,
    FLOOR_MAX,
    GAP_DIRECTED,
    GAP_FIELD,
    MDD_MAX,
    POWER_SEEDS,
    REACH_MIN,
    REFERENCE,
    SUITE,
    SWEEP_AGENTS,
    FrontierLevel,
    frontier_levels,
)
from acdb_gym.report.gate import GateLevel, gate_levels
from acdb_gym.report.headroom import headroom_rows
from acdb_gym.report.order_shortcuts import (
    hub_order_f1,
    order_audit_of,
    prefetch_order_shortcuts,
)
from acdb_gym.report.statistics import bootstrap_ci
from acdb_gym.report.tables import format_p_value, md_table
from acdb_gym.report.types import Estimate, PairedTest
from acdb_gym.sweep.run import SweepConfig, run_sweep

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "runs" / "claims"
FIRST, COUNT = 100, 100
LEVELS = tuple(FRONTIER_LADDER)
Rows = list[dict[str, Any]]

SHORT = {
    "rl:models/acdb_design_graph/model.zip": "rl: acdb_design_graph",
    "rl:models/acdb_design_n3/model.zip": "rl: acdb_design_n3",
    "rl:models/acdb_design_n3_power/model.zip": "rl: acdb_design_n3_power",
}
"""Shorter names of the policies in tables."""

CLAIM_AGENTS = tuple(agent for agent in SWEEP_AGENTS if agent != "random")
"""What the claims sweep: the frontier's agents but ``random``, whose floor has a closed form
(DESIGN §9) and whose 100 draws an instance cost more than any other agent."""


def span() -> str:
    """The test indices the blocks come from, and whether that is the whole test split."""
    text = f"manifest indices {FIRST}–{FIRST + COUNT - 1}"
    if COUNT < 100:
        text += f", {COUNT} of the test split's 100: a partial claim"
    return text


@dataclass(frozen=True)
class LadderSweep:
    """The agents run on one ladder's test split for its headroom (``runs/claims/<run>``)."""

    run: str
    ladder: str
    agents: tuple[str, ...]
    levels: tuple[str, ...] = ()
    first: int = FIRST
    count: int = COUNT


CORE = ("oracle", "pc", "pc_greedy", "pc_active", "bic_active")
LADDER_SWEEPS = (
    LadderSweep("v0", "v0", CORE),
    LadderSweep("v1", "v1", CORE),
    LadderSweep("v1-nongaussian", "v1-nongaussian", (*CORE, "lingam", "lingam_active")),
    LadderSweep("v1-nonlinear", "v1-nonlinear", CORE),
    LadderSweep("v1-hidden", "v1-hidden", CORE),
    LadderSweep(
        "v1-latent", "v1-latent", ("oracle", "pc", "pc_active", "bic_active", "fci", "fci_active")
    ),
    LadderSweep("v1-n3", "v1-n3", CORE),
    LadderSweep("real", "real", CORE),
    LadderSweep("sachs-experiments", "sachs-experiments", (*CORE, "fci_active")),
    LadderSweep("large", "large", CORE, ("L0", "L1", "L2"), first=0, count=50),
)
"""What each ladder's headroom is measured on (the frontier's own run aside): the oracle and
the classical suite (pc, pc_greedy, pc_active, bic_active where d <= 100) with each family's
fitted agent. The large ladder has 50 seeds a level and no test split, and bic_active is run
on its levels up to d = 100; its row is labelled."""


def run_sweeps(workers: int, *, ladders: bool = True) -> None:
    """The frontier's sweep (its first :data:`COUNT` test indices) and, with ``ladders``, every
    ladder's headroom sweep, on the test split."""
    plans = [(FRONTIER, FRONTIER, CLAIM_AGENTS, LEVELS, FIRST, COUNT)]
    plans += [
        (s.run, s.ladder, s.agents, s.levels or tuple(ALL_LADDERS[s.ladder]), s.first, s.count)
        for s in (LADDER_SWEEPS if ladders else ())
    ]
    for run, ladder, agents, levels, first, count in plans:
        config = SweepConfig(
            RUNS / run,
            ladder,
            levels,
            seeds=count,
            first_index=first,
            agents=agents,
            workers=workers,
            progress=False,
        )
        summary = run_sweep(config)
        print(f"{run} {ladder}: {summary.finished} run, {summary.skipped} done", flush=True)
        if summary.failed or summary.not_run:
            raise SystemExit(f"jobs of {run} {ladder} failed or did not run; rerun to retry them")


def frontier_rows() -> Rows:
    """The ok rows of the frontier's test split."""
    return [
        row
        for row in load_results(RUNS / FRONTIER)
        if row["ladder"] == FRONTIER
        and row["status"] == "ok"
        and FIRST <= int(row["manifest_index"]) < FIRST + COUNT
        and row["agent"] in SWEEP_AGENTS
    ]


WORKERS = 2
"""Worker processes of the order audits (``--workers``; the blocks read the module's value)."""


@functools.lru_cache(maxsize=1)
def _prefetched() -> None:
    """The order audits and hub orders of every frontier instance of the blocks, computed once in
    :data:`WORKERS` processes before a block reads them (one process would take most of the
    blocks' time: each audit regenerates a nonlinear world). Only the frontier blocks call it."""
    instances = {
        (FRONTIER_LADDER[str(row["level"])].spec, int(row["seed"]))
        for row in frontier_rows()
        if row["agent"] == "oracle"
    }
    prefetch_order_shortcuts(instances, WORKERS)


@functools.lru_cache(maxsize=1)
def _gates() -> tuple[GateLevel, ...]:
    _prefetched()
    return gate_levels(prepare(frontier_rows()), design_indices=range(FIRST, FIRST + COUNT))


@functools.lru_cache(maxsize=1)
def _levels() -> tuple[FrontierLevel, ...]:
    return frontier_levels(prepare(frontier_rows()).ok, _gates(), power_seeds=POWER_SEEDS)


def _pct(value: float) -> str:
    return f"{100 * value:.1f}" if math.isfinite(value) else "—"


def _ci(estimate: Estimate) -> str:
    if not estimate.n or not math.isfinite(estimate.mean):
        return "—"
    return f"{_pct(estimate.mean)} [{_pct(estimate.low)}, {_pct(estimate.high)}]"


def _name(agent: str) -> str:
    return SHORT.get(agent, agent)


def _per_level(rows: Rows, agent: str, metric: str = "directed_f1") -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for row in rows:
        value = row.get(metric)
        if row["agent"] == agent and value is not None and math.isfinite(float(value)):
            found.setdefault(str(row["level"]), []).append(float(value))
    return found


def _estimate(values: Sequence[float]) -> Estimate:
    return bootstrap_ci([np.array(values)]) if len(values) else Estimate.empty()


def _pooled(by_level: dict[str, list[float]]) -> Estimate:
    strata = [np.array(v) for v in by_level.values() if v]
    return bootstrap_ci(strata) if strata else Estimate.empty()


@functools.lru_cache(maxsize=1)
def _shortcut_values() -> dict[str, dict[str, tuple[str, list[float]]]]:
    """Per level: the best marginal order (by its mean on the level) and the hub order, each
    with its per-instance directed F1 (the order audit's regressions, on every instance)."""
    _prefetched()
    by_level: dict[str, dict[int, int]] = {}
    for row in frontier_rows():
        if row["agent"] == "oracle":
            by_level.setdefault(str(row["level"]), {})[int(row["manifest_index"])] = int(
                row["seed"]
            )
    out: dict[str, dict[str, tuple[str, list[float]]]] = {}
    for level, seeds in by_level.items():
        spec = FRONTIER_LADDER[level].spec
        audits = [order_audit_of(spec, seed) for _, seed in sorted(seeds.items())]
        orders = audits[0].order_f1.keys()
        means = {o: float(np.nanmean([a.order_f1[o] for a in audits])) for o in orders}
        best = max(means, key=lambda o: means[o])
        out[level] = {
            "best marginal order": (
                f"msort:{best[0]}:{best[1]}",
                [a.order_f1[best] for a in audits],
            ),
            "hub order": ("hub", [hub_order_f1(spec, seed) for _, seed in sorted(seeds.items())]),
        }
    return out


def block_frontier() -> str:
    """README's first results table: every agent of the suite on every frontier level."""
    rows = frontier_rows()
    agents = [a for a in SUITE if any(r["agent"] == a for r in rows)]
    overall = {a: _pooled(_per_level(rows, a)) for a in agents}
    agents.sort(key=lambda a: -overall[a].mean)
    headers = ["agent", *LEVELS, "overall", "anytime F1", "η (paper)"]
    body = []
    for agent in agents:
        per = _per_level(rows, agent)
        cells = [_name(agent), *(_ci(_estimate(per.get(lv, []))) for lv in LEVELS)]
        cells += [
            _ci(overall[agent]),
            _pct(_pooled(_per_level(rows, agent, "anytime_f1")).mean),
            _pct(_pooled(_per_level(rows, agent, "efficiency")).mean),
        ]
        body.append(cells)
    shortcuts = _shortcut_values()
    names = {}
    for kind in ("best marginal order", "hub order"):
        per = {lv: shortcuts[lv][kind][1] for lv in LEVELS if lv in shortcuts}
        names[kind] = {lv: shortcuts[lv][kind][0] for lv in per}
        body.append(
            [
                f"{kind} (shortcut)",
                *(_ci(_estimate(per.get(lv, []))) for lv in LEVELS),
                _ci(_pooled(per)),
                "",
                "",
            ]
        )
    floors = {lv.level: lv.floor_closed for lv in _levels()}
    body.append(
        [
            "random (floor, closed form)",
            *(_pct(floors.get(lv, math.nan)) for lv in LEVELS),
            _pct(float(np.mean(list(floors.values())))) if floors else "—",
            "",
            "",
        ]
    )
    for agent, shown in (
        ("oracle", "oracle (privileged)"),
        (REFERENCE, "class_reference (privileged: the class and the best experiments)"),
        (ABLATION, "class_bic_active (privileged: the class only)"),
    ):
        per = _per_level(rows, agent)
        body.append(
            [
                shown,
                *(_ci(_estimate(per.get(lv, []))) for lv in LEVELS),
                _ci(_pooled(per)),
                _pct(_pooled(_per_level(rows, agent, "anytime_f1")).mean),
                _pct(_pooled(_per_level(rows, agent, "efficiency")).mean),
            ]
        )
    best_orders = names["best marginal order"]
    orders = "; ".join(f"{lv} `{best_orders[lv]}`" for lv in LEVELS if lv in best_orders)
    lines = [
        f"On the frontier's test split ({span()}, of each of its {len(LEVELS)} levels; directed F1 in % with its 95% bootstrap CI; anytime F1 "
        "(the headline efficiency) and the paper's η over all levels). The suite: every agent "
        "the package ships that is not privileged, each active one capped at the |I*| it "
        "predicts (`cap:`), the RL policies in `models/` (the size-free graph policy and the few-sample policies under the old and the power rule), and the shortcuts (the best of the 12 "
        f"marginal orders per level: {orders}; the hub order). Privileged rows are bounds, "
        "not competitors.",
        "",
        *md_table(headers, body),
    ]
    lines += _headroom_lines(rows)
    lines += _paired_lines(rows)
    return "\n".join(lines) + "\n"


def _headroom_lines(rows: Rows) -> list[str]:
    prepared = prepare([r for r in rows if r["agent"] in (*SUITE, "oracle")])
    room = headroom_rows(prepared, summarize_prepared(prepared))
    body = [
        [row.level, _name(row.best.split(" (")[0]), _ci(row.best_f1), _ci(row.headroom)]
        for row in room
    ]
    return [
        "Headroom: the oracle's directed F1 minus the best suite agent's, per instance (the oracle "
        "scores 100% on every instance), with its 95% bootstrap CI:",
        "",
        *md_table(("level", "best agent", "its directed F1", "headroom (oracle − best)"), body),
    ]


def _label(rows: Rows, agent: str) -> str:
    panel = next(row["panel"] for row in rows if row["agent"] == agent)
    return f"{agent} ({panel})"


def _paired_lines(rows: Rows) -> list[str]:
    body = []
    for level in LEVELS:
        mine = [r for r in rows if r["level"] == level and r["agent"] in SUITE]
        means: dict[str, float] = {}
        for agent in SUITE:
            values = [float(r["directed_f1"]) for r in mine if r["agent"] == agent]
            if values:
                means[agent] = float(np.mean(values))
        ranked = sorted(means, key=lambda a: -means[a])
        best, runner = ranked[0], ranked[1]
        test = paired_test(mine, _label(mine, best), _label(mine, runner))
        bic = (
            paired_test(mine, _label(mine, "bic_active"), _label(mine, "pc_active"))
            if {"bic_active", "pc_active"} <= set(means)
            else None
        )
        body.append(
            [
                level,
                f"{_name(best)} − {_name(runner)}",
                _test_cell(test),
                _pct(test.mdd),
                "—" if bic is None else _test_cell(bic),
            ]
        )
    return [
        "Paired on the same instances (A − B in points, 95% CI, two-sided sign-flip p; MDD: the "
        f"minimum difference the {COUNT} seeds detect with 80% power):",
        "",
        *md_table(
            ("level", "best − runner-up", "difference", "MDD", "bic_active − pc_active"), body
        ),
    ]


def _test_cell(test: PairedTest) -> str:
    p = format_p_value(test.p_value, exact=test.p_exact)
    return (
        f"{100 * test.mean_difference:+.1f} [{100 * test.ci_low:+.1f}, {100 * test.ci_high:+.1f}], "
        f"p {p if p.startswith('<') else '= ' + p}"
    )


def block_frontier_criteria() -> str:
    """Per level: the criteria of the frontier ladder, on the test split."""
    levels = sorted(_levels(), key=lambda lv: LEVELS.index(lv.level))
    body = []
    for lv in levels:
        best, field = lv.best, lv.best_field
        gap = 1.0 - best.directed.mean
        gate = "—" if lv.gate is None else ("pass" if lv.gate.passed else "**fail**")
        body.append(
            [
                lv.level,
                f"{lv.oracle_perfect}/{lv.n}",
                f"{_name(best.agent)} {_pct(best.directed.mean)}",
                f"{_pct(gap)}",
                f"{lv.field.replace('_f1', ' F1')}: {_pct(1.0 - field.field.mean)}",
                f"{_pct(lv.floor_closed)} / {_pct(lv.floor_measured)}",
                gate,
                f"{_pct(lv.mdd[0])} ({_name(lv.mdd[1])})",
                f"{_ci(lv.reference)}"
                + (" (identifiable F1)" if lv.reach != "directed_f1" else ""),
                _ci(lv.ablation),
            ]
        )
    misses = [
        f"{lv.level}: {', '.join(name for name, ok in lv.checks.items() if not ok)}"
        for lv in levels
        if not lv.kept
    ]
    verdict = (
        "Every level meets every criterion on the test split."
        if not misses
        else "Criteria missed on the test split: " + "; ".join(misses) + "."
    )
    headers = (
        "level",
        "oracle 100% on every field",
        "best suite agent (Dir F1)",
        f"gap to oracle (≥ {100 * GAP_DIRECTED:.0f})",
        f"gap on the level's field (≥ {100 * GAP_FIELD:.0f})",
        f"random floor, closed / measured (≤ {100 * FLOOR_MAX:.0f})",
        "shortcut gate",
        f"largest MDD (≤ {100 * MDD_MAX:.0f})",
        f"reference (≥ {100 * REACH_MIN:.0f})",
        "class_bic_active",
    )
    failures = [f"- {lv.level}: {f}" for lv in levels if lv.gate for f in lv.gate.failures]
    lines = [
        f"The frontier's criteria on its test split ({span()}; "
        f"{sum(lv.n for lv in levels)} instances; values in %). Gap: the oracle's score minus the "
        "best suite agent's (the best marginal order and the hub order included). The gate is "
        "`acdb audit`'s on the same instances (12 marginal orders and the hub order against "
        "random orders, each capped agent against its agent on the anytime F1, the "
        "estimator-default probe where the level has a design id). MDD: the largest minimum "
        "detectable difference (80% power, α = 0.05) of the best agent against another suite "
        f"agent at {POWER_SEEDS} seeds, from the spread of the paired differences on these "
        f"{COUNT}. Reference: `class_reference` (the level's budget and samples; "
        "given the family's mechanism class and the budget's best experiments), scored on "
        "directed F1, or where the budget is below |I*| on identifiable F1 (against what the best "
        "experiments of the budget can identify, DESIGN §6). class_bic_active: the same "
        "estimator with bic_active's own experiments.",
        "",
        *md_table(headers, body),
        *(["Gate failures:", "", *failures, ""] if failures else []),
        verdict,
    ]
    return "\n".join(lines) + "\n"


def _ladder_rows(sweep: LadderSweep) -> Rows:
    """The ok rows of a ladder's headroom sweep, on the instances every one of its agents
    played (a sweep still running, or stopped, gives fewer; the block counts them)."""
    path = RUNS / sweep.run
    if not path.exists():
        return []
    levels = sweep.levels or tuple(ALL_LADDERS[sweep.ladder])
    rows = [
        row
        for row in load_results(path)
        if row["ladder"] == sweep.ladder
        and row["status"] == "ok"
        and row["level"] in levels
        and sweep.first <= int(row["manifest_index"]) < sweep.first + sweep.count
        and row["agent"] in sweep.agents
    ]
    played: dict[tuple[str, int], set[str]] = {}
    for row in rows:
        played.setdefault((row["level"], int(row["manifest_index"])), set()).add(row["agent"])
    complete = {key for key, agents in played.items() if agents == set(sweep.agents)}
    return [row for row in rows if (row["level"], int(row["manifest_index"])) in complete]


def _index_span(sweep: LadderSweep, indices: Sequence[int]) -> str:
    """The manifest indices a ladder's row stands on, and whether they are all its sweep's."""
    span = f"{indices[0]}–{indices[-1]}"
    if sweep.first != FIRST:
        span += " (no test split)"
    if len(indices) < sweep.count:
        span += f" ({len(indices)} of {sweep.count}: partial)"
    return span


def block_ladder_headroom() -> str:
    """Per ladder: the best known agent (pooled over its levels) and its headroom."""
    body = []
    sweeps = (
        LadderSweep(FRONTIER, FRONTIER, (*SUITE, "oracle"), count=COUNT),
        *LADDER_SWEEPS,
    )
    missing = []
    for sweep in sweeps:
        rows = _ladder_rows(sweep)
        if not rows:
            missing.append(sweep.ladder)
            continue
        prepared = prepare(rows)
        room = {r.level: r for r in headroom_rows(prepared, summarize_prepared(prepared))}
        overall = room["overall"]
        per_level = [r for name, r in room.items() if name != "overall"]
        worst = min(per_level, key=lambda r: r.headroom.mean)
        played = {(row["level"], int(row["manifest_index"])) for row in rows}
        split = _index_span(sweep, sorted({index for _, index in played})) + (
            f", {len(played)} instances"
        )
        body.append(
            [
                sweep.ladder,
                str(len(per_level)),
                split,
                _name(overall.best.split(" (")[0]),
                _ci(overall.best_f1),
                _ci(overall.headroom),
                f"{_pct(worst.headroom.mean)} ({worst.level})",
            ]
        )
    lines = [
        "The best known agent of each ladder (pooled over its levels, among the agents run on "
        "it: pc, pc_greedy, pc_active, bic_active where d ≤ 100, and each family's fitted agent; "
        "on the frontier its whole suite) and its headroom, the oracle's directed F1 minus its "
        "own (%, 95% CI); the smallest per-level headroom beside it.",
        "",
        *md_table(
            (
                "ladder",
                "levels",
                "indices",
                "best known agent",
                "its directed F1",
                "headroom",
                "smallest level headroom",
            ),
            body,
        ),
    ]
    if missing:
        lines += [
            "",
            "Not measured yet (no test instance on which every agent of its sweep, "
            f"`LADDER_SWEEPS`, has a row under `runs/claims/`): {', '.join(missing)}.",
        ]
    return "\n".join(lines) + "\n"


BLOCKS = {
    "frontier": block_frontier,
    "frontier-criteria": block_frontier_criteria,
    "ladder-headroom": block_ladder_headroom,
}


def complete_count() -> int:
    """How many test indices from 100 on every frontier level has a row of every claims agent
    for (the count a partial sweep supports; 100 when the sweep is complete)."""
    seen: dict[tuple[str, int], set[str]] = {}
    for row in load_results(RUNS / FRONTIER) if (RUNS / FRONTIER).exists() else []:
        if row["status"] == "ok" and row["agent"] in CLAIM_AGENTS:
            seen.setdefault((row["level"], int(row["manifest_index"])), set()).add(row["agent"])
    wanted = set(CLAIM_AGENTS)
    count = 0
    while count < 100 and all(seen.get((lv, FIRST + count)) == wanted for lv in LEVELS):
        count += 1
    return count


def write_blocks(texts: dict[str, str], *, paste: bool) -> None:
    """Write each block's text to ``docs/claims/<name>.md`` (wrapped as ``readme_claims.py``
    wraps its own) and, with ``paste``, paste it into the READMEs."""
    sys.path.insert(0, str(ROOT / "experiments"))
    import readme_claims

    readme_claims.CLAIMS.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (readme_claims.CLAIMS / f"{name}.md").write_text(readme_claims.wrap_prose(text))
        print(f"docs/claims/{name}.md written", flush=True)
    if paste:
        readme_claims.paste(list(texts))


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="sweep worker processes")
    parser.add_argument("--no-sweep", action="store_true", help="build from the rows present")
    parser.add_argument(
        "--count",
        type=int,
        default=None,
        help="frontier test indices per level, from 100 (default: 100, or with --no-sweep the "
        "indices every level has complete; fewer than 100 is a partial claim and the blocks "
        "say so)",
    )
    parser.add_argument(
        "--frontier-only", action="store_true", help="sweep the frontier only, not the ladders"
    )
    parser.add_argument(
        "--write", action="store_true", help="write the blocks to docs/claims/ (like readme_claims)"
    )
    parser.add_argument("--paste", action="store_true", help="--write, then paste into the READMEs")
    parser.add_argument(
        "--sweeps-only", action="store_true", help="run the sweeps, build nothing (readme_claims)"
    )
    parser.add_argument(
        "--block",
        choices=list(BLOCKS),
        help="print this block alone, from the rows present (readme_claims)",
    )
    args = parser.parse_args()
    if args.sweeps_only:
        run_sweeps(args.workers, ladders=not args.frontier_only)
        return
    if args.block:
        globals()["COUNT"] = max(1, complete_count())
        globals()["WORKERS"] = args.workers
        print(BLOCKS[args.block](), end="")
        return
    count = args.count
    if count is None:
        count = complete_count() if args.no_sweep else COUNT
    if not 1 <= count <= COUNT:
        raise SystemExit(f"--count must be in [1, {COUNT}], got {count}")
    globals()["COUNT"] = count  # the blocks read the module's COUNT
    start = time.perf_counter()
    if not args.no_sweep:
        run_sweeps(args.workers, ladders=not args.frontier_only)
    globals()["WORKERS"] = args.workers
    texts = {}
    for name, build in BLOCKS.items():
        texts[name] = build()
        print(texts[name])
        print(f"({name})", flush=True)
    if args.write or args.paste:
        write_blocks(texts, paste=args.paste)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    run_script(main)
