"""The paper's whole v0 experiment grid as one runnable definition.

Baselines (random, pc, pc_greedy, oracle, sortnregress) on L0–L5 × 8 seeds; two LLM backbones
× {llm_raw, llm_stats} × {observational, active} on the same seeds; the correlation-only probe
``llm_corr_obs`` on L1/L3/L5 × 4 seeds. Every part appends to one results file, so the report
compares all rows on paired seeds. LLM parts whose API key is not set are skipped with a
message; rerunning the script resumes where it stopped.

    python experiments/paper_v0.py --out runs/paper_v0 --workers 2
    python experiments/paper_v0.py --openai-model gpt-5.4 --anthropic-model claude-sonnet-4-6
    python experiments/paper_v0.py --levels L1 --seeds 2 --out runs/paper_small   # a small grid
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acdb_gym import report
from acdb_gym.core.ladders.shipped import LEVEL_NAMES
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.core.types import PANEL_ACTIVE, PANEL_OBSERVATIONAL
from acdb_gym.registry import OFFLINE_AGENTS
from acdb_gym.sweep.run import SweepConfig, parse_list, run_sweep


@dataclass(frozen=True)
class Backbone:
    """One LLM backbone of the paper."""

    provider: str
    model: str
    key_variable: str


def main() -> None:
    parser = OneLineParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=Path("runs/paper_v0"), help="run directory")
    parser.add_argument("--workers", type=int, default=2, help="parallel worker processes")
    parser.add_argument(
        "--levels",
        default=",".join(LEVEL_NAMES),
        help="comma-separated v0 levels of the baseline and LLM parts (shrinks the grid)",
    )
    parser.add_argument("--seeds", type=int, default=8, help="first N manifest seeds per level")
    parser.add_argument(
        "--probe-seeds",
        type=int,
        default=4,
        help="manifest seeds per level of the llm_corr_obs probe (on L1, L3, L5)",
    )
    parser.add_argument("--openai-model", default="gpt-5.4", help="the OpenAI backbone")
    parser.add_argument(
        "--anthropic-model", default="claude-sonnet-4-6", help="the Anthropic backbone"
    )
    parser.add_argument("--cache-dir", type=Path, default=None, help="LLM response cache")
    args = parser.parse_args()
    levels = parse_list(args.levels, LEVEL_NAMES, what="levels")
    grid: dict[str, Any] = {
        "ladder": "v0",
        "levels": levels,
        "seeds": args.seeds,
        "workers": args.workers,
    }

    # 1. Baselines: every level asked for, both panels where they differ.
    run_sweep(SweepConfig(out=args.out, agents=OFFLINE_AGENTS, **grid))

    backbones = [
        Backbone("openai", args.openai_model, "OPENAI_API_KEY"),
        Backbone("anthropic", args.anthropic_model, "ANTHROPIC_API_KEY"),
    ]
    for backbone in backbones:
        if not os.environ.get(backbone.key_variable):
            print(
                f"skipping the {backbone.provider} rows ({backbone.model}): "
                f"{backbone.key_variable} is not set"
            )
            continue
        options = {"provider": backbone.provider, "model": backbone.model, "temperature": 0.0}
        if args.cache_dir is not None:
            options["cache_dir"] = str(args.cache_dir)
        # 2. LLM agents: raw vs stats, observational vs active, same seeds as the baselines.
        run_sweep(
            SweepConfig(
                out=args.out,
                agents=("llm_raw", "llm_stats"),
                panels=(PANEL_OBSERVATIONAL, PANEL_ACTIVE),
                agent_options=options,
                **grid,
            )
        )
        # 3. The correlation-only ablation probe: L1/L3/L5 (those asked for), 4 seeds per level.
        probe_levels = tuple(level for level in ("L1", "L3", "L5") if level in levels)
        if probe_levels:
            run_sweep(
                SweepConfig(
                    out=args.out,
                    ladder="v0",
                    levels=probe_levels,
                    seeds=min(args.probe_seeds, args.seeds),
                    agents=("llm_corr_obs",),
                    panels=(PANEL_OBSERVATIONAL,),
                    workers=args.workers,
                    agent_options=options,
                )
            )

    files = report.write_report(args.out, compare=[])
    print(report.format_terminal(files.summary))
    print(f"report written to {files.markdown}")


if __name__ == "__main__":
    run_script(main)
