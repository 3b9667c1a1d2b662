"""The marginal-order audit: does any marginal feature of the observational sample sort the
causal order, and how much directed F1 does regressing in that order buy?

Var- and R²-sortability (:mod:`acdb_gym.report.shortcuts`) are two cases of a wider check. For
every feature of :data:`~acdb_gym.discovery.sortability.MARGINAL_FEATURES` (variance, R², range,
MAD, excess kurtosis, |skewness|) and every instance a run holds, on any ladder (shipped, large
or custom), :func:`instance_order_audit` regenerates the instance's observational sample (from
its level's spec and seed: a shipped level's spec, or the spec text a custom level's rows carry;
generation is deterministic) and computes

- the feature's sortability (:func:`~acdb_gym.discovery.sortability.feature_sortability`);
- the directed F1 of :func:`~acdb_gym.discovery.sortnregress.msortnregress` in the feature's
  ascending and descending order;
- the directed F1 of the same regressions in :data:`N_RANDOM_ORDERS` uniformly random orders
  (:func:`~acdb_gym.discovery.sortnregress.regress_in_order`), averaged: the control, whose
  permutations come from a generator seeded by the instance seed (:func:`random_orders`), so
  the audit is the same on every run.

:func:`order_audit_rows` summarizes per ladder and level (and pooled over levels): the
sortability with its bootstrap CI and, per direction, the gain (order F1 minus random-order
F1) with its bootstrap CI and the paired sign-flip p-value over instances
(:mod:`acdb_gym.report.statistics`). A gain that is significant and positive is a shortcut: a
structure-blind rule reads the order off the marginals.

Cost: up to ``2 * len(MARGINAL_FEATURES) + N_RANDOM_ORDERS`` order regressions an instance
(0.05-0.15 s a v1 instance on one BLAS thread), cached per process, per run directory and, for
the default sweeps of v0 and v1, shipped with the package (:mod:`~acdb_gym.report.audit_cache`).
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
from threadpoolctl import threadpool_limits

from acdb_gym import __version__
from acdb_gym.core.ladders.custom import RegenerationError, parse_level_spec, regenerate_instance
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.core.scoring import directed_f1_of, score
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.discovery.sortability import MARGINAL_FEATURES, feature_sortability
from acdb_gym.discovery.sortnregress import SORT_DIRECTIONS, feature_order, regress_in_order
from acdb_gym.report import audit_cache
from acdb_gym.report.aggregation import Prepared
from acdb_gym.report.document import Part, Table
from acdb_gym.report.order import level_order
from acdb_gym.report.statistics import bootstrap_ci, sign_flip_is_exact, sign_flip_pvalue
from acdb_gym.report.tables import (
    estimate_cells,
    format_p_value,
    format_percent,
    format_percent_ci,
    write_csv,
)
from acdb_gym.report.types import Estimate, MarginalOrderRow, OrderGain, Row

__all__ = [
    "AUDIT_ALPHA",
    "CACHE_SIZE",
    "MAX_AUDIT_NODES",
    "N_RANDOM_ORDERS",
    "RANDOM_ORDER_STREAM",
    "SHORTCUT_ALPHA",
    "AuditedInstance",
    "InstanceOrderAudit",
    "audit_entry",
    "instance_order_audit",
    "known_instances",
    "order_audit_parts",
    "order_audit_rows",
    "random_orders",
    "row_instance",
    "shipped_audit_key",
    "strongest_order",
    "write_order_audit_csv",
]

N_RANDOM_ORDERS: Final = 4
"""Random orders per instance whose directed F1 is averaged into the control."""
RANDOM_ORDER_STREAM: Final = 26
"""The second entropy word of the random orders' generator, ``default_rng([seed, 26])``: a
stream of its own, apart from every stream the instance's generation uses."""
AUDIT_ALPHA: Final = 0.01
"""The coefficient tests' level of the order regressions (sortnregress's default)."""
SHORTCUT_ALPHA: Final = 0.05
"""The level at which the strongest order, its p-value corrected for every order tested, is
called a shortcut."""
MAX_AUDIT_NODES: Final = 100
"""Instances with more variables are left out of the audit: an order's regressions cost
O(n d³) (5.6 s an instance at d = 100, 56 s at d = 200), so the large ladder's L3 and L4 are not
audited."""
CACHE_SIZE: Final = 4096
"""Instances whose audit is kept in memory."""


