"""The paper's whole v0 experiment grid as one runnable definition.

Baselines (random, pc, pc_greedy, oracle, sortnregress) on L0–L5 × 8 seeds; two LLM backbones
× {llm_raw, llm_stats} × {observational, active} on the same seeds; the correlation-only probe
``llm_corr_obs`` on L1/L3/L5 × 4 seeds. Every part appends to one results file, so the report
compares all rows on paired seeds. LLM parts whose API key is not set are skipped with a
message; rerunning the script resumes where it stopped.

    python experiments/paper_v0.py --out runs/paper_v0 --workers 2
    python experiments/paper_v0.py --openai-model gpt-5.4 --anthropic-model claude-sonnet-4-6
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

from acdb_gym import report
from acdb_gym.core.types import PANEL_ACTIVE, PANEL_OBSERVATIONAL
from acdb_gym.registry import OFFLINE_AGENTS
from acdb_gym.sweep import SweepConfig, run_sweep


@dataclass(frozen=True)
class Backbone:
    """One LLM backbone of the paper."""

    provider: str
    model: str
    key_variable: str


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/paper_v0"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--openai-model", default="gpt-5.4")
    parser.add_argument("--anthropic-model", default="claude-sonnet-4-6")
    parser.add_argument("--cache-dir", type=Path, default=None, help="LLM response cache")
    args = parser.parse_args()

    # 1. Baselines: every level, all 8 manifest seeds, both panels where they differ.
    run_sweep(SweepConfig(out=args.out, ladder="v0", agents=OFFLINE_AGENTS, workers=args.workers))

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
                ladder="v0",
                agents=("llm_raw", "llm_stats"),
                panels=(PANEL_OBSERVATIONAL, PANEL_ACTIVE),
                workers=args.workers,
                agent_options=options,
            )
        )
        # 3. The correlation-only ablation probe: L1/L3/L5, 4 seeds per level.
        run_sweep(
            SweepConfig(
                out=args.out,
                ladder="v0",
                levels=("L1", "L3", "L5"),
                seeds=4,
                agents=("llm_corr_obs",),
                panels=(PANEL_OBSERVATIONAL,),
                workers=args.workers,
                agent_options=options,
            )
        )

    files = report.write_report(args.out, compare=[])
    print(report.format_terminal(report.summarize(report.load_results(args.out))))
    print(f"report written to {files.markdown}")


if __name__ == "__main__":
    main()
