"""Marginal-order audit: does sorting by a marginal feature of D_obs beat a random order?

For each ladder, level and development manifest index (0 .. seeds-1), the observational sample
is ordered by each audited marginal feature (``MARGINAL_FEATURES``: variance, R², range, MAD,
kurtosis, |skew|) in both directions, each variable is regressed on its predecessors
(``msortnregress``, alpha 0.01) and the directed F1 of the result is compared with the same
regressions in a random order (the mean over ``--random-orders`` permutations drawn from the
instance's seed, the ``randregress`` control). The gain is the mean paired difference in
points of directed F1 over every (level, index) of the ladder; the p-value is the two-sided
sign-flip test of those paired differences. ``--with-pc`` adds the directed F1 of PC (Fisher-z)
and pc_rank (PC on normal scores) on the same instances, the methods the family must keep
working for.

Usage:
    python benchmarks/marginal_orders.py --ladders v1,v1-nongaussian,v1-nonlinear --seeds 40
        [--random-orders 5] [--with-pc] [--smoke]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np

from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.core.scoring import score
from acdb_gym.discovery import MARGINAL_FEATURES, msortnregress, regress_in_order
from acdb_gym.discovery.pc import shared_pc_cpdag
from acdb_gym.discovery.pc_rank import rank_pc_cpdag
from acdb_gym.report.statistics import sign_flip_pvalue

DIRECTIONS = ("asc", "desc")
ALPHA = 0.01


def _instance_row(
    ladder: str, level: str, index: int, random_orders: int, with_pc: bool
) -> dict[str, float]:
    """Directed F1 of every feature order, the random-order control and (optionally) PC."""
    instance = ALL_LADDERS[ladder][level].instance(index)
    data = np.asarray(instance.d_obs)
    row: dict[str, float] = {}
    for feature in MARGINAL_FEATURES:
        for direction in DIRECTIONS:
            graph = msortnregress(data, feature=feature, direction=direction, alpha=ALPHA)
            row[f"{feature}:{direction}"] = score(instance, graph).directed_f1
    rng = np.random.default_rng([instance.seed, 26])
    random_f1 = [
        score(
            instance, regress_in_order(data, rng.permutation(instance.n_nodes), alpha=ALPHA)
        ).directed_f1
        for _ in range(random_orders)
    ]
    row["random"] = float(np.mean(random_f1))
    if with_pc:
        row["pc"] = score(instance, shared_pc_cpdag(data)).directed_f1
        row["pc_rank"] = score(instance, rank_pc_cpdag(data)).directed_f1
    return row


def audit(
    ladder: str, seeds: int, random_orders: int, with_pc: bool
) -> tuple[dict[str, np.ndarray], int]:
    """Per column, the values over every (level, index) of ``ladder``, and their count.

    ``ladder`` is a ladder's name, or ``NAME:LEVEL+LEVEL...`` for some of its levels
    (``real:SF-Nonlinear-L3+Sachs-Nonlinear``).
    """
    name, _, chosen = ladder.partition(":")
    levels = chosen.split("+") if chosen else list(ALL_LADDERS[name])
    rows = [
        _instance_row(name, level, index, random_orders, with_pc)
        for level in levels
        for index in range(seeds)
    ]
    return {key: np.array([row[key] for row in rows]) for key in rows[0]}, len(rows)


def table(results: dict[str, tuple[dict[str, np.ndarray], int]]) -> list[str]:
    """The Markdown table: per ladder and feature order, the gain over a random order."""
    lines = [
        "| ladder | order | directed F1 (%) | random order (%) | gain (points) | p (sign-flip) |",
        "|---|---|---|---|---|---|",
    ]
    for ladder, (columns, _) in results.items():
        control = columns["random"]
        for feature in MARGINAL_FEATURES:
            for direction in DIRECTIONS:
                values = columns[f"{feature}:{direction}"]
                differences = 100.0 * (values - control)
                lines.append(
                    f"| {ladder} | {feature} {direction} | {100 * values.mean():.1f} | "
                    f"{100 * control.mean():.1f} | {differences.mean():+.1f} | "
                    f"{sign_flip_pvalue(differences):.2g} |"
                )
    return lines


def summary(results: dict[str, tuple[dict[str, np.ndarray], int]]) -> list[str]:
    """Per ladder: the largest gain, and PC's and pc_rank's directed F1 when measured."""
    lines = [
        "| ladder | instances | largest gain (order) | PC dir F1 (%) | pc_rank dir F1 (%) |",
        "|---|---|---|---|---|",
    ]
    for ladder, (columns, count) in results.items():
        control = columns["random"]
        gains = {
            f"{feature} {direction}": 100.0 * (columns[f"{feature}:{direction}"] - control).mean()
            for feature in MARGINAL_FEATURES
            for direction in DIRECTIONS
        }
        worst = max(gains, key=lambda key: gains[key])
        pc = f"{100 * columns['pc'].mean():.1f}" if "pc" in columns else "–"
        rank = f"{100 * columns['pc_rank'].mean():.1f}" if "pc_rank" in columns else "–"
        lines.append(f"| {ladder} | {count} | {gains[worst]:+.1f} ({worst}) | {pc} | {rank} |")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ladders",
        default="v1,v1-nongaussian,v1-nonlinear",
        help="comma-separated ladders, each NAME or NAME:LEVEL+LEVEL (some of its levels)",
    )
    parser.add_argument("--seeds", type=int, default=40, help="dev manifest indices 0..seeds-1")
    parser.add_argument("--random-orders", type=int, default=5)
    parser.add_argument("--with-pc", action="store_true", help="also PC and pc_rank")
    parser.add_argument("--smoke", action="store_true", help="one index, one random order")
    args = parser.parse_args(argv)
    if args.smoke:
        args.seeds, args.random_orders = 1, 1
    if not 1 <= args.seeds <= 100:
        raise SystemExit(f"--seeds must be in [1, 100] (the development indices), got {args.seeds}")
    start = time.perf_counter()
    results = {
        ladder: audit(ladder, args.seeds, args.random_orders, args.with_pc)
        for ladder in args.ladders.split(",")
    }
    print("\n".join(summary(results)))
    print()
    print("\n".join(table(results)))
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
