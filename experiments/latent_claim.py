"""fci_active against fci, and bic_active beside them, on the held-out seeds of the latent ladder
(manifest indices 100-199).

Runs ``fci`` (observational panel), ``fci_active`` and ``bic_active`` (active panel; the
strongest classical agent of the causally sufficient ladders, which states no bidirected edge)
on manifest indices
``--first`` to ``--last`` (default 100-199, the claim seeds; 0-99 are for development) of every
level of ``v1-latent`` (``ACDB-Latent-L{0..5}-v1``), the oracle on the same instances as a check,
and prints per level and pooled: the mean directed and bidirected F1 of both agents, the mean
paired difference in directed F1 and its two-sided paired sign-flip p-value
(:func:`acdb_gym.report.statistics.sign_flip_pvalue`, 200,000 sign patterns), bic_active's mean
directed F1 and its paired difference from fci_active with the same test, and how many
instances the oracle scored 100% on every field.

Run: ``python experiments/latent_claim.py [--first 100] [--last 199] [--levels L0 L1 ...]``;
``experiments/readme_claims.py`` pastes its table into the README.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from acdb_gym.agents.base import run_episode
from acdb_gym.baselines.active import BICActiveAgent
from acdb_gym.baselines.classical import OracleAgent
from acdb_gym.baselines.latent import FCIActiveAgent, FCIAgent
from acdb_gym.core.ladders.shipped import LATENT_LADDER, LEVEL_NAMES
from acdb_gym.core.scoring import ScoreReport
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.report.statistics import sign_flip_pvalue


def _perfect(score: ScoreReport) -> bool:
    fields = score.to_dict()
    rates = [v for k, v in fields.items() if k.endswith(("precision", "recall", "f1"))]
    return all(v == 1.0 for v in rates) and score.shd == 0


def claim_markdown(first: int, last: int, levels: Sequence[str] = LEVEL_NAMES) -> str:
    """The claim's table and its two sentences, as Markdown (what ``main`` prints)."""
    pooled: dict[str, list[float]] = {
        "fci": [],
        "fci_active": [],
        "fci_bi": [],
        "act_bi": [],
        "bic_active": [],
    }
    perfect = total = 0
    lines = [
        "| level | n | fci Dir F1 | fci_active Dir F1 | difference | p | fci Bi F1 | "
        "fci_active Bi F1 | bic_active Dir F1 | bic_active − fci_active | p |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in levels:
        level = LATENT_LADDER[name]
        rows: dict[str, list[float]] = {key: [] for key in pooled}
        for index in range(first, last + 1):
            fci = run_episode(ACDBEnv(level), FCIAgent(), manifest_index=index).score
            env = ACDBEnv(level, panel="active")
            active = run_episode(env, FCIActiveAgent(), manifest_index=index).score
            env = ACDBEnv(level, panel="active")
            bic = run_episode(env, BICActiveAgent(), manifest_index=index).score
            oracle = run_episode(ACDBEnv(level), OracleAgent(), manifest_index=index).score
            perfect += _perfect(oracle)
            total += 1
            rows["fci"].append(fci.directed_f1)
            rows["fci_active"].append(active.directed_f1)
            rows["fci_bi"].append(fci.bidirected_f1)
            rows["act_bi"].append(active.bidirected_f1)
            rows["bic_active"].append(bic.directed_f1)
        lines.append(_line(name, rows))
        for key in pooled:
            pooled[key].extend(rows[key])
    lines.append(_line("all", pooled))
    difference = np.array(pooled["fci_active"]) - np.array(pooled["fci"])
    wins, losses = int((difference > 0).sum()), int((difference < 0).sum())
    bic = np.array(pooled["bic_active"]) - np.array(pooled["fci_active"])
    lines += [
        "",
        f"fci_active is higher than fci on {wins} and lower on {losses} of the {difference.size} "
        f"instances; bic_active is higher than fci_active on {int((bic > 0).sum())} and lower "
        f"on {int((bic < 0).sum())} (it states no bidirected edge, so its bidirected F1 is 0); "
        f"the oracle scores 100% on every field of {perfect} of {total}.",
    ]
    return "\n".join(lines) + "\n"


def _line(name: str, rows: dict[str, list[float]]) -> str:
    difference = np.array(rows["fci_active"]) - np.array(rows["fci"])
    bic = np.array(rows["bic_active"]) - np.array(rows["fci_active"])
    return (
        f"| {name} | {difference.size} | {100 * np.mean(rows['fci']):.1f} | "
        f"{100 * np.mean(rows['fci_active']):.1f} | {100 * difference.mean():+.1f} | "
        f"{sign_flip_pvalue(difference):.2g} | {100 * np.mean(rows['fci_bi']):.1f} | "
        f"{100 * np.mean(rows['act_bi']):.1f} | {100 * np.mean(rows['bic_active']):.1f} | "
        f"{100 * bic.mean():+.1f} | {sign_flip_pvalue(bic):.2g} |"
    )


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--first", type=int, default=100)
    parser.add_argument("--last", type=int, default=199)
    parser.add_argument("--levels", nargs="+", default=list(LEVEL_NAMES))
    parser.add_argument(
        "--block", action="store_true", help="print the claim's Markdown only (no wall time)"
    )
    args = parser.parse_args()
    start = time.perf_counter()
    print(claim_markdown(args.first, args.last, args.levels), end="")
    if not args.block:
        print(f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    run_script(main)
