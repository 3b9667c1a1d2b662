"""The shortcut gate (DESIGN §7, "Shortcut gate"): every known way to score without doing the
task, run against a ladder's reference agents, level by level.

A ladder is worth ranking on only where no shortcut comes near the agents it is meant to rank.
For each level of a run (a sweep of the reference agents and their capped twins, usually on the
development indices 0-99; ``acdb audit`` plans and runs it) the gate checks:

- **marginal orders**: the 12 orders of the marginal-order audit
  (:mod:`acdb_gym.report.order_audit`; ``msort:FEATURE:DIR``), each against the same
  regressions in random orders of the same instance (its own random control);
- **hub**: the regressions in descending degree of PC's skeleton (``hub``, hubs as parents),
  against the same random orders;
- **capped efficiency**: ``cap:AGENT`` (the agent stopped at the ``|I*|`` it predicts from its own
  graph, :mod:`acdb_gym.baselines.capped`) against ``AGENT`` on the headline efficiency, the
  anytime F1 (DESIGN §6); its gain in the paper's η is printed beside it;
- **estimator default** (ladders with design ids): the privileged probe
  :class:`~acdb_gym.baselines.targeting.ParentRichTargeting`, which targets nodes whose
  neighbours are their parents, against ``pc_active``'s targeting rule on the design env with
  the true CPDAG: what a policy could gain from an estimator that reads an experiment that
  sees nothing as "the neighbour is a parent".

A level **fails** when a shortcut gains more than :data:`GATE_MARGIN` (3 points) over its
control with a paired sign-flip p-value below :data:`GATE_ALPHA` after a Bonferroni correction
for the checks of its kind on the level (13 orders, each cap), or when a shortcut's mean score
comes within :data:`GATE_MARGIN` of the level's reference agent (the best of the reference
agents run on it, by directed F1). Otherwise it **passes**. Means over the run's instances,
with 95% bootstrap CIs; few seeds give a weak test (``acdb audit`` defaults to 40 development
seeds).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
from threadpoolctl import threadpool_limits

from acdb_gym.baselines.targeting import ParentRichTargeting, PCActiveTargeting, evaluate_targeting
from acdb_gym.core.ladders.shipped import ALL_LADDERS
from acdb_gym.core.worlds.spec import LevelSpec
from acdb_gym.discovery.sortability import MARGINAL_FEATURES
from acdb_gym.discovery.sortnregress import SORT_DIRECTIONS
from acdb_gym.report.aggregation import Prepared, group_of
from acdb_gym.report.order import level_order
from acdb_gym.report.order_audit import MAX_AUDIT_NODES, row_instance
from acdb_gym.report.order_shortcuts import hub_order_f1, order_audit_of
from acdb_gym.report.statistics import bootstrap_ci, sign_flip_pvalue
from acdb_gym.report.tables import format_p_value, md_table
from acdb_gym.report.types import Estimate, Row
from acdb_gym.results import NumericField

__all__ = [
    "DESIGN_LADDERS",
    "GATE_ALPHA",
    "GATE_MARGIN",
    "REFERENCE_AGENTS",
    "GateLevel",
    "ShortcutCheck",
    "gate_agents",
    "gate_levels",
    "gate_markdown",
    "has_design_env",
    "hub_order_f1",
    "order_checks",
    "write_gate_csv",
]

GATE_MARGIN: Final = 0.03
"""How close (in directed F1, or anytime F1 for the cap) a shortcut may come: 3 points."""

GATE_ALPHA: Final = 0.05
"""The level at which a gain above the margin, Bonferroni-corrected, fails a level."""

REFERENCE_AGENTS: Final = ("pc_active", "bic_active", "lingam_active", "fci_active")
"""The agents a level's reference is the best of, where they apply (:func:`gate_agents`)."""

BIC_MAX_NODES: Final = 100
"""``bic_active`` is a reference up to this ``d`` (its search costs seconds an experiment at
``d = 100``); larger levels use the others."""

DESIGN_LADDERS: Final = ("v0", "v1", "v1-n3", "frontier")
"""Ladders with registered design ids, whose design env the estimator-default check plays (on
their causally sufficient levels: the frontier's level with hidden confounders has no design
id)."""


