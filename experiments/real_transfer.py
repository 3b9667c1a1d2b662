"""Does the ranking transfer? Agents on ER vs scale-free graphs vs the real wirings vs the
fitted Sachs world, from sweep rows, on a chosen range of manifest indices.

The rows come from sweeps like these (``--seeds 200`` runs indices 0-199; the script keeps
the indices asked for, so claims use ``--indices 100-199`` and exploration ``0-99``)::

    A=pc,pc_greedy,sortnregress
    acdb sweep --ladder v1 --levels L3 --seeds 200 --agents $A --out runs/real-transfer
    acdb sweep --ladder v1-nonlinear --levels L3 --seeds 200 --agents $A --out runs/real-transfer
    acdb sweep --ladder real --levels SF-L3,SF-Nonlinear-L3,Sachs,Sachs-Nonlinear,Sachs-Fitted,\\
        Sachs-Fitted-Spline,DREAM4-5 --seeds 200 --agents $A --out runs/real-transfer

then ``python experiments/real_transfer.py runs/real-transfer/results.jsonl --indices 100-199``.
``--orders-from`` reads the ``msort`` rows that choose the orders from another results file,
``--print-orders`` prints the chosen order of each column (``ladder level agent``, tab-separated)
and ``--claim`` the README's claim (a summary of the paired tests, then the tables);
``experiments/readme_claims.py`` runs the script for both.

It prints, in markdown, directed F1 per agent row and level (mean and 95 % bootstrap CI over
seeds, from ``acdb_gym.report``), then per level the paired sign-flip tests of each pair of
agent rows on the same worlds (``pc_greedy`` vs ``pc``, ``pc`` vs ``sortnregress``: does the
order of agents hold on each kind of world?), and the ER-to-SF change of each agent (v1 L3 vs
real SF-L3 and the nonlinear pair: the same d, k, samples and slack, different worlds, so the
difference is of means, with a bootstrap CI of the difference).

Every column also gets the row of its **best marginal order**: the ``msort:FEATURE:DIRECTION``
agent (regressions in the order of a marginal feature of the sample, DESIGN §9) with the highest
mean directed F1 on development indices (``--select-indices``, 0-39 by default, from rows of the
twelve ``msort`` agents in the same results file), run on the indices asked for, so a shortcut
that reads the order off the marginals stands beside the agents. Add the rows with::

    acdb sweep --ladder real --indices 0:40 --agents msort:r2:desc,... --out runs/real-transfer

(all twelve ``msort`` agents, :func:`marginal_order_agents`), then the chosen agent of each
level on the indices of the claim.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from acdb_gym.core.scripts import OneLineParser, run_script
from acdb_gym.discovery.sortability import MARGINAL_FEATURES
from acdb_gym.discovery.sortnregress import SORT_DIRECTIONS
from acdb_gym.report.statistics import bootstrap_ci, sign_flip_pvalue

LEVELS: tuple[tuple[str, str, str], ...] = (
    ("v1", "L3", "ER"),
    ("real", "SF-L3", "SF"),
    ("v1-nonlinear", "L3", "ER nonlinear"),
    ("real", "SF-Nonlinear-L3", "SF nonlinear"),
    ("real", "Sachs", "Sachs"),
    ("real", "Sachs-Nonlinear", "Sachs nonlinear"),
    ("real", "Sachs-Fitted", "Sachs fitted (linear)"),
    ("real", "Sachs-Fitted-Spline", "Sachs fitted (spline)"),
    *((("real", f"DREAM4-{n}", f"DREAM4-{n}")) for n in range(1, 6)),
)
"""``(ladder, level, column)`` in table order; levels without rows are left out."""

ER_SF_PAIRS = (("ER", "SF"), ("ER nonlinear", "SF nonlinear"))
SHORTCUT = ("best marginal order", "observational")
"""The agent row holding each column's best marginal-order agent (:func:`best_orders`)."""
AGENT_PAIRS = (
    (("pc_greedy", "active"), ("pc", "observational")),
    (("pc", "observational"), ("sortnregress", "observational")),
    (("pc", "observational"), SHORTCUT),
    (("bic_active", "active"), ("pc_greedy", "active")),
)

ALPHA = 0.05
"""The two-sided level of the claim's paired tests (``--claim``)."""

PerSeed = dict[tuple[str, str, str, str], dict[int, float]]
Orders = dict[tuple[str, str], str]
"""``(ladder, level) -> msort agent``."""


def marginal_order_agents() -> tuple[str, ...]:
    """The twelve ``msort:FEATURE:DIRECTION`` agents, in the audit's order."""
    return tuple(f"msort:{f}:{d}" for f in MARGINAL_FEATURES for d in SORT_DIRECTIONS)


