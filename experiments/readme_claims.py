"""Every who-beats-whom claim of README.md and models/README.md, from the test split.

    python experiments/readme_claims.py            # run (or resume) the sweeps, write docs/claims/
    python experiments/readme_claims.py --paste    # ... and paste each block into the READMEs

Manifest indices 0-99 of every level are for development and tuning; 100-199 are the test
split that the READMEs' claims come from (DESIGN §7, "Development and test split"). This script
runs the sweeps the claims need on indices 100-199 (resumable run directories under
``runs/claims/``, so a second run only rebuilds the text), builds each claim's table or
paragraph with the report's own functions (:func:`acdb_gym.report.paired_test`, the bootstrap
CIs of :func:`acdb_gym.report.summarize`, the transfer table, the sortability checks), the
latent-confounder table of ``experiments/latent_claim.py``, the real-experiment and
cause-effect-pair tables of ``experiments/measured_claims.py`` (which runs its own two sweeps),
the few-sample policy's claims of
``experiments/regime_claims.py`` and the RL evaluations
(``experiments/eval_design_policy.py``, ``experiments/eval_rl.py``, run on indices 100-199 when
their JSON files are missing), and writes each block to ``docs/claims/<name>.md``. ``--paste``
replaces the text between ``<!-- claims:<name> -->`` and ``<!-- /claims:<name> -->`` in
README.md and models/README.md with the block; ``tests/test_readme_claims.py`` checks that
every marked block equals its file byte for byte, so a hand edit or a stale paste fails.

From scratch the sweeps (about 16,700 episodes), the latent table and the RL evaluations took
about 30 minutes on the project's 2 cores shared with other jobs (load average 6-9); with the run
directories present, under a minute.

Paired tests are two-sided sign-flip tests on per-instance differences (the report's: 200,000
random sign patterns, so p below 1e-4 prints as "< 1e-4"; the size-free policy's evaluation uses
10,000 and the v0 L1 policy's 100,000).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from acdb_gym.core.ladders.custom import parse_custom_level
from acdb_gym.core.ladders.shipped import REAL_LADDER
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.discovery.sortability import MARGINAL_FEATURES
from acdb_gym.discovery.sortnregress import SORT_DIRECTIONS
from acdb_gym.report import load_results, paired_test, summarize
from acdb_gym.report.aggregation import prepare
from acdb_gym.report.document import markdown_lines
from acdb_gym.report.load import as_rows
from acdb_gym.report.shortcuts import sortability_rows
from acdb_gym.report.tables import format_p_value, md_table, table2_body, table3_body
from acdb_gym.report.transfer import transfer_parts
from acdb_gym.report.types import LadderSummary, PairedTest
from acdb_gym.sweep.run import SweepConfig, run_sweep

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "runs" / "claims"
CLAIMS = ROOT / "docs" / "claims"
DOCUMENTS = (ROOT / "README.md", ROOT / "docs" / "results.md", ROOT / "models" / "README.md")
FIRST, COUNT = 100, 100
"""The test split: manifest indices 100-199 of every level."""
GRAPH_POLICY = ROOT / "models" / "acdb_design_graph"
L1_POLICY = ROOT / "models" / "acdb_design_l1_v0"
ALPHA = 0.05

Rows = list[dict[str, Any]]


# ----------------------------------------------------------------------------- the sweeps
@dataclass(frozen=True)
class Sweep:
    """One sweep into ``runs/claims/<run>`` on the test split."""

    run: str
    ladder: str
    agents: tuple[str, ...]
    levels: tuple[str, ...] = ("L0", "L1", "L2", "L3", "L4", "L5")
    custom: str = ""
    """A custom level's ``NAME:SPEC`` (then ``ladder`` is ``"custom"``)."""
    count: int = COUNT
    first: int = FIRST
    """The first manifest index (the test split's unless a development sweep says 0)."""


