"""Choose a targeting-policy checkpoint on the validation range and record the choice.

    python experiments/select_design_policy.py --candidates runs/a/model.zip runs/b/model.zip \\
        --instances 20 --out runs/selected/model.zip
    python experiments/select_design_policy.py --ladder v1-n3 --candidates runs/n3/checkpoints/*.zip \\
        --instances 40 --out models/acdb_design_n3/model.zip

Every candidate (a size-free graph policy, ``observation="graph"``) plays the first
``--instances`` validation manifest indices (0, 1, ...; never 100-199) of every level of v0 and
v1 (``--ladder paper``, the default) or of one ladder (``--ladder v1-n3``) with both estimators
(or ``--estimators``); its score is the mean over those (level, estimator) cells of the mean
directed F1. A flat-observation policy (one ``d``, e.g. ``models/acdb_design_l1_v0``) plays
only the level it was trained on (its metadata's ladder and level), as
``experiments/eval_rl.py`` plays it. The best candidate is copied to ``--out`` (left in place when it is already
there) and a selection record is written beside it (``model.selection.json``,
:mod:`acdb_gym.agents.rl.selection`): the only kind of file
``experiments/eval_design_policy.py`` and ``experiments/eval_rl.py`` evaluate on the test split
(indices 100-199).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from acdb_gym.agents.rl.agent import RLAgent
from acdb_gym.agents.rl.selection import (
    PAPER,
    VALIDATION_INDICES,
    protocol_levels,
    write_selection,
)
from acdb_gym.baselines.targeting import evaluate_targeting
from acdb_gym.core.ladders.shipped import Level, get_level
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.envs.design.env import InterventionDesignEnv

ESTIMATORS = ("true_cpdag", "pc")


def validation_score(
    model: Path,
    indices: Sequence[int],
    ladder: str = PAPER,
    estimators: Sequence[str] = ESTIMATORS,
) -> float:
    """Mean over the (level, estimator) cells of ``ladder`` of the policy's mean directed F1."""
    policy = RLAgent.load(model, name="candidate")
    meta = policy.metadata
    cells = []
    for level in candidate_levels(model, ladder):
        instances = [level.instance(i) for i in indices]
        for estimator in estimators:
            if meta.size_free:
                env = InterventionDesignEnv(
                    level,
                    estimator=estimator,  # type: ignore[arg-type]
                    observation="graph",
                    max_nodes=max(64, level.spec.d),
                )
            else:  # as experiments/eval_rl.py plays it
                env = InterventionDesignEnv(
                    level,
                    estimator=estimator,  # type: ignore[arg-type]
                    shift=meta.shift,
                    alpha=meta.alpha,
                )
            result = evaluate_targeting(env, {"policy": policy}, instances)["policy"]
            cells.append(result.mean_reward)
    return float(np.mean(cells))


def candidate_levels(model: Path, ladder: str) -> list[Level]:
    """The levels a candidate is scored on: ``ladder``'s for a size-free policy, its training
    level for a flat one."""
    meta = RLAgent.load(model, name="candidate").metadata
    return protocol_levels(ladder) if meta.size_free else [get_level(meta.ladder, meta.level)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=Path, nargs="+", required=True)
    parser.add_argument("--instances", type=int, default=20, help="validation indices per level")
    parser.add_argument("--out", type=Path, required=True, help="where the chosen file goes")
    parser.add_argument("--ladder", default=PAPER, help="'paper' (v0 and v1) or a ladder")
    parser.add_argument("--estimators", default=",".join(ESTIMATORS), help="comma-separated")
    args = parser.parse_args(argv)
    estimators = args.estimators.split(",")
    if not estimators or set(estimators) - set(ESTIMATORS):
        parser.error(f"--estimators must name {' and/or '.join(ESTIMATORS)}")
    try:
        protocol_levels(args.ladder)
    except ValueError as error:
        parser.error(str(error))
    if not 1 <= args.instances <= len(VALIDATION_INDICES):
        parser.error(f"--instances must be in [1, {len(VALIDATION_INDICES)}]")
    indices = list(VALIDATION_INDICES)[: args.instances]
    scores = {}
    for candidate in args.candidates:
        scores[str(candidate)] = validation_score(candidate, indices, args.ladder, estimators)
        print(f"{candidate}: validation directed F1 {scores[str(candidate)]:.4f}", flush=True)
    chosen = max(scores, key=lambda name: scores[name])
    levels = candidate_levels(Path(chosen), args.ladder)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if Path(chosen).resolve() != args.out.resolve():
        shutil.copyfile(chosen, args.out)
    write_selection(
        args.out,
        indices=indices,
        scores=scores,
        chosen=chosen,
        details={
            "metric": f"mean directed F1 over {len(levels)} level{'s' * (len(levels) > 1)} x "
            f"{{{', '.join(estimators)}}}",
            "ladder": args.ladder if levels == protocol_levels(args.ladder) else levels[0].ladder,
            "levels": [f"{level.ladder} {level.name}" for level in levels],
            "estimators": estimators,
        },
    )
    print(f"chose {chosen}: {args.out} with its selection record beside it")


if __name__ == "__main__":
    gym.logger.min_level = 40
    torch.set_num_threads(1)
    run_script(main)
