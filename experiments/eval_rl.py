"""Compare a trained intervention policy with random, greedy and oracle targeting.

    python experiments/eval_rl.py --model models/acdb_design_l1_v0/model.zip --indices 100:200

Every targeter runs once on the same held-out test instances in the design env: with
``--indices START:STOP`` the policy's level's manifest indices START to STOP-1 (100:200 is the
test split of DESIGN §7), otherwise ``--episodes`` generated seeds 10**9 + 10**6 + i (never
trained, validated or benchmarked on), with the policy's own estimator, so
the rows are paired. The policy is tested against random targeting (and greedy) with a paired
sign-flip permutation test on the per-instance differences of the terminal reward. With the PC
estimator the policy also runs through ACDBEnv, as in a sweep, on the same instances; its
rewards must equal the design-env ones. Results go to stdout and, with --out, to a JSON file.

As ``experiments/eval_design_policy.py`` does, the script refuses, before loading the policy, a
range of manifest indices that reaches the test split (100-199) for a file without a valid
selection record (:func:`acdb_gym.agents.rl.selection.check_selected`; write one with
``experiments/select_design_policy.py``, which scores a flat policy on its own level).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import acdb_gym  # noqa: F401  (registers the env ids)
from acdb_gym.agents.base import Agent, run_episode
from acdb_gym.agents.rl.agent import RLAgent
from acdb_gym.agents.rl.selection import TEST_INDICES, check_selected
from acdb_gym.agents.rl.train import TEST_SEED_BASE, held_out_instances
from acdb_gym.baselines.targeting import (
    GreedyTargeting,
    OracleTargeting,
    RandomTargeting,
    evaluate_targeting,
    sign_flip_p_value,
)
from acdb_gym.core.ladders.shipped import get_level
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.envs.design.env import InterventionDesignEnv
from acdb_gym.sweep.run import parse_indices

N_RESAMPLES = 100_000
"""Sign-flip resamples: the smallest two-sided p-value this can report is about 2e-5."""


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="a policy saved by acdb train")
    parser.add_argument("--episodes", type=int, default=200, help="held-out test instances")
    parser.add_argument(
        "--estimator",
        choices=["pc", "true_cpdag"],
        default=None,
        help="the design env's estimator (default: the one the policy was trained with)",
    )
    parser.add_argument(
        "--indices",
        default=None,
        metavar="START:STOP",
        help="manifest indices of the policy's level, in place of --episodes generated seeds",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of random targeting")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    first, count = (0, 0) if args.indices is None else parse_indices(args.indices)
    selection = None
    if first + count > TEST_INDICES.start:
        selection = check_selected(args.model)  # test numbers only for a selected file

    # 1. The policy, the env it was trained on, and the held-out test instances.
    policy = RLAgent.load(args.model, name="policy")
    meta = policy.metadata
    estimator = args.estimator or meta.estimator
    env = InterventionDesignEnv(
        meta.level, ladder=meta.ladder, estimator=estimator, shift=meta.shift, alpha=meta.alpha
    )
    if args.indices is None:
        instances = held_out_instances(
            meta.level, TEST_SEED_BASE, args.episodes, ladder=meta.ladder
        )
        where = f"seeds {TEST_SEED_BASE}..{TEST_SEED_BASE + len(instances) - 1}"
    else:
        level = get_level(meta.ladder, meta.level)
        instances = [level.instance(i) for i in range(first, first + count)]
        where = f"manifest indices {first}..{first + count - 1}"

    # 2. Every targeter on every instance, same estimator.
    agents: dict[str, Agent] = {
        "policy": policy,
        "random": RandomTargeting(seed=args.seed),
        "greedy": GreedyTargeting(),
        "oracle (I*)": OracleTargeting(),
    }
    start = time.perf_counter()
    results = evaluate_targeting(env, agents, instances)
    seconds = time.perf_counter() - start

    # 3. The same policy through ACDBEnv, as the sweep runs it (PC is its only estimator).
    via_acdb = None
    if estimator == "pc":
        acdb = gym.make(get_level(meta.ladder, meta.level).env_id)
        via_acdb = np.array([run_episode(acdb, policy, instance=i).reward for i in instances])

    # 4. Paired tests and the report.
    policy_rewards = results["policy"].rewards
    tests = {
        name: {
            "mean_difference": float((policy_rewards - results[name].rewards).mean()),
            "p_value": sign_flip_p_value(
                policy_rewards, results[name].rewards, n_resamples=N_RESAMPLES
            ),
        }
        for name in ("random", "greedy", "oracle (I*)")
    }
    print(
        f"{meta.algo} policy {args.model} ({meta.timesteps} steps, trained with "
        f"estimator={meta.estimator}) on {len(instances)} held-out {meta.ladder} {meta.level} "
        f"instances ({where}), "
        f"estimator={estimator}, {seconds:.0f} s"
    )
    print(f"{'targeting':<14} {'mean reward':>12} {'s.e.':>7} {'interventions':>14}")
    for name, result in results.items():
        print(
            f"{name:<14} {result.mean_reward:>12.4f} {result.standard_error:>7.4f} "
            f"{result.interventions.mean():>14.2f}"
        )
    for name, test in tests.items():
        print(
            f"policy - {name}: {test['mean_difference']:+.4f} "
            f"(paired sign-flip p = {test['p_value']:.4g})"
        )
    if via_acdb is not None:
        same = bool(np.array_equal(via_acdb, policy_rewards))
        print(
            f"policy through ACDBEnv: {via_acdb.mean():.4f} (identical to the design env: {same})"
        )

    if args.out is not None:
        summary: dict[str, Any] = {
            "model": str(args.model),
            "metadata": meta.__dict__,
            "estimator": estimator,
            "episodes": len(instances),
            "instances": where,
            "selection": selection,
            "targeting": {
                name: {
                    "mean_reward": result.mean_reward,
                    "standard_error": result.standard_error,
                    "mean_interventions": float(result.interventions.mean()),
                }
                for name, result in results.items()
            },
            "policy_vs": tests,
            "policy_via_acdb_env": None if via_acdb is None else float(via_acdb.mean()),
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
        print(f"written to {args.out}")


if __name__ == "__main__":
    run_script(main)
