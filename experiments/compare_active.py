"""Stronger classical active agents vs the paper's PC + greedy, on both ladders.

Runs every agent on every manifest seed of every level (8 seeds x 6 levels per ladder) through
``acdb_gym.agents.base.run_episode`` in the active panel with raw tools, then prints, per
ladder:

* a Table-2-style summary per agent: skeleton F1, directed precision / recall / F1, SHD,
  efficiency (means over the 48 episodes, levels weighted equally since each has 8 seeds), and
  the mean and largest wall time per episode;
* directed F1 per level;
* paired sign-flip tests (``scipy.stats.permutation_test`` on the 48 same-seed differences,
  two-sided, mean difference) of each new agent against ``pc_greedy`` on directed F1 and SHD,
  the best new agent (highest mean directed F1 on the ladder) first.

Besides ``pc``, ``sortnregress``, ``pc_greedy``, ``pc_active`` and ``gies_active`` (whose
default ``leftover="explore"`` spends the whole budget), four ablations run by default:
``<agent>/stop`` submits as soon as nothing is undirected (the paper's stopping rule) and
``<agent>/verify`` also checks orientations no experiment has settled, but explores no further
(see ``acdb_gym.baselines.active.Leftover``).

Run: ``python experiments/compare_active.py [--ladders v0 v1] [--seeds 8] [--out results.jsonl]``
(BLAS is pinned to one thread unless the caller set it).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core: the numbers are per-episode wall times

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass, field, fields  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

import acdb_gym  # noqa: E402, F401  (registers the env ids)
from acdb_gym.agents.base import run_episode  # noqa: E402
from acdb_gym.baselines import PCAgent, PCGreedyAgent, SortnregressAgent  # noqa: E402
from acdb_gym.baselines.active import GIESActiveAgent, PCActiveAgent  # noqa: E402
from acdb_gym.core.ladder import LADDERS, LEVEL_NAMES  # noqa: E402

AGENTS: dict[str, Callable[[], Any]] = {
    "pc": PCAgent,
    "sortnregress": SortnregressAgent,
    "pc_greedy": PCGreedyAgent,
    "pc_active": PCActiveAgent,
    "gies_active": GIESActiveAgent,
    "pc_active/stop": lambda: PCActiveAgent(leftover="stop"),
    "pc_active/verify": lambda: PCActiveAgent(leftover="verify"),
    "gies_active/stop": lambda: GIESActiveAgent(leftover="stop"),
    "gies_active/verify": lambda: GIESActiveAgent(leftover="verify"),
}
"""Agent name -> factory (a fresh agent per episode)."""

NEW_AGENTS = tuple(name for name in AGENTS if name.startswith(("pc_active", "gies_active")))
BASELINE = "pc_greedy"
COLUMNS = (
    ("skeleton_f1", "skel F1", True),
    ("directed_precision", "dir P", True),
    ("directed_recall", "dir R", True),
    ("directed_f1", "dir F1", True),
    ("shd", "SHD", False),
    ("efficiency", "eff", True),
)
"""(score field, header, shown as a percentage)."""


@dataclass(frozen=True)
class Config:
    """Command-line configuration; each field's ``help`` is its ``--help`` text."""

    ladders: tuple[str, ...] = field(default=("v0", "v1"), metadata={"help": "Ladders to run."})
    seeds: int = field(default=8, metadata={"help": "Manifest seeds per level (1 to 8)."})
    agents: tuple[str, ...] = field(
        default=tuple(AGENTS), metadata={"help": f"Agents to run, from {', '.join(AGENTS)}."}
    )
    resamples: int = field(
        default=100_000,
        metadata={"help": "Sign-flip resamples per paired test (exact when 2**n is at most this)."},
    )
    out: Path | None = field(
        default=None, metadata={"help": "Optional JSONL file for the per-episode rows."}
    )


@dataclass(frozen=True)
class Episode:
    """One finished episode."""

    ladder: str
    level: str
    index: int
    agent: str
    score: dict[str, float]
    interventions: int
    wall_time: float


def parse_args(argv: Sequence[str] | None = None) -> Config:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
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


