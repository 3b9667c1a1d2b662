"""The few-sample regime re-measured: every targeter's sequence re-scored under each orientation
rule, the headroom under the default rule, and the policies on the same samples.

    python experiments/few_sample_replay.py --out runs/replay_n3_test --indices 100-199 \\
        --policy old=models/acdb_design_n3/model.zip \\
        --policy new=models/acdb_design_n3_power/model.zip
    python experiments/few_sample_replay.py --out runs/replay_n3_generated --generated 100 \\
        --policy old=models/acdb_design_n3/model.zip \\
        --policy new=models/acdb_design_n3_power/model.zip

On v1-n3 (3 samples an experiment) the design env used to orient "neighbour -> target" whenever
a shift test found nothing (rule ``always``). This script asks what each targeter's score owed
to that. Per level of v1-n3, instance and estimator (the true CPDAG, PC), on common random
numbers (:class:`~acdb_gym.baselines.headroom.CRNWorld`: an experiment on ``X_i`` has the same
samples whatever the order or the targeter):

* **Replay** (the audit's analysis): each targeter acts in the old env (rule ``always``); its
  target sequence is then re-scored, on the same samples, under each rule: ``always``,
  ``band05`` (``pc_active``'s band: a test with 0.01 <= p <= 0.05 abstains), ``band20`` (abstain
  up to p = 0.2), ``significant`` (only a significant shift orients) and ``power`` (the default
  since 0.2: a test that finds nothing orients only with the power to see a shift; with 3 rows
  it has none, so ``power`` equals ``significant`` here).
* **Native**: each targeter acts under the default rule and is scored under it; the
  hindsight-best sequence under the default rule gives the headroom (best − greedy).
* **Strong estimator**: each targeter acts on the pooled-BIC estimator (``estimator="bic"``,
  ``bic_active``'s), where the estimator is not the bottleneck.

Targeters: ``random`` (mean of 5 sequences), ``greedy`` (max undirected degree), ``pc_active``
(``pc_active``'s rule) and every ``--policy LABEL=PATH`` (a size-free design policy, read on the
graph observation). ``--indices`` takes manifest indices (claims: 100-199); ``--generated N``
takes N generated worlds per level from seeds ``3 * 10**9 + i`` instead, a range no training
(``>= 2**32``), validation (``10**9 + i``) or manifest seed falls in.

Writes ``OUT/rows.jsonl`` (one line per level, instance and estimator; a rerun skips what is
there), ``OUT/summary.json`` (means per cell and the paired tests) and ``OUT/replay.md``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from acdb_gym.agents.rl.agent import RLAgent
from acdb_gym.baselines.headroom import ALPHA, CRNWorld, directed_f1
from acdb_gym.baselines.targeting import (
    GreedyTargeting,
    PCActiveTargeting,
    RandomTargeting,
    sign_flip_p_value,
    stratified_sign_flip_p_value,
)
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.core.worlds.instance import Instance, generate_instance
from acdb_gym.discovery import ShiftOrienter
from acdb_gym.envs.design.graph_obs import graph_observation
from acdb_gym.envs.design.state import DesignState

LADDER = "v1-n3"
ESTIMATORS = ("true_cpdag", "pc")
REPLAY_RULES: dict[str, dict[str, Any]] = {
    "always": {"rule": "always"},
    "band05": {"rule": "band", "no_shift_threshold": 0.05},
    "band20": {"rule": "band", "no_shift_threshold": 0.2},
    "significant": {"rule": "significant"},
    "power": {"rule": "power"},
}
GENERATED_SEED_BASE = 3 * 10**9
RANDOM_REPEATS = 5
WIDTH = 64


class GraphPolicy:
    """A size-free design policy as a targeter on the graph observation of a CRN world."""

    def __init__(self, agent: RLAgent) -> None:
        self.agent = agent
        self._started = False

    def reset(self, observation: Any, info: dict[str, Any]) -> None:
        self._started = False

    def act(self, observation: Any, info: dict[str, Any]) -> np.int64:
        if not self._started:
            self.agent.reset(observation, info)
            self._started = True
        return np.int64(self.agent.act(observation, info))


def graph_view(world: CRNWorld) -> Any:
    def observe(state: DesignState, left: int) -> Any:
        flat = state.observation(budget_remaining=left, budget=world.budget)
        return graph_observation(flat, world.d, budget_remaining=left, can_intervene=left > 0)

    return observe


def rescore(world: CRNWorld, targets: Sequence[int], settings: dict[str, Any]) -> float:
    """Directed F1 of ``targets``' experiments on ``world``'s samples under other rule
    settings (the world's starting graph and detectable shift)."""
    orienter = ShiftOrienter(
        world.start,
        world.instance.d_obs,
        alpha=ALPHA,
        detectable_shift=world.detectable_shift,
        **settings,
    )
    for target in targets:
        orienter.add(target, world.samples[target])
    return directed_f1(world.truth, orienter.graph if targets else world.start)


def targeters(index: int, policies: dict[str, RLAgent]) -> dict[str, list[Any]]:
    """Each targeter's agents (random: its repeats, each with its own seed)."""
    out: dict[str, list[Any]] = {
        "random": [RandomTargeting(seed=1000 * index + r) for r in range(RANDOM_REPEATS)],
        "greedy": [GreedyTargeting()],
        "pc_active": [PCActiveTargeting()],
    }
    out.update({label: [GraphPolicy(agent)] for label, agent in policies.items()})
    return out


def play(world: CRNWorld, agents: list[Any]) -> list[tuple[float, tuple[int, ...]]]:
    observe = graph_view(world) if isinstance(agents[0], GraphPolicy) else None
    return [world.run(agent, observe=observe) for agent in agents]


def run_instance(
    instance: Instance,
    index: int,
    estimator: str,
    policies: dict[str, RLAgent],
    *,
    bic: bool = True,
) -> dict[str, Any]:
    """Every number of one instance under one estimator (``bic``: also on the pooled BIC)."""
    budget, n_int = instance.budget, instance.spec.n_int
    old = CRNWorld(instance, estimator, budget, n_int, rule="always")
    new = CRNWorld(instance, estimator, budget, n_int, rule="power")
    strong = CRNWorld(instance, "bic", budget, n_int, rule="power")
    row: dict[str, Any] = {"replay": {}, "native": {}, "bic": {}, "targets": {}}
    sequences: list[tuple[int, ...]] = []
    for name, agents in targeters(index, policies).items():
        played = play(old, agents)
        row["replay"][name] = {
            rule: float(np.mean([rescore(old, t, settings) for _, t in played]))
            for rule, settings in REPLAY_RULES.items()
        }
        native = play(new, targeters(index, policies)[name])
        row["native"][name] = float(np.mean([f1 for f1, _ in native]))
        sequences += [t for _, t in native]
        row["targets"][name] = [list(t) for _, t in native][:1]
        if bic and estimator == "pc":  # the pooled BIC starts from the data alone: once
            row["bic"][name] = float(
                np.mean([f1 for f1, _ in play(strong, targeters(index, policies)[name])])
            )
    best, _, exhaustive, _ = new.search(WIDTH, sequences)
    row["native"]["best"] = best
    row["exhaustive"] = exhaustive
    return row


def load_policies(specs: Sequence[str]) -> dict[str, RLAgent]:
    policies = {}
    for spec in specs:
        label, sep, path = spec.partition("=")
        if not sep or not label or not path:
            raise SystemExit(f"--policy takes LABEL=PATH, got {spec!r}")
        policies[label] = RLAgent.load(path, name=label)
    return policies


def instances_of(level: str, args: argparse.Namespace) -> list[tuple[int, Instance]]:
    known = ALL_LADDERS[LADDER][level]
    if args.generated:
        return [
            (GENERATED_SEED_BASE + i, generate_instance(known.spec, GENERATED_SEED_BASE + i))
            for i in range(args.generated)
        ]
    first, _, last = args.indices.partition("-")
    return [(i, known.instance(i)) for i in range(int(first), int(last or first) + 1)]


# --------------------------------------------------------------------------- summary
def _test(a: list[float], b: list[float]) -> dict[str, float]:
    x, y = np.array(a), np.array(b)
    return {"difference": float((x - y).mean()), "p": sign_flip_p_value(x, y)}


def summarize(rows: list[dict[str, Any]], labels: Sequence[str]) -> dict[str, Any]:
    """Means per (level, estimator) and paired tests of each policy against the heuristics,
    per cell and summed over the levels (stratified sign flip)."""
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        cells.setdefault((row["level"], row["estimator"]), []).append(row)
    names = ["random", "greedy", "pc_active", *labels]
    out: dict[str, Any] = {"cells": [], "sums": {}}
    for (level, estimator), group in cells.items():
        cell: dict[str, Any] = {"level": level, "estimator": estimator, "n": len(group)}
        cell["replay"] = {
            name: {r: float(np.mean([g["replay"][name][r] for g in group])) for r in REPLAY_RULES}
            for name in names
        }
        cell["native"] = {
            name: float(np.mean([g["native"][name] for g in group])) for name in [*names, "best"]
        }
        if group[0]["bic"]:
            cell["bic"] = {name: float(np.mean([g["bic"][name] for g in group])) for name in names}
        cell["tests"] = {}
        for label in labels:
            for other in ("greedy", "pc_active"):
                tests = {
                    "native": _test(
                        [g["native"][label] for g in group], [g["native"][other] for g in group]
                    ),
                    "replay_always": _test(
                        [g["replay"][label]["always"] for g in group],
                        [g["replay"][other]["always"] for g in group],
                    ),
                    "replay_power": _test(
                        [g["replay"][label]["power"] for g in group],
                        [g["replay"][other]["power"] for g in group],
                    ),
                }
                if group[0]["bic"]:
                    tests["bic"] = _test(
                        [g["bic"][label] for g in group], [g["bic"][other] for g in group]
                    )
                cell["tests"][f"{label}-{other}"] = tests
        out["cells"].append(cell)
    for estimator in ESTIMATORS:
        groups = [g for (lv, est), g in cells.items() if est == estimator]
        if not groups:
            continue
        sums: dict[str, Any] = {}
        for label in labels:
            for other in ("greedy", "pc_active"):
                for kind, read in (
                    ("native", lambda g, n: g["native"][n]),
                    ("replay_always", lambda g, n: g["replay"][n]["always"]),
                    ("replay_power", lambda g, n: g["replay"][n]["power"]),
                ):
                    diffs = [
                        np.array([read(g, label) - read(g, other) for g in group])
                        for group in groups
                    ]
                    sums[f"{label}-{other}:{kind}"] = {
                        "difference": float(sum(d.mean() for d in diffs)),
                        "p": stratified_sign_flip_p_value(diffs),
                    }
        out["sums"][estimator] = sums
    bic_groups = [g for (lv, est), g in cells.items() if g[0]["bic"]]
    if bic_groups:
        sums = {}
        for label in labels:
            for other in ("greedy", "pc_active"):
                diffs = [
                    np.array([g["bic"][label] - g["bic"][other] for g in group])
                    for group in bic_groups
                ]
                sums[f"{label}-{other}:bic"] = {
                    "difference": float(sum(d.mean() for d in diffs)),
                    "p": stratified_sign_flip_p_value(diffs),
                }
        out["sums"]["bic"] = sums
    return out


def markdown(summary: dict[str, Any], labels: Sequence[str]) -> str:
    names = ["random", "greedy", "pc_active", *labels]
    lines = ["### Replay: each targeter's sequence from the old env, re-scored under each rule", ""]
    lines.append("| level | est. | targeter | " + " | ".join(REPLAY_RULES) + " |")
    lines.append("|---|---|---|" + "---|" * len(REPLAY_RULES))
    for cell in summary["cells"]:
        for name in names:
            values = " | ".join(f"{cell['replay'][name][r]:.3f}" for r in REPLAY_RULES)
            lines.append(f"| {cell['level']} | {cell['estimator']} | {name} | {values} |")
    lines += ["", "### Native: every targeter under the default rule, and hindsight-best", ""]
    lines.append("| level | est. | n | " + " | ".join([*names, "best", "best − greedy"]) + " |")
    lines.append("|---|---|---|" + "---|" * (len(names) + 2))
    for cell in summary["cells"]:
        native = cell["native"]
        values = " | ".join(f"{native[n]:.3f}" for n in [*names, "best"])
        lines.append(
            f"| {cell['level']} | {cell['estimator']} | {cell['n']} | {values} | "
            f"{native['best'] - native['greedy']:+.3f} |"
        )
    bic_cells = [cell for cell in summary["cells"] if "bic" in cell]
    if bic_cells:
        lines += ["", "### Strong estimator: every targeter on the pooled BIC", ""]
        lines.append("| level | n | " + " | ".join(names) + " |")
        lines.append("|---|---|" + "---|" * len(names))
        for cell in bic_cells:
            values = " | ".join(f"{cell['bic'][n]:.3f}" for n in names)
            lines.append(f"| {cell['level']} | {cell['n']} | {values} |")
    lines += ["", "### Sums over the six levels (policy − heuristic; stratified sign flip)", ""]
    lines.append("| estimator | comparison | difference | p |")
    lines.append("|---|---|---|---|")
    for estimator, sums in summary["sums"].items():
        for key, test in sums.items():
            lines.append(f"| {estimator} | {key} | {test['difference']:+.3f} | {test['p']:.2g} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--indices", default="100-199", help="manifest indices FIRST-LAST")
    parser.add_argument("--generated", type=int, default=0, help="N generated worlds per level")
    parser.add_argument("--levels", default=",".join(ALL_LADDERS[LADDER]))
    parser.add_argument("--policy", action="append", default=[], help="LABEL=PATH (repeatable)")
    parser.add_argument(
        "--no-bic", action="store_true", help="leave out the pooled-BIC estimator (the slow part)"
    )
    args = parser.parse_args(argv)
    policies = load_policies(args.policy)
    args.out.mkdir(parents=True, exist_ok=True)
    rows_path = args.out / "rows.jsonl"
    rows = [json.loads(line) for line in rows_path.open()] if rows_path.exists() else []
    done = {(r["level"], r["estimator"], r["index"]) for r in rows}
    with rows_path.open("a") as sink:
        for level in args.levels.split(","):
            started = time.perf_counter()
            for index, instance in instances_of(level, args):
                for estimator in ESTIMATORS:
                    if (level, estimator, index) in done:
                        continue
                    row = {
                        "level": level,
                        "estimator": estimator,
                        "index": index,
                        "seed": instance.seed,
                        **run_instance(instance, index, estimator, policies, bic=not args.no_bic),
                    }
                    sink.write(json.dumps(row) + "\n")
                    sink.flush()
                    rows.append(row)
            print(f"{level}: {time.perf_counter() - started:.1f} s", flush=True)
    summary = summarize(rows, list(policies))
    summary["source"] = (
        {"generated": args.generated, "seed_base": GENERATED_SEED_BASE}
        if args.generated
        else {"indices": args.indices}
    )
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    text = markdown(summary, list(policies))
    (args.out / "replay.md").write_text(text)
    print(text)


if __name__ == "__main__":
    run_script(main)