@dataclass(frozen=True)
class ShortcutCheck:
    """One shortcut on one level against its control.

    Attributes:
        name: the shortcut (``msort:r2:desc``, ``hub``, ``cap:pc_active``,
            ``parent_rich_targeting``).
        kind: ``"order"``, ``"cap"`` or ``"design"``.
        metric: the score compared (``directed_f1``, or ``anytime_f1`` for the cap).
        value: the shortcut's mean score.
        control: what it is compared with (``random order``, the uncapped agent, or
            ``pc_active's rule``) and that control's mean score.
        gain: the paired per-instance difference, shortcut minus control (mean, 95% CI).
        p_value: the paired sign-flip p-value of the gain.
        eta_gain: for the cap, its gain in the paper's η (else NaN).
    """

    name: str
    kind: str
    metric: str
    value: float
    control: str
    control_value: float
    gain: Estimate
    p_value: float
    eta_gain: float = math.nan


@dataclass(frozen=True)
class GateLevel:
    """The gate on one level.

    Attributes:
        ladder, level: where.
        n: instances checked.
        reference: the reference agent (best of :data:`REFERENCE_AGENTS` run, by directed F1)
            and its mean directed F1 (``""`` and NaN when none ran).
        checks: every shortcut check.
        failures: why the level fails (empty: it passes).
    """

    ladder: str
    level: str
    n: int
    reference: str
    reference_f1: float
    checks: tuple[ShortcutCheck, ...]
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """Whether no shortcut comes within the margin."""
        return not self.failures


def gate_agents(spec: LevelSpec) -> tuple[str, ...]:
    """The agents a gate run sweeps on a level: the reference agents that apply
    (``pc_active`` always; ``bic_active`` up to :data:`BIC_MAX_NODES` variables; ``lingam_active``
    on non-Gaussian worlds; ``fci_active`` with hidden confounders) and each one capped."""
    agents = ["pc_active"]
    if spec.d <= BIC_MAX_NODES:
        agents.append("bic_active")
    if spec.family == "linear_nongaussian":
        agents.append("lingam_active")
    if spec.latent > 0:
        agents.append("fci_active")
    return (*agents, *(f"cap:{agent}" for agent in agents))


def gate_levels(
    prepared: Prepared, *, design_indices: Sequence[int] | None = None
) -> tuple[GateLevel, ...]:
    """The gate of every level in a run.

    Args:
        prepared: the run's rows (:func:`~acdb_gym.report.aggregation.prepare`).
        design_indices: the manifest indices of the estimator-default check on ladders with
            design ids (:data:`DESIGN_LADDERS`); None skips it.
    """
    by_level: dict[tuple[str, str], list[Row]] = {}
    for row in prepared.ok:
        by_level.setdefault((row.ladder, row.level), []).append(row)
    gates = []
    for ladder, level in sorted(by_level, key=_level_key):
        rows = by_level[(ladder, level)]
        checks: list[ShortcutCheck] = []
        reference, reference_f1 = _reference(rows)
        with threadpool_limits(limits=1, user_api="blas"):
            checks += _order_checks(rows)
        checks += _cap_checks(rows)
        if design_indices is not None and has_design_env(ladder, level):
            checks.append(_design_check(ladder, level, design_indices))
        instances = {row.manifest_index for row in rows}
        failures = tuple(_failures(checks, reference, reference_f1))
        gates.append(
            GateLevel(
                ladder, level, len(instances), reference, reference_f1, tuple(checks), failures
            )
        )
    return tuple(gates)


def has_design_env(ladder: str, level: str) -> bool:
    """Whether the estimator-default check plays ``ladder``'s ``level`` (a design id exists)."""
    known = ALL_LADDERS.get(ladder, {}).get(level)
    return ladder in DESIGN_LADDERS and known is not None and not known.spec.latent


def _level_key(key: tuple[str, str]) -> tuple[str, int, str]:
    ladder, level = key
    return (ladder, *level_order(level))


def _per_instance(rows: Iterable[Row], agent: str, metric: NumericField) -> dict[int, float]:
    values: dict[int, list[float]] = {}
    for row in rows:
        value = row.value(metric)
        if group_of(row)[0] == agent and not math.isnan(value):
            values.setdefault(row.manifest_index, []).append(value)
    return {index: float(np.mean(v)) for index, v in values.items()}


def _reference(rows: Sequence[Row]) -> tuple[str, float]:
    means = {
        agent: float(np.mean(list(values.values())))
        for agent in REFERENCE_AGENTS
        if (values := _per_instance(rows, agent, "directed_f1"))
    }
    if not means:
        return "", math.nan
    best = max(means, key=lambda agent: means[agent])
    return best, means[best]


