"""Evaluate a size-free targeting policy on held-out manifest seeds of every level of both ladders.

    python experiments/eval_design_policy.py --model models/acdb_design_graph/model.zip \\
        --first-index 100 --instances 100 --out models/acdb_design_graph/evaluation_test.json
    python experiments/eval_design_policy.py --ladder v1-n3 --custom-instances 0 \\
        --model models/acdb_design_n3/model.zip --out models/acdb_design_n3/evaluation_test.json

``--ladder`` (default ``paper``: every level of v0 and v1) evaluates on one ladder's levels
instead, e.g. the few-sample ``v1-n3``.

Indices 100-199 are the test split: the script refuses, before any evaluation, to play any of
them for a policy file without a valid selection record (a ``.selection.json`` beside it,
written by ``experiments/select_design_policy.py`` on validation indices 0-99;
:func:`acdb_gym.agents.rl.selection.check_selected`), so test numbers exist only for a
checkpoint that was not chosen on them.

For each ladder level and each estimator (``pc`` and ``true_cpdag``) every targeter runs once on
the same instances: the level's manifest indices ``--first-index`` (default 100, the test split
of DESIGN §7; 0-99 are for development) onwards, seeds no policy trained on (training uses
seeds >= 2**32). Targeters:
the policy (design env, ``observation="graph"``), random targeting, greedy max-degree,
``pc_active``'s rule and the privileged I*-oracle (design env, flat observation; the dynamics
do not depend on the observation mode, so the rows are paired). Per level: the paired sign-flip
test of the policy against each comparator on directed F1 and on interventions used. Over
levels: a stratified sign-flip test of the sum over levels of the mean F1 differences. A custom
level of d = 40 (no training level has more than 30 variables) is evaluated the same way, and
the policy also runs on it through ACDBEnv, as ``rl:PATH`` does in a sweep.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

import acdb_gym  # noqa: F401  (registers the env ids)
from acdb_gym.agents.base import Agent, run_episode
from acdb_gym.agents.rl.agent import RLAgent
from acdb_gym.agents.rl.selection import PAPER, TEST_INDICES, check_selected, protocol_levels
from acdb_gym.agents.rl.train import TEST_SEED_BASE
from acdb_gym.agents.rl.training_worlds import UNSEEN_SIZE_LEVEL
from acdb_gym.baselines.targeting import (
    GreedyTargeting,
    OracleTargeting,
    PCActiveTargeting,
    RandomTargeting,
    evaluate_targeting,
    sign_flip_p_value,
    stratified_sign_flip_p_value,
)
from acdb_gym.core.ladders.shipped import Level
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.core.worlds.instance import Instance, InstanceGenerationError, generate_instance
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.envs.design.env import InterventionDesignEnv

COMPARATORS = ("random", "greedy", "pc_active", "oracle")
ESTIMATORS = ("true_cpdag", "pc")
TEST_SPLIT = 100
"""Manifest indices 100-199 are the test split (DESIGN §7); 0-99 are for development."""
MANIFEST = 200
CUSTOM = UNSEEN_SIZE_LEVEL


def custom_instances(count: int) -> list[Instance]:
    """The first ``count`` seeds from TEST_SEED_BASE whose d = 40 instance generates."""
    instances: list[Instance] = []
    seed = TEST_SEED_BASE
    while len(instances) < count:
        with contextlib.suppress(InstanceGenerationError):
            instances.append(generate_instance(CUSTOM.spec, seed))
        seed += 1
    return instances


def run_level(
    level: Level, instances: list[Instance], estimator: str, policy: RLAgent, seed: int
) -> dict[str, dict[str, np.ndarray]]:
    """Rewards and interventions of every targeter on ``instances``."""
    flat = InterventionDesignEnv(level, estimator=estimator)  # type: ignore[arg-type]
    graph = InterventionDesignEnv(
        level,
        estimator=estimator,  # type: ignore[arg-type]
        observation="graph",
        max_nodes=max(64, level.spec.d),
    )
    agents: dict[str, Agent] = {
        "random": RandomTargeting(seed=seed),
        "greedy": GreedyTargeting(),
        "pc_active": PCActiveTargeting(),
        "oracle": OracleTargeting(),
    }
    results = {**evaluate_targeting(graph, {"policy": policy}, instances)}
    results.update(evaluate_targeting(flat, agents, instances))
    return {
        name: {"f1": result.rewards, "interventions": result.interventions.astype(float)}
        for name, result in results.items()
    }


def compare(outcomes: dict[str, dict[str, np.ndarray]], resamples: int) -> dict[str, Any]:
    """Means and the policy's paired tests against every comparator."""
    policy = outcomes["policy"]
    row: dict[str, Any] = {
        name: {m: float(v.mean()) for m, v in values.items()} for name, values in outcomes.items()
    }
    for name in COMPARATORS:
        other = outcomes[name]
        row[f"vs_{name}"] = {
            metric: {
                "difference": float((policy[metric] - other[metric]).mean()),
                "p": sign_flip_p_value(policy[metric], other[metric], n_resamples=resamples),
            }
            for metric in ("f1", "interventions")
        }
    return row