def best_orders(per_seed: PerSeed) -> Orders:
    """Per ``(ladder, level)``, the ``msort`` agent of the highest mean (ties: the first in
    :func:`marginal_order_agents`' order) among the rows of ``per_seed``."""
    means: dict[tuple[str, str], dict[str, float]] = {}
    for (ladder, level, agent, _panel), values in per_seed.items():
        if agent.startswith("msort:") and values:
            means.setdefault((ladder, level), {})[agent] = float(np.mean(list(values.values())))
    ranked = marginal_order_agents()
    return {
        key: max(sorted(by, key=ranked.index), key=lambda agent, by=by: by[agent])
        for key, by in means.items()
    }


def with_best_orders(per_seed: PerSeed, orders: Mapping[tuple[str, str], str]) -> PerSeed:
    """``per_seed`` with each level's chosen ``msort`` agent as the :data:`SHORTCUT` row and
    every other ``msort`` row left out."""
    kept: PerSeed = {}
    for (ladder, level, agent, panel), values in per_seed.items():
        if not agent.startswith("msort:"):
            kept[(ladder, level, agent, panel)] = values
        elif orders.get((ladder, level)) == agent:
            kept[(ladder, level, *SHORTCUT)] = values
    return kept


def load(path: Path, first: int, last: int, metric: str) -> PerSeed:
    """``(ladder, level, agent, panel) -> {manifest_index: value}`` over the ok rows of a
    results file with ``first <= manifest_index <= last`` (repeats averaged)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return per_seed([json.loads(line) for line in lines if line.strip()], first, last, metric)


def per_seed(rows: Iterable[Mapping[str, Any]], first: int, last: int, metric: str) -> PerSeed:
    """:func:`load` over rows already read."""
    sums: dict[tuple[str, str, str, str], dict[int, list[float]]] = {}
    for row in rows:
        index = row.get("manifest_index")
        if row.get("status") != "ok" or index is None or not first <= index <= last:
            continue
        key = (row["ladder"], row["level"], row["agent"], row["panel"])
        sums.setdefault(key, {}).setdefault(int(index), []).append(float(row[metric]))
    return {key: {i: float(np.mean(v)) for i, v in by.items()} for key, by in sums.items()}


def _cell(values: list[float]) -> str:
    estimate = bootstrap_ci([np.array(values) * 100])
    return f"{estimate.mean:.1f} [{estimate.low:.1f}, {estimate.high:.1f}]"


def tables(per_seed: PerSeed, orders: Mapping[tuple[str, str], str] | None = None) -> str:
    """The three markdown tables; with ``orders`` (:func:`best_orders`), each level's chosen
    ``msort`` agent is the :data:`SHORTCUT` row and a line names it per column."""
    if orders is not None:
        per_seed = with_best_orders(per_seed, orders)
    present = [entry for entry in LEVELS if any(k[:2] == entry[:2] for k in per_seed)]
    rows = sorted({(k[2], k[3]) for k in per_seed}, key=lambda row: (row == SHORTCUT, row))
    out = ["Directed F1 (%), mean [95 % CI] over seeds; n seeds per level in the header.", ""]
    header = ["agent"]
    for ladder, level, column in present:
        n = max(len(v) for k, v in per_seed.items() if k[:2] == (ladder, level))
        header.append(f"{column} (n={n})")
    out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for agent, panel in rows:
        cells = [f"{agent} ({panel})"]
        for ladder, level, _ in present:
            values = per_seed.get((ladder, level, agent, panel))
            cells.append(_cell(list(values.values())) if values else "–")
        out.append("| " + " | ".join(cells) + " |")
    if orders:
        named = [
            f"{column} `{orders[(ladder, level)]}`"
            for ladder, level, column in present
            if (ladder, level) in orders
        ]
        out += ["", "Best marginal order per column (on development indices): " + ", ".join(named)]
    out += ["", "Paired on the same worlds (sign-flip test; difference in points).", ""]
    out += ["| level | comparison | n | mean difference | p |", "|---|---|---|---|---|"]
    for ladder, level, column in present:
        for a, b in AGENT_PAIRS:
            first = per_seed.get((ladder, level, *a))
            second = per_seed.get((ladder, level, *b))
            if not first or not second:
                continue
            shared = sorted(set(first) & set(second))
            diff = np.array([first[i] - second[i] for i in shared])
            p = sign_flip_pvalue(diff)
            out.append(
                f"| {column} | {a[0]} − {b[0]} | {diff.size} | {diff.mean() * 100:+.1f} | {p:.3g} |"
            )
    by_column = {column: (ladder, level) for ladder, level, column in present}
    out += ["", "ER → SF (different worlds of the same size; difference of means).", ""]
    out += ["| agent | from → to | mean difference [95 % CI] |", "|---|---|---|"]
    for agent, panel in rows:
        for er, sf in ER_SF_PAIRS:
            if er not in by_column or sf not in by_column:
                continue
            x = per_seed.get((*by_column[er], agent, panel))
            y = per_seed.get((*by_column[sf], agent, panel))
            if not x or not y:
                continue
            rng = np.random.default_rng(0)
            xs, ys = np.array(list(x.values())), np.array(list(y.values()))
            boot = [
                rng.choice(ys, ys.size).mean() - rng.choice(xs, xs.size).mean() for _ in range(2000)
            ]
            low, high = np.percentile(boot, [2.5, 97.5]) * 100
            change = (ys.mean() - xs.mean()) * 100
            out.append(
                f"| {agent} ({panel}) | {er} → {sf} | {change:+.1f} [{low:+.1f}, {high:+.1f}] |"
            )
    return "\n".join(out)


def paired_columns(per_seed: PerSeed, row: tuple[str, str]) -> tuple[list[str], list[str]]:
    """The columns where agent row ``row`` is above and below pc at p < :data:`ALPHA` (paired
    sign-flip test on the seeds both ran)."""
    above, below = [], []
    for ladder, level, column in LEVELS:
        first = per_seed.get((ladder, level, *row), {})
        pc = per_seed.get((ladder, level, "pc", "observational"), {})
        shared = sorted(set(first) & set(pc))
        if not shared:
            continue
        difference = np.array([first[i] - pc[i] for i in shared])
        if sign_flip_pvalue(difference) < ALPHA:
            (above if difference.mean() > 0 else below).append(column)
    return above, below


def claim(per_seed: PerSeed, orders: Orders, first: int, last: int, select_last: int) -> str:
    """The README's claim on indices ``first .. last``: where pc_greedy and the best marginal
    order (chosen on development indices ``0 .. select_last``) stand against pc, then the
    tables."""
    merged = with_best_orders(per_seed, orders)
    better, worse = paired_columns(merged, ("pc_greedy", "active"))
    above, below = paired_columns(merged, SHORTCUT)
    summary = (
        f"pc_greedy is above pc on {len(better)} of the {len(better) + len(worse)} kinds of world "
        f"where they differ at p < {ALPHA}"
        + (f" and below it on {', '.join(worse)}" if worse else "")
        + ". The best marginal order (each column's best of the twelve `msort` agents on "
        f"development indices 0–{select_last}, a structure-blind shortcut) is above pc "
        f"on {len(above)} kinds of world"
        + (f" ({', '.join(above)})" if above else "")
        + f" and below it on {len(below)} at p < {ALPHA}."
    )
    return (
        f"On the test split (manifest indices {first}–{last} of every level; the ER columns are "
        "v1 L3 and v1-nonlinear L3, the SF columns the real ladder's levels of the same size). "
        f"{summary}\n\n" + tables(per_seed, orders).rstrip("\n") + "\n"
    )


def _index_range(text: str) -> tuple[int, int]:
    first, last = (int(part) for part in text.split("-"))
    return first, last


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a results.jsonl with the sweeps' rows")
    parser.add_argument("--indices", default="100-199", help="manifest indices FIRST-LAST")
    parser.add_argument("--metric", default="directed_f1")
    parser.add_argument(
        "--select-indices",
        default="0-39",
        help="development indices FIRST-LAST whose msort rows choose each level's best order",
    )
    parser.add_argument(
        "--orders-from",
        type=Path,
        default=None,
        help="the msort rows' results file (default: results)",
    )
    parser.add_argument(
        "--print-orders", action="store_true", help="print each column's chosen order and stop"
    )
    parser.add_argument("--claim", action="store_true", help="print the README's claim block")
    args = parser.parse_args()
    first, last = _index_range(args.indices)
    low, high = _index_range(args.select_indices)
    orders = best_orders(load(args.orders_from or args.results, low, high, args.metric))
    if args.print_orders:
        for (ladder, level), agent in sorted(orders.items()):
            print(f"{ladder}\t{level}\t{agent}")
        return
    per_seed = load(args.results, first, last, args.metric)
    if args.claim:
        print(claim(per_seed, orders, first, last, high), end="")
        return
    print(tables(per_seed, orders or None))


if __name__ == "__main__":
    run_script(main)