def _check(
    name: str,
    kind: str,
    metric: str,
    control: str,
    pairs: Sequence[tuple[float, float]],
    eta_gain: float = math.nan,
) -> ShortcutCheck:
    differences = np.array([a - b for a, b in pairs])
    return ShortcutCheck(
        name=name,
        kind=kind,
        metric=metric,
        value=float(np.mean([a for a, _ in pairs])) if pairs else math.nan,
        control=control,
        control_value=float(np.mean([b for _, b in pairs])) if pairs else math.nan,
        gain=bootstrap_ci([differences]),
        p_value=sign_flip_pvalue(differences) if differences.size else math.nan,
        eta_gain=eta_gain,
    )


def _order_checks(rows: Sequence[Row]) -> list[ShortcutCheck]:
    instances: dict[int, tuple[LevelSpec, int]] = {}
    for row in rows:
        found = row_instance(row)
        if found is not None:
            instances[row.manifest_index] = found
    return order_checks(instances)


def order_checks(instances: Mapping[int, tuple[LevelSpec, int]]) -> list[ShortcutCheck]:
    """The gate's order checks on these instances (index -> spec and seed; those above
    :data:`~acdb_gym.report.order_audit.MAX_AUDIT_NODES` variables left out): each marginal
    order's and the hub order's directed F1 against random orders, paired by instance. The
    gate corrects their p-values for how many there are."""
    instances = {i: found for i, found in instances.items() if found[0].d <= MAX_AUDIT_NODES}
    if not instances:
        return []
    audits = {index: order_audit_of(*found) for index, found in sorted(instances.items())}
    checks = []
    for feature in MARGINAL_FEATURES:
        for direction in SORT_DIRECTIONS:
            pairs = [
                (audit.order_f1[(feature, direction)], audit.random_f1)
                for audit in audits.values()
                if math.isfinite(audit.order_f1[(feature, direction)])
            ]
            name = f"msort:{feature}:{direction}"
            checks.append(_check(name, "order", "directed_f1", "random order", pairs))
    hub = [(hub_order_f1(*instances[i]), audits[i].random_f1) for i in audits]
    checks.append(_check("hub", "order", "directed_f1", "random order", hub))
    return checks


def _cap_checks(rows: Sequence[Row]) -> list[ShortcutCheck]:
    checks = []
    for agent in REFERENCE_AGENTS:
        capped = f"cap:{agent}"
        plain_anytime = _per_instance(rows, agent, "anytime_f1")
        capped_anytime = _per_instance(rows, capped, "anytime_f1")
        shared = sorted(set(plain_anytime) & set(capped_anytime))
        if not shared:
            continue
        plain_eta = _per_instance(rows, agent, "efficiency")
        capped_eta = _per_instance(rows, capped, "efficiency")
        eta = [capped_eta[i] - plain_eta[i] for i in shared if i in plain_eta and i in capped_eta]
        pairs = [(capped_anytime[i], plain_anytime[i]) for i in shared]
        eta_gain = float(np.mean(eta)) if eta else math.nan
        checks.append(_check(capped, "cap", "anytime_f1", agent, pairs, eta_gain))
    return checks


def _design_check(ladder: str, level: str, indices: Sequence[int]) -> ShortcutCheck:
    from acdb_gym.envs.design.env import InterventionDesignEnv

    known = ALL_LADDERS[ladder][level]
    instances = [known.instance(i) for i in indices if i < len(known.manifest)]
    env = InterventionDesignEnv(level, ladder=ladder, estimator="true_cpdag")
    results = evaluate_targeting(
        env, {"probe": ParentRichTargeting(), "reference": PCActiveTargeting()}, instances
    )
    pairs = list(
        zip(
            results["probe"].rewards.tolist(),
            results["reference"].rewards.tolist(),
            strict=True,
        )
    )
    return _check(ParentRichTargeting.name, "design", "directed_f1", "pc_active's rule", pairs)


