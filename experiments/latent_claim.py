"""fci_active against fci on the held-out seeds of the latent ladder (manifest indices 100-199).

Runs ``fci`` (observational panel) and ``fci_active`` (active panel) on manifest indices
``--first`` to ``--last`` (default 100-199, the claim seeds; 0-99 are for development) of every
level of ``v1-latent`` (``ACDB-Latent-L{0..5}-v1``), the oracle on the same instances as a check,
and prints per level and pooled: the mean directed and bidirected F1 of both agents, the mean
paired difference in directed F1 and its two-sided paired sign-flip p-value
(:func:`acdb_gym.report.statistics.sign_flip_pvalue`, 200,000 sign patterns), and how many
instances the oracle scored 100% on every field.

Run: ``python experiments/latent_claim.py [--first 100] [--last 199] [--levels L0 L1 ...]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from acdb_gym.agents.base import run_episode
from acdb_gym.baselines.classical import OracleAgent
from acdb_gym.baselines.latent import FCIActiveAgent, FCIAgent
from acdb_gym.core.ladders.shipped import LATENT_LADDER, LEVEL_NAMES
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.report.statistics import sign_flip_pvalue


def _perfect(score: dict[str, float]) -> bool:
    rates = [v for k, v in score.items() if k.endswith(("precision", "recall", "f1"))]
    return all(v == 1.0 for v in rates) and score["shd"] == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--first", type=int, default=100)
    parser.add_argument("--last", type=int, default=199)
    parser.add_argument("--levels", nargs="+", default=list(LEVEL_NAMES))
    args = parser.parse_args()
    start = time.perf_counter()
    pooled: dict[str, list[float]] = {"fci": [], "fci_active": [], "fci_bi": [], "act_bi": []}
    perfect = total = 0
    print(
        "| level | n | fci Dir F1 | fci_active Dir F1 | difference | p | fci Bi F1 | fci_active Bi F1 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in args.levels:
        level = LATENT_LADDER[name]
        rows: dict[str, list[float]] = {key: [] for key in pooled}
        for index in range(args.first, args.last + 1):
            fci = run_episode(ACDBEnv(level), FCIAgent(), manifest_index=index).score
            env = ACDBEnv(level, panel="active")
            active = run_episode(env, FCIActiveAgent(), manifest_index=index).score
            oracle = run_episode(ACDBEnv(level), OracleAgent(), manifest_index=index).score
            perfect += _perfect(oracle)
            total += 1
            rows["fci"].append(fci["directed_f1"])
            rows["fci_active"].append(active["directed_f1"])
            rows["fci_bi"].append(fci["bidirected_f1"])
            rows["act_bi"].append(active["bidirected_f1"])
        difference = np.array(rows["fci_active"]) - np.array(rows["fci"])
        print(
            f"| {name} | {difference.size} | {100 * np.mean(rows['fci']):.1f} | "
            f"{100 * np.mean(rows['fci_active']):.1f} | {100 * difference.mean():+.1f} | "
            f"{sign_flip_pvalue(difference):.2g} | {100 * np.mean(rows['fci_bi']):.1f} | "
            f"{100 * np.mean(rows['act_bi']):.1f} |"
        )
        for key in pooled:
            pooled[key].extend(rows[key])
    difference = np.array(pooled["fci_active"]) - np.array(pooled["fci"])
    print(
        f"| all | {difference.size} | {100 * np.mean(pooled['fci']):.1f} | "
        f"{100 * np.mean(pooled['fci_active']):.1f} | {100 * difference.mean():+.1f} | "
        f"{sign_flip_pvalue(difference):.2g} | {100 * np.mean(pooled['fci_bi']):.1f} | "
        f"{100 * np.mean(pooled['act_bi']):.1f} |"
    )
    wins, losses = int((difference > 0).sum()), int((difference < 0).sum())
    print(f"\nfci_active higher on {wins}, lower on {losses} of {difference.size} instances")
    print(f"oracle 100% on every field: {perfect} of {total} instances")
    print(f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
