"""How much targeting can matter: heuristics against a hindsight-best target sequence.

    python experiments/headroom.py --out runs/headroom --indices 100-199 --count 30

For each level and each estimator of the design env (the true CPDAG, PC), every targeter acts on
the same instance with **common random numbers** (:class:`~acdb_gym.baselines.headroom.CRNWorld`):
the samples of an intervention on ``X_i`` are drawn once per instance from the stream
``(seed, i, 31)``, whatever the order or the targeter. The estimator is the design env's
(:class:`~acdb_gym.envs.design.env.DesignState`: the starting graph, shift tests at ``alpha``
read by ``--rule``, default ``power``, then Meek's rules); the reward is directed F1. (The
design env itself draws an episode's experiments from one stream in sequence, so its numbers
are not these; ``experiments/few_sample_replay.py`` scores policies on these samples too.)

Targeters: ``random`` (untried nodes until the budget is spent, the mean of ``--random-repeats``
sequences), ``greedy`` (:class:`~acdb_gym.baselines.targeting.GreedyTargeting`), ``pc_active``
(:class:`~acdb_gym.baselines.targeting.PCActiveTargeting`) and ``best``: the best directed F1
over target sequences of distinct nodes of length at most the budget, found in hindsight (it
reads the true DAG). The search grows sequences one target at a time, merges sequences with the
same set of targets (keeping the better one) and skips a target with no undirected edge left at
it (its experiment changes nothing). While a depth has at most ``--width`` distinct sets it
keeps them all (``exhaustive``: every target set was evaluated, in at least one order);
otherwise it keeps the ``--width`` best (directed F1, then fewest undirected edges): a beam
search, so ``best`` is a lower bound on the hindsight optimum. The heuristics' own sequences are
candidates too, so ``best`` is never below them.

Rows are appended to ``OUT/rows.jsonl`` one instance at a time (a rerun skips what is there);
``OUT/headroom.csv`` and ``OUT/headroom.md`` are written at the end. The gap share of a
heuristic is ``(mean_h - mean_random) / (mean_best - mean_random)``.

Regimes change the budget (``--budget-delta``: ``|I*| + slack + delta``; ``--budget-from-i-star
K``: ``|I*| + K``; at least 1) or the samples per experiment (``--n-int``), for the search of
regimes where targeting matters (give each regime its own ``--out``). ``--fresh`` also replays
the hindsight-best sequence, and greedy, on fresh samples of the same world (stream
``(seed, i, 32)``): the part of the hindsight gain that comes from knowing the world rather than
which noisy tests happened to come out right.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from acdb_gym.baselines.headroom import STREAM, CRNWorld
from acdb_gym.baselines.targeting import GreedyTargeting, PCActiveTargeting, RandomTargeting
from acdb_gym.core.ladders.shipped import Level, get_level
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.discovery.orientation import ORIENTATION_RULES, OrientationRule

DEFAULT_LEVELS = (
    "v1:L0,L1,L2,L3,L4,L5",
    "v1-nongaussian:L0,L1,L2,L3,L4,L5",
    "v1-nonlinear:L0,L1,L2,L3,L4,L5",
    "large:L0,L1",
)
ESTIMATORS = ("true_cpdag", "pc")
TARGETERS = ("random", "greedy", "pc_active", "best")


def parse_levels(specs: Sequence[str]) -> list[tuple[str, str]]:
    """``["v1:L0,L1", "large:L0"]`` -> ``[("v1", "L0"), ("v1", "L1"), ("large", "L0")]``."""
    out: list[tuple[str, str]] = []
    for spec in specs:
        ladder, _, names = spec.partition(":")
        out.extend((ladder, name) for name in names.split(","))
    return out


def parse_indices(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def run_instance(
    level: Level,
    index: int,
    estimator: str,
    *,
    width: int,
    random_repeats: int,
    budget_delta: int,
    n_int: int | None,
    budget_from_i_star: int | None = None,
    fresh: bool = False,
    rule: OrientationRule = "power",
) -> dict[str, Any]:
    """One row: every targeter's directed F1 on one instance under one estimator."""
    instance = level.instance(index)
    base = instance.budget if budget_from_i_star is None else len(instance.i_star)
    budget = max(1, base + (budget_delta if budget_from_i_star is None else budget_from_i_star))
    world = CRNWorld(instance, estimator, budget, n_int or instance.spec.n_int, rule=rule)
    randoms = [
        world.run(RandomTargeting(seed=1000 * index + repeat)) for repeat in range(random_repeats)
    ]
    greedy, greedy_targets = world.run(GreedyTargeting())
    active, active_targets = world.run(PCActiveTargeting())
    seeds = [greedy_targets, active_targets, *(targets for _, targets in randoms)]
    best, best_targets, exhaustive, evaluations = world.search(width, seeds)
    fresh_columns = {}
    if fresh:
        # The hindsight-best sequence replayed on fresh samples of the same world: what
        # knowing the world, but not the noise of its tests, is worth.
        replay = CRNWorld(
            instance, estimator, budget, n_int or instance.spec.n_int, stream=STREAM + 1, rule=rule
        )
        fresh_columns = {
            "best_fresh": replay.evaluate(best_targets),
            "greedy_fresh": replay.run(GreedyTargeting())[0],
        }
    return {
        "index": index,
        "seed": instance.seed,
        "d": instance.n_nodes,
        "i_star": len(instance.i_star),
        "budget": budget,
        "random": float(np.mean([f1 for f1, _ in randoms])),
        "greedy": greedy,
        "pc_active": active,
        "best": best,
        "exhaustive": exhaustive,
        "evaluations": evaluations,
        **fresh_columns,
    }


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per (level, estimator): means, the best-greedy gap and the gap shares."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["ladder"], row["level"], row["estimator"]), []).append(row)
    lines = []
    for (ladder, level, estimator), group in groups.items():
        means = {t: float(np.mean([r[t] for r in group])) for t in TARGETERS}
        gap = means["best"] - means["random"]
        line: dict[str, Any] = {
            "ladder": ladder,
            "level": level,
            "estimator": estimator,
            "n": len(group),
            "d": group[0]["d"],
            "mean_i_star": float(np.mean([r["i_star"] for r in group])),
            "mean_budget": float(np.mean([r["budget"] for r in group])),
            **means,
            "best_minus_greedy": means["best"] - means["greedy"],
            "exhaustive_share": float(np.mean([r["exhaustive"] for r in group])),
        }
        if all("best_fresh" in r for r in group):
            for column in ("best_fresh", "greedy_fresh"):
                line[column] = float(np.mean([r[column] for r in group]))
        for heuristic in ("greedy", "pc_active"):
            share = (means[heuristic] - means["random"]) / gap if gap > 0.005 else float("nan")
            line[f"{heuristic}_share"] = share
        lines.append(line)
    return lines