def _failures(checks: Sequence[ShortcutCheck], reference: str, reference_f1: float) -> list[str]:
    failures = []
    tested = {kind: sum(1 for c in checks if c.kind == kind) for kind in {c.kind for c in checks}}
    for check in checks:
        corrected = min(1.0, check.p_value * tested[check.kind])
        if check.gain.n and check.gain.mean > GATE_MARGIN and corrected < GATE_ALPHA:
            failures.append(
                f"{check.name} gains {100 * check.gain.mean:+.1f} points over {check.control} "
                f"(p {format_p_value(corrected)} corrected for {tested[check.kind]})"
            )
        close = (
            check.kind == "order"
            and math.isfinite(reference_f1)
            and check.value >= reference_f1 - GATE_MARGIN
        )
        if close:
            failures.append(
                f"{check.name} ({100 * check.value:.1f}) is within {100 * GATE_MARGIN:.0f} "
                f"points of {reference} ({100 * reference_f1:.1f})"
            )
    return failures


# --------------------------------------------------------------------------- output


def _points(value: float) -> str:
    return f"{100 * value:+.1f}" if math.isfinite(value) else "—"


def _percent(value: float) -> str:
    return f"{100 * value:.1f}" if math.isfinite(value) else "—"


def _gain_cell(check: ShortcutCheck | None) -> str:
    if check is None or not check.gain.n:
        return "—"
    return f"{_points(check.gain.mean)} (p {format_p_value(check.p_value)})"


def _worst(checks: Iterable[ShortcutCheck], kind: str) -> ShortcutCheck | None:
    found = [c for c in checks if c.kind == kind and c.gain.n and c.name != "hub"]
    return max(found, key=lambda c: c.gain.mean) if found else None


def gate_markdown(gates: Sequence[GateLevel]) -> str:
    """The gate as a Markdown table, one line per level, then the failures."""
    headers = [
        "ladder",
        "level",
        "n",
        "reference (Dir F1)",
        "best marginal order (Dir F1, gain)",
        "hub (Dir F1, gain)",
        "cap (Δ anytime F1; Δ η)",
        "estimator default (gain)",
        "verdict",
    ]
    body = []
    for gate in gates:
        order = _worst(gate.checks, "order")
        hub = next((c for c in gate.checks if c.name == "hub"), None)
        caps = [c for c in gate.checks if c.kind == "cap"]
        cap = max(caps, key=lambda c: c.gain.mean) if caps else None
        design = next((c for c in gate.checks if c.kind == "design"), None)
        body.append(
            [
                gate.ladder,
                gate.level,
                str(gate.n),
                f"{gate.reference} ({_percent(gate.reference_f1)})" if gate.reference else "—",
                "—"
                if order is None
                else f"`{order.name}` ({_percent(order.value)}, {_gain_cell(order)})",
                "—" if hub is None else f"{_percent(hub.value)}, {_gain_cell(hub)}",
                "—"
                if cap is None
                else f"`{cap.name}` {_gain_cell(cap)}; η {_points(cap.eta_gain)}",
                _gain_cell(design),
                "pass" if gate.passed else "**fail**",
            ]
        )
    lines = md_table(headers, body)
    for gate in gates:
        for failure in gate.failures:
            lines.append(f"- {gate.ladder} {gate.level}: {failure}")
    return "\n".join(lines).rstrip() + "\n"


def write_gate_csv(gates: Sequence[GateLevel], path: Path) -> Path:
    """Every check of every level, one CSV row each."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "ladder",
                "level",
                "n",
                "reference",
                "reference_f1",
                "shortcut",
                "kind",
                "metric",
                "value",
                "control",
                "control_value",
                "gain",
                "gain_low",
                "gain_high",
                "p_value",
                "eta_gain",
                "level_passed",
            ]
        )
        for gate in gates:
            for check in gate.checks:
                writer.writerow(
                    [
                        gate.ladder,
                        gate.level,
                        gate.n,
                        gate.reference,
                        _round(gate.reference_f1),
                        check.name,
                        check.kind,
                        check.metric,
                        _round(check.value),
                        check.control,
                        _round(check.control_value),
                        _round(check.gain.mean),
                        _round(check.gain.low),
                        _round(check.gain.high),
                        _round(check.p_value),
                        _round(check.eta_gain),
                        gate.passed,
                    ]
                )
    return path


def _round(value: float) -> str:
    return "" if not math.isfinite(value) else f"{value:.6g}"


def level_verdicts(gates: Sequence[GateLevel]) -> Mapping[tuple[str, str], bool]:
    """``(ladder, level) -> passed``."""
    return {(gate.ladder, gate.level): gate.passed for gate in gates}