@dataclass(frozen=True)
class InstanceOrderAudit:
    """The order audit of one instance.

    Attributes:
        sortability: feature -> its sortability on the instance (NaN: no edge, or the feature
            cannot be computed on the sample).
        order_f1: ``(feature, direction)`` -> directed F1 of the regressions in that order
            (NaN when the feature cannot be computed).
        random_f1: the mean directed F1 of the regressions in the random orders.
    """

    sortability: Mapping[str, float]
    order_f1: Mapping[tuple[str, str], float]
    random_f1: float


def random_orders(seed: int, n_nodes: int, count: int = N_RANDOM_ORDERS) -> list[np.ndarray]:
    """The control's uniformly random orders of an instance, from its manifest seed.

    >>> [order.tolist() for order in random_orders(0, 3, 2)] == [
    ...     order.tolist() for order in random_orders(0, 3, 2)]
    True
    """
    rng = np.random.default_rng([seed, RANDOM_ORDER_STREAM])
    return [rng.permutation(n_nodes) for _ in range(count)]


@functools.lru_cache(maxsize=CACHE_SIZE)
def instance_order_audit(spec: LevelSpec, seed: int) -> InstanceOrderAudit:
    """Sortability and order-regression F1 of every audited feature on one instance.

    Args:
        spec: the instance's level spec.
        seed: the instance's seed (a manifest seed); it seeds the random orders too.

    Raises:
        RegenerationError: the seed generates no instance of ``spec`` (within the bounds of
            :func:`~acdb_gym.core.ladders.custom.regenerate_instance`).
    """
    instance = regenerate_instance(spec, seed)
    data = np.asarray(instance.d_obs)
    adjacency = np.asarray(instance.dag.adjacency)
    by_order: dict[tuple[int, ...], float] = {}

    def f1_of(order: np.ndarray) -> float:
        key = tuple(int(node) for node in order)
        if key not in by_order:
            graph = regress_in_order(data, order, alpha=AUDIT_ALPHA)
            if instance.latent_truth is None:  # score()'s directed F1, without the rest
                by_order[key] = float(directed_f1_of(adjacency, graph.directed))
            else:
                by_order[key] = float(score(instance, graph).directed_f1)
        return by_order[key]

    sortability: dict[str, float] = {}
    order_f1: dict[tuple[str, str], float] = {}
    for feature in MARGINAL_FEATURES:
        try:
            sortability[feature] = feature_sortability(data, adjacency, feature)
            orders = {d: feature_order(data, feature=feature, direction=d) for d in SORT_DIRECTIONS}
        except ValueError:  # e.g. a singular correlation matrix for R²
            sortability[feature] = math.nan
            orders = {}
        for direction in SORT_DIRECTIONS:
            order = orders.get(direction)
            order_f1[(feature, direction)] = math.nan if order is None else f1_of(order)
    controls = random_orders(seed, data.shape[1])
    random_f1 = float(np.mean([f1_of(order) for order in controls]))
    return InstanceOrderAudit(sortability, order_f1, random_f1)


def row_instance(row: Row) -> tuple[LevelSpec, int] | None:
    """The spec and seed of a row's instance: a shipped level's spec and manifest seed (by the
    row's manifest index), or a custom level's spec text and seed, which its rows carry; None
    for a level this package does not know, an index outside its manifest, or a bad spec."""
    if row.level_spec:
        try:
            return parse_level_spec(row.level_spec), row.seed
        except ValueError:
            return None
    known = ALL_LADDERS.get(row.ladder, {}).get(row.level)
    index = row.manifest_index
    if known is None or not 0 <= index < len(known.manifest):
        return None
    return known.spec, known.manifest_seed(index)


AuditedInstance = tuple[str, str, LevelSpec, int]
"""An audited instance: its ladder, level, spec and seed."""


def known_instances(prepared: Prepared) -> set[AuditedInstance]:
    """The instances of every row (ok or failed) that the package can rebuild
    (:func:`row_instance`) with at most :data:`MAX_AUDIT_NODES` variables, each once whatever
    ran on it."""
    keys = set()
    for row in (*prepared.ok, *prepared.failed):
        found = row_instance(row)
        if found is not None and found[0].d <= MAX_AUDIT_NODES:
            keys.add((row.ladder, row.level, *found))
    return keys