def markdown(lines: list[dict[str, Any]]) -> str:
    fresh = all("best_fresh" in line for line in lines)
    header = (
        "| level | estimator | n | d | budget (I*) | random | greedy | pc_active | best | "
        "best − greedy | greedy's share | pc_active's share | search |"
        + (" best, fresh samples | greedy, fresh samples |" if fresh else "")
        + "\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        + ("---|---|" if fresh else "")
        + "\n"
    )

    def share(value: float) -> str:
        return "—" if np.isnan(value) else f"{100 * value:.0f}%"

    body = ""
    for line in lines:
        search = (
            "exhaustive"
            if line["exhaustive_share"] == 1
            else (f"beam ({100 * (1 - line['exhaustive_share']):.0f}% of instances)")
        )
        body += (
            f"| {line['ladder']} {line['level']} | {line['estimator']} | {line['n']} | "
            f"{line['d']} | {line['mean_budget']:.1f} ({line['mean_i_star']:.1f}) | "
            f"{line['random']:.3f} | {line['greedy']:.3f} | {line['pc_active']:.3f} | "
            f"{line['best']:.3f} | {line['best_minus_greedy']:+.3f} | "
            f"{share(line['greedy_share'])} | {share(line['pc_active_share'])} | {search} |"
            + (f" {line['best_fresh']:.3f} | {line['greedy_fresh']:.3f} |" if fresh else "")
            + "\n"
        )
    return header + body