D40 = "D40:d=40,k=60,n_obs=1000,n_int=200,slack=0,standardized=true"
POLICY_AGENT = "rl:models/acdb_design_graph/model.zip"
D40_AGENTS = ("pc", "pc_greedy", "pc_active", "bic_active", POLICY_AGENT)
V1_AGENTS = ("random", "pc", "pc_greedy", "oracle", "sortnregress", "randregress")
V1_SHORTCUTS = ("msort:r2:desc", "hub")
"""The orders the shortcut gate measures on v1 (descending R², the hub order; DESIGN §7)."""
V0_AGENTS = ("random", "pc", "pc_greedy", "sortnregress", "randregress", "pc_active", "bic_active")
FAMILY_AGENTS = (
    "random",
    "pc",
    "pc_greedy",
    "oracle",
    "sortnregress",
    "lingam",
    "pc_rank",
    "bic_active",
)
FAMILY_LEVELS = ("L0", "L1", "L2")
MARGINAL_ORDERS = tuple(
    f"msort:{feature}:{direction}" for feature in MARGINAL_FEATURES for direction in SORT_DIRECTIONS
)
REAL_AGENTS = ("pc", "pc_greedy", "sortnregress", "bic_active")
REAL_LEVELS = tuple(REAL_LADDER)
ORDER_SELECTION = 40
"""Development indices 0-39 choose each real-transfer column's best marginal order (the
marginal-order audit's seeds, DESIGN §3.3)."""
ER_LEVELS = (("v1", "L3"), ("v1-nonlinear", "L3"))
"""The real-transfer table's ER columns."""
SWEEPS = (
    Sweep("v1", "v1", (*V1_AGENTS, "r2sortnregress", "pc_active")),
    Sweep("v0", "v0", V0_AGENTS),
    Sweep("v1", "v1", ("lingam", "pc_rank"), FAMILY_LEVELS),
    Sweep("v1-nongaussian", "v1-nongaussian", FAMILY_AGENTS, FAMILY_LEVELS),
    Sweep("v1-nonlinear", "v1-nonlinear", FAMILY_AGENTS, FAMILY_LEVELS),
    Sweep(
        "v1-nongaussian",
        "v1-nongaussian",
        ("pc", "lingam", "lingam_active", "pc_active", "bic_active"),
    ),
    Sweep("v1", "v1", ("lingam", "lingam_active"), ("L0", "L3")),
    Sweep("v1", "v1", ("bic_active",)),
    Sweep("v1", "v1", ("cap:pc_active", "cap:bic_active")),
    # The shortcuts the gate finds on v1 (DESIGN §7): carried as rows of v1's tables.
    Sweep("v1", "v1", ("randregress", *V1_SHORTCUTS)),
    Sweep("d40", "custom", D40_AGENTS, ("D40",), custom=D40, count=50),
    Sweep("v1-nonlinear", "v1-nonlinear", REAL_AGENTS, ("L3",)),
    # bic_active's search takes about 12 s an episode on the DREAM4 wirings (d = 100).
    Sweep("real", "real", REAL_AGENTS, REAL_LEVELS),
    # The twelve marginal orders on development indices, to choose each column's best.
    *(
        Sweep("orders-dev", ladder, MARGINAL_ORDERS, levels, count=ORDER_SELECTION, first=0)
        for ladder, levels in (
            *((ladder, (level,)) for ladder, level in ER_LEVELS),
            ("real", REAL_LEVELS),
        )
    ),
)


def run_sweeps(workers: int) -> None:
    for sweep in SWEEPS:
        run_one(sweep, workers)
    # Each real-transfer column's best marginal order, chosen on development indices, on the
    # test split.
    for (ladder, level), agent in sorted(chosen_orders().items()):
        run_one(Sweep("orders", ladder, (agent,), (level,)), workers)
    script_output("measured_claims.py", "--workers", str(workers), "--sweeps-only")
    script_output("frontier_claims.py", "--workers", str(workers), "--sweeps-only")


def run_one(sweep: Sweep, workers: int) -> None:
    config = SweepConfig(
        RUNS / sweep.run,
        sweep.ladder,
        sweep.levels,
        seeds=sweep.count,
        first_index=sweep.first,
        agents=sweep.agents,
        workers=workers,
        progress=False,
        custom_levels=(parse_custom_level(sweep.custom),) if sweep.custom else (),
    )
    summary = run_sweep(config)
    print(
        f"{sweep.run} {sweep.ladder} {','.join(sweep.agents)}: {summary.finished} run, "
        f"{summary.skipped} done, {summary.failed} failed",
        flush=True,
    )
    if summary.failed or summary.not_run:
        raise SystemExit(f"jobs of {sweep} failed or did not run; rerun to retry them")


def script_output(script: str, *arguments: str) -> str:
    """What the sibling script ``experiments/<script>`` prints on stdout, run as a process
    (experiments are scripts, never imported); its stderr passes through.

    Raises:
        SystemExit: the script failed (its one-line error is on stderr).
    """
    command = [sys.executable, str(ROOT / "experiments" / script), *arguments]
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command[1:])} failed with status {result.returncode}")
    return result.stdout


ORDERS_DEV = RUNS / "orders-dev" / "results.jsonl"
"""The twelve ``msort`` agents' rows on development indices, which choose the orders."""


def chosen_orders() -> dict[tuple[str, str], str]:
    """Per real-transfer column ``(ladder, level)``, the ``msort`` agent of the highest mean
    directed F1 on development indices 0 .. ORDER_SELECTION - 1 (``runs/claims/orders-dev``),
    as ``experiments/real_transfer.py --print-orders`` chooses it."""
    printed = script_output(
        "real_transfer.py", str(ORDERS_DEV), "--select-indices", _selection(), "--print-orders"
    )
    orders = {}
    for line in printed.splitlines():
        ladder, level, agent = line.split("\t")
        orders[(ladder, level)] = agent
    return orders