def order_audit_rows(
    prepared: Prepared, *, cache: Path | None = None
) -> tuple[MarginalOrderRow, ...]:
    """The marginal-order audit per ladder, level and feature of every known instance in a run.

    Args:
        prepared: the run's prepared rows.
        cache: a file of instance audits (:mod:`acdb_gym.report.audit_cache`): those it holds
            are read from it, the others from the shipped audits or computed, and it is
            rewritten with the run's instances when it did not hold them all.

    Returns:
        Per ladder (in name order) and level (L0, L1, ... first, then other names in order,
        then ``"overall"``: instances of every level pooled, the bootstrap resampling within
        levels): one row per feature in :data:`MARGINAL_FEATURES` order.
    """
    audits: dict[str, dict[str, list[InstanceOrderAudit]]] = {}
    families: dict[tuple[str, str], set[str]] = {}
    instances = sorted(known_instances(prepared), key=_instance_order)
    found, from_run = _cached_audits(instances, cache)
    missing = [key for key in instances if key not in found]
    # Hundreds of small least-squares fits: BLAS threads only contend on them (one thread is
    # 5-15x faster on a busy machine, and gives the same numbers).
    with threadpool_limits(limits=1, user_api="blas") if missing else contextlib.nullcontext():
        for key in missing:
            try:
                found[key] = instance_order_audit(key[2], key[3])
            except RegenerationError:
                continue  # a row naming a world that cannot be regenerated: no audit of it
    for ladder, level, spec, seed in instances:
        if (ladder, level, spec, seed) in found:
            audit = found[(ladder, level, spec, seed)]
            audits.setdefault(ladder, {}).setdefault(level, []).append(audit)
            families.setdefault((ladder, level), set()).add(str(spec.family))
    if cache is not None and from_run < len(found):
        entries = {f"{key[2]!r}|{key[3]}": audit_entry(audit) for key, audit in found.items()}
        audit_cache.save_cache(cache, _cache_key(), entries)
    rows: list[MarginalOrderRow] = []
    for ladder, levels in sorted(audits.items()):
        ordered = sorted(levels, key=level_order)
        for level in [*ordered, "overall"]:
            names = ordered if level == "overall" else [level]
            strata = [levels[name] for name in names]
            family = tuple(sorted(set().union(*(families[(ladder, name)] for name in names))))
            rows += [_row(ladder, level, feature, strata, family) for feature in MARGINAL_FEATURES]
    return tuple(rows)


def _cached_audits(
    instances: Sequence[AuditedInstance], cache: Path | None
) -> tuple[dict[AuditedInstance, InstanceOrderAudit], int]:
    """The audits of ``instances`` that the cache file or the shipped audits hold, and how
    many of them the cache file held."""
    cached = {} if cache is None else audit_cache.load_cache(cache, _cache_key())
    found = {}
    for key in instances:
        audit = _from_entry(cached.get(f"{key[2]!r}|{key[3]}"))
        if audit is not None:
            found[key] = audit
    from_run = len(found)
    shipped = audit_cache.shipped_entries(shipped_audit_key())
    for key in instances:
        if key not in found and _is_shipped_level(key):  # a shipped level's instance
            audit = _from_entry(shipped.get(audit_cache.shipped_name(*key[:2], key[3])))
            found.update({} if audit is None else {key: audit})
    return found, from_run


def _is_shipped_level(key: AuditedInstance) -> bool:
    return getattr(ALL_LADDERS.get(key[0], {}).get(key[1]), "spec", None) == key[2]


def _cache_key() -> str:
    """What an instance's audit depends on besides the instance: the package's version and the
    audit's constants."""
    return repr((__version__, *_CONSTANTS))


def shipped_audit_key() -> str:
    """The shipped audits' key: the audit's constants alone (the shipped file is checked
    against the code by its regeneration test, whatever the version)."""
    return repr(_CONSTANTS)


_CONSTANTS = (MARGINAL_FEATURES, SORT_DIRECTIONS, N_RANDOM_ORDERS, RANDOM_ORDER_STREAM, AUDIT_ALPHA)


def audit_entry(audit: InstanceOrderAudit) -> dict[str, Any]:
    """An audit as the plain values a cache file holds."""
    return {
        "sortability": dict(audit.sortability),
        "order_f1": [[f, d, value] for (f, d), value in audit.order_f1.items()],
        "random_f1": audit.random_f1,
    }


