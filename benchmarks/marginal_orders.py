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

``--per-level`` prints instead, per level, every audited order's gain with its 95 % bootstrap CI
and sign-flip p-value, computed by the report's own audit
(:func:`acdb_gym.report.order_audit.instance_order_audit`: its :data:`N_RANDOM_ORDERS` random
orders per instance, seeded by the instance seed), so the table is the one ``acdb report``'s
order audit gives on the same instances; ``--max-gain`` then exits non-zero when any order
gains more than that many points on any level. ``--spec SPEC@BASE`` (repeatable) adds a level
spec in custom-level syntax, audited on its first seeds from BASE up that generate, as a manifest
would hold them: ``--spec "d=20,k=30,n_obs=1000,n_int=200,slack=1,standardized=true,graph=sf,
orientation=uniform@400000"`` is the real ladder's SF-L3 oriented by a uniform order without
``edge_scale``.

Usage:
    python benchmarks/marginal_orders.py --ladders v1,v1-nongaussian,v1-nonlinear --seeds 40
        [--random-orders 5] [--with-pc] [--smoke]
    python benchmarks/marginal_orders.py --per-level --seeds 40 --ladders "real:SF-L3+Sachs"
        [--max-gain 3]
    python benchmarks/marginal_orders.py --per-level --seeds 40 --ladders "" --spec "SPEC@BASE"
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np
from threadpoolctl import threadpool_limits

from acdb_gym.core.ladders.custom import parse_level_spec
from acdb_gym.core.ladders.shipped import ALL_LADDERS, preflight
from acdb_gym.core.scoring import score
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.discovery import MARGINAL_FEATURES, msortnregress, regress_in_order
from acdb_gym.discovery.pc import shared_pc_cpdag
from acdb_gym.discovery.pc_rank import rank_pc_cpdag
from acdb_gym.report.order_audit import instance_order_audit
from acdb_gym.report.statistics import bootstrap_ci, sign_flip_pvalue
from acdb_gym.report.types import Estimate

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


LevelGains = dict[tuple[str, str], tuple[Estimate, float]]
"""``(feature, direction) -> (gain over the random orders, sign-flip p)`` of one level."""


def level_instances(ladder: str, level: str, seeds: int) -> tuple[LevelSpec, list[int]]:
    """The spec and first ``seeds`` manifest seeds of a shipped level, or for ``ladder`` of the
    form ``spec@BASE`` (``level`` its label) the spec's first seeds from BASE up whose instance
    generates (:func:`~acdb_gym.core.ladders.shipped.preflight`, as a manifest is made)."""
    if "@" in ladder:
        text, base = ladder.rsplit("@", 1)
        spec = parse_level_spec(text)
        return spec, [entry.seed for entry in preflight(spec, int(base), seeds)]
    chosen = ALL_LADDERS[ladder][level]
    return chosen.spec, [chosen.manifest_seed(index) for index in range(seeds)]


def level_gains(ladder: str, level: str, seeds: int) -> LevelGains:
    """Every audited order's gain over the random orders on development indices
    ``0 .. seeds - 1`` of one level (:func:`level_instances`), from the report's audit of each
    instance."""
    spec, seed_list = level_instances(ladder, level, seeds)
    with threadpool_limits(limits=1, user_api="blas"):
        audits = [instance_order_audit(spec, seed) for seed in seed_list]
    gains: LevelGains = {}
    for feature in MARGINAL_FEATURES:
        for direction in DIRECTIONS:
            differences = np.array(
                [a.order_f1[(feature, direction)] - a.random_f1 for a in audits], dtype=float
            )
            differences = differences[np.isfinite(differences)]
            gains[(feature, direction)] = (
                bootstrap_ci([differences]),
                sign_flip_pvalue(differences) if differences.size else float("nan"),
            )
    return gains


def _levels_of(ladder: str) -> list[tuple[str, str]]:
    if "@" in ladder:
        return [(ladder, "spec")]
    name, _, chosen = ladder.partition(":")
    return [(name, level) for level in (chosen.split("+") if chosen else ALL_LADDERS[name])]


def per_level_table(results: dict[tuple[str, str], LevelGains]) -> list[str]:
    """Markdown: one row per order, one column per level; gain in points [95 % CI] and p."""
    levels = list(results)
    lines = [
        "| order | "
        + " | ".join(
            f"{ladder} {level}" if level != "spec" else f"`{ladder}`" for ladder, level in levels
        )
        + " |",
        "|---" * (len(levels) + 1) + "|",
    ]
    for feature in MARGINAL_FEATURES:
        for direction in DIRECTIONS:
            cells = []
            for key in levels:
                gain, p = results[key][(feature, direction)]
                cells.append(
                    f"{100 * gain.mean:+.1f} [{100 * gain.low:+.1f}, {100 * gain.high:+.1f}] "
                    f"p={p:.2g}"
                )
            lines.append(f"| {feature} {direction} | " + " | ".join(cells) + " |")
    worst = []
    for key in levels:
        order, (gain, p) = max(results[key].items(), key=lambda item: item[1][0].mean)
        worst.append(f"{100 * gain.mean:+.1f} ({' '.join(order)}, p={p:.2g})")
    lines.append("| **largest gain** | " + " | ".join(worst) + " |")
    return lines


def main_per_level(ladders: Sequence[str], seeds: int, max_gain: float | None) -> int:
    """Print the per-level table; 1 when some order gains more than ``max_gain`` points.
    ``ladders`` are ladder names, ``NAME:LEVEL+LEVEL`` or ``SPEC@BASE``."""
    results = {key: level_gains(*key, seeds) for ladder in ladders for key in _levels_of(ladder)}
    print("\n".join(per_level_table(results)))
    if max_gain is None:
        return 0
    over = [
        f"{ladder} {level} {feature} {direction}: {100 * gain.mean:+.1f}"
        for (ladder, level), gains in results.items()
        for (feature, direction), (gain, _) in gains.items()
        if 100 * gain.mean > max_gain
    ]
    print("\n" + ("\n".join(over) if over else f"every order gains at most {max_gain} points"))
    return 1 if over else 0


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
    parser.add_argument(
        "--per-level", action="store_true", help="per level: gain, 95%% CI and p of every order"
    )
    parser.add_argument(
        "--max-gain", type=float, help="with --per-level: exit 1 if an order gains more points"
    )
    parser.add_argument(
        "--spec",
        action="append",
        default=[],
        help="with --per-level: also a level spec SPEC@BASE (custom-level syntax, first seed)",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.seeds, args.random_orders = 1, 1
    if not 1 <= args.seeds <= 100:
        raise SystemExit(f"--seeds must be in [1, 100] (the development indices), got {args.seeds}")
    start = time.perf_counter()
    if args.per_level:
        ladders = [*filter(None, args.ladders.split(",")), *args.spec]
        status = main_per_level(ladders, args.seeds, args.max_gain)
        print(f"\n({time.perf_counter() - start:.0f} s)")
        raise SystemExit(status)
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
