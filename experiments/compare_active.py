"""Stronger classical active agents vs the paper's PC + greedy, on both ladders.

Runs every agent on every manifest seed of every level (8 seeds x 6 levels per ladder) with
the sweep (``acdb_gym.sweep.run``) in the active panel with raw tools, then prints, per ladder, from
the report package (``acdb_gym.report``):

* a Table-2-style summary per agent: skeleton F1, directed precision / recall / F1, SHD,
  efficiency (means over the 48 per-seed values, levels weighted equally since each has 8
  seeds), and the mean and largest wall time per job (one episode, environment construction
  included);
* directed F1 per level;
* paired sign-flip tests (``acdb_gym.report.paired_test`` on the 48 same-seed differences,
  two-sided, mean difference) of each new agent against ``pc_greedy`` on directed F1 and SHD,
  the best new agent (highest mean directed F1 on the ladder) first.

Besides ``pc``, ``sortnregress``, ``pc_greedy``, ``pc_active`` and ``bic_active`` (whose
default ``leftover="explore"`` spends the whole budget), four ablations run by default:
``<agent>/stop`` submits as soon as nothing is undirected (the paper's stopping rule) and
``<agent>/verify`` also checks orientations no experiment has settled, but explores no further
(see ``acdb_gym.baselines.active.Leftover``). They are added to the sweep's agent registry
under those names.

Run: ``python experiments/compare_active.py [--ladders v0 v1] [--seeds 8] [--out RUN_DIR]``.
With ``--out`` the rows of each ladder go to ``RUN_DIR/<ladder>/results.jsonl`` (so
``acdb report RUN_DIR/v0`` gives the full report, and a rerun resumes); without it they go to a
temporary directory. BLAS is pinned to one thread unless the caller set ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` or ``MKL_NUM_THREADS``.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from acdb_gym import registry, report, sweep
from acdb_gym.baselines.active import BICActiveAgent, Leftover, PCActiveAgent
from acdb_gym.core.ladders.shipped import LADDERS, LEVEL_NAMES
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.core.types import PANEL_ACTIVE
from acdb_gym.report.tables import format_number, md_table
from acdb_gym.report.types import AgentRow, LadderSummary

PANEL = PANEL_ACTIVE
BLAS_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
ACTIVE_AGENTS: dict[str, type[PCActiveAgent] | type[BICActiveAgent]] = {
    "pc_active": PCActiveAgent,
    "bic_active": BICActiveAgent,
}
ABLATIONS: tuple[Leftover, ...] = ("stop", "verify")
AGENTS = (
    "pc",
    "sortnregress",
    "pc_greedy",
    *ACTIVE_AGENTS,
    *(f"{agent}/{leftover}" for agent in ACTIVE_AGENTS for leftover in ABLATIONS),
)
"""The agents this experiment compares, in table order."""

NEW_AGENTS = tuple(name for name in AGENTS if name.startswith(tuple(ACTIVE_AGENTS)))
BASELINE = "pc_greedy"
COLUMNS = (
    ("skeleton_f1", "skel F1"),
    ("directed_precision", "dir P"),
    ("directed_recall", "dir R"),
    ("directed_f1", "dir F1"),
    ("shd", "SHD"),
    ("efficiency", "eff"),
)
"""(score field, header); fractions are shown in %."""


def register_ablations() -> None:
    """Add ``<agent>/<leftover>`` for every active agent and ablation to the agent registry."""
    for name, agent_class in ACTIVE_AGENTS.items():
        for leftover in ABLATIONS:
            ablation = f"{name}/{leftover}"
            registry.AGENTS[ablation] = registry.AgentEntry(
                ablation,
                f"{agent_class.__module__}:{agent_class.__name__}",
                f"{name} with leftover={leftover!r}",
                panels=(PANEL,),
                arguments=(("leftover", leftover),),
            )


@dataclass(frozen=True)
class Config:
    """Command-line configuration; each field's ``help`` is its ``--help`` text."""

    ladders: tuple[str, ...] = field(default=("v0", "v1"), metadata={"help": "Ladders to run."})
    seeds: int = field(default=8, metadata={"help": "Manifest seeds per level (1 to 8)."})
    agents: tuple[str, ...] = field(
        default=AGENTS, metadata={"help": f"Agents to run, from {', '.join(AGENTS)}."}
    )
    resamples: int = field(
        default=100_000,
        metadata={"help": "Sign-flip resamples per paired test (exact when 2**n is at most this)."},
    )
    out: Path | None = field(
        default=None,
        metadata={"help": "Optional run directory; each ladder's rows go to OUT/<ladder>/."},
    )