def _selection() -> str:
    return f"0-{ORDER_SELECTION - 1}"


def rows_of(run: str, ladder: str) -> Rows:
    """The ok rows of one ladder of a run directory, on the test split only."""
    return [
        row
        for row in load_results(RUNS / run)
        if row["ladder"] == ladder
        and row["status"] == "ok"
        and FIRST <= int(row["manifest_index"]) < FIRST + COUNT
    ]


# ----------------------------------------------------------------------------- formatting
def pts(value: float) -> str:
    """A difference of rates in points, signed, one decimal (− as a minus sign)."""
    return f"{100 * value:+.1f}".replace("-", "−")


def p_text(test: PairedTest) -> str:
    text = format_p_value(test.p_value, exact=test.p_exact)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def test_text(test: PairedTest) -> str:
    """``+4.6 points (95% CI [+3.0, +6.1], p = 0.0002)``."""
    return f"{pts(test.mean_difference)} points ({inline_text(test)})"


def inline_text(test: PairedTest) -> str:
    """``95% CI [+3.0, +6.1], p = 0.0002``."""
    return f"95% CI [{pts(test.ci_low)}, {pts(test.ci_high)}], {p_text(test)}"


def verdict(test: PairedTest, a: str, b: str) -> str:
    """``a is higher than b`` / ``a is lower than b`` at α = 0.05, else no difference."""
    if test.p_value >= ALPHA:
        return f"{a} and {b} are not distinguishable"
    return f"{a} is {'higher' if test.mean_difference > 0 else 'lower'} than {b}"


def ladder_table(rows: Rows, ladder: str, agents: Sequence[str]) -> LadderSummary:
    keep = [row for row in rows if row["agent"] in agents]
    return summarize(keep).ladder(ladder)


def label(rows: Rows, agent: str) -> str:
    panel = next(row["panel"] for row in rows if row["agent"] == agent)
    return f"{agent} ({panel})"


def pair(
    rows: Rows, a: str, b: str, metric: str = "directed_f1", level: str | None = None
) -> PairedTest:
    return paired_test(rows, label(rows, a), label(rows, b), metric, level=level)


def mean_f1(rows: Rows, agent: str, level: str | None = None) -> float:
    values = [
        row["directed_f1"]
        for row in rows
        if row["agent"] == agent and level in (None, row["level"])
    ]
    return 100 * float(np.mean(values))


# ----------------------------------------------------------------------------- the blocks
def block_v0_beyond() -> str:
    rows = rows_of("v0", "v0")
    table = ladder_table(rows, "v0", V0_AGENTS)
    body = [
        [
            row.label,
            f"{100 * row.metrics['directed_f1'].mean:.1f}",
            f"{row.metrics['shd'].mean:.2f}",
            f"{100 * row.metrics['efficiency'].mean:.1f}",
        ]
        for row in table.rows
    ]
    lines = md_table(("agent", "directed F1", "SHD", "η"), body)
    tests = []
    for a, b in (("bic_active", "pc_greedy"), ("bic_active", "pc_active")):
        f1, shd = pair(rows, a, b), pair(rows, a, b, "shd")
        tests.append(
            f"{a} − {b}: directed F1 {test_text(f1)}, SHD {shd.mean_difference:+.2f} edges "
            f"({p_text(shd)})"
        )
    order = pair(rows, "sortnregress", "randregress")
    lines.append(
        f"Paired over the {pair(rows, 'bic_active', 'pc_greedy').n} instances of the test split: "
        f"{'; '.join(tests)}. The variance order (sortnregress − randregress) is worth "
        f"{test_text(order)} on v0."
    )
    return "\n".join(lines) + "\n"


V1_TABLE_AGENTS = (*V1_AGENTS, "r2sortnregress", "pc_active", "bic_active")
V1_PAIRS = (
    ("pc_greedy", "pc", "pc_greedy − pc (the paper's comparison)"),
    ("pc_active", "pc_greedy", "pc_active − pc_greedy"),
    ("bic_active", "pc_active", "bic_active − pc_active"),
    ("sortnregress", "randregress", "sortnregress − randregress"),
    ("r2sortnregress", "randregress", "r2sortnregress − randregress"),
)


def _level_cell(test: PairedTest) -> str:
    return f"{pts(test.mean_difference)} ({format_p_value(test.p_value, exact=test.p_exact)})"


