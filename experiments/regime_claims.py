"""The claims about the policy trained on the few-sample ladder ``v1-n3`` (README, models/README).

    python experiments/readme_claims.py --only rl-n3-summary rl-n3-table --no-sweep --paste

(which runs ``python experiments/regime_claims.py --block rl-n3-summary`` and ``... rl-n3-table``)

Both blocks come from the test split, manifest indices 100-199 of v1-n3's six levels:
``models/acdb_design_n3/evaluation_test.json`` (``experiments/eval_design_policy.py --ladder
v1-n3``, run here when the file is missing; it refuses a file without a selection record) and
the headroom of the same indices, ``experiments/results/headroom_n3_test.csv``
(``experiments/headroom.py``, see ``experiments/results/headroom_n3_test.md``). The headroom of a
(level, estimator) cell is hindsight-best minus greedy targeting there; the policy's share of it
is its mean gain over greedy on the design env divided by that headroom, both averaged over the
six levels (the headroom script draws its own samples per target, so its greedy differs a little
from the env's: the share compares means, not paired episodes).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from acdb_gym.core.scripts import OneLineParser, run_script

ROOT = Path(__file__).resolve().parent.parent
N3_POLICY = ROOT / "models" / "acdb_design_n3"
HEADROOM = ROOT / "experiments" / "results" / "headroom_n3_test.csv"
FIRST, COUNT = 100, 100
BAR = 0.01
"""The p-value the issue asks the policy to beat greedy and ``pc_active``'s rule at."""
ESTIMATORS = {"true_cpdag": "true CPDAG", "pc": "PC"}
WITH = {"true_cpdag": "the true CPDAG", "pc": "PC"}
HEURISTICS = {"greedy": "greedy max-degree targeting", "pc_active": "`pc_active`'s rule"}


def evaluation() -> dict[str, Any]:
    """The policy's test evaluation (made by ``eval_design_policy.py`` when missing)."""
    path = N3_POLICY / "evaluation_test.json"
    if not path.exists():
        command = [sys.executable, str(ROOT / "experiments" / "eval_design_policy.py")]
        command += ["--ladder", "v1-n3", "--model", str(N3_POLICY / "model.zip")]
        command += ["--first-index", str(FIRST), "--instances", str(COUNT)]
        command += ["--custom-instances", "0", "--out", str(path)]
        subprocess.run(command, check=True)
    result: dict[str, Any] = json.loads(path.read_text())
    if result["manifest_indices"] != [FIRST, FIRST + COUNT - 1] or result["ladder"] != "v1-n3":
        raise SystemExit(f"{path} is not v1-n3's indices {FIRST}-{FIRST + COUNT - 1}; delete it")
    return result


def headroom() -> dict[tuple[str, str], dict[str, float]]:
    """(level, estimator) -> the headroom script's means on the same indices."""
    with HEADROOM.open() as handle:
        rows = list(csv.DictReader(handle))
    if {row["ladder"] for row in rows} != {"v1-n3"} or {row["n"] for row in rows} != {"100"}:
        raise SystemExit(f"{HEADROOM} is not the headroom of v1-n3's 100 test indices")
    return {
        (row["level"], row["estimator"]): {
            name: float(row[name]) for name in ("greedy", "best", "best_fresh", "greedy_fresh")
        }
        for row in rows
    }


def _p(p: float) -> str:
    return "p < 1e-4" if p < 1e-4 else f"p = {p:.2g}"


def _gains(result: dict[str, Any], estimator: str) -> tuple[float, float, float]:
    """Mean over levels of policy − greedy (env), best − greedy and best − greedy on fresh
    samples (headroom script)."""
    cells = headroom()
    rows = [row for row in result["levels"] if row["estimator"] == estimator]
    policy = sum(row["vs_greedy"]["f1"]["difference"] for row in rows) / len(rows)
    room = [cells[row["level"], estimator] for row in rows]
    best = sum(c["best"] - c["greedy"] for c in room) / len(room)
    fresh = sum(c["best_fresh"] - c["greedy_fresh"] for c in room) / len(room)
    return policy, best, fresh


