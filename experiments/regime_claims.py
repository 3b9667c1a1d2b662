"""The claims about the few-sample ladder ``v1-n3`` and the policies trained there (README,
models/README).

    python experiments/readme_claims.py --only rl-n3-summary rl-n3-replay rl-n3-table \\
        --no-sweep --paste

Every block comes from the test split, manifest indices 100-199 of v1-n3's six levels, or from
generated worlds no training, validation or manifest seed reaches:

* ``models/acdb_design_n3_power/evaluation_test.json``: the policy retrained under the default
  orientation rule (``power``), played in the design env (``experiments/eval_design_policy.py``,
  run here when the file is missing);
* ``experiments/results/few_sample_replay/test/summary.json`` and ``.../generated/summary.json``:
  ``experiments/few_sample_replay.py`` on common random numbers (an experiment on ``X_i`` has the
  same samples whatever the order or the targeter) for the same indices and for 100 generated
  worlds per level (seeds ``3 * 10**9 + i``): every targeter's sequence from the old env
  re-scored under each rule, every targeter native under the default rule, and hindsight-best
  (the headroom). Run here when missing (without the pooled-BIC estimator);
* ``experiments/results/few_sample_replay/bic_l1/summary.json``: the same on the pooled BIC, L1
  only (the slow part; its command is in ``experiments/results/few_sample_replay/README.md``).

``old`` is ``models/acdb_design_n3`` (trained under the old rule ``always``), ``new`` is
``models/acdb_design_n3_power``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from acdb_gym.core.scripts import OneLineParser, run_script

ROOT = Path(__file__).resolve().parent.parent
POLICY = ROOT / "models" / "acdb_design_n3_power"
OLD_POLICY = ROOT / "models" / "acdb_design_n3"
REPLAY = ROOT / "experiments" / "results" / "few_sample_replay"
FIRST, COUNT = 100, 100
GENERATED = 100
BAR = 0.01
"""The p-value a policy must beat greedy and ``pc_active``'s rule at to be called better."""
ESTIMATORS = {"true_cpdag": "true CPDAG", "pc": "PC"}
WITH = {"true_cpdag": "the true CPDAG", "pc": "PC"}
HEURISTICS = {"greedy": "greedy max-degree targeting", "pc_active": "`pc_active`'s rule"}
RULES = ("always", "band05", "band20", "significant", "power")
"""The replay's rules (``experiments/few_sample_replay.py``): ``always`` is the old default."""
OLD_HEADROOM = {"true_cpdag": 0.118, "pc": 0.106}
"""Mean hindsight-best − greedy per level under the old rule on the same indices (the README's
figure before 0.2, ``experiments/results/headroom_n3_test.md``)."""


def evaluation() -> dict[str, Any]:
    """The retrained policy's test evaluation in the design env (made when missing)."""
    path = POLICY / "evaluation_test.json"
    if not path.exists():
        command = [sys.executable, str(ROOT / "experiments" / "eval_design_policy.py")]
        command += ["--ladder", "v1-n3", "--model", str(POLICY / "model.zip")]
        command += ["--first-index", str(FIRST), "--instances", str(COUNT)]
        command += ["--custom-instances", "0", "--out", str(path)]
        subprocess.run(command, check=True)
    result: dict[str, Any] = json.loads(path.read_text())
    if result["manifest_indices"] != [FIRST, FIRST + COUNT - 1] or result["ladder"] != "v1-n3":
        raise SystemExit(f"{path} is not v1-n3's indices {FIRST}-{FIRST + COUNT - 1}; delete it")
    return result


def replay(name: str) -> dict[str, Any]:
    """One replay's summary (``test``, ``generated`` or ``bic_l1``), made when missing."""
    path = REPLAY / name / "summary.json"
    if not path.exists() and name != "bic_l1":
        command = [sys.executable, str(ROOT / "experiments" / "few_sample_replay.py")]
        command += ["--out", str(path.parent), "--no-bic"]
        command += ["--policy", f"old={OLD_POLICY / 'model.zip'}"]
        command += ["--policy", f"new={POLICY / 'model.zip'}"]
        command += (
            ["--generated", str(GENERATED)]
            if name == "generated"
            else ["--indices", f"{FIRST}-{FIRST + COUNT - 1}"]
        )
        subprocess.run(command, check=True)
    if not path.exists():
        raise SystemExit(f"{path} is missing: see {REPLAY / 'README.md'}")
    summary: dict[str, Any] = json.loads(path.read_text())
    return summary


def _p(p: float) -> str:
    return "p < 1e-4" if p < 1e-4 else f"p = {p:.2g}"


def _sum(summary: dict[str, Any], estimator: str, key: str) -> str:
    test = summary["sums"][estimator][key]
    return f"{test['difference']:+.3f} ({_p(test['p'])})"


def _cells(summary: dict[str, Any], estimator: str) -> list[dict[str, Any]]:
    return [cell for cell in summary["cells"] if cell["estimator"] == estimator]


def headroom(summary: dict[str, Any], estimator: str) -> float:
    """Mean over the levels of hindsight-best − greedy under the default rule."""
    cells = _cells(summary, estimator)
    return sum(c["native"]["best"] - c["native"]["greedy"] for c in cells) / len(cells)


def _rule_sum(summary: dict[str, Any], estimator: str, name: str, rule: str) -> float:
    """Sum over the levels of ``name`` − greedy, the sequences of the old env under ``rule``."""
    return sum(
        c["replay"][name][rule] - c["replay"]["greedy"][rule] for c in _cells(summary, estimator)
    )