def run_ladder(ladder: str, config: Config) -> list[Episode]:
    episodes = []
    for level in LEVEL_NAMES:
        env = gym.make(LADDERS[ladder][level].env_id)
        for agent_name in config.agents:
            for index in range(config.seeds):
                result = run_episode(env, AGENTS[agent_name](), manifest_index=index)
                episodes.append(
                    Episode(
                        ladder,
                        level,
                        index,
                        agent_name,
                        result.score,
                        result.interventions,
                        result.wall_time,
                    )
                )
        env.close()
    return episodes


def _values(episodes: Sequence[Episode], agent: str, metric: str) -> np.ndarray:
    """Per-seed values of one agent, ordered by (level, index) so agents pair up."""
    chosen = sorted((e for e in episodes if e.agent == agent), key=lambda e: (e.level, e.index))
    if metric == "wall_time":
        return np.array([e.wall_time for e in chosen])
    return np.array([float(e.score[metric]) for e in chosen])


def summary_table(episodes: Sequence[Episode], agents: Sequence[str]) -> str:
    headers = ["agent", *(header for _, header, _ in COLUMNS), "time mean / max (s)"]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for agent in agents:
        cells = [agent]
        for metric, _, percent in COLUMNS:
            mean = _values(episodes, agent, metric).mean()
            cells.append(f"{100 * mean:.1f}" if percent else f"{mean:.2f}")
        times = _values(episodes, agent, "wall_time")
        cells.append(f"{times.mean():.2f} / {times.max():.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def level_table(episodes: Sequence[Episode], agents: Sequence[str]) -> str:
    headers = ["agent", *LEVEL_NAMES]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for agent in agents:
        cells = [agent]
        for level in LEVEL_NAMES:
            values = [
                float(e.score["directed_f1"])
                for e in episodes
                if e.agent == agent and e.level == level
            ]
            cells.append(f"{100 * np.mean(values):.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sign_flip_pvalue(differences: np.ndarray, resamples: int) -> float:
    """Two-sided paired sign-flip p-value of the mean of ``differences``."""
    if not differences.any():
        return 1.0
    result = stats.permutation_test(
        (differences,),
        lambda sample, axis: np.mean(sample, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        alternative="two-sided",
        random_state=0,
    )
    return float(result.pvalue)


def paired_lines(episodes: Sequence[Episode], agents: Sequence[str], resamples: int) -> list[str]:
    if BASELINE not in agents:
        return []
    new = [a for a in NEW_AGENTS if a in agents]
    new.sort(key=lambda a: -_values(episodes, a, "directed_f1").mean())
    lines = []
    for agent in new:
        for metric, scale, unit in (("directed_f1", 100.0, " points"), ("shd", 1.0, "")):
            differences = _values(episodes, agent, metric) - _values(episodes, BASELINE, metric)
            p_value = sign_flip_pvalue(differences, resamples)
            wins = (
                int((differences > 0).sum())
                if metric == "directed_f1"
                else int((differences < 0).sum())
            )
            ties = int((differences == 0).sum())
            lines.append(
                f"- {agent} - {BASELINE}, {metric}: mean {scale * differences.mean():+.2f}{unit} "
                f"(n = {differences.size}, better on {wins}, tied on {ties}), "
                f"sign-flip p = {p_value:.2g}"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    config = parse_args(argv)
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    all_episodes: list[Episode] = []
    for ladder in config.ladders:
        start = time.perf_counter()
        episodes = run_ladder(ladder, config)
        all_episodes.extend(episodes)
        elapsed = time.perf_counter() - start
        print(
            f"\n## Ladder {ladder} ({config.seeds} seeds x {len(LEVEL_NAMES)} levels, "
            f"{elapsed:.0f} s)\n"
        )
        print(summary_table(episodes, config.agents))
        print("\nDirected F1 (%) per level:\n")
        print(level_table(episodes, config.agents))
        lines = paired_lines(episodes, config.agents, config.resamples)
        if lines:
            print(f"\nPaired sign-flip tests against {BASELINE} (best new agent first):\n")
            print("\n".join(lines))
    if config.out is not None:
        with config.out.open("w") as handle:
            for e in all_episodes:
                row = {
                    "ladder": e.ladder,
                    "level": e.level,
                    "manifest_index": e.index,
                    "agent": e.agent,
                    "interventions": e.interventions,
                    "wall_time": e.wall_time,
                    **e.score,
                }
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