def block_v1_tables() -> str:
    rows = rows_of("v1", "v1")
    rows = [row for row in rows if row["agent"] in V1_TABLE_AGENTS]
    table = ladder_table(rows, "v1", V1_TABLE_AGENTS)
    metrics = ("Skel F1", "Comp F1", "Dir P", "Dir R", "Dir F1", "SHD", "η", "Ess F1")
    two = [[cells[0], *cells[4:]] for cells in table2_body(table, ci=False)]
    lines = ["Table 2, the average across levels (values in %; SHD in edges):", ""]
    lines += md_table(("agent", *metrics), two)
    lines += ["Table 3, directed F1 per level:", ""]
    lines += md_table(("agent", *table.levels, "overall"), table3_body(table, ci=False))
    lines += [
        "Per-level paired tests of directed F1 (A − B in points over the level's 100 "
        "instances, sign-flip p; the report also gives each CI, the minimum detectable "
        "difference and the seeds a 5-point difference needs):",
        "",
    ]
    body = []
    for a, b, name in V1_PAIRS:
        cells = [_level_cell(pair(rows, a, b, level=level)) for level in table.levels]
        body.append([name, *cells, _level_cell(pair(rows, a, b))])
    lines += md_table(("A − B", *table.levels, f"pooled ({len(table.levels) * COUNT})"), body)
    sortability = {row.level: row for row in sortability_rows(prepare(rows))}["overall"]
    var, r2 = sortability.var, sortability.r2
    order = pair(rows, "sortnregress", "randregress")
    r2_order = pair(rows, "r2sortnregress", "randregress")
    v0_rows = rows_of("v0", "v0")
    floors = [mean_f1(rows, "random", level) for level in table.levels]
    lines.append(
        f"On the test split the variance order is worth {test_text(order)} and the R² order "
        f"{test_text(r2_order)} against the same regressions in a random order "
        f"(var-sortability {100 * var.mean:.1f} %, 95% CI [{100 * var.low:.1f}, "
        f"{100 * var.high:.1f}]; R²-sortability {100 * r2.mean:.1f} % [{100 * r2.low:.1f}, "
        f"{100 * r2.high:.1f}], where 50 % is chance); the variance order's minimum detectable "
        f"difference is {100 * order.mdd:.1f} points. Density leakage: the structure-blind "
        f"random floor is {mean_f1(v0_rows, 'random'):.1f} % on v0 and "
        f"{mean_f1(rows, 'random'):.1f} % on v1 ({max(floors):.1f} % at most at any level)."
    )
    return "\n".join(lines) + "\n"


def block_v1_shortcuts() -> str:
    """The orders the shortcut gate finds on v1 (DESIGN §7), as rows on the test split."""
    rows = [row for row in rows_of("v1", "v1") if row["agent"] in ("randregress", *V1_SHORTCUTS)]
    table = ladder_table(rows, "v1", ("randregress", *V1_SHORTCUTS))
    lines = ["Directed F1 per level (%), test split:", ""]
    lines += md_table(("agent", *table.levels, "overall"), table3_body(table, ci=False))
    body = []
    for agent in V1_SHORTCUTS:
        cells = [
            _level_cell(pair(rows, agent, "randregress", level=level)) for level in table.levels
        ]
        body.append(
            [f"`{agent}` − randregress", *cells, _level_cell(pair(rows, agent, "randregress"))]
        )
    lines += ["Against the same regressions in a random order (points, sign-flip p):", ""]
    lines += md_table(("A − B", *table.levels, f"pooled ({len(table.levels) * COUNT})"), body)
    return "\n".join(lines) + "\n"


def family_rows() -> Rows:
    rows = [r for r in rows_of("v1", "v1") if r["level"] in FAMILY_LEVELS]
    rows += [r for r in rows_of("v1-nongaussian", "v1-nongaussian") if r["level"] in FAMILY_LEVELS]
    rows += [r for r in rows_of("v1-nonlinear", "v1-nonlinear") if r["level"] in FAMILY_LEVELS]
    return [r for r in rows if r["agent"] in FAMILY_AGENTS]


def _family_shift(rows: Rows, agent: str, ladder: str) -> PairedTest:
    """The agent on a family ladder minus the agent on v1, paired by level and index."""
    mine = [
        {**r, "ladder": "x", "agent": f"{agent}@{r['ladder']}"}
        for r in rows
        if r["agent"] == agent and r["ladder"] in ("v1", ladder)
    ]
    panel = mine[0]["panel"]
    return paired_test(mine, f"{agent}@{ladder} ({panel})", f"{agent}@v1 ({panel})")