def block_rl_n3_summary() -> str:
    env, test, generated = evaluation(), replay("test"), replay("generated")
    parts = []
    for estimator, shown in WITH.items():
        totals = env["sum_over_levels"][estimator]
        in_env = " and ".join(
            f"{totals[n]['difference']:+.3f} against {HEURISTICS[n]} ({_p(totals[n]['p'])})"
            for n in HEURISTICS
        )
        beats = all(
            summary["sums"][estimator][f"new-{n}:native"]["difference"] > 0
            and summary["sums"][estimator][f"new-{n}:native"]["p"] < BAR
            for summary in (test, generated)
            for n in HEURISTICS
        )
        parts.append(
            f"With {shown}: in the design env {in_env}; on common random numbers "
            f"{_sum(test, estimator, 'new-greedy:native')} against greedy on the test split "
            f"and {_sum(generated, estimator, 'new-greedy:native')} on the generated worlds, "
            f"so it {'beats' if beats else '**does not reliably beat**'} greedy at p < {BAR}. "
            f"The headroom itself is small: hindsight-best − greedy is "
            f"{headroom(test, estimator):+.3f} a level on the test split "
            f"({headroom(generated, estimator):+.3f} on the generated worlds), against "
            f"{OLD_HEADROOM[estimator]:+.3f} under the old rule."
        )
    strong = next(cell for cell in replay("bic_l1")["cells"] if "bic" in cell)
    bic = strong["bic"]
    parts.append(
        f"Where the estimator is strong (the pooled BIC, `bic_active`'s score; {strong['level']}'s "
        f"{strong['n']} test instances) every targeter but random reaches about 95% directed F1: "
        f"greedy {bic['greedy']:.3f}, `pc_active`'s rule {bic['pc_active']:.3f}, the retrained "
        f"policy {bic['new']:.3f}, the old policy {bic['old']:.3f}, random {bic['random']:.3f}."
    )
    return (
        f"The policy retrained under the default rule (`models/acdb_design_n3_power`, the same "
        f"network and protocol) on v1-n3's test split (manifest indices {FIRST}–"
        f"{FIRST + COUNT - 1}, sums over the six levels of the mean differences in directed F1, "
        f"stratified sign-flip p) and on {GENERATED} generated worlds a level (seeds "
        "`3 * 10**9 + i`, never used in training or selection). " + " ".join(parts) + "\n"
    )


def block_rl_n3_replay() -> str:
    test = replay("test")
    lines = [
        "| estimator | targeter | " + " | ".join(f"`{rule}`" for rule in RULES) + " |",
        "|---|---|" + "---|" * len(RULES),
    ]
    for estimator, shown in ESTIMATORS.items():
        for name, label in (
            ("pc_active", "`pc_active`'s rule"),
            ("random", "random"),
            ("old", "old policy"),
            ("new", "retrained policy"),
        ):
            values = " | ".join(f"{_rule_sum(test, estimator, name, r):+.3f}" for r in RULES)
            lines.append(f"| {shown} | {label} | {values} |")
    old = {e: _sum(test, e, "old-greedy:native") for e in ESTIMATORS}
    return (
        "Each targeter acts in the old env (rule `always`) on the test split; its exact target "
        "sequence is then re-scored on the same samples under each rule. Sum over the six "
        "levels of (targeter − greedy) in directed F1:\n\n" + "\n".join(lines) + "\n\n"
        "The old policy's lead exists only under `always` (the rule it was trained on); under "
        "any rule that abstains on weak evidence it falls to or below greedy, and acting under "
        f"the default rule it is below greedy ({old['true_cpdag']} with the true CPDAG, "
        f"{old['pc']} with PC).\n"
    )


def block_rl_n3_table() -> str:
    test, generated = replay("test"), replay("generated")
    lines = [
        "| level | est. | greedy | `pc_active` | random | old policy | retrained | "
        "hindsight-best | best − greedy | retrained − greedy (p) | generated: retrained − "
        "greedy (p) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    others = {(c["level"], c["estimator"]): c for c in generated["cells"]}
    for cell in test["cells"]:
        native, tests = cell["native"], cell["tests"]["new-greedy"]["native"]
        far = others[cell["level"], cell["estimator"]]["tests"]["new-greedy"]["native"]
        lines.append(
            f"| {cell['level']} | {cell['estimator']} | {native['greedy']:.3f} | "
            f"{native['pc_active']:.3f} | {native['random']:.3f} | {native['old']:.3f} | "
            f"{native['new']:.3f} | {native['best']:.3f} | "
            f"{native['best'] - native['greedy']:+.3f} | {tests['difference']:+.3f} "
            f"({_p(tests['p'])}) | {far['difference']:+.3f} ({_p(far['p'])}) |"
        )
    evaluation()  # the evaluation file and its table, made when missing
    table = (POLICY / "evaluation_test.md").read_text()  # as eval_design_policy.py wrote it
    return (
        "Common random numbers, every targeter acting under the default rule (test split, "
        f"{COUNT} instances a cell; the last column {GENERATED} generated worlds a cell):\n\n"
        + "\n".join(lines)
        + "\n\nThe retrained policy in the design env (its own sample stream per targeter, "
        "as the env serves them):\n\n" + table
    )


BLOCKS = {
    "rl-n3-summary": block_rl_n3_summary,
    "rl-n3-replay": block_rl_n3_replay,
    "rl-n3-table": block_rl_n3_table,
}


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--block", choices=list(BLOCKS), required=True, help="the block to print")
    args = parser.parse_args()
    print(BLOCKS[args.block](), end="")


if __name__ == "__main__":
    run_script(main)