def parse_args(argv: Sequence[str] | None = None) -> Config:
    parser = OneLineParser(description=(__doc__ or "").splitlines()[0])
    defaults = Config()
    for item in fields(Config):
        value = getattr(defaults, item.name)
        flag, help_text = f"--{item.name}", item.metadata["help"]
        if isinstance(value, tuple):
            parser.add_argument(flag, nargs="+", default=list(value), help=help_text)
        elif item.name == "out":
            parser.add_argument(flag, type=Path, default=None, help=help_text)
        else:
            parser.add_argument(flag, type=int, default=value, help=help_text)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.agents) - set(AGENTS))
    if unknown:
        parser.error(f"unknown agents {unknown}; known: {list(AGENTS)}")
    bad_ladders = sorted(set(args.ladders) - set(LADDERS))
    if bad_ladders:
        parser.error(f"unknown ladders {bad_ladders}; known: {sorted(LADDERS)}")
    if not 1 <= args.seeds <= 8:
        parser.error(f"--seeds must be in [1, 8], got {args.seeds}")
    return Config(tuple(args.ladders), args.seeds, tuple(args.agents), args.resamples, args.out)


def run_ladder(ladder: str, config: Config, out: Path) -> sweep.SweepSummary:
    """Run (or resume) every job of one ladder into ``out``."""
    sweep_config = sweep.SweepConfig(
        out=out,
        ladder=ladder,
        seeds=config.seeds,
        agents=config.agents,
        panels=(PANEL,),
        progress=False,
    )
    return sweep.run_sweep(sweep_config)


def _row(table: LadderSummary, agent: str) -> AgentRow:
    return next(row for row in table.rows if row.agent == agent)


def _label(table: LadderSummary, agent: str) -> str:
    return _row(table, agent).label


def _markdown(headers: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    return "\n".join(md_table(headers, body)).rstrip("\n")


def summary_table(
    table: LadderSummary, rows: Sequence[dict[str, Any]], agents: Sequence[str]
) -> str:
    headers = ["agent", *(header for _, header in COLUMNS), "time mean / max (s)"]
    body = []
    for agent in agents:
        metrics = _row(table, agent).metrics
        cells = [agent, *(format_number(metrics[metric].mean, metric) for metric, _ in COLUMNS)]
        times = [float(row["wall_time"]) for row in rows if row["agent"] == agent]
        cells.append(f"{sum(times) / len(times):.2f} / {max(times):.2f}")
        body.append(cells)
    return _markdown(headers, body)


def level_table(table: LadderSummary, agents: Sequence[str]) -> str:
    body = [
        [
            agent,
            *(
                format_number(_row(table, agent).per_level[level].mean, "directed_f1")
                for level in table.levels
            ),
        ]
        for agent in agents
    ]
    return _markdown(["agent", *table.levels], body)


def paired_lines(
    table: LadderSummary, rows: Sequence[dict[str, Any]], agents: Sequence[str], resamples: int
) -> list[str]:
    if BASELINE not in agents:
        return []
    new = [a for a in NEW_AGENTS if a in agents]
    new.sort(key=lambda a: -_row(table, a).metrics["directed_f1"].mean)
    lines = []
    for agent in new:
        for metric, scale, unit in (("directed_f1", 100.0, " points"), ("shd", 1.0, "")):
            test = report.paired_test(
                rows,
                _label(table, agent),
                _label(table, BASELINE),
                metric,
                ladder=table.ladder,
                n_resamples=resamples,
            )
            wins = test.n_higher if metric == "directed_f1" else test.n_lower
            ties = test.n - test.n_higher - test.n_lower
            lines.append(
                f"- {agent} - {BASELINE}, {metric}: mean {scale * test.mean_difference:+.2f}{unit} "
                f"(n = {test.n}, better on {wins}, tied on {ties}), "
                f"sign-flip p = {test.p_value:.2g}"
            )
    return lines


def print_ladder(run_dir: Path, ladder: str, config: Config, elapsed: float) -> None:
    rows = report.load_results(run_dir)
    table = report.summarize(rows).ladder(ladder)
    print(
        f"\n## Ladder {ladder} ({config.seeds} seeds x {len(LEVEL_NAMES)} levels, {elapsed:.0f} s)\n"
    )
    print(summary_table(table, rows, config.agents))
    print("\nDirected F1 (%) per level:\n")
    print(level_table(table, config.agents))
    lines = paired_lines(table, rows, config.agents, config.resamples)
    if lines:
        print(f"\nPaired sign-flip tests against {BASELINE} (best new agent first):\n")
        print("\n".join(lines))


def main(argv: Sequence[str] | None = None) -> None:
    config = parse_args(argv)
    register_ablations()
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    # One core: the numbers include per-job wall times.
    pinned = not any(variable in os.environ for variable in BLAS_THREAD_VARIABLES)
    with tempfile.TemporaryDirectory() as scratch, threadpool_limits(1 if pinned else None):
        out = config.out if config.out is not None else Path(scratch)
        for ladder in config.ladders:
            summary = run_ladder(ladder, config, out / ladder)
            print_ladder(out / ladder, ladder, config, summary.wall_time)


if __name__ == "__main__":
    run_script(main)