def _verdict(result: dict[str, Any], estimator: str) -> tuple[bool, str]:
    totals = result["sum_over_levels"][estimator]
    beats = all(totals[n]["difference"] > 0 and totals[n]["p"] < BAR for n in HEURISTICS)
    sums = " and ".join(
        f"{totals[n]['difference']:+.3f} against {HEURISTICS[n]} ({_p(totals[n]['p'])})"
        for n in HEURISTICS
    )
    return beats, sums


def _cells(result: dict[str, Any], sign: int) -> list[str]:
    out = []
    for row in result["levels"]:
        for name in HEURISTICS:
            test = row[f"vs_{name}"]["f1"]
            if test["p"] < BAR and test["difference"] * sign > 0:
                out.append(f"{row['level']} {ESTIMATORS[row['estimator']]} vs {name}")
    return out


def block_rl_n3_summary() -> str:
    result = evaluation()
    parts = []
    for estimator, shown in WITH.items():
        beats, sums = _verdict(result, estimator)
        policy, best, fresh = _gains(result, estimator)
        word = "**beats both**" if beats else "**does not beat both**"
        parts.append(
            f"With {shown} it {word} at p < {BAR} (sum over the six levels of the mean "
            f"differences in directed F1: {sums}); its mean gain over greedy per level, "
            f"{policy:+.3f}, is {policy / best:.0%} of the headroom (hindsight-best − greedy, "
            f"{best:+.3f}) and {policy / fresh:.0%} of what the hindsight-best sequences keep "
            f"on fresh samples ({fresh:+.3f})."
        )
    wins, losses = _cells(result, 1), _cells(result, -1)
    rows = result["levels"]
    same = max(abs(r["policy"]["interventions"] - r["pc_active"]["interventions"]) for r in rows)
    budget = (
        f" It spends as many experiments as `pc_active`'s rule on every level and estimator (the "
        f"whole budget; largest difference of the means {same:.2f}), so its gain over that rule "
        "is in where it intervenes, not in how often."
        if same < 0.05
        else ""
    )
    return (
        f"On v1-n3's test split (manifest indices {FIRST}–{FIRST + COUNT - 1} of its six "
        "levels, both estimators, every targeter on the same instances and samples; "
        "`models/README.md` has every level) the policy is compared with greedy max-degree "
        "targeting and `pc_active`'s rule. " + " ".join(parts) + f" Per level and estimator it is "
        f"above a heuristic at p < {BAR} in {len(wins)} of the {2 * len(rows)} level × estimator "
        f"× heuristic cells and below in {len(losses)}"
        f"{' (' + '; '.join(losses) + ')' if losses else ''}.{budget}\n"
    )


def block_rl_n3_table() -> str:
    result = evaluation()
    cells = headroom()
    lines = [
        "| level | est. | policy − greedy (p) | hindsight-best − greedy | share | "
        "best − greedy, fresh samples | share |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in result["levels"]:
        gain = row["vs_greedy"]["f1"]
        cell = cells[row["level"], row["estimator"]]
        best, fresh = cell["best"] - cell["greedy"], cell["best_fresh"] - cell["greedy_fresh"]
        lines.append(
            f"| {row['level']} | {row['estimator']} | {gain['difference']:+.3f} "
            f"({_p(gain['p'])}) | {best:+.3f} | {gain['difference'] / best:.0%} | "
            f"{fresh:+.3f} | {gain['difference'] / fresh:.0%} |"
        )
    # The table eval_design_policy.py wrote beside its evaluation file.
    return (
        (N3_POLICY / "evaluation_test.md").read_text()
        + "\nThe headroom of each cell (`experiments/headroom.py` on the same indices) and the "
        "share of it the policy's gain over greedy takes:\n\n" + "\n".join(lines) + "\n"
    )


BLOCKS = {"rl-n3-summary": block_rl_n3_summary, "rl-n3-table": block_rl_n3_table}


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--block", choices=list(BLOCKS), required=True, help="the block to print")
    args = parser.parse_args()
    print(BLOCKS[args.block](), end="")


if __name__ == "__main__":
    run_script(main)