def main(argv: Sequence[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--levels", nargs="+", default=list(DEFAULT_LEVELS))
    parser.add_argument("--estimators", default=",".join(ESTIMATORS))
    parser.add_argument("--indices", default="100-199", help="manifest indices, FIRST-LAST")
    parser.add_argument("--count", type=int, default=None, help="only the first COUNT indices")
    parser.add_argument(
        "--short-indices",
        default="0-49",
        help="indices for a ladder whose manifest is shorter than --indices (large: 50 seeds)",
    )
    parser.add_argument("--width", type=int, default=64, help="beam width of the search")
    parser.add_argument("--random-repeats", type=int, default=5)
    parser.add_argument("--budget-delta", type=int, default=0)
    parser.add_argument(
        "--budget-from-i-star",
        type=int,
        default=None,
        help="budget |I*| + K (at least 1) instead of the level's (K = -1: one below |I*|)",
    )
    parser.add_argument("--n-int", type=int, default=None)
    parser.add_argument(
        "--rule",
        default="power",
        choices=ORIENTATION_RULES,
        help="how a test that finds no shift is read (the design env's; 'always' is the rule "
        "before 0.2)",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="also replay the hindsight-best sequence (and greedy) on fresh samples",
    )
    args = parser.parse_args(argv)
    indices = parse_indices(args.indices)[: args.count]
    short = parse_indices(args.short_indices)[: args.count]
    args.out.mkdir(parents=True, exist_ok=True)
    rows_path = args.out / "rows.jsonl"
    rows = [json.loads(line) for line in rows_path.open()] if rows_path.exists() else []
    done = {(r["ladder"], r["level"], r["estimator"], r["index"]) for r in rows}
    chosen = {
        (ladder, name): indices if max(indices) < len(get_level(ladder, name).manifest) else short
        for ladder, name in parse_levels(args.levels)
    }
    with rows_path.open("a") as sink:
        for (ladder, name), level_indices in chosen.items():
            level = get_level(ladder, name)
            started = time.perf_counter()
            for estimator in args.estimators.split(","):
                for index in level_indices:
                    if (ladder, name, estimator, index) in done:
                        continue
                    row = {
                        "ladder": ladder,
                        "level": name,
                        "estimator": estimator,
                        **run_instance(
                            level,
                            index,
                            estimator,
                            width=args.width,
                            random_repeats=args.random_repeats,
                            budget_delta=args.budget_delta,
                            n_int=args.n_int,
                            budget_from_i_star=args.budget_from_i_star,
                            fresh=args.fresh,
                            rule=args.rule,
                        ),
                    }
                    sink.write(json.dumps(row) + "\n")
                    sink.flush()
                    rows.append(row)
            print(f"{ladder} {name}: {time.perf_counter() - started:.1f} s", flush=True)
    kept = [
        r
        for r in rows
        if r["estimator"] in args.estimators.split(",")
        and r["index"] in chosen.get((r["ladder"], r["level"]), ())
    ]
    lines = summarize(kept)
    with (args.out / "headroom.csv").open("w", newline="") as handle:
        names = list(dict.fromkeys(name for line in lines for name in line))
        writer = csv.DictWriter(handle, fieldnames=names)
        writer.writeheader()
        writer.writerows(lines)
    (args.out / "headroom.md").write_text(markdown(lines))
    print(markdown(lines))


if __name__ == "__main__":
    run_script(main)