def block_families() -> str:
    rows = family_rows()
    table = [part for part in transfer_parts(as_rows(rows)) if not isinstance(part, str)]
    lines = markdown_lines(table)
    ng, nl = "v1-nongaussian", "v1-nonlinear"
    shift = {(a, f): _family_shift(rows, a, f) for a in FAMILY_AGENTS for f in (ng, nl)}
    n = shift[("pc", ng)].n

    def mean(agent: str, ladder: str) -> str:
        return f"{mean_f1([r for r in rows if r['ladder'] == ladder], agent):.1f}%"

    def delta(agent: str, ladder: str) -> str:
        test = shift[(agent, ladder)]
        return f"{pts(test.mean_difference)} ({p_text(test)})"

    lines.append(
        f"On {n} paired instances per family (3 levels × indices 100–199), a non-Gaussian world "
        f"changes PC's directed F1 by {delta('pc', ng)} and pc_greedy's by {delta('pc_greedy', ng)}"
        f", and moves lingam from {mean('lingam', 'v1')} to {mean('lingam', ng)}; nonlinear "
        f"worlds change pc by {delta('pc', nl)}, pc_greedy by {delta('pc_greedy', nl)}, pc_rank "
        f"by {delta('pc_rank', nl)}, sortnregress by {delta('sortnregress', nl)} and lingam by "
        f"{delta('lingam', nl)}; there pc_greedy reaches {mean('pc_greedy', nl)}, pc "
        f"{mean('pc', nl)}, pc_rank {mean('pc_rank', nl)}, sortnregress "
        f"{mean('sortnregress', nl)} and lingam {mean('lingam', nl)}."
    )
    nonlinear = [r for r in rows if r["ladder"] == nl]
    rank = pair(nonlinear, "pc_rank", "pc")
    lines[-1] += (
        f" On the nonlinear worlds pc_rank − pc is {test_text(rank)}: "
        f"{verdict(rank, 'pc_rank', 'pc')}."
    )
    lines[-1] += (
        f" bic_active, the strongest agent on v1 ({mean('bic_active', 'v1')} on these levels), "
        f"reaches {mean('bic_active', ng)} on the non-Gaussian worlds ({delta('bic_active', ng)}) "
        f"and {mean('bic_active', nl)} on the nonlinear ones ({delta('bic_active', nl)})."
    )
    return "\n".join(lines) + "\n"


def block_lingam_active() -> str:
    v1 = rows_of("v1", "v1")
    ng = rows_of("v1-nongaussian", "v1-nongaussian")
    rescue = []
    for level in ("L0", "L3"):
        test = pair(v1, "lingam_active", "lingam", level=level)
        rescue.append(
            f"{100 * test.mean_b:.1f}% → {100 * test.mean_a:.1f}% at {level} "
            f"({test.n} instances, {p_text(test)})"
        )
    cost = pair(ng, "lingam_active", "lingam")
    active = pair(ng, "pc_active", "lingam")
    bic = pair(ng, "bic_active", "lingam_active")
    return (
        f"On v1's test split (indices 100–199), lingam → lingam_active directed F1: "
        f"{' and '.join(rescue)}. On `v1-nongaussian` (6 levels × indices 100–199, "
        f"{cost.n} instances) lingam reaches {100 * cost.mean_b:.1f}%, lingam_active "
        f"{100 * cost.mean_a:.1f}% ({pts(cost.mean_difference)} points, {inline_text(cost)}: "
        f"{verdict(cost, 'lingam_active', 'lingam')}) and pc_active {100 * active.mean_a:.1f}% "
        f"({pts(active.mean_difference)} points against lingam, {inline_text(active)}); "
        f"bic_active, which assumes Gaussian noise, reaches {100 * bic.mean_a:.1f}% "
        f"({pts(bic.mean_difference)} points against lingam_active, {inline_text(bic)}).\n"
    )


def block_latent() -> str:
    path = RUNS / "latent.md"
    if not path.exists():
        last = FIRST + COUNT - 1
        block = script_output(
            "latent_claim.py", "--first", str(FIRST), "--last", str(last), "--block"
        )
        path.write_text(block)
    return path.read_text()


def _graph_policy_evaluation() -> dict[str, Any]:
    path = GRAPH_POLICY / "evaluation_test.json"
    if not path.exists():
        command = [
            sys.executable,
            str(ROOT / "experiments" / "eval_design_policy.py"),
            "--model",
            str(GRAPH_POLICY / "model.zip"),
            "--first-index",
            str(FIRST),
            "--instances",
            str(COUNT),
            "--custom-instances",
            "0",
            "--out",
            str(path),
        ]
        subprocess.run(command, check=True)
    result: dict[str, Any] = json.loads(path.read_text())
    if result["manifest_indices"] != [FIRST, FIRST + COUNT - 1]:
        raise SystemExit(f"{path} is not on indices {FIRST}-{FIRST + COUNT - 1}; delete it")
    return result