def markdown(rows: list[dict[str, Any]], totals: dict[str, Any]) -> str:
    """The evaluation table: F1 per targeter, the policy's difference (p) against each."""
    head = (
        "| level | est. | n | policy F1 | random | greedy | pc_active | oracle | "
        "Δ random | Δ greedy | Δ pc_active | Δ oracle | interventions policy / greedy / "
        "pc_active / oracle |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    levels = len({(row["ladder"], row["level"]) for row in rows if row["ladder"] != "custom"})
    for row in rows:
        deltas = [
            f"{row[f'vs_{n}']['f1']['difference']:+.3f} ({_p(row[f'vs_{n}']['f1']['p'])})"
            for n in COMPARATORS
        ]
        used = " / ".join(
            f"{row[n]['interventions']:.2f}" for n in ("policy", "greedy", "pc_active", "oracle")
        )
        f1 = " | ".join(f"{row[n]['f1']:.3f}" for n in ("policy", *COMPARATORS))
        lines.append(
            f"| {row['ladder']} {row['level']} | {row['estimator']} | {row['n']} | {f1} | "
            f"{' | '.join(deltas)} | {used} |"
        )
    for estimator, total in totals.items():
        deltas = " | ".join(
            f"{total[n]['difference']:+.3f} ({_p(total[n]['p'])})" for n in COMPARATORS
        )
        lines.append(f"| **sum over the {levels} levels** | {estimator} | | | | | | | {deltas} | |")
    return head + "\n".join(lines) + "\n"


def _p(p: float) -> str:
    return f"p={p:.2g}" if p >= 1e-4 else "p<1e-4"


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument(
        "--first-index", type=int, default=TEST_SPLIT, help="first manifest index per level"
    )
    parser.add_argument("--instances", type=int, default=100, help="held-out seeds per level")
    parser.add_argument(
        "--custom-instances", type=int, default=30, help="d = 40 instances (0: none)"
    )
    parser.add_argument("--resamples", type=int, default=10_000, help="sign-flip resamples")
    parser.add_argument("--seed", type=int, default=0, help="seed of random targeting")
    parser.add_argument("--out", type=Path, default=None, help="JSON results (+ .md table)")
    parser.add_argument("--ladder", default=PAPER, help="'paper' (v0 and v1) or a ladder")
    args = parser.parse_args(argv)
    try:
        levels = protocol_levels(args.ladder)
    except ValueError as error:
        parser.error(str(error))
    if not 0 <= args.first_index < MANIFEST:
        parser.error(f"--first-index must be in [0, {MANIFEST}), got {args.first_index}")
    if not 1 <= args.instances <= MANIFEST - args.first_index:
        top = MANIFEST - args.first_index
        parser.error(f"--instances must be in [1, {top}], got {args.instances}")
    if args.custom_instances < 0:
        parser.error(f"--custom-instances must be at least 0, got {args.custom_instances}")
    selection = None
    if args.first_index + args.instances > TEST_INDICES.start:
        selection = check_selected(args.model)  # test numbers only for a selected file

    policy = RLAgent.load(args.model, name="policy")
    rows: list[dict[str, Any]] = []
    differences: dict[str, dict[str, list[np.ndarray]]] = {
        e: {n: [] for n in COMPARATORS} for e in ESTIMATORS
    }
    start = time.perf_counter()
    for level in levels:
        indices = range(args.first_index, args.first_index + args.instances)
        instances = [level.instance(i) for i in indices]
        for estimator in ESTIMATORS:
            outcomes = run_level(level, instances, estimator, policy, args.seed)
            for name in COMPARATORS:
                differences[estimator][name].append(outcomes["policy"]["f1"] - outcomes[name]["f1"])
            row = {"ladder": level.ladder, "level": level.name, "estimator": estimator}
            row |= {"n": len(instances), **compare(outcomes, args.resamples)}
            rows.append(row)
            print(
                f"{level.ladder} {level.name} {estimator}: "
                + ", ".join(f"{n} {row[n]['f1']:.3f}" for n in ("policy", *COMPARATORS)),
                flush=True,
            )
    totals = {
        estimator: {
            name: {
                "difference": float(sum(d.mean() for d in by_name[name])),
                "p": stratified_sign_flip_p_value(by_name[name], n_resamples=args.resamples),
            }
            for name in COMPARATORS
        }
        for estimator, by_name in differences.items()
    }
    custom = custom_instances(args.custom_instances)
    custom_rows = []
    for estimator in ESTIMATORS if custom else ():
        row = {"ladder": "custom", "level": "d=40", "estimator": estimator, "n": len(custom)}
        row |= compare(run_level(CUSTOM, custom, estimator, policy, args.seed), args.resamples)
        custom_rows.append(row)
    acdb = ACDBEnv(CUSTOM)
    via_acdb = [run_episode(acdb, policy, instance=i).reward for i in custom]
    seconds = time.perf_counter() - start
    table = markdown(rows + custom_rows, totals)
    print(table)
    if via_acdb:
        print(f"policy through ACDBEnv on d = 40: mean directed F1 {np.mean(via_acdb):.3f}")
    print(f"{seconds:.0f} s")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        summary = {
            "model": str(args.model),
            "ladder": args.ladder,
            "metadata": policy.metadata.__dict__,
            "manifest_indices": [args.first_index, args.first_index + args.instances - 1],
            "selection": selection,
            "custom_level": repr(CUSTOM.spec),
            "custom_seeds_from": TEST_SEED_BASE,
            "levels": rows + custom_rows,
            "sum_over_levels": totals,
            "custom_via_acdb_env_f1": float(np.mean(via_acdb)) if via_acdb else None,
            "seconds": seconds,
        }
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
        args.out.with_suffix(".md").write_text(table)
        print(f"written to {args.out}")


if __name__ == "__main__":
    gym.logger.min_level = 40
    # One thread: intra-op threads only add contention for graphs of at most 40 nodes (a
    # forward pass took 25 times longer with 2 threads on a loaded 2-core machine).
    torch.set_num_threads(1)
    run_script(main)