def _from_entry(entry: object) -> InstanceOrderAudit | None:
    """A cached audit back, or None when ``entry`` is missing or not what :func:`audit_entry`
    writes for the audited features."""
    if not isinstance(entry, dict):
        return None
    try:
        number = audit_cache.as_float
        sortability = {str(k): number(v) for k, v in entry["sortability"].items()}
        order_f1 = {(str(f), str(d)): number(value) for f, d, value in entry["order_f1"]}
        random_f1 = number(entry["random_f1"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    wanted = {(f, d) for f in MARGINAL_FEATURES for d in SORT_DIRECTIONS}
    if set(sortability) != set(MARGINAL_FEATURES) or set(order_f1) != wanted:
        return None
    return InstanceOrderAudit(sortability, order_f1, random_f1)


def _instance_order(key: AuditedInstance) -> tuple[str, str, int]:
    return key[0], key[1], key[3]


def _row(
    ladder: str,
    level: str,
    feature: str,
    strata: Sequence[Sequence[InstanceOrderAudit]],
    families: tuple[str, ...],
) -> MarginalOrderRow:
    sortability = bootstrap_ci([[a.sortability[feature] for a in group] for group in strata])
    gains = tuple(_gain(feature, direction, strata) for direction in SORT_DIRECTIONS)
    return MarginalOrderRow(ladder, level, feature, sortability, gains, families)


def _gain(
    feature: str, direction: str, strata: Sequence[Sequence[InstanceOrderAudit]]
) -> OrderGain:
    """The gain of one order over the random orders, paired by instance."""
    pairs = [[(a.order_f1[(feature, direction)], a.random_f1) for a in group] for group in strata]
    pairs = [[(o, r) for o, r in group if math.isfinite(o) and math.isfinite(r)] for group in pairs]
    differences = [[o - r for o, r in group] for group in pairs]
    flat = np.array([value for group in differences for value in group])
    order_f1 = [o for group in pairs for o, _ in group]
    random_f1 = [r for group in pairs for _, r in group]
    return OrderGain(
        direction=direction,
        f1=float(np.mean(order_f1)) if order_f1 else math.nan,
        random_f1=float(np.mean(random_f1)) if random_f1 else math.nan,
        gain=bootstrap_ci(differences),
        p_value=sign_flip_pvalue(flat) if flat.size else math.nan,
        p_exact=sign_flip_is_exact(flat.size),
    )


def strongest_order(rows: Iterable[MarginalOrderRow]) -> tuple[MarginalOrderRow, OrderGain] | None:
    """The feature and direction with the largest gain among ``rows`` (None without any)."""
    candidates = [
        (gain.gain.mean, row, gain)
        for row in rows
        for gain in row.gains
        if gain.gain.n and math.isfinite(gain.gain.mean)
    ]
    if not candidates:
        return None
    _, row, gain = max(candidates, key=lambda item: item[0])
    return row, gain


_ARROWS: Final = {"asc": "↑", "desc": "↓"}


def order_audit_parts(rows: Sequence[MarginalOrderRow]) -> list[Part]:
    """The marginal-order audit of one ladder as report parts (:mod:`acdb_gym.report.document`;
    empty without rows).

    Args:
        rows: the ladder's rows (:func:`order_audit_rows`). When its instances include a family
            other than ``"linear_gaussian"``, a line names the kurtosis order and its gain
            (marginal non-Gaussianity is then the model's own signal, not a leak of the
            generator).
    """
    if not rows:
        return []
    overall = [row for row in rows if row.level == "overall"]
    levels = list(dict.fromkeys(row.level for row in rows if row.level != "overall"))
    random_f1 = overall[0].gains[0].random_f1
    lines: list[Part] = ["#### Marginal-order audit", ""]
    lines += [
        "For each marginal feature of the observational sample: its sortability (as "
        "var-sortability: the share of path-joined pairs i ⇝ j whose feature rises from i to "
        "j; 0.5 is chance, below 0.5 it falls along the order) and the directed F1 gained by "
        "regressing each variable on its predecessors in the feature's ascending (↑) or "
        "descending (↓) order (`msort:FEATURE:asc|desc`) over the same regressions in "
        f"{N_RANDOM_ORDERS} uniformly random orders per instance (directed F1 "
        f"{format_percent(random_f1)}% here; levels with more than {MAX_AUDIT_NODES} variables are not "
        "audited). Gains in points with the 95% CI over instances; p: paired "
        "sign-flip test over instances. A positive gain significant after correcting for the "
        "orders tested is a shortcut.",
        "",
    ]
    headers = ["feature", "sortability", "F1 ↑", "gain ↑", "p ↑", "F1 ↓", "gain ↓", "p ↓"]
    body = []
    for row in overall:
        cells = [row.feature, format_percent_ci(row.sortability)]
        for direction in SORT_DIRECTIONS:
            gain = row.gain(direction)
            cells += [format_percent(gain.f1), _points_ci(gain.gain), _p(gain)]
        body.append(cells)
    lines.append(Table.of(headers, body))
    if len(levels) > 1:
        lines += ["Per level: gain over the random order in points (p).", ""]
        per_level = {(row.level, row.feature): row for row in rows}
        gain_body = []
        for feature in MARGINAL_FEATURES:
            for direction in SORT_DIRECTIONS:
                cells = [f"{feature} {_ARROWS[direction]}"]
                for level in levels:
                    level_row = per_level.get((level, feature))
                    cells.append(_gain_cell(level_row.gain(direction)) if level_row else "—")
                gain_body.append(cells)
        lines.append(Table.of(["order", *levels], gain_body))
    lines += _verdict_lines(overall)
    return [*lines, ""]


def _verdict_lines(overall: Sequence[MarginalOrderRow]) -> list[str]:
    lines = []
    strongest = strongest_order(overall)
    if strongest is not None:
        row, gain = strongest
        # The strongest of many orders is chosen after the fact: its p-value is corrected
        # (Bonferroni) for every order tested before it is called a shortcut.
        tested = sum(1 for r in overall for g in r.gains if g.gain.n)
        corrected = min(1.0, gain.p_value * tested)
        shortcut = corrected < SHORTCUT_ALPHA and gain.gain.mean > 0
        lines.append(
            f"- **Strongest marginal order**: {row.feature} {gain.direction} "
            f"(`msort:{row.feature}:{gain.direction}`), {format_percent(gain.f1)}% directed F1, "
            f"{_points(gain.gain.mean)} points over a random order (p {_p(gain)}; "
            f"{format_p_value(corrected, exact=gain.p_exact)} corrected for the {tested} orders "
            f"tested): {'a shortcut' if shortcut else 'not significant'}."
        )
    kurtosis = next((row for row in overall if row.feature == "kurtosis"), None)
    family = ", ".join(f for f in overall[0].families if f != "linear_gaussian") if overall else ""
    if family and kurtosis is not None:
        parts = [
            f"{gain.direction} {_points(gain.gain.mean)} points (p {_p(gain)})"
            for gain in kurtosis.gains
        ]
        lines.append(
            f"- **Kurtosis order** ({family} worlds, where marginal non-Gaussianity is the "
            f"model's own signal): {'; '.join(parts)} over a random order."
        )
    return [*lines, ""] if lines else []


def _points(value: float) -> str:
    return f"{100 * value:+.1f}" if math.isfinite(value) else "—"


def _points_ci(estimate: Estimate) -> str:
    if estimate.n == 0:
        return "—"
    return f"{_points(estimate.mean)} [{_points(estimate.low)}, {_points(estimate.high)}]"


def _p(gain: OrderGain) -> str:
    return format_p_value(gain.p_value, exact=gain.p_exact)


def _gain_cell(gain: OrderGain) -> str:
    if gain.gain.n == 0:
        return "—"
    return f"{_points(gain.gain.mean)} ({_p(gain)})"


def write_order_audit_csv(path: Path, rows: Sequence[MarginalOrderRow]) -> Path:
    """The marginal-order audit: one line per ladder, level, feature and direction."""
    header = ["ladder", "level", "feature", "direction", "n_instances"]
    header += [f"sortability_{part}" for part in ("mean", "low", "high")]
    header += ["order_f1", "random_f1", "gain_mean", "gain_low", "gain_high", "p_value"]
    body = [
        [
            row.ladder,
            row.level,
            row.feature,
            gain.direction,
            gain.gain.n,
            *estimate_cells(row.sortability),
            gain.f1,
            gain.random_f1,
            *estimate_cells(gain.gain),
            gain.p_value,
        ]
        for row in rows
        for gain in row.gains
    ]
    return write_csv(path, header, body)
