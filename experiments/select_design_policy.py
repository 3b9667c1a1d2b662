"""Choose a targeting-policy checkpoint on the validation range and record the choice.

    python experiments/select_design_policy.py --candidates runs/a/model.zip runs/b/model.zip \\
        --instances 20 --out runs/selected/model.zip

Every candidate (a size-free graph policy, ``observation="graph"``) plays the first
``--instances`` validation manifest indices (0, 1, ...; never 100-199) of every level of v0 and
v1 with both estimators; its score is the mean over those 24 (level, estimator) cells of the
mean directed F1. The best candidate is copied to ``--out`` (left in place when it is already
there) and a selection record is written beside it (``model.selection.json``,
:mod:`acdb_gym.agents.rl.selection`): the only kind of file
``experiments/eval_design_policy.py`` evaluates on the test split (indices 100-199).
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from acdb_gym.agents.rl.agent import RLAgent
from acdb_gym.agents.rl.selection import VALIDATION_INDICES, write_selection
from acdb_gym.baselines.targeting import evaluate_targeting
from acdb_gym.core.ladders.shipped import LADDERS, PAPER_LADDERS
from acdb_gym.envs.design.env import InterventionDesignEnv

ESTIMATORS = ("true_cpdag", "pc")


def validation_score(model: Path, indices: Sequence[int]) -> float:
    """Mean over the (level, estimator) cells of v0 and v1 of the policy's mean directed F1."""
    policy = RLAgent.load(model, name="candidate")
    cells = []
    for ladder in PAPER_LADDERS:
        for level in LADDERS[ladder].values():
            instances = [level.instance(i) for i in indices]
            for estimator in ESTIMATORS:
                env = InterventionDesignEnv(
                    level,
                    estimator=estimator,  # type: ignore[arg-type]
                    observation="graph",
                    max_nodes=max(64, level.spec.d),
                )
                result = evaluate_targeting(env, {"policy": policy}, instances)["policy"]
                cells.append(result.mean_reward)
    return float(np.mean(cells))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=Path, nargs="+", required=True)
    parser.add_argument("--instances", type=int, default=20, help="validation indices per level")
    parser.add_argument("--out", type=Path, required=True, help="where the chosen file goes")
    args = parser.parse_args(argv)
    if not 1 <= args.instances <= len(VALIDATION_INDICES):
        parser.error(f"--instances must be in [1, {len(VALIDATION_INDICES)}]")
    indices = list(VALIDATION_INDICES)[: args.instances]
    scores = {}
    for candidate in args.candidates:
        scores[str(candidate)] = validation_score(candidate, indices)
        print(f"{candidate}: validation directed F1 {scores[str(candidate)]:.4f}", flush=True)
    chosen = max(scores, key=lambda name: scores[name])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if Path(chosen).resolve() != args.out.resolve():
        shutil.copyfile(chosen, args.out)
    write_selection(
        args.out,
        indices=indices,
        scores=scores,
        chosen=chosen,
        details={"metric": "mean directed F1 over v0+v1 levels x {true_cpdag, pc}"},
    )
    print(f"chose {chosen}: {args.out} with its selection record beside it")


if __name__ == "__main__":
    gym.logger.min_level = 40
    torch.set_num_threads(1)
    main()