def _f1_p(p: float) -> str:
    """A p-value of the evaluation file as the report prints one (``p = 0.034``, ``p < 1e-4``)."""
    text = format_p_value(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def _losses(result: dict[str, Any], sign: int = -1) -> list[str]:
    """Levels where the policy is significantly below (``sign=-1``) or above a heuristic."""
    out = []
    for row in result["levels"]:
        for name in ("greedy", "pc_active"):
            test = row[f"vs_{name}"]["f1"]
            if test["p"] < ALPHA and test["difference"] * sign > 0:
                out.append(
                    f"{row['ladder']} {row['level']} with {ESTIMATOR_NAMES[row['estimator']]} "
                    "against "
                    f"{'`pc_active`' + chr(39) + 's rule' if name == 'pc_active' else name} "
                    f"({test['difference']:+.3f}, {_f1_p(test['p'])})"
                )
    return out


ESTIMATOR_NAMES = {"true_cpdag": "true CPDAG", "pc": "PC"}


def _sums(result: dict[str, Any], name: str) -> str:
    totals = result["sum_over_levels"]
    return " and ".join(
        f"{totals[e][name]['difference']:+.3f} ({ESTIMATOR_NAMES[e]}, {_f1_p(totals[e][name]['p'])})"
        for e in ("true_cpdag", "pc")
    )


def block_rl_graph_summary() -> str:
    result = _graph_policy_evaluation()
    losses, wins = _losses(result), _losses(result, sign=1)
    return (
        f"On the test split (manifest indices 100–199 of each of the 12 levels, both "
        f"estimators, every targeter on the same instances; `models/README.md` has every "
        f"level) the policy beats random targeting (sum over levels of the mean differences in "
        f"directed F1 {_sums(result, 'random')}) but not the heuristics: against greedy "
        f"max-degree targeting the sums are {_sums(result, 'greedy')}, and against "
        f"`pc_active`'s rule {_sums(result, 'pc_active')}. Against these two heuristics it is "
        f"significantly below (p < 0.05, uncorrected) in {len(losses)} of the 48 level × "
        f"estimator × heuristic cells ({'; '.join(losses) or 'none'}) and significantly above "
        f"in {len(wins)}{' (' + '; '.join(wins) + ')' if wins else ''}.\n"
    )


def block_rl_graph_table() -> str:
    """The table ``eval_design_policy.py`` wrote beside its evaluation file."""
    _graph_policy_evaluation()
    return (GRAPH_POLICY / "evaluation_test.md").read_text()


def _l1_evaluation(estimator: str) -> dict[str, Any]:
    path = L1_POLICY / f"evaluation_test_{estimator}.json"
    if not path.exists():
        command = [
            sys.executable,
            str(ROOT / "experiments" / "eval_rl.py"),
            "--model",
            str(L1_POLICY / "model.zip"),
            "--indices",
            f"{FIRST}:{FIRST + COUNT}",
            "--estimator",
            estimator,
            "--out",
            str(path),
        ]
        subprocess.run(command, check=True)
    result: dict[str, Any] = json.loads(path.read_text())
    if result["instances"] != f"manifest indices {FIRST}..{FIRST + COUNT - 1}":
        raise SystemExit(f"{path} is not on indices {FIRST}-{FIRST + COUNT - 1}; delete it")
    return result


def block_rl_l1_tables() -> str:
    names = {
        "policy": "**policy**",
        "random": "random (untried nodes, whole budget)",
        "greedy": "greedy (max undirected degree)",
        "oracle (I*)": "oracle (I*, privileged)",
    }
    lines = []
    for estimator, title in (
        ("true_cpdag", "With the training estimator (`true_cpdag`):"),
        (
            "pc",
            "With PC as the estimator (what `RLAgent` uses on `ACDBEnv`; the policy never "
            "saw PC graphs):",
        ),
    ):
        result = _l1_evaluation(estimator)
        body = []
        for name, shown in names.items():
            t = result["targeting"][name]
            test = result["policy_vs"].get(name)
            body.append(
                [
                    shown,
                    f"{t['mean_reward']:.4f}",
                    f"{t['standard_error']:.4f}",
                    f"{t['mean_interventions']:.2f}",
                    "" if test is None else f"{test['mean_difference']:+.4f}",
                    "" if test is None else f"{test['p_value']:.2g}",
                ]
            )
        headers = ("targeting", "mean reward", "s.e.", "interventions", "policy − this", "p")
        lines += [title, "", *md_table(headers, body)]
    return "\n".join(lines).rstrip("\n") + "\n"


def block_rl_l1_summary() -> str:
    true, pc = _l1_evaluation("true_cpdag"), _l1_evaluation("pc")

    def f1(result: dict[str, Any], name: str) -> str:
        return f"{100 * result['targeting'][name]['mean_reward']:.1f}%"

    def vs(result: dict[str, Any], name: str) -> str:
        test = result["policy_vs"][name]
        return f"{100 * test['mean_difference']:+.1f} points, p = {test['p_value']:.2g}"

    return (
        f"On v0 L1's test split (manifest indices 100–199) with the true-CPDAG estimator it "
        f"reaches directed F1 {f1(true, 'policy')} against {f1(true, 'random')} for random "
        f"targeting ({vs(true, 'random')}) and {f1(true, 'greedy')} for greedy max-degree "
        f"targeting ({vs(true, 'greedy')}); with PC, {f1(pc, 'policy')} against "
        f"{f1(pc, 'random')} ({vs(pc, 'random')}) and {f1(pc, 'greedy')} "
        f"({vs(pc, 'greedy')}). At α = 0.05, {_l1_verdict(true, 'the true CPDAG')}; "
        f"{_l1_verdict(pc, 'PC')}.\n"
    )


def _l1_verdict(result: dict[str, Any], estimator: str) -> str:
    parts = []
    for name in ("random", "greedy"):
        test = result["policy_vs"][name]
        if test["p_value"] >= ALPHA:
            parts.append(f"not distinguishable from {name} targeting")
        else:
            parts.append(f"{'above' if test['mean_difference'] > 0 else 'below'} {name} targeting")
    return f"with {estimator} the policy is {' and '.join(parts)}"


def block_d40() -> str:
    rows = rows_of("d40", "custom")
    table = ladder_table(rows, "custom", D40_AGENTS)
    policy = label(rows, POLICY_AGENT)
    body = []
    for row in table.rows:
        used = np.mean([r["interventions_used"] for r in rows if r["agent"] == row.agent])
        cells = [
            row.label.replace(POLICY_AGENT, "policy (`rl:`)"),
            f"{100 * row.metrics['directed_f1'].mean:.1f} [{100 * row.metrics['directed_f1'].low:.1f}, "
            f"{100 * row.metrics['directed_f1'].high:.1f}]",
            f"{row.metrics['shd'].mean:.2f}",
            f"{used:.2f}",
        ]
        if row.label == policy:
            cells += ["", ""]
        else:
            test = paired_test(rows, policy, row.label)
            cells += [
                f"{pts(test.mean_difference)} [{pts(test.ci_low)}, {pts(test.ci_high)}]",
                format_p_value(test.p_value, exact=test.p_exact),
            ]
        body.append(cells)
    headers = (
        "agent",
        "directed F1",
        "SHD",
        "interventions",
        "Δ directed F1 (policy − agent)",
        "p",
    )
    n = table.rows[0].n_seeds
    lines = [
        f"On the d = 40 custom level's seed indices {FIRST}–{FIRST + n - 1} ({n} instances; "
        "directed F1 in % with the report's 95% bootstrap CI; Δ with its CI and the paired "
        "two-sided sign-flip p):",
        "",
        *md_table(headers, body),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def block_real_transfer() -> str:
    """``experiments/real_transfer.py --claim`` on the test split's rows of the ER levels, the
    real ladder and each column's chosen order (written to ``runs/claims/real-transfer.jsonl``
    for it)."""
    orders = chosen_orders()
    rows = [
        *(row for row in rows_of("v1", "v1") if row["level"] == "L3"),
        *(row for row in rows_of("v1-nonlinear", "v1-nonlinear") if row["level"] == "L3"),
        *rows_of("real", "real"),
    ]
    rows = [row for row in rows if row["agent"] in REAL_AGENTS]
    rows += [
        row
        for ladder in ("v1", "v1-nonlinear", "real")
        for row in rows_of("orders", ladder)
        if orders.get((ladder, row["level"])) == row["agent"]
    ]
    path = RUNS / "real-transfer.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    indices = f"{FIRST}-{FIRST + COUNT - 1}"
    return script_output(
        "real_transfer.py",
        str(path),
        "--indices",
        indices,
        "--orders-from",
        str(ORDERS_DEV),
        "--select-indices",
        _selection(),
        "--claim",
    )


def block_rl_n3_summary() -> str:
    return script_output("regime_claims.py", "--block", "rl-n3-summary")


def block_rl_n3_table() -> str:
    return script_output("regime_claims.py", "--block", "rl-n3-table")


def block_rl_n3_replay() -> str:
    return script_output("regime_claims.py", "--block", "rl-n3-replay")


CAPPED = ("pc_active",)


def block_capped_efficiency() -> str:
    """The η exploit on v1's test split: each agent against itself stopped at the |I*| it
    predicts from its own graph (``cap:AGENT``), on η and on the anytime F1."""
    rows = rows_of("v1", "v1")
    body = []
    sentences = []
    for agent in CAPPED:
        capped = f"cap:{agent}"
        eta, anytime, f1 = (
            pair(rows, capped, agent, metric)
            for metric in ("efficiency", "anytime_f1", "directed_f1")
        )
        table = ladder_table(rows, "v1", (agent, capped))
        for name in (agent, capped):
            row = next(r for r in table.rows if r.agent == name)
            body.append(
                [
                    row.label,
                    f"{100 * row.metrics['efficiency'].mean:.1f}",
                    f"{100 * row.metrics['anytime_f1'].mean:.1f}",
                    f"{100 * row.metrics['directed_f1'].mean:.1f}",
                    "" if name == agent else f"{pts(eta.mean_difference)} ({p_text(eta)})",
                    "" if name == agent else f"{pts(anytime.mean_difference)} ({p_text(anytime)})",
                    "" if name == agent else f"{pts(f1.mean_difference)} ({p_text(f1)})",
                ]
            )
        bought = eta.mean_difference >= 0.20 and anytime.mean_difference <= 0
        sentences.append(
            f"`{capped}` gains {pts(eta.mean_difference)} points of the paper's η over "
            f"`{agent}` and {pts(anytime.mean_difference)} of the anytime F1 "
            f"({'η bought, the headline not' if bought else 'see the table'})"
        )
    headers = (
        "agent",
        "η (paper)",
        "anytime F1",
        "directed F1",
        "Δ η (cap − agent)",
        "Δ anytime F1",
        "Δ directed F1",
    )
    lines = [
        f"On v1's test split (manifest indices {FIRST}–{FIRST + COUNT - 1}, six levels, "
        f"{eta.n} instances): " + "; ".join(sentences) + ". Values in %, differences in points "
        "with the paired sign-flip p.",
        "",
        *md_table(headers, body),
    ]
    return "\n".join(lines) + "\n"


def block_real_experiments() -> str:
    return script_output("measured_claims.py", "--block", "real-experiments")


def block_tuebingen_pairs() -> str:
    return script_output("measured_claims.py", "--block", "tuebingen-pairs")


def _frontier_block(name: str) -> Callable[[], str]:
    """A block of ``experiments/frontier_claims.py``, on the test indices every frontier level
    has complete (the block says how many when fewer than 100)."""

    def build() -> str:
        return script_output("frontier_claims.py", "--block", name)

    return build


BLOCKS: dict[str, Callable[[], str]] = {
    "frontier": _frontier_block("frontier"),
    "frontier-criteria": _frontier_block("frontier-criteria"),
    "ladder-headroom": _frontier_block("ladder-headroom"),
    "v0-beyond": block_v0_beyond,
    "v1-tables": block_v1_tables,
    "capped-efficiency": block_capped_efficiency,
    "v1-shortcuts": block_v1_shortcuts,
    "families": block_families,
    "lingam-active": block_lingam_active,
    "latent": block_latent,
    "rl-l1-summary": block_rl_l1_summary,
    "rl-l1-tables": block_rl_l1_tables,
    "rl-graph-summary": block_rl_graph_summary,
    "rl-graph-table": block_rl_graph_table,
    "rl-n3-summary": block_rl_n3_summary,
    "rl-n3-table": block_rl_n3_table,
    "rl-n3-replay": block_rl_n3_replay,
    "d40": block_d40,
    "real-transfer": block_real_transfer,
    "real-experiments": block_real_experiments,
    "tuebingen-pairs": block_tuebingen_pairs,
}


# ----------------------------------------------------------------------------- pasting
def wrap_prose(block: str, width: int = 100) -> str:
    """Wrap every line that is not a table row at ``width`` (the READMEs' prose width)."""
    lines = []
    for line in block.split("\n"):
        if not line.startswith("|"):
            line = re.sub(r"(?<![\w.])-(?=\d)", "−", line)  # a minus sign, not a hyphen
        if line.startswith("|") or len(line) <= width:
            lines.append(line)
        else:
            lines.extend(textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False))
    return "\n".join(lines)


def marker_pattern(name: str) -> re.Pattern[str]:
    """``<!-- claims:NAME -->`` ... ``<!-- /claims:NAME -->``; group 1 is the block."""
    return re.compile(
        rf"(?<=<!-- claims:{re.escape(name)} -->\n)(.*?)(?=<!-- /claims:{re.escape(name)} -->)",
        re.S,
    )


def paste(names: Sequence[str]) -> None:
    for document in DOCUMENTS:
        text = document.read_text()
        for name in names:
            block = (CLAIMS / f"{name}.md").read_text()
            text = marker_pattern(name).sub(lambda _m, b=block: b, text)
        document.write_text(text)


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paste", action="store_true", help="paste the blocks into the READMEs")
    parser.add_argument("--workers", type=int, default=2, help="sweep worker processes")
    parser.add_argument("--only", nargs="+", choices=list(BLOCKS), help="build these blocks only")
    parser.add_argument("--no-sweep", action="store_true", help="build from the rows present")
    args = parser.parse_args()
    start = time.perf_counter()
    if not args.no_sweep:
        run_sweeps(args.workers)
    CLAIMS.mkdir(parents=True, exist_ok=True)
    names = args.only or list(BLOCKS)
    for name in names:
        (CLAIMS / f"{name}.md").write_text(wrap_prose(BLOCKS[name]()))
        print(f"docs/claims/{name}.md written", flush=True)
    if args.paste:
        paste(names)
        print("pasted into " + ", ".join(str(d.relative_to(ROOT)) for d in DOCUMENTS))
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    run_script(main)
