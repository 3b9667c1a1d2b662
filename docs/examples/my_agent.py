"""A custom agent for acdb_gym, scored on manifest seeds and run in a sweep.

The page docs/writing_an_agent.md shows this file piece by piece; a test keeps the two equal.
Run it from the repository root:

    python docs/examples/my_agent.py --levels L0 L1 --seeds 2 --out runs/my_agent
"""

# --8<-- [start:agent]
from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import acdb_gym  # noqa: F401  (registers the ACDB-* environments)
from acdb_gym import registry, report, sweep
from acdb_gym.agents.base import run_episode
from acdb_gym.core.graphs import PDAG
from acdb_gym.core.types import PANEL_ACTIVE
from acdb_gym.discovery import orient_from_interventions, pc_cpdag
from acdb_gym.envs import actions


class ShiftAgent:
    """PC on the observational sample, then experiments on the node with the most undirected
    edges; each experiment orients that node's edges by a distribution-shift test."""

    name = "shift_pc"
    # It states its current graph with every experiment (below), which defines its anytime F1,
    # the headline efficiency (DESIGN §6); the sweep records the statements.
    states_hypotheses = True

    def __init__(self, *, alpha: float = 0.05, shift_sd: float = 3.0) -> None:
        self.alpha = alpha
        self.shift_sd = shift_sd

    def reset(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> None:
        self._observational = np.asarray(observation["observational"])
        self._cpdag: PDAG = pc_cpdag(self._observational, alpha=self.alpha)
        self._graph = self._cpdag
        self._tried: list[int] = []

    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> Any:
        if self._tried:
            self._absorb(observation)
        target = self._next_target(observation)
        if target is None:
            return actions.submit(self._graph)
        self._tried.append(target)
        # A shift of a few standard deviations makes a child's shift easy to detect.
        column = self._observational[:, target]
        value = float(column.mean() + self.shift_sd * column.std())
        return actions.intervene(target, value, hypothesis=self._graph)

    def episode_stats(self) -> dict[str, int]:
        """Optional: goes into EpisodeResult.extra and the sweep row's ``agent_stats``."""
        return {"pc_undirected_edges": int(self._cpdag.undirected.sum()) // 2}

    def _next_target(self, observation: Mapping[str, Any]) -> int | None:
        if int(observation["budget_remaining"][0]) == 0:
            return None  # also the observational panel, whose budget is always 0
        degree = self._graph.undirected.sum(axis=1)
        degree[self._tried] = 0  # a second experiment on a node tells nothing new
        return int(np.argmax(degree)) if degree.max() > 0 else None

    def _absorb(self, observation: Mapping[str, Any]) -> None:
        # Orient PC's graph from all experiments so far (unused slots hold target d), so the
        # estimate never depends on the order in which the evidence arrived.
        n_nodes = self._observational.shape[1]
        experiments = [
            (int(target), observation["interventional"][slot])
            for slot, target in enumerate(observation["targets"])
            if target < n_nodes
        ]
        self._graph = orient_from_interventions(self._cpdag, self._observational, experiments)


# --8<-- [end:agent]


# --8<-- [start:observation]
def show_observation(level: str) -> None:
    """Print each observation key with its shape and dtype."""
    env = gym.make(f"ACDB-{level}-v0")
    observation, info = env.reset(options={"manifest_index": 0})
    for key, value in observation.items():
        print(f"  {key:<19} shape={value.shape!s:<13} dtype={value.dtype}")
    print(f"  info keys: {sorted(info)}")
    env.close()


# --8<-- [end:observation]


# --8<-- [start:score]
def score_on_manifest(levels: Sequence[str], seeds: int) -> None:
    """Run the agent on the first ``seeds`` preflighted instances of each level."""
    for level in levels:
        env = gym.make(f"ACDB-{level}-v0", panel="active")
        results = [run_episode(env, ShiftAgent(), manifest_index=index) for index in range(seeds)]
        env.close()
        f1 = np.mean([result.score.directed_f1 for result in results])
        used = np.mean([result.interventions for result in results])
        print(f"  {level}: directed F1 {100 * f1:.1f}%, interventions {used:.1f}")


# --8<-- [end:score]


# --8<-- [start:sweep]
def register() -> None:
    """Make ``shift_pc`` a sweep agent, like the built-in ones in acdb_gym.registry."""
    registry.AGENTS[ShiftAgent.name] = registry.AgentEntry(
        ShiftAgent.name,
        f"{ShiftAgent.__module__}:{ShiftAgent.__name__}",
        "PC, then experiments oriented by a distribution-shift test",
        panels=(PANEL_ACTIVE,),
    )


def sweep_and_report(levels: Sequence[str], seeds: int, out: Path) -> None:
    """Run shift_pc next to pc_greedy on the same instances, then write the report."""
    config = sweep.SweepConfig(
        out=out,
        levels=tuple(levels),
        seeds=seeds,
        agents=("pc_greedy", ShiftAgent.name),
        panels=(PANEL_ACTIVE,),
        progress=False,
    )
    summary = sweep.run_sweep(config)
    print(f"  {summary.finished} jobs run, {summary.skipped} already done, {summary.failed} failed")
    # report.md then also holds the paired test of the two agents on the same instances.
    files = report.write_report(out, compare=[("shift_pc (active)", "pc_greedy (active)")])
    print(report.format_terminal(files.summary))


# --8<-- [end:sweep]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A custom acdb_gym agent, end to end.")
    parser.add_argument("--levels", nargs="+", default=["L0", "L1", "L2"], help="v0 levels")
    parser.add_argument("--seeds", type=int, default=4, help="manifest seeds per level (1-8)")
    parser.add_argument("--out", type=Path, default=Path("runs/my_agent"), help="run directory")
    args = parser.parse_args(argv)
    print(f"observation of ACDB-{args.levels[0]}-v0:")
    show_observation(args.levels[0])
    print("shift_pc on manifest seeds:")
    score_on_manifest(args.levels, args.seeds)
    print("sweep:")
    register()
    sweep_and_report(args.levels, args.seeds, args.out)


if __name__ == "__main__":
    main()
